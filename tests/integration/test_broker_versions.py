"""Every broker release of the matrix, in the default run: the harness starts it in KRaft
mode, our client negotiates the versions docs/development.md records, reads what Kafka's own
producer wrote (gzip), and an API the release lacks fails naming the feature and the release.

The fuller subset per release (Spark reads, groups, security, the sink) is
``python -m spark_kafka_py.testing.matrix``; this file is its cheap guard (one cluster per
release, no Spark).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import UnsupportedByBrokerError
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
)
from spark_kafka_py.protocol.messages.fetch import FetchRequest
from spark_kafka_py.protocol.messages.produce import ProduceRequest
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.matrix import MATRIX_VERSIONS
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

pytestmark = pytest.mark.integration

#: Release -> (Produce, Fetch) versions our client negotiates with its broker (ApiVersions).
NEGOTIATED = {
    "4.4.0": (13, 17),
    "4.0.2": (12, 17),
    "3.9.1": (11, 17),
    "3.6.2": (9, 15),
}

#: Release line the broker's finalized metadata.version names (KIP-584), fresh cluster.
RELEASE_LINE = {"4.4.0": "4.4", "4.0.2": "4.0", "3.9.1": "3.9", "3.6.2": "3.6"}


@pytest.mark.parametrize("version", MATRIX_VERSIONS)
def test_release_starts_negotiates_and_serves_reads(
    version: str, kafka_cluster_factory: Callable[..., LocalKafkaCluster]
) -> None:
    cluster = kafka_cluster_factory(1, kafka_version=version)
    assert cluster.kafka_version == version
    node = cluster.nodes[0]
    with BrokerConnection("127.0.0.1", node.broker_port) as conn:
        conn.connect()
        got = (conn.pick_version(ProduceRequest), conn.pick_version(FetchRequest))
        assert got == NEGOTIATED[version]
        assert conn.broker_release == RELEASE_LINE[version]
        if 68 not in conn.api_versions:  # KIP-848's heartbeat: 3.7+
            with pytest.raises(UnsupportedByBrokerError, match=r"Kafka 4\.0\+ broker \(KIP-848\)"):
                conn.pick_version(ConsumerGroupHeartbeatRequest)

    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, "t", 1)
    values = [f"v{i}".encode() for i in range(50)]
    produce(bootstrap, "t", [ProducedRecord(None, v, partition=0) for v in values], "gzip")
    settings = ConsumerSettings(ClientConfig.from_bootstrap(bootstrap))
    read = [
        v
        for batch in read_range(settings, TopicPartition("t", 0), 0, len(values))
        for v in batch.column("value").to_pylist()
    ]
    assert read == values
