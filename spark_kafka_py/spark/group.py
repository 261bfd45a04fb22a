"""Consumer groups for ``format("pykafka")``: the glue between the stream reader and a
:class:`~spark_kafka_py.consumer.group.member.Member`: a
:class:`~spark_kafka_py.consumer.group.classic.member.GroupMember` (classic protocol) or a
:class:`~spark_kafka_py.consumer.group.consumer.member.ConsumerGroupMember`
(``kafka.group.protocol=consumer``, KIP-848: the same boundary calls; revoked partitions are
released and the new assignment acknowledged in ``ensure_active``, after the commit of
``start``).

With ``kafka.group.id`` set, the streaming query's driver joins the group (``subscribe`` /
``subscribePattern``), plans only the partitions the group assigned to it, and commits the
offsets Spark has processed. With ``assign`` it does not join (there is nothing to balance)
but still commits, as a "simple" commit (generation -1), which Kafka accepts while the group
has no active members. Without ``kafka.group.id`` nothing here runs.

When PySpark calls what (checked in ``pyspark/sql/streaming/python_streaming_source_runner.py``
and Spark's ``MicroBatchExecution`` of Spark 4.x; see ``docs/consumer-groups.md``):

* one long-lived driver-side Python process holds the stream reader and serves
  ``initialOffset``, ``latestOffset(start, limit)``, ``partitions(start, end)``, ``commit`` and
  finally ``stop``; executors get pickled copies that only ``read``. Membership (sockets, the
  heartbeat thread) starts lazily on the first driver call and is never pickled.
* Spark runs one micro-batch at a time and asks ``latestOffset(start, ...)`` for batch N+1
  only after batch N completed (its commit log written), with ``start`` = batch N's end; it
  asks on every trigger, also when no data arrived, and once more at the end of an
  ``AvailableNow`` run. A batch re-run after a restart is planned from the offset log without
  ``latestOffset``. So ``start`` is always processed: we commit it there (and again in
  ``commit(end)``, which PySpark calls one batch late), and rejoin after committing, so a
  rebalance never moves a partition whose processed offsets are not committed yet.
* A partition newly assigned by a rebalance enters the offset dict at its group start offset
  (committed offset, else ``groupOffsetsFallback``) in a batch that reads nothing from it;
  the next batch reads from there. Revoked partitions leave the offset dict. Both are
  functions of the checkpointed offsets only, so a re-run batch plans the same ranges.
* With ``cooperative-sticky`` (KIP-429) the member's two rounds (give up the partitions that
  move, rejoin at once) both run inside the same boundary call, after the commit of
  ``start``: partitions that move are committed before they are given up, partitions that
  stay are never revoked and keep their offsets.

Batch reads with ``commitGroupOffsets=true`` join no group: PySpark calls the batch reader on
the driver only to plan, with nothing after the job, so the tasks commit, by the rules of
:func:`commit_after_read` (the group moves to the end of a topic-partition's read once all its
ranges were read, never back, and no task waits for another).
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.consumer.group.classic.member import GroupMember
from spark_kafka_py.consumer.group.config import CONSUMER_PROTOCOL, GroupConfig
from spark_kafka_py.consumer.group.consumer.member import ConsumerGroupMember
from spark_kafka_py.consumer.group.member import Member
from spark_kafka_py.consumer.group.offsets import GroupOffsets
from spark_kafka_py.consumer.group.transport import CoordinatorChannel
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.spark.options import GroupOptions, OffsetSpec, SourceOptions
from spark_kafka_py.spark.planner import KafkaInputPartition

__all__ = [
    "RANGE_GROUP_INFIX",
    "READ_METADATA_PREFIX",
    "KafkaOffsetStore",
    "OffsetStore",
    "StreamGroup",
    "StreamPlanner",
    "commit_after_read",
    "commit_read_range",
    "plan_commits",
    "range_group_id",
]

log = logging.getLogger(__name__)


def _leave_on_sigterm() -> None:
    """Make SIGTERM end the driver-side reader process through its ``finally`` blocks.

    Spark stops a Python streaming source by destroying its worker process
    (``PythonStreamingSourceRunner.stop`` -> ``PythonWorkerFactory.stopWorker``: SIGTERM),
    (twice: ``stopWorker`` and ``PythonWorkerFactory.stop``), which by default ends Python at
    once, so PySpark's ``finally: reader.stop()`` and with it
    our LeaveGroup would never run. We turn SIGTERM into ``SystemExit`` in that process (the
    runner's main thread, the only thread that builds a member); ``reader.stop()`` then leaves
    the group. Elsewhere (another thread, an existing non-default handler) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def terminate(signum: int, frame: Any) -> None:
        # Spark sends SIGTERM twice (stopWorker, then factory.stop): ignore the second one,
        # or it would end the process in the middle of LeaveGroup.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)


class _HasTopicId(Protocol):
    """What :class:`StreamGroup` reads of a topic's metadata (``TopicInfo``)."""

    @property
    def topic_id(self) -> uuid.UUID | None:
        """The topic id (Metadata v10+), ``None`` before."""
        ...


class StreamPlanner(Protocol):
    """What :class:`StreamGroup` needs of the stream reader's planner
    (:class:`~spark_kafka_py.spark.planner.Planner` has it): metadata and ListOffsets."""

    def topic_partitions(self) -> tuple[Mapping[TopicPartition, int], Mapping[str, _HasTopicId]]:
        """``({topic-partition: leader node id}, {topic name: its metadata})`` of the
        subscription now (Metadata).

        Raises:
            KafkaApiError: a subscribed or assigned topic does not exist (and the like).
        """
        ...

    def list_offsets(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """ListOffsets: the offset per partition for ``timestamps`` (ms, or -2 earliest /
        -1 latest)."""
        ...

    def resolve(
        self, spec: OffsetSpec, partitions: Mapping[TopicPartition, int], option: str
    ) -> dict[TopicPartition, int]:
        """Concrete offsets for ``partitions`` (-> leader node id) from the offset spec of
        option ``option`` (``startingOffsets``, ...).

        Raises:
            ConfigError: a spec that does not fit ``partitions``.
        """
        ...


class StreamGroup:
    """Driver-side group state of one streaming query (lazy; pickles without it).

    Args:
        options: the read's source options.
        group: its :class:`GroupOptions` (with ``config`` set).
        planner: the reader's planner (metadata and ListOffsets), a :class:`StreamPlanner`.
    """

    def __init__(self, options: SourceOptions, group: GroupOptions, planner: StreamPlanner) -> None:
        assert group.config is not None
        self.options = options
        self.group = group
        self._planner = planner
        self._client: KafkaClient | None = None
        self._member: Member | None = None
        self._committed: dict[TopicPartition, int] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"] = None
        state["_member"] = None
        state["_committed"] = {}
        return state

    @property
    def member(self) -> Member:
        """The group member, created (not yet joined) on first use; heartbeats start at the
        first join. With ``kafka.group.protocol=consumer`` (and ``subscribe``) a KIP-848
        :class:`ConsumerGroupMember`, else a classic :class:`GroupMember`."""
        if self._member is None:
            assert self.group.config is not None
            self._client = KafkaClient(self.options.consumer.client)
            planner = self._planner

            def counts(topics: Iterable[str]) -> dict[str, int]:
                wanted = set(topics)
                leaders, _ = planner.topic_partitions()
                out: dict[str, int] = {}
                for tp in leaders:
                    if tp.topic in wanted:
                        out[tp.topic] = out.get(tp.topic, 0) + 1
                return out

            if self.group.join and self.group.config.protocol == CONSUMER_PROTOCOL:

                def topic_names(topics: Iterable[str]) -> dict[uuid.UUID, str]:
                    _, infos = planner.topic_partitions()
                    return {i.topic_id: n for n, i in infos.items() if i.topic_id is not None}

                self._member = ConsumerGroupMember(self.group.config, self._client, topic_names)
            else:
                self._member = GroupMember(self.group.config, self._client, counts)
        return self._member

    def assigned(self, partitions: Mapping[TopicPartition, int]) -> set[TopicPartition]:
        """The partitions of ``partitions`` (the subscription's, now) this query reads.

        Joins or rejoins as needed (a micro-batch boundary); with ``assign`` all of them.
        """
        if not self.group.join:
            return set(partitions)
        counts: dict[str, int] = {}
        for tp in partitions:
            counts[tp.topic] = counts.get(tp.topic, 0) + 1
        member = self.member
        _leave_on_sigterm()
        assignment = member.ensure_active(sorted(counts), counts)
        member.start_heartbeat()
        return {tp for tp in assignment if tp in partitions}

    def start_offsets(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """Where ``partitions`` start: the group's committed offsets, else the fallback
        (earliest or latest, looked up with ListOffsets)."""
        if not partitions:
            return {}
        committed = self.member.fetch_committed(partitions)
        out = {tp: off for tp, off in committed.items() if off is not None}
        missing = [tp for tp in partitions if tp not in out]
        if missing:
            spec = EARLIEST_TIMESTAMP if self.group.fallback == "earliest" else LATEST_TIMESTAMP
            out.update(self._planner.list_offsets(dict.fromkeys(missing, spec)))
        return dict(sorted(out.items()))

    def initial_offsets(self) -> dict[TopicPartition, int]:
        """``initialOffset``: join, then resolve ``startingOffsets`` for the assigned
        partitions (``group``: committed offsets with the fallback)."""
        leaders, _ = self._planner.topic_partitions()
        mine = self.assigned(leaders)
        if self.group.start_from_group:
            return self.start_offsets(mine)
        return self._planner.resolve(
            self.options.starting_offsets,
            {tp: leader for tp, leader in leaders.items() if tp in mine},
            "startingOffsets",
        )

    def commit(self, processed: Mapping[TopicPartition, int]) -> None:
        """Commit the offsets Spark has processed, for the partitions this query owns, when
        they moved since the last commit (OffsetCommit with generation and member id)."""
        member = self.member
        if self.group.join:
            if member.generation_id < 0:
                return  # not a member (yet): nothing of ours to commit
            owned = set(member.assignment)
            todo = {tp: off for tp, off in processed.items() if tp in owned}
        else:
            todo = dict(processed)
        todo = {tp: off for tp, off in todo.items() if self._committed.get(tp) != off}
        if todo:
            self._committed.update(member.commit(todo, metadata="spark-kafka-py"))

    def close(self) -> None:
        """Stop heartbeats, leave the group (dynamic members) and close connections."""
        member, self._member = self._member, None
        try:
            if member is not None:
                member.close(leave=self.group.join)
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None


# -- batch reads with commitGroupOffsets=true ----------------------------------------------

#: Helper groups of a batch read whose topic-partition is split over several tasks: the task of
#: range ``i`` records there that the range was read, one group per range index, named
#: ``<group id><RANGE_GROUP_INFIX><i>``. Nothing joins them; see docs/consumer-groups.md.
RANGE_GROUP_INFIX = ".spark-kafka-py.range-"
#: OffsetCommit metadata of the commits of a batch read (all groups): this, then the read id.
READ_METADATA_PREFIX = "spark-kafka-py batch read "


def range_group_id(group_id: str, index: int) -> str:
    """The helper group in which range ``index`` of a split read is recorded."""
    return f"{group_id}{RANGE_GROUP_INFIX}{index}"


def plan_commits(partitions: Sequence[KafkaInputPartition]) -> list[KafkaInputPartition]:
    """Driver side of ``commitGroupOffsets=true``: give the planned input partitions of one
    batch read a new read id (32 hex digits) and, each, its index among the ranges of its
    topic-partition (in offset order), their count and the end of the last one."""
    read_id = uuid.uuid4().hex
    by_tp: dict[TopicPartition, list[KafkaInputPartition]] = {}
    for part in partitions:
        by_tp.setdefault(part.topic_partition, []).append(part)
    placed: dict[KafkaInputPartition, tuple[int, int, int]] = {}
    for parts in by_tp.values():
        ordered = sorted(parts, key=lambda p: p.from_offset)
        end = ordered[-1].until_offset
        for index, part in enumerate(ordered):
            placed[part] = (index, len(ordered), end)
    return [
        dataclasses.replace(
            part,
            read_id=read_id,
            range_index=placed[part][0],
            range_count=placed[part][1],
            partition_end=placed[part][2],
        )
        for part in partitions
    ]


class OffsetStore(Protocol):
    """Committed offsets of any group, read and written without membership."""

    def fetch(self, group_id: str, tp: TopicPartition) -> tuple[int, str] | None:
        """``(offset, metadata)`` committed for ``tp`` in ``group_id``, ``None`` if none."""
        ...

    def commit(self, group_id: str, tp: TopicPartition, offset: int, metadata: str) -> None:
        """Commit ``offset`` with ``metadata`` for ``tp`` in ``group_id`` (a simple commit)."""
        ...


class KafkaOffsetStore:
    """:class:`OffsetStore` over OffsetFetch / OffsetCommit (simple commits: generation -1, no
    member id, which Kafka accepts while a group has no active members).

    Args:
        config: the read's group settings (its group id is replaced per call).
        client: the client the requests go through (not closed here).
    """

    def __init__(self, config: GroupConfig, client: KafkaClient) -> None:
        self._config = config
        self._client = client
        self._groups: dict[str, GroupOffsets] = {}

    def _offsets(self, group_id: str) -> GroupOffsets:
        offsets = self._groups.get(group_id)
        if offsets is None:
            config = dataclasses.replace(self._config, group_id=group_id)
            channel = CoordinatorChannel(
                config, self._client, clock=time.monotonic, sleep=time.sleep
            )
            offsets = self._groups[group_id] = GroupOffsets(channel)
        return offsets

    def fetch(self, group_id: str, tp: TopicPartition) -> tuple[int, str] | None:
        return self._offsets(group_id).fetch_committed_with_metadata([tp])[tp]

    def commit(self, group_id: str, tp: TopicPartition, offset: int, metadata: str) -> None:
        self._offsets(group_id).commit({tp: offset}, metadata=metadata)


def commit_read_range(
    options: SourceOptions, group: GroupOptions, partition: KafkaInputPartition
) -> bool:
    """Executor side of ``commitGroupOffsets=true``, after a task has read every record of
    ``partition``'s range: :func:`commit_after_read` over Kafka.

    Returns:
        as :func:`commit_after_read`.

    Raises:
        KafkaApiError: e.g. UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION when a running consumer
            (a streaming query, a Java consumer) is a member of the group, or
            GROUP_AUTHORIZATION_FAILED, naming the group (or the helper group).
        KafkaTimeoutError: a commit or fetch retried beyond ``kafka.default.api.timeout.ms``.
    """
    assert group.config is not None
    with KafkaClient(options.consumer.client) as client:
        return commit_after_read(
            KafkaOffsetStore(group.config, client), group.config.group_id, partition
        )


def commit_after_read(store: OffsetStore, group_id: str, partition: KafkaInputPartition) -> bool:
    """Record that ``partition``'s range was read; once every range of its topic-partition in
    this read was, move the group to ``partition_end``, the end of the last range.

    A topic-partition read by one task: that task commits the end. Split over ``n`` tasks
    (``minPartitions``, ``maxRecordsPerPartition``): the task of range ``i`` first commits the
    range's end to the helper group ``range_group_id(group_id, i)`` with this read's id as
    metadata (its record of the range), then looks at the records of the other ranges
    (highest index first, the likeliest to be missing; it stops at the first one missing).
    If all ``n`` are there, it commits the end. No task waits for another: the task whose
    record completes the set sees all the others, as each task writes before it looks. A
    retried or duplicate task writes the same record again.

    The group's offset is only ever set to the end of the read, when it is lower (or absent):
    every task that sets it sets the same value, so it never moves back within a read, and
    never past a range that no task finished reading.

    Args:
        store: the committed offsets (:class:`KafkaOffsetStore` in production).
        group_id: ``kafka.group.id``.
        partition: the range read, with ``read_id``, ``range_index``, ``range_count`` and
            ``partition_end`` (:func:`plan_commits`).

    Returns:
        ``True`` when every range of the topic-partition was read (and the group is at the end
        or beyond), ``False`` while some range's record is missing.

    Raises:
        ValueError: ``partition`` was not planned by :func:`plan_commits`.
        KafkaApiError / KafkaTimeoutError: from the store, naming the group.
    """
    tp = partition.topic_partition
    index, count, end = partition.range_index, partition.range_count, partition.partition_end
    if not partition.read_id or not 0 <= index < count or partition.until_offset > end:
        raise ValueError(f"{partition!r} was not planned for commitGroupOffsets (plan_commits)")
    metadata = READ_METADATA_PREFIX + partition.read_id
    if count > 1:
        store.commit(range_group_id(group_id, index), tp, partition.until_offset, metadata)
        for other in range(count - 1, -1, -1):
            if other == index:
                continue
            entry = store.fetch(range_group_id(group_id, other), tp)
            if entry is None or entry[1] != metadata:
                log.debug(
                    "group '%s': %s [%d, %d) read; range %d of %d not yet",
                    group_id,
                    tp,
                    partition.from_offset,
                    partition.until_offset,
                    other,
                    count,
                )
                return False
    entry = store.fetch(group_id, tp)
    if entry is None or entry[0] < end:
        store.commit(group_id, tp, end, metadata)
        log.info("group '%s': committed %s at %d (%s)", group_id, tp, end, metadata)
    return True
