"""The accelerated Avro plan (``formats/avro/_accel.pyx``) against the pure-Python reference.

For generated schemas of the kinds the accelerated plan supports (primitives and their logical
types, nested records, arrays, nullable unions) and data written by fastavro, both plans
decode to equal arrays; for truncated, mutated, extended and random payloads both raise the
same :class:`AvroDecodeError` (type, index, reason, byte position) without ``on_error``, and
report the same errors and return equal arrays with it. Schema pairs it does not support run
the pure plan (``implementation == "pure"``).

The extension is required in CI (which builds it: a missing one fails there) and skipped
elsewhere when not built.
"""

from __future__ import annotations

import io
import json
import os
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.schema import max_decimal_digits, parse_schema
from spark_kafka_py.formats.errors import AvroDecodeError

if os.environ.get("CI", "").lower() == "true":
    import spark_kafka_py.formats.avro._accel  # noqa: F401
else:
    pytest.importorskip(
        "spark_kafka_py.formats.avro._accel",
        reason="the Cython extension is not built (no compiler?): pure path only",
    )

pytestmark = pytest.mark.skipif(
    os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"),
    reason="SPARK_KAFKA_PY_PURE forces the pure plan",
)

Payload = bytes | bytearray | memoryview | None


def _decoders(writer: Any, reader: Any | None = None) -> tuple[AvroDecoder, AvroDecoder]:
    w = parse_schema(json.dumps(writer))
    r = None if reader is None else parse_schema(json.dumps(reader))
    accel = AvroDecoder(w, r)
    pure = AvroDecoder(w, r, accelerate=False)
    assert pure.implementation == "pure"
    return accel, pure


def _same(a: pa.Array, b: pa.Array) -> None:
    """Equal arrays, the accelerated one valid. Compared level by level (validity, offsets,
    values), NaN equal to NaN; never through Python objects (a date past year 9999 has none)."""
    a.validate(full=True)
    assert a.type == b.type
    assert len(a) == len(b)
    assert a.is_null().equals(b.is_null())
    if pa.types.is_struct(a.type):
        for i in range(a.type.num_fields):
            _same(a.field(i), b.field(i))
    elif pa.types.is_list(a.type):
        assert a.offsets.equals(b.offsets)
        _same(a.values, b.values)
    elif pa.types.is_map(a.type):
        assert a.offsets.equals(b.offsets)
        _same(a.keys, b.keys)
        _same(a.items, b.items)
    elif pa.types.is_floating(a.type):
        equal = pc.or_(pc.equal(a, b), pc.and_(pc.is_nan(a), pc.is_nan(b)))
        assert pc.all(pc.fill_null(equal, True)).as_py() in (True, None)  # None: empty
    else:
        assert a.equals(b)


def _error(e: AvroDecodeError) -> tuple[Any, ...]:
    return (type(e), e.index, e.reason, e.position, e.schema_id)


def _outcome(decoder: AvroDecoder, payloads: list[Payload]) -> tuple[str, Any]:
    try:
        return "ok", decoder.decode(payloads)
    except AvroDecodeError as e:
        return "error", _error(e)


def _compare(accel: AvroDecoder, pure: AvroDecoder, payloads: list[Payload]) -> None:
    """FAILFAST and PERMISSIVE: the same array or the same error(s)."""
    assert accel.implementation == "accel"
    got, want = _outcome(accel, payloads), _outcome(pure, payloads)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        _same(got[1], want[1])
    else:
        assert got[1] == want[1]
    got_errors: list[AvroDecodeError] = []
    want_errors: list[AvroDecodeError] = []
    a = accel.decode(payloads, on_error=got_errors.append)
    b = pure.decode(payloads, on_error=want_errors.append)
    assert [_error(e) for e in got_errors] == [_error(e) for e in want_errors]
    _same(a, b)
    # decode_slices (each payload behind a 5-byte prefix in one buffer): decode's outcome, on
    # both plans
    data, starts, ends, valid = _as_slices(payloads)
    for decoder in (accel, pure):
        try:
            sliced: tuple[str, Any] = ("ok", decoder.decode_slices(data, starts, ends, valid))
        except AvroDecodeError as e:
            sliced = ("error", _error(e))
        assert sliced[0] == want[0]
        if want[0] == "ok":
            _same(sliced[1], want[1])
        else:
            assert sliced[1] == want[1]
        errors: list[AvroDecodeError] = []
        _same(decoder.decode_slices(data, starts, ends, valid, on_error=errors.append), b)
        assert [_error(e) for e in errors] == [_error(e) for e in want_errors]


def _as_slices(payloads: list[Payload]) -> tuple[bytes, Any, Any, Any]:
    """The payloads in one buffer, each behind 5 bytes of junk: (data, starts, ends, valid)."""
    import numpy as np

    data = bytearray()
    starts, ends, valid = [], [], []
    for payload in payloads:
        data += b"\x00\xff\x01\xfe\x02"
        starts.append(len(data))
        if payload is not None:
            data += bytes(payload)
        ends.append(len(data))
        valid.append(payload is not None)
    return (
        bytes(data),
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        np.array(valid, dtype=np.uint8),
    )


def _encode(schema: Any, values: list[Any]) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for value in values:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, value)
        out.append(buf.getvalue())
    return out


# -- generated schemas and values ------------------------------------------------------------

_INT = st.integers(-(2**31), 2**31 - 1)
_LONG = st.integers(-(2**63), 2**63 - 1)

_LEAVES: list[tuple[Any, st.SearchStrategy[Any]]] = [
    ("boolean", st.booleans()),
    ("int", _INT),
    ("long", _LONG),
    ("float", st.floats(width=32)),
    ("double", st.floats()),
    ("string", st.text(max_size=12)),
    ("bytes", st.binary(max_size=12)),
    ({"type": "int", "logicalType": "date"}, _INT),
    ({"type": "int", "logicalType": "time-millis"}, _INT),
    ({"type": "long", "logicalType": "time-micros"}, _LONG),
    # any long: those past 64-bit microseconds fail alike in both plans
    ({"type": "long", "logicalType": "timestamp-millis"}, _LONG),
    ({"type": "long", "logicalType": "timestamp-micros"}, _LONG),
    ({"type": "long", "logicalType": "local-timestamp-millis"}, _LONG),
    ({"type": "long", "logicalType": "local-timestamp-micros"}, _LONG),
]


@st.composite
def _decimal(draw: st.DrawFn) -> tuple[Any, st.SearchStrategy[Any]]:
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    schema = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    bound = 10**precision - 1
    values = st.integers(-bound, bound).map(lambda u: Decimal(u).scaleb(-scale))
    return schema, values


class _Names:
    """Unique record and field names within one drawn schema."""

    def __init__(self) -> None:
        self.count = 0

    def next(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"


#: Reader fields the writer lacks: (type, JSON default), the leaf kinds a default may have.
_DEFAULTS: list[tuple[Any, Any]] = [
    ("int", 7),
    ("long", -(2**40)),
    ("float", 0.25),
    ("double", -1.5),
    ("boolean", True),
    ("string", "dflt é"),
    ("bytes", "\u00ff\u0001"),
    (["null", "string"], None),
    (["string", "null"], "x"),
    (["null", "int", "long"], None),
    ({"type": "int", "logicalType": "date"}, 19000),
    ({"type": "long", "logicalType": "timestamp-millis"}, 1_700_000_000_000),
    ({"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}, "\u0001\u0000"),
    ({"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}, "BLUE"),
]


@st.composite
def _typed(draw: st.DrawFn, names: _Names, depth: int) -> tuple[Any, Any, st.SearchStrategy[Any]]:
    """(writer schema, reader schema, value strategy): a leaf, a record, an array or a
    nullable union; the reader's records may lack writer fields (dropped) and have more
    (their defaults)."""
    kinds = ["leaf", "decimal", "enum", "fixed"]
    kinds += ["record", "array", "map", "nullable"] if depth < 2 else []
    kind = draw(st.sampled_from(kinds))
    if kind == "enum":
        name = names.next("E")
        enum = {"type": "enum", "name": name, "symbols": ["A", "B", "C"]}
        reader_enum = draw(
            st.sampled_from(
                [
                    enum,
                    {**enum, "symbols": ["B", "A"], "default": "A"},  # C read as A
                    {**enum, "symbols": ["A", "B"]},  # C fails its record
                ]
            )
        )
        return enum, reader_enum, st.sampled_from(["A", "B", "C"])
    if kind == "fixed":
        size = draw(st.integers(1, 20))
        fixed: dict[str, Any] = {"type": "fixed", "name": names.next("F"), "size": size}
        if draw(st.booleans()):
            return fixed, fixed, st.binary(min_size=size, max_size=size)
        precision = draw(st.integers(1, min(38, max_decimal_digits(size))))
        scale = draw(st.integers(0, precision))
        fixed = {**fixed, "logicalType": "decimal", "precision": precision, "scale": scale}
        bound = 10**precision - 1
        values = st.integers(-bound, bound).map(lambda u: Decimal(u).scaleb(-scale))
        return fixed, fixed, values
    if kind == "leaf":
        leaf, leaf_values = draw(st.sampled_from(_LEAVES))
        return leaf, leaf, leaf_values
    if kind == "decimal":
        decimal, decimal_values = draw(_decimal())
        return decimal, decimal, decimal_values
    if kind == "array":
        items, r_items, item_values = draw(_typed(names, depth + 1))
        return (
            {"type": "array", "items": items},
            {"type": "array", "items": r_items},
            st.lists(item_values, max_size=4),
        )
    if kind == "map":
        items, r_items, item_values = draw(_typed(names, depth + 1))
        return (
            {"type": "map", "values": items},
            {"type": "map", "values": r_items},
            st.dictionaries(st.text(max_size=4), item_values, max_size=3),
        )
    if kind == "nullable":
        inner, r_inner, inner_values = draw(_typed(names, depth + 1))
        if isinstance(inner, list):
            return inner, r_inner, inner_values
        first = draw(st.booleans())
        return (
            ["null", inner] if first else [inner, "null"],
            ["null", r_inner] if draw(st.booleans()) else [r_inner, "null"],
            st.none() | inner_values,
        )
    fields, r_fields = [], []
    values = {}
    for _ in range(draw(st.integers(1, 4))):
        name = names.next("f")
        field_type, r_type, field_values = draw(_typed(names, depth + 1))
        fields.append({"name": name, "type": field_type})
        values[name] = field_values
        if draw(st.integers(0, 4)) > 0:  # else dropped by the reader
            r_fields.append({"name": name, "type": r_type})
    for _ in range(draw(st.integers(0, 2))):
        default_type, default = draw(st.sampled_from(_DEFAULTS))
        if isinstance(default_type, dict) and default_type.get("type") == "enum":
            default_type = {**default_type, "name": names.next("Color")}
        r_fields.append({"name": names.next("d"), "type": default_type, "default": default})
    draw(st.randoms()).shuffle(r_fields)
    record_name = names.next("R")
    writer = {"type": "record", "name": record_name, "fields": fields}
    reader = {"type": "record", "name": record_name, "fields": r_fields}
    return writer, reader, st.fixed_dictionaries(values)


@st.composite
def _schema_and_payloads(draw: st.DrawFn) -> tuple[Any, Any, list[bytes]]:
    writer, reader, values = draw(_typed(_Names(), 0))
    rows = draw(st.lists(values, min_size=1, max_size=8))
    return writer, reader, _encode(writer, rows)


@st.composite
def _hostile(draw: st.DrawFn, payloads: list[bytes]) -> list[Payload]:
    """The payloads, some truncated, mutated, extended or replaced by random bytes; Nones and
    memoryviews among them."""
    out: list[Payload] = []
    for payload in payloads:
        how = draw(st.sampled_from(["keep", "truncate", "mutate", "extend", "random", "none"]))
        if how == "truncate" and payload:
            out.append(payload[: draw(st.integers(0, len(payload) - 1))])
        elif how == "mutate" and payload:
            at = draw(st.integers(0, len(payload) - 1))
            byte = draw(st.integers(0, 255))
            out.append(payload[:at] + bytes([byte]) + payload[at + 1 :])
        elif how == "extend":
            out.append(payload + draw(st.binary(min_size=1, max_size=3)))
        elif how == "random":
            out.append(draw(st.binary(max_size=24)))
        elif how == "none":
            out.append(None)
        else:
            out.append(memoryview(payload) if draw(st.booleans()) else payload)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schema_and_payloads())
def test_generated_schemas_decode_equal(case: tuple[Any, Any, list[bytes]]) -> None:
    writer, reader, payloads = case
    accel, pure = _decoders(writer, reader)
    _compare(accel, pure, list(payloads))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hostile_payloads_fail_alike(data: st.DataObject) -> None:
    writer, reader, payloads = data.draw(_schema_and_payloads())
    accel, pure = _decoders(writer, reader)
    _compare(accel, pure, data.draw(_hostile(payloads)))


def test_every_truncation_fails_alike() -> None:
    schema, _ = _BENCH_LIKE
    payloads = _encode(schema, [_BENCH_LIKE[1]])
    accel, pure = _decoders(schema)
    full = payloads[0]
    for end in range(len(full)):
        _compare(accel, pure, [full, full[:end], full])


_BENCH_LIKE: tuple[Any, Any] = (
    {
        "type": "record",
        "name": "Event",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "seq", "type": "long"},
            {"name": "score", "type": "double"},
            {"name": "name", "type": "string"},
            {
                "name": "origin",
                "type": {
                    "type": "record",
                    "name": "Origin",
                    "fields": [{"name": "zone", "type": "int"}, {"name": "host", "type": "string"}],
                },
            },
            {"name": "tags", "type": {"type": "array", "items": "int"}},
            {"name": "note", "type": ["null", "string"]},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {
                "name": "amount",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
            },
            {"name": "ok", "type": "boolean"},
        ],
    },
    {
        "id": -5,
        "seq": 1 << 40,
        "score": 1.5,
        "name": "héllo",
        "origin": {"zone": 3, "host": "h"},
        "tags": [1, -2, 300],
        "note": "n",
        "at": 1_700_000_000_000,
        "amount": Decimal("-12345678.90"),
        "ok": True,
    },
)

# -- bounds: lengths, counts, varints, indexes chosen to be hostile --------------------------

_LONG_MIN = b"\xff" * 9 + b"\x01"  # zig-zag of -(2**63)
_LONG_MAX = b"\xfe" + b"\xff" * 8 + b"\x01"  # zig-zag of 2**63 - 1


@pytest.mark.parametrize(
    ("schema", "payload"),
    [
        ("string", b""),
        ("string", b"\x01"),  # negative length -1
        ("string", _LONG_MAX),  # a length far past the end
        ("string", _LONG_MIN),
        ("string", b"\x04\xc3\x28"),  # invalid UTF-8
        ("string", b"\x06\xed\xa0\x80"),  # a surrogate
        ("string", b"\x06\xe0\x80\x80"),  # overlong
        ("string", b"\x08\xf4\x90\x80\x80"),  # above U+10FFFF
        ("string", b"\x08\xf0\x9f\x98\x80"),  # valid: U+1F600
        ("bytes", b"\x04\xff\xfe"),  # bytes are not UTF-8 checked
        ("int", b"\xff\xff\xff\xff\x7f"),  # outside 32 bits
        ("int", b"\xff\xff\xff\xff\x0f"),  # the largest 5-byte int
        ("int", b"\x80\x80\x80\x80\x80\x00"),  # longer than 5 bytes
        ("long", b"\xff" * 10),  # longer than 10 bytes
        ("long", b"\xff" * 9 + b"\x02"),  # outside 64 bits
        ("long", _LONG_MIN),
        ("long", b"\x80"),  # truncated varint
        ("boolean", b"\x02"),
        ("boolean", b""),
        ("double", b"\x00" * 7),
        ("float", b"\x00" * 3),
        ("float", b"\x00" * 5),  # trailing bytes
        ({"type": "array", "items": "int"}, _LONG_MAX),  # a block past the end
        ({"type": "array", "items": "int"}, _LONG_MIN + b"\x02"),  # -(2**63) items, sized
        ({"type": "array", "items": "int"}, b"\x03\x01"),  # negative block size
        ({"type": "array", "items": "int"}, b"\x03\x02\x02\x00"),  # a sized block of 1
        ({"type": "array", "items": "double"}, b"\x02" + b"\x00" * 7),
        ({"type": "array", "items": "int"}, b"\x02\x02"),  # no terminating block
        ({"type": "map", "values": "int"}, b"\x02\x04\xc3\x28\x02\x00"),  # a bad key
        ({"type": "map", "values": "int"}, b"\x02\x04ab"),  # no value
        # 3 empty keys, null values
        ({"type": "map", "values": ["null", "int"]}, b"\x06" + b"\x00\x00" * 3 + b"\x00"),
        ({"type": "map", "values": ["null", "int"]}, _LONG_MAX),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, b"\x02"),  # index 1
        ({"type": "enum", "name": "E", "symbols": ["A"]}, b"\x01"),  # index -1
        ({"type": "fixed", "name": "F", "size": 4}, b"abc"),
        (
            {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 3},
            b"\x03\xe8",  # 1000: wider than 3 digits
        ),
        (["null", "int"], b"\x04"),  # union index 2
        (["null", "int"], b"\x01"),  # union index -1
        (["int", "null"], b"\x02"),
        ({"type": "long", "logicalType": "timestamp-millis"}, _LONG_MAX),  # past 64-bit us
        ({"type": "long", "logicalType": "timestamp-millis"}, b"\xcf\xea\xb4\xc5\xb4\xbe\x83\x41"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 0}, b"\x02\x64"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 3, "scale": 1}, b"\x02\x9c"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 0}, b"\x00"),
        # 20 bytes, sign-extended: the reference's exact path
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0},
            b"\x28" + b"\xff" * 19 + b"\x85",
        ),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0},
            b"\x28" + b"\x7f" + b"\xff" * 19,
        ),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0},
            b"\x20" + bytes.fromhex("4b3b4ca85a86c47a098a223fffffffff"),  # 10**38 - 1
        ),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0},
            b"\x20" + bytes.fromhex("4b3b4ca85a86c47a098a224000000000"),  # 10**38
        ),
    ],
)
def test_hostile_bounds_fail_alike(schema: Any, payload: bytes) -> None:
    accel, pure = _decoders(schema)
    _compare(accel, pure, [b"" if schema == "null" else payload])
    _compare(accel, pure, [None, payload, None])


# -- schema resolution: the pairs it takes, and those left to the reference ------------------


def _record(*fields: tuple[str, Any], name: str = "R") -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}


@pytest.mark.parametrize(
    ("writer", "reader", "values"),
    [
        ("int", "long", [0, -1, 2**31 - 1]),
        ("int", "double", [0, -(2**31)]),
        ("long", "double", [2**63 - 1, -(2**53) - 1]),
        ("float", "double", [1.5, float("inf")]),
        ("string", "bytes", ["a", "é"]),
        ("bytes", "string", [b"a", b"\xff"]),
        ("int", ["null", "int"], [1, 2]),
        ("string", ["string", "null"], ["x"]),
        (["null", "int"], ["int", "null"], [None, 3]),
        (["null", "int"], ["null", "long"], [None, 3]),
        ("int", ["int", "long"], [7]),
        ("float", ["null", "float", "double"], [2.5]),
        (
            _record(("a", "int"), ("b", "string")),
            _record(("b", "string"), ("a", "long")),
            [{"a": 1, "b": "x"}],
        ),
        (
            {"type": "long", "logicalType": "timestamp-millis"},
            {"type": "long", "logicalType": "timestamp-micros"},
            [1, -1],
        ),
        (
            "bytes",
            {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2},
            [b"\x01"],
        ),
        (
            {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
            {"type": "enum", "name": "E", "symbols": ["C", "A"], "default": "C"},
            ["A", "B", "C"],
        ),
        (
            {"type": "enum", "name": "E", "symbols": ["A", "B"]},
            {"type": "enum", "name": "E2", "aliases": ["E"], "symbols": ["A"]},
            ["A", "B"],
        ),
        (
            {"type": "fixed", "name": "F", "size": 3},
            {"type": "fixed", "name": "F", "size": 3},
            [b"abc"],
        ),
        (
            {
                "type": "fixed",
                "name": "F",
                "size": 17,
                "logicalType": "decimal",
                "precision": 38,
                "scale": 3,
            },
            {
                "type": "fixed",
                "name": "F",
                "size": 17,
                "logicalType": "decimal",
                "precision": 38,
                "scale": 3,
            },
            [Decimal("-1.234"), Decimal(10**35)],
        ),
    ],
)
def test_resolved_pairs_decode_equal(writer: Any, reader: Any, values: list[Any]) -> None:
    accel, pure = _decoders(writer, reader)
    payloads = _encode(writer, values)
    _compare(accel, pure, [*payloads, None, b"\xff\xff"])


def test_dropped_fields_and_defaults() -> None:
    inner = _record(("x", "int"), ("y", ["null", "string"]), name="In")
    writer = _record(
        ("a", "int"),
        ("gone", inner),
        ("gone_too", {"type": "array", "items": ["null", "double"]}),
        ("b", "string"),
    )
    reader = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "b", "type": "string"},
            {"name": "n", "type": ["null", "string"], "default": None},
            {"name": "a", "type": "long"},
            {
                "name": "d",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 1},
                "default": "\u0000\u0064",
            },
        ],
    }
    values = [
        {"a": 1, "gone": {"x": 2, "y": None}, "gone_too": [None, 1.5], "b": "z"},
        {"a": -1, "gone": {"x": 3, "y": "é"}, "gone_too": [], "b": ""},
    ]
    payloads = _encode(writer, values)
    accel, pure = _decoders(writer, reader)
    _compare(accel, pure, [*payloads, payloads[0][:-1], None, payloads[1] + b"\x00"])
    # a skipped field is checked as the reference checks it: invalid UTF-8 in "gone"
    bad = payloads[1].replace("é".encode(), b"\xc3\x28", 1)
    assert bad != payloads[1]
    _compare(accel, pure, [bad])


def test_empty_records() -> None:
    empty = {"type": "record", "name": "E", "fields": []}
    _compare(*_decoders(empty), [b"", None, b"\x00"])
    nested = _record(("e", ["null", empty]), ("x", "int"))
    _compare(*_decoders(nested), [b"\x00\x02", b"\x02\x04", b"\x04", None])


def test_field_aliases_resolve() -> None:
    writer = _record(("old", "int"))
    reader = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "new", "type": "int", "aliases": ["old"]}],
    }
    accel, pure = _decoders(writer, reader)
    _compare(accel, pure, _encode(writer, [{"old": 5}]))


@pytest.mark.parametrize(
    ("writer", "reader"),
    [
        ({"type": "map", "values": ["int", "string"]}, None),  # a union mapped to a struct
        (["int", "string"], None),  # a union mapped to a struct
        ("null", None),
        ({"type": "array", "items": "null"}, None),  # zero-byte items: the reference's budget
        ({"type": "array", "items": {"type": "record", "name": "E0", "fields": []}}, None),
        (
            _record(("a", "int"), ("m", ["int", "string"])),
            _record(("a", "int")),
        ),  # a dropped field of a type not supported
        (
            _record(("a", "int")),
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": "int"},
                    {"name": "c", "type": {"type": "array", "items": "int"}, "default": [1]},
                ],
            },
        ),  # a default that is not a leaf
        ("int", "float"),
        (["null", "int"], "int"),  # the null branch fails its records: the reference words it
    ],
)
def test_unsupported_pairs_run_the_pure_plan(writer: Any, reader: Any) -> None:
    accel, _ = _decoders(writer, reader)
    assert accel.implementation == "pure"


def test_the_decoder_is_reusable_after_an_error() -> None:
    schema, value = _BENCH_LIKE
    (payload,) = _encode(schema, [value])
    accel, pure = _decoders(schema)
    with pytest.raises(AvroDecodeError) as raised:
        accel.decode([payload, payload[:-3]])
    assert raised.value.index == 1
    _same(accel.decode([payload, bytearray(payload)]), pure.decode([payload, payload]))


def test_slices_outside_the_buffer_are_refused_by_both() -> None:
    import numpy as np

    for decoder in _decoders("long"):
        one = np.array([0], dtype=np.int64)
        with pytest.raises(ValueError, match="outside"):
            decoder.decode_slices(b"\x02", one, np.array([2], dtype=np.int64))
        with pytest.raises(ValueError, match="outside"):
            decoder.decode_slices(b"\x02", np.array([-1], dtype=np.int64), one + 1)
        # a null row's range is not looked at
        nulls = decoder.decode_slices(b"", one + 9, one, np.array([0], dtype=np.uint8))
        assert nulls.to_pylist() == [None]


def test_an_empty_column() -> None:
    accel, pure = _decoders(_BENCH_LIKE[0])
    _same(accel.decode([]), pure.decode([]))
