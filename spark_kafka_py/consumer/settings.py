"""Kafka consumer settings honoured by the source, and the client configuration built from them."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.security import PLAINTEXT, SecurityConfig
from spark_kafka_py.consumer.types import READ_UNCOMMITTED


@dataclass(frozen=True)
class ConsumerSettings:
    """The Kafka consumer settings we honour, with the Java consumer's defaults.

    Units: bytes for ``*_bytes``, milliseconds for ``*_ms``. ``default_api_timeout_ms``
    bounds the driver's retries while brokers are unreachable (Metadata, ListOffsets, group
    requests), as ``default.api.timeout.ms`` does in the Java clients. ``security``: TLS/SASL
    settings (``kafka.security.protocol``, ``kafka.ssl.*``, ``kafka.sasl.*``), secrets hidden
    in repr.
    """

    bootstrap_servers: str
    client_id: str = "spark-kafka-py"
    request_timeout_ms: int = 30_000
    connect_timeout_ms: int = 10_000
    retry_backoff_ms: int = 100
    reconnect_backoff_ms: int = 50
    metadata_max_age_ms: int = 300_000
    default_api_timeout_ms: int = 60_000
    fetch_max_bytes: int = 52_428_800
    max_partition_fetch_bytes: int = 1_048_576
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int = 500
    isolation_level: int = READ_UNCOMMITTED
    client_rack: str = ""
    group_id: str | None = None
    security: SecurityConfig = PLAINTEXT


def client_config(settings: ConsumerSettings) -> ClientConfig:
    """The :class:`ClientConfig` for a read's consumer settings."""
    return ClientConfig.from_bootstrap(
        settings.bootstrap_servers,
        client_id=settings.client_id,
        request_timeout_ms=settings.request_timeout_ms,
        connect_timeout_ms=settings.connect_timeout_ms,
        retry_backoff_ms=settings.retry_backoff_ms,
        reconnect_backoff_ms=settings.reconnect_backoff_ms,
        metadata_max_age_ms=settings.metadata_max_age_ms,
        security=settings.security,
    )
