"""Kafka producer settings honoured by the sink: the client's configuration plus the producer's
own (acks, idempotence, compression, batching, memory, timeouts, retries).

Defaults are the Java producer's (``ProducerConfig``), from
:mod:`spark_kafka_py.client_defaults` (as the ``kafka.*`` options' of
:mod:`spark_kafka_py.registry`); :meth:`ProducerSettings.__post_init__` applies the Java
producer's cross-checks (``ProducerConfig.postProcessAndValidateIdempotenceConfigs`` and
``KafkaProducer.configureDeliveryTimeout``).
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py import client_defaults as _defaults
from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.protocol.messages.produce import ACKS_ALL, ACKS_LEADER, ACKS_NONE
from spark_kafka_py.records.compression import CODEC_NONE, CODEC_ZSTD

__all__ = ["MAX_IN_FLIGHT_IDEMPOTENT", "ProducerSettings", "parse_acks"]

#: With idempotence, the broker keeps the sequence state of the last 5 batches per producer
#: and partition (``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``), hence at most 5 requests in
#: flight per connection (KIP-98; Java's ``ProducerConfig`` check).
MAX_IN_FLIGHT_IDEMPOTENT = 5

_ACKS = {"all": ACKS_ALL, "-1": ACKS_ALL, "1": ACKS_LEADER, "0": ACKS_NONE}


def parse_acks(value: str | int) -> int:
    """``kafka.acks`` as the Produce request's ``acks``: ``all``/``-1`` -> -1, ``1``, ``0``.

    Raises:
        ConfigError: any other value.
    """
    acks = _ACKS.get(str(value).strip().lower())
    if acks is None:
        raise ConfigError(f"kafka.acks={value!r} is not one of all, -1, 0, 1")
    return acks


@dataclass(frozen=True)
class ProducerSettings:
    """The Kafka producer settings we honour, with the Java producer's defaults.

    Units: bytes for sizes and memory, milliseconds for ``*_ms``.

    Attributes:
        client: connection settings (bootstrap servers, ``client.id``, ``request.timeout.ms``,
            ``retry.backoff.ms``, ``metadata.max.age.ms``, TLS/SASL).
        acks: Produce ``acks``: -1 (``all``: the in-sync replicas), 1 (the leader), 0 (no
            response at all).
        enable_idempotence: producer id, epoch and sequence numbers (KIP-98).
        compression_type: codec id 0..4 (:mod:`spark_kafka_py.records.compression`).
        compression_level: the KIP-390 level of that codec, ``None`` for its default.
        batch_size: ``batch.size``: bytes of records (uncompressed) per partition batch;
            0 sends one record per batch.
        linger_ms: a partial batch is sent once it is this old (or at flush).
        buffer_memory: bytes of batches (queued and open) before ``append`` blocks.
        max_block_ms: how long ``append`` blocks on a full buffer, and how long
            ``partition_count`` waits for a topic's metadata.
        max_request_size: largest Produce request (bytes); a larger record fails at once.
        max_in_flight_requests_per_connection: Produce requests written before the first is
            answered, per broker.
        delivery_timeout_ms: a record not acknowledged this long after ``append`` fails.
        retries: retries of a batch after a retriable error (within ``delivery_timeout_ms``).
        transactional_id: ``transactional.id``: set, the producer writes in transactions
            (KIP-98; :mod:`spark_kafka_py.producer.transactions`); needs idempotence and
            ``acks=all``.
        transaction_timeout_ms: ``transaction.timeout.ms``: the broker aborts a transaction
            not ended this long after it began (at most the broker's
            ``transaction.max.timeout.ms``).

    Raises:
        ConfigError: a value out of range, or one of Java's cross-checks failing; the message
            names the ``kafka.*`` option.
    """

    client: ClientConfig
    acks: int = ACKS_ALL
    enable_idempotence: bool = _defaults.ENABLE_IDEMPOTENCE
    compression_type: int = CODEC_NONE
    compression_level: int | None = None
    batch_size: int = _defaults.BATCH_SIZE
    linger_ms: int = _defaults.LINGER_MS
    buffer_memory: int = _defaults.BUFFER_MEMORY
    max_block_ms: int = _defaults.MAX_BLOCK_MS
    max_request_size: int = _defaults.MAX_REQUEST_SIZE
    max_in_flight_requests_per_connection: int = _defaults.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION
    delivery_timeout_ms: int = _defaults.DELIVERY_TIMEOUT_MS
    retries: int = _defaults.RETRIES
    transactional_id: str | None = None
    transaction_timeout_ms: int = _defaults.TRANSACTION_TIMEOUT_MS

    def __post_init__(self) -> None:
        if self.acks not in (ACKS_ALL, ACKS_LEADER, ACKS_NONE):
            raise ConfigError(f"kafka.acks={self.acks!r} is not one of all (-1), 0, 1")
        if not CODEC_NONE <= self.compression_type <= CODEC_ZSTD:
            raise ConfigError(
                f"kafka.compression.type id {self.compression_type} is not one of 0 none, "
                "1 gzip, 2 snappy, 3 lz4, 4 zstd"
            )
        minimums = {
            "batch_size": 0,
            "linger_ms": 0,
            "buffer_memory": 0,
            "max_block_ms": 0,
            "max_request_size": 1,
            "max_in_flight_requests_per_connection": 1,
            "delivery_timeout_ms": 0,
            "retries": 0,
            "transaction_timeout_ms": 1,
        }
        for name, low in minimums.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                option = "kafka." + name.replace("_", ".")
                raise ConfigError(f"{option}={value!r} must be an integer >= {low}")
        if self.enable_idempotence:
            fix = "; or set kafka.enable.idempotence=false"
            if self.acks != ACKS_ALL:
                raise ConfigError(
                    f"kafka.acks={self.acks} conflicts with kafka.enable.idempotence=true: an "
                    f"idempotent producer needs kafka.acks=all{fix}"
                )
            if self.retries == 0:
                raise ConfigError(
                    "kafka.retries=0 conflicts with kafka.enable.idempotence=true: an "
                    f"idempotent producer needs kafka.retries > 0{fix}"
                )
            if self.max_in_flight_requests_per_connection > MAX_IN_FLIGHT_IDEMPOTENT:
                raise ConfigError(
                    "kafka.max.in.flight.requests.per.connection="
                    f"{self.max_in_flight_requests_per_connection} conflicts with "
                    "kafka.enable.idempotence=true: an idempotent producer keeps at most "
                    f"{MAX_IN_FLIGHT_IDEMPOTENT} requests in flight (KIP-98){fix}"
                )
        if self.transactional_id is not None:
            if not self.transactional_id:
                raise ConfigError("the transactional id must not be empty")
            if not self.enable_idempotence:
                raise ConfigError(
                    "kafka.enable.idempotence=false conflicts with a transactional producer "
                    f"(transactional id {self.transactional_id!r}): transactions need "
                    "idempotence (as Kafka's producer requires)"
                )
        request_timeout_ms = self.client.request_timeout_ms
        if self.delivery_timeout_ms < self.linger_ms + request_timeout_ms:
            raise ConfigError(
                f"kafka.delivery.timeout.ms={self.delivery_timeout_ms} must be at least "
                f"kafka.linger.ms + kafka.request.timeout.ms = {self.linger_ms} + "
                f"{request_timeout_ms} = {self.linger_ms + request_timeout_ms} (as Kafka's "
                "producer requires)"
            )
