"""A partition leader killed (SIGKILL) in the middle of ``df.write.format("pykafka").save()``.

3-broker KRaft cluster, topic of 3 partitions with replication factor 3 and
``min.insync.replicas=2``. A batch write of 200,000 rows (4 Spark tasks, each row's value
carrying its task and a unique id) runs while a thread watches the log of partition 0 on its
leader; as soon as some of them are on disk, that broker is killed. The producer finds the new
leaders (connection refused, NOT_LEADER_OR_FOLLOWER, metadata refresh) and, being idempotent
(``acks=all``, sequence numbers per partition), retries without duplicating or reordering: the
job completes, Kafka's Java consumer finds every row exactly once, and within each partition
the rows of one task in the task's order.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import (
    create_topic,
    partition_states,
    read_all,
    segment_files,
    wait_for_full_isr,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

#: The sink under test.
SINK = "pykafka"
ROWS = 200_000
TASKS = 4
PARTITIONS = 3
#: Bytes of partition 0 on its leader's disk before the leader is killed (~1/10 of its share).
KILL_AFTER_BYTES = 600_000


def _on_disk(cluster: LocalKafkaCluster, node: int, topic: str, partition: int) -> int:
    """Bytes of ``topic``-``partition``'s segments in ``node``'s log dir."""
    files = segment_files(cluster.node(node).data_dir, topic, partition)
    return sum(f.stat().st_size for f in files if f.exists())


# long (issue 25 / suite time, 29 s): the default run kills a leader under our producer
# (tests/producer/test_producer_failover.py: every record once, in order) and under a Spark
# query writing with format("pykafka") (tests/faults/test_exactly_once.py, the leader kill)
@pytest.mark.long
def test_leader_killed_mid_write_every_row_once_in_order(
    three_brokers: LocalKafkaCluster, spark: SparkSession
) -> None:
    cluster = three_brokers  # shared (tests/faults/conftest.py); the killed node restarts after
    bootstrap = cluster.bootstrap_servers
    topic = f"sink-failover-{time.time_ns()}"
    create_topic(bootstrap, topic, PARTITIONS, 3, {"min.insync.replicas": "2"})
    leader = wait_for_full_isr(bootstrap, topic)[0].leader

    df = spark.range(0, ROWS, 1, TASKS).select(
        F.col("id").cast("string").alias("key"),
        F.format_string("%d:%07d:%s", F.spark_partition_id(), F.col("id"), F.lit("x" * 80)).alias(
            "value"
        ),
    )
    # The Spark job runs in the test's thread (a py4j call from another Python thread runs in
    # a JVM thread without the active session, where Spark's lookup of Python data sources
    # finds none); the killer watches the leader's log from a thread of its own.
    write_done = threading.Event()
    killed: list[float] = []
    killer_errors: list[BaseException] = []

    def kill_when_written() -> None:
        try:
            deadline = time.monotonic() + 180
            while _on_disk(cluster, leader, topic, 0) < KILL_AFTER_BYTES:
                if write_done.is_set() or time.monotonic() > deadline:
                    return
                time.sleep(0.05)
            if not write_done.is_set():
                cluster.kill(leader)
                killed.append(time.monotonic())
        except BaseException as exc:  # reported by the test below
            killer_errors.append(exc)

    killer = threading.Thread(target=kill_when_written, name="leader-killer", daemon=True)
    killer.start()
    try:
        (
            df.write.format(SINK)
            .mode("append")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("kafka.request.timeout.ms", "10000")
            .save()
        )
        ended = time.monotonic()
    finally:
        write_done.set()
        killer.join(timeout=60)
    assert not killer_errors, killer_errors[0]
    assert killed, "the write ended before the leader of partition 0 was killed"
    assert killed[0] < ended, "the leader was killed only after the write ended"
    assert partition_states(bootstrap, topic)[0].leader not in (leader, -1)

    records = read_all(bootstrap, topic)
    ids = Counter(int(r.value.split(b":")[1]) for r in records if r.value is not None)
    assert len(records) == ROWS, f"{len(records)} records for {ROWS} rows"
    assert sorted(ids) == list(range(ROWS)) and max(ids.values()) == 1
    # one task's rows keep their order within each partition
    per_task: dict[tuple[int, int], list[int]] = defaultdict(list)
    for r in records:  # offset order per partition
        task, row_id, _ = r.value.split(b":", 2)
        assert r.key == row_id.lstrip(b"0").rjust(1, b"0")
        per_task[(r.partition, int(task))].append(int(row_id))
    assert {task for _, task in per_task} == set(range(TASKS))
    for (partition, task), row_ids in per_task.items():
        assert row_ids == sorted(row_ids), f"partition {partition}, task {task} reordered"
