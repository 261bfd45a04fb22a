"""DescribeTransactions (API key 65): the state of transactional ids at their coordinator.

Source: Kafka message specs ``DescribeTransactionsRequest.json`` /
``DescribeTransactionsResponse.json`` (valid version 0, flexible 0+; KIP-664). Sent to the
transaction coordinator of each id (FindCoordinator with key type 1). ``transaction_state`` is
the coordinator's state name (``TransactionState`` in Kafka: ``Empty``, ``Ongoing``,
``PrepareCommit``, ``PrepareAbort``, ``CompleteCommit``, ``CompleteAbort``, ``Dead``,
``PrepareEpochFence``). We support version 0.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "DESCRIBE_TRANSACTIONS_KEY",
    "DescribeTransactionsRequest",
    "DescribeTransactionsResponse",
    "TopicData",
    "TransactionState",
]

DESCRIBE_TRANSACTIONS_KEY = 65


@kafka_message(api_key=DESCRIBE_TRANSACTIONS_KEY, valid="0", flexible="0+", supported=(0, 0))
class DescribeTransactionsRequest(Request["DescribeTransactionsResponse"]):
    """DescribeTransactions request, version 0: the transactional ids to describe."""

    transactional_ids: tuple[str, ...] = kfield(Array(STRING), "0+")


@kafka_struct
class TopicData:
    """A topic and the partitions in the transaction (without markers yet, when ending)."""

    topic: str = kfield(STRING, "0+")
    partitions: tuple[int, ...] = kfield(Array(INT32), "0+")


@kafka_struct
class TransactionState:
    """One transactional id: error, state name, timeout (ms), start time (ms since the epoch,
    -1 when no transaction is open), producer id and epoch, partitions."""

    error_code: int = kfield(INT16, "0+")
    transactional_id: str = kfield(STRING, "0+")
    transaction_state: str = kfield(STRING, "0+")
    transaction_timeout_ms: int = kfield(INT32, "0+")
    transaction_start_time_ms: int = kfield(INT64, "0+")
    producer_id: int = kfield(INT64, "0+")
    producer_epoch: int = kfield(INT16, "0+")
    topics: tuple[TopicData, ...] = kfield(Array(TopicData), "0+")


@kafka_message(api_key=DESCRIBE_TRANSACTIONS_KEY, valid="0", flexible="0+", supported=(0, 0))
class DescribeTransactionsResponse(Response):
    """DescribeTransactions response, version 0: one state per transactional id asked."""

    throttle_time_ms: int = kfield(INT32, "0+")
    transaction_states: tuple[TransactionState, ...] = kfield(Array(TransactionState), "0+")


DescribeTransactionsRequest.response_type = DescribeTransactionsResponse
