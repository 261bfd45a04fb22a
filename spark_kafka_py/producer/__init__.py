"""The producer layer of the sink (issue 12): partitioning, batching, Produce, idempotence.

It may import ``client/``, ``protocol/`` and ``records/``, never ``spark/`` or ``testing/``
(``tests/test_layers.py``). Public API: :class:`KafkaProducer` with its
:class:`ProducerSettings` and :class:`ProducerStats`; :func:`murmur2`, :func:`to_positive`,
:func:`partition_for_key`; transactions
(:mod:`spark_kafka_py.producer.transactions`): :class:`TransactionHandle`,
:class:`TransactionState`, :func:`end_transaction`, :func:`describe_transaction`,
:func:`fence`, :func:`list_transactions`, :func:`create_topic`.
"""

from spark_kafka_py.producer.partitioner import murmur2, partition_for_key, to_positive
from spark_kafka_py.producer.producer import KafkaProducer
from spark_kafka_py.producer.settings import ProducerSettings, parse_acks
from spark_kafka_py.producer.state import ProducerStats
from spark_kafka_py.producer.transactions import (
    TransactionHandle,
    TransactionState,
    create_topic,
    describe_transaction,
    end_transaction,
    fence,
    list_transactions,
)

__all__ = [
    "KafkaProducer",
    "ProducerSettings",
    "ProducerStats",
    "TransactionHandle",
    "TransactionState",
    "create_topic",
    "describe_transaction",
    "end_transaction",
    "fence",
    "list_transactions",
    "murmur2",
    "parse_acks",
    "partition_for_key",
    "to_positive",
]
