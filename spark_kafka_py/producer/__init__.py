"""The producer layer of the sink: partitioning, batching, Produce, idempotence.

It may import ``admin/``, ``client/``, ``protocol/`` and ``records/``, never ``spark/`` or
``testing/`` (``tests/test_layers.py``). Public API: :class:`KafkaProducer` with its
:class:`ProducerSettings` and :class:`ProducerStats`; :func:`murmur2`, :func:`to_positive`,
:func:`partition_for_key`; transactions (:mod:`spark_kafka_py.producer.transactions`):
:class:`TransactionHandle`, :func:`end_transaction`, :func:`fence`. Describing and listing
transactions and creating topics are in :mod:`spark_kafka_py.admin`.
"""

from spark_kafka_py.producer.partitioner import murmur2, partition_for_key, to_positive
from spark_kafka_py.producer.producer import KafkaProducer
from spark_kafka_py.producer.settings import ProducerSettings, parse_acks
from spark_kafka_py.producer.state import ProducerStats
from spark_kafka_py.producer.transactions import (
    TransactionHandle,
    end_transaction,
    fence,
)

__all__ = [
    "KafkaProducer",
    "ProducerSettings",
    "ProducerStats",
    "TransactionHandle",
    "end_transaction",
    "fence",
    "murmur2",
    "parse_acks",
    "partition_for_key",
    "to_positive",
]
