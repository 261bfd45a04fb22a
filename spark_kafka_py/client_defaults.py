"""Defaults of the client settings (``kafka.*`` options) the client layer honours.

The values are the Java client's (``CommonClientConfigs``, as ``ConsumerConfig`` and
``ProducerConfig`` declare them), except :data:`CLIENT_ID`. This module sits below every layer,
like :mod:`spark_kafka_py.errors`: :class:`~spark_kafka_py.client.cluster.ClientConfig` takes
its defaults from here, and so does the option registry (:mod:`spark_kafka_py.registry`, which
belongs to the Spark layer's view of the options and must not be imported by ``client/``).
"""

from __future__ import annotations

__all__ = [
    "CLIENT_ID",
    "METADATA_MAX_AGE_MS",
    "RECONNECT_BACKOFF_MS",
    "REQUEST_TIMEOUT_MS",
    "RETRY_BACKOFF_MAX_MS",
    "RETRY_BACKOFF_MS",
    "SOCKET_CONNECTION_SETUP_TIMEOUT_MS",
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
