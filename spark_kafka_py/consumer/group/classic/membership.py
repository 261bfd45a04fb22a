"""A member of a classic consumer group (protocol type ``consumer``), sans-I/O.

:class:`ClassicMembership` is the member state machine of the classic group protocol (Java's
``AbstractCoordinator`` / ``ConsumerCoordinator``). It never touches a socket, never reads a
clock and never sleeps: it builds requests, takes their responses (or failures) and answers
with what the caller must do next. The I/O around it (the coordinator, the join loop and its
pauses, the heartbeat thread, offsets) is
:class:`~spark_kafka_py.consumer.group.classic.member.GroupMember`.

One join round (:meth:`ClassicMembership.join_request`, then the steps it leads to):

* JoinGroup (API key 11, v9) with the ``consumer`` protocol: one protocol per configured
  assignor, each with this member's ``ConsumerProtocolSubscription``; MEMBER_ID_REQUIRED
  handled (KIP-394: join again at once with the id the coordinator gave);
  ``group.instance.id`` for static membership (KIP-345). :meth:`~ClassicMembership.on_join`
  answers a :class:`JoinAgain` (with the pause before it, and whether the coordinator must be
  looked up again), a :class:`Sync` (send this SyncGroup) or, for the leader, a
  :class:`RunAssignor` (look the subscribed topics' partition counts up, then
  :meth:`~ClassicMembership.sync_as_leader`);
* SyncGroup (API key 14, v5): the leader runs the assignor the coordinator chose
  (``protocol_name``) over the members' subscriptions and sends every member its
  ``ConsumerProtocolAssignment``; :meth:`~ClassicMembership.on_sync` answers :class:`Joined` or
  :class:`JoinAgain`;
* the COOPERATIVE rebalance protocol (KIP-429) when every configured assignor supports it
  (``cooperative-sticky``): the subscription carries the owned partitions and their generation
  (v2; and the ``CooperativeStickyAssignor`` user data, KIP-341); partitions the member keeps
  stay assigned; when SyncGroup's assignment lacks partitions the member owned, those are
  revoked (dropped from :attr:`ClassicMembership.assignment`) and the member must join again
  at once (:attr:`Joined.revoked`, :attr:`ClassicMembership.rejoin_needed`). With EAGER (any
  other assignor configured) the assignment is replaced as a whole.

Heartbeat (API key 12, v4) and LeaveGroup (API key 13, v5):
:meth:`~ClassicMembership.heartbeat` gives the request when one is due and the member is stable
(or :data:`POLL_EXPIRED` when ``max.poll.interval.ms`` passed without a micro-batch boundary:
leave, KIP-62); :meth:`~ClassicMembership.on_heartbeat` only *flags* a needed rejoin;
:meth:`~ClassicMembership.leave` gives the LeaveGroup request of a dynamic member (a static one
keeps its place until ``session.timeout.ms``, as Java's consumer).

Fatal errors (GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID, FENCED_INSTANCE_ID,
INCONSISTENT_GROUP_PROTOCOL, a protocol the member did not offer, ...) are raised and kept in
:attr:`ClassicMembership.fatal`; every later call to :meth:`~ClassicMembership.raise_fatal`
raises them again.

Retriable errors of JoinGroup (REBALANCE_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS, ...) and
NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE are answered with a pause from the member's
:class:`~spark_kafka_py.client.retry.Backoff` (``retry.backoff.ms`` doubling per failed round up
to ``retry.backoff.max.ms``, with jitter: KIP-580); a completed join resets it.

Sources: Kafka message specs ``JoinGroupRequest.json``, ``SyncGroupRequest.json``,
``HeartbeatRequest.json``, ``LeaveGroupRequest.json``; Java's ``AbstractCoordinator`` /
``ConsumerCoordinator`` for which error means what; KIP-62, KIP-345, KIP-394, KIP-429.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from spark_kafka_py.client.retry import Backoff
from spark_kafka_py.consumer.group.assignors import (
    ASSIGNORS,
    COOPERATIVE_ASSIGNORS,
    cooperative_user_data,
)
from spark_kafka_py.consumer.group.assignors import Member as AssignorMember
from spark_kafka_py.consumer.group.config import GroupConfig
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
from spark_kafka_py.consumer.group.transport import COORDINATOR_ERRORS
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaApiError, KafkaError, KafkaProtocolError
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
from spark_kafka_py.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from spark_kafka_py.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from spark_kafka_py.protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from spark_kafka_py.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
)

__all__ = [
    "POLL_EXPIRED",
    "ClassicMembership",
    "HeartbeatOutcome",
    "JoinAgain",
    "Joined",
    "PollExpired",
    "RunAssignor",
    "Sync",
]

log = logging.getLogger(__name__)

#: The longest ``reason`` JoinGroup v8+ / LeaveGroup v5+ carry (KIP-800); ours is cut there.
MAX_REASON_LENGTH = 255


@dataclass(frozen=True, slots=True)
class JoinAgain:
    """The round did not complete: send a new JoinGroup after ``pause_ms`` (ms; 0: at once).

    Attributes:
        pause_ms: the pause before the next JoinGroup (ms).
        coordinator_lost: why the coordinator must be looked up again first, or ``None``.
    """

    pause_ms: float = 0.0
    coordinator_lost: str | None = None


@dataclass(frozen=True, slots=True)
class Sync:
    """JoinGroup succeeded: send ``request`` (SyncGroup) and pass its response to
    :meth:`ClassicMembership.on_sync`."""

    request: SyncGroupRequest


@dataclass(frozen=True, slots=True)
class RunAssignor:
    """JoinGroup made this member the leader: look up the partition count of each of
    ``topics`` (every member's subscription), then call :meth:`ClassicMembership.sync_as_leader`
    with them for the SyncGroup request."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Joined:
    """SyncGroup completed: the member is in generation ``generation_id`` with
    :attr:`ClassicMembership.assignment`.

    Attributes:
        generation_id: the generation joined.
        revoked: partitions a cooperative rebalance (KIP-429) took from this member; when any,
            the member must join again at once (:attr:`ClassicMembership.rejoin_needed`).
    """

    generation_id: int
    revoked: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class PollExpired:
    """``max.poll.interval.ms`` passed without a micro-batch boundary: leave the group (KIP-62;
    the member rejoins at the next boundary)."""


#: The one :class:`PollExpired`.
POLL_EXPIRED: Final = PollExpired()


@dataclass(frozen=True, slots=True)
class HeartbeatOutcome:
    """What a Heartbeat response or failure means for the caller.

    Attributes:
        coordinator_lost: why the coordinator must be looked up again, or ``None``.
        fatal: the error that ended the membership (also :attr:`ClassicMembership.fatal`),
            or ``None``.
    """

    coordinator_lost: str | None = None
    fatal: KafkaApiError | None = None


class ClassicMembership:
    """One classic member of ``config.group_id``, sans-I/O (see the module docstring).

    Args:
        config: the member's :class:`GroupConfig` (group id, instance id, assignors, session,
            heartbeat, poll and request timeouts, ``retry.backoff.ms`` /
            ``retry.backoff.max.ms``, rack).
        backoff: pauses between failed join rounds (default: :class:`Backoff` from
            ``config``'s ``retry_backoff_ms`` and ``retry_backoff_max_ms``).

    Raises:
        ConfigError: ``heartbeat.interval.ms`` >= ``session.timeout.ms``.

    Attributes:
        member_id: the member id ("" before the coordinator gave one).
        generation_id: the generation joined, ``-1`` when none.
        protocol_name: the assignor the coordinator chose in the last join.
        leader_id: the leader of the last join.
        assignment: the partitions assigned, sorted.
        timer: the :class:`HeartbeatTimer` (session, interval, ``max.poll.interval.ms``).
        fatal: the error that ended the membership, or ``None``.

    Not thread-safe by itself: the attributes a heartbeat thread reads (member id, generation,
    assignment, the rejoin reason) change under :attr:`lock`, which the caller also holds
    around the heartbeat calls.
    """

    def __init__(self, config: GroupConfig, *, backoff: Backoff | None = None) -> None:
        self.config = config
        self.backoff = (
            backoff
            if backoff is not None
            else Backoff(config.retry_backoff_ms, config.retry_backoff_max_ms)
        )
        self.lock = threading.RLock()
        self.member_id = ""
        self.generation_id = -1
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.assignment: tuple[TopicPartition, ...] = ()
        self.fatal: KafkaError | None = None
        self.timer = HeartbeatTimer(
            session_timeout_ms=config.session_timeout_ms,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            max_poll_interval_ms=config.max_poll_interval_ms,
            retry_backoff_ms=config.retry_backoff_ms,
            backoff=self.backoff,
        )
        self._topics: tuple[str, ...] = ()
        self._assigned_counts: dict[str, int] = {}
        self._rejoin_reason: str | None = "not joined yet"
        self._failed_rounds = 0  # join rounds that failed in a row (the backoff's attempts)
        # The round in flight: what the member owned going into it, and the JoinGroup answer.
        self._owned: tuple[TopicPartition, ...] = ()
        self._joined: JoinGroupResponse | None = None

    # -- what the caller reads ------------------------------------------------------------
    @property
    def where(self) -> str:
        """``group '<group.id>'``, for messages."""
        return f"group '{self.config.group_id}'"

    @property
    def topics(self) -> tuple[str, ...]:
        """The subscribed topics of the last :meth:`subscribe`, sorted."""
        return self._topics

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
        """Why the member must join (again), or ``None`` while it is stable."""
        return self._rejoin_reason

    @property
    def stable(self) -> bool:
        """In a generation, with no rejoin pending (heartbeats are sent only then)."""
        return self._rejoin_reason is None and self.generation_id >= 0

    @property
    def join_timeout_ms(self) -> int:
        """The bound on one JoinGroup request (ms): the rebalance timeout
        (``max.poll.interval.ms``) + 5 s, at least ``request.timeout.ms``, as Java's consumer."""
        return max(self.config.request_timeout_ms, self.config.max_poll_interval_ms + 5_000)

    @property
    def join_deadline_ms(self) -> int:
        """How long one :meth:`ensure_active`-style join may take in all (ms):
        ``max.poll.interval.ms`` + ``default.api.timeout.ms``."""
        return self.config.max_poll_interval_ms + self.config.default_api_timeout_ms

    def identity(self) -> tuple[str, int]:
        """``(member id, generation id)`` of the current generation (``("", -1)``: none)."""
        with self.lock:
            return self.member_id, self.generation_id

    def raise_fatal(self) -> None:
        """Raise the error that ended this membership, if any.

        Raises:
            KafkaError: :attr:`fatal` (a fatal JoinGroup / SyncGroup / Heartbeat error).
        """
        if self.fatal is not None:
            raise self.fatal

    # -- inputs of the application --------------------------------------------------------
    def request_rejoin(self, reason: str) -> None:
        """Join again at the next boundary (e.g. the subscription changed); the first reason
        is kept."""
        with self.lock:
            if self._rejoin_reason is None:
                self._rejoin_reason = reason

    def reset_member(self, reason: str) -> None:
        """Forget the member id and generation (UNKNOWN_MEMBER_ID) and join again."""
        with self.lock:
            self.member_id = ""
            self.generation_id = -1
            self._rejoin_reason = reason

    def rejoin_after(self, error_code: int, api: str) -> None:
        """``error_code`` (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID; the
        last one resets the member id) answered ``api``: join again."""
        reason = f"{api}: {error_for(error_code).name}"
        if error_code == UNKNOWN_MEMBER_ID:
            self.reset_member(reason)
        else:
            self.request_rejoin(reason)

    def subscribe(
        self, topics: Iterable[str], partition_counts: Mapping[str, int] | None, now_ms: float
    ) -> bool:
        """A micro-batch boundary (``now_ms``, ms): resets the ``max.poll.interval.ms`` timer
        and flags a rejoin when ``topics`` differ from the last join or (as leader) a topic's
        partition count in ``partition_counts`` differs from what was assigned.

        Returns:
            whether the member must join now.

        Raises:
            KafkaError: :attr:`fatal`.
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
        self.timer.poll(now_ms)
        return self._rejoin_reason is not None

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

    def join_request(self) -> JoinGroupRequest:
        """Start a join round: the JoinGroup request (v9 fields; send it with
        :attr:`join_timeout_ms`) whose response goes to :meth:`on_join`.

        Raises:
            KafkaError: :attr:`fatal`.
        """
        self.raise_fatal()
        cfg = self.config
        # What a cooperative member owns going into this join (nothing once fenced: lost).
        self._owned = self.assignment if self.generation_id >= 0 else ()
        self._joined = None
        reason = self._rejoin_reason or "rejoin"
        return JoinGroupRequest(
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
            reason=reason[:MAX_REASON_LENGTH],
        )

    def _failed_round(self, coordinator_lost: str | None = None) -> JoinAgain:
        pause = self.backoff.pause_ms(self._failed_rounds)
        self._failed_rounds += 1
        return JoinAgain(pause, coordinator_lost)

    def _fail(self, error: KafkaError) -> KafkaError:
        self.fatal = error
        return error

    def _fatal_error(self, code: int, api: str) -> KafkaApiError:
        extra = ""
        if code == FENCED_INSTANCE_ID:
            extra = f" (another member uses group.instance.id '{self.config.group_instance_id}')"
        return error_for_code(code, f"in {api} of {self.where}{extra}")

    def on_join(self, joined: JoinGroupResponse) -> JoinAgain | Sync | RunAssignor:
        """Take the JoinGroup response.

        Returns:
            :class:`JoinAgain` (MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION: at
            once; coordinator errors, REBALANCE_IN_PROGRESS and other retriable errors: after
            the backoff), :class:`Sync` (a follower, or a leader told to skip the assignment,
            KIP-814) or :class:`RunAssignor` (the leader).

        Raises:
            KafkaApiError: a fatal error (GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID,
                FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, ...) naming the group; kept in
                :attr:`fatal`.
            KafkaProtocolError: the coordinator chose a protocol this member did not offer;
                kept in :attr:`fatal`.
        """
        code = joined.error_code
        if code == MEMBER_ID_REQUIRED:  # KIP-394: join again with the id the coordinator gave
            with self.lock:
                self.member_id = joined.member_id
            return JoinAgain()
        if code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
            self.reset_member(f"JoinGroup: {error_for(code).name}")
            return JoinAgain()
        if code in COORDINATOR_ERRORS:
            return self._failed_round(error_for(code).name)
        if code == REBALANCE_IN_PROGRESS or (code != NONE and error_for(code).retriable):
            return self._failed_round()
        if code != NONE:
            raise self._fail(self._fatal_error(code, "JoinGroup"))
        protocol = joined.protocol_name
        if protocol not in self.config.assignors:
            raise self._fail(
                KafkaProtocolError(
                    f"JoinGroup of {self.where}: the coordinator chose protocol {protocol!r}, "
                    f"which this member did not offer ({list(self.config.assignors)})"
                )
            )
        with self.lock:
            self.member_id = joined.member_id
            self.generation_id = joined.generation_id
            self.protocol_name = protocol
            self.leader_id = joined.leader
        self._joined = joined
        if joined.leader == joined.member_id and not joined.skip_assignment:
            topics = sorted(
                {t for m in joined.members for t in decode_subscription(m.metadata).topics}
            )
            return RunAssignor(tuple(topics))
        return Sync(self._sync_request(()))

    def sync_as_leader(self, partition_counts: Mapping[str, int]) -> Sync:
        """The leader's SyncGroup: run the chosen assignor over the members' subscriptions
        with ``partition_counts`` (``topic -> partition count`` of the topics that exist,
        looked up after :class:`RunAssignor`).

        Raises:
            RuntimeError: no JoinGroup response made this member the leader.
        """
        joined = self._joined
        if joined is None or self.protocol_name is None:
            raise RuntimeError("sync_as_leader without a JoinGroup that made this member leader")
        members = [
            AssignorMember(m.member_id, decode_subscription(m.metadata), m.group_instance_id)
            for m in joined.members
        ]
        counts = dict(partition_counts)
        self._assigned_counts = counts
        result = ASSIGNORS[self.protocol_name](counts, members)
        return Sync(
            self._sync_request(
                tuple(
                    SyncGroupRequestAssignment(
                        member_id=m.member_id,
                        assignment=encode_assignment(
                            Assignment(tuple(result.get(m.member_id, [])))
                        ),
                    )
                    for m in members
                )
            )
        )

    def _sync_request(
        self, assignments: tuple[SyncGroupRequestAssignment, ...]
    ) -> SyncGroupRequest:
        joined = self._joined
        assert joined is not None
        return SyncGroupRequest(
            group_id=self.config.group_id,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            group_instance_id=self.config.group_instance_id,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=self.protocol_name,
            assignments=assignments,
        )

    def on_sync(self, synced: SyncGroupResponse, now_ms: float) -> JoinAgain | Joined:
        """Take the SyncGroup response (``now_ms``: a monotonic clock, ms).

        Returns:
            :class:`Joined` (the assignment is taken; the heartbeat timer starts now) or
            :class:`JoinAgain` at once (REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID,
            ILLEGAL_GENERATION, coordinator errors).

        Raises:
            KafkaApiError: a fatal error naming the group; kept in :attr:`fatal`.
        """
        code = synced.error_code
        if code == REBALANCE_IN_PROGRESS:
            return JoinAgain()
        if code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
            self.reset_member(f"SyncGroup: {error_for(code).name}")
            return JoinAgain()
        if code in COORDINATOR_ERRORS:
            return JoinAgain(coordinator_lost=error_for(code).name)
        if code != NONE:
            raise self._fail(self._fatal_error(code, "SyncGroup"))
        assignment = tuple(sorted(decode_assignment(synced.assignment).partitions))
        with self.lock:
            revoked: tuple[TopicPartition, ...] = ()
            if self.cooperative:
                revoked = tuple(sorted(set(self._owned) - set(assignment)))
            self.assignment = assignment
            self._rejoin_reason = None
            if revoked:
                # KIP-429: the leader left out partitions moving to another member; this
                # member gives up those it owned and rejoins so they can be assigned.
                self._rejoin_reason = (
                    f"revoked {[str(tp) for tp in revoked]} in a cooperative rebalance"
                )
            self.timer.reset(now_ms)
        self._failed_rounds = 0
        return Joined(self.generation_id, revoked)

    # -- heartbeats -----------------------------------------------------------------------
    def heartbeat(self, now_ms: float) -> HeartbeatRequest | PollExpired | None:
        """The Heartbeat request due at ``now_ms`` (ms; marked sent), :data:`POLL_EXPIRED`
        when ``max.poll.interval.ms`` passed without a boundary (the caller leaves), or
        ``None`` (not stable, or not due)."""
        with self.lock:
            if not self.stable or not self.timer.due(now_ms):
                return None
            if self.timer.poll_expired(now_ms):
                return POLL_EXPIRED
            self.timer.sent(now_ms)
            return HeartbeatRequest(
                group_id=self.config.group_id,
                generation_id=self.generation_id,
                member_id=self.member_id,
                group_instance_id=self.config.group_instance_id,
            )

    def on_heartbeat_failed(self, now_ms: float) -> None:
        """The Heartbeat got no response (connection lost, timeout, ...): retry after the
        backoff (:attr:`backoff`, growing with the failures in a row)."""
        self.timer.failed(now_ms)

    def on_heartbeat(self, response: HeartbeatResponse, now_ms: float) -> HeartbeatOutcome:
        """Take a Heartbeat response: REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION flag a rejoin
        (at the next boundary), UNKNOWN_MEMBER_ID also resets the member id, coordinator errors
        ask for a new lookup, anything else is fatal (kept in :attr:`fatal`, not raised here:
        the next boundary raises it)."""
        self.timer.received(now_ms)
        code = response.error_code
        if code == NONE:
            return HeartbeatOutcome()
        if code in COORDINATOR_ERRORS:
            self.timer.failed(now_ms)
            return HeartbeatOutcome(coordinator_lost=error_for(code).name)
        if code == REBALANCE_IN_PROGRESS:
            self.request_rejoin("the coordinator started a rebalance")
        elif code == UNKNOWN_MEMBER_ID:
            self.reset_member(f"Heartbeat: {error_for(code).name}")
        elif code == ILLEGAL_GENERATION:
            self.request_rejoin(f"Heartbeat: {error_for(code).name}")
        else:
            error = self._fatal_error(code, "Heartbeat")
            self.fatal = error
            return HeartbeatOutcome(fatal=error)
        return HeartbeatOutcome()

    # -- leaving --------------------------------------------------------------------------
    def leave(self, reason: str) -> LeaveGroupRequest | None:
        """Leave the generation: the assignment is dropped and the member must join again.

        Returns:
            the LeaveGroup request of a dynamic member (v5: the member and ``reason``), or
            ``None`` (a static member keeps its place, as in Java; or no member id).
        """
        with self.lock:
            member_id = self.member_id
            static = self.config.group_instance_id is not None
            self.generation_id = -1
            self.assignment = ()
            self._rejoin_reason = f"left the group: {reason}"
            if not static:
                self.member_id = ""
        if not member_id or static:
            return None
        return LeaveGroupRequest(
            group_id=self.config.group_id,
            member_id=member_id,
            members=(MemberIdentity(member_id=member_id, reason=reason[:MAX_REASON_LENGTH]),),
        )
