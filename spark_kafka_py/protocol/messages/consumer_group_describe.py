"""ConsumerGroupDescribe (API key 69, KIP-848): the state of groups using the consumer group
protocol, with each member's epoch, subscription, current and target assignment.

Source: Kafka message specs ``ConsumerGroupDescribeRequest.json`` /
``ConsumerGroupDescribeResponse.json`` (valid versions 0-1, flexible 0+; Kafka 3.9 knows only
v0). v1 adds the member's ``member_type`` (KIP-1099; the request is unchanged). Partitions are
named by topic id and topic name. Errors named by the spec: GROUP_AUTHORIZATION_FAILED,
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, INVALID_REQUEST,
INVALID_GROUP_ID, GROUP_ID_NOT_FOUND (the group does not exist, or is a classic group),
TOPIC_AUTHORIZATION_FAILED. Send it to the group's coordinator. We support versions 0-1.
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
    "AUTHORIZED_OPERATIONS_OMITTED",
    "CONSUMER_GROUP_DESCRIBE_KEY",
    "MEMBER_TYPE_CLASSIC",
    "MEMBER_TYPE_CONSUMER",
    "MEMBER_TYPE_UNKNOWN",
    "ConsumerGroupDescribeAssignment",
    "ConsumerGroupDescribeGroup",
    "ConsumerGroupDescribeMember",
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupDescribeTopicPartitions",
]

CONSUMER_GROUP_DESCRIBE_KEY = 69

#: ``authorized_operations`` when they were not asked for (``INT32_MIN``, the spec's default).
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
#: ``member_type`` (v1+, KIP-1099): not known (and what v0 decodes to).
MEMBER_TYPE_UNKNOWN = -1
#: ``member_type``: a classic-protocol member of a consumer group (KIP-848 upgrade path).
MEMBER_TYPE_CLASSIC = 0
#: ``member_type``: a member speaking ConsumerGroupHeartbeat.
MEMBER_TYPE_CONSUMER = 1


@kafka_message(api_key=CONSUMER_GROUP_DESCRIBE_KEY, valid="0-1", flexible="0+", supported=(0, 1))
class ConsumerGroupDescribeRequest(Request["ConsumerGroupDescribeResponse"]):
    """ConsumerGroupDescribe request, versions 0-1: group ids, and whether to include the
    operations the caller may perform on each group."""

    group_ids: tuple[str, ...] = kfield(Array(STRING), "0+")
    include_authorized_operations: bool = kfield(BOOL, "0+", default=False)


@kafka_struct
class ConsumerGroupDescribeTopicPartitions:
    """Partitions of one topic: its id, its name and the partition numbers."""

    topic_id: uuid.UUID = kfield(UUID, "0+", default=ZERO_UUID)
    topic_name: str = kfield(STRING, "0+")
    partitions: tuple[int, ...] = kfield(Array(INT32), "0+")


@kafka_struct
class ConsumerGroupDescribeAssignment:
    """A member's (current or target) assignment."""

    topic_partitions: tuple[ConsumerGroupDescribeTopicPartitions, ...] = kfield(
        Array(ConsumerGroupDescribeTopicPartitions), "0+"
    )


@kafka_struct
class ConsumerGroupDescribeMember:
    """One member: ids, epoch, client, subscription, current and target assignment, and (v1+)
    its type (``MEMBER_TYPE_*``)."""

    member_id: str = kfield(STRING, "0+")
    instance_id: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    rack_id: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    member_epoch: int = kfield(INT32, "0+")
    client_id: str = kfield(STRING, "0+")
    client_host: str = kfield(STRING, "0+")
    subscribed_topic_names: tuple[str, ...] = kfield(Array(STRING), "0+")
    subscribed_topic_regex: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    assignment: ConsumerGroupDescribeAssignment = kfield(ConsumerGroupDescribeAssignment, "0+")
    target_assignment: ConsumerGroupDescribeAssignment = kfield(
        ConsumerGroupDescribeAssignment, "0+"
    )
    member_type: int = kfield(INT8, "1+", default=MEMBER_TYPE_UNKNOWN, ignorable=True)


@kafka_struct
class ConsumerGroupDescribeGroup:
    """One described group: error (and message), id, state (``"Empty"``, ``"Assigning"``,
    ``"Reconciling"``, ``"Stable"``, ``"Dead"``), group and assignment epochs, the assignor
    chosen, the members and the authorized operations bitfield."""

    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(STRING, "0+", nullable_versions="0+", default=None)
    group_id: str = kfield(STRING, "0+")
    group_state: str = kfield(STRING, "0+")
    group_epoch: int = kfield(INT32, "0+")
    assignment_epoch: int = kfield(INT32, "0+")
    assignor_name: str = kfield(STRING, "0+")
    members: tuple[ConsumerGroupDescribeMember, ...] = kfield(
        Array(ConsumerGroupDescribeMember), "0+"
    )
    authorized_operations: int = kfield(INT32, "0+", default=AUTHORIZED_OPERATIONS_OMITTED)


@kafka_message(api_key=CONSUMER_GROUP_DESCRIBE_KEY, valid="0-1", flexible="0+", supported=(0, 1))
class ConsumerGroupDescribeResponse(Response):
    """ConsumerGroupDescribe response, versions 0-1: throttle time (ms) and one entry per
    group asked."""

    throttle_time_ms: int = kfield(INT32, "0+")
    groups: tuple[ConsumerGroupDescribeGroup, ...] = kfield(Array(ConsumerGroupDescribeGroup), "0+")


ConsumerGroupDescribeRequest.response_type = ConsumerGroupDescribeResponse
