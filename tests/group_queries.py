"""Helpers of the consumer-group tests (classic and KIP-848 protocols): records with known
contents, streaming queries of a group into parquet sinks, and the group's state as Kafka's own
``kafka-consumer-groups.sh`` (ConsumerGroupCommand) shows it. Expected values come from what
was produced and from Kafka's tools, never from the code under test.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from spark_kafka_py.testing.tools import ProducedRecord, consumer_groups_describe

Row = tuple[int, int, str]  # (partition, offset, value)


def records(partitions: int, per_partition: int, tag: str) -> list[ProducedRecord]:
    return [
        ProducedRecord(key=f"k{i}", value=f"{tag}-{p}-{i}", partition=p)
        for p in range(partitions)
        for i in range(per_partition)
    ]


def expected_rows(recs: list[ProducedRecord], base: dict[int, int] | None = None) -> set[Row]:
    offsets = dict(base or {})
    rows: set[Row] = set()
    for r in recs:
        assert r.partition is not None and isinstance(r.value, str)
        o = offsets.get(r.partition, 0)
        offsets[r.partition] = o + 1
        rows.add((r.partition, o, r.value))
    return rows


def start_group_query(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    group: str,
    tmp: Path,
    name: str,
    *,
    available_now: bool = False,
    defaults: Mapping[str, str] | None = None,
    **options: str,
) -> StreamingQuery:
    """A streaming query of ``group`` on ``topic`` (``subscribe``) with ``defaults``
    overridden by ``options`` (a module binds its ``defaults`` with ``functools.partial``), writing
    ``partition, offset, value`` into the parquet sink ``tmp/<name>-out`` (checkpoint
    ``tmp/<name>-cp``): ``AvailableNow``, or a 500 ms processing-time trigger."""
    reader = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("kafka.group.id", group)
    )
    for k, v in {**(defaults or {}), **options}.items():
        reader = reader.option(k, v)
    writer = (
        reader.load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", str(tmp / f"{name}-out"))
        .option("checkpointLocation", str(tmp / f"{name}-cp"))
    )
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="500 milliseconds").start()


def run_to_end(query: StreamingQuery, timeout_s: float = 180) -> None:
    """Wait for an ``AvailableNow`` query to end: one still running after ``timeout_s`` fails
    the test (stopped first), as does one that ended with an error."""
    if not query.awaitTermination(timeout_s):
        query.stop()
        pytest.fail(f"the query did not end within {timeout_s} s")
    assert query.exception() is None


def sink_rows(spark: SparkSession, tmp: Path, name: str) -> list[Row]:
    out = tmp / f"{name}-out"
    if not out.exists():
        return []
    df = spark.read.schema("partition INT, offset LONG, value STRING").parquet(str(out))
    return [(r["partition"], r["offset"], r["value"]) for r in df.collect()]


def wait_until(check: Callable[[], bool], timeout_s: float, what: str, poll_s: float = 0.5) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(poll_s)


def describe_offsets(
    bootstrap: str, group: str, topic: str
) -> dict[int, tuple[int, int, int, str]]:
    """ConsumerGroupCommand --describe: partition -> (current offset, log end, lag, consumer)."""
    text = consumer_groups_describe(bootstrap, group)
    rows: dict[int, tuple[int, int, int, str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 7 and fields[0] == group and fields[1] == topic:
            cur, end, lag = (int(x) if x != "-" else -1 for x in fields[3:6])
            rows[int(fields[2])] = (cur, end, lag, fields[6])
    return rows


def describe_member_columns(bootstrap: str, group: str) -> list[dict[str, str]]:
    """ConsumerGroupCommand --describe --members --verbose, one ``{column: value}`` per member.

    Columns are looked up by header: GROUP-INSTANCE-ID appears only when a member has one."""
    text = consumer_groups_describe(bootstrap, group, extra=["--members", "--verbose"])
    header: list[str] = []
    out = []
    for line in text.splitlines():
        fields = line.split()
        if fields[:2] == ["GROUP", "CONSUMER-ID"]:
            header = fields
        elif header and len(fields) == len(header) and fields[0] == group:
            out.append(dict(zip(header, fields, strict=True)))
    return out


def describe_members(bootstrap: str, group: str) -> dict[str, set[tuple[str, int]]]:
    """ConsumerGroupCommand --describe --members --verbose: consumer id -> assigned partitions."""
    members: dict[str, set[tuple[str, int]]] = {}
    for row in describe_member_columns(bootstrap, group):
        assignment = row.get("CURRENT-ASSIGNMENT", row.get("ASSIGNMENT", "-"))
        assigned: set[tuple[str, int]] = set()
        # "topic:0,1" per topic
        for topic, parts in re.findall(r"([\w.-]+):([\d,]+)", assignment):
            assigned.update((topic, int(p)) for p in parts.split(","))
        members[row["CONSUMER-ID"]] = assigned
    return members


def committed_lag(bootstrap: str, group: str, topic: str) -> dict[int, tuple[int, int]]:
    return {p: (c, lag) for p, (c, _, lag, _) in describe_offsets(bootstrap, group, topic).items()}
