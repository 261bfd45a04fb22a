"""The transaction coordinator of a transactional id (or the group coordinator of a group id):
finding it and asking it until it gives an answer worth acting on.

FindCoordinator with key type 1 (transaction, KIP-98) names the broker; NOT_COORDINATOR and
COORDINATOR_NOT_AVAILABLE send the request through a new lookup, COORDINATOR_LOAD_IN_PROGRESS
and CONCURRENT_TRANSACTIONS (the markers of the id's previous transaction still being written)
are asked again after a backoff, lost connections too; everything bounded by the caller's
timeout (Kafka's Java ``TransactionManager`` retries the same errors). The backoff is the one
retry policy's (:mod:`spark_kafka_py.client.retry`: ``retry.backoff.ms`` doubling up to
``retry.backoff.max.ms``, with jitter, KIP-580); an error that is not ``retriable`` (a failed TLS
handshake, an authorization error) ends the retries at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.retry import Backoff, Retries
from spark_kafka_py.errors import KafkaApiError, KafkaConnectionError, KafkaTimeoutError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

__all__ = [
    "KEY_TYPE_GROUP",
    "KEY_TYPE_TRANSACTION",
    "NETWORK_ERRORS",
    "call_coordinator",
    "deadline_after",
    "find_coordinator",
    "find_transaction_coordinator",
    "retries_until",
]

#: The coordinator moved or is not known yet: look it up again.
_FIND_AGAIN = frozenset({ec.NOT_COORDINATOR, ec.COORDINATOR_NOT_AVAILABLE})
#: The coordinator is busy with this transactional id (loading, or writing the markers of the
#: previous transaction): ask again after a backoff.
_WAIT = frozenset({ec.COORDINATOR_LOAD_IN_PROGRESS, ec.CONCURRENT_TRANSACTIONS})
#: Connection-level failures worth another try within the deadline.
NETWORK_ERRORS = (KafkaConnectionError, KafkaTimeoutError)


def deadline_after(timeout_ms: int) -> float:
    """``time.monotonic()`` deadline ``timeout_ms`` ms from now (s)."""
    return time.monotonic() + timeout_ms / 1000


def retries_until(
    client: KafkaClient, what: str, timeout_ms: int, deadline: float | None = None
) -> Retries:
    """The retries of one request (:class:`~spark_kafka_py.client.retry.Retries`): the
    client's ``retry.backoff.ms`` growing to ``retry.backoff.max.ms`` with jitter (KIP-580,
    ``ExponentialBackoff.java``), until ``deadline`` (``time.monotonic()``, s; by default
    ``timeout_ms`` ms from now).

    Its :meth:`~spark_kafka_py.client.retry.Retries.after` raises an error that is not
    ``retriable`` as it is, and past the deadline a :class:`KafkaTimeoutError`
    ``"<what>: not done within <timeout_ms> ms (last: <error name or message>)"``.
    """

    def timed_out(last: BaseException) -> KafkaTimeoutError:
        name = last.name if isinstance(last, KafkaApiError) else str(last)
        return KafkaTimeoutError(f"{what}: not done within {timeout_ms} ms (last: {name})")

    return Retries(
        what,
        timeout_ms,
        backoff=Backoff(client.config.retry_backoff_ms),
        deadline=deadline,
        timeout_error=timed_out,
    )


def find_transaction_coordinator(
    client: KafkaClient, transactional_id: str, deadline: float, timeout_ms: int
) -> int:
    """The node id of ``transactional_id``'s transaction coordinator (FindCoordinator, key
    type 1).

    Raises:
        KafkaApiError: a non-retriable error (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ...).
        KafkaTimeoutError: no answer within the deadline.
    """
    return find_coordinator(client, transactional_id, KEY_TYPE_TRANSACTION, deadline, timeout_ms)


def find_coordinator(
    client: KafkaClient, key: str, key_type: int, deadline: float, timeout_ms: int
) -> int:
    """The node id of the coordinator of ``key``: a group id (key type 0,
    ``KEY_TYPE_GROUP``) or a transactional id (key type 1, ``KEY_TYPE_TRANSACTION``).

    Raises:
        KafkaApiError: a non-retriable error (GROUP_AUTHORIZATION_FAILED, ...).
        KafkaTimeoutError: no answer within the deadline.
    """
    kind = "transactional id" if key_type == KEY_TYPE_TRANSACTION else "group"
    what = f"FindCoordinator for {kind} {key!r}"
    retries = retries_until(client, what, timeout_ms, deadline)
    while True:
        try:
            response: FindCoordinatorResponse = client.send(
                client.least_loaded_node(),
                FindCoordinatorRequest(key=key, key_type=key_type, coordinator_keys=(key,)),
            )
        except NETWORK_ERRORS as exc:
            retries.after(exc)
            continue
        if response.coordinators:
            c = response.coordinators[0]
            code, node = ec.error_for(c.error_code), c.node_id
        else:
            code, node = ec.error_for(response.error_code), response.node_id
        if code == ec.NONE:
            return node
        retries.after(KafkaApiError(code, f"in {what}"))  # raised when not retriable


def call_coordinator(
    client: KafkaClient,
    transactional_id: str,
    request: Any,
    error_of: Callable[[Any], int],
    *,
    what: str,
    timeout_ms: int,
    max_version: int | None = None,
    deadline: float | None = None,
    key_type: int = KEY_TYPE_TRANSACTION,
) -> tuple[Any, ec.ErrorCode]:
    """Send ``request`` to the coordinator of ``transactional_id`` (of a group id with
    ``key_type=KEY_TYPE_GROUP``) until it answers something
    other than a coordinator move, loading or CONCURRENT_TRANSACTIONS (or a lost connection);
    return the response and its error (``error_of(response)``).

    Raises:
        KafkaTimeoutError: still retrying after ``timeout_ms``.
        KafkaApiError / KafkaConnectionError: from the coordinator lookup, or a connection
            error that is not ``retriable``.
    """
    deadline = deadline_after(timeout_ms) if deadline is None else deadline
    retries = retries_until(client, what, timeout_ms, deadline)
    node: int | None = None
    while True:
        try:
            if node is None:
                node = find_coordinator(client, transactional_id, key_type, deadline, timeout_ms)
            response = client.send(node, request, max_version=max_version)
        except NETWORK_ERRORS as exc:
            node = None
            retries.after(exc)
            continue
        code = ec.error_for(error_of(response))
        if code in _FIND_AGAIN:
            node = None
        elif code not in _WAIT:
            return response, code
        retries.after(KafkaApiError(code, f"in {what}"))  # all retriable (Kafka's table)
