"""The limit source of ``spark-kafka-py bench batch`` (:mod:`benchmarks.limit_source`) and the
batch table, without a broker or Spark session."""

from __future__ import annotations

import json

import pyarrow as pa

from benchmarks.batch_read import KAFKA_PEER, LIMIT_PEER, format_batch_table
from benchmarks.harness import BenchResult
from benchmarks.limit_source import LimitPartition, LimitReader, _build, build_batch
from spark_kafka_py.records.arrow import spark_kafka_schema


def test_batches_have_pykafkas_arrow_schema_and_shape():
    batch = build_batch(7, 16, 100, "bench-none")
    assert batch.schema.equals(spark_kafka_schema(False))
    assert batch.num_rows == 7
    assert {len(k) for k in batch.column("key").to_pylist()} == {16}
    assert {len(v) for v in batch.column("value").to_pylist()} == {100}
    assert set(batch.column("topic").to_pylist()) == {"bench-none"}
    assert batch.column("offset").to_pylist() == list(range(7))


def test_batches_are_slices_of_one_batch_per_process():
    big = build_batch(50, 8, 10, "slices")
    small = build_batch(20, 8, 10, "slices")
    assert small.num_rows == 20
    assert small.column("value").buffers()[2].address == big.column("value").buffers()[2].address
    assert build_batch(80, 8, 10, "slices").num_rows == 80  # built again, larger

    def ipc_size(batch: pa.RecordBatch) -> int:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        return sink.getvalue().size

    # only the slice is written to Spark: about a 20-row batch of its own, not 80 rows
    sliced = ipc_size(build_batch(20, 8, 10, "slices"))
    assert sliced < ipc_size(_build(20, 8, 10, "slices")) + 200 < ipc_size(_build(80, 8, 10, "x"))


def test_reader_plans_one_task_per_entry_with_those_batch_sizes():
    reader = LimitReader({"batches": json.dumps([[3, 2], [], [4]]), "topic": "t"})
    parts = reader.partitions()
    assert parts == [LimitPartition(0, (3, 2)), LimitPartition(1, ()), LimitPartition(2, (4,))]
    assert [b.num_rows for b in reader.read(parts[0])] == [3, 2]
    assert list(reader.read(parts[1])) == []


def test_batch_table_puts_the_limit_next_to_the_built_in_source():
    runs = {"pykafka": [1.0], "kafka": [3.0]}
    limit = {"limit": [0.8]}
    results = [
        BenchResult("batch", "none", "pykafka", KAFKA_PEER, 1000, 0.116, 1.0, 3.0, runs),
        BenchResult("batch", "none", "pykafka", LIMIT_PEER, 1000, 0.116, 1.0, 0.8, limit),
    ]
    row = "| none | 1,000 | 0.1 | 333 | 1,250 | **3.00** | **0.80** | 1.00 | 3.00 | 0.80 |"
    assert row in format_batch_table(results)


def test_batch_table_gives_each_sources_cpu_seconds():
    cpu = {"python workers": 0.4, "spark jvm": 0.6, "broker": 0.2}
    limit_cpu = {"python workers": 0.25, "spark jvm": 0.65}
    results = [
        BenchResult(
            "batch", "zstd", "pykafka", LIMIT_PEER, 10, 0.1, 1.0, 0.9, {"limit": [0.9]},
            cpu={"pykafka": cpu, "limit": limit_cpu},
        )
    ]  # fmt: skip
    table = format_batch_table(results)
    assert "| zstd | pykafka | 0.40 | 0.60 | 0.20 | 1.20 | 1.00 |" in table
    assert "| zstd | limit | 0.25 | 0.65 | 0.00 | 0.90 | 0.75 |" in table
