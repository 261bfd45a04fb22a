"""Kafka's Admin requests in one room (as Kafka's Java ``Admin``), over ``client/``: for every
layer above it alike (the producer, the consumer, the spark layer, the testing harness).

It may import ``client/``, ``protocol/`` and ``errors``, never ``consumer/``, ``producer/``,
``spark/`` or ``testing/``; ``client/`` never imports it (``tests/test_layers.py``).

- topics (:mod:`spark_kafka_py.admin.topics`): :func:`create_topic` (CreateTopics).
- configs (:mod:`spark_kafka_py.admin.configs`): :func:`describe_topic_configs`,
  :func:`describe_broker_configs` (DescribeConfigs).
- transactions (:mod:`spark_kafka_py.admin.transactions`): :class:`TransactionState`,
  :func:`describe_transaction` (DescribeTransactions), :func:`list_transactions`
  (ListTransactions).

Delegation tokens and groups (DescribeGroups, ...) will join them here.
"""

from spark_kafka_py.admin.configs import describe_broker_configs, describe_topic_configs
from spark_kafka_py.admin.topics import create_topic
from spark_kafka_py.admin.transactions import (
    TransactionState,
    describe_transaction,
    list_transactions,
)

__all__ = [
    "TransactionState",
    "create_topic",
    "describe_broker_configs",
    "describe_topic_configs",
    "describe_transaction",
    "list_transactions",
]
