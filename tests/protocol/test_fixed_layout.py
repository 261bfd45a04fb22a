"""Structs whose fields are all fixed-width are read and written in one ``struct`` call, and
arrays of them in one ``iter_unpack``; the bytes and the objects must be those of the
field-by-field path, whose errors (naming the field) stay in use for bad input."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol import schema
from spark_kafka_py.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
)
from spark_kafka_py.protocol.schema import decode, encode

VERSIONS = range(ListOffsetsResponse.MIN_VERSION, ListOffsetsResponse.MAX_VERSION + 1)


def _response(version: int, partitions: int = 50) -> ListOffsetsResponse:
    epoch = 7 if version >= 4 else -1
    return ListOffsetsResponse(
        topics=tuple(
            ListOffsetsTopicResponse(
                name=f"t{t}",
                partitions=tuple(
                    ListOffsetsPartitionResponse(
                        partition_index=p,
                        error_code=p % 3,
                        timestamp=1_700_000_000_000 + p,
                        offset=2**40 + p,
                        leader_epoch=epoch,
                    )
                    for p in range(partitions)
                ),
            )
            for t in range(3)
        )
    )


def _request(version: int) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        isolation_level=1 if version >= 2 else 0,
        topics=tuple(
            ListOffsetsTopic(
                name=f"t{t}",
                partitions=tuple(
                    ListOffsetsPartition(partition_index=p, timestamp=-1 - p % 2) for p in range(40)
                ),
            )
            for t in range(2)
        ),
    )


@pytest.fixture
def field_by_field(monkeypatch: pytest.MonkeyPatch):
    """Switch the one-call paths off (what the bytes and objects are compared against)."""

    def off() -> None:
        monkeypatch.setattr(schema, "_write_elements", lambda *a: False)
        monkeypatch.setattr(schema, "_read_elements", lambda *a: None)
        monkeypatch.setattr(schema, "_fixed_layout", lambda regular: None)
        for cls in (ListOffsetsPartition, ListOffsetsPartitionResponse):
            monkeypatch.setattr(cls, "_kafka_plans", {})

    return off


@pytest.mark.parametrize("version", VERSIONS)
def test_same_bytes_and_objects_as_field_by_field(version: int, field_by_field) -> None:
    response, request = _response(version), _request(version)
    fast = (encode(response, version), encode(request, version))
    decoded = decode(ListOffsetsResponse, fast[0], version)
    field_by_field()
    assert (encode(response, version), encode(request, version)) == fast
    assert decode(ListOffsetsResponse, fast[0], version) == decoded == response
    assert decode(ListOffsetsRequest, fast[1], version) == request


def test_decoded_elements_are_ordinary_frozen_objects() -> None:
    data = encode(_response(10), 10)
    part = decode(ListOffsetsResponse, data, 10).topics[0].partitions[4]
    assert part == ListOffsetsPartitionResponse(
        partition_index=4,
        error_code=1,
        timestamp=1_700_000_000_004,
        offset=2**40 + 4,
        leader_epoch=7,
    )
    assert hash(part) == hash(dataclasses.replace(part))
    assert pickle.loads(pickle.dumps(part)) == part
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.offset = 0  # type: ignore[misc]  # frozen: the error under test


def test_an_element_with_tagged_fields_is_read_one_by_one() -> None:
    """Flexible versions: an unknown tagged field on one element (Kafka may add some) sends
    the array back to the field-by-field path, which skips it."""
    version = 10
    response = _response(version, partitions=3)
    data = bytearray(encode(response, version))
    # the first partition of the first topic: its empty tagged section (the 0 after its 26
    # bytes of fields) becomes one unknown tag 9 of one byte
    first = data.index(b"t0") + 2 + 1  # name, then the compact array length
    tag_at = first + 4 + 2 + 8 + 8 + 4
    assert data[tag_at] == 0
    data[tag_at : tag_at + 1] = b"\x01\x09\x01\xff"
    assert decode(ListOffsetsResponse, bytes(data), version) == response


@pytest.mark.parametrize("cut", [1, 5, 13])
def test_truncated_arrays_name_the_field(cut: int) -> None:
    data = encode(_response(10), 10)
    with pytest.raises(KafkaProtocolError, match="truncated"):
        decode(ListOffsetsResponse, data[:-cut], 10)


def test_out_of_range_values_still_name_the_field() -> None:
    bad = ListOffsetsRequest(
        topics=(
            ListOffsetsTopic(
                name="t",
                partitions=(
                    ListOffsetsPartition(partition_index=0, timestamp=-1),
                    ListOffsetsPartition(partition_index=2**31, timestamp=-1),
                ),
            ),
        )
    )
    with pytest.raises(LocalProtocolError, match="partition_index"):
        encode(bad, 10)
