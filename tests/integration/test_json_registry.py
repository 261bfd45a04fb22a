"""Registry-framed JSON (``valueFormat=json`` with ``schema.registry.url``): a real broker, a
real schema registry (Apicurio, Confluent-compatible API), real Spark.

Read: documents serialized by confluent-kafka's ``JSONSerializer`` (magic byte 0, the 4-byte
id of the JSON Schema it registered, the document), produced by Kafka's Java producer, are
read by ours with the reader struct from the subject's JSON Schema; the rows must equal what
Spark's ``format("kafka")`` + ``from_json(CAST(substring(value, 6) AS STRING), <that struct>)``
gives, and the expected rows written out; a value that is not framed fails (``FAILFAST``)
naming the offset, or is null (``PERMISSIVE``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentRegistry
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_kafka_py.testing.registry import confluent_conf
from spark_kafka_py.testing.tools import ProducedRecord, produce

pytestmark = pytest.mark.integration

ORDER_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": ["string", "null"]},
        "amount": {"type": "number"},
        "placed": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "items": {"type": "array", "items": {"$ref": "#/definitions/Item"}},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["id"],
    "definitions": {
        "Item": {
            "type": "object",
            "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
        }
    },
}
ORDERS: list[dict[str, Any]] = [
    {
        "id": 1,
        "customer": "ann",
        "amount": 12.5,
        "placed": "2026-11-27T12:00:00Z",
        "day": "2026-11-27",
        "items": [{"sku": "a", "qty": 2}],
        "tags": {"gift": "yes"},
    },
    {"id": 2, "customer": None, "amount": 0, "items": []},
    {"id": 3, "placed": "2026-11-27T13:00:00.5+01:00", "items": [{"sku": "b"}], "tags": {}},
]


def _serialize(url: str, topic: str, docs: list[dict[str, Any]]) -> list[bytes]:
    serializer = JSONSerializer(json.dumps(ORDER_SCHEMA), ConfluentRegistry(confluent_conf(url)))
    context = SerializationContext(topic, MessageField.VALUE)
    out = []
    for doc in docs:
        data = serializer(doc, context)
        assert data is not None
        out.append(data)
    return out


def _ours(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    reader = spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic).option("valueFormat", "json")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _rows(df: DataFrame) -> list[tuple[int, Any]]:
    return [(r.offset, r.value) for r in df.select("offset", "value").orderBy("offset").collect()]


def test_confluent_framed_documents_read_as_from_json(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
) -> None:
    topic = new_topic()
    framed = _serialize(schema_registry, topic, ORDERS)
    assert all(f[0] == 0 for f in framed)
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(None, f) for f in framed] + [ProducedRecord(b"k", None)],
    )
    ours = _ours(spark, kafka_bootstrap, topic, **{"schema.registry.url": schema_registry})
    struct = ours.schema["value"].dataType
    assert struct.simpleString() == (
        "struct<id:bigint,customer:string,amount:double,placed:timestamp,day:date,"
        "items:array<struct<sku:string,qty:bigint>>,tags:map<string,string>>"
    )
    oracle = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .load()
        .select(
            "offset",
            F.from_json(F.expr("CAST(substring(value, 6) AS STRING)"), struct).alias("value"),
        )
    )
    got = _rows(ours)
    assert got == _rows(oracle)
    assert [None if v is None else v.id for _, v in got] == [1, 2, 3, None]
    assert got[0][1].items[0].asDict() == {"sku": "a", "qty": 2}
    assert got[0][1].tags == {"gift": "yes"}


def test_framing_errors_failfast_and_permissive(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
) -> None:
    topic = new_topic()
    framed = _serialize(schema_registry, topic, ORDERS[:1])
    produce(
        kafka_bootstrap,
        topic,
        [
            ProducedRecord(None, framed[0]),
            ProducedRecord(None, b'{"id": 5}'),  # plain JSON, not framed
            ProducedRecord(None, b"\x00\x00"),  # too short
        ],
    )
    registry = {"schema.registry.url": schema_registry}
    with pytest.raises(
        Exception, match=rf"the value of {topic}-0 at offset 1 as JSON: not Confluent-framed"
    ):
        _ours(spark, kafka_bootstrap, topic, mode="FAILFAST", **registry).collect()
    rows = _rows(_ours(spark, kafka_bootstrap, topic, **registry))  # PERMISSIVE: the default
    assert [(o, None if v is None else v.id) for o, v in rows] == [(0, 1), (1, None), (2, None)]
    # a reader struct given as valueSchema instead of the registry's
    given = _ours(spark, kafka_bootstrap, topic, valueSchema="id INT, customer STRING", **registry)
    assert [tuple(v) if v else None for _, v in _rows(given)] == [(1, "ann"), None, None]


def test_not_a_json_schema_is_refused(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
) -> None:
    from spark_kafka_py.schema_registry.client import Schema, SchemaRegistryClient
    from spark_kafka_py.schema_registry.settings import parse_settings

    topic = new_topic()
    client = SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))
    client.register(f"{topic}-value", Schema('"string"'))
    with pytest.raises(Exception, match="is a AVRO schema, not a JSON Schema"):
        _ours(spark, kafka_bootstrap, topic, **{"schema.registry.url": schema_registry}).schema  # noqa: B018
    other = new_topic()
    client.register(
        f"{other}-value",
        Schema(json.dumps({"type": "object", "properties": {"a": {}}}), schema_type="JSON"),
    )
    with pytest.raises(Exception, match=r"has no Spark type: .*\(at /properties/a\)"):
        _ours(spark, kafka_bootstrap, other, **{"schema.registry.url": schema_registry}).schema  # noqa: B018


# -- the sink ------------------------------------------------------------------------------

SINK_SQL = """
SELECT * FROM VALUES
  (1, named_struct('id', 1L, 'name', 'ann', 'at', timestamp'2026-11-27 12:00:00.5',
      'day', date'2026-11-27', 'tags', array('a', cast(null as string)), 'score', 2.5D)),
  (2, named_struct('id', 2L, 'name', cast(null as string), 'at', cast(null as timestamp),
      'day', cast(null as date), 'tags', cast(array() as array<string>), 'score', 0.0D)),
  (3, cast(null as struct<id:bigint,name:string,at:timestamp,day:date,tags:array<string>,
      score:double>))
AS t(k, value)
"""

DERIVED = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "at": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"oneOf": [{"type": "null"}, {"type": "string"}]}},
        "score": {"type": "number"},
    },
}


def _write(df: DataFrame, bootstrap: str, topic: str, **options: str) -> None:
    w = df.write.format("pykafka").mode("append").option("kafka.bootstrap.servers", bootstrap)
    w = w.option("topic", topic).option("valueFormat", "json")
    for k, v in options.items():
        w = w.option(k, v)
    w.save()


def test_sink_registers_and_confluent_reads(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer

    from spark_kafka_py.schema_registry.client import SchemaRegistryClient
    from spark_kafka_py.schema_registry.settings import parse_settings
    from spark_kafka_py.testing.tools import read_all

    topic = new_topic()
    df = spark.sql(SINK_SQL).orderBy("k").coalesce(1).select("value")
    _write(df, kafka_bootstrap, topic, **{"schema.registry.url": schema_registry})

    client = SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))
    latest = client.latest(f"{topic}-value")
    assert latest.schema.schema_type == "JSON"
    assert json.loads(latest.schema.schema_str) == DERIVED

    records = sorted(read_all(kafka_bootstrap, topic), key=lambda r: r.offset)
    values = [r.value for r in records]
    assert values[2] is None  # a null struct: a tombstone
    assert all(
        v is not None and v[:5] == b"\x00" + latest.schema_id.to_bytes(4, "big") for v in values[:2]
    )
    assert values[0] is not None and values[0][5:] == (
        b'{"id":1,"name":"ann","at":"2026-11-27T12:00:00.500Z","day":"2026-11-27",'
        b'"tags":["a",null],"score":2.5}'
    )
    deserializer = JSONDeserializer(
        None, schema_registry_client=ConfluentRegistry(confluent_conf(schema_registry))
    )
    context = SerializationContext(topic, MessageField.VALUE)
    assert [deserializer(v, context) for v in values] == [
        {
            "id": 1,
            "name": "ann",
            "at": "2026-11-27T12:00:00.500Z",
            "day": "2026-11-27",
            "tags": ["a", None],
            "score": 2.5,
        },
        {"id": 2, "tags": [], "score": 0.0},
        None,
    ]
    # and ours reads it back with the registered schema
    back = _rows(_ours(spark, kafka_bootstrap, topic, **{"schema.registry.url": schema_registry}))
    assert [None if v is None else (v.id, v.name, v.tags) for _, v in back] == [
        (1, "ann", ["a", None]),
        (2, None, []),
        None,
    ]


def test_sink_without_auto_register_needs_the_schema_registered(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
) -> None:
    topic = new_topic()
    df = spark.sql("SELECT named_struct('a', 1) AS value")
    options = {"schema.registry.url": schema_registry, "auto.register.schemas": "false"}
    with pytest.raises(Exception, match=f"is not registered under subject '{topic}-value'"):
        _write(df, kafka_bootstrap, topic, **options)
    _write(df, kafka_bootstrap, topic, **{"schema.registry.url": schema_registry})
    _write(df, kafka_bootstrap, topic, **options)  # now found: written with its id
    rows = _rows(_ours(spark, kafka_bootstrap, topic, **{"schema.registry.url": schema_registry}))
    assert [v.a for _, v in rows] == [1, 1]
