"""Kafka transactions from any process: begin (fence), extend and end a transaction by
transactional id, producer id and epoch. Describing and listing them, and creating a
topic, are Admin requests: :mod:`spark_kafka_py.admin`.

A Spark task writes its rows in a transaction it flushes but does not end, and hands the driver
a :class:`TransactionHandle`; the driver ends it with :func:`end_transaction` (EndTxn by
producer id and epoch, as Flink's Kafka committer recovers a transaction), from a client of its
own. Facts from Kafka's message specs, KIP-98 (transactions), KIP-664 (DescribeTransactions)
and Kafka's ``TransactionCoordinator``; no code taken.

Transactions v1 on purpose (KIP-890 part 2, "transactions v2", is not used): the producer
adds partitions itself with AddPartitionsToTxn (client versions 0-3), writes with Produce
<= v11 and ends with EndTxn <= v4. With these versions the coordinator keeps the producer
epoch across EndTxn, so a handle stays valid until the transaction ends and a retried EndTxn
of the same outcome is answered NONE (the coordinator's ``CompleteCommit``/``CompleteAbort``
state with the same epoch). EndTxn v5+ would bump the epoch at every end.

What the coordinator does (seen on Kafka 4.3, asserted by ``tests/producer/test_transactions.py``):

- InitProducerId of a new transactional id: producer id P, epoch 0, state ``Empty``; the first
  AddPartitionsToTxn makes it ``Ongoing``.
- EndTxn (v4) answers NONE once ``PrepareCommit``/``PrepareAbort`` is logged; the epoch is kept
  (``CompleteCommit`` with the same epoch). Retried while the markers are written it answers
  CONCURRENT_TRANSACTIONS (retried here), after that NONE again for the same outcome, and
  INVALID_TXN_STATE for the other one.
- InitProducerId while a transaction of epoch E is ``Ongoing``: the coordinator fences it
  (``PrepareAbort`` at E+1), answers CONCURRENT_TRANSACTIONS until the abort markers are
  written, then returns P with epoch E+2 (state ``Empty``). EndTxn with epoch E, commit or
  abort, then answers PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before EndTxn v2).
- A transaction open longer than its ``transaction.timeout.ms`` is aborted by the coordinator
  (checked every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``, 10 s by
  default; 2 s timeout -> aborted after about 6 s) with the epoch bumped to E+1
  (``CompleteAbort``); EndTxn with epoch E then answers PRODUCER_FENCED as well.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_kafka_py.admin.transactions import TransactionState, describe_transaction
from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.coordinator import call_coordinator, deadline_after
from spark_kafka_py.errors import (
    ConfigError,
    KafkaError,
    ProducerFencedError,
    TransactionError,
    UnsupportedByBrokerError,
)
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopic,
)
from spark_kafka_py.protocol.messages.describe_transactions import DescribeTransactionsRequest
from spark_kafka_py.protocol.messages.end_txn import EndTxnRequest
from spark_kafka_py.protocol.messages.find_coordinator import FindCoordinatorRequest
from spark_kafka_py.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from spark_kafka_py.protocol.messages.list_transactions import ListTransactionsRequest
from spark_kafka_py.protocol.messages.produce import ProduceRequest

__all__ = [
    "ADD_PARTITIONS_TO_TXN_MAX_VERSION",
    "END_TXN_MAX_VERSION",
    "PRODUCE_TXN_MAX_VERSION",
    "TransactionHandle",
    "add_partitions_to_transaction",
    "check_transaction_support",
    "end_transaction",
    "fence",
]

log = logging.getLogger(__name__)

#: Produce v12+ adds partitions to the transaction implicitly (KIP-890 part 2); we add them.
PRODUCE_TXN_MAX_VERSION = 11
#: AddPartitionsToTxn v4+ is broker-to-coordinator only (KIP-890 part 1).
ADD_PARTITIONS_TO_TXN_MAX_VERSION = 3
#: EndTxn v5+ bumps the producer epoch at every transaction end (KIP-890 part 2).
END_TXN_MAX_VERSION = 4

#: The producer's epoch is not the current one.
_FENCED = frozenset({ec.PRODUCER_FENCED, ec.INVALID_PRODUCER_EPOCH})


@dataclass(frozen=True)
class TransactionHandle:
    """What a task hands the driver: enough to end its transaction from another process.

    Attributes:
        transactional_id: the transactional id.
        producer_id, producer_epoch: the producer's (KIP-98) when it wrote.
        partitions: the ``(topic, partition)`` pairs written in the transaction, sorted.
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict: ``{"transactional_id", "producer_id", "producer_epoch",
        "partitions": [[topic, partition], ...]}``."""
        return {
            "transactional_id": self.transactional_id,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "partitions": [[t, p] for t, p in self.partitions],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TransactionHandle:
        """The handle of :meth:`to_json`'s dict.

        Raises:
            ValueError: a field missing or of a wrong type.
        """
        try:
            return cls(
                transactional_id=str(d["transactional_id"]),
                producer_id=int(d["producer_id"]),
                producer_epoch=int(d["producer_epoch"]),
                partitions=tuple((str(t), int(p)) for t, p in d.get("partitions", ())),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a transaction handle: {d!r} ({exc!r})") from exc


# -- the API -------------------------------------------------------------------------------
def fence(
    client: KafkaClient,
    transactional_id: str,
    *,
    transaction_timeout_ms: int,
    timeout_ms: int,
) -> tuple[int, int]:
    """InitProducerId with ``transactional_id``: the current producer id and a new epoch.

    Any open transaction of an older epoch is aborted first (zombie fencing, KIP-98): the
    coordinator answers CONCURRENT_TRANSACTIONS until its abort markers are written, and this
    waits that out (within ``timeout_ms``).

    Args:
        transaction_timeout_ms: ``transaction.timeout.ms`` for the producer's transactions.
        timeout_ms: bound on the whole call, retries included (ms).

    Returns:
        ``(producer_id, producer_epoch)``.

    Raises:
        ConfigError: INVALID_TRANSACTION_TIMEOUT, naming ``kafka.transaction.timeout.ms`` and
            the broker's ``transaction.max.timeout.ms``.
        TransactionError: another coordinator error (e.g.
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    request = InitProducerIdRequest(
        transactional_id=transactional_id, transaction_timeout_ms=transaction_timeout_ms
    )
    response: InitProducerIdResponse
    response, code = call_coordinator(
        client,
        transactional_id,
        request,
        lambda r: r.error_code,
        what=f"InitProducerId for transactional id {transactional_id!r}",
        timeout_ms=timeout_ms,
    )
    if code == ec.INVALID_TRANSACTION_TIMEOUT:
        raise ConfigError(
            f"kafka.transaction.timeout.ms={transaction_timeout_ms} is refused by the broker "
            "(INVALID_TRANSACTION_TIMEOUT): it must not exceed the broker's "
            "transaction.max.timeout.ms (900000 ms by default); lower the option or raise the "
            "broker setting"
        )
    if code != ec.NONE:
        raise TransactionError(code, transactional_id, -1, -1, action="initializing")
    log.info(
        "transactional id %r: producer id %d epoch %d",
        transactional_id,
        response.producer_id,
        response.producer_epoch,
    )
    return response.producer_id, response.producer_epoch


def add_partitions_to_transaction(
    client: KafkaClient,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: Iterable[tuple[str, int]],
    *,
    timeout_ms: int,
) -> None:
    """AddPartitionsToTxn (client versions 0-3): the partitions join the open transaction
    (which begins with the first of them). Needed before the first Produce to a partition.

    Raises:
        ProducerFencedError: PRODUCER_FENCED / INVALID_PRODUCER_EPOCH.
        TransactionError: another partition error (e.g. TOPIC_AUTHORIZATION_FAILED,
            INVALID_TXN_STATE), naming the partitions.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(set(partitions)):
        by_topic.setdefault(topic, []).append(partition)
    request = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id,
        v3_and_below_producer_id=producer_id,
        v3_and_below_producer_epoch=producer_epoch,
        v3_and_below_topics=tuple(
            AddPartitionsToTxnTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items()
        ),
    )

    def first_error(r: AddPartitionsToTxnResponse) -> int:
        codes = [
            p.partition_error_code
            for t in r.results_by_topic_v3_and_below
            for p in t.results_by_partition
            if p.partition_error_code not in (ec.NONE, ec.OPERATION_NOT_ATTEMPTED)
        ]
        return codes[0] if codes else ec.NONE

    _, code = call_coordinator(
        client,
        transactional_id,
        request,
        first_error,
        what=f"AddPartitionsToTxn for transactional id {transactional_id!r}",
        timeout_ms=timeout_ms,
        max_version=ADD_PARTITIONS_TO_TXN_MAX_VERSION,
    )
    if code == ec.NONE:
        return
    where = ", ".join(f"{t}-{p}" for t, ps in by_topic.items() for p in ps)
    cls = ProducerFencedError if code in _FENCED else TransactionError
    raise cls(
        code,
        transactional_id,
        producer_id,
        producer_epoch,
        f"{code.description} (partitions {where})",
        action="adding partitions to the transaction",
    )


def end_transaction(
    client: KafkaClient, handle: TransactionHandle, *, commit: bool, timeout_ms: int
) -> None:
    """Commit or abort the transaction of ``handle`` (EndTxn <= v4 to its coordinator), from
    any process.

    A handle without partitions returns at once (nothing was written, no transaction began).
    Idempotent: ending a transaction that already ended the same way (a retried commit after a
    crash) returns normally; the coordinator answers NONE for it while the epoch is unchanged.
    Retries coordinator moves, loading and CONCURRENT_TRANSACTIONS (the markers of this
    transaction still being written) within ``timeout_ms``.

    Raises:
        ProducerFencedError: the handle's epoch is fenced: a newer producer with the same
            transactional id began, or the broker aborted the transaction after
            ``kafka.transaction.timeout.ms`` (both abort an open transaction); the message
            names both causes, the current epoch and the registered timeout. Raised for an
            abort too: the transaction of that epoch is no longer open, but whether it had
            been committed before the fence cannot be told from the coordinator.
        TransactionError: INVALID_TXN_STATE (e.g. committing a transaction that was aborted),
            INVALID_PRODUCER_ID_MAPPING, TRANSACTIONAL_ID_NOT_FOUND, ...
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    tid = handle.transactional_id
    outcome = "commit" if commit else "abort"
    if not handle.partitions:
        return  # nothing was added: the coordinator has no transaction to end (as Java skips)
    deadline = deadline_after(timeout_ms)
    _, code = call_coordinator(
        client,
        tid,
        EndTxnRequest(
            transactional_id=tid,
            producer_id=handle.producer_id,
            producer_epoch=handle.producer_epoch,
            committed=commit,
        ),
        lambda r: r.error_code,
        what=f"EndTxn ({outcome}) for transactional id {tid!r}",
        timeout_ms=timeout_ms,
        max_version=END_TXN_MAX_VERSION,
        deadline=deadline,
    )
    if code == ec.NONE:
        return
    state = _state_or_none(client, tid, deadline)
    done = "CompleteCommit" if commit else "CompleteAbort"
    if (
        state is not None
        and state.state == done
        and (state.producer_id, state.producer_epoch) == (handle.producer_id, handle.producer_epoch)
    ):
        log.info("transaction of %r already ended (%s); %s answered %s", tid, done, outcome, code)
        return
    now = f"; the coordinator reports {_describe(state)}"
    if code in _FENCED:
        limit = state.timeout_ms if state is not None else "?"
        raise ProducerFencedError(
            code,
            tid,
            handle.producer_id,
            handle.producer_epoch,
            "the transaction was aborted before this "
            f"{outcome}: either it stayed open longer than kafka.transaction.timeout.ms "
            f"(registered: {limit} ms) and the broker aborted it, or a newer producer with the "
            f"same transactional id fenced it{now}",
            action=f"ending ({outcome}) the transaction",
        )
    raise TransactionError(
        code,
        tid,
        handle.producer_id,
        handle.producer_epoch,
        f"{code.description}{now}",
        action=f"ending ({outcome}) the transaction",
    )


def _state_or_none(client: KafkaClient, tid: str, deadline: float) -> TransactionState | None:
    """The id's state for an error message or the idempotence check; ``None`` if it cannot be
    told (the original error is what the caller raises)."""
    left_ms = max(int((deadline - time.monotonic()) * 1000), 1000)
    try:
        return describe_transaction(client, tid, timeout_ms=left_ms)
    except KafkaError as exc:
        log.info("DescribeTransactions for %r failed: %s", tid, exc)
        return None


def _describe(state: TransactionState | None) -> str:
    if state is None:
        return "nothing (DescribeTransactions failed)"
    return (
        f"state {state.state}, producer id {state.producer_id}, epoch {state.producer_epoch}, "
        f"transaction.timeout.ms {state.timeout_ms}"
    )


#: Bootstrap servers whose brokers passed :func:`check_transaction_support` in this process.
_supported: set[object] = set()


def _needed() -> tuple[tuple[type[Any], int | None], ...]:
    return (
        (InitProducerIdRequest, None),
        (AddPartitionsToTxnRequest, ADD_PARTITIONS_TO_TXN_MAX_VERSION),
        (ProduceRequest, PRODUCE_TXN_MAX_VERSION),
        (EndTxnRequest, END_TXN_MAX_VERSION),
        (FindCoordinatorRequest, None),
        (DescribeTransactionsRequest, None),
        (ListTransactionsRequest, None),
    )


def check_transaction_support(client: KafkaClient, *, timeout_ms: int) -> None:
    """Check that every broker of the cluster serves the request versions a transaction ended
    by producer id and epoch from another process needs (the exactly-once sink's commit):
    InitProducerId, AddPartitionsToTxn v0-3, Produce up to v11, EndTxn v0-4 (KIP-890's
    transactions v2 bump the epoch at every EndTxn v5+, which a handle cannot follow),
    FindCoordinator, DescribeTransactions and ListTransactions (KIP-664). Once per process and
    bootstrap servers.

    Raises:
        UnsupportedByBrokerError: naming the broker, the request and the versions each side
            offers (a broker that dropped the versions, or one older than Kafka 3.0 without
            DescribeTransactions).
        KafkaConnectionError / KafkaTimeoutError: a broker could not be reached.
    """
    key = client.config.bootstrap_servers
    if key in _supported:
        return
    metadata = client.metadata([])
    for node in sorted(metadata.brokers):
        conn = client.connection(node)
        conn.connect()
        for request_type, cap in _needed():
            try:
                conn.pick_version(request_type, cap)
            except UnsupportedByBrokerError as exc:
                top = request_type.MAX_VERSION if cap is None else cap
                raise UnsupportedByBrokerError(
                    f"deliveryGuarantee=exactly-once needs {request_type.__name__} "
                    f"{request_type.MIN_VERSION}-{top} on every broker to end a task's "
                    f"transaction from the driver: {exc}",
                    api_name=exc.api_name,
                    api_key=exc.api_key,
                    broker_versions=exc.broker_versions,
                    broker_release=exc.broker_release,
                ) from exc
    del timeout_ms  # each connection is bounded by the client's own timeouts
    _supported.add(key)
