"""A member of a classic consumer group (protocol type ``consumer``), driven by the caller.

:class:`GroupMember` runs the member state machine of the classic group protocol (Java's
``AbstractCoordinator``) through a :class:`~.transport.CoordinatorChannel` over a
:class:`~.transport.Transport`:

* FindCoordinator (in :mod:`.transport`), re-discovered on NOT_COORDINATOR /
  COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS and connection errors;
* JoinGroup with the ``consumer`` protocol (one protocol per configured assignor, each with
  this member's ``ConsumerProtocolSubscription``), MEMBER_ID_REQUIRED handled (KIP-394),
  ``group.instance.id`` for static membership (KIP-345);
* SyncGroup: the leader runs the assignor the coordinator chose (``protocol_name``) over the
  members' subscriptions and sends every member its ``ConsumerProtocolAssignment``;
* Heartbeat from a background thread (:meth:`start_heartbeat`), which only *flags* a needed
  rejoin: the caller rejoins at its next :meth:`ensure_active` (for Spark: a micro-batch
  boundary), as Java's consumer does in ``poll``;
* LeaveGroup (dynamic members only, as Java's consumer: a static member keeps its place until
  ``session.timeout.ms``);
* the COOPERATIVE rebalance protocol (KIP-429) when every configured assignor supports it
  (``cooperative-sticky``), as Java's ``ConsumerCoordinator`` decides: the subscription
  carries the owned partitions and their generation (``generation_id``, v2; and the
  ``CooperativeStickyAssignor`` user data, KIP-341); partitions the member keeps stay assigned
  through the rebalance; when SyncGroup's assignment lacks partitions the member owned, those
  are revoked (dropped from :attr:`GroupMember.assignment`) and the member rejoins at once,
  in the same :meth:`GroupMember.ensure_active` call (the second round, in which the leader
  can give them to their new owner). With EAGER (any other assignor configured), the
  assignment is replaced as a whole at every rebalance, as before.

The member's group offsets (OffsetCommit with its generation, OffsetFetch) are a
:class:`~.offsets.GroupOffsets` it holds (:attr:`GroupMember.offsets`);
:meth:`GroupMember.commit` and :meth:`GroupMember.fetch_committed` use it.

Sources: Kafka message specs of the APIs above (see :mod:`spark_kafka_py.protocol.messages`),
Java's ``AbstractCoordinator`` / ``ConsumerCoordinator`` for which error means what,
KIP-62 (background heartbeats, ``max.poll.interval.ms``), KIP-345, KIP-394.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from spark_kafka_py.consumer.group.assignors import (
    ASSIGNORS,
    COOPERATIVE_ASSIGNORS,
    Member,
    cooperative_user_data,
)
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.heartbeat import HeartbeatThread, HeartbeatTimer
from spark_kafka_py.consumer.group.offsets import GroupOffsets
from spark_kafka_py.consumer.group.protocol import (
    CONSUMER_PROTOCOL_TYPE,
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafka_py.consumer.group.transport import (
    COORDINATOR_ERRORS,
    NETWORK_ERRORS,
    CoordinatorChannel,
    Transport,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaApiError, KafkaError, KafkaProtocolError, KafkaTimeoutError
from spark_kafka_py.protocol.error_codes import (
    FENCED_INSTANCE_ID,
    ILLEGAL_GENERATION,
    MEMBER_ID_REQUIRED,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    error_for,
    error_for_code,
)
from spark_kafka_py.protocol.messages.heartbeat import HeartbeatRequest
from spark_kafka_py.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from spark_kafka_py.protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from spark_kafka_py.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
)

__all__ = ["GroupMember"]

log = logging.getLogger(__name__)


class GroupMember:
    """One member of ``config.group_id``.

    Args:
        config: the member's :class:`GroupConfig`.
        transport: sends requests to brokers (thread-safe; shared by the heartbeat thread).
        partition_counts: ``topics -> {topic: partition count}`` for the topics that exist
            (used when this member leads the group and runs the assignor).
        clock: monotonic seconds (tests pass a fake one).
        sleep: sleeps seconds (tests pass a no-op).

    Attributes:
        channel: the :class:`~.transport.CoordinatorChannel` to the group's coordinator.
        offsets: the member's :class:`~.offsets.GroupOffsets` (commits carry its generation).

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
        self.channel = CoordinatorChannel(config, transport, clock=clock, sleep=sleep)
        self.offsets = GroupOffsets(self.channel, self)
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
        self._heartbeat = HeartbeatThread(
            f"pykafka-heartbeat-{config.group_id}",
            self.heartbeat_once,
            lambda: self.timer.time_to_next_ms(self._now_ms()),
            self._where,
        )

    # -- small helpers --------------------------------------------------------------------
    def _now_ms(self) -> float:
        return self._clock() * 1000

    def _where(self) -> str:
        return self.channel.where

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

    def raise_fatal(self) -> None:
        """Raise the error that ended this membership (fatal JoinGroup / SyncGroup /
        Heartbeat errors, e.g. FENCED_INSTANCE_ID), if any."""
        if self._fatal is not None:
            raise self._fatal

    def identity(self) -> tuple[str, int]:
        """``(member id, generation id)`` of the current generation (``("", -1)``: none)."""
        with self._lock:
            return self.member_id, self.generation_id

    def rejoin_after(self, error_code: int, api: str) -> tuple[TopicPartition, ...]:
        """Rejoin after ``error_code`` (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION or
        UNKNOWN_MEMBER_ID; the last one resets the member id) answered ``api``, now, with the
        last subscription; return the partitions assigned afterwards.

        Raises:
            as :meth:`ensure_active`.
        """
        reason = f"{api}: {error_for(error_code).name}"
        if error_code == UNKNOWN_MEMBER_ID:
            self._reset_member(reason)
        else:
            self.request_rejoin(reason)
        return self.ensure_active(self._topics)

    def _reset_member(self, reason: str) -> None:
        with self._lock:
            self.member_id = ""
            self.generation_id = -1
            self._rejoin_reason = reason

    # -- coordinator ----------------------------------------------------------------------
    def coordinator(self) -> int:
        """The coordinator's broker node id (see :meth:`CoordinatorChannel.coordinator`)."""
        return self.channel.coordinator()

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
        self.raise_fatal()
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
            self.raise_fatal()
            reason = self._rejoin_reason or "rejoin"
            try:
                if self._join_once(reason):
                    if self._rejoin_reason is None:
                        return
                    continue  # cooperative second round (KIP-429): rejoin at once
            except NETWORK_ERRORS as exc:
                if exc is self._fatal:
                    raise
                self.channel.retry_or_raise(deadline, exc, "JoinGroup/SyncGroup")
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
        joined: JoinGroupResponse = self.channel.send(request, timeout)
        code = joined.error_code
        if code == MEMBER_ID_REQUIRED:  # KIP-394: rejoin with the id the coordinator gave
            with self._lock:
                self.member_id = joined.member_id
            return False
        if code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
            self._reset_member(f"JoinGroup: {error_for(code).name}")
            return False
        if code in COORDINATOR_ERRORS:
            self.channel.mark_unknown(error_for(code).name)
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
        synced = self.channel.send(
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
            self.channel.mark_unknown(error_for(code).name)
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
            response = self.channel.send(
                HeartbeatRequest(
                    group_id=self.config.group_id,
                    generation_id=generation,
                    member_id=member_id,
                    group_instance_id=self.config.group_instance_id,
                )
            )
        except NETWORK_ERRORS as exc:
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
            self.channel.mark_unknown(error_for(code).name)
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
        self._heartbeat.start()

    # -- offsets --------------------------------------------------------------------------
    def commit(
        self, offsets: Mapping[TopicPartition, int], *, metadata: str = ""
    ) -> dict[TopicPartition, int]:
        """OffsetCommit ``offsets`` (next offset to read, per partition) with this member's
        generation; see :meth:`GroupOffsets.commit` (rejoins on REBALANCE_IN_PROGRESS /
        ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID).

        Returns:
            the offsets that were committed.

        Raises:
            KafkaApiError / KafkaTimeoutError: as :meth:`GroupOffsets.commit`.
        """
        return self.offsets.commit(offsets, metadata=metadata)

    def fetch_committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """OffsetFetch: the group's committed offset per partition, ``None`` where none; see
        :meth:`GroupOffsets.fetch_committed`.

        Raises:
            KafkaApiError / KafkaTimeoutError: as :meth:`GroupOffsets.fetch_committed`.
        """
        return self.offsets.fetch_committed(partitions)

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
            response = self.channel.send(
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
        self._heartbeat.stop(self.config.request_timeout_ms / 1000 + 1)
        if leave:
            self.leave()
