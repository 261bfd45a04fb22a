"""Soak run: a producer writes continuously to 32 partitions while a streaming query reads.

A bounded benchmark, not a test. It starts a local broker (or uses ``--bootstrap-servers``),
creates a topic of ``--partitions`` partitions, runs Kafka's ProducerPerformance
(``acks=all``, ``--rate`` records/s of ``--record-size`` bytes for ``--minutes``) and a
``readStream.format("pykafka")`` query with ``maxOffsetsPerTrigger`` writing
``(partition, offset)`` to a Parquet file sink with a checkpoint (local[2], 1 s trigger).

Every ``--sample-s`` seconds it records: records read so far and records/s, end-to-end lag
(records in Kafka not yet committed by the query: sum of latest offsets minus the query's
last committed end offsets), resident memory (MiB) of the driver JVM (in local mode it hosts
the executors too), of the Python driver, of the Python streaming-source runner and of the
Python workers, and their open file descriptors. After the producer stops it waits for the
query to catch up, stops it and checks the count: the sink must hold every offset of every
partition exactly once (offsets 0..end-1, no duplicates, nothing missing).

Output: a table of samples on stdout, a JSON summary (and ``--out`` file with every sample).
Exit status 1 when the count check fails.

Usage::

    python benchmarks/soak.py --minutes 10 --rate 5000 --max-offsets-per-trigger 20000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.types import LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.spark import local_spark_session
from spark_kafka_py.testing.tools import create_topic, produce_perf


def _children(pid: int) -> list[int]:
    """Direct and indirect child processes of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        todo += kids
    return out


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _processes(jvm_pid: int) -> dict[str, list[int]]:
    """The driver JVM, this Python driver, the streaming-source runner, Python workers."""
    kids = _children(jvm_pid)
    runner = [p for p in kids if "python_streaming_source_runner" in _cmdline(p)]
    workers = [p for p in kids if p not in runner and "python" in _cmdline(p)]
    return {
        "jvm": [jvm_pid],
        "driver_py": [os.getpid()],
        "source_runner": runner,
        "workers": workers,
    }


def _stop_producer(topic: str) -> None:
    """Kill the ProducerPerformance JVM this process started for ``topic`` (by pid)."""
    for pid in _children(os.getpid()):
        if "ProducerPerformance" in _cmdline(pid) and topic in _cmdline(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--partitions", type=int, default=32)
    ap.add_argument("--rate", type=int, default=5000, help="records/s written")
    ap.add_argument("--record-size", type=int, default=200, help="bytes per value")
    ap.add_argument("--max-offsets-per-trigger", type=int, default=20000)
    ap.add_argument("--sample-s", type=float, default=15.0)
    ap.add_argument("--bootstrap-servers", default=None)
    ap.add_argument("--out", default=None, help="JSON file for every sample")
    args = ap.parse_args(argv)

    cluster = None
    if args.bootstrap_servers:
        bootstrap = args.bootstrap_servers
    else:
        cluster = LocalKafkaCluster(1, heap="512m").start()
        bootstrap = cluster.bootstrap_servers
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    topic = f"soak-{time.time_ns()}"
    create_topic(bootstrap, topic, partitions=args.partitions)
    spark = local_spark_session(
        "spark-kafka-py-soak",
        with_kafka_connector=False,
        # a loaded machine can be slow to start Python workers
        extra_conf={"spark.python.authenticate.socketTimeout": "120s"},
    )
    # _jvm is Optional in PySpark's annotations; a classic driver always has one
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
    client = KafkaClient(ClientConfig.from_bootstrap(bootstrap))
    tps = [TopicPartition(topic, p) for p in range(args.partitions)]
    total = int(args.rate * args.minutes * 60)
    produced: dict[str, Any] = {}

    def producer() -> None:
        result = produce_perf(
            bootstrap,
            topic,
            total,
            args.record_size,
            "lz4",
            {"acks": "all", "linger.ms": "20"},
            throughput=args.rate,
            heap="256m",
        )
        produced["records"] = result.records

    query = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(args.max_offsets_per_trigger))
        .load()
        .selectExpr("partition", "offset")
        .writeStream.format("parquet")
        .option("path", str(work / "out"))
        .option("checkpointLocation", str(work / "cp"))
        .trigger(processingTime="1 second")
        .start()
    )
    samples: list[dict[str, Any]] = []
    start = time.monotonic()
    thread = threading.Thread(target=producer, daemon=True)
    thread.start()

    def committed() -> int:
        progress = query.lastProgress
        if not progress:
            return 0
        end = json.loads(progress["sources"][0]["endOffset"] or "{}").get(topic, {})
        return sum(int(v) for v in end.values())

    def sample() -> dict[str, Any]:
        latest = sum(list_offsets(client, dict.fromkeys(tps, LATEST_TIMESTAMP)).values())
        read = committed()
        procs = _processes(jvm_pid)
        s = {
            "t_s": round(time.monotonic() - start, 1),
            "produced": latest,
            "read": read,
            "lag": latest - read,
            "rss_mib": {k: round(sum(_rss_mib(p) for p in v), 1) for k, v in procs.items()},
            "fds": {k: sum(_fds(p) for p in v) for k, v in procs.items()},
            "workers": len(procs["workers"]),
        }
        if samples:
            prev = samples[-1]
            s["read_per_s"] = round((read - prev["read"]) / max(s["t_s"] - prev["t_s"], 1e-9))
        samples.append(s)
        print(json.dumps(s), flush=True)
        return s

    try:
        while thread.is_alive():
            if query.exception() is not None:
                raise RuntimeError(f"query failed: {query.exception()}")
            sample()
            thread.join(args.sample_s)
        final = sum(list_offsets(client, dict.fromkeys(tps, LATEST_TIMESTAMP)).values())
        deadline = time.monotonic() + 600
        while committed() < final and time.monotonic() < deadline:
            time.sleep(2)
        sample()
    except BaseException:
        _stop_producer(topic)
        if cluster is not None:
            cluster.stop()
        raise
    finally:
        query.stop()
    rows = spark.read.parquet(str(work / "out")).selectExpr("partition", "offset")
    count = rows.count()
    distinct = rows.distinct().count()
    ends = list_offsets(client, dict.fromkeys(tps, LATEST_TIMESTAMP))
    per_partition = {
        r["partition"]: (r["n"], r["lo"], r["hi"])
        for r in rows.groupBy("partition")
        .agg({"offset": "min", "*": "count"})
        .withColumnRenamed("min(offset)", "lo")
        .withColumnRenamed("count(1)", "n")
        .join(
            rows.groupBy("partition").agg({"offset": "max"}).withColumnRenamed("max(offset)", "hi"),
            "partition",
        )
        .collect()
    }
    ok = count == distinct == sum(ends.values()) == produced.get("records") and all(
        per_partition.get(tp.partition) == (end, 0, end - 1) for tp, end in ends.items()
    )
    steady = [s for s in samples if "read_per_s" in s]
    summary = {
        "command": "python benchmarks/soak.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "minutes": args.minutes,
        "partitions": args.partitions,
        "rate": args.rate,
        "produced": produced.get("records"),
        "in_kafka": sum(ends.values()),
        "sink_rows": count,
        "sink_distinct": distinct,
        "count_check": "ok" if ok else "FAILED",
        "mean_read_per_s": round(sum(s["read_per_s"] for s in steady) / max(len(steady), 1)),
        "lag_max": max(s["lag"] for s in samples),
        "lag_last_while_producing": samples[-2]["lag"] if len(samples) > 1 else None,
        "rss_first_mib": samples[0]["rss_mib"],
        "rss_last_mib": samples[-1]["rss_mib"],
        "fds_first": samples[0]["fds"],
        "fds_last": samples[-1]["fds"],
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "samples": samples}, indent=1))
    client.close()
    spark.stop()
    if cluster is not None:
        cluster.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
