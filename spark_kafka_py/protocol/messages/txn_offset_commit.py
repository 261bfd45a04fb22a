"""TxnOffsetCommit (API key 28): commit a group's offsets inside a producer's transaction.

Source: Kafka message specs ``TxnOffsetCommitRequest.json`` / ``TxnOffsetCommitResponse.json``
(valid versions 0-5, flexible 3+). Version notes from the spec: v1 is v0; v2
``committed_leader_epoch`` (KIP-320); v3 flexible, and the consumer's group metadata
``generation_id``, ``member_id``, ``group_instance_id`` (KIP-447, fencing of zombie
consumers); v4 may return TRANSACTION_ABORTABLE (KIP-890); v5 implicitly adds the group to
the transaction when the coordinator runs transactions v2 (KIP-890 part 2; without it a
producer must not send v5 and must call AddOffsetsToTxn first).

We support versions 0-5. The group metadata fields are not ignorable in the spec: a
non-default value raises :class:`~spark_kafka_py.errors.LocalProtocolError` at v0-2 (Kafka's
Java client refuses the same). Sent to the group coordinator (after AddOffsetsToTxn to the
transaction coordinator); the offsets become visible when the transaction commits.
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
    "TXN_OFFSET_COMMIT_KEY",
    "TxnOffsetCommitRequest",
    "TxnOffsetCommitRequestPartition",
    "TxnOffsetCommitRequestTopic",
    "TxnOffsetCommitResponse",
    "TxnOffsetCommitResponsePartition",
    "TxnOffsetCommitResponseTopic",
]

TXN_OFFSET_COMMIT_KEY = 28


@kafka_struct
class TxnOffsetCommitRequestPartition:
    """An offset to commit: the next offset to read, plus optional metadata string."""

    partition_index: int = kfield(INT32, "0+")
    committed_offset: int = kfield(INT64, "0+")
    committed_leader_epoch: int = kfield(INT32, "2+", default=-1, ignorable=True)
    committed_metadata: str | None = kfield(STRING, "0+", nullable_versions="0+")


@kafka_struct
class TxnOffsetCommitRequestTopic:
    """A topic's offsets to commit."""

    name: str = kfield(STRING, "0+")
    partitions: tuple[TxnOffsetCommitRequestPartition, ...] = kfield(
        Array(TxnOffsetCommitRequestPartition), "0+"
    )


@kafka_message(api_key=TXN_OFFSET_COMMIT_KEY, valid="0-5", flexible="3+", supported=(0, 5))
class TxnOffsetCommitRequest(Request["TxnOffsetCommitResponse"]):
    """TxnOffsetCommit request, versions 0-5.

    ``generation_id`` -1, ``member_id`` "" and ``group_instance_id`` ``None`` (v3+) commit
    without consumer group metadata (no zombie-consumer fencing).
    """

    transactional_id: str = kfield(STRING, "0+")
    group_id: str = kfield(STRING, "0+")
    producer_id: int = kfield(INT64, "0+")
    producer_epoch: int = kfield(INT16, "0+")
    generation_id: int = kfield(INT32, "3+", default=-1)
    member_id: str = kfield(STRING, "3+", default="")
    group_instance_id: str | None = kfield(STRING, "3+", nullable_versions="3+", default=None)
    topics: tuple[TxnOffsetCommitRequestTopic, ...] = kfield(
        Array(TxnOffsetCommitRequestTopic), "0+"
    )


@kafka_struct
class TxnOffsetCommitResponsePartition:
    """One partition's commit result."""

    partition_index: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")


@kafka_struct
class TxnOffsetCommitResponseTopic:
    """A topic's commit results."""

    name: str = kfield(STRING, "0+")
    partitions: tuple[TxnOffsetCommitResponsePartition, ...] = kfield(
        Array(TxnOffsetCommitResponsePartition), "0+"
    )


@kafka_message(api_key=TXN_OFFSET_COMMIT_KEY, valid="0-5", flexible="3+", supported=(0, 5))
class TxnOffsetCommitResponse(Response):
    """TxnOffsetCommit response, versions 0-5."""

    throttle_time_ms: int = kfield(INT32, "0+")
    topics: tuple[TxnOffsetCommitResponseTopic, ...] = kfield(
        Array(TxnOffsetCommitResponseTopic), "0+"
    )


TxnOffsetCommitRequest.response_type = TxnOffsetCommitResponse
