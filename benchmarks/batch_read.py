"""Batch read throughput: ``format("pykafka")`` against Spark's built-in ``format("kafka")``
and against the limit of a Python data source.

Same as ``spark-kafka-py bench batch``: the sources read the same topics (one per codec,
written by Kafka's Java producer: 16-byte keys, 100-byte values) on the same local broker in
the same run, ``spark.read.format(...).load().write.format("noop")``, local[2]; one warm-up
read per source and topic, then the sources alternate; prints records/s, MB/s and the ratios
pykafka / kafka and pykafka / limit (medians of ``--repeat`` runs). See :mod:`benchmarks.cli`
for the options.

The limit (:mod:`benchmarks.limit_source`, ``format("pykafka_limit")``, registered in the
same session) yields pre-built Arrow batches of the same schema, with the same row counts in
the same Spark tasks as ``format("pykafka")`` yields for that topic (found by reading the topic
once on the driver, before the timed reads): what PySpark and Spark cost to take the batches,
without Kafka or decoding. Before the timed reads, both sources' rows are counted in Spark
(``rows`` of each limit result).

Usage::

    python benchmarks/batch_read.py [--records 5000000] [--partitions 4]
        [--codecs none,lz4,zstd] [--repeat 2] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult
from benchmarks.limit_source import LIMIT_FORMAT, LimitDataSource, pykafka_batches

__all__ = ["LIMIT_PEER", "bench_batch", "format_batch_table"]

#: Peer name of the limit results (``BenchResult.peer``).
LIMIT_PEER = "limit (pre-built Arrow)"
#: Peer name of the built-in source's results.
KAFKA_PEER = "kafka (built-in)"


def _reader(spark: Any, fmt: str, options: dict[str, str]) -> Any:
    reader = spark.read.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


#: Process kinds of :func:`cpu_seconds`, by a marker in their command line.
_KINDS = (
    (b"pyspark.daemon", "python workers"),
    (b"kafka.logs.dir", "broker"),  # a LocalKafkaCluster node started by this run
    (b"java", "spark jvm"),
)


def cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system, ``/proc/<pid>/stat``) used so far by the processes this
    one started, by kind: ``python workers`` (PySpark's daemon and the workers it forked),
    ``broker`` (a local Kafka node started for the run), ``spark jvm`` (any other JVM: the
    driver's, a standalone cluster's) and ``driver`` (this Python process). Processes that
    ended meanwhile are not counted (PySpark reuses its workers). Empty without ``/proc``."""
    parent: dict[int, int] = {}
    info: dict[int, tuple[bytes, float]] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])
        info[pid] = (cmdline, (int(fields[11]) + int(fields[12])) / tick)
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[str, float] = {}
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        cmdline, secs = info.get(pid, (b"", 0.0))
        kind = "driver" if pid == os.getpid() else "other"
        for marker, name in _KINDS:
            if marker in cmdline:
                kind = name
                break
        out[kind] = out.get(kind, 0.0) + secs
    return out


def _time_batch_read(
    spark: Any, fmt: str, options: dict[str, str], cpu: list[dict[str, float]] | None = None
) -> float:
    """Seconds of one read into the noop sink; appends the CPU seconds each process kind
    used meanwhile to ``cpu`` (:func:`cpu_seconds`)."""
    before = cpu_seconds()
    start = time.perf_counter()
    _reader(spark, fmt, options).write.format("noop").mode("overwrite").save()
    secs = time.perf_counter() - start
    if cpu is not None:
        after = cpu_seconds()
        cpu.append({k: after[k] - before.get(k, 0.0) for k in after})
    return secs


def bench_batch(
    spark: Any,
    bootstrap: str,
    topics: dict[str, str],
    records: int,
    record_bytes: int,
    repeat: int = 2,
    *,
    key_size: int = 16,
    value_size: int = 100,
) -> list[BenchResult]:
    """Batch read throughput of ``pykafka``, ``kafka`` and the limit on each topic (codec ->
    topic): two results per topic, pykafka against ``kafka (built-in)`` and against
    :data:`LIMIT_PEER` (its ``rows``: the rows each of pykafka and the limit returned).

    The limit's batches are planned first (:func:`~benchmarks.limit_source.pykafka_batches`),
    then each source reads once as a warm-up, both counts are taken, and ``repeat`` timed
    reads per source alternate.
    """
    spark.dataSource.register(LimitDataSource)
    out = []
    for case, topic in topics.items():
        load_before = os.getloadavg()[0]
        options = {
            "kafka": {"kafka.bootstrap.servers": bootstrap, "subscribe": topic},
            "pykafka": {"kafka.bootstrap.servers": bootstrap, "subscribe": topic},
            LIMIT_FORMAT: {
                "batches": json.dumps(
                    pykafka_batches({"kafka.bootstrap.servers": bootstrap, "subscribe": topic})
                ),
                "topic": topic,
                "keySize": str(key_size),
                "valueSize": str(value_size),
            },
        }
        runs: dict[str, list[float]] = {fmt: [] for fmt in options}
        cpu: dict[str, list[dict[str, float]]] = {fmt: [] for fmt in options}
        for fmt in runs:
            _time_batch_read(spark, fmt, options[fmt])
        rows = {fmt: _reader(spark, fmt, options[fmt]).count() for fmt in ("pykafka", LIMIT_FORMAT)}
        for _ in range(repeat):
            for fmt in runs:
                runs[fmt].append(_time_batch_read(spark, fmt, options[fmt], cpu[fmt]))
        load = f"load average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
        ours = statistics.median(runs["pykafka"])
        cpu_median = {
            "limit" if fmt == LIMIT_FORMAT else fmt: {
                kind: statistics.median(c.get(kind, 0.0) for c in measured)
                for kind in sorted({k for c in measured for k in c})
            }
            for fmt, measured in cpu.items()
        }
        mbytes = records * record_bytes / 1e6
        out.append(
            BenchResult(
                "batch",
                case,
                "pykafka",
                KAFKA_PEER,
                records,
                mbytes,
                ours,
                statistics.median(runs["kafka"]),
                {"pykafka": runs["pykafka"], "kafka": runs["kafka"]},
                cpu={k: cpu_median[k] for k in ("pykafka", "kafka")},
            )
        )
        out.append(
            BenchResult(
                "batch",
                case,
                "pykafka",
                LIMIT_PEER,
                records,
                mbytes,
                ours,
                statistics.median(runs[LIMIT_FORMAT]),
                {"limit": runs[LIMIT_FORMAT]},
                note=load
                if rows["pykafka"] == rows[LIMIT_FORMAT]
                else f"{load}; row counts differ: pykafka {rows['pykafka']:,}, limit "
                f"{rows[LIMIT_FORMAT]:,}",
                rows={"pykafka": rows["pykafka"], "limit": rows[LIMIT_FORMAT]},
                cpu={k: cpu_median[k] for k in ("pykafka", "limit")},
            )
        )
    return out


def format_batch_table(results: Sequence[BenchResult]) -> str:
    """Markdown table of the batch results, one line per case: pykafka, the built-in source
    and the limit (records/s), pykafka / kafka and pykafka / limit, and every timed run."""
    lines = [
        "| codec | pykafka records/s | MB/s | kafka records/s | limit records/s | "
        "pykafka/kafka | pykafka/limit | runs pykafka, s | runs kafka, s | runs limit, s |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    cases: dict[str, dict[str, BenchResult]] = {}
    for r in results:
        if r.bench == "batch":
            cases.setdefault(r.case, {})[r.peer] = r

    def rate(secs: float | None, amount: float) -> str:
        return "-" if not secs else f"{amount / secs:,.0f}"

    def ratio(r: BenchResult | None) -> str:
        return "-" if r is None or r.ratio is None else f"**{r.ratio:.2f}**"

    def runs(r: BenchResult | None, name: str) -> str:
        return "" if r is None else ", ".join(f"{s:.2f}" for s in r.runs.get(name, []))

    for case, peers in cases.items():
        kafka, limit = peers.get(KAFKA_PEER), peers.get(LIMIT_PEER)
        first = kafka or limit
        assert first is not None
        mb = "-" if not first.ours_s else f"{first.mbytes / first.ours_s:.1f}"
        lines.append(
            f"| {case} | {rate(first.ours_s, first.records)} | {mb} | "
            f"{rate(kafka.peer_s if kafka else None, first.records)} | "
            f"{rate(limit.peer_s if limit else None, first.records)} | {ratio(kafka)} | "
            f"{ratio(limit)} | {runs(kafka, 'pykafka')} | {runs(kafka, 'kafka')} | "
            f"{runs(limit, 'limit')} |"
        )
    cpu_lines = [
        "",
        "CPU seconds per read (medians), by process: PySpark's Python workers, the Spark JVM(s), "
        "the local broker (when started by the run):",
        "",
        "| codec | source | python workers | spark jvm | broker | total | total / pykafka's |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for case, peers in cases.items():
        cpu: dict[str, dict[str, float]] = {}
        for r in peers.values():
            cpu.update(r.cpu)
        own = sum(cpu.get("pykafka", {}).values())
        for name, kinds in cpu.items():
            total = sum(kinds.values())
            share = f"{total / own:.2f}" if own else "-"
            parts = [kinds.get(k, 0.0) for k in ("python workers", "spark jvm", "broker")]
            cells = " | ".join(f"{v:.2f}" for v in parts)
            cpu_lines.append(f"| {case} | {name} | {cells} | {total:.2f} | {share} |")
    return "\n".join(lines + (cpu_lines if len(cpu_lines) > 5 else []))


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["batch", *sys.argv[1:]]))
