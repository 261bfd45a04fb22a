"""Avro -> Spark (Arrow, Spark JSON, DDL) type mapping, as spark-avro's
``SchemaConverters.toSqlType`` maps it.

Every expected type is written out by hand from spark-avro's rules (apache/spark
``connector/avro``), never derived from the code under test.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.avro.types import arrow_type, to_spark
from spark_kafka_py.formats.errors import IncompatibleSchemaError, SchemaError


def _mapped(obj: object, **options: object):  # type: ignore[no-untyped-def]
    return to_spark(parse_schema(json.dumps(obj)), **options)  # type: ignore[arg-type]


UTC_TS = pa.timestamp("us", tz="UTC")


@pytest.mark.parametrize(
    ("avro", "arrow", "spark", "ddl", "nullable"),
    [
        ("null", pa.null(), "void", "VOID", True),
        ("boolean", pa.bool_(), "boolean", "BOOLEAN", False),
        ("int", pa.int32(), "integer", "INT", False),
        ("long", pa.int64(), "long", "BIGINT", False),
        ("float", pa.float32(), "float", "FLOAT", False),
        ("double", pa.float64(), "double", "DOUBLE", False),
        ("bytes", pa.binary(), "binary", "BINARY", False),
        ("string", pa.string(), "string", "STRING", False),
        ({"type": "int", "logicalType": "date"}, pa.date32(), "date", "DATE", False),
        # spark-avro maps no time type: the underlying int and long
        ({"type": "int", "logicalType": "time-millis"}, pa.int32(), "integer", "INT", False),
        ({"type": "long", "logicalType": "time-micros"}, pa.int64(), "long", "BIGINT", False),
        (
            {"type": "long", "logicalType": "timestamp-millis"},
            UTC_TS,
            "timestamp",
            "TIMESTAMP",
            False,
        ),
        (
            {"type": "long", "logicalType": "timestamp-micros"},
            UTC_TS,
            "timestamp",
            "TIMESTAMP",
            False,
        ),
        (
            {"type": "long", "logicalType": "local-timestamp-millis"},
            pa.timestamp("us"),
            "timestamp_ntz",
            "TIMESTAMP_NTZ",
            False,
        ),
        (
            {"type": "long", "logicalType": "local-timestamp-micros"},
            pa.timestamp("us"),
            "timestamp_ntz",
            "TIMESTAMP_NTZ",
            False,
        ),
        # nanosecond timestamps (Avro 1.12) are not mapped by spark-avro: long
        ({"type": "long", "logicalType": "timestamp-nanos"}, pa.int64(), "long", "BIGINT", False),
        ({"type": "string", "logicalType": "uuid"}, pa.string(), "string", "STRING", False),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 10},
            pa.decimal128(38, 10),
            "decimal(38,10)",
            "DECIMAL(38,10)",
            False,
        ),
        (
            {
                "type": "fixed",
                "name": "D",
                "size": 5,
                "logicalType": "decimal",
                "precision": 7,
                "scale": 2,
            },
            pa.decimal128(7, 2),
            "decimal(7,2)",
            "DECIMAL(7,2)",
            False,
        ),
        ({"type": "fixed", "name": "F", "size": 5}, pa.binary(), "binary", "BINARY", False),
        (
            {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            pa.binary(),
            "binary",
            "BINARY",
            False,
        ),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, pa.string(), "string", "STRING", False),
        # unions
        (["null", "int"], pa.int32(), "integer", "INT", True),
        (["int", "null"], pa.int32(), "integer", "INT", True),
        (["string"], pa.string(), "string", "STRING", False),
        (["int", "long"], pa.int64(), "long", "BIGINT", False),
        (["long", "int"], pa.int64(), "long", "BIGINT", False),
        (["float", "double"], pa.float64(), "double", "DOUBLE", False),
        (["null", "double", "float"], pa.float64(), "double", "DOUBLE", True),
        (["null"], pa.struct([]), {"type": "struct", "fields": []}, "STRUCT<>", True),
    ],
)
def test_leaves(avro: object, arrow: pa.DataType, spark: object, ddl: str, nullable: bool) -> None:
    mapped = _mapped(avro)
    assert mapped.arrow == arrow
    assert mapped.spark_json == spark
    assert mapped.ddl == ddl
    assert mapped.nullable is nullable


def _field(name: str, spark: object, nullable: bool) -> dict[str, object]:
    return {"name": name, "type": spark, "nullable": nullable, "metadata": {}}


def test_a_record_with_nested_types_and_nullability() -> None:
    mapped = _mapped(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "id", "type": "long"},
                {"name": "name", "type": ["null", "string"]},
                {"name": "xs", "type": {"type": "array", "items": ["null", "int"]}},
                {"name": "m", "type": {"type": "map", "values": "double"}},
                {
                    "name": "inner",
                    "type": {
                        "type": "record",
                        "name": "In",
                        "fields": [{"name": "a", "type": "boolean"}],
                    },
                },
                {"name": "again", "type": ["null", "In"]},
            ],
        }
    )
    inner = pa.struct([pa.field("a", pa.bool_(), nullable=False)])
    assert mapped.arrow == pa.struct(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("xs", pa.list_(pa.field("element", pa.int32())), nullable=False),
            pa.field(
                "m",
                pa.map_(pa.string(), pa.field("value", pa.float64(), nullable=False)),
                nullable=False,
            ),
            pa.field("inner", inner, nullable=False),
            pa.field("again", inner),
        ]
    )
    # nested nullability is part of Arrow type equality only through the fields: check it
    assert not mapped.arrow.field("m").type.item_field.nullable
    assert mapped.arrow.field("xs").type.value_field.nullable
    inner_json = {"type": "struct", "fields": [_field("a", "boolean", False)]}
    assert mapped.spark_json == {
        "type": "struct",
        "fields": [
            _field("id", "long", False),
            _field("name", "string", True),
            _field("xs", {"type": "array", "elementType": "integer", "containsNull": True}, False),
            _field(
                "m",
                {
                    "type": "map",
                    "keyType": "string",
                    "valueType": "double",
                    "valueContainsNull": False,
                },
                False,
            ),
            _field("inner", inner_json, False),
            _field("again", inner_json, True),
        ],
    }
    assert mapped.ddl == (
        "STRUCT<`id`: BIGINT NOT NULL, `name`: STRING, `xs`: ARRAY<INT> NOT NULL, "
        "`m`: MAP<STRING, DOUBLE> NOT NULL, `inner`: STRUCT<`a`: BOOLEAN NOT NULL> NOT NULL, "
        "`again`: STRUCT<`a`: BOOLEAN NOT NULL>>"
    )
    assert not mapped.nullable


def test_other_unions_are_structs_of_nullable_members() -> None:
    mapped = _mapped(["int", "string", {"type": "array", "items": "long"}])
    assert mapped.arrow == pa.struct(
        [
            pa.field("member0", pa.int32()),
            pa.field("member1", pa.string()),
            pa.field("member2", pa.list_(pa.field("element", pa.int64(), nullable=False))),
        ]
    )
    assert not mapped.nullable
    assert mapped.ddl == "STRUCT<`member0`: INT, `member1`: STRING, `member2`: ARRAY<BIGINT>>"


def test_null_is_left_out_of_the_members_and_makes_the_struct_nullable() -> None:
    mapped = _mapped(["int", "null", "string"])
    assert mapped.arrow == pa.struct(
        [pa.field("member0", pa.int32()), pa.field("member1", pa.string())]
    )
    assert mapped.nullable


def test_stable_union_ids() -> None:
    avro = [
        "null",
        "int",
        {"type": "record", "name": "ns.Rec", "fields": []},
        {"type": "map", "values": "int"},
    ]
    mapped = _mapped(avro, stable_union_ids=True)
    assert mapped.arrow.names == ["member_int", "member_Rec", "member_map"]
    prefixed = _mapped(avro, stable_union_ids=True, union_prefix="")
    assert prefixed.arrow.names == ["int", "Rec", "map"]


def test_stable_union_ids_refuse_names_equal_but_for_case() -> None:
    avro = [
        {"type": "fixed", "name": "a.X", "size": 1},
        {"type": "fixed", "name": "b.x", "size": 1},
    ]
    assert _mapped(avro).arrow.names == ["member0", "member1"]
    with pytest.raises(IncompatibleSchemaError, match="name conflict"):
        _mapped(avro, stable_union_ids=True)


@pytest.mark.parametrize(
    "avro",
    [
        {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]},
        {
            "type": "record",
            "name": "A",
            "fields": [
                {
                    "name": "b",
                    "type": {
                        "type": "record",
                        "name": "B",
                        "fields": [{"name": "a", "type": {"type": "array", "items": "A"}}],
                    },
                }
            ],
        },
    ],
)
def test_recursive_schemas_are_refused(avro: object) -> None:
    with pytest.raises(IncompatibleSchemaError, match="recursive reference") as info:
        _mapped(avro)
    assert isinstance(info.value, SchemaError)


def test_a_record_used_twice_side_by_side_is_not_recursive() -> None:
    mapped = _mapped(
        {
            "type": "record",
            "name": "Pair",
            "fields": [
                {
                    "name": "a",
                    "type": {
                        "type": "record",
                        "name": "P",
                        "fields": [{"name": "x", "type": "int"}],
                    },
                },
                {"name": "b", "type": "P"},
            ],
        }
    )
    assert mapped.arrow.field("a").type == mapped.arrow.field("b").type


def test_decimals_wider_than_spark_are_refused() -> None:
    with pytest.raises(IncompatibleSchemaError, match="more digits than Spark's 38"):
        _mapped({"type": "bytes", "logicalType": "decimal", "precision": 39})


def test_arrow_type_shortcut() -> None:
    assert arrow_type(parse_schema('"long"')) == pa.int64()
