"""Streaming: sustained records/s with ``maxOffsetsPerTrigger`` (Trigger.AvailableNow into the
``noop`` sink), both sources, and the pykafka driver's planning time per micro-batch
(``latestOffset`` + ``partitions``) for 1, 100 and 1,000 partitions. Same as
``spark-kafka-py bench stream``.

Usage::

    python benchmarks/streaming.py [--records 5000000] [--codecs none]
        [--max-offsets-per-trigger 500000] [--planning-partitions 1,100,1000]
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult

__all__ = ["bench_planning", "bench_stream"]


def bench_stream(
    spark: Any,
    bootstrap: str,
    topic: str,
    records: int,
    record_bytes: int,
    max_offsets_per_trigger: int,
) -> list[BenchResult]:
    """Sustained streaming records/s with ``maxOffsetsPerTrigger`` (AvailableNow, noop sink).

    Sustained: the rows of every micro-batch after the first, over the sum of their
    ``triggerExecution`` durations (ms, from the query progress). The first batch also pays
    for starting the query and the Python workers (pykafka) or the consumers (kafka); that
    wall time is reported in the note, with the time to the end of the run. Before timing,
    each source runs one query from ``latest`` (no records): the session's one-time costs
    (PySpark looking up the Python data source, the first query's planning) stay out.
    """
    from pyspark.errors import StreamingQueryException

    out_runs: dict[str, list[float]] = {"pykafka": [], "kafka": []}
    notes = []
    for fmt in out_runs:
        checkpoint = tempfile.mkdtemp(prefix=f"bench-stream-warm-{fmt}-")
        try:
            (
                spark.readStream.format(fmt)
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .option("startingOffsets", "latest")
                .load()
                .writeStream.format("noop")
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
                .awaitTermination()
            )
        except StreamingQueryException:
            pass  # the timed run below reports it
        finally:
            shutil.rmtree(checkpoint, ignore_errors=True)
    for fmt in out_runs:
        checkpoint = tempfile.mkdtemp(prefix=f"bench-stream-{fmt}-")
        try:
            start = time.perf_counter()
            query = (
                spark.readStream.format(fmt)
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest")
                .option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
                .load()
                .writeStream.format("noop")
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            try:
                query.awaitTermination()
            except StreamingQueryException as exc:  # reported in the table, not hidden
                if fmt == "pykafka":
                    raise
                first = str(exc).splitlines()[0].split("terminated with exception: ")[-1]
                notes.append(f"built-in kafka streaming failed: {first}")
                continue
            wall = time.perf_counter() - start
            batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
            first_ms = batches[0]["durationMs"]["triggerExecution"] if batches else 0
            rest = batches[1:]
            rows = sum(p["numInputRows"] for p in rest)
            busy_s = sum(p["durationMs"]["triggerExecution"] for p in rest) / 1000
            if not rows or busy_s <= 0:
                raise RuntimeError(
                    f"{fmt}: need two micro-batches or more to measure sustained throughput; "
                    "lower --max-offsets-per-trigger"
                )
            # Seconds for all the records at the sustained rate (what the table divides by).
            out_runs[fmt].append(records * busy_s / rows)
            notes.append(
                f"{fmt}: sustained over batches 2-{len(batches)}; first batch "
                f"{first_ms / 1000:.1f} s, wall {wall:.1f} s from start() to the end (query "
                "and worker start-up included)"
            )
        finally:
            shutil.rmtree(checkpoint, ignore_errors=True)
    return [
        BenchResult(
            "stream",
            f"maxOffsetsPerTrigger={max_offsets_per_trigger}",
            "pykafka",
            "kafka (built-in)",
            records,
            records * record_bytes / 1e6,
            out_runs["pykafka"][0],
            out_runs["kafka"][0] if out_runs["kafka"] else None,
            out_runs,
            "; ".join(notes),
        )
    ]


def bench_planning(
    bootstrap: str, partition_counts: Sequence[int], repeat: int = 5
) -> list[BenchResult]:
    """The pykafka driver's planning time per micro-batch (``latestOffset`` + ``partitions``)
    for topics of each partition count (one record per partition), median of ``repeat``."""
    from spark_kafka_py.errors import KafkaApiError
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.source import KafkaStreamReader
    from spark_kafka_py.testing.tools import create_topic

    out = []
    for count in partition_counts:
        topic = f"bench-plan-{count}-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, partitions=count)
        options = parse_options(
            {
                "kafka.bootstrap.servers": bootstrap,
                "subscribe": topic,
                "maxOffsetsPerTrigger": "1000",
            },
            streaming=True,
        )
        reader = KafkaStreamReader(options)
        try:
            # A new topic's partitions get their leaders over a few seconds.
            deadline = time.monotonic() + 120
            while True:
                try:
                    start = reader.initialOffset()
                    reader.latestOffset(start, None)
                    break
                except KafkaApiError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(1)
            times = []
            from pyspark.sql.streaming.datasource import ReadMaxRows

            for _ in range(repeat + 1):
                t0 = time.perf_counter()
                end = reader.latestOffset(start, ReadMaxRows(1000))
                reader.partitions(start, end)
                times.append(time.perf_counter() - t0)
            times = times[1:]  # the first one connects
        finally:
            reader.stop()
        out.append(
            BenchResult(
                "planning",
                f"{count} partitions",
                "pykafka",
                "-",
                0,
                0.0,
                statistics.median(times),
                None,
                {"pykafka": times},
            )
        )
    return out


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["stream", *sys.argv[1:]]))
