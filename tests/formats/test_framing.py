"""Confluent's wire format: magic byte 0x00, a 4-byte big-endian schema id, the payload.

Expected bytes are written out by hand from the format's layout (Confluent Schema Registry
documentation, "Wire format"), never produced by the code under test.
"""

from __future__ import annotations

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
