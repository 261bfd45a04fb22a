"""The streaming offset model: ``{topic: {partition: next offset}}``.

Spark checkpoints the dicts a ``DataSourceStreamReader`` returns as JSON. Ours have the same
shape as Spark's Kafka source offsets (``JsonUtils.partitionOffsets``): topic name, then the
partition number as a string, then the offset of the *next* record to read. They are built in
canonical order (topics sorted, partitions sorted numerically) so equal offsets always
serialise to equal JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError

#: ``dict[topic, dict[str(partition), offset]]``, as checkpointed by Spark.
OffsetDict = dict[str, dict[str, int]]


#: :func:`from_offset_dict` reuses the ``TopicPartition`` of each (topic, partition key): the
#: same partitions come back every micro-batch. The cache is emptied when it holds more.
TOPIC_PARTITION_CACHE_MAX = 200_000
_tp_cache: dict[str, dict[Any, TopicPartition]] = {}
_tp_cache_size = 0


def to_offset_dict(offsets: Mapping[TopicPartition, int]) -> OffsetDict:
    """Turn ``{TopicPartition: offset}`` into the canonical checkpoint dict.

    Grouped by topic first, then each topic's ``(partition, offset)`` pairs sorted as ints
    (no ``TopicPartition`` comparisons): about 2 ms for 10,000 partitions, where sorting the
    ``TopicPartition`` keys took about 16 ms.
    """
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for (topic, partition), offset in offsets.items():
        parts = by_topic.get(topic)
        if parts is None:
            parts = by_topic[topic] = []
        parts.append((partition, offset))
    out: OffsetDict = {}
    for topic in sorted(by_topic):
        parts = by_topic[topic]
        parts.sort()
        out[topic] = {str(partition): int(offset) for partition, offset in parts}
    return out


def from_offset_dict(data: Mapping[str, Mapping[str, int]] | None) -> dict[TopicPartition, int]:
    """Parse a checkpoint dict back into ``{TopicPartition: offset}``.

    The ``TopicPartition`` keys are reused from earlier calls
    (:data:`TOPIC_PARTITION_CACHE_MAX`): about 1.3 ms for 10,000 partitions instead of 6 ms.

    Raises:
        ConfigError: the checkpointed offsets are not of our shape (e.g. a checkpoint
            written by another source).
    """
    global _tp_cache_size
    if not data:
        return {}
    if _tp_cache_size >= TOPIC_PARTITION_CACHE_MAX:  # at most the bound + one call's
        _tp_cache.clear()
        _tp_cache_size = 0
    result: dict[TopicPartition, int] = {}
    new = tuple.__new__
    try:
        for topic, parts in data.items():
            name = str(topic)
            cache = _tp_cache.get(name)
            if cache is None:
                cache = _tp_cache[name] = {}
            for part, offset in parts.items():
                tp = cache.get(part)
                if tp is None:
                    tp = cache[part] = new(TopicPartition, (name, int(part)))
                    _tp_cache_size += 1
                result[tp] = int(offset)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"Checkpointed offsets are not of the form {{topic: {{partition: offset}}}}: {data!r}"
        ) from exc
    return result
