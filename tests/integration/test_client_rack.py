"""``kafka.client.rack``: fetching from the nearest replica (KIP-392) on a real 3-node cluster.

Each node gets ``broker.rack=rack<node id>`` and the brokers use Kafka's
``RackAwareReplicaSelector``; with ``client.rack`` set to a follower's rack, the leader answers
the first Fetch with that follower as ``preferred_read_replica`` and the fetcher must read the
rest from it. The records are checked against the producer's input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.fetcher import PartitionFetcher
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.protocol.messages.fetch import FetchRequest
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    create_topic,
    produce,
    wait_for_full_isr,
)

pytestmark = pytest.mark.integration


class RecordingClient(KafkaClient):
    """A real client that also notes which node each Fetch went to."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fetch_nodes: list[int] = []

    def send(self, node_id: int, request: Any, **kwargs: Any) -> Any:
        if isinstance(request, FetchRequest):
            self.fetch_nodes.append(node_id)
        return super().send(node_id, request, **kwargs)


def test_fetches_from_the_replica_in_the_clients_rack(
    kafka_cluster_factory: Callable[..., Any],
) -> None:
    cluster = kafka_cluster_factory(
        3,
        heap="384m",
        server_props={
            "broker.rack": "rack${node_id}",
            "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
        },
    )
    bootstrap = cluster.bootstrap_servers
    topic = "rack-aware"
    create_topic(bootstrap, topic, partitions=1, replication_factor=3)
    values = [f"v{i}" for i in range(50)]
    produce(bootstrap, topic, [ProducedRecord(key=None, value=v, partition=0) for v in values])
    state = wait_for_full_isr(bootstrap, topic)[0]
    follower = next(n for n in state.replicas if n != state.leader)

    settings = ConsumerSettings(
        ClientConfig.from_bootstrap(bootstrap), client_rack=f"rack{follower}"
    )
    client = RecordingClient(settings.client)
    try:
        fetcher = PartitionFetcher(
            client, TopicPartition(topic, 0), settings, poll_timeout_ms=60_000
        )
        got = [
            v.decode() for b in fetcher.read(0, len(values)) for v in b.column("value").to_pylist()
        ]
    finally:
        client.close()

    assert got == values
    assert client.fetch_nodes[0] == state.leader
    assert follower in client.fetch_nodes[1:]
    assert client.fetch_nodes[-1] == follower
