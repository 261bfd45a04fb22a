"""A partition of a topic: the one value type the consumer, producer and Spark layers share."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["TopicPartition"]


class TopicPartition(NamedTuple):
    """A partition of a topic, as Kafka's ``org.apache.kafka.common.TopicPartition``; prints
    as ``topic-partition``. Equal to (and hashes as) the plain tuple ``(topic, partition)``."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"
