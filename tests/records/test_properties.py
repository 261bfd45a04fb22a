"""Property tests: any bytes decode or raise KafkaProtocolError; encode/decode round trips."""

from __future__ import annotations

import struct

import crc32c
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import KafkaProtocolError
from spark_kafka_py.records import DecodedRecords, decode_records, spark_kafka_schema

from .encoder import Rec, batch_v2

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


def _decode_any(data: bytes, **kw) -> None:
    try:
        res = decode_records(
            data,
            topic="t",
            partition=0,
            start_offset=kw.pop("start", 0),
            end_offset=kw.pop("end", 1 << 62),
            **kw,
        )
    except KafkaProtocolError:
        return
    assert isinstance(res, DecodedRecords)
    assert res.batch.schema == spark_kafka_schema(kw.get("include_headers", False))


@SETTINGS
@given(st.binary(max_size=400), st.booleans(), st.booleans())
def test_any_bytes_decode_or_raise_protocol_error(data, headers, committed):
    _decode_any(
        data,
        include_headers=headers,
        read_committed=committed,
        aborted_transactions=[(-1, 0), (0, 0)],
    )


@st.composite
def batch_prefix_then_noise(draw):
    """A valid batch header whose records section is noise (CRC made valid), so that the
    record parser itself is fuzzed rather than the CRC check."""
    codec = draw(st.sampled_from([0, 0, 0, 1, 2, 3, 4]))
    attrs = codec | draw(st.sampled_from([0, 0x08, 0x10, 0x20, 0x30]))
    count = draw(st.integers(-2, 20))
    payload = draw(st.binary(max_size=300))
    header = struct.pack(
        ">hiqqqhii", attrs, draw(st.integers(-1, 30)), 0, 0, draw(st.integers(-1, 2)), 0, 0, count
    )
    body = header + payload
    return struct.pack(">qiibI", 0, 9 + len(body), 0, 2, crc32c.crc32c(body)) + body


@SETTINGS
@given(batch_prefix_then_noise(), st.booleans(), st.booleans())
def test_noise_records_with_valid_crc(data, headers, committed):
    _decode_any(
        data,
        include_headers=headers,
        read_committed=committed,
        aborted_transactions=[(0, 0), (1, 0)],
    )


@st.composite
def mutated_valid_batch(draw):
    recs = draw(records_strategy())
    raw = bytearray(batch_v2(recs))
    # mutate the records section then fix the CRC
    for _ in range(draw(st.integers(1, 4))):
        if len(raw) > 61:
            i = draw(st.integers(61, len(raw) - 1))
            raw[i] = draw(st.integers(0, 255))
    struct.pack_into(">I", raw, 17, crc32c.crc32c(bytes(raw[21:])))
    return bytes(raw)


@SETTINGS
@given(mutated_valid_batch(), st.booleans())
def test_mutated_records_with_valid_crc(data, headers):
    _decode_any(data, include_headers=headers)


header_strategy = st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5)))


@st.composite
def records_strategy(draw):
    n = draw(st.integers(0, 8))
    deltas = sorted(draw(st.sets(st.integers(0, 2000), min_size=n, max_size=n)))
    return [
        Rec(
            draw(st.one_of(st.none(), st.binary(max_size=20))),
            draw(st.one_of(st.none(), st.binary(max_size=200))),
            d,
            draw(st.integers(-(10**9), 10**9)),
            draw(st.lists(header_strategy, max_size=3)),
        )
        for d in deltas
    ]


@SETTINGS
@given(
    st.lists(
        st.tuples(records_strategy(), st.sampled_from([0, 1, 2, 3, 4]), st.booleans()), max_size=4
    ),
    st.integers(0, 3000),
    st.integers(0, 9000),
)
def test_round_trip(batches, start, span):
    end = start + span
    data = b""
    expected = []
    base = 0
    next_expected = start
    for recs, codec, lat in batches:
        data += batch_v2(
            recs,
            base_offset=base,
            codec=codec,
            log_append_time=lat,
            base_timestamp=10**12,
            max_timestamp=2 * 10**12,
        )
        last = base + max((r.offset_delta for r in recs), default=0)
        for r in recs:
            off = base + r.offset_delta
            if start <= off < end:
                ts = 2 * 10**12 if lat else 10**12 + r.timestamp_delta
                hdrs = [{"key": k, "value": v} for k, v in r.headers] or None
                expected.append((r.key, r.value, off, ts * 1000, int(lat), hdrs))
        next_expected = end if base >= end else max(next_expected, min(last + 1, end))
        base = last + 1 + (len(recs) % 3)  # gaps between batches, as after compaction
    res = decode_records(
        data, topic="t", partition=1, start_offset=start, end_offset=end, include_headers=True
    )
    got = list(
        zip(
            res.batch.column("key").to_pylist(),
            res.batch.column("value").to_pylist(),
            res.batch.column("offset").to_pylist(),
            res.batch.column("timestamp").cast(pa.int64()).to_pylist(),
            res.batch.column("timestampType").to_pylist(),
            res.batch.column("headers").to_pylist(),
            strict=True,
        )
    )
    assert got == expected
    assert not res.incomplete_tail
    assert res.next_offset == next_expected
