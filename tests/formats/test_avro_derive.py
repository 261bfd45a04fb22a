"""Avro schemas derived from Arrow types, against JSON written out by hand from spark-avro's
``SchemaConverters.toAvroType`` rules (record ``topLevelRecord``, nested records named after
their fields in ``topLevelRecord``-rooted namespaces, decimals as fixed ``fixed`` of the
fewest bytes, nullable as ``[type, "null"]``); fastavro parses every result, and data written
with a derived schema reads back through our decoder.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.derive import (
    derive_schema,
    derive_schema_from_spark,
    derive_schema_json,
    min_bytes_for_precision,
    spark_json_of,
)
from spark_kafka_py.formats.avro.encoder import encode
from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.avro.types import to_spark
from spark_kafka_py.formats.errors import IncompatibleSchemaError
from tests.formats.test_avro_decoder import _schemas


@pytest.mark.parametrize(
    ("arrow", "avro"),
    [
        (pa.bool_(), "boolean"),
        (pa.int8(), "int"),
        (pa.int16(), "int"),
        (pa.int32(), "int"),
        (pa.int64(), "long"),
        (pa.float32(), "float"),
        (pa.float64(), "double"),
        (pa.string(), "string"),
        (pa.large_string(), "string"),
        (pa.binary(), "bytes"),
        (pa.null(), "null"),
        (pa.date32(), {"type": "int", "logicalType": "date"}),
        (pa.timestamp("us", tz="UTC"), {"type": "long", "logicalType": "timestamp-micros"}),
        (pa.timestamp("us"), {"type": "long", "logicalType": "local-timestamp-micros"}),
        (
            pa.duration("us"),
            {"type": "long", "spark.sql.catalyst.type": "interval day to second"},
        ),
        (
            pa.decimal128(10, 2),
            {
                "type": "fixed",
                "name": "fixed",
                "namespace": "topLevelRecord",
                "size": 5,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 2,
            },
        ),
        (
            pa.list_(pa.field("element", pa.int32(), nullable=False)),
            {"type": "array", "items": "int"},
        ),
        (pa.list_(pa.int32()), {"type": "array", "items": ["int", "null"]}),
        (pa.map_(pa.string(), pa.float64()), {"type": "map", "values": ["double", "null"]}),
    ],
)
def test_leaves(arrow: pa.DataType, avro: object) -> None:
    assert derive_schema(arrow) == avro
    assert derive_schema(arrow, nullable=True) == (avro if avro == "null" else [avro, "null"])


def test_a_struct_with_nested_records_decimals_arrays_and_maps() -> None:
    arrow = pa.struct(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("amount", pa.decimal128(38, 18)),
            pa.field(
                "inner",
                pa.struct(
                    [
                        pa.field("d", pa.decimal128(5, 1), nullable=False),
                        pa.field("deep", pa.struct([pa.field("x", pa.int32(), nullable=False)])),
                    ]
                ),
                nullable=False,
            ),
            pa.field(
                "lines",
                pa.list_(pa.field("element", pa.struct([("sku", pa.string())]), nullable=False)),
                nullable=False,
            ),
            pa.field("prices", pa.map_(pa.string(), pa.decimal128(4, 2)), nullable=False),
        ]
    )
    expected = {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [
            {"name": "id", "type": "long"},
            {
                "name": "amount",
                "type": [
                    {
                        "type": "fixed",
                        "name": "fixed",
                        "namespace": "topLevelRecord.amount",
                        "size": 16,
                        "logicalType": "decimal",
                        "precision": 38,
                        "scale": 18,
                    },
                    "null",
                ],
            },
            {
                "name": "inner",
                "type": {
                    "type": "record",
                    "name": "inner",
                    "namespace": "topLevelRecord",
                    "fields": [
                        {
                            "name": "d",
                            "type": {
                                "type": "fixed",
                                "name": "fixed",
                                "namespace": "topLevelRecord.inner.d",
                                "size": 3,
                                "logicalType": "decimal",
                                "precision": 5,
                                "scale": 1,
                            },
                        },
                        {
                            "name": "deep",
                            "type": [
                                {
                                    "type": "record",
                                    "name": "deep",
                                    "namespace": "topLevelRecord.inner",
                                    "fields": [{"name": "x", "type": "int"}],
                                },
                                "null",
                            ],
                        },
                    ],
                },
            },
            {
                "name": "lines",
                "type": {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "lines",
                        "namespace": "topLevelRecord",
                        "fields": [{"name": "sku", "type": ["string", "null"]}],
                    },
                },
            },
            {
                "name": "prices",
                "type": {
                    "type": "map",
                    "values": [
                        {
                            "type": "fixed",
                            "name": "fixed",
                            "namespace": "topLevelRecord.prices",
                            "size": 2,
                            "logicalType": "decimal",
                            "precision": 4,
                            "scale": 2,
                        },
                        "null",
                    ],
                },
            },
        ],
    }
    assert derive_schema(arrow) == expected
    fastavro.parse_schema(expected)
    # the Spark type read back from the derived schema is the one we started from
    assert to_spark(parse_schema(json.dumps(expected))).arrow == arrow


def test_record_name_and_namespace_and_nullable_fields() -> None:
    arrow = pa.field("value", pa.struct([("r", pa.struct([("a", pa.int32())]))]))
    assert derive_schema(arrow, record_name="Order", namespace="com.shop") == [
        {
            "type": "record",
            "name": "Order",
            "namespace": "com.shop",
            "fields": [
                {
                    "name": "r",
                    "type": [
                        {
                            "type": "record",
                            "name": "r",
                            "namespace": "com.shop.Order",
                            "fields": [{"name": "a", "type": ["int", "null"]}],
                        },
                        "null",
                    ],
                }
            ],
        },
        "null",
    ]
    not_null = derive_schema(arrow, nullable=False)
    assert isinstance(not_null, dict) and not_null["name"] == "topLevelRecord"


def test_a_pyarrow_schema_is_a_struct_and_json_is_compact() -> None:
    schema = pa.schema([pa.field("a", pa.int32(), nullable=False)])
    assert derive_schema_json(schema) == (
        '{"type":"record","name":"topLevelRecord","fields":[{"name":"a","type":"int"}]}'
    )


def test_min_bytes_for_precision_from_sparks_formula() -> None:
    # the smallest n with 2**(8n - 1) >= 10**p, written out
    sizes = {1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 7: 4, 9: 4, 10: 5, 18: 8, 19: 9, 38: 16}
    assert {p: min_bytes_for_precision(p) for p in sizes} == sizes


@pytest.mark.parametrize(
    ("arrow", "match"),
    [
        (pa.uint32(), "unexpected type"),
        (pa.time64("us"), "unexpected type"),
        (pa.map_(pa.int32(), pa.int32()), "string keys"),
        (pa.struct([("a-b", pa.int32())]), "invalid field name"),
        (pa.decimal256(40, 0), "unexpected type"),
    ],
)
def test_types_and_names_spark_avro_cannot_write(arrow: pa.DataType, match: str) -> None:
    with pytest.raises(IncompatibleSchemaError, match=match):
        derive_schema(arrow)


def test_data_written_with_a_derived_schema_reads_back() -> None:
    arrow = pa.struct(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("amount", pa.decimal128(10, 2)),
            pa.field("tags", pa.list_(pa.string())),
        ]
    )
    rows: list[dict[str, Any]] = [
        {"id": 1, "amount": Decimal("12.34"), "tags": ["a", None]},
        {"id": 2, "amount": None, "tags": None},
    ]
    array = pa.array(rows, type=arrow)
    schema_json = derive_schema(arrow)
    schema = parse_schema(json.dumps(schema_json))
    payloads = encode(schema, array)
    parsed = fastavro.parse_schema(schema_json)
    assert [fastavro.schemaless_reader(io.BytesIO(p), parsed, parsed) for p in payloads] == rows
    assert AvroDecoder(schema).decode(payloads).equals(array)


@pytest.mark.parametrize(
    ("spark", "avro"),
    [
        ("byte", "int"),
        ("short", "int"),
        ("timestamp_ntz", {"type": "long", "logicalType": "local-timestamp-micros"}),
        (
            "decimal",  # Spark's DecimalType() is decimal(10, 0)
            {
                "type": "fixed",
                "name": "fixed",
                "namespace": "topLevelRecord",
                "size": 5,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 0,
            },
        ),
        (
            "interval year to month",
            {"type": "int", "spark.sql.catalyst.type": "interval year to month"},
        ),
        ("interval month", {"type": "int", "spark.sql.catalyst.type": "interval month"}),
        (
            "interval hour to second",
            {"type": "long", "spark.sql.catalyst.type": "interval hour to second"},
        ),
        ("void", "null"),
        (
            {"type": "array", "elementType": "integer", "containsNull": True},
            {"type": "array", "items": ["int", "null"]},
        ),
        (
            {
                "type": "struct",
                "fields": [
                    {"name": "a", "type": "long", "nullable": False, "metadata": {}},
                    {
                        "name": "m",
                        "type": {
                            "type": "map",
                            "keyType": "string",
                            "valueType": "binary",
                            "valueContainsNull": False,
                        },
                        "nullable": True,
                        "metadata": {},
                    },
                ],
            },
            {
                "type": "record",
                "name": "topLevelRecord",
                "fields": [
                    {"name": "a", "type": "long"},
                    {"name": "m", "type": [{"type": "map", "values": "bytes"}, "null"]},
                ],
            },
        ),
    ],
)
def test_spark_json_types(spark: object, avro: object) -> None:
    assert derive_schema_from_spark(spark) == avro


@pytest.mark.parametrize(
    ("spark", "match"),
    [
        ("char(3)", "unexpected type"),
        ("decimal(39,0)", "unexpected type"),
        ({"type": "map", "keyType": "integer", "valueType": "integer"}, "string keys"),
        ({"type": "struct", "fields": [{"type": "integer"}]}, "unexpected type"),
        ({"type": "udt"}, "unexpected type"),
    ],
)
def test_spark_types_spark_avro_cannot_write(spark: object, match: str) -> None:
    with pytest.raises(IncompatibleSchemaError, match=match):
        derive_schema_from_spark(spark)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas())
def test_the_arrow_and_the_spark_json_of_a_mapped_type_derive_the_same_schema(schema: Any) -> None:
    mapped = to_spark(parse_schema(json.dumps(schema)))
    assert spark_json_of(mapped.arrow) == mapped.spark_json
    derived = derive_schema(mapped.arrow, nullable=mapped.nullable)
    assert derived == derive_schema_from_spark(mapped.spark_json, nullable=mapped.nullable)
    # and the derived schema maps back to the same Spark type
    assert to_spark(parse_schema(json.dumps(derived))).arrow == mapped.arrow
