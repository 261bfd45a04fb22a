"""Confluent's Protobuf framing (magic byte, schema id, message indexes): byte vectors typed in
from Confluent's "Wire format" documentation, hostile inputs, and confluent-kafka's own
``ProtobufSerializer`` / ``ProtobufDeserializer`` through the real registry (the
``schema_registry`` fixture: Apicurio's Confluent-compatible API)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import message_factory
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafka_py.formats.errors import FramingError
from spark_kafka_py.formats.protobuf import (
    ProtobufDecoder,
    ProtobufSchema,
    framing,
    parse_base64_file_descriptor,
    parse_proto,
)
from spark_kafka_py.testing.registry import confluent_conf

NESTED = """
syntax = "proto3";
package fr;
message A { message B { int32 x = 1; } message C { string s = 1; repeated int64 n = 2; } }
message D { string name = 1; }
"""


@pytest.mark.parametrize(
    ("indexes", "wire"),
    [
        ((0,), b"\x00"),  # the first message: the single byte 0
        ((1,), b"\x02\x02"),  # count 1 (zigzag 2), index 1 (zigzag 2)
        ((0, 1), b"\x04\x00\x02"),
        ((0, 1, 64), b"\x06\x00\x02\x80\x01"),  # 64 -> zigzag 128: two varint bytes
    ],
)
def test_message_indexes_vectors(indexes: tuple[int, ...], wire: bytes) -> None:
    assert framing.build_indexes(indexes) == wire
    framed = b"\x00\x00\x00\x01\x2c" + wire + b"\x08\x07"
    assert framing.build(300, indexes, b"\x08\x07") == framed
    got = framing.parse(framed)
    assert (got.schema_id, got.indexes, bytes(got.payload)) == (300, indexes, b"\x08\x07")
    # byte by byte: every cut inside the header or the indexes is a FramingError
    for cut in range(5 + len(wire)):
        with pytest.raises(FramingError):
            framing.parse(framed[:cut])


@pytest.mark.parametrize(
    ("after_header", "match"),
    [
        (b"\x01\x02", "count of -1"),  # zigzag 1 = -1
        (b"\xc8\x01", "index varint runs past the end"),  # 100 indexes announced, none follow
        (b"\xca\x01", "count of 101"),  # 202 -> 101: over the bound
        (b"\x02\x01", "negative message index"),
        (b"\x02\xff\xff\xff\xff\xff\x01", "longer than 5 bytes"),
        (b"\x02\x80", "past the end"),
    ],
)
def test_hostile_indexes(after_header: bytes, match: str) -> None:
    with pytest.raises(FramingError, match=match):
        framing.parse(b"\x00\x00\x00\x00\x01" + after_header)


def test_build_refuses() -> None:
    for bad in ([], [-1], [2**31], [0] * 101):
        with pytest.raises(FramingError):
            framing.build_indexes(bad)
    with pytest.raises(FramingError):
        framing.parse(b"\x01\x00\x00\x00\x01\x00")  # not the magic byte


# --- confluent-kafka's serializers through the real registry -------------------------------


@pytest.fixture(scope="module")
def nested() -> ProtobufSchema:
    return parse_proto(NESTED, name="fr/nested.proto")


@pytest.fixture(scope="module")
def confluent(schema_registry: str) -> Iterator[object]:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    yield SchemaRegistryClient(confluent_conf(schema_registry))


@pytest.mark.integration
def test_confluent_serializer_framing_read_by_ours(
    confluent: object, nested: ProtobufSchema
) -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import (
        ProtobufDeserializer,
        ProtobufSerializer,
    )
    from confluent_kafka.serialization import MessageField, SerializationContext

    assert isinstance(confluent, SchemaRegistryClient)
    C = message_factory.GetMessageClass(nested.pool.FindMessageTypeByName("fr.A.C"))
    serializer = ProtobufSerializer(C, confluent, {"use.deprecated.format": False})
    ctx = SerializationContext("proto-framing", MessageField.VALUE)
    message = C(s="hé", n=[1, -2, 2**40])
    framed = serializer(message, ctx)
    assert framed is not None

    got = framing.parse(framed)
    assert got.indexes == (0, 1)  # A is message 0 of the file, C its nested message 1
    assert bytes(got.payload) == message.SerializeToString()
    registered = confluent.get_latest_version("proto-framing-value")
    assert got.schema_id == registered.schema_id

    # the registry's text for that id, parsed by ours, names the same message
    text = confluent.get_schema(got.schema_id).schema_str
    assert text is not None
    try:
        base64.b64decode(text, validate=True)
        schema = parse_base64_file_descriptor(text)
    except binascii.Error:
        schema = parse_proto(text, name="fr/nested.proto")
    descriptor = schema.message_by_indexes(got.indexes)
    assert descriptor.full_name == "fr.A.C"
    rows = ProtobufDecoder(schema, descriptor).decode([got.payload]).to_pylist()
    assert rows == [{"s": "hé", "n": [1, -2, 2**40]}]

    # ours frames, confluent's deserializer reads it back
    ours = framing.build(got.schema_id, (0, 1), message.SerializeToString())
    assert ours == framed
    back = ProtobufDeserializer(C, {"use.deprecated.format": False})(ours, ctx)
    assert back == message


# -- common_head: the framing a whole batch shares (the in-place route's check) ---------------

HEAD = b"\x00\x00\x00\x00\x07\x00"  # magic, schema id 7, message indexes [0]


@pytest.fixture(params=["compiled", "arrow"])
def head_of(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``framing.common_head`` by the compiled twin, then by the Arrow kernels alone."""
    if request.param == "compiled":
        if framing._ACCEL is None:
            pytest.fail("the compiled protobuf extension is not built")
    else:
        monkeypatch.setattr(framing, "_ACCEL", None)
    return framing.common_head


@pytest.mark.parametrize(
    ("values", "size", "expected"),
    [
        ([HEAD + b"\x08\x01", HEAD + b"\x08\x02", HEAD], 6, HEAD),
        ([HEAD + b"\x08\x01", None, HEAD + b"\x10\x03"], 6, HEAD),  # nulls do not count
        ([HEAD + b"\x08\x01", b"\x00\x00\x00\x00\x08\x00\x08\x01"], 6, None),  # another id
        ([HEAD + b"\x08\x01", HEAD[:5]], 6, None),  # one value too short
        ([HEAD + b"\x08\x01", b"\x00\x00\x00\x00\x07\x02\x02"], 6, None),  # indexes [1]
        ([b"\x00\x00\x00\x00\x07\x02\x02\x08\x01"], 7, b"\x00\x00\x00\x00\x07\x02\x02"),
        ([None, None], 6, None),
        ([], 6, None),
        ([b"ab", b"ac"], 0, b""),
        ([b"abc", b"abd"], 2, b"ab"),
    ],
)
def test_common_head(
    head_of: Any, values: list[bytes | None], size: int, expected: bytes | None
) -> None:
    assert head_of(pa.array(values, pa.binary()), size) == expected
    assert head_of(pa.array(values, pa.large_binary()), size) == expected


def test_common_head_of_a_slice_reads_only_the_slice(head_of: Any) -> None:
    column = pa.array([b"\x01other", HEAD + b"\x08\x01", None, HEAD, b"x"], pa.binary())
    assert head_of(column, 6) is None
    assert head_of(column.slice(1, 3), 6) == HEAD
    assert head_of(column.slice(3, 2), 6) is None  # b"x" is shorter


def test_common_head_refuses_other_columns(head_of: Any) -> None:
    with pytest.raises(ValueError, match="binary column was expected"):
        head_of(pa.array(["text"]), 1)
    with pytest.raises(ValueError, match="size must be >= 0"):
        head_of(pa.array([b"x"], pa.binary()), -1)


@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=8)), max_size=12),
    st.integers(min_value=0, max_value=6),
    st.sampled_from([b"", b"\x00", b"\x00\x01\x02"]),
)
@settings(max_examples=300, deadline=None)
def test_common_head_twins_agree_with_a_loop(
    values: list[bytes | None], size: int, prefix: bytes
) -> None:
    values = [None if v is None else prefix + v for v in values]  # shared heads are common
    present = [v for v in values if v is not None]
    heads = {v[:size] for v in present}
    expected = (
        heads.pop()
        if present and all(len(v) >= size for v in present) and len(heads) == 1
        else None
    )
    column = pa.array(values, pa.binary())
    assert framing.common_head(column, size) == expected
    kept = framing._ACCEL
    try:
        framing._ACCEL = None  # type: ignore[misc]
        assert framing.common_head(column, size) == expected
    finally:
        framing._ACCEL = kept  # type: ignore[misc]
