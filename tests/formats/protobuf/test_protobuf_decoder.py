"""The Protobuf decoder and type mapping against spark-protobuf's rules, written here by hand.

Expected values are typed in from spark-protobuf's documented behaviour (``ProtobufOptions``'
comments, ``SchemaConverters``, ``ProtobufDeserializer``), never computed by the code under
test; payloads are built by the protobuf package's own serializer or typed in as wire bytes
(the Protobuf encoding specification) for what its serializer never writes (a zero on the
wire, duplicate map keys, an unknown enum number, malformed bytes). Generated messages are
also checked against protobuf's ``json_format`` reader (an independent reading of the same
bytes).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from spark_kafka_py.formats.errors import ProtobufDecodeError, ProtobufSchemaError
from spark_kafka_py.formats.protobuf import (
    ProtobufDecoder,
    ProtobufOptions,
    ProtobufSchema,
    arrow_type,
    compile_proto,
    decode_protobuf,
    load_descriptor_set,
    parse_base64_file_descriptor,
    parse_descriptor_set,
    parse_proto,
    to_spark,
)

ALL_TYPES = """
syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
message Inner { string s = 1; int32 i = 2; }
message All {
  enum Color { RED = 0; GREEN = 1; BLUE = 2; }
  int32 i32 = 1;
  uint32 u32 = 2;
  uint64 u64 = 3;
  optional string opt = 4;
  bytes raw = 5;
  repeated int64 longs = 6;
  map<string, Inner> by_name = 7;
  Color color = 8;
  oneof choice { string text = 9; Inner inner = 10; }
  google.protobuf.Timestamp ts = 11;
  google.protobuf.Duration dur = 12;
  google.protobuf.Int32Value wrapped = 13;
  float f32 = 14;
  repeated Inner inners = 15;
  fixed32 fx32 = 16;
  sint64 s64 = 17;
  double f64 = 18;
  bool flag = 19;
  repeated Color colors = 20;
  map<int32, string> names = 21;
}
"""

PERSON = """
syntax = "proto3";
package t;
message Person { string name = 1; Person bff = 2; }
"""

UTC = dt.timezone.utc


def _cls(schema: ProtobufSchema, name: str) -> type[Message]:
    return message_factory.GetMessageClass(schema.pool.FindMessageTypeByName(name))


@pytest.fixture(scope="module")
def all_types() -> ProtobufSchema:
    return parse_proto(ALL_TYPES)


def _ddl(spark: dict[str, Any]) -> str:
    """A compact rendering of Spark type JSON, written here to compare with hand-typed DDL."""

    def render(t: Any) -> str:
        if isinstance(t, str):
            return t
        if t["type"] == "struct":
            return (
                "struct<"
                + ",".join(
                    f"{f['name']}:{render(f['type'])}{'' if f['nullable'] else ' not null'}"
                    for f in t["fields"]
                )
                + ">"
            )
        if t["type"] == "array":
            return f"array<{render(t['elementType'])}{'' if t['containsNull'] else ' not null'}>"
        return (
            f"map<{render(t['keyType'])},{render(t['valueType'])}"
            f"{'' if t['valueContainsNull'] else ' not null'}>"
        )

    return render(spark)


def test_mapping_as_spark_protobuf_maps_it(all_types: ProtobufSchema) -> None:
    got = _ddl(to_spark(all_types.message("t.All")))
    want = (
        "struct<i32:integer,u32:integer,u64:long,opt:string,raw:binary,"
        "longs:array<long not null>,by_name:map<string,struct<s:string,i:integer> not null>,"
        "color:string,text:string,inner:struct<s:string,i:integer>,ts:timestamp,"
        "dur:interval day to second,wrapped:struct<value:integer>,f32:float,"
        "inners:array<struct<s:string,i:integer> not null>,fx32:integer,s64:long,f64:double,"
        "flag:boolean,colors:array<string not null>,names:map<integer,string not null>>"
    )
    assert got == want
    assert json.loads(json.dumps(to_spark(all_types.message("t.All"))))["type"] == "struct"


def test_mapping_options(all_types: ProtobufSchema) -> None:
    o = ProtobufOptions.from_map(
        {
            "enums.as.ints": "true",
            "upcast.unsigned.ints": "TRUE",
            "unwrap.primitive.wrapper.types": "true",
        }
    )
    got = _ddl(to_spark(all_types.message("All"), o))
    assert got.startswith("struct<i32:integer,u32:long,u64:decimal(20,0),")
    assert ",color:integer," in got
    assert ",wrapped:integer," in got
    assert ",fx32:integer," in got  # fixed32 is not upcast (only uint32 is)
    assert ",colors:array<integer not null>," in got


def test_arrow_types(all_types: ProtobufSchema) -> None:
    t = arrow_type(all_types.message("t.All"))
    assert t.field("ts").type == pa.timestamp("us", tz="UTC")
    assert t.field("dur").type == pa.duration("us")
    assert t.field("longs").type == pa.list_(pa.field("element", pa.int64(), nullable=False))
    assert t.field("by_name").type.item_field.nullable is False


@pytest.mark.parametrize(
    ("depth", "want"),
    [
        # ProtobufOptions' own examples for `message Person { string name; Person friend }`
        (1, "struct<name:string>"),
        (2, "struct<name:string,bff:struct<name:string>>"),
        (3, "struct<name:string,bff:struct<name:string,bff:struct<name:string>>>"),
    ],
)
def test_recursion_truncated_at_the_depth(depth: int, want: str) -> None:
    schema = parse_proto(PERSON)
    o = ProtobufOptions(recursive_fields_max_depth=depth)
    assert _ddl(to_spark(schema.message("t.Person"), o)) == want


@pytest.mark.parametrize("depth", [-1, 0, 11])
def test_recursion_refused_by_default_and_out_of_range(depth: int) -> None:
    schema = parse_proto(PERSON)
    with pytest.raises(ProtobufSchemaError, match="recursive"):
        to_spark(schema.message("t.Person"), ProtobufOptions(recursive_fields_max_depth=depth))


def test_recursive_rows_truncated() -> None:
    schema = parse_proto(PERSON)
    Person = _cls(schema, "t.Person")
    p = Person(name="a", bff=Person(name="b", bff=Person(name="c")))
    o = ProtobufOptions(recursive_fields_max_depth=2)
    got = decode_protobuf([p.SerializeToString()], schema, "t.Person", o).to_pylist()
    assert got == [{"name": "a", "bff": {"name": "b"}}]


def test_empty_message_dropped_or_retained() -> None:
    schema = parse_proto(
        'syntax = "proto3"; package e; message A {} message B { A a = 1; string name = 2; }'
    )
    assert _ddl(to_spark(schema.message("e.B"))) == "struct<name:string>"
    o = ProtobufOptions(retain_empty_message_types=True)
    assert _ddl(to_spark(schema.message("e.B"), o)) == (
        "struct<a:struct<__dummy_field_in_empty_struct:string>,name:string>"
    )
    B = _cls(schema, "e.B")
    payloads = [B(name="n", a={}).SerializeToString(), B(name="m").SerializeToString()]
    assert decode_protobuf(payloads, schema, "e.B", o).to_pylist() == [
        {"a": {"__dummy_field_in_empty_struct": None}, "name": "n"},
        {"a": None, "name": "m"},
    ]
    assert decode_protobuf(payloads, schema, "e.B").to_pylist() == [{"name": "n"}, {"name": "m"}]


def test_rows(all_types: ProtobufSchema) -> None:
    All = _cls(all_types, "t.All")
    m = All(
        i32=-5,
        u32=2**32 - 1,
        u64=2**64 - 1,
        opt="",
        raw=b"\x00\xff",
        longs=[1, -2],
        color=1,
        inner={"s": "x"},
        f32=1.5,
        inners=[{"i": 3}],
        fx32=2**31,
        s64=-7,
        f64=-0.0,
        flag=True,
        colors=[2, 0],
    )
    m.by_name["k"].i = 4
    m.ts.seconds, m.ts.nanos = 10, 1500
    m.dur.seconds, m.dur.nanos = -1, -1500
    m.wrapped.value = 0
    m.names[7] = "seven"
    rows = decode_protobuf([m.SerializeToString(), b"", None], all_types, "t.All").to_pylist()
    assert rows[0] == {
        "i32": -5,
        "u32": -1,  # Java's int of the same bits
        "u64": -1,
        "opt": "",  # proto3 optional: present, even empty
        "raw": b"\x00\xff",
        "longs": [1, -2],
        "by_name": [("k", {"s": None, "i": 4})],
        "color": "GREEN",
        "text": None,
        "inner": {"s": "x", "i": None},
        "ts": dt.datetime(1970, 1, 1, 0, 0, 10, 1, tzinfo=UTC),
        # -1 s - 1500 ns: nanos / 1000 truncated (spark-protobuf: TimeUnit.NANOSECONDS.toMicros)
        "dur": dt.timedelta(microseconds=-1_000_001),
        "wrapped": {"value": None},  # Int32Value(0): present, its value not on the wire
        "f32": 1.5,
        "inners": [{"s": None, "i": 3}],
        "fx32": -(2**31),
        "s64": -7,
        "f64": -0.0,
        "flag": True,
        "colors": ["BLUE", "RED"],
        "names": [(7, "seven")],
    }
    empty = dict.fromkeys(rows[0])
    empty.update(longs=[], by_name=[], inners=[], colors=[], names=[])
    assert rows[1] == empty
    assert rows[2] is None


def test_emit_default_values_and_enums_as_ints(all_types: ProtobufSchema) -> None:
    o = ProtobufOptions(emit_default_values=True, enums_as_ints=True)
    (row,) = decode_protobuf([b""], all_types, "t.All", o).to_pylist()
    # implicit-presence scalars read as their zero; fields with presence stay null
    assert row["i32"] == 0 and row["u64"] == 0 and row["raw"] == b"" and row["flag"] is False
    assert row["color"] == 0 and row["f64"] == 0.0
    assert row["opt"] is None and row["text"] is None and row["inner"] is None
    assert row["ts"] is None and row["wrapped"] is None


def test_spark_doc_example_of_emit_default_values() -> None:
    schema = parse_proto(
        'syntax = "proto3"; message Person { string name = 1; int64 age = 2;'
        " optional string middle_name = 3; optional int64 salary = 4; }"
    )
    payload = _cls(schema, "Person")(age=0, middle_name="").SerializeToString()
    plain = decode_protobuf([payload], schema, "Person").to_pylist()
    assert plain == [{"name": None, "age": None, "middle_name": "", "salary": None}]
    emit = decode_protobuf([payload], schema, "Person", ProtobufOptions(emit_default_values=True))
    assert emit.to_pylist() == [{"name": "", "age": 0, "middle_name": "", "salary": None}]


def test_wire_order_duplicate_map_keys_zero_on_wire_unknown_enum(
    all_types: ProtobufSchema,
) -> None:
    # field 21 map<int32,string>: two entries with key 1 ("a" then "b"), then key 0 unset
    entry_a = bytes([0x08, 0x01, 0x12, 0x01]) + b"a"
    entry_b = bytes([0x08, 0x01, 0x12, 0x01]) + b"b"
    entry_empty = b""
    payload = b"".join(bytes([0xAA, 0x01, len(e)]) + e for e in (entry_a, entry_b, entry_empty))
    payload += bytes([0x08, 0x00])  # i32 = 0 written explicitly: still not present
    payload += bytes([0x40, 0x09])  # color = 9: no such value in the (open) enum
    (row,) = decode_protobuf([payload], all_types, "t.All").to_pylist()
    assert row["names"] == [(1, "a"), (1, "b"), (0, "")]
    assert row["i32"] is None
    assert row["color"] == "UNKNOWN_ENUM_VALUE_Color_9"


def test_failfast_names_the_record_and_permissive_nulls_it(all_types: ProtobufSchema) -> None:
    good = _cls(all_types, "t.All")(i32=1).SerializeToString()
    bad = bytes([0x0A, 0x05, 0x01])  # a length past the end
    with pytest.raises(ProtobufDecodeError) as e:
        decode_protobuf([good, bad], all_types, "t.All")
    assert e.value.index == 1
    o = ProtobufOptions.from_map({"mode": "permissive"})
    rows = decode_protobuf([good, bad], all_types, "t.All", o).to_pylist()
    assert rows[0]["i32"] == 1 and rows[1] is None


def test_uint64_upcast_to_decimal(all_types: ProtobufSchema) -> None:
    m = _cls(all_types, "t.All")(u64=2**64 - 1, u32=2**32 - 1)
    o = ProtobufOptions(upcast_unsigned_ints=True)
    (row,) = decode_protobuf([m.SerializeToString()], all_types, "t.All", o).to_pylist()
    assert row["u64"] == Decimal(2**64 - 1) and row["u32"] == 2**32 - 1


def test_unwrapped_wrappers(all_types: ProtobufSchema) -> None:
    All = _cls(all_types, "t.All")
    zero, seven = All(), All()
    zero.wrapped.value = 0
    seven.wrapped.value = 7
    payloads = [zero.SerializeToString(), seven.SerializeToString(), b""]
    # the wrapper's value has no presence: Int32Value(0) => null, unless emit.default.values
    # (spark-protobuf's getFieldValue; its ProtobufOptions: with emit defaults, nil => nil,
    # Int32Value(0) => 0); Spark 4.3's from_protobuf gives the same (the oracle module)
    o = ProtobufOptions(unwrap_primitive_wrapper_types=True)
    rows = decode_protobuf(payloads, all_types, "t.All", o).to_pylist()
    assert [r["wrapped"] for r in rows] == [None, 7, None]
    o = ProtobufOptions(unwrap_primitive_wrapper_types=True, emit_default_values=True)
    rows = decode_protobuf(payloads, all_types, "t.All", o).to_pylist()
    assert [r["wrapped"] for r in rows] == [0, 7, None]


# --- descriptors -------------------------------------------------------------------------


def test_imports_and_descriptor_set_forms(tmp_path: Path) -> None:
    dep = 'syntax = "proto3"; package d; message Dep { int32 x = 1; }'
    main = 'syntax = "proto3"; package m; import "d/dep.proto"; message M { d.Dep dep = 1; }'
    raw = compile_proto(main, {"d/dep.proto": dep}, name="m.proto")
    (tmp_path / "set.desc").write_bytes(raw)
    for schema in (parse_descriptor_set(raw), load_descriptor_set(tmp_path / "set.desc")):
        assert schema.message().full_name == "m.M"
        assert _ddl(to_spark(schema.message("m.M"))) == "struct<dep:struct<x:integer>>"


def test_base64_file_descriptor() -> None:
    import base64

    from google.protobuf import descriptor_pb2

    schema = parse_proto(ALL_TYPES)
    proto = descriptor_pb2.FileDescriptorProto()
    schema.pool.FindFileByName("schema.proto").CopyToProto(proto)
    again = parse_base64_file_descriptor(base64.b64encode(proto.SerializeToString()))
    assert _ddl(to_spark(again.message("t.All"))) == _ddl(to_spark(schema.message("t.All")))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: parse_proto("syntax = 'proto3'; message {"), "protoc refused"),
        (lambda: parse_proto('syntax = "proto3"; import "nope.proto"; message A {}'), "protoc"),
        (lambda: parse_descriptor_set(b"\xff\xff\xff"), "FileDescriptorSet"),
        (lambda: parse_descriptor_set(b""), "empty"),
        (lambda: parse_base64_file_descriptor("***"), "base64"),
        (lambda: parse_proto(PERSON).message("t.Nobody"), "no message"),
        (lambda: parse_proto(PERSON).message_by_indexes([1]), "message index 1"),
    ],
)
def test_schema_errors(call: Any, match: str) -> None:
    with pytest.raises(ProtobufSchemaError, match=match):
        call()


def test_message_by_indexes() -> None:
    schema = parse_proto(
        'syntax = "proto3"; message A { message B {} message C { message D {} } } message E {}'
    )
    assert schema.message_by_indexes([0]).full_name == "A"
    assert schema.message_by_indexes([1]).full_name == "E"
    assert schema.message_by_indexes([0, 1, 0]).full_name == "A.C.D"


# --- generated messages against json_format ------------------------------------------------


def _random_all(rng: random.Random, All: type[Message]) -> Message:
    m = All()
    if rng.random() < 0.7:
        m.i32 = rng.randint(-(2**31), 2**31 - 1)
    if rng.random() < 0.5:
        m.s64 = rng.randint(-(2**63), 2**63 - 1)
    if rng.random() < 0.5:
        m.opt = rng.choice(["", "é", "abc"])
    if rng.random() < 0.5:
        m.text = "t"
    elif rng.random() < 0.5:
        m.inner.i = rng.randint(-3, 3)
    m.longs.extend(rng.randint(-(2**63), 2**63 - 1) for _ in range(rng.randint(0, 3)))
    for _ in range(rng.randint(0, 3)):
        m.names[rng.randint(-5, 5)] = rng.choice(["x", "", "yz"])
    if rng.random() < 0.5:
        m.color = rng.randint(0, 2)
    if rng.random() < 0.5:
        m.f64 = rng.choice([0.5, -3.25, 1e300])
    if rng.random() < 0.5:
        m.ts.seconds = rng.randint(-(10**10), 10**10)
        m.ts.nanos = rng.randint(0, 999_999_999)
    return m


def _spark_view_of_json(d: dict[str, Any]) -> dict[str, Any]:
    """json_format's dict (proto field names, defaults omitted) in Spark's view, by rules
    written here: int64s are strings in JSON, timestamps RFC 3339 strings, maps objects."""
    row: dict[str, Any] = {}
    row["i32"] = d.get("i32")
    row["s64"] = int(d["s64"]) if "s64" in d else None
    row["opt"] = d.get("opt")
    row["text"] = d.get("text")
    row["inner"] = {"s": d["inner"].get("s"), "i": d["inner"].get("i")} if "inner" in d else None
    row["longs"] = [int(x) for x in d.get("longs", [])]
    row["names"] = {int(k): v for k, v in d.get("names", {}).items()}
    row["color"] = d.get("color")
    row["f64"] = d.get("f64")
    if "ts" in d:
        text = d["ts"].rstrip("Z")
        whole, _, frac = text.partition(".")
        base = dt.datetime.fromisoformat(whole).replace(tzinfo=UTC)
        row["ts"] = base + dt.timedelta(microseconds=int((frac + "000000000")[:6]))
    else:
        row["ts"] = None
    return row


def test_generated_messages_as_json_format_reads_them(all_types: ProtobufSchema) -> None:
    rng = random.Random(27)
    All = _cls(all_types, "t.All")
    messages = [_random_all(rng, All) for _ in range(300)]
    decoder = ProtobufDecoder(all_types, all_types.message("t.All"))
    rows = decoder.decode([m.SerializeToString() for m in messages]).to_pylist()
    for m, row in zip(messages, rows, strict=True):
        want = _spark_view_of_json(json_format.MessageToDict(m, preserving_proto_field_name=True))
        got = {k: row[k] for k in want}
        got["names"] = dict(got["names"])  # generated keys are unique
        assert got == want


def test_column_path_equals_row_path(all_types: ProtobufSchema) -> None:
    """decode() builds the array column by column; decode_one() gives one row's values: the
    same rows either way, with null payloads and (PERMISSIVE) malformed ones between."""
    rng = random.Random(5)
    All = _cls(all_types, "t.All")
    payloads: list[bytes | None] = [_random_all(rng, All).SerializeToString() for _ in range(200)]
    payloads[3] = None
    payloads[7] = b"\x0a\x05\x01"
    o = ProtobufOptions(mode="PERMISSIVE")
    decoder = ProtobufDecoder(all_types, all_types.message("t.All"), o)
    rows = [
        None if p is None or i == 7 else decoder.decode_one(p, i) for i, p in enumerate(payloads)
    ]
    assert decoder.decode(payloads).equals(pa.array(rows, type=decoder.arrow_type))


def test_message_without_fields() -> None:
    schema = parse_proto('syntax = "proto3"; message E {}')
    assert to_spark(schema.message("E")) == {"type": "struct", "fields": []}
    assert decode_protobuf([b"", None], schema, "E").to_pylist() == [{}, None]


def test_base64_file_descriptor_with_an_import_given_as_text() -> None:
    import base64

    from google.protobuf import descriptor_pb2

    dep = 'syntax = "proto3"; package d; message Dep { int32 x = 1; }'
    main = 'syntax = "proto3"; package m; import "d/dep.proto"; message M { d.Dep dep = 1; }'
    compiled = parse_proto(main, {"d/dep.proto": dep}, name="m.proto")
    proto = descriptor_pb2.FileDescriptorProto()
    compiled.pool.FindFileByName("m.proto").CopyToProto(proto)
    encoded = base64.b64encode(proto.SerializeToString())
    schema = parse_base64_file_descriptor(encoded, {"d/dep.proto": dep})
    assert _ddl(to_spark(schema.message())) == "struct<dep:struct<x:integer>>"
    with pytest.raises(ProtobufSchemaError, match="not given in imports"):
        parse_base64_file_descriptor(encoded)


def test_timestamp_past_64_bit_micros_is_a_row_error(all_types: ProtobufSchema) -> None:
    All = _cls(all_types, "t.All")
    big = All()
    big.ts.seconds = 2**62  # * 1,000,000 is past a long
    payloads = [All(i32=1).SerializeToString(), big.SerializeToString()]
    with pytest.raises(ProtobufDecodeError, match="timestamp") as e:
        decode_protobuf(payloads, all_types, "t.All")
    assert e.value.index == 1
    o = ProtobufOptions(mode="PERMISSIVE")
    rows = decode_protobuf(payloads, all_types, "t.All", o).to_pylist()
    assert rows[0] is not None and rows[0]["i32"] == 1 and rows[1] is None


def test_mutated_payloads_decode_or_fail_typed(all_types: ProtobufSchema) -> None:
    """Hostile bytes: every mutation of a valid payload decodes or raises
    ProtobufDecodeError, nothing else."""
    rng = random.Random(9)
    All = _cls(all_types, "t.All")
    seeds = [_random_all(rng, All).SerializeToString() for _ in range(100)]
    decoder = ProtobufDecoder(all_types, all_types.message("t.All"))
    typed = 0
    for _ in range(2000):
        p = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            if p:
                p[rng.randrange(len(p))] = rng.randrange(256)
        if rng.random() < 0.3:
            p = p[: rng.randrange(len(p) + 1)]
        try:
            decoder.decode([bytes(p)])
        except ProtobufDecodeError as e:
            assert e.index == 0
            typed += 1
    assert typed > 0


def test_proto2_defaults_required_and_closed_enums() -> None:
    schema = parse_proto(
        'syntax = "proto2"; package p; enum E { A = 1; B = 2; }'
        " message M { required int32 id = 1; optional int32 n = 2 [default = 7];"
        " optional E e = 3 [default = B]; optional string s = 4; optional E plain = 5; }"
    )
    assert _ddl(to_spark(schema.message("p.M"))) == (
        "struct<id:integer not null,n:integer,e:string,s:string,plain:string>"
    )
    # id = 3, then plain = 9: not a value of the closed enum, so it is an unknown field
    payload = bytes([0x08, 0x03, 0x28, 0x09])
    (row,) = decode_protobuf([payload], schema, "p.M").to_pylist()
    assert row == {"id": 3, "n": 7, "e": "B", "s": None, "plain": None}
    with pytest.raises(ProtobufDecodeError):  # the required field missing
        decode_protobuf([b""], schema, "p.M")


@pytest.mark.parametrize("mode", ["FAILFAST", "PERMISSIVE"])
def test_proto2_string_not_utf8_reads_with_replacement_characters(mode: str) -> None:
    """proto2 does not check a string's UTF-8 (proto3 does: a parse error); protobuf-java,
    under spark-protobuf, reads one with ``new String(bytes, UTF_8)``: U+FFFD for each
    malformed sequence. Both routes (the compiled reader hands such rows to upb)."""
    schema = parse_proto(
        'syntax = "proto2"; package q; message M { optional string s = 1;'
        " repeated string r = 2; map<string, string> m = 3; }"
    )
    entry = bytes([0x0A, 0x02]) + b"k\xff" + bytes([0x12, 0x03]) + b"\xe2\x82v"
    payloads: list[bytes | None] = [
        bytes([0x0A, 0x03])
        + b"a\xffb"
        + bytes([0x12, 0x01])
        + b"\xc3"
        + b"\x1a"
        + bytes([len(entry)])
        + entry,
        bytes([0x0A, 0x02]) + b"ok",
        None,
    ]
    want = [
        {"s": "a\ufffdb", "r": ["\ufffd"], "m": [("k\ufffd", "\ufffdv")]},
        {"s": "ok", "r": [], "m": []},
        None,
    ]
    options = ProtobufOptions(mode=mode)
    for accelerate in (True, False):
        decoder = ProtobufDecoder(schema, schema.message("q.M"), options, accelerate=accelerate)
        assert decoder.decode(payloads).to_pylist() == want, accelerate


# -- convert.any.fields.to.json -----------------------------------------------------------------
# Expected texts are typed in from protobuf-java's JsonFormat rules (printer with
# omittingInsignificantWhitespace, preservingProtoFieldNames, as spark-protobuf configures it)
# and were confirmed against spark-protobuf's from_protobuf (the oracle module, -m long).

ANY_SCHEMA = """
syntax = "proto3";
package u;
import "google/protobuf/any.proto";
import "google/protobuf/timestamp.proto";
message Inner {
  enum E { ZERO = 0; ONE = 1; }
  string s = 1; int64 n = 2; double d = 3; E e = 4; bytes b = 5; map<string, int32> m = 6;
  float f = 7; uint32 u = 8; repeated int32 r = 9; google.protobuf.Timestamp ts = 10;
}
message Top { google.protobuf.Any a = 1; repeated google.protobuf.Any ra = 2; }
"""

_ANY_JSON = {"convert.any.fields.to.json": "true"}


def _any_field(url: bytes, value: bytes, number: int = 1) -> bytes:
    """``Top``'s Any field ``number`` holding ``type_url`` (1) and ``value`` (2), by hand."""
    body = bytes([0x0A, len(url)]) + url + bytes([0x12, len(value)]) + value
    return bytes([number << 3 | 2, len(body)]) + body


def _inner_payload() -> bytes:
    """``u.Inner`` by hand: s = "<é>", n = 5, d = 1e10, e = ONE, b = 00 ff, m = {"k": 1},
    f = 0.5, u = 4294967295, r = [1, -1], ts = 1 s 500,000,000 ns."""
    import struct

    return (
        b"\x0a\x04<\xc3\xa9>"  # s
        + b"\x10\x05"  # n
        + b"\x19"
        + struct.pack("<d", 1e10)  # d
        + b"\x20\x01"  # e
        + b"\x2a\x02\x00\xff"  # b
        + b"\x32\x05\x0a\x01k\x10\x01"  # m entry
        + b"\x3d"
        + struct.pack("<f", 0.5)  # f
        + b"\x40\xff\xff\xff\xff\x0f"  # u
        + b"\x4a\x0b\x01"
        + b"\xff" * 9
        + b"\x01"  # r, packed: 1, -1
        + b"\x52\x08\x08\x01\x10\x80\xca\xb5\xee\x01"  # ts
    )


def test_any_as_json_text() -> None:
    schema = parse_proto(ANY_SCHEMA)
    decoder = ProtobufDecoder(schema, schema.message("u.Top"), ProtobufOptions.from_map(_ANY_JSON))
    assert decoder.spark_type["fields"][0]["type"] == "string"
    assert decoder.spark_type["fields"][1]["type"] == {
        "type": "array",
        "elementType": "string",
        "containsNull": False,
    }
    assert decoder.arrow_type == pa.struct(
        [
            pa.field("a", pa.string()),
            pa.field("ra", pa.list_(pa.field("element", pa.string(), nullable=False))),
        ]
    )
    assert decoder.implementation == "upb"
    inner = _any_field(b"type.googleapis.com/u.Inner", _inner_payload())
    ts = _any_field(b"type.googleapis.com/google.protobuf.Timestamp", b"\x08\x01\x10\x01", 2)
    empty = bytes([0x12, 0x00])  # ra: one Any present and empty
    rows = decoder.decode([inner + ts + empty, b"", None]).to_pylist()
    assert rows == [
        {
            "a": '{"@type":"type.googleapis.com/u.Inner","s":"\\u003cé\\u003e","n":"5",'
            '"d":1.0E10,"e":"ONE","b":"AP8=","m":{"k":1},"f":0.5,"u":4294967295,"r":[1,-1],'
            '"ts":"1970-01-01T00:00:01.500Z"}',
            "ra": [
                '{"@type":"type.googleapis.com/google.protobuf.Timestamp",'
                '"value":"1970-01-01T00:00:01.000000001Z"}',
                "{}",
            ],
        },
        {"a": None, "ra": []},
        None,
    ]
    ints = ProtobufOptions.from_map({**_ANY_JSON, "enums.as.ints": "true"})
    (row,) = ProtobufDecoder(schema, schema.message("u.Top"), ints).decode([inner]).to_pylist()
    assert '"e":1,' in row["a"]


def test_any_as_json_zero_fields_and_unknown_enum_numbers() -> None:
    """proto3 implicit fields at their zero are not printed, even written on the wire
    (``-0.0`` is not the zero); an enum number the enum lacks prints as the number."""
    schema = parse_proto(ANY_SCHEMA)
    decoder = ProtobufDecoder(schema, schema.message("u.Top"), ProtobufOptions.from_map(_ANY_JSON))
    zeros = b"\x0a\x00\x10\x00\x20\x00\x19" + bytes(8) + b"\x3d\x00\x00\x00\x80\x20\x07"
    (row,) = decoder.decode([_any_field(b"x/u.Inner", zeros)]).to_pylist()
    assert row["a"] == '{"@type":"x/u.Inner","e":7,"f":-0.0}'


@pytest.mark.parametrize(
    "payload",
    [
        _any_field(b"type.googleapis.com/u.Nope", b""),  # a type the schema lacks
        _any_field(b"u.Inner", b""),  # no "/": not a type URL
        _any_field(b"type.googleapis.com/u.Inner", b"\x0a\x05ab"),  # value cut short
        _any_field(b"type.googleapis.com/google.protobuf.Timestamp", b"\x10\xff\xff\xff\xff\x0f"),
        bytes([0x12, 0x02, 0x18, 0x01]),  # ra: an Any of an unknown field only
    ],
)
def test_any_the_printer_refuses_is_a_bad_record(payload: bytes) -> None:
    """protobuf-java's printer throws there (spark-protobuf: a malformed record)."""
    schema = parse_proto(ANY_SCHEMA)
    good = _any_field(b"type.googleapis.com/u.Inner", b"\x10\x01")
    failfast = ProtobufOptions.from_map(_ANY_JSON)
    decoder = ProtobufDecoder(schema, schema.message("u.Top"), failfast)
    with pytest.raises(ProtobufDecodeError) as e:
        decoder.decode([good, payload])
    assert e.value.index == 1
    permissive = ProtobufOptions.from_map({**_ANY_JSON, "mode": "PERMISSIVE"})
    decoder = ProtobufDecoder(schema, schema.message("u.Top"), permissive)
    assert decoder.decode([good, payload]).to_pylist() == [
        {"a": '{"@type":"type.googleapis.com/u.Inner","n":"1"}', "ra": []},
        None,
    ]
    with pytest.raises(ProtobufDecodeError):
        decoder.decode_one(payload)


def test_any_without_the_option_is_a_struct() -> None:
    schema = parse_proto(ANY_SCHEMA)
    decoder = ProtobufDecoder(schema, schema.message("u.Top"))
    payload = _any_field(b"type.googleapis.com/u.Nope", b"\x01")
    assert decoder.decode([payload]).to_pylist() == [
        {"a": {"type_url": "type.googleapis.com/u.Nope", "value": b"\x01"}, "ra": []}
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (1e-4, "1.0E-4"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (1e10, "1.0E10"),
        (123456.789, "123456.789"),
        (-2.5e-7, "-2.5E-7"),
        (5e-324, "4.9E-324"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        # Java 19+: the shortest decimal (Java 17 wrote 9.999999999999999E22,
        # 1.15292150460684698E18 and 2.82879384806159008E17: JDK-4511638)
        (1e23, "1.0E23"),
        (2.0**60, "1.152921504606847E18"),
        (282879384806159008.0, "2.82879384806159E17"),
        (float("nan"), '"NaN"'),
        (float("inf"), '"Infinity"'),
        (float("-inf"), '"-Infinity"'),
    ],
)
def test_doubles_as_java_prints_them(value: float, text: str) -> None:
    from spark_kafka_py.formats.protobuf.any_json import java_double

    assert java_double(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.10000000149011612, "0.1"),  # the float nearest 0.1
        (1e10, "1.0E10"),
        (16777216.0, "1.6777216E7"),
        (3.4028234663852886e38, "3.4028235E38"),  # Float.MAX_VALUE
        (1.401298464324817e-45, "1.4E-45"),  # Float.MIN_VALUE
        (0.30000001192092896, "0.3"),
        # Java 19+ (Java 17: 1.17549435E-38, 1.07374182E9, -6.2904743E25)
        (1.1754943508222875e-38, "1.1754944E-38"),  # Float.MIN_NORMAL
        (2.0**30, "1.0737418E9"),
        (-6.290474390366695e25, "-6.2904744E25"),
    ],
)
def test_floats_as_java_prints_them(value: float, text: str) -> None:
    from spark_kafka_py.formats.protobuf.any_json import java_float

    assert java_float(value) == text


def test_strings_escaped_as_gson_escapes_them() -> None:
    from spark_kafka_py.formats.protobuf.any_json import quote

    assert quote("<a href='x'>&=") == '"\\u003ca href\\u003d\\u0027x\\u0027\\u003e\\u0026\\u003d"'
    assert quote('"\\\x00\x1f\t\b\n\r\f\x7f') == '"\\"\\\\\\u0000\\u001f\\t\\b\\n\\r\\f\x7f"'
    assert quote("é\u2028\u2029\U0001f600") == '"é\\u2028\\u2029\U0001f600"'


def test_any_nesting_bounded() -> None:
    """Any values packed in each other: 90 levels print (as spark-protobuf prints them), past
    100 the record is bad here (protobuf-java recurses on: docs/formats.md)."""
    from tests.formats.protobuf._wire import length_delimited

    url = b"type.googleapis.com/google.protobuf.Any"

    def nested(levels: int) -> bytes:
        value = b""
        for _ in range(levels):
            value = length_delimited(1, url) + (length_delimited(2, value) if value else b"")
        return length_delimited(1, value)

    schema = parse_proto(ANY_SCHEMA)
    options = ProtobufOptions.from_map({**_ANY_JSON, "mode": "PERMISSIVE"})
    decoder = ProtobufDecoder(schema, schema.message("u.Top"), options)
    head = '{"@type":"type.googleapis.com/google.protobuf.Any","value":'
    assert decoder.decode([nested(90), nested(120)]).to_pylist() == [
        {"a": head * 90 + "{}" + "}" * 90, "ra": []},
        None,
    ]
