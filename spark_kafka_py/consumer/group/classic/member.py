"""A member of a classic consumer group (protocol type ``consumer``), driven by the caller:
the I/O around :class:`~spark_kafka_py.consumer.group.classic.membership.ClassicMembership`.

:class:`GroupMember` is a :class:`~spark_kafka_py.consumer.group.member.Member`. It runs the
sans-I/O state machine of the classic group protocol (JoinGroup v9, SyncGroup v5, Heartbeat v4,
LeaveGroup v5; Java's ``AbstractCoordinator``) through a
:class:`~spark_kafka_py.consumer.group.transport.CoordinatorChannel` over a
:class:`~spark_kafka_py.consumer.group.transport.Transport`:

* FindCoordinator (in :mod:`~spark_kafka_py.consumer.group.transport`), re-discovered on
  NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS and connection
  errors;
* the join loop (:meth:`GroupMember.ensure_active`): JoinGroup, the leader's partition counts
  and assignor run, SyncGroup, as the machine asks; the pauses between failed rounds are the
  machine's (:class:`~spark_kafka_py.client.retry.Backoff`, KIP-580), failed requests are
  retried under :class:`~spark_kafka_py.client.retry.Retries`, all within
  ``max.poll.interval.ms`` + ``default.api.timeout.ms``; a cooperative rebalance's second
  round (KIP-429) runs in the same call;
* Heartbeat from a background thread (:meth:`GroupMember.start_heartbeat`), which only *flags*
  a needed rejoin: the caller rejoins at its next :meth:`GroupMember.ensure_active` (for Spark:
  a micro-batch boundary), as Java's consumer does in ``poll``;
* LeaveGroup (dynamic members only, as Java's consumer: a static member keeps its place until
  ``session.timeout.ms``).

The member's group offsets (OffsetCommit with its generation, OffsetFetch) are a
:class:`~spark_kafka_py.consumer.group.offsets.GroupOffsets` it holds
(:attr:`GroupMember.offsets`); :meth:`GroupMember.commit` and
:meth:`GroupMember.fetch_committed` use it.

Sources: Kafka message specs of the APIs above (see :mod:`spark_kafka_py.protocol.messages`),
Java's ``AbstractCoordinator`` / ``ConsumerCoordinator`` for which error means what,
KIP-62 (background heartbeats, ``max.poll.interval.ms``), KIP-345, KIP-394, KIP-429.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from spark_kafka_py.client.retry import Backoff
from spark_kafka_py.consumer.group.classic.membership import (
    ClassicMembership,
    JoinAgain,
    Joined,
    PollExpired,
    RunAssignor,
)
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.heartbeat import HeartbeatThread, HeartbeatTimer
from spark_kafka_py.consumer.group.offsets import GroupOffsets
from spark_kafka_py.consumer.group.transport import (
    NETWORK_ERRORS,
    CoordinatorChannel,
    Transport,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaError, KafkaTimeoutError
from spark_kafka_py.protocol.error_codes import error_for
from spark_kafka_py.protocol.messages.join_group import JoinGroupResponse
from spark_kafka_py.protocol.messages.sync_group import SyncGroupResponse

__all__ = ["GroupMember"]

log = logging.getLogger(__name__)


class GroupMember:
    """One classic member of ``config.group_id``: the I/O of a :class:`ClassicMembership`.

    Args:
        config: the member's :class:`GroupConfig`.
        transport: sends requests to brokers (thread-safe; shared by the heartbeat thread).
        partition_counts: ``topics -> {topic: partition count}`` for the topics that exist
            (used when this member leads the group and runs the assignor).
        clock: monotonic seconds (tests pass a fake one).
        sleep: sleeps seconds (tests pass a no-op).
        backoff: pauses between failed join rounds and request retries (default: Kafka's
            exponential backoff from ``retry.backoff.ms`` / ``retry.backoff.max.ms``).

    Attributes:
        machine: the :class:`ClassicMembership` state machine.
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
        backoff: Backoff | None = None,
    ) -> None:
        self.config = config
        self._transport = transport
        self._partition_counts = partition_counts
        self._clock = clock
        self._sleep = sleep
        self.channel = CoordinatorChannel(
            config, transport, clock=clock, sleep=sleep, backoff=backoff
        )
        self.machine = ClassicMembership(config, backoff=self.channel.backoff)
        self.offsets = GroupOffsets(self.channel, self)
        self._heartbeat = HeartbeatThread(
            f"pykafka-heartbeat-{config.group_id}",
            self.heartbeat_once,
            lambda: self.timer.time_to_next_ms(self._now_ms()),
            self._where,
        )

    # -- the machine's state --------------------------------------------------------------
    def _now_ms(self) -> float:
        return self._clock() * 1000

    def _where(self) -> str:
        return self.channel.where

    @property
    def member_id(self) -> str:
        """The member id ("" before the coordinator gave one)."""
        return self.machine.member_id

    @property
    def generation_id(self) -> int:
        """The generation joined, ``-1`` when none."""
        return self.machine.generation_id

    @property
    def protocol_name(self) -> str | None:
        """The assignor the coordinator chose in the last join."""
        return self.machine.protocol_name

    @property
    def leader_id(self) -> str | None:
        """The leader of the last join."""
        return self.machine.leader_id

    @property
    def assignment(self) -> tuple[TopicPartition, ...]:
        """The partitions assigned in the current generation, sorted."""
        return self.machine.assignment

    @property
    def timer(self) -> HeartbeatTimer:
        """The heartbeat / session / ``max.poll.interval.ms`` timer."""
        return self.machine.timer

    @property
    def cooperative(self) -> bool:
        """Whether the member follows the COOPERATIVE rebalance protocol (KIP-429); see
        :attr:`ClassicMembership.cooperative`."""
        return self.machine.cooperative

    @property
    def is_leader(self) -> bool:
        """Whether this member led the last completed join."""
        return self.machine.is_leader

    @property
    def rejoin_needed(self) -> str | None:
        """Why the member must rejoin at the next :meth:`ensure_active`, or ``None``."""
        return self.machine.rejoin_needed

    def request_rejoin(self, reason: str) -> None:
        """Rejoin at the next :meth:`ensure_active` (e.g. the subscription changed)."""
        self.machine.request_rejoin(reason)

    def raise_fatal(self) -> None:
        """Raise the error that ended this membership (fatal JoinGroup / SyncGroup /
        Heartbeat errors, e.g. FENCED_INSTANCE_ID), if any."""
        self.machine.raise_fatal()

    def identity(self) -> tuple[str, int]:
        """``(member id, generation id)`` of the current generation (``("", -1)``: none)."""
        return self.machine.identity()

    def rejoin_after(self, error_code: int, api: str) -> tuple[TopicPartition, ...]:
        """Rejoin after ``error_code`` (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION or
        UNKNOWN_MEMBER_ID; the last one resets the member id) answered ``api``, now, with the
        last subscription; return the partitions assigned afterwards.

        Raises:
            as :meth:`ensure_active`.
        """
        self.machine.rejoin_after(error_code, api)
        return self.ensure_active(self.machine.topics)

    # -- coordinator ----------------------------------------------------------------------
    def coordinator(self) -> int:
        """The coordinator's broker node id (see :meth:`CoordinatorChannel.coordinator`)."""
        return self.channel.coordinator()

    # -- joining --------------------------------------------------------------------------
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
            KafkaProtocolError: the coordinator chose a protocol this member did not offer.
            KafkaTimeoutError: not joined within ``max.poll.interval.ms`` +
                ``default.api.timeout.ms``.
        """
        if self.machine.subscribe(topics, partition_counts, self._now_ms()):
            self._join()
        return self.assignment

    def _join(self) -> None:
        """Join rounds until the member is stable (a cooperative second round included)."""
        machine = self.machine
        total_ms = machine.join_deadline_ms
        retries = self.channel.retries(
            "JoinGroup/SyncGroup",
            timeout_ms=total_ms,
            timeout_option="max.poll.interval.ms + default.api.timeout.ms",
        )
        deadline = self._clock() + total_ms / 1000
        while True:
            machine.raise_fatal()
            try:
                outcome = self._join_once()
            except NETWORK_ERRORS as exc:
                if exc is machine.fatal:
                    raise
                retries.after(exc)
                continue
            if isinstance(outcome, Joined):
                if machine.rejoin_needed is None:
                    return
                continue  # cooperative second round (KIP-429): rejoin at once
            if outcome.coordinator_lost is not None:
                self.channel.mark_unknown(outcome.coordinator_lost)
            if outcome.pause_ms > 0:
                self._sleep(outcome.pause_ms / 1000)
            if self._clock() >= deadline:
                raise KafkaTimeoutError(
                    f"{self._where()}: could not join within {total_ms} ms "
                    "(max.poll.interval.ms + default.api.timeout.ms)"
                )

    def _join_once(self) -> JoinAgain | Joined:
        """One JoinGroup + SyncGroup round, the requests the machine asks for."""
        machine = self.machine
        joined: JoinGroupResponse = self.channel.send(
            machine.join_request(), machine.join_timeout_ms
        )
        step = machine.on_join(joined)
        if isinstance(step, JoinAgain):
            return step
        if isinstance(step, RunAssignor):
            step = machine.sync_as_leader(self._partition_counts(list(step.topics)))
        synced: SyncGroupResponse = self.channel.send(step.request)
        outcome = machine.on_sync(synced, self._now_ms())
        if isinstance(outcome, Joined):
            if outcome.revoked:
                log.info(
                    "%s: member %s gives up %s (cooperative rebalance, generation %d); rejoining",
                    self._where(),
                    self.member_id,
                    [str(tp) for tp in outcome.revoked],
                    outcome.generation_id,
                )
            log.info(
                "%s: member %s joined generation %d (%s, leader %s), assigned %s",
                self._where(),
                self.member_id,
                outcome.generation_id,
                self.protocol_name,
                self.leader_id,
                [str(tp) for tp in self.assignment],
            )
        return outcome

    # -- heartbeats -----------------------------------------------------------------------
    def heartbeat_once(self) -> None:
        """Send one Heartbeat if one is due and the member is stable; flag rejoins.

        Also leaves the group (dynamic members) when ``max.poll.interval.ms`` passed without
        :meth:`ensure_active`, as Java's consumer does (KIP-62).
        """
        request = self.machine.heartbeat(self._now_ms())
        if request is None:
            return
        if isinstance(request, PollExpired):
            log.warning(
                "%s: no micro-batch boundary within max.poll.interval.ms=%d; leaving the group "
                "(the member rejoins at the next batch boundary)",
                self._where(),
                self.config.max_poll_interval_ms,
            )
            self.leave("max.poll.interval.ms expired")
            return
        try:
            response = self.channel.send(request)
        except NETWORK_ERRORS as exc:
            log.info("%s: heartbeat failed: %s", self._where(), exc)
            self.machine.on_heartbeat_failed(self._now_ms())
            return
        except KafkaError as exc:
            self.machine.on_heartbeat_failed(self._now_ms())
            log.warning("%s: heartbeat failed: %s", self._where(), exc)
            return
        outcome = self.machine.on_heartbeat(response, self._now_ms())
        if outcome.coordinator_lost is not None:
            self.channel.mark_unknown(outcome.coordinator_lost)
        if outcome.fatal is not None:
            log.error("%s", outcome.fatal)

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
        request = self.machine.leave(reason)
        if request is None:
            return
        member_id = request.member_id
        try:
            response = self.channel.send(request)
            codes = [response.error_code] + [m.error_code for m in response.members]
            bad = next((c for c in codes if c), 0)
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
