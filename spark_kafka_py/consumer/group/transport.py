"""The way to a group's coordinator, shared by membership and group offsets.

* :class:`Transport` - what the group code needs from a client (in production a
  :class:`~spark_kafka_py.client.cluster.KafkaClient`; in tests a scripted object fed with
  encoded response bytes, no sockets);
* :class:`CoordinatorChannel` - FindCoordinator (key type group), re-discovered after
  NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS and connection
  errors, requests sent to the coordinator, and retries bounded by ``default.api.timeout.ms``
  (:meth:`CoordinatorChannel.retries`: the project's one retry policy,
  :mod:`spark_kafka_py.client.retry`);
* the error codes the members (:mod:`.classic`, :mod:`.consumer`) and :mod:`.offsets` act on.

Sources: FindCoordinator message spec (v0-6, KIP-699 batched keys), Java's
``AbstractCoordinator`` (``lookupCoordinator``, ``markCoordinatorUnknown``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

from spark_kafka_py.client.retry import Backoff, Retries
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.errors import (
    KafkaConnectionError,
    KafkaProtocolError,
    KafkaTimeoutError,
)
from spark_kafka_py.protocol.error_codes import (
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    ILLEGAL_GENERATION,
    NETWORK_EXCEPTION,
    NONE,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    REQUEST_TIMED_OUT,
    UNKNOWN_MEMBER_ID,
    error_for_code,
)
from spark_kafka_py.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    FindCoordinatorRequest,
)
from spark_kafka_py.protocol.schema import Request, Response

#: The response class a request names (``Request[R]``).
R = TypeVar("R", bound=Response)

__all__ = ["CoordinatorChannel", "Transport"]

log = logging.getLogger(__name__)


#: Errors after which the coordinator must be looked up again (Java ``markCoordinatorUnknown``).
COORDINATOR_ERRORS = frozenset(
    {
        NOT_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE,
        COORDINATOR_LOAD_IN_PROGRESS,
        REQUEST_TIMED_OUT,
        NETWORK_EXCEPTION,
    }
)
#: Errors that mean "this member's generation is over: rejoin".
REJOIN_ERRORS = frozenset((REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID))
#: Failures of one request that are retried (with the coordinator looked up again).
NETWORK_ERRORS = (KafkaConnectionError, KafkaTimeoutError, KafkaProtocolError)


class Transport(Protocol):
    """What the group code needs from a client (:class:`KafkaClient` has it)."""

    def send(
        self,
        node_id: int,
        request: Request[R],
        *,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> R: ...

    def least_loaded_node(self) -> int: ...


class CoordinatorChannel:
    """Requests to the coordinator of ``config.group_id`` (thread-safe).

    Args:
        config: the member's :class:`GroupConfig` (group id, ``retry.backoff.ms``,
            ``default.api.timeout.ms``).
        transport: sends requests to brokers (thread-safe; shared by the heartbeat thread).
        clock: monotonic seconds (tests pass a fake one).
        sleep: sleeps seconds (tests pass a no-op).
        backoff: the pauses between retries (default: Kafka's exponential backoff from
            ``retry.backoff.ms`` / ``retry.backoff.max.ms``, KIP-580).

    Attributes:
        backoff: that :class:`~spark_kafka_py.client.retry.Backoff` (stateless; shared with
            the member's join rounds).
    """

    def __init__(
        self,
        config: GroupConfig,
        transport: Transport,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        backoff: Backoff | None = None,
    ) -> None:
        self.config = config
        self.backoff = (
            backoff
            if backoff is not None
            else Backoff(config.retry_backoff_ms, config.retry_backoff_max_ms)
        )
        self.transport = transport
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._coordinator: int | None = None

    @property
    def where(self) -> str:
        """``group '<group.id>'``, for messages."""
        return f"group '{self.config.group_id}'"

    def mark_unknown(self, why: str) -> None:
        """Forget the coordinator: the next request looks it up again (``why`` is logged)."""
        with self._lock:
            if self._coordinator is not None:
                log.info("%s: coordinator %s lost (%s)", self.where, self._coordinator, why)
            self._coordinator = None

    def retries(
        self, what: str, *, timeout_ms: int | None = None, timeout_option: str | None = None
    ) -> Retries:
        """The retries of one request ``what`` to the coordinator, starting now.

        Args:
            what: the request, for messages (``"OffsetCommit"``).
            timeout_ms: how long it may keep retrying (ms); default ``default.api.timeout.ms``.
            timeout_option: the option(s) that set ``timeout_ms``, for messages.

        Returns:
            a :class:`~spark_kafka_py.client.retry.Retries` whose ``after(error)`` sleeps the
            backoff (:attr:`backoff`) before the next try, and raises ``error`` when it is not
            retriable, or :class:`KafkaTimeoutError` past the deadline, naming ``what``, the
            group, the timeout and the last error.
        """
        if timeout_ms is None:
            timeout_ms = self.config.default_api_timeout_ms
            timeout_option = "default.api.timeout.ms"
        option = timeout_option or "default.api.timeout.ms"

        def timeout(error: BaseException) -> KafkaTimeoutError:
            return KafkaTimeoutError(
                f"{what} for {self.where} did not succeed within {timeout_ms} ms ({option}); "
                f"last error: {error}"
            )

        return Retries(
            what,
            timeout_ms,
            timeout_option=option,
            backoff=self.backoff,
            timeout_error=timeout,
            clock=self.clock,
            sleep=self.sleep,
        )

    def coordinator(self) -> int:
        """The coordinator's broker node id, looked up with FindCoordinator if unknown.

        Raises:
            KafkaApiError: a non-retriable error (e.g. GROUP_AUTHORIZATION_FAILED,
                INVALID_GROUP_ID) naming the group.
            KafkaTimeoutError: retriable errors for longer than ``default.api.timeout.ms``.
            KafkaConnectionError / KafkaProtocolError: a failure that is not retriable (a TLS
                handshake that cannot succeed, a peer that is not a Kafka listener, bytes that
                do not follow the protocol).
        """
        with self._lock:
            if self._coordinator is not None:
                return self._coordinator
        retries = self.retries("FindCoordinator")
        group = self.config.group_id
        while True:
            try:
                response = self.transport.send(
                    self.transport.least_loaded_node(),
                    FindCoordinatorRequest(
                        key=group, key_type=KEY_TYPE_GROUP, coordinator_keys=(group,)
                    ),
                )
            except NETWORK_ERRORS as exc:
                retries.after(exc)
                continue
            if response.coordinators:
                c = response.coordinators[0]
                code, node = c.error_code, c.node_id
            else:
                code, node = response.error_code, response.node_id
            if code == NONE:
                with self._lock:
                    self._coordinator = node
                return node
            error = error_for_code(code, f"in FindCoordinator for {self.where}")
            if not error.retriable:
                raise error
            retries.after(error)

    def send(self, request: Request[R], timeout_ms: int | None = None) -> R:
        """Send ``request`` to the coordinator (looked up first if unknown) and return the
        decoded response; a connection failure forgets the coordinator.

        Raises:
            KafkaConnectionError / KafkaTimeoutError / KafkaProtocolError: the request failed
                (the caller retries).
            KafkaApiError: the coordinator lookup failed (see :meth:`coordinator`).
        """
        node = self.coordinator()
        try:
            return self.transport.send(node, request, timeout_ms=timeout_ms)
        except NETWORK_ERRORS as exc:
            self.mark_unknown(str(exc))
            raise
