"""Decode log segments written by Kafka's own Java producer (tests/records/data, made by
make_fixtures.py) and compare with the records handed to the producer."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from spark_kafka_py.records import decode_records
from spark_kafka_py.records.compression import XERIAL_MAGIC

DATA = Path(__file__).resolve().parent / "data"
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
#: AbortedTxn entry of a ``.txnindex`` file: version int16, producerId int64, firstOffset
#: int64, lastOffset int64, lastStableOffset int64 (Kafka's ``storage/.../AbortedTxn``).
TXN_ENTRY = struct.Struct(">hqqqq")


def load(case: str) -> tuple[bytes, dict]:
    return (DATA / f"{case}.log").read_bytes(), json.loads((DATA / f"{case}.json").read_text())


def unb64(x: str | None) -> bytes | None:
    return None if x is None else base64.b64decode(x)


def expected_value(r: dict) -> bytes | None:
    if "value_repeat" in r:
        pattern, times = r["value_repeat"]
        return base64.b64decode(pattern) * times
    return unb64(r["value"])


def expected_headers(r: dict) -> list[dict] | None:
    return [{"key": k, "value": unb64(v)} for k, v in r["headers"]] or None


def batch_attributes(data: bytes) -> list[tuple[int, int, bytes]]:
    """(attributes, records count, first 8 payload bytes) of each batch in a segment."""
    out, pos = [], 0
    while pos < len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        attrs, count = (
            struct.unpack_from(">h", data, pos + 21)[0],
            struct.unpack_from(">i", data, pos + 57)[0],
        )
        out.append((attrs, count, data[pos + 61 : pos + 69]))
        pos += 12 + length
    return out


@pytest.mark.parametrize("codec", list(CODEC_IDS))
def test_java_producer_segment(codec):
    data, meta = load(f"java-{codec}")
    batches = batch_attributes(data)
    assert len(batches) >= 3
    assert {a & 7 for a, _, _ in batches} == {CODEC_IDS[codec]}
    if codec == "snappy":
        assert all(head == XERIAL_MAGIC for _, _, head in batches)
    recs = meta["records"]
    res = decode_records(
        data,
        topic=meta["topic"],
        partition=0,
        start_offset=0,
        end_offset=10**9,
        include_headers=True,
    )
    assert not res.incomplete_tail
    assert res.next_offset == len(recs)
    out = res.batch.to_pylist()
    assert [r["offset"] for r in out] == list(range(len(recs)))
    assert [r["key"] for r in out] == [unb64(r["key"]) for r in recs]
    assert [r["value"] for r in out] == [expected_value(r) for r in recs]
    assert [r["headers"] for r in out] == [expected_headers(r) for r in recs]
    ts = res.batch.column("timestamp").cast(pa.int64()).to_pylist()
    assert ts == [r["timestamp_ms"] * 1000 for r in recs]
    assert {r["timestampType"] for r in out} == {0}
    assert {r["topic"] for r in out} == {meta["topic"]}


@pytest.mark.parametrize("codec", list(CODEC_IDS))
def test_java_producer_segment_prefixes(codec):
    data, meta = load(f"java-{codec}")
    recs = meta["records"]
    ends, pos = {0}, 0
    while pos < len(data):
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
        ends.add(pos)
    step = max(1, len(data) // 300)
    for cut in sorted({*range(0, len(data), step), *ends, *(e - 1 for e in ends if e)}):
        res = decode_records(data[:cut], topic="t", partition=0, start_offset=0, end_offset=10**9)
        n = res.batch.num_rows
        assert res.incomplete_tail == (cut not in ends)
        assert res.batch.column("value").to_pylist() == [expected_value(r) for r in recs[:n]]
        assert res.next_offset == n


@pytest.mark.parametrize("start", [0, 1, 19, 20, 45, 59])
def test_java_segment_offset_window(start):
    data, _ = load("java-zstd")
    res = decode_records(data, topic="t", partition=0, start_offset=start, end_offset=start + 7)
    assert res.batch.column("offset").to_pylist() == list(range(start, min(start + 7, 60)))
    assert res.next_offset == min(start + 7, 60)


def test_java_log_append_time():
    data, meta = load("java-logappendtime")
    assert all(a & 0x08 for a, _, _ in batch_attributes(data))
    res = decode_records(data, topic="t", partition=0, start_offset=0, end_offset=10**9)
    recs = meta["records"]
    assert res.batch.column("value").to_pylist() == [expected_value(r) for r in recs]
    assert set(res.batch.column("timestampType").to_pylist()) == {1}
    for us in res.batch.column("timestamp").cast(pa.int64()).to_pylist():
        assert meta["appended_after_ms"] - 5000 <= us // 1000 <= meta["appended_before_ms"] + 5000


def aborted_from_txnindex() -> list[tuple[int, int]]:
    raw = (DATA / "java-txn.txnindex").read_bytes()
    entries = [TXN_ENTRY.unpack_from(raw, i) for i in range(0, len(raw), TXN_ENTRY.size)]
    return [(pid, first) for _version, pid, first, _last, _lso in entries]


def test_java_transactions_read_committed():
    data, meta = load("java-txn")
    recs = meta["records"]
    aborted = aborted_from_txnindex()
    assert len(aborted) == 2  # two aborted transactions in the producer's script
    res = decode_records(
        data,
        topic="t",
        partition=0,
        start_offset=0,
        end_offset=10**9,
        read_committed=True,
        aborted_transactions=aborted,
        include_headers=True,
    )
    committed = [r for r in recs if r["committed"]]
    assert res.batch.column("value").to_pylist() == [expected_value(r) for r in committed]
    assert res.batch.column("headers").to_pylist() == [expected_headers(r) for r in committed]
    # offsets skip the aborted records and the 5 transaction markers
    offsets = res.batch.column("offset").to_pylist()
    assert offsets == sorted(offsets) and offsets[-1] >= len(recs) + 3
    assert res.next_offset == len(recs) + 5


def test_java_transactions_read_uncommitted():
    data, meta = load("java-txn")
    recs = meta["records"]
    res = decode_records(
        data,
        topic="t",
        partition=0,
        start_offset=0,
        end_offset=10**9,
        aborted_transactions=aborted_from_txnindex(),
    )
    assert res.batch.column("value").to_pylist() == [expected_value(r) for r in recs]
