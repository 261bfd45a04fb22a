"""Message schemas: golden bytes derived by hand from Kafka's specs, and round trips of every
supported version of every API."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol.messages import REQUEST_TYPES, RESPONSE_TYPES
from spark_kafka_py.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    SupportedFeatureKey,
)
from spark_kafka_py.protocol.messages.fetch import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
)
from spark_kafka_py.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from spark_kafka_py.protocol.messages.list_offsets import (
    EARLIEST_TIMESTAMP,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from spark_kafka_py.protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import decode, encode

from .strategies import project, struct_strategy

ALL_TYPES = sorted([*REQUEST_TYPES.values(), *RESPONSE_TYPES.values()], key=lambda c: c.__name__)
CASES = [(cls, v) for cls in ALL_TYPES for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)]


def hexb(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# -- golden bytes ----------------------------------------------------------------------------


def test_api_versions_request_golden() -> None:
    req = ApiVersionsRequest(client_software_name="a", client_software_version="1")
    assert encode(req, 0) == b""  # v0-2 have no fields; the software fields are ignorable
    # v3 (flexible): compact string "a", compact string "1", empty tagged fields
    assert encode(req, 3) == hexb("02 61 02 31 00")


def test_api_versions_response_golden() -> None:
    # v0: error_code=0, api_keys=[{1, 4, 17}]
    data = hexb("0000 00000001 0001 0004 0011")
    assert decode(ApiVersionsResponse, data, 0) == ApiVersionsResponse(
        api_keys=(ApiVersion(api_key=1, min_version=4, max_version=17),)
    )
    # v3: compact array (N+1=2), each element ends with tagged fields, throttle, then the
    # top-level tagged fields with tag 1 (finalized_features_epoch, int64 = 5)
    data3 = hexb("0000 02 0001 0004 0011 00 00000000 01 01 08 0000000000000005")
    resp = decode(ApiVersionsResponse, data3, 3)
    assert resp.finalized_features_epoch == 5
    assert resp.api_keys == (ApiVersion(api_key=1, min_version=4, max_version=17),)
    assert encode(resp, 3) == data3


def test_metadata_request_golden() -> None:
    assert encode(MetadataRequest(topics=None), 1) == hexb("ffffffff")
    req = MetadataRequest(topics=(MetadataRequestTopic(name="t"),), allow_auto_topic_creation=False)
    assert encode(req, 4) == hexb("00000001 0001 74 00")
    # v9: compact array, topic {compact "t", tags}, allow=0, include_cluster=0 (8-10),
    # include_topic=0, tags
    assert encode(req, 9) == hexb("02 02 74 00 00 00 00 00")
    # v12: topic_id (16 zero bytes) before the nullable compact name; include_cluster gone
    assert encode(req, 12) == hexb("02" + "00" * 16 + "02 74 00 00 00 00")


def test_list_offsets_request_golden() -> None:
    req = ListOffsetsRequest(
        topics=(
            ListOffsetsTopic(
                name="t",
                partitions=(ListOffsetsPartition(partition_index=0, timestamp=EARLIEST_TIMESTAMP),),
            ),
        )
    )
    # v1: replica_id=-1, [name "t", [partition 0, timestamp -2]]
    assert encode(req, 1) == hexb("ffffffff 00000001 0001 74 00000001 00000000 fffffffffffffffe")
    # v4 adds isolation_level (int8, v2+) and current_leader_epoch (-1, v4+)
    assert encode(req, 4) == hexb(
        "ffffffff 00 00000001 0001 74 00000001 00000000 ffffffff fffffffffffffffe"
    )


def test_fetch_request_golden_v4_and_v13() -> None:
    tid = uuid.UUID(int=1)
    req = FetchRequest(
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1024,
        topics=(
            FetchTopic(
                topic="t",
                topic_id=tid,
                partitions=(FetchPartition(partition=2, fetch_offset=7, partition_max_bytes=99),),
            ),
        ),
    )
    assert encode(req, 4) == hexb(
        "ffffffff 000001f4 00000001 00000400 00"  # replica, wait, min, max, isolation
        "00000001 0001 74"  # topics: "t"
        "00000001 00000002 0000000000000007 00000063"  # partition, offset, max bytes
    )
    assert (
        encode(req, 13)
        == hexb(
            "ffffffff 000001f4 00000001 00000400 00 00000000 ffffffff"  # ... session id, epoch
            "02"
            + "00" * 15
            + "01"  # topics: compact, topic_id
            + "02 00000002 ffffffff 0000000000000007 ffffffff ffffffffffffffff 00000063 00"
            "00"  # end of topic
            "01"  # forgotten_topics_data: empty compact array
            "01"  # rack_id ""
            "00"  # tagged fields
        )
    )


def test_fetch_response_tagged_current_leader() -> None:
    part = PartitionData(
        partition_index=0,
        error_code=6,
        high_watermark=10,
        current_leader=LeaderIdAndEpoch(leader_id=3, leader_epoch=9),
        aborted_transactions=None,
        records=None,
    )
    resp = FetchResponse(
        responses=(
            FetchableTopicResponse(topic="t", topic_id=uuid.UUID(int=2), partitions=(part,)),
        )
    )
    data = encode(resp, 12)
    # tag 1, size 9 = 4 + 4 + 1 (the nested struct's own tagged fields)
    assert hexb("01 01 09 00000003 00000009 00") in data
    back = decode(FetchResponse, data, 12)
    assert back.responses[0].partitions[0].current_leader == LeaderIdAndEpoch(
        leader_id=3, leader_epoch=9
    )
    assert back.responses[0].topic_id == ZERO_UUID  # not in v12
    assert back.responses[0].topic == "t"


def test_unknown_tags_are_skipped() -> None:
    # ApiVersions v3 with an unknown tag 42 holding 3 bytes
    data = hexb("0000 01 00000000 01 2a 03 aabbcc")
    assert decode(ApiVersionsResponse, data, 3) == ApiVersionsResponse()


def test_records_are_zero_copy() -> None:
    part = PartitionData(partition_index=0, high_watermark=1, records=b"\x01\x02\x03")
    data = encode(FetchResponse(responses=(FetchableTopicResponse(partitions=(part,)),)), 11)
    back = decode(FetchResponse, data, 11)
    records = back.responses[0].partitions[0].records
    assert isinstance(records, memoryview)
    assert records.obj is data
    assert records == b"\x01\x02\x03"


# -- encoder rules ---------------------------------------------------------------------------


def test_non_ignorable_field_in_old_version_raises() -> None:
    with pytest.raises(LocalProtocolError, match="isolation_level"):
        encode(ListOffsetsRequest(isolation_level=1), 1)
    # ignorable fields are dropped silently
    encode(ListOffsetsRequest(timeout_ms=5), 1)
    # Metadata v1 has no allow_auto_topic_creation (default true): False cannot be sent
    with pytest.raises(LocalProtocolError, match="allow_auto_topic_creation"):
        encode(MetadataRequest(allow_auto_topic_creation=False), 1)


def test_null_in_non_nullable_version_raises() -> None:
    # MetadataRequestTopic.name is nullable only from v10
    with pytest.raises(LocalProtocolError, match=r"MetadataRequestTopic\.name"):
        encode(MetadataRequest(topics=(MetadataRequestTopic(name=None),)), 9)
    encode(MetadataRequest(topics=(MetadataRequestTopic(name=None),)), 12)


def test_spec_ignorable_flags() -> None:
    # Kafka's specs (checked in test_specs.py): FetchResponse.NodeEndpoints (v16+) and
    # ListOffsetsResponse LeaderEpoch (v4+) are not ignorable, SessionLifetimeMs (v1+) is.
    endpoints = FetchResponse(node_endpoints=(NodeEndpoint(node_id=1, host="h", port=9092),))
    with pytest.raises(LocalProtocolError, match="node_endpoints"):
        encode(endpoints, 15)
    assert decode(FetchResponse, encode(endpoints, 16), 16) == endpoints
    partition = ListOffsetsPartitionResponse(partition_index=0, leader_epoch=7)
    listed = ListOffsetsResponse(
        topics=(ListOffsetsTopicResponse(name="t", partitions=(partition,)),)
    )
    with pytest.raises(LocalProtocolError, match="leader_epoch"):
        encode(listed, 3)
    assert decode(ListOffsetsResponse, encode(listed, 4), 4) == listed
    sasl = SaslAuthenticateResponse(session_lifetime_ms=1000)
    assert decode(SaslAuthenticateResponse, encode(sasl, 0), 0).session_lifetime_ms == 0


def test_spec_default_of_nullable_strings_is_empty() -> None:
    # A nullable string without "default": "null" in the spec defaults to "" (as Kafka's
    # generated *Data classes): versions lacking the field decode to "".
    assert SaslAuthenticateResponse().error_message == ""
    assert Coordinator().error_message == ""
    assert (
        decode(FindCoordinatorResponse, encode(FindCoordinatorResponse(), 0), 0).error_message == ""
    )
    assert (
        decode(FindCoordinatorResponse, encode(FindCoordinatorResponse(), 1), 1).error_message == ""
    )


def test_unsupported_version_raises() -> None:
    with pytest.raises(LocalProtocolError, match="not supported"):
        encode(FetchRequest(), 3)
    with pytest.raises(LocalProtocolError, match="not supported"):
        decode(FetchResponse, b"", 99)


def test_lists_are_accepted_for_arrays() -> None:
    req = MetadataRequest(topics=[MetadataRequestTopic(name="a")])  # type: ignore[arg-type]  # a list
    assert decode(MetadataRequest, encode(req, 12), 12).topics == (MetadataRequestTopic(name="a"),)
    with pytest.raises(LocalProtocolError, match="sequence"):
        encode(MetadataRequest(topics="abc"), 12)  # type: ignore[arg-type]  # under test


def test_trailing_bytes_rejected() -> None:
    data = encode(ApiVersionsResponse(), 0) + b"\x00"
    with pytest.raises(KafkaProtocolError, match="trailing"):
        decode(ApiVersionsResponse, data, 0)


def test_metadata_response_round_trip_v12() -> None:
    resp = MetadataResponse(
        brokers=(MetadataResponseBroker(node_id=1, host="h", port=9092, rack="r"),),
        cluster_id="c",
        controller_id=1,
        topics=(
            MetadataResponseTopic(
                name="t",
                topic_id=uuid.uuid4(),
                partitions=(
                    MetadataResponsePartition(
                        partition_index=0,
                        leader_id=1,
                        leader_epoch=3,
                        replica_nodes=(1,),
                        isr_nodes=(1,),
                    ),
                ),
            ),
        ),
    )
    assert decode(MetadataResponse, encode(resp, 12), 12) == resp


def test_messages_are_frozen_and_keyword_only() -> None:
    req = FetchRequest()
    with pytest.raises(AttributeError):
        req.max_wait_ms = 5  # type: ignore[misc]  # frozen: under test
    with pytest.raises(TypeError):
        FetchRequest(1)  # type: ignore[misc]  # keyword-only: under test
    assert FetchRequest.API_KEY == 1 and FetchRequest.response_type is FetchResponse
    assert AbortedTransaction(producer_id=1, first_offset=2).first_offset == 2
    assert SupportedFeatureKey().name == ""


# -- generic round trips ---------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "version"), CASES, ids=lambda x: getattr(x, "__name__", x))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip_every_version(cls: type, version: int, data: st.DataObject) -> None:
    msg = data.draw(struct_strategy(cls, version))
    encoded = encode(msg, version)
    back = decode(cls, encoded, version)
    assert back == project(msg, version)
    assert encode(back, version) == encoded


@pytest.mark.parametrize(("cls", "version"), CASES, ids=lambda x: getattr(x, "__name__", x))
def test_default_message_round_trips(cls: type, version: int) -> None:
    msg = cls()
    assert decode(cls, encode(msg, version), version) == project(msg, version)
