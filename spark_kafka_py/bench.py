"""``spark-kafka-py bench``: ``format("pykafka")`` side by side with its peers, as ratios.

Every figure is a ratio of two systems measured in the same run, on the same local broker and
the same topic (written by Kafka's own Java producer), so that a busy or small machine changes
both sides alike. Benchmarks:

``batch``
    ``spark.read.format(F).load().write.format("noop")`` for ``F`` = ``pykafka`` and Spark's
    built-in ``kafka``, local[2], one topic per codec (none, lz4, zstd by default). Warm-up
    run per source, then the sources alternate; medians of ``--repeat`` runs.
``decoder``
    The executor's decoder alone: the topic's Fetch responses are first read into memory, then
    decoded to ``pyarrow.RecordBatch`` (accelerated and pure). Peers: confluent-kafka
    (librdkafka) and kafka-python consuming the same topic into Python message objects, and
    our own fetch + decode over the network without Spark. Kafka's Java
    ``ConsumerPerformance`` gives the machine's ceiling (fetch MB/s).
``stream``
    ``readStream`` with ``maxOffsetsPerTrigger`` into the ``noop`` sink: sustained records/s,
    and the driver's planning time per micro-batch (``latestOffset`` + ``partitions``) for
    1, 100 and 1,000 partitions, both sources.

Data: ``sparkkafkapy.BenchProducer`` (``testing/java/BenchProducer.java``, compiled with
``javac`` on first use): 16-byte keys, 100-byte values by default. Jars (Kafka 4.3.0 broker and
tools, Spark's Kafka connector) come from Maven Central on first use, as for the tests; peers
come with the ``bench`` extra (``pip install "spark-kafka-py[bench]"``); a missing peer is
reported and skipped.

Output: a Markdown table per benchmark, with both systems and the ratio, then versions and the
machine. ``--json FILE`` also writes every measurement.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "BenchResult",
    "add_parser",
    "bench_batch",
    "bench_decoder",
    "bench_stream",
    "environment",
    "fetch_to_memory",
    "format_table",
    "main",
    "produce_bench_data",
]

#: Codecs of the batch benchmark by default (the issue's goals: none, lz4, zstd).
DEFAULT_CODECS = ("none", "lz4", "zstd")
BENCH_PRODUCER_CLASS = "sparkkafkapy.BenchProducer"
CONSUMER_PERFORMANCE = "org.apache.kafka.tools.ConsumerPerformance"


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
    from spark_kafka_py.testing.jars import KAFKA_VERSION

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


def _bench_producer_classes() -> Path:
    """Compile ``BenchProducer.java`` once into the cache; return the classes directory.

    Raises:
        RuntimeError: ``javac`` missing or compilation failed.
    """
    from spark_kafka_py.testing.jars import KAFKA_VERSION, cache_dir, kafka_classpath

    source = resources.files("spark_kafka_py.testing").joinpath("java/BenchProducer.java")
    text = source.read_bytes()
    key = hashlib.sha256(text + KAFKA_VERSION.encode()).hexdigest()[:12]
    out_dir = cache_dir() / "java" / f"bench-{key}"
    if (out_dir / ".complete").is_file():
        return out_dir
    javac = shutil.which("javac")
    if javac is None and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "javac"
        javac = str(candidate) if candidate.is_file() else None
    if javac is None:
        raise RuntimeError("javac not found: a JDK (not just a JRE) is needed for bench data")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".bench-", dir=out_dir.parent))
    src = work / "BenchProducer.java"
    src.write_bytes(text)
    proc = subprocess.run(
        [javac, "-nowarn", "--release", "17", "-cp", kafka_classpath(), "-d", str(work), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"javac BenchProducer.java failed:\n{proc.stderr[-4000:]}")
    src.unlink()
    (work / ".complete").write_text("ok", encoding="utf-8")
    shutil.rmtree(out_dir, ignore_errors=True)
    try:
        work.rename(out_dir)
    except OSError:  # a concurrent compile won
        shutil.rmtree(work, ignore_errors=True)
    return out_dir


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
        RuntimeError: javac missing or the producer failed.
    """
    from spark_kafka_py.testing.jars import kafka_classpath
    from spark_kafka_py.testing.tools import create_topic, run_tool

    if create:
        create_topic(bootstrap, topic, partitions=partitions)
    classes = _bench_producer_classes()
    start = time.perf_counter()
    run_tool(
        BENCH_PRODUCER_CLASS,
        [
            bootstrap,
            topic,
            str(records),
            str(key_size),
            str(value_size),
            f"compression.type={compression}",
        ],
        classpath=f"{kafka_classpath()}{os.pathsep}{classes}",
        timeout_s=3600,
        heap="512m",
        fast_start=False,
    )
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------ batch


def _time_batch_read(spark: Any, fmt: str, bootstrap: str, topic: str) -> float:
    start = time.perf_counter()
    (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )
    return time.perf_counter() - start


def bench_batch(
    spark: Any,
    bootstrap: str,
    topics: dict[str, str],
    records: int,
    record_bytes: int,
    repeat: int = 2,
) -> list[BenchResult]:
    """Batch read throughput of ``pykafka`` and ``kafka`` on each topic (codec -> topic).

    One warm-up read per source and topic, then ``repeat`` alternating timed reads.
    """
    out = []
    for case, topic in topics.items():
        runs: dict[str, list[float]] = {"pykafka": [], "kafka": []}
        for fmt in runs:
            _time_batch_read(spark, fmt, bootstrap, topic)
        for _ in range(repeat):
            for fmt in runs:
                runs[fmt].append(_time_batch_read(spark, fmt, bootstrap, topic))
        out.append(
            BenchResult(
                "batch",
                case,
                "pykafka",
                "kafka (built-in)",
                records,
                records * record_bytes / 1e6,
                statistics.median(runs["pykafka"]),
                statistics.median(runs["kafka"]),
                runs,
            )
        )
    return out


# ---------------------------------------------------------------------------------- decoder


@dataclass
class FetchedPartition:
    """Raw ``records`` bytes of every Fetch response of one partition, in order."""

    topic: str
    partition: int
    chunks: list[bytes]
    start: int
    end: int


def fetch_to_memory(
    bootstrap: str, topic: str, max_partition_fetch_bytes: int = 1 << 20
) -> list[FetchedPartition]:
    """Read a whole topic's Fetch responses into memory (our client), for decoder timings.

    Each chunk is one Fetch response's records bytes for one partition, as the executor gets
    them (``max.partition.fetch.bytes`` each).
    """
    from spark_kafka_py.client.cluster import KafkaClient
    from spark_kafka_py.consumer.fetcher import CONSUMER_REPLICA_ID, _find_partition
    from spark_kafka_py.consumer.settings import ConsumerSettings, client_config
    from spark_kafka_py.consumer.types import TopicPartition
    from spark_kafka_py.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
    from spark_kafka_py.records import decode_records
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.planner import Planner

    options = parse_options(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, streaming=False
    )
    planner = Planner(options)
    try:
        leaders, _ = planner.topic_partitions()
        start = planner.resolve(options.starting_offsets, leaders, "startingOffsets")
        end = planner.resolve(options.ending_offsets, leaders, "endingOffsets")
    finally:
        planner.close()
    settings = ConsumerSettings(bootstrap_servers=bootstrap)
    client = KafkaClient(client_config(settings))
    out = []
    try:
        metadata = client.metadata([topic])
        info = metadata.topics[topic]
        for tp in sorted(start, key=lambda t: t.partition):
            assert isinstance(tp, TopicPartition)
            leader = info.partitions[tp.partition].leader_id
            pos, stop = start[tp], end[tp]
            chunks = []
            while pos < stop:
                request = FetchRequest(
                    replica_id=CONSUMER_REPLICA_ID,
                    max_wait_ms=500,
                    min_bytes=1,
                    max_bytes=settings.fetch_max_bytes,
                    isolation_level=0,
                    session_id=0,
                    session_epoch=-1,
                    topics=[
                        FetchTopic(
                            topic=topic,
                            topic_id=info.topic_id,
                            partitions=[
                                FetchPartition(
                                    partition=tp.partition,
                                    current_leader_epoch=-1,
                                    fetch_offset=pos,
                                    log_start_offset=-1,
                                    partition_max_bytes=max_partition_fetch_bytes,
                                )
                            ],
                        )
                    ],
                    rack_id="",
                )
                response = client.send(leader, request)
                part = _find_partition(response, tp, info.topic_id)
                if part is None or part.error_code:
                    raise RuntimeError(f"Fetch of {tp} at {pos} failed: {part}")
                data = bytes(part.records or b"")
                decoded = decode_records(
                    data, topic=topic, partition=tp.partition, start_offset=pos, end_offset=stop
                )
                if decoded.next_offset <= pos:
                    raise RuntimeError(f"no progress fetching {tp} at {pos}")
                chunks.append(data)
                pos = decoded.next_offset
            out.append(FetchedPartition(topic, tp.partition, chunks, start[tp], stop))
    finally:
        client.close()
    return out


def _time_decode(
    fetched: list[FetchedPartition], decode: Callable[..., Any], limit: int | None = None
) -> tuple[float, int]:
    """Seconds to decode every chunk (in order, as the executor would) and the row count."""
    rows = 0
    start_t = time.perf_counter()
    for fp in fetched:
        pos = fp.start
        for data in fp.chunks:
            res = decode(
                data, topic=fp.topic, partition=fp.partition, start_offset=pos, end_offset=fp.end
            )
            rows += res.batch.num_rows
            pos = res.next_offset
            if limit is not None and rows >= limit:
                return time.perf_counter() - start_t, rows
    return time.perf_counter() - start_t, rows


def _time_confluent(bootstrap: str, topic: str, partitions: int, records: int) -> float:
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        count = 0
        start = time.perf_counter()
        deadline = start + 600
        while count < records and time.perf_counter() < deadline:
            for msg in consumer.consume(num_messages=10_000, timeout=1.0):
                if msg.error() is None:
                    msg.key()
                    msg.value()
                    count += 1
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if count < records:
        raise RuntimeError(f"confluent-kafka consumed {count} of {records} records")
    return elapsed


def _time_kafka_python(bootstrap: str, topic: str, partitions: int, records: int) -> float:
    import kafka

    consumer = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None
    )
    try:
        tps = [kafka.TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        count = 0
        start = time.perf_counter()
        deadline = start + 600
        while count < records and time.perf_counter() < deadline:
            for msgs in consumer.poll(timeout_ms=1000, max_records=10_000).values():
                for msg in msgs:
                    msg.key  # noqa: B018 - touch what the other systems return
                    msg.value  # noqa: B018
                    count += 1
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if count < records:
        raise RuntimeError(f"kafka-python consumed {count} of {records} records")
    return elapsed * records / count


def _time_ours_fetch_decode(bootstrap: str, topic: str) -> tuple[float, int]:
    """Our fetcher end to end without Spark (network + decode), partitions one after another."""
    from spark_kafka_py.consumer.fetcher import read_range
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.planner import Planner

    options = parse_options(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, streaming=False
    )
    planner = Planner(options)
    try:
        leaders, _ = planner.topic_partitions()
        start = planner.resolve(options.starting_offsets, leaders, "startingOffsets")
        end = planner.resolve(options.ending_offsets, leaders, "endingOffsets")
    finally:
        planner.close()
    rows = 0
    t0 = time.perf_counter()
    for tp in start:
        for batch in read_range(options.consumer, tp, start[tp], end[tp]):
            rows += batch.num_rows
    return time.perf_counter() - t0, rows


def consumer_performance(bootstrap: str, topic: str, records: int) -> dict[str, float]:
    """Kafka's Java ``ConsumerPerformance`` on ``topic``: its CSV summary as a dict
    (``fetch.MB.sec``, ``fetch.nMsg.sec``, ``fetch.time.ms`` ...)."""
    from spark_kafka_py.testing.tools import run_tool

    proc = run_tool(
        CONSUMER_PERFORMANCE,
        [
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--messages",
            str(records),
            "--timeout",
            "60000",
        ],
        timeout_s=900,
        heap="512m",
        fast_start=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if "fetch.MB.sec" in line and i + 1 < len(lines):
            keys = [k.strip() for k in line.split(",")]
            values = [v.strip() for v in lines[i + 1].split(",")]
            out = {}
            for k, v in zip(keys, values, strict=False):
                with contextlib.suppress(ValueError):
                    out[k] = float(v)
            return out
    raise RuntimeError(f"ConsumerPerformance printed no summary:\n{proc.stdout[-2000:]}")


def bench_decoder(
    bootstrap: str,
    topic: str,
    case: str,
    records: int,
    record_bytes: int,
    partitions: int,
    repeat: int = 2,
    pure_limit: int = 500_000,
    kafka_python_limit: int = 1_000_000,
) -> list[BenchResult]:
    """Decoder-only and consumer comparisons on one topic (see the module docstring)."""
    from spark_kafka_py.records import decoder
    from spark_kafka_py.records._pure import decode_records_pure

    mb = records * record_bytes / 1e6
    fetched = fetch_to_memory(bootstrap, topic)
    runs: dict[str, list[float]] = {"decode": []}
    rows = 0
    for _ in range(repeat):
        secs, rows = _time_decode(fetched, decoder.decode_records)
        runs["decode"].append(secs)
    if rows != records:
        raise RuntimeError(f"decoded {rows} rows, expected {records}")
    ours = statistics.median(runs["decode"])
    name = f"decode to Arrow ({decoder.IMPLEMENTATION})"
    out = []

    # pure reference, on a prefix (it is slow), scaled to the whole topic
    secs, n = _time_decode(fetched, decode_records_pure, limit=pure_limit)
    pure_s = secs * records / max(n, 1)
    out.append(
        BenchResult(
            "decoder",
            case,
            name,
            "decode to Arrow (pure Python)",
            records,
            mb,
            ours,
            pure_s,
            {"decode": runs["decode"], "pure": [pure_s]},
            f"pure timed on {n:,} records, scaled",
        )
    )
    try:
        conf = [_time_confluent(bootstrap, topic, partitions, records) for _ in range(repeat)]
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "confluent-kafka consume()",
                records,
                mb,
                ours,
                statistics.median(conf),
                {"decode": runs["decode"], "confluent": conf},
                "peer includes its network fetch from the local broker",
            )
        )
    except ImportError:
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "confluent-kafka",
                records,
                mb,
                ours,
                None,
                note="confluent-kafka not installed",
            )
        )
    try:
        limit = min(records, kafka_python_limit)
        kp = _time_kafka_python(bootstrap, topic, partitions, limit) * records / limit
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "kafka-python poll()",
                records,
                mb,
                ours,
                kp,
                {"decode": runs["decode"], "kafka-python": [kp]},
                f"kafka-python timed on {limit:,} records, scaled",
            )
        )
    except ImportError:
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "kafka-python",
                records,
                mb,
                ours,
                None,
                note="kafka-python not installed",
            )
        )
    e2e = [_time_ours_fetch_decode(bootstrap, topic)[0] for _ in range(repeat)]
    cp = consumer_performance(bootstrap, topic, records)
    fetch_ms = cp.get("fetch.time.ms") or 0.0
    java_s = fetch_ms / 1000 if fetch_ms else None
    out.append(
        BenchResult(
            "decoder",
            case,
            "our fetch + decode (no Spark)",
            "Java ConsumerPerformance (ceiling)",
            records,
            mb,
            statistics.median(e2e),
            java_s,
            {"ours_e2e": e2e, "java": [java_s or 0.0]},
            f"Java fetch {cp.get('fetch.MB.sec', 0):.1f} MB/s, "
            f"{cp.get('fetch.nMsg.sec', 0):,.0f} records/s (its MB: MiB of keys + values)",
        )
    )
    return out


# ---------------------------------------------------------------------------------- stream


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


# ----------------------------------------------------------------------------------- memory

_MEMORY_CHILD = r"""
import json, sys, time
import pyarrow as pa
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition

def hwm_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0

bootstrap, topic, end, fetch_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
settings = ConsumerSettings(bootstrap_servers=bootstrap, max_partition_fetch_bytes=fetch_bytes)
# warm up imports and one batch, as a Python worker that ran a task before
for batch in read_range(settings, TopicPartition(topic, 0), 0, min(end, 1000)):
    pass
base = rss_mb()
rows = 0
largest = 0
t0 = time.perf_counter()
for batch in read_range(settings, TopicPartition(topic, 0), 0, end):
    # what PySpark does with each batch: an Arrow IPC stream to the JVM
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    largest = max(largest, batch.nbytes)
    rows += batch.num_rows
secs = time.perf_counter() - t0
print(json.dumps({"rows": rows, "base_mb": base, "peak_mb": hwm_mb(),
                  "largest_batch_mb": largest / 1e6, "secs": secs}))
"""


def bench_memory(
    bootstrap: str, topic: str, records: int, fetch_sizes: Sequence[int]
) -> list[dict[str, float]]:
    """Peak RSS of a fresh Python process reading partition 0 of ``topic`` (``records``
    records) with our fetcher and writing every batch as an Arrow IPC stream (as a PySpark
    Python worker does), once per ``max.partition.fetch.bytes`` in ``fetch_sizes``.

    Returns:
        Per fetch size: ``rows``, ``base_mb`` (RSS after imports and a first small read),
        ``peak_mb`` (VmHWM), ``largest_batch_mb`` (Arrow bytes of the largest batch), ``secs``.
    """
    import sys

    out = []
    for size in fetch_sizes:
        proc = subprocess.run(
            [sys.executable, "-c", _MEMORY_CHILD, bootstrap, topic, str(records), str(size)],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"memory benchmark child failed:\n{proc.stderr[-3000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["max_partition_fetch_bytes"] = size
        out.append(res)
    return out


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


def _spread(results: Sequence[BenchResult]) -> str:
    """How noisy the runs were: per system, (max - min) / median of its runs."""
    parts = []
    for r in results:
        for name, runs in r.runs.items():
            if len(runs) > 1 and statistics.median(runs) > 0:
                s = (max(runs) - min(runs)) / statistics.median(runs)
                parts.append(f"{r.bench}/{r.case}/{name} {s:.0%}")
    return ", ".join(parts)


# -------------------------------------------------------------------------------------- CLI


@contextlib.contextmanager
def _broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from spark_kafka_py.testing.broker import LocalKafkaCluster

    cluster = LocalKafkaCluster(num_brokers=1, heap="1g")
    cluster.start()
    try:
        yield cluster.bootstrap_servers
    finally:
        cluster.stop()


def run(args: argparse.Namespace) -> int:
    """Run the benchmarks named in ``args.which``; print the tables; return 0."""
    which = set(args.which) if args.which else {"batch", "decoder"}
    unknown = which - {"batch", "decoder", "stream", "memory", "all"}
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    if "all" in which:
        which = {"batch", "decoder", "stream"}
    codecs = [c.strip() for c in args.codecs.split(",") if c.strip()]
    record_bytes = args.key_size + args.value_size
    results: list[BenchResult] = []
    memory: list[dict[str, float]] = []
    part_mb = 0.0
    with _broker(args.bootstrap_servers) as bootstrap:
        topics: dict[str, str] = {}
        run_id = uuid.uuid4().hex[:8]
        for codec in codecs if which - {"memory"} else []:
            topic = f"bench-{codec}-{args.records}-{run_id}"
            secs = produce_bench_data(
                bootstrap,
                topic,
                args.records,
                partitions=args.partitions,
                key_size=args.key_size,
                value_size=args.value_size,
                compression=codec,
            )
            print(f"produced {args.records:,} records ({codec}) in {secs:.1f} s", flush=True)
            topics[codec] = topic
        if "decoder" in which:
            for codec, topic in topics.items():
                results += bench_decoder(
                    bootstrap,
                    topic,
                    codec,
                    args.records,
                    record_bytes,
                    args.partitions,
                    repeat=args.repeat,
                )
                print(format_table(results[-4:]), flush=True)
        if "batch" in which or "stream" in which:
            from spark_kafka_py.testing.spark import local_spark_session

            spark = local_spark_session("spark-kafka-py bench")
            try:
                if "batch" in which:
                    results += bench_batch(
                        spark, bootstrap, topics, args.records, record_bytes, repeat=args.repeat
                    )
                    print(format_table([r for r in results if r.bench == "batch"]), flush=True)
                if "stream" in which:
                    first = next(iter(topics.values()))
                    results += bench_stream(
                        spark,
                        bootstrap,
                        first,
                        args.records,
                        record_bytes,
                        args.max_offsets_per_trigger,
                    )
                    print(format_table(results[-1:]), flush=True)
            finally:
                spark.stop()
        if "stream" in which:
            counts = [int(c) for c in args.planning_partitions.split(",") if c.strip()]
            results += bench_planning(bootstrap, counts)
            print(format_table(results[-len(counts) :]), flush=True)
        if "memory" in which:
            topic = f"bench-memory-{args.memory_records}-{run_id}"
            secs = produce_bench_data(
                bootstrap, topic, args.memory_records, partitions=1,
                key_size=args.key_size, value_size=args.value_size,
            )  # fmt: skip
            part_mb = args.memory_records * record_bytes / 1e6
            print(f"produced one {part_mb:,.0f} MB partition in {secs:.1f} s", flush=True)
            sizes = [int(x) for x in args.memory_fetch_bytes.split(",") if x.strip()]
            memory = bench_memory(bootstrap, topic, args.memory_records, sizes)
    env = environment()
    command = "spark-kafka-py bench " + " ".join(args.argv) if args.argv else "spark-kafka-py bench"
    print()
    print(f"### spark-kafka-py benchmarks, {env['date']}")
    print()
    print(
        f"`{command}`: {args.records:,} records/topic, {args.key_size}-byte keys, "
        f"{args.value_size}-byte values, {args.partitions} partitions, local[2], "
        f"medians of {args.repeat} runs; ratio = ours / peer throughput (> 1: ours faster)."
    )
    print()
    if results:
        print(format_table(results))
        print()
    if memory:
        print(
            f"Peak RSS reading one partition of {part_mb:,.0f} MB (keys + values) in a fresh "
            "Python process, every batch written as Arrow IPC (as a PySpark worker does):"
        )
        print()
        print(
            "| max.partition.fetch.bytes | rows | RSS before (MB) | peak RSS (MB) | "
            "peak - before (MB) | largest Arrow batch (MB) |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for m in memory:
            print(
                f"| {m['max_partition_fetch_bytes']:,} | {m['rows']:,} | {m['base_mb']:.0f} | "
                f"{m['peak_mb']:.0f} | {m['peak_mb'] - m['base_mb']:.0f} | "
                f"{m['largest_batch_mb']:.1f} |"
            )
        print()
    for k, v in env.items():
        print(f"- {k}: {v}")
    spread = _spread(results)
    if spread:
        print(f"- run-to-run spread: {spread}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "env": env,
                    "command": command,
                    "results": [{**asdict(r), "ratio": r.ratio} for r in results],
                    "memory": memory,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``spark-kafka-py bench`` (see the module docstring)."""
    p = subparsers.add_parser(
        "bench",
        help="benchmark format('pykafka') against Spark's format('kafka') and Kafka clients",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument(
        "which",
        nargs="*",
        metavar="{batch,decoder,stream,memory,all}",
        help="benchmarks to run (default: batch decoder)",
    )
    p.add_argument("--records", type=int, default=5_000_000, help="records per topic")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--key-size", type=int, default=16, help="bytes")
    p.add_argument("--value-size", type=int, default=100, help="bytes")
    p.add_argument(
        "--codecs",
        default=",".join(DEFAULT_CODECS),
        help="producer compression per topic, comma separated",
    )
    p.add_argument("--repeat", type=int, default=2, help="timed runs per system")
    p.add_argument("--max-offsets-per-trigger", type=int, default=500_000)
    p.add_argument("--planning-partitions", default="1,100,1000")
    p.add_argument(
        "--memory-records",
        type=int,
        default=18_500_000,
        help="records of the one-partition topic of the memory benchmark (18.5M x 116 B = 2.1 GB)",
    )
    p.add_argument(
        "--memory-fetch-bytes",
        default="1048576,8388608",
        help="max.partition.fetch.bytes values of the memory benchmark",
    )
    p.add_argument("--bootstrap-servers", help="use this cluster instead of a local broker")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.set_defaults(func=_main_from_cli)


def _main_from_cli(args: argparse.Namespace) -> int:
    import sys

    args.argv = sys.argv[2:] if len(sys.argv) > 1 and sys.argv[1] == "bench" else []
    return run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m spark_kafka_py.bench [which ...] [options]``."""
    import sys

    parser = argparse.ArgumentParser(prog="spark-kafka-py")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(["bench", *argv])
    args.argv = argv
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
