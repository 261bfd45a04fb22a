"""``df.write.format("pykafka")`` and ``writeStream.format("pykafka")`` against a real broker.

What we wrote is read back with Kafka's own Java ConsoleConsumer (records, partitions, headers),
never only with our own reader; where a partition is expected, it is Kafka's Java partitioner's
(``partition_for_key``, equal to Kafka's Java code over 10,000+ keys in
tests/producer/test_partitioner.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from spark_kafka_py.producer import partition_for_key
from spark_kafka_py.testing.tools import ProducedRecord, consume, get_offsets, produce

pytestmark = pytest.mark.integration


def read_back(bootstrap: str, topic: str, count: int, **kw: Any) -> list[list[str]]:
    """``[Partition:N, key, value]`` (headers before the key with ``print_headers``) per
    record, read by Kafka's ConsoleConsumer."""
    kw.setdefault("timeout_ms", 15_000)
    lines = consume(bootstrap, topic, count, print_partition=True, **kw)
    return [line.split("\t") for line in lines]


def writer(spark: SparkSession, rows: list[tuple], columns: str, bootstrap: str, **options: str):
    """A batch write of ``rows`` in one Spark task (so the order of the rows is the order
    written)."""
    df = spark.createDataFrame(rows, columns).coalesce(1)
    w = df.write.format("pykafka").mode("append").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        w = w.option(k, v)
    return w


@pytest.mark.broker_matrix
def test_keyed_rows_land_where_javas_partitioner_puts_them(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic(partitions=3)
    rows = [(f"key-{i % 17}", f"value-{i}") for i in range(500)]
    writer(spark, rows, "key string, value string", kafka_bootstrap, topic=topic).save()
    got = read_back(kafka_bootstrap, topic, 500)
    assert len(got) == 500
    for part, key, _value in got:
        assert part == f"Partition:{partition_for_key(key.encode(), 3)}", (key, part)
    # per key, the order the rows were written in
    by_key: dict[str, list[int]] = defaultdict(list)
    for _, key, value in got:
        by_key[key].append(int(value.split("-")[1]))
    assert all(v == sorted(v) for v in by_key.values())
    assert sorted(v for vs in by_key.values() for v in vs) == list(range(500))


def test_partition_column_topic_column_headers_and_nulls(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    a, b = new_topic(partitions=4), new_topic(partitions=2)
    rows = [
        (a, 3, "k1", "to a/3", [("h1", b"x"), ("h2", None)]),
        (a, None, "k2", "to a by key", []),
        (b, 1, None, None, None),  # a tombstone
        (b, 0, None, "", None),  # an empty value
        (a, 0, "ünï", "ünïcødé ✓", None),
    ]
    schema = (
        "topic string, partition int, key string, value string, "
        "headers array<struct<key:string,value:binary>>"
    )
    writer(spark, rows, schema, kafka_bootstrap).save()
    got_a = read_back(kafka_bootstrap, a, 3, print_headers=True, null_literal="NULL")
    got_b = read_back(kafka_bootstrap, b, 2, print_headers=True, null_literal="NULL")
    assert sorted(got_a) == sorted(
        [
            ["Partition:3", "h1:x,h2:NULL", "k1", "to a/3"],
            [f"Partition:{partition_for_key(b'k2', 4)}", "NO_HEADERS", "k2", "to a by key"],
            ["Partition:0", "NO_HEADERS", "ünï", "ünïcødé ✓"],
        ]
    )
    assert sorted(got_b) == [
        ["Partition:0", "NO_HEADERS", "NULL", ""],
        ["Partition:1", "NO_HEADERS", "NULL", "NULL"],
    ]


def test_topic_option_overrides_the_topic_column(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    target, other = new_topic(), new_topic()
    rows = [(other, f"v{i}") for i in range(10)]
    writer(spark, rows, "topic string, value string", kafka_bootstrap, topic=target).save()
    assert sum(get_offsets(kafka_bootstrap, target).values()) == 10
    assert sum(get_offsets(kafka_bootstrap, other).values()) == 0


def test_unkeyed_rows_are_spread_in_sticky_runs(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic(partitions=4)
    rows = [("x" * 100,) for _ in range(20_000)]
    writer(spark, rows, "value string", kafka_bootstrap, topic=topic).save()
    ends = get_offsets(kafka_bootstrap, topic)
    assert sum(ends.values()) == 20_000
    # about 2 MB in runs of batch.size (16 KiB): every partition gets some
    assert all(n > 0 for n in ends.values()), ends


def test_wrong_column_type_fails_before_anything_is_written(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    with pytest.raises(Exception, match="value attribute unsupported type int"):
        writer(spark, [(1,), (2,)], "value int", kafka_bootstrap, topic=topic).save()
    with pytest.raises(Exception, match="topic option required when no 'topic' attribute"):
        writer(spark, [("v",)], "value string", kafka_bootstrap).save()
    assert sum(get_offsets(kafka_bootstrap, topic).values()) == 0


def test_overwrite_mode_is_refused(spark: SparkSession, kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic()
    df = spark.createDataFrame([("v",)], "value string")
    w = df.write.format("pykafka").option("kafka.bootstrap.servers", kafka_bootstrap)
    with pytest.raises(Exception, match="Save mode Overwrite not allowed for Kafka"):
        w.option("topic", topic).mode("overwrite").save()


def test_bad_rows_fail_the_write_naming_the_problem(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic(partitions=2)
    with pytest.raises(Exception, match="contains a null topic"):
        writer(spark, [(None, "v")], "topic string, value string", kafka_bootstrap).save()
    with pytest.raises(Exception, match=r"Invalid partition given with record: 5 .*\[0\.\.\.2\)"):
        writer(
            spark, [(5, "v")], "partition int, value string", kafka_bootstrap, topic=topic
        ).save()
    missing = topic + "-does-not-exist"
    with pytest.raises(Exception, match=f"UNKNOWN_TOPIC_OR_PARTITION.*{missing}"):
        writer(
            spark,
            [("v",)],
            "value string",
            kafka_bootstrap,
            topic=missing,
            **{"kafka.max.block.ms": "3000"},
        ).save()


def test_record_larger_than_max_request_size_fails_naming_it(
    spark: SparkSession, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    with pytest.raises(Exception, match=r"(?s)max\.request\.size.*|RECORD_TOO_LARGE"):
        writer(
            spark,
            [("x" * 20_000,)],
            "value string",
            kafka_bootstrap,
            topic=topic,
            **{"kafka.max.request.size": "10000"},
        ).save()
    assert sum(get_offsets(kafka_bootstrap, topic).values()) == 0


@pytest.mark.broker_matrix
# long (issue 25 / suite time, 5 s a codec): in the default run every codec of our writes is
# read by Kafka's console consumer and kafka-dump-log (test_sink_tools.py,
# test_kafka_tools_read_what_we_wrote); the broker matrix (-m broker_matrix) still runs it
@pytest.mark.long
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_every_codec_is_read_by_javas_consumer(
    spark: SparkSession, kafka_bootstrap: str, new_topic, codec: str
) -> None:
    topic = new_topic()
    rows = [(f"k{i}", f"value {i} " * 5) for i in range(300)]
    writer(
        spark,
        rows,
        "key string, value string",
        kafka_bootstrap,
        topic=topic,
        **{"kafka.compression.type": codec},
    ).save()
    got = read_back(kafka_bootstrap, topic, 300)
    assert [(k, v) for _, k, v in got] == rows


def test_streaming_kafka_to_kafka_append_and_complete(
    spark: SparkSession, kafka_bootstrap: str, new_topic, tmp_path: Path
) -> None:
    source, copy, counts = new_topic(partitions=2), new_topic(partitions=2), new_topic()
    produce(
        kafka_bootstrap,
        source,
        [ProducedRecord(key=f"c{i % 3}", value=f"v{i}") for i in range(600)],
    )

    def stream():
        return (
            spark.readStream.format("pykafka")
            .option("kafka.bootstrap.servers", kafka_bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "250")
            .load()
        )

    q1 = (
        stream()
        .select("key", "value")
        .writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", copy)
        .option("checkpointLocation", str(tmp_path / "copy"))
        .trigger(availableNow=True)
        .start()
    )
    q2 = (
        stream()
        .groupBy(F.col("key").cast("string").alias("key"))
        .count()
        .select("key", F.col("count").cast("string").alias("value"))
        .writeStream.format("pykafka")
        .outputMode("complete")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", counts)
        .option("checkpointLocation", str(tmp_path / "counts"))
        .trigger(availableNow=True)
        .start()
    )
    q1.awaitTermination(180)
    q2.awaitTermination(180)
    assert q1.exception() is None and q2.exception() is None
    copied = read_back(kafka_bootstrap, copy, 600)
    assert Counter(v for _, _, v in copied) == Counter(f"v{i}" for i in range(600))
    # per key the source order survives the copy (same key -> same partition, in order)
    for key in ("c0", "c1", "c2"):
        values = [int(v[1:]) for _, k, v in copied if k == key]
        assert values == sorted(values)
    updates = read_back(kafka_bootstrap, counts, 1000, timeout_ms=5_000)
    last = {}
    for _, key, value in updates:
        last[key] = int(value)
    assert last == {"c0": 200, "c1": 200, "c2": 200}
    # complete mode: the whole result table (3 keys) in each of the 3 micro-batches
    assert len(updates) == 9, updates


def test_update_mode_is_refused_by_pyspark(
    spark: SparkSession, kafka_bootstrap: str, new_topic, tmp_path: Path
) -> None:
    """PySpark's Python data sources cannot take Update mode (its write builder for them lacks
    ``SupportsStreamingUpdateAsAppend``); docs/sink.md shows the two ways around it."""
    source = new_topic()
    query = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", source)
        .load()
        .groupBy("key")
        .count()
        .select("key", F.col("count").cast("string").alias("value"))
        .writeStream.format("pykafka")
        .outputMode("update")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", new_topic())
        .option("checkpointLocation", str(tmp_path / "update"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="pykafka does not support Update mode"):
        query.awaitTermination(120)
