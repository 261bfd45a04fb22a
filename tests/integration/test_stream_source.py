"""``spark.readStream.format("pykafka")`` against a real broker: checkpoints, restarts, rates.

The sink is Spark's file sink (exactly-once with its own log), so every (partition, offset)
it holds was delivered once; the expected values come from the producer's input.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from spark_kafka_py.testing.tools import ProducedRecord, add_partitions, create_topic, produce

pytestmark = pytest.mark.integration


def start_query(
    spark: SparkSession, bootstrap: str, topic: str, out: Path, checkpoint: Path, **options: str
) -> StreamingQuery:
    reader = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    for k, v in options.items():
        reader = reader.option(k, v)
    return (
        reader.load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )


def run_to_end(query: StreamingQuery, timeout_s: float = 180) -> None:
    """Wait for an ``AvailableNow`` query to end: one still running after ``timeout_s`` fails
    the test (stopped first), as does one that ended with an error."""
    if not query.awaitTermination(timeout_s):
        query.stop()
        pytest.fail(f"the query did not end within {timeout_s} s")
    assert query.exception() is None


def sink_rows(spark: SparkSession, out: Path) -> list[tuple[int, int, str]]:
    return sorted(
        (r["partition"], r["offset"], r["value"]) for r in spark.read.parquet(str(out)).collect()
    )


def expected(records: list[ProducedRecord]) -> list[tuple[int, int, str]]:
    offsets: dict[int, int] = {}
    rows = []
    for r in records:
        assert r.partition is not None and r.value is not None
        o = offsets.get(r.partition, 0)
        offsets[r.partition] = o + 1
        rows.append((r.partition, o, r.value))
    return sorted(rows)


def batch_input_counts(query: StreamingQuery) -> list[int]:
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"] > 0]


@pytest.mark.broker_matrix
def test_restart_on_checkpoint_neither_loses_nor_repeats(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"stream-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=2)
    first = [ProducedRecord(key=None, value=f"a{i}", partition=i % 2) for i in range(120)]
    produce(kafka_bootstrap, topic, first)
    out, cp = tmp_path / "out", tmp_path / "cp"

    q = start_query(spark, kafka_bootstrap, topic, out, cp, maxOffsetsPerTrigger="50")
    run_to_end(q)
    counts = batch_input_counts(q)
    assert sum(counts) == 120
    assert max(counts) <= 50 and len(counts) >= 3  # the rate limit split the backlog
    assert sink_rows(spark, out) == expected(first)

    # The checkpoint holds our offsets: {topic: {partition: next offset}}.
    offsets_dir = cp / "offsets"
    last = max(offsets_dir.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1)
    assert json.loads(last.read_text().splitlines()[-1]) == {topic: {"0": 60, "1": 60}}

    second = [ProducedRecord(key=None, value=f"b{i}", partition=i % 2) for i in range(60)]
    produce(kafka_bootstrap, topic, second)
    q = start_query(spark, kafka_bootstrap, topic, out, cp)
    run_to_end(q)
    assert sink_rows(spark, out) == expected(first + second)


@pytest.mark.broker_matrix
def test_new_partitions_are_read_from_earliest(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"grow-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    first = [ProducedRecord(key=None, value=f"a{i}", partition=0) for i in range(10)]
    produce(kafka_bootstrap, topic, first)
    out, cp = tmp_path / "out", tmp_path / "cp"
    q = start_query(spark, kafka_bootstrap, topic, out, cp)
    run_to_end(q)

    add_partitions(kafka_bootstrap, topic, 3)
    second = [ProducedRecord(key=None, value=f"b{i}", partition=i % 3) for i in range(30)]
    produce(kafka_bootstrap, topic, second)
    q = start_query(spark, kafka_bootstrap, topic, out, cp)
    run_to_end(q)
    assert sink_rows(spark, out) == expected(first + second)


def test_new_partitions_are_read_from_earliest_also_with_latest(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path
) -> None:
    """``startingOffsets`` applies only to the partitions of the first batch: partitions
    added to the topic later are read from their earliest offset, also with ``latest`` (as
    Spark's source: ``KafkaMicroBatchStream`` fetches new partitions' earliest offsets)."""
    topic = f"grow-latest-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    old = [ProducedRecord(key=None, value=f"old{i}", partition=0) for i in range(3)]
    produce(kafka_bootstrap, topic, old)
    out, cp = tmp_path / "out", tmp_path / "cp"
    q = start_query(spark, kafka_bootstrap, topic, out, cp, startingOffsets="latest")
    run_to_end(q)  # starts at offset 3 of partition 0, reads nothing

    add_partitions(kafka_bootstrap, topic, 3)
    new = [ProducedRecord(key=None, value=f"b{i}", partition=i % 3) for i in range(12)]
    produce(kafka_bootstrap, topic, new)
    q = start_query(spark, kafka_bootstrap, topic, out, cp, startingOffsets="latest")
    run_to_end(q)
    # partition 0 from where the first run started; partitions 1 and 2 from offset 0
    assert sink_rows(spark, out) == sorted(
        r if r[0] else (0, r[1] + 3, r[2]) for r in expected(new)
    )


def test_streaming_from_latest_skips_old_records(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"latest-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(key=None, value="old", partition=0)])
    out, cp = tmp_path / "out", tmp_path / "cp"
    q = start_query(spark, kafka_bootstrap, topic, out, cp, startingOffsets="latest")
    run_to_end(q)
    produce(kafka_bootstrap, topic, [ProducedRecord(key=None, value="new", partition=0)])
    q = start_query(spark, kafka_bootstrap, topic, out, cp, startingOffsets="latest")
    run_to_end(q)
    assert sink_rows(spark, out) == [(0, 1, "new")]
