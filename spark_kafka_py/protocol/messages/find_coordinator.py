"""FindCoordinator (API key 10): which broker coordinates a consumer group.

Source: Kafka message specs ``FindCoordinatorRequest.json`` / ``FindCoordinatorResponse.json``
(valid versions 0-6, flexible 3+). v1 adds ``key_type`` (0 group, 1 transaction; 2 share,
v6+, KIP-932); v4 batches several keys (``coordinator_keys`` / ``coordinators``, KIP-699)
instead of the single ``key`` and the top-level node fields of v0-3.

Deviation from the spec, on purpose: ``key`` and ``coordinator_keys`` are both marked
ignorable here so that a caller can fill both (``key=g, coordinator_keys=(g,)``) and send
whatever version was negotiated. We support versions 0-6.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    INT8,
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
    "FIND_COORDINATOR_KEY",
    "KEY_TYPE_GROUP",
    "KEY_TYPE_SHARE",
    "KEY_TYPE_TRANSACTION",
    "Coordinator",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
]

FIND_COORDINATOR_KEY = 10
#: ``key_type`` values.
KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1
KEY_TYPE_SHARE = 2


@kafka_message(api_key=FIND_COORDINATOR_KEY, valid="0-6", flexible="3+", supported=(0, 6))
class FindCoordinatorRequest(Request["FindCoordinatorResponse"]):
    """FindCoordinator request, versions 0-6: ``key`` (v0-3) or ``coordinator_keys`` (v4+)."""

    key: str = kfield(STRING, "0-3", ignorable=True)
    key_type: int = kfield(INT8, "1+", default=KEY_TYPE_GROUP)
    coordinator_keys: tuple[str, ...] = kfield(Array(STRING), "4+", ignorable=True)


@kafka_struct
class Coordinator:
    """One key's coordinator (v4+): broker ``node_id`` at ``host``:``port``, or an error."""

    key: str = kfield(STRING, "4+")
    node_id: int = kfield(INT32, "4+")
    host: str = kfield(STRING, "4+")
    port: int = kfield(INT32, "4+")
    error_code: int = kfield(INT16, "4+")
    error_message: str | None = kfield(STRING, "4+", nullable_versions="4+", ignorable=True)


@kafka_message(api_key=FIND_COORDINATOR_KEY, valid="0-6", flexible="3+", supported=(0, 6))
class FindCoordinatorResponse(Response):
    """FindCoordinator response, versions 0-6: top-level fields (v0-3) or ``coordinators``."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    error_code: int = kfield(INT16, "0-3")
    error_message: str | None = kfield(STRING, "1-3", nullable_versions="1-3", ignorable=True)
    node_id: int = kfield(INT32, "0-3")
    host: str = kfield(STRING, "0-3")
    port: int = kfield(INT32, "0-3")
    coordinators: tuple[Coordinator, ...] = kfield(Array(Coordinator), "4+")


FindCoordinatorRequest.response_type = FindCoordinatorResponse
