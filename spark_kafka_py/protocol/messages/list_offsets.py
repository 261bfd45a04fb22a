"""ListOffsets (API key 2): offsets by timestamp, earliest, latest.

Source: Kafka message specs ``ListOffsetsRequest.json`` / ``ListOffsetsResponse.json``
(valid versions 1-11 since Kafka 4.0 removed v0, flexible 6+). Version notes from the spec:
v2 adds ``isolation_level``; v4 ``current_leader_epoch`` (KIP-320); v7 the max-timestamp
query (KIP-734); v8 the earliest-local query (KIP-405); v9 the latest-tiered query
(KIP-1005); v10 ``timeout_ms`` (KIP-1075). We support versions 1-10.

Special ``timestamp`` values (Kafka's ``ListOffsetsRequest`` constants) are the
``*_TIMESTAMP`` names below; any other value is a time in ms since the epoch, answered with
the earliest offset whose timestamp is >= it (``offset=-1`` if none).
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    INT8,
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
    "CONSUMER_REPLICA_ID",
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "LIST_OFFSETS_KEY",
    "MAX_TIMESTAMP",
    "ListOffsetsPartition",
    "ListOffsetsPartitionResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "ListOffsetsTopic",
    "ListOffsetsTopicResponse",
]

LIST_OFFSETS_KEY = 2
#: ``replica_id`` of a normal consumer (not a follower broker).
CONSUMER_REPLICA_ID = -1
#: The next offset to be written (the high watermark, or the LSO under read_committed).
LATEST_TIMESTAMP = -1
#: The log start offset.
EARLIEST_TIMESTAMP = -2
#: The offset of the record with the largest timestamp (v7+, KIP-734).
MAX_TIMESTAMP = -3
#: The local log start offset with tiered storage (v8+, KIP-405).
EARLIEST_LOCAL_TIMESTAMP = -4
#: The last offset uploaded to tiered storage (v9+, KIP-1005).
LATEST_TIERED_TIMESTAMP = -5


@kafka_struct
class ListOffsetsPartition:
    """One partition to look up at ``timestamp`` (ms, or a ``*_TIMESTAMP`` constant)."""

    partition_index: int = kfield(INT32, "0+")
    current_leader_epoch: int = kfield(INT32, "4+", default=-1, ignorable=True)
    timestamp: int = kfield(INT64, "0+")


@kafka_struct
class ListOffsetsTopic:
    """A topic and the partitions to look up."""

    name: str = kfield(STRING, "0+")
    partitions: tuple[ListOffsetsPartition, ...] = kfield(Array(ListOffsetsPartition), "0+")


@kafka_message(api_key=LIST_OFFSETS_KEY, valid="1-11", flexible="6+", supported=(1, 10))
class ListOffsetsRequest(Request["ListOffsetsResponse"]):
    """ListOffsets request, versions 1-10.

    ``replica_id`` defaults to -1 (a consumer); the spec has no default (0), but any other
    value makes the broker answer as to a follower (log end offset instead of the high
    watermark), so we deviate deliberately. ``isolation_level``: 0 read_uncommitted,
    1 read_committed (v2+). ``timeout_ms`` (v10+) bounds tiered-storage lookups.
    """

    replica_id: int = kfield(INT32, "0+", default=CONSUMER_REPLICA_ID)
    isolation_level: int = kfield(INT8, "2+")
    topics: tuple[ListOffsetsTopic, ...] = kfield(Array(ListOffsetsTopic), "0+")
    timeout_ms: int = kfield(INT32, "10+", ignorable=True)


@kafka_struct
class ListOffsetsPartitionResponse:
    """The answer for one partition: ``offset`` (-1 if none), its ``timestamp``, leader epoch."""

    partition_index: int = kfield(INT32, "0+")
    error_code: int = kfield(INT16, "0+")
    timestamp: int = kfield(INT64, "1+", default=-1)
    offset: int = kfield(INT64, "1+", default=-1)
    leader_epoch: int = kfield(INT32, "4+", default=-1)


@kafka_struct
class ListOffsetsTopicResponse:
    """A topic's partition answers."""

    name: str = kfield(STRING, "0+")
    partitions: tuple[ListOffsetsPartitionResponse, ...] = kfield(
        Array(ListOffsetsPartitionResponse), "0+"
    )


@kafka_message(api_key=LIST_OFFSETS_KEY, valid="1-11", flexible="6+", supported=(1, 10))
class ListOffsetsResponse(Response):
    """ListOffsets response, versions 1-10."""

    throttle_time_ms: int = kfield(INT32, "2+", ignorable=True)
    topics: tuple[ListOffsetsTopicResponse, ...] = kfield(Array(ListOffsetsTopicResponse), "0+")


ListOffsetsRequest.response_type = ListOffsetsResponse
