"""RecordAccumulator without a broker: batch.size splitting, one record per batch at
batch.size=0, sealing, stamping the producer id and sequence (valid CRC), requeue order, and
the buffer.memory bound."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from spark_kafka_py.errors import KafkaTimeoutError
from spark_kafka_py.producer.accumulator import ProducerBatch, RecordAccumulator, stamp_batch
from spark_kafka_py.records import decode_records
from spark_kafka_py.records.compression import CODEC_GZIP, CODEC_NONE
from spark_kafka_py.records.format import V2_HEADER, V2_PREFIX

TS = 1_700_000_000_000
HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


def acc(**kw: int) -> RecordAccumulator:
    base = {"batch_size": 16384, "buffer_memory": 1 << 20, "linger_ms": 5, "codec": CODEC_NONE}
    base.update(kw)
    return RecordAccumulator(level=None, **base)


def vals(n: int, size: int = 10) -> pa.Array:
    return pa.array([f"{i:0{size}d}".encode() for i in range(n)], pa.binary())


def decode(batch: ProducerBatch) -> list[bytes]:
    assert batch.data is not None
    out = decode_records(batch.data, topic="t", partition=0, start_offset=0, end_offset=1 << 40)
    return out.batch.column("value").to_pylist()


def test_rows_split_by_batch_size_and_the_last_batch_stays_open() -> None:
    a = acc(batch_size=500)
    a.append("t", 0, None, vals(100), None, TS, max_block_ms=0)
    queue = a.queues[("t", 0)]
    sealed = [b for b in queue if b.data is not None]
    assert len(sealed) >= 3 and queue[-1].data is None
    for b in sealed:
        assert len(b.data) <= 500  # uncompressed: header + records within batch.size
    a.seal(queue[-1])
    values = [v for b in queue for v in decode(b)]
    assert values == vals(100).to_pylist()
    assert a.used_bytes == sum(len(b.data) for b in queue)


def test_batch_size_0_is_one_record_per_batch() -> None:
    a = acc(batch_size=0)
    a.append("t", 0, None, vals(5), None, TS, max_block_ms=0)
    queue = a.queues[("t", 0)]
    assert [b.record_count for b in queue] == [1] * 5
    assert all(b.data is not None for b in queue)


def test_appends_fill_the_open_batch_with_timestamp_deltas() -> None:
    a = acc()
    a.append("t", 0, None, vals(2), None, TS, max_block_ms=0)
    a.append("t", 0, None, vals(3), None, TS + 7, max_block_ms=0)
    (batch,) = a.queues[("t", 0)]
    a.seal(batch)
    assert batch.record_count == 5
    assert batch.data is not None
    out = decode_records(batch.data, topic="t", partition=0, start_offset=0, end_offset=99)
    ts = out.batch.column("timestamp").cast(pa.int64()).to_pylist()
    assert [t - ts[0] for t in ts] in ([0, 0, 7, 7, 7], [0, 0, 7000, 7000, 7000])


@pytest.mark.parametrize("codec", [CODEC_NONE, CODEC_GZIP])
def test_stamp_batch_sets_producer_fields_and_a_valid_crc(codec: int) -> None:
    a = acc(codec=codec)
    a.append("t", 0, None, vals(10), None, TS, max_block_ms=0)
    (batch,) = a.queues[("t", 0)]
    a.seal(batch)
    assert batch.data is not None
    stamped = stamp_batch(batch.data, 4242, 7, 100)
    fields = V2_HEADER.unpack_from(stamped, V2_PREFIX.size)
    assert fields[4:7] == (4242, 7, 100)
    batch.data = stamped
    assert decode(batch) == vals(10).to_pylist()  # decode verifies the CRC-32C


def test_requeue_keeps_sequence_order() -> None:
    a = acc()
    batches = [ProducerBatch("t", 0, 0.0, TS, TS, base_sequence=s) for s in (10, 0, 5)]
    for b in batches:
        a.requeue(b)
    assert [b.base_sequence for b in a.queues[("t", 0)]] == [0, 5, 10]
    fresh = ProducerBatch("t", 0, 0.0, TS, TS)
    a.queues[("t", 0)].append(fresh)
    retried = ProducerBatch("t", 0, 0.0, TS, TS, base_sequence=7)
    a.requeue(retried)
    assert [b.base_sequence for b in a.queues[("t", 0)]] == [0, 5, 7, 10, -1]


def test_full_buffer_blocks_then_times_out_naming_the_options() -> None:
    a = acc(buffer_memory=1000, batch_size=200)
    a.append("t", 0, None, vals(20), None, TS, max_block_ms=0)
    assert 0 < a.used_bytes < 1000
    a.buffer_memory = a.used_bytes  # full now; nothing drains it (no sender)
    start = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        a.append("t", 1, None, vals(5), None, TS, max_block_ms=300)
    assert 0.25 < time.monotonic() - start < 3
    text = str(info.value)
    assert f"kafka.buffer.memory={a.buffer_memory}" in text and "kafka.max.block.ms=300" in text
    assert "t-1" in text
    assert a.memory_waiters == 0


@pytest.mark.parametrize("codec", [CODEC_NONE, CODEC_GZIP])
def test_split_keeps_records_timestamps_and_sequences(codec: int) -> None:
    a = acc(codec=codec)
    keys = pa.array([f"k{i}" for i in range(7)], pa.string())
    headers = pa.array([[{"key": "h", "value": b"x"}]] * 7, HEADERS)
    a.append("t", 0, keys, vals(3), headers.slice(0, 3), TS, max_block_ms=0)
    a.append("t", 0, keys.slice(3), vals(4), headers.slice(3), TS + 9, max_block_ms=0)
    (batch,) = a.queues[("t", 0)]
    a.seal(batch)
    batch.base_sequence = 40
    first, second = a.split(batch)
    assert (first.record_count, second.record_count) == (3, 4)
    assert (first.base_sequence, second.base_sequence) == (40, 43)
    assert (first.base_timestamp, second.base_timestamp) == (TS, TS + 9)
    rows = []
    for piece in (first, second):
        assert piece.data is not None
        out = decode_records(
            piece.data, topic="t", partition=0, start_offset=0, end_offset=99, include_headers=True
        ).batch
        rows += zip(
            out.column("key").to_pylist(),
            out.column("value").to_pylist(),
            out.column("headers").to_pylist(),
            strict=True,
        )
    assert [r[0] for r in rows] == [f"k{i}".encode() for i in range(7)]
    assert [r[1] for r in rows] == vals(3).to_pylist() + vals(4).to_pylist()
    assert all(r[2] == [{"key": "h", "value": b"x"}] for r in rows)
    with a.cond:
        a.replace(batch, [first, second])
    assert list(a.queues[("t", 0)]) == [first, second]
    assert a.used_bytes == len(first.data) + len(second.data)
