"""InitProducerId (API key 22): get a producer id and epoch (idempotence, transactions).

Source: Kafka message specs ``InitProducerIdRequest.json`` / ``InitProducerIdResponse.json``
(valid versions 0-6, flexible 2+). Version notes from the spec: v3 adds ``producer_id`` and
``producer_epoch`` to the request so that a producer can resume (bump its epoch) after
INVALID_PRODUCER_EPOCH (KIP-360); v4 may return PRODUCER_FENCED; v5 TRANSACTION_ABORTABLE
(KIP-890); v6 two-phase commit (``enable2_pc``, ``keep_prepared_txn`` and the ongoing
transaction's id/epoch in the response, KIP-939).

We support versions 0-5: Kafka 4.3 marks v6 unstable (``latestVersionUnstable``), so brokers
do not offer it by default; its fields are declared so the schema matches the spec.
``transactional_id=None`` asks for an idempotent (non-transactional) producer id.
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
    "INIT_PRODUCER_ID_KEY",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "InitProducerIdRequest",
    "InitProducerIdResponse",
]

INIT_PRODUCER_ID_KEY = 22
#: ``producer_id`` / ``producer_epoch`` of a producer that has none yet.
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


@kafka_message(api_key=INIT_PRODUCER_ID_KEY, valid="0-6", flexible="2+", supported=(0, 5))
class InitProducerIdRequest(Request["InitProducerIdResponse"]):
    """InitProducerId request, versions 0-5.

    ``transaction_timeout_ms`` (ms): how long the coordinator waits before aborting an idle
    transaction (transactional producers only). ``producer_id``/``producer_epoch`` (v3+):
    the current ones when re-initializing, else :data:`NO_PRODUCER_ID`/:data:`NO_PRODUCER_EPOCH`.
    The spec's default for the nullable ``transactional_id`` is ``""``; an idempotent producer
    sends ``None``.
    """

    transactional_id: str | None = kfield(STRING, "0+", nullable_versions="0+")
    transaction_timeout_ms: int = kfield(INT32, "0+")
    producer_id: int = kfield(INT64, "3+", default=NO_PRODUCER_ID)
    producer_epoch: int = kfield(INT16, "3+", default=NO_PRODUCER_EPOCH)
    enable2_pc: bool = kfield(BOOL, "6+", default=False)
    keep_prepared_txn: bool = kfield(BOOL, "6+", default=False)


@kafka_message(api_key=INIT_PRODUCER_ID_KEY, valid="0-6", flexible="2+", supported=(0, 5))
class InitProducerIdResponse(Response):
    """InitProducerId response, versions 0-5: the producer id and epoch, or an error."""

    throttle_time_ms: int = kfield(INT32, "0+", ignorable=True)
    error_code: int = kfield(INT16, "0+")
    producer_id: int = kfield(INT64, "0+", default=NO_PRODUCER_ID)
    producer_epoch: int = kfield(INT16, "0+")
    ongoing_txn_producer_id: int = kfield(INT64, "6+", default=NO_PRODUCER_ID)
    ongoing_txn_producer_epoch: int = kfield(INT16, "6+", default=NO_PRODUCER_EPOCH)


InitProducerIdRequest.response_type = InitProducerIdResponse
