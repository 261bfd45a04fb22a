"""The reference Avro encoder against fastavro, the oracle: values written by fastavro are
decoded by our decoder into Arrow, encoded back by the encoder, and fastavro's
``schemaless_reader`` reads our payloads to exactly what it reads from its own, row by row
(every type by hand, then generated schemas and data); our decoder reads them back to the same
array. Generated Spark-shaped Arrow arrays written with the schema spark-avro derives for them
(:mod:`.derive`) read back too, and fastavro writes what it reads to the same bytes. Rows that
do not fit the schema raise :class:`AvroEncodeError` naming the row and the field; expected
bytes by hand are written out from the specification's "Binary Encoding".
"""

from __future__ import annotations

import datetime
import io
import json
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import KafkaError
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.derive import derive_schema
from spark_kafka_py.formats.avro.encoder import AvroEncoder, encode
from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.errors import AvroEncodeError, IncompatibleSchemaError
from tests.formats.test_avro_decoder import (
    EVERY_TYPE,
    TOP_LEVEL_CASES,
    _encode,
    _every,
    _schema_and_values,
)

UTC = datetime.timezone.utc


def _fastavro_reads(schema: object, payload: bytes) -> Any:
    parsed = fastavro.parse_schema(schema)
    return fastavro.schemaless_reader(io.BytesIO(payload), parsed, parsed)


def _round_trip(schema: object, values: list[Any]) -> list[bytes]:
    """fastavro -> our decoder -> our encoder; fastavro and our decoder read it back."""
    theirs = _encode(schema, values)
    parsed = parse_schema(json.dumps(schema))
    array = AvroDecoder(parsed).decode(theirs)
    ours = AvroEncoder(parsed, array.type).encode(array)
    assert len(ours) == len(theirs)
    for row, (mine, oracle) in enumerate(zip(ours, theirs, strict=True)):
        assert _fastavro_reads(schema, mine) == _fastavro_reads(schema, oracle), row
    assert AvroDecoder(parsed).decode(ours).equals(array)
    return ours


def test_every_type_round_trips_through_fastavro() -> None:
    _round_trip(EVERY_TYPE, [_every(n) for n in range(7)])


@pytest.mark.parametrize(
    ("schema", "value"),
    TOP_LEVEL_CASES,
)
def test_top_level_types_other_than_records(schema: object, value: object) -> None:
    _round_trip(schema, [value, value])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schema_and_values())
def test_generated_schemas_round_trip(case: tuple[Any, list[Any]]) -> None:
    schema, values = case
    _round_trip(schema, values)


# -- bytes by hand ---------------------------------------------------------------------------------


def _schema(obj: object) -> Any:
    return parse_schema(json.dumps(obj))


def test_bytes_written_out() -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "i", "type": "int"},
            {"name": "s", "type": ["null", "string"]},
            {"name": "a", "type": {"type": "array", "items": "long"}},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
        ],
    }
    array = pa.array(
        [{"i": -1, "s": "ab", "a": [1, -2], "e": "Y"}, {"i": 64, "s": None, "a": [], "e": "X"}],
        type=pa.struct(
            [
                pa.field("i", pa.int32(), nullable=False),
                pa.field("s", pa.string()),
                pa.field("a", pa.list_(pa.field("element", pa.int64(), nullable=False))),
                pa.field("e", pa.string()),
            ]
        ),
    )
    assert encode(_schema(schema), array) == [
        # -1 zig-zag 0x01; branch 1, length 2, "ab"; 2 items 1 -2, end; symbol 1
        b"\x01\x02\x04ab\x04\x02\x03\x00\x02",
        # 64 zig-zag 128 = 0x80 0x01; branch 0; no items; symbol 0
        b"\x80\x01\x00\x00\x00",
    ]


def test_fields_are_matched_by_name_not_position() -> None:
    schema = _schema(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
        }
    )
    array = pa.array([{"b": "z", "a": 1}], type=pa.struct([("b", pa.string()), ("a", pa.int64())]))
    assert encode(schema, array) == [b"\x02\x02z"]


def test_record_fields_the_struct_lacks_are_null_when_they_take_null() -> None:
    # spark-avro's serializer: only required (non-nullable) Avro fields must be matched
    schema = _schema(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "gone", "type": ["string", "null"]},
                {"name": "a", "type": "int"},
                {"name": "nothing", "type": "null"},
            ],
        }
    )
    array = pa.array([{"a": 1}], type=pa.struct([("a", pa.int32())]))
    assert encode(schema, array) == [b"\x02\x02"]  # branch 1 (null), then 1


def test_field_names_match_ignoring_case_when_unambiguous() -> None:
    schema = {"type": "record", "name": "R", "fields": [{"name": "Amount", "type": "long"}]}
    array = pa.array([{"amount": 3}], type=pa.struct([("amount", pa.int64())]))
    assert encode(_schema(schema), array) == [b"\x06"]
    twice = pa.struct([("amount", pa.int64()), ("AMOUNT", pa.int64())])
    with pytest.raises(IncompatibleSchemaError, match="several Arrow struct fields"):
        AvroEncoder(_schema(schema), twice)


def test_decimals_bytes_minimal_and_fixed_sign_extended() -> None:
    dec_bytes = {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}
    dec_fixed = {
        "type": "fixed",
        "name": "D",
        "size": 3,
        "logicalType": "decimal",
        "precision": 5,
        "scale": 2,
    }
    values = [Decimal("1.27"), Decimal("-1.28"), Decimal("0.00"), Decimal("1.5")]
    array = pa.array(values, type=pa.decimal128(5, 2))
    # unscaled 127 = 0x7f, -128 = 0x80, 0 = 0x00, 150 = 0x00 0x96 (minimal two's complement)
    assert encode(_schema(dec_bytes), array) == [
        b"\x02\x7f",
        b"\x02\x80",
        b"\x02\x00",
        b"\x04\x00\x96",
    ]
    assert encode(_schema(dec_fixed), array) == [
        b"\x00\x00\x7f",
        b"\xff\xff\x80",
        b"\x00\x00\x00",
        b"\x00\x00\x96",
    ]
    # a smaller Arrow scale is rescaled exactly: 1.5 at scale 1 is 150 at scale 2
    assert encode(_schema(dec_bytes), pa.array([Decimal("1.5")], pa.decimal128(4, 1))) == [
        b"\x04\x00\x96"
    ]


def test_38_digit_decimals_are_written_exactly() -> None:
    values = [Decimal(f"{10**37 + 1}e-10"), Decimal(f"-{10**38 - 1}e-10")]
    array = pa.array(values, type=pa.decimal128(38, 10))
    for schema in (
        {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 10},
        {
            "type": "fixed",
            "name": "F",
            "size": 16,
            "logicalType": "decimal",
            "precision": 38,
            "scale": 10,
        },
    ):
        payloads = encode(_schema(schema), array)
        assert [_fastavro_reads(schema, p) for p in payloads] == values


def test_38_digit_decimals_round_trip() -> None:
    schema = _schema({"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 10})
    array = pa.array([Decimal(f"{10**37 + 1}e-10")], type=pa.decimal128(38, 10))
    assert AvroDecoder(schema).decode(encode(schema, array)).equals(array)


def test_timestamps_in_the_schemas_unit() -> None:
    micros = 1_700_000_000_123_456
    utc = pa.array([micros, -1], type=pa.timestamp("us", tz="UTC"))
    ntz = pa.array([micros, -1], type=pa.timestamp("us"))
    millis = {"type": "long", "logicalType": "timestamp-millis"}
    local_micros = {"type": "long", "logicalType": "local-timestamp-micros"}
    read = [_fastavro_reads(millis, p) for p in encode(_schema(millis), utc)]
    # floor division, as spark-avro: -1 us is -1 ms
    assert read == [
        datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
    ]
    assert [_fastavro_reads(local_micros, p) for p in encode(_schema(local_micros), ntz)] == [
        datetime.datetime(2023, 11, 14, 22, 13, 20, 123456),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
    ]
    seconds = pa.array([1], type=pa.timestamp("s", tz="UTC"))
    micros_schema = {"type": "long", "logicalType": "timestamp-micros"}
    assert encode(_schema(micros_schema), seconds) == [b"\x80\x89\x7a"]  # 1,000,000 zig-zag


def test_seconds_beyond_a_long_of_microseconds_fail_the_row() -> None:
    schema = _schema({"type": "long", "logicalType": "timestamp-micros"})
    array = pa.array([0, 2**62], type=pa.timestamp("s", tz="UTC"))
    with pytest.raises(AvroEncodeError, match="outside Avro long's range") as info:
        encode(schema, array)
    assert info.value.index == 1


def test_seconds_beyond_a_long_of_milliseconds_fail_the_row() -> None:
    """2**62 s is 4.6e21 ms, past a long: refused, not written as an over-long varint."""
    schema = _schema({"type": "long", "logicalType": "timestamp-millis"})
    array = pa.array([-5, 2**62], type=pa.timestamp("s", tz="UTC"))
    assert encode(schema, array[:1]) == [bytes([0x8F, 0x4E])]  # -5000: zig-zag 9999
    with pytest.raises(AvroEncodeError, match="outside Avro long's range") as info:
        encode(schema, array)
    assert info.value.index == 1
    assert info.value.reason.startswith(f"{2**62 * 1000} is outside")


@pytest.mark.parametrize(
    ("schema", "arrow", "good", "bad"),
    [
        ("int", pa.int64(), -(2**31), -(2**31) - 1),
        ("int", pa.uint32(), 2**31 - 1, 2**31),
        ("long", pa.uint64(), 2**63 - 1, 2**63),
    ],
)
def test_integers_out_of_the_avro_range_fail_the_row(
    schema: str, arrow: pa.DataType, good: int, bad: int
) -> None:
    encoder = AvroEncoder(_schema(schema), arrow)
    (payload,) = encoder.encode(pa.array([good], arrow))
    assert _fastavro_reads(schema, payload) == good
    with pytest.raises(AvroEncodeError, match=f"{bad} is outside Avro {schema}'s range"):
        encoder.encode(pa.array([good, bad], arrow))


def test_durations_are_longs_of_microseconds() -> None:
    # a day-time interval column, with the schema derive_schema gives it
    schema = _schema({"type": "long", "spark.sql.catalyst.type": "interval day to second"})
    assert encode(schema, pa.array([1], type=pa.duration("ms"))) == [b"\xd0\x0f"]  # 1000
    assert encode(schema, pa.array([-1], type=pa.duration("us"))) == [b"\x01"]


def test_int_long_and_float_double_unions_take_the_arrow_width() -> None:
    union = _schema(["null", "int", "long"])
    assert encode(union, pa.array([1, None], pa.int64())) == [b"\x04\x02", b"\x00"]
    assert encode(union, pa.array([1], pa.int32())) == [b"\x02\x02"]
    floats = _schema(["double", "float"])
    assert encode(floats, pa.array([1.0], pa.float32())) == [b"\x02\x00\x00\x80\x3f"]


def test_a_struct_of_members_writes_the_first_set_member() -> None:
    schema = ["null", "string", "long"]
    arrow = AvroDecoder(_schema(schema)).arrow_type
    array = pa.array([{"member0": None, "member1": 7}, None, {"member0": "x"}], type=arrow)
    payloads = encode(_schema(schema), array)
    assert payloads == [b"\x04\x0e", b"\x00", b"\x02\x02x"]


def test_an_encoder_is_reused_and_takes_chunked_arrays() -> None:
    schema = _schema("string")
    encoder = AvroEncoder(schema, pa.string())
    assert encoder.encode(pa.chunked_array([["a"], ["bc"]])) == [b"\x02a", b"\x04bc"]
    assert encoder.encode(pa.array(["d"])) == [b"\x02d"]
    assert encoder.encode(pa.array([], pa.string())) == []


def test_sliced_arrays() -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "a", "type": {"type": "array", "items": "int"}},
            {"name": "m", "type": {"type": "map", "values": "string"}},
        ],
    }
    values = [{"a": [n] * n, "m": {f"k{n}": "v"}} for n in range(5)]
    array = AvroDecoder(_schema(schema)).decode(_encode(schema, values))
    payloads = encode(_schema(schema), array.slice(2, 2))
    assert [_fastavro_reads(schema, p) for p in payloads] == values[2:4]


# -- rows that do not fit -------------------------------------------------------------------------

RECORD = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "int"},
        {
            "name": "detail",
            "type": {
                "type": "record",
                "name": "Detail",
                "fields": [
                    {"name": "color", "type": {"type": "enum", "name": "C", "symbols": ["RED"]}},
                    {"name": "tag", "type": {"type": "fixed", "name": "T", "size": 2}},
                    {
                        "name": "amount",
                        "type": {
                            "type": "bytes",
                            "logicalType": "decimal",
                            "precision": 4,
                            "scale": 2,
                        },
                    },
                    {"name": "items", "type": {"type": "array", "items": "string"}},
                ],
            },
        },
    ],
}
ARROW = pa.struct(
    [
        ("id", pa.int64()),
        (
            "detail",
            pa.struct(
                [
                    ("color", pa.string()),
                    ("tag", pa.binary()),
                    ("amount", pa.decimal128(6, 2)),
                    ("items", pa.list_(pa.string())),
                ]
            ),
        ),
    ]
)


def _good() -> dict[str, Any]:
    detail = {"color": "RED", "tag": b"ab", "amount": Decimal("12.34"), "items": ["x"]}
    return {"id": 1, "detail": detail}


def _bad(path: list[str], value: object) -> dict[str, Any]:
    row = _good()
    target = row
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return row


@pytest.mark.parametrize(
    ("row", "path", "match"),
    [
        (_bad(["id"], 2**31), "/id", "outside Avro int's range"),
        (_bad(["id"], None), "/id", "a null where the schema has no null"),
        (_bad(["detail"], None), "/detail", "a null where the schema has no null"),
        (_bad(["detail", "color"], "BLUE"), "/detail/color", "'BLUE' is not a symbol"),
        (_bad(["detail", "tag"], b"abc"), "/detail/tag", "3 bytes for a fixed of 2"),
        (_bad(["detail", "amount"], Decimal("100.00")), "/detail/amount", "precision 4"),
        (_bad(["detail", "items"], ["y", None]), "/detail/items/items", "a null"),
    ],
)
def test_rows_that_do_not_fit_are_typed_errors(row: dict[str, Any], path: str, match: str) -> None:
    array = pa.array([_good(), _good(), row, _good()], type=ARROW)
    encoder = AvroEncoder(_schema(RECORD), ARROW, schema_id=42)
    with pytest.raises(AvroEncodeError, match=match) as info:
        encoder.encode(array)
    error = info.value
    assert (error.index, error.path, error.schema_id) == (2, path, 42)
    assert "row 2 (schema id 42): " in str(error)
    assert isinstance(error, KafkaError) and not error.retriable
    # the good rows alone encode
    assert len(encoder.encode(array.filter(pa.array([True, True, False, True])))) == 3


def test_a_decimal_losing_digits_to_the_schemas_scale_is_refused() -> None:
    schema = _schema({"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 1})
    with pytest.raises(AvroEncodeError, match="more than the schema's 1 decimal places"):
        encode(schema, pa.array([Decimal("1.0"), Decimal("1.25")], pa.decimal128(5, 2)))


def test_a_float_beyond_float32_is_refused() -> None:
    with pytest.raises(AvroEncodeError, match="beyond Avro float"):
        encode(_schema("float"), pa.array([1e300]))


def test_a_union_without_null_refuses_null_rows() -> None:
    schema = _schema(["string", "long"])
    arrow = AvroDecoder(schema).arrow_type
    with pytest.raises(AvroEncodeError, match="no member set") as info:
        encode(schema, pa.array([{"member0": "a"}, {}], type=arrow))
    assert info.value.index == 1


@pytest.mark.parametrize(
    ("schema", "arrow", "match"),
    [
        ("int", pa.string(), "cannot be written as Avro 'int'"),
        (
            {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]},
            pa.struct([("a", pa.int32()), ("b", pa.int32())]),
            "field 'b' is not in the Avro record",
        ),
        (
            {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]},
            pa.struct([]),
            "field 'a' is not in the Arrow struct and takes no null",
        ),
        (
            {"type": "long", "logicalType": "timestamp-micros"},
            pa.timestamp("us"),
            "cannot be written",
        ),
        ({"type": "map", "values": "int"}, pa.map_(pa.int32(), pa.int32()), "cannot be written"),
        (["int", "long"], pa.float64(), "cannot be written"),
        (
            {"type": "record", "name": "L", "fields": [{"name": "n", "type": ["null", "L"]}]},
            pa.struct([]),
            "recursive",
        ),
    ],
)
def test_types_that_cannot_be_written_are_refused_when_planning(
    schema: object, arrow: pa.DataType, match: str
) -> None:
    with pytest.raises(IncompatibleSchemaError, match=match):
        AvroEncoder(_schema(schema), arrow)


def test_an_array_of_another_type_is_refused() -> None:
    with pytest.raises(ValueError, match="not the encoder's"):
        AvroEncoder(_schema("long"), pa.int64()).encode(pa.array([1], pa.int32()))


# -- generated Spark-shaped Arrow types, with the schema spark-avro derives for them -------------

_LEAVES: list[pa.DataType] = [
    pa.bool_(),
    pa.int32(),
    pa.int64(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.binary(),
    pa.date32(),
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us"),
    pa.decimal128(1, 0),
    pa.decimal128(9, 3),
    pa.decimal128(38, 10),
]


@st.composite
def _arrow_types(draw: st.DrawFn, depth: int = 0) -> pa.DataType:
    kinds = ["leaf"] + (["list", "map", "struct", "struct"] if depth < 3 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        leaf: pa.DataType = draw(st.sampled_from(_LEAVES))
        return leaf
    if kind == "list":
        item = draw(_arrow_types(depth + 1))
        return pa.list_(pa.field("element", item, nullable=draw(st.booleans())))
    if kind == "map":
        value = draw(_arrow_types(depth + 1))
        return pa.map_(pa.string(), pa.field("value", value, nullable=draw(st.booleans())))
    count = draw(st.integers(1, 4))
    return pa.struct(
        [
            pa.field(f"f{i}", draw(_arrow_types(depth + 1)), nullable=draw(st.booleans()))
            for i in range(count)
        ]
    )


def _arrow_values(t: pa.DataType, nullable: bool) -> st.SearchStrategy[Any]:
    values: st.SearchStrategy[Any]
    if pa.types.is_boolean(t):
        values = st.booleans()
    elif pa.types.is_integer(t):
        bits = t.bit_width - 1
        values = st.integers(-(2**bits), 2**bits - 1)
    elif pa.types.is_floating(t):
        values = st.floats(width=t.bit_width, allow_nan=False)
    elif pa.types.is_string(t):
        values = st.text(max_size=6)
    elif pa.types.is_binary(t):
        values = st.binary(max_size=6)
    elif pa.types.is_date32(t):
        values = st.integers(-700_000, 700_000).map(
            lambda d: datetime.date(1970, 1, 1) + datetime.timedelta(days=d)
        )
    elif pa.types.is_timestamp(t):
        tz = UTC if t.tz is not None else None
        values = st.integers(-(6 * 10**16), 6 * 10**16).map(
            lambda us: (
                datetime.datetime(1970, 1, 1, tzinfo=tz) + datetime.timedelta(microseconds=us)
            )
        )
    elif pa.types.is_decimal(t):
        # at most 28 digits: the decoder reads wider decimals through Python's default decimal
        # context, which rounds to 28 (test_38_digit_decimals_round_trip below)
        bound = 10 ** min(t.precision, 28) - 1
        scale = t.scale
        values = st.integers(-bound, bound).map(lambda u: Decimal(f"{u}e-{scale}"))
    elif pa.types.is_list(t):
        field = t.value_field
        values = st.lists(_arrow_values(field.type, field.nullable), max_size=3)
    elif pa.types.is_map(t):
        field = t.item_field
        values = st.dictionaries(
            st.text(max_size=3), _arrow_values(field.type, field.nullable), max_size=3
        ).map(lambda d: list(d.items()))
    else:
        assert pa.types.is_struct(t)
        values = st.fixed_dictionaries(
            {
                f.name: _arrow_values(f.type, f.nullable)
                for f in (t.field(i) for i in range(t.num_fields))
            }
        )
    return values | st.none() if nullable else values


@st.composite
def _typed_arrays(draw: st.DrawFn) -> tuple[pa.DataType, bool, pa.Array]:
    t = draw(_arrow_types())
    nullable = draw(st.booleans())
    rows = draw(st.lists(_arrow_values(t, nullable), min_size=1, max_size=4))
    return t, nullable, pa.array(rows, type=t)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_typed_arrays())
def test_generated_arrays_with_derived_schemas(case: tuple[pa.DataType, bool, pa.Array]) -> None:
    t, nullable, array = case
    schema_json = derive_schema(t, nullable=nullable)
    schema = parse_schema(json.dumps(schema_json))
    payloads = encode(schema, array)
    # fastavro reads each payload, and writes what it read back to the same bytes
    parsed = fastavro.parse_schema(schema_json)
    for payload in payloads:
        value = fastavro.schemaless_reader(io.BytesIO(payload), parsed, parsed)
        again = io.BytesIO()
        fastavro.schemaless_writer(again, parsed, value)
        assert again.getvalue() == payload
    # our decoder reads them back to the array encoded (the derived schema maps back to t)
    decoded = AvroDecoder(schema).decode(payloads)
    assert decoded.type == t
    assert decoded.to_pylist() == array.to_pylist()
