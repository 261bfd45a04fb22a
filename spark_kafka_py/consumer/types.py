"""Small value types shared by the consumer and Spark layers."""

from __future__ import annotations

from typing import NamedTuple

#: ListOffsets timestamp that asks for the log start offset (Kafka's ``EARLIEST_TIMESTAMP``).
EARLIEST_TIMESTAMP = -2
#: ListOffsets timestamp that asks for the high watermark, or the last stable offset under
#: ``read_committed`` (Kafka's ``LATEST_TIMESTAMP``).
LATEST_TIMESTAMP = -1

#: Isolation levels of Fetch v4+ and ListOffsets v2+ (KIP-98).
READ_UNCOMMITTED = 0
READ_COMMITTED = 1


class TopicPartition(NamedTuple):
    """A partition of a topic, as Kafka's ``TopicPartition``; prints as ``topic-partition``."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"
