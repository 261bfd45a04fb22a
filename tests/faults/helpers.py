"""Shared helpers of the fault tests: produce a known topic, read ranges, check rows."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.fetcher import PartitionFetcher
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.testing.faultproxy import FaultProxy
from spark_kafka_py.testing.tools import ProducedRecord, produce, run_tool

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
        time.sleep(2)
