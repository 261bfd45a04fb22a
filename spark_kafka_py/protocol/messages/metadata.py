"""Metadata (API key 3): brokers, topics, partitions, leaders.

Source: Kafka message specs ``MetadataRequest.json`` / ``MetadataResponse.json`` (valid
versions 0-13, flexible 9+). Notes from the spec:

* v1+: ``topics=None`` asks for all topics; an empty list asks for none.
* v4+: ``allow_auto_topic_creation`` (default true; a reader should send false).
* v10/v11 carry ``topic_id`` but brokers ignore it there; v12+ can address topics by id
  (KIP-516) and the response topic ``name`` becomes nullable.
* v13 adds a top-level ``error_code`` (KIP-1102).

We support versions 1-13.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    BOOL,
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
    "AUTHORIZED_OPERATIONS_OMITTED",
    "METADATA_KEY",
    "MetadataRequest",
    "MetadataRequestTopic",
    "MetadataResponse",
    "MetadataResponseBroker",
    "MetadataResponsePartition",
    "MetadataResponseTopic",
]

METADATA_KEY = 3
#: ``TopicAuthorizedOperations``/``ClusterAuthorizedOperations`` default: not requested.
AUTHORIZED_OPERATIONS_OMITTED = -2147483648


@kafka_struct
class MetadataRequestTopic:
    """A topic to describe: by ``name``, or (v12+) by ``topic_id`` with ``name=None``."""

    topic_id: uuid.UUID = kfield(UUID, "10+", default=ZERO_UUID, ignorable=True)
    name: str | None = kfield(STRING, "0+", nullable_versions="10+")


@kafka_message(api_key=METADATA_KEY, valid="0-13", flexible="9+", supported=(1, 13))
class MetadataRequest(Request["MetadataResponse"]):
    """Metadata request, versions 1-13. ``topics=None`` means all topics."""

    topics: tuple[MetadataRequestTopic, ...] | None = kfield(
        Array(MetadataRequestTopic), "0+", nullable_versions="1+"
    )
    allow_auto_topic_creation: bool = kfield(BOOL, "4+", default=True)
    include_cluster_authorized_operations: bool = kfield(BOOL, "8-10")
    include_topic_authorized_operations: bool = kfield(BOOL, "8+")


@kafka_struct
class MetadataResponseBroker:
    """A broker: ``node_id``, ``host``, ``port`` and (v1+) ``rack`` (``None`` if unset)."""

    node_id: int = kfield(INT32, "0+")
    host: str = kfield(STRING, "0+")
    port: int = kfield(INT32, "0+")
    rack: str | None = kfield(STRING, "1+", nullable_versions="1+", default=None, ignorable=True)


@kafka_struct
class MetadataResponsePartition:
    """A partition: its leader (-1 if none), leader epoch (v7+), replicas, ISR, offline."""

    error_code: int = kfield(INT16, "0+")
    partition_index: int = kfield(INT32, "0+")
    leader_id: int = kfield(INT32, "0+")
    leader_epoch: int = kfield(INT32, "7+", default=-1, ignorable=True)
    replica_nodes: tuple[int, ...] = kfield(Array(INT32), "0+")
    isr_nodes: tuple[int, ...] = kfield(Array(INT32), "0+")
    offline_replicas: tuple[int, ...] = kfield(Array(INT32), "5+", ignorable=True)


@kafka_struct
class MetadataResponseTopic:
    """A topic: error, name (nullable v12+), id (v10+; ``ZERO_UUID`` if unknown), partitions."""

    error_code: int = kfield(INT16, "0+")
    name: str | None = kfield(STRING, "0+", nullable_versions="12+")
    topic_id: uuid.UUID = kfield(UUID, "10+", default=ZERO_UUID, ignorable=True)
    is_internal: bool = kfield(BOOL, "1+", default=False, ignorable=True)
    partitions: tuple[MetadataResponsePartition, ...] = kfield(
        Array(MetadataResponsePartition), "0+"
    )
    topic_authorized_operations: int = kfield(INT32, "8+", default=AUTHORIZED_OPERATIONS_OMITTED)


@kafka_message(api_key=METADATA_KEY, valid="0-13", flexible="9+", supported=(1, 13))
class MetadataResponse(Response):
    """Metadata response, versions 1-13."""

    throttle_time_ms: int = kfield(INT32, "3+", ignorable=True)
    brokers: tuple[MetadataResponseBroker, ...] = kfield(Array(MetadataResponseBroker), "0+")
    cluster_id: str | None = kfield(
        STRING, "2+", nullable_versions="2+", default=None, ignorable=True
    )
    controller_id: int = kfield(INT32, "1+", default=-1, ignorable=True)
    topics: tuple[MetadataResponseTopic, ...] = kfield(Array(MetadataResponseTopic), "0+")
    cluster_authorized_operations: int = kfield(
        INT32, "8-10", default=AUTHORIZED_OPERATIONS_OMITTED
    )
    error_code: int = kfield(INT16, "13+", ignorable=True)


MetadataRequest.response_type = MetadataResponse
