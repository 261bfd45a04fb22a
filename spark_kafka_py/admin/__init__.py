"""Kafka's Admin requests in one room (as Kafka's Java ``Admin``), over ``client/``: for every
layer above it alike (the producer, the consumer, the spark layer, the testing harness).

It may import ``client/``, ``protocol/`` and ``errors``, never ``consumer/``, ``producer/``,
``spark/`` or ``testing/``; ``client/`` never imports it (``tests/test_layers.py``).

- topics (:mod:`spark_kafka_py.admin.topics`): :func:`create_topic` (CreateTopics),
  :func:`delete_topics` (DeleteTopics), :func:`list_topics`, :func:`describe_topics`
  (Metadata and DescribeConfigs).
- configs (:mod:`spark_kafka_py.admin.configs`): :func:`describe_topic_configs`,
  :func:`describe_broker_configs`, :func:`non_default_topic_configs`,
  :func:`broker_creates_topics` (DescribeConfigs).
- groups (:mod:`spark_kafka_py.admin.groups`): :func:`list_groups` (ListGroups),
  :func:`describe_group` (ConsumerGroupDescribe, DescribeGroups), :func:`committed_offsets`,
  :func:`committed_offsets_and_epochs` (OffsetFetch).
- transactions (:mod:`spark_kafka_py.admin.transactions`): :class:`TransactionState`,
  :func:`describe_transaction` (DescribeTransactions), :func:`list_transactions`,
  :func:`list_transactions_by_coordinator` (ListTransactions).

Delegation tokens will join them here.
"""

from spark_kafka_py.admin.configs import (
    broker_creates_topics,
    describe_broker_configs,
    describe_topic_configs,
    non_default_topic_configs,
)
from spark_kafka_py.admin.groups import (
    CommittedOffset,
    GroupDescription,
    GroupListing,
    GroupMember,
    committed_offsets,
    committed_offsets_and_epochs,
    describe_group,
    list_groups,
)
from spark_kafka_py.admin.topics import (
    TopicDescription,
    create_topic,
    delete_topics,
    describe_topics,
    list_topics,
)
from spark_kafka_py.admin.transactions import (
    TransactionState,
    describe_transaction,
    list_transactions,
    list_transactions_by_coordinator,
)

__all__ = [
    "CommittedOffset",
    "GroupDescription",
    "GroupListing",
    "GroupMember",
    "TopicDescription",
    "TransactionState",
    "broker_creates_topics",
    "committed_offsets",
    "committed_offsets_and_epochs",
    "create_topic",
    "delete_topics",
    "describe_broker_configs",
    "describe_group",
    "describe_topic_configs",
    "describe_topics",
    "describe_transaction",
    "list_groups",
    "list_topics",
    "list_transactions",
    "list_transactions_by_coordinator",
    "non_default_topic_configs",
]
