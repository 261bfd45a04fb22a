"""The timestamp type of topics, read with DescribeConfigs
(:func:`spark_kafka_py.admin.configs.describe_topic_configs`).

The pushdown planner needs to know, per topic, whether record timestamps are the
broker's (``message.timestamp.type=LogAppendTime``: assigned when the batch is appended, so
non-decreasing along the log and an upper timestamp bound may narrow the end of an offset
range) or the producers' (``CreateTime``: any order, the end is never pruned).

Source: the topic configuration ``message.timestamp.type`` (Kafka's
``TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG``, values ``CreateTime`` and ``LogAppendTime``,
KIP-32).
"""

from __future__ import annotations

from collections.abc import Sequence

from spark_kafka_py.admin.configs import describe_topic_configs
from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.errors import KafkaProtocolError

__all__ = [
    "CREATE_TIME",
    "LOG_APPEND_TIME",
    "MESSAGE_TIMESTAMP_TYPE",
    "timestamp_types",
]

#: The topic configuration naming who sets record timestamps (Kafka's ``TopicConfig``).
MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type"
#: ``message.timestamp.type``: the producer's timestamp is kept (Kafka's default).
CREATE_TIME = "CreateTime"
#: ``message.timestamp.type``: the broker stamps each batch with its append time.
LOG_APPEND_TIME = "LogAppendTime"
_TIMESTAMP_TYPES = frozenset({CREATE_TIME, LOG_APPEND_TIME})


def timestamp_types(
    client: KafkaClient, topics: Sequence[str], *, timeout_ms: int
) -> dict[str, str]:
    """The ``message.timestamp.type`` of each topic: :data:`CREATE_TIME` (``"CreateTime"``,
    producer timestamps, in any order) or :data:`LOG_APPEND_TIME` (``"LogAppendTime"``, the
    broker's append time, non-decreasing along a partition's log).

    One DescribeConfigs request for all ``topics`` (see
    :func:`~spark_kafka_py.admin.configs.describe_topic_configs`, whose arguments and errors
    these are); the value in force is reported, whether set on the topic or inherited from the
    broker's ``log.message.timestamp.type``.

    Returns:
        ``{topic: "CreateTime" | "LogAppendTime"}`` for every topic asked.

    Raises:
        KafkaProtocolError: a topic's answer lacks ``message.timestamp.type`` or holds another
            value.
        and as :func:`~spark_kafka_py.admin.configs.describe_topic_configs`.
    """
    configs = describe_topic_configs(
        client, topics, [MESSAGE_TIMESTAMP_TYPE], timeout_ms=timeout_ms
    )
    out: dict[str, str] = {}
    for topic, values in configs.items():
        value = values.get(MESSAGE_TIMESTAMP_TYPE)
        if value not in _TIMESTAMP_TYPES:
            what = "no value" if value is None else f"{value!r}"
            raise KafkaProtocolError(
                f"DescribeConfigs for topic '{topic}' answered {what} for "
                f"{MESSAGE_TIMESTAMP_TYPE} (expected {CREATE_TIME} or {LOG_APPEND_TIME})"
            )
        out[topic] = value
    return out
