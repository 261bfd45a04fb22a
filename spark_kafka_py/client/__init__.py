"""The only code that touches sockets: broker connections and the cluster view."""

from __future__ import annotations

from spark_kafka_py.client.cluster import (
    BrokerInfo,
    ClientConfig,
    ClusterMetadata,
    KafkaClient,
    PartitionInfo,
    TopicInfo,
    parse_bootstrap_servers,
)
from spark_kafka_py.client.connection import BrokerConnection

__all__ = [
    "BrokerConnection",
    "BrokerInfo",
    "ClientConfig",
    "ClusterMetadata",
    "KafkaClient",
    "PartitionInfo",
    "TopicInfo",
    "parse_bootstrap_servers",
]
