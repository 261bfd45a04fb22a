"""A member of a KIP-848 consumer group, driven by the caller: the I/O around
:class:`~spark_kafka_py.consumer.group.consumer.membership.ConsumerGroupMembership`.

:class:`ConsumerGroupMember` is a :class:`~spark_kafka_py.consumer.group.member.Member`, as the
classic :class:`~spark_kafka_py.consumer.group.classic.member.GroupMember` is, the interface
:class:`spark_kafka_py.spark.group.StreamGroup` uses (``ensure_active``, ``start_heartbeat``,
``generation_id``, ``assignment``, ``commit``, ``fetch_committed``, ``close``), so a streaming
query picks one or the other with ``kafka.group.protocol``. What it does:

* **Heartbeats** (ConsumerGroupHeartbeat, API key 68, v1: Kafka 4.0+) from a daemon thread, at
  the interval the coordinator sends in every response (``group.consumer.heartbeat.interval.ms``,
  default 5 s); the session timeout is the broker's ``group.consumer.session.timeout.ms``
  (45 s). The rebalance timeout sent is ``max.poll.interval.ms``, as Java's consumer does.
* **Joining** (epoch 0) runs in the caller's thread, in :meth:`ConsumerGroupMember.ensure_active`,
  until the coordinator answered (epoch and first assignment).
* **Reconciliation at micro-batch boundaries.** A response that changes the target assignment
  is only noted by the heartbeat thread. At the next :meth:`ensure_active` (which the caller
  makes after committing what it processed, as :class:`StreamGroup` does), revoked partitions
  are released (the commit of their processed offsets came first, so the new owner starts
  there) and the new assignment is acknowledged with a heartbeat sent at once; the coordinator
  gives a partition to its new owner only after that. Newly assigned partitions are readable
  from the boundary on.
* **Offsets**: OffsetCommit v9 and OffsetFetch v9 with the member id and epoch
  (:class:`~.offsets.GroupOffsets`). STALE_MEMBER_EPOCH: a heartbeat refreshes the epoch and the
  request is sent again. FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID (in a heartbeat, a commit or a
  fetch): the member's partitions are lost (not committed: the coordinator would refuse), the
  member rejoins with epoch 0 and starts over from the group's committed offsets, as Java does.
* **Leaving** (:meth:`close`): a heartbeat with epoch -1, or -2 for a static member
  (``group.instance.id``), whose assignment the coordinator then keeps for the session timeout.
* **Old brokers**: before the first heartbeat the coordinator's ApiVersions answer is checked:
  without ConsumerGroupHeartbeat v1 (Kafka 3.x; 3.7-3.9 serve only the early-access v0)
  :class:`~spark_kafka_py.errors.UnsupportedByBrokerError` names the feature, the release it
  needs (4.0) and the broker's release line.

Sources: KIP-848; Kafka's message specs ``ConsumerGroupHeartbeatRequest.json``,
``OffsetCommitRequest.json`` (v9: ``GenerationIdOrMemberEpoch``), ``OffsetFetchRequest.json``
(v9: ``MemberId``, ``MemberEpoch``); Java's ``ConsumerMembershipManager``,
``ConsumerHeartbeatRequestManager`` and ``CommitRequestManager`` (Kafka 4.x) for which error
means what.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.consumer.membership import (
    AssignPartitions,
    ConsumerGroupMembership,
    FindCoordinator,
    MemberEvent,
    MembershipFailed,
    MemberState,
    RevokePartitions,
)
from spark_kafka_py.consumer.group.heartbeat import HeartbeatThread
from spark_kafka_py.consumer.group.offsets import GroupOffsets
from spark_kafka_py.consumer.group.transport import (
    COORDINATOR_ERRORS,
    NETWORK_ERRORS,
    CoordinatorChannel,
    Transport,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import (
    KafkaApiError,
    KafkaError,
    KafkaTimeoutError,
    UnsupportedByBrokerError,
)
from spark_kafka_py.protocol.error_codes import (
    FENCED_MEMBER_EPOCH,
    NONE,
    UNKNOWN_MEMBER_ID,
    error_for,
)
from spark_kafka_py.protocol.features import api_requirement
from spark_kafka_py.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeGroup,
    ConsumerGroupDescribeRequest,
)
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    CONSUMER_GROUP_HEARTBEAT_KEY,
    ConsumerGroupHeartbeatRequest,
)

__all__ = [
    "MIN_HEARTBEAT_VERSION",
    "BrokerInfo",
    "ConsumerGroupMember",
    "ConsumerTransport",
    "describe_consumer_group",
]

log = logging.getLogger(__name__)

#: The first ConsumerGroupHeartbeat version of the generally available protocol (Kafka 4.0,
#: KIP-848; v1 also has the member generate its own id, KIP-1082). Kafka 3.7-3.9 serve v0, the
#: early-access preview, which Java's consumer 4.x does not use either.
MIN_HEARTBEAT_VERSION = 1

#: States in which the member holds an epoch the coordinator accepts (commits carry it).
_MEMBER_STATES = frozenset(
    {
        MemberState.RECONCILING,
        MemberState.ACKNOWLEDGING,
        MemberState.STABLE,
        MemberState.PREPARE_LEAVING,
    }
)


class BrokerInfo(Protocol):
    """What the member reads of the coordinator's connection
    (:class:`~spark_kafka_py.client.connection.BrokerConnection` has it)."""

    @property
    def description(self) -> str: ...

    @property
    def api_versions(self) -> dict[int, tuple[int, int]]: ...

    @property
    def broker_release(self) -> str | None: ...

    def connect(self) -> None: ...

    def pick_version(
        self, request_type: type[ConsumerGroupHeartbeatRequest], max_version: int | None = None
    ) -> int: ...


class ConsumerTransport(Transport, Protocol):
    """A :class:`~.transport.Transport` that also gives a broker's connection (to read its
    ApiVersions answer); :class:`~spark_kafka_py.client.cluster.KafkaClient` is one."""

    def connection(self, node_id: int) -> BrokerInfo: ...


class ConsumerGroupMember:
    """One KIP-848 member of ``config.group_id`` (``config.protocol == "consumer"``).

    Args:
        config: the member's :class:`GroupConfig` (group id, ``group_instance_id``,
            ``remote_assignor``, ``max_poll_interval_ms`` as the rebalance timeout,
            ``client_rack``, ``retry_backoff_ms``, ``default_api_timeout_ms``).
        transport: sends requests to brokers (thread-safe; shared by the heartbeat thread).
        topic_names: ``topics -> {topic id: name}`` from Metadata v10+ (assignments name
            topics by id).
        clock: monotonic seconds (tests pass a fake one).
        sleep: sleeps seconds (tests pass a no-op).
        member_id: the member id (default: a new random one, as Java).

    Attributes:
        machine: the :class:`ConsumerGroupMembership` state machine (guarded by a lock).
        channel: the :class:`~.transport.CoordinatorChannel` to the group's coordinator.
        offsets: the member's :class:`~.offsets.GroupOffsets` (member id and epoch).

    One thread calls :meth:`ensure_active`, :meth:`commit`, :meth:`fetch_committed` and
    :meth:`close`; only the heartbeat thread runs concurrently.
    """

    def __init__(
        self,
        config: GroupConfig,
        transport: ConsumerTransport,
        topic_names: Callable[[Sequence[str]], Mapping[uuid.UUID, str]],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        member_id: str | None = None,
    ) -> None:
        self.config = config
        self._transport = transport
        self._topic_names = topic_names
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.RLock()
        self.channel = CoordinatorChannel(config, transport, clock=clock, sleep=sleep)
        self.offsets = GroupOffsets(self.channel, self, member_fetch=True)
        self.machine = ConsumerGroupMembership(
            config.group_id,
            member_id=member_id,
            instance_id=config.group_instance_id,
            rack_id=config.client_rack,
            server_assignor=config.remote_assignor,
            rebalance_timeout_ms=config.max_poll_interval_ms,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            retry_backoff_ms=max(1, config.retry_backoff_ms),
            retry_backoff_max_ms=max(1, config.retry_backoff_max_ms, config.retry_backoff_ms),
            defer_reconciliation=True,
        )
        self._lost: set[TopicPartition] = set()
        self._fatal: KafkaError | None = None
        self._broker_checked = False
        self._responses = 0  # heartbeat responses taken
        self._heartbeat = HeartbeatThread(
            f"pykafka-consumer-heartbeat-{config.group_id}",
            self.heartbeat_once,
            self._time_to_next_request_ms,
            self._where,
        )

    # -- what StreamGroup reads ----------------------------------------------------------------
    def _now_ms(self) -> float:
        return self._clock() * 1000

    def _where(self) -> str:
        return self.channel.where

    @property
    def member_id(self) -> str:
        """The member id (kept through fencing and rejoining)."""
        return self.machine.member_id

    @property
    def member_epoch(self) -> int:
        """The member epoch of the last heartbeat response (0 while joining)."""
        with self._lock:
            return self.machine.member_epoch

    @property
    def generation_id(self) -> int:
        """The member epoch while the coordinator counts this member in (commits carry it),
        else -1 (the name :class:`StreamGroup` reads of a classic member's generation)."""
        with self._lock:
            if self.machine.state in _MEMBER_STATES and self.machine.member_epoch > 0:
                return self.machine.member_epoch
            return -1

    @property
    def assignment(self) -> tuple[TopicPartition, ...]:
        """The partitions whose processed offsets this member may commit: those it owns,
        including those being revoked (committed before they are released), without those
        lost to fencing."""
        with self._lock:
            return tuple(sorted(self.machine.owned_partitions - self._lost))

    def identity(self) -> tuple[str, int]:
        """``(member id, member epoch)`` for OffsetCommit / OffsetFetch v9+ (``("", -1)``
        while not a member)."""
        epoch = self.generation_id
        return (self.machine.member_id, epoch) if epoch >= 0 else ("", -1)

    def raise_fatal(self) -> None:
        """Raise the error that ended this membership (UNRELEASED_INSTANCE_ID,
        FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
        GROUP_AUTHORIZATION_FAILED, ...), if any."""
        if self._fatal is not None:
            raise self._fatal

    # -- the broker ------------------------------------------------------------------------------
    def check_broker(self) -> None:
        """Check that the coordinator serves ConsumerGroupHeartbeat v1+ (Kafka 4.0+).

        Raises:
            UnsupportedByBrokerError: it does not (Kafka 3.x); the message names the feature
                (``kafka.group.protocol=consumer``, KIP-848), the release needed (4.0), the
                broker and its release line (from its ``metadata.version``).
            KafkaApiError / KafkaTimeoutError: the coordinator lookup failed.
        """
        if self._broker_checked:
            return
        node = self.channel.coordinator()
        conn = self._transport.connection(node)
        try:
            conn.connect()
        except NETWORK_ERRORS as exc:
            self.channel.mark_unknown(str(exc))
            raise
        offered = conn.api_versions.get(CONSUMER_GROUP_HEARTBEAT_KEY)
        if offered is None:
            conn.pick_version(ConsumerGroupHeartbeatRequest)  # raises, naming the release
        elif offered[1] < MIN_HEARTBEAT_VERSION:
            release = conn.broker_release
            who = conn.description + (
                f" (Kafka {release} or later, from its metadata.version)" if release else ""
            )
            raise UnsupportedByBrokerError(
                f"'kafka.group.protocol'='consumer' for {self._where()}: {who} offers "
                f"ConsumerGroupHeartbeat (API key {CONSUMER_GROUP_HEARTBEAT_KEY}) versions "
                f"{offered[0]}-{offered[1]} only, the early-access preview of Kafka 3.7-3.9; "
                f"{api_requirement(CONSUMER_GROUP_HEARTBEAT_KEY)}, serving v"
                f"{MIN_HEARTBEAT_VERSION}. Use 'kafka.group.protocol'='classic' with this broker",
                api_name="ConsumerGroupHeartbeatRequest",
                api_key=CONSUMER_GROUP_HEARTBEAT_KEY,
                broker_versions=offered,
                broker_release=release,
            )
        self._broker_checked = True

    # -- heartbeats ------------------------------------------------------------------------------
    def _handle(self, events: Iterable[MemberEvent]) -> list[RevokePartitions | AssignPartitions]:
        """Act on the machine's events (under the lock); return what the caller must do."""
        todo: list[RevokePartitions | AssignPartitions] = []
        for event in events:
            if isinstance(event, FindCoordinator):
                self.channel.mark_unknown(event.reason)
            elif isinstance(event, MembershipFailed):
                self._fatal = event.error
                log.error("%s", event.error)
            elif isinstance(event, RevokePartitions) and event.lost:
                self._lost |= event.partitions
                log.warning(
                    "%s: member %s lost %s (fenced): their offsets are not committed; the "
                    "member rejoins at the next micro-batch boundary",
                    self._where(),
                    self.machine.member_id,
                    sorted(str(tp) for tp in event.partitions),
                )
            else:
                todo.append(event)
        return todo

    def heartbeat_once(self) -> list[RevokePartitions | AssignPartitions]:
        """Send one ConsumerGroupHeartbeat if one is due (none in flight) and take its answer.

        Returns:
            the machine's events the caller must act on (none from a plain heartbeat while
            reconciliation waits for :meth:`ensure_active`).
        """
        with self._lock:
            request = self.machine.next_request(self._now_ms())
        if request is None:
            return []
        try:
            response = self.channel.send(request)
        except NETWORK_ERRORS as exc:
            with self._lock:
                return self._handle(self.machine.on_request_failed(exc, self._now_ms()))
        except KafkaError as exc:  # the coordinator lookup failed for good
            with self._lock:
                self.machine.on_request_failed(exc, self._now_ms())
                self._fatal = exc
            log.error("%s: ConsumerGroupHeartbeat failed: %s", self._where(), exc)
            return []
        with self._lock:
            self._responses += 1
            return self._handle(self.machine.on_response(response, self._now_ms()))

    def _beat_until(self, done: Callable[[], bool], what: str) -> None:
        """Send heartbeats from the caller's thread until ``done()`` (or a fatal error), within
        ``default.api.timeout.ms``."""
        deadline = self._clock() + self.config.default_api_timeout_ms / 1000
        while True:
            self.raise_fatal()
            with self._lock:
                if done():
                    return
            self.heartbeat_once()
            self.raise_fatal()
            with self._lock:
                if done():
                    return
                wait_ms = self.machine.time_to_next_request_ms(self._now_ms())
            if self._clock() >= deadline:
                raise KafkaTimeoutError(
                    f"{self._where()}: {what} did not complete within "
                    f"{self.config.default_api_timeout_ms} ms (default.api.timeout.ms); member "
                    f"{self.machine.member_id} is {self.machine.state.value}"
                )
            self._sleep(min(max(wait_ms, 10.0), 1_000.0) / 1000)

    def start_heartbeat(self) -> None:
        """Start the daemon thread that sends heartbeats when due (idempotent)."""
        self._heartbeat.start()

    def _time_to_next_request_ms(self) -> float:
        with self._lock:
            return self.machine.time_to_next_request_ms(self._now_ms())

    # -- the micro-batch boundary -------------------------------------------------------------
    def _release_lost(self) -> None:
        with self._lock:
            lost, self._lost = self._lost, set()
            if lost:
                self._handle(self.machine.partitions_released(lost))

    def _resolve_names(self) -> None:
        with self._lock:
            unresolved = self.machine.unresolved_topic_ids
            topics = self.machine.subscription
        if not unresolved:
            return
        names = dict(self._topic_names(topics))
        with self._lock:
            self._handle(self.machine.update_topic_names(names))

    def ensure_active(
        self, topics: Iterable[str], partition_counts: Mapping[str, int] | None = None
    ) -> tuple[TopicPartition, ...]:
        """A micro-batch boundary: join if needed, apply what the coordinator asked for since
        the last boundary, and return the partitions this member may read now.

        The caller has committed the processed offsets of the partitions it owns before this
        call: revoked partitions are released here (and the coordinator may give them to their
        new owner), partitions lost to fencing are dropped and the member rejoins, and the new
        assignment is acknowledged at once.

        Args:
            topics: the subscribed topics.
            partition_counts: unused (the coordinator assigns; kept for the interface).

        Raises:
            UnsupportedByBrokerError: the coordinator is older than Kafka 4.0.
            KafkaApiError: fatal group errors (UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID,
                GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR, GROUP_AUTHORIZATION_FAILED,
                ...) naming the group and member.
            KafkaTimeoutError: not joined within ``default.api.timeout.ms``.
        """
        del partition_counts
        self.raise_fatal()
        self.check_broker()
        with self._lock:
            self.machine.subscribe(topics)
        self._release_lost()
        self._beat_until(lambda: self.machine.state is not MemberState.JOINING, "joining")
        self._resolve_names()
        with self._lock:
            todo = self._handle(self.machine.reconcile())
            revoked: set[TopicPartition] = set()
            for event in todo:
                if isinstance(event, RevokePartitions):
                    revoked |= event.partitions
            if revoked:
                # Their processed offsets were committed before this boundary call.
                todo += self._handle(self.machine.partitions_released(revoked))
            added = {tp for e in todo if isinstance(e, AssignPartitions) for tp in e.partitions}
            acknowledging = self.machine.state is MemberState.ACKNOWLEDGING
        if revoked or added:
            log.info(
                "%s: member %s (epoch %d) released %s, assigned %s",
                self._where(),
                self.machine.member_id,
                self.machine.member_epoch,
                sorted(str(tp) for tp in revoked),
                sorted(str(tp) for tp in added),
            )
        if acknowledging:
            # Acknowledge now: the coordinator hands released partitions on only after it.
            self._beat_until(
                lambda: self.machine.state is not MemberState.ACKNOWLEDGING, "acknowledging"
            )
            self._heartbeat.wake()
        with self._lock:
            return tuple(sorted(self.machine.readable_partitions))

    def rejoin_after(self, error_code: int, api: str) -> tuple[TopicPartition, ...]:
        """``error_code`` answered OffsetCommit / OffsetFetch ``api``: STALE_MEMBER_EPOCH (and
        the classic REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION): a heartbeat refreshes the
        epoch; FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: the partitions are lost and the member
        rejoins with epoch 0 (its new assignment is taken at the next :meth:`ensure_active`).

        Returns:
            the partitions whose offsets the member may commit now.

        Raises:
            as :meth:`ensure_active`.
        """
        reason = f"{api}: {error_for(error_code).name}"
        if error_code in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
            with self._lock:
                self._handle(self.machine.fence(reason))
            self._release_lost()
            self._beat_until(lambda: self.machine.state is not MemberState.JOINING, "rejoining")
        else:
            log.info("%s: %s; refreshing the member epoch", self._where(), reason)
            with self._lock:
                before = self._responses
                self.machine.heartbeat_now()
            self._beat_until(
                lambda: self._responses > before and self.machine.state is not MemberState.JOINING,
                "refreshing the member epoch",
            )
        return self.assignment

    # -- offsets ---------------------------------------------------------------------------------
    def commit(
        self, offsets: Mapping[TopicPartition, int], *, metadata: str = ""
    ) -> dict[TopicPartition, int]:
        """OffsetCommit ``offsets`` (next offset to read, per partition) with this member's id
        and epoch (v9+); see :meth:`GroupOffsets.commit`.

        Returns:
            the offsets that were committed (not those of partitions lost meanwhile).

        Raises:
            KafkaApiError / KafkaTimeoutError: as :meth:`GroupOffsets.commit`.
        """
        return self.offsets.commit(offsets, metadata=metadata)

    def fetch_committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """OffsetFetch with the member id and epoch (v9+): the group's committed offset per
        partition, ``None`` where none.

        Raises:
            KafkaApiError / KafkaTimeoutError: as :meth:`GroupOffsets.fetch_committed`.
        """
        return self.offsets.fetch_committed(partitions)

    # -- leaving ---------------------------------------------------------------------------------
    def leave(self) -> None:
        """Send the leave heartbeat: epoch -1, or -2 for a static member (the coordinator keeps
        its assignment for the session timeout). The caller has committed what it processed.
        Errors are logged, not raised: the session timeout removes the member anyway."""
        with self._lock:
            todo = self._handle(self.machine.leave())
            released = {tp for e in todo if isinstance(e, RevokePartitions) for tp in e.partitions}
            if released:
                self._handle(self.machine.partitions_released(released))
            lost, self._lost = self._lost, set()
            if lost:
                self._handle(self.machine.partitions_released(lost))
            request = self.machine.next_request(self._now_ms())
        if request is None:
            return
        try:
            response = self.channel.send(request)
        except KafkaError as exc:
            log.warning(
                "%s: leave heartbeat of member %s failed: %s",
                self._where(),
                request.member_id,
                exc,
            )
            return
        if response.error_code:
            log.warning(
                "%s: leave heartbeat of member %s (epoch %d): %s",
                self._where(),
                request.member_id,
                request.member_epoch,
                error_for(response.error_code).name,
            )
        else:
            log.info(
                "%s: member %s left the group (epoch %d)",
                self._where(),
                request.member_id,
                request.member_epoch,
            )

    def close(self, *, leave: bool = True) -> None:
        """Stop the heartbeat thread and (by default) leave the group."""
        self._heartbeat.stop(self.config.request_timeout_ms / 1000 + 1)
        if leave and self._fatal is None:
            self.leave()


def describe_consumer_group(channel: CoordinatorChannel) -> ConsumerGroupDescribeGroup:
    """ConsumerGroupDescribe (API key 69, KIP-848) of ``channel``'s group, from its coordinator:
    state, group and assignment epochs, assignor, and per member its id, epoch, instance id,
    subscription, current and target assignment (for diagnostics and tests).

    Raises:
        KafkaApiError: a non-retriable error of the group (GROUP_ID_NOT_FOUND: no such group,
            or a classic group; GROUP_AUTHORIZATION_FAILED, ...) naming it.
        KafkaTimeoutError: retriable errors beyond ``default.api.timeout.ms``.
        KafkaConnectionError / KafkaProtocolError: a failed request that is not retriable
            (:func:`spark_kafka_py.client.retry.retriable`), raised at once.
        UnsupportedByBrokerError: a broker older than Kafka 4.0.
    """
    retries = channel.retries("ConsumerGroupDescribe")
    while True:
        try:
            response = channel.send(
                ConsumerGroupDescribeRequest(group_ids=(channel.config.group_id,))
            )
        except NETWORK_ERRORS as exc:
            retries.after(exc)
            continue
        (group,) = response.groups
        if group.error_code == NONE:
            return group
        error = KafkaApiError(
            error_for(group.error_code),
            f"in ConsumerGroupDescribe of {channel.where}",
            group.error_message or None,
        )
        if group.error_code not in COORDINATOR_ERRORS and not error.retriable:
            raise error
        if group.error_code in COORDINATOR_ERRORS:
            channel.mark_unknown(error_for(group.error_code).name)
        retries.after(error)
