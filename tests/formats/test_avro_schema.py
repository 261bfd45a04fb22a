"""Avro schema JSON parsed into the model (Avro specification 1.11/1.12: "Schema
Declaration", "Names", "Aliases", "Logical Types"), and hostile schemas refused.

Expected models are written out by hand from the specification.
"""

from __future__ import annotations

import json

import pytest

from spark_kafka_py.errors import KafkaError
from spark_kafka_py.formats.avro.schema import (
    NO_DEFAULT,
    Array,
    Enum,
    Field,
    Fixed,
    Map,
    Primitive,
    Record,
    Ref,
    UnionType,
    is_recursive,
    max_decimal_digits,
    parse_schema,
)
from spark_kafka_py.formats.errors import SchemaError


def _parse(obj: object) -> object:
    return parse_schema(json.dumps(obj)).root


@pytest.mark.parametrize(
    "name", ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
)
def test_primitives_as_strings_and_objects(name: str) -> None:
    assert _parse(name) == Primitive(name)
    assert _parse({"type": name}) == Primitive(name)


def test_a_record_with_every_complex_type() -> None:
    schema = parse_schema(
        json.dumps(
            {
                "type": "record",
                "name": "Order",
                "namespace": "shop",
                "aliases": ["OldOrder"],
                "fields": [
                    {"name": "id", "type": "long"},
                    {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
                    {"name": "attrs", "type": {"type": "map", "values": "int"}},
                    {"name": "note", "type": ["null", "string"], "default": None},
                    {
                        "name": "state",
                        "type": {"type": "enum", "name": "State", "symbols": ["A", "B"]},
                        "aliases": ["status"],
                    },
                    {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
                    {"name": "again", "type": "State"},
                ],
            }
        )
    )
    state = Enum("shop.State", ("A", "B"))
    assert schema.root == Record(
        "shop.Order",
        (
            Field("id", Primitive("long")),
            Field("tags", Array(Primitive("string")), []),
            Field("attrs", Map(Primitive("int"))),
            Field("note", UnionType((Primitive("null"), Primitive("string"))), None),
            Field("state", state, aliases=("status",)),
            Field("hash", Fixed("shop.Hash", 4)),
            Field("again", Ref("shop.State")),
        ),
        ("shop.OldOrder",),
    )
    assert dict(schema.names) == {
        "shop.State": state,
        "shop.Hash": Fixed("shop.Hash", 4),
        "shop.Order": schema.root,
    }
    assert schema.deref(Ref("shop.State")) == state
    assert schema.root.fields[0].default is NO_DEFAULT  # type: ignore[union-attr]
    assert schema.root.fields[3].has_default  # type: ignore[union-attr]


def test_namespaces_full_names_and_the_null_namespace() -> None:
    schema = parse_schema(
        json.dumps(
            {
                "type": "record",
                "name": "a.b.Outer",
                "namespace": "ignored",  # a dotted name is a full name: namespace ignored
                "fields": [
                    # inherits the enclosing namespace a.b
                    {"name": "x", "type": {"type": "fixed", "name": "X", "size": 1}},
                    # own namespace
                    {
                        "name": "y",
                        "type": {"type": "enum", "name": "Y", "namespace": "c", "symbols": ["S"]},
                    },
                    # the empty namespace is the null namespace
                    {
                        "name": "z",
                        "type": {"type": "fixed", "name": "Z", "namespace": "", "size": 2},
                    },
                    {"name": "x2", "type": "X"},  # a.b.X
                    {"name": "y2", "type": "c.Y"},
                    {"name": "z2", "type": "Z"},  # not a.b.Z: falls back to the null namespace
                ],
            }
        )
    )
    assert sorted(schema.names) == ["Z", "a.b.Outer", "a.b.X", "c.Y"]
    fields = schema.root.fields  # type: ignore[union-attr]
    assert [f.type for f in fields[3:]] == [Ref("a.b.X"), Ref("c.Y"), Ref("Z")]


def test_a_recursive_record_parses_into_a_tree_with_a_ref() -> None:
    root = _parse(
        {
            "type": "record",
            "name": "Node",
            "fields": [{"name": "next", "type": ["null", "Node"]}],
        }
    )
    assert root == Record("Node", (Field("next", UnionType((Primitive("null"), Ref("Node")))),))


def test_enum_default() -> None:
    assert _parse({"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "B"}) == Enum(
        "E", ("A", "B"), "B"
    )


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            Primitive("bytes", "decimal", 9, 2),
        ),
        (  # scale defaults to 0
            {"type": "bytes", "logicalType": "decimal", "precision": 4},
            Primitive("bytes", "decimal", 4, 0),
        ),
        (
            {"type": "fixed", "name": "D", "size": 4, "logicalType": "decimal", "precision": 9},
            Fixed("D", 4, (), "decimal", 9, 0),
        ),
        ({"type": "int", "logicalType": "date"}, Primitive("int", "date")),
        ({"type": "int", "logicalType": "time-millis"}, Primitive("int", "time-millis")),
        ({"type": "long", "logicalType": "time-micros"}, Primitive("long", "time-micros")),
        (
            {"type": "long", "logicalType": "timestamp-millis"},
            Primitive("long", "timestamp-millis"),
        ),
        (
            {"type": "long", "logicalType": "local-timestamp-micros"},
            Primitive("long", "local-timestamp-micros"),
        ),
        ({"type": "string", "logicalType": "uuid"}, Primitive("string", "uuid")),
        (
            {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            Fixed("U", 16, (), "uuid"),
        ),
    ],
)
def test_logical_types(obj: object, expected: object) -> None:
    assert _parse(obj) == expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        # "If a logical type is invalid ... implementations should ignore the logical type"
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3},
            Primitive("bytes"),
        ),
        ({"type": "bytes", "logicalType": "decimal", "precision": 0}, Primitive("bytes")),
        ({"type": "bytes", "logicalType": "decimal"}, Primitive("bytes")),
        ({"type": "bytes", "logicalType": "decimal", "precision": "5"}, Primitive("bytes")),
        # a 2-byte fixed holds at most 4 digits (2**15 - 1 = 32767)
        (
            {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 5},
            Fixed("F", 2),
        ),
        ({"type": "string", "logicalType": "date"}, Primitive("string")),
        ({"type": "int", "logicalType": "timestamp-millis"}, Primitive("int")),
        ({"type": "fixed", "name": "U", "size": 8, "logicalType": "uuid"}, Fixed("U", 8)),
        # unknown logical types are ignored
        ({"type": "long", "logicalType": "big-bang"}, Primitive("long")),
    ],
)
def test_invalid_and_unknown_logical_types_are_ignored(obj: object, expected: object) -> None:
    assert _parse(obj) == expected


def test_max_decimal_digits_from_the_specification_formula() -> None:
    # floor(log10(2 ** (8 * n - 1) - 1)): 127, 32767, 8388607, 2147483647, ...
    assert [max_decimal_digits(n) for n in (1, 2, 3, 4, 8, 16)] == [2, 4, 6, 9, 18, 38]


@pytest.mark.parametrize(
    ("obj", "match"),
    [
        ("Nope", "undefined type name 'Nope'"),
        (
            {"type": "record", "name": "R", "fields": [{"name": "a", "type": "Missing"}]},
            "undefined type name",
        ),
        ({"type": "record", "fields": []}, "needs a string 'name'"),
        ({"type": "record", "name": "R"}, "'fields' array"),
        ({"type": "record", "name": "1R", "fields": []}, "invalid name"),
        ({"type": "record", "name": "R", "namespace": "a..b", "fields": []}, "invalid name"),
        (
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}],
            },
            "declared twice",
        ),
        ({"type": "record", "name": "R", "fields": [{"name": "a"}]}, "needs a 'type'"),
        (
            {"type": "record", "name": "R", "fields": [{"name": "a-b", "type": "int"}]},
            "invalid field name",
        ),
        (
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "a", "type": {"type": "fixed", "name": "R", "size": 1}}],
            },
            "defined twice",
        ),
        ({"type": "record", "name": "int", "fields": []}, "may not be called"),
        ({"type": "enum", "name": "E", "symbols": ["A", "A"]}, "unique"),
        ({"type": "enum", "name": "E", "symbols": ["A", "1"]}, "invalid enum symbol"),
        ({"type": "enum", "name": "E", "symbols": ["A"], "default": "B"}, "not one of"),
        ({"type": "enum", "name": "E"}, "'symbols' array"),
        ({"type": "fixed", "name": "F"}, "non-negative integer 'size'"),
        ({"type": "fixed", "name": "F", "size": -1}, "non-negative integer 'size'"),
        ({"type": "fixed", "name": "F", "size": True}, "non-negative integer 'size'"),
        ({"type": "array"}, "needs 'items'"),
        ({"type": "map"}, "needs 'values'"),
        (["int", ["null"]], "may not immediately contain a union"),
        (["int", "int"], "'int' twice"),
        ([{"type": "array", "items": "int"}, {"type": "array", "items": "long"}], "'array' twice"),
        ({"type": 5}, "string 'type'"),
        (5, "a string, an object or an array"),
        ({"type": "record", "name": "R", "aliases": "A", "fields": []}, "'aliases'"),
    ],
)
def test_malformed_schemas_are_typed_errors(obj: object, match: str) -> None:
    with pytest.raises(SchemaError, match=match) as info:
        _parse(obj)
    assert isinstance(info.value, KafkaError)


def test_two_named_types_in_a_union() -> None:
    root = _parse(
        [
            {"type": "fixed", "name": "A", "size": 1},
            {"type": "fixed", "name": "B", "size": 1},
        ]
    )
    assert root == UnionType((Fixed("A", 1), Fixed("B", 1)))


def test_errors_say_where() -> None:
    with pytest.raises(SchemaError) as info:
        _parse(
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": "int"},
                    {"name": "b", "type": {"type": "array", "items": "Q"}},
                ],
            }
        )
    assert info.value.path == "/fields/1/type/items"


def test_not_json() -> None:
    with pytest.raises(SchemaError, match="not JSON"):
        parse_schema('{"type": ')
    with pytest.raises(SchemaError, match="not JSON"):
        parse_schema(b"\xff\xfe")


def test_size_is_bounded_in_bytes() -> None:
    text = json.dumps({"type": "enum", "name": "E", "symbols": [f"S{i}" for i in range(100)]})
    assert parse_schema(text, max_bytes=len(text))
    with pytest.raises(SchemaError, match=f"schema of {len(text)} bytes"):
        parse_schema(text, max_bytes=len(text) - 1)
    # bytes, not characters: 'é' is 2 bytes of UTF-8
    doc = json.dumps({"type": "int", "doc": "é"}, ensure_ascii=False)
    with pytest.raises(SchemaError, match="larger than the limit"):
        parse_schema(doc, max_bytes=len(doc))


def _nested_arrays(depth: int) -> str:
    return '{"type": "array", "items": ' * depth + '"int"' + "}" * depth


def test_depth_is_bounded() -> None:
    assert parse_schema(_nested_arrays(10), max_depth=10)
    with pytest.raises(SchemaError, match="deeper than the limit of 10"):
        parse_schema(_nested_arrays(11), max_depth=10)


def test_json_nested_past_pythons_recursion_is_a_schema_error() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(SchemaError):
        parse_schema(text)


def test_the_default_bounds_admit_a_deep_real_schema() -> None:
    assert parse_schema(_nested_arrays(90))


def test_the_model_is_immutable() -> None:
    schema = parse_schema('{"type": "record", "name": "R", "fields": []}')
    with pytest.raises(AttributeError):
        schema.root.name = "S"  # type: ignore[union-attr, misc]
    with pytest.raises(TypeError):
        schema.names["S"] = schema.root  # type: ignore[index]


@pytest.mark.parametrize(
    ("obj", "recursive"),
    [
        ({"type": "record", "name": "N", "fields": [{"name": "n", "type": ["null", "N"]}]}, True),
        (
            {
                "type": "record",
                "name": "A",
                "fields": [
                    {
                        "name": "m",
                        "type": {
                            "type": "map",
                            "values": {
                                "type": "record",
                                "name": "B",
                                "fields": [{"name": "a", "type": {"type": "array", "items": "A"}}],
                            },
                        },
                    },
                ],
            },
            True,
        ),
        (
            {
                "type": "record",
                "name": "Pair",
                "fields": [
                    {"name": "a", "type": {"type": "record", "name": "P", "fields": []}},
                    {"name": "b", "type": "P"},
                ],
            },
            False,
        ),
        ("int", False),
    ],
)
def test_is_recursive(obj: object, recursive: bool) -> None:
    assert is_recursive(parse_schema(json.dumps(obj))) is recursive
