"""The accelerated decoder (``records._accel``, Cython) against the pure-Python reference.

Both implementations get the same inputs: Kafka's own Java producer's segments (every codec,
LogAppendTime, transactions), the structure tests' logs cut at every byte, and fuzzed bytes
(noise, noise behind valid batch headers, mutated valid batches). For every input they must
return equal :class:`DecodedRecords` or raise the same error: same class, same message, same
``topic``, ``partition`` and ``offset``.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import crc32c
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import CorruptRecordError, KafkaProtocolError
from spark_kafka_py.records._protocols import DecodedRecords
from spark_kafka_py.records._pure import decode_records_pure

from .accel import accel, decode_records_accel
from .encoder import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    Rec,
    batch_v2,
    control_batch,
    legacy_message,
    zigzag_varint,
)
from .test_properties import records_strategy

DATA = Path(__file__).resolve().parent / "data"
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def both(data: bytes | memoryview, **kw):
    """Decode with both implementations; return the common result or the common error class.

    Errors must agree in class, message and (for ``CorruptRecordError``) topic, partition and
    offset.
    """
    kw.setdefault("topic", "t")
    kw.setdefault("partition", 2)
    kw.setdefault("start_offset", 0)
    kw.setdefault("end_offset", 1 << 62)
    results: list[DecodedRecords | KafkaProtocolError] = []
    for impl in (decode_records_pure, decode_records_accel):
        try:
            results.append(impl(data, **kw))
        except KafkaProtocolError as exc:
            results.append(exc)
    pure, fast = results
    if isinstance(pure, KafkaProtocolError) or isinstance(fast, KafkaProtocolError):
        assert type(pure) is type(fast), (pure, fast)
        assert _error_fields(fast) == _error_fields(pure)
        return type(pure)
    assert fast.batch.schema == pure.batch.schema
    assert fast.batch.equals(pure.batch), (fast.batch.to_pylist()[:3], pure.batch.to_pylist()[:3])
    assert fast == pure
    fast.batch.validate(full=True)
    return fast


def _error_fields(exc: BaseException) -> tuple[object, ...]:
    """What both decoders must agree on: the message and, for a corrupt batch, where it is."""
    return (
        str(exc),
        getattr(exc, "topic", None),
        getattr(exc, "partition", None),
        getattr(exc, "offset", None),
    )


@pytest.mark.parametrize("case", ["none", "gzip", "snappy", "lz4", "zstd", "logappendtime"])
@pytest.mark.parametrize("headers", [False, True])
def test_java_segments_equal(case, headers):
    data = (DATA / f"java-{case}.log").read_bytes()
    res = both(data, include_headers=headers)
    assert res.batch.num_rows > 0
    for start, end in [(0, 3), (2, 7), (5, 10**9), (10**9, 10**9 + 1)]:
        both(data, start_offset=start, end_offset=end, include_headers=headers)


def test_java_transactions_equal():
    data = (DATA / "java-txn.log").read_bytes()
    raw = (DATA / "java-txn.txnindex").read_bytes()
    aborted = [(pid, first) for _v, pid, first, _l, _s in struct.iter_unpack(">hqqqq", raw)]
    for committed in (False, True):
        res = both(data, read_committed=committed, aborted_transactions=aborted)
        assert res.batch.num_rows > 0


def sample_log() -> tuple[bytes, list[int]]:
    recs = [
        Rec(b"k0", b"v0", 0, 0, [("h", b"1")]),
        Rec(None, b"v1", 1, 5, []),
        Rec(b"k2", None, 2, -3, [("h", None), ("\u00e9t\u00e9", b"")]),
        Rec(b"", b"", 3, 1000, []),
        Rec(b"k4" * 100, b"v4" * 1000, 4, 7, [("a", b"x" * 300)] * 3),
    ]
    parts = [
        batch_v2(recs, base_offset=0, codec=NONE),
        batch_v2(recs, base_offset=5, codec=GZIP),
        control_batch(10, 1, commit=False),
        batch_v2(recs, base_offset=11, codec=ZSTD, transactional=True, producer_id=1),
        batch_v2(recs, base_offset=16, codec=LZ4, log_append_time=True, max_timestamp=77),
        batch_v2(recs, base_offset=21, codec=SNAPPY),
    ]
    ends = []
    total = 0
    for p in parts:
        total += len(p)
        ends.append(total)
    return b"".join(parts), ends


@pytest.mark.parametrize("headers", [False, True])
@pytest.mark.parametrize("committed", [False, True])
def test_every_prefix_and_range_equal(headers, committed):
    data, _ = sample_log()
    for cut in range(0, len(data) + 1, 7):
        both(
            data[:cut],
            include_headers=headers,
            read_committed=committed,
            aborted_transactions=[(1, 11)],
        )
    for start in range(0, 27, 2):
        for end in (start, start + 1, start + 4, 27, 10**6):
            both(
                data,
                start_offset=start,
                end_offset=end,
                include_headers=headers,
                read_committed=committed,
                aborted_transactions=[(1, 11)],
            )


def test_memoryview_and_bytearray_inputs():
    data, _ = sample_log()
    a = both(memoryview(data), include_headers=True)
    b = both(bytearray(data), include_headers=True)
    c = both(memoryview(b"\0" * 5 + data)[5:], include_headers=True)
    assert a == b == c


def test_invalid_utf8_header_key_is_replaced_as_the_reference():
    rec = Rec(b"k", b"v", 0, 0, [("ok", b"1")])
    data = bytearray(batch_v2([rec]))
    i = data.index(b"ok")
    data[i] = 0xFF  # not UTF-8
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    res = both(bytes(data), include_headers=True)
    assert res.batch.column("headers").to_pylist() == [[{"key": "\ufffdk", "value": b"1"}]]


def test_legacy_message_sets_fall_back_to_the_reference():
    data = legacy_message(0, b"k", b"v", magic=1) + batch_v2([Rec(b"a", b"b", 0)], base_offset=1)
    res = both(data)
    assert res.batch.column("value").to_pylist() == [b"v", b"b"]


def test_timestamp_overflow_is_raised_after_later_corruption_as_the_reference():
    big = batch_v2([Rec(b"k", b"v", 0)], base_timestamp=1 << 62)
    assert both(big) is KafkaProtocolError
    bad = bytearray(batch_v2([Rec(b"k", b"v", 0)], base_offset=1))
    bad[-1] ^= 0xFF  # CRC mismatch in the second batch wins, as in the reference
    assert both(big + bytes(bad)) is CorruptRecordError


def raw_batch(records: bytes, count: int, base_offset: int = 7) -> bytes:
    """An uncompressed v2 batch around already encoded ``records`` (valid CRC)."""
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, 0, 0, -1, -1, -1, count) + records
    prefix = struct.pack(">qiibI", base_offset, 9 + len(after_crc), 0, 2, crc32c.crc32c(after_crc))
    return prefix + after_crc


def raw_record(*fields: bytes, extra: bytes = b"") -> bytes:
    """``fields`` behind a length varint counting them and ``extra`` (so the length may lie)."""
    body = b"".join(fields) + extra
    return zigzag_varint(len(body)) + body


_Z = zigzag_varint
_LONG_KEY = raw_record(b"\0", _Z(0), _Z(0), _Z(5), b"ab", _Z(-1), _Z(0))
_LONG_VALUE = raw_record(b"\0", _Z(0), _Z(0), _Z(-1), _Z(6), b"abc", _Z(0))
_LONG_HEADER_KEY = raw_record(b"\0", _Z(0), _Z(0), _Z(-1), _Z(-1), _Z(1), _Z(9), b"h", _Z(-1))
_LONG_HEADER_VALUE = raw_record(b"\0", _Z(0), _Z(0), _Z(-1), _Z(-1), _Z(1), _Z(1), b"h", _Z(7))
_LENGTH_TOO_LONG = raw_record(b"\0", _Z(0), _Z(0), _Z(-1), _Z(-1), _Z(0), extra=b"\0")


@pytest.mark.parametrize(
    ("record", "headers", "what"),
    [
        (_LONG_KEY, False, "key length 5 runs past the end of its record"),
        (_LONG_VALUE, False, "value length 6 runs past the end of its record"),
        (_LONG_HEADER_KEY, True, "header key length 9 runs past the end of its record"),
        (_LONG_HEADER_VALUE, True, "header value length 7 runs past the end of its record"),
        (_LENGTH_TOO_LONG, False, "record fields span 6 bytes, its length says 7"),
    ],
)
def test_field_past_its_record_is_the_same_error_in_both(record, headers, what):
    # A second record follows, so the overlong field still ends inside the batch.
    good = raw_record(b"\0", _Z(0), _Z(1), _Z(-1), _Z(1), b"v", _Z(0))
    data = raw_batch(record + good + bytes(16), count=2)
    assert both(data, include_headers=headers) is CorruptRecordError
    with pytest.raises(CorruptRecordError) as raised:
        decode_records_accel(
            data, topic="t", partition=2, start_offset=0, end_offset=99, include_headers=headers
        )
    assert str(raised.value) == f"malformed record in batch: {what} in t-2 at offset 7"
    assert (raised.value.topic, raised.value.partition, raised.value.offset) == ("t", 2, 7)


def test_large_batch_many_rows():
    recs = [Rec(bytes([i % 251]) * 16, bytes([i % 13]) * 100, i % 500, i) for i in range(5000)]
    data = b"".join(batch_v2(recs[i : i + 500], base_offset=i) for i in range(0, 5000, 500))
    res = both(data)
    assert res.batch.num_rows == 5000
    assert res.next_offset == 5000


# ---- fuzz: same result or same error class ---------------------------------------------------


@SETTINGS
@given(st.binary(max_size=400), st.booleans(), st.booleans(), st.booleans())
def test_fuzz_any_bytes(data, headers, committed, check_crcs):
    both(
        data,
        include_headers=headers,
        read_committed=committed,
        aborted_transactions=[(-1, 0), (0, 0)],
        check_crcs=check_crcs,
    )


@st.composite
def noise_behind_header(draw):
    codec = draw(st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5]))
    attrs = codec | draw(st.sampled_from([0, 0x08, 0x10, 0x20, 0x30]))
    count = draw(st.integers(-2, 20))
    payload = draw(st.binary(max_size=300))
    header = struct.pack(
        ">hiqqqhii",
        attrs,
        draw(st.integers(-1, 30)),
        draw(st.integers(-(2**63), 2**63 - 1)),
        0,
        draw(st.integers(-1, 2)),
        0,
        0,
        count,
    )
    body = header + payload
    base = draw(st.sampled_from([0, 5, 2**63 - 3, -(2**63)]))
    return struct.pack(">qiibI", base, 9 + len(body), 0, 2, crc32c.crc32c(body)) + body


@SETTINGS
@given(noise_behind_header(), st.booleans(), st.booleans(), st.integers(-3, 40), st.booleans())
def test_fuzz_noise_records_with_valid_crc(data, headers, committed, start, check_crcs):
    both(
        data,
        include_headers=headers,
        read_committed=committed,
        start_offset=start,
        aborted_transactions=[(0, 0), (1, 0)],
        check_crcs=check_crcs,
    )


@SETTINGS
@given(noise_behind_header(), st.booleans(), st.booleans(), st.integers(-3, 40))
def test_fuzz_noise_records_with_wrong_crc_and_the_check_off(data, headers, committed, start):
    """Noise behind a header whose CRC is wrong: with the check off both decoders still agree
    (on rows or on the typed error), and with it on both raise the CRC mismatch."""
    bad = bytearray(data)
    bad[17] ^= 0x80
    kw = dict(
        include_headers=headers,
        read_committed=committed,
        start_offset=start,
        aborted_transactions=[(0, 0), (1, 0)],
    )
    both(bytes(bad), check_crcs=False, **kw)
    on = both(bytes(bad), **kw)
    if struct.unpack_from(">q", bad)[0] < 1 << 62:  # a batch at or past the end is not read
        assert on is CorruptRecordError


@st.composite
def mutated_batches(draw, fix_crc: bool = True):
    """1-3 batches of random records with up to 4 bytes after the header changed, the CRC
    recomputed (``fix_crc``) or left as it was (then stale when a byte changed)."""
    raw = bytearray()
    for b in range(draw(st.integers(1, 3))):
        one = bytearray(
            batch_v2(
                draw(records_strategy()), base_offset=b * 3000, log_append_time=draw(st.booleans())
            )
        )
        for _ in range(draw(st.integers(0, 4))):
            if len(one) > 61:
                i = draw(st.integers(61, len(one) - 1))
                one[i] = draw(st.integers(0, 255))
        if fix_crc:
            struct.pack_into(">I", one, 17, crc32c.crc32c(bytes(one[21:])))
        raw += one
    return bytes(raw)


@SETTINGS
@given(mutated_batches(), st.booleans(), st.integers(0, 5000), st.integers(0, 9000), st.booleans())
def test_fuzz_mutated_records_with_valid_crc(data, headers, start, span, check_crcs):
    both(
        data,
        include_headers=headers,
        start_offset=start,
        end_offset=start + span,
        check_crcs=check_crcs,
    )


@SETTINGS
@given(mutated_batches(fix_crc=False), st.booleans(), st.integers(0, 5000), st.integers(0, 9000))
def test_fuzz_mutated_records_with_stale_crc(data, headers, start, span):
    """Mutated records behind the CRC they had before: the decoders agree with the check on
    (the mismatch) and off (the rows the mutated bytes say, or the same typed error), and with
    the check off the result is the one of the same bytes with their CRC recomputed."""
    kw = dict(include_headers=headers, start_offset=start, end_offset=start + span)
    on = both(data, **kw)
    off = both(data, check_crcs=False, **kw)
    fixed = bytearray(data)
    pos = 0
    while pos < len(fixed):
        (length,) = struct.unpack_from(">i", fixed, pos + 8)
        end = pos + 12 + length
        struct.pack_into(">I", fixed, pos + 17, crc32c.crc32c(bytes(fixed[pos + 21 : end])))
        pos = end
    assert off == both(bytes(fixed), **kw)
    if on is not CorruptRecordError:
        assert on == off  # every CRC still matched


def test_wrong_crcs_decode_to_the_same_rows_in_both_with_the_check_off():
    data, ends = sample_log()
    bad = bytearray(data)
    for start in [0, *ends[:-1]]:
        bad[start + 17] ^= 0xFF  # every batch's CRC wrong
    for headers in (False, True):
        expected = both(data, include_headers=headers)
        assert both(bytes(bad), include_headers=headers, check_crcs=False) == expected
        assert both(bytes(bad), include_headers=headers) is CorruptRecordError
    with pytest.raises(CorruptRecordError, match="CRC-32C mismatch") as info:
        decode_records_accel(bytes(bad), topic="t", partition=2, start_offset=0, end_offset=99)
    assert (info.value.topic, info.value.partition, info.value.offset) == ("t", 2, 0)


def test_decoder_module_picks_accel_unless_forced_pure():
    code = "from spark_kafka_py.records import decoder; print(decoder.IMPLEMENTATION)"
    env = {k: v for k, v in os.environ.items() if k != "SPARK_KAFKA_PY_PURE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "accel", out.stderr


def test_result_arrays_are_plain_arrow():
    data, _ = sample_log()
    res = decode_records_accel(
        data, topic="t", partition=0, start_offset=0, end_offset=1 << 62, include_headers=True
    )
    table = pa.Table.from_batches([res.batch])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:  # what PySpark does with batches
        writer.write_table(table)
    back = pa.ipc.open_stream(sink.getvalue()).read_all()
    assert back.equals(table)


# ---- the cache of freed blocks: reused buffers never change a live batch ----------------------


def _log(rows: int, seed: int, headers: bool = False) -> bytes:
    """``rows`` records in batches of 250, keys/values/headers made from ``seed``."""
    hdrs = [("h", bytes([seed % 256]) * 5)] if headers else []
    recs = [
        Rec(bytes([(seed + i) % 251]) * 16, bytes([(seed * 7 + i) % 253]) * 100, i % 250, i, hdrs)
        for i in range(rows)
    ]
    return b"".join(batch_v2(recs[i : i + 250], base_offset=i) for i in range(0, rows, 250))


@pytest.mark.parametrize("headers", [False, True])
def test_batches_kept_alive_are_unchanged_by_later_decodes(headers):
    """Later decodes reuse freed blocks only: a batch still referenced keeps its bytes (sizes
    vary so that blocks are taken, grown, and given back in every order)."""
    kept = []
    for seed, rows in enumerate([3000, 250, 5000, 1000, 3000, 4000, 250, 6000]):
        data = _log(rows, seed, headers)
        kw = dict(topic="t", partition=0, start_offset=0, end_offset=1 << 62)
        res = decode_records_accel(data, include_headers=headers, **kw)
        expected = decode_records_pure(data, include_headers=headers, **kw)
        assert res.batch.equals(expected.batch)
        kept.append((res.batch, expected.batch))
        # a batch decoded and dropped at once gives its blocks to the cache for the next one
        decode_records_accel(
            _log(rows // 2 + 250, seed + 100, headers), include_headers=headers, **kw
        )
    for got, expected in kept:
        assert got.equals(expected)
        got.validate(full=True)


def test_freed_blocks_are_reused_and_the_cache_stays_bounded():
    del_batches = [
        decode_records_accel(
            _log(rows, rows), topic="t", partition=0, start_offset=0, end_offset=1 << 62
        ).batch
        for rows in (250, 20_000, 60_000, 150_000, 20_000, 250)
    ]
    del del_batches  # every block goes back: the cache keeps what its bound allows
    blocks, held = accel._block_cache_state()
    assert 0 < blocks <= 32
    assert 0 < held <= 32 * 1024 * 1024
    res = decode_records_accel(
        _log(20_000, 1), topic="t", partition=0, start_offset=0, end_offset=1 << 62
    )
    after, held_after = accel._block_cache_state()
    assert after < blocks and held_after < held  # the new batch's columns came from the cache
    assert res.batch.num_rows == 20_000
    assert res.batch.column("value")[19_999].as_py() == bytes([(7 + 19_999) % 253]) * 100
