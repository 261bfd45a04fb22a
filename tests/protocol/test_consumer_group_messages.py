"""ConsumerGroupHeartbeat (API key 68) and ConsumerGroupDescribe (API key 69), KIP-848: golden
bytes written out by hand from Kafka's specs (``ConsumerGroupHeartbeat*.json``,
``ConsumerGroupDescribe*.json``, versions 0-1, flexible 0+), the nullable ``assignment`` struct,
fully populated round trips at every supported version, and Kafka's own generated classes
reading our bytes. (Spec conformance: ``test_specs.py``; random round trips and fuzzing:
``test_messages.py`` / ``test_fuzz.py``, through ``REQUEST_TYPES``.)"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol import error_codes
from spark_kafka_py.protocol.messages import REQUEST_TYPES, RESPONSE_TYPES
from spark_kafka_py.protocol.messages.consumer_group_describe import (
    CONSUMER_GROUP_DESCRIBE_KEY,
    MEMBER_TYPE_CONSUMER,
    MEMBER_TYPE_UNKNOWN,
    ConsumerGroupDescribeAssignment,
    ConsumerGroupDescribeGroup,
    ConsumerGroupDescribeMember,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupDescribeTopicPartitions,
)
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    CONSUMER_GROUP_HEARTBEAT_KEY,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
)
from spark_kafka_py.protocol.schema import decode, encode

from .reencode import assert_kafka_reencodes, assert_round_trip

TOPIC_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def hexb(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def test_registered_with_their_api_keys_and_versions() -> None:
    assert (CONSUMER_GROUP_HEARTBEAT_KEY, CONSUMER_GROUP_DESCRIBE_KEY) == (68, 69)
    assert REQUEST_TYPES[68] is ConsumerGroupHeartbeatRequest
    assert RESPONSE_TYPES[68] is ConsumerGroupHeartbeatResponse
    assert REQUEST_TYPES[69] is ConsumerGroupDescribeRequest
    assert RESPONSE_TYPES[69] is ConsumerGroupDescribeResponse
    for cls in (
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupHeartbeatResponse,
        ConsumerGroupDescribeRequest,
        ConsumerGroupDescribeResponse,
    ):
        assert (cls.MIN_VERSION, cls.MAX_VERSION) == (0, 1)
        assert cls.is_flexible(0) and cls.is_flexible(1)


# -- golden bytes ----------------------------------------------------------------------------


def test_heartbeat_request_golden_join_v0_and_v1() -> None:
    req = ConsumerGroupHeartbeatRequest(
        group_id="g",
        member_id="m",
        member_epoch=0,
        rebalance_timeout_ms=300_000,
        subscribed_topic_names=("t",),
        server_assignor="uniform",
        topic_partitions=(),
    )
    # group_id compact "g", member_id compact "m", member_epoch 0, instance_id null (0),
    # rack_id null (0), rebalance_timeout_ms 300000, subscribed_topic_names [ "t" ],
    # (v1: subscribed_topic_regex null), server_assignor "uniform", topic_partitions [] (1),
    # empty tagged fields
    head = "0267 026d 00000000 00 00 000493e0 02 0274"
    tail = "08 756e69666f726d 01 00"
    assert encode(req, 0) == hexb(head + tail)
    assert encode(req, 1) == hexb(head + "00" + tail)
    for version in (0, 1):
        assert decode(ConsumerGroupHeartbeatRequest, encode(req, version), version) == req


def test_heartbeat_request_golden_delta_and_static_leave() -> None:
    # a steady heartbeat: every delta field null / -1
    beat = ConsumerGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=7)
    assert encode(beat, 1) == hexb("0267 026d 00000007 00 00 ffffffff 00 00 00 00 00")
    leave = ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m", member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, instance_id="i"
    )
    assert encode(leave, 0) == hexb("0267 026d fffffffe 0269 00 ffffffff 00 00 00 00")


def test_heartbeat_request_golden_owned_partitions() -> None:
    req = ConsumerGroupHeartbeatRequest(
        group_id="g",
        member_id="m",
        member_epoch=3,
        topic_partitions=(
            ConsumerGroupHeartbeatTopicPartitions(topic_id=TOPIC_ID, partitions=(0, 2)),
        ),
    )
    assert encode(req, 0) == hexb(
        "0267 026d 00000003 00 00 ffffffff 00 00"
        # [1 topic] topic id, partitions [0, 2], the struct's tagged fields; message tagged
        "02 00112233445566778899aabbccddeeff 03 00000000 00000002 00 00"
    )


def test_heartbeat_response_golden_with_and_without_assignment() -> None:
    resp = ConsumerGroupHeartbeatResponse(
        member_id="m",
        member_epoch=5,
        heartbeat_interval_ms=3000,
        assignment=ConsumerGroupHeartbeatAssignment(
            topic_partitions=(
                ConsumerGroupHeartbeatTopicPartitions(topic_id=TOPIC_ID, partitions=(0, 2)),
            )
        ),
    )
    data = encode(resp, 0)
    assert data == hexb(
        "00000000 0000 00 026d 00000005 00000bb8"  # throttle, error, message null, id, epoch,
        "01"  # interval; assignment present (int8 1)
        "02 00112233445566778899aabbccddeeff 03 00000000 00000002 00"  # [1 topic]
        "00"  # the assignment's tagged fields
        "00"  # the response's tagged fields
    )
    assert decode(ConsumerGroupHeartbeatResponse, data, 0) == resp
    unchanged = ConsumerGroupHeartbeatResponse(
        error_code=error_codes.FENCED_MEMBER_EPOCH.code, error_message="x", member_epoch=-1
    )
    data = encode(unchanged, 1)
    # error 110, message "x", member_id null, epoch -1, interval 0, assignment null (int8 -1)
    assert data == hexb("00000000 006e 0278 00 ffffffff 00000000 ff 00")
    assert decode(ConsumerGroupHeartbeatResponse, data, 1) == unchanged


def test_heartbeat_response_truncated_assignment_raises() -> None:
    data = encode(ConsumerGroupHeartbeatResponse(assignment=ConsumerGroupHeartbeatAssignment()), 0)
    with pytest.raises(KafkaProtocolError):
        decode(ConsumerGroupHeartbeatResponse, data[:-3], 0)


def test_describe_golden_request_and_member_type_v1() -> None:
    req = ConsumerGroupDescribeRequest(group_ids=("g",), include_authorized_operations=True)
    assert encode(req, 0) == encode(req, 1) == hexb("02 0267 01 00")
    member = ConsumerGroupDescribeMember(
        member_id="m",
        member_epoch=1,
        client_id="c",
        client_host="/h",
        subscribed_topic_names=("t",),
        assignment=ConsumerGroupDescribeAssignment(
            topic_partitions=(
                ConsumerGroupDescribeTopicPartitions(
                    topic_id=TOPIC_ID, topic_name="t", partitions=(1,)
                ),
            )
        ),
        member_type=MEMBER_TYPE_CONSUMER,
    )
    resp = ConsumerGroupDescribeResponse(
        groups=(
            ConsumerGroupDescribeGroup(
                group_id="g",
                group_state="Stable",
                group_epoch=2,
                assignment_epoch=2,
                assignor_name="uniform",
                members=(member,),
            ),
        )
    )
    member_bytes = (
        "026d 00 00 00000001 0263 032f68 02 0274 00"  # ids, epoch, client, [t], regex null
        "02 00112233445566778899aabbccddeeff 0274 02 00000001 00 00"  # assignment
        "01 00"  # target assignment: no partitions
    )
    group_bytes = "0000 00 0267 07 537461626c65 00000002 00000002 08 756e69666f726d 02"
    v1 = encode(resp, 1)
    assert v1 == hexb("00000000 02" + group_bytes + member_bytes + "01 00" + "80000000 00" + "00")
    assert decode(ConsumerGroupDescribeResponse, v1, 1) == resp
    # v0 has no member_type (ignorable): dropped, read back as unknown
    back = decode(ConsumerGroupDescribeResponse, encode(resp, 0), 0)
    assert back.groups[0].members[0].member_type == MEMBER_TYPE_UNKNOWN
    assert len(v1) == len(encode(resp, 0)) + 1


def test_regex_needs_v1() -> None:
    req = ConsumerGroupHeartbeatRequest(group_id="g", member_id="m", subscribed_topic_regex="t.*")
    with pytest.raises(LocalProtocolError, match="subscribed_topic_regex"):
        encode(req, 0)
    assert decode(ConsumerGroupHeartbeatRequest, encode(req, 1), 1) == req


def test_versions_outside_the_supported_range_raise() -> None:
    with pytest.raises(LocalProtocolError, match="not supported"):
        encode(ConsumerGroupHeartbeatRequest(), 2)
    with pytest.raises(LocalProtocolError, match="not supported"):
        decode(ConsumerGroupDescribeResponse, b"", 2)


# -- fully populated round trips, and Kafka's own classes reading our bytes ------------------

FULL = [
    ConsumerGroupHeartbeatRequest(
        group_id="spark-group",
        member_id="AAAAAAAAAAAAAAAAAAAAAA",
        member_epoch=0,
        instance_id="executor-1",
        rack_id="rack-a",
        rebalance_timeout_ms=300_000,
        subscribed_topic_names=("events", "clicks"),
        server_assignor="range",
        topic_partitions=(
            ConsumerGroupHeartbeatTopicPartitions(topic_id=TOPIC_ID, partitions=(0, 1, 5)),
            ConsumerGroupHeartbeatTopicPartitions(topic_id=uuid.UUID(int=7), partitions=()),
        ),
    ),
    ConsumerGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=12),
    ConsumerGroupHeartbeatResponse(
        throttle_time_ms=3,
        member_id="AAAAAAAAAAAAAAAAAAAAAA",
        member_epoch=12,
        heartbeat_interval_ms=5000,
        assignment=ConsumerGroupHeartbeatAssignment(
            topic_partitions=(
                ConsumerGroupHeartbeatTopicPartitions(topic_id=TOPIC_ID, partitions=(3,)),
            )
        ),
    ),
    ConsumerGroupHeartbeatResponse(
        error_code=error_codes.UNRELEASED_INSTANCE_ID.code,
        error_message="instance executor-1 is still in use",
        member_epoch=-1,
    ),
    ConsumerGroupDescribeRequest(group_ids=("a", "b"), include_authorized_operations=False),
    ConsumerGroupDescribeResponse(
        throttle_time_ms=1,
        groups=(
            ConsumerGroupDescribeGroup(
                group_id="spark-group",
                group_state="Reconciling",
                group_epoch=4,
                assignment_epoch=4,
                assignor_name="uniform",
                members=(
                    ConsumerGroupDescribeMember(
                        member_id="m1",
                        instance_id="executor-1",
                        rack_id=None,
                        member_epoch=3,
                        client_id="spark-kafka-py",
                        client_host="/127.0.0.1",
                        subscribed_topic_names=("events",),
                        subscribed_topic_regex=None,
                        assignment=ConsumerGroupDescribeAssignment(
                            topic_partitions=(
                                ConsumerGroupDescribeTopicPartitions(
                                    topic_id=TOPIC_ID, topic_name="events", partitions=(0, 1)
                                ),
                            )
                        ),
                        target_assignment=ConsumerGroupDescribeAssignment(
                            topic_partitions=(
                                ConsumerGroupDescribeTopicPartitions(
                                    topic_id=TOPIC_ID, topic_name="events", partitions=(0,)
                                ),
                            )
                        ),
                        member_type=MEMBER_TYPE_CONSUMER,
                    ),
                ),
                authorized_operations=0x1F8,
            ),
            ConsumerGroupDescribeGroup(
                error_code=error_codes.GROUP_ID_NOT_FOUND.code,
                error_message="Group other is not a consumer group.",
                group_id="other",
            ),
        ),
    ),
]
FULL_CASES = [(message, version) for message in FULL for version in (0, 1)]


@pytest.mark.parametrize(
    ("message", "version"),
    FULL_CASES,
    ids=[f"{type(m).__name__}-{i // 2}-v{v}" for i, (m, v) in enumerate(FULL_CASES)],
)
def test_full_round_trip(message: object, version: int) -> None:
    assert_round_trip(message, version)


def test_kafka_reads_and_rewrites_our_bytes(kafka_jar_paths: list[Path]) -> None:
    # Kafka's ConsumerGroupHeartbeat*Data / ConsumerGroupDescribe*Data consume all our bytes at
    # each version and write exactly our bytes again (the nullable assignment included).
    assert_kafka_reencodes(
        FULL_CASES,
        kafka_jar_paths,
    )
