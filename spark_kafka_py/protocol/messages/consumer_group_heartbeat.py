"""ConsumerGroupHeartbeat (API key 68, KIP-848): a member of a group using the consumer group
protocol joins, heartbeats, acknowledges its assignment and leaves with this one request.

Source: Kafka message specs ``ConsumerGroupHeartbeatRequest.json`` /
``ConsumerGroupHeartbeatResponse.json`` (valid versions 0-1, flexible 0+; Kafka 3.9 knows only
v0, Kafka 4.0+ serves 0-1). v1 adds ``subscribed_topic_regex`` and requires the member to
generate its own ``member_id`` (KIP-1082); in v0 the coordinator may assign one.

Request fields other than ``group_id``, ``member_id`` and ``member_epoch`` are *deltas*: ``None``
(or -1 for ``rebalance_timeout_ms``) means "unchanged since the last heartbeat"; a joining
member, or one recovering from an error, sends them all. ``member_epoch`` is
:data:`JOIN_GROUP_MEMBER_EPOCH` to join, :data:`LEAVE_GROUP_MEMBER_EPOCH` to leave,
:data:`LEAVE_GROUP_STATIC_MEMBER_EPOCH` for a static member (``instance_id`` set) that leaves
but will come back, else the epoch of the last response. Partitions are named by topic id
(UUID), as in Metadata v10+.

The response's ``assignment`` is ``None`` when unchanged, else the partitions the member may
use now (the coordinator holds back partitions another member has not yet released). Errors
named by the spec: GROUP_AUTHORIZATION_FAILED, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
COORDINATOR_LOAD_IN_PROGRESS, INVALID_REQUEST, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
UNSUPPORTED_ASSIGNOR, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
TOPIC_AUTHORIZATION_FAILED, INVALID_REGULAR_EXPRESSION (v1+). We support versions 0-1.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
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
    "CONSUMER_GROUP_HEARTBEAT_KEY",
    "JOIN_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "ConsumerGroupHeartbeatAssignment",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "ConsumerGroupHeartbeatTopicPartitions",
]

CONSUMER_GROUP_HEARTBEAT_KEY = 68

#: ``member_epoch`` of a member joining the group (KIP-848).
JOIN_GROUP_MEMBER_EPOCH = 0
#: ``member_epoch`` of a member leaving the group for good (KIP-848).
LEAVE_GROUP_MEMBER_EPOCH = -1
#: ``member_epoch`` of a static member (``group.instance.id``) leaving the group temporarily:
#: the coordinator keeps its assignment for ``session.timeout.ms`` (KIP-848).
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@kafka_struct
class ConsumerGroupHeartbeatTopicPartitions:
    """Partitions of one topic, by topic id: owned (request) or assigned (response)."""

    topic_id: uuid.UUID = kfield(UUID, "0+", default=ZERO_UUID)
    partitions: tuple[int, ...] = kfield(Array(INT32), "0+")


@kafka_message(api_key=CONSUMER_GROUP_HEARTBEAT_KEY, valid="0-1", flexible="0+", supported=(0, 1))
class ConsumerGroupHeartbeatRequest(Request["ConsumerGroupHeartbeatResponse"]):
    """ConsumerGroupHeartbeat request, versions 0-1.

    ``rebalance_timeout_ms`` (ms the coordinator waits for the member to revoke partitions;
    Java's consumer sends ``max.poll.interval.ms``), ``subscribed_topic_names``,
    ``subscribed_topic_regex`` (v1+), ``server_assignor`` (``"uniform"``, ``"range"``),
    ``topic_partitions`` (the partitions the member owns): -1 / ``None`` when unchanged.
    """

    group_id: str = kfield(STRING, "0+")
    member_id: str = kfield(STRING, "0+")
    member_epoch: int = kfield(INT32, "0+")
    instance_id: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    rack_id: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    rebalance_timeout_ms: int = kfield(INT32, "0+", default=-1)
    subscribed_topic_names: tuple[str, ...] | None = kfield(
        Array(STRING), "0+", nullable_versions="0+", default=None
    )
    subscribed_topic_regex: str | None = kfield(STRING, "1+", nullable_versions="1+", default=None)
    server_assignor: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    topic_partitions: tuple[ConsumerGroupHeartbeatTopicPartitions, ...] | None = kfield(
        Array(ConsumerGroupHeartbeatTopicPartitions), "0+", nullable_versions="0+", default=None
    )


@kafka_struct
class ConsumerGroupHeartbeatAssignment:
    """The member's assignment: the partitions it may use now."""

    topic_partitions: tuple[ConsumerGroupHeartbeatTopicPartitions, ...] = kfield(
        Array(ConsumerGroupHeartbeatTopicPartitions), "0+"
    )


@kafka_message(api_key=CONSUMER_GROUP_HEARTBEAT_KEY, valid="0-1", flexible="0+", supported=(0, 1))
class ConsumerGroupHeartbeatResponse(Response):
    """ConsumerGroupHeartbeat response, versions 0-1: throttle time (ms), error and message,
    the member id (v0: possibly chosen by the coordinator), the new member epoch, the
    heartbeat interval (ms) and the assignment (``None``: unchanged)."""

    throttle_time_ms: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    member_id: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    member_epoch: int = kfield(INT32, "0+")
    heartbeat_interval_ms: int = kfield(INT32, "0+")
    assignment: ConsumerGroupHeartbeatAssignment | None = kfield(
        ConsumerGroupHeartbeatAssignment, "0+", nullable_versions="0+", default=None
    )


ConsumerGroupHeartbeatRequest.response_type = ConsumerGroupHeartbeatResponse
