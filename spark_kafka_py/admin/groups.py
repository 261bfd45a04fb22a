"""Groups: listing them (ListGroups), describing one (ConsumerGroupDescribe for groups of the
KIP-848 consumer protocol, DescribeGroups for classic ones) and its committed offsets
(OffsetFetch), as Kafka's ``Admin.listGroups``, ``describeConsumerGroups`` and
``listConsumerGroupOffsets`` do for ``kafka-consumer-groups.sh``.

Facts from Kafka's message specs (ListGroups, DescribeGroups, ConsumerGroupDescribe,
OffsetFetch, FindCoordinator), KIP-848 and KIP-1043; no code taken. Like Kafka's admin client,
a group is asked with ConsumerGroupDescribe first and, when its coordinator answers
GROUP_ID_NOT_FOUND (a classic group, or none) or the broker lacks the API, with
DescribeGroups. A classic member's assignment is left as the bytes the group's protocol wrote
(for protocol type ``consumer`` a ConsumerProtocolAssignment); decoding it is the consumer's
business, above this layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.coordinator import (
    KEY_TYPE_GROUP,
    call_coordinator,
    deadline_after,
    find_coordinator,
)
from spark_kafka_py.errors import KafkaApiError, UnsupportedByBrokerError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeAssignment,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from spark_kafka_py.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from spark_kafka_py.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from spark_kafka_py.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchResponse,
)

__all__ = [
    "CommittedOffset",
    "GroupDescription",
    "GroupListing",
    "GroupMember",
    "committed_offsets",
    "committed_offsets_and_epochs",
    "describe_group",
    "list_groups",
]

#: OffsetFetch v10 names topics by id only (KIP-848 ``topic_id``); v9 still by name.
_OFFSET_FETCH_MAX_VERSION = 9
#: A group's type as ListGroups v5 and Kafka's tools name them.
GROUP_TYPE_CLASSIC = "classic"
GROUP_TYPE_CONSUMER = "consumer"
#: ConsumerGroupDescribe v1 ``member_type`` (KIP-1099): a member speaking
#: ConsumerGroupHeartbeat; -1 when the broker does not say (v0).
_MEMBER_TYPE_UNKNOWN = -1
_MEMBER_TYPE_CONSUMER = 1


@dataclass(frozen=True)
class GroupListing:
    """One group of ListGroups: id, protocol type (``consumer``, or ``""`` for a group that
    only holds committed offsets), state and type (``""`` when the broker is too old to say).
    """

    group_id: str
    protocol_type: str
    state: str
    type: str


@dataclass(frozen=True)
class GroupMember:
    """A member of a group.

    Attributes:
        member_id, instance_id, client_id, host: as the coordinator knows them.
        assignment: ``(topic, partition)`` sorted, for a member of a KIP-848 consumer group;
            ``None`` for a classic member (see ``assignment_bytes``).
        assignment_bytes: a classic member's assignment as its group protocol encoded it
            (a ConsumerProtocolAssignment for protocol type ``consumer``); ``b""`` otherwise.
        member_epoch: a KIP-848 member's epoch (ConsumerGroupDescribe ``member_epoch``);
            ``None`` for a classic member.
        target_assignment: a KIP-848 member's target assignment, sorted as ``assignment``;
            ``None`` for a classic member.
        upgraded: ConsumerGroupDescribe v1 ``member_type`` as Kafka's Admin reads it (KIP-1099):
            ``True`` for a member speaking the consumer protocol, ``False`` for a classic
            member of a consumer group, ``None`` when the broker does not say (v0) or the
            group is classic.
    """

    member_id: str
    instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[tuple[str, int], ...] | None = None
    assignment_bytes: bytes = b""
    member_epoch: int | None = None
    target_assignment: tuple[tuple[str, int], ...] | None = None
    upgraded: bool | None = None


@dataclass(frozen=True)
class GroupDescription:
    """A group at its coordinator: id, state (``Stable``, ``Empty``, ...), type (``classic``
    or ``consumer``), protocol type, the assignor (classic: the protocol chosen; KIP-848: the
    server assignor), the coordinator's node id and the members; for a KIP-848 group also
    the group epoch and the epoch of its target assignment (``None`` for a classic group)."""

    group_id: str
    state: str
    type: str
    protocol_type: str
    assignor: str
    coordinator: int
    members: tuple[GroupMember, ...]
    group_epoch: int | None = None
    assignment_epoch: int | None = None


@dataclass(frozen=True)
class CommittedOffset:
    """A committed offset (OffsetFetch): the offset, the leader epoch committed with it
    (``None`` when the committer gave none, or before OffsetFetch v5) and the metadata
    string."""

    offset: int
    leader_epoch: int | None
    metadata: str | None


def list_groups(client: KafkaClient, *, timeout_ms: int) -> list[GroupListing]:
    """Every group of the cluster: ListGroups (v0-5) to every broker, as
    ``kafka-consumer-groups.sh --list`` asks.

    Raises:
        KafkaApiError: a broker's error (COORDINATOR_LOAD_IN_PROGRESS, ...), naming the broker.
        KafkaConnectionError / KafkaTimeoutError: a broker did not answer within ``timeout_ms``.
    """
    metadata = client.metadata_retrying([], timeout_ms=timeout_ms)
    out: list[GroupListing] = []
    for node in sorted(metadata.brokers):
        response: ListGroupsResponse = client.send(node, ListGroupsRequest(), timeout_ms=timeout_ms)
        ec.raise_for_error(response.error_code, f"in ListGroups from broker {node}")
        out.extend(
            GroupListing(g.group_id, g.protocol_type, g.group_state, g.group_type)
            for g in response.groups
        )
    return sorted(out, key=lambda g: g.group_id)


def describe_group(client: KafkaClient, group_id: str, *, timeout_ms: int) -> GroupDescription:
    """``group_id`` at its coordinator (ConsumerGroupDescribe v0-1, then DescribeGroups v0-6).

    Raises:
        KafkaApiError: GROUP_ID_NOT_FOUND (no such group), GROUP_AUTHORIZATION_FAILED, ...
            naming the group.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    deadline = deadline_after(timeout_ms)
    try:
        described = _consumer_group_describe(client, group_id, timeout_ms, deadline)
    except UnsupportedByBrokerError:
        described = None
    if described is not None:
        return described
    return _describe_classic(client, group_id, timeout_ms, deadline)


def _consumer_group_describe(
    client: KafkaClient, group_id: str, timeout_ms: int, deadline: float
) -> GroupDescription | None:
    def error_of(r: ConsumerGroupDescribeResponse) -> int:
        return r.groups[0].error_code if r.groups else ec.NONE

    response: ConsumerGroupDescribeResponse
    response, code = call_coordinator(
        client,
        group_id,
        ConsumerGroupDescribeRequest(group_ids=(group_id,)),
        error_of,
        what=f"ConsumerGroupDescribe for group {group_id!r}",
        timeout_ms=timeout_ms,
        deadline=deadline,
        key_type=KEY_TYPE_GROUP,
    )
    if code == ec.GROUP_ID_NOT_FOUND or not response.groups:
        return None
    g = response.groups[0]
    if code != ec.NONE:
        raise KafkaApiError(code, f"describing group {group_id!r}", g.error_message)
    members = tuple(
        GroupMember(
            member_id=m.member_id,
            instance_id=m.instance_id,
            client_id=m.client_id,
            host=m.client_host,
            assignment=_partitions(m.assignment),
            member_epoch=m.member_epoch,
            target_assignment=_partitions(m.target_assignment),
            upgraded=(
                None
                if m.member_type == _MEMBER_TYPE_UNKNOWN
                else m.member_type == _MEMBER_TYPE_CONSUMER
            ),
        )
        for m in g.members
    )
    return GroupDescription(
        group_id=g.group_id,
        state=g.group_state,
        type=GROUP_TYPE_CONSUMER,
        protocol_type="consumer",
        assignor=g.assignor_name,
        coordinator=_node_of(client, group_id, deadline, timeout_ms),
        members=members,
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
    )


def _partitions(assignment: ConsumerGroupDescribeAssignment) -> tuple[tuple[str, int], ...]:
    return tuple(
        sorted((t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions)
    )


def _describe_classic(
    client: KafkaClient, group_id: str, timeout_ms: int, deadline: float
) -> GroupDescription:
    def error_of(r: DescribeGroupsResponse) -> int:
        return r.groups[0].error_code if r.groups else ec.NONE

    response: DescribeGroupsResponse
    response, code = call_coordinator(
        client,
        group_id,
        DescribeGroupsRequest(groups=(group_id,)),
        error_of,
        what=f"DescribeGroups for group {group_id!r}",
        timeout_ms=timeout_ms,
        deadline=deadline,
        key_type=KEY_TYPE_GROUP,
    )
    if not response.groups:
        raise KafkaApiError(ec.GROUP_ID_NOT_FOUND, f"describing group {group_id!r}")
    g = response.groups[0]
    if code == ec.NONE and g.group_state == "Dead":
        code = ec.GROUP_ID_NOT_FOUND  # before v6 a group that does not exist is "Dead"
    if code != ec.NONE:
        raise KafkaApiError(code, f"describing group {group_id!r}", g.error_message)
    members = tuple(
        GroupMember(
            member_id=m.member_id,
            instance_id=m.group_instance_id,
            client_id=m.client_id,
            host=m.client_host,
            assignment_bytes=bytes(m.member_assignment),
        )
        for m in g.members
    )
    return GroupDescription(
        group_id=g.group_id,
        state=g.group_state,
        type=GROUP_TYPE_CLASSIC,
        protocol_type=g.protocol_type,
        assignor=g.protocol_data,
        coordinator=_node_of(client, group_id, deadline, timeout_ms),
        members=members,
    )


def _node_of(client: KafkaClient, group_id: str, deadline: float, timeout_ms: int) -> int:
    """The coordinator's node id (the lookup call_coordinator made, asked again)."""
    return find_coordinator(client, group_id, KEY_TYPE_GROUP, deadline, timeout_ms)


def committed_offsets(
    client: KafkaClient, group_id: str, *, timeout_ms: int
) -> dict[tuple[str, int], int]:
    """The offsets ``group_id`` committed, for every partition it committed one for
    (OffsetFetch v1-9 with all topics, ``require_stable`` off, as
    ``kafka-consumer-groups.sh --describe`` asks).

    Returns:
        ``{(topic, partition): offset}``; an empty dict for a group without offsets (or none).

    Raises:
        KafkaApiError: GROUP_AUTHORIZATION_FAILED, a partition's error, ... naming the group.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    found = committed_offsets_and_epochs(client, group_id, timeout_ms=timeout_ms)
    return {tp: c.offset for tp, c in found.items()}


def committed_offsets_and_epochs(
    client: KafkaClient, group_id: str, *, timeout_ms: int
) -> dict[tuple[str, int], CommittedOffset]:
    """As :func:`committed_offsets`, with the leader epoch and metadata committed with each
    offset (OffsetFetch ``committed_leader_epoch``, v5+; ``-1`` there is ``None`` here), as
    ``kafka-consumer-groups.sh --describe --verbose`` shows them (LEADER-EPOCH).

    Returns:
        ``{(topic, partition): CommittedOffset}`` sorted by topic and partition.

    Raises:
        KafkaApiError: GROUP_AUTHORIZATION_FAILED, a partition's error, ... naming the group.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """

    def error_of(r: OffsetFetchResponse) -> int:
        if r.groups:
            return r.groups[0].error_code
        return r.error_code

    request = OffsetFetchRequest(
        group_id=group_id,
        topics=None,
        groups=(OffsetFetchRequestGroup(group_id=group_id, topics=None),),
    )
    response: OffsetFetchResponse
    response, code = call_coordinator(
        client,
        group_id,
        request,
        error_of,
        what=f"OffsetFetch for group {group_id!r}",
        timeout_ms=timeout_ms,
        max_version=_OFFSET_FETCH_MAX_VERSION,
        key_type=KEY_TYPE_GROUP,
    )
    if code != ec.NONE:
        raise KafkaApiError(code, f"fetching the offsets of group {group_id!r}")
    out: dict[tuple[str, int], CommittedOffset] = {}
    rows: list[tuple[str, int, int, int, str | None, int]]
    if response.groups:
        rows = [
            (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
             p.metadata, p.error_code)
            for t in response.groups[0].topics
            for p in t.partitions
        ]  # fmt: skip
    else:
        rows = [
            (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
             p.metadata, p.error_code)
            for t in response.topics
            for p in t.partitions
        ]  # fmt: skip
    for topic, partition, offset, epoch, metadata, error in rows:
        ec.raise_for_error(error, f"in OffsetFetch of group {group_id!r} for {topic}-{partition}")
        if offset >= 0:
            out[(topic, partition)] = CommittedOffset(
                offset, epoch if epoch >= 0 else None, metadata
            )
    return dict(sorted(out.items()))
