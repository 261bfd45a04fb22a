"""Kafka consumer settings honoured by the source: the client's configuration plus the
consumer's own (Fetch bounds, isolation level, rack, group)."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py import client_defaults as _defaults
from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.consumer.types import READ_UNCOMMITTED

__all__ = ["ConsumerSettings"]


@dataclass(frozen=True)
class ConsumerSettings:
    """The Kafka consumer settings we honour, with the Java consumer's defaults.

    Built from a read's options by :func:`spark_kafka_py.spark.options.parse_options`; each
    default is the Java consumer's, from :mod:`spark_kafka_py.client_defaults` (as the option
    registry's, :mod:`spark_kafka_py.registry`, ``kafka.<Java name>``).
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
        poll_timeout_ms: ``kafkaConsumer.pollTimeoutMs``: how long an executor retries a range
            without progress before failing.
        group_id: ``group.id`` or ``None``.
    """

    client: ClientConfig
    default_api_timeout_ms: int = _defaults.DEFAULT_API_TIMEOUT_MS
    fetch_max_bytes: int = _defaults.FETCH_MAX_BYTES
    max_partition_fetch_bytes: int = _defaults.MAX_PARTITION_FETCH_BYTES
    fetch_min_bytes: int = _defaults.FETCH_MIN_BYTES
    fetch_max_wait_ms: int = _defaults.FETCH_MAX_WAIT_MS
    max_decompression_ratio: int = _defaults.MAX_DECOMPRESSION_RATIO
    isolation_level: int = READ_UNCOMMITTED
    check_crcs: bool = _defaults.CHECK_CRCS
    client_rack: str = _defaults.CLIENT_RACK
    group_id: str | None = None
    poll_timeout_ms: int = _defaults.POLL_TIMEOUT_MS
