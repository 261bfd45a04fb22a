"""OffsetFetch (API key 9): a group's committed offsets.

Source: Kafka message specs ``OffsetFetchRequest.json`` / ``OffsetFetchResponse.json`` (valid
versions 1-10, flexible 6+). v2 ``topics=None`` fetches all topics and adds a top-level
``error_code``; v5 ``committed_leader_epoch``; v7 ``require_stable`` (KIP-447); v8 batches
several ``groups`` (KIP-709) instead of ``group_id``/``topics``; v9 ``member_id`` and
``member_epoch`` (KIP-848); v10 addresses topics by ``topic_id`` only.

We support versions 1-9 (topics by name). Deviation from the spec, on purpose: the v0-7 and
v8+ forms (``group_id``/``topics`` vs ``groups``) are both marked ignorable so that a caller
can fill both and send the negotiated version.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    BOOL,
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
    "OFFSET_FETCH_KEY",
    "OffsetFetchRequest",
    "OffsetFetchRequestGroup",
    "OffsetFetchRequestTopic",
    "OffsetFetchRequestTopics",
    "OffsetFetchResponse",
    "OffsetFetchResponseGroup",
    "OffsetFetchResponsePartition",
    "OffsetFetchResponsePartitions",
    "OffsetFetchResponseTopic",
    "OffsetFetchResponseTopics",
]

OFFSET_FETCH_KEY = 9


@kafka_struct
class OffsetFetchRequestTopic:
    """A topic and partitions to look up (v0-7)."""

    name: str = kfield(STRING, "0-7")
    partition_indexes: tuple[int, ...] = kfield(Array(INT32), "0-7")


@kafka_struct
class OffsetFetchRequestTopics:
    """A topic and partitions to look up (v8+; by ``topic_id`` from v10)."""

    name: str = kfield(STRING, "8-9", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "10+", default=ZERO_UUID, ignorable=True)
    partition_indexes: tuple[int, ...] = kfield(Array(INT32), "8+")


@kafka_struct
class OffsetFetchRequestGroup:
    """One group to look up (v8+); ``topics=None`` means all topics."""

    group_id: str = kfield(STRING, "8+")
    member_id: str | None = kfield(
        STRING, "9+", nullable_versions="9+", default=None, ignorable=True
    )
    member_epoch: int = kfield(INT32, "9+", default=-1, ignorable=True)
    topics: tuple[OffsetFetchRequestTopics, ...] | None = kfield(
        Array(OffsetFetchRequestTopics), "8+", nullable_versions="8+"
    )


@kafka_message(api_key=OFFSET_FETCH_KEY, valid="1-10", flexible="6+", supported=(1, 9))
class OffsetFetchRequest(Request["OffsetFetchResponse"]):
    """OffsetFetch request, versions 1-9. ``topics=None`` (v2+) means all topics."""

    group_id: str = kfield(STRING, "0-7", ignorable=True)
    topics: tuple[OffsetFetchRequestTopic, ...] | None = kfield(
        Array(OffsetFetchRequestTopic), "0-7", nullable_versions="2-7", ignorable=True
    )
    groups: tuple[OffsetFetchRequestGroup, ...] = kfield(
        Array(OffsetFetchRequestGroup), "8+", ignorable=True
    )
    require_stable: bool = kfield(BOOL, "7+", default=False)


@kafka_struct
class OffsetFetchResponsePartition:
    """A committed offset (v0-7): -1 if none; ``metadata`` is the committer's string."""

    partition_index: int = kfield(INT32, "0-7")
    committed_offset: int = kfield(INT64, "0-7")
    committed_leader_epoch: int = kfield(INT32, "5-7", default=-1, ignorable=True)
    metadata: str | None = kfield(STRING, "0-7", nullable_versions="0-7")
    error_code: int = kfield(INT16, "0-7")


@kafka_struct
class OffsetFetchResponseTopic:
    """A topic's committed offsets (v0-7)."""

    name: str = kfield(STRING, "0-7")
    partitions: tuple[OffsetFetchResponsePartition, ...] = kfield(
        Array(OffsetFetchResponsePartition), "0-7"
    )


@kafka_struct
class OffsetFetchResponsePartitions:
    """A committed offset (v8+): -1 if none."""

    partition_index: int = kfield(INT32, "8+")
    committed_offset: int = kfield(INT64, "8+")
    committed_leader_epoch: int = kfield(INT32, "8+", default=-1, ignorable=True)
    metadata: str | None = kfield(STRING, "8+", nullable_versions="8+")
    error_code: int = kfield(INT16, "8+")


@kafka_struct
class OffsetFetchResponseTopics:
    """A topic's committed offsets (v8+)."""

    name: str = kfield(STRING, "8-9", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "10+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[OffsetFetchResponsePartitions, ...] = kfield(
        Array(OffsetFetchResponsePartitions), "8+"
    )


@kafka_struct
class OffsetFetchResponseGroup:
    """One group's answer (v8+), with a group-level ``error_code``."""

    group_id: str = kfield(STRING, "8+")
    topics: tuple[OffsetFetchResponseTopics, ...] = kfield(Array(OffsetFetchResponseTopics), "8+")
    error_code: int = kfield(INT16, "8+", default=0)


@kafka_message(api_key=OFFSET_FETCH_KEY, valid="1-10", flexible="6+", supported=(1, 9))
class OffsetFetchResponse(Response):
    """OffsetFetch response, versions 1-9: ``topics``/``error_code`` (v1-7) or ``groups``."""

    throttle_time_ms: int = kfield(INT32, "3+", ignorable=True)
    topics: tuple[OffsetFetchResponseTopic, ...] = kfield(Array(OffsetFetchResponseTopic), "0-7")
    error_code: int = kfield(INT16, "2-7", default=0, ignorable=True)
    groups: tuple[OffsetFetchResponseGroup, ...] = kfield(Array(OffsetFetchResponseGroup), "8+")


OffsetFetchRequest.response_type = OffsetFetchResponse
