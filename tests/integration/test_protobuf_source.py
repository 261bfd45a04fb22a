"""``valueFormat=protobuf`` / ``keyFormat=protobuf`` reads: a real broker, a real schema
registry (Apicurio, Confluent-compatible API), real Spark.

Oracles no one here wrote: the schema is compiled by protoc (PyPI's grpcio-tools), messages are
built and serialized by the protobuf package, framed and registered by confluent-kafka's
``ProtobufSerializer``, and the expected rows are the protobuf package's own parse of each
message (``json_format.MessageToDict``) turned into Spark values by spark-protobuf's rules,
spelled out in :func:`_expected` (not computed by our code):

* a scalar field without presence (proto3) that is not on the wire (its default) is null;
  a repeated field is then ``[]``, a map ``{}``; an ``optional`` field set to "" is "";
* int64 -> long (``MessageToDict`` writes it as a string), uint32 -> integer (the 32 bits read
  as signed: 3,000,000,000 -> -1,294,967,296), bytes -> binary;
* an enum -> its value's name (string);
* ``google.protobuf.Timestamp`` -> timestamp; a ``google.protobuf.StringValue`` -> a
  ``struct<value: string>``; a nested message -> a struct, fields in declaration order.

Spark's own spark-protobuf is not run here: its jar is not served on this machine.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentRegistry
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import Message
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from spark_kafka_py.spark.functions import from_protobuf
from spark_kafka_py.testing.registry import confluent_conf
from spark_kafka_py.testing.tools import ProducedRecord, produce

pytestmark = pytest.mark.integration

PROTO = """
syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

message Order {
  enum Status { UNKNOWN = 0; PLACED = 1; SHIPPED = 2; }
  message Line { string sku = 1; int32 qty = 2; }
  int64 id = 1;
  string customer = 2;
  double amount = 3;
  Status status = 4;
  repeated Line lines = 5;
  map<string, int64> tags = 6;
  google.protobuf.Timestamp placed = 7;
  optional string note = 8;
  uint32 small = 9;
  bytes blob = 10;
  google.protobuf.StringValue memo = 11;
}
message Other { string x = 1; }
"""

#: The value's Spark type by spark-protobuf's ``SchemaConverters`` (written out).
ORDER_TYPE = (
    "struct<id:bigint,customer:string,amount:double,status:string,"
    "lines:array<struct<sku:string,qty:int>>,tags:map<string,bigint>,placed:timestamp,"
    "note:string,small:int,blob:binary,memo:struct<value:string>>"
)


@pytest.fixture(scope="module")
def desc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``protoc --include_imports --descriptor_set_out`` of :data:`PROTO`."""
    root = tmp_path_factory.mktemp("proto")
    (root / "shop").mkdir()
    (root / "shop" / "order.proto").write_text(PROTO, encoding="utf-8")
    out = root / "order.desc"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{root}",
            f"--descriptor_set_out={out}",
            "--include_imports",
            "shop/order.proto",
        ],
        cwd=root,
        check=True,
    )
    return out


@pytest.fixture(scope="module")
def classes(desc_file: Path) -> dict[str, type[Message]]:
    """The protobuf package's message classes of the compiled set (its own pool)."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(desc_file.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"shop.v1.{name}"))
        for name in ("Order", "Other")
    }


def _orders(classes: dict[str, type[Message]]) -> list[Message]:
    order = classes["Order"]
    first = order(
        id=7,
        customer="ann",
        amount=12.5,
        status=order.Status.Value("SHIPPED"),
        note="",
        small=3_000_000_000,
        blob=b"\x00\xffz",
    )
    first.lines.add(sku="a", qty=2)
    first.lines.add(sku="b", qty=0)
    first.tags["gift"] = 1
    first.tags["big"] = -(2**40)
    first.placed.FromDatetime(dt.datetime(2026, 11, 27, 12, 0, 0, 500000))
    first.memo.value = "m"
    second = order(id=8, customer="bo")  # most fields absent: nulls, [] and {}
    return [first, second, order()]  # an empty message: every scalar null


def _spark_value(v: Any) -> Any:
    """A collected Spark value as plain Python (Rows as dicts, bytearray as bytes)."""
    if isinstance(v, Row):
        return {k: _spark_value(x) for k, x in v.asDict().items()}
    if isinstance(v, list):
        return [_spark_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _spark_value(x) for k, x in v.items()}
    if isinstance(v, bytearray):
        return bytes(v)
    return v


def _expected(message: Message) -> dict[str, Any]:
    """The row spark-protobuf gives ``message`` (``shop.v1.Order``), from the protobuf
    package's own parse of it (:func:`json_format.MessageToDict`), by the rules in this
    module's docstring."""
    parsed = json_format.MessageToDict(message, preserving_proto_field_name=True)
    reparsed = type(message).FromString(message.SerializeToString())  # round trip, as read
    assert json_format.MessageToDict(reparsed, preserving_proto_field_name=True) == parsed

    def signed32(v: int) -> int:
        return v - 2**32 if v >= 2**31 else v

    def timestamp(text: str) -> dt.datetime:  # the session time zone is UTC: naive UTC
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)

    return {
        "id": int(parsed["id"]) if "id" in parsed else None,
        "customer": parsed.get("customer"),
        "amount": parsed.get("amount"),
        "status": parsed.get("status"),
        "lines": [
            {"sku": line.get("sku"), "qty": line.get("qty")} for line in parsed.get("lines", [])
        ],
        "tags": {k: int(v) for k, v in parsed.get("tags", {}).items()},
        "placed": timestamp(parsed["placed"]) if "placed" in parsed else None,
        "note": parsed.get("note"),
        "small": signed32(parsed["small"]) if "small" in parsed else None,
        "blob": base64.b64decode(parsed["blob"]) if "blob" in parsed else None,
        "memo": {"value": parsed["memo"]} if "memo" in parsed else None,
    }


def _serializer(registry: str, cls: type[Message]) -> ProtobufSerializer:
    return ProtobufSerializer(
        cls, ConfluentRegistry(confluent_conf(registry)), {"use.deprecated.format": False}
    )


def _framed(registry: str, topic: str, messages: list[Message]) -> list[bytes]:
    context = SerializationContext(topic, MessageField.VALUE)
    out = []
    for m in messages:
        data = _serializer(registry, type(m))(m, context)
        assert data is not None
        out.append(data)
    return out


def _ours(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    reader = spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _values(df: DataFrame, column: str = "value") -> list[Any]:
    return [_spark_value(r[column]) for r in df.orderBy("offset").select(column).collect()]


@pytest.fixture
def registry_topic(
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
    classes: dict[str, type[Message]],
) -> Iterator[tuple[str, list[Message], list[bytes]]]:
    """A topic of three orders framed by confluent-kafka's serializer, then a tombstone."""
    topic = new_topic()
    orders = _orders(classes)
    framed = _framed(schema_registry, topic, orders)
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(None, f) for f in framed] + [ProducedRecord(b"k", None)],
    )
    yield topic, orders, framed


def test_confluent_serialized_orders_read_as_protobuf_parses_them(
    spark: SparkSession,
    kafka_bootstrap: str,
    schema_registry: str,
    registry_topic: tuple[str, list[Message], list[bytes]],
) -> None:
    topic, orders, framed = registry_topic
    assert all(f[0] == 0 and f[5] == 0 for f in framed)  # magic byte, message indexes [0]
    ours = _ours(
        spark,
        kafka_bootstrap,
        topic,
        valueFormat="protobuf",
        **{"schema.registry.url": schema_registry},
    )
    assert ours.schema["value"].dataType.simpleString() == ORDER_TYPE
    assert _values(ours) == [*[_expected(m) for m in orders], None]
    # a few values checked against the literals too (the oracle's rules above)
    first = _values(ours)[0]
    assert first["status"] == "SHIPPED" and first["small"] == -1_294_967_296
    assert first["note"] == "" and first["placed"] == dt.datetime(2026, 11, 27, 12, 0, 0, 500000)
    assert _values(ours)[2]["lines"] == [] and _values(ours)[2]["id"] is None


def test_plain_descriptor_set_values_and_protobuf_key(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    desc_file: Path,
    classes: dict[str, type[Message]],
) -> None:
    topic = new_topic()
    orders = _orders(classes)
    keys = [classes["Other"](x=f"k{i}") for i in range(len(orders))]
    produce(
        kafka_bootstrap,
        topic,
        [
            ProducedRecord(k.SerializeToString(), m.SerializeToString())
            for k, m in zip(keys, orders, strict=True)
        ],
    )
    ours = _ours(
        spark,
        kafka_bootstrap,
        topic,
        valueFormat="protobuf",
        messageName="shop.v1.Order",
        descFilePath=str(desc_file),
        keyFormat="protobuf",
        **{
            "key.messageName": "Other",
            "key.descriptorSet": base64.b64encode(desc_file.read_bytes()).decode(),
        },
    )
    assert ours.schema["key"].dataType.simpleString() == "struct<x:string>"
    assert _values(ours) == [_expected(m) for m in orders]
    assert _values(ours, "key") == [{"x": f"k{i}"} for i in range(len(orders))]


def test_bad_records_failfast_and_permissive(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    schema_registry: str,
    classes: dict[str, type[Message]],
) -> None:
    topic = new_topic()
    order = _orders(classes)[0]
    good, other = _framed(schema_registry, topic, [order, classes["Other"](x="o")])
    schema_id = int.from_bytes(good[1:5], "big")
    assert other[1:5] == good[1:5] and other[5:7] == b"\x02\x02"  # same schema, indexes [1]
    malformed = good[:6] + b"\x0a\xff\xff\xff\xff"  # field 1 as a length past the end
    records = [good, other, malformed, b"plain"]
    produce(kafka_bootstrap, topic, [ProducedRecord(None, r) for r in records])
    registry = {"schema.registry.url": schema_registry, "valueFormat": "protobuf"}

    with pytest.raises(Exception) as info:
        _ours(spark, kafka_bootstrap, topic, **registry).collect()
    text = str(info.value)
    assert f"the value of {topic}-0 at offset 1 as Protobuf shop.v1.Order" in text
    assert "name message shop.v1.Other" in text and f"writer schema id {schema_id}" in text

    def from_offset(n: int) -> str:
        return json.dumps({topic: {"0": n}})

    with pytest.raises(Exception) as info:
        _ours(spark, kafka_bootstrap, topic, startingOffsets=from_offset(2), **registry).collect()
    text = str(info.value)
    assert f"{topic}-0 at offset 2" in text and "malformed Protobuf message" in text
    assert f"writer schema id {schema_id}" in text

    with pytest.raises(Exception, match=rf"{topic}-0 at offset 3 .*not Confluent-framed"):
        _ours(spark, kafka_bootstrap, topic, startingOffsets=from_offset(3), **registry).collect()

    lenient = _ours(
        spark, kafka_bootstrap, topic, mode="PERMISSIVE", includeRawBytes="true", **registry
    )
    assert _values(lenient) == [_expected(order), None, None, None]
    assert _values(lenient, "value_raw") == records


def test_streaming_available_now(
    spark: SparkSession,
    kafka_bootstrap: str,
    schema_registry: str,
    registry_topic: tuple[str, list[Message], list[bytes]],
    tmp_path: Path,
) -> None:
    topic, orders, _ = registry_topic
    stream = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("valueFormat", "protobuf")
        .option("schema.registry.url", schema_registry)
        .load()
    )
    name = f"pb_stream_{topic.replace('-', '_')}"
    query = (
        stream.select("offset", "value")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    assert _values(spark.table(name)) == [*[_expected(m) for m in orders], None]


def test_from_protobuf_over_spark_kafka_equals_our_column(
    spark: SparkSession,
    kafka_bootstrap: str,
    schema_registry: str,
    registry_topic: tuple[str, list[Message], list[bytes]],
    desc_file: Path,
) -> None:
    topic, _, _ = registry_topic
    ours = _values(
        _ours(
            spark,
            kafka_bootstrap,
            topic,
            valueFormat="protobuf",
            **{"schema.registry.url": schema_registry},
        )
    )
    spark_kafka = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .load()
    )
    databricks_form = spark_kafka.select(
        "offset",
        from_protobuf(
            "value",
            options={
                "schema.registry.subject": f"{topic}-value",
                "schema.registry.address": schema_registry,
            },
        ).alias("value"),
    )
    assert databricks_form.schema["value"].dataType.simpleString() == ORDER_TYPE
    assert _values(databricks_form) == ours
    # spark-protobuf's plain form over the unframed bytes (framing + indexes [0] dropped)
    plain = spark_kafka.select(
        "offset",
        from_protobuf(
            F.expr("substring(value, 7)"), "shop.v1.Order", descFilePath=str(desc_file)
        ).alias("value"),
    )
    assert _values(plain) == ours
    inline = spark_kafka.select(
        "offset",
        from_protobuf(
            F.expr("substring(value, 7)"),
            "Order",
            binaryDescriptorSet=desc_file.read_bytes(),
            options={"mode": "PERMISSIVE"},
        ).alias("value"),
    )
    assert _values(inline) == ours
