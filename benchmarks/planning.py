"""Planning at scale: what one micro-batch's driver spends finding where the data ends, for
1 to 10,000 partitions, ``format("pykafka")`` next to Spark's built-in ``format("kafka")``.
Same as ``spark-kafka-py bench planning``.

Both sources ask the brokers for every partition's latest offset at the start of each
micro-batch (ours: ``latestOffset``; Spark's: ``KafkaMicroBatchStream.latestOffset`` through
its admin client). Measured per case (topics of at most :data:`PARTITIONS_PER_TOPIC`
partitions, so 10,000 partitions are 10 topics of 1,000, on the cluster's brokers):

``spark`` (both sources, the same way, in the same run)
    A streaming query per source (``startingOffsets=latest``, ``processingTime`` trigger of
    :data:`TRIGGER_MS` ms into the ``noop`` sink, no new records) with
    ``spark.sql.streaming.noDataProgressEventInterval=0``, so that every trigger reports its
    progress: the median of ``durationMs.latestOffset`` over ``--repeat`` triggers after
    :data:`WARM_TRIGGERS` warm-up ones. For pykafka this includes PySpark's call into the
    driver-side Python process that holds the stream reader.
``reader`` (pykafka only)
    The stream reader object itself, in this process: ``latestOffset`` with a read limit and
    ``partitions``, median of ``--repeat`` after :data:`WARM_TRIGGERS` warm-up calls (what the
    driver's Python process spends, without PySpark's round trip), :data:`TRIGGER_MS` ms apart
    as the queries' triggers (the reader asks Metadata for the next micro-batch meanwhile).

The cluster: ``--bootstrap-servers``, else a local 3-node KRaft cluster started for the run
(:data:`BROKERS` brokers, topics with replication factor 1, their partitions spread over the
brokers by Kafka). The topics are created empty.

Usage::

    python benchmarks/planning.py [--planning-partitions 1,100,1000,10000] [--repeat 10]
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult

__all__ = [
    "BROKERS",
    "DEFAULT_COUNTS",
    "PARTITIONS_PER_TOPIC",
    "PlanningResult",
    "as_bench_results",
    "bench_planning",
    "format_planning_table",
    "load_average",
    "planning_cluster",
    "planning_topics",
]

#: Partition counts measured when none are given.
DEFAULT_COUNTS = (1, 100, 1_000, 10_000)
#: Largest topic created: more partitions are spread over several topics.
PARTITIONS_PER_TOPIC = 1_000
#: Brokers of the local cluster started for the run.
BROKERS = 3
#: Trigger interval of the Spark queries (ms).
TRIGGER_MS = 250
#: Spark SQL setting: how often a trigger without new records reports its progress (ms).
NO_DATA_PROGRESS_CONF = "spark.sql.streaming.noDataProgressEventInterval"
#: Triggers of each Spark query left out before the timed ones (connections, JIT, caches).
WARM_TRIGGERS = 3


@dataclass
class PlanningResult:
    """One partition count: milliseconds per micro-batch (medians) and every sample.

    Attributes:
        partitions: partitions of the subscription.
        topics: topics they are spread over.
        pykafka_ms: ``durationMs.latestOffset`` of the pykafka query (median, ms).
        kafka_ms: the same of the built-in source's query (``None``: not measured, see note).
        reader_ms: the stream reader object's ``latestOffset`` + ``partitions`` (median, ms).
        samples: every sample, per system (``pykafka``, ``kafka``, ``reader``), ms.
        note: why a side is missing, if one is.
    """

    partitions: int
    topics: int
    pykafka_ms: float
    kafka_ms: float | None
    reader_ms: float
    samples: dict[str, list[float]]
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """kafka ms / pykafka ms (> 1: pykafka plans faster)."""
        if not self.kafka_ms or not self.pykafka_ms:
            return None
        return self.kafka_ms / self.pykafka_ms


@contextlib.contextmanager
def planning_cluster(bootstrap: str | None, brokers: int = BROKERS) -> Iterator[str]:
    """Yield ``bootstrap`` when given; else start a local KRaft cluster of ``brokers`` nodes
    (1 GB heap each), yield its bootstrap servers and stop it afterwards.

    Raises:
        spark_kafka_py.testing.broker.BrokerStartError: a node did not start.
    """
    if bootstrap:
        yield bootstrap
        return
    from spark_kafka_py.testing.broker import LocalKafkaCluster

    cluster = LocalKafkaCluster(num_brokers=brokers, heap="1g")
    cluster.start()
    try:
        yield cluster.bootstrap_servers
    finally:
        cluster.stop()


def planning_topics(bootstrap: str, partitions: int, run_id: str) -> list[str]:
    """Create the topics of one case: ``partitions`` partitions over topics of at most
    :data:`PARTITIONS_PER_TOPIC` (replication factor 1). Returns their names.

    Raises:
        spark_kafka_py.testing.tools.KafkaToolError: a topic could not be created.
    """
    from spark_kafka_py.testing.tools import create_topic

    count = -(-partitions // PARTITIONS_PER_TOPIC)
    names = []
    left = partitions
    for i in range(count):
        size = left // (count - i)
        left -= size
        name = f"bench-plan-{partitions}-{run_id}-{i}"
        create_topic(bootstrap, name, partitions=size)
        names.append(name)
    return names


def _reader_ms(bootstrap: str, topics: Sequence[str], repeat: int) -> list[float]:
    """The stream reader object's ``latestOffset`` + ``partitions`` per call (ms)."""
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from spark_kafka_py.errors import KafkaApiError
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.source import KafkaStreamReader

    options = parse_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "subscribe": ",".join(topics),
            "maxOffsetsPerTrigger": "1000",
        },
        streaming=True,
    )
    reader = KafkaStreamReader(options)
    try:
        deadline = time.monotonic() + 120  # a new topic's partitions get leaders over seconds
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
        for _ in range(WARM_TRIGGERS + repeat):
            t0 = time.perf_counter()
            end = reader.latestOffset(start, ReadMaxRows(1000))
            reader.partitions(start, end)
            times.append((time.perf_counter() - t0) * 1000)
            # The micro-batch's job and the trigger's wait, during which the reader asks
            # Metadata for the next one (Planner.refresh_metadata), as in the queries.
            time.sleep(TRIGGER_MS / 1000)
        return times[WARM_TRIGGERS:]  # connections, the brokers' first answers
    finally:
        reader.stop()


def _query_ms(
    spark: Any, fmt: str, bootstrap: str, topics: Sequence[str], repeat: int
) -> list[float]:
    """``durationMs.latestOffset`` of ``repeat`` triggers of an idle streaming query (ms)."""
    checkpoint = tempfile.mkdtemp(prefix=f"bench-plan-{fmt}-")
    # every trigger reports its progress, also without new records (default: every 10 s)
    spark.conf.set(NO_DATA_PROGRESS_CONF, "0")
    query = (
        spark.readStream.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", ",".join(topics))
        .option("startingOffsets", "latest")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime=f"{TRIGGER_MS} milliseconds")
        .start()
    )
    try:
        samples: list[float] = []
        seen: set[str] = set()
        deadline = time.monotonic() + 120 + repeat * (TRIGGER_MS / 1000 + 5)
        while len(samples) < WARM_TRIGGERS + repeat:
            if query.exception() is not None:
                raise RuntimeError(f"{fmt} query failed: {query.exception()}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{fmt}: {len(samples)} of {WARM_TRIGGERS + repeat} triggers reported "
                    "a latestOffset duration in time"
                )
            for progress in query.recentProgress:
                key = f"{progress['batchId']}/{progress['timestamp']}"
                ms = progress.get("durationMs", {}).get("latestOffset")
                if key not in seen and ms is not None:
                    seen.add(key)
                    samples.append(float(ms))
            time.sleep(TRIGGER_MS / 1000)
        return samples[WARM_TRIGGERS : WARM_TRIGGERS + repeat]
    finally:
        query.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)


def bench_planning(
    spark: Any | None,
    bootstrap: str,
    partition_counts: Sequence[int] = DEFAULT_COUNTS,
    repeat: int = 10,
) -> list[PlanningResult]:
    """Measure each partition count (see the module docstring).

    Args:
        spark: a session with Spark's Kafka connector (its
            ``spark.sql.streaming.noDataProgressEventInterval`` is set to 0), or ``None``: the
            reader measure only (the pykafka column is then the reader's, kafka is missing).
        bootstrap: the cluster.
        partition_counts: partitions per case.
        repeat: timed samples per system and case.

    Raises:
        RuntimeError: a query failed or reported too few triggers.
    """
    run_id = uuid.uuid4().hex[:8]
    out = []
    for count in partition_counts:
        topics = planning_topics(bootstrap, count, run_id)
        reader = _reader_ms(bootstrap, topics, repeat)  # also waits for the leaders
        samples = {"reader": reader}
        note = ""
        if spark is not None:
            samples["pykafka"] = _query_ms(spark, "pykafka", bootstrap, topics, repeat)
            try:
                samples["kafka"] = _query_ms(spark, "kafka", bootstrap, topics, repeat)
            except RuntimeError as exc:  # reported in the table, not hidden
                note = f"built-in kafka query failed: {str(exc).splitlines()[0]}"
        ours = samples.get("pykafka", reader)
        out.append(
            PlanningResult(
                partitions=count,
                topics=len(topics),
                pykafka_ms=statistics.median(ours),
                kafka_ms=statistics.median(samples["kafka"]) if "kafka" in samples else None,
                reader_ms=statistics.median(reader),
                samples=samples,
                note=note,
            )
        )
        print(format_planning_table(out[-1:]), flush=True)
    return out


def as_bench_results(results: Sequence[PlanningResult]) -> list[BenchResult]:
    """The results as :class:`BenchResult` rows (seconds) for the JSON output."""
    return [
        BenchResult(
            "planning",
            f"{r.partitions} partitions",
            "pykafka",
            "kafka (built-in)",
            0,
            0.0,
            r.pykafka_ms / 1000,
            None if r.kafka_ms is None else r.kafka_ms / 1000,
            {name: [ms / 1000 for ms in runs] for name, runs in r.samples.items()},
            r.note,
        )
        for r in results
    ]


def format_planning_table(results: Sequence[PlanningResult]) -> str:
    """Markdown: partitions, pykafka ms, kafka ms, ratio, and the reader object's ms."""
    lines = [
        "| partitions (topics) | pykafka latestOffset ms | kafka latestOffset ms | "
        "kafka / pykafka | pykafka reader latestOffset + partitions ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        kafka = "-" if r.kafka_ms is None else f"{r.kafka_ms:.1f}"
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        lines.append(
            f"| {r.partitions:,} ({r.topics}) | {r.pykafka_ms:.1f} | {kafka} | {ratio} | "
            f"{r.reader_ms:.1f} |"
        )
    notes = [f"- {r.partitions:,} partitions: {r.note}" for r in results if r.note]
    return "\n".join(lines + (["", *notes] if notes else []))


def load_average() -> str:
    """The machine's 1/5/15-minute load averages, for the report."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["planning", *sys.argv[1:]]))
