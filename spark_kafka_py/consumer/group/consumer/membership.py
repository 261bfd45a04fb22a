"""A member of a consumer group speaking the KIP-848 consumer group protocol, sans-I/O.

Kafka 4.0 made the consumer group protocol (KIP-848) generally available: the group
coordinator computes the assignment itself (server-side assignors ``uniform`` and ``range``),
each member sends ConsumerGroupHeartbeat (API key 68) every ``heartbeat_interval_ms`` (the
coordinator's ``group.consumer.heartbeat.interval.ms``, sent in every response), and
reconciles its assignment incrementally: it first stops using and releases the partitions the
coordinator takes away, then acknowledges its new assignment in the next heartbeat; the
coordinator hands a partition to its new owner only once the previous owner acknowledged
releasing it. There is no group-wide JoinGroup/SyncGroup barrier.

:class:`ConsumerGroupMembership` is that member's state machine, modelled on the states and
transitions of Kafka's Java consumer (``AbstractMembershipManager``,
``ConsumerMembershipManager``, ``ConsumerHeartbeatRequestManager`` and its ``HeartbeatState``
in ``org.apache.kafka.clients.consumer.internals``, Kafka 4.x). It never touches a socket and
never reads a clock: the caller passes ``now_ms`` (a monotonic clock, in ms) and does the I/O:

* :meth:`~ConsumerGroupMembership.next_request` gives the next
  :class:`~spark_kafka_py.protocol.messages.consumer_group_heartbeat.ConsumerGroupHeartbeatRequest`
  when one is due (one in flight at a time), with KIP-848's delta fields: subscribed topic
  names, rebalance timeout, server assignor and owned partitions are sent when joining, after
  any error, or when they changed, and are null otherwise;
* :meth:`~ConsumerGroupMembership.on_response` / :meth:`~ConsumerGroupMembership.on_request_failed`
  take its outcome;
* :meth:`~ConsumerGroupMembership.partitions_released` is the application's event "I stopped
  reading these partitions (and committed what I processed)";
* :meth:`~ConsumerGroupMembership.update_topic_names` feeds topic id -> name mappings (from
  Metadata v10+): assignments name topics by id, and a partition whose topic id is not known yet
  waits (the known part of the assignment is reconciled, as Java does);
* every input returns the events the caller must act on: :class:`RevokePartitions` (stop
  reading; commit first unless ``lost``; then call ``partitions_released``),
  :class:`AssignPartitions` (may read now), :class:`FindCoordinator` (look the coordinator up
  again), :class:`MembershipFailed` (fatal).

Member epochs (KIP-848): :data:`JOIN_GROUP_MEMBER_EPOCH` (0) to join, the epoch of the last
response while a member, :data:`LEAVE_GROUP_MEMBER_EPOCH` (-1) to leave, and
:data:`LEAVE_GROUP_STATIC_MEMBER_EPOCH` (-2) when a static member (``group.instance.id``)
leaves: the coordinator then keeps its assignment for the session timeout, for the same
instance id to take back. The member id is generated here, once per membership object, as
version 1 of the API requires (KIP-1082) and as Java does (``Uuid.randomUuid()``).

Errors, as Java's ``AbstractHeartbeatRequestManager`` handles them: NOT_COORDINATOR and
COORDINATOR_NOT_AVAILABLE (and a failed request) -> find the coordinator and retry, after the
backoff below (where Java pauses its FindCoordinator retries instead);
COORDINATOR_LOAD_IN_PROGRESS -> retry after an exponential backoff (``retry.backoff.ms`` doubling
up to ``retry.backoff.max.ms``, with 20% jitter: KIP-580's ``ExponentialBackoff``, as Java, the
project's :class:`~spark_kafka_py.client.retry.Backoff`); FENCED_MEMBER_EPOCH and
UNKNOWN_MEMBER_ID -> the member is fenced: it loses all its partitions (no commit is possible
any more) and, once the application released them, rejoins with epoch 0; every other error
(UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, INVALID_REQUEST, ...) is fatal. After any
error the next heartbeat carries every field again.

The I/O around it (heartbeat thread, coordinator connection, OffsetCommit / OffsetFetch with
the member id and epoch, reconciliation at micro-batch boundaries) is
:class:`~spark_kafka_py.consumer.group.consumer.member.ConsumerGroupMember`.
"""

from __future__ import annotations

import base64
import enum
import logging
import math
import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from spark_kafka_py.client.retry import Backoff
from spark_kafka_py.consumer.group.config import SERVER_ASSIGNORS
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError, KafkaApiError, KafkaError
from spark_kafka_py.protocol.error_codes import (
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    GROUP_MAX_SIZE_REACHED,
    NONE,
    NOT_COORDINATOR,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    error_for,
)
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
)

__all__ = [
    "JOIN_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "AssignPartitions",
    "ConsumerGroupMembership",
    "FindCoordinator",
    "MemberEvent",
    "MemberState",
    "MembershipFailed",
    "RevokePartitions",
    "new_member_id",
]

log = logging.getLogger(__name__)


class MemberState(enum.Enum):
    """States of a KIP-848 member (Java's ``MemberState``, without STALE: Spark has no poll
    timer that could expire while the member keeps its partitions)."""

    #: Not in the group and not trying to be (before :meth:`~ConsumerGroupMembership.subscribe`,
    #: after leaving).
    UNSUBSCRIBED = "UNSUBSCRIBED"
    #: Sending the joining heartbeat (epoch 0, every field).
    JOINING = "JOINING"
    #: The target assignment differs from what the member owns: revoking, then assigning.
    RECONCILING = "RECONCILING"
    #: Reconciled; the next heartbeat (sent at once) acknowledges the new assignment.
    ACKNOWLEDGING = "ACKNOWLEDGING"
    #: Owns its target assignment; heartbeats every interval.
    STABLE = "STABLE"
    #: Fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): releasing every partition as lost,
    #: then rejoining with epoch 0.
    FENCED = "FENCED"
    #: Leaving: waiting for the application to release its partitions.
    PREPARE_LEAVING = "PREPARE_LEAVING"
    #: Leaving: the leave heartbeat (epoch -1, or -2 for a static member) is due.
    LEAVING = "LEAVING"
    #: A non-retriable error ended the membership (:attr:`ConsumerGroupMembership.fatal_error`).
    FATAL = "FATAL"


@dataclass(frozen=True, slots=True)
class RevokePartitions:
    """Stop reading ``partitions``, then call
    :meth:`ConsumerGroupMembership.partitions_released`.

    ``lost=False`` (reconciliation, leaving): commit the processed offsets first; the new owner
    starts from them. ``lost=True`` (fenced, fatal): the member no longer owns them and must not
    commit (the coordinator would refuse the epoch); drop in-flight work.
    """

    partitions: frozenset[TopicPartition]
    lost: bool


@dataclass(frozen=True, slots=True)
class AssignPartitions:
    """``partitions`` are newly owned: the application may read them from now on (from the
    group's committed offsets, or its own checkpoint)."""

    partitions: frozenset[TopicPartition]


@dataclass(frozen=True, slots=True)
class FindCoordinator:
    """The coordinator moved or is unreachable: look it up again (FindCoordinator, key type
    GROUP) before the next heartbeat."""

    reason: str


@dataclass(frozen=True, slots=True)
class MembershipFailed:
    """A fatal error ended the membership; ``error`` names the group, the member and Kafka's
    error (and the broker's message)."""

    error: KafkaApiError


#: What an input of :class:`ConsumerGroupMembership` asks the caller to do, in order.
MemberEvent = RevokePartitions | AssignPartitions | FindCoordinator | MembershipFailed

_IN_GROUP = frozenset(
    {MemberState.JOINING, MemberState.RECONCILING, MemberState.ACKNOWLEDGING, MemberState.STABLE}
)
_NOT_IN_GROUP = frozenset({MemberState.UNSUBSCRIBED, MemberState.FENCED, MemberState.FATAL})
#: States whose heartbeat goes out without waiting for the interval (Java
#: ``shouldHeartbeatNow``).
_SEND_NOW = frozenset({MemberState.JOINING, MemberState.ACKNOWLEDGING, MemberState.LEAVING})
_FIND_COORDINATOR = frozenset({NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE})
_FENCED = frozenset({FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID})

# What to do once the application released the partitions it was asked to release.
_THEN_RECONCILE = "reconcile"
_THEN_REJOIN = "rejoin"
_THEN_LEAVE = "leave"
_THEN_NOTHING = "nothing"

Assignment = dict[uuid.UUID, frozenset[int]]


def new_member_id() -> str:
    """A fresh member id: 16 random bytes in URL-safe base64 without padding (22 characters),
    the text form of Kafka's ``Uuid.randomUuid()``; like Kafka, never starting with ``-``."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


def _assignment_of(
    topics: Iterable[ConsumerGroupHeartbeatTopicPartitions],
) -> Assignment:
    out: Assignment = {}
    for topic in topics:
        partitions = frozenset(topic.partitions)
        if partitions:
            out[topic.topic_id] = out.get(topic.topic_id, frozenset()) | partitions
    return out


class ConsumerGroupMembership:
    """One KIP-848 member of ``group_id`` (see the module docstring for the protocol).

    Args:
        group_id: the group (``kafka.group.id``).
        member_id: the member id; default a new one (:func:`new_member_id`). Kept for the
            object's lifetime, through fencing and rejoining, as Java does.
        instance_id: ``group.instance.id`` for static membership, or ``None``.
        rack_id: ``client.rack``, or ``None``.
        server_assignor: ``group.remote.assignor`` (``"uniform"`` or ``"range"``), or ``None``
            to let the coordinator choose (its first ``group.consumer.assignors``).
        rebalance_timeout_ms: ms the coordinator waits for this member to release revoked
            partitions before fencing it (Java sends ``max.poll.interval.ms``, default 300,000).
        heartbeat_interval_ms: interval until the first response says otherwise (Java's
            ``heartbeat.interval.ms``, default 3,000).
        retry_backoff_ms: first pause after a retriable error (``retry.backoff.ms``, 100).
        retry_backoff_max_ms: cap of the doubling pause (``retry.backoff.max.ms``, 1,000).
        rng: the backoff's jitter source, a float in ``[0, 1)`` (``random.random``; tests pass
            a constant: ``0.5`` means no jitter).
        defer_reconciliation: ``False`` (default): a new target assignment is reconciled as soon
            as a response brings it. ``True``: only when the application calls
            :meth:`~ConsumerGroupMembership.reconcile` (Java reconciles in ``poll``; a Spark
            query at its micro-batch boundaries, after committing what it processed).

    Raises:
        ConfigError: an unknown server assignor, a non-positive timeout or interval, or an
            empty group id.

    Not thread-safe: the caller serialises inputs (e.g. under one lock shared by the
    heartbeat thread and the micro-batch thread).
    """

    def __init__(
        self,
        group_id: str,
        *,
        member_id: str | None = None,
        instance_id: str | None = None,
        rack_id: str | None = None,
        server_assignor: str | None = None,
        rebalance_timeout_ms: int = 300_000,
        heartbeat_interval_ms: int = 3_000,
        retry_backoff_ms: int = 100,
        retry_backoff_max_ms: int = 1_000,
        defer_reconciliation: bool = False,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if not group_id:
            raise ConfigError("The consumer group protocol needs a group id ('kafka.group.id')")
        if server_assignor is not None and server_assignor not in SERVER_ASSIGNORS:
            raise ConfigError(
                f"Option 'kafka.group.remote.assignor' must be one of {sorted(SERVER_ASSIGNORS)}, "
                f"got {server_assignor!r}"
            )
        for name, value in (
            ("rebalance_timeout_ms", rebalance_timeout_ms),
            ("heartbeat_interval_ms", heartbeat_interval_ms),
            ("retry_backoff_ms", retry_backoff_ms),
            ("retry_backoff_max_ms", retry_backoff_max_ms),
        ):
            if value <= 0:
                raise ConfigError(f"{name} must be positive, got {value}")
        self.group_id = group_id
        self.member_id = member_id or new_member_id()
        self.instance_id = instance_id
        self.rack_id = rack_id
        self.server_assignor = server_assignor
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_backoff_max_ms = retry_backoff_max_ms
        self._backoff = Backoff(retry_backoff_ms, retry_backoff_max_ms, rng=rng)
        self.defer_reconciliation = defer_reconciliation
        self._reconcile_now = False
        #: The interval the coordinator asked for (ms).
        self.heartbeat_interval_ms = heartbeat_interval_ms
        #: The member epoch sent in the next heartbeat.
        self.member_epoch = JOIN_GROUP_MEMBER_EPOCH
        self.state = MemberState.UNSUBSCRIBED
        #: The error that moved the member to FATAL.
        self.fatal_error: KafkaApiError | None = None
        self._topics: tuple[str, ...] = ()
        self._names: dict[uuid.UUID, str] = {}
        # What the member owns (by topic id) and the last target from the coordinator.
        self._current: Assignment = {}
        self._current_version = 0  # bumped at each reconciliation (Java's local epoch)
        self._target: Assignment | None = None
        # Partitions the application still has to release, and what happens then.
        self._awaiting: set[TopicPartition] = set()
        self._then = _THEN_NOTHING
        self._pending: Assignment = {}
        self._pending_added: frozenset[TopicPartition] = frozenset()
        # Heartbeat timing.
        self._in_flight = False
        self._next_due_ms = -math.inf
        self._backoff_until_ms = -math.inf
        self._failures = 0
        # Fields sent in the last heartbeat (Java's ``SentFields``); None: send again.
        self._sent_rebalance_timeout: int | None = None
        self._sent_topics: tuple[str, ...] | None = None
        self._sent_assignor: str | None = None
        self._sent_rack: str | None = None
        self._sent_version: int | None = None

    # -- what the application reads -----------------------------------------------------------
    @property
    def subscription(self) -> tuple[str, ...]:
        """Subscribed topic names, sorted."""
        return self._topics

    @property
    def owned_partitions(self) -> frozenset[TopicPartition]:
        """Partitions the member owns, including those it was asked to release and has not
        released yet."""
        return frozenset(self._partitions_of(self._current)) | frozenset(self._awaiting)

    @property
    def readable_partitions(self) -> frozenset[TopicPartition]:
        """Partitions the application may read now: owned and not being revoked."""
        return frozenset(self._partitions_of(self._current)) - frozenset(self._awaiting)

    @property
    def pending_revocation(self) -> frozenset[TopicPartition]:
        """Partitions the application was asked to release and has not released yet."""
        return frozenset(self._awaiting)

    @property
    def unresolved_topic_ids(self) -> frozenset[uuid.UUID]:
        """Topic ids of the target assignment with no known name: refresh Metadata (v10+) and
        pass the names to :meth:`update_topic_names`."""
        if self._target is None:
            return frozenset()
        return frozenset(tid for tid in self._target if tid not in self._names)

    @property
    def leave_epoch(self) -> int:
        """The epoch of this member's leave heartbeat: -2 for a static member, else -1."""
        if self.instance_id is not None:
            return LEAVE_GROUP_STATIC_MEMBER_EPOCH
        return LEAVE_GROUP_MEMBER_EPOCH

    def raise_fatal(self) -> None:
        """Raise the error that ended this membership, if any.

        Raises:
            KafkaApiError: the fatal error (UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, ...).
        """
        if self.fatal_error is not None:
            raise self.fatal_error

    # -- inputs from the application ------------------------------------------------------------
    def subscribe(self, topics: Iterable[str]) -> list[MemberEvent]:
        """Subscribe to ``topics``: an unsubscribed member starts joining (epoch 0); a member
        sends the new names in its next heartbeat.

        Raises:
            KafkaApiError: the membership already failed (FATAL).
        """
        self.raise_fatal()
        wanted = tuple(sorted(set(topics)))
        self._topics = wanted
        if self.state is MemberState.UNSUBSCRIBED:
            self._transition_to_joining()
        return []

    def update_topic_names(self, names: Mapping[uuid.UUID, str]) -> list[MemberEvent]:
        """Learn topic id -> name mappings (Metadata v10+ ``topic_id``); reconciles partitions
        of topics that were waiting for their names."""
        self._names.update(names)
        return self._maybe_reconcile()

    def reconcile(self) -> list[MemberEvent]:
        """Reconcile the target assignment now (what a response set aside with
        ``defer_reconciliation``; a no-op otherwise when nothing is pending): returns
        :class:`RevokePartitions` (release them, committing first, then call
        :meth:`partitions_released`) or :class:`AssignPartitions` (the member then acknowledges
        in its next heartbeat, due at once)."""
        self._reconcile_now = True
        try:
            return self._maybe_reconcile()
        finally:
            self._reconcile_now = False

    def fence(self, reason: str) -> list[MemberEvent]:
        """The member learnt it is fenced from another answer than a heartbeat's (OffsetCommit
        or OffsetFetch with FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID, ``reason``): as a fenced
        heartbeat, its partitions are lost (:class:`RevokePartitions` with ``lost=True``) and,
        once released, it rejoins with epoch 0. A member not in the group ignores it."""
        if self.state not in _IN_GROUP:
            return []
        log.info("%s %s: rejoining", reason, self._where())
        self._reset_sent_fields()
        return self._transition_to_fenced()

    def partitions_released(self, partitions: Iterable[TopicPartition]) -> list[MemberEvent]:
        """The application stopped reading ``partitions`` (and, unless they were lost,
        committed what it processed). Once every partition asked for is released the member
        goes on: acknowledges the reconciled assignment, rejoins after fencing, or leaves."""
        released = set(partitions)
        self._awaiting -= released
        if self._awaiting:
            return []
        then, self._then = self._then, _THEN_NOTHING
        if then == _THEN_RECONCILE:
            return self._complete_reconciliation()
        if then == _THEN_REJOIN:
            self._current = {}
            if self.state is MemberState.FENCED:
                self._transition_to_joining()
            return []
        if then == _THEN_LEAVE:
            self._transition_to_leaving()
        return []

    def leave(self) -> list[MemberEvent]:
        """Leave the group (the query stops): release every owned partition (committing
        first), then send the leave heartbeat (epoch -1, or -2 for a static member, which keeps
        its assignment on the coordinator for the session timeout). A member not in the group
        becomes UNSUBSCRIBED at once."""
        if self.state in _NOT_IN_GROUP:
            if self.state is MemberState.FENCED:
                self._awaiting.clear()
                self._then = _THEN_NOTHING
                self._current = {}
                self.state = MemberState.UNSUBSCRIBED
            return []
        if self.state in (MemberState.PREPARE_LEAVING, MemberState.LEAVING):
            return []
        self.state = MemberState.PREPARE_LEAVING
        owned = self.owned_partitions
        self._target = None
        if not owned:
            self._transition_to_leaving()
            return []
        self._awaiting = set(owned)
        self._then = _THEN_LEAVE
        return [RevokePartitions(owned, lost=False)]

    # -- heartbeats ------------------------------------------------------------------------------
    def heartbeat_now(self) -> None:
        """Make the next heartbeat due at once (after any retry backoff), e.g. to learn the
        current member epoch after an OffsetCommit answered STALE_MEMBER_EPOCH."""
        self._next_due_ms = -math.inf

    def time_to_next_request_ms(self, now_ms: float) -> float:
        """ms until :meth:`next_request` would give a request (0: now; ``inf``: none is
        expected until another input)."""
        if self._in_flight or self.state in _NOT_IN_GROUP:
            return math.inf
        due = self._backoff_until_ms
        if self.state not in _SEND_NOW:
            due = max(due, self._next_due_ms)
        return max(0.0, due - now_ms)

    def next_request(self, now_ms: float) -> ConsumerGroupHeartbeatRequest | None:
        """The heartbeat to send now, or ``None`` (none due, one in flight, or not a member).

        A member that is joining, acknowledging or leaving sends at once (after any retry
        backoff); otherwise one interval after the last heartbeat was sent. Sending the
        acknowledging heartbeat moves the member to STABLE (or back to RECONCILING when the
        target changed meanwhile); sending the leave heartbeat makes it UNSUBSCRIBED (its
        response is not waited for, as in Java).
        """
        if self.time_to_next_request_ms(now_ms) > 0:
            return None
        if self.state is MemberState.LEAVING:
            request = ConsumerGroupHeartbeatRequest(
                group_id=self.group_id,
                member_id=self.member_id,
                member_epoch=self.member_epoch,
                instance_id=self.instance_id,
            )
            self.state = MemberState.UNSUBSCRIBED
            self.member_epoch = JOIN_GROUP_MEMBER_EPOCH
            self._reset_sent_fields()
            return request
        request = self._build_request()
        self._in_flight = True
        self._next_due_ms = now_ms + self.heartbeat_interval_ms
        if self.state is MemberState.ACKNOWLEDGING:
            self.state = (
                MemberState.STABLE if self._target_reconciled() else MemberState.RECONCILING
            )
        return request

    def _build_request(self) -> ConsumerGroupHeartbeatRequest:
        send_all = self.state is MemberState.JOINING
        rebalance_timeout = -1
        if send_all or self._sent_rebalance_timeout != self.rebalance_timeout_ms:
            rebalance_timeout = self.rebalance_timeout_ms
            self._sent_rebalance_timeout = rebalance_timeout
        topics: tuple[str, ...] | None = None
        if send_all or self._sent_topics != self._topics:
            topics = self._topics
            self._sent_topics = topics
        assignor = None
        if self.server_assignor is not None and (
            send_all or self._sent_assignor != self.server_assignor
        ):
            assignor = self.server_assignor
            self._sent_assignor = assignor
        rack = None
        if self.rack_id is not None and (send_all or self._sent_rack != self.rack_id):
            rack = self.rack_id
            self._sent_rack = rack
        owned: tuple[ConsumerGroupHeartbeatTopicPartitions, ...] | None = None
        if send_all or self._sent_version != self._current_version:
            owned = tuple(
                ConsumerGroupHeartbeatTopicPartitions(
                    topic_id=topic_id, partitions=tuple(sorted(partitions))
                )
                for topic_id, partitions in sorted(self._current.items())
            )
            self._sent_version = self._current_version
        return ConsumerGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            instance_id=self.instance_id,
            rack_id=rack,
            rebalance_timeout_ms=rebalance_timeout,
            subscribed_topic_names=topics,
            server_assignor=assignor,
            topic_partitions=owned,
        )

    def on_response(
        self, response: ConsumerGroupHeartbeatResponse, now_ms: float
    ) -> list[MemberEvent]:
        """Take the response to the heartbeat in flight.

        Raises nothing: a fatal error moves the member to FATAL and is returned as a
        :class:`MembershipFailed` event (and kept in :attr:`fatal_error`).
        """
        self._in_flight = False
        if response.error_code != NONE:
            return self._on_error(response.error_code, response.error_message, now_ms)
        self._failures = 0
        self._backoff_until_ms = -math.inf
        if response.heartbeat_interval_ms > 0 and (
            response.heartbeat_interval_ms != self.heartbeat_interval_ms
        ):
            self.heartbeat_interval_ms = response.heartbeat_interval_ms
            self._next_due_ms = now_ms + response.heartbeat_interval_ms
        if self.state is MemberState.PREPARE_LEAVING:
            # Still a member while the application releases its partitions: keep the epoch
            # current, but take no new assignment (Java's ``canHandleNewAssignment``).
            self.member_epoch = response.member_epoch
            return []
        if self.state not in _IN_GROUP:
            # Leaving, left, fenced or failed: the answer to an earlier heartbeat (Java ignores
            # it too).
            return []
        if response.member_id and response.member_id != self.member_id:
            self.member_id = response.member_id  # v0: the coordinator may choose the id
        self.member_epoch = response.member_epoch
        if response.assignment is not None:
            return self._on_assignment(response.assignment)
        # A target that changed while the previous reconciliation ran is reconciled once that
        # one was acknowledged (Java reconciles at every poll; we at every response).
        return self._maybe_reconcile()

    def on_request_failed(self, error: KafkaError, now_ms: float) -> list[MemberEvent]:
        """The heartbeat in flight got no response (connection lost, timeout): find the
        coordinator again and retry after the backoff, sending every field again."""
        self._in_flight = False
        self._reset_sent_fields()
        self._next_due_ms = now_ms
        self._back_off(now_ms)
        log.info(
            "ConsumerGroupHeartbeat of group '%s' (member %s) failed: %s; retrying",
            self.group_id,
            self.member_id,
            error,
        )
        return [FindCoordinator(f"ConsumerGroupHeartbeat failed: {error}")]

    # -- errors ------------------------------------------------------------------------------------
    def _where(self) -> str:
        return (
            f"in ConsumerGroupHeartbeat of group '{self.group_id}' "
            f"(member {self.member_id}, epoch {self.member_epoch})"
        )

    def _back_off(self, now_ms: float) -> None:
        pause = self._backoff.pause_ms(self._failures)
        self._failures += 1
        self._backoff_until_ms = now_ms + pause

    def _on_error(self, code: int, message: str | None, now_ms: float) -> list[MemberEvent]:
        error = error_for(code)
        self._reset_sent_fields()
        # After a failure the next heartbeat waits for the backoff only, not for an interval
        # (Java's ``HeartbeatRequestState.onFailedAttempt``).
        self._next_due_ms = now_ms
        if code in _FIND_COORDINATOR:
            # Find the coordinator again, then retry after the backoff: a freshly started
            # broker names itself coordinator before it has loaded the group, and without a
            # pause the member asked every few ms until it had (Java pauses its
            # FindCoordinator retries with the same backoff).
            self._back_off(now_ms)
            return [FindCoordinator(f"{error.name} {self._where()}")]
        if code == COORDINATOR_LOAD_IN_PROGRESS:
            self._back_off(now_ms)
            return []
        if code in _FENCED:
            log.info("%s %s: rejoining", error.name, self._where())
            return self._transition_to_fenced()
        extra = ""
        if code == UNRELEASED_INSTANCE_ID:
            extra = (
                f" (group.instance.id '{self.instance_id}' is still held by a member that has not"
                " left; it is released when that member leaves or its session times out)"
            )
        elif code == FENCED_INSTANCE_ID:
            extra = f" (another member uses group.instance.id '{self.instance_id}')"
        elif code == GROUP_MAX_SIZE_REACHED:
            extra = " (the broker's group.consumer.max.size)"
        description = message if message else None
        failure = KafkaApiError(error, self._where() + extra, description)
        return self._transition_to_fatal(failure)

    # -- transitions -------------------------------------------------------------------------------
    def _reset_sent_fields(self) -> None:
        self._sent_rebalance_timeout = None
        self._sent_topics = None
        self._sent_assignor = None
        self._sent_rack = None
        self._sent_version = None

    def _transition_to_joining(self) -> None:
        self.member_epoch = JOIN_GROUP_MEMBER_EPOCH
        self.state = MemberState.JOINING
        self._target = None
        self._reset_sent_fields()

    def _transition_to_leaving(self) -> None:
        self._current = {}
        self._current_version += 1
        self.member_epoch = self.leave_epoch
        self.state = MemberState.LEAVING

    def _transition_to_fenced(self) -> list[MemberEvent]:
        if self.state is MemberState.PREPARE_LEAVING or self.state is MemberState.LEAVING:
            # Already out of the group for the coordinator: no leave heartbeat, no rejoin.
            self._awaiting.clear()
            self._then = _THEN_NOTHING
            self._current = {}
            self.member_epoch = JOIN_GROUP_MEMBER_EPOCH
            self.state = MemberState.UNSUBSCRIBED
            return []
        if self.state in _NOT_IN_GROUP:
            return []
        self.state = MemberState.FENCED
        self.member_epoch = JOIN_GROUP_MEMBER_EPOCH
        self._target = None
        lost = self.owned_partitions
        if not lost:
            self._current = {}
            self._transition_to_joining()
            return []
        self._awaiting = set(lost)
        self._then = _THEN_REJOIN
        return [RevokePartitions(lost, lost=True)]

    def _transition_to_fatal(self, failure: KafkaApiError) -> list[MemberEvent]:
        previous = self.state
        self.state = MemberState.FATAL
        self.fatal_error = failure
        self._target = None
        events: list[MemberEvent] = []
        lost = self.owned_partitions
        if lost and previous not in (MemberState.LEAVING, MemberState.UNSUBSCRIBED):
            self._awaiting = set(lost)
            self._then = _THEN_NOTHING
            events.append(RevokePartitions(lost, lost=True))
        self._current = {}
        events.append(MembershipFailed(failure))
        return events

    # -- reconciliation --------------------------------------------------------------------------
    def _partitions_of(self, assignment: Assignment) -> set[TopicPartition]:
        return {
            TopicPartition(self._names[topic_id], p)
            for topic_id, partitions in assignment.items()
            for p in partitions
        }

    def _target_reconciled(self) -> bool:
        return self._target is None or self._target == self._current

    def _on_assignment(self, assignment: ConsumerGroupHeartbeatAssignment) -> list[MemberEvent]:
        self._target = _assignment_of(assignment.topic_partitions)
        if not self._target_reconciled():
            self.state = MemberState.RECONCILING
            return self._maybe_reconcile()
        if self.state in (MemberState.RECONCILING, MemberState.JOINING):
            self.state = MemberState.STABLE
        return []

    def _maybe_reconcile(self) -> list[MemberEvent]:
        if self.state is not MemberState.RECONCILING or self._target_reconciled():
            return []
        if self.defer_reconciliation and not self._reconcile_now:
            return []
        if self._awaiting:  # a reconciliation is in progress; the next one follows its ack
            return []
        if self._target is None:
            return []
        resolved = {tid: ps for tid, ps in self._target.items() if tid in self._names}
        if resolved == self._current:
            # Only topics whose names are unknown differ: wait for update_topic_names (the
            # owned partitions were acknowledged when they were reconciled).
            return []
        owned = self._partitions_of(self._current)
        assigned = self._partitions_of(resolved)
        revoked = frozenset(owned - assigned)
        self._pending = resolved
        self._pending_added = frozenset(assigned - owned)
        if not revoked:
            return self._complete_reconciliation()
        self._awaiting = set(revoked)
        self._then = _THEN_RECONCILE
        return [RevokePartitions(revoked, lost=False)]

    def _complete_reconciliation(self) -> list[MemberEvent]:
        if self.state is not MemberState.RECONCILING:
            return []  # fenced, failing or leaving meanwhile: nothing to apply
        added = self._pending_added
        self._current = self._pending
        self._current_version += 1
        self._pending = {}
        self._pending_added = frozenset()
        self.state = MemberState.ACKNOWLEDGING
        return [AssignPartitions(added)] if added else []
