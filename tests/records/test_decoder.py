"""Structure tests of the record-batch decoder, on batches built by tests/records/encoder.py."""

from __future__ import annotations

import itertools
import os
import struct
import subprocess
import sys

import pyarrow as pa
import pytest

from spark_kafka_py.errors import CorruptRecordError, KafkaProtocolError
from spark_kafka_py.records import DecodedRecords, decode_records, spark_kafka_schema
from spark_kafka_py.records._pure import decode_records_pure

from .encoder import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    Rec,
    batch_v2,
    control_batch,
)

TOPIC = "events"
PART = 3
BASE_TS = 1_700_000_000_000
CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]


def decode(data: bytes, start: int = 0, end: int = 1 << 62, **kw) -> DecodedRecords:
    return decode_records(
        data, topic=TOPIC, partition=PART, start_offset=start, end_offset=end, **kw
    )


def rows(result: DecodedRecords) -> list[dict]:
    return result.batch.to_pylist()


def sample_records() -> list[Rec]:
    return [
        Rec(b"k0", b"v0", 0, 0, [("h", b"1")]),
        Rec(None, b"v1", 1, 5, []),
        Rec(b"k2", None, 2, -3, [("h", None), ("\u00e9t\u00e9", b"")]),
        Rec(b"", b"", 3, 1000, []),
        Rec(b"k4" * 100, b"v4" * 1000, 4, 7, [("a", b"x" * 300)] * 3),
    ]


# ---- schema ------------------------------------------------------------------------------


def test_schema_matches_spark_kafka_source():
    s = spark_kafka_schema(False)
    assert s.names == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    assert [f.type for f in s] == [
        pa.binary(),
        pa.binary(),
        pa.string(),
        pa.int32(),
        pa.int64(),
        pa.timestamp("us", tz="UTC"),
        pa.int32(),
    ]
    assert all(f.nullable for f in s)
    h = spark_kafka_schema(True)
    assert h.names[-1] == "headers"
    headers = h.field("headers")
    assert headers.nullable
    assert headers.type.value_field.name == "element"
    assert headers.type.value_type == pa.struct([("key", pa.string()), ("value", pa.binary())])


# ---- round trips over every attribute combination -----------------------------------------


@pytest.mark.parametrize(
    ("codec", "log_append", "transactional", "include_headers"),
    list(itertools.product(CODECS, [False, True], [False, True], [False, True])),
)
def test_attribute_combinations(codec, log_append, transactional, include_headers):
    recs = sample_records()
    data = batch_v2(
        recs,
        base_offset=100,
        codec=codec,
        log_append_time=log_append,
        transactional=transactional,
        producer_id=9 if transactional else -1,
        base_timestamp=BASE_TS,
        max_timestamp=BASE_TS + 999_999,
    )
    for read_committed in (False, True):
        res = decode(data, include_headers=include_headers, read_committed=read_committed)
        assert res.next_offset == 105
        assert not res.incomplete_tail
        assert res.batch.schema == spark_kafka_schema(include_headers)
        out = rows(res)
        assert [r["key"] for r in out] == [r.key for r in recs]
        assert [r["value"] for r in out] == [r.value for r in recs]
        assert [r["offset"] for r in out] == [100 + r.offset_delta for r in recs]
        assert {r["topic"] for r in out} == {TOPIC}
        assert {r["partition"] for r in out} == {PART}
        ts_col = res.batch.column("timestamp").cast(pa.int64()).to_pylist()
        if log_append:
            assert ts_col == [(BASE_TS + 999_999) * 1000] * len(recs)
            assert {r["timestampType"] for r in out} == {1}
        else:
            assert ts_col == [(BASE_TS + r.timestamp_delta) * 1000 for r in recs]
            assert {r["timestampType"] for r in out} == {0}
        if include_headers:
            expected = [
                [{"key": k, "value": v} for k, v in r.headers] if r.headers else None for r in recs
            ]
            assert [r["headers"] for r in out] == expected


def test_raw_snappy_block_is_accepted():
    recs = sample_records()
    data = batch_v2(recs, codec=SNAPPY, xerial=False)
    assert [r["value"] for r in rows(decode(data))] == [r.value for r in recs]


def test_memoryview_input_and_multiple_batches():
    data = b"".join(
        batch_v2([Rec(b"k", str(i).encode(), d) for d in range(3)], base_offset=i * 3, codec=c)
        for i, c in enumerate(CODECS)
    )
    res = decode(memoryview(data))
    assert [r["offset"] for r in rows(res)] == list(range(15))
    assert res.next_offset == 15


def test_empty_input():
    res = decode(b"", start=42)
    assert res.batch.num_rows == 0
    assert res.next_offset == 42
    assert not res.incomplete_tail


def test_result_is_frozen():
    res = decode(b"")
    with pytest.raises(AttributeError):
        res.next_offset = 3  # type: ignore[misc]  # frozen: under test


# ---- control batches, compaction, offsets filters -----------------------------------------


def test_control_batch_is_skipped_but_advances_next_offset():
    data = batch_v2([Rec(b"a", b"1", 0)], base_offset=0, producer_id=5, transactional=True)
    data += control_batch(1, 5, commit=True)
    for rc in (False, True):
        res = decode(data, read_committed=rc)
        assert [r["offset"] for r in rows(res)] == [0]
        assert res.next_offset == 2
    only_control = decode(control_batch(10, 5, commit=False), start=10)
    assert only_control.batch.num_rows == 0
    assert only_control.next_offset == 11


def test_compacted_gaps_and_empty_batch():
    # offsets 10, 13, 17 kept; lastOffsetDelta 9 (records 18, 19 compacted away)
    data = batch_v2(
        [Rec(b"a", b"1", 0), Rec(b"b", b"2", 3), Rec(b"c", b"3", 7)],
        base_offset=10,
        last_offset_delta=9,
    )
    # a batch whose records were all removed by compaction keeps its offsets span
    data += batch_v2([], base_offset=20, last_offset_delta=4)
    res = decode(data, start=10)
    assert [r["offset"] for r in rows(res)] == [10, 13, 17]
    assert res.next_offset == 25


def test_start_offset_inside_batch():
    data = batch_v2([Rec(b"k", b"v", d) for d in range(10)], base_offset=50, codec=LZ4)
    res = decode(data, start=55)
    assert [r["offset"] for r in rows(res)] == [55, 56, 57, 58, 59]
    assert res.next_offset == 60


def test_batch_entirely_before_start_offset():
    data = batch_v2([Rec(b"k", b"v", d) for d in range(3)], base_offset=0)
    data += batch_v2([Rec(b"k", b"v", d) for d in range(3)], base_offset=3)
    res = decode(data, start=4)
    assert [r["offset"] for r in rows(res)] == [4, 5]
    assert res.next_offset == 6
    # a batch wholly before start never moves next_offset below start
    res = decode(data[: len(data) // 2], start=4)
    assert res.next_offset == 4


def test_end_offset_stops_decoding():
    b1 = batch_v2([Rec(b"k", b"v", d) for d in range(5)], base_offset=0)
    b2 = batch_v2([Rec(b"k", b"v", d) for d in range(5)], base_offset=5)
    res = decode(b1 + b2, end=3)
    assert [r["offset"] for r in rows(res)] == [0, 1, 2]
    assert res.next_offset == 3
    res = decode(b1 + b2, end=5)
    assert [r["offset"] for r in rows(res)] == [0, 1, 2, 3, 4]
    assert res.next_offset == 5
    # even a truncated batch after end is irrelevant
    res = decode(b1 + b2[:30], end=5)
    assert res.next_offset == 5
    # a batch that starts at/after end while next_offset < end (a gap): nothing in between
    b3 = batch_v2([Rec(b"k", b"v", 0)], base_offset=9)
    res = decode(b1 + b3, start=0, end=8)
    assert res.next_offset == 8
    assert res.batch.num_rows == 5


# ---- transactions ---------------------------------------------------------------------------


def txn_log() -> tuple[bytes, list[tuple[int, int]]]:
    """pid 1 aborted (offsets 0, 2), pid 2 committed (1, 3), markers at 4 (abort 1), 5
    (commit 2); pid 1 again (6), committed at 7; a non-transactional record at 8."""
    parts = [
        batch_v2([Rec(b"p1", b"a0", 0)], base_offset=0, transactional=True, producer_id=1),
        batch_v2([Rec(b"p2", b"c1", 0)], base_offset=1, transactional=True, producer_id=2),
        batch_v2([Rec(b"p1", b"a2", 0)], base_offset=2, transactional=True, producer_id=1),
        batch_v2([Rec(b"p2", b"c3", 0)], base_offset=3, transactional=True, producer_id=2),
        control_batch(4, 1, commit=False),
        control_batch(5, 2, commit=True),
        batch_v2([Rec(b"p1", b"c6", 0)], base_offset=6, transactional=True, producer_id=1),
        control_batch(7, 1, commit=True),
        batch_v2([Rec(None, b"n8", 0)], base_offset=8),
    ]
    return b"".join(parts), [(1, 0)]


def test_read_committed_skips_aborted_transactions():
    data, aborted = txn_log()
    res = decode(data, read_committed=True, aborted_transactions=aborted)
    assert [r["value"] for r in rows(res)] == [b"c1", b"c3", b"c6", b"n8"]
    assert res.next_offset == 9


def test_read_uncommitted_returns_everything_but_markers():
    data, aborted = txn_log()
    res = decode(data, read_committed=False, aborted_transactions=aborted)
    assert [r["value"] for r in rows(res)] == [b"a0", b"c1", b"a2", b"c3", b"c6", b"n8"]


def test_aborted_list_order_does_not_matter_and_later_abort_applies():
    # pid 1's second transaction (offset 6) aborted too (its marker at 7 is an ABORT),
    # and the aborted list is given out of order
    log, _ = txn_log()
    data = log.replace(control_batch(7, 1, commit=True), control_batch(7, 1, commit=False))
    assert data != log
    res = decode(data, read_committed=True, aborted_transactions=[(1, 6), (1, 0)])
    assert [r["value"] for r in rows(res)] == [b"c1", b"c3", b"n8"]


def test_aborted_transaction_starting_inside_batch_uses_last_offset():
    # the aborted txn's first offset falls inside the batch span: Java compares with lastOffset
    data = batch_v2(
        [Rec(b"k", b"x", 0), Rec(b"k", b"y", 1)],
        base_offset=10,
        transactional=True,
        producer_id=4,
    )
    res = decode(data, read_committed=True, aborted_transactions=[(4, 11)])
    assert res.batch.num_rows == 0
    assert res.next_offset == 12


def test_non_transactional_batch_of_aborted_producer_is_kept():
    data = batch_v2([Rec(b"k", b"idempotent", 0)], base_offset=0, producer_id=3)
    res = decode(data, read_committed=True, aborted_transactions=[(3, 0)])
    assert res.batch.num_rows == 1


# ---- truncation, garbage, corruption --------------------------------------------------------


def multi_batch_log() -> tuple[bytes, list[int]]:
    batches = [
        batch_v2(sample_records(), base_offset=0, codec=NONE),
        batch_v2(sample_records(), base_offset=5, codec=GZIP),
        control_batch(10, 1, commit=True),
        batch_v2(sample_records(), base_offset=11, codec=ZSTD, transactional=True, producer_id=1),
    ]
    ends = list(itertools.accumulate(len(b) for b in batches))
    return b"".join(batches), ends


def test_every_prefix_decodes_complete_batches_only():
    data, ends = multi_batch_log()
    next_offsets = [5, 10, 11, 16]
    for cut in range(len(data) + 1):
        res = decode(data[:cut], include_headers=True, read_committed=True)
        complete = sum(1 for e in ends if e <= cut)
        assert res.incomplete_tail == (cut not in [0, *ends])
        assert res.next_offset == ([0, *next_offsets])[complete]
        expected_rows = sum(5 for i in range(complete) if i != 2)
        assert res.batch.num_rows == expected_rows


@pytest.mark.parametrize(
    "garbage", [b"\x00", b"\xff" * 11, b"\x00" * 12, b"\x00" * 17, b"junk" * 20]
)
def test_trailing_garbage(garbage):
    data, _ = multi_batch_log()
    try:
        res = decode(data + garbage)
    except KafkaProtocolError:
        return
    assert res.incomplete_tail
    assert res.next_offset == 16


def test_corrupt_crc_names_topic_partition_offset():
    data = batch_v2(sample_records(), base_offset=77, corrupt_crc=True)
    with pytest.raises(CorruptRecordError) as info:
        decode(data)
    err = info.value
    assert (err.topic, err.partition, err.offset) == (TOPIC, PART, 77)
    assert "CRC-32C" in str(err)
    assert "events-3" in str(err) and "77" in str(err)


def test_flipped_payload_byte_is_a_crc_error():
    data = bytearray(batch_v2(sample_records(), base_offset=1))
    data[70] ^= 0x40
    with pytest.raises(CorruptRecordError):
        decode(bytes(data))


@pytest.mark.parametrize("length", [-1, 0, 13, 20, 48])
def test_bad_batch_length_is_a_protocol_error(length):
    data = bytearray(batch_v2(sample_records()))
    struct.pack_into(">i", data, 8, length)
    with pytest.raises(KafkaProtocolError):
        decode(bytes(data))


def test_absurd_batch_length_is_a_protocol_error():
    data = bytearray(batch_v2(sample_records()))
    struct.pack_into(">i", data, 8, 0x7FFFFFF0)
    with pytest.raises(KafkaProtocolError, match="max_batch_bytes"):
        decode(bytes(data[:100]))


def test_unknown_magic_is_named():
    data = bytearray(batch_v2(sample_records()))
    data[16] = 7
    with pytest.raises(KafkaProtocolError, match="magic 7"):
        decode(bytes(data))


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_decompression_is_bounded(codec):
    big = Rec(b"k", b"\x00" * 2_000_000, 0)
    data = batch_v2([big], codec=codec)
    assert len(data) < 200_000
    # max_decoded_bytes=None: only the per-batch bound (the default ratio bound is below it)
    with pytest.raises(KafkaProtocolError, match="max_batch_bytes"):
        decode(data, max_batch_bytes=1_000_000, max_decoded_bytes=None)
    assert decode(data, max_batch_bytes=3_000_000, max_decoded_bytes=None).batch.num_rows == 1


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_garbage_compressed_payload_is_corrupt_record(codec):
    recs = sample_records()
    good = batch_v2(recs, codec=codec)
    # rebuild the batch with a damaged payload and a valid CRC
    import crc32c

    body = bytearray(good[21:])
    body[45] ^= 0xFF
    body[-1] ^= 0xFF
    crc = crc32c.crc32c(bytes(body))
    data = good[:17] + struct.pack(">I", crc) + bytes(body)
    with pytest.raises(KafkaProtocolError):
        decode(data)


def test_record_count_mismatch_is_corrupt():
    data = batch_v2(sample_records(), count=6)
    with pytest.raises(CorruptRecordError):
        decode(data)
    data = batch_v2(sample_records(), count=4)
    with pytest.raises(CorruptRecordError, match="left after"):
        decode(data)
    data = batch_v2(sample_records(), count=-1)
    with pytest.raises(CorruptRecordError):
        decode(data)


def test_timestamp_out_of_spark_range():
    data = batch_v2([Rec(b"k", b"v", 0, timestamp_delta=0)], base_timestamp=(1 << 62))
    with pytest.raises(KafkaProtocolError, match="timestamp"):
        decode(data)


def test_negative_timestamp_and_large_deltas():
    recs = [Rec(b"k", b"v", 0, -5), Rec(b"k", b"v", 100_000, 10**12)]
    data = batch_v2(recs, base_timestamp=0)
    out = decode(data).batch.column("timestamp").cast(pa.int64()).to_pylist()
    assert out == [-5000, 10**15]


# ---- implementation choice ------------------------------------------------------------------


def test_public_decoder_equals_pure_reference():
    data, _ = multi_batch_log()
    kw = dict(topic=TOPIC, partition=PART, start_offset=2, end_offset=14, include_headers=True)
    assert decode_records(data, **kw) == decode_records_pure(data, **kw)


def test_env_var_forces_pure_path():
    code = "from spark_kafka_py.records import decoder; print(decoder.IMPLEMENTATION)"
    env = dict(os.environ, SPARK_KAFKA_PY_PURE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "pure", out.stderr
