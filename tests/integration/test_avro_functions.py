"""``spark_kafka_py.spark.functions.from_avro`` on DataFrames that did not come from
``format("pykafka")``: Spark's own ``format("kafka")`` over a real broker with a real registry
(Apicurio), and a DataFrame built in the test. Payloads are encoded by fastavro (not our
encoder) and framed by hand; expected rows are written out literally.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable

import fastavro
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.functions import col

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.schema_registry.client import SchemaRegistryClient
from spark_kafka_py.schema_registry.settings import parse_settings
from spark_kafka_py.spark.functions import from_avro
from spark_kafka_py.testing.tools import ProducedRecord, produce

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "celsius", "type": "float"},
        {"name": "flags", "type": {"type": "array", "items": "boolean"}},
    ],
}


def avro_bytes(schema: object, datum: object) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def test_from_avro_over_spark_kafka_source_with_the_registry(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
) -> None:
    topic = new_topic()
    registry = SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))
    sid = registry.register(f"{topic}-value", json.dumps(SCHEMA))
    header = b"\x00" + struct.pack(">I", sid)
    data = [
        {"sensor": "a", "celsius": 21.5, "flags": [True]},
        {"sensor": "b", "celsius": -3.25, "flags": []},
    ]
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(None, header + avro_bytes(SCHEMA, d)) for d in data]
        + [ProducedRecord(None, b"junk")],
    )
    df = (
        spark.read.format("kafka")  # Spark's own connector
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .load()
    )
    decoded = df.select(
        "offset",
        from_avro(
            "value",
            options={"mode": "PERMISSIVE"},
            subject=f"{topic}-value",
            schemaRegistryAddress=schema_registry,
        ).alias("r"),
    )
    assert decoded.schema["r"].dataType.simpleString() == (
        "struct<sensor:string,celsius:float,flags:array<boolean>>"
    )
    rows = [
        (r.offset, None if r.r is None else r.r.asDict())
        for r in decoded.orderBy("offset").collect()
    ]
    assert rows == [
        (0, {"sensor": "a", "celsius": 21.5, "flags": [True]}),
        (1, {"sensor": "b", "celsius": -3.25, "flags": []}),
        (2, None),  # not framed: null with PERMISSIVE
    ]
    failfast = df.select(
        from_avro("value", subject=f"{topic}-value", schemaRegistryAddress=schema_registry)
    )
    with pytest.raises(Exception, match="cannot decode the value of row 2 as Avro"):
        failfast.collect()


def test_from_avro_plain_values_and_errors(spark: SparkSession) -> None:
    values = [avro_bytes("long", 1), avro_bytes("long", -(2**40)), None]
    df = spark.createDataFrame([(v,) for v in values], "v binary")
    got = [r[0] for r in df.select(from_avro(col("v"), '"long"')).collect()]
    assert got == [1, -(2**40), None]
    with pytest.raises(ConfigError, match="needs jsonFormatSchema"):
        from_avro("v")
    with pytest.raises(ConfigError, match="not a valid Avro schema"):
        from_avro("v", '{"type": "nope"}')


#: A struct of the types spark-avro's derivation covers (no union: struct(...) is not nullable).
SHAPE = (
    "struct(id, name, cast(price AS decimal(9,2)) AS price, cast(day AS date) AS day, tags) AS r"
)


def _shaped(spark: SparkSession):  # type: ignore[no-untyped-def]
    rows = [
        (1, "a", "1.50", "2024-02-29", ["x"]),
        (-(2**40), None, "-9999999.99", "1970-01-01", []),
        (7, "ü", "0.01", "2100-12-31", None),
    ]
    return spark.createDataFrame(
        rows, "id long, name string, price string, day string, tags array<string>"
    ).selectExpr(SHAPE)


def test_to_avro_writes_spark_avro_s_bytes(spark: SparkSession) -> None:
    from pyspark.sql.avro.functions import to_avro as spark_to_avro

    from spark_kafka_py.spark.functions import to_avro

    df = _shaped(spark)
    given = json.dumps({
        "type": "record", "name": "R", "namespace": "n",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": ["null", "string"]},
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal",
                                       "precision": 9, "scale": 2}},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "tags", "type": ["null", {"type": "array", "items": ["string", "null"]}]},
        ],
    })  # fmt: skip
    both = df.select(
        to_avro("r").alias("ours"),
        spark_to_avro(col("r")).alias("theirs"),
        to_avro(col("r"), given).alias("ours_given"),
        spark_to_avro(col("r"), given).alias("theirs_given"),
    ).collect()
    assert len(both) == 3
    for row in both:  # the derived schema and a given one: byte for byte spark-avro's
        assert row.ours == row.theirs and row.ours_given == row.theirs_given
    # and the bytes are what fastavro reads as the rows (expected values written out)
    decoded = [
        fastavro.schemaless_reader(
            io.BytesIO(r.ours_given), fastavro.parse_schema(json.loads(given))
        )
        for r in both
    ]
    assert [(d["id"], d["name"], str(d["price"]), str(d["day"]), d["tags"]) for d in decoded] == [
        (1, "a", "1.50", "2024-02-29", ["x"]),
        (-(2**40), None, "-9999999.99", "1970-01-01", []),
        (7, "ü", "0.01", "2100-12-31", None),
    ]
    nulls = spark.createDataFrame([(None,), (3,)], "v long").select(to_avro("v").alias("b"))
    assert [r.b for r in nulls.collect()] == [None, b"\x06"]  # null in, null out; zigzag 3
    too_big = spark.createDataFrame([(2**40,)], "v long").select(to_avro("v", '"int"'))
    with pytest.raises(Exception, match=r"cannot encode the v of row 0 .* as Avro"):
        too_big.collect()
    with pytest.raises(ConfigError, match="need schemaRegistryAddress"):
        to_avro("v", options={"auto.register.schemas": "false"})


def test_to_avro_with_the_registry_frames_with_the_subject_s_schema(
    spark: SparkSession, new_topic: Callable[..., str], schema_registry: str
) -> None:
    from spark_kafka_py.spark.functions import to_avro

    subject = f"{new_topic()}-value"
    registry = SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))
    df = spark.createDataFrame(
        [("a", 21.5, [True]), ("b", -3.25, [])],
        "sensor string, celsius float, flags array<boolean>",
    ).selectExpr("struct(*) AS r")
    with pytest.raises(ConfigError, match="needs subject"):
        to_avro("r", json.dumps(SCHEMA), schemaRegistryAddress=schema_registry)
    # jsonFormatSchema: registered under the subject (auto.register.schemas' default)
    registered = df.select(
        to_avro(
            "r", json.dumps(SCHEMA), subject=subject, schemaRegistryAddress=schema_registry
        ).alias("b")
    ).collect()
    sid = registry.latest(subject).schema_id
    expected = [
        b"\x00"
        + struct.pack(">I", sid)
        + avro_bytes(SCHEMA, {"sensor": "a", "celsius": 21.5, "flags": [True]}),
        b"\x00"
        + struct.pack(">I", sid)
        + avro_bytes(SCHEMA, {"sensor": "b", "celsius": -3.25, "flags": []}),
    ]
    assert [r.b for r in registered] == expected
    # no jsonFormatSchema: the subject's latest schema; and our from_avro reads it back
    latest = df.select(
        to_avro("r", subject=subject, schemaRegistryAddress=schema_registry).alias("b")
    )
    assert [r.b for r in latest.collect()] == expected
    back = latest.select(
        from_avro("b", subject=subject, schemaRegistryAddress=schema_registry).alias("r")
    )
    assert [r.r.asDict() for r in back.collect()] == [
        {"sensor": "a", "celsius": 21.5, "flags": [True]},
        {"sensor": "b", "celsius": -3.25, "flags": []},
    ]
    with pytest.raises(ConfigError, match="is not registered under subject"):
        to_avro(
            "r", '"string"', {"auto.register.schemas": "false"},
            subject=subject, schemaRegistryAddress=schema_registry,
        )  # fmt: skip
