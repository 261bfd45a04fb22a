"""ListTransactions (API key 66): the transactional ids a transaction coordinator knows.

Source: Kafka message specs ``ListTransactionsRequest.json`` / ``ListTransactionsResponse.json``
(valid versions 0-2, flexible 0+; KIP-664). Version notes from the spec: v1 adds
``duration_filter`` (KIP-994: only transactions open longer than that many ms; -1 for all);
v2 ``transactional_id_pattern`` (a regular expression; null or empty for all). Each broker
answers for the transactional ids it coordinates, so a whole-cluster listing asks every
broker (as ``kafka-transactions.sh list`` does). We support versions 0-2.
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
    "LIST_TRANSACTIONS_KEY",
    "ListTransactionsRequest",
    "ListTransactionsResponse",
    "ListedTransactionState",
]

LIST_TRANSACTIONS_KEY = 66


@kafka_message(api_key=LIST_TRANSACTIONS_KEY, valid="0-2", flexible="0+", supported=(0, 2))
class ListTransactionsRequest(Request["ListTransactionsResponse"]):
    """ListTransactions request, versions 0-2: empty filters list everything."""

    state_filters: tuple[str, ...] = kfield(Array(STRING), "0+")
    producer_id_filters: tuple[int, ...] = kfield(Array(INT64), "0+")
    duration_filter: int = kfield(INT64, "1+", default=-1)
    transactional_id_pattern: str | None = kfield(
        STRING, "2+", default=None, nullable_versions="2+"
    )


@kafka_struct
class ListedTransactionState:
    """One transactional id: its producer id and the coordinator's state name."""

    transactional_id: str = kfield(STRING, "0+")
    producer_id: int = kfield(INT64, "0+")
    transaction_state: str = kfield(STRING, "0+")


@kafka_message(api_key=LIST_TRANSACTIONS_KEY, valid="0-2", flexible="0+", supported=(0, 2))
class ListTransactionsResponse(Response):
    """ListTransactions response, versions 0-2."""

    throttle_time_ms: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")
    unknown_state_filters: tuple[str, ...] = kfield(Array(STRING), "0+")
    transaction_states: tuple[ListedTransactionState, ...] = kfield(
        Array(ListedTransactionState), "0+"
    )


ListTransactionsRequest.response_type = ListTransactionsResponse
