"""A member of a classic consumer group (protocol type ``consumer``), driven by the caller.

:class:`GroupMember` runs the classic group protocol over a :class:`Transport` (in production
a :class:`~spark_kafka_py.client.cluster.KafkaClient`; in tests a scripted object fed with
encoded response bytes, no sockets):

* FindCoordinator (key type group), re-discovered on NOT_COORDINATOR /
  COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS and connection errors;
* JoinGroup with the ``consumer`` protocol (one protocol per configured assignor, each with
  this member's ``ConsumerProtocolSubscription``), MEMBER_ID_REQUIRED handled (KIP-394),
  ``group.instance.id`` for static membership (KIP-345);
* SyncGroup: the leader runs the assignor the coordinator chose (``protocol_name``) over the
  members' subscriptions and sends every member its ``ConsumerProtocolAssignment``;
* Heartbeat from a background thread (:meth:`start_heartbeat`), which only *flags* a needed
  rejoin: the caller rejoins at its next :meth:`ensure_active` (for Spark: a micro-batch
  boundary), as Java's consumer does in ``poll``;
* OffsetCommit with the generation id, member id and instance id; REBALANCE_IN_PROGRESS,
  ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID are handled by rejoining and committing again the
  offsets of the partitions still assigned (the others are reported, never dropped silently);
* OffsetFetch (``require_stable``, KIP-447) and LeaveGroup (dynamic members only, as Java's
  consumer: a static member keeps its place until ``session.timeout.ms``);
* the COOPERATIVE rebalance protocol (KIP-429) when every configured assignor supports it
  (``cooperative-sticky``), as Java's ``ConsumerCoordinator`` decides: the subscription
  carries the owned partitions and their generation (``generation_id``, v2; and the
  ``CooperativeStickyAssignor`` user data, KIP-341); partitions the member keeps stay assigned
  through the rebalance; when SyncGroup's assignment lacks partitions the member owned, those
  are revoked (dropped from :attr:`GroupMember.assignment`) and the member rejoins at once,
  in the same :meth:`GroupMember.ensure_active` call (the second round, in which the leader
  can give them to their new owner). With EAGER (any other assignor configured), the
  assignment is replaced as a whole at every rebalance, as before.

Sources: Kafka message specs of the APIs above (see :mod:`spark_kafka_py.protocol.messages`),
Java's ``AbstractCoordinator`` / ``ConsumerCoordinator`` for which error means what,
KIP-62 (background heartbeats, ``max.poll.interval.ms``), KIP-345, KIP-394, KIP-447.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from spark_kafka_py.consumer.group.assignors import (
    ASSIGNORS,
    COOPERATIVE_ASSIGNORS,
    Member,
    cooperative_user_data,
)
from spark_kafka_py.consumer.group.heartbeat import HeartbeatTimer
from spark_kafka_py.consumer.group.protocol import (
    CONSUMER_PROTOCOL_TYPE,
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import (
    ConfigError,
    KafkaApiError,
    KafkaConnectionError,
    KafkaError,
    KafkaProtocolError,
    KafkaTimeoutError,
)
from spark_kafka_py.protocol.error_codes import ERRORS_BY_NAME, error_for, error_for_code
from spark_kafka_py.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    FindCoordinatorRequest,
)
from spark_kafka_py.protocol.messages.heartbeat import HeartbeatRequest
from spark_kafka_py.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from spark_kafka_py.protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from spark_kafka_py.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from spark_kafka_py.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from spark_kafka_py.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
)
from spark_kafka_py.protocol.schema import Request

__all__ = ["GroupConfig", "GroupMember", "Transport"]

log = logging.getLogger(__name__)


def _code(name: str) -> int:
    return ERRORS_BY_NAME[name].code


NONE = 0
MEMBER_ID_REQUIRED = _code("MEMBER_ID_REQUIRED")
REBALANCE_IN_PROGRESS = _code("REBALANCE_IN_PROGRESS")
ILLEGAL_GENERATION = _code("ILLEGAL_GENERATION")
UNKNOWN_MEMBER_ID = _code("UNKNOWN_MEMBER_ID")
FENCED_INSTANCE_ID = _code("FENCED_INSTANCE_ID")
#: Errors after which the coordinator must be looked up again (Java ``markCoordinatorUnknown``).
COORDINATOR_ERRORS = frozenset(
    _code(n)
    for n in (
        "NOT_COORDINATOR",
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "REQUEST_TIMED_OUT",
        "NETWORK_EXCEPTION",
    )
)
#: Errors that mean "this member's generation is over: rejoin".
REJOIN_ERRORS = frozenset((REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID))
#: Errors Kafka marks retriable that we report at once in OffsetCommit/OffsetFetch: the topic
#: or partition does not exist (deleted, or a typo), as Java's ``ConsumerCoordinator`` does.
FATAL_OFFSET_ERRORS = frozenset((_code("UNKNOWN_TOPIC_OR_PARTITION"),))
#: Offset ``-1`` in OffsetFetch: no committed offset.
NO_OFFSET = -1
_NETWORK_ERRORS = (KafkaConnectionError, KafkaTimeoutError, KafkaProtocolError)


class Transport(Protocol):
    """What :class:`GroupMember` needs from a client (:class:`KafkaClient` has it)."""

    def send(
        self,
        node_id: int,
        request: Request,
        *,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> Any: ...

    def least_loaded_node(self) -> int: ...


@dataclass(frozen=True)
class GroupConfig:
    """Settings of one group member (times in ms).

    Attributes:
        group_id: ``group.id``.
        group_instance_id: ``group.instance.id`` (static membership, KIP-345) or ``None``.
        assignors: ``partition.assignment.strategy`` protocol names, preferred first.
        session_timeout_ms / heartbeat_interval_ms / max_poll_interval_ms: as the Java
            consumer (defaults 45,000 / 3,000 / 300,000); ``max_poll_interval_ms`` is also the
            JoinGroup rebalance timeout.
        request_timeout_ms: bound on one request (JoinGroup gets the rebalance timeout + 5 s
            more, as Java's consumer).
        retry_backoff_ms: pause between retries of retriable errors.
        default_api_timeout_ms: bound on retrying one commit/fetch/coordinator lookup
            (``default.api.timeout.ms``, default 60,000).
        client_rack: sent as ``rack_id`` in the subscription (v3), or ``None``.
    """

    group_id: str
    group_instance_id: str | None = None
    assignors: tuple[str, ...] = ("range",)
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 3_000
    max_poll_interval_ms: int = 300_000
    request_timeout_ms: int = 30_000
    retry_backoff_ms: int = 100
    default_api_timeout_ms: int = 60_000
    client_rack: str | None = None

    def __post_init__(self) -> None:
        if not self.group_id:
            raise ConfigError("Option 'kafka.group.id' must not be empty")
        if self.group_instance_id is not None and not self.group_instance_id:
            raise ConfigError("Option 'kafka.group.instance.id' must not be empty")
        if not self.assignors:
            raise ConfigError("Option 'kafka.partition.assignment.strategy' is empty")
        for name in self.assignors:
            if name not in ASSIGNORS:
                raise ConfigError(
                    f"Option 'kafka.partition.assignment.strategy': {name!r} is not one of "
                    f"{sorted(ASSIGNORS)}"
                )


class GroupMember:
    """One member of ``config.group_id``.

    Args:
        config: the member's :class:`GroupConfig`.
        transport: sends requests to brokers (thread-safe; shared by the heartbeat thread).
        partition_counts: ``topics -> {topic: partition count}`` for the topics that exist
            (used when this member leads the group and runs the assignor).
        clock: monotonic seconds (tests pass a fake one).
        sleep: sleeps seconds (tests pass a no-op).

    Not thread-safe for callers: one thread calls :meth:`ensure_active`, :meth:`commit`,
    :meth:`fetch_committed`, :meth:`leave`; only the heartbeat thread runs concurrently.
    """

    def __init__(
        self,
        config: GroupConfig,
        transport: Transport,
        partition_counts: Callable[[Sequence[str]], Mapping[str, int]],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self._transport = transport
        self._partition_counts = partition_counts
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.RLock()
        self._coordinator: int | None = None
        self.member_id = ""
        self.generation_id = -1
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.assignment: tuple[TopicPartition, ...] = ()
        self._topics: tuple[str, ...] = ()
        self._assigned_counts: dict[str, int] = {}
        self._rejoin_reason: str | None = "not joined yet"
        self._fatal: KafkaError | None = None
        self.timer = HeartbeatTimer(
            session_timeout_ms=config.session_timeout_ms,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            max_poll_interval_ms=config.max_poll_interval_ms,
            retry_backoff_ms=config.retry_backoff_ms,
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- small helpers --------------------------------------------------------------------
    def _now_ms(self) -> float:
        return self._clock() * 1000

    def _where(self) -> str:
        return f"group '{self.config.group_id}'"

    @property
    def cooperative(self) -> bool:
        """Whether the member follows the COOPERATIVE rebalance protocol (KIP-429): all its
        assignors support it (Java ``ConsumerCoordinator``: the protocol common to all
        configured assignors, else EAGER)."""
        return all(name in COOPERATIVE_ASSIGNORS for name in self.config.assignors)

    @property
    def is_leader(self) -> bool:
        """Whether this member led the last completed join."""
        return self.leader_id is not None and self.leader_id == self.member_id

    @property
    def rejoin_needed(self) -> str | None:
        """Why the member must rejoin at the next :meth:`ensure_active`, or ``None``."""
        return self._rejoin_reason

    def request_rejoin(self, reason: str) -> None:
        """Rejoin at the next :meth:`ensure_active` (e.g. the subscription changed)."""
        with self._lock:
            if self._rejoin_reason is None:
                self._rejoin_reason = reason

    def _raise_fatal(self) -> None:
        if self._fatal is not None:
            raise self._fatal

    def _reset_member(self, reason: str) -> None:
        with self._lock:
            self.member_id = ""
            self.generation_id = -1
            self._rejoin_reason = reason

    def _mark_coordinator_unknown(self, why: str) -> None:
        with self._lock:
            if self._coordinator is not None:
                log.info("%s: coordinator %s lost (%s)", self._where(), self._coordinator, why)
            self._coordinator = None

    def _deadline(self) -> float:
        return self._clock() + self.config.default_api_timeout_ms / 1000

    def _retry_or_raise(self, deadline: float, error: KafkaError, what: str) -> None:
        if self._clock() >= deadline:
            raise KafkaTimeoutError(
                f"{what} for {self._where()} did not succeed within "
                f"{self.config.default_api_timeout_ms} ms (default.api.timeout.ms); last "
                f"error: {error}"
            ) from error
        self._sleep(self.config.retry_backoff_ms / 1000)

    # -- coordinator ----------------------------------------------------------------------
    def coordinator(self) -> int:
        """The coordinator's broker node id, looked up with FindCoordinator if unknown.

        Raises:
            KafkaApiError: a non-retriable error (e.g. GROUP_AUTHORIZATION_FAILED,
                INVALID_GROUP_ID) naming the group.
            KafkaTimeoutError: retriable errors for longer than ``default.api.timeout.ms``.
        """
        with self._lock:
            if self._coordinator is not None:
                return self._coordinator
        deadline = self._deadline()
        group = self.config.group_id
        while True:
            try:
                response = self._transport.send(
                    self._transport.least_loaded_node(),
                    FindCoordinatorRequest(
                        key=group, key_type=KEY_TYPE_GROUP, coordinator_keys=(group,)
                    ),
                )
            except _NETWORK_ERRORS as exc:
                self._retry_or_raise(deadline, exc, "FindCoordinator")
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
            error = error_for_code(code, f"in FindCoordinator for {self._where()}")
            if not error.retriable:
                raise error
            self._retry_or_raise(deadline, error, "FindCoordinator")

    def _send_coordinator(self, request: Request, timeout_ms: int | None = None) -> Any:
        node = self.coordinator()
        try:
            return self._transport.send(node, request, timeout_ms=timeout_ms)
        except _NETWORK_ERRORS as exc:
            self._mark_coordinator_unknown(str(exc))
            raise

    # -- joining --------------------------------------------------------------------------
    def subscription(self, protocol: str | None = None) -> Subscription:
        """This member's ``ConsumerProtocolSubscription`` for the assignor ``protocol`` (v3:
        owned partitions, generation, rack).

        For ``cooperative-sticky`` the user data is the generation (``int32``, as Java's
        ``CooperativeStickyAssignor.subscriptionUserData``, KIP-341), for leaders that read
        subscriptions older than v2. A cooperative member without a generation (never joined,
        or fenced: UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION) claims no partitions: Java's
        consumer treats them as lost then.
        """
        owned = self.assignment
        if self.cooperative and self.generation_id < 0:
            owned = ()
        user_data = None
        if protocol in COOPERATIVE_ASSIGNORS:
            user_data = cooperative_user_data(self.generation_id)
        return Subscription(
            topics=self._topics,
            user_data=user_data,
            owned_partitions=owned,
            generation_id=self.generation_id,
            rack_id=self.config.client_rack,
        )

    def ensure_active(
        self, topics: Iterable[str], partition_counts: Mapping[str, int] | None = None
    ) -> tuple[TopicPartition, ...]:
        """Make sure the member is in the group's current generation; return its partitions.

        Call at every micro-batch boundary: it also resets the ``max.poll.interval.ms`` timer.
        Rejoins when the heartbeat thread flagged a rebalance, when ``topics`` differ from the
        last join, or (as leader) when a topic's partition count in ``partition_counts``
        differs from what was assigned.

        Raises:
            KafkaApiError: fatal group errors (GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID,
                FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, ...) naming the group.
            KafkaTimeoutError: not joined within ``max.poll.interval.ms`` +
                ``default.api.timeout.ms``.
        """
        self._raise_fatal()
        wanted = tuple(sorted(set(topics)))
        if wanted != self._topics:
            self._topics = wanted
            self.request_rejoin(f"subscription changed to {list(wanted)}")
        if self.is_leader and partition_counts:
            for topic, count in partition_counts.items():
                known = self._assigned_counts.get(topic)
                if known is not None and known != count:
                    self.request_rejoin(f"topic '{topic}' has {count} partitions now, not {known}")
        self.timer.poll(self._now_ms())
        if self._rejoin_reason is not None:
            self._join()
        return self.assignment

    def _join(self) -> None:
        deadline = (
            self._clock()
            + (self.config.max_poll_interval_ms + self.config.default_api_timeout_ms) / 1000
        )
        while True:
            self._raise_fatal()
            reason = self._rejoin_reason or "rejoin"
            try:
                if self._join_once(reason):
                    if self._rejoin_reason is None:
                        return
                    continue  # cooperative second round (KIP-429): rejoin at once
            except _NETWORK_ERRORS as exc:
                if exc is self._fatal:
                    raise
                self._retry_or_raise(deadline, exc, "JoinGroup/SyncGroup")
                continue
            if self._clock() >= deadline:
                raise KafkaTimeoutError(
                    f"{self._where()}: could not join within "
                    f"{self.config.max_poll_interval_ms + self.config.default_api_timeout_ms} ms"
                )

    def _fatal_join_error(self, code: int, api: str) -> KafkaApiError:
        extra = ""
        if code == FENCED_INSTANCE_ID:
            extra = f" (another member uses group.instance.id '{self.config.group_instance_id}')"
        return error_for_code(code, f"in {api} of {self._where()}{extra}")

    def _join_once(self, reason: str) -> bool:
        """One JoinGroup + SyncGroup round; True when the member is stable afterwards."""
        cfg = self.config
        # What a cooperative member owns going into this join (nothing once fenced: lost).
        owned = self.assignment if self.generation_id >= 0 else ()
        request = JoinGroupRequest(
            group_id=cfg.group_id,
            session_timeout_ms=cfg.session_timeout_ms,
            rebalance_timeout_ms=cfg.max_poll_interval_ms,
            member_id=self.member_id,
            group_instance_id=cfg.group_instance_id,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocols=tuple(
                JoinGroupRequestProtocol(
                    name=name, metadata=encode_subscription(self.subscription(name))
                )
                for name in cfg.assignors
            ),
            reason=reason[:255],
        )
        timeout = max(cfg.request_timeout_ms, cfg.max_poll_interval_ms + 5_000)
        joined: JoinGroupResponse = self._send_coordinator(request, timeout)
        code = joined.error_code
        if code == MEMBER_ID_REQUIRED:  # KIP-394: rejoin with the id the coordinator gave
            with self._lock:
                self.member_id = joined.member_id
            return False
        if code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
            self._reset_member(f"JoinGroup: {error_for(code).name}")
            return False
        if code in COORDINATOR_ERRORS:
            self._mark_coordinator_unknown(error_for(code).name)
            self._sleep(cfg.retry_backoff_ms / 1000)
            return False
        if code == REBALANCE_IN_PROGRESS or (code != NONE and error_for(code).retriable):
            self._sleep(cfg.retry_backoff_ms / 1000)
            return False
        if code != NONE:
            self._fatal = self._fatal_join_error(code, "JoinGroup")
            raise self._fatal
        protocol = joined.protocol_name
        if protocol not in cfg.assignors:
            self._fatal = KafkaProtocolError(
                f"JoinGroup of {self._where()}: the coordinator chose protocol {protocol!r}, "
                f"which this member did not offer ({list(cfg.assignors)})"
            )
            raise self._fatal
        with self._lock:
            self.member_id = joined.member_id
            self.generation_id = joined.generation_id
            self.protocol_name = protocol
            self.leader_id = joined.leader
        assignments: tuple[SyncGroupRequestAssignment, ...] = ()
        if joined.leader == joined.member_id and not joined.skip_assignment:
            assignments = self._assign(protocol, joined)
        synced = self._send_coordinator(
            SyncGroupRequest(
                group_id=cfg.group_id,
                generation_id=joined.generation_id,
                member_id=joined.member_id,
                group_instance_id=cfg.group_instance_id,
                protocol_type=CONSUMER_PROTOCOL_TYPE,
                protocol_name=protocol,
                assignments=assignments,
            )
        )
        code = synced.error_code
        if code == REBALANCE_IN_PROGRESS:
            return False
        if code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
            self._reset_member(f"SyncGroup: {error_for(code).name}")
            return False
        if code in COORDINATOR_ERRORS:
            self._mark_coordinator_unknown(error_for(code).name)
            return False
        if code != NONE:
            self._fatal = self._fatal_join_error(code, "SyncGroup")
            raise self._fatal
        assignment = tuple(sorted(decode_assignment(synced.assignment).partitions))
        with self._lock:
            revoked: tuple[TopicPartition, ...] = ()
            if self.cooperative:
                revoked = tuple(sorted(set(owned) - set(assignment)))
            self.assignment = assignment
            self._rejoin_reason = None
            if revoked:
                # KIP-429: the leader left out partitions moving to another member; this
                # member gives up those it owned and rejoins so they can be assigned.
                self._rejoin_reason = (
                    f"revoked {[str(tp) for tp in revoked]} in a cooperative rebalance"
                )
            self.timer.reset(self._now_ms())
        if revoked:
            log.info(
                "%s: member %s gives up %s (cooperative rebalance, generation %d); rejoining",
                self._where(),
                self.member_id,
                [str(tp) for tp in revoked],
                self.generation_id,
            )
        log.info(
            "%s: member %s joined generation %d (%s, leader %s), assigned %s",
            self._where(),
            self.member_id,
            self.generation_id,
            protocol,
            joined.leader,
            [str(tp) for tp in self.assignment],
        )
        return True

    def _assign(
        self, protocol: str, joined: JoinGroupResponse
    ) -> tuple[SyncGroupRequestAssignment, ...]:
        members = [
            Member(m.member_id, decode_subscription(m.metadata), m.group_instance_id)
            for m in joined.members
        ]
        topics = sorted({t for m in members for t in m.subscription.topics})
        counts = dict(self._partition_counts(topics))
        self._assigned_counts = counts
        result = ASSIGNORS[protocol](counts, members)
        return tuple(
            SyncGroupRequestAssignment(
                member_id=m.member_id,
                assignment=encode_assignment(Assignment(tuple(result.get(m.member_id, [])))),
            )
            for m in members
        )

    # -- heartbeats -----------------------------------------------------------------------
    def heartbeat_once(self) -> None:
        """Send one Heartbeat if one is due and the member is stable; flag rejoins.

        Also leaves the group (dynamic members) when ``max.poll.interval.ms`` passed without
        :meth:`ensure_active`, as Java's consumer does (KIP-62).
        """
        now = self._now_ms()
        with self._lock:
            stable = self._rejoin_reason is None and self.generation_id >= 0
            member_id, generation = self.member_id, self.generation_id
        if not stable or not self.timer.due(now):
            return
        if self.timer.poll_expired(now):
            log.warning(
                "%s: no micro-batch boundary within max.poll.interval.ms=%d; leaving the group "
                "(the member rejoins at the next batch boundary)",
                self._where(),
                self.config.max_poll_interval_ms,
            )
            self.leave("max.poll.interval.ms expired")
            return
        self.timer.sent(now)
        try:
            response = self._send_coordinator(
                HeartbeatRequest(
                    group_id=self.config.group_id,
                    generation_id=generation,
                    member_id=member_id,
                    group_instance_id=self.config.group_instance_id,
                )
            )
        except _NETWORK_ERRORS as exc:
            log.info("%s: heartbeat failed: %s", self._where(), exc)
            self.timer.failed(self._now_ms())
            return
        except KafkaError as exc:
            self.timer.failed(self._now_ms())
            log.warning("%s: heartbeat failed: %s", self._where(), exc)
            return
        self.timer.received(self._now_ms())
        code = response.error_code
        if code == NONE:
            return
        if code in COORDINATOR_ERRORS:
            self._mark_coordinator_unknown(error_for(code).name)
            self.timer.failed(self._now_ms())
        elif code == REBALANCE_IN_PROGRESS:
            self.request_rejoin("the coordinator started a rebalance")
        elif code in (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
            if code == UNKNOWN_MEMBER_ID:
                self._reset_member(f"Heartbeat: {error_for(code).name}")
            else:
                self.request_rejoin(f"Heartbeat: {error_for(code).name}")
        else:
            self._fatal = self._fatal_join_error(code, "Heartbeat")
            log.error("%s", self._fatal)

    def start_heartbeat(self) -> None:
        """Start the daemon thread that calls :meth:`heartbeat_once` (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._heartbeat_loop,
            name=f"pykafka-heartbeat-{self.config.group_id}",
            daemon=True,
        )
        self._thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.heartbeat_once()
            except Exception:  # keep beating; logged with its traceback
                log.exception("%s: heartbeat thread error", self._where())
            wait = self.timer.time_to_next_ms(self._now_ms()) / 1000
            self._stop.wait(min(max(wait, 0.01), 1.0))

    # -- offsets --------------------------------------------------------------------------
    def commit(
        self, offsets: Mapping[TopicPartition, int], *, metadata: str = ""
    ) -> dict[TopicPartition, int]:
        """OffsetCommit ``offsets`` (next offset to read, per partition) for this member.

        On REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID the member rejoins
        and commits again the offsets of the partitions it still owns; offsets of partitions
        the rebalance moved elsewhere are not committed (their new owner decides) and a
        warning names them. Without a membership (``member_id`` empty: a ``assign`` query)
        the commit is a "simple" one with generation -1 (accepted by an empty group only).

        Returns:
            the offsets that were committed.

        Raises:
            KafkaApiError: non-retriable errors (GROUP_AUTHORIZATION_FAILED,
                TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, FENCED_INSTANCE_ID,
                OFFSET_METADATA_TOO_LARGE, ...) naming the group and topic-partition.
            KafkaTimeoutError: retriable errors beyond ``default.api.timeout.ms``.
        """
        self._raise_fatal()
        pending = dict(offsets)
        done: dict[TopicPartition, int] = {}
        deadline = self._deadline()
        rejoins = 0
        while pending:
            by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
            for tp, off in sorted(pending.items()):
                by_topic.setdefault(tp.topic, []).append(
                    OffsetCommitRequestPartition(
                        partition_index=tp.partition,
                        committed_offset=off,
                        committed_metadata=metadata,
                    )
                )
            with self._lock:
                member_id, generation = self.member_id, self.generation_id
            request = OffsetCommitRequest(
                group_id=self.config.group_id,
                generation_id_or_member_epoch=generation,
                member_id=member_id,
                group_instance_id=self.config.group_instance_id if member_id else None,
                topics=tuple(
                    OffsetCommitRequestTopic(name=t, partitions=tuple(ps))
                    for t, ps in by_topic.items()
                ),
            )
            try:
                response = self._send_coordinator(request)
            except _NETWORK_ERRORS as exc:
                self._retry_or_raise(deadline, exc, "OffsetCommit")
                continue
            rejoin: int | None = None
            retry = False
            for topic in response.topics:
                for part in topic.partitions:
                    tp = TopicPartition(topic.name, part.partition_index)
                    code = part.error_code
                    if code == NONE:
                        if tp in pending:
                            done[tp] = pending.pop(tp)
                    elif code in REJOIN_ERRORS:
                        rejoin = code
                    elif code not in FATAL_OFFSET_ERRORS and (
                        code in COORDINATOR_ERRORS or error_for(code).retriable
                    ):
                        retry = True
                        if code in COORDINATOR_ERRORS:
                            self._mark_coordinator_unknown(error_for(code).name)
                        last = error_for_code(code, f"in OffsetCommit of {tp} for {self._where()}")
                    else:
                        raise error_for_code(code, f"in OffsetCommit of {tp} for {self._where()}")
            if rejoin is not None and pending:
                if not member_id:  # a simple commit into a group with members
                    raise error_for_code(
                        rejoin,
                        f"in OffsetCommit for {self._where()}: the group has active members, "
                        "so offsets can only be committed by a member",
                    )
                rejoins += 1
                if rejoins > 3:
                    raise error_for_code(
                        rejoin, f"in OffsetCommit for {self._where()} after {rejoins - 1} rejoins"
                    )
                if rejoin == UNKNOWN_MEMBER_ID:
                    self._reset_member(f"OffsetCommit: {error_for(rejoin).name}")
                else:
                    self.request_rejoin(f"OffsetCommit: {error_for(rejoin).name}")
                owned = set(self.ensure_active(self._topics))
                lost = sorted(tp for tp in pending if tp not in owned)
                if lost:
                    log.warning(
                        "%s: offsets %s were not committed: the rebalance (%s) moved these "
                        "partitions to other members, which start from the last committed "
                        "offsets (records after them may be read twice: at-least-once)",
                        self._where(),
                        {str(tp): pending[tp] for tp in lost},
                        error_for(rejoin).name,
                    )
                    for tp in lost:
                        pending.pop(tp)
                continue
            if retry and pending:
                self._retry_or_raise(deadline, last, "OffsetCommit")
        return done

    def fetch_committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """OffsetFetch: the group's committed offset per partition, ``None`` where none.

        Raises:
            KafkaApiError: GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID,
                TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, ... naming the group
                (and topic-partition).
            KafkaTimeoutError: retriable errors beyond ``default.api.timeout.ms``.
        """
        self._raise_fatal()
        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        by_topic: dict[str, list[int]] = {}
        for tp in wanted:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        group = self.config.group_id
        request = OffsetFetchRequest(
            group_id=group,
            topics=tuple(
                OffsetFetchRequestTopic(name=t, partition_indexes=tuple(p))
                for t, p in by_topic.items()
            ),
            groups=(
                OffsetFetchRequestGroup(
                    group_id=group,
                    topics=tuple(
                        OffsetFetchRequestTopics(name=t, partition_indexes=tuple(p))
                        for t, p in by_topic.items()
                    ),
                ),
            ),
            require_stable=True,
        )
        deadline = self._deadline()
        while True:
            try:
                response = self._send_coordinator(request)
            except _NETWORK_ERRORS as exc:
                self._retry_or_raise(deadline, exc, "OffsetFetch")
                continue
            if response.groups:
                top = response.groups[0].error_code
                topics = [(t.name, t.partitions) for t in response.groups[0].topics]
            else:
                top = response.error_code
                topics = [(t.name, t.partitions) for t in response.topics]
            codes = [top] + [p.error_code for _, ps in topics for p in ps]
            bad = next((c for c in codes if c != NONE), NONE)
            if bad == NONE:
                break
            context = f"in OffsetFetch for {self._where()}"
            if bad not in FATAL_OFFSET_ERRORS and (
                bad in COORDINATOR_ERRORS or error_for(bad).retriable  # UNSTABLE_OFFSET_COMMIT
            ):
                if bad in COORDINATOR_ERRORS:
                    self._mark_coordinator_unknown(error_for(bad).name)
                self._retry_or_raise(deadline, error_for_code(bad, context), "OffsetFetch")
                continue
            for name, ps in topics:
                for p in ps:
                    if p.error_code:
                        context += f" of {TopicPartition(name, p.partition_index)}"
                        break
            raise error_for_code(bad, context)
        out: dict[TopicPartition, int | None] = dict.fromkeys(wanted)
        for name, ps in topics:
            for p in ps:
                tp = TopicPartition(name, p.partition_index)
                if tp in out:
                    out[tp] = None if p.committed_offset < 0 else p.committed_offset
        return out

    # -- leaving --------------------------------------------------------------------------
    def leave(self, reason: str = "the consumer is being closed") -> None:
        """LeaveGroup for a dynamic member (static members keep their place, as in Java).

        Errors are logged, not raised: the session timeout removes the member anyway.
        """
        with self._lock:
            member_id = self.member_id
            static = self.config.group_instance_id is not None
            self.generation_id = -1
            self.assignment = ()
            self._rejoin_reason = f"left the group: {reason}"
            if not static:
                self.member_id = ""
        if not member_id or static:
            return
        try:
            response = self._send_coordinator(
                LeaveGroupRequest(
                    group_id=self.config.group_id,
                    member_id=member_id,
                    members=(MemberIdentity(member_id=member_id, reason=reason[:255]),),
                )
            )
            codes = [response.error_code] + [m.error_code for m in response.members]
            bad = next((c for c in codes if c), NONE)
            log.info("%s: member %s left the group (%s)", self._where(), member_id, reason)
            if bad:
                log.warning(
                    "%s: LeaveGroup of member %s: %s", self._where(), member_id, error_for(bad).name
                )
        except KafkaError as exc:
            log.warning("%s: LeaveGroup of member %s failed: %s", self._where(), member_id, exc)

    def close(self, *, leave: bool = True) -> None:
        """Stop the heartbeat thread and (by default) leave the group."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=self.config.request_timeout_ms / 1000 + 1)
        if leave:
            self.leave()
