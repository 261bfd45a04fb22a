"""Producer and transaction messages (Produce, InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, TxnOffsetCommit): golden bytes derived by hand from Kafka's specs,
fully populated round trips at the lowest and highest supported versions, and the encoder's
refusals where a version lacks a field. (Their spec conformance is checked by
``test_specs.py``, random round trips and fuzzing by ``test_messages.py``/``test_fuzz.py``,
all through ``REQUEST_TYPES``.)"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from spark_kafka_py.errors import LocalProtocolError
from spark_kafka_py.protocol import error_codes
from spark_kafka_py.protocol.messages import REQUEST_TYPES, RESPONSE_TYPES
from spark_kafka_py.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
from spark_kafka_py.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)
from spark_kafka_py.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from spark_kafka_py.protocol.messages.find_coordinator import (
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
)
from spark_kafka_py.protocol.messages.init_producer_id import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from spark_kafka_py.protocol.messages.produce import (
    ACKS_ALL,
    ACKS_LEADER,
    BatchIndexAndErrorMessage,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from spark_kafka_py.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import decode, encode

from .reencode import assert_kafka_reencodes, assert_round_trip

TOPIC_ID = uuid.UUID("0123456789abcdef0123456789abcdef")
RECORDS = b"\x01\x02\x03"


def hexb(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# -- registration ----------------------------------------------------------------------------


def test_registered_with_their_api_keys_and_versions() -> None:
    expected = {
        0: (ProduceRequest, ProduceResponse, 3, 13),
        22: (InitProducerIdRequest, InitProducerIdResponse, 0, 5),
        24: (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, 0, 3),
        25: (AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, 0, 4),
        26: (EndTxnRequest, EndTxnResponse, 0, 5),
        28: (TxnOffsetCommitRequest, TxnOffsetCommitResponse, 0, 5),
    }
    for key, (request, response, low, high) in expected.items():
        assert REQUEST_TYPES[key] is request
        assert RESPONSE_TYPES[key] is response
        assert request.response_type is response
        for cls in (request, response):
            registered = (cls.API_KEY, cls.MIN_VERSION, cls.MAX_VERSION)
            assert registered == (key, low, high)


# -- golden bytes ----------------------------------------------------------------------------


def test_produce_request_golden_v3() -> None:
    req = ProduceRequest(
        transactional_id=None,
        acks=ACKS_ALL,
        timeout_ms=30000,
        topic_data=(
            TopicProduceData(
                name="t", partition_data=(PartitionProduceData(index=0, records=RECORDS),)
            ),
        ),
    )
    data = encode(req, 3)
    # transactional_id null (int16 -1), acks -1, timeout 30000 ms, [1 topic] "t",
    # [1 partition] index 0, records: int32 length 3 + bytes
    assert data == hexb("ffff ffff 00007530 00000001 0001 74 00000001 00000000 00000003 010203")
    back = decode(ProduceRequest, data, 3)
    assert back == req
    assert isinstance(back.topic_data[0].partition_data[0].records, memoryview)


def test_produce_request_golden_v9_flexible() -> None:
    req = ProduceRequest(
        transactional_id="tx",
        acks=ACKS_LEADER,
        timeout_ms=1000,
        topic_data=(
            TopicProduceData(
                name="t", partition_data=(PartitionProduceData(index=2, records=RECORDS),)
            ),
        ),
    )
    data = encode(req, 9)
    # compact string "tx" (len+1), acks 1, timeout 1000, compact array (N+1) of 1 topic:
    # compact "t", compact array of 1 partition: index 2, compact bytes (len+1) records,
    # partition tagged fields, topic tagged fields, message tagged fields
    assert data == hexb("03 7478 0001 000003e8 02 02 74 02 00000002 04 010203 00 00 00")
    assert decode(ProduceRequest, data, 9) == req


def test_produce_request_v13_addresses_topics_by_id() -> None:
    req = ProduceRequest(
        acks=ACKS_ALL,
        timeout_ms=1000,
        topic_data=(
            TopicProduceData(
                name="t",
                topic_id=TOPIC_ID,
                partition_data=(PartitionProduceData(index=0, records=None),),
            ),
        ),
    )
    data = encode(req, 13)
    # null transactional_id (compact 0), ..., topic_id (16 bytes) instead of the name,
    # null records (compact 0)
    assert data == hexb(
        "00 ffff 000003e8 02 0123456789abcdef0123456789abcdef 02 00000000 00 00 00 00"
    )
    back = decode(ProduceRequest, data, 13)
    assert back.topic_data[0].topic_id == TOPIC_ID
    assert back.topic_data[0].name == ""  # not in v13 (ignorable, dropped)
    assert decode(ProduceRequest, encode(req, 12), 12).topic_data[0].topic_id == ZERO_UUID


def test_produce_response_golden_v10_tagged_leader_and_endpoints() -> None:
    part = PartitionProduceResponse(
        index=0,
        error_code=error_codes.NOT_LEADER_OR_FOLLOWER.code,
        base_offset=-1,
        current_leader=LeaderIdAndEpoch(leader_id=2, leader_epoch=7),
    )
    resp = ProduceResponse(
        responses=(TopicProduceResponse(name="t", partition_responses=(part,)),),
        node_endpoints=(NodeEndpoint(node_id=2, host="b", port=9092),),
    )
    data = encode(resp, 10)
    assert data == hexb(
        "02 02 74 02"  # 1 topic "t", 1 partition
        " 00000000 0006 ffffffffffffffff"  # index, NOT_LEADER_OR_FOLLOWER, base_offset -1
        " ffffffffffffffff ffffffffffffffff"  # log_append_time_ms, log_start_offset: -1
        " 01 00"  # record_errors [], error_message null
        " 01 00 09 00000002 00000007 00"  # 1 tag: 0 (current_leader), size 9, its own tags
        " 00"  # topic tagged fields
        " 00000000"  # throttle_time_ms
        " 01 00 0d 02 00000002 0262 00002384 00 00"  # tag 0 node_endpoints, size 13
    )
    assert decode(ProduceResponse, data, 10) == resp


def test_init_producer_id_response_golden() -> None:
    resp = InitProducerIdResponse(throttle_time_ms=0, producer_id=1000, producer_epoch=5)
    # v0: throttle_time_ms, error_code, producer_id (int64), producer_epoch (int16)
    v0 = hexb("00000000 0000 00000000000003e8 0005")
    assert encode(resp, 0) == v0
    assert decode(InitProducerIdResponse, v0, 0) == resp
    # v2+ (flexible): the same fields and an empty tagged fields section
    assert encode(resp, 5) == v0 + hexb("00")
    assert decode(InitProducerIdResponse, v0 + hexb("00"), 5) == resp
    fenced = hexb("00000064 005a ffffffffffffffff ffff 00")
    assert decode(InitProducerIdResponse, fenced, 4) == InitProducerIdResponse(
        throttle_time_ms=100,
        error_code=error_codes.PRODUCER_FENCED.code,
        producer_id=NO_PRODUCER_ID,
        producer_epoch=NO_PRODUCER_EPOCH,
    )


def test_init_producer_id_request_golden() -> None:
    idempotent = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000)
    # v0: null string (int16 -1), timeout; v3 (flexible): compact null (0), timeout,
    # producer_id -1, producer_epoch -1 (defaults), tagged fields
    assert encode(idempotent, 0) == hexb("ffff 0000ea60")
    assert encode(idempotent, 3) == hexb("00 0000ea60 ffffffffffffffff ffff 00")
    resume = InitProducerIdRequest(
        transactional_id="tx", transaction_timeout_ms=60000, producer_id=7, producer_epoch=3
    )
    assert encode(resume, 5) == hexb("03 7478 0000ea60 0000000000000007 0003 00")
    with pytest.raises(LocalProtocolError, match="producer_id"):
        encode(resume, 2)  # resuming needs v3+ (not ignorable)


def test_add_partitions_to_txn_request_golden_v3() -> None:
    req = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=7,
        v3_and_below_producer_epoch=3,
        v3_and_below_topics=(AddPartitionsToTxnTopic(name="t", partitions=(0, 1)),),
    )
    assert encode(req, 3) == hexb(
        "03 7478 0000000000000007 0003 02 02 74 03 00000000 00000001 00 00"
    )
    assert encode(req, 0) == hexb(
        "0002 7478 0000000000000007 0003 00000001 0001 74 00000002 00000000 00000001"
    )


def test_end_txn_response_v5_carries_the_bumped_epoch() -> None:
    data = hexb("00000000 0000 0000000000000007 0004 00")
    assert decode(EndTxnResponse, data, 5) == EndTxnResponse(producer_id=7, producer_epoch=4)
    before = decode(EndTxnResponse, hexb("00000000 0030 00"), 4)
    assert before.error_code == error_codes.INVALID_TXN_STATE.code
    assert (before.producer_id, before.producer_epoch) == (-1, -1)
    assert encode(EndTxnRequest(transactional_id="tx", committed=True), 0) == hexb(
        "0002 7478 0000000000000000 0000 01"
    )


def test_find_coordinator_for_a_transactional_id() -> None:
    req = FindCoordinatorRequest(key="tx", key_type=KEY_TYPE_TRANSACTION, coordinator_keys=("tx",))
    assert encode(req, 1) == hexb("0002 7478 01")
    assert encode(req, 4) == hexb("01 02 03 7478 00")


# -- encoder refusals ------------------------------------------------------------------------


def test_versions_outside_the_supported_ranges_raise() -> None:
    with pytest.raises(LocalProtocolError, match="not supported"):
        encode(ProduceRequest(), 2)  # Kafka 4 removed v0-2
    with pytest.raises(LocalProtocolError, match="not supported"):
        encode(InitProducerIdRequest(), 6)  # unstable in Kafka 4.3
    with pytest.raises(LocalProtocolError, match="not supported"):
        encode(AddPartitionsToTxnRequest(), 4)  # broker-to-coordinator only


def test_txn_offset_commit_group_metadata_needs_v3() -> None:
    req = TxnOffsetCommitRequest(
        transactional_id="tx", group_id="g", producer_id=7, producer_epoch=3, generation_id=5
    )
    with pytest.raises(LocalProtocolError, match="generation_id"):
        encode(req, 2)
    assert decode(TxnOffsetCommitRequest, encode(req, 3), 3) == req
    plain = TxnOffsetCommitRequest(transactional_id="tx", group_id="g")
    assert decode(TxnOffsetCommitRequest, encode(plain, 0), 0) == plain


def test_produce_response_fields_missing_in_old_versions_are_dropped_or_refused() -> None:
    part = PartitionProduceResponse(index=0, base_offset=5, log_start_offset=2)
    resp = ProduceResponse(responses=(TopicProduceResponse(name="t", partition_responses=(part,)),))
    # log_start_offset (v5+) is ignorable: dropped at v4, reads back as -1
    assert decode(ProduceResponse, encode(resp, 4), 4).responses[0].partition_responses[0] == (
        PartitionProduceResponse(index=0, base_offset=5)
    )
    led = ProduceResponse(node_endpoints=(NodeEndpoint(node_id=1, host="h", port=1),))
    with pytest.raises(LocalProtocolError, match="node_endpoints"):
        encode(led, 9)  # not ignorable


# -- fully populated round trips at the lowest and highest supported versions -----------------

FULL = [
    ProduceRequest(
        transactional_id="tx",
        acks=ACKS_ALL,
        timeout_ms=30000,
        topic_data=(
            TopicProduceData(
                name="t",
                topic_id=TOPIC_ID,
                partition_data=(
                    PartitionProduceData(index=0, records=RECORDS),
                    PartitionProduceData(index=1, records=None),
                ),
            ),
        ),
    ),
    ProduceResponse(
        responses=(
            TopicProduceResponse(
                name="t",
                topic_id=TOPIC_ID,
                partition_responses=(
                    PartitionProduceResponse(
                        index=0,
                        error_code=error_codes.INVALID_RECORD.code,
                        base_offset=-1,
                        log_append_time_ms=1700000000000,
                        log_start_offset=4,
                        record_errors=(
                            BatchIndexAndErrorMessage(
                                batch_index=2, batch_index_error_message="bad"
                            ),
                        ),
                        error_message="dropped",
                        current_leader=LeaderIdAndEpoch(leader_id=1, leader_epoch=2),
                    ),
                ),
            ),
        ),
        throttle_time_ms=10,
        node_endpoints=(NodeEndpoint(node_id=1, host="h", port=9092, rack="r"),),
    ),
    InitProducerIdRequest(
        transactional_id="tx", transaction_timeout_ms=60000, producer_id=7, producer_epoch=3
    ),
    InitProducerIdResponse(
        throttle_time_ms=1,
        error_code=error_codes.CONCURRENT_TRANSACTIONS.code,
        producer_id=7,
        producer_epoch=4,
    ),
    AddPartitionsToTxnRequest(
        transactions=(
            AddPartitionsToTxnTransaction(
                transactional_id="tx",
                producer_id=7,
                producer_epoch=3,
                verify_only=True,
                topics=(AddPartitionsToTxnTopic(name="t", partitions=(0,)),),
            ),
        ),
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=7,
        v3_and_below_producer_epoch=3,
        v3_and_below_topics=(AddPartitionsToTxnTopic(name="t", partitions=(0, 1, 2)),),
    ),
    AddPartitionsToTxnResponse(
        throttle_time_ms=1,
        results_by_topic_v3_and_below=(
            AddPartitionsToTxnTopicResult(
                name="t",
                results_by_partition=(
                    AddPartitionsToTxnPartitionResult(
                        partition_index=0,
                        partition_error_code=error_codes.INVALID_PRODUCER_EPOCH.code,
                    ),
                ),
            ),
        ),
    ),
    AddOffsetsToTxnRequest(transactional_id="tx", producer_id=7, producer_epoch=3, group_id="g"),
    AddOffsetsToTxnResponse(
        throttle_time_ms=1, error_code=error_codes.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code
    ),
    EndTxnRequest(transactional_id="tx", producer_id=7, producer_epoch=3, committed=True),
    EndTxnResponse(throttle_time_ms=1, error_code=0, producer_id=7, producer_epoch=4),
    TxnOffsetCommitRequest(
        transactional_id="tx",
        group_id="g",
        producer_id=7,
        producer_epoch=3,
        topics=(
            TxnOffsetCommitRequestTopic(
                name="t",
                partitions=(
                    TxnOffsetCommitRequestPartition(
                        partition_index=0,
                        committed_offset=42,
                        committed_leader_epoch=5,
                        committed_metadata=None,
                    ),
                ),
            ),
        ),
    ),
    TxnOffsetCommitResponse(
        throttle_time_ms=1,
        topics=(
            TxnOffsetCommitResponseTopic(
                name="t",
                partitions=(
                    TxnOffsetCommitResponsePartition(
                        partition_index=0, error_code=error_codes.UNKNOWN_PRODUCER_ID.code
                    ),
                ),
            ),
        ),
    ),
]
FULL_CASES = [
    (message, version)
    for message in FULL
    for version in sorted({type(message).MIN_VERSION, type(message).MAX_VERSION})
]


@pytest.mark.parametrize(
    ("message", "version"),
    FULL_CASES,
    ids=[f"{type(m).__name__}-v{v}" for m, v in FULL_CASES],
)
def test_full_round_trip_at_min_and_max_versions(message: object, version: int) -> None:
    # fields the version lacks are reset first (some are not ignorable and would be refused)
    assert_round_trip(message, version)


def test_full_cases_cover_every_new_message() -> None:
    covered = {type(m) for m in FULL}
    for key in (0, 22, 24, 25, 26, 28):
        assert REQUEST_TYPES[key] in covered
        assert RESPONSE_TYPES[key] in covered


# -- Kafka's own generated classes read our bytes and write back the same bytes --------------


def test_kafka_reads_and_rewrites_our_bytes(kafka_jar_paths: list[Path]) -> None:
    # For every supported version of every message above: Kafka's generated
    # ``<Name>Data(readable, version)`` consumes all our bytes, and its writer produces
    # exactly our bytes again (same fields, same tagged fields, same encodings).
    assert_kafka_reencodes(
        [
            (message, version)
            for message in FULL
            for version in range(type(message).MIN_VERSION, type(message).MAX_VERSION + 1)
        ],
        kafka_jar_paths,
    )
