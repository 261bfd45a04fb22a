"""Transactions as an administrator sees them: the state of a transactional id at its
coordinator (DescribeTransactions) and every transactional id the cluster knows
(ListTransactions).

Facts from Kafka's message specs, KIP-98 (transactions), KIP-664 (DescribeTransactions,
ListTransactions) and Kafka's ``TransactionCoordinator``; no code taken. The coordinator is
found and asked as in :mod:`spark_kafka_py.client.coordinator`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.coordinator import call_coordinator
from spark_kafka_py.errors import (
    KafkaApiError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    TransactionError,
)
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from spark_kafka_py.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)

__all__ = [
    "TransactionState",
    "describe_transaction",
    "list_transactions",
    "list_transactions_by_coordinator",
]

log = logging.getLogger(__name__)

#: ListTransactions errors of a broker whose coordinator is loading or not available yet.
_UNAVAILABLE = frozenset({ec.COORDINATOR_LOAD_IN_PROGRESS, ec.COORDINATOR_NOT_AVAILABLE})


@dataclass(frozen=True)
class TransactionState:
    """A transactional id at its coordinator (DescribeTransactions, KIP-664).

    Attributes:
        transactional_id: the id.
        state: the coordinator's state name: ``Empty``, ``Ongoing``, ``PrepareCommit``,
            ``PrepareAbort``, ``CompleteCommit``, ``CompleteAbort``, ``Dead``,
            ``PrepareEpochFence``.
        producer_id, producer_epoch: the current ones.
        timeout_ms: the ``transaction.timeout.ms`` the producer registered (ms).
        partitions: ``(topic, partition)`` in the open transaction (while ending: those
            without markers yet), sorted.
        start_time_ms: when the open transaction began (ms since the epoch), -1 if none.
    """

    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    partitions: tuple[tuple[str, int], ...] = ()
    start_time_ms: int = -1


def describe_transaction(
    client: KafkaClient, transactional_id: str, *, timeout_ms: int
) -> TransactionState:
    """The state of ``transactional_id`` at its coordinator (DescribeTransactions v0).

    Raises:
        TransactionError: TRANSACTIONAL_ID_NOT_FOUND (never used, or expired after the
            broker's ``transactional.id.expiration.ms``), TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """

    def error_of(r: DescribeTransactionsResponse) -> int:
        return r.transaction_states[0].error_code if r.transaction_states else ec.NONE

    response: DescribeTransactionsResponse
    response, code = call_coordinator(
        client,
        transactional_id,
        DescribeTransactionsRequest(transactional_ids=(transactional_id,)),
        error_of,
        what=f"DescribeTransactions for transactional id {transactional_id!r}",
        timeout_ms=timeout_ms,
    )
    if code != ec.NONE:
        raise TransactionError(code, transactional_id, -1, -1, action="describing")
    if not response.transaction_states:
        raise KafkaError(
            f"DescribeTransactions for transactional id {transactional_id!r} answered no state"
        )
    s = response.transaction_states[0]
    return TransactionState(
        transactional_id=s.transactional_id,
        state=s.transaction_state,
        producer_id=s.producer_id,
        producer_epoch=s.producer_epoch,
        timeout_ms=s.transaction_timeout_ms,
        partitions=tuple(sorted((t.topic, p) for t in s.topics for p in t.partitions)),
        start_time_ms=s.transaction_start_time_ms,
    )


def list_transactions(
    client: KafkaClient,
    *,
    states: Iterable[str] = (),
    pattern: str | None = None,
    timeout_ms: int,
    skip_unavailable: bool = False,
) -> list[tuple[str, int, str]]:
    """Every transactional id known to the cluster's coordinators (ListTransactions to every
    broker, as ``kafka-transactions.sh list``).

    Args:
        states: only these coordinator states (e.g. ``("Ongoing", "PrepareCommit",
            "PrepareAbort")`` for the transactions not ended); empty for all.
        pattern: a regular expression on the transactional id (ListTransactions v2+; the
            broker ignores it before); ``None`` for all.
        timeout_ms: bound of each broker's answer (ms).
        skip_unavailable: leave out, with a log line, brokers that do not answer or whose
            coordinator is loading or not available (a broker just killed: its transactions'
            coordinators move to the others); fail only if every broker was left out.

    Returns:
        ``(transactional_id, producer_id, state)`` sorted.

    Raises:
        KafkaApiError: a broker's error (e.g. COORDINATOR_LOAD_IN_PROGRESS, CLUSTER_AUTHORIZATION
            ...), naming the broker.
        KafkaConnectionError / KafkaTimeoutError: a broker did not answer.
    """
    listed = _list_by_coordinator(
        client,
        states=states,
        pattern=pattern,
        timeout_ms=timeout_ms,
        skip_unavailable=skip_unavailable,
    )
    return sorted((tid, pid, state) for tid, _, pid, state in listed)


def list_transactions_by_coordinator(
    client: KafkaClient, *, timeout_ms: int
) -> list[tuple[str, int, int, str]]:
    """As :func:`list_transactions` (every state, every id), with the coordinator:
    ``(transactional_id, coordinator node id, producer_id, state)`` sorted, the columns of
    ``kafka-transactions.sh list``."""
    return sorted(_list_by_coordinator(client, states=(), pattern=None, timeout_ms=timeout_ms))


def _list_by_coordinator(
    client: KafkaClient,
    *,
    states: Iterable[str],
    pattern: str | None,
    timeout_ms: int,
    skip_unavailable: bool = False,
) -> list[tuple[str, int, int, str]]:
    metadata = client.metadata([])
    request = ListTransactionsRequest(state_filters=tuple(states), transactional_id_pattern=pattern)
    out: list[tuple[str, int, int, str]] = []
    nodes = sorted(metadata.brokers)
    skipped: list[str] = []
    for node in nodes:
        try:
            response: ListTransactionsResponse = client.send(node, request, timeout_ms=timeout_ms)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            if not skip_unavailable or len(skipped) + 1 == len(nodes):
                raise
            skipped.append(f"broker {node}: {exc}")
            continue
        code = ec.error_for(response.error_code)
        if code in _UNAVAILABLE and skip_unavailable and len(skipped) + 1 < len(nodes):
            skipped.append(f"broker {node}: {code.name}")
            continue
        if code != ec.NONE:
            raise KafkaApiError(code, f"in ListTransactions from broker {node}")
        out.extend(
            (t.transactional_id, node, t.producer_id, t.transaction_state)
            for t in response.transaction_states
        )
    if skipped:
        log.warning("ListTransactions: left out %s", "; ".join(skipped))
    return out
