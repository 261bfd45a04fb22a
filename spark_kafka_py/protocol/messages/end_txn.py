"""EndTxn (API key 26): commit or abort a producer's ongoing transaction.

Source: Kafka message specs ``EndTxnRequest.json`` / ``EndTxnResponse.json`` (valid versions
0-5, flexible 3+). Version notes from the spec: v1 is v0; v2 may return PRODUCER_FENCED; v3
flexible; v4 may return TRANSACTION_ABORTABLE (KIP-890); v5 bumps the epoch on every
transaction (KIP-890 part 2): the response carries the producer's new ``producer_id`` and
``producer_epoch`` (-1 before v5). We support versions 0-5.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Request,
    Response,
    kafka_message,
    kfield,
)

__all__ = [
    "END_TXN_KEY",
    "EndTxnRequest",
    "EndTxnResponse",
]

END_TXN_KEY = 26


@kafka_message(api_key=END_TXN_KEY, valid="0-5", flexible="3+", supported=(0, 5))
class EndTxnRequest(Request["EndTxnResponse"]):
    """EndTxn request, versions 0-5: ``committed`` True commits, False aborts."""

    transactional_id: str = kfield(STRING, "0+")
    producer_id: int = kfield(INT64, "0+")
    producer_epoch: int = kfield(INT16, "0+")
    committed: bool = kfield(BOOL, "0+")


@kafka_message(api_key=END_TXN_KEY, valid="0-5", flexible="3+", supported=(0, 5))
class EndTxnResponse(Response):
    """EndTxn response, versions 0-5 (``producer_id``/``producer_epoch`` v5+, else -1)."""

    throttle_time_ms: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")
    producer_id: int = kfield(INT64, "5+", default=-1, ignorable=True)
    producer_epoch: int = kfield(INT16, "5+", default=-1, ignorable=True)


EndTxnRequest.response_type = EndTxnResponse
