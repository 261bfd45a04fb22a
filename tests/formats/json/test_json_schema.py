"""JSON Schema -> Spark type (spark_kafka_py/formats/json/schema.py): every row of the module's
table and every refusal, expected values written out."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import FormatError, JsonSchemaError
from spark_kafka_py.formats.json.schema import parse_json_schema, to_spark


def _obj(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties}


def _field(name: str, spark: object) -> dict[str, object]:
    return {"name": name, "type": spark, "nullable": True, "metadata": {}}


@pytest.mark.parametrize(
    ("prop", "spark", "arrow"),
    [
        ({"type": "integer"}, "long", pa.int64()),
        ({"type": ["integer"]}, "long", pa.int64()),
        ({"type": "number"}, "double", pa.float64()),
        ({"type": ["integer", "number"]}, "double", pa.float64()),
        ({"type": ["number", "integer", "null"]}, "double", pa.float64()),
        ({"type": "boolean"}, "boolean", pa.bool_()),
        ({"type": "string"}, "string", pa.string()),
        ({"type": "string", "format": "email"}, "string", pa.string()),
        ({"type": "string", "format": "date-time"}, "timestamp", pa.timestamp("us", tz="UTC")),
        ({"type": "string", "format": "date"}, "date", pa.date32()),
        ({"type": ["string", "null"]}, "string", pa.string()),
        ({"type": ["null", "integer"]}, "long", pa.int64()),
        ({"enum": ["A", "B"]}, "string", pa.string()),
        ({"type": "string", "enum": ["A", "B"]}, "string", pa.string()),
        ({"enum": ["A", None]}, "string", pa.string()),
        ({"const": "X"}, "string", pa.string()),
        ({"oneOf": [{"type": "null"}, {"type": "integer"}]}, "long", pa.int64()),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "string", pa.string()),
        ({"allOf": [{"type": "string", "minLength": 1}]}, "string", pa.string()),
        (
            {"type": "array", "items": {"type": "integer"}},
            {"type": "array", "elementType": "long", "containsNull": True},
            pa.list_(pa.field("element", pa.int64())),
        ),
        (
            {"type": "object", "additionalProperties": {"type": "number"}},
            {"type": "map", "keyType": "string", "valueType": "double", "valueContainsNull": True},
            pa.map_(pa.string(), pa.field("value", pa.float64())),
        ),
        (
            {"type": "integer", "minimum": 0, "description": "d", "title": "t", "default": 1},
            "long",
            pa.int64(),
        ),
    ],
)
def test_leaf_and_container_mapping(prop: object, spark: object, arrow: pa.DataType) -> None:
    mapped = parse_json_schema(_obj(x=prop))
    assert mapped.spark_json == {"type": "struct", "fields": [_field("x", spark)]}
    assert mapped.arrow == pa.struct([pa.field("x", arrow, nullable=True)])
    assert mapped.nullable is True


def test_object_properties_in_declaration_order_nested_and_required_ignored() -> None:
    text = """{
      "$schema": "http://json-schema.org/draft-07/schema#",
      "title": "Order", "type": "object", "required": ["z", "a"],
      "properties": {
        "z": {"type": "integer"},
        "a": {"type": "object", "properties": {"q": {"type": "boolean"}}},
        "m": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
      }
    }"""
    mapped = parse_json_schema(text)
    assert mapped.spark_json == {
        "type": "struct",
        "fields": [
            _field("z", "long"),
            _field("a", {"type": "struct", "fields": [_field("q", "boolean")]}),
            _field(
                "m",
                {
                    "type": "array",
                    "elementType": {"type": "array", "elementType": "string", "containsNull": True},
                    "containsNull": True,
                },
            ),
        ],
    }
    assert mapped.ddl == "STRUCT<`z`: BIGINT, `a`: STRUCT<`q`: BOOLEAN>, `m`: ARRAY<ARRAY<STRING>>>"
    assert mapped.arrow == pa.struct(
        [
            pa.field("z", pa.int64()),
            pa.field("a", pa.struct([pa.field("q", pa.bool_())])),
            pa.field(
                "m", pa.list_(pa.field("element", pa.list_(pa.field("element", pa.string()))))
            ),
        ]
    )


def test_bytes_and_to_spark_alias() -> None:
    text = json.dumps(_obj(a={"type": "integer"}))
    assert parse_json_schema(text.encode()) == to_spark(text)


@pytest.mark.parametrize("defs", ["definitions", "$defs"])
def test_local_refs_resolved(defs: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"$ref": f"#/{defs}/Address"},
            "work": {"$ref": f"#/{defs}/Address", "description": "sibling ignored"},
        },
        defs: {
            "Address": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "zip": {"$ref": f"#/{defs}/Zip"}},
            },
            "Zip": {"type": "integer"},
        },
    }
    address = {"type": "struct", "fields": [_field("city", "string"), _field("zip", "long")]}
    assert parse_json_schema(schema).spark_json == {
        "type": "struct",
        "fields": [_field("home", address), _field("work", address)],
    }


def test_ref_pointer_escapes() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/x~1y~0z"}},
        "$defs": {"x/y~z": {"type": "boolean"}},
    }
    assert parse_json_schema(schema).spark_json == {
        "type": "struct",
        "fields": [_field("a", "boolean")],
    }


@pytest.mark.parametrize(
    ("schema", "pointer", "reason"),
    [
        ({"type": "object", "properties": {"a": {}}}, "/properties/a", "without 'type'"),
        (
            {"type": "object", "properties": {"a": {"type": "array", "items": {}}}},
            "/properties/a/items",
            "without 'type'",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array"}}},
            "/properties/a",
            "without 'items'",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": [{"type": "string"}]}},
            },
            "/properties/a",
            "tuple arrays",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
                },
            },
            "/properties/a/oneOf",
            "different types",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "boolean"}]}},
            },
            "/properties/a/anyOf",
            "different types",
        ),
        (
            {"type": "object", "properties": {"a": {"type": ["string", "integer"]}}},
            "/properties/a",
            "several non-null types",
        ),
        ({"type": "object", "properties": {"a": {"type": "null"}}}, "/properties/a", "null alone"),
        ({"type": "object"}, "", "without 'properties'"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "object", "additionalProperties": True}},
            },
            "/properties/a",
            "without 'properties'",
        ),
        ({"type": "object", "properties": {"a": {"enum": [1, 2]}}}, "/properties/a", "non-strings"),
        ({"type": "object", "properties": {"a": True}}, "/properties/a", "boolean schema"),
        (
            {"type": "object", "properties": {"a": {"type": "float"}}},
            "/properties/a",
            "unknown type",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "other.json#/definitions/A"}}},
            "/properties/a",
            "outside the document",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}},
            "/properties/a",
            "outside the document",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/definitions/Missing"}}},
            "/properties/a",
            "does not resolve",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#anchor"}}},
            "/properties/a",
            "not a JSON pointer",
        ),
        (
            {"type": "object", "properties": {"a/b": {"type": "object", "properties": {"c": {}}}}},
            "/properties/a~1b/properties/c",
            "without 'type'",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/A"}},
                "$defs": {"A": {"type": "object", "properties": {"b": {"items": 1}}}},
            },
            "/$defs/A/properties/b",
            "without 'type'",
        ),
    ],
)
def test_unmappable_names_the_pointer(schema: object, pointer: str, reason: str) -> None:
    with pytest.raises(JsonSchemaError) as info:
        parse_json_schema(schema)  # type: ignore[arg-type]
    assert info.value.pointer == pointer
    assert reason in info.value.reason
    assert isinstance(info.value, FormatError)
    assert isinstance(info.value, ValueError)


def test_recursion_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/definitions/Node"}},
        "definitions": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "next": {"$ref": "#/definitions/Node"},
                },
            }
        },
    }
    with pytest.raises(JsonSchemaError, match="recursive") as info:
        parse_json_schema(schema)
    assert info.value.pointer == "/definitions/Node/properties/next"


def test_indirect_recursion_and_root_ref_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {
            "A": {"type": "array", "items": {"$ref": "#/$defs/B"}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
        },
    }
    with pytest.raises(JsonSchemaError, match="recursive"):
        parse_json_schema(schema)
    with pytest.raises(JsonSchemaError, match="recursive"):
        parse_json_schema({"type": "object", "properties": {"self": {"$ref": "#"}}})


def test_bounds() -> None:
    with pytest.raises(JsonSchemaError, match="more than 20"):
        parse_json_schema(json.dumps(_obj(a={"type": "string"})), max_bytes=20)
    deep: dict[str, object] = {"type": "integer"}
    for _ in range(70):
        deep = {"type": "array", "items": deep}
    with pytest.raises(JsonSchemaError, match="deeper than 64"):
        parse_json_schema(deep)
    with pytest.raises(JsonSchemaError, match="deeper than"):
        parse_json_schema("[" * 100_000 + "]" * 100_000)
    # a chain of definitions each using the previous twice: 2**20 subschemas if expanded
    defs: dict[str, object] = {"D0": {"type": "integer"}}
    for i in range(1, 21):
        defs[f"D{i}"] = {
            "type": "object",
            "properties": {"l": {"$ref": f"#/$defs/D{i - 1}"}, "r": {"$ref": f"#/$defs/D{i - 1}"}},
        }
    bomb = {"type": "object", "properties": {"x": {"$ref": "#/$defs/D20"}}, "$defs": defs}
    with pytest.raises(JsonSchemaError, match="more than 10000 subschemas"):
        parse_json_schema(bomb)


def test_not_json() -> None:
    with pytest.raises(JsonSchemaError, match="not JSON"):
        parse_json_schema("{not json")
    with pytest.raises(JsonSchemaError, match="must be an object"):
        parse_json_schema("[1]")


def test_spark_json_and_arrow_are_pysparks_own() -> None:
    """PySpark's own types (pure Python, no JVM): ``DataType.fromJson`` reads our Spark JSON
    back to the same JSON, and ``to_arrow_type`` (session time zone UTC) gives our Arrow."""
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import StructType

    from spark_kafka_py.formats.json.decode import arrow_type_of

    mapped = parse_json_schema(
        _obj(
            i={"type": "integer"},
            n={"type": ["number", "null"]},
            b={"type": "boolean"},
            s={"enum": ["x"]},
            t={"type": "string", "format": "date-time"},
            d={"type": "string", "format": "date"},
            m={
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "number"}},
            },
            o={"type": "object", "properties": {"x": {"type": "integer"}}},
        )
    )
    spark_type = StructType.fromJson(mapped.spark_json)  # type: ignore[arg-type]
    assert spark_type.jsonValue() == mapped.spark_json
    assert spark_type.simpleString() == (
        "struct<i:bigint,n:double,b:boolean,s:string,t:timestamp,d:date,"
        "m:map<string,array<double>>,o:struct<x:bigint>>"
    )
    assert to_arrow_type(spark_type, timezone="UTC") == mapped.arrow
    assert arrow_type_of(mapped.spark_json) == mapped.arrow
