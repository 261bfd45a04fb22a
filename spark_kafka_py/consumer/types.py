"""Small value types shared by the consumer and Spark layers.

Each is defined once, where the lowest layer needs it, and re-exported here: the ListOffsets
timestamps in :mod:`spark_kafka_py.protocol.messages.list_offsets`, the isolation levels in
:mod:`spark_kafka_py.protocol.messages.fetch`, :class:`TopicPartition` in
:mod:`spark_kafka_py.protocol.topic_partition`.
"""

from __future__ import annotations

from spark_kafka_py.protocol.messages.fetch import READ_COMMITTED, READ_UNCOMMITTED
from spark_kafka_py.protocol.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from spark_kafka_py.protocol.topic_partition import TopicPartition

__all__ = [
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "TopicPartition",
]
