"""A partition leader killed while the producer writes (3 brokers, replication factor 3,
min.insync.replicas 2): every record stored exactly once and in order (idempotence, KIP-98),
through NOT_LEADER_OR_FOLLOWER / lost connections, metadata refresh and retries."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from spark_kafka_py.producer import KafkaProducer
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import create_topic, wait_for_full_isr

from .helpers import read_back, settings, values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

TS = int(
    time.time() * 1000
)  # CreateTime now: the test broker enforces retention (7 days) every 5 s


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalKafkaCluster]:
    with LocalKafkaCluster(3, heap="320m") as c:
        yield c


def test_leader_killed_mid_write_every_record_once_in_order(cluster: LocalKafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = f"producer-failover-{time.time_ns()}"
    create_topic(bootstrap, topic, 2, 3, {"min.insync.replicas": "2"})
    states = wait_for_full_isr(bootstrap, topic)
    leader = states[0].leader
    s = settings(bootstrap, batch_size=2048, request_timeout_ms=5000, delivery_timeout_ms=120_000)
    total = 20_000
    killed = threading.Event()
    with KafkaProducer(s) as producer:
        for i, start in enumerate(range(0, total, 500)):
            for partition in (0, 1):
                producer.append(topic, partition, None, values(500, start=start), None, TS)
            if i == 10:  # once the first batches are acknowledged, with more in flight
                deadline = time.monotonic() + 60
                while producer.stats.records == 0:
                    assert time.monotonic() < deadline
                    time.sleep(0.005)
                cluster.kill(leader)
                killed.set()
        producer.flush()
        stats = producer.stats
        pid = producer.producer_id
    assert killed.is_set() and stats.records == 2 * total
    for partition in (0, 1):
        stored = read_back(bootstrap, topic, partition)
        assert stored.rows.column("value").to_pylist() == [f"v{i}".encode() for i in range(total)]
        assert {b.producer_id for b in stored.batches} == {pid}
        counts = [b.count for b in stored.batches]
        assert [b.base_sequence for b in stored.batches] == [
            sum(counts[:i]) for i in range(len(counts))
        ]
    cluster.restart(leader)
