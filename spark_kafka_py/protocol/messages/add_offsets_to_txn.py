"""AddOffsetsToTxn (API key 25): add a consumer group's offsets to a producer's transaction.

Source: Kafka message specs ``AddOffsetsToTxnRequest.json`` / ``AddOffsetsToTxnResponse.json``
(valid versions 0-4, flexible 3+). Version notes from the spec: v1 is v0; v2 may return
PRODUCER_FENCED; v3 flexible; v4 may return TRANSACTION_ABORTABLE (KIP-890). Sent to the
transaction coordinator before TxnOffsetCommit (with transactions v2, KIP-890 part 2,
TxnOffsetCommit v5 does it implicitly). We support versions 0-4.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
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
    "ADD_OFFSETS_TO_TXN_KEY",
    "AddOffsetsToTxnRequest",
    "AddOffsetsToTxnResponse",
]

ADD_OFFSETS_TO_TXN_KEY = 25


@kafka_message(api_key=ADD_OFFSETS_TO_TXN_KEY, valid="0-4", flexible="3+", supported=(0, 4))
class AddOffsetsToTxnRequest(Request["AddOffsetsToTxnResponse"]):
    """AddOffsetsToTxn request, versions 0-4: the producer's id/epoch and the ``group_id``."""

    transactional_id: str = kfield(STRING, "0+")
    producer_id: int = kfield(INT64, "0+")
    producer_epoch: int = kfield(INT16, "0+")
    group_id: str = kfield(STRING, "0+")


@kafka_message(api_key=ADD_OFFSETS_TO_TXN_KEY, valid="0-4", flexible="3+", supported=(0, 4))
class AddOffsetsToTxnResponse(Response):
    """AddOffsetsToTxn response, versions 0-4."""

    throttle_time_ms: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")


AddOffsetsToTxnRequest.response_type = AddOffsetsToTxnResponse
