"""Defaults of the client, consumer and producer settings (``kafka.*`` options) the lower
layers honour.

The values are the Java client's (``CommonClientConfigs``, ``ConsumerConfig``,
``ProducerConfig``), except :data:`CLIENT_ID`, :data:`POLL_TIMEOUT_MS` (Spark's) and
:data:`MAX_DECOMPRESSION_RATIO` (ours). This module sits below every layer, like
:mod:`spark_kafka_py.errors`: :class:`~spark_kafka_py.client.cluster.ClientConfig`,
:class:`~spark_kafka_py.consumer.settings.ConsumerSettings` and
:class:`~spark_kafka_py.producer.settings.ProducerSettings` take their defaults from here, and so
does the option registry (:mod:`spark_kafka_py.registry`, which belongs to the Spark layer's view
of the options and must not be imported by ``client/``, ``consumer/`` or ``producer/``).
"""

from __future__ import annotations

__all__ = [
    "BATCH_SIZE",
    "BUFFER_MEMORY",
    "CHECK_CRCS",
    "CLIENT_ID",
    "CLIENT_RACK",
    "DEFAULT_API_TIMEOUT_MS",
    "DELIVERY_TIMEOUT_MS",
    "ENABLE_IDEMPOTENCE",
    "FETCH_MAX_BYTES",
    "FETCH_MAX_WAIT_MS",
    "FETCH_MIN_BYTES",
    "LINGER_MS",
    "MAX_BLOCK_MS",
    "MAX_DECOMPRESSION_RATIO",
    "MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION",
    "MAX_PARTITION_FETCH_BYTES",
    "MAX_REQUEST_SIZE",
    "METADATA_MAX_AGE_MS",
    "POLL_TIMEOUT_MS",
    "RECONNECT_BACKOFF_MS",
    "REQUEST_TIMEOUT_MS",
    "RETRIES",
    "RETRY_BACKOFF_MAX_MS",
    "RETRY_BACKOFF_MS",
    "SOCKET_CONNECTION_SETUP_TIMEOUT_MS",
    "TRANSACTION_TIMEOUT_MS",
]

#: ``client.id`` sent in every request header. Ours: the Java consumer generates
#: ``consumer-<group>-<n>`` when it is unset.
CLIENT_ID = "spark-kafka-py"
#: ``request.timeout.ms``: ``ConsumerConfig``'s default (30 s).
REQUEST_TIMEOUT_MS = 30_000
#: ``socket.connection.setup.timeout.ms``:
#: ``CommonClientConfigs.DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MS`` (10 s, KIP-601).
SOCKET_CONNECTION_SETUP_TIMEOUT_MS = 10_000
#: ``retry.backoff.ms``: ``CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS`` (100 ms).
RETRY_BACKOFF_MS = 100
#: ``retry.backoff.max.ms``: ``CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MAX_MS`` (1 s, KIP-580):
#: the cap of the exponential backoff between retries.
RETRY_BACKOFF_MAX_MS = 1_000
#: ``reconnect.backoff.ms``: the Java clients' default (50 ms).
RECONNECT_BACKOFF_MS = 50
#: ``metadata.max.age.ms``: the Java clients' default (5 min).
METADATA_MAX_AGE_MS = 300_000

# -- the consumer (ConsumerConfig) and the source's read ------------------------------------
#: ``default.api.timeout.ms``: ``ConsumerConfig``'s default (60 s).
DEFAULT_API_TIMEOUT_MS = 60_000
#: ``fetch.max.bytes``: ``ConsumerConfig.DEFAULT_FETCH_MAX_BYTES`` (50 MiB).
FETCH_MAX_BYTES = 52_428_800
#: ``max.partition.fetch.bytes``: ``ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES`` (1 MiB).
MAX_PARTITION_FETCH_BYTES = 1_048_576
#: ``fetch.min.bytes``: ``ConsumerConfig.DEFAULT_FETCH_MIN_BYTES`` (1 byte).
FETCH_MIN_BYTES = 1
#: ``fetch.max.wait.ms``: ``ConsumerConfig.DEFAULT_FETCH_MAX_WAIT_MS`` (500 ms).
FETCH_MAX_WAIT_MS = 500
#: ``check.crcs``: ``ConsumerConfig``'s default (true).
CHECK_CRCS = True
#: ``client.rack``: ``CommonClientConfigs.DEFAULT_CLIENT_RACK`` (none).
CLIENT_RACK = ""
#: ``kafkaConsumer.pollTimeoutMs``: Spark's default (2 min): how long an executor retries a
#: range without progress.
POLL_TIMEOUT_MS = 120_000
#: ``maxDecompressionRatio`` (ours): one Fetch response may decompress to this many times the
#: bytes it could carry.
MAX_DECOMPRESSION_RATIO = 100

# -- the producer (ProducerConfig) -----------------------------------------------------------
#: ``enable.idempotence``: ``ProducerConfig``'s default since Kafka 3.0 (KIP-679).
ENABLE_IDEMPOTENCE = True
#: ``batch.size``: ``ProducerConfig``'s default (16 KiB).
BATCH_SIZE = 16_384
#: ``linger.ms``: ``ProducerConfig``'s default since Kafka 4.0 (5 ms, KIP-1030).
LINGER_MS = 5
#: ``buffer.memory``: ``ProducerConfig``'s default (32 MiB).
BUFFER_MEMORY = 33_554_432
#: ``max.block.ms``: ``ProducerConfig``'s default (60 s).
MAX_BLOCK_MS = 60_000
#: ``max.request.size``: ``ProducerConfig``'s default (1 MiB).
MAX_REQUEST_SIZE = 1_048_576
#: ``max.in.flight.requests.per.connection``: ``ProducerConfig``'s default (5).
MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 5
#: ``delivery.timeout.ms``: ``ProducerConfig``'s default (2 min, KIP-91).
DELIVERY_TIMEOUT_MS = 120_000
#: ``retries``: ``ProducerConfig``'s default (``Integer.MAX_VALUE``, KIP-91).
RETRIES = 2_147_483_647
#: ``transaction.timeout.ms``: ``ProducerConfig``'s default (60 s).
TRANSACTION_TIMEOUT_MS = 60_000
