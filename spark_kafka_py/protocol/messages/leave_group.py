"""LeaveGroup (API key 13): leave a classic consumer group.

Source: Kafka message specs ``LeaveGroupRequest.json`` / ``LeaveGroupResponse.json`` (valid
versions 0-5, flexible 4+). v3 replaces the single ``member_id`` by a batch of ``members``
(``MemberIdentity``, KIP-345); v5 adds ``reason`` (KIP-800). We support 0-5.

Deviation from the spec, on purpose: ``member_id`` (v0-2) and ``members`` (v3+) are both
marked ignorable so that a caller can fill both and send the negotiated version.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
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
    "LEAVE_GROUP_KEY",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
    "MemberIdentity",
    "MemberResponse",
]

LEAVE_GROUP_KEY = 13


@kafka_struct
class MemberIdentity:
    """A member leaving (v3+)."""

    member_id: str = kfield(STRING, "3+")
    group_instance_id: str | None = kfield(STRING, "3+", nullable_versions="3+", default=None)
    reason: str | None = kfield(STRING, "5+", nullable_versions="5+", default=None, ignorable=True)


@kafka_message(api_key=LEAVE_GROUP_KEY, valid="0-5", flexible="4+", supported=(0, 5))
class LeaveGroupRequest(Request["LeaveGroupResponse"]):
    """LeaveGroup request, versions 0-5."""

    group_id: str = kfield(STRING, "0+")
    member_id: str = kfield(STRING, "0-2", ignorable=True)
    members: tuple[MemberIdentity, ...] = kfield(Array(MemberIdentity), "3+", ignorable=True)


@kafka_struct
class MemberResponse:
    """Per-member result (v3+)."""

    member_id: str = kfield(STRING, "3+")
    group_instance_id: str | None = kfield(STRING, "3+", nullable_versions="3+")
    error_code: int = kfield(INT16, "3+")


@kafka_message(api_key=LEAVE_GROUP_KEY, valid="0-5", flexible="4+", supported=(0, 5))
class LeaveGroupResponse(Response):
    """LeaveGroup response, versions 0-5."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    error_code: int = kfield(INT16, "0+")
    members: tuple[MemberResponse, ...] = kfield(Array(MemberResponse), "3+")


LeaveGroupRequest.response_type = LeaveGroupResponse
