"""CreateTopics (API key 19): create topics with a partition count, replication factor and
configuration.

Source: Kafka message specs ``CreateTopicsRequest.json`` / ``CreateTopicsResponse.json``
(valid versions 2-7, flexible 5+; Kafka 4 removed v0-1, KIP-896). Version notes from the spec:
v1 adds ``validate_only``; v2 ``throttle_time_ms``; v3/v4 are v2 (v4: ``num_partitions`` and
``replication_factor`` may be -1 for the broker's defaults, KIP-464); v5 flexible, and the
response carries the created topic's partition count, replication factor and configuration
(KIP-525); v6 may return a throttled quota error; v7 the topic id (KIP-516). Sent to any
broker (KRaft brokers forward it to the controller). We support versions 2-7.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "CREATE_TOPICS_KEY",
    "CreatableReplicaAssignment",
    "CreatableTopic",
    "CreatableTopicConfig",
    "CreatableTopicConfigs",
    "CreatableTopicResult",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
]

CREATE_TOPICS_KEY = 19


@kafka_struct
class CreatableReplicaAssignment:
    """A manual assignment: the brokers of one partition."""

    partition_index: int = kfield(INT32, "0+")
    broker_ids: tuple[int, ...] = kfield(Array(INT32), "0+")


@kafka_struct
class CreatableTopicConfig:
    """A topic configuration to set (``value`` ``None``: the default)."""

    name: str = kfield(STRING, "0+")
    value: str | None = kfield(STRING, "0+", nullable_versions="0+")


@kafka_struct
class CreatableTopic:
    """A topic to create: ``num_partitions``/``replication_factor`` -1 for the broker's
    defaults (v4+) or with a manual ``assignments``."""

    name: str = kfield(STRING, "0+")
    num_partitions: int = kfield(INT32, "0+")
    replication_factor: int = kfield(INT16, "0+")
    assignments: tuple[CreatableReplicaAssignment, ...] = kfield(
        Array(CreatableReplicaAssignment), "0+"
    )
    configs: tuple[CreatableTopicConfig, ...] = kfield(Array(CreatableTopicConfig), "0+")


@kafka_message(api_key=CREATE_TOPICS_KEY, valid="2-7", flexible="5+", supported=(2, 7))
class CreateTopicsRequest(Request["CreateTopicsResponse"]):
    """CreateTopics request, versions 2-7 (``timeout_ms``: how long the broker waits for the
    topics to be created, ms)."""

    topics: tuple[CreatableTopic, ...] = kfield(Array(CreatableTopic), "0+")
    timeout_ms: int = kfield(INT32, "0+", default=60000)
    validate_only: bool = kfield(BOOL, "1+", default=False)


@kafka_struct
class CreatableTopicConfigs:
    """A configuration of the created topic (v5+)."""

    name: str = kfield(STRING, "5+")
    value: str | None = kfield(STRING, "5+", nullable_versions="5+")
    read_only: bool = kfield(BOOL, "5+")
    config_source: int = kfield(INT8, "5+", default=-1, ignorable=True)
    is_sensitive: bool = kfield(BOOL, "5+")


@kafka_struct
class CreatableTopicResult:
    """One topic's result: error (TOPIC_ALREADY_EXISTS, ...) and message; v5+ what was
    created."""

    name: str = kfield(STRING, "0+")
    topic_id: uuid.UUID = kfield(UUID, "7+", default=ZERO_UUID, ignorable=True)
    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(STRING, "1+", nullable_versions="0+", ignorable=True)
    topic_config_error_code: int = kfield(INT16, "5+", tag=0, tagged_versions="5+", ignorable=True)
    num_partitions: int = kfield(INT32, "5+", default=-1, ignorable=True)
    replication_factor: int = kfield(INT16, "5+", default=-1, ignorable=True)
    configs: tuple[CreatableTopicConfigs, ...] | None = kfield(
        Array(CreatableTopicConfigs), "5+", nullable_versions="5+", ignorable=True
    )


@kafka_message(api_key=CREATE_TOPICS_KEY, valid="2-7", flexible="5+", supported=(2, 7))
class CreateTopicsResponse(Response):
    """CreateTopics response, versions 2-7: one result per topic asked."""

    throttle_time_ms: int = kfield(INT32, "2+", ignorable=True)
    topics: tuple[CreatableTopicResult, ...] = kfield(Array(CreatableTopicResult), "0+")


CreateTopicsRequest.response_type = CreateTopicsResponse
