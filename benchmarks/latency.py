"""End-to-end latency of a streaming read at a steady rate: ``format("pykafka")`` next to Spark's
built-in ``format("kafka")``. Same as ``spark-kafka-py bench latency``.

For each source in turn: a fresh topic (``--partitions``), a streaming query from ``latest``
with the default trigger (a micro-batch as soon as the previous one ended) into a
``foreachBatch`` sink, 100 warm-up records through it (the first micro-batch with rows starts
a Python source's Python workers, once per session; left out), then Kafka's
``ProducerPerformance`` writing ``--rate`` records/s of ``--value-size`` bytes for
``--seconds`` (``acks=1``, ``linger.ms=0``; the producer sets each record's CreateTime when it
is sent). The sink collects each micro-batch's ``timestamp`` column to the driver (Arrow) and
takes, per row, the wall clock at the moment the batch arrived minus the record's CreateTime:
the latency of that record from its producer to the driver. Rows created in the first
``--warm-up-s`` seconds are left out (the producer's start). Reported: p50, p99 and max over
the rows, rows and micro-batches, pykafka / built-in for p50 and p99 (below 1: pykafka is
faster), each source's median ``durationMs`` per micro-batch and the pykafka reader's driver
calls.

Usage::

    python benchmarks/latency.py [--rate 2000] [--seconds 60] [--partitions 4]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

__all__ = ["LatencyResult", "bench_latency", "format_e2e_latency_table", "percentiles"]

#: The sources, in the order they run in each round.
LATENCY_SOURCES = ("pykafka", "kafka")
#: Their names in the table.
SOURCE_NAMES = {"pykafka": "pykafka", "kafka": "kafka (built-in)"}
#: Records sent through each query before the timed producer starts (left out).
WARM_UP_RECORDS = 100
#: ``durationMs`` entries of the query progress reported per source (medians over the
#: micro-batches with rows).
DURATION_KEYS = ("latestOffset", "walCommit", "queryPlanning", "addBatch", "commitOffsets",
                 "triggerExecution")  # fmt: skip
#: Seconds a query may take to catch up with the producer's last record before it is stopped.
CATCH_UP_S = 60.0


@dataclass
class LatencyResult:
    """Latency of one source at one rate (all its rounds together).

    Attributes:
        source: ``format()`` name.
        rate: records/s the producer was asked for.
        seconds: seconds each round produced for.
        produced: records produced, all rounds.
        rows: rows the sink saw, all rounds (must equal ``produced``).
        measured: rows counted in the percentiles (created after the warm-up).
        batches: micro-batches with rows.
        p50_ms, p99_ms, max_ms: record CreateTime to its batch on the driver, ms.
        batch_rows_median: rows of the median micro-batch.
        runs: per round: p50, p99, max (ms) and rows.
        durations_ms: median ``durationMs`` per :data:`DURATION_KEYS` entry over the
            micro-batches with rows (medians of the rounds).
        reader_ms: ``format("pykafka")`` with driver timings on
            (:func:`benchmarks.streaming.enable_driver_timings`): median ms per call of the
            stream reader's driver-side methods, and ``<call> count``.
    """

    source: str
    rate: int
    seconds: float
    produced: int
    rows: int
    measured: int
    batches: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    batch_rows_median: float
    runs: list[dict[str, float]] = field(default_factory=list)
    durations_ms: dict[str, float] = field(default_factory=dict)
    reader_ms: dict[str, float] = field(default_factory=dict)


def percentiles(latencies_ms: np.ndarray) -> tuple[float, float, float]:
    """``(p50, p99, max)`` of ``latencies_ms`` (linear interpolation); zeros when empty."""
    if latencies_ms.size == 0:
        return 0.0, 0.0, 0.0
    p50, p99 = np.percentile(latencies_ms, [50, 99])
    return float(p50), float(p99), float(latencies_ms.max())


class _Collector:
    """The ``foreachBatch`` function: per micro-batch, the driver's clock minus each row's
    CreateTime (ms), and the batch's row count."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.created_ms: list[np.ndarray] = []
        self.latency_ms: list[np.ndarray] = []
        self.batch_rows: list[int] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        table = df.selectExpr("unix_millis(timestamp) AS ts").toArrow()
        arrived_ms = time.time() * 1000
        created = table.column("ts").to_numpy().astype(np.float64)
        if created.size == 0:
            return
        with self.lock:
            self.created_ms.append(created)
            self.latency_ms.append(arrived_ms - created)
            self.batch_rows.append(int(created.size))

    def rows(self) -> int:
        with self.lock:
            return sum(self.batch_rows)

    def reset(self) -> None:
        with self.lock:
            self.created_ms.clear()
            self.latency_ms.clear()
            self.batch_rows.clear()


def _round(
    spark: Any,
    bootstrap: str,
    fmt: str,
    rate: int,
    seconds: float,
    partitions: int,
    value_size: int,
) -> tuple[int, _Collector, float, dict[str, float]]:
    """One source, one producer run; returns (records produced, collector, producer start
    time in epoch ms, median ``durationMs`` of the query's micro-batches with rows).

    Before the timed producer, :data:`WARM_UP_RECORDS` records go through the query (their
    micro-batch starts the Python workers of a Python source, once per session) and are left
    out.
    """
    from spark_kafka_py.testing.tools import create_topic, produce_perf

    topic = f"bench-latency-{fmt}-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, partitions=partitions)
    collector = _Collector()
    checkpoint = tempfile.mkdtemp(prefix=f"bench-latency-{fmt}-")
    produced = int(rate * seconds)
    try:
        query = (
            spark.readStream.format(fmt)
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "latest")
            .load()
            .writeStream.foreachBatch(collector)
            .option("checkpointLocation", checkpoint)
            .start()
        )
        try:
            # the query runs (its first micro-batch fixed the start offsets) before producing
            deadline = time.monotonic() + 120
            while query.lastProgress is None and time.monotonic() < deadline:
                if (failure := query.exception()) is not None:
                    raise failure
                time.sleep(0.2)
            produce_perf(bootstrap, topic, WARM_UP_RECORDS, value_size)
            deadline = time.monotonic() + 120
            while collector.rows() < WARM_UP_RECORDS and time.monotonic() < deadline:
                if (failure := query.exception()) is not None:
                    raise failure
                time.sleep(0.2)
            collector.reset()
            warm_batches = len(query.recentProgress)
            started_ms = time.time() * 1000
            produce_perf(
                bootstrap,
                topic,
                produced,
                value_size,
                extra_props={"linger.ms": "0"},
                throughput=rate,
                timeout_s=seconds * 3 + 120,
            )
            deadline = time.monotonic() + CATCH_UP_S
            while collector.rows() < produced and time.monotonic() < deadline:
                if (failure := query.exception()) is not None:
                    raise failure
                time.sleep(0.2)
            timed = [p for p in query.recentProgress[warm_batches:] if p["numInputRows"] > 0]
        finally:
            query.stop()
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    durations = {
        key: float(np.median([p["durationMs"].get(key, 0) for p in timed])) if timed else 0.0
        for key in DURATION_KEYS
    }
    return produced, collector, started_ms, durations


def bench_latency(
    spark: Any,
    bootstrap: str,
    *,
    rate: int = 2000,
    seconds: float = 60.0,
    partitions: int = 4,
    value_size: int = 100,
    warm_up_s: float = 5.0,
    repeat: int = 1,
    sources: Sequence[str] = LATENCY_SOURCES,
    timings: Path | None = None,
) -> list[LatencyResult]:
    """Latency from record CreateTime to the driver, per source (see the module docstring);
    ``repeat`` rounds, the sources alternating.

    Raises:
        StreamingQueryException: a query failed.
        spark_kafka_py.testing.tools.KafkaToolError: the producer failed.
    """
    from benchmarks.streaming import read_timings, reader_medians

    rounds: dict[str, list[tuple[int, _Collector, float, dict[str, float]]]] = {
        s: [] for s in sources
    }
    calls: dict[str, list[dict[str, Any]]] = {s: [] for s in sources}
    for _ in range(repeat):
        for fmt in sources:
            _, before = read_timings(timings, 0)
            rounds[fmt].append(_round(spark, bootstrap, fmt, rate, seconds, partitions, value_size))
            calls[fmt] += read_timings(timings, before)[0]
    out = []
    for fmt, done in rounds.items():
        measured: list[np.ndarray] = []
        runs = []
        rows = produced = batches = 0
        sizes: list[int] = []
        for count, collector, started_ms, _ in done:
            produced += count
            rows += collector.rows()
            batches += len(collector.batch_rows)
            sizes += collector.batch_rows
            if collector.created_ms:
                created = np.concatenate(collector.created_ms)
                latency = np.concatenate(collector.latency_ms)
                kept = latency[created >= started_ms + warm_up_s * 1000]
            else:
                kept = np.zeros(0)
            measured.append(kept)
            p50, p99, mx = percentiles(kept)
            runs.append({"p50_ms": p50, "p99_ms": p99, "max_ms": mx, "rows": collector.rows()})
        all_ms = np.concatenate(measured) if measured else np.zeros(0)
        p50, p99, mx = percentiles(all_ms)
        out.append(
            LatencyResult(
                fmt,
                rate,
                seconds,
                produced,
                rows,
                int(all_ms.size),
                batches,
                p50,
                p99,
                mx,
                float(np.median(sizes)) if sizes else 0.0,
                runs,
                {
                    key: float(np.median([d[3][key] for d in done])) if done else 0.0
                    for key in DURATION_KEYS
                },
                reader_medians(calls[fmt]),
            )
        )
    return out


def format_e2e_latency_table(results: Sequence[LatencyResult]) -> str:
    """Markdown: per source p50, p99, max (ms), rows, micro-batches; then pykafka / built-in
    for p50 and p99 (below 1: pykafka's records reach the driver sooner)."""
    lines = [
        "| source | rate records/s | p50 ms | p99 ms | max ms | rows (produced) | "
        "micro-batches | rows per batch (median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {SOURCE_NAMES.get(r.source, r.source)} | {r.rate:,} | {r.p50_ms:,.0f} | "
            f"{r.p99_ms:,.0f} | {r.max_ms:,.0f} | {r.rows:,} ({r.produced:,}) | {r.batches:,} | "
            f"{r.batch_rows_median:,.0f} |"
        )
    notes = []
    by = {r.source: r for r in results}
    ours, peer = by.get("pykafka"), by.get("kafka")
    if ours and peer and peer.p50_ms and peer.p99_ms:
        notes.append(
            f"- pykafka / built-in: p50 {ours.p50_ms / peer.p50_ms:.2f}, "
            f"p99 {ours.p99_ms / peer.p99_ms:.2f} (below 1: pykafka is faster)"
        )
    for r in results:
        if r.durations_ms:
            notes.append(
                f"- {SOURCE_NAMES.get(r.source, r.source)} micro-batch durationMs (median): "
                + ", ".join(f"{k} {v:,.0f}" for k, v in r.durations_ms.items())
            )
    for r in results:
        timed = [k for k in r.reader_ms if not k.endswith(" count")]
        if timed:
            notes.append(
                f"- {SOURCE_NAMES.get(r.source, r.source)} reader (driver), median per call: "
                + ", ".join(f"{k} {r.reader_ms[k]:.2f} ms" for k in timed)
            )
    return "\n".join(lines + (["", *notes] if notes else []))


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["latency", *sys.argv[1:]]))
