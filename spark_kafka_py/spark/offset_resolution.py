"""Offset specs to offsets: ``earliest``, ``latest``, specific JSON offsets and timestamps.

The rules of Spark's ``KafkaOffsetReaderAdmin`` (``fetchSpecificOffsets``,
``fetchSpecificTimestampBasedOffsets``, ``fetchGlobalTimestampBasedOffsets``) for the options
``startingOffsets``, ``endingOffsets``, ``startingOffsetsByTimestamp``,
``endingOffsetsByTimestamp``, ``startingTimestamp``, ``endingTimestamp`` and
``startingOffsetsByTimestampStrategy``.

No I/O of its own: the look-ups go through a ``list_offsets`` function the caller passes
(the planner's, which sends ListOffsets to the leaders), so these rules are tested with a
dictionary.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.options import ByTimestamp, OffsetSpec

__all__ = ["ListOffsets", "resolve_offsets", "resolve_timestamps"]

#: ListOffsets: ``{TopicPartition: timestamp}`` (ms since the epoch, or -2 earliest, -1
#: latest) -> ``{TopicPartition: offset}`` (-1 where no record is that late).
ListOffsets = Callable[[Mapping[TopicPartition, int]], dict[TopicPartition, int]]


def resolve_offsets(
    spec: OffsetSpec,
    partitions: Collection[TopicPartition],
    option: str,
    list_offsets: ListOffsets,
) -> dict[TopicPartition, int]:
    """Concrete offsets for ``partitions`` from an offset spec.

    ``earliest`` and ``latest`` are looked up for every partition. Specific JSON offsets must
    name every partition of the subscription (Spark's rule); their -2 (earliest) and -1
    (latest) entries are looked up, entries for other partitions are ignored. Timestamps
    follow :func:`resolve_timestamps`.

    Args:
        spec: the parsed option.
        partitions: the topic-partitions of the subscription.
        option: the option's name, for errors (``startingOffsets``, ``endingOffsets``...).
        list_offsets: the ListOffsets look-up.

    Returns:
        ``{TopicPartition: offset}``; sorted by topic-partition for JSON offsets and
        timestamps, in the look-up's order for ``earliest`` and ``latest``.

    Raises:
        ConfigError: JSON offsets that miss a partition of the subscription; as
            :func:`resolve_timestamps`.
        (what ``list_offsets`` raises)
    """
    if isinstance(spec, ByTimestamp):
        return resolve_timestamps(spec, partitions, option, list_offsets)
    if spec == "earliest":
        return _lookup(list_offsets, dict.fromkeys(partitions, EARLIEST_TIMESTAMP))
    if spec == "latest":
        return _lookup(list_offsets, dict.fromkeys(partitions, LATEST_TIMESTAMP))
    assert isinstance(spec, Mapping)
    missing = [tp for tp in partitions if tp not in spec]
    if missing:
        raise ConfigError(
            f"Option '{option}' contains specific offsets, so it must name every "
            f"TopicPartition; use -1 for latest, -2 for earliest. Missing: "
            f"{', '.join(map(str, missing))}. Specified: "
            f"{', '.join(map(str, sorted(spec)))}"
        )
    lookups = {tp: off for tp, off in spec.items() if tp in partitions and off < 0}
    result = {tp: off for tp, off in spec.items() if tp in partitions and off >= 0}
    result.update(_lookup(list_offsets, lookups))
    return dict(sorted(result.items()))


def resolve_timestamps(
    spec: ByTimestamp,
    partitions: Collection[TopicPartition],
    option: str,
    list_offsets: ListOffsets,
) -> dict[TopicPartition, int]:
    """Offsets by timestamp (ListOffsets v1+ with a timestamp in ms): for each partition the
    earliest offset whose record timestamp is >= the timestamp.

    Where no record is that late, a start follows ``startingOffsetsByTimestampStrategy``
    (``error``: fail naming the topic-partition and timestamp; ``latest``: the latest
    offset) and an end is the latest offset, as Spark's ``KafkaOffsetReaderAdmin``.

    Args:
        spec: one timestamp for every partition, or one per partition.
        partitions: the topic-partitions of the subscription.
        option: the option's name; one starting with ``starting`` resolves a start.
        list_offsets: the ListOffsets look-up.

    Returns:
        ``{TopicPartition: offset}``, sorted by topic-partition.

    Raises:
        ConfigError: per-partition timestamps that do not name exactly the partitions of
            the subscription, or no match with strategy ``error``.
        (what ``list_offsets`` raises)
    """
    starting = option.startswith("starting")
    if spec.per_partition is not None:
        key = "startingOffsetsByTimestamp" if starting else "endingOffsetsByTimestamp"
        if set(spec.per_partition) != set(partitions):
            raise ConfigError(
                f"Option '{key}' must name exactly the partitions of the subscription. "
                f"Specified: {', '.join(map(str, sorted(spec.per_partition)))}; "
                f"assigned: {', '.join(map(str, sorted(partitions)))}"
            )
        timestamps = dict(spec.per_partition)
    else:
        assert spec.everywhere is not None
        timestamps = dict.fromkeys(partitions, spec.everywhere)
    found = _lookup(list_offsets, timestamps)
    unmatched = [tp for tp in sorted(found) if found[tp] < 0]
    if unmatched and starting and spec.strategy == "error":
        tp = unmatched[0]
        raise ConfigError(
            f"No offset matched from request of topic-partition {tp} and timestamp "
            f"{timestamps[tp]} ({option}). Set 'startingOffsetsByTimestampStrategy' to "
            "'latest' to start such partitions at the latest offset instead."
        )
    if unmatched:
        found.update(_lookup(list_offsets, dict.fromkeys(unmatched, LATEST_TIMESTAMP)))
    return dict(sorted(found.items()))


def _lookup(
    list_offsets: ListOffsets, timestamps: dict[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """``list_offsets(timestamps)``, not called for nothing (as the planner's never sends an
    empty ListOffsets)."""
    return list_offsets(timestamps) if timestamps else {}
