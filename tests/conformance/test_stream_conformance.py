"""Streaming: ``spark.readStream.format("pykafka")`` vs ``spark.readStream.format("kafka")``.

Each scenario runs the same streaming query through both sources against the same topic, side
by side, each with its own checkpoint, and compares

* the rows all micro-batches delivered (chispa: every column, any order),
* the micro-batch structure where Spark defines it deterministically: per batch, the offsets
  and row count of every partition, the ``endOffset`` of every batch and the ``latestOffset``
  reported with it (``maxOffsetsPerTrigger``, ``minOffsetsPerTrigger``, ``Trigger.AvailableNow``),
* for failing queries (``failOnDataLoss=true``, rejected options), that both fail and the key
  facts of the message (the option, the topic-partition, the offsets); our wording differs by
  design.

Where the boundaries follow from Spark's rules by hand (``KafkaMicroBatchStream.rateLimit``,
``delayBatch``, ``reportDataLoss``) the scenarios check those too, so two equally wrong sources
cannot pass.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.testing.tools import (
    ProducedRecord,
    add_partitions,
    create_topic,
    delete_topic,
    list_topics,
    produce,
)

from .conftest import T0, ConformanceData
from .harness import (
    OURS,
    THEIRS,
    StreamRun,
    assert_same_stream,
    assert_same_stream_rows,
    run_streams,
    start_stream,
)
from .test_batch_conformance import _delete_records

pytestmark = pytest.mark.integration


def _both_fail(runs: dict[str, StreamRun], *facts: str) -> dict[str, str]:
    """Both queries failed and each error names every regex in ``facts``; returns the texts."""
    errors: dict[str, str] = {}
    for fmt, run in runs.items():
        assert run.error is not None, f"{fmt} did not fail: {run.batches}"
        for fact in facts:
            assert re.search(fact, run.error), (fmt, fact, run.error[:3000])
        errors[fmt] = run.error
    return errors


def test_max_offsets_per_trigger_batches_and_reported_latest(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    run = assert_same_stream(
        spark,
        kafka_bootstrap,
        tmp_path,
        subscribe=data.mixed,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="70",
    )
    # 3 partitions x 100 offsets; each batch gives a partition floor(70 * backlog / total):
    # 23 while the backlogs are equal, then the last 8 of each.
    expected = [
        [(p, lo, hi, hi - lo + 1) for p in range(3)]
        for lo, hi in [(0, 22), (23, 45), (46, 68), (69, 91), (92, 99)]
    ]
    assert run.batches == expected
    assert len(run.rows) == data.mixed_count
    # reportLatestOffset: every progress shows the latest offsets (the AvailableNow target).
    assert run.latest_offsets() == [{data.mixed: {"0": 100, "1": 100, "2": 100}}] * len(expected)


def test_available_now_reads_everything_in_one_batch(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    run = assert_same_stream(
        spark,
        kafka_bootstrap,
        tmp_path,
        subscribePattern=data.pattern,
        startingOffsets="earliest",
        includeHeaders="true",
        maxRecordsPerPartition="4",
    )
    assert len(run.batches) == 1
    assert len(run.rows) == 20
    assert {r["topic"] for r in run.rows} == {data.pattern_a, data.pattern_b}
    # maxRecordsPerPartition alone splits in streaming (offsets resolved): pattern_a-0 holds
    # 10 records -> ceil(10 / 4) = 3 tasks (3, 3, 4); pattern_b-0/-1 hold 5 -> 2 tasks (2, 3)
    a, b = data.pattern_a, data.pattern_b
    assert run.tasks == [
        sorted(
            [(a, 0, 0, 2, 3), (a, 0, 3, 5, 3), (a, 0, 6, 9, 4)]
            + [(b, p, lo, hi, hi - lo + 1) for p in (0, 1) for lo, hi in ((0, 1), (2, 4))]
        )
    ]


def test_starting_timestamp_and_read_committed(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    run = assert_same_stream(
        spark,
        kafka_bootstrap,
        tmp_path,
        subscribe=data.txn,
        startingTimestamp=str(T0 + 5_000),
        maxOffsetsPerTrigger="15",
        **{"kafka.isolation.level": "read_committed"},
    )
    # transaction 0 from its 6th record (5 rows), transactions 2 and 4 (20 rows)
    assert len(run.rows) == data.txn_committed - 5
    # offsets 5..54 (50 records and 5 markers), at most 15 a batch: 4 batches, some of
    # them holding only aborted records or markers (no rows, but an endOffset each)
    assert [e[data.txn]["0"] for e in run.end_offsets()] == [20, 35, 50, 55]


def test_ending_offsets_rejected_in_streaming(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    runs = run_streams(
        spark, kafka_bootstrap, tmp_path, {"subscribe": data.mixed, "endingOffsets": "latest"}
    )
    errors = _both_fail(runs, r"(?i)ending ?offset")
    assert "endingOffsets" in errors[OURS]  # ours names the option as written
    # A difference (docs/parity.md): Spark's source rejects the option in load(); ours only
    # when the query starts, because a Python DataSource learns batch vs streaming then.
    assert runs[THEIRS].failed_at_start
    assert not runs[OURS].failed_at_start
    assert "STREAM_FAILED" in errors[OURS]


def test_min_offsets_above_max_offsets_rejected(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, tmp_path: Path
) -> None:
    """Spark's ``validateStreamOptions``: ``minOffsetsPerTrigger`` above
    ``maxOffsetsPerTrigger`` fails, in both sources, with both values in the message."""
    runs = run_streams(
        spark,
        kafka_bootstrap,
        tmp_path,
        {"subscribe": data.mixed, "minOffsetsPerTrigger": "20", "maxOffsetsPerTrigger": "15"},
    )
    # Spark writes "minOffsetPerTrigger(20)"; ours spells the option as users write it.
    _both_fail(
        runs, r"minOffsets?PerTrigger ?\(20\) is higher than the " r"maxOffsetsPerTrigger ?\(15\)"
    )


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
    queries = {
        fmt: start_stream(
            spark, fmt, kafka_bootstrap, tmp_path / fmt, options, processing_time="1 second"
        )
        for fmt in (OURS, THEIRS)
    }
    try:

        def settle(expected_batches: int) -> None:
            deadline = time.monotonic() + 120
            for fmt, (query, collector) in queries.items():
                while len(collector.batches) < expected_batches:
                    assert time.monotonic() < deadline, (fmt, collector.batches)
                    assert query.exception() is None, (fmt, query.exception())
                    time.sleep(0.5)

        settle(1)  # Spark lets the first trigger through (no batch yet within maxTriggerDelay)
        write(10, 30)  # 30 new records < 50: the sources keep waiting
        time.sleep(6)  # several 1 s triggers pass
        assert {fmt: len(c.batches) for fmt, (_, c) in queries.items()} == {OURS: 1, THEIRS: 1}
        write(40, 30)  # 60 >= 50: the next trigger runs a batch
        settle(2)
    finally:
        for query, _ in queries.values():
            query.stop()
    expected = [[(0, 0, 4, 5), (1, 0, 4, 5)], [(0, 5, 34, 30), (1, 5, 34, 30)]]
    ours, theirs = (queries[fmt][1] for fmt in (OURS, THEIRS))
    assert ours.batches == theirs.batches == expected
    assert_same_stream_rows(spark, ours, theirs)


def test_available_now_with_min_offsets_per_trigger_differs(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    """A known difference (docs/parity.md): under ``Trigger.AvailableNow`` Spark's source still
    applies ``minOffsetsPerTrigger`` (``delayBatch``), so once the backlog falls below the
    minimum within ``maxTriggerDelay`` it offers no new data and the run ends short of its
    target (the rest waits for the next run); ours ignores the minimum under AvailableNow and
    reads up to the target. The batch both run is the same."""
    topic = new_topic(partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"v{i}", partition=0) for i in range(60)])
    options = {
        "subscribe": topic,
        "startingOffsets": "earliest",
        "maxOffsetsPerTrigger": "40",
        "minOffsetsPerTrigger": "30",
        "maxTriggerDelay": "1h",
    }
    runs = run_streams(spark, kafka_bootstrap, tmp_path, options)
    ours, theirs = runs[OURS], runs[THEIRS]
    assert ours.error is None and theirs.error is None, (ours.error, theirs.error)
    # first batch: let through (no batch yet), capped at 40; then 20 left < 30
    assert theirs.batches == [[(0, 0, 39, 40)]]
    assert ours.batches == [[(0, 0, 39, 40)], [(0, 40, 59, 20)]]
    assert theirs.end_offsets() == [{topic: {"0": 40}}]
    assert ours.end_offsets() == [{topic: {"0": 40}}, {topic: {"0": 60}}]
    first = StreamRun(
        batches=ours.batches[:1],
        progress=[],
        error=None,
        rows=[r for r in ours.rows if r["offset"] < 40],
        schema=ours.schema,
    )
    assert_same_stream_rows(spark, first, theirs)


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
    first = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert first.batches == [[(0, 0, 19, 20)]]
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=0) for i in range(20)])
    _delete_records(kafka_bootstrap, topic, {0: 30})  # offsets 20..29 were never read

    options["failOnDataLoss"] = fail_on_data_loss
    if fail_on_data_loss == "true":
        # the executor finds offset 20 gone: both fail naming the topic-partition and offset 20
        errors = _both_fail(
            run_streams(spark, kafka_bootstrap, tmp_path, options), rf"{topic}-0", r"\b20\b"
        )
        assert "[20, 30)" in errors[OURS]  # ours also names the lost range
    else:
        second = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
        assert second.batches == [[(0, 30, 39, 10)]]


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_topic_deleted_and_recreated(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path, fail_on_data_loss: str
) -> None:
    topic = f"conf-recreated-{fail_on_data_loss}-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"a{i}", partition=0) for i in range(20)])
    options = {"subscribe": topic, "startingOffsets": "earliest"}
    first = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert first.batches == [[(0, 0, 19, 20)]]

    delete_topic(kafka_bootstrap, topic)
    _wait_deleted(kafka_bootstrap, topic)
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=0) for i in range(5)])

    options["failOnDataLoss"] = fail_on_data_loss
    if fail_on_data_loss == "true":
        _both_fail(
            run_streams(spark, kafka_bootstrap, tmp_path, options),
            rf"{topic}-0",
            "from 20 to 5",
        )
        return
    # Spark's rule: warn, drop the range whose end fell below its start, go on from the new end
    second = assert_same_stream(spark, kafka_bootstrap, tmp_path, min_rows=0, **options)
    assert second.batches == []
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"c{i}", partition=0) for i in range(3)])
    third = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert third.batches == [[(0, 5, 7, 3)]]
    assert third.end_offsets() == [{topic: {"0": 8}}]


def _wait_deleted(bootstrap: str, topic: str) -> None:
    deadline = time.monotonic() + 60
    while topic in list_topics(bootstrap):
        assert time.monotonic() < deadline, "topic deletion did not finish"
        time.sleep(1)


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_new_partition_starting_above_zero(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path, fail_on_data_loss: str
) -> None:
    """A partition added between two runs whose log no longer starts at 0 when the query first
    sees it (Spark: "Added partition ... starts from 4 instead of 0")."""
    topic = f"conf-added-{fail_on_data_loss}-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"a{i}", partition=0) for i in range(10)])
    options = {"subscribe": topic, "startingOffsets": "earliest"}
    first = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert first.batches == [[(0, 0, 9, 10)]]

    add_partitions(kafka_bootstrap, topic, 2)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"b{i}", partition=1) for i in range(10)])
    _delete_records(kafka_bootstrap, topic, {1: 4})
    options["failOnDataLoss"] = fail_on_data_loss
    if fail_on_data_loss == "true":
        _both_fail(run_streams(spark, kafka_bootstrap, tmp_path, options), rf"{topic}-1", r"\b4\b")
        return
    # Spark's rule: warn and read the new partition from where its log starts now.
    second = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert second.batches == [[(1, 4, 9, 6)]]
    assert second.end_offsets() == [{topic: {"0": 10, "1": 10}}]


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_partitions_gone_when_a_matched_topic_is_deleted(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path, fail_on_data_loss: str
) -> None:
    """``subscribePattern`` over two topics, one deleted between two runs: its partition was
    planned and is gone (Spark: "Set(...-gone-0) are gone. Some data may have been missed")."""
    prefix = f"conf-pattern-{fail_on_data_loss}-{time.time_ns()}"
    kept, gone = f"{prefix}-kept", f"{prefix}-gone"
    for topic in (kept, gone):
        create_topic(kafka_bootstrap, topic, partitions=1)
        produce(kafka_bootstrap, topic, [ProducedRecord(None, f"{topic}-{i}") for i in range(5)])
    options = {"subscribePattern": f"{re.escape(prefix)}-.*", "startingOffsets": "earliest"}
    first = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert len(first.rows) == 10

    delete_topic(kafka_bootstrap, gone)
    _wait_deleted(kafka_bootstrap, gone)
    produce(kafka_bootstrap, kept, [ProducedRecord(None, f"more-{i}") for i in range(3)])
    options["failOnDataLoss"] = fail_on_data_loss
    if fail_on_data_loss == "true":
        _both_fail(run_streams(spark, kafka_bootstrap, tmp_path, options), rf"{gone}-0")
        return
    # Spark's rule: warn, drop the gone partition, go on with the others.
    second = assert_same_stream(spark, kafka_bootstrap, tmp_path, **options)
    assert sorted(r["value"].decode() for r in second.rows) == [f"more-{i}" for i in range(3)]
    assert second.end_offsets() == [{kept: {"0": 8}}]
