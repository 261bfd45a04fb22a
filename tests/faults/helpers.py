"""Shared helpers of the fault tests: produce a known topic, read ranges, check rows; run the
exactly-once job (``_eo_job``) as a driver of its own and check its output."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.fetcher import PartitionFetcher
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.testing.faultproxy import FaultProxy
from spark_kafka_py.testing.tools import ProducedRecord, produce, read_all, run_tool

#: The repository root (the exactly-once job runs as ``python -m tests.faults._eo_job`` there).
ROOT = Path(__file__).resolve().parents[2]

#: Kafka's ``kafka-transactions.sh`` (KIP-664).
TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"
#: Transaction states that are not finished (``Empty`` and ``Complete*`` are).
UNFINISHED_TXN_STATES = frozenset({"Ongoing", "PrepareCommit", "PrepareAbort"})


def produce_values(bootstrap: str, topic: str, count: int, partitions: int = 1) -> None:
    """``count`` records ``v<i>`` round-robin over ``partitions``, in small batches (1 KiB)
    so one Fetch of a few KiB holds several batches and a range needs several Fetches."""
    produce(
        bootstrap,
        topic,
        [
            ProducedRecord(None, f"v{i:05d}-" + "x" * 40, partition=i % partitions)
            for i in range(count)
        ],
        batch_size=1024,
        linger_ms=0,
    )


def expected_values(count: int, partitions: int, partition: int) -> list[tuple[int, str]]:
    """``(offset, value)`` of ``partition`` after :func:`produce_values`."""
    vals = [f"v{i:05d}-" + "x" * 40 for i in range(count) if i % partitions == partition]
    return list(enumerate(vals))


def assert_sink_holds_rounds(
    spark: Any, path: Path, count: int, partitions: int, rounds: int = 1
) -> None:
    """The parquet sink at ``path`` (columns partition, offset, value) holds every record of
    ``rounds`` calls of :func:`produce_values` with ``count`` and ``partitions`` exactly once:
    round ``k``'s records at their offsets plus ``k * count / partitions``."""
    got = [(r.partition, r.offset, r.value) for r in spark.read.parquet(str(path)).collect()]
    assert len(got) == len(set(got)) == count * rounds  # nothing lost, nothing twice
    per = count // partitions
    assert sorted(got) == sorted(
        (p, o + per * k, v)
        for k in range(rounds)
        for p in range(partitions)
        for o, v in expected_values(count, partitions, p)
    )


def rows(batches: Iterable[pa.RecordBatch]) -> list[tuple[int, str]]:
    """``(offset, value)`` of every row, in the order yielded."""
    out: list[tuple[int, str]] = []
    for b in batches:
        out += zip(
            b.column("offset").to_pylist(),
            [v.decode() for v in b.column("value").to_pylist()],
            strict=True,
        )
    return out


def settings_for(bootstrap: str, **kw: int) -> ConsumerSettings:
    """Small fetches (4 KiB per partition) and short timeouts, so faults show quickly."""
    base: dict[str, int] = {
        "request_timeout_ms": 2000,
        "connect_timeout_ms": 2000,
        "retry_backoff_ms": 50,
        "reconnect_backoff_ms": 50,
        "max_partition_fetch_bytes": 4096,
        "fetch_max_wait_ms": 100,
    }
    base.update(kw)
    client_fields = {f.name for f in dataclasses.fields(ClientConfig)}
    client = ClientConfig.from_bootstrap(
        bootstrap, **{k: v for k, v in base.items() if k in client_fields}
    )
    return ConsumerSettings(client, **{k: v for k, v in base.items() if k not in client_fields})


def fetcher_via(
    proxy: FaultProxy | None,
    settings: ConsumerSettings,
    tp: TopicPartition,
    *,
    poll_timeout_ms: int = 30_000,
) -> tuple[KafkaClient, PartitionFetcher]:
    """A client whose every connection goes through ``proxy`` (or direct), and a fetcher."""
    client = KafkaClient(settings.client, socket_factory=proxy.socket_factory() if proxy else None)
    return client, PartitionFetcher(client, tp, settings, poll_timeout_ms=poll_timeout_ms)


#: Seconds between two ``kafka-transactions.sh list`` polls: a served tool call takes 0.1-0.5 s
#: on the loaded 2-core machine, so a longer pause only delays the test (suite time).
TXN_POLL_S = 0.5


def list_transactions(bootstrap: str) -> dict[str, str]:
    """``kafka-transactions.sh list``: transactional id -> state (``Ongoing``,
    ``CompleteCommit``, ...) of every transactional id the coordinators know.

    Raises:
        KafkaToolError: the tool failed.
    """
    out = run_tool(TRANSACTIONS_COMMAND, ["--bootstrap-server", bootstrap, "list"]).stdout
    lines = [line.split() for line in out.splitlines() if line.strip()]
    if not lines or lines[0][:1] != ["TransactionalId"]:
        raise AssertionError(f"unexpected kafka-transactions.sh list output:\n{out}")
    state_col = lines[0].index("TransactionState")
    return {cols[0]: cols[state_col] for cols in lines[1:]}


def describe_transaction_tool(bootstrap: str, transactional_id: str) -> str:
    """``kafka-transactions.sh describe --transactional-id ID``, as printed (for messages)."""
    return run_tool(
        TRANSACTIONS_COMMAND,
        ["--bootstrap-server", bootstrap, "describe", "--transactional-id", transactional_id],
        check=False,
    ).stdout


def wait_no_open_transaction(
    bootstrap: str, prefix: str, *, timeout_s: float = 60
) -> dict[str, str]:
    """Wait until no transactional id starting with ``prefix-`` is unfinished
    (:data:`UNFINISHED_TXN_STATES`); return the prefix's ids and states.

    Raises:
        AssertionError: some are still unfinished after ``timeout_s`` (with their description).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        mine = {t: s for t, s in list_transactions(bootstrap).items() if t.startswith(prefix + "-")}
        unfinished = sorted(t for t, s in mine.items() if s in UNFINISHED_TXN_STATES)
        if not unfinished:
            return mine
        if time.monotonic() > deadline:
            described = "\n".join(describe_transaction_tool(bootstrap, t) for t in unfinished)
            raise AssertionError(f"transactions left open after {timeout_s} s:\n{described}")
        time.sleep(TXN_POLL_S)


def wait_transactions(
    bootstrap: str,
    prefix: str,
    done: Callable[[dict[str, str]], bool],
    *,
    what: str,
    timeout_s: float = 60,
) -> dict[str, str]:
    """Poll ``kafka-transactions.sh list`` until ``done`` holds for the states of the ids
    starting with ``prefix-``; return them.

    Raises:
        AssertionError: not within ``timeout_s`` (naming ``what`` and the last states).
    """
    started = time.monotonic()
    deadline = started + timeout_s
    while True:
        mine = {t: s for t, s in list_transactions(bootstrap).items() if t.startswith(prefix + "-")}
        if done(mine):
            print(f"{what}: {time.monotonic() - started:.1f} s, {sorted(mine.items())}")
            return mine
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} after {timeout_s} s: {sorted(mine.items())}")
        time.sleep(TXN_POLL_S)


# ---- the exactly-once job (tests/faults/_eo_job.py) as a driver of its own -----------------


def tail(path: Path, chars: int = 4000) -> str:
    """The end of a log file ("" when missing)."""
    return path.read_text("utf-8", errors="replace")[-chars:] if path.exists() else ""


def spawn_eo_job(args: list[str], log: Path, **env: str) -> subprocess.Popen[bytes]:
    """``python -m tests.faults._eo_job *args`` in a process group of its own (Python driver,
    Spark JVM and Python workers: :func:`kill_at_step` SIGKILLs them all), output to ``log``."""
    full_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **env,
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.faults._eo_job", *args],
            cwd=ROOT,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def kill_at_step(
    args: list[str], step: str, tmp_path: Path, *, timeout_s: float = 300
) -> tuple[str, int]:
    """Run the job (not AvailableNow, ``--warm-up``) with the driver's commit hook paused at
    ``step`` (``SPARK_KAFKA_PY_EO_PAUSE_AT``, see ``PAUSE_STEPS`` in
    ``spark_kafka_py.spark.exactly_once``), SIGKILL its process group there; return
    ``(step, micro-batch id)`` the hook wrote.

    Raises:
        AssertionError: the driver exited, or did not reach ``step`` within ``timeout_s``
            (with its log's tail).
    """
    marker, log = tmp_path / f"paused-{step}", tmp_path / f"driver-{step}.log"
    driver = spawn_eo_job(
        [*args, "--warm-up"],
        log,
        SPARK_KAFKA_PY_EO_PAUSE_AT=step,
        SPARK_KAFKA_PY_EO_PAUSE_FILE=str(marker),
    )
    started = time.monotonic()
    try:
        deadline = started + timeout_s
        while not marker.exists():
            assert driver.poll() is None, f"the driver exited {driver.returncode}:\n{tail(log)}"
            assert time.monotonic() < deadline, f"no commit reached {step}:\n{tail(log)}"
            time.sleep(0.2)
        time.sleep(0.5)  # the hook wrote the marker and sleeps: kill it there
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver's own process group only
        driver.wait(30)
    paused_step, paused_batch = marker.read_text("utf-8").split()
    took = time.monotonic() - started
    print(f"driver killed at {paused_step} of micro-batch {paused_batch} after {took:.1f} s")
    return paused_step, int(paused_batch)


def committed_values(bootstrap: str, topic: str) -> Counter[str]:
    """How often each value of ``topic`` is seen by Kafka's Java consumer under
    ``read_committed``."""
    records = read_all(bootstrap, topic, isolation_level="read_committed")
    return Counter(r.value.decode() for r in records if r.value is not None)


def assert_each_output_once(spark: Any, bootstrap: str, out_topic: str, count: int) -> None:
    """Output ``out-<i>`` (key ``k<i>``) for each input ``i < count`` exactly once and nothing
    else, for Kafka's Java consumer and for ``spark.read.format("pykafka")``, both
    ``read_committed``."""
    want = {f"out-{i}": f"k{i}" for i in range(count)}
    java = read_all(bootstrap, out_topic, isolation_level="read_committed")
    values = Counter(r.value.decode() for r in java if r.value is not None)
    twice = sorted(v for v, n in values.items() if n > 1)
    missing = sorted(set(want) - set(values))
    assert not twice and not missing and len(java) == count, (
        f"Java read_committed: {len(java)} records of {count}; "
        f"{len(twice)} twice {twice[:5]}, {len(missing)} missing {missing[:5]}"
    )
    assert all(r.key is not None and r.key.decode() == want[r.value.decode()] for r in java)
    ours = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", out_topic)
        .option("kafka.isolation.level", "read_committed")
        .load()
        .selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value")
        .collect()
    )
    assert Counter(r.value for r in ours) == Counter(list(want))
    assert all(want[r.value] == r.key for r in ours)


def assert_exactly_once(
    spark: Any, bootstrap: str, out_topic: str, prefix: str, count: int, *, open_wait_s: float = 60
) -> None:
    """No transaction of ``prefix`` left unfinished (within ``open_wait_s``: an open one holds
    back ``read_committed`` readers), then :func:`assert_each_output_once`."""
    states = wait_no_open_transaction(bootstrap, prefix, timeout_s=open_wait_s)
    assert states, f"no transactional id of {prefix!r} known to the coordinators"
    assert_each_output_once(spark, bootstrap, out_topic, count)
