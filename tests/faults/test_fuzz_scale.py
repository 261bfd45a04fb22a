"""Fuzzing the executor's whole receive path at scale: Fetch response frames and record batches.

Bytes -> :class:`~spark_kafka_py.protocol.framing.KafkaProtocol` (a Fetch request in flight)
-> ``FetchResponse`` -> every partition's records through ``decode_records`` (the pure
reference and the accelerated kernel when built). Inputs are valid responses with valid
batches (every codec, headers, transactions), then damaged: byte flips, cuts (re-framed so
the body itself is short), 32-bit length fields overwritten with huge or negative values,
and damaged record sections whose CRC is fixed up so the record parser is reached.

Property: each input decodes or raises :class:`~spark_kafka_py.errors.KafkaProtocolError`
(incl. ``CorruptRecordError``): never another exception, a hang (pytest-timeout), or an
allocation above a bound set by configuration (``max_frame_bytes`` for frames,
``max_batch_bytes`` for batches, both 1 MiB here: per input < 8 MiB). Memory is measured as
the process sees it, not as ``tracemalloc`` does (which misses ``malloc`` in the accelerated
decoder, pyarrow's memory pool and the codecs' buffers): the peak resident size during the
input above the size before it, the peak of pyarrow's memory pool and the Arrow bytes left
allocated (:class:`benchmarks.fuzz_meter.PeakMeter`). The coverage-guided fuzzing of the
same decoders, with the same limits, is ``benchmarks/fuzz.py`` (``test_fuzz_coverage.py``).

Under CI (``CI=true``) a missing accelerated decoder is a failure, not a reason to fuzz the
pure one only.

Scale: ``SPARK_KAFKA_PY_FUZZ_EXAMPLES`` examples per test (default 30, for CI); the count
of inputs run is printed at the end of the module (``pytest -s``) for the reliability report.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
from collections import Counter
from collections.abc import Callable, Iterator

import crc32c
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.fuzz_meter import PeakMeter
from spark_kafka_py.errors import KafkaProtocolError
from spark_kafka_py.protocol.framing import KafkaProtocol
from spark_kafka_py.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    PartitionData,
)
from spark_kafka_py.protocol.schema import encode
from spark_kafka_py.records._pure import decode_records_pure
from tests.records.encoder import Rec, batch_v2

try:
    from spark_kafka_py.records._accel import (  # type: ignore[import-not-found]
        decode_records_accel,
    )
except ImportError:  # not built: the pure path only
    decode_records_accel = None

pytestmark = pytest.mark.timeout(3600)

EXAMPLES = int(os.environ.get("SPARK_KAFKA_PY_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
#: The configured bounds of this fuzz run (bytes).
MAX_FRAME = 1 << 20
MAX_BATCH = 1 << 20
#: Peak allocation allowed while decoding one input (bytes).
PEAK_BOUND = 8 << 20
METER = PeakMeter()

DECODERS: list[Callable[..., object]] = [decode_records_pure]
if decode_records_accel is not None:
    DECODERS.append(decode_records_accel)
DECODER_IDS = ["pure", "accel"][: len(DECODERS)]

COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    # Warm up first: one-time lazy initialisation (imports, Arrow type singletons) is not a
    # per-input allocation.
    for case in _huge_length_cases():
        for decoder in DECODERS:
            with contextlib.suppress(KafkaProtocolError):
                _decode_partition(decoder, case)
    yield
    print(
        f"\nfuzz inputs run (SPARK_KAFKA_PY_FUZZ_EXAMPLES={EXAMPLES}): {dict(COUNTS)}; "
        f"total {sum(COUNTS.values())}"
    )


# -- strategies --------------------------------------------------------------------------------

headers = st.lists(
    st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=4))), max_size=2
)


@st.composite
def batches(draw: st.DrawFn) -> bytes:
    """1-3 valid v2 batches: any codec, transactional/control flags, headers, offset gaps."""
    out = b""
    base = draw(st.integers(0, 50))
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 5))
        deltas = sorted(draw(st.sets(st.integers(0, 20), min_size=n, max_size=n)))
        recs = [
            Rec(
                draw(st.one_of(st.none(), st.binary(max_size=8))),
                draw(st.one_of(st.none(), st.binary(max_size=64))),
                d,
                draw(st.integers(-1000, 1000)),
                draw(headers),
            )
            for d in deltas
        ]
        out += batch_v2(
            recs,
            base_offset=base,
            codec=draw(st.sampled_from([0, 0, 1, 2, 3, 4])),
            transactional=draw(st.booleans()),
            producer_id=draw(st.sampled_from([-1, 7])),
        )
        base += max(deltas, default=0) + 1 + draw(st.integers(0, 3))
    return out


def _fix_crcs(data: bytearray) -> None:
    """Recompute the CRC-32C of every complete v2 batch whose length field still makes sense."""
    pos = 0
    while pos + 21 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 9 or end > len(data):
            return
        struct.pack_into(">I", data, pos + 17, crc32c.crc32c(bytes(data[pos + 21 : end])))
        pos = end


@st.composite
def damaged(draw: st.DrawFn, data: bytes, fix_crc: bool) -> bytes:
    """``data`` flipped, cut, or with a 32-bit field set to a huge/negative length."""
    raw = bytearray(data)
    kind = draw(st.sampled_from(["flip", "cut", "length", "none"]))
    if raw and kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            raw[draw(st.integers(0, len(raw) - 1))] ^= draw(st.integers(1, 255))
    elif raw and kind == "cut":
        del raw[draw(st.integers(0, len(raw) - 1)) :]
    elif len(raw) >= 4 and kind == "length":
        value = draw(st.sampled_from([0x7FFFFFFF, 0x7FFFFFF0, -1, -2, 1 << 30, MAX_BATCH + 1]))
        struct.pack_into(">i", raw, draw(st.integers(0, len(raw) - 4)), value)
    if fix_crc:
        _fix_crcs(raw)
    return bytes(raw)


@st.composite
def fetch_frames(draw: st.DrawFn) -> tuple[int, bytes, list[bytes]]:
    """``(version, frame, records of each partition)`` of a Fetch response, then damaged."""
    version = draw(st.integers(4, 17))
    records = [
        draw(damaged(draw(batches()), draw(st.booleans()))) for _ in range(draw(st.integers(1, 2)))
    ]
    topic = FetchableTopicResponse(
        topic="t",
        partitions=tuple(
            PartitionData(
                partition_index=i,
                error_code=0,
                high_watermark=1000,
                last_stable_offset=1000,
                records=r,
            )
            for i, r in enumerate(records)
        ),
    )
    body = encode(FetchResponse(responses=(topic,)), version)
    header = struct.pack(">i", 0) + (b"\x00" if version >= 12 else b"")
    payload = bytearray(draw(damaged(header + body, False)))
    return version, struct.pack(">i", len(payload)) + bytes(payload), records


# -- the path under test ------------------------------------------------------------------------


def _decode_partition(decoder: Callable[..., object], records: bytes | memoryview) -> None:
    decoder(
        records,
        topic="t",
        partition=0,
        start_offset=0,
        end_offset=1 << 40,
        include_headers=True,
        read_committed=True,
        aborted_transactions=[(7, 0)],
        max_batch_bytes=MAX_BATCH,
    )


def _bounded(run: Callable[[], None]) -> None:
    """Run ``run``: it returns or raises KafkaProtocolError, within :data:`PEAK_BOUND`."""
    peak = METER.measure(run, catch=KafkaProtocolError)
    assert peak.bytes < PEAK_BOUND, (
        f"decoding allocated {peak.bytes} bytes (peak RSS +{peak.rss_bytes}, Arrow pool peak "
        f"{peak.arrow_bytes}, Arrow left allocated {peak.arrow_retained_bytes})"
    )


def test_accelerated_decoder_is_fuzzed_in_ci() -> None:
    """CI builds the extension: fuzzing the pure decoder alone there would hide the other."""
    if os.environ.get("CI", "").lower() == "true" and decode_records_accel is None:
        pytest.fail("spark_kafka_py.records._accel is not built: CI must fuzz both decoders")


@pytest.mark.parametrize("where", ["arrow", "malloc"])
def test_the_bound_sees_memory_python_does_not_allocate(where: str) -> None:
    """64 MiB from pyarrow's pool or from C ``malloc`` (as the accelerated decoder and the
    codecs allocate): invisible to tracemalloc, above the bound here."""
    size = 64 << 20

    def allocate() -> None:
        if where == "arrow":
            buf = pa.allocate_buffer(size)
            ctypes.memset(buf.address, 1, size)
        else:
            libc = ctypes.CDLL(None)
            libc.malloc.restype = ctypes.c_void_p
            address = libc.malloc(size)
            ctypes.memset(address, 1, size)
            libc.free(ctypes.c_void_p(address))

    with pytest.raises(AssertionError, match="decoding allocated"):
        _bounded(allocate)


@pytest.mark.parametrize("decoder", DECODERS, ids=DECODER_IDS)
@FUZZ
@given(case=fetch_frames(), split=st.integers(1, 64))
def test_fetch_response_frames(decoder: Callable[..., object], case, split: int) -> None:
    version, frame, _ = case
    COUNTS[f"fetch-frame-{decoder.__name__}"] += 1

    def run() -> None:
        proto = KafkaProtocol("fuzz", max_frame_bytes=MAX_FRAME)
        request = FetchRequest(
            max_wait_ms=0,
            min_bytes=1,
            topics=(
                FetchTopic(
                    topic="t",
                    partitions=(
                        FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1),
                    ),
                ),
            ),
        )
        proto.send_request(request, version)
        responses = []
        for i in range(0, len(frame), split):  # fed in pieces, as from a socket
            responses += proto.receive_bytes(frame[i : i + split])
        for _, response in responses:
            for topic in response.responses:
                for part in topic.partitions:
                    _decode_partition(decoder, part.records or b"")

    _bounded(run)


@pytest.mark.parametrize("decoder", DECODERS, ids=DECODER_IDS)
@FUZZ
@given(data=st.data())
def test_record_batches(decoder: Callable[..., object], data: st.DataObject) -> None:
    records = data.draw(damaged(data.draw(batches()), data.draw(st.booleans())))
    COUNTS[f"records-{decoder.__name__}"] += 1
    _bounded(lambda: _decode_partition(decoder, records))


@pytest.mark.parametrize("decoder", DECODERS, ids=DECODER_IDS)
@FUZZ
@given(noise=st.binary(max_size=300))
def test_noise(decoder: Callable[..., object], noise: bytes) -> None:
    COUNTS[f"noise-{decoder.__name__}"] += 1
    _bounded(lambda: _decode_partition(decoder, noise))


def _huge_length_cases() -> list[bytes]:
    """A one-record batch with 0x7FFFFFFF written over every 32-bit window (CRC as is, and
    fixed up), and nothing at all."""
    batch = bytearray(batch_v2([Rec(b"k", b"v" * 40, 0, 0, [])]))
    cases = [b"", bytes(batch)]
    for pos in range(8, len(batch) - 4):
        bad = bytearray(batch)
        struct.pack_into(">i", bad, pos, 0x7FFFFFFF)
        cases.append(bytes(bad))
        _fix_crcs(bad)
        cases.append(bytes(bad))
    return cases


def test_huge_length_fields_in_small_inputs_are_errors_not_allocations() -> None:
    """A 2 GB length in a 100-byte input: an error, with no allocation near that size."""
    cases = _huge_length_cases()
    frame = struct.pack(">i", 0x7FFFFFFF) + b"\x00" * 96
    for decoder in DECODERS:
        for case in cases:
            _bounded(lambda c=case, d=decoder: _decode_partition(d, c))
    proto = KafkaProtocol("fuzz", max_frame_bytes=MAX_FRAME)
    proto.send_request(FetchRequest(max_wait_ms=0, min_bytes=1, topics=()), 12)
    peak = METER.measure(lambda: proto.receive_bytes(frame), catch=KafkaProtocolError)
    assert isinstance(peak.error, KafkaProtocolError)
    assert "exceeds max_frame_bytes" in str(peak.error)
    assert peak.bytes < PEAK_BOUND
