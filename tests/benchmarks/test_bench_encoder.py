"""``benchmarks/encoder.py`` runs at a tiny scale and its sections equal the pure encoder's.

Timings are not asserted; the script itself refuses accelerated sections that differ.
"""

from __future__ import annotations

import pytest

from benchmarks.encoder import BATCH_SIZE, encode_all, main, sample_columns, sample_headers
from spark_kafka_py.records.encoder import _encode_records_section_pure
from spark_kafka_py.records.format import RECORD_BATCH_OVERHEAD
from tests.records.accel import encode_records_section_accel  # required under CI=true


@pytest.mark.parametrize("headers", [0, 2])
def test_sections_fill_batches_and_both_encoders_agree(headers: int) -> None:
    keys, values = sample_columns(3000, 100)
    hs = sample_headers(3000, headers)
    pure = encode_all(_encode_records_section_pure, keys, values, hs)
    assert pure == encode_all(encode_records_section_accel, keys, values, hs)
    assert all(len(s) <= BATCH_SIZE - RECORD_BATCH_OVERHEAD for s in pure)
    assert len(pure) > 1


def test_main_at_tiny_scale(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "2000", "--repeat", "1", "--headers", "1"]) == 0
    out = capsys.readouterr().out
    assert "pure" in out and "accel" in out and "rows/s" in out
