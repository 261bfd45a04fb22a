"""The accelerated Avro encoder (``formats/avro/_encode_accel.pyx``) against the pure reference.

For generated schemas of the kinds the accelerated plan supports (primitives and their logical
types, enums, fixed, decimals, nested records, arrays, maps, nullable, by-width and
struct-of-members unions) and generated Arrow columns (nulls anywhere, values that do not fit:
out of range, beyond float32, unknown symbols, wrong fixed sizes, decimals beyond their scale
or precision, unions with no member set; sliced arrays and sliced children),
:meth:`AvroEncoder.encode_column` gives the same ``binary`` array on both
plans, or raises the same :class:`AvroEncodeError` (row index, path, reason, schema id). The
reference's bytes are checked against fastavro's reading them back in
``tests/formats/test_avro_encoder.py``; here one row of the benchmark's schema is also read
back by fastavro. Pairs it does not support run the pure plan (``implementation == "pure"``).

The extension is required in CI (which builds it: a missing one fails there) and skipped
elsewhere when not built.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from decimal import Context, Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.formats.avro.encoder import AvroEncoder
from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.errors import AvroEncodeError

if os.environ.get("CI", "").lower() == "true":
    import spark_kafka_py.formats.avro._encode_accel  # noqa: F401
else:
    pytest.importorskip(
        "spark_kafka_py.formats.avro._encode_accel",
        reason="the Cython extension is not built (no compiler?): pure path only",
    )

pytestmark = pytest.mark.skipif(
    os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"),
    reason="SPARK_KAFKA_PY_PURE forces the pure plan",
)

#: Draws an Arrow array of ``n`` rows (its type fixed by the node).
Build = Callable[[st.DrawFn, int], pa.Array]
#: (Avro schema as JSON, Arrow type, array builder)
Node = tuple[Any, pa.DataType, Build]


def _encoders(schema: Any, arrow_type: pa.DataType) -> tuple[AvroEncoder, AvroEncoder]:
    parsed = parse_schema(json.dumps(schema))
    accel = AvroEncoder(parsed, arrow_type, schema_id=7)
    pure = AvroEncoder(parsed, arrow_type, schema_id=7, accelerate=False)
    assert pure.implementation == "pure"
    return accel, pure


def _outcome(encoder: AvroEncoder, array: pa.Array, prefix: bytes) -> tuple[str, Any]:
    try:
        out = encoder.encode_column(array, prefix)
    except AvroEncodeError as e:
        return "error", (type(e), e.index, e.path, e.reason, e.schema_id, str(e))
    out.validate(full=True)
    return "ok", out


def _compare(accel: AvroEncoder, pure: AvroEncoder, array: pa.Array, prefix: bytes) -> None:
    assert accel.implementation == "accel"
    got, want = _outcome(accel, array, prefix), _outcome(pure, array, prefix)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert got[1].type == pa.binary()
        assert got[1].to_pylist() == want[1].to_pylist()
    else:
        assert got[1] == want[1]


# -- generated columns ---------------------------------------------------------------------------


def _mask(draw: st.DrawFn, n: int) -> pa.Array | None:
    if not draw(st.booleans()):
        return None
    return pa.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), type=pa.bool_())


def _leaf(
    arrow_type: pa.DataType, values: st.SearchStrategy[Any], cast: pa.DataType | None = None
) -> Build:
    """A flat column of ``values`` (None: a null), built as ``cast`` then cast to the type."""

    def build(draw: st.DrawFn, n: int) -> pa.Array:
        items = draw(st.lists(st.none() | values, min_size=n, max_size=n))
        if cast is not None:
            return pa.array(items, type=cast).cast(arrow_type)
        return pa.array(items, type=arrow_type)

    return build


_INTS: dict[pa.DataType, tuple[int, int]] = {
    pa.int8(): (-(2**7), 2**7 - 1),
    pa.int16(): (-(2**15), 2**15 - 1),
    pa.int32(): (-(2**31), 2**31 - 1),
    pa.int64(): (-(2**63), 2**63 - 1),
    pa.uint8(): (0, 2**8 - 1),
    pa.uint16(): (0, 2**16 - 1),
    pa.uint32(): (0, 2**32 - 1),
    pa.uint64(): (0, 2**64 - 1),
}


def _int_values(arrow_type: pa.DataType) -> st.SearchStrategy[int]:
    low, high = _INTS[arrow_type]
    edges = [
        v for v in (low, high, -(2**31) - 1, -(2**31), 2**31 - 1, 2**31, 0, -1) if low <= v <= high
    ]
    return st.integers(low, high) | st.sampled_from(edges)


@st.composite
def _leaves(draw: st.DrawFn) -> Node:
    kind = draw(
        st.sampled_from(
            [
                "null",
                "boolean",
                "int",
                "long",
                "float",
                "double",
                "string",
                "bytes",
                "date",
                "timestamp",
                "duration",
                "enum",
                "fixed",
                "decimal",
                "decimal_fixed",
            ]
        )
    )
    if kind == "null":
        return "null", pa.null(), lambda draw, n: pa.nulls(n)
    if kind == "boolean":
        return "boolean", pa.bool_(), _leaf(pa.bool_(), st.booleans())
    if kind in ("int", "long"):
        t = draw(st.sampled_from(list(_INTS)))
        return kind, t, _leaf(t, _int_values(t))
    if kind in ("float", "double"):
        t = draw(st.sampled_from([pa.float32(), pa.float64()]))
        width = 32 if t == pa.float32() else 64
        values = st.floats(width=width) | st.sampled_from(
            [3.4028234663852886e38, 3.5e38, -1e300, 1e-320]
        )
        if width == 32:
            values = st.floats(width=32)
        return kind, t, _leaf(t, values)
    if kind in ("string", "bytes"):
        t = draw(
            st.sampled_from(
                [pa.string(), pa.large_string()]
                if kind == "string"
                else [pa.binary(), pa.large_binary(), pa.binary(3)]
            )
        )
        if kind == "string":
            return "string", t, _leaf(t, st.text(max_size=8))
        values = st.binary(min_size=3, max_size=3) if t == pa.binary(3) else st.binary(max_size=8)
        return "bytes", t, _leaf(t, values)
    if kind == "date":
        return (
            {"type": "int", "logicalType": "date"},
            pa.date32(),
            _leaf(pa.date32(), _int_values(pa.int32()), pa.int32()),
        )
    if kind == "timestamp":
        unit = draw(st.sampled_from(["s", "ms", "us", "ns"]))
        tz = draw(st.sampled_from([None, "UTC"]))
        millis = draw(st.booleans())
        logical = ("" if tz else "local-") + ("timestamp-millis" if millis else "timestamp-micros")
        t = pa.timestamp(unit, tz)
        return (
            {"type": "long", "logicalType": logical},
            t,
            _leaf(t, _int_values(pa.int64()), pa.int64()),
        )
    if kind == "duration":
        t = pa.duration(draw(st.sampled_from(["s", "ms", "us", "ns"])))
        return "long", t, _leaf(t, _int_values(pa.int64()), pa.int64())
    if kind == "enum":
        schema = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}
        t = draw(st.sampled_from([pa.string(), pa.large_string()]))
        return schema, t, _leaf(t, st.sampled_from(["A", "B", "C", "D", "é" * 70]))
    if kind == "fixed":
        schema = {"type": "fixed", "name": "F", "size": 3}
        t = draw(st.sampled_from([pa.binary(), pa.large_binary(), pa.binary(3), pa.binary(2)]))
        if pa.types.is_fixed_size_binary(t):
            values = st.binary(min_size=t.byte_width, max_size=t.byte_width)
        else:
            values = st.binary(min_size=2, max_size=4)
        return schema, t, _leaf(t, values)
    # decimals: the Arrow (precision, scale) and the schema's differ to reach every reason
    a_precision = draw(st.integers(1, 38))
    a_scale = draw(st.integers(-2, a_precision))
    t = pa.decimal128(a_precision, a_scale)
    if kind == "decimal_fixed":
        size = draw(st.sampled_from([1, 4, 8, 16, 20]))
        top = {1: 2, 4: 9, 8: 18, 16: 38, 20: 38}[size]
        precision = draw(st.integers(1, top))
        schema = {"type": "fixed", "name": "D", "size": size, "logicalType": "decimal"}
    else:
        precision = draw(st.integers(1, 38))
        schema = {"type": "bytes", "logicalType": "decimal"}
    schema = {**schema, "precision": precision, "scale": draw(st.integers(0, precision))}
    # (pyarrow refuses a negative-scale value whose digits and exponent pass 38)
    # (and at least one digit: decimal128(1, -2) holds 0 to 9 hundreds)
    bound = 10 ** max(1, a_precision - max(0, -a_scale)) - 1
    values = (st.integers(-bound, bound) | st.sampled_from([0, -1, 1, bound, -bound])).map(
        lambda u: Decimal(u).scaleb(-a_scale, _EXACT)
    )
    return schema, t, _leaf(t, values)


_NAMES = iter(range(10**9))
_EXACT = Context(prec=80)


def _nullable(node: Node, draw: st.DrawFn) -> Node:
    schema, t, build = node
    if schema == "null" or (isinstance(schema, list)):
        return node
    form = draw(st.sampled_from(["plain", "null_first", "null_last", "alone"]))
    if form == "null_first":
        return ["null", schema], t, build
    if form == "null_last":
        return [schema, "null"], t, build
    if form == "alone":
        return [schema], t, build
    return node


@st.composite
def _nodes(draw: st.DrawFn, depth: int = 2) -> Node:
    kind = draw(
        st.sampled_from(
            ["leaf", "leaf", "width", "members"] + (["record", "array", "map"] if depth else [])
        )
    )
    if kind == "leaf":
        node = draw(_leaves())
        # enum/fixed names unique per schema
        schema = node[0]
        if isinstance(schema, dict) and "name" in schema:
            node = ({**schema, "name": f"{schema['name']}{next(_NAMES)}"}, node[1], node[2])
        return _nullable(node, draw)
    if kind == "width":
        t = draw(st.sampled_from([*_INTS, pa.float32(), pa.float64()]))
        if pa.types.is_floating(t):
            schema = draw(st.sampled_from([["float", "double"], ["double", "null", "float"]]))
            return schema, t, _leaf(t, st.floats(width=32 if t == pa.float32() else 64))
        schema = draw(st.sampled_from([["int", "long"], ["null", "long", "int"]]))
        return schema, t, _leaf(t, _int_values(t))
    if kind == "members":
        # a union of several non-null branches, written from the decoder's struct of members
        kinds = draw(
            st.lists(
                st.sampled_from(
                    [
                        ("int", pa.int32(), _int_values(pa.int32())),
                        ("string", pa.string(), st.text(max_size=4)),
                        ("boolean", pa.bool_(), st.booleans()),
                        ("double", pa.float64(), st.floats()),
                        ("bytes", pa.binary(), st.binary(max_size=4)),
                    ]
                ),
                min_size=2,
                max_size=3,
                unique_by=lambda k: k[0],
            )
        )
        branches: list[Any] = [k[0] for k in kinds]
        if draw(st.booleans()):
            branches.insert(draw(st.integers(0, len(branches))), "null")
        member_fields = [pa.field(f"member{i}", k[1]) for i, k in enumerate(kinds)]
        member_type = pa.struct(member_fields)

        def build_members(draw: st.DrawFn, n: int) -> pa.Array:
            arrays = [_leaf(k[1], k[2])(draw, n) for k in kinds]
            return pa.StructArray.from_arrays(arrays, fields=member_fields, mask=_mask(draw, n))

        return branches, member_type, build_members
    if kind == "array":
        item_schema, item_type, item_build = draw(_nodes(depth - 1))
        large = draw(st.booleans())
        t = pa.large_list(item_type) if large else pa.list_(item_type)

        def build_list(draw: st.DrawFn, n: int) -> pa.Array:
            sizes = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
            skip = draw(st.integers(0, 2))
            items = item_build(draw, skip + sum(sizes)).slice(skip)
            offsets = [0]
            for s in sizes:
                offsets.append(offsets[-1] + s)
            cls = pa.LargeListArray if large else pa.ListArray
            otype = pa.int64() if large else pa.int32()
            return cls.from_arrays(pa.array(offsets, otype), items, mask=_mask(draw, n))

        return _nullable(({"type": "array", "items": item_schema}, t, build_list), draw)
    if kind == "map":
        value_schema, value_type, value_build = draw(_nodes(depth - 1))
        t = pa.map_(pa.string(), value_type)

        def build_map(draw: st.DrawFn, n: int) -> pa.Array:
            sizes = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
            total = sum(sizes)
            keys = pa.array(
                draw(st.lists(st.text(max_size=4), min_size=total, max_size=total)), pa.string()
            )
            values = value_build(draw, total)
            offsets = [0]
            for s in sizes:
                offsets.append(offsets[-1] + s)
            return pa.MapArray.from_arrays(
                pa.array(offsets, pa.int32()), keys, values, mask=_mask(draw, n)
            )

        return _nullable(({"type": "map", "values": value_schema}, t, build_map), draw)
    # a record; its struct's fields in another order, one Avro field maybe absent (nullable)
    children = draw(st.lists(_nodes(depth - 1), min_size=0, max_size=4))
    names = [f"f{i}" for i in range(len(children))]
    fields = [{"name": n, "type": c[0]} for n, c in zip(names, children, strict=True)]
    absent = draw(st.booleans())
    if absent:
        fields.append({"name": "gone", "type": ["null", "int"], "default": None})
    order = draw(st.permutations(list(range(len(children)))))
    upper = draw(st.booleans())  # Arrow names differing in case only
    struct_fields = [
        pa.field(names[i].upper() if upper else names[i], children[i][1]) for i in order
    ]
    t = pa.struct(struct_fields)
    schema = {"type": "record", "name": f"R{next(_NAMES)}", "fields": fields}

    def build_struct(draw: st.DrawFn, n: int) -> pa.Array:
        skip = draw(st.integers(0, 2))
        arrays = [children[i][2](draw, n + skip).slice(skip) for i in order]
        if not arrays:
            return (
                pa.array([{}] * n, type=t)
                if not draw(st.booleans())
                else pa.array([None if draw(st.booleans()) else {} for _ in range(n)], type=t)
            )
        return pa.StructArray.from_arrays(arrays, fields=struct_fields, mask=_mask(draw, n))

    return _nullable((schema, t, build_struct), draw)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_twin_encodes_as_the_reference(data: st.DataObject) -> None:
    schema, arrow_type, build = data.draw(_nodes())
    accel, pure = _encoders(schema, arrow_type)
    n = data.draw(st.integers(0, 8))
    array = build(data.draw, n)
    prefix = data.draw(st.sampled_from([b"", b"\x00\x00\x00\x00\x07"]))
    _compare(accel, pure, array, prefix)
    # a slice of the column, and a chunked column
    start = data.draw(st.integers(0, n))
    _compare(accel, pure, array.slice(start, data.draw(st.integers(0, n - start))), prefix)
    _compare(accel, pure, pa.chunked_array([array, array], type=arrow_type), prefix)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_twin_encodes_records_as_the_reference(data: st.DataObject) -> None:
    """Records at the top, nested, as a sink's value column is."""
    schema, arrow_type, build = data.draw(
        _nodes(depth=3).filter(lambda n: pa.types.is_struct(n[1]))
    )
    accel, pure = _encoders(schema, arrow_type)
    n = data.draw(st.integers(1, 10))
    array = build(data.draw, n)
    _compare(accel, pure, array, b"\x00\x00\x00\x00\x07")
    _compare(accel, pure, array.slice(1), b"")


BENCH_SCHEMA = {
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
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "ok", "type": "boolean"},
    ],
}
BENCH_TYPE = pa.struct(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("score", pa.float64(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("origin", pa.struct([("zone", pa.int32()), ("host", pa.string())])),
        pa.field("tags", pa.list_(pa.int32())),
        pa.field("note", pa.string()),
        pa.field("at", pa.timestamp("us", tz="UTC")),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("ok", pa.bool_()),
    ]
)


def test_bench_schema_reads_back_with_fastavro() -> None:
    """The benchmark's record, framed, with a null row between: fastavro (not ours) reads
    each payload back to the row's values."""
    from datetime import datetime, timezone

    rows = [
        {
            "id": -(2**31),
            "seq": 2**40,
            "score": 2.5,
            "name": "ñame",
            "origin": {"zone": 3, "host": "h"},
            "tags": [1, -2, 300],
            "note": None,
            "at": datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=timezone.utc),
            "amount": Decimal("-12345678.90"),
            "ok": True,
        },
        None,
        {
            "id": 7,
            "seq": -1,
            "score": -0.0,
            "name": "",
            "origin": {"zone": 0, "host": ""},
            "tags": [],
            "note": "n",
            "at": datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=timezone.utc),
            "amount": Decimal("0.01"),
            "ok": False,
        },
    ]
    array = pa.array(rows, type=BENCH_TYPE)
    accel, _ = _encoders(BENCH_SCHEMA, BENCH_TYPE)
    out = accel.encode_column(array, b"\x00\x00\x00\x00\x07").to_pylist()
    assert out[1] is None
    parsed = fastavro.parse_schema(BENCH_SCHEMA)
    for row, payload in zip(rows, out, strict=True):
        if row is None:
            continue
        assert payload[:5] == b"\x00\x00\x00\x00\x07"
        assert fastavro.schemaless_reader(io.BytesIO(payload[5:]), parsed, None) == row


def test_unsupported_pairs_run_the_pure_plan() -> None:
    """A dictionary column: the reference's plan."""
    accel, _ = _encoders("string", pa.dictionary(pa.int32(), pa.string()))
    assert accel.implementation == "pure"
    array = pa.array(["a", None, "b"]).dictionary_encode()
    assert accel.encode_column(array, b"").to_pylist() == [b"\x02a", None, b"\x02b"]


def test_a_union_of_members_writes_the_first_member_set() -> None:
    members = pa.struct([("member0", pa.int32()), ("member1", pa.string())])
    accel, _ = _encoders(["int", "string"], members)
    assert accel.implementation == "accel"
    array = pa.array([{"member0": 1, "member1": None}, {"member0": None, "member1": "x"}], members)
    assert accel.encode_column(array, b"").to_pylist() == [b"\x00\x02", b"\x02\x02x"]
    with pytest.raises(AvroEncodeError, match="a union value with no member set") as caught:
        accel.encode_column(pa.array([{"member0": None, "member1": None}], members), b"")
    assert caught.value.index == 0


def test_error_names_the_row_in_the_whole_column() -> None:
    """Nulls before the misfit count: the index is the row's place in the column given."""
    accel, pure = _encoders("int", pa.int64())
    array = pa.array([None, 1, None, 2**40, 5], pa.int64())
    for encoder in (accel, pure):
        with pytest.raises(AvroEncodeError) as caught:
            encoder.encode_column(array, b"")
        assert (caught.value.index, caught.value.path, caught.value.reason) == (
            3,
            "",
            f"{2**40} is outside Avro int's range {-(2**31)}..{2**31 - 1}",
        )
