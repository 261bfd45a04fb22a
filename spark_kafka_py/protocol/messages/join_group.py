"""JoinGroup (API key 11): join a classic consumer group and get elected leader or follower.

Source: Kafka message specs ``JoinGroupRequest.json`` / ``JoinGroupResponse.json`` (valid
versions 0-9, flexible 6+). v1 ``rebalance_timeout_ms``; v4 a first join with an empty
``member_id`` is answered MEMBER_ID_REQUIRED with the id to rejoin with (KIP-394); v5
``group_instance_id`` (static membership, KIP-345); v7 ``protocol_type`` in the response
(KIP-559); v8 ``reason`` (KIP-800); v9 ``skip_assignment`` (KIP-814). We support 0-9.

``metadata`` of a protocol is the ``ConsumerProtocolSubscription`` bytes for protocol type
``"consumer"`` (encoded elsewhere).
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BOOL,
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
    "JOIN_GROUP_KEY",
    "JoinGroupRequest",
    "JoinGroupRequestProtocol",
    "JoinGroupResponse",
    "JoinGroupResponseMember",
]

JOIN_GROUP_KEY = 11


@kafka_struct
class JoinGroupRequestProtocol:
    """A protocol (assignor) the member supports: ``name`` and its ``metadata`` bytes."""

    name: str = kfield(STRING, "0+")
    metadata: bytes | memoryview = kfield(BYTES, "0+")


@kafka_message(api_key=JOIN_GROUP_KEY, valid="0-9", flexible="6+", supported=(0, 9))
class JoinGroupRequest(Request["JoinGroupResponse"]):
    """JoinGroup request, versions 0-9. Times in ms."""

    group_id: str = kfield(STRING, "0+")
    session_timeout_ms: int = kfield(INT32, "0+")
    rebalance_timeout_ms: int = kfield(INT32, "1+", default=-1, ignorable=True)
    member_id: str = kfield(STRING, "0+")
    group_instance_id: str | None = kfield(STRING, "5+", nullable_versions="5+", default=None)
    protocol_type: str = kfield(STRING, "0+")
    protocols: tuple[JoinGroupRequestProtocol, ...] = kfield(Array(JoinGroupRequestProtocol), "0+")
    reason: str | None = kfield(STRING, "8+", nullable_versions="8+", default=None, ignorable=True)


@kafka_struct
class JoinGroupResponseMember:
    """A group member (sent to the leader only) with its subscription ``metadata``."""

    member_id: str = kfield(STRING, "0+")
    group_instance_id: str | None = kfield(
        STRING, "5+", nullable_versions="5+", default=None, ignorable=True
    )
    metadata: bytes | memoryview = kfield(BYTES, "0+")


@kafka_message(api_key=JOIN_GROUP_KEY, valid="0-9", flexible="6+", supported=(0, 9))
class JoinGroupResponse(Response):
    """JoinGroup response, versions 0-9. ``leader == member_id`` means we are the leader."""

    throttle_time_ms: int = kfield(INT32, "2+", ignorable=True)
    error_code: int = kfield(INT16, "0+")
    generation_id: int = kfield(INT32, "0+", default=-1)
    protocol_type: str | None = kfield(
        STRING, "7+", nullable_versions="7+", default=None, ignorable=True
    )
    protocol_name: str | None = kfield(STRING, "0+", nullable_versions="7+")
    leader: str = kfield(STRING, "0+")
    skip_assignment: bool = kfield(BOOL, "9+", default=False)
    member_id: str = kfield(STRING, "0+")
    members: tuple[JoinGroupResponseMember, ...] = kfield(Array(JoinGroupResponseMember), "0+")


JoinGroupRequest.response_type = JoinGroupResponse
