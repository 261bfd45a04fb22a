"""``valueFormat=avro`` / ``keyFormat=avro`` on writes: a real broker, a real schema registry
(Apicurio, Confluent-compatible API), real Spark.

What the sink wrote is read back, as bytes, by confluent-kafka's consumer (librdkafka) and
decoded row by row by confluent-kafka's ``AvroDeserializer`` (the oracle: a client no one here
wrote, fetching each writer schema by the id in the framing), and by fastavro's
``schemaless_reader`` for plain Avro; our reader reads it back too. The schema
``auto.register.schemas`` registers is compared with spark-avro's own
``SchemaConverters.toAvroType`` (the JVM's, on the session's classpath). Expected rows are
written out literally.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import fastavro
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentRegistry
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import SparkSession

from spark_kafka_py.schema_registry.client import SchemaRegistryClient
from spark_kafka_py.schema_registry.settings import parse_settings
from spark_kafka_py.testing.registry import confluent_conf

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc

ORDER_TYPE = (
    "key string, value struct<id:int, name:string, amount:decimal(10,2), at:timestamp, "
    "tags:array<string>, inner:struct<x:bigint, y:string>, note:string>"
)
ORDERS = [
    (
        "k1",
        (
            1,
            "ann",
            Decimal("12.50"),
            dt.datetime(2026, 11, 27, 12, 0, tzinfo=UTC),
            ["a", "b"],
            (10, "p"),
            None,
        ),
    ),
    (
        "k2",
        (
            -2,
            "bob",
            Decimal("-0.01"),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            [],
            (2**40, None),
            "gift",
        ),
    ),
    ("k3", None),  # a null value: a tombstone, whatever the schema
]


@pytest.fixture(scope="module")
def registry(schema_registry: str) -> SchemaRegistryClient:
    return SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))


def fetch(bootstrap: str, topic: str, partition: int = 0) -> list[tuple[Any, Any]]:
    """Every ``(key, value)`` (bytes or None) of one partition, read by confluent-kafka's
    consumer."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"avro-sink-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
        consumer.assign([TopicPartition(topic, partition, low)])
        out: list[tuple[Any, Any]] = []
        deadline = time.monotonic() + 60  # generous: the test machine may be loaded
        while len(out) < high - low:
            assert time.monotonic() < deadline, f"{topic}-{partition}: {len(out)} of {high - low}"
            message = consumer.poll(1)
            if message is None:
                continue
            assert message.error() is None, message.error()
            out.append((message.key(), message.value()))
        return out
    finally:
        consumer.close()


def end_offset(bootstrap: str, topic: str, partition: int = 0) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "avro-sink-offsets"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1])
    finally:
        consumer.close()


def deserialize(url: str, topic: str, data: bytes | None, field: str = MessageField.VALUE) -> Any:
    return AvroDeserializer(ConfluentRegistry(confluent_conf(url)))(
        data, SerializationContext(topic, field)
    )


def write(df: Any, bootstrap: str, **options: str) -> None:
    w = df.write.format("pykafka").mode("append").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        w = w.option(k, v)
    w.save()


def test_auto_register_writes_what_confluent_reads(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    topic = new_topic()
    df = spark.createDataFrame(ORDERS, ORDER_TYPE).coalesce(1)
    url = {"schema.registry.url": schema_registry}
    write(df, kafka_bootstrap, topic=topic, valueFormat="avro", keyFormat="avro", **url)

    # registered (the default auto.register.schemas=true): spark-avro's schema of the types
    latest = registry.latest(f"{topic}-value")
    assert latest.version == 1
    jvm = spark._jvm  # type: ignore[attr-defined]
    converters = jvm.org.apache.spark.sql.avro.SchemaConverters
    spark_type = jvm.org.apache.spark.sql.types.DataType.fromJson(
        df.schema["value"].dataType.json()
    )
    spark_avro = converters.toAvroType(spark_type, False, "topLevelRecord", "").toString()
    assert json.loads(latest.schema.schema_str) == json.loads(spark_avro)
    assert json.loads(registry.latest(f"{topic}-key").schema.schema_str) == "string"

    got = fetch(kafka_bootstrap, topic)
    assert [v[:5] for _, v in got[:2]] == [b"\x00" + latest.schema_id.to_bytes(4, "big")] * 2
    values = [deserialize(schema_registry, topic, v) for _, v in got]
    keys = [deserialize(schema_registry, topic, k, MessageField.KEY) for k, _ in got]
    assert keys == ["k1", "k2", "k3"]
    assert values == [
        {
            "id": 1,
            "name": "ann",
            "amount": Decimal("12.50"),
            "at": dt.datetime(2026, 11, 27, 12, 0, tzinfo=UTC),
            "tags": ["a", "b"],
            "inner": {"x": 10, "y": "p"},
            "note": None,
        },
        {
            "id": -2,
            "name": "bob",
            "amount": Decimal("-0.01"),
            "at": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            "tags": [],
            "inner": {"x": 1099511627776, "y": None},
            "note": "gift",
        },
        None,
    ]
    assert got[2][1] is None  # the tombstone is a null value, not an encoded null

    # and our reader, through the registry
    back = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("valueFormat", "avro")
        .option("keyFormat", "avro")
        .options(**url)
        .load()
    )
    rows = back.orderBy("offset").collect()
    assert [r.key for r in rows] == ["k1", "k2", "k3"]
    assert [None if r.value is None else r.value.asDict(recursive=True) for r in rows] == [
        {
            "id": 1,
            "name": "ann",
            "amount": Decimal("12.50"),
            "at": dt.datetime(2026, 11, 27, 12, 0),  # the session's time zone is UTC
            "tags": ["a", "b"],
            "inner": {"x": 10, "y": "p"},
            "note": None,
        },
        {
            "id": -2,
            "name": "bob",
            "amount": Decimal("-0.01"),
            "at": dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            "tags": [],
            "inner": {"x": 1099511627776, "y": None},
            "note": "gift",
        },
        None,
    ]


READING = {
    "type": "record",
    "name": "Reading",
    "namespace": "sensors",
    "fields": [
        {"name": "Label", "type": "string"},
        {"name": "ID", "type": "long"},
        {"name": "unit", "type": ["null", "string"], "default": None},
    ],
}


def test_use_latest_version_and_a_row_that_does_not_fit(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    topic = new_topic()
    sid = registry.register(f"{topic}-value", json.dumps(READING))
    options = {
        "topic": topic,
        "valueFormat": "avro",
        "use.latest.version": "true",
        "schema.registry.url": schema_registry,
    }
    # fields in another order and case than the schema's, `unit` absent (written null)
    value_type = "value struct<id:bigint, label:string>"
    write(
        spark.createDataFrame([((7, "north"),), ((8, "south"),)], value_type).coalesce(1),
        kafka_bootstrap,
        **options,
    )
    got = fetch(kafka_bootstrap, topic)
    assert [v[:5] for _, v in got] == [b"\x00" + sid.to_bytes(4, "big")] * 2
    assert [deserialize(schema_registry, topic, v) for _, v in got] == [
        {"Label": "north", "ID": 7, "unit": None},
        {"Label": "south", "ID": 8, "unit": None},
    ]
    assert registry.versions(f"{topic}-value") == [1]  # nothing registered

    # a null into `Label`, not nullable in the latest schema: the task fails, naming the
    # column, the row and the schema id; nothing of that batch is written
    bad = spark.createDataFrame([((9, "east"),), ((10, None),), ((11, "west"),)], value_type)
    with pytest.raises(Exception) as failed:
        write(bad.coalesce(1), kafka_bootstrap, **options)
    message = str(failed.value)
    assert "RecordFormatError" in message
    assert (
        f"cannot encode the value of row 1 of batch 0 of Spark partition 0 as Avro with schema "
        f"id {sid} (subject '{topic}-value' latest, version 1): a null where the schema has no "
        "null (string) at /Label"
    ) in message
    assert end_offset(kafka_bootstrap, topic) == 2


def test_plain_avro_and_raw_top_level_bytes(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    # no registry: plain Avro datums of avroSchema, as spark-avro's to_avro writes them
    topic = new_topic()
    schema = {
        "type": "record",
        "name": "P",
        "fields": [
            {"name": "x", "type": "double"},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        ],
    }
    df = spark.createDataFrame(
        [((1.5, dt.date(2026, 11, 27), "B"),), ((-0.0, dt.date(1970, 1, 1), "A"),)],
        "value struct<x:double, day:date, kind:string>",
    ).coalesce(1)
    write(df, kafka_bootstrap, topic=topic, valueFormat="avro", avroSchema=json.dumps(schema))
    parsed = fastavro.parse_schema(schema)
    got = [
        fastavro.schemaless_reader(io.BytesIO(v), parsed) for _, v in fetch(kafka_bootstrap, topic)
    ]
    assert got == [
        {"x": 1.5, "day": dt.date(2026, 11, 27), "kind": "B"},
        {"x": -0.0, "day": dt.date(1970, 1, 1), "kind": "A"},
    ]

    # a top-level "bytes" schema pinned by id: raw after the framing, as Confluent's
    # serializers; no 'topic' option (rows choose it): a pinned id needs no subject
    other = new_topic()
    sid = registry.register(f"{other}-value", '"bytes"')
    rows = spark.createDataFrame(
        [(other, b"hello"), (other, b"\x02a")], "topic string, value binary"
    ).coalesce(1)
    url = {"schema.registry.url": schema_registry}
    write(rows, kafka_bootstrap, valueFormat="avro", **{"value.schema.id": str(sid)}, **url)
    values = [v for _, v in fetch(kafka_bootstrap, other)]
    assert values == [
        b"\x00" + sid.to_bytes(4, "big") + b"hello",
        b"\x00" + sid.to_bytes(4, "big") + b"\x02a",
    ]
    assert [deserialize(schema_registry, other, v) for v in values] == [b"hello", b"\x02a"]

    # refused on the driver, before any task: no subject without the 'topic' option ...
    with pytest.raises(Exception, match="set the 'topic' option, pin the schema with"):
        write(rows, kafka_bootstrap, valueFormat="avro", **url)
    # ... and a column whose type the schema cannot take, naming the schema id
    with pytest.raises(
        Exception,
        match=rf"the value column \(string\) cannot be written with schema id {sid} ",
    ):
        write(
            rows.selectExpr("topic", "'text' AS value"),
            kafka_bootstrap,
            valueFormat="avro",
            **{"value.schema.id": str(sid)},
            **url,
        )
    assert end_offset(kafka_bootstrap, other) == 2


def test_streaming_write_resolves_the_schema_at_query_start(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
    tmp_path: Any,
) -> None:
    source, dest = new_topic(), new_topic()
    texts = spark.createDataFrame([("a",), ("bcd",)], "value string").coalesce(1)
    write(texts, kafka_bootstrap, topic=source)
    stream = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("named_struct('text', CAST(value AS STRING), 'n', length(value)) AS value")
    )
    query = (
        stream.writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", dest)
        .option("valueFormat", "avro")
        .option("schema.registry.url", schema_registry)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    latest = registry.latest(f"{dest}-value")
    assert json.loads(latest.schema.schema_str) == {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [
            {"name": "text", "type": ["string", "null"]},
            {"name": "n", "type": ["int", "null"]},
        ],
    }
    values = [v for _, v in fetch(kafka_bootstrap, dest)]
    assert [deserialize(schema_registry, dest, v) for v in values] == [
        {"text": "a", "n": 1},
        {"text": "bcd", "n": 3},
    ]
