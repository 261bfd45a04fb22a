"""Write throughput: ``df.write.format("pykafka")`` against Spark's built-in ``format("kafka")``.

Same as ``spark-kafka-py bench write``. One Spark session (local[2]) and one DataFrame for both
sinks: ``spark.range(records)`` in ``partitions`` tasks, ``key`` = the row number as a decimal
string zero-padded to ``--key-size`` bytes (distinct keys, so both sinks place records with
``murmur2(key)``), ``value`` = ``--value-size`` bytes of the hex SHA-512 of ``id % 4096`` (a
pool of 4,096 payloads over a 16-letter alphabet, like the read benchmarks' data; 16 KiB of
records compress about 2.1x with zstd level 3 and 1.1x with lz4, which has no entropy
coding). The DataFrame is cached and materialised once by a ``noop`` write, then each sink
writes 1,000 rows once (the session's one-time costs: PySpark's lookup of the Python
data source, the Python workers, the Java producer's classes). Timed: per codec (``--codecs``,
``kafka.compression.type``) and run (``--repeat``), each sink in turn writes every row into a
fresh topic of ``partitions`` partitions, both sinks with the same producer settings:
``kafka.linger.ms`` 5 (Kafka 4's default and the pykafka sink's; the kafka-clients 3.9 of
Spark's connector 4.2 would default to 0), ``kafka.buffer.memory`` from ``--buffer-memory``
(default 32 MiB) and the defaults both share for the rest (``acks`` ``all``, idempotence on,
``batch.size`` 16 KiB). After each write the topic's end offsets must sum to the rows written
(:class:`WriteCountError` otherwise); the topic is then deleted.

Memory: during every ``pykafka`` write the resident memory of this process's PySpark Python
workers (the processes descending from this driver whose command line names ``pyspark.daemon``
or ``pyspark.worker``) is sampled every 20 ms (:class:`WorkerMemory`; psutil when installed,
else ``/proc``); reported are PySpark's daemon's RSS (a fresh worker starts from it: workers
are forked from the daemon), the largest worker's RSS during the 1,000-row warm-up write
(the sink's imports and a producer) and the largest single worker's RSS during the timed
writes, next to ``kafka.buffer.memory`` and the Arrow batch the worker receives
(``spark.sql.execution.arrow.maxRecordsPerBatch`` rows).

Usage::

    python benchmarks/write.py [--records 5000000] [--partitions 4]
        [--codecs none,lz4,zstd] [--repeat 2] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult

__all__ = [
    "BUFFER_MEMORY_DEFAULT",
    "SINKS",
    "WorkerMemory",
    "WriteCountError",
    "WriteMemory",
    "bench_write",
    "bench_write_data",
    "end_offsets_sum",
    "format_memory_table",
]

#: The two sinks compared, ours first: (format name, name in the tables).
SINKS = (("pykafka", "pykafka"), ("kafka", "kafka (built-in)"))
#: ``kafka.buffer.memory`` default (bytes): the Java producer's, which the pykafka sink shares.
BUFFER_MEMORY_DEFAULT = 33_554_432
#: Distinct payloads of the value column (as ``BenchProducer``'s pool).
PAYLOAD_POOL = 4096
#: ``kafka.linger.ms`` of every write, both sinks (Kafka 4's default, KIP-1030).
LINGER_MS = 5
#: Rows each sink writes once before anything is timed.
WARM_UP_ROWS = 1000
#: Seconds between two samples of the workers' memory.
SAMPLE_INTERVAL_S = 0.02
#: Hex characters of one SHA-512 digest.
_SHA512_HEX = 128


class WriteCountError(RuntimeError):
    """A write's topic does not hold the rows written (end offsets summed over partitions)."""


def bench_write_data(spark: Any, records: int, key_size: int, value_size: int, tasks: int) -> Any:
    """The benchmark's DataFrame (``key``, ``value``: strings), deterministic, not cached.

    Args:
        records: rows.
        key_size: bytes per key (the row number zero-padded; at least its digits).
        value_size: bytes per value (hex SHA-512 digests of ``id % 4096``, concatenated).
        tasks: Spark partitions, i.e. write tasks.
    """
    from pyspark.sql import functions as F

    if key_size < len(str(max(records - 1, 0))):
        raise ValueError(f"--key-size {key_size} is too short for {records:,} distinct keys")
    payload = F.col("id") % PAYLOAD_POOL
    digests = [
        F.sha2(F.concat_ws(":", payload.cast("string"), F.lit(str(i))), 512)
        for i in range(max(1, math.ceil(value_size / _SHA512_HEX)))
    ]
    return spark.range(0, records, 1, tasks).select(
        F.lpad(F.col("id").cast("string"), key_size, "0").alias("key"),
        F.substring(F.concat(*digests), 1, value_size).alias("value"),
    )


def end_offsets_sum(bootstrap: str, topic: str, partitions: int) -> int:
    """Sum over ``topic``'s partitions ``0 .. partitions - 1`` of the end offsets (ListOffsets
    latest), with our client."""
    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.consumer.offsets import list_offsets
    from spark_kafka_py.consumer.types import TopicPartition

    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        ends = list_offsets(client, {TopicPartition(topic, p): -1 for p in range(partitions)})
    return sum(ends.values())


# ----------------------------------------------------------------------------------- memory


def _worker_rss_psutil() -> dict[int, tuple[int, int]]:
    import psutil

    out = {}
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if _is_worker(" ".join(proc.cmdline())):
                out[proc.pid] = (proc.ppid(), proc.memory_info().rss)
    return out


def _worker_rss_proc() -> dict[int, tuple[int, int]]:
    children: dict[int, list[int]] = {}
    parent: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(entry.path, "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
                parent[int(entry.name)] = ppid
    out = {}
    todo = list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        with contextlib.suppress(OSError, ValueError, IndexError):
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            if _is_worker(cmdline):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        out[pid] = (parent[pid], int(line.split()[1]) * 1024)
    return out


def _is_worker(cmdline: str) -> bool:
    return "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline


def _rss_sampler() -> Callable[[], dict[int, tuple[int, int]]]:
    try:
        import psutil  # noqa: F401
    except ImportError:
        return _worker_rss_proc
    return _worker_rss_psutil


class WorkerMemory:
    """Samples the resident memory of this process's PySpark Python workers while in use.

    ``with WorkerMemory() as m: ...``: one sample on entry, then one every ``interval_s``
    seconds on a daemon thread until exit, one on exit. The processes sampled descend from
    this one (the driver; in local mode the JVM and its Python processes are its children)
    and name ``pyspark.daemon`` or ``pyspark.worker`` on their command line: PySpark's daemon,
    started once, and the workers it forks (which keep its command line), each running
    tasks one after another. A forked worker starts with the daemon's pages (shared until
    written), so the daemon's RSS is what a fresh worker starts from. Sizes in MiB.

    Attributes:
        daemon_mb: the daemon's RSS (largest sample; a process whose parent is no worker).
        before_mb: largest forked worker's RSS at entry (0 when none ran yet).
        peak_mb: largest forked worker's RSS in any sample.
        peak_sum_mb: largest sum over the daemon and its workers of one sample (shared pages
            counted in each process).
        workers: distinct forked workers seen.
        samples: samples taken.
    """

    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self.daemon_mb = 0.0
        self.before_mb = 0.0
        self.peak_mb = 0.0
        self.peak_sum_mb = 0.0
        self.samples = 0
        self._pids: set[int] = set()
        self._sample = _rss_sampler()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-rss", daemon=True)
        self._error: BaseException | None = None

    @property
    def workers(self) -> int:
        return len(self._pids)

    def _take(self) -> float:
        rss = self._sample()
        self.samples += 1
        forked = {pid: size for pid, (ppid, size) in rss.items() if ppid in rss}
        daemons = [size for pid, (_ppid, size) in rss.items() if pid not in forked]
        self._pids.update(forked)
        biggest = max(forked.values(), default=0) / 2**20
        self.peak_mb = max(self.peak_mb, biggest)
        self.daemon_mb = max([self.daemon_mb, *(d / 2**20 for d in daemons)])
        self.peak_sum_mb = max(self.peak_sum_mb, sum(s for _p, s in rss.values()) / 2**20)
        return biggest

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                self._take()
        except BaseException as exc:  # re-raised by __exit__ in the caller's thread
            self._error = exc

    def __enter__(self) -> WorkerMemory:
        self.before_mb = self._take()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()
        if self._error is not None:
            raise self._error


@dataclass
class WriteMemory:
    """The pykafka sink's Python workers during one codec's timed writes (largest over runs).

    Attributes:
        case: codec.
        daemon_mb: PySpark daemon's RSS (MiB), where a fresh worker starts.
        warm_mb: largest worker RSS (MiB) during the warm-up write (1,000 rows): a worker
            with the sink's imports and a producer.
        before_mb: largest single worker RSS (MiB) before the write.
        peak_mb: largest single worker RSS (MiB) during the write.
        peak_sum_mb: largest sum over all workers of one sample (MiB).
        workers: distinct worker processes seen.
        buffer_memory: ``kafka.buffer.memory`` of the writes (bytes).
        arrow_batch_rows: ``spark.sql.execution.arrow.maxRecordsPerBatch``.
        arrow_batch_mb: one Arrow batch's key and value bytes plus their 4-byte Arrow offsets
            (MiB).
        rows_per_task: rows each write task receives.
    """

    case: str
    daemon_mb: float
    warm_mb: float
    before_mb: float
    peak_mb: float
    peak_sum_mb: float
    workers: int
    buffer_memory: int
    arrow_batch_rows: int
    arrow_batch_mb: float
    rows_per_task: int
    runs: list[float] = field(default_factory=list)


# ------------------------------------------------------------------------------------ write


def _time_write(
    df: Any,
    fmt: str,
    bootstrap: str,
    topic: str,
    partitions: int,
    codec: str | None,
    buffer_memory: int = BUFFER_MEMORY_DEFAULT,
) -> float:
    from spark_kafka_py.testing.tools import create_topic

    create_topic(bootstrap, topic, partitions=partitions)
    writer = (
        df.write.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("kafka.buffer.memory", str(buffer_memory))
        .option("kafka.linger.ms", str(LINGER_MS))
        .mode("append")
    )
    if codec is not None:
        writer = writer.option("kafka.compression.type", codec)
    start = time.perf_counter()
    writer.save()
    return time.perf_counter() - start


def _check_and_drop(bootstrap: str, topic: str, partitions: int, rows: int, fmt: str) -> None:
    from spark_kafka_py.testing.tools import delete_topic

    written = end_offsets_sum(bootstrap, topic, partitions)
    if written != rows:
        raise WriteCountError(
            f"format({fmt!r}) wrote {rows:,} rows but topic {topic} holds {written:,} records "
            "(end offsets summed over its partitions)"
        )
    delete_topic(bootstrap, topic)


@contextlib.contextmanager
def _cached(df: Any) -> Iterator[Any]:
    from pyspark import StorageLevel

    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        df.write.format("noop").mode("overwrite").save()
        yield df
    finally:
        df.unpersist()


def bench_write(
    spark: Any,
    bootstrap: str,
    codecs: Sequence[str],
    records: int,
    key_size: int,
    value_size: int,
    *,
    partitions: int = 4,
    repeat: int = 2,
    buffer_memory: int = BUFFER_MEMORY_DEFAULT,
    sinks: Sequence[tuple[str, str]] = SINKS,
) -> tuple[list[BenchResult], list[WriteMemory]]:
    """Write throughput of each sink per codec, and the pykafka workers' memory.

    See the module docstring for the data, the warm-up and the order of the runs.

    Args:
        spark: the session (Spark's Kafka connector on its class path for ``kafka``).
        bootstrap: ``host:port`` list of the cluster written to.
        codecs: ``kafka.compression.type`` values, one case each.
        records, key_size, value_size: rows and bytes per key and value.
        partitions: partitions of every topic written, and write tasks.
        repeat: timed writes per sink and codec; the table has the medians.
        buffer_memory: ``kafka.buffer.memory`` of every write, both sinks (bytes).
        sinks: ``(format, table name)``, ours first.

    Returns:
        One :class:`BenchResult` per codec (``ours`` = the first sink), and per codec the
        memory of the first sink's workers when it is ``pykafka``.

    Raises:
        WriteCountError: a topic did not hold the rows written.
    """
    record_bytes = key_size + value_size
    run_id = uuid.uuid4().hex[:8]
    arrow_rows = int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", "10000"))
    results: list[BenchResult] = []
    memory: list[WriteMemory] = []
    data = bench_write_data(spark, records, key_size, value_size, partitions)
    with _cached(data) as df:
        warm_mb = 0.0
        for fmt, _name in sinks:  # once per sink, untimed
            topic = f"bench-write-warmup-{fmt}-{run_id}"
            with WorkerMemory() as warm:
                _time_write(
                    df.limit(WARM_UP_ROWS), fmt, bootstrap, topic, partitions, None, buffer_memory
                )
            if fmt == "pykafka":
                warm_mb = warm.peak_mb
            _check_and_drop(bootstrap, topic, partitions, min(records, WARM_UP_ROWS), fmt)
        for codec in codecs:
            runs: dict[str, list[float]] = {name: [] for _fmt, name in sinks}
            meters: list[WorkerMemory] = []
            for i in range(repeat):
                for fmt, name in sinks:
                    topic = f"bench-write-{fmt}-{codec}-{records}-{run_id}-{i}"
                    meter = WorkerMemory() if fmt == "pykafka" else contextlib.nullcontext()
                    with meter:
                        secs = _time_write(
                            df, fmt, bootstrap, topic, partitions, codec, buffer_memory
                        )
                    _check_and_drop(bootstrap, topic, partitions, records, fmt)
                    runs[name].append(secs)
                    if isinstance(meter, WorkerMemory):
                        meters.append(meter)
                    print(f"write {codec} {name}: {records / secs:,.0f} rows/s", flush=True)
            medians = [statistics.median(runs[name]) for _fmt, name in sinks]
            results.append(
                BenchResult(
                    "write",
                    codec,
                    sinks[0][1],
                    sinks[1][1] if len(sinks) > 1 else "-",
                    records,
                    records * record_bytes / 1e6,
                    medians[0],
                    medians[1] if len(medians) > 1 else None,
                    runs,
                )
            )
            if meters:
                memory.append(
                    WriteMemory(
                        codec,
                        max(m.daemon_mb for m in meters),
                        warm_mb,
                        max(m.before_mb for m in meters),
                        max(m.peak_mb for m in meters),
                        max(m.peak_sum_mb for m in meters),
                        max(m.workers for m in meters),
                        buffer_memory,
                        arrow_rows,
                        arrow_rows * (record_bytes + 8) / 2**20,
                        math.ceil(records / partitions),
                        [m.peak_mb for m in meters],
                    )
                )
    return results, memory


def format_memory_table(memory: Sequence[WriteMemory]) -> str:
    """Markdown table of :class:`WriteMemory` rows."""
    lines = [
        "| codec | daemon RSS (MiB) | worker after warm-up (MiB) | peak worker RSS (MiB) | "
        "peak - warm-up (MiB) | all Python workers peak (MiB) | workers | "
        "kafka.buffer.memory (MiB) | Arrow batch rows | Arrow batch (MiB) | rows per task |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in memory:
        lines.append(
            f"| {m.case} | {m.daemon_mb:.0f} | {m.warm_mb:.0f} | {m.peak_mb:.0f} | "
            f"{m.peak_mb - m.warm_mb:.0f} | {m.peak_sum_mb:.0f} | {m.workers} | "
            f"{m.buffer_memory / 2**20:.0f} | "
            f"{m.arrow_batch_rows:,} | {m.arrow_batch_mb:.2f} | {m.rows_per_task:,} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["write", *sys.argv[1:]]))
