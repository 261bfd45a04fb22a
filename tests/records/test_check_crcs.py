"""``check_crcs``: the Java consumer's ``check.crcs`` (``kafka.check.crcs``) in both decoders.

With the check on (the default) a batch whose stored CRC differs from the one computed over its
bytes raises :class:`CorruptRecordError` naming the topic, partition and base offset. With it
off, only that comparison is skipped (``CompletedFetch.maybeEnsureValid`` in Kafka's clients):
a batch with a wrong CRC decodes to what its bytes say, and a malformed batch still raises the
same typed error as with a valid CRC. The Java consumer skips the CRC-32 of legacy magic 0/1
messages too (``record.ensureValid()`` only runs with ``check.crcs``), and so do we.

Every case runs on the pure reference and, when built, the accelerated decoder.
"""

from __future__ import annotations

import struct

import crc32c
import pytest

from spark_kafka_py.errors import CorruptRecordError, DecompressionBoundError, KafkaProtocolError
from spark_kafka_py.records import decoder
from spark_kafka_py.records._pure import decode_records_pure
from spark_kafka_py.records.decoder import DecodedStream, decode_records

from .encoder import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    Rec,
    batch_v2,
    compress,
    legacy_message,
    legacy_wrapper,
)

try:
    from spark_kafka_py.records._accel import decode_records_accel
except ImportError:  # the extension is optional; tests/records/test_accel.py covers CI
    IMPLS = [decode_records_pure]
else:
    IMPLS = [decode_records_pure, decode_records_accel]

CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]
#: Where the CRC of a v2 batch is (baseOffset int64, batchLength int32, leaderEpoch int32,
#: magic int8), and where what it covers starts (attributes): ``DefaultRecordBatch``.
CRC_AT = 17
ATTRIBUTES_AT = 21
#: Where the CRC-32 of a legacy message is (offset int64, size int32): ``LegacyRecord``.
LEGACY_CRC_AT = 12

RECS = [
    Rec(b"k0", b"v0", 0, 0, [("h", b"1")]),
    Rec(None, b"v1", 1, 5, []),
    Rec(b"k2", None, 2, -3, [("h", None)]),
]


def decode(impl, data: bytes, **kw):
    kw.setdefault("topic", "t")
    kw.setdefault("partition", 3)
    kw.setdefault("start_offset", 0)
    kw.setdefault("end_offset", 1 << 62)
    return impl(data, **kw)


def wrong_crc(batch: bytes) -> bytes:
    """``batch`` with its stored CRC-32C flipped (the bytes it covers unchanged)."""
    out = bytearray(batch)
    (crc,) = struct.unpack_from(">I", out, CRC_AT)
    struct.pack_into(">I", out, CRC_AT, crc ^ 0xDEADBEEF)
    return bytes(out)


def rows(result) -> list[dict]:
    return result.batch.to_pylist()


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("headers", [False, True])
def test_wrong_crc_decodes_the_same_rows_with_the_check_off(impl, codec, headers):
    good = batch_v2(RECS, base_offset=40, codec=codec) + batch_v2(RECS, base_offset=43)
    bad = wrong_crc(batch_v2(RECS, base_offset=40, codec=codec)) + batch_v2(RECS, base_offset=43)
    expected = decode(impl, good, include_headers=headers)
    assert expected.batch.num_rows == 6
    for check in (True, False):  # a good CRC passes either way
        assert decode(impl, good, include_headers=headers, check_crcs=check) == expected
    off = decode(impl, bad, include_headers=headers, check_crcs=False)
    assert off == expected
    assert rows(off) == rows(expected)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("codec", CODECS)
def test_wrong_crc_raises_naming_topic_partition_offset_with_the_check_on(impl, codec):
    bad = batch_v2(RECS, base_offset=3) + wrong_crc(batch_v2(RECS, base_offset=40, codec=codec))
    for kw in ({}, {"check_crcs": True}):
        with pytest.raises(CorruptRecordError, match="CRC-32C mismatch") as info:
            decode(impl, bad, **kw)
        assert (info.value.topic, info.value.partition, info.value.offset) == ("t", 3, 40)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
def test_well_formed_altered_body_with_a_stale_crc_decodes_what_it_says(impl):
    batch = bytearray(batch_v2([Rec(b"key", b"value", 0)], base_offset=9))
    i = batch.index(b"value")
    batch[i : i + 5] = b"VALUE"  # same length: still well-formed, CRC now stale
    off = decode(impl, bytes(batch), check_crcs=False)
    assert rows(off)[0]["value"] == b"VALUE"
    assert rows(off)[0]["key"] == b"key"
    assert off.next_offset == 10
    with pytest.raises(CorruptRecordError, match="CRC-32C mismatch"):
        decode(impl, bytes(batch))


def _with_crc(batch: bytearray, valid: bool) -> bytes:
    crc = crc32c.crc32c(bytes(batch[ATTRIBUTES_AT:]))
    struct.pack_into(">I", batch, CRC_AT, crc if valid else crc ^ 1)
    return bytes(batch)


def _malformed_bodies() -> list[tuple[str, bytearray, type[Exception], str]]:
    """(name, batch with a body the layout rejects, error class, message part)."""
    one = batch_v2([Rec(b"k", b"v", 0)], base_offset=5)
    long_key = bytearray(one)
    long_key[long_key.index(b"k") - 1] = 0x7E  # key length 63: past its record
    many = bytearray(one)
    struct.pack_into(">i", many, 57, 1000)  # records count 1000 in a few bytes
    trailing = bytearray(one + b"\0\0\0")
    struct.pack_into(">i", trailing, 8, len(trailing) - 12)  # 3 bytes after the one record
    negative = bytearray(one)
    struct.pack_into(">i", negative, 23, -1)  # lastOffsetDelta -1
    bad_zstd = bytearray(batch_v2([Rec(b"k", b"v" * 50, 0)], base_offset=5, codec=ZSTD))
    bad_zstd[61:65] = b"\0\0\0\0"  # the zstd frame's magic number
    return [
        ("key past its record", long_key, CorruptRecordError, "runs past the end"),
        ("record count", many, CorruptRecordError, "claims 1000 records"),
        ("bytes after the records", trailing, CorruptRecordError, "bytes left after"),
        ("negative lastOffsetDelta", negative, CorruptRecordError, "lastOffsetDelta -1"),
        ("corrupt zstd frame", bad_zstd, CorruptRecordError, "malformed zstd-compressed"),
    ]


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    ("name", "batch", "error", "part"),
    _malformed_bodies(),
    ids=[case[0] for case in _malformed_bodies()],
)
def test_malformed_body_with_a_wrong_crc_still_raises_with_the_check_off(
    impl, name, batch, error, part
):
    # The same typed error as with a valid CRC: the check off changes nothing but the CRC.
    with pytest.raises(error, match=part) as valid_crc:
        decode(impl, _with_crc(bytearray(batch), True), check_crcs=False)
    with pytest.raises(error, match=part) as wrong:
        decode(impl, _with_crc(bytearray(batch), False), check_crcs=False)
    assert str(wrong.value) == str(valid_crc.value)
    assert (wrong.value.topic, wrong.value.partition, wrong.value.offset) == ("t", 3, 5)
    with pytest.raises(CorruptRecordError, match="CRC-32C mismatch"):
        decode(impl, _with_crc(bytearray(batch), False))


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
def test_bounds_stay_with_the_check_off(impl):
    big = wrong_crc(batch_v2([Rec(None, b"x" * 5000, 0)], base_offset=7, codec=GZIP))
    with pytest.raises(DecompressionBoundError):
        decode(impl, big, check_crcs=False, max_batch_bytes=len(big) + 100)
    with pytest.raises(KafkaProtocolError, match="above max_batch_bytes"):
        decode(impl, big, check_crcs=False, max_batch_bytes=len(big) - 20)
    short = bytearray(wrong_crc(batch_v2([Rec(b"k", b"v", 0)], base_offset=7)))
    struct.pack_into(">i", short, 8, 40)  # below the v2 header size
    with pytest.raises(CorruptRecordError, match="below the v2 header size"):
        decode(impl, bytes(short), check_crcs=False)
    # a batch cut short is still an incomplete tail, not an error
    cut = decode(impl, wrong_crc(batch_v2(RECS))[:-4], check_crcs=False)
    assert cut.incomplete_tail and cut.batch.num_rows == 0


def _legacy_wrong_crc(message: bytes) -> bytes:
    out = bytearray(message)
    (crc,) = struct.unpack_from(">I", out, LEGACY_CRC_AT)
    struct.pack_into(">I", out, LEGACY_CRC_AT, crc ^ 0x5A5A5A5A)
    return bytes(out)


def _wrapper_with_wrong_inner_crc() -> bytes:
    """A gzip wrapper (magic 1) whose second inner message has a wrong CRC-32."""
    inner = legacy_message(0, b"a", b"1") + _legacy_wrong_crc(legacy_message(1, b"b", b"2"))
    return legacy_message(11, None, compress(GZIP, inner), codec=GZIP)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_crc32_is_skipped_with_the_check_off(impl, magic):
    good = legacy_message(4, b"k", b"v", magic=magic) + legacy_wrapper(
        7, [(b"a", b"1"), (None, b"2")], magic=magic
    )
    bad = _legacy_wrong_crc(legacy_message(4, b"k", b"v", magic=magic)) + _legacy_wrong_crc(
        legacy_wrapper(7, [(b"a", b"1"), (None, b"2")], magic=magic)
    )
    expected = decode(impl, good)
    assert [r["value"] for r in rows(expected)] == [b"v", b"1", b"2"]
    assert decode(impl, bad, check_crcs=False) == expected
    with pytest.raises(CorruptRecordError, match="legacy message CRC-32 mismatch") as info:
        decode(impl, bad)
    assert (info.value.topic, info.value.partition, info.value.offset) == ("t", 3, 4)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda f: f.__name__)
def test_legacy_inner_message_crc_is_skipped_with_the_check_off(impl):
    data = _wrapper_with_wrong_inner_crc()
    assert [r["value"] for r in rows(decode(impl, data, check_crcs=False))] == [b"1", b"2"]
    with pytest.raises(CorruptRecordError, match="legacy message CRC-32 mismatch"):
        decode(impl, data)
    # the layout of a legacy message is still checked: a size below the magic-1 minimum
    short = bytearray(_legacy_wrong_crc(legacy_message(4, b"k", b"v")))
    struct.pack_into(">i", short, 8, 10)
    with pytest.raises(CorruptRecordError):
        decode(impl, bytes(short) + b"\0" * 30, check_crcs=False)


def test_decode_records_and_decoded_stream_pass_the_flag():
    bad = wrong_crc(batch_v2(RECS, base_offset=0)) + wrong_crc(batch_v2(RECS, base_offset=3))
    assert decode_records(bad, topic="t", partition=0, start_offset=0, end_offset=99,
                          check_crcs=False).batch.num_rows == 6  # fmt: skip
    with pytest.raises(CorruptRecordError):
        decode_records(bad, topic="t", partition=0, start_offset=0, end_offset=99)
    for impl in [None, *IMPLS]:
        kw = dict(topic="t", partition=0, start_offset=0, end_offset=99, decoder=impl)
        # max_arrow_bytes=1: one Arrow batch per record batch, so the flag reaches each call
        kw.update(max_decoded_bytes=1 << 20, max_arrow_bytes=1)
        stream = DecodedStream(bad, check_crcs=False, **kw)
        assert [b.num_rows for b in stream] == [3, 3]
        assert stream.next_offset == 6
        stream = DecodedStream(bad, **kw)
        with pytest.raises(CorruptRecordError, match="CRC-32C mismatch"):
            list(stream)
    assert decoder.IMPLEMENTATION in ("pure", "accel")
