"""Filter pushdown: records fetched and seconds of selective batch queries, both sources.

Same as ``spark-kafka-py bench pushdown`` (issue 14: "a 10M-record topic spanning several hours
of timestamps; 'the last 1% by timestamp', 'one partition', and 'an offset window of 10,000
records' through ``format("pykafka")`` with pushdown vs ``format("kafka")`` with the same
filter. Report records fetched and seconds for each").

Data: one topic of ``--records`` records (default 10,000,000) in ``--partitions`` partitions
(default 8), written by our own :class:`~spark_kafka_py.producer.producer.KafkaProducer` as
fast as it goes (no compression): 16-byte keys, 100-byte values by default, in chunks of up to
:data:`CHUNK_RECORDS` records sharing one CreateTime timestamp; chunk ``c`` goes to partition
``c % partitions`` with timestamp ``start + c * span / chunks``, where ``span`` is ``--hours``
(default 6; the broker's retention must keep that much) ending at the time of writing. Every
partition's timestamps thus rise with its offsets, and the whole topic spans the hours evenly.
The topic is named by its shape (``bench-pushdown-<records>r-<partitions>p-<hours>h``) and
reused when it already holds exactly that many records from offset 0 in every partition, so
that reruns on the same cluster skip writing it.

One Spark session (local[2]) with ``spark.sql.python.filterPushdown.enabled=true`` (PySpark
offers filters to a Python data source only then), set for this benchmark and restored
after. Warm-up, untimed: each source reads the whole topic once through a filter every record
passes, ``where(timestamp >= TIMESTAMP '1970-01-01 00:00:00')`` (so that pykafka's pushdown
path, a ListOffsets by timestamp, runs once before the timed queries), with
``agg(count, min(timestamp), max(timestamp))``; both must count ``--records`` records
(:class:`PushdownCheckError`), and the timestamp range sets the first query's bound.

Queries, each ``spark.read.format(F).option("subscribe", topic).load().where(cond)
.agg(count("*"))``, the same ``cond`` for both sources:

- ``last 1% by timestamp``: ``timestamp >= max - 1% of (max - min)``.
- ``one partition``: ``partition = partitions - 1``.
- ``offset window``: ``partition = 0 AND offset >= o AND offset < o + window``, ``window`` =
  ``--offset-window`` (default 10,000; at most half of partition 0) centred in partition 0.

Per query and run (``--repeat``, the sources alternating, pykafka first): wall seconds of
``collect()``, the count (the matching records; both sources must agree,
:class:`PushdownCheckError` otherwise) and the records fetched: the ``numOutputRows`` metric of
the executed plan's leaf scan node (``BatchScan`` for pykafka; ``Scan KafkaRelation``, a
``RowDataSourceScanExec``, for the built-in source, a V1 relation by Spark's default
``spark.sql.sources.useV1SourceList``), summed over leaf scans, with adaptive query
execution's final plan and query stages walked (:func:`scan_rows`). Spark counts there every
row the source produced before its own filter, i.e. every record fetched from Kafka. A fetched
count of 0 for a query that matched records means Spark did not read the source
(:class:`PushdownCheckError`).

Reported per query: the matching records, each source's records fetched (medians over runs;
the same in every run), fetched / matching, each source's median seconds and the speed-up
``kafka seconds / pykafka seconds``. The issue's goals: pykafka's fetched / matching <= 2 and a
speed-up >= 20 on the 1% query.

Usage::

    python benchmarks/pushdown.py [--records 10000000] [--partitions 8] [--hours 6]
        [--offset-window 10000] [--repeat 2] [--bootstrap-servers HOST:PORT] [--json FILE]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult

__all__ = [
    "CHUNK_RECORDS",
    "DEFAULT_HOURS",
    "DEFAULT_OFFSET_WINDOW",
    "DEFAULT_PARTITIONS",
    "DEFAULT_RECORDS",
    "PUSHDOWN_CONF",
    "SOURCES",
    "PushdownCheckError",
    "PushdownResult",
    "bench_pushdown",
    "format_pushdown_table",
    "produce_pushdown_topic",
    "scan_rows",
    "topic_name",
]

#: Records of the topic by default (the issue's 10M).
DEFAULT_RECORDS = 10_000_000
#: Partitions of the topic by default.
DEFAULT_PARTITIONS = 8
#: Hours the record timestamps span by default (within the broker's retention).
DEFAULT_HOURS = 6.0
#: Records of the offset-window query by default (the issue's 10,000).
DEFAULT_OFFSET_WINDOW = 10_000
#: Largest number of records sharing one timestamp (one ``KafkaProducer.append`` call).
CHUNK_RECORDS = 1000
#: Fewest distinct timestamps the topic gets (small topics get smaller chunks).
MIN_CHUNKS = 1000
#: Share of the time range the first query asks for.
LAST_FRACTION = 0.01
#: The Spark SQL setting without which PySpark never calls a Python reader's ``pushFilters``.
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
#: The two sources compared, ours first: (format name, name in the tables).
SOURCES = (("pykafka", "pykafka"), ("kafka", "kafka (built-in)"))
#: Plan nodes whose real plan is elsewhere (adaptive query execution).
_ADAPTIVE = "AdaptiveSparkPlanExec"


class PushdownCheckError(RuntimeError):
    """The sources disagree on a count, the topic does not hold what was written, or a scan
    reported no records fetched for a query that matched records."""


@dataclass
class PushdownResult:
    """One query, both sources (medians over the runs).

    Attributes:
        query: the query's name.
        condition: the filter, in SQL.
        matching: records the query counted (the same for both sources).
        fetched: records fetched per source (the scan's ``numOutputRows``), by table name.
        seconds: median wall seconds per source, by table name.
        runs: every run's seconds per source.
    """

    query: str
    condition: str
    matching: int
    fetched: dict[str, int]
    seconds: dict[str, float]
    runs: dict[str, list[float]] = field(default_factory=dict)

    def fetched_ratio(self, source: str) -> float | None:
        """``fetched / matching`` of ``source`` (``None`` when nothing matched)."""
        return self.fetched[source] / self.matching if self.matching else None

    @property
    def speedup(self) -> float | None:
        """Median seconds of the peer over ours (> 1: ours faster)."""
        (_f, ours), (_g, peer) = SOURCES
        if ours not in self.seconds or peer not in self.seconds or not self.seconds[ours]:
            return None
        return self.seconds[peer] / self.seconds[ours]


def topic_name(records: int, partitions: int, hours: float) -> str:
    """The topic of a shape: ``bench-pushdown-<records>r-<partitions>p-<hours>h``."""
    return f"bench-pushdown-{records}r-{partitions}p-{hours:g}h"


# -------------------------------------------------------------------------------------- data


def _partition_bounds(bootstrap: str, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
    """``{partition: (earliest, latest)}`` with our client (ListOffsets -2 and -1)."""
    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.consumer.offsets import list_offsets
    from spark_kafka_py.consumer.types import TopicPartition

    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        first = list_offsets(client, dict.fromkeys(tps, -2))
        last = list_offsets(client, dict.fromkeys(tps, -1))
    return {tp.partition: (first[tp], last[tp]) for tp in tps}


def _holds(bootstrap: str, topic: str, records: int, partitions: int) -> bool:
    """Whether ``topic`` exists with ``partitions`` partitions holding ``records`` records from
    offset 0 (none deleted by retention)."""
    from spark_kafka_py.testing.tools import get_offsets, list_topics

    if topic not in list_topics(bootstrap):
        return False
    if len(get_offsets(bootstrap, topic, "latest")) != partitions:
        return False
    bounds = _partition_bounds(bootstrap, topic, partitions)
    return all(a == 0 for a, _b in bounds.values()) and sum(b for _a, b in bounds.values()) == (
        records
    )


def produce_pushdown_topic(
    bootstrap: str,
    topic: str,
    records: int,
    *,
    partitions: int = DEFAULT_PARTITIONS,
    hours: float = DEFAULT_HOURS,
    key_size: int = 16,
    value_size: int = 100,
) -> float:
    """Create ``topic`` and write the benchmark's records with our producer (see the module
    docstring for the layout of chunks, partitions and timestamps).

    Args:
        bootstrap: ``host:port`` list.
        topic: topic to create (``partitions`` partitions, replication 1) and fill.
        records: number of records.
        hours: the span of the CreateTime timestamps, ending now.
        key_size, value_size: bytes per key and value.

    Returns:
        Seconds the producer took (from the first append to the end of ``flush``).

    Raises:
        spark_kafka_py.errors.ProduceError: a batch failed (e.g. a timestamp outside the
            broker's ``log.message.timestamp.before.max.ms``).
        spark_kafka_py.testing.tools.KafkaToolError: the topic could not be created.
    """
    import pyarrow as pa

    from spark_kafka_py.client.cluster import ClientConfig
    from spark_kafka_py.producer.producer import KafkaProducer
    from spark_kafka_py.producer.settings import ProducerSettings
    from spark_kafka_py.testing.tools import create_topic

    create_topic(bootstrap, topic, partitions=partitions)
    chunk = max(1, min(CHUNK_RECORDS, records // MIN_CHUNKS))
    chunks = -(-records // chunk)
    keys = pa.array([f"{i:0{key_size}d}".encode()[-key_size:] for i in range(chunk)], pa.binary())
    values = pa.array(
        [(f"{i:04x}" * (value_size // 4 + 1)).encode()[:value_size] for i in range(chunk)],
        pa.binary(),
    )
    span_ms = int(hours * 3_600_000)
    start_ms = int(time.time() * 1000) - span_ms
    settings = ProducerSettings(ClientConfig.from_bootstrap(bootstrap))
    began = time.perf_counter()
    with KafkaProducer(settings) as producer:
        for c in range(chunks):
            n = min(chunk, records - c * chunk)
            k, v = (keys, values) if n == chunk else (keys.slice(0, n), values.slice(0, n))
            producer.append(topic, c % partitions, k, v, None, start_ms + c * span_ms // chunks)
        producer.flush()
    return time.perf_counter() - began


# ----------------------------------------------------------------------------------- metrics


def scan_rows(df: Any) -> int:
    """Records the leaf scans of ``df``'s executed plan produced (run an action on ``df``
    first): the ``numOutputRows`` SQL metric of every leaf node that has one, summed.

    Adaptive query execution wraps the plan in ``AdaptiveSparkPlanExec``; its final plan
    (``executedPlan()``) is walked, and each query stage's ``plan()``.

    Raises:
        PushdownCheckError: the plan has no leaf with that metric.
    """
    total = 0
    found = False
    todo = [df._jdf.queryExecution().executedPlan()]
    while todo:
        node = todo.pop()
        name = node.getClass().getSimpleName()
        if name == _ADAPTIVE:
            todo.append(node.executedPlan())
            continue
        if name.endswith("QueryStageExec"):
            todo.append(node.plan())
            continue
        children = node.children()
        if children.size():
            todo += [children.apply(i) for i in range(children.size())]
            continue
        metric = node.metrics().get("numOutputRows")
        if metric.isDefined():
            total += int(metric.get().value())
            found = True
    if not found:
        raise PushdownCheckError("the executed plan has no leaf scan with numOutputRows")
    return total


# ----------------------------------------------------------------------------------- queries


def _load(spark: Any, fmt: str, bootstrap: str, topic: str) -> Any:
    return (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )


def _run(spark: Any, fmt: str, bootstrap: str, topic: str, cond: Any) -> tuple[float, int, int]:
    """One query: (wall seconds, matching records, records fetched)."""
    from pyspark.sql import functions as F

    df = _load(spark, fmt, bootstrap, topic).where(cond).agg(F.count("*").alias("n"))
    start = time.perf_counter()
    (row,) = df.collect()
    secs = time.perf_counter() - start
    return secs, int(row.n), scan_rows(df)


def _warm_up(spark: Any, bootstrap: str, topic: str, records: int) -> tuple[datetime, datetime]:
    """Each source reads the whole topic once through a filter that prunes nothing; returns its
    (min, max) timestamp (UTC).

    Raises:
        PushdownCheckError: a source did not count ``records`` records.
    """
    from pyspark.sql import functions as F

    ranges = []
    every = F.col("timestamp") >= F.lit(datetime(1970, 1, 1, tzinfo=timezone.utc))
    for fmt, name in SOURCES:
        (row,) = (
            _load(spark, fmt, bootstrap, topic)
            .where(every)
            .agg(F.count("*").alias("n"), F.min("timestamp").alias("a"), F.max("timestamp"))
            .collect()
        )
        if row[0] != records:
            raise PushdownCheckError(
                f"{name} counts {row[0]:,} records in {topic}, not {records:,}"
            )
        ranges.append((row[1], row[2]))
    if ranges[0] != ranges[1]:
        raise PushdownCheckError(f"the sources disagree on {topic}'s timestamp range: {ranges}")
    low, high = ranges[0]
    return low.replace(tzinfo=timezone.utc), high.replace(tzinfo=timezone.utc)


def _queries(
    low: datetime, high: datetime, partitions: int, partition0: int, window: int
) -> list[tuple[str, str, Any]]:
    """The three queries: (name, condition in SQL, Spark column condition)."""
    from pyspark.sql import functions as F

    cutoff = high - timedelta(seconds=(high - low).total_seconds() * LAST_FRACTION)
    window = max(1, min(window, partition0 // 2))
    first = (partition0 - window) // 2
    return [
        (
            "last 1% by timestamp",
            f"timestamp >= TIMESTAMP '{cutoff.isoformat(sep=' ', timespec='milliseconds')}'",
            F.col("timestamp") >= F.lit(cutoff),
        ),
        (
            "one partition",
            f"partition = {partitions - 1}",
            F.col("partition") == partitions - 1,
        ),
        (
            f"offset window of {window:,}",
            f"partition = 0 AND offset >= {first} AND offset < {first + window}",
            (F.col("partition") == 0)
            & (F.col("offset") >= first)
            & (F.col("offset") < first + window),
        ),
    ]


def bench_pushdown(
    spark: Any,
    bootstrap: str,
    records: int = DEFAULT_RECORDS,
    *,
    partitions: int = DEFAULT_PARTITIONS,
    hours: float = DEFAULT_HOURS,
    window: int = DEFAULT_OFFSET_WINDOW,
    repeat: int = 2,
    key_size: int = 16,
    value_size: int = 100,
) -> tuple[list[BenchResult], list[PushdownResult]]:
    """Records fetched and seconds of the three selective queries, pykafka against kafka.

    See the module docstring for the data, the queries, the order of the runs and the checks.

    Args:
        spark: the session (Spark's Kafka connector on its class path for ``kafka``).
        bootstrap: ``host:port`` list of the cluster.
        records, partitions, hours: the topic's records, partitions and timestamp span.
        window: records of the offset-window query.
        repeat: timed runs per source and query; the results have the medians.
        key_size, value_size: bytes per key and value.

    Returns:
        One :class:`BenchResult` per query (``records`` = the matching records, so records/s
        are matching records per second; ``ratio`` = the speed-up) and one
        :class:`PushdownResult` per query.

    Raises:
        PushdownCheckError: see the module docstring.
    """
    topic = topic_name(records, partitions, hours)
    if _holds(bootstrap, topic, records, partitions):
        print(f"reusing {topic} ({records:,} records)", flush=True)
    else:
        from spark_kafka_py.testing.tools import delete_topic, list_topics

        if topic in list_topics(bootstrap):
            delete_topic(bootstrap, topic)
        secs = produce_pushdown_topic(
            bootstrap, topic, records, partitions=partitions, hours=hours,
            key_size=key_size, value_size=value_size,
        )  # fmt: skip
        print(f"produced {records:,} records in {secs:.1f} s", flush=True)
        if not _holds(bootstrap, topic, records, partitions):
            raise PushdownCheckError(f"{topic} does not hold the {records:,} records written")
    bounds = _partition_bounds(bootstrap, topic, partitions)
    previous = spark.conf.get(PUSHDOWN_CONF, None)
    spark.conf.set(PUSHDOWN_CONF, "true")
    try:
        low, high = _warm_up(spark, bootstrap, topic, records)
        queries = _queries(low, high, partitions, bounds[0][1], window)
        out: list[PushdownResult] = []
        for query, sql, cond in queries:
            runs: dict[str, list[float]] = {name: [] for _f, name in SOURCES}
            fetched: dict[str, list[int]] = {name: [] for _f, name in SOURCES}
            counts: set[int] = set()
            for _ in range(repeat):
                for fmt, name in SOURCES:
                    secs, matching, rows = _run(spark, fmt, bootstrap, topic, cond)
                    if matching and not rows:
                        raise PushdownCheckError(
                            f"{name}, {query}: {matching:,} records matched but the scan "
                            "reports none fetched"
                        )
                    runs[name].append(secs)
                    fetched[name].append(rows)
                    counts.add(matching)
                    print(
                        f"pushdown {query} {name}: {secs:.2f} s, {rows:,} fetched, "
                        f"{matching:,} matching",
                        flush=True,
                    )
            if len(counts) != 1:
                raise PushdownCheckError(f"{query}: the sources counted {sorted(counts)}")
            out.append(
                PushdownResult(
                    query,
                    sql,
                    counts.pop(),
                    {name: int(statistics.median(v)) for name, v in fetched.items()},
                    {name: statistics.median(v) for name, v in runs.items()},
                    runs,
                )
            )
    finally:
        if previous is None:
            spark.conf.unset(PUSHDOWN_CONF)
        else:
            spark.conf.set(PUSHDOWN_CONF, previous)
    record_bytes = key_size + value_size
    results = [
        BenchResult(
            "pushdown",
            r.query,
            SOURCES[0][1],
            SOURCES[1][1],
            r.matching,
            r.matching * record_bytes / 1e6,
            r.seconds[SOURCES[0][1]],
            r.seconds[SOURCES[1][1]],
            r.runs,
        )
        for r in out
    ]
    return results, out


def format_pushdown_table(results: Sequence[PushdownResult]) -> str:
    """Markdown table: per query the matching records, each source's records fetched,
    fetched / matching and median seconds, and the speed-up kafka / pykafka."""
    (_f, ours), (_g, peer) = SOURCES
    lines = [
        f"| query | matching | {ours} fetched | fetched / matching | {ours} s | "
        f"{peer} fetched | fetched / matching | {peer} s | speed-up |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:,.2f}"

    for r in results:
        lines.append(
            f"| {r.query} | {r.matching:,} | {r.fetched[ours]:,} | {ratio(r.fetched_ratio(ours))} "
            f"| {r.seconds[ours]:.2f} | {r.fetched[peer]:,} | {ratio(r.fetched_ratio(peer))} | "
            f"{r.seconds[peer]:.2f} | {ratio(r.speedup)} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["pushdown", *sys.argv[1:]]))
