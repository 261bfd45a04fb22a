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
