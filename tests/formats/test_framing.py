"""Confluent's wire format: magic byte 0x00, a 4-byte big-endian schema id, the payload; and
Confluent 8's header schema ids (0x00 and a 4-byte id, or 0x01 and a 16-byte GUID).

Expected bytes are written out by hand from the format's layout (Confluent Schema Registry
documentation, "Wire format"), never produced by the code under test.
"""

from __future__ import annotations

import uuid

import pytest

from spark_kafka_py.errors import KafkaError
from spark_kafka_py.formats import framing
from spark_kafka_py.formats.errors import FramingError


def test_parse_reads_the_id_big_endian_and_slices_the_payload() -> None:
    framed = framing.parse(b"\x00\x00\x00\x01\x02payload")
    assert framed.schema_id == 258
    assert bytes(framed.payload) == b"payload"


def test_parse_accepts_an_empty_payload_and_memoryviews() -> None:
    framed = framing.parse(memoryview(b"\x00\x7f\xff\xff\xff"))
    assert framed.schema_id == 2**31 - 1
    assert bytes(framed.payload) == b""


def test_ids_are_signed_32_bit() -> None:
    assert framing.schema_id(b"\x00\xff\xff\xff\xff") == -1


def test_build_writes_magic_id_payload() -> None:
    assert framing.build(258, b"abc") == b"\x00\x00\x00\x01\x02abc"
    assert framing.build(-1, b"") == b"\x00\xff\xff\xff\xff"


@pytest.mark.parametrize("schema_id", [2**31, -(2**31) - 1])
def test_build_refuses_ids_outside_32_bits(schema_id: int) -> None:
    with pytest.raises(FramingError, match="32-bit"):
        framing.build(schema_id, b"")


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x00\x00\x01"])
def test_short_values_are_typed_errors(data: bytes) -> None:
    with pytest.raises(FramingError, match="fewer than the 5-byte header") as info:
        framing.parse(data)
    assert isinstance(info.value, KafkaError)
    assert not info.value.retriable


def test_a_value_without_the_magic_byte_is_a_typed_error() -> None:
    # a JSON value on a topic expected to carry Avro: '{' is 0x7b
    with pytest.raises(FramingError, match="magic byte 0x7b, expected 0x00"):
        framing.parse(b'{"a": 1}')


def test_parse_does_not_copy_the_payload() -> None:
    data = bytearray(b"\x00\x00\x00\x00\x05xyz")
    framed = framing.parse(data)
    data[5] = ord("X")
    assert bytes(framed.payload) == b"Xyz"


# -- header schema ids (Confluent 8: __value_schema_id / __key_schema_id) ------------------------


def test_header_names() -> None:
    assert framing.VALUE_SCHEMA_ID_HEADER == "__value_schema_id"
    assert framing.KEY_SCHEMA_ID_HEADER == "__key_schema_id"


def test_a_header_id_is_0x00_and_a_big_endian_signed_int() -> None:
    assert framing.parse_header_id(b"\x00\x00\x00\x01\x02") == 258
    assert framing.parse_header_id(bytearray(b"\x00\xff\xff\xff\xff")) == -1
    assert framing.build_header_id(258) == b"\x00\x00\x00\x01\x02"


def test_a_header_guid_is_0x01_and_16_bytes_most_significant_first() -> None:
    guid = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
    value = bytes.fromhex("010f1e2d3c4b5a69788796a5b4c3d2e1f0")
    parsed = framing.parse_header_id(memoryview(value))
    assert isinstance(parsed, uuid.UUID) and parsed == guid
    assert framing.build_header_id(guid) == value


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, "without a value"),
        (b"", "an empty schema id header"),
        (b"\x00\x00\x00\x01", "4 bytes; an id's is 5"),
        (b"\x00\x00\x00\x00\x01\x02", "6 bytes; an id's is 5"),
        (b"\x01" + bytes(15), "16 bytes; a GUID's is 17"),
        (b"\x01" + bytes(17), "18 bytes; a GUID's is 17"),
        (b"\x02\x00\x00\x00\x01", "starting 0x02, expected 0x00 \\(an id\\) or 0x01"),
        (b"123", "starting 0x31"),
    ],
)
def test_bad_header_values_are_typed_errors(value: bytes | None, match: str) -> None:
    with pytest.raises(FramingError, match=match) as info:
        framing.parse_header_id(value)
    assert isinstance(info.value, KafkaError) and not info.value.retriable


def test_build_header_id_refuses_ids_outside_32_bits() -> None:
    with pytest.raises(FramingError, match="32-bit"):
        framing.build_header_id(2**31)


def test_header_id_takes_the_last_header_of_the_name() -> None:
    headers = [
        ("__value_schema_id", b"\x00\x00\x00\x00\x01"),
        ("__key_schema_id", b"\x00\x00\x00\x00\x02"),
        ("trace", None),
        ("__value_schema_id", b"\x00\x00\x00\x00\x03"),
    ]
    assert framing.header_id(headers) == 3
    assert framing.header_id(headers, key=True) == 2
    assert framing.header_id([("trace", b"x")]) is None
    assert framing.header_id([]) is None
    with pytest.raises(FramingError, match="without a value"):
        framing.header_id([("__key_schema_id", None)], key=True)
