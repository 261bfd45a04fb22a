"""SyncGroup (API key 14): the leader sends assignments; every member receives its own.

Source: Kafka message specs ``SyncGroupRequest.json`` / ``SyncGroupResponse.json`` (valid
versions 0-5, flexible 4+). v3 ``group_instance_id`` (KIP-345); v5 ``protocol_type`` and
``protocol_name`` in both directions (KIP-559). We support 0-5.

``assignment`` is ``ConsumerProtocolAssignment`` bytes for protocol type ``"consumer"``.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BYTES,
    INT16,
    INT32,
    STRING,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "SYNC_GROUP_KEY",
    "SyncGroupRequest",
    "SyncGroupRequestAssignment",
    "SyncGroupResponse",
]

SYNC_GROUP_KEY = 14


@kafka_struct
class SyncGroupRequestAssignment:
    """The leader's assignment for one member."""

    member_id: str = kfield(STRING, "0+")
    assignment: bytes | memoryview = kfield(BYTES, "0+")


@kafka_message(api_key=SYNC_GROUP_KEY, valid="0-5", flexible="4+", supported=(0, 5))
class SyncGroupRequest(Request["SyncGroupResponse"]):
    """SyncGroup request, versions 0-5 (followers send no ``assignments``)."""

    group_id: str = kfield(STRING, "0+")
    generation_id: int = kfield(INT32, "0+")
    member_id: str = kfield(STRING, "0+")
    group_instance_id: str | None = kfield(STRING, "3+", nullable_versions="3+", default=None)
    protocol_type: str | None = kfield(
        STRING, "5+", nullable_versions="5+", default=None, ignorable=True
    )
    protocol_name: str | None = kfield(
        STRING, "5+", nullable_versions="5+", default=None, ignorable=True
    )
    assignments: tuple[SyncGroupRequestAssignment, ...] = kfield(
        Array(SyncGroupRequestAssignment), "0+"
    )


@kafka_message(api_key=SYNC_GROUP_KEY, valid="0-5", flexible="4+", supported=(0, 5))
class SyncGroupResponse(Response):
    """SyncGroup response, versions 0-5: this member's ``assignment``."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    error_code: int = kfield(INT16, "0+")
    protocol_type: str | None = kfield(
        STRING, "5+", nullable_versions="5+", default=None, ignorable=True
    )
    protocol_name: str | None = kfield(
        STRING, "5+", nullable_versions="5+", default=None, ignorable=True
    )
    assignment: bytes | memoryview = kfield(BYTES, "0+")


SyncGroupRequest.response_type = SyncGroupResponse
