"""Streaming: ``spark.readStream.format("pykafka")`` against Spark's Kafka source semantics.

Spark's built-in *streaming* source cannot be the oracle here: the newest connector on Maven
Central for this PySpark (4.0.0) fails every micro-batch on Spark 4.3 (binary incompatibility,
e.g. ``NoSuchMethodError: SerializedOffset.<init>(String)``). So each scenario checks

* the rows all micro-batches delivered against the built-in **batch** source reading the same
  offsets (chispa), and
* the micro-batch boundaries against the ones worked out by hand from Spark's rules
  (``KafkaMicroBatchStream.rateLimit``, ``delayBatch``, ``reportDataLoss``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.testing.tools import (
    ProducedRecord,
    create_topic,
    delete_topic,
    list_topics,
    produce,
)

from .conftest import T0, ConformanceData
from .harness import (
    OURS,
    StreamRun,
    assert_rows_equal_batch_oracle,
    latest_offsets_reported,
    run_stream,
    start_stream,
)
from .test_batch_conformance import _delete_records

pytestmark = pytest.mark.integration


def ours(spark: SparkSession, bootstrap: str, checkpoint: Path, **options: str) -> StreamRun:
    return run_stream(spark, OURS, bootstrap, checkpoint, options)


def test_max_offsets_per_trigger_batches_and_reported_latest(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    run = ours(
        spark,
        kafka_bootstrap,
        tmp_path / "cp",
        subscribe=data.mixed,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="70",
    )
    assert run.error is None, run.error
    # 3 partitions x 100 offsets; each batch gives a partition floor(70 * backlog / total):
    # 23 while the backlogs are equal, then the last 8 of each.
    expected = [
        [(p, lo, hi, hi - lo + 1) for p in range(3)]
        for lo, hi in [(0, 22), (23, 45), (46, 68), (69, 91), (92, 99)]
    ]
    assert run.batches == expected
    assert_rows_equal_batch_oracle(spark, kafka_bootstrap, run.rows, subscribe=data.mixed)
    # reportLatestOffset: progress shows the latest offsets (the AvailableNow target).
    reported = latest_offsets_reported(run)
    assert reported == [{data.mixed: {"0": 100, "1": 100, "2": 100}}] * len(expected)


def test_available_now_reads_everything_in_one_batch(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    run = ours(
        spark,
        kafka_bootstrap,
        tmp_path / "cp",
        subscribePattern=data.pattern,
        startingOffsets="earliest",
    )
    assert run.error is None, run.error
    assert len(run.batches) == 1
    assert sum(n for *_, n in run.batches[0]) == 20
    assert_rows_equal_batch_oracle(spark, kafka_bootstrap, run.rows, subscribePattern=data.pattern)


def test_starting_timestamp_and_read_committed(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    options = {
        "subscribe": data.txn,
        "startingTimestamp": str(T0 + 5_000),
        "kafka.isolation.level": "read_committed",
    }
    run = ours(spark, kafka_bootstrap, tmp_path / "cp", maxOffsetsPerTrigger="15", **options)
    assert run.error is None, run.error
    # transaction 0 from its 6th record (5 rows), transactions 2 and 4 (20 rows)
    assert len(run.rows) == data.txn_committed - 5
    assert len(run.batches) >= 3  # 45 offsets (records and markers), at most 15 a batch
    assert_rows_equal_batch_oracle(spark, kafka_bootstrap, run.rows, **options)


def test_ending_offsets_rejected_in_streaming(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    run = ours(
        spark, kafka_bootstrap, tmp_path / "cp", subscribe=data.mixed, endingOffsets="latest"
    )
    assert run.error is not None and "endingOffsets" in run.error


def test_min_offsets_per_trigger_waits_for_enough_records(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(partitions=2)

    def write(start: int, n: int) -> None:
        produce(
            kafka_bootstrap,
            topic,
            [
                ProducedRecord(key=None, value=f"v{i}", partition=i % 2)
                for i in range(start, start + n)
            ],
        )

    write(0, 10)
    options = {
        "subscribe": topic,
        "startingOffsets": "earliest",
        "minOffsetsPerTrigger": "50",
        "maxTriggerDelay": "1h",
    }
    query, batches = start_stream(
        spark, OURS, kafka_bootstrap, tmp_path / "cp", options, processing_time="1 second"
    )
    try:

        def settle(expected_batches: int) -> None:
            deadline = time.monotonic() + 120
            while len(batches) < expected_batches:
                assert time.monotonic() < deadline, batches
                assert query.exception() is None, query.exception()
                time.sleep(0.5)

        settle(1)  # Spark lets the first trigger through (no batch yet within maxTriggerDelay)
        write(10, 30)  # 30 new records < 50: the source keeps waiting
        time.sleep(6)  # several 1 s triggers pass
        assert len(batches) == 1
        write(40, 30)  # 60 >= 50: the next trigger runs a batch
        settle(2)
    finally:
        query.stop()
    assert batches == [[(0, 0, 4, 5), (1, 0, 4, 5)], [(0, 5, 34, 30), (1, 5, 34, 30)]]


# -- data loss ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_offsets_deleted_between_batches(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
    fail_on_data_loss: str,
) -> None:
    topic = new_topic(partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"a{i}", partition=0) for i in range(20)])
    options = {"subscribe": topic, "startingOffsets": "earliest"}
    first = ours(spark, kafka_bootstrap, tmp_path / "cp", **options)
    assert first.batches == [[(0, 0, 19, 20)]]
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=0) for i in range(20)])
    _delete_records(kafka_bootstrap, topic, {0: 30})  # offsets 20..29 were never read

    second = ours(
        spark, kafka_bootstrap, tmp_path / "cp", failOnDataLoss=fail_on_data_loss, **options
    )
    if fail_on_data_loss == "true":
        assert second.error is not None
        assert f"{topic}-0" in second.error and "[20, 30)" in second.error
    else:
        assert second.error is None, second.error
        assert second.batches == [[(0, 30, 39, 10)]]
        assert_rows_equal_batch_oracle(
            spark,
            kafka_bootstrap,
            second.rows,
            subscribe=topic,
            startingOffsets=json.dumps({topic: {"0": 30}}),
        )


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_topic_deleted_and_recreated(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path, fail_on_data_loss: str
) -> None:
    topic = f"conf-recreated-{fail_on_data_loss}-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"a{i}", partition=0) for i in range(20)])
    options = {"subscribe": topic, "startingOffsets": "earliest"}
    first = ours(spark, kafka_bootstrap, tmp_path / "cp", **options)
    assert first.batches == [[(0, 0, 19, 20)]]

    delete_topic(kafka_bootstrap, topic)
    deadline = time.monotonic() + 60
    while topic in list_topics(kafka_bootstrap):
        assert time.monotonic() < deadline, "topic deletion did not finish"
        time.sleep(1)
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=0) for i in range(5)])

    second = ours(
        spark, kafka_bootstrap, tmp_path / "cp", failOnDataLoss=fail_on_data_loss, **options
    )
    if fail_on_data_loss == "true":
        assert second.error is not None
        assert f"{topic}-0" in second.error and "from 20 to 5" in second.error
        return
    # Spark's rule: warn, drop the range whose end fell below its start, go on from the new end
    assert second.error is None, second.error
    assert second.batches == []
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"c{i}", partition=0) for i in range(3)])
    third = ours(spark, kafka_bootstrap, tmp_path / "cp", failOnDataLoss="false", **options)
    assert third.error is None, third.error
    assert third.batches == [[(0, 5, 7, 3)]]
