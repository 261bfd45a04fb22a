"""Kafka consumer settings honoured by the source: the client's configuration plus the
consumer's own (Fetch bounds, isolation level, rack, group)."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.consumer.types import READ_UNCOMMITTED
from spark_kafka_py.registry import default

__all__ = ["ConsumerSettings"]


@dataclass(frozen=True)
class ConsumerSettings:
    """The Kafka consumer settings we honour, with the Java consumer's defaults.

    Built from a read's options by :func:`spark_kafka_py.spark.options.parse_options`; each
    default is the option's in :mod:`spark_kafka_py.registry` (``kafka.<Java name>``).
    Units: bytes for ``*_bytes``, milliseconds for ``*_ms``.

    Attributes:
        client: connection settings (bootstrap servers, ``client.id``, timeouts, backoffs,
            ``metadata.max.age.ms``, TLS/SASL with secrets hidden in repr).
        default_api_timeout_ms: bound on the driver's retries while brokers are unreachable
            (Metadata, ListOffsets, group requests), as ``default.api.timeout.ms`` in the Java
            clients.
        fetch_max_bytes / max_partition_fetch_bytes / fetch_min_bytes / fetch_max_wait_ms: the
            Fetch request's bounds (FetchRequest ``max_bytes``, ``partition_max_bytes``,
            ``min_bytes``, ``max_wait_ms``).
        max_decompression_ratio: ``maxDecompressionRatio``: one Fetch response's records may
            decompress to at most this many times ``max(partition bytes asked, bytes
            received)`` (:mod:`spark_kafka_py.records.bounds`).
        isolation_level: ``READ_UNCOMMITTED`` (0) or ``READ_COMMITTED`` (1).
        check_crcs: ``check.crcs``: compare each fetched batch's stored CRC with the computed
            one (``False`` skips only that comparison, see
            :func:`spark_kafka_py.records.decoder.decode_records`).
        client_rack: sent as Fetch ``rack_id`` (KIP-392), ``""`` for none.
        group_id: ``group.id`` or ``None``.
    """

    client: ClientConfig
    default_api_timeout_ms: int = default("kafka.default.api.timeout.ms")
    fetch_max_bytes: int = default("kafka.fetch.max.bytes")
    max_partition_fetch_bytes: int = default("kafka.max.partition.fetch.bytes")
    fetch_min_bytes: int = default("kafka.fetch.min.bytes")
    fetch_max_wait_ms: int = default("kafka.fetch.max.wait.ms")
    max_decompression_ratio: int = default("maxDecompressionRatio")
    isolation_level: int = READ_UNCOMMITTED
    check_crcs: bool = default("kafka.check.crcs")
    client_rack: str = default("kafka.client.rack")
    group_id: str | None = None
