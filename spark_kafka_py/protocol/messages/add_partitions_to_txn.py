"""AddPartitionsToTxn (API key 24): add partitions to a producer's ongoing transaction.

Source: Kafka message specs ``AddPartitionsToTxnRequest.json`` /
``AddPartitionsToTxnResponse.json`` (valid versions 0-5, flexible 3+). Version notes from the
spec: v1 is v0; v2 may return PRODUCER_FENCED; v3 flexible; v4 batches several transactions
(``transactions``, ``results_by_transaction``) and adds ``verify_only``; v5 may return
TRANSACTION_ABORTABLE (KIP-890).

Versions 0-3 are the client's (the ``v3_and_below_*`` fields); versions 4+ are sent only by
brokers to the transaction coordinator to verify partitions (KIP-890 part 1) and need
CLUSTER_ACTION. We support versions 0-3; the v4+ fields are declared so that the schema
matches the spec.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BOOL,
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
    "ADD_PARTITIONS_TO_TXN_KEY",
    "AddPartitionsToTxnPartitionResult",
    "AddPartitionsToTxnRequest",
    "AddPartitionsToTxnResponse",
    "AddPartitionsToTxnResult",
    "AddPartitionsToTxnTopic",
    "AddPartitionsToTxnTopicResult",
    "AddPartitionsToTxnTransaction",
]

ADD_PARTITIONS_TO_TXN_KEY = 24


@kafka_struct
class AddPartitionsToTxnTopic:
    """A topic and the partition indexes to add to the transaction."""

    name: str = kfield(STRING, "0+")
    partitions: tuple[int, ...] = kfield(Array(INT32), "0+")


@kafka_struct
class AddPartitionsToTxnTransaction:
    """One transaction of a broker's batched request (v4+, broker-to-coordinator only)."""

    transactional_id: str = kfield(STRING, "4+")
    producer_id: int = kfield(INT64, "4+")
    producer_epoch: int = kfield(INT16, "4+")
    verify_only: bool = kfield(BOOL, "4+", default=False)
    topics: tuple[AddPartitionsToTxnTopic, ...] = kfield(Array(AddPartitionsToTxnTopic), "4+")


@kafka_message(api_key=ADD_PARTITIONS_TO_TXN_KEY, valid="0-5", flexible="3+", supported=(0, 3))
class AddPartitionsToTxnRequest(Request["AddPartitionsToTxnResponse"]):
    """AddPartitionsToTxn request, versions 0-3 (the client's form, ``v3_and_below_*``)."""

    transactions: tuple[AddPartitionsToTxnTransaction, ...] = kfield(
        Array(AddPartitionsToTxnTransaction), "4+"
    )
    v3_and_below_transactional_id: str = kfield(STRING, "0-3")
    v3_and_below_producer_id: int = kfield(INT64, "0-3")
    v3_and_below_producer_epoch: int = kfield(INT16, "0-3")
    v3_and_below_topics: tuple[AddPartitionsToTxnTopic, ...] = kfield(
        Array(AddPartitionsToTxnTopic), "0-3"
    )


@kafka_struct
class AddPartitionsToTxnPartitionResult:
    """One partition's result (``partition_error_code`` 0 when added)."""

    partition_index: int = kfield(INT32, "0+")
    partition_error_code: int = kfield(INT16, "0+")


@kafka_struct
class AddPartitionsToTxnTopicResult:
    """A topic's partition results."""

    name: str = kfield(STRING, "0+")
    results_by_partition: tuple[AddPartitionsToTxnPartitionResult, ...] = kfield(
        Array(AddPartitionsToTxnPartitionResult), "0+"
    )


@kafka_struct
class AddPartitionsToTxnResult:
    """One transaction's results in a batched response (v4+, broker-to-coordinator only)."""

    transactional_id: str = kfield(STRING, "4+")
    topic_results: tuple[AddPartitionsToTxnTopicResult, ...] = kfield(
        Array(AddPartitionsToTxnTopicResult), "4+"
    )


@kafka_message(api_key=ADD_PARTITIONS_TO_TXN_KEY, valid="0-5", flexible="3+", supported=(0, 3))
class AddPartitionsToTxnResponse(Response):
    """AddPartitionsToTxn response, versions 0-3: per-partition errors in
    ``results_by_topic_v3_and_below`` (there is no top-level error before v4)."""

    throttle_time_ms: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "4+", ignorable=True)
    results_by_transaction: tuple[AddPartitionsToTxnResult, ...] = kfield(
        Array(AddPartitionsToTxnResult), "4+"
    )
    results_by_topic_v3_and_below: tuple[AddPartitionsToTxnTopicResult, ...] = kfield(
        Array(AddPartitionsToTxnTopicResult), "0-3"
    )


AddPartitionsToTxnRequest.response_type = AddPartitionsToTxnResponse
