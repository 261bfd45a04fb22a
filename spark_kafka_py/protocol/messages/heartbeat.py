"""Heartbeat (API key 12): keep a classic group membership alive.

Source: Kafka message specs ``HeartbeatRequest.json`` / ``HeartbeatResponse.json`` (valid
versions 0-4, flexible 4+); v3 ``group_instance_id`` (KIP-345). REBALANCE_IN_PROGRESS in the
answer means: rejoin. We support 0-4.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Request,
    Response,
    kafka_message,
    kfield,
)

__all__ = ["HEARTBEAT_KEY", "HeartbeatRequest", "HeartbeatResponse"]

HEARTBEAT_KEY = 12


@kafka_message(api_key=HEARTBEAT_KEY, valid="0-4", flexible="4+", supported=(0, 4))
class HeartbeatResponse(Response):
    """Heartbeat response, versions 0-4."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    error_code: int = kfield(INT16, "0+")


@kafka_message(api_key=HEARTBEAT_KEY, valid="0-4", flexible="4+", supported=(0, 4))
class HeartbeatRequest(Request["HeartbeatResponse"]):
    """Heartbeat request, versions 0-4."""

    group_id: str = kfield(STRING, "0+")
    generation_id: int = kfield(INT32, "0+")
    member_id: str = kfield(STRING, "0+")
    group_instance_id: str | None = kfield(STRING, "3+", nullable_versions="3+", default=None)


HeartbeatRequest.response_type = HeartbeatResponse
