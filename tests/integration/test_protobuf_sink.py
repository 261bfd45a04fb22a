"""``valueFormat=protobuf`` / ``keyFormat=protobuf`` on writes: a real broker, real Spark, the
real registry (Apicurio's Confluent-compatible API).

What the sink writes is read back by Kafka's Java consumer (``testing.tools.read_all``) and
parsed by clients no one here wrote: the protobuf package's own message class (plain values)
and confluent-kafka's ``ProtobufDeserializer`` (framed values), then compared with the
DataFrame's rows as Spark collects them.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import message_factory
from google.protobuf.message import Message
from pyspark.sql import DataFrame, SparkSession

from spark_kafka_py.formats.protobuf import compile_proto, parse_descriptor_set
from spark_kafka_py.testing.registry import confluent_conf
from spark_kafka_py.testing.tools import read_all

pytestmark = pytest.mark.integration

PROTO = """
syntax = "proto3";
package sink;
import "google/protobuf/timestamp.proto";
message Order {
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  message Item { string sku = 1; int32 qty = 2; }
  int64 id = 1;
  optional string customer = 2;
  double amount = 3;
  Status status = 4;
  repeated Item items = 5;
  map<string, int64> attrs = 6;
  google.protobuf.Timestamp placed = 7;
  bytes raw = 8;
}
message Key { string id = 1; }
"""

ROWS_SQL = """
SELECT * FROM VALUES
  (1, named_struct('id', 'k1'), named_struct('id', 1L, 'customer', 'ann', 'amount', 12.5D,
      'status', 'PAID', 'items', array(named_struct('sku', 'a', 'qty', 2)),
      'attrs', map('x', 7L), 'placed', timestamp'2026-11-27 12:00:00.123456', 'raw', X'00FF')),
  (2, named_struct('id', 'k2'), named_struct('id', 2L, 'customer', cast(null as string),
      'amount', 0D, 'status', 'NEW', 'items', cast(array() as array<struct<sku:string,qty:int>>),
      'attrs', cast(map() as map<string,bigint>), 'placed', cast(null as timestamp),
      'raw', X'')),
  (3, cast(null as struct<id:string>), cast(null as struct<id:bigint,customer:string,
      amount:double,status:string,items:array<struct<sku:string,qty:int>>,
      attrs:map<string,bigint>,placed:timestamp,raw:binary>))
AS t(k, key, value)
"""


@pytest.fixture(scope="module")
def descriptor_set() -> bytes:
    return compile_proto(PROTO, name="sink/order.proto")


def _cls(descriptor_set: bytes, name: str) -> type[Message]:
    schema = parse_descriptor_set(descriptor_set)
    return message_factory.GetMessageClass(schema.pool.FindMessageTypeByName(name))


def _write(df: DataFrame, bootstrap: str, topic: str, **options: str) -> None:
    w = df.write.format("pykafka").mode("append").option("kafka.bootstrap.servers", bootstrap)
    w = w.option("topic", topic)
    for k, v in options.items():
        w = w.option(k, v)
    w.save()


def _records(bootstrap: str, topic: str) -> list[tuple[Any, Any]]:
    records = sorted(read_all(bootstrap, topic), key=lambda r: (r.partition, r.offset))
    return [(r.key, r.value) for r in records]


def _check(m: Message, row: Any) -> None:
    """A parsed message against the DataFrame's row (collected by Spark)."""
    assert m.id == row.id
    assert m.HasField("customer") == (row.customer is not None)
    assert m.customer == (row.customer or "")
    assert m.amount == row.amount
    assert type(m).Status.Name(m.status) == row.status
    assert [(i.sku, i.qty) for i in m.items] == [(i.sku, i.qty) for i in row.items]
    assert dict(m.attrs) == row.attrs
    assert m.HasField("placed") == (row.placed is not None)
    if row.placed is not None:
        micros = m.placed.seconds * 1_000_000 + m.placed.nanos // 1000
        # the session's zone is UTC (testing/spark): the naive datetime is UTC
        import datetime as dt

        epoch = dt.datetime(1970, 1, 1)
        assert micros == (row.placed - epoch) // dt.timedelta(microseconds=1)
    assert m.raw == bytes(row.raw)


def test_plain_values_parse_with_protobuf(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    descriptor_set: bytes,
    tmp_path: Path,
) -> None:
    path = tmp_path / "order.desc"
    path.write_bytes(descriptor_set)
    topic = new_topic()
    df = spark.sql(ROWS_SQL).orderBy("k").coalesce(1)
    _write(
        df.select("key", "value"),
        kafka_bootstrap,
        topic,
        valueFormat="protobuf",
        messageName="sink.Order",
        descFilePath=str(path),
        keyFormat="protobuf",
        **{
            "key.messageName": "Key",
            "key.descriptorSet": base64.b64encode(descriptor_set).decode(),
        },
    )
    rows = df.collect()
    got = _records(kafka_bootstrap, topic)
    assert len(got) == 3
    Order = _cls(descriptor_set, "sink.Order")
    Key = _cls(descriptor_set, "sink.Key")
    for (key, value), row in zip(got[:2], rows[:2], strict=True):
        _check(Order.FromString(value), row.value)
        assert Key.FromString(key).id == row.key.id
    assert got[2] == (None, None)  # a null struct: a null key, a tombstone
    # the first row typed in: protobuf's own serializer gives the same bytes
    want = Order(
        id=1,
        customer="ann",
        amount=12.5,
        status=1,
        items=[Order.Item(sku="a", qty=2)],
        attrs={"x": 7},
        raw=b"\x00\xff",
    )
    want.placed.FromMicroseconds(1_795_780_800_123_456)
    assert Order.FromString(got[0][1]) == want


def test_framed_values_read_by_confluents_deserializer(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
    descriptor_set: bytes,
) -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic = new_topic()
    df = spark.sql(ROWS_SQL).orderBy("k").coalesce(1)
    options = {
        "schema.registry.url": schema_registry,
        "valueFormat": "protobuf",
        "messageName": "sink.Order.Item",  # a nested message: indexes [0, 0]
        "descriptorSet": base64.b64encode(descriptor_set).decode(),
    }
    items = df.selectExpr("get(value.items, 0) AS value")
    _write(items, kafka_bootstrap, topic, **options)
    got = [v for _, v in _records(kafka_bootstrap, topic)]
    registry = SchemaRegistryClient(confluent_conf(schema_registry))
    latest = registry.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "PROTOBUF"
    Item = _cls(descriptor_set, "sink.Order.Item")
    deserialize = ProtobufDeserializer(Item, {"use.deprecated.format": False})
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert got[0] is not None and got[0][:5] == b"\x00" + latest.schema_id.to_bytes(4, "big")
    assert got[0][5:8] == b"\x04\x00\x00"  # indexes: count 2, then 0, 0 (zigzag varints)
    assert deserialize(got[0], ctx) == Item(sku="a", qty=2)
    assert got[1:] == [None, None]  # items[0] of an empty array and of a null row: null

    # the whole Order, the subject's schema now pinned by its latest (no descriptor set)
    topic2 = new_topic()
    _write(
        df.select("key", "value"),
        kafka_bootstrap,
        topic2,
        **{
            **options,
            "messageName": "sink.Order",
            "keyFormat": "protobuf",
            "key.messageName": "Key",  # the file's second message: indexes [1]
            "key.descriptorSet": options["descriptorSet"],
        },
    )
    schema_id = registry.get_latest_version(f"{topic2}-value").schema_id
    key_id = registry.get_latest_version(f"{topic2}-key").schema_id
    keys = [k for k, _ in _records(kafka_bootstrap, topic2)]
    assert keys[0][:7] == b"\x00" + key_id.to_bytes(4, "big") + b"\x02\x02"
    Key = _cls(descriptor_set, "sink.Key")
    key_ctx = SerializationContext(topic2, MessageField.KEY)
    read_key = ProtobufDeserializer(Key, {"use.deprecated.format": False})
    assert [read_key(k, key_ctx) for k in keys[:2]] == [Key(id="k1"), Key(id="k2")]
    assert keys[2] is None
    topic3 = new_topic()
    _write(
        df.select("value"),
        kafka_bootstrap,
        topic3,
        **{
            "schema.registry.url": schema_registry,
            "valueFormat": "protobuf",
            "value.schema.id": str(schema_id),
        },
    )
    Order = _cls(descriptor_set, "sink.Order")
    deserialize = ProtobufDeserializer(Order, {"use.deprecated.format": False})
    rows = df.collect()
    for t in (topic2, topic3):
        values = [v for _, v in _records(kafka_bootstrap, t)]
        assert values[0][:6] == b"\x00" + schema_id.to_bytes(4, "big") + b"\x00"
        for value, row in zip(values[:2], rows[:2], strict=True):
            _check(deserialize(value, SerializationContext(t, MessageField.VALUE)), row.value)
        assert values[2] is None


def test_bad_rows_and_bad_types_are_named(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    descriptor_set: bytes,
) -> None:
    topic = new_topic()
    inline = base64.b64encode(descriptor_set).decode()
    options = {"valueFormat": "protobuf", "messageName": "sink.Order", "descriptorSet": inline}
    bad = spark.sql(
        "SELECT named_struct('id', 1L, 'status', 'PAID') AS value UNION ALL "
        "SELECT named_struct('id', 2L, 'status', 'LOST') AS value"
    ).coalesce(1)
    with pytest.raises(
        Exception,
        match=r"(?s)value of row 1 of batch 0.*'LOST' is not a value of enum sink\.Order\.Status",
    ):
        _write(bad, kafka_bootstrap, topic, **options)
    assert _records(kafka_bootstrap, topic) == []  # nothing of that batch was written
    wrong = spark.sql("SELECT named_struct('id', 'one') AS value")
    with pytest.raises(
        Exception, match=r"(?s)string cannot be written to the int64 field.*sink\.Order\.id"
    ):
        _write(wrong, kafka_bootstrap, topic, **options)
    unknown = spark.sql("SELECT named_struct('id', 1L, 'nope', 1) AS value")
    with pytest.raises(Exception, match=r"(?s)'nope' has no field.*\(at sink\.Order\.nope\)"):
        _write(unknown, kafka_bootstrap, topic, **options)
