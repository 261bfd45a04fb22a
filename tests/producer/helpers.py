"""Helpers of the producer tests: settings, Arrow columns, and reading a partition back raw.

``read_back`` fetches a whole partition with a raw Fetch (our protocol layer) so that the
tests see the batches as stored: producer id, epoch, base sequence and record count of each
(KIP-98 header fields), plus the decoded rows (the project's decoder, headers included).
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.producer import KafkaProducer, ProducerSettings
from spark_kafka_py.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
)
from spark_kafka_py.records import decode_records

HEADERS_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
_V2_HEADER = struct.Struct(">qiibIhiqqqhii")  # baseOffset .. recordCount (61 bytes)


def settings(bootstrap: str, **kw: Any) -> ProducerSettings:
    """Producer settings with short client timeouts; ``kw`` may hold client fields too."""
    client_fields = {
        "request_timeout_ms",
        "retry_backoff_ms",
        "reconnect_backoff_ms",
        "connect_timeout_ms",
        "metadata_max_age_ms",
    }
    base = {"request_timeout_ms": 5000, "retry_backoff_ms": 50, "reconnect_backoff_ms": 50}
    base.update({k: v for k, v in kw.items() if k in client_fields})
    client = ClientConfig.from_bootstrap(bootstrap, **base)
    rest = {k: v for k, v in kw.items() if k not in client_fields}
    rest.setdefault("delivery_timeout_ms", 30_000)
    return ProducerSettings(client, **rest)


def values(n: int, prefix: str = "v", start: int = 0) -> pa.Array:
    return pa.array([f"{prefix}{i}" for i in range(start, start + n)], pa.string())


@dataclass(frozen=True)
class StoredBatch:
    base_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int
    attributes: int


@dataclass(frozen=True)
class Stored:
    batches: list[StoredBatch]
    rows: pa.RecordBatch


def read_back(bootstrap: str, topic: str, partition: int = 0) -> Stored:
    """Every batch and row of ``topic``-``partition`` (from offset 0 to the high watermark)."""
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        tp = TopicPartition(topic, partition)
        end = list_offsets(client, {tp: -1})[tp]
        metadata = client.metadata([topic])
        leader = metadata.leader(topic, partition)
        assert leader is not None
        data = bytearray()
        pos = 0
        batches: list[StoredBatch] = []
        tables: list[pa.RecordBatch] = []
        while pos < end:
            request = FetchRequest(
                replica_id=-1,
                max_wait_ms=100,
                min_bytes=1,
                max_bytes=64 << 20,
                isolation_level=0,
                session_id=0,
                session_epoch=-1,
                topics=[
                    FetchTopic(
                        topic=topic,
                        topic_id=metadata.topics[topic].topic_id,
                        partitions=[
                            FetchPartition(
                                partition=partition,
                                current_leader_epoch=-1,
                                fetch_offset=pos,
                                log_start_offset=-1,
                                partition_max_bytes=64 << 20,
                            )
                        ],
                    )
                ],
                rack_id="",
            )
            for _ in range(20):  # a broker under load may answer a transient error
                response = client.send(leader, request)
                part = response.responses[0].partitions[0]
                if part.error_code == 0:
                    break
                time.sleep(0.25)
            assert part.error_code == 0, (part.error_code, pos, end, part.high_watermark)
            records = bytes(part.records or b"")
            decoded = decode_records(
                records,
                topic=topic,
                partition=partition,
                start_offset=pos,
                end_offset=end,
                include_headers=True,
            )
            tables.append(decoded.batch)
            i = 0
            while i + 61 <= len(records):
                f = _V2_HEADER.unpack_from(records, i)
                length = f[1]
                if i + 12 + length > len(records):
                    break
                if f[0] >= pos:
                    batches.append(StoredBatch(f[0], f[9], f[10], f[11], f[12], f[5]))
                i += 12 + length
            assert decoded.next_offset > pos
            pos = decoded.next_offset
            data += records
        rows = pa.Table.from_batches(tables).combine_chunks().to_batches()
        return Stored(batches, rows[0] if rows else tables[0])


def produce_all(producer: KafkaProducer, topic: str, partition: int, n: int, **kw: Any) -> None:
    """Append ``n`` values ``v0..`` to one partition and flush."""
    producer.append(topic, partition, None, values(n, **kw), None, int(time.time() * 1000))
    producer.flush()
