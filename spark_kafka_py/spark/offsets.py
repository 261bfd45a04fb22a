"""The streaming offset model: ``{topic: {partition: next offset}}``.

Spark checkpoints the dicts a ``DataSourceStreamReader`` returns as JSON. Ours have the same
shape as Spark's Kafka source offsets (``JsonUtils.partitionOffsets``): topic name, then the
partition number as a string, then the offset of the *next* record to read. They are built in
canonical order (topics sorted, partitions sorted numerically) so equal offsets always
serialise to equal JSON.
"""

from __future__ import annotations

from collections.abc import Mapping

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError

#: ``dict[topic, dict[str(partition), offset]]``, as checkpointed by Spark.
OffsetDict = dict[str, dict[str, int]]


def to_offset_dict(offsets: Mapping[TopicPartition, int]) -> OffsetDict:
    """Turn ``{TopicPartition: offset}`` into the canonical checkpoint dict."""
    out: OffsetDict = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return out


def from_offset_dict(data: Mapping[str, Mapping[str, int]] | None) -> dict[TopicPartition, int]:
    """Parse a checkpoint dict back into ``{TopicPartition: offset}``.

    Raises:
        ConfigError: the checkpointed offsets are not of our shape (e.g. a checkpoint
            written by another source).
    """
    if not data:
        return {}
    result: dict[TopicPartition, int] = {}
    try:
        for topic, parts in data.items():
            for part, offset in parts.items():
                result[TopicPartition(str(topic), int(part))] = int(offset)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"Checkpointed offsets are not of the form {{topic: {{partition: offset}}}}: {data!r}"
        ) from exc
    return result
