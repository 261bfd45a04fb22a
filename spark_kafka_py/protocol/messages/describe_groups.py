"""DescribeGroups (API key 15): the state, protocol and members of classic groups.

Source: Kafka message specs ``DescribeGroupsRequest.json`` / ``DescribeGroupsResponse.json``
(valid versions 0-6, flexible 5+). Version notes from the spec: v3 adds
``include_authorized_operations`` and each group's ``authorized_operations`` (KIP-430); v4 the
member's ``group_instance_id`` (KIP-345); v6 the group's ``error_message`` and the error
GROUP_ID_NOT_FOUND for a group that does not exist (KIP-1043; before, such a group is answered
in state ``"Dead"``). For a consumer group (protocol type ``"consumer"``) ``member_metadata`` is
a ConsumerProtocolSubscription and ``member_assignment`` a ConsumerProtocolAssignment (Kafka's
``ConsumerProtocolSubscription.json`` / ``ConsumerProtocolAssignment.json``). Send it to the
group's coordinator (FindCoordinator key type 0). Groups of the KIP-848 consumer protocol are
described by ConsumerGroupDescribe (API key 69). We support versions 0-6.
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
    "DESCRIBE_GROUPS_KEY",
    "DescribeGroupsRequest",
    "DescribeGroupsResponse",
    "DescribedGroup",
    "DescribedGroupMember",
]

DESCRIBE_GROUPS_KEY = 15

#: ``authorized_operations`` when they were not asked for (``INT32_MIN``, the spec's default).
_OPERATIONS_OMITTED = -(2**31)


@kafka_message(api_key=DESCRIBE_GROUPS_KEY, valid="0-6", flexible="5+", supported=(0, 6))
class DescribeGroupsRequest(Request["DescribeGroupsResponse"]):
    """DescribeGroups request, versions 0-6: group ids, and (v3+) whether to include the
    operations the caller may perform on each group."""

    groups: tuple[str, ...] = kfield(Array(STRING), "0+")
    include_authorized_operations: bool = kfield(BOOL, "3+", default=False)


@kafka_struct
class DescribedGroupMember:
    """One member: ids, client, host, and the protocol's metadata and assignment bytes."""

    member_id: str = kfield(STRING, "0+")
    group_instance_id: str | None = kfield(
        STRING, "4+", nullable_versions="4+", default=None, ignorable=True
    )
    client_id: str = kfield(STRING, "0+")
    client_host: str = kfield(STRING, "0+")
    member_metadata: bytes = kfield(BYTES, "0+")
    member_assignment: bytes = kfield(BYTES, "0+")


@kafka_struct
class DescribedGroup:
    """One described group: error (and v6+ message), id, state (``"Empty"``, ``"Stable"``,
    ``"PreparingRebalance"``, ``"CompletingRebalance"``, ``"Dead"``), protocol type, protocol
    (the assignor chosen), members and the authorized operations bitfield."""

    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(STRING, "6+", nullable_versions="6+", default=None)
    group_id: str = kfield(STRING, "0+")
    group_state: str = kfield(STRING, "0+")
    protocol_type: str = kfield(STRING, "0+")
    protocol_data: str = kfield(STRING, "0+")
    members: tuple[DescribedGroupMember, ...] = kfield(Array(DescribedGroupMember), "0+")
    authorized_operations: int = kfield(INT32, "3+", default=_OPERATIONS_OMITTED)


@kafka_message(api_key=DESCRIBE_GROUPS_KEY, valid="0-6", flexible="5+", supported=(0, 6))
class DescribeGroupsResponse(Response):
    """DescribeGroups response, versions 0-6."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    groups: tuple[DescribedGroup, ...] = kfield(Array(DescribedGroup), "0+")


DescribeGroupsRequest.response_type = DescribeGroupsResponse
