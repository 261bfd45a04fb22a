"""Arbitrary or damaged bytes fed to every response decoder give a response or
KafkaProtocolError, nothing else (no IndexError, struct.error, MemoryError...), within 8 MiB
per input as the process sees memory (peak resident size and pyarrow's pool:
:class:`benchmarks.fuzz_meter.PeakMeter`, not ``tracemalloc``). The coverage-guided fuzzing of
the same decoders is ``benchmarks/fuzz.py``."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.fuzz_meter import PeakMeter
from spark_kafka_py.errors import KafkaProtocolError
from spark_kafka_py.protocol.messages import RESPONSE_TYPES
from spark_kafka_py.protocol.schema import decode, encode

from .strategies import struct_strategy

CASES = [
    (cls, v)
    for cls in sorted(RESPONSE_TYPES.values(), key=lambda c: c.__name__)
    for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)
]
IDS = [f"{cls.__name__}-v{v}" for cls, v in CASES]
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Peak allocation allowed while decoding one input (bytes).
PEAK_BOUND = 8 << 20
METER = PeakMeter()


def decode_or_protocol_error(cls: type, data: bytes, version: int) -> None:
    peak = METER.measure(lambda: decode(cls, data, version), catch=KafkaProtocolError)
    assert peak.bytes < PEAK_BOUND, f"decoding {len(data)} bytes allocated {peak}"


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
@FUZZ
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes(cls: type, version: int, data: bytes) -> None:
    decode_or_protocol_error(cls, data, version)


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
@FUZZ
@given(data=st.data())
def test_truncated_and_mutated_valid_responses(
    cls: type, version: int, data: st.DataObject
) -> None:
    encoded = encode(data.draw(struct_strategy(cls, version)), version)
    cut = data.draw(st.integers(0, len(encoded)))
    with pytest.raises(KafkaProtocolError) if cut < len(encoded) else contextlib.nullcontext():
        decode(cls, encoded[:cut], version)
    if encoded:
        mutated = bytearray(encoded)
        for _ in range(data.draw(st.integers(1, 4))):
            pos = data.draw(st.integers(0, len(mutated) - 1))
            mutated[pos] = data.draw(st.integers(0, 255))
        decode_or_protocol_error(cls, bytes(mutated), version)
