"""The Protobuf encoder (``to_protobuf``'s semantics) against the protobuf package's own parser.

Every payload written here is parsed by the protobuf package's message class for the same
descriptor (the oracle: upb, not written here) and compared with the values typed in, or
with the input rows field by field for generated data; where the protobuf package's own
serializer writes a message deterministically (no maps), the bytes must be equal too.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import message_factory
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.formats.errors import ProtobufEncodeError, ProtobufSchemaError
from spark_kafka_py.formats.protobuf import ProtobufSchema, parse_proto
from spark_kafka_py.formats.protobuf.encoder import ProtobufEncoder, encode_protobuf

UTC = dt.timezone.utc

ALL = """
syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
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
  google.protobuf.Timestamp ts = 11;
  google.protobuf.Duration dur = 12;
  float f32 = 14;
  repeated Inner inners = 15;
  fixed32 fx32 = 16;
  sint64 s64 = 17;
  double f64 = 18;
  bool flag = 19;
  repeated Color colors = 20;
  map<int32, string> names = 21;
  sint32 s32 = 22;
  sfixed64 sf64 = 23;
  fixed64 fx64 = 24;
  repeated string words = 25;
  int64 i64 = 26;
}
"""

PROTO2 = """
syntax = "proto2";
package p;
message Req {
  required int32 id = 1;
  optional string name = 2 [default = "anon"];
  optional int32 n = 3;
}
"""

INNER = pa.struct([("s", pa.string()), ("i", pa.int32())])


@pytest.fixture(scope="module")
def schema() -> ProtobufSchema:
    return parse_proto(ALL)


def _cls(schema: ProtobufSchema, name: str) -> type[Message]:
    return message_factory.GetMessageClass(schema.pool.FindMessageTypeByName(name))


def _encode(schema: ProtobufSchema, name: str, rows: list[Any], t: pa.DataType) -> list[Any]:
    enc = ProtobufEncoder(schema, schema.message(name), t)
    out = enc.encode(pa.array(rows, type=t))
    assert out.type == pa.binary()
    return out.to_pylist()  # type: ignore[no-any-return]


def test_values_parse_back_as_given(schema: ProtobufSchema) -> None:
    t = pa.struct(
        [
            ("i32", pa.int32()),
            ("u32", pa.int32()),
            ("u64", pa.int64()),
            ("opt", pa.string()),
            ("raw", pa.binary()),
            ("longs", pa.list_(pa.int64())),
            ("by_name", pa.map_(pa.string(), INNER)),
            ("color", pa.string()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("dur", pa.duration("us")),
            ("f32", pa.float32()),
            ("inners", pa.list_(INNER)),
            ("fx32", pa.int32()),
            ("s64", pa.int64()),
            ("f64", pa.float64()),
            ("flag", pa.bool_()),
            ("colors", pa.list_(pa.string())),
            ("names", pa.map_(pa.int32(), pa.string())),
        ]
    )
    row = {
        "i32": -5,
        "u32": -1,
        "u64": -2,
        "opt": "",
        "raw": b"\x00ab",
        "longs": [1, -2, 3],
        "by_name": [("a", {"s": "x", "i": 3}), ("b", None)],
        "color": "BLUE",
        "ts": dt.datetime(1969, 12, 31, 23, 59, 58, 250000, tzinfo=UTC),
        "dur": dt.timedelta(seconds=-1, microseconds=-500000),
        "f32": 1.5,
        "inners": [{"s": "q", "i": 0}, {"s": None, "i": 7}],
        "fx32": -1,
        "s64": -9,
        "f64": -0.0,
        "flag": True,
        "colors": ["RED", "GREEN"],
        "names": [(1, "one"), (-2, "minus two")],
    }
    out = _encode(schema, "All", [row, None, {}], t)
    assert out[1] is None
    assert out[2] == b""  # every field null or absent: an empty message
    m = _cls(schema, "t.All").FromString(out[0])
    assert m.i32 == -5
    assert m.u32 == 4294967295  # the int's bits, as spark-protobuf reads uint32 back
    assert m.u64 == 18446744073709551614
    assert m.HasField("opt") and m.opt == ""  # presence: the empty string is written
    assert m.raw == b"\x00ab"
    assert list(m.longs) == [1, -2, 3]
    assert m.by_name["a"].s == "x" and m.by_name["a"].i == 3
    assert "b" in m.by_name and m.by_name["b"].s == ""  # a null value: the default
    assert m.color == 2
    assert (m.ts.seconds, m.ts.nanos) == (-2, 250_000_000)
    assert (m.dur.seconds, m.dur.nanos) == (-2, 500_000_000)  # java.time.Duration's split
    assert m.f32 == 1.5
    assert [(x.s, x.i) for x in m.inners] == [("q", 0), ("", 7)]
    assert m.fx32 == 4294967295
    assert m.s64 == -9
    assert m.f64 == 0.0 and math.copysign(1.0, m.f64) == -1.0  # -0.0 is not the zero
    assert m.flag is True
    assert list(m.colors) == [0, 1]
    assert dict(m.names) == {1: "one", -2: "minus two"}


def test_bytes_equal_protobufs_own_serializer(schema: ProtobufSchema) -> None:
    """Without maps, the field-number order and zero omission are protobuf's canonical
    encoding: the bytes equal ``SerializeToString(deterministic=True)``'s."""
    All = _cls(schema, "t.All")
    Inner = _cls(schema, "t.Inner")
    t = pa.struct(
        [
            ("words", pa.list_(pa.string())),
            ("i64", pa.int64()),
            ("i32", pa.int32()),
            ("inners", pa.list_(INNER)),
            ("longs", pa.list_(pa.int64())),
            ("sf64", pa.int64()),
            ("s32", pa.int32()),
            ("color", pa.int32()),
            ("fx64", pa.int64()),
        ]
    )
    rows = [
        {
            "words": ["a", ""],
            "i64": 2**40,
            "i32": 0,
            "inners": [{"s": "", "i": 0}],
            "longs": [0, 2**63 - 1, -(2**63)],
            "sf64": -3,
            "s32": -(2**31),
            "color": 1,
            "fx64": -1,
        },
        {
            "words": [],
            "i64": -1,
            "i32": 2**31 - 1,
            "inners": [],
            "longs": [],
            "sf64": 0,
            "s32": 2**31 - 1,
            "color": 0,
            "fx64": 0,
        },
    ]
    got = _encode(schema, "All", rows, t)
    want = [
        All(
            words=["a", ""],
            i64=2**40,
            inners=[Inner()],
            longs=[0, 2**63 - 1, -(2**63)],
            sf64=-3,
            s32=-(2**31),
            color=1,
            fx64=2**64 - 1,
        ),
        All(i64=-1, i32=2**31 - 1, s32=2**31 - 1),
    ]
    assert got == [w.SerializeToString(deterministic=True) for w in want]


def test_struct_fields_matched_by_name_missing_ones_unset(schema: ProtobufSchema) -> None:
    t = pa.struct([("S", pa.string())])  # case-insensitive, as Spark's default resolver
    (b,) = _encode(schema, "Inner", [{"S": "x"}], t)
    m = _cls(schema, "t.Inner").FromString(b)
    assert m.s == "x" and m.i == 0


def test_enum_from_a_number(schema: ProtobufSchema) -> None:
    t = pa.struct([("color", pa.int32()), ("colors", pa.list_(pa.int32()))])
    (b,) = _encode(schema, "All", [{"color": 2, "colors": [1, 0]}], t)
    m = _cls(schema, "t.All").FromString(b)
    assert m.color == 2 and list(m.colors) == [1, 0]


def test_unsigned_from_wider_types(schema: ProtobufSchema) -> None:
    t = pa.struct(
        [("u32", pa.int64()), ("u64", pa.decimal128(20, 0)), ("fx64", pa.decimal128(20, 0))]
    )
    from decimal import Decimal

    rows = [{"u32": 2**32 - 1, "u64": Decimal(2**64 - 1), "fx64": Decimal(5)}]
    (b,) = _encode(schema, "All", rows, t)
    m = _cls(schema, "t.All").FromString(b)
    assert (m.u32, m.u64, m.fx64) == (2**32 - 1, 2**64 - 1, 5)
    with pytest.raises(ProtobufEncodeError, match=r"row 1: 4294967296 is outside.*t\.All\.u32"):
        _encode(schema, "All", [{"u32": 1}, {"u32": 2**32}], pa.struct([("u32", pa.int64())]))


def test_proto2_required_and_defaults() -> None:
    s = parse_proto(PROTO2)
    Req = _cls(s, "p.Req")
    t = pa.struct([("id", pa.int32()), ("name", pa.string())])
    a, b = _encode(s, "Req", [{"id": 0, "name": None}, {"id": None, "name": "x"}], t)
    m = Req.FromString(a)
    assert m.HasField("id") and m.id == 0 and not m.HasField("name")  # presence: 0 written
    m = Req.FromString(b)
    assert m.HasField("id") and m.id == 0 and m.name == "x"  # null required: its default
    with pytest.raises(ProtobufSchemaError, match=r"required field 'id'.*p\.Req\.id"):
        ProtobufEncoder(s, s.message("Req"), pa.struct([("name", pa.string())]))


@pytest.mark.parametrize(
    ("t", "match"),
    [
        (pa.struct([("nope", pa.int32())]), r"'nope' has no field.*\(at t\.All\.nope\)"),
        (pa.struct([("i32", pa.string())]), r"string cannot be written to the int32.*t\.All\.i32"),
        (pa.struct([("i32", pa.int64())]), r"int64 cannot be written to the int32.*t\.All\.i32"),
        (
            pa.struct([("inners", pa.list_(pa.struct([("x", pa.int32())])))]),
            r"'x' has no field.*t\.All\.inners\.x",
        ),
        (pa.struct([("by_name", pa.map_(pa.int32(), INNER))]), r"t\.All\.by_name\.key"),
        (pa.struct([("longs", pa.int64())]), r"repeated int64 field.*t\.All\.longs"),
        (pa.struct([("ts", pa.int64())]), r"message google\.protobuf\.Timestamp.*t\.All\.ts"),
        (pa.int32(), r"not a struct"),
    ],
)
def test_type_mismatch_at_construction_names_the_path(
    schema: ProtobufSchema, t: pa.DataType, match: str
) -> None:
    with pytest.raises(ProtobufSchemaError, match=match):
        ProtobufEncoder(schema, schema.message("All"), t)


@pytest.mark.parametrize(
    ("t", "rows", "match"),
    [
        (
            pa.struct([("color", pa.string())]),
            [{"color": "RED"}, None, {"color": "PINK"}],
            r"^row 2: 'PINK' is not a value of enum t\.All\.Color .*\(at t\.All\.color\)$",
        ),
        (pa.struct([("color", pa.int32())]), [{"color": 9}], r"^row 0: 9 is not a number"),
        (
            pa.struct([("longs", pa.list_(pa.int64()))]),
            [{"longs": [1]}, {"longs": [2, None]}],
            r"^row 1: a null element at index 1 of the list \(at t\.All\.longs\)$",
        ),
        (
            pa.struct([("inners", pa.list_(INNER))]),
            [{"inners": [None]}],
            r"^row 0: a null element at index 0",
        ),
    ],
)
def test_values_that_do_not_fit_name_row_and_path(
    schema: ProtobufSchema, t: pa.DataType, rows: list[Any], match: str
) -> None:
    with pytest.raises(ProtobufEncodeError, match=match) as e:
        _encode(schema, "All", rows, t)
    assert e.value.index == int(match.split()[1].rstrip(":"))


def test_values_under_null_rows_are_not_checked(schema: ProtobufSchema) -> None:
    """A struct child's value under a null row is unspecified (here: an unknown enum name
    and a null list element built under a null parent): not checked, not written."""
    color = pa.array(["PINK", "RED"])
    longs = pa.array([[None], [1]], pa.list_(pa.int64()))
    arr = pa.StructArray.from_arrays(
        [color, longs], names=["color", "longs"], mask=pa.array([True, False])
    )
    out = ProtobufEncoder(schema, schema.message("All"), arr.type).encode(arr).to_pylist()
    assert out[0] is None
    m = _cls(schema, "t.All").FromString(out[1])
    assert list(m.longs) == [1] and m.color == 0


def test_sliced_and_chunked_input(schema: ProtobufSchema) -> None:
    t = pa.struct([("words", pa.list_(pa.string())), ("names", pa.map_(pa.int32(), pa.string()))])
    rows = [{"words": [str(i)] * (i % 3), "names": [(i, str(i))]} for i in range(10)]
    arr = pa.array(rows, type=t).slice(3, 5)
    enc = ProtobufEncoder(schema, schema.message("All"), t)
    All = _cls(schema, "t.All")
    got = [All.FromString(b) for b in enc.encode(arr).to_pylist()]
    assert [list(m.words) for m in got] == [r["words"] for r in rows[3:8]]
    assert [dict(m.names) for m in got] == [{i: str(i)} for i in range(3, 8)]
    chunked = pa.chunked_array([arr.slice(0, 2), arr.slice(2)])
    assert enc.encode(chunked).equals(enc.encode(arr))


def test_prefix_and_encode_protobuf(schema: ProtobufSchema) -> None:
    arr = pa.array([{"s": "a"}, None], INNER)
    enc = ProtobufEncoder(schema, schema.message("Inner"), INNER)
    assert enc.encode(arr, prefix=b"\x00\x00\x00\x00\x07\x00").to_pylist() == [
        b"\x00\x00\x00\x00\x07\x00\x0a\x01a",
        None,
    ]
    assert encode_protobuf(arr, schema, "t.Inner").to_pylist() == [b"\x0a\x01a", None]


# -- generated data: every row parses back to its own values ----------------------------------

_GEN_TYPE = pa.struct(
    [
        ("i32", pa.int32()),
        ("i64", pa.int64()),
        ("u32", pa.int32()),
        ("s32", pa.int32()),
        ("s64", pa.int64()),
        ("sf64", pa.int64()),
        ("fx32", pa.int32()),
        ("f64", pa.float64()),
        ("flag", pa.bool_()),
        ("opt", pa.string()),
        ("raw", pa.binary()),
        ("color", pa.string()),
        ("words", pa.list_(pa.string())),
        ("longs", pa.list_(pa.int64())),
        ("inners", pa.list_(INNER)),
        ("names", pa.map_(pa.int32(), pa.string())),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("dur", pa.duration("us")),
    ]
)
_i32 = st.integers(-(2**31), 2**31 - 1)
_i64 = st.integers(-(2**63), 2**63 - 1)
_text = st.text(max_size=8)


def _opt(s: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | s


_row = st.fixed_dictionaries(
    {
        "i32": _opt(_i32),
        "i64": _opt(_i64),
        "u32": _opt(_i32),
        "s32": _opt(_i32),
        "s64": _opt(_i64),
        "sf64": _opt(_i64),
        "fx32": _opt(_i32),
        "f64": _opt(st.floats(allow_nan=False)),
        "flag": _opt(st.booleans()),
        "opt": _opt(_text),
        "raw": _opt(st.binary(max_size=8)),
        "color": _opt(st.sampled_from(["RED", "GREEN", "BLUE"])),
        "words": _opt(st.lists(_text, max_size=3)),
        "longs": _opt(st.lists(_i64, max_size=3)),
        "inners": _opt(
            st.lists(st.fixed_dictionaries({"s": _opt(_text), "i": _opt(_i32)}), max_size=2)
        ),
        "names": _opt(st.dictionaries(_i32, _text, max_size=3).map(lambda d: list(d.items()))),
        "ts": _opt(st.integers(-(10**15), 10**15)),
        "dur": _opt(st.integers(-(10**15), 10**15)),
    }
)


def _check_row(m: Message, row: dict[str, Any]) -> None:
    for name in ("i32", "i64", "s32", "s64", "sf64", "f64", "flag", "raw"):
        want = row[name]
        assert getattr(m, name) == (want if want is not None else type(getattr(m, name))())
    assert m.u32 == (row["u32"] or 0) & 0xFFFFFFFF
    assert m.fx32 == (row["fx32"] or 0) & 0xFFFFFFFF
    assert m.HasField("opt") == (row["opt"] is not None) and m.opt == (row["opt"] or "")
    assert m.color == {"RED": 0, "GREEN": 1, "BLUE": 2, None: 0}[row["color"]]
    assert list(m.words) == (row["words"] or [])
    assert list(m.longs) == (row["longs"] or [])
    assert [(x.s, x.i) for x in m.inners] == [
        (x["s"] or "", x["i"] or 0) for x in row["inners"] or []
    ]
    assert dict(m.names) == dict(row["names"] or [])
    for name in ("ts", "dur"):
        micros = row[name]
        assert m.HasField(name) == (micros is not None)
        if micros is not None:
            got = getattr(m, name)
            assert got.seconds * 1_000_000 + got.nanos // 1000 == micros
            assert 0 <= got.nanos < 10**9 and got.nanos % 1000 == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_opt(_row), max_size=12))
def test_generated_rows_parse_back(schema: ProtobufSchema, rows: list[Any]) -> None:
    arrow_rows = []
    for r in rows:
        if r is None:
            arrow_rows.append(None)
            continue
        r2 = dict(r)
        for name, unit in (("ts", "ts"), ("dur", "dur")):
            if r[name] is not None:
                r2[name] = pa.scalar(r[name], pa.int64()).cast(_GEN_TYPE.field(unit).type).as_py()
        arrow_rows.append(r2)
    arr = pa.array(arrow_rows, type=_GEN_TYPE)
    out = ProtobufEncoder(schema, schema.message("All"), _GEN_TYPE).encode(arr).to_pylist()
    All = _cls(schema, "t.All")
    for r, b in zip(rows, out, strict=True):
        if r is None:
            assert b is None
            continue
        _check_row(All.FromString(b), r)
