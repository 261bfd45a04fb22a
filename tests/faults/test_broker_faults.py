"""A single real broker killed with SIGKILL and restarted, and a log segment corrupted on disk.

One private single-node cluster for the module (kill/restart must not disturb the session
broker). Recovery is bounded by settings, never by wall-clock asserts: the executor's fetcher
retries for ``kafkaConsumer.pollTimeoutMs`` (backing off ``retry.backoff.ms``, reconnecting
after ``reconnect.backoff.ms``); the driver's Metadata and ListOffsets retry for
``kafka.default.api.timeout.ms`` (backoff doubling from ``retry.backoff.ms`` to 1 s), so a
running query rides out a restart; a broker down for longer fails the query with a clear error,
and the query, restarted on its checkpoint, then delivers every record exactly once.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import create_topic

from .helpers import (
    assert_sink_holds_rounds,
    expected_values,
    fetcher_via,
    produce_values,
    rows,
    settings_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalKafkaCluster]:
    with LocalKafkaCluster(1, heap="384m") as c:
        yield c


def _batches(segment: bytes) -> list[tuple[int, int, int]]:
    """``(base offset, start, size)`` of every record batch in a ``.log`` segment."""
    out, pos = [], 0
    while pos + 12 <= len(segment):
        base, length = struct.unpack_from(">qi", segment, pos)
        out.append((base, pos, 12 + length))
        pos += 12 + length
    return out


def test_corrupt_batch_on_disk_is_a_corrupt_record_error_naming_where(
    cluster: LocalKafkaCluster, spark: SparkSession
) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"corrupt-{time.time_ns()}"
    create_topic(bootstrap, topic, partitions=1)
    produce_values(bootstrap, topic, 200)  # ~30 uncompressed batches of 1 KiB
    cluster.stop_node(1)  # clean shutdown: no log recovery (which would truncate) at restart
    log = cluster.node(1).data_dir / f"{topic}-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    batches = _batches(bytes(data))
    assert len(batches) >= 5
    base, start, size = batches[len(batches) // 2]
    data[start + size - 2] ^= 0x01  # a byte of the last record's value
    log.write_bytes(bytes(data))
    cluster.restart(1)

    def load(**options: str):
        reader = (
            spark.read.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
        )
        for k, v in options.items():
            reader = reader.option(k, v)
        return reader.load()

    with pytest.raises(Exception) as info:
        load().collect()
    text = str(info.value)
    assert "CorruptRecordError" in text and "CRC-32C mismatch" in text
    assert f"in {topic}-0 at offset {base}" in text
    # Not silently skipped with failOnDataLoss=false either: corruption is not data loss.
    with pytest.raises(Exception) as info:
        load(failOnDataLoss="false").collect()
    assert "CorruptRecordError" in str(info.value)
    # The records before the corrupt batch are still readable.
    before = load(endingOffsets=f'{{"{topic}": {{"0": {base}}}}}').collect()
    assert sorted((r.offset, r.value.decode()) for r in before) == expected_values(200, 1, 0)[:base]


def test_fetcher_survives_broker_kill_and_restart_mid_read(cluster: LocalKafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"killed-{time.time_ns()}"
    create_topic(bootstrap, topic, partitions=1)
    produce_values(bootstrap, topic, 600)
    client, fetcher = fetcher_via(
        None,
        settings_for(bootstrap, request_timeout_ms=3000),
        TopicPartition(topic, 0),
        poll_timeout_ms=120_000,  # the bound: the restart must finish within it
    )
    try:
        it = fetcher.read(0, 600)
        got = rows([next(it)])
        assert 0 < len(got) < 600
        cluster.kill(1)  # SIGKILL between two Fetches of one task's range
        restarter = threading.Timer(2.0, cluster.restart, args=(1,))
        restarter.start()
        got += rows(it)  # blocks in retries until the broker is back
        restarter.join()
    finally:
        client.close()
    assert got == expected_values(600, 1, 0)


def _start(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    tmp: Path,
    trigger: dict[str, object],
    max_offsets: int,
    api_timeout_ms: int,
) -> StreamingQuery:
    return (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(max_offsets))
        .option("kafka.request.timeout.ms", "3000")
        .option("kafka.default.api.timeout.ms", str(api_timeout_ms))
        .option("kafkaConsumer.pollTimeoutMs", "60000")
        .load()
        .selectExpr("topic", "partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", str(tmp / "out"))
        .option("checkpointLocation", str(tmp / "cp"))
        .trigger(**trigger)  # type: ignore[arg-type]
        .start()
    )


def test_streaming_query_rides_out_a_broker_restart_and_fails_clearly_when_it_stays_down(
    cluster: LocalKafkaCluster, spark: SparkSession, tmp_path: Path
) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"killed-stream-{time.time_ns()}"
    create_topic(bootstrap, topic, partitions=4)
    produce_values(bootstrap, topic, 800, partitions=4)
    # 1. SIGKILL mid-stream, restarted 2 s later: the driver's Metadata/ListOffsets retries
    # (bounded by default.api.timeout.ms) and the executors' Fetch retries (bounded by
    # kafkaConsumer.pollTimeoutMs) carry the running query through; it never fails.
    every_200ms = {"processingTime": "200 milliseconds"}
    # 200 records a batch: 8 batches for the 1,600 records (issue 25 / suite time: 100 made 16)
    q = _start(spark, bootstrap, topic, tmp_path, every_200ms, 200, 60_000)

    def processed() -> int:
        return sum(p["numInputRows"] for p in q.recentProgress)

    try:
        deadline = time.monotonic() + 120
        while processed() < 200:
            assert time.monotonic() < deadline and q.isActive, q.exception()
            time.sleep(0.2)
        cluster.kill(1)  # while batches of 200 records keep being planned and read
        time.sleep(2)
        cluster.restart(1)
        produce_values(bootstrap, topic, 800, partitions=4)  # the same values again
        deadline = time.monotonic() + 180
        while processed() < 1600:
            assert q.isActive, q.exception()
            assert time.monotonic() < deadline, f"stuck at {processed()} rows"
            time.sleep(0.5)
        assert q.exception() is None
    finally:
        q.stop()

    # 2. Down for longer than default.api.timeout.ms: a clear error naming the broker and the
    # setting (the query restarted on its checkpoint while the broker is down).
    cluster.kill(1)
    q = _start(spark, bootstrap, topic, tmp_path, every_200ms, 100, 3000)
    error = None
    try:
        try:
            q.awaitTermination(120)
        except StreamingQueryException as exc:
            error = str(exc)
    finally:
        q.stop()
    assert error is not None, "the query neither failed nor stopped while the broker was down"
    assert "KafkaTimeoutError" in error and "default.api.timeout.ms=3000" in error, error[:2000]
    assert cluster.node(1).address in error

    # 3. Back up, more records: the query on the same checkpoint delivers each exactly once.
    cluster.restart(1)
    produce_values(bootstrap, topic, 800, partitions=4)
    q = _start(spark, bootstrap, topic, tmp_path, {"availableNow": True}, 1000, 60_000)
    q.awaitTermination(240)
    assert q.exception() is None
    assert_sink_holds_rounds(spark, tmp_path / "out", 800, 4, rounds=3)  # exactly once
