"""Kafka consumer settings honoured by the source, and the client configuration built from them."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.security import PLAINTEXT, SecurityConfig
from spark_kafka_py.consumer.types import READ_UNCOMMITTED
from spark_kafka_py.registry import default


@dataclass(frozen=True)
class ConsumerSettings:
    """The Kafka consumer settings we honour, with the Java consumer's defaults.

    Built from a read's options by :func:`spark_kafka_py.spark.options.parse_options`; each
    default is the option's in :mod:`spark_kafka_py.registry` (``kafka.<Java name>``).
    Units: bytes for ``*_bytes``, milliseconds for ``*_ms``. ``default_api_timeout_ms``
    bounds the driver's retries while brokers are unreachable (Metadata, ListOffsets, group
    requests), as ``default.api.timeout.ms`` does in the Java clients. ``security``: TLS/SASL
    settings (``kafka.security.protocol``, ``kafka.ssl.*``, ``kafka.sasl.*``), secrets hidden
    in repr.
    """

    bootstrap_servers: str
    client_id: str = default("kafka.client.id")
    request_timeout_ms: int = default("kafka.request.timeout.ms")
    connect_timeout_ms: int = default("kafka.socket.connection.setup.timeout.ms")
    retry_backoff_ms: int = default("kafka.retry.backoff.ms")
    reconnect_backoff_ms: int = default("kafka.reconnect.backoff.ms")
    metadata_max_age_ms: int = default("kafka.metadata.max.age.ms")
    default_api_timeout_ms: int = default("kafka.default.api.timeout.ms")
    fetch_max_bytes: int = default("kafka.fetch.max.bytes")
    max_partition_fetch_bytes: int = default("kafka.max.partition.fetch.bytes")
    fetch_min_bytes: int = default("kafka.fetch.min.bytes")
    fetch_max_wait_ms: int = default("kafka.fetch.max.wait.ms")
    isolation_level: int = READ_UNCOMMITTED
    client_rack: str = default("kafka.client.rack")
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
