"""Reader/Writer: round trips, boundaries, and every malformed length -> KafkaProtocolError."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol.primitives import (
    ZERO_UUID,
    Reader,
    Writer,
    uvarint_size,
    zigzag_decode,
    zigzag_encode,
)

FIXED = [
    ("int8", -128, 127, ">b"),
    ("int16", -(2**15), 2**15 - 1, ">h"),
    ("uint16", 0, 2**16 - 1, ">H"),
    ("int32", -(2**31), 2**31 - 1, ">i"),
    ("uint32", 0, 2**32 - 1, ">I"),
    ("int64", -(2**63), 2**63 - 1, ">q"),
]


def write(method: str, *args: object) -> bytes:
    w = Writer()
    getattr(w, method)(*args)
    return w.getvalue()


@pytest.mark.parametrize(("name", "low", "high", "fmt"), FIXED)
def test_fixed_width_boundaries(name: str, low: int, high: int, fmt: str) -> None:
    for value in (low, high, 0 if low <= 0 else low, 1):
        data = write(name, value)
        assert data == struct.pack(fmt, value)
        r = Reader(data)
        assert getattr(r, name)() == value
        assert r.at_end()
    for bad in (low - 1, high + 1):
        with pytest.raises(LocalProtocolError):
            write(name, bad)


@pytest.mark.parametrize(("name", "low", "high", "fmt"), FIXED)
def test_fixed_width_truncated(name: str, low: int, high: int, fmt: str) -> None:
    data = struct.pack(fmt, high)
    for cut in range(len(data)):
        r = Reader(data[:cut])
        with pytest.raises(KafkaProtocolError, match="my_field"):
            getattr(r, name)("my_field")
        assert r.position == 0  # nothing consumed on failure


def test_bool_uuid_float() -> None:
    u = uuid.uuid4()
    w = Writer()
    w.bool(True)
    w.bool(False)
    w.uuid(u)
    w.float64(1.5)
    r = Reader(w.getvalue())
    assert r.bool() is True
    assert r.bool() is False
    assert r.uuid() == u
    assert r.float64() == 1.5
    r.expect_end("test")
    assert Reader(b"\x02").bool() is True  # any non-zero byte is true
    with pytest.raises(KafkaProtocolError):
        Reader(b"\x00" * 15).uuid("topic_id")
    with pytest.raises(LocalProtocolError):
        Writer().uuid("not-a-uuid")  # type: ignore[arg-type]  # the error under test
    assert Reader(bytes(16)).uuid() == ZERO_UUID


# -- varints ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (300, b"\xac\x02"),
        (2**32 - 1, b"\xff\xff\xff\xff\x0f"),
    ],
)
def test_uvarint_golden(value: int, encoded: bytes) -> None:
    assert write("uvarint", value) == encoded
    assert Reader(encoded).uvarint() == value
    assert uvarint_size(value) == len(encoded)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-2, b"\x03"), (63, b"\x7e"), (-64, b"\x7f")],
)
def test_varint_zigzag_golden(value: int, encoded: bytes) -> None:
    assert write("varint", value) == encoded
    assert write("varlong", value) == encoded
    assert Reader(encoded).varint() == value
    assert Reader(encoded).varlong() == value


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(value: int) -> None:
    assert Reader(write("varint", value)).varint() == value
    assert zigzag_decode(zigzag_encode(value, 32)) == value


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    data = write("varlong", value)
    assert len(data) <= 10
    assert Reader(data).varlong() == value


@given(st.integers(0, 2**32 - 1))
def test_uvarint_round_trip(value: int) -> None:
    assert Reader(write("uvarint", value)).uvarint() == value


def test_varint_range_errors() -> None:
    with pytest.raises(LocalProtocolError):
        write("varint", 2**31)
    with pytest.raises(LocalProtocolError):
        write("uvarint", -1)
    with pytest.raises(LocalProtocolError):
        write("varlong", 2**63)


def test_varint_malformed() -> None:
    with pytest.raises(KafkaProtocolError, match="truncated varint in len"):
        Reader(b"\x80\x80").uvarint("len")
    with pytest.raises(KafkaProtocolError, match="longer than 5"):
        Reader(b"\xff\xff\xff\xff\xff\x01").uvarint("len")
    with pytest.raises(KafkaProtocolError, match="exceeds 32 bits"):
        Reader(b"\xff\xff\xff\xff\x1f").uvarint("len")
    with pytest.raises(KafkaProtocolError, match="longer than 10"):
        Reader(b"\xff" * 10 + b"\x01").varlong("len")
    with pytest.raises(KafkaProtocolError):
        Reader(b"").varint()


# -- strings and bytes --------------------------------------------------------------------


@given(st.text(max_size=50))
def test_strings_round_trip(text: str) -> None:
    for write_name, read_name in [
        ("string", "string"),
        ("nullable_string", "nullable_string"),
        ("compact_string", "compact_string"),
        ("compact_nullable_string", "compact_nullable_string"),
    ]:
        r = Reader(write(write_name, text))
        assert getattr(r, read_name)() == text
        assert r.at_end()


def test_string_golden() -> None:
    assert write("string", "ab") == b"\x00\x02ab"
    assert write("nullable_string", None) == b"\xff\xff"
    assert write("compact_string", "ab") == b"\x03ab"
    assert write("compact_nullable_string", None) == b"\x00"
    assert write("string", "é") == b"\x00\x02\xc3\xa9"  # length in UTF-8 bytes
    assert Reader(b"\xff\xff").nullable_string() is None
    assert Reader(b"\x00").compact_nullable_string() is None
    assert Reader(b"\x01").compact_string() == ""


def test_string_errors() -> None:
    with pytest.raises(KafkaProtocolError, match="null name"):
        Reader(b"\xff\xff").string("name")
    with pytest.raises(KafkaProtocolError, match="negative length -2 for name"):
        Reader(b"\xff\xfe").nullable_string("name")
    with pytest.raises(KafkaProtocolError, match="length 5 of name exceeds the 2 bytes left"):
        Reader(b"\x00\x05ab").string("name")
    with pytest.raises(KafkaProtocolError, match="null name"):
        Reader(b"\x00").compact_string("name")
    with pytest.raises(KafkaProtocolError, match="exceeds"):
        Reader(b"\x10ab").compact_nullable_string("name")
    with pytest.raises(KafkaProtocolError, match="UTF-8"):
        Reader(b"\x00\x01\xff").string("name")
    with pytest.raises(LocalProtocolError):
        write("string", None)
    with pytest.raises(LocalProtocolError, match="32767"):
        write("string", "x" * 32768)
    write("compact_string", "x" * 40000)  # compact strings have no int16 limit
    with pytest.raises(LocalProtocolError):
        write("string", 5)


def test_bytes_zero_copy_and_errors() -> None:
    data = b"\x00\x00\x00\x03abc\x04xyz"
    r = Reader(data)
    value = r.bytes("payload")
    assert isinstance(value, memoryview)
    assert value == b"abc"
    assert value.obj is data  # a view of the input, not a copy
    assert r.compact_bytes() == b"xyz"
    assert r.at_end()
    assert Reader(b"\xff\xff\xff\xff").nullable_bytes() is None
    assert Reader(b"\x00").compact_nullable_bytes() is None
    with pytest.raises(KafkaProtocolError, match="null records"):
        Reader(b"\xff\xff\xff\xff").bytes("records")
    with pytest.raises(KafkaProtocolError, match="negative length -7"):
        Reader(b"\xff\xff\xff\xf9").nullable_bytes("records")
    with pytest.raises(KafkaProtocolError, match="records"):
        Reader(b"\x7f\xff\xff\xff" + b"x" * 10).bytes("records")
    with pytest.raises(KafkaProtocolError):
        Reader(b"\x05ab").compact_bytes("records")
    assert write("nullable_bytes", None) == b"\xff\xff\xff\xff"
    assert write("bytes", memoryview(b"ab")) == b"\x00\x00\x00\x02ab"
    assert write("compact_nullable_bytes", bytearray(b"ab")) == b"\x03ab"
    with pytest.raises(LocalProtocolError):
        write("bytes", "text")


# -- arrays and tagged fields -------------------------------------------------------------


def test_arrays() -> None:
    w = Writer()
    w.array_length(3, compact=False, nullable=False)
    for i in range(3):
        w.int32(i)
    w.array_length(None, compact=True, nullable=True)
    w.array_length(2, compact=True, nullable=False)
    w.int8(7)
    w.int8(8)
    r = Reader(w.getvalue())
    assert r.array(lambda rr: rr.int32(), min_item_size=4) == (0, 1, 2)
    assert r.array(lambda rr: rr.int8(), compact=True, nullable=True) is None
    assert r.array(lambda rr: rr.int8(), compact=True) == (7, 8)
    assert r.at_end()
    with pytest.raises(LocalProtocolError):
        Writer().array_length(None, compact=False, nullable=False)


def test_array_counts_bounded_before_allocating() -> None:
    # a count of 2**31-1 with 8 bytes left must fail before building anything
    with pytest.raises(KafkaProtocolError, match="partitions"):
        Reader(b"\x7f\xff\xff\xff" + bytes(8)).array_length(
            "partitions", compact=False, nullable=False
        )
    # 3 int32 need 12 bytes, only 8 left
    with pytest.raises(KafkaProtocolError, match="exceeds"):
        Reader(b"\x00\x00\x00\x03" + bytes(8)).array_length(
            "ids", compact=False, nullable=False, min_item_size=4
        )
    with pytest.raises(KafkaProtocolError, match="null ids"):
        Reader(b"\xff\xff\xff\xff").array_length("ids", compact=False, nullable=False)
    with pytest.raises(KafkaProtocolError, match="negative"):
        Reader(b"\xff\xff\xff\xfe").array_length("ids", compact=False, nullable=True)
    with pytest.raises(KafkaProtocolError, match="null ids"):
        Reader(b"\x00").array_length("ids", compact=True, nullable=False)


def test_tagged_fields() -> None:
    w = Writer()
    w.tagged_fields([(5, b"\x01\x02"), (0, b"")])
    data = w.getvalue()
    assert data == b"\x02\x00\x00\x05\x02\x01\x02"  # ascending tag order
    fields = Reader(data).tagged_fields()
    assert [(tag, bytes(sub.raw(sub.remaining))) for tag, sub in fields] == [
        (0, b""),
        (5, b"\x01\x02"),
    ]
    assert write("tagged_fields") == b"\x00"
    with pytest.raises(KafkaProtocolError, match="tag 5"):
        Reader(b"\x01\x05\x09\x00").tagged_fields()
    with pytest.raises(KafkaProtocolError, match="count"):
        Reader(b"\x7f\x00").tagged_fields()
    with pytest.raises(KafkaProtocolError):
        Reader(b"\x01\x05").tagged_fields()


def test_reader_bounds_and_sub_reader() -> None:
    r = Reader(b"\x00\x01\x00\x02\x00\x03", 2, 4)
    assert r.remaining == 2
    sub = r.sub_reader(2, "inner")
    assert sub.int16() == 2
    assert r.at_end()
    with pytest.raises(KafkaProtocolError):
        sub.int8()
    with pytest.raises(KafkaProtocolError, match="trailing"):
        Reader(b"\x00").expect_end("frame")
    with pytest.raises(KafkaProtocolError, match="negative"):
        Reader(b"").skip(-1)
    with pytest.raises(ValueError):
        Reader(b"ab", 3)


@given(st.binary(max_size=64))
def test_reader_never_leaks_other_errors(data: bytes) -> None:
    """Every Reader method on arbitrary bytes returns or raises KafkaProtocolError."""
    methods = [
        "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid", "bool",
        "uvarint", "varint", "uvarlong", "varlong", "string", "nullable_string",
        "compact_string", "compact_nullable_string", "bytes", "nullable_bytes",
        "compact_bytes", "compact_nullable_bytes", "tagged_fields",
    ]  # fmt: skip
    for name in methods:
        r = Reader(data)
        try:
            while not r.at_end():
                getattr(r, name)()
        except KafkaProtocolError:
            pass
