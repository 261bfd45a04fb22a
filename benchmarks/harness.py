"""The shared side-by-side harness of the benchmarks: results, data, broker, tables.

Every figure is a ratio of two systems measured in the same run, on the same local broker and
the same topic (written by Kafka's own Java producer), so that a busy or small machine changes
both sides alike. This module holds what every benchmark shares:

- :class:`BenchResult`: one comparison (ours against a peer, median seconds, every run).
- :func:`produce_bench_data`: a topic written by ``sparkkafkapy.BenchProducer``
  (``benchmarks/java/BenchProducer.java``, compiled once per source and Kafka class path by
  :func:`spark_kafka_py.testing.jvm.compile_java`): 16-byte keys, 100-byte values by default.
- :func:`local_broker`: a given cluster, or a one-node local Kafka (4.3.0, from Maven Central's
  jars like the tests') for the run.
- :func:`format_table`, :func:`spread`, :func:`environment`: the Markdown report (both
  systems' records/s and MB/s, the ratio), run-to-run noise, versions and the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import compile_java, run_java
from spark_kafka_py.testing.tools import create_topic

__all__ = [
    "BENCH_PRODUCER_CLASS",
    "DEFAULT_CODECS",
    "BenchResult",
    "environment",
    "format_table",
    "local_broker",
    "produce_bench_data",
    "spread",
]

#: Codecs of the batch benchmark by default (the issue's goals: none, lz4, zstd).
DEFAULT_CODECS = ("none", "lz4", "zstd")
BENCH_PRODUCER_CLASS = "sparkkafkapy.BenchProducer"
#: Source of :data:`BENCH_PRODUCER_CLASS`.
BENCH_PRODUCER_SOURCE = Path(__file__).resolve().parent / "java" / "BenchProducer.java"


@dataclass
class BenchResult:
    """One comparison: ``ours`` against ``peer`` on the same data in the same run.

    Attributes:
        bench: benchmark name (``batch``, ``decoder``, ``stream``, ``planning``).
        case: what was measured (codec, partition count ...).
        ours, peer: system names.
        records: records read per run.
        mbytes: key + value megabytes (1e6 bytes) per run.
        ours_s, peer_s: median seconds per run (``None`` when that side was not measured).
        runs: every run's seconds, per system.
        note: free text (e.g. why a peer was skipped).
        rows: rows each system returned, when the benchmark counted them (system -> rows).
        cpu: CPU seconds per run (median) of the processes the run used, when the benchmark
            measured them (system -> process kind -> seconds).
    """

    bench: str
    case: str
    ours: str
    peer: str
    records: int
    mbytes: float
    ours_s: float | None
    peer_s: float | None
    runs: dict[str, list[float]] = field(default_factory=dict)
    note: str = ""
    rows: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        """Throughput ratio ours / peer (> 1: ours is faster), from the medians."""
        if not self.ours_s or not self.peer_s:
            return None
        return self.peer_s / self.ours_s


# ------------------------------------------------------------------------------ environment


def environment() -> dict[str, str]:
    """Versions and machine facts printed under every table."""
    import pyarrow
    import pyspark

    from spark_kafka_py.records import decoder

    env = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
        "kafka broker/tools": KAFKA_VERSION,
        "decoder": decoder.IMPLEMENTATION,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {_cpu_model()}, "
        f"{_mem_gb():.0f} GB RAM",
    }
    with contextlib.suppress(ImportError):
        import confluent_kafka

        env["confluent-kafka"] = (
            f"{_first(confluent_kafka.version())} "
            f"(librdkafka {_first(confluent_kafka.libversion())})"
        )
    with contextlib.suppress(ImportError):
        import kafka

        env["kafka-python"] = kafka.__version__
    return env


def _first(value: Any) -> str:
    return str(value[0] if isinstance(value, tuple) else value)


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _mem_gb() -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 1024 / 1024
    return 0.0


# ------------------------------------------------------------------------------------- data


def produce_bench_data(
    bootstrap: str,
    topic: str,
    records: int,
    *,
    partitions: int = 4,
    key_size: int = 16,
    value_size: int = 100,
    compression: str = "none",
    create: bool = True,
) -> float:
    """Create ``topic`` and write ``records`` records with Kafka's Java producer.

    Args:
        bootstrap: ``host:port`` list.
        topic: topic to create (``partitions`` partitions, replication 1) and fill.
        records: number of records.
        key_size, value_size: bytes per key and value (see ``BenchProducer.java``).
        compression: producer ``compression.type`` (none, gzip, snappy, lz4, zstd).
        create: create the topic first.

    Returns:
        Seconds the producer took.

    Raises:
        spark_kafka_py.testing.jvm.JavaError: javac missing or the producer failed.
        spark_kafka_py.testing.tools.KafkaToolError: the topic could not be created.
    """
    if create:
        create_topic(bootstrap, topic, partitions=partitions)
    classpath = kafka_classpath()
    classes = compile_java([BENCH_PRODUCER_SOURCE], classpath)
    start = time.perf_counter()
    run_java(
        BENCH_PRODUCER_CLASS,
        [
            bootstrap,
            topic,
            str(records),
            str(key_size),
            str(value_size),
            f"compression.type={compression}",
        ],
        classpath=f"{classpath}{os.pathsep}{classes}",
        timeout_s=3600,
        heap="512m",
        fast_start=False,
    )
    return time.perf_counter() - start


# ----------------------------------------------------------------------------------- output


def format_table(results: Sequence[BenchResult]) -> str:
    """Markdown table: both systems' records/s and MB/s, and the ratio ours / peer."""
    lines = [
        "| bench | case | ours | records/s | MB/s | peer | records/s | MB/s | ratio |",
        "|---|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in results:

        def rate(secs: float | None, amount: float, fmt: str) -> str:
            return "-" if not secs or not amount else format(amount / secs, fmt)

        ratio = r.ratio
        if r.bench == "planning":
            ours_cell = f"{(r.ours_s or 0) * 1000:.1f} ms/micro-batch"
            lines.append(f"| planning | {r.case} | {r.ours} | {ours_cell} | | | | | |")
            continue
        lines.append(
            f"| {r.bench} | {r.case} | {r.ours} | {rate(r.ours_s, r.records, ',.0f')} | "
            f"{rate(r.ours_s, r.mbytes, '.1f')} | {r.peer} | {rate(r.peer_s, r.records, ',.0f')} | "
            f"{rate(r.peer_s, r.mbytes, '.1f')} | {'-' if ratio is None else f'{ratio:.2f}'} |"
        )
    notes = [f"- {r.bench}/{r.case}, {r.peer}: {r.note}" for r in results if r.note]
    return "\n".join(lines + (["", *notes] if notes else []))


def spread(results: Sequence[BenchResult]) -> str:
    """How noisy the runs were: per system, (max - min) / median of its runs."""
    parts = []
    for r in results:
        for name, runs in r.runs.items():
            if len(runs) > 1 and statistics.median(runs) > 0:
                s = (max(runs) - min(runs)) / statistics.median(runs)
                parts.append(f"{r.bench}/{r.case}/{name} {s:.0%}")
    return ", ".join(parts)


# ----------------------------------------------------------------------------------- broker


@contextlib.contextmanager
def local_broker(bootstrap: str | None) -> Iterator[str]:
    """Yield ``bootstrap`` when given; else start a one-node local Kafka (1 GB heap), yield its
    bootstrap servers and stop it afterwards.

    Raises:
        spark_kafka_py.testing.broker.BrokerStartError: the local node did not start.
    """
    if bootstrap:
        yield bootstrap
        return
    cluster = LocalKafkaCluster(num_brokers=1, heap="1g")
    cluster.start()
    try:
        yield cluster.bootstrap_servers
    finally:
        cluster.stop()


@contextlib.contextmanager
def spark_in_own_jvm(
    app_name: str, master: str = "local[2]", extra_jars: Sequence[Path] = ()
) -> Iterator[Any]:
    """A local SparkSession (:func:`~spark_kafka_py.testing.spark.local_spark_session`, with
    the data source registered) in a JVM of its own: the JVM is started for it and shut down
    after it (its gateway's stdin closed, which ends PySpark's gateway server), so what runs
    in it finds no JIT-compiled code, heap or Python workers another run left behind, as a
    job of its own would. Starting one costs about 7 s here. ``extra_jars`` go on its
    ``spark.jars`` after the connector's.

    Raises:
        spark_kafka_py.testing.jars.JarResolutionError: the connector jars could not be
            fetched.
    """
    from pyspark import SparkContext

    from spark_kafka_py.discovery import ensure_registered
    from spark_kafka_py.testing.spark import local_spark_session

    spark = local_spark_session(app_name, master=master, extra_jars=extra_jars)
    gateway = SparkContext._gateway
    try:
        ensure_registered(spark)
        yield spark
    finally:
        spark.stop()
        if gateway is not None:
            gateway.shutdown()
            proc = getattr(gateway, "proc", None)
            if proc is not None:
                proc.stdin.close()
                proc.wait(timeout=120)
        SparkContext._gateway = None
        SparkContext._jvm = None


#: Builds a benchmark's Spark routes on a session: each maps reader options (the topic's,
#: bounded or not) to a DataFrame of ``partition, offset, v``.
RouteBuilder = Callable[[Any], dict[str, Callable[[dict[str, str]], Any]]]


def time_reads_in_own_jvms(
    session: Callable[[], contextlib.AbstractContextManager[Any]],
    topic_options: dict[str, str],
    topic: str,
    records: int,
    repeat: int,
    log: Callable[[str], None],
    build: RouteBuilder,
    unchecked: RouteBuilder | None = None,
    warmup: int = 1,
    *,
    partitions: int = 2,
    checked_per_partition: int = 500,
) -> tuple[dict[str, list[float]], int]:
    """Compare every route on the first ``checked_per_partition`` records of each of the
    topic's ``partitions`` (``partition, offset, v`` rows, the first route's against each
    other's), in one Spark session; then time each route in a Spark session of its own
    (``session()``, stopped after it: no route runs in a JVM and Python workers another route
    has used, as each would be its own job): ``warmup`` warm-up reads and a count (checked),
    then ``repeat`` timed reads of ``v`` into the noop sink. ``build(spark)`` gives the
    routes (:data:`RouteBuilder`); ``unchecked`` routes (a limit: rows that are not the
    topic's) are timed the same way after them, without the comparison. Returns each route's
    timed runs (seconds, in route order) and the number of rows compared.

    Raises:
        SystemExit: a route's rows differ from the first's, or a read's count is not
            ``records``.
    """
    head = json.dumps({topic: {str(p): checked_per_partition for p in range(partitions)}})
    bounded = {**topic_options, "endingOffsets": head}
    with session() as spark:
        routes = build(spark)
        names = list(routes)
        extra = list(unchecked(spark)) if unchecked is not None else []
        expected = sorted(tuple(r) for r in routes[names[0]](bounded).collect())
        for name in names[1:]:
            got = sorted(tuple(r) for r in routes[name](bounded).collect())
            if got != expected:
                pairs = zip(got, expected, strict=False)
                diff = next(((a, b) for a, b in pairs if a != b), None)
                raise SystemExit(
                    f"{name} and {names[0]} differ on the first records ({len(got)} and "
                    f"{len(expected)} rows; first difference {diff})"
                )
    log(f"{', '.join(names)}: the same {len(expected):,} rows")

    runs: dict[str, list[float]] = {}
    for builder, route_names in ((build, names), (unchecked, extra)):
        for name in route_names:
            assert builder is not None
            with session() as spark:
                route = builder(spark)[name]

                def timed(route: Callable[[dict[str, str]], Any] = route) -> float:
                    start = time.perf_counter()
                    route(topic_options).select("v").write.format("noop").mode("overwrite").save()
                    return time.perf_counter() - start

                warm = ", ".join(f"{timed():.1f}" for _ in range(warmup))
                log(f"{name}: warm-up {warm} s")
                count = route(topic_options).count()
                if count != records:
                    raise SystemExit(f"{name}: {count:,} rows, expected {records:,}")
                runs[name] = [timed() for _ in range(repeat)]
            each = ", ".join(f"{r:.2f}" for r in runs[name])
            per_s = records / statistics.median(runs[name])
            log(f"{name}: {per_s:,.0f} records/s (runs {each} s)")
    return runs, len(expected)
