"""Produce (API key 0): append record batches to partition leaders.

Source: Kafka message specs ``ProduceRequest.json`` / ``ProduceResponse.json`` (valid
versions 3-13 since Kafka 4.0 removed v0-2, flexible 9+). Version notes from the spec:

* v3 ``transactional_id`` and record batch format v2 (magic 2, KIP-98); v4 may return
  KAFKA_STORAGE_ERROR; v5 ``log_start_offset`` in the response; v7 zstd (KIP-110);
  v8 ``record_errors`` and ``error_message`` in the response (KIP-467).
* v9 flexible (KIP-482); v10 tagged ``current_leader`` per partition and ``node_endpoints``
  in the response (KIP-951, answers to NOT_LEADER_OR_FOLLOWER); v11 may return
  TRANSACTION_ABORTABLE (KIP-890); v12 implicitly adds the partition to an ongoing
  transaction when the coordinator runs transactions v2 (KIP-890 part 2; without it a
  transactional producer must not send v12+).
* v13 addresses topics by ``topic_id`` instead of ``name`` (KIP-516); the broker may answer
  UNKNOWN_TOPIC_ID. Set both fields: the one the version lacks is dropped (both ignorable).

We support versions 3-13. ``records`` holds whole record batches (v2, built by
:mod:`spark_kafka_py.records`), a ``memoryview`` after decoding. With ``acks=0``
(:data:`ACKS_NONE`) the broker sends no response at all: the caller must not wait for one.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "ACKS_ALL",
    "ACKS_LEADER",
    "ACKS_NONE",
    "PRODUCE_KEY",
    "BatchIndexAndErrorMessage",
    "LeaderIdAndEpoch",
    "NodeEndpoint",
    "PartitionProduceData",
    "PartitionProduceResponse",
    "ProduceRequest",
    "ProduceResponse",
    "TopicProduceData",
    "TopicProduceResponse",
]

PRODUCE_KEY = 0
#: ``acks`` values: no acknowledgment (and no response), the leader's, the full ISR's.
ACKS_NONE = 0
ACKS_LEADER = 1
ACKS_ALL = -1


@kafka_struct
class PartitionProduceData:
    """Record batches for one partition: ``records`` is whole v2 batches (or ``None``)."""

    index: int = kfield(INT32, "0+")
    records: memoryview | bytes | None = kfield(RECORDS, "0+", nullable_versions="0+")


@kafka_struct
class TopicProduceData:
    """A topic's partitions to produce to: ``name`` (v3-12) or ``topic_id`` (v13+)."""

    name: str = kfield(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partition_data: tuple[PartitionProduceData, ...] = kfield(Array(PartitionProduceData), "0+")


@kafka_message(api_key=PRODUCE_KEY, valid="3-13", flexible="9+", supported=(3, 13))
class ProduceRequest(Request["ProduceResponse"]):
    """Produce request, versions 3-13.

    ``transactional_id`` is ``None`` unless the producer is transactional; ``acks`` one of
    :data:`ACKS_NONE`, :data:`ACKS_LEADER`, :data:`ACKS_ALL`; ``timeout_ms`` (ms) bounds the
    wait for the ISR's acknowledgments.
    """

    transactional_id: str | None = kfield(STRING, "3+", nullable_versions="3+", default=None)
    acks: int = kfield(INT16, "0+")
    timeout_ms: int = kfield(INT32, "0+")
    topic_data: tuple[TopicProduceData, ...] = kfield(Array(TopicProduceData), "0+")


@kafka_struct
class BatchIndexAndErrorMessage:
    """A record (index in its batch) that made the broker drop the batch (v8+, KIP-467)."""

    batch_index: int = kfield(INT32, "8+")
    batch_index_error_message: str | None = kfield(
        STRING, "8+", nullable_versions="8+", default=None
    )


@kafka_struct
class LeaderIdAndEpoch:
    """Tagged ``current_leader`` (v10+, KIP-951): the new leader's id and epoch (-1 unknown)."""

    leader_id: int = kfield(INT32, "10+", default=-1)
    leader_epoch: int = kfield(INT32, "10+", default=-1)


@kafka_struct
class PartitionProduceResponse:
    """One partition's result.

    ``base_offset`` is the offset of the first appended record (-1 on error);
    ``log_append_time_ms`` the broker time (ms) under LogAppendTime, else -1;
    ``log_start_offset`` (v5+) -1 if unknown.
    """

    index: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")
    base_offset: int = kfield(INT64, "0+")
    log_append_time_ms: int = kfield(INT64, "2+", default=-1, ignorable=True)
    log_start_offset: int = kfield(INT64, "5+", default=-1, ignorable=True)
    record_errors: tuple[BatchIndexAndErrorMessage, ...] = kfield(
        Array(BatchIndexAndErrorMessage), "8+", ignorable=True
    )
    error_message: str | None = kfield(
        STRING, "8+", nullable_versions="8+", default=None, ignorable=True
    )
    current_leader: LeaderIdAndEpoch = kfield(LeaderIdAndEpoch, "10+", tag=0)


@kafka_struct
class TopicProduceResponse:
    """A topic's partition results: ``name`` (v3-12) or ``topic_id`` (v13+)."""

    name: str = kfield(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partition_responses: tuple[PartitionProduceResponse, ...] = kfield(
        Array(PartitionProduceResponse), "0+"
    )


@kafka_struct
class NodeEndpoint:
    """Endpoint of a broker named in a ``current_leader`` (v10+, tagged; KIP-951)."""

    node_id: int = kfield(INT32, "10+")
    host: str = kfield(STRING, "10+")
    port: int = kfield(INT32, "10+")
    rack: str | None = kfield(STRING, "10+", nullable_versions="10+", default=None)


@kafka_message(api_key=PRODUCE_KEY, valid="3-13", flexible="9+", supported=(3, 13))
class ProduceResponse(Response):
    """Produce response, versions 3-13 (never sent for ``acks=0``)."""

    responses: tuple[TopicProduceResponse, ...] = kfield(Array(TopicProduceResponse), "0+")
    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    node_endpoints: tuple[NodeEndpoint, ...] = kfield(Array(NodeEndpoint), "10+", tag=0)


ProduceRequest.response_type = ProduceResponse
