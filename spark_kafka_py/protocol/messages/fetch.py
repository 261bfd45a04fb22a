"""Fetch (API key 1): read record batches from partition leaders (or preferred replicas).

Source: Kafka message specs ``FetchRequest.json`` / ``FetchResponse.json`` (valid versions
4-18 since Kafka 4.0, flexible 12+). Version notes from the spec:

* v4 ``isolation_level``, ``last_stable_offset`` and ``aborted_transactions``; v5
  ``log_start_offset``; v7 fetch sessions (KIP-227: ``session_id``/``session_epoch``; we send
  0/-1, i.e. a full fetch with no session); v9 ``current_leader_epoch`` (KIP-320); v10 zstd
  (KIP-110); v11 ``rack_id`` and ``preferred_read_replica`` (KIP-392).
* v12 flexible (KIP-482), ``last_fetched_epoch``, tagged ``diverging_epoch`` and
  ``current_leader`` (KIP-595).
* v13 addresses topics by ``topic_id`` instead of ``topic`` (KIP-516); the broker may answer
  UNKNOWN_TOPIC_ID. Set both fields: the one the version lacks is dropped.
* v14 may return OFFSET_MOVED_TO_TIERED_STORAGE (KIP-405); v15 moves ``replica_id`` into the
  tagged ``replica_state`` (KIP-903); v16 ``node_endpoints`` (KIP-951); v17
  ``replica_directory_id`` (KIP-853); v18 tagged ``high_watermark`` (KIP-1166).

We support versions 4-17. ``records`` is a zero-copy ``memoryview`` of the response bytes
(record batches, decoded by :mod:`spark_kafka_py.records`), or ``None``.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    INT8,
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
    "FETCH_KEY",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "AbortedTransaction",
    "EpochEndOffset",
    "FetchPartition",
    "FetchRequest",
    "FetchResponse",
    "FetchTopic",
    "FetchableTopicResponse",
    "ForgottenTopic",
    "LeaderIdAndEpoch",
    "NodeEndpoint",
    "PartitionData",
    "ReplicaState",
    "SnapshotId",
]

FETCH_KEY = 1
#: ``isolation_level`` values of Fetch v4+ and ListOffsets v2+ (KIP-98; Java's
#: ``IsolationLevel``).
READ_UNCOMMITTED = 0
READ_COMMITTED = 1
#: Default of the request's ``high_watermark`` tagged field (v18+): ``Long.MAX_VALUE``.
_INT64_MAX = 0x7FFFFFFFFFFFFFFF


@kafka_struct
class ReplicaState:
    """Follower identity (v15+, tagged; KIP-903). Consumers leave it at the default."""

    replica_id: int = kfield(INT32, "15+", default=-1)
    replica_epoch: int = kfield(INT64, "15+", default=-1)


@kafka_struct
class FetchPartition:
    """A partition to fetch from ``fetch_offset``, at most ``partition_max_bytes`` bytes."""

    partition: int = kfield(INT32, "0+")
    current_leader_epoch: int = kfield(INT32, "9+", default=-1, ignorable=True)
    fetch_offset: int = kfield(INT64, "0+")
    last_fetched_epoch: int = kfield(INT32, "12+", default=-1)
    log_start_offset: int = kfield(INT64, "5+", default=-1, ignorable=True)
    partition_max_bytes: int = kfield(INT32, "0+")
    replica_directory_id: uuid.UUID = kfield(UUID, "17+", tag=0, default=ZERO_UUID, ignorable=True)
    high_watermark: int = kfield(INT64, "18+", tag=1, default=_INT64_MAX, ignorable=True)


@kafka_struct
class FetchTopic:
    """A topic to fetch: ``topic`` name (v4-12) or ``topic_id`` (v13+)."""

    topic: str = kfield(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[FetchPartition, ...] = kfield(Array(FetchPartition), "0+")


@kafka_struct
class ForgottenTopic:
    """Partitions to remove from an incremental fetch session (v7+). Unused without sessions."""

    topic: str = kfield(STRING, "7-12", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[int, ...] = kfield(Array(INT32), "7+")


@kafka_struct
class EpochEndOffset:
    """Tagged ``diverging_epoch`` (v12+): where the fetcher's log diverges from the leader's."""

    epoch: int = kfield(INT32, "12+", default=-1)
    end_offset: int = kfield(INT64, "12+", default=-1)


@kafka_struct
class LeaderIdAndEpoch:
    """Tagged ``current_leader`` (v12+): the new leader on NOT_LEADER_OR_FOLLOWER/FENCED."""

    leader_id: int = kfield(INT32, "12+", default=-1)
    leader_epoch: int = kfield(INT32, "12+", default=-1)


@kafka_struct
class SnapshotId:
    """Tagged ``snapshot_id`` (v12+, KRaft followers only)."""

    end_offset: int = kfield(INT64, "0+", default=-1)
    epoch: int = kfield(INT32, "0+", default=-1)


@kafka_struct
class AbortedTransaction:
    """An aborted transaction overlapping the fetched range (read_committed, v4+)."""

    producer_id: int = kfield(INT64, "4+")
    first_offset: int = kfield(INT64, "4+")


@kafka_struct
class PartitionData:
    """One fetched partition.

    ``high_watermark``/``last_stable_offset``/``log_start_offset`` are offsets (-1 unknown);
    ``aborted_transactions`` is ``None`` unless read_committed; ``preferred_read_replica``
    (v11+) is a broker id or -1; ``records`` holds raw record batches (may end with a
    partial batch) or ``None``.
    """

    partition_index: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")
    high_watermark: int = kfield(INT64, "0+")
    last_stable_offset: int = kfield(INT64, "4+", default=-1, ignorable=True)
    log_start_offset: int = kfield(INT64, "5+", default=-1, ignorable=True)
    diverging_epoch: EpochEndOffset = kfield(EpochEndOffset, "12+", tag=0)
    current_leader: LeaderIdAndEpoch = kfield(LeaderIdAndEpoch, "12+", tag=1)
    snapshot_id: SnapshotId = kfield(SnapshotId, "12+", tag=2)
    aborted_transactions: tuple[AbortedTransaction, ...] | None = kfield(
        Array(AbortedTransaction), "4+", nullable_versions="4+", ignorable=True
    )
    preferred_read_replica: int = kfield(INT32, "11+", default=-1)
    records: memoryview | bytes | None = kfield(RECORDS, "0+", nullable_versions="0+")


@kafka_struct
class FetchableTopicResponse:
    """A topic's fetched partitions: ``topic`` (v4-12) or ``topic_id`` (v13+)."""

    topic: str = kfield(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = kfield(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[PartitionData, ...] = kfield(Array(PartitionData), "0+")


@kafka_struct
class NodeEndpoint:
    """Endpoint of a broker named in ``current_leader`` (v16+, tagged; KIP-951)."""

    node_id: int = kfield(INT32, "16+")
    host: str = kfield(STRING, "16+")
    port: int = kfield(INT32, "16+")
    rack: str | None = kfield(STRING, "16+", nullable_versions="16+", default=None)


@kafka_message(api_key=FETCH_KEY, valid="4-18", flexible="12+", supported=(4, 17))
class FetchResponse(Response):
    """Fetch response, versions 4-17."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    error_code: int = kfield(INT16, "7+", ignorable=True)
    session_id: int = kfield(INT32, "7+", default=0)
    responses: tuple[FetchableTopicResponse, ...] = kfield(Array(FetchableTopicResponse), "0+")
    node_endpoints: tuple[NodeEndpoint, ...] = kfield(Array(NodeEndpoint), "16+", tag=0)


@kafka_message(api_key=FETCH_KEY, valid="4-18", flexible="12+", supported=(4, 17))
class FetchRequest(Request["FetchResponse"]):
    """Fetch request, versions 4-17.

    Units: ``max_wait_ms`` in ms; ``min_bytes``, ``max_bytes`` (whole response) and
    ``partition_max_bytes`` in bytes (KIP-74: the first batch is returned even if larger).
    ``isolation_level``: :data:`READ_UNCOMMITTED` or :data:`READ_COMMITTED`.
    ``session_id=0, session_epoch=-1`` is a full fetch without a fetch session (KIP-227).
    """

    cluster_id: str | None = kfield(
        STRING, "12+", nullable_versions="12+", default=None, tag=0, ignorable=True
    )
    replica_id: int = kfield(INT32, "0-14", default=-1)
    replica_state: ReplicaState = kfield(ReplicaState, "15+", tag=1)
    max_wait_ms: int = kfield(INT32, "0+")
    min_bytes: int = kfield(INT32, "0+")
    max_bytes: int = kfield(INT32, "3+", default=0x7FFFFFFF, ignorable=True)
    isolation_level: int = kfield(INT8, "4+", default=READ_UNCOMMITTED, ignorable=True)
    session_id: int = kfield(INT32, "7+", default=0, ignorable=True)
    session_epoch: int = kfield(INT32, "7+", default=-1, ignorable=True)
    topics: tuple[FetchTopic, ...] = kfield(Array(FetchTopic), "0+")
    forgotten_topics_data: tuple[ForgottenTopic, ...] = kfield(Array(ForgottenTopic), "7+")
    rack_id: str = kfield(STRING, "11+", default="", ignorable=True)


FetchRequest.response_type = FetchResponse
