"""Range planning, without I/O: offset ranges in, Spark input partitions out.

Given where a read starts and ends (``{TopicPartition: offset}``, offsets resolved by the
planner's ListOffsets), :func:`offset_ranges` makes the ``[from, until)`` range of each
topic-partition, reporting data loss the way Spark's ``KafkaMicroBatchStream`` and
``KafkaSource`` do (``reportDataLoss``); :func:`split_ranges` cuts ranges into Spark tasks as
Spark's ``KafkaOffsetRangeCalculator`` does; :func:`input_partitions` turns the pieces into
:class:`KafkaInputPartition` s (small ones grouped into :class:`KafkaRangeGroup` s when asked).

Everything here is a function of its arguments: no client, no socket, no clock.
:class:`~spark_kafka_py.spark.planner.Planner` asks the brokers and calls these.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition

from spark_kafka_py import errors
from spark_kafka_py.consumer.types import TopicPartition

__all__ = [
    "GROUP_OFFSETS",
    "KafkaInputPartition",
    "KafkaRangeGroup",
    "OffsetRange",
    "group_small_ranges",
    "input_partitions",
    "new_partitions",
    "offset_ranges",
    "planned_ranges",
    "report_data_loss",
    "split_ranges",
]

log = logging.getLogger(__name__)

#: ``(topic-partition, from offset, until offset)``: the offsets ``[from, until)``.
OffsetRange = tuple[TopicPartition, int, int]


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """One Spark task's work: the records of ``topic``-``partition`` in
    ``[from_offset, until_offset)``.

    Small and picklable: it carries no connection, only the range and the leader's node id
    known at planning time (a hint; the executor re-checks metadata on leader errors).

    A batch read with ``commitGroupOffsets=true`` also carries what its commit needs
    (:func:`spark_kafka_py.spark.group.commit_read_range`): the read's id (one per planned
    read), the range's index among the ``range_count`` consecutive ranges its topic-partition
    was split into, and the end of the last of them. Otherwise they are ``""``, -1, 0, -1.
    """

    topic: str
    partition: int
    from_offset: int
    until_offset: int
    leader_hint: int = -1
    read_id: str = ""
    range_index: int = -1
    range_count: int = 0
    partition_end: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True)
class KafkaRangeGroup(InputPartition):
    """One Spark task's work when it is several small ranges: read one after another.

    Planned only for batch reads narrowed by filter pushdown (:func:`group_small_ranges`),
    where many partitions may each keep a few records: one task per range would cost Spark's
    fixed per-task overhead many times over for little data.
    """

    ranges: tuple[KafkaInputPartition, ...]


def planned_ranges(parts: Sequence[InputPartition]) -> list[KafkaInputPartition]:
    """The ranges of a plan, groups opened, in plan order (for tests and diagnostics)."""
    out: list[KafkaInputPartition] = []
    for part in parts:
        if isinstance(part, KafkaRangeGroup):
            out.extend(part.ranges)
        elif isinstance(part, KafkaInputPartition):
            out.append(part)
    return out


#: Ranges smaller than this many offsets share Spark tasks, up to this many offsets a task.
GROUP_OFFSETS = 100_000


def group_small_ranges(
    parts: Sequence[KafkaInputPartition], limit: int = GROUP_OFFSETS
) -> list[KafkaInputPartition | KafkaRangeGroup]:
    """Put ranges of fewer than ``limit`` offsets together, in plan order, into groups of at
    most ``limit`` offsets; larger ranges stay tasks of their own. A group of one is the range
    itself."""
    out: list[KafkaInputPartition | KafkaRangeGroup] = []
    group: list[KafkaInputPartition] = []
    size = 0

    def close() -> None:
        if group:
            out.append(group[0] if len(group) == 1 else KafkaRangeGroup(tuple(group)))
            group.clear()

    for part in parts:
        n = part.until_offset - part.from_offset
        if n >= limit:
            out.append(part)
            continue
        if size + n > limit:
            close()
            size = 0
        group.append(part)
        size += n
    close()
    return out


def report_data_loss(fail_on_data_loss: bool, message: str) -> None:
    """Raise :class:`DataLossError` or log a warning, per ``failOnDataLoss`` (as Spark does)."""
    errors.report_data_loss(fail_on_data_loss, message, log)


def _divide(tp: TopicPartition, lo: int, hi: int, parts: int) -> list[OffsetRange]:
    """``[lo, hi)`` in ``parts`` consecutive pieces; the last one takes the rounding rest."""
    out = []
    remaining = hi - lo
    start = lo
    for part in range(parts):
        size = remaining // (parts - part)
        remaining -= size
        end = min(start + size, hi)
        out.append((tp, start, end))
        start = end
    return out


def split_ranges(
    ranges: list[OffsetRange],
    min_partitions: int | None,
    max_records_per_partition: int | None,
) -> list[OffsetRange]:
    """Split offset ranges into Spark tasks the way Spark's ``KafkaOffsetRangeCalculator`` does.

    Empty ranges are dropped. With ``maxRecordsPerPartition``, a range of ``n`` offsets becomes
    ``ceil(n / max)`` equal pieces. Then, if ``minPartitions`` is more than the number of
    ranges, ranges are split in proportion to their share of all offsets
    (``max(round(size / total * minPartitions), 1)`` pieces; ranges that get one piece are
    left out of the share of the others). Sizes are offsets, not records (compaction and
    transaction markers make them differ).

    Args:
        ranges: ``(topic-partition, from offset, until offset)`` triples.
        min_partitions: ``minPartitions`` or ``None``.
        max_records_per_partition: ``maxRecordsPerPartition`` or ``None``.

    Returns:
        The pieces, in the order of ``ranges``.
    """
    ranges = [r for r in ranges if r[2] - r[1] > 0]
    if (min_partitions is None or len(ranges) >= min_partitions) and (
        max_records_per_partition is None
    ):
        return ranges
    if max_records_per_partition is not None:
        divided = [
            piece
            for tp, lo, hi in ranges
            for piece in _divide(tp, lo, hi, -(-(hi - lo) // max_records_per_partition))
            if piece[2] > piece[1]
        ]
    else:
        divided = ranges
    if min_partitions is None or min_partitions <= len(divided):
        return divided

    def part_count(size: int, total: int, parts: int) -> int:
        # Java's Math.round: half up.
        return max(int(size / total * parts + 0.5), 1)

    total = sum(hi - lo for _, lo, hi in divided)
    unsplit = [part_count(r[2] - r[1], total, min_partitions) == 1 for r in divided]
    split_total = total - sum(
        r[2] - r[1] for r, whole in zip(divided, unsplit, strict=True) if whole
    )
    split_min = max(min_partitions - sum(unsplit), 1)
    out: list[OffsetRange] = []
    for (tp, lo, hi), whole in zip(divided, unsplit, strict=True):
        parts = 1 if whole else part_count(hi - lo, split_total, split_min)
        out.extend(piece for piece in _divide(tp, lo, hi, parts) if piece[2] > piece[1])
    return out


def new_partitions(
    start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]
) -> list[TopicPartition]:
    """The topic-partitions of ``end`` that ``start`` lacks (added since the start was
    resolved), in ``end``'s order: their start is their earliest offset, which the caller
    looks up (ListOffsets, timestamp -2) and hands to :func:`offset_ranges`."""
    return [tp for tp in end if tp not in start]


def offset_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    earliest: Mapping[TopicPartition, int],
    fail_on_data_loss: bool,
) -> list[OffsetRange]:
    """The ``[start, end)`` range of every topic-partition of ``end``, sorted by
    topic-partition, with data loss reported as Spark's ``KafkaMicroBatchStream`` does.

    Data loss (:func:`report_data_loss`: raised or logged per ``failOnDataLoss``), in this
    order: a partition new in ``end`` whose earliest offset is not 0 (records were deleted
    before they could be read; it starts at that offset); a partition of ``start`` missing
    from ``end`` (e.g. its topic was deleted; left out); an end below the start (e.g. a topic
    deleted and recreated; left out). Empty ranges are kept.

    Args:
        start: ``{TopicPartition: offset}`` where the read starts.
        end: ``{TopicPartition: offset}`` where it ends (exclusive).
        earliest: ``{TopicPartition: earliest offset}`` of at least the partitions
            :func:`new_partitions` names.
        fail_on_data_loss: ``failOnDataLoss``.

    Returns:
        ``(topic-partition, from offset, until offset)`` triples.

    Raises:
        DataLossError: data loss with ``fail_on_data_loss``.
        KeyError: a new partition without an entry in ``earliest``.
    """
    begin = dict(start)
    for tp in new_partitions(start, end):
        off = earliest[tp]
        if off != 0:
            report_data_loss(
                fail_on_data_loss, f"Added partition {tp} starts from {off} instead of 0"
            )
        begin[tp] = off
    for tp in [tp for tp in begin if tp not in end]:
        report_data_loss(
            fail_on_data_loss,
            f"Partition {tp} was present at offset {begin[tp]} but is gone now",
        )
    ranges: list[OffsetRange] = []
    for tp in sorted(end):
        lo, hi = begin[tp], end[tp]
        if hi < lo:
            report_data_loss(
                fail_on_data_loss, f"Partition {tp}'s offset was changed from {lo} to {hi}"
            )
            continue
        ranges.append((tp, lo, hi))
    return ranges


def input_partitions(
    ranges: Sequence[OffsetRange],
    leaders: Mapping[TopicPartition, int],
    *,
    min_partitions: int | None,
    max_records_per_partition: int | None,
    group_small: bool,
) -> list[KafkaInputPartition | KafkaRangeGroup]:
    """Spark's input partitions for ``ranges``: split by :func:`split_ranges` (empty ranges
    dropped), one :class:`KafkaInputPartition` per piece with its leader hint, in the order of
    ``ranges``.

    Args:
        ranges: ``(topic-partition, from offset, until offset)`` triples.
        leaders: ``{TopicPartition: leader node id}`` at planning time; -1 where unknown.
        min_partitions: ``minPartitions`` or ``None``.
        max_records_per_partition: ``maxRecordsPerPartition`` or ``None``.
        group_small: put small ranges together into tasks (:func:`group_small_ranges`), as
            for a batch read narrowed by filter pushdown; only when neither
            ``min_partitions`` nor ``max_records_per_partition`` sets the tasks.
    """
    pieces = split_ranges(list(ranges), min_partitions, max_records_per_partition)
    parts = [
        KafkaInputPartition(tp.topic, tp.partition, lo, hi, leaders.get(tp, -1))
        for tp, lo, hi in pieces
    ]
    if group_small and min_partitions is None and max_records_per_partition is None:
        return group_small_ranges(parts)
    return list(parts)
