"""Legacy message sets (magic 0 and 1) still found in old log segments."""

from __future__ import annotations

import struct

import lz4.frame
import pyarrow as pa
import pytest

from spark_kafka_py.errors import CorruptRecordError, KafkaProtocolError
from spark_kafka_py.records import decode_records
from spark_kafka_py.records.compression import _fix_legacy_lz4_header, _xxh32_short

from .encoder import GZIP, LZ4, SNAPPY, Rec, batch_v2, legacy_message, legacy_wrapper


def decode(data, start=0, end=1 << 62, **kw):
    return decode_records(data, topic="old", partition=0, start_offset=start, end_offset=end, **kw)


def test_plain_v0_and_v1_messages():
    data = (
        legacy_message(0, b"k0", b"v0", magic=0)
        + legacy_message(1, None, b"v1", magic=1, timestamp=1234)
        + legacy_message(2, b"k2", None, magic=1, timestamp=99, log_append_time=True)
    )
    res = decode(data, include_headers=True)
    out = res.batch.to_pylist()
    assert [r["key"] for r in out] == [b"k0", None, b"k2"]
    assert [r["value"] for r in out] == [b"v0", b"v1", None]
    assert [r["offset"] for r in out] == [0, 1, 2]
    assert [r["timestampType"] for r in out] == [-1, 0, 1]
    assert res.batch.column("timestamp").cast(pa.int64()).to_pylist() == [-1000, 1234000, 99000]
    assert [r["headers"] for r in out] == [None, None, None]
    assert res.next_offset == 3


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
@pytest.mark.parametrize("magic", [0, 1])
def test_compressed_wrappers(codec, magic):
    inner = [(b"a", b"1"), (None, b"2"), (b"c", None)]
    data = legacy_wrapper(12, inner, magic=magic, codec=codec)
    data += legacy_message(13, b"d", b"4", magic=magic)
    res = decode(data, start=11)
    out = res.batch.to_pylist()
    assert [r["offset"] for r in out] == [11, 12, 13]
    assert [r["value"] for r in out] == [b"2", None, b"4"]
    assert res.next_offset == 14


def test_v1_log_append_time_wrapper_gives_its_timestamp():
    data = legacy_wrapper(
        2, [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")], log_append_time=True, timestamp=5000
    )
    res = decode(data)
    assert res.batch.column("timestamp").cast(pa.int64()).to_pylist() == [6_000_000] * 3
    assert res.batch.column("timestampType").to_pylist() == [1, 1, 1]


def test_mixed_legacy_and_v2():
    data = legacy_wrapper(1, [(b"a", b"1"), (b"b", b"2")]) + batch_v2(
        [Rec(b"c", b"3", 0)], base_offset=2
    )
    res = decode(data)
    assert [r["offset"] for r in res.batch.to_pylist()] == [0, 1, 2]
    assert res.batch.column("timestampType").to_pylist() == [0, 0, 0]


def test_legacy_crc_mismatch():
    data = bytearray(legacy_message(5, b"k", b"v"))
    data[-1] ^= 1
    with pytest.raises(CorruptRecordError, match="CRC-32") as info:
        decode(bytes(data))
    assert info.value.offset == 5


def test_legacy_truncated_prefixes():
    data = legacy_message(0, b"k", b"v", magic=0) + legacy_wrapper(3, [(b"a", b"b")] * 3)
    first = len(legacy_message(0, b"k", b"v", magic=0))
    for cut in range(len(data) + 1):
        res = decode(data[:cut])
        assert res.incomplete_tail == (cut not in (0, first, len(data)))
        assert res.batch.num_rows == (0 if cut < first else 1 if cut < len(data) else 4)


def test_v1_message_shorter_than_its_header_is_corrupt():
    body = struct.pack(">bb", 1, 0) + b"\x00" * 12  # magic 1 but no room for the timestamp
    import zlib

    msg = struct.pack(">I", zlib.crc32(body)) + body
    data = struct.pack(">qi", 0, len(msg)) + msg
    with pytest.raises(KafkaProtocolError):
        decode(data)


def test_xxh32_matches_lz4_frame_header_checksum():
    frame = lz4.frame.compress(b"hello" * 50, content_checksum=True, store_size=True)
    flg = frame[4]
    desc_len = 2 + (8 if flg & 0x08 else 0)
    assert frame[4 + desc_len] == (_xxh32_short(frame[4 : 4 + desc_len]) >> 8) & 0xFF


def test_magic0_lz4_with_kafka3160_header_checksum():
    inner = [(b"a", b"1"), (b"b", b"2")]
    good = legacy_wrapper(1, inner, magic=0, codec=LZ4)
    # Re-encode with the pre-KIP-57 HC byte (computed over the magic too).
    inner_set = b"".join(legacy_message(i, k, v, magic=0) for i, (k, v) in enumerate(inner))
    frame = bytearray(lz4.frame.compress(inner_set))
    desc_len = 2 + (8 if frame[4] & 0x08 else 0)
    frame[4 + desc_len] = (_xxh32_short(bytes(frame[: 4 + desc_len])) >> 8) & 0xFF
    assert _fix_legacy_lz4_header(bytes(frame)) == lz4.frame.compress(inner_set)
    bad = legacy_message(1, None, bytes(frame), magic=0, codec=LZ4)
    for data in (good, bad):
        assert [r["value"] for r in decode(data).batch.to_pylist()] == [b"1", b"2"]


def test_nested_compression_is_corrupt():
    inner_wrapper = legacy_wrapper(0, [(b"a", b"1")], codec=GZIP)
    import gzip

    data = legacy_message(0, None, gzip.compress(inner_wrapper), codec=GZIP)
    with pytest.raises(CorruptRecordError, match="contains a compressed"):
        decode(data)


def test_compressed_wrapper_with_null_value_is_corrupt():
    with pytest.raises(CorruptRecordError, match="null value"):
        decode(legacy_message(0, None, None, codec=GZIP))
