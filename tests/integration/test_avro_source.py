"""``valueFormat=avro`` / ``keyFormat=avro`` on reads: a real broker, a real schema registry
(Apicurio, Confluent-compatible API), real Spark.

Records are written with Kafka's console producer; their Avro payloads are encoded by fastavro
(not our encoder) and framed by hand (magic byte 0, the registry's 4-byte id), so a broken
decoder cannot agree with a broken encoder. Expected rows are written out literally.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from collections.abc import Callable
from decimal import Decimal

import fastavro
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.utils import AnalysisException

from spark_kafka_py.schema_registry.client import SchemaRegistryClient
from spark_kafka_py.schema_registry.settings import parse_settings
from spark_kafka_py.testing.tools import ProducedRecord, produce

pytestmark = pytest.mark.integration

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer", "type": "string"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}
# v2: a field added with a default, `customer` removed, `qty` promoted int -> long by the reader
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "order_id", "type": "long"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "channel", "type": "string", "default": "web"},
    ],
}
T0 = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)


def avro_bytes(schema: dict, datum: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def framed(schema_id: int, payload: bytes) -> bytes:
    return b"\x00" + struct.pack(">I", schema_id) + payload


@pytest.fixture(scope="module")
def registry(schema_registry: str) -> SchemaRegistryClient:
    return SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))


def read(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    reader = spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def test_evolving_topic_reads_with_the_latest_schema(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    topic = new_topic()
    v1 = registry.register(f"{topic}-value", json.dumps(ORDER_V1))
    v1_rows = [
        {
            "order_id": 1,
            "customer": "ann",
            "amount": Decimal("12.50"),
            "placed": T0,
            "items": ["a", "b"],
            "note": None,
        },
        {
            "order_id": 2,
            "customer": "bob",
            "amount": Decimal("-0.01"),
            "placed": T0 + dt.timedelta(seconds=1),
            "items": [],
            "note": "gift",
        },
    ]
    records = [ProducedRecord(None, framed(v1, avro_bytes(ORDER_V1, r))) for r in v1_rows]
    v2 = registry.register(f"{topic}-value", json.dumps(ORDER_V2))
    assert v2 != v1
    v2_row = {
        "order_id": 3,
        "amount": Decimal("99999999.99"),
        "placed": T0 + dt.timedelta(days=1),
        "items": ["c"],
        "note": None,
        "channel": "app",
    }
    records.append(ProducedRecord(None, framed(v2, avro_bytes(ORDER_V2, v2_row))))
    records.append(ProducedRecord(b"k", None))  # a tombstone: a null value
    produce(kafka_bootstrap, topic, records)

    df = read(
        spark,
        kafka_bootstrap,
        topic,
        valueFormat="avro",
        **{"schema.registry.url": schema_registry},
    )
    assert df.schema["value"].dataType.simpleString() == (
        "struct<order_id:bigint,amount:decimal(10,2),placed:timestamp,items:array<string>,"
        "note:string,channel:string>"
    )
    rows = df.select("offset", "value").orderBy("offset").collect()
    got = [(r.offset, None if r.value is None else r.value.asDict()) for r in rows]
    spark_tz = dt.timezone.utc  # the session's spark.sql.session.timeZone is UTC (testing/spark)
    placed = [r["placed"].astimezone(spark_tz).replace(tzinfo=None) for r in v1_rows]
    assert got == [
        (
            0,
            {
                "order_id": 1,
                "amount": Decimal("12.50"),
                "placed": placed[0],
                "items": ["a", "b"],
                "note": None,
                "channel": "web",
            },
        ),
        (
            1,
            {
                "order_id": 2,
                "amount": Decimal("-0.01"),
                "placed": placed[1],
                "items": [],
                "note": "gift",
                "channel": "web",
            },
        ),
        (
            2,
            {
                "order_id": 3,
                "amount": Decimal("99999999.99"),
                "placed": dt.datetime(2026, 11, 28, 12, 0),
                "items": ["c"],
                "note": None,
                "channel": "app",
            },
        ),
        (3, None),
    ]
    # filters and projections on the decoded struct work as on any column
    assert [
        r.order_id for r in df.where("value.amount > 10").select("value.order_id").collect()
    ] == [1, 3]

    # pinned to version 1: v2's record resolves to v1's reader schema? `customer` has no
    # default in v1 and v2 lacks it, so that record cannot be read as v1: FAILFAST names it
    pinned = read(
        spark,
        kafka_bootstrap,
        topic,
        valueFormat="avro",
        **{"schema.registry.url": schema_registry, "value.schema.version": "1"},
    )
    assert "customer" in pinned.schema["value"].dataType.fieldNames()
    with pytest.raises(
        Exception, match=rf"{topic}-0 at offset 2 as Avro: writer schema {v2} does not resolve"
    ):
        pinned.collect()
    permissive = read(
        spark,
        kafka_bootstrap,
        topic,
        valueFormat="avro",
        mode="PERMISSIVE",
        **{"schema.registry.url": schema_registry, "value.schema.id": str(v1)},
    )
    got = permissive.select("offset", "value.customer").orderBy("offset").collect()
    assert [tuple(r) for r in got] == [(0, "ann"), (1, "bob"), (2, None), (3, None)]


def test_bad_records_failfast_and_permissive(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    topic = new_topic()
    schema = {"type": "record", "name": "R", "fields": [{"name": "n", "type": "int"}]}
    sid = registry.register(f"{topic}-value", json.dumps(schema))
    good = framed(sid, avro_bytes(schema, {"n": 7}))
    records = [
        ProducedRecord(None, good),
        ProducedRecord(None, b"{not avro}"),  # no magic byte
        ProducedRecord(None, framed(sid, b"")),  # truncated: no int
        ProducedRecord(None, framed(2_000_000_000, b"\x02")),  # an id the registry lacks
        ProducedRecord(None, good + b"\x00"),  # a trailing byte
    ]
    produce(kafka_bootstrap, topic, records)
    url = {"schema.registry.url": schema_registry}

    with pytest.raises(Exception) as failed:
        read(spark, kafka_bootstrap, topic, valueFormat="avro", **url).collect()
    message = str(failed.value)
    assert f"cannot decode the value of {topic}-0 at offset 1 as Avro" in message
    assert "magic byte" in message and "mode=PERMISSIVE" in message

    df = read(
        spark,
        kafka_bootstrap,
        topic,
        valueFormat="avro",
        mode="PERMISSIVE",
        includeRawBytes="true",
        **url,
    )
    assert df.columns[-1] == "value_raw"
    rows = df.select("offset", "value", "value_raw").orderBy("offset").collect()
    assert [(r.offset, None if r.value is None else r.value.n) for r in rows] == [
        (0, 7),
        (1, None),
        (2, None),
        (3, None),
        (4, None),
    ]
    # nothing is lost: the bytes of every record, decoded or not
    assert [bytes(r.value_raw) for r in rows] == [rec.value for rec in records]

    # the truncated one alone, FAILFAST: the offset and the schema id are named
    only = {
        "startingOffsets": json.dumps({topic: {"0": 2}}),
        "endingOffsets": json.dumps({topic: {"0": 3}}),
    }
    with pytest.raises(
        Exception, match=rf"{topic}-0 at offset 2 as Avro: .*writer schema id {sid}"
    ):
        read(spark, kafka_bootstrap, topic, valueFormat="avro", **url, **only).collect()


def test_header_schema_ids_and_avro_keys(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    topic = new_topic()
    key_schema = {"type": "record", "name": "K", "fields": [{"name": "id", "type": "string"}]}
    value_schema = {
        "type": "record",
        "name": "V",
        "fields": [
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "when", "type": {"type": "int", "logicalType": "date"}},
        ],
    }
    kid = registry.register(f"{topic}-key", json.dumps(key_schema))
    vid = registry.register(f"{topic}-value", json.dumps(value_schema))
    key = framed(kid, avro_bytes(key_schema, {"id": "x"}))
    payload = avro_bytes(value_schema, {"kind": "B", "when": dt.date(2026, 11, 27)})
    records = [
        ProducedRecord(key, framed(vid, payload)),
        # Confluent 8's header form: the id in __value_schema_id, the payload unframed
        ProducedRecord(
            key, payload, headers=[("__value_schema_id", b"\x00" + struct.pack(">I", vid))]
        ),
    ]
    produce(kafka_bootstrap, topic, records)
    df = read(
        spark,
        kafka_bootstrap,
        topic,
        keyFormat="avro",
        valueFormat="avro",
        **{"schema.registry.url": schema_registry},
    )
    assert "headers" not in df.columns  # fetched for the ids, not shown without includeHeaders
    rows = df.select("key.id", "value.kind", "value.when").orderBy("offset").collect()
    assert [tuple(r) for r in rows] == [("x", "B", dt.date(2026, 11, 27))] * 2


def test_plain_avro_without_a_registry_and_streaming(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    tmp_path: pytest.TempPathFactory,
) -> None:
    topic = new_topic(partitions=2)
    schema = {
        "type": "record",
        "name": "P",
        "fields": [
            {"name": "x", "type": "double"},
            {"name": "tags", "type": {"type": "map", "values": "long"}},
            {"name": "u", "type": ["int", "string"]},
        ],
    }
    data = [
        {"x": 1.5, "tags": {"a": 1}, "u": 5},
        {"x": -2.0, "tags": {}, "u": "five"},
    ]
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(None, avro_bytes(schema, d), partition=0) for d in data],
    )
    options = {"valueFormat": "avro", "avroSchema": json.dumps(schema)}
    df = read(spark, kafka_bootstrap, topic, **options)
    got = [r.value.asDict(recursive=True) for r in df.orderBy("offset").collect()]
    assert got == [
        {"x": 1.5, "tags": {"a": 1}, "u": {"member0": 5, "member1": None}},
        {"x": -2.0, "tags": {}, "u": {"member0": None, "member1": "five"}},
    ]

    stream = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .options(**options)
        .load()
    )
    name = f"avro_stream_{topic.replace('-', '_')}"
    query = (
        stream.selectExpr("value.x AS x")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "ckpt"))  # type: ignore[operator]
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    assert sorted(r.x for r in spark.table(name).collect()) == [-2.0, 1.5]


def test_option_errors(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], schema_registry: str
) -> None:
    topic = new_topic()
    url = {"schema.registry.url": schema_registry}
    cases = [
        ({"avroSchema": '"int"'}, "Option 'avroSchema' needs 'valueFormat'='avro'"),
        ({"valueFormat": "avro"}, "needs 'schema.registry.url'"),
        ({"valueFormat": "xml"}, "Option 'valueFormat' must be"),
        ({"valueFormat": "avro", "avroSchema": "{oops"}, "'avroSchema' is not a valid Avro"),
        ({"valueFormat": "avro", **url}, f"{topic}-value"),  # no such subject
        (
            {"valueFormat": "avro", "value.subject.name.strategy": "RecordNameStrategy", **url},
            "RecordNameStrategy names the subject after the record",
        ),
        (
            {
                "valueFormat": "avro",
                "use.latest.version": "true",
                "auto.register.schemas": "true",
                **url,
            },
            "conflict",
        ),
    ]
    for options, expected in cases:
        with pytest.raises((AnalysisException, Exception), match=expected):
            read(spark, kafka_bootstrap, topic, **options).schema  # noqa: B018


def test_top_level_bytes_are_raw_after_the_framing(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
) -> None:
    """Confluent's serializers write a top-level ``"bytes"`` value raw after the 5-byte
    framing (no Avro length prefix); a reader schema ``"string"`` resolves it (bytes ->
    string promotion)."""
    topic = new_topic()
    sid = registry.register(f"{topic}-value", '"bytes"')
    produce(kafka_bootstrap, topic, [ProducedRecord(None, framed(sid, b"hello"))])
    url = {"schema.registry.url": schema_registry}
    df = read(spark, kafka_bootstrap, topic, valueFormat="avro", **url)
    assert [bytes(r.value) for r in df.collect()] == [b"hello"]
    as_text = read(spark, kafka_bootstrap, topic, valueFormat="avro", avroSchema='"string"', **url)
    assert [r.value for r in as_text.collect()] == ["hello"]


def test_a_stream_keeps_its_reader_schema_when_the_subject_evolves(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    registry: SchemaRegistryClient,
    schema_registry: str,
    tmp_path: pytest.TempPathFactory,
) -> None:
    """The reader schema is fixed when the query starts: a version registered later is read
    through it (its extra field dropped), and the query's schema does not change."""
    topic = new_topic()
    v1_schema = {"type": "record", "name": "E", "fields": [{"name": "n", "type": "int"}]}
    v2_schema = {
        "type": "record",
        "name": "E",
        "fields": [
            {"name": "n", "type": "int"},
            {"name": "tag", "type": "string", "default": "none"},
        ],
    }
    v1 = registry.register(f"{topic}-value", json.dumps(v1_schema))
    first = framed(v1, avro_bytes(v1_schema, {"n": 1}))
    produce(kafka_bootstrap, topic, [ProducedRecord(None, first)])
    stream = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("valueFormat", "avro")
        .option("schema.registry.url", schema_registry)
        .load()
    )
    name = f"evolving_{topic.replace('-', '_')}"
    query = (
        stream.select("offset", "value")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "ckpt"))  # type: ignore[operator]
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        # the subject evolves while the query runs; a v2 record arrives
        v2 = registry.register(f"{topic}-value", json.dumps(v2_schema))
        second = framed(v2, avro_bytes(v2_schema, {"n": 2, "tag": "new"}))
        produce(kafka_bootstrap, topic, [ProducedRecord(None, second)])
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    table = spark.table(name)
    assert table.schema["value"].dataType.simpleString() == "struct<n:int>"
    assert sorted((r.offset, r.value.n) for r in table.collect()) == [(0, 1), (1, 2)]
