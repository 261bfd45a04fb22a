"""Decoding bounds (issue 11): per record batch, per Fetch response, per Arrow batch.

A response of many tiny compressed batches, each one record of 1 MiB of zeros, is what a
broken or hostile broker can send to make a small Fetch expand without limit. Both decoders
(the pure reference and the Cython kernel) must stop at the response's bound with a
:class:`~spark_kafka_py.errors.DecompressionBoundError` naming the topic-partition, the offset
of the batch past the bound and the bound, and, under the bound, yield Arrow batches of about
``max_arrow_bytes`` each, the same batches from both, whose rows are those of one unbounded
decode.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import CorruptRecordError, DecompressionBoundError, KafkaProtocolError
from spark_kafka_py.records import DecodedStream, decode_records
from spark_kafka_py.records._pure import decode_records_pure
from spark_kafka_py.records.arrow import FIXED_ROW_BYTES, fixed_row_bytes
from spark_kafka_py.records.bounds import DecodeBudget
from spark_kafka_py.records.transactions import AbortedTransactions

from .accel import accel
from .encoder import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    Rec,
    batch_v2,
    control_batch,
    encode_record,
    legacy_message,
    legacy_wrapper,
)
from .test_properties import records_strategy

DECODERS = {"pure": decode_records_pure, "accel": accel.decode_records_accel}
ZEROS = 1 << 20
BATCH_DECODED = len(encode_record(Rec(None, bytes(ZEROS), 0)))
ROW = fixed_row_bytes("t", False)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def bomb(codec: int, count: int) -> bytes:
    """``count`` batches at offsets 0..count-1, each one record of 1 MiB of zeros (the base
    offset, outside the CRC, rewritten in copies of one compressed batch)."""
    one = batch_v2([Rec(None, bytes(ZEROS), 0)], codec=codec)
    return b"".join(struct.pack(">q", i) + one[8:] for i in range(count))


def stream(decoder: Callable[..., object], data: bytes, **kw: Any) -> DecodedStream:
    kw.setdefault("topic", "t")
    kw.setdefault("partition", 3)
    kw.setdefault("start_offset", 0)
    kw.setdefault("end_offset", 1 << 62)
    kw.setdefault("max_decoded_bytes", 1 << 40)
    kw.setdefault("max_arrow_bytes", 1 << 40)
    return DecodedStream(data, decoder=decoder, **kw)


def run(decoder: Callable[..., object], data: bytes, **kw: object):
    """``(batches, next_offset, incomplete_tail, budget used)`` or the error raised."""
    s = stream(decoder, data, **kw)
    batches = []
    try:
        for batch in s:
            batches.append(batch)
    except KafkaProtocolError as exc:
        return exc, batches
    return batches, s.next_offset, s.incomplete_tail, s.budget.used


def run_both(data: bytes, **kw: object):
    """:func:`run` with both decoders: equal batches and state, or the same error (class,
    message, topic, partition, offset) after the same batches."""
    pure, fast = (run(d, data, **kw) for d in DECODERS.values())
    if isinstance(pure[0], BaseException) or isinstance(fast[0], BaseException):
        assert type(pure[0]) is type(fast[0]), (pure[0], fast[0])
        for attr in ("topic", "partition", "offset", "bound"):
            assert getattr(pure[0], attr, None) == getattr(fast[0], attr, None), attr
        assert str(pure[0]) == str(fast[0])
        assert [b.to_pylist() for b in pure[1]] == [b.to_pylist() for b in fast[1]]
        return pure
    assert len(pure[0]) == len(fast[0])
    for a, b in zip(pure[0], fast[0], strict=True):
        assert a.equals(b)
        b.validate(full=True)
    assert pure[1:] == fast[1:]
    return fast


# ---- per Fetch response --------------------------------------------------------------------


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD], ids=["gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("name", sorted(DECODERS))
def test_bomb_past_the_response_bound_names_partition_offset_and_bound(codec, name):
    data = bomb(codec, 40)
    bound = 10 * BATCH_DECODED + BATCH_DECODED // 2  # 10.5 batches
    s = stream(
        DECODERS[name],
        data,
        max_decoded_bytes=bound,
        max_arrow_bytes=1 << 20,
        bound_hint="maxDecompressionRatio=7 x 42 bytes fetched",
    )
    rows = 0
    with pytest.raises(DecompressionBoundError) as info:
        for batch in s:
            rows += batch.num_rows
    exc = info.value
    assert (exc.topic, exc.partition, exc.offset, exc.bound) == ("t", 3, 10, bound)
    assert isinstance(exc, CorruptRecordError)
    assert str(exc).endswith("(maxDecompressionRatio=7 x 42 bytes fetched) in t-3 at offset 10")
    assert f"of {bound} bytes" in str(exc)
    assert rows == 10  # every batch within the bound was yielded, in batches of about 1 MiB
    assert s.budget.used == 10 * BATCH_DECODED


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD], ids=["gzip", "snappy", "lz4", "zstd"])
def test_bomb_errors_are_equal_in_both_decoders(codec):
    run_both(bomb(codec, 12), max_decoded_bytes=5 * BATCH_DECODED + 3, max_arrow_bytes=1)
    # through decode_records too: one batch, same bound
    for decoder in DECODERS.values():
        with pytest.raises(DecompressionBoundError, match=r"at offset 5$"):
            decoder(
                bomb(codec, 12),
                topic="t",
                partition=0,
                start_offset=0,
                end_offset=100,
                budget=DecodeBudget(5 * BATCH_DECODED + 3),
            )
    with pytest.raises(DecompressionBoundError, match="max_decoded_bytes"):
        decode_records(
            bomb(codec, 12),
            topic="t",
            partition=0,
            start_offset=0,
            end_offset=100,
            max_decoded_bytes=5 * BATCH_DECODED,
        )


def test_uncompressed_batches_and_control_batches_count_too():
    recs = [Rec(b"k", b"v" * 100, i) for i in range(5)]
    data = batch_v2(recs) + control_batch(5, 9, commit=False) + batch_v2(recs, base_offset=6)
    payload = sum(len(encode_record(r)) for r in recs)
    control = len(encode_record(Rec(struct.pack(">hh", 0, 0), struct.pack(">hi", 0, 7), 0)))
    *_, used = run_both(data, read_committed=True, aborted_transactions=[(9, 0)])
    assert used == 2 * payload + control
    # one byte short of the whole: the second data batch fails
    exc, batches = run_both(
        data,
        read_committed=True,
        aborted_transactions=[(9, 0)],
        max_decoded_bytes=2 * payload + control - 1,
    )
    assert isinstance(exc, DecompressionBoundError) and exc.offset == 6
    assert sum(b.num_rows for b in batches) == 0  # one Arrow batch, never closed


def test_the_per_batch_bound_is_a_decompression_bound_error():
    data = batch_v2([Rec(b"k", bytes(2_000_000), 0)], codec=ZSTD)
    for decoder in DECODERS.values():
        with pytest.raises(DecompressionBoundError, match=r"\(max_batch_bytes\)") as info:
            decoder(
                data,
                topic="t",
                partition=1,
                start_offset=0,
                end_offset=10,
                max_batch_bytes=1_000_000,
                budget=DecodeBudget(10**9),
            )
        assert (info.value.offset, info.value.bound) == (0, 1_000_000)


def test_legacy_wrappers_count_and_fall_back_with_the_budget_unspent():
    inner = [(b"k", bytes(100_000))] * 3
    data = b"".join(
        [
            batch_v2([Rec(b"k", bytes(100_000), 0)], base_offset=0, codec=GZIP),
            legacy_wrapper(3, inner, magic=1, codec=GZIP),
            legacy_message(4, b"k", b"v", magic=1),
        ]
    )
    batches, next_offset, _, used = run_both(data, max_arrow_bytes=1)
    assert [b.num_rows for b in batches] == [1, 3, 1] and next_offset == 5
    assert used > 400_000
    exc, _ = run_both(data, max_decoded_bytes=250_000)
    assert isinstance(exc, DecompressionBoundError) and exc.offset == 3


# ---- per Arrow batch -----------------------------------------------------------------------


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4, ZSTD])
def test_under_the_bound_batches_are_yielded_one_by_one_and_bounded(codec):
    data = bomb(codec, 9)
    limit = 2 * BATCH_DECODED  # closed once 2 record batches are in
    batches, next_offset, incomplete, used = run_both(data, max_arrow_bytes=limit)
    assert [b.num_rows for b in batches] == [2, 2, 2, 2, 1]
    assert (next_offset, incomplete, used) == (9, False, 9 * BATCH_DECODED)
    for b in batches:
        assert b.get_total_buffer_size() <= limit + BATCH_DECODED + 2 * ROW
    whole = decode_records(
        data, topic="t", partition=3, start_offset=0, end_offset=1 << 62, max_decoded_bytes=None
    )
    assert pa.Table.from_batches(batches).equals(pa.Table.from_batches([whole.batch]))


def test_arrow_batch_size_counts_the_fixed_columns_of_each_row():
    # 2,000 empty records per batch: ~9 bytes of records each, 37 + topic bytes of Arrow
    recs = [Rec(None, b"", i) for i in range(2000)]
    one = batch_v2(recs, codec=ZSTD)
    data = b"".join(struct.pack(">q", i * 2000) + one[8:] for i in range(6))
    payload = sum(len(encode_record(r)) for r in recs)
    per_batch = payload + 2000 * ROW
    assert ROW == FIXED_ROW_BYTES + 1
    batches, *_ = run_both(data, max_arrow_bytes=2 * per_batch - 1)
    assert [b.num_rows for b in batches] == [4000, 4000, 4000]
    batches, *_ = run_both(data, max_arrow_bytes=payload * 2)  # rows push it past sooner
    assert [b.num_rows for b in batches] == [2000] * 6


def test_incomplete_tail_and_next_offset_of_a_stream_read_in_pieces():
    recs = [Rec(b"k", b"v" * 50, i) for i in range(4)]
    data = b"".join(batch_v2(recs, base_offset=4 * i, codec=LZ4) for i in range(5))
    for cut in range(0, len(data) + 1, 5):
        for start, end in ((0, 100), (3, 100), (0, 9), (6, 14)):
            whole = decode_records(
                data[:cut], topic="t", partition=3, start_offset=start, end_offset=end
            )
            batches, next_offset, incomplete, _ = run_both(
                data[:cut], start_offset=start, end_offset=end, max_arrow_bytes=1
            )
            assert (next_offset, incomplete) == (whole.next_offset, whole.incomplete_tail)
            rows = [r for b in batches for r in b.to_pylist()]
            assert rows == whole.batch.to_pylist()


def test_transactions_state_carries_across_pieces():
    recs = [Rec(b"k", b"v", i) for i in range(3)]
    data = b"".join(
        [
            batch_v2(recs, base_offset=0, transactional=True, producer_id=5, codec=ZSTD),
            control_batch(3, 5, commit=False),  # ends the aborted transaction
            batch_v2(recs, base_offset=4, transactional=True, producer_id=5),
            control_batch(7, 5, commit=True),
            batch_v2(recs, base_offset=8, transactional=True, producer_id=5, codec=GZIP),
        ]
    )
    aborted = [(5, 0)]
    whole = decode_records(
        data,
        topic="t",
        partition=3,
        start_offset=0,
        end_offset=100,
        read_committed=True,
        aborted_transactions=aborted,
    )
    assert whole.batch.column("offset").to_pylist() == [4, 5, 6, 8, 9, 10]
    batches, *_ = run_both(
        data, read_committed=True, aborted_transactions=aborted, max_arrow_bytes=1
    )
    assert [b.column("offset").to_pylist() for b in batches] == [[4, 5, 6], [8, 9, 10]]


def test_snapshot_and_restore_of_the_transactions_state():
    txns = AbortedTransactions([(5, 0), (6, 10)])
    state = txns.snapshot()
    txns.consume_up_to(20)
    assert txns.is_aborted(5) and txns.is_aborted(6)
    txns.restore(state)
    assert not txns.is_aborted(5)
    txns.consume_up_to(0)
    assert txns.is_aborted(5) and not txns.is_aborted(6)
    assert AbortedTransactions.of(txns) is txns


@SETTINGS
@given(
    st.lists(st.tuples(records_strategy(), st.sampled_from([0, 1, 2, 3, 4])), max_size=5),
    st.integers(1, 3000),
    st.integers(0, 20_000),
    st.integers(0, 1500),
    st.booleans(),
)
def test_fuzz_pieces_equal_in_both_and_to_one_decode(batches, arrow, budget, cut, headers):
    data = b""
    base = 0
    for recs, codec in batches:
        data += batch_v2(recs, base_offset=base, codec=codec)
        base += max((r.offset_delta for r in recs), default=0) + 1
    data = data[: len(data) - cut] if cut < len(data) else data
    result = run_both(
        data, max_arrow_bytes=arrow, max_decoded_bytes=budget, include_headers=headers
    )
    if isinstance(result[0], BaseException):
        assert isinstance(result[0], DecompressionBoundError)
        return
    pieces, next_offset, incomplete, _ = result
    whole = decode_records(
        data, topic="t", partition=3, start_offset=0, end_offset=1 << 62, include_headers=headers
    )
    assert (next_offset, incomplete) == (whole.next_offset, whole.incomplete_tail)
    assert [r for b in pieces for r in b.to_pylist()] == whole.batch.to_pylist()
