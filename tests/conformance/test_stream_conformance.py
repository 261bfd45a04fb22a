"""Streaming: ``spark.readStream.format("pykafka")`` vs ``format("kafka")``, micro-batch by
micro-batch.

Each scenario runs the same query through both sources (separate checkpoints, same topic) and
compares what every micro-batch read: per Kafka partition the first and last offset and the
row count. Progress reports (``reportLatestOffset``) and failures are compared too.
"""

from __future__ import annotations

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
from .harness import OURS, THEIRS, latest_offsets_reported, run_stream, start_stream
from .test_batch_conformance import _delete_records

pytestmark = pytest.mark.integration


def both(
    spark: SparkSession, bootstrap: str, tmp_path: Path, tag: str, **options: str
) -> dict[str, object]:
    return {
        fmt: run_stream(spark, fmt, bootstrap, tmp_path / f"{tag}-{fmt}", options)
        for fmt in (OURS, THEIRS)
    }


def test_max_offsets_per_trigger_same_batches_and_reported_latest(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    runs = both(
        spark, kafka_bootstrap, tmp_path, "max",
        subscribe=data.mixed, startingOffsets="earliest", maxOffsetsPerTrigger="70",
    )
    ours, theirs = runs[OURS], runs[THEIRS]
    assert ours.error is None and theirs.error is None, (ours.error, theirs.error)
    assert ours.batches == theirs.batches
    assert len(ours.batches) >= 4  # 300 records, at most 70 a batch
    assert sum(n for batch in ours.batches for *_, n in batch) == data.mixed_count
    assert all(sum(n for *_, n in batch) <= 70 for batch in ours.batches)
    # reportLatestOffset: progress shows the latest offsets (the AvailableNow target).
    reported = latest_offsets_reported(ours)
    assert reported == latest_offsets_reported(theirs)
    assert reported[-1] == {data.mixed: {"0": 100, "1": 100, "2": 100}}


def test_available_now_reads_everything_in_one_batch(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    runs = both(
        spark, kafka_bootstrap, tmp_path, "all",
        subscribePattern=data.pattern, startingOffsets="earliest",
    )
    assert runs[OURS].error is None and runs[THEIRS].error is None
    assert runs[OURS].batches == runs[THEIRS].batches
    assert len(runs[OURS].batches) == 1
    assert sum(n for *_, n in runs[OURS].batches[0]) == 20


def test_starting_timestamp_and_read_committed(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    runs = both(
        spark, kafka_bootstrap, tmp_path, "txn",
        subscribe=data.txn, startingTimestamp=str(T0 + 5_000), maxOffsetsPerTrigger="15",
        **{"kafka.isolation.level": "read_committed"},
    )
    assert runs[OURS].error is None and runs[THEIRS].error is None
    assert runs[OURS].batches == runs[THEIRS].batches
    # transaction 0 from its 6th record (5 rows), transactions 2 and 4 (20 rows)
    assert sum(n for b in runs[OURS].batches for *_, n in b) == data.txn_committed - 5


def test_ending_offsets_rejected_in_streaming(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    runs = both(
        spark, kafka_bootstrap, tmp_path, "end", subscribe=data.mixed, endingOffsets="latest"
    )
    assert runs[THEIRS].error is not None
    assert runs[OURS].error is not None and "endingOffsets" in runs[OURS].error


def test_min_offsets_per_trigger_waits_for_enough_records(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(partitions=2)

    def write(start: int, n: int) -> None:
        produce(kafka_bootstrap, topic,
                [ProducedRecord(key=None, value=f"v{i}", partition=i % 2)
                 for i in range(start, start + n)])

    write(0, 10)
    options = {
        "subscribe": topic, "startingOffsets": "earliest",
        "minOffsetsPerTrigger": "50", "maxTriggerDelay": "1h",
    }
    queries = {
        fmt: start_stream(spark, fmt, kafka_bootstrap, tmp_path / fmt, options,
                          processing_time="1 second")
        for fmt in (OURS, THEIRS)
    }
    try:
        def settle(expected_batches: int) -> None:
            deadline = time.monotonic() + 120
            while any(len(b) < expected_batches for _, b in queries.values()):
                assert time.monotonic() < deadline, {f: b for f, (_, b) in queries.items()}
                for q, _ in queries.values():
                    assert q.exception() is None, q.exception()
                time.sleep(0.5)

        settle(1)  # the first trigger runs at once (no batch yet within maxTriggerDelay)
        write(10, 30)  # 30 new records < 50: both sources keep waiting
        time.sleep(6)  # several 1 s triggers pass
        assert [len(b) for _, b in queries.values()] == [1, 1]
        write(40, 30)  # 60 >= 50: the next trigger runs a batch
        settle(2)
    finally:
        for q, _ in queries.values():
            q.stop()
    ours, theirs = queries[OURS][1], queries[THEIRS][1]
    assert ours == theirs
    assert [sum(n for *_, n in b) for b in ours] == [10, 60]


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
    first = both(spark, kafka_bootstrap, tmp_path, "dl", **options)
    assert first[OURS].batches == first[THEIRS].batches == [[(0, 0, 19, 20)]]
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=0) for i in range(20)])
    _delete_records(kafka_bootstrap, topic, {0: 30})  # offsets 20..29 were never read

    second = both(
        spark, kafka_bootstrap, tmp_path, "dl", failOnDataLoss=fail_on_data_loss, **options
    )
    if fail_on_data_loss == "true":
        assert second[THEIRS].error is not None
        assert second[OURS].error is not None
        assert f"{topic}-0" in second[OURS].error and "[20, 30)" in second[OURS].error
    else:
        assert second[OURS].error is None and second[THEIRS].error is None
        assert second[OURS].batches == second[THEIRS].batches == [[(0, 30, 39, 10)]]


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_topic_deleted_and_recreated(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path, fail_on_data_loss: str
) -> None:
    topic = f"conf-recreated-{fail_on_data_loss}-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"a{i}", partition=0) for i in range(20)])
    options = {"subscribe": topic, "startingOffsets": "earliest"}
    first = both(spark, kafka_bootstrap, tmp_path, "re", **options)
    assert first[OURS].batches == first[THEIRS].batches == [[(0, 0, 19, 20)]]

    delete_topic(kafka_bootstrap, topic)
    deadline = time.monotonic() + 60
    while topic in list_topics(kafka_bootstrap):
        assert time.monotonic() < deadline, "topic deletion did not finish"
        time.sleep(1)
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=0) for i in range(5)])

    second = both(
        spark, kafka_bootstrap, tmp_path, "re", failOnDataLoss=fail_on_data_loss, **options
    )
    if fail_on_data_loss == "true":
        assert second[THEIRS].error is not None
        assert second[OURS].error is not None
        assert f"{topic}-0" in second[OURS].error and "from 20 to 5" in second[OURS].error
    else:
        assert second[OURS].error is None and second[THEIRS].error is None, (
            second[OURS].error, second[THEIRS].error)
        assert second[OURS].batches == second[THEIRS].batches

