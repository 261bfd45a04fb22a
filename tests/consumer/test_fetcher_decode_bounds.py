"""Bounded decoding in the executor's Fetch loop: decompression bombs (issue 11).

A hostile or broken broker can answer a small Fetch with many tiny compressed record batches
that each expand to 1 MiB of zeros (:mod:`tests.consumer.decompression_bomb`). The fetcher bounds
what one response may decode to (``maxDecompressionRatio`` x the bytes the partition's Fetch
was allowed to return), fails with a typed error naming the topic-partition, the offset of the
batch past the bound, the bound and the option to raise, and yields the Arrow batches of a
response one by one, each about twice ``max.partition.fetch.bytes`` of decoded data
(``ARROW_BATCH_FETCHES``), so that memory is bounded by these bounds and not by what the
response expands to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_kafka_py.consumer.fetcher import ARROW_BATCH_FETCHES
from spark_kafka_py.errors import ConfigError, KafkaProtocolError
from spark_kafka_py.spark.options import parse_options
from tests.consumer.decompression_bomb import (
    BATCH_DECODED,
    CODECS,
    bomb_batches,
    serve,
    settings_for,
)

ROOT = Path(__file__).resolve().parents[2]
FETCH_BYTES = 64 * 1024
#: Decoded bytes at which the fetcher closes an Arrow batch.
ARROW_BYTES = ARROW_BATCH_FETCHES * FETCH_BYTES
#: Margin over the bounds for interpreter, allocator and Arrow overheads (bytes).
MARGIN = 24 << 20

#: (codec, ratio): zstd, gzip and lz4 shrink 1 MiB of zeros by more than the default 100x;
#: snappy by about 21x, so it meets a ratio of 10.
BOMBS = [("zstd", None), ("gzip", None), ("lz4", None), ("snappy", 10)]


def _bound(records_bytes: int, ratio: int | None) -> int:
    return (ratio or 100) * max(records_bytes, FETCH_BYTES)


@pytest.mark.parametrize(("codec", "ratio"), BOMBS)
def test_bomb_fails_naming_partition_offset_bound_and_option(codec: str, ratio: int | None):
    batches = bomb_batches(CODECS[codec], 200)
    bound = _bound(sum(map(len, batches)), ratio)
    assert bound < 200 * BATCH_DECODED  # the response expands past its bound
    first_past = bound // BATCH_DECODED  # batches 0..first_past-1 fit in the bound
    rows = 0
    with pytest.raises(KafkaProtocolError) as info:
        for batch in serve(batches, settings_for(FETCH_BYTES, ratio)):
            rows += batch.num_rows
    exc = info.value
    assert f"in t-0 at offset {first_past}" in str(exc)
    assert str(bound) in str(exc) and "maxDecompressionRatio" in str(exc)
    assert (exc.topic, exc.partition, exc.offset) == ("t", 0, first_past)  # type: ignore[attr-defined]
    assert rows <= first_past  # what was yielded before the error


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_under_the_bound_arrow_batches_are_yielded_one_by_one(codec: str):
    batches = bomb_batches(CODECS[codec], 24)
    sizes = [
        (b.num_rows, b.get_total_buffer_size())
        for b in serve(batches, settings_for(FETCH_BYTES, 1000))
    ]
    assert sum(rows for rows, _ in sizes) == 24
    # one Fetch answered everything; its batches came as several Arrow batches, each closed at
    # the first record batch boundary past ARROW_BYTES of decoded data
    assert len(sizes) > 1
    assert max(size for _, size in sizes) <= ARROW_BYTES + BATCH_DECODED + 1024


def _bounded_read(codec: str, count: int, ratio: int | None, pure: bool) -> dict:
    env = dict(os.environ)
    env.pop("SPARK_KAFKA_PY_PURE", None)
    if pure:
        env["SPARK_KAFKA_PY_PURE"] = "1"
    args = [codec, str(count), str(FETCH_BYTES), "default" if ratio is None else str(ratio)]
    proc = subprocess.run(
        [sys.executable, "-m", "tests.consumer.decompression_bomb", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("pure", [False, True], ids=["accel", "pure"])
@pytest.mark.parametrize(
    ("codec", "count", "ratio", "fails"),
    [("zstd", 300, None, True), ("lz4", 300, None, True), ("zstd", 64, 2000, False)],
    ids=["zstd-bomb", "lz4-bomb", "zstd-under-bound"],
)
def test_memory_while_reading_stays_within_the_bounds(codec, count, ratio, fails, pure):
    """Peak RSS of a fresh process (sees malloc in the Cython decoder and the codecs) and
    Arrow's pool (``pyarrow.total_allocated_bytes()``) grow by at most the bounds (one Arrow
    batch of ``ARROW_BYTES`` plus one decompressed record batch) and a margin,
    however far the response would expand (300 MiB for the bombs, 64 MiB read in full)."""
    report = _bounded_read(codec, count, ratio, pure)
    if fails:
        assert report["error"] is not None and "maxDecompressionRatio" in report["error"]
    else:
        assert report["error"] is None and report["rows"] == count
    bound = ARROW_BYTES + 2 * BATCH_DECODED
    assert report["largest_batch"] <= bound
    assert report["arrow_peak"] <= bound + MARGIN, report
    assert report["rss_growth"] <= bound + MARGIN, report


def test_max_decompression_ratio_option_reaches_the_consumer_settings():
    base = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}
    assert parse_options(base, streaming=False).consumer.max_decompression_ratio == 100
    parsed = parse_options({**base, "maxDecompressionRatio": "250"}, streaming=True)
    assert parsed.consumer.max_decompression_ratio == 250
    # PySpark hands option keys lower-cased
    parsed = parse_options({**base, "maxdecompressionratio": "7"}, streaming=False)
    assert parsed.consumer.max_decompression_ratio == 7
    for bad in ("0", "-3", "1.5", "lots"):
        with pytest.raises(ConfigError, match="'maxDecompressionRatio'"):
            parse_options({**base, "maxDecompressionRatio": bad}, streaming=False)
