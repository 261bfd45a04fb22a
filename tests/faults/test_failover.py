"""Leader failover on a 3-broker KRaft cluster: topic with replication factor 3 and
``min.insync.replicas=2``, the leader killed with SIGKILL mid-read.

The executor's fetcher follows the new leader (connection refused, then NOT_LEADER_OR_FOLLOWER
/ FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH with a metadata refresh, the current leader epoch
in every Fetch); the driver plans on the surviving brokers. Nothing is lost, nothing read twice,
and nothing but produced records (all below the high watermark) reaches the sink. The group
coordinator's broker killed: the driver finds the new coordinator and its commits go on. One
cluster for the module; each test starts on full ISR (the previous test's killed node restarted).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import (
    consumer_groups_describe,
    create_topic,
    partition_states,
    wait_for_full_isr,
)

from .helpers import (
    assert_sink_holds_rounds,
    expected_values,
    fetcher_via,
    produce_values,
    rows,
    settings_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

REPLICATED = {"min.insync.replicas": "2"}


#: (killed node, its test's topic) of the tests that ran: healed before the next test starts.
_to_heal: list[tuple[int, str]] = []


@pytest.fixture(scope="module")
def _module_cluster() -> Iterator[LocalKafkaCluster]:
    """A 3-broker cluster of this module's own: on the fault tests' shared one (after another
    module's kill and restart) the coordinator test once saw acks=all writes time out for
    120 s after its kill (the restarted node not yet caught up), so it stays apart."""
    _to_heal.clear()
    with LocalKafkaCluster(3, heap="320m") as c:
        yield c
    _to_heal.clear()  # the last test's killed node: stopped with the cluster, never restarted


@pytest.fixture()
def cluster(_module_cluster: LocalKafkaCluster) -> LocalKafkaCluster:
    """The module's cluster with full ISR again: the nodes a previous test killed restarted
    and its topic's replicas back in sync (a restart after the module's last test would only
    delay the cluster's stop)."""
    dead = [n.node_id for n in _module_cluster.nodes if not n.is_running()]
    for node_id in dead:
        _module_cluster.restart(node_id, wait=False)
    if dead:
        _module_cluster.wait_serving()
    while _to_heal:
        _, topic = _to_heal.pop(0)
        wait_for_full_isr(_module_cluster.bootstrap_servers, topic, timeout_s=120)
    return _module_cluster


def _heal(cluster: LocalKafkaCluster, node: int, topic: str) -> None:
    """Restart ``node`` before the next test (see :func:`cluster`)."""
    _to_heal.append((node, topic))


def test_fetcher_follows_the_new_leader(cluster: LocalKafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"failover-fetch-{time.time_ns()}"
    create_topic(bootstrap, topic, 1, 3, REPLICATED)
    produce_values(bootstrap, topic, 600)
    leader = wait_for_full_isr(bootstrap, topic)[0].leader
    client, fetcher = fetcher_via(
        None, settings_for(bootstrap), TopicPartition(topic, 0), poll_timeout_ms=120_000
    )
    try:
        it = fetcher.read(0, 600)
        got = rows([next(it)])
        epoch_before = fetcher._leader_epoch
        assert fetcher._leader == leader and 0 < len(got) < 600
        cluster.kill(leader)
        got += rows(it)
        # It read the rest from another broker, at a newer leader epoch.
        assert fetcher._leader not in (leader, -1)
        assert fetcher._leader_epoch > epoch_before
    finally:
        client.close()
    assert got == expected_values(600, 1, 0)
    _heal(cluster, leader, topic)


def test_streaming_query_survives_leader_kill_exactly_once(
    cluster: LocalKafkaCluster, spark: SparkSession, tmp_path: Path
) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"failover-stream-{time.time_ns()}"
    create_topic(bootstrap, topic, 3, 3, REPLICATED)
    produce_values(bootstrap, topic, 600, partitions=3)
    leader = wait_for_full_isr(bootstrap, topic)[0].leader
    q = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "150")
        .option("kafka.request.timeout.ms", "5000")
        .option("kafkaConsumer.pollTimeoutMs", "60000")
        # The driver's ListOffsets retries must outlast the leader election
        # (broker.session.timeout.ms=6000 in the test broker): 30 x 500 ms.
        .option("fetchOffset.numRetries", "30")
        .option("fetchOffset.retryIntervalMs", "500")
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )

    def processed() -> int:
        return sum(p["numInputRows"] for p in q.recentProgress)

    try:
        deadline = time.monotonic() + 180
        while processed() < 150:
            assert time.monotonic() < deadline and q.isActive, q.exception()
            time.sleep(0.2)
        cluster.kill(leader)
        # acks=all still succeeds with 2 of 3 replicas in sync.
        produce_values(bootstrap, topic, 600, partitions=3)
        assert partition_states(bootstrap, topic)[0].leader not in (leader, -1)
        while processed() < 1200:
            assert time.monotonic() < deadline + 120, f"stuck at {processed()} rows"
            assert q.isActive, q.exception()
            time.sleep(0.5)
        assert q.exception() is None
    finally:
        q.stop()
    assert_sink_holds_rounds(spark, tmp_path / "out", 600, 3, rounds=2)
    _heal(cluster, leader, topic)


def _coordinator(bootstrap: str, group: str) -> int:
    """The group coordinator's node id, as Kafka's ConsumerGroupCommand ``--state`` shows it."""
    text = consumer_groups_describe(bootstrap, group, extra=["--state"])
    found = re.search(r"^\s*" + re.escape(group) + r"\s+\S+\s+\((\d+)\)", text, re.M)
    assert found, text
    return int(found.group(1))


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, tuple[int, int]]:
    """ConsumerGroupCommand ``--describe``: partition -> (committed offset, lag)."""
    out: dict[int, tuple[int, int]] = {}
    for line in consumer_groups_describe(bootstrap, group).splitlines():
        f = line.split()
        if len(f) >= 6 and f[0] == group and f[1] == topic and f[3] != "-" and f[5] != "-":
            out[int(f[2])] = (int(f[3]), int(f[5]))
    return out


def test_group_coordinator_killed_the_driver_finds_the_new_one_and_keeps_committing(
    cluster: LocalKafkaCluster, spark: SparkSession, tmp_path: Path
) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"failover-coordinator-{time.time_ns()}"
    group = f"g-coordinator-{time.time_ns()}"
    create_topic(bootstrap, topic, 3, 3, REPLICATED)
    produce_values(bootstrap, topic, 300, partitions=3)
    wait_for_full_isr(bootstrap, topic)
    q = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("kafka.group.id", group)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "150")
        .option("kafka.session.timeout.ms", "10000")
        .option("kafka.heartbeat.interval.ms", "1000")
        .option("kafka.request.timeout.ms", "5000")
        .option("kafkaConsumer.pollTimeoutMs", "60000")
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )

    def wait_committed(per_partition: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        want = {p: (per_partition, 0) for p in range(3)}
        while (got := _committed(bootstrap, group, topic)) != want:
            assert q.isActive, q.exception()
            assert time.monotonic() < deadline, f"committed/lag {got}, want {want}"
            time.sleep(1)

    try:
        wait_committed(100, 180)
        coordinator = _coordinator(bootstrap, group)
        # Its __consumer_offsets partition must have followers in sync to move.
        wait_for_full_isr(bootstrap, "__consumer_offsets", timeout_s=120)
        cluster.kill(coordinator)
        produce_values(bootstrap, topic, 300, partitions=3)  # acks=all, 2 of 3 in sync
        # Commits go on at the new coordinator (ConsumerGroupCommand asks the cluster).
        wait_committed(200, 240)
        assert _coordinator(bootstrap, group) != coordinator
        assert q.exception() is None
    finally:
        q.stop()
    assert_sink_holds_rounds(spark, tmp_path / "out", 300, 3, rounds=2)
    _heal(cluster, coordinator, topic)
