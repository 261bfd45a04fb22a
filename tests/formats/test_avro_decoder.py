"""The reference Avro decoder against fastavro, the oracle: payloads written by
``fastavro.schemaless_writer`` decode to the values written, converted as spark-avro converts
them (:func:`_expect`, written here from spark-avro's rules, not from the decoder); resolved
payloads (writer -> reader schema) decode to what ``fastavro.schemaless_reader`` returns for
the same pair. Hostile payloads (truncated at every byte, trailing bytes, lengths and counts
past the end, bad indexes) raise :class:`AvroDecodeError` naming the record.
"""

from __future__ import annotations

import datetime
import io
import itertools
import json
import struct
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import KafkaError
from spark_kafka_py.formats.avro.decoder import AvroDecoder, decode
from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.errors import (
    AvroDecodeError,
    IncompatibleSchemaError,
    SchemaError,
)

UTC = datetime.timezone.utc

# -- the oracle's side ---------------------------------------------------------------------------


def _encode(schema: object, values: list[Any]) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for value in values:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, value)
        out.append(buf.getvalue())
    return out


def _read(writer: object, reader: object, payload: bytes) -> Any:
    return fastavro.schemaless_reader(
        io.BytesIO(payload), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )


def _names(schema: object, out: dict[str, Any]) -> dict[str, Any]:
    """Named types by name (the tests' schemas use names without namespaces)."""
    if isinstance(schema, list):
        for branch in schema:
            _names(branch, out)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed"):
            out[schema["name"]] = schema
        for key in ("items", "values"):
            if key in schema:
                _names(schema[key], out)
        for field in schema.get("fields", []):
            _names(field["type"], out)
    return out


def _kind(schema: object, names: dict[str, Any]) -> str:
    """The Python type fastavro takes a value of ``schema`` as."""
    if isinstance(schema, str) and schema in names:
        schema = names[schema]
    kind = schema["type"] if isinstance(schema, dict) else schema
    return {
        "null": "none",
        "boolean": "bool",
        "int": "int",
        "long": "int",
        "float": "float",
        "double": "float",
        "string": "str",
        "enum": "str",
        "bytes": "bytes",
        "fixed": "bytes",
        "array": "list",
        "map": "dict",
        "record": "dict",
    }[kind]


def _value_kind(value: object) -> str:
    if value is None:
        return "none"
    for python, kind in (
        (bool, "bool"),
        (int, "int"),
        (float, "float"),
        (str, "str"),
        (bytes, "bytes"),
        (list, "list"),
        (dict, "dict"),
    ):
        if isinstance(value, python):
            return kind
    raise AssertionError(value)


def _f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _expect(schema: object, value: Any, names: dict[str, Any]) -> Any:
    """What spark-avro makes of ``value`` (as fastavro takes or gives it) of ``schema``: the
    Arrow ``to_pylist`` form of the mapped Spark type."""
    if isinstance(schema, str) and schema in names:
        schema = names[schema]
    if isinstance(schema, list):
        if value is None:
            return None
        branches = [b for b in schema if b != "null"]
        kinds = sorted(b if isinstance(b, str) else b["type"] for b in branches)
        if len(branches) == 1:
            return _expect(branches[0], value, names)
        if kinds == ["int", "long"]:
            return value
        if kinds == ["double", "float"]:
            first = next(b for b in branches if b in ("float", "double"))
            return _f32(value) if first == "float" else value
        members = {}
        for n, branch in enumerate(branches):
            chosen = _kind(branch, names) == _value_kind(value) and not members.get("_done")
            members[f"member{n}"] = _expect(branch, value, names) if chosen else None
            if chosen:
                members["_done"] = True
        members.pop("_done")
        return members
    kind = schema["type"] if isinstance(schema, dict) else schema
    logical = schema.get("logicalType") if isinstance(schema, dict) else None
    if kind == "float":
        return _f32(value)
    if logical == "uuid" and kind == "string":
        return str(value)
    if kind == "record":
        return {f["name"]: _expect(f["type"], value[f["name"]], names) for f in schema["fields"]}
    if kind == "array":
        return [_expect(schema["items"], v, names) for v in value]
    if kind == "map":
        return [(k, _expect(schema["values"], v, names)) for k, v in value.items()]
    if logical == "time-millis" and isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    return value


def _check(schema: object, values: list[Any]) -> pa.Array:
    """Decode fastavro's encoding of ``values``; compare with the expected values."""
    payloads = _encode(schema, values)
    array = AvroDecoder(parse_schema(json.dumps(schema))).decode(payloads)
    names = _names(schema, {})
    assert array.to_pylist() == [_expect(schema, v, names) for v in values]
    return array


# -- every type, by hand ------------------------------------------------------------------------

EVERY_TYPE: dict[str, Any] = {
    "type": "record",
    "name": "Every",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "y", "type": "bytes"},
        {"name": "n", "type": "null"},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {"name": "x", "type": {"type": "fixed", "name": "Three", "size": 3}},
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
        {"name": "ns", "type": ["null", "string"]},
        {"name": "sn", "type": ["string", "null"]},
        {"name": "u", "type": ["int", "string", {"type": "array", "items": "Color"}]},
        {"name": "il", "type": ["null", "int", "long"]},
        {"name": "fd", "type": ["float", "double"]},
        {
            "name": "r",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [{"name": "z", "type": ["null", "Three"]}],
            },
        },
        {"name": "r2", "type": ["null", "Inner"]},
        {
            "name": "dec",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 4},
        },
        {
            "name": "decf",
            "type": {
                "type": "fixed",
                "name": "Dec",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 2,
            },
        },
        {"name": "date", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tus", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "lts", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "ltsu", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    ],
}


def _every(n: int) -> dict[str, Any]:
    sign = -1 if n % 2 else 1
    return {
        "b": n % 2 == 0,
        "i": sign * (2**31 - 1 - n),
        "l": sign * (2**63 - 1 - n),
        "f": 1.5 * n,
        "d": -0.1 * n,
        "s": f"zoë {n} ✓",
        "y": bytes(range(n, n + 5)),
        "n": None,
        "e": ["RED", "GREEN"][n % 2],
        "x": b"abc",
        "a": list(range(n)),
        "m": {"k": None, f"k{n}": "v"},
        "ns": None if n % 2 else "s",
        "sn": "t" if n % 2 else None,
        "u": [n, "str", ["RED", "GREEN"]][n % 3],
        "il": [None, 5, 2**40][n % 3],
        "fd": 0.25 * n,
        "r": {"z": None if n % 2 else b"xyz"},
        "r2": None if n % 2 else {"z": b"qrs"},
        "dec": Decimal(sign * (10**16 + n)).scaleb(-4),
        "decf": Decimal("-12345678901234.56") * sign,
        "date": datetime.date(1970, 1, 1) + datetime.timedelta(days=sign * 20000 + n),
        "tms": 86_399_999 - n,
        "tus": 86_399_999_999 - n,
        "ts": datetime.datetime(2026, 11, 27, 1, 2, 3, 4000 * n, tzinfo=UTC),
        "tsu": datetime.datetime(1969, 7, 20, 20, 17, 40, 123456 + n, tzinfo=UTC),
        "lts": datetime.datetime(2001, 2, 3, 4, 5, 6, 7000),
        "ltsu": datetime.datetime(1900, 1, 1, 0, 0, 0, n),
        "id": uuid.UUID(int=n * 2**100 + 7),
    }


def test_every_type_decodes_as_fastavro_wrote_it() -> None:
    values = [_every(n) for n in range(7)]
    array = _check(EVERY_TYPE, values)
    assert array.type == AvroDecoder(parse_schema(json.dumps(EVERY_TYPE))).arrow_type


def test_spot_check_conversions_written_out() -> None:
    # independent of _expect: a few values as Spark shows them
    row = _check(EVERY_TYPE, [_every(2)]).to_pylist()[0]
    assert row["u"] == {"member0": None, "member1": None, "member2": ["RED", "GREEN"]}
    assert row["il"] == 2**40
    assert row["m"] == [("k", None), ("k2", "v")]
    assert row["tms"] == 86_399_997
    assert row["id"] == "00000020-0000-0000-0000-000000000007"  # 2 * 2**100 + 7
    assert row["ts"] == datetime.datetime(2026, 11, 27, 1, 2, 3, 8000, tzinfo=UTC)


#: A value of each top-level type other than a record (the encoder's tests use it too).
TOP_LEVEL_CASES: list[tuple[object, object]] = [
    ("int", -5),
    ("long", 2**62),
    ("string", "top"),
    (["null", "long"], None),
    ({"type": "array", "items": "string"}, ["a", "b"]),
    ({"type": "map", "values": "int"}, {"a": 1}),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "B"),
    ("null", None),
]


@pytest.mark.parametrize(
    ("schema", "value"),
    TOP_LEVEL_CASES,
)
def test_top_level_types_other_than_records(schema: object, value: object) -> None:
    _check(schema, [value, value])


def test_blocks_with_byte_sizes_and_several_blocks() -> None:
    # array<long> [1, 2, 3] as two blocks: -2 items with a byte size of 2, then 1 item, then 0
    payload = bytes([0x03, 0x04, 0x02, 0x04, 0x02, 0x06, 0x00])
    array = decode(parse_schema('{"type": "array", "items": "long"}'), [payload])
    assert array.to_pylist() == [[1, 2, 3]]


def test_null_payloads_are_null_rows() -> None:
    payloads = _encode(EVERY_TYPE, [_every(1)])
    array = AvroDecoder(parse_schema(json.dumps(EVERY_TYPE))).decode([None, *payloads, None])
    assert array.null_count == 2
    assert array.to_pylist()[0] is None and array.to_pylist()[1] is not None


def test_a_decoder_is_reused_between_calls() -> None:
    decoder = AvroDecoder(parse_schema(json.dumps(EVERY_TYPE)))
    first = decoder.decode(_encode(EVERY_TYPE, [_every(1), _every(2)]))
    second = decoder.decode(_encode(EVERY_TYPE, [_every(3)]))
    names = _names(EVERY_TYPE, {})
    assert len(first) == 2
    assert second.to_pylist() == [_expect(EVERY_TYPE, _every(3), names)]
    # a failed call leaves nothing behind for the next
    with pytest.raises(AvroDecodeError):
        decoder.decode([*_encode(EVERY_TYPE, [_every(4)]), b"\x02"])
    assert decoder.decode([]).to_pylist() == []


def test_memoryviews_and_bytearrays() -> None:
    (payload,) = _encode("string", ["abc"])
    framed = b"\x00\x00\x00\x00\x01" + payload
    array = decode(parse_schema('"string"'), [memoryview(framed)[5:], bytearray(payload)])
    assert array.to_pylist() == ["abc", "abc"]


# -- generated schemas and data -------------------------------------------------------------------

PRIMITIVES = ["boolean", "int", "long", "float", "double", "string", "bytes"]


def _union_struct_branches() -> st.SearchStrategy[list[Any]]:
    # branches fastavro tells apart by the value's Python type (no int with double or
    # boolean, no record with map, no enum with string, no bytes with array: fastavro
    # takes bytes for an array, a sequence)
    pool = [
        "long",
        "string",
        {"type": "array", "items": "int"},
        {"type": "map", "values": "string"},
    ]
    return st.lists(st.sampled_from(pool), min_size=2, max_size=4, unique_by=json.dumps)


@st.composite
def _schemas(draw: st.DrawFn, depth: int = 0, names: Iterator[int] | None = None) -> Any:
    names = names if names is not None else itertools.count()
    kinds = ["prim", "enum", "fixed"]
    if depth < 3:
        kinds += ["record", "record", "array", "map", "nullable", "union", "intlong", "floats"]
    kind = draw(st.sampled_from(kinds))
    if kind == "prim":
        return draw(st.sampled_from(PRIMITIVES))
    if kind == "enum":
        symbols = draw(st.lists(st.sampled_from("ABCDEFG"), min_size=1, max_size=4, unique=True))
        return {"type": "enum", "name": f"E{next(names)}", "symbols": symbols}
    if kind == "fixed":
        return {"type": "fixed", "name": f"F{next(names)}", "size": draw(st.integers(0, 6))}
    if kind == "record":
        count = draw(st.integers(0, 4))
        fields = [{"name": f"f{i}", "type": draw(_schemas(depth + 1, names))} for i in range(count)]
        return {"type": "record", "name": f"R{next(names)}", "fields": fields}
    if kind == "array":
        return {"type": "array", "items": draw(_schemas(depth + 1, names))}
    if kind == "map":
        return {"type": "map", "values": draw(_schemas(depth + 1, names))}
    if kind == "nullable":
        inner = draw(_schemas(depth + 1, names))
        if isinstance(inner, list):
            return inner
        return draw(st.sampled_from([["null", inner], [inner, "null"]]))
    if kind == "intlong":
        return draw(st.permutations(["int", "long"])) + draw(st.sampled_from([[], ["null"]]))
    if kind == "floats":
        return draw(st.permutations(["float", "double"]))
    branches = draw(_union_struct_branches())
    if draw(st.booleans()):
        branches.insert(draw(st.integers(0, len(branches))), "null")
    return branches


def _values(schema: Any) -> st.SearchStrategy[Any]:
    if isinstance(schema, list):
        if "int" in schema and "long" in schema:
            return st.integers(-(2**31), 2**31 - 1) | (
                st.none() if "null" in schema else st.nothing()
            )
        if "float" in schema and "double" in schema:
            return st.floats(width=32, allow_nan=False)
        return st.one_of(*[_values(b) for b in schema])
    kind = schema["type"] if isinstance(schema, dict) else schema
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "int":
        return st.integers(-(2**31), 2**31 - 1)
    if kind == "long":
        return st.integers(-(2**63), 2**63 - 1)
    if kind == "float":
        return st.floats(width=32, allow_nan=False)
    if kind == "double":
        return st.floats(allow_nan=False)
    if kind == "string":
        return st.text(max_size=8)
    if kind == "bytes":
        return st.binary(max_size=8)
    if kind == "enum":
        return st.sampled_from(schema["symbols"])
    if kind == "fixed":
        return st.binary(min_size=schema["size"], max_size=schema["size"])
    if kind == "array":
        return st.lists(_values(schema["items"]), max_size=3)
    if kind == "map":
        return st.dictionaries(st.text(max_size=4), _values(schema["values"]), max_size=3)
    assert kind == "record"
    return st.fixed_dictionaries({f["name"]: _values(f["type"]) for f in schema["fields"]})


@st.composite
def _schema_and_values(draw: st.DrawFn) -> tuple[Any, list[Any]]:
    schema = draw(_schemas())
    values = draw(st.lists(_values(schema), min_size=1, max_size=4))
    return schema, values


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schema_and_values())
def test_generated_schemas_decode_as_fastavro_wrote_them(case: tuple[Any, list[Any]]) -> None:
    schema, values = case
    _check(schema, values)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schema_and_values(), st.data())
def test_every_strict_prefix_and_any_suffix_is_an_error(
    case: tuple[Any, list[Any]], data: st.DataObject
) -> None:
    schema, values = case
    payloads = _encode(schema, values)
    decoder = AvroDecoder(parse_schema(json.dumps(schema)))
    index = data.draw(st.integers(0, len(payloads) - 1))
    payload = payloads[index]
    for cut in range(len(payload)):
        broken = [*payloads[:index], payload[:cut], *payloads[index + 1 :]]
        with pytest.raises(AvroDecodeError) as info:
            decoder.decode(broken)
        assert info.value.index == index
    extra = data.draw(st.binary(min_size=1, max_size=3))
    with pytest.raises(AvroDecodeError, match="trailing bytes") as info:
        decoder.decode([*payloads[:index], payload + extra])
    assert info.value.index == index


# -- hostile payloads, by hand --------------------------------------------------------------------


def _fails(schema: str, payload: bytes, match: str) -> AvroDecodeError:
    decoder = AvroDecoder(parse_schema(schema))
    good = _encode(json.loads(schema), [])  # nothing: the bad payload is record 2 below
    assert good == []
    with pytest.raises(AvroDecodeError, match=match) as info:
        decoder.decode([None, None, payload])
    assert info.value.index == 2
    assert isinstance(info.value, KafkaError)
    return info.value


# zig-zag varint of 2**60: 2**61 unsigned
HUGE = bytes([0x80] * 8 + [0x20])


@pytest.mark.parametrize(
    ("schema", "payload", "match"),
    [
        ('"string"', HUGE, "length of 1152921504606846976 bytes runs past the end"),
        ('"bytes"', b"\x01", "negative length -1"),
        ('"bytes"', b"\x0a\x00", "length of 5 bytes runs past the end"),
        ('{"type": "array", "items": "long"}', HUGE, "block of 1152921504606846976 items"),
        ('{"type": "array", "items": "double"}', b"\x04" + b"\x00" * 15, "block of 2 items"),
        ('{"type": "map", "values": "null"}', HUGE, "block of 1152921504606846976 items"),
        ('{"type": "array", "items": "null"}', HUGE, "too many items that encode to no bytes"),
        ('{"type": "array", "items": "long"}', b"\x01\x01\x02", "negative block size"),
        ('"long"', b"\xff" * 10 + b"\x01", "varint longer than 10 bytes"),
        ('"long"', b"\xff" * 9 + b"\x7f", "outside its type's range"),
        ('"int"', b"\xff\xff\xff\xff\x1f", "outside its type's range"),
        ('"int"', b"\xff\xff\xff\xff\xff\x01", "varint longer than 5 bytes"),
        ('"boolean"', b"\x02", "boolean byte 0x02"),
        ('"double"', b"\x00" * 7, "double past the end"),
        ('"string"', b"\x04\xff\xfe", "invalid UTF-8"),
        ('["null", "int"]', b"\x04", "union index 2 outside 0..1"),
        ('["null", "int"]', b"\x01", "union index -1 outside 0..1"),
        ('{"type": "enum", "name": "E", "symbols": ["A"]}', b"\x02", "enum index 1 outside"),
        ('{"type": "fixed", "name": "F", "size": 4}', b"abc", "fixed of 4 bytes"),
        (
            '{"type": "bytes", "logicalType": "decimal", "precision": 2}',
            b"\x02\x64",  # 100: three digits
            "decimal wider than its precision 2",
        ),
        (
            '{"type": "long", "logicalType": "timestamp-millis"}',
            b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # 2**63 - 1 ms
            "timestamp outside 64-bit microseconds",
        ),
        ('"long"', b"", "varint runs past the end"),
        ('"null"', b"\x00", "1 trailing bytes"),
    ],
)
def test_hostile_payloads(schema: str, payload: bytes, match: str) -> None:
    _fails(schema, payload, match)


def test_zero_width_items_are_bounded_per_payload() -> None:
    schema = parse_schema('{"type": "array", "items": "null"}')
    ten = bytes([0x14, 0x00])  # 10 nulls
    assert AvroDecoder(schema, max_empty_items=10).decode([ten, ten]).to_pylist() == [
        [None] * 10,
        [None] * 10,
    ]
    with pytest.raises(AvroDecodeError, match="too many items"):
        AvroDecoder(schema, max_empty_items=9).decode([ten])


def test_errors_say_where_in_the_payload() -> None:
    error = _fails(
        '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"},'
        '{"name": "b", "type": "string"}]}',
        b"\x02\x06ab",
        "past the end",
    )
    assert error.position == 1
    assert str(error) == "record 2: truncated: a length of 3 bytes runs past the end (at byte 1)"


def test_permissive_mode_nulls_bad_rows_and_keeps_the_others() -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "xs", "type": {"type": "array", "items": "string"}},
            {"name": "m", "type": {"type": "map", "values": "long"}},
            {"name": "u", "type": ["null", "int", "string"]},
        ],
    }
    good = _encode(
        schema,
        [
            {"xs": ["a", "b"], "m": {"k": 1}, "u": "s"},
            {"xs": [], "m": {}, "u": None},
        ],
    )
    # truncated after some of its array, map and union have been appended
    bad = good[0][:-1]
    errors: list[AvroDecodeError] = []
    decoder = AvroDecoder(parse_schema(json.dumps(schema)))
    array = decoder.decode([good[0], bad, good[1], b"\x00\x00\x00\x00"], on_error=errors.append)
    names = _names(schema, {})
    assert array.to_pylist() == [
        _expect(schema, {"xs": ["a", "b"], "m": {"k": 1}, "u": "s"}, names),
        None,
        _expect(schema, {"xs": [], "m": {}, "u": None}, names),
        None,
    ]
    assert [e.index for e in errors] == [1, 3]
    array.validate(full=True)


# -- schema resolution (writer -> reader) against fastavro's --------------------------------------


def _record(name: str, *fields: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def _resolve_check(writer: Any, reader: Any, values: list[Any]) -> pa.Array | None:
    payloads = _encode(writer, values)
    decoder = AvroDecoder(parse_schema(json.dumps(writer)), parse_schema(json.dumps(reader)))
    names = _names(reader, {})
    try:
        expected = [_expect(reader, _read(writer, reader, p), names) for p in payloads]
    except UnicodeDecodeError:
        # bytes promoted to a string that is not UTF-8: fastavro fails too
        with pytest.raises(AvroDecodeError, match="invalid UTF-8"):
            decoder.decode(payloads)
        return None
    array = decoder.decode(payloads)
    assert array.to_pylist() == expected
    assert array.type == decoder.arrow_type
    return array


RESOLUTIONS = [
    pytest.param(
        _record(
            "R",
            {"name": "a", "type": "int"},
            {
                "name": "gone",
                "type": {"type": "array", "items": {"type": "map", "values": ["null", "string"]}},
            },
            {"name": "b", "type": "string"},
        ),
        _record(
            "R",
            {"name": "b", "type": "string"},
            {"name": "added", "type": ["null", "long"], "default": None},
            {"name": "a", "type": "long"},
            {
                "name": "d",
                "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]},
                "default": "Y",
            },
            {"name": "arr", "type": {"type": "array", "items": "int"}, "default": [1, 2]},
            # a record default with bytes inside: test_defaults_written_out (fastavro
            # returns nested defaults as their JSON, not converted)
            {
                "name": "rec",
                "type": _record("In", {"name": "w", "type": "string"}),
                "default": {"w": "dflt"},
            },
        ),
        [{"a": 1, "gone": [{"k": None}], "b": "x"}, {"a": -7, "gone": [], "b": ""}],
        id="added-removed-reordered-fields",
    ),
    pytest.param(
        _record(
            "P",
            {"name": "i2l", "type": "int"},
            {"name": "i2f", "type": "int"},
            {"name": "i2d", "type": "int"},
            {"name": "l2f", "type": "long"},
            {"name": "l2d", "type": "long"},
            {"name": "f2d", "type": "float"},
            {"name": "s2b", "type": "string"},
            {"name": "b2s", "type": "bytes"},
        ),
        _record(
            "P",
            {"name": "i2l", "type": "long"},
            {"name": "i2f", "type": "float"},
            {"name": "i2d", "type": "double"},
            {"name": "l2f", "type": "float"},
            {"name": "l2d", "type": "double"},
            {"name": "f2d", "type": "double"},
            {"name": "s2b", "type": "bytes"},
            {"name": "b2s", "type": "string"},
        ),
        [
            {
                "i2l": 2**31 - 1,
                "i2f": 3,
                "i2d": -4,
                "l2f": 2**40,
                "l2d": -(2**50),
                "f2d": 0.1,
                "s2b": "é",
                "b2s": b"ok",
            }
        ],
        id="promotions",
    ),
    pytest.param(
        {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
        {"type": "enum", "name": "E", "symbols": ["C", "A", "Z"], "default": "Z"},
        ["A", "B", "C"],
        id="enum-default",
    ),
    pytest.param(
        "int",
        ["null", "string", "long"],
        [5, -5],
        id="reader-union-promoted-branch",
    ),
    pytest.param(
        "string",
        ["null", "string"],
        ["x"],
        id="reader-nullable",
    ),
    pytest.param(
        ["int", "string"],
        ["null", "string", "long"],
        [3, "s"],
        id="union-to-union",
    ),
    pytest.param(
        ["null", "int"],
        ["null", "long"],
        [None, 1],
        id="nullable-promoted",
    ),
    pytest.param(
        _record("Old", {"name": "x", "type": "int"}),
        _record("New", {"name": "y", "type": "int", "aliases": ["x"]}, aliases=["Old"]),
        [{"x": 1}],
        id="aliases",
    ),
    pytest.param(
        {
            "type": "map",
            "values": _record("V", {"name": "a", "type": "int"}, {"name": "b", "type": "string"}),
        },
        {"type": "map", "values": _record("V", {"name": "b", "type": "string"})},
        [{"k": {"a": 1, "b": "x"}, "j": {"a": 2, "b": "y"}}],
        id="map-of-records-dropping-a-field",
    ),
]


@pytest.mark.parametrize(("writer", "reader", "values"), RESOLUTIONS)
def test_resolution_matches_fastavro(writer: Any, reader: Any, values: list[Any]) -> None:
    _resolve_check(writer, reader, values)


def test_defaults_written_out() -> None:
    writer = _record("R", {"name": "a", "type": "int"})
    reader = _record(
        "R",
        {"name": "a", "type": "int"},
        {"name": "n", "type": ["null", "int"], "default": None},
        {"name": "i", "type": ["int", "null"], "default": 4},
        {"name": "s", "type": "string", "default": "dflt"},
        {"name": "y", "type": "bytes", "default": "\u0001\u00ff"},
        {"name": "m", "type": {"type": "map", "values": "long"}, "default": {"k": 9}},
        {"name": "u", "type": ["string", "int"], "default": 3},  # any branch (Avro 1.12)
        {
            "name": "ts",
            "type": {"type": "long", "logicalType": "timestamp-millis"},
            "default": 1000,
        },
        {
            "name": "rec",
            "type": _record(
                "In",
                {"name": "q", "type": "bytes"},
                {"name": "w", "type": "double"},
                {
                    "name": "dec",
                    "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2},
                },
                {"name": "e", "type": ["null", "string"], "default": None},
            ),
            "default": {"q": "\u00ff\u0000", "w": 2, "dec": "\u0004\u00d2"},
        },
    )
    array = AvroDecoder(parse_schema(json.dumps(writer)), parse_schema(json.dumps(reader))).decode(
        _encode(writer, [{"a": 1}])
    )
    assert array.to_pylist() == [
        {
            "a": 1,
            "n": None,
            "i": 4,
            "s": "dflt",
            "y": b"\x01\xff",
            "m": [("k", 9)],
            "u": {"member0": None, "member1": 3},
            "ts": datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC),
            # 0x04d2 = 1234, scale 2; "e" from its own default
            "rec": {"q": b"\xff\x00", "w": 2.0, "dec": Decimal("12.34"), "e": None},
        }
    ]


def test_an_enum_symbol_the_reader_lacks_without_default_fails_that_record() -> None:
    writer = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
    reader = {"type": "enum", "name": "E", "symbols": ["A"]}
    decoder = AvroDecoder(parse_schema(json.dumps(writer)), parse_schema(json.dumps(reader)))
    assert decoder.decode(_encode(writer, ["A"])).to_pylist() == ["A"]
    with pytest.raises(AvroDecodeError, match="symbol 'B' is not in the reader's enum") as info:
        decoder.decode(_encode(writer, ["A", "B"]))
    assert info.value.index == 1


def test_a_writer_union_branch_the_reader_cannot_take_fails_only_its_records() -> None:
    writer = ["int", "string"]
    decoder = AvroDecoder(parse_schema(json.dumps(writer)), parse_schema('"long"'))
    assert decoder.decode(_encode(writer, [1, 2])).to_pylist() == [1, 2]
    with pytest.raises(AvroDecodeError, match="union branch 1") as info:
        decoder.decode(_encode(writer, [1, "x"]))
    assert info.value.index == 1


@pytest.mark.parametrize(
    ("writer", "reader", "error", "match"),
    [
        (
            _record("R", {"name": "a", "type": "int"}),
            _record("R", {"name": "b", "type": "int"}),
            IncompatibleSchemaError,
            "no default",
        ),
        ('"long"', '"int"', IncompatibleSchemaError, "does not resolve"),
        ('"string"', '["null", "int"]', IncompatibleSchemaError, "matches no branch"),
        (_record("A"), _record("B"), IncompatibleSchemaError, "does not resolve"),
        (
            {"type": "fixed", "name": "F", "size": 2},
            {"type": "fixed", "name": "F", "size": 3},
            IncompatibleSchemaError,
            "does not resolve",
        ),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
            {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 1},
            IncompatibleSchemaError,
            "does not resolve",
        ),
        (
            _record("R", {"name": "a", "type": "int"}),
            _record("R", {"name": "b", "type": "int", "default": "x"}),
            SchemaError,
            "does not match its type",
        ),
        (
            _record("N", {"name": "next", "type": ["null", "N"]}),
            '"int"',
            IncompatibleSchemaError,
            "recursive",
        ),
    ],
)
def test_schemas_that_do_not_resolve(writer: Any, reader: Any, error: type, match: str) -> None:
    def parse(s: Any) -> Any:
        return parse_schema(s if isinstance(s, str) else json.dumps(s))

    with pytest.raises(error, match=match):
        AvroDecoder(parse(writer), parse(reader))


def test_a_writer_field_the_reader_drops_may_be_wider_than_spark() -> None:
    wide = {"type": "bytes", "logicalType": "decimal", "precision": 40}
    writer = _record("R", {"name": "big", "type": wide}, {"name": "a", "type": "int"})
    reader = _record("R", {"name": "a", "type": "int"})
    payloads = _encode(writer, [{"big": Decimal(10**39), "a": 3}])
    decoder = AvroDecoder(parse_schema(json.dumps(writer)), parse_schema(json.dumps(reader)))
    assert decoder.decode(payloads).to_pylist() == [{"a": 3}]


# -- generated resolutions ------------------------------------------------------------------------

_PROMOTE = {
    "int": ["long", "float", "double"],
    "long": ["float", "double"],
    "float": ["double"],
    "string": ["bytes"],
    "bytes": ["string"],
}
_DEFAULTS: list[tuple[Any, Any]] = [
    ("int", -3),
    ("long", 2**40),
    ("string", "dflt"),
    ("boolean", True),
    ("double", 0.5),
    (["null", "string"], None),
    ({"type": "array", "items": "long"}, [1, 2]),
]


@st.composite
def _resolution(draw: st.DrawFn) -> tuple[Any, Any, list[Any]]:
    names = itertools.count()
    count = draw(st.integers(1, 5))
    writer_fields = [{"name": f"w{i}", "type": draw(_schemas(1, names))} for i in range(count)]
    reader_fields = []
    for f in writer_fields:
        action = draw(st.sampled_from(["keep", "drop", "promote", "nullable"]))
        if action == "drop":
            continue
        kind = f["type"]
        if action == "promote" and isinstance(kind, str) and kind in _PROMOTE:
            kind = draw(st.sampled_from(_PROMOTE[kind]))
        elif action == "nullable" and not isinstance(kind, list):
            kind = ["null", kind]
        reader_fields.append({"name": f["name"], "type": kind})
    for i in range(draw(st.integers(0, 3))):
        kind, default = draw(st.sampled_from(_DEFAULTS))
        reader_fields.append({"name": f"r{i}", "type": kind, "default": default})
    reader_fields = draw(st.permutations(reader_fields))
    writer = _record("Top", *writer_fields)
    reader = _record("Top", *reader_fields)
    values = draw(st.lists(_values(writer), min_size=1, max_size=3))
    return writer, reader, values


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_resolution())
def test_generated_resolutions_match_fastavro(case: tuple[Any, Any, list[Any]]) -> None:
    writer, reader, values = case
    _resolve_check(writer, reader, values)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas())
def test_the_arrow_type_and_the_spark_json_agree_as_pyspark_reads_them(schema: Any) -> None:
    # PySpark's own readings, no JVM: the Arrow type as its Arrow conversion maps it, and
    # the JSON as DataType.fromJson reads it; nullability of fields, elements and values too
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import _parse_datatype_json_value

    mapped = AvroDecoder(parse_schema(json.dumps(schema))).mapped
    assert from_arrow_type(mapped.arrow) == _parse_datatype_json_value(mapped.spark_json)


def test_every_types_arrow_type_and_spark_json_agree() -> None:
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import _parse_datatype_json_value

    mapped = AvroDecoder(parse_schema(json.dumps(EVERY_TYPE))).mapped
    assert from_arrow_type(mapped.arrow) == _parse_datatype_json_value(mapped.spark_json)
