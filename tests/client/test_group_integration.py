"""Classic consumer-group APIs against a real broker: FindCoordinator, JoinGroup (with the
v4+ MEMBER_ID_REQUIRED rejoin), SyncGroup, Heartbeat, OffsetCommit, OffsetFetch,
LeaveGroup, each at the negotiated version and every version both sides support."""

from __future__ import annotations

import time
import uuid

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.protocol.error_codes import MEMBER_ID_REQUIRED, error_for, raise_for_error
from spark_kafka_py.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from spark_kafka_py.protocol.messages.heartbeat import HeartbeatRequest
from spark_kafka_py.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from spark_kafka_py.protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from spark_kafka_py.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from spark_kafka_py.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from spark_kafka_py.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
)
from spark_kafka_py.protocol.primitives import Writer
from spark_kafka_py.testing.tools import create_topic

pytestmark = pytest.mark.integration


def _subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0: version, [topics], null user_data."""
    w = Writer()
    w.int16(0)
    w.int32(1)
    w.string(topic)
    w.int32(-1)
    return w.getvalue()


def _assignment(topic: str) -> bytes:
    """ConsumerProtocolAssignment v0: version, [topic, [partitions]], null user_data."""
    w = Writer()
    w.int16(0)
    w.int32(1)
    w.string(topic)
    w.int32(1)
    w.int32(0)
    w.int32(-1)
    return w.getvalue()


def _coordinator(client: KafkaClient, group: str) -> int:
    """The coordinator's node id, retrying while __consumer_offsets is being created."""
    deadline = time.monotonic() + 60
    while True:
        response: FindCoordinatorResponse = client.send(
            client.least_loaded_node(),
            FindCoordinatorRequest(key=group, coordinator_keys=(group,)),
        )
        if response.coordinators:
            (c,) = response.coordinators
            code, node = c.error_code, c.node_id
        else:
            code, node = response.error_code, response.node_id
        if code == 0:
            return node
        if not error_for(code).retriable or time.monotonic() > deadline:
            raise_for_error(code, f"finding the coordinator of {group}")
        time.sleep(0.5)


@pytest.fixture()
def client(kafka_bootstrap: str):  # type: ignore[no-untyped-def]
    with KafkaClient(ClientConfig.from_bootstrap(kafka_bootstrap)) as c:
        yield c


def test_group_lifecycle(client: KafkaClient, kafka_bootstrap: str) -> None:
    topic = f"group-it-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, 1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    coordinator = _coordinator(client, group)
    join = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=(JoinGroupRequestProtocol(name="range", metadata=_subscription(topic)),),
    )
    joined = client.send(coordinator, join)
    if joined.error_code == MEMBER_ID_REQUIRED:  # v4+ (KIP-394)
        join = JoinGroupRequest(**{**_fields(join), "member_id": joined.member_id})
        joined = client.send(coordinator, join)
    raise_for_error(joined.error_code, "JoinGroup")
    assert joined.leader == joined.member_id
    assert joined.protocol_name == "range"
    assert [m.member_id for m in joined.members] == [joined.member_id]
    synced = client.send(
        coordinator,
        SyncGroupRequest(
            group_id=group,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            protocol_type="consumer",
            protocol_name="range",
            assignments=(
                SyncGroupRequestAssignment(
                    member_id=joined.member_id, assignment=_assignment(topic)
                ),
            ),
        ),
    )
    raise_for_error(synced.error_code, "SyncGroup")
    assert bytes(synced.assignment) == _assignment(topic)
    beat = client.send(
        coordinator,
        HeartbeatRequest(
            group_id=group, generation_id=joined.generation_id, member_id=joined.member_id
        ),
    )
    raise_for_error(beat.error_code, "Heartbeat")
    committed = client.send(
        coordinator,
        OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=joined.generation_id,
            member_id=joined.member_id,
            topics=(
                OffsetCommitRequestTopic(
                    name=topic,
                    partitions=(
                        OffsetCommitRequestPartition(
                            partition_index=0, committed_offset=42, committed_metadata="m"
                        ),
                    ),
                ),
            ),
        ),
    )
    assert committed.topics[0].partitions[0].error_code == 0
    assert _fetch_offset(client, coordinator, group, topic) == (42, "m")
    left = client.send(
        coordinator,
        LeaveGroupRequest(
            group_id=group,
            member_id=joined.member_id,
            members=(MemberIdentity(member_id=joined.member_id),),
        ),
    )
    raise_for_error(left.error_code, "LeaveGroup")


def _fetch_offset(
    client: KafkaClient, node: int, group: str, topic: str, max_version: int | None = None
) -> tuple[int, str | None]:
    response = client.send(
        node,
        OffsetFetchRequest(
            group_id=group,
            topics=(OffsetFetchRequestTopic(name=topic, partition_indexes=(0,)),),
            groups=(
                OffsetFetchRequestGroup(
                    group_id=group,
                    topics=(OffsetFetchRequestTopics(name=topic, partition_indexes=(0,)),),
                ),
            ),
        ),
        max_version=max_version,
    )
    if response.groups:
        raise_for_error(response.groups[0].error_code, "OffsetFetch")
        part = response.groups[0].topics[0].partitions[0]
    else:
        raise_for_error(response.error_code, "OffsetFetch")
        part = response.topics[0].partitions[0]
    raise_for_error(part.error_code, "OffsetFetch partition")
    return part.committed_offset, part.metadata


def _fields(msg: object) -> dict[str, object]:
    return {name: getattr(msg, name) for name in msg.__dataclass_fields__}  # type: ignore[attr-defined]


def test_every_common_version_of_offset_apis(client: KafkaClient, kafka_bootstrap: str) -> None:
    topic = f"group-it-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, 1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    coordinator = _coordinator(client, group)
    conn = client.connection(coordinator)
    conn.connect()
    tried = []
    for request_type in (FindCoordinatorRequest, OffsetCommitRequest, OffsetFetchRequest):
        low, high = conn.api_versions[request_type.API_KEY]
        for version in range(
            max(low, request_type.MIN_VERSION), min(high, request_type.MAX_VERSION) + 1
        ):
            tried.append((request_type.__name__, version))
            if request_type is FindCoordinatorRequest:
                response = client.send(
                    coordinator,
                    FindCoordinatorRequest(key=group, coordinator_keys=(group,)),
                    max_version=version,
                )
                node = response.coordinators[0].node_id if version >= 4 else response.node_id
                assert node == coordinator
            elif request_type is OffsetCommitRequest:
                response = client.send(
                    coordinator,
                    OffsetCommitRequest(
                        group_id=group,
                        topics=(
                            OffsetCommitRequestTopic(
                                name=topic,
                                partitions=(
                                    OffsetCommitRequestPartition(
                                        partition_index=0, committed_offset=version
                                    ),
                                ),
                            ),
                        ),
                    ),
                    max_version=version,
                )
                assert response.topics[0].partitions[0].error_code == 0
                assert _fetch_offset(client, coordinator, group, topic)[0] == version
            else:
                assert _fetch_offset(client, coordinator, group, topic, version)[0] >= 0
    assert len(tried) >= 10
