"""OffsetCommit (API key 8): commit a group's offsets.

Source: Kafka message specs ``OffsetCommitRequest.json`` / ``OffsetCommitResponse.json``
(valid versions 2-10 since Kafka 4.0, flexible 8+). v2-4 carry ``retention_time_ms``
(removed in v5); v6 ``committed_leader_epoch`` (KIP-320); v7 ``group_instance_id``
(KIP-345); v9 usable with the KIP-848 protocol (``generation_id_or_member_epoch``); v10
addresses topics by ``topic_id`` only.

We support versions 2-9 (topics by name). A commit outside a group (Spark's stream commit
of a ``groupIdPrefix``-less query) uses ``generation_id_or_member_epoch=-1`` and an empty
``member_id``.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    INT64,
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
    "OFFSET_COMMIT_KEY",
    "OffsetCommitRequest",
    "OffsetCommitRequestPartition",
    "OffsetCommitRequestTopic",
    "OffsetCommitResponse",
    "OffsetCommitResponsePartition",
    "OffsetCommitResponseTopic",
]

OFFSET_COMMIT_KEY = 8


@kafka_struct
class OffsetCommitRequestPartition:
    """An offset to commit: the next offset to read, plus optional metadata string."""

    partition_index: int = kfield(INT32, "0+")
    committed_offset: int = kfield(INT64, "0+")
    committed_leader_epoch: int = kfield(INT32, "6+", default=-1, ignorable=True)
    committed_metadata: str | None = kfield(STRING, "0+", nullable_versions="0+")


@kafka_struct
class OffsetCommitRequestTopic:
    """A topic's offsets to commit: ``name`` (v2-9) or ``topic_id`` (v10+)."""

    name: str = kfield(STRING, "0-9", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "10+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[OffsetCommitRequestPartition, ...] = kfield(
        Array(OffsetCommitRequestPartition), "0+"
    )


@kafka_message(api_key=OFFSET_COMMIT_KEY, valid="2-10", flexible="8+", supported=(2, 9))
class OffsetCommitRequest(Request["OffsetCommitResponse"]):
    """OffsetCommit request, versions 2-9. ``retention_time_ms`` -1 = broker default."""

    group_id: str = kfield(STRING, "0+")
    generation_id_or_member_epoch: int = kfield(INT32, "1+", default=-1, ignorable=True)
    member_id: str = kfield(STRING, "1+", ignorable=True)
    group_instance_id: str | None = kfield(STRING, "7+", nullable_versions="7+", default=None)
    retention_time_ms: int = kfield(INT64, "2-4", default=-1, ignorable=True)
    topics: tuple[OffsetCommitRequestTopic, ...] = kfield(Array(OffsetCommitRequestTopic), "0+")


@kafka_struct
class OffsetCommitResponsePartition:
    """One partition's commit result."""

    partition_index: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")


@kafka_struct
class OffsetCommitResponseTopic:
    """A topic's commit results."""

    name: str = kfield(STRING, "0-9", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "10+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[OffsetCommitResponsePartition, ...] = kfield(
        Array(OffsetCommitResponsePartition), "0+"
    )


@kafka_message(api_key=OFFSET_COMMIT_KEY, valid="2-10", flexible="8+", supported=(2, 9))
class OffsetCommitResponse(Response):
    """OffsetCommit response, versions 2-9."""

    throttle_time_ms: int = kfield(INT32, "3+", ignorable=True)
    topics: tuple[OffsetCommitResponseTopic, ...] = kfield(Array(OffsetCommitResponseTopic), "0+")


OffsetCommitRequest.response_type = OffsetCommitResponse
