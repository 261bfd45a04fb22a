"""Group offsets: OffsetCommit and OffsetFetch for one group, as Java's
``ConsumerCoordinator`` (``commitOffsetsSync``, ``fetchCommittedOffsets``) does them.

:class:`GroupOffsets` sends its requests through a
:class:`~spark_kafka_py.consumer.group.transport.CoordinatorChannel`. With a member (anything
with the :class:`Membership` methods, in production a
:class:`~spark_kafka_py.consumer.group.classic.member.GroupMember`) commits carry the member's
generation id, member id and instance id; REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION and
UNKNOWN_MEMBER_ID are handled by rejoining and committing again the offsets of the partitions
still assigned (the others are reported, never dropped silently). Without one, a commit is a
"simple" commit (generation -1, no member id), which Kafka accepts while the group has no
active members. OffsetFetch asks with ``require_stable`` (KIP-447).

A member of a KIP-848 consumer group (a
:class:`~spark_kafka_py.consumer.group.consumer.member.ConsumerGroupMember`) commits with its
member id and member epoch (OffsetCommit v9+: ``generation_id_or_member_epoch``) and, with
``member_fetch=True``, fetches with them too (OffsetFetch v9+ ``member_id`` /
``member_epoch``). Its errors STALE_MEMBER_EPOCH (the epoch moved on: refresh it, retry),
FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID (fenced: the partitions are lost, rejoin) go to the
member's :meth:`Membership.rejoin_after`, as the classic rejoin errors do.

Sources: OffsetCommit and OffsetFetch message specs (see
:mod:`spark_kafka_py.protocol.messages`), Java's ``ConsumerCoordinator`` for which error means
what, KIP-447.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Protocol

from spark_kafka_py.consumer.group.transport import (
    COORDINATOR_ERRORS,
    NETWORK_ERRORS,
    REJOIN_ERRORS,
    CoordinatorChannel,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaError
from spark_kafka_py.protocol.error_codes import (
    FENCED_MEMBER_EPOCH,
    NONE,
    STALE_MEMBER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
    error_for,
    error_for_code,
)
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
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
)

__all__ = ["GroupOffsets", "Membership"]

log = logging.getLogger(__name__)

#: Errors Kafka marks retriable that we report at once in OffsetCommit/OffsetFetch: the topic
#: or partition does not exist (deleted, or a typo), as Java's ``ConsumerCoordinator`` does.
FATAL_OFFSET_ERRORS = frozenset({UNKNOWN_TOPIC_OR_PARTITION})
#: Offset ``-1`` in OffsetFetch: no committed offset.
NO_OFFSET = -1
#: Errors handled by the member (:meth:`Membership.rejoin_after`): the classic rejoin errors and
#: those of a KIP-848 member's epoch (OffsetCommit v9+, OffsetFetch v9+).
MEMBER_ERRORS = REJOIN_ERRORS | {STALE_MEMBER_EPOCH, FENCED_MEMBER_EPOCH}
#: Rejoins (or epoch refreshes) one commit or fetch may go through before failing.
MAX_REJOINS = 3


class Membership(Protocol):
    """What :class:`GroupOffsets` needs from a group member (:class:`GroupMember` has it)."""

    def raise_fatal(self) -> None:
        """Raise the error that ended the membership, if any."""
        ...

    def identity(self) -> tuple[str, int]:
        """``(member id, generation id)`` of the current generation (``("", -1)``: none)."""
        ...

    def rejoin_after(self, error_code: int, api: str) -> tuple[TopicPartition, ...]:
        """Rejoin (or refresh the member epoch) after ``error_code`` (one of
        :data:`MEMBER_ERRORS`) answered ``api``; return the partitions whose offsets the member
        may commit afterwards."""
        ...


class GroupOffsets:
    """OffsetCommit / OffsetFetch for the group of ``channel``.

    Args:
        channel: the way to the group's coordinator (its config gives the group id and
            instance id).
        member: the member whose generation commits carry, or ``None`` for "simple" commits
            (generation -1, no member id).
        member_fetch: send the member's id and epoch in OffsetFetch too (v9+, KIP-848; for a
            consumer-protocol member, whose coordinator then checks the epoch).
    """

    def __init__(
        self,
        channel: CoordinatorChannel,
        member: Membership | None = None,
        *,
        member_fetch: bool = False,
    ) -> None:
        self.channel = channel
        self.member = member
        self.member_fetch = member_fetch

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
            KafkaConnectionError / KafkaProtocolError: a failed request that is not retriable
                (:func:`spark_kafka_py.client.retry.retriable`), raised at once.
        """
        channel, member, where = self.channel, self.member, self.channel.where
        if member is not None:
            member.raise_fatal()
        pending = dict(offsets)
        done: dict[TopicPartition, int] = {}
        retries = channel.retries("OffsetCommit")
        rejoins = 0
        last: KafkaError | None = None
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
            member_id, generation = member.identity() if member is not None else ("", -1)
            request = OffsetCommitRequest(
                group_id=channel.config.group_id,
                generation_id_or_member_epoch=generation,
                member_id=member_id,
                group_instance_id=channel.config.group_instance_id if member_id else None,
                topics=tuple(
                    OffsetCommitRequestTopic(name=t, partitions=tuple(ps))
                    for t, ps in by_topic.items()
                ),
            )
            try:
                response = channel.send(request)
            except NETWORK_ERRORS as exc:
                retries.after(exc)
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
                    elif code in MEMBER_ERRORS:
                        rejoin = code
                    elif code not in FATAL_OFFSET_ERRORS and (
                        code in COORDINATOR_ERRORS or error_for(code).retriable
                    ):
                        retry = True
                        if code in COORDINATOR_ERRORS:
                            channel.mark_unknown(error_for(code).name)
                        last = error_for_code(code, f"in OffsetCommit of {tp} for {where}")
                    else:
                        raise error_for_code(code, f"in OffsetCommit of {tp} for {where}")
            if rejoin is not None and pending:
                if member is None or not member_id:  # a simple commit into a group with members
                    raise error_for_code(
                        rejoin,
                        f"in OffsetCommit for {where}: the group has active members, "
                        "so offsets can only be committed by a member",
                    )
                rejoins += 1
                if rejoins > MAX_REJOINS:
                    raise error_for_code(
                        rejoin, f"in OffsetCommit for {where} after {rejoins - 1} rejoins"
                    )
                owned = set(member.rejoin_after(rejoin, "OffsetCommit"))
                lost = sorted(tp for tp in pending if tp not in owned)
                if lost:
                    log.warning(
                        "%s: offsets %s were not committed: the rebalance (%s) moved these "
                        "partitions to other members, which start from the last committed "
                        "offsets (records after them may be read twice: at-least-once)",
                        where,
                        {str(tp): pending[tp] for tp in lost},
                        error_for(rejoin).name,
                    )
                    for tp in lost:
                        pending.pop(tp)
                continue
            if retry and pending and last is not None:
                retries.after(last)
        return done

    def fetch_committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """OffsetFetch: the group's committed offset per partition, ``None`` where none.

        Raises:
            KafkaApiError / KafkaTimeoutError: as :meth:`fetch_committed_with_metadata`.
        """
        return {
            tp: None if entry is None else entry[0]
            for tp, entry in self.fetch_committed_with_metadata(partitions).items()
        }

    def fetch_committed_with_metadata(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, str] | None]:
        """OffsetFetch: the group's committed ``(offset, metadata string)`` per partition (the
        metadata the committer sent in OffsetCommit, ``""`` if null), ``None`` where none.

        Raises:
            KafkaApiError: GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID,
                TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, ... naming the group
                (and topic-partition).
            KafkaTimeoutError: retriable errors beyond ``default.api.timeout.ms``.
            KafkaConnectionError / KafkaProtocolError: a failed request that is not retriable
                (:func:`spark_kafka_py.client.retry.retriable`), raised at once.
        """
        channel = self.channel
        if self.member is not None:
            self.member.raise_fatal()
        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        by_topic: dict[str, list[int]] = {}
        for tp in wanted:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        group = channel.config.group_id
        retries = channel.retries("OffsetFetch")
        rejoins = 0
        while True:
            member_id: str | None = None
            epoch = -1
            if self.member_fetch and self.member is not None:
                member_id, epoch = self.member.identity()
                if not member_id or epoch < 0:
                    member_id, epoch = None, -1
            request = OffsetFetchRequest(
                group_id=group,
                topics=tuple(
                    OffsetFetchRequestTopic(name=t, partition_indexes=tuple(p))
                    for t, p in by_topic.items()
                ),
                groups=(
                    OffsetFetchRequestGroup(
                        group_id=group,
                        member_id=member_id,
                        member_epoch=epoch,
                        topics=tuple(
                            OffsetFetchRequestTopics(name=t, partition_indexes=tuple(p))
                            for t, p in by_topic.items()
                        ),
                    ),
                ),
                require_stable=True,
            )
            try:
                response = channel.send(request)
            except NETWORK_ERRORS as exc:
                retries.after(exc)
                continue
            # v8+ answers per group, earlier versions per topic: two partition classes
            topics: list[
                tuple[str, tuple[OffsetFetchResponsePartition | OffsetFetchResponsePartitions, ...]]
            ]
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
            context = f"in OffsetFetch for {channel.where}"
            if bad in MEMBER_ERRORS and member_id is not None and self.member is not None:
                rejoins += 1
                if rejoins > MAX_REJOINS:
                    raise error_for_code(bad, f"{context} after {rejoins - 1} rejoins")
                self.member.rejoin_after(bad, "OffsetFetch")
                continue
            if bad not in FATAL_OFFSET_ERRORS and (
                bad in COORDINATOR_ERRORS or error_for(bad).retriable  # UNSTABLE_OFFSET_COMMIT
            ):
                if bad in COORDINATOR_ERRORS:
                    channel.mark_unknown(error_for(bad).name)
                retries.after(error_for_code(bad, context))
                continue
            for name, ps in topics:
                for p in ps:
                    if p.error_code:
                        context += f" of {TopicPartition(name, p.partition_index)}"
                        break
            raise error_for_code(bad, context)
        out: dict[TopicPartition, tuple[int, str] | None] = dict.fromkeys(wanted)
        for name, ps in topics:
            for p in ps:
                tp = TopicPartition(name, p.partition_index)
                if tp in out and p.committed_offset >= 0:
                    out[tp] = (p.committed_offset, p.metadata or "")
        return out
