"""Streaming: sustained records/s with ``maxOffsetsPerTrigger`` (Trigger.AvailableNow into the
``noop`` sink) of ``format("pykafka")``, Spark's built-in ``format("kafka")`` and the limit of a
Python stream reader (:mod:`benchmarks.limit_stream_source`), where each micro-batch's time
goes. Same as ``spark-kafka-py bench stream`` (the driver's planning time per micro-batch:
``spark-kafka-py bench planning``, :mod:`benchmarks.planning`).

Usage::

    python benchmarks/streaming.py [--records 3000000] [--codecs none]
        [--max-offsets-per-trigger 250000,25000]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult
from benchmarks.limit_stream_source import LIMIT_FORMAT
from benchmarks.limit_stream_source import register as register_limit
from spark_kafka_py.spark.stream_timings import STREAM_TIMINGS_ENV

__all__ = [
    "DURATION_KEYS",
    "StreamRun",
    "bench_stream",
    "driver_calls_ms",
    "enable_driver_timings",
    "format_breakdown_table",
    "format_driver_calls",
    "format_stream_table",
]

#: The sources of the streaming benchmark, in the order they run in each round.
STREAM_SOURCES = (LIMIT_FORMAT, "pykafka", "kafka")
#: Their names in the tables.
SOURCE_NAMES = {LIMIT_FORMAT: "limit", "pykafka": "pykafka", "kafka": "kafka (built-in)"}
#: Spark's per-micro-batch ``durationMs`` entries of the query progress, in the order of a
#: micro-batch (``MicroBatchExecution``): ask the sources for offsets, write the offset log,
#: plan, run the batch (the sink's job, reading included), write the commit log.
DURATION_KEYS = (
    "latestOffset",
    "walCommit",
    "queryPlanning",
    "getBatch",
    "addBatch",
    "commitOffsets",
    "triggerExecution",
)
#: Progress entries a query keeps (``spark.sql.streaming.numRecentProgressUpdates``) while the
#: benchmark runs: every micro-batch of a run at a small trigger.
PROGRESS_KEPT = 100_000


def enable_driver_timings() -> Path:
    """Make ``format("pykafka")``'s stream readers of Spark sessions started from now on time
    their driver-side calls (one JSON line per call, in the file of
    :data:`~spark_kafka_py.spark.stream_timings.STREAM_TIMINGS_ENV`). Call before the session
    starts: its JVM passes its environment on to the driver-side Python process of each stream
    reader. Returns the file."""
    existing = os.environ.get(STREAM_TIMINGS_ENV)
    if existing:
        return Path(existing)
    handle, name = tempfile.mkstemp(prefix="spark-kafka-py-stream-timings-", suffix=".jsonl")
    os.close(handle)
    os.environ[STREAM_TIMINGS_ENV] = name
    return Path(name)


@dataclass
class StreamRun:
    """One streaming query of the benchmark, to its end.

    Attributes:
        source: ``format()`` name.
        trigger: ``maxOffsetsPerTrigger`` (records).
        rows: rows of all its micro-batches (``numInputRows``).
        batches: micro-batches with rows.
        sustained_s: seconds the ``records`` of the run take at the sustained rate: rows of
            micro-batches 2..n over the sum of their ``triggerExecution`` ms.
        first_batch_ms: ``triggerExecution`` of the first micro-batch with rows.
        wall_s: from ``start()`` to the end of the query.
        durations_ms: median over micro-batches 2..n of each :data:`DURATION_KEYS` entry, and
            ``other``: of ``triggerExecution`` minus the others.
        reader_ms: ``format("pykafka")`` only, with driver timings on: median ms per call of
            the stream reader's driver-side methods during the run, and ``<call> count``.
    """

    source: str
    trigger: int
    rows: int
    batches: int
    sustained_s: float
    first_batch_ms: float
    wall_s: float
    durations_ms: dict[str, float] = field(default_factory=dict)
    reader_ms: dict[str, float] = field(default_factory=dict)


def read_timings(path: Path | None, skip: int) -> tuple[list[dict[str, Any]], int]:
    """The timing lines of ``path`` after the first ``skip``, and the new line count."""
    if path is None or not path.exists():
        return [], skip
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[skip:] if line.strip()], len(lines)


def reader_medians(entries: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Median ms per call name of timing lines, and ``<call> count``."""
    calls: dict[str, list[float]] = {}
    for e in entries:
        calls.setdefault(e["call"], []).append(float(e["ms"]))
    out: dict[str, float] = {}
    for name, ms in sorted(calls.items()):
        out[name] = statistics.median(ms)
        out[f"{name} count"] = float(len(ms))
    return out


def _warm_up(spark: Any, fmt: str, options: dict[str, str]) -> None:
    """One query from ``latest`` (no records): the session's one-time costs of ``fmt``
    (PySpark looking up the Python data source, the first query's planning) stay out of the
    timed runs."""
    from pyspark.errors import StreamingQueryException

    checkpoint = tempfile.mkdtemp(prefix=f"bench-stream-warm-{fmt}-")
    try:
        reader = spark.readStream.format(fmt)
        for k, v in options.items():
            reader = reader.option(k, v)
        (
            reader.load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
            .awaitTermination()
        )
    except StreamingQueryException:
        pass  # the timed run reports it
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def _run(
    spark: Any,
    fmt: str,
    options: dict[str, str],
    trigger: int,
    records: int,
    timings: Path | None,
) -> StreamRun:
    """One AvailableNow query of ``fmt`` into the noop sink, from the earliest offsets.

    Raises:
        StreamingQueryException: the query failed.
        RuntimeError: fewer than two micro-batches (no sustained rate).
    """
    _, before = read_timings(timings, 0)
    checkpoint = tempfile.mkdtemp(prefix=f"bench-stream-{fmt}-")
    try:
        start = time.perf_counter()
        reader = spark.readStream.format(fmt)
        for k, v in {**options, "maxOffsetsPerTrigger": str(trigger)}.items():
            reader = reader.option(k, v)
        query = (
            reader.load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        wall = time.perf_counter() - start
        batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    rest = batches[1:]
    rows = sum(p["numInputRows"] for p in rest)
    busy_s = sum(p["durationMs"]["triggerExecution"] for p in rest) / 1000
    if not rows or busy_s <= 0:
        raise RuntimeError(
            f"{fmt}: need two micro-batches or more to measure sustained throughput; "
            "lower --max-offsets-per-trigger"
        )
    durations = {
        key: statistics.median(p["durationMs"].get(key, 0) for p in rest) for key in DURATION_KEYS
    }
    # the rest of each micro-batch (between Spark's timed phases: progress, listeners ...)
    durations["other"] = statistics.median(
        p["durationMs"].get("triggerExecution", 0)
        - sum(p["durationMs"].get(k, 0) for k in DURATION_KEYS[:-1])
        for p in rest
    )
    entries, _ = read_timings(timings, before) if fmt == "pykafka" else ([], 0)
    return StreamRun(
        fmt,
        trigger,
        sum(p["numInputRows"] for p in batches),
        len(batches),
        records * busy_s / rows,
        batches[0]["durationMs"]["triggerExecution"] if batches else 0.0,
        wall,
        durations,
        reader_medians(entries),
    )


def pykafka_batch_rows(options: dict[str, str], rows: int) -> int:
    """Rows of a full Arrow batch as ``format("pykafka")``'s executors yield them: the
    largest batch of a read of partition 0's first ``rows`` records with ``options``, on this
    process (the same read path as an executor's)."""
    from spark_kafka_py.consumer.fetcher import read_range
    from spark_kafka_py.consumer.types import TopicPartition
    from spark_kafka_py.spark.options import parse_options

    parsed = parse_options(options, streaming=True)
    tp = TopicPartition(options["subscribe"], 0)
    sizes = [b.num_rows for b in read_range(parsed.consumer, tp, 0, rows)]
    return max(sizes) if sizes else 1


def end_offsets(options: dict[str, str]) -> dict[int, int]:
    """``{partition: latest offset}`` of the subscribed topic (Metadata + ListOffsets)."""
    from spark_kafka_py.consumer.types import LATEST_TIMESTAMP
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.planner import Planner

    planner = Planner(parse_options(options, streaming=True))
    try:
        leaders, _ = planner.topic_partitions()
        latest = planner.list_offsets(dict.fromkeys(leaders, LATEST_TIMESTAMP))
    finally:
        planner.close()
    return {tp.partition: off for tp, off in latest.items()}


def bench_stream(
    spark: Any,
    bootstrap: str,
    topic: str,
    records: int,
    record_bytes: int,
    triggers: Sequence[int],
    *,
    repeat: int = 1,
    key_size: int = 16,
    value_size: int = 100,
    timings: Path | None = None,
    warm_up: bool = True,
) -> tuple[list[BenchResult], list[StreamRun]]:
    """Sustained streaming records/s with ``maxOffsetsPerTrigger`` (AvailableNow, noop sink)
    of the limit, ``pykafka`` and ``kafka``, at each of ``triggers`` records per micro-batch.

    Sustained: the rows of every micro-batch after the first, over the sum of their
    ``triggerExecution`` durations (ms, from the query progress). The first batch also pays
    for starting the query and the Python workers (pykafka, limit) or the consumers (kafka);
    that wall time is reported in the note. Before timing, each source runs one query with no
    records (not with ``warm_up=False``, as in the smoke test). Then, per trigger size,
    ``repeat`` rounds of one query per source, each round starting with the next source; the
    table gives medians.

    The limit (:mod:`benchmarks.limit_stream_source`) gets the topic's partitions and end
    offsets (read once here) and the Arrow batch size pykafka's executors yield
    (:func:`pykafka_batch_rows`).

    Returns:
        Per trigger size two :class:`BenchResult` s, ``stream`` (pykafka against the
        built-in) and ``stream-limit`` (pykafka against the limit: its ratio is
        pykafka / limit), and every :class:`StreamRun`.

    Raises:
        StreamingQueryException: a pykafka or limit query failed (a failed built-in query is
            reported in the note).
    """
    from pyspark.errors import StreamingQueryException

    register_limit(spark)
    kafka_options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
    ends = end_offsets(kafka_options)
    share = max(1, min(triggers) // max(1, len(ends)))
    batch_rows = pykafka_batch_rows(kafka_options, min(ends.get(0, 0), max(share, 100_000)))
    options = {
        LIMIT_FORMAT: {
            "topic": topic,
            "endOffsets": json.dumps({str(p): e for p, e in ends.items()}),
            "batchRows": str(batch_rows),
            "keySize": str(key_size),
            "valueSize": str(value_size),
        },
        "pykafka": {**kafka_options, "startingOffsets": "earliest"},
        "kafka": {**kafka_options, "startingOffsets": "earliest"},
    }
    kept = spark.conf.get("spark.sql.streaming.numRecentProgressUpdates", None)
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", str(PROGRESS_KEPT))
    try:
        for fmt in STREAM_SOURCES if warm_up else ():
            warm = dict(options[fmt])
            if fmt == LIMIT_FORMAT:
                warm["endOffsets"] = json.dumps(dict.fromkeys(map(str, ends), 0))
            else:
                warm["startingOffsets"] = "latest"
            _warm_up(spark, fmt, warm)
        runs: list[StreamRun] = []
        failed: dict[int, str] = {}
        for trigger in triggers:
            for round_ in range(repeat):
                # each round starts with another source: a busy spell of the machine does
                # not always fall on the same one
                shift = round_ % len(STREAM_SOURCES)
                for fmt in STREAM_SOURCES[shift:] + STREAM_SOURCES[:shift]:
                    if fmt == "kafka" and trigger in failed:
                        continue
                    try:
                        runs.append(_run(spark, fmt, options[fmt], trigger, records, timings))
                    except StreamingQueryException as exc:
                        if fmt != "kafka":
                            raise
                        first = str(exc).splitlines()[0]
                        failed[trigger] = first.split("terminated with exception: ")[-1]
    finally:
        if kept is None:
            spark.conf.unset("spark.sql.streaming.numRecentProgressUpdates")
        else:
            spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", kept)
    results = []
    for trigger in triggers:
        secs = {
            fmt: [r.sustained_s for r in runs if r.source == fmt and r.trigger == trigger]
            for fmt in STREAM_SOURCES
        }
        med = {fmt: statistics.median(s) if s else None for fmt, s in secs.items()}
        notes = [
            f"{SOURCE_NAMES[r.source]}: {r.rows:,} rows in {r.batches} micro-batches, "
            f"first {r.first_batch_ms / 1000:.1f} s, wall {r.wall_s:.1f} s"
            for r in runs
            if r.trigger == trigger
        ]
        if trigger in failed:
            notes.append(f"built-in kafka streaming failed: {failed[trigger]}")
        case = f"maxOffsetsPerTrigger={trigger}"
        mbytes = records * record_bytes / 1e6
        results.append(
            BenchResult(
                "stream",
                case,
                "pykafka",
                "kafka (built-in)",
                records,
                mbytes,
                med["pykafka"],
                med["kafka"],
                {"pykafka": secs["pykafka"], "kafka": secs["kafka"]},
                "; ".join(notes),
            )
        )
        results.append(
            BenchResult(
                "stream-limit",
                case,
                "pykafka",
                f"limit ({LIMIT_FORMAT}, {batch_rows:,}-row Arrow batches)",
                records,
                mbytes,
                med["pykafka"],
                med[LIMIT_FORMAT],
                {"pykafka": secs["pykafka"], "limit": secs[LIMIT_FORMAT]},
            )
        )
    return results, runs


def driver_calls_ms(
    partitions: int, topics: int = 10, trigger: int = 250_000, repeat: int = 7
) -> dict[str, float]:
    """The pykafka stream reader's own Python work per micro-batch on the driver, without
    network, for ``partitions`` partitions over ``topics`` topics: ``latestOffset`` (as in an
    AvailableNow run: its target known, ``ReadMaxRows(trigger)``), ``partitions``,
    ``commit`` (no group) and ``reportLatestOffset``, and PySpark's JSON (de)serialisation of
    the offsets around them (``json``: what the runner does per batch: loads start, dumps end,
    loads both again for ``partitions``, loads end for ``commit``). Best of ``repeat``, ms.
    """
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from spark_kafka_py.consumer.types import TopicPartition
    from spark_kafka_py.spark.offsets import to_offset_dict
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.source import KafkaStreamReader

    names = [f"driver-calls-{t}" for t in range(topics)]
    reader = KafkaStreamReader(
        parse_options(
            {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": ",".join(names)},
            streaming=True,
        )
    )
    per_topic = max(1, partitions // topics)
    tps = [TopicPartition(n, p) for n in names for p in range(per_topic)]
    start = to_offset_dict({tp: 1_000 for tp in tps})
    reader._available_now = reader._latest = {tp: 1_000_000 for tp in tps}
    best: dict[str, float] = {}

    def timed(name: str, call: Any) -> Any:
        t0 = time.perf_counter()
        out = call()
        ms = (time.perf_counter() - t0) * 1000
        best[name] = min(best.get(name, ms), ms)
        return out

    end = reader.latestOffset(start, ReadMaxRows(trigger))
    text_start, text_end = json.dumps(start), json.dumps(end)

    def pyspark_json() -> None:
        json.loads(text_start)  # latestOffset(start, limit)
        json.dumps(end)  # its answer
        json.loads(text_start), json.loads(text_end)  # partitions(start, end)
        json.loads(text_end)  # commit(end)

    for _ in range(repeat):
        timed("latestOffset", lambda: reader.latestOffset(start, ReadMaxRows(trigger)))
        timed("partitions", lambda: reader.partitions(start, end))
        timed("commit", lambda: reader.commit(end))
        timed("reportLatestOffset", reader.reportLatestOffset)
        timed("json", pyspark_json)
    reader.stop()
    return best


def format_driver_calls(counts: Sequence[int]) -> str:
    """Markdown: :func:`driver_calls_ms` for each partition count."""
    lines = [
        "| partitions | latestOffset ms | partitions ms | commit ms | reportLatestOffset ms | "
        "ours, total ms | PySpark's JSON ms |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in counts:
        ms = driver_calls_ms(n, topics=min(10, n))
        calls = ("latestOffset", "partitions", "commit", "reportLatestOffset")
        ours = sum(ms[c] for c in calls)
        cells = " | ".join(f"{ms[c]:.2f}" for c in calls)
        lines.append(f"| {n:,} | {cells} | {ours:.2f} | {ms['json']:.2f} |")
    return "\n".join(lines)


def format_stream_table(results: Sequence[BenchResult]) -> str:
    """Markdown: per trigger size the limit's, pykafka's and the built-in's sustained
    records/s, pykafka / limit and pykafka / built-in (from ``stream`` and ``stream-limit``
    results of :func:`bench_stream`)."""
    lines = [
        "| maxOffsetsPerTrigger | limit records/s | pykafka records/s | built-in records/s | "
        "pykafka / limit | pykafka / built-in |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    by_case: dict[str, dict[str, BenchResult]] = {}
    for r in results:
        if r.bench in ("stream", "stream-limit"):
            by_case.setdefault(r.case, {})[r.bench] = r

    def rate(secs: float | None, records: int) -> str:
        return f"{records / secs:,.0f}" if secs else "-"

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    for case, pair in by_case.items():
        peer, limit = pair.get("stream"), pair.get("stream-limit")
        any_r = peer or limit
        assert any_r is not None
        trigger = case.split("=", 1)[-1]
        lines.append(
            f"| {int(trigger):,} | {rate(limit.peer_s if limit else None, any_r.records)} | "
            f"{rate(any_r.ours_s, any_r.records)} | "
            f"{rate(peer.peer_s if peer else None, any_r.records)} | "
            f"{ratio(limit.ratio if limit else None)} | {ratio(peer.ratio if peer else None)} |"
        )
    return "\n".join(lines)


def format_breakdown_table(runs: Sequence[StreamRun]) -> str:
    """Markdown: where a micro-batch's time goes, per source and trigger size (medians over
    the runs of each source of the median over micro-batches 2..n, ms), and the pykafka
    stream reader's own driver calls when timed."""
    lines = [
        "| maxOffsetsPerTrigger | source | " + " | ".join(DURATION_KEYS) + " | other |",
        "|---:|---|" + "---:|" * (len(DURATION_KEYS) + 1),
    ]
    reader_lines = []
    groups: dict[tuple[int, str], list[StreamRun]] = {}
    for r in runs:
        groups.setdefault((r.trigger, r.source), []).append(r)
    for (trigger, source), rs in groups.items():
        keys = (*DURATION_KEYS, "other")
        med = {k: statistics.median(r.durations_ms.get(k, 0.0) for r in rs) for k in keys}
        cells = " | ".join(f"{med[k]:,.0f}" for k in keys)
        lines.append(f"| {trigger:,} | {SOURCE_NAMES[source]} | {cells} |")
        calls = sorted({k for r in rs for k in r.reader_ms if not k.endswith(" count")})
        if calls:
            parts = [
                f"{c} {statistics.median(r.reader_ms.get(c, 0.0) for r in rs):.2f} ms"
                for c in calls
            ]
            reader_lines.append(f"- {trigger:,}, pykafka reader (driver): " + ", ".join(parts))
    return "\n".join(lines + (["", *reader_lines] if reader_lines else []))


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["stream", *sys.argv[1:]]))
