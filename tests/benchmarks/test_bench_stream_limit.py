"""``spark-kafka-py bench stream`` (with the limit of a Python stream reader) and ``bench
latency``: the limit reader's offsets against pykafka's rules, the tables, and both benchmarks
at a tiny scale in the tests' Spark session (smoke: every source ran and counted every record;
never how fast)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from benchmarks.harness import BenchResult, produce_bench_data
from benchmarks.latency import LatencyResult, bench_latency, format_e2e_latency_table, percentiles
from benchmarks.limit_stream_source import LimitPartition, LimitStreamReader, prebuilt_batch
from benchmarks.streaming import (
    StreamRun,
    bench_stream,
    format_breakdown_table,
    format_stream_table,
)
from spark_kafka_py.cli import build_parser
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.records.arrow import spark_kafka_schema
from spark_kafka_py.spark.source import rate_limit


def limit_reader(**opts: str) -> LimitStreamReader:
    base = {"topic": "t", "endOffsets": json.dumps({"0": 1000, "1": 10, "2": 0})}
    return LimitStreamReader({**base, **opts})


def test_limit_reader_offsets_follow_pykafka_rate_limit() -> None:
    r = limit_reader(maxOffsetsPerTrigger="100")
    start = r.initialOffset()
    assert start == {"t": {"0": 0, "1": 0, "2": 0}}
    assert r.getDefaultReadLimit() == ReadMaxRows(100)
    r.prepareForTriggerAvailableNow()
    end = r.latestOffset(start, ReadMaxRows(100))
    ends = {TopicPartition("t", p): e for p, e in ((0, 1000), (1, 10), (2, 0))}
    expected = rate_limit(100, dict.fromkeys(ends, 0), ends)
    assert end == {"t": {str(tp.partition): off for tp, off in expected.items()}}
    assert r.latestOffset(start, ReadAllAvailable()) == {"t": {"0": 1000, "1": 10, "2": 0}}


def test_limit_reader_yields_batches_of_the_planned_rows() -> None:
    r = limit_reader(batchRows="64")
    parts = r.partitions({"t": {"0": 0, "1": 5, "2": 0}}, {"t": {"0": 150, "1": 10, "2": 0}})
    assert parts == [
        LimitPartition("t", 0, 0, 150, 64, 16, 100),
        LimitPartition("t", 1, 5, 10, 64, 16, 100),
    ]
    batches = list(r.read(parts[0]))
    assert [b.num_rows for b in batches] == [64, 64, 22]
    assert batches[0].schema == spark_kafka_schema(False)
    assert len(batches[0].column("value")[0].as_py()) == 100
    assert prebuilt_batch("t", 0, 64, 16, 100) is batches[0]  # built once per worker


def test_stream_tables_have_the_limit_and_both_ratios() -> None:
    case = "maxOffsetsPerTrigger=1000"
    results = [
        BenchResult("stream", case, "pykafka", "kafka", 4000, 0.5, 2.0, 4.0),
        BenchResult("stream-limit", case, "pykafka", "limit", 4000, 0.5, 2.0, 1.6),
    ]
    table = format_stream_table(results)
    assert "| 1,000 | 2,500 | 2,000 | 1,000 | 0.80 | 2.00 |" in table
    runs = [
        StreamRun(
            "pykafka", 1000, 4000, 4, 2.0, 900.0, 5.0,
            {"latestOffset": 2, "walCommit": 10, "queryPlanning": 3, "getBatch": 0,
             "addBatch": 400, "commitOffsets": 8, "triggerExecution": 430, "other": 7},
            {"latestOffset": 0.5, "latestOffset count": 4.0},
        )
    ]  # fmt: skip
    breakdown = format_breakdown_table(runs)
    assert "| 1,000 | pykafka | 2 | 10 | 3 | 0 | 400 | 8 | 430 | 7 |" in breakdown
    assert "latestOffset 0.50 ms" in breakdown


def test_latency_percentiles_and_table() -> None:
    assert percentiles(np.arange(1, 101, dtype=np.float64))[2] == 100.0
    assert percentiles(np.zeros(0)) == (0.0, 0.0, 0.0)
    results = [
        LatencyResult("pykafka", 2000, 60, 100, 100, 90, 10, 200.0, 400.0, 500.0, 10.0),
        LatencyResult("kafka", 2000, 60, 100, 100, 90, 10, 400.0, 500.0, 600.0, 10.0),
    ]
    table = format_e2e_latency_table(results)
    assert "| pykafka | 2,000 | 200 | 400 | 500 | 100 (100) | 10 | 10 |" in table
    assert "p50 0.50, p99 0.80" in table


def test_cli_registers_latency_and_several_triggers() -> None:
    args = build_parser().parse_args(
        ["bench", "stream", "latency", "--max-offsets-per-trigger", "9,3", "--rate", "50"]
    )
    assert args.which == ["stream", "latency"] and args.rate == 50
    assert args.max_offsets_per_trigger == "9,3" and args.seconds == 60.0


@pytest.mark.integration
# long (issue 25 / suite time, 46 s): `bench all` in test_bench_smoke.py runs the same
# bench_stream, three sources, and checks every source counted every record
@pytest.mark.long
def test_bench_stream_limit_at_tiny_scale(spark, kafka_bootstrap, new_topic) -> None:
    topic = new_topic(partitions=2)
    produce_bench_data(kafka_bootstrap, topic, 600, partitions=2, create=False)
    results, runs = bench_stream(spark, kafka_bootstrap, topic, 600, 116, [250], warm_up=False)
    assert {r.source for r in runs} == {"pykafka_stream_limit", "pykafka", "kafka"}
    for r in runs:  # every source counted every record, in more than one micro-batch
        assert r.rows == 600 and r.batches >= 3, r
        assert r.durations_ms["triggerExecution"] > 0
    by_bench = {r.bench: r for r in results}
    assert by_bench["stream-limit"].ratio and by_bench["stream"].ratio
    assert "| 250 |" in format_stream_table(results)


@pytest.mark.integration
# long (issue 25 / suite time, 23 s), as the other benchmarks' tiny runs besides `bench all`
# (README); its percentiles and table stay in the default run (test_latency_percentiles_...)
@pytest.mark.long
def test_bench_latency_at_tiny_scale(spark, kafka_bootstrap) -> None:
    results = bench_latency(spark, kafka_bootstrap, rate=200, seconds=3, partitions=2, warm_up_s=0)
    assert [r.source for r in results] == ["pykafka", "kafka"]
    for r in results:
        assert r.rows == r.produced == 600 and r.measured == 600, r
        assert 0 < r.p50_ms <= r.p99_ms <= r.max_ms
