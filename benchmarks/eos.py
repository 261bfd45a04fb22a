"""Exactly-once against at-least-once: the same stream into ``writeStream.format("pykafka")``.

Same as ``spark-kafka-py bench eos`` (issue 13: "exactly-once vs at-least-once rows/s for the
same stream, the ratio, and the added commit latency per micro-batch"). One Spark session
(local[2]), one broker, one input topic of ``--records`` records (16-byte keys, 100-byte values
by default, ``--partitions`` partitions) written once by Kafka's Java producer
(:func:`benchmarks.harness.produce_bench_data`). The query, the same for both modes::

    spark.readStream.format("pykafka").option("subscribe", input)
        .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", per_trigger)
        .load().select("key", "value")
        .writeStream.format("pykafka").option("topic", output)
        .option("deliveryGuarantee", mode).trigger(availableNow=True).start()

Each mode first runs once on a 1,000-record topic, untimed (the Python workers, the sink's
imports, the commit log topic). Then per ``--repeat`` the modes alternate, at-least-once first,
each run with a fresh output topic (as many partitions as the input), a fresh checkpoint and, in
exactly-once, a fresh ``transactionalIdPrefix``; every run's commit log is one topic of this
benchmark (``commitLogTopic``), keyed by the prefix.

Measured per run:

- rows/s: records / wall seconds from ``start()`` to the end of ``awaitTermination()``.
- ``addBatch`` (ms) of every micro-batch with rows, from ``query.recentProgress``: in a
  micro-batch of a DataSource V2 sink it spans the tasks' writes and the driver's
  ``commit(messages, batchId)``, so the difference of the modes' medians is the added cost of
  exactly-once per micro-batch (the transactions' AddPartitionsToTxn on the executors, and on
  the driver the DescribeTransactions checks, the two commit log writes and the EndTxns).
- The driver's EndTxn phase per micro-batch (ms), read back from the commit log: the committer
  stamps its ``committing`` record (written before the first EndTxn) and its ``committed``
  record (after the last) with its clock (``CreateTime``); their difference is the time it took
  to end every task's transaction plus one commit log write. Nothing is added to the product to
  measure it.
- The driver's whole commit (ms), timed directly outside Spark (:func:`time_driver_commit`):
  :data:`DIRECT_COMMITS` times, ``--partitions`` transactions are left open as the tasks leave
  them (one per transactional id ``<prefix>-<task>``, 100 records each, flushed, not ended),
  then timed: what ``KafkaStreamArrowWriter.commit`` runs on the driver, a new
  ``ExactlyOnceCommitter`` (its client), ``commit(handles, batch_id)`` (reading the commit log,
  DescribeTransactions per task, the two commit log writes, EndTxn per task) and ``close()``.
  Also timed there, per task and batch: the task's ``begin_transaction()`` (FindCoordinator
  and InitProducerId with its transactional id), right after the previous batch's commit, as
  in the query.

Checked after each run (:class:`EosCountError` otherwise): the at-least-once output's end
offsets sum to ``records`` (no failure, so no duplicate); the exactly-once output read with
``isolation.level=read_committed`` holds exactly ``records`` records, counted with Kafka's Java
consumer (:func:`spark_kafka_py.testing.tools.read_all`) up to :data:`JAVA_COUNT_MAX` records,
else with ``spark.read.format("pykafka").option("kafka.isolation.level", "read_committed")``
(the end offsets would count the transaction markers too). Output topics are then deleted.

Usage::

    python benchmarks/eos.py [--records 2000000] [--per-trigger 200000] [--repeat 2]
        [--partitions 4] [--bootstrap-servers HOST:PORT] [--json FILE]
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult, produce_bench_data
from benchmarks.write import end_offsets_sum

__all__ = [
    "ALO",
    "EOS",
    "EosCountError",
    "EosLatency",
    "bench_eos",
    "format_latency_table",
    "time_driver_commit",
]

#: ``deliveryGuarantee`` values compared.
ALO = "at-least-once"
EOS = "exactly-once"
#: Records of the untimed warm-up topic.
WARM_UP_RECORDS = 1000
#: Commits timed by :func:`time_driver_commit`.
DIRECT_COMMITS = 10
#: Records per transaction in :func:`time_driver_commit`.
DIRECT_RECORDS = 100
#: Up to this many records the exactly-once output is counted with Kafka's Java consumer.
JAVA_COUNT_MAX = 100_000


class EosCountError(RuntimeError):
    """An output topic does not hold each input record exactly once (by count)."""


@dataclass
class EosLatency:
    """Per micro-batch costs of the two modes (ms; medians over every run's batches with rows).

    Attributes:
        batches: micro-batches with rows per run (the same in both modes).
        alo_add_batch_ms, eos_add_batch_ms: median ``addBatch`` of each mode.
        added_ms: ``eos_add_batch_ms - alo_add_batch_ms``: what exactly-once adds per batch.
        alo_trigger_ms, eos_trigger_ms: median ``triggerExecution`` of each mode.
        end_txn_ms: median of the driver's EndTxn phase (commit log ``committing`` ->
            ``committed`` record timestamps), every exactly-once batch.
        end_txn_max_ms: the largest EndTxn phase.
        transactions: transactions ended per batch (the write tasks of a batch).
        commit_ms, commit_max_ms: median and largest whole driver commit, timed directly
            (:func:`time_driver_commit`).
        begin_ms, begin_max_ms: median and largest task ``begin_transaction()``, timed there.
        add_batch_runs: every batch's ``addBatch`` (ms) per mode.
    """

    batches: int
    alo_add_batch_ms: float
    eos_add_batch_ms: float
    added_ms: float
    alo_trigger_ms: float
    eos_trigger_ms: float
    end_txn_ms: float
    end_txn_max_ms: float
    transactions: int
    commit_ms: float
    commit_max_ms: float
    begin_ms: float = 0.0
    begin_max_ms: float = 0.0
    add_batch_runs: dict[str, list[float]] = field(default_factory=dict)


def _run_query(
    spark: Any,
    bootstrap: str,
    source: str,
    output: str,
    partitions: int,
    per_trigger: int,
    mode: str,
    prefix: str,
    commit_log: str,
) -> tuple[float, list[dict[str, Any]]]:
    """One query into a fresh ``output`` topic; returns (wall seconds, progress of the batches
    with rows)."""
    from spark_kafka_py.testing.tools import create_topic

    create_topic(bootstrap, output, partitions=partitions)
    checkpoint = tempfile.mkdtemp(prefix=f"bench-eos-{mode}-")
    try:
        writer = (
            spark.readStream.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(per_trigger))
            .load()
            .select("key", "value")
            .writeStream.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", output)
            .option("deliveryGuarantee", mode)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
        )
        if mode == EOS:
            writer = writer.option("transactionalIdPrefix", prefix).option(
                "commitLogTopic", commit_log
            )
        start = time.perf_counter()
        query = writer.start()
        query.awaitTermination()
        wall = time.perf_counter() - start
        return wall, [p for p in query.recentProgress if p["numInputRows"] > 0]
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def _settled(count: Any, want: int, timeout_s: float = 30.0) -> int:
    """``count()`` asked again until it reaches ``want`` or ``timeout_s`` passed: the driver's
    last EndTxn returns before the coordinator wrote the markers that make the records
    readable under read_committed."""
    deadline = time.monotonic() + timeout_s
    seen = int(count())
    while seen < want and time.monotonic() < deadline:
        time.sleep(0.5)
        seen = int(count())
    return seen


def _count_committed(spark: Any, bootstrap: str, topic: str, records: int) -> int:
    """Records of ``topic`` a ``read_committed`` consumer sees (once the markers are written)."""
    return _settled(lambda: _count_committed_now(spark, bootstrap, topic, records), records)


def _count_committed_now(spark: Any, bootstrap: str, topic: str, records: int) -> int:
    if records <= JAVA_COUNT_MAX:
        from spark_kafka_py.testing.tools import read_all

        return len(read_all(bootstrap, topic, isolation_level="read_committed"))
    return int(
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("kafka.isolation.level", "read_committed")
        .load()
        .count()
    )


def _check_and_drop(
    spark: Any, bootstrap: str, topic: str, partitions: int, records: int, mode: str
) -> None:
    from spark_kafka_py.testing.tools import delete_topic

    if mode == EOS:
        seen = _count_committed(spark, bootstrap, topic, records)
        how = "read with isolation.level=read_committed"
    else:
        seen = end_offsets_sum(bootstrap, topic, partitions)
        how = "end offsets summed over its partitions"
    if seen != records:
        raise EosCountError(
            f"deliveryGuarantee={mode}: the stream read {records:,} records but output topic "
            f"{topic} holds {seen:,} ({how})"
        )
    delete_topic(bootstrap, topic)


def _end_txn_phases(
    spark: Any, bootstrap: str, commit_log: str, prefixes: list[str]
) -> tuple[list[float], int]:
    """The EndTxn phase (ms) of every batch of ``prefixes``, from the commit log's record
    timestamps, and the most transactions a batch ended."""
    from pyspark.sql import functions as F

    rows = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", commit_log)
        .load()
        .select(
            F.col("key").cast("string").alias("prefix"),
            "value",
            (F.unix_micros("timestamp") / 1000).alias("ms"),
        )
        .collect()
    )
    committing: dict[tuple[str, int], float] = {}
    phases: list[float] = []
    transactions = 0
    for row in rows:
        if row.prefix not in prefixes:
            continue
        record = json.loads(bytes(row.value))
        key = (row.prefix, int(record["batch"]))
        if record["state"] == "committing":
            committing[key] = row.ms
            transactions = max(transactions, len(record["transactions"]))
        elif record["state"] == "committed" and key in committing:
            phases.append(row.ms - committing.pop(key))
    return phases, transactions


def time_driver_commit(
    bootstrap: str, partitions: int, commit_log: str, commits: int = DIRECT_COMMITS
) -> tuple[list[float], list[float]]:
    """The driver's whole exactly-once commit of a micro-batch, timed outside Spark (ms each),
    and every task's ``begin_transaction()`` (ms each).

    Per commit: ``partitions`` transactions (transactional ids ``<prefix>-0 ..``, one per
    output partition, :data:`DIRECT_RECORDS` records each) are begun, written and flushed but
    not ended, as the sink's tasks leave them; then a new
    :class:`~spark_kafka_py.spark.exactly_once.ExactlyOnceCommitter` commits them as batch
    ``i`` and is closed, timed, as ``KafkaStreamArrowWriter.commit`` does. The output topic
    (fresh) is then checked with a ``read_committed`` count and deleted.

    Raises:
        EosCountError: the output does not hold every committed record once.
    """
    import dataclasses

    import pyarrow as pa

    from spark_kafka_py.producer.producer import KafkaProducer
    from spark_kafka_py.spark.exactly_once import ExactlyOnceCommitter, transactional_id
    from spark_kafka_py.spark.sink_options import parse_sink_options
    from spark_kafka_py.testing.tools import create_topic, delete_topic, read_all

    run_id = uuid.uuid4().hex[:8]
    topic = f"bench-eos-direct-{run_id}"
    prefix = f"bench-eos-direct-{run_id}"
    create_topic(bootstrap, topic, partitions=partitions)
    options = parse_sink_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "topic": topic,
            "deliveryGuarantee": EOS,
            "transactionalIdPrefix": prefix,
            "commitLogTopic": commit_log,
        }
    )
    keys = pa.array([f"{i:016d}".encode() for i in range(DIRECT_RECORDS)], pa.binary())
    values = pa.array([b"v" * 100] * DIRECT_RECORDS, pa.binary())
    timings = []
    begins = []
    for batch_id in range(commits):
        handles = []
        for task in range(partitions):
            producer = KafkaProducer(
                dataclasses.replace(
                    options.producer, transactional_id=transactional_id(prefix, task)
                )
            )
            try:
                begin = time.perf_counter()
                producer.begin_transaction()
                begins.append((time.perf_counter() - begin) * 1000)
                producer.append(topic, task, keys, values, None, int(time.time() * 1000))
                handles.append(producer.prepare_commit())
            finally:
                producer.close()
        start = time.perf_counter()
        committer = ExactlyOnceCommitter(options)
        try:
            committer.commit(handles, batch_id)
        finally:
            committer.close()
        timings.append((time.perf_counter() - start) * 1000)
    seen = _settled(
        lambda: len(read_all(bootstrap, topic, isolation_level="read_committed")),
        commits * partitions * DIRECT_RECORDS,
    )
    if seen != commits * partitions * DIRECT_RECORDS:
        raise EosCountError(
            f"direct commits: {commits * partitions * DIRECT_RECORDS:,} records committed but "
            f"{topic} holds {seen:,} (read with isolation.level=read_committed)"
        )
    delete_topic(bootstrap, topic)
    return timings, begins


def bench_eos(
    spark: Any,
    bootstrap: str,
    records: int,
    *,
    key_size: int = 16,
    value_size: int = 100,
    partitions: int = 4,
    per_trigger: int = 200_000,
    repeat: int = 2,
) -> tuple[BenchResult, EosLatency]:
    """Rows/s of the same stream written exactly-once and at-least-once, and the per-batch cost.

    See the module docstring for the query, the order of the runs and the checks.

    Args:
        spark: the session.
        bootstrap: ``host:port`` list of the cluster.
        records: input records; ``key_size``, ``value_size``: their bytes.
        partitions: partitions of the input and of every output topic.
        per_trigger: ``maxOffsetsPerTrigger`` (records per micro-batch).
        repeat: timed runs per mode; the result has the medians.

    Returns:
        A :class:`BenchResult` (``ours`` = exactly-once, ``peer`` = at-least-once: its
        ``ratio`` is eos rows/s over alo rows/s) and the :class:`EosLatency`.

    Raises:
        EosCountError: an output did not hold each input record once (by count).
    """
    run_id = uuid.uuid4().hex[:8]
    source = f"bench-eos-in-{records}-{run_id}"
    warm_source = f"bench-eos-warm-{run_id}"
    commit_log = f"bench-eos-commits-{run_id}"
    secs = produce_bench_data(
        bootstrap, source, records, partitions=partitions,
        key_size=key_size, value_size=value_size,
    )  # fmt: skip
    print(f"produced {records:,} records in {secs:.1f} s", flush=True)
    produce_bench_data(
        bootstrap, warm_source, WARM_UP_RECORDS, partitions=partitions,
        key_size=key_size, value_size=value_size,
    )  # fmt: skip
    for mode in (ALO, EOS):  # untimed
        output = f"bench-eos-warm-{mode}-{run_id}"
        _run_query(
            spark, bootstrap, warm_source, output, partitions, per_trigger, mode,
            f"bench-eos-warm-{run_id}", commit_log,
        )  # fmt: skip
        _check_and_drop(spark, bootstrap, output, partitions, WARM_UP_RECORDS, mode)
    walls: dict[str, list[float]] = {ALO: [], EOS: []}
    add_batch: dict[str, list[float]] = {ALO: [], EOS: []}
    trigger: dict[str, list[float]] = {ALO: [], EOS: []}
    batches = 0
    prefixes = []
    for i in range(repeat):
        for mode in (ALO, EOS):
            output = f"bench-eos-out-{mode}-{run_id}-{i}"
            prefix = f"bench-eos-{run_id}-{i}"
            wall, progress = _run_query(
                spark, bootstrap, source, output, partitions, per_trigger, mode, prefix,
                commit_log,
            )  # fmt: skip
            _check_and_drop(spark, bootstrap, output, partitions, records, mode)
            walls[mode].append(wall)
            add_batch[mode] += [float(p["durationMs"]["addBatch"]) for p in progress]
            trigger[mode] += [float(p["durationMs"]["triggerExecution"]) for p in progress]
            batches = len(progress)
            if mode == EOS:
                prefixes.append(prefix)
            print(
                f"eos {mode}: {records / wall:,.0f} rows/s, {len(progress)} micro-batches, "
                f"median addBatch {statistics.median(add_batch[mode][-len(progress) :]):.0f} ms",
                flush=True,
            )
    phases, transactions = _end_txn_phases(spark, bootstrap, commit_log, prefixes)
    commits, begins = time_driver_commit(bootstrap, partitions, commit_log)
    print(
        f"eos driver commit, timed directly: median {statistics.median(commits):.0f} ms; "
        f"task begin_transaction median {statistics.median(begins):.0f} ms",
        flush=True,
    )
    alo_ms, eos_ms = statistics.median(add_batch[ALO]), statistics.median(add_batch[EOS])
    latency = EosLatency(
        batches,
        alo_ms,
        eos_ms,
        eos_ms - alo_ms,
        statistics.median(trigger[ALO]),
        statistics.median(trigger[EOS]),
        statistics.median(phases) if phases else 0.0,
        max(phases, default=0.0),
        transactions,
        statistics.median(commits),
        max(commits),
        statistics.median(begins),
        max(begins),
        add_batch,
    )
    result = BenchResult(
        "eos",
        f"maxOffsetsPerTrigger={per_trigger}",
        EOS,
        ALO,
        records,
        records * (key_size + value_size) / 1e6,
        statistics.median(walls[EOS]),
        statistics.median(walls[ALO]),
        {ALO: walls[ALO], EOS: walls[EOS]},
        f"wall time from start() to the end, {batches} micro-batches with rows per run",
    )
    return result, latency


def format_latency_table(latency: EosLatency) -> str:
    """Markdown table of :class:`EosLatency`."""
    m = latency
    return "\n".join(
        [
            "| micro-batches | addBatch alo (ms) | addBatch eos (ms) | added by eos (ms) | "
            "triggerExecution alo (ms) | triggerExecution eos (ms) | "
            "driver EndTxn phase median / max (ms) | transactions per batch | "
            "whole driver commit, direct, median / max (ms) | "
            "task begin_transaction, direct, median / max (ms) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {m.batches} | {m.alo_add_batch_ms:.0f} | {m.eos_add_batch_ms:.0f} | "
            f"{m.added_ms:+.0f} | {m.alo_trigger_ms:.0f} | {m.eos_trigger_ms:.0f} | "
            f"{m.end_txn_ms:.0f} / {m.end_txn_max_ms:.0f} | {m.transactions} | "
            f"{m.commit_ms:.0f} / {m.commit_max_ms:.0f} | "
            f"{m.begin_ms:.0f} / {m.begin_max_ms:.0f} |",
        ]
    )


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["eos", *sys.argv[1:]]))
