"""Every public decoding function is bounded by default (issue 24).

:func:`~spark_kafka_py.records.decode_records`, :class:`~spark_kafka_py.records.DecodedStream`,
:func:`~spark_kafka_py.records.compression.decompress` and
:func:`~spark_kafka_py.records.legacy.decode_legacy_entry`, called without a bound, may
decompress :data:`~spark_kafka_py.records.compression.DEFAULT_MAX_DECOMPRESSION_RATIO` (the
default of ``maxDecompressionRatio``, the Fetch path's) times the bytes they are given. The bomb
of the issue (:func:`tests.records.bomb_rss.zstd_bomb`: 40 zstd batches of one 48 MiB record,
65 KB of records, 1.9 GiB decompressed; 2.07 GB of RSS through ``decode_records`` before) raises
:class:`~spark_kafka_py.errors.DecompressionBoundError` through each, both decoders, within 100 MB
of RSS growth, measured in a fresh process (:mod:`tests.records.bomb_rss`). Under the bound, the
same functions decode: exactly at it (the default, and a bound passed), not one byte past it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spark_kafka_py.errors import DecompressionBoundError
from spark_kafka_py.records import (
    DEFAULT_MAX_DECOMPRESSION_RATIO,
    DecodedRecords,
    DecodedStream,
    decode_records,
)
from spark_kafka_py.records import decoder as decoder_module
from spark_kafka_py.records._pure import decode_records_pure
from spark_kafka_py.records.arrow import ColumnBuilder
from spark_kafka_py.records.compression import CODEC_ZSTD, decompress
from spark_kafka_py.records.legacy import decode_legacy_entry
from spark_kafka_py.registry import default

from .accel import accel
from .bomb_rss import legacy_bomb, records_sections, zstd_bomb
from .encoder import GZIP, LZ4, ZSTD, Rec, batch_v2, encode_record

ROOT = Path(__file__).resolve().parents[2]
DECODERS = {"pure": decode_records_pure, "accel": accel.decode_records_accel}
#: RSS growth allowed while a public function meets the bomb.
RSS_LIMIT = 100 * 1000 * 1000
#: A small synthetic bomb record (1 MiB of zeros) for the in-process tests.
ZEROS = 1 << 20
DECODED = len(encode_record(Rec(None, bytes(ZEROS), 0)))


def test_the_default_ratio_is_the_fetch_paths():
    assert default("maxDecompressionRatio") == DEFAULT_MAX_DECOMPRESSION_RATIO == 100


# ---- the bomb, in a fresh process per function ----------------------------------------------


@pytest.fixture(scope="module")
def bomb_files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bombs")
    files = {"zstd": d / "zstd.bin", "legacy": d / "legacy.bin"}
    files["zstd"].write_bytes(zstd_bomb())
    files["legacy"].write_bytes(legacy_bomb())
    return files


#: (function, decoder); decompress and decode_legacy_entry use no records decoder (the
#: accelerated one hands legacy message sets to the reference: decode_records/legacy).
CASES = [
    ("decode_records", "accel"),
    ("decode_records", "pure"),
    ("DecodedStream", "accel"),
    ("DecodedStream", "pure"),
    ("decompress", "pure"),
    ("decode_legacy_entry", "pure"),
    ("decode_records/legacy", "accel"),
    ("decode_records/legacy", "pure"),
]


@pytest.fixture(scope="module")
def bomb_reports(bomb_files) -> dict[tuple[str, str], dict]:
    """Every case of :data:`CASES`, each in a process of its own (forked from one that
    imported and warmed up everything, :mod:`tests.records.bomb_rss`)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.records.bomb_rss",
            str(bomb_files["zstd"]),
            str(bomb_files["legacy"]),
            *(f"{entry}:{impl}" for entry, impl in CASES),
        ],
        cwd=ROOT,
        env={**os.environ, "SPARK_KAFKA_PY_PURE": "0"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {(r["entry"], r["impl"]): r for r in reports}


@pytest.mark.parametrize(("entry", "impl"), CASES, ids=["-".join(c) for c in CASES])
def test_the_bomb_fails_within_100_mb_through_every_public_function(bomb_reports, entry, impl):
    report = bomb_reports[entry, impl]
    error = report["error"]
    assert error is not None and error["type"] == "DecompressionBoundError", report
    n = report["input_bytes"]
    if entry == "decompress":
        # the 40 records sections (the batch headers are not compressed bytes)
        assert error["bound"] == 100 * (n - 40 * 61)
        assert "default bound of max_bytes" in error["message"]
    else:
        assert error["bound"] == 100 * n
        param = "budget" if entry == "decode_legacy_entry" else "max_decoded_bytes"
        assert f"the default {param}: 100 x the {n} bytes given" in error["message"]
        assert error["message"].endswith("in t-0 at offset 0")
    assert report["rss_growth"] < RSS_LIMIT, report


# ---- under and over the default bound, in process ---------------------------------------------


def cut_batch(size: int) -> bytes:
    """The first ``size`` bytes of a larger uncompressed batch: an incomplete tail (a broker
    cuts a response's last batch), never decoded, but bytes given."""
    whole = batch_v2([Rec(None, bytes(size + 100), 0)], base_offset=1)
    assert len(whole) > size
    return whole[:size]


def at_the_default_bound(codec: int, extra: int = 0) -> bytes:
    """One batch of one 1 MiB record of zeros, then a cut batch making the bytes given exactly
    ``DECODED / 100`` (rounded up), ``+ extra``."""
    one = batch_v2([Rec(None, bytes(ZEROS), 0)], codec=codec)
    size = -(-DECODED // DEFAULT_MAX_DECOMPRESSION_RATIO) + extra
    return one + cut_batch(size - len(one))


def with_kernel(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decoder_module, "_impl", DECODERS[name])


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD], ids=["gzip", "lz4", "zstd"])
@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decode_records_decodes_up_to_the_default_bound_and_not_past(codec, name, monkeypatch):
    with_kernel(name, monkeypatch)
    kw: dict[str, Any] = {"topic": "t", "partition": 0, "start_offset": 0, "end_offset": 1 << 62}
    data = at_the_default_bound(codec)
    assert 100 * len(data) >= DECODED
    got = decode_records(data, **kw)
    assert (got.batch.num_rows, got.next_offset, got.incomplete_tail) == (1, 1, True)
    assert got.batch.column("value")[0].as_py() == bytes(ZEROS)
    short = at_the_default_bound(codec, -1)
    assert 100 * len(short) < DECODED
    with pytest.raises(DecompressionBoundError) as exc:
        decode_records(short, **kw)
    assert (exc.value.bound, exc.value.topic, exc.value.offset) == (100 * len(short), "t", 0)
    # what the caller passes replaces the default, both ways; None leaves max_batch_bytes only
    assert decode_records(short, **kw, max_decoded_bytes=DECODED).batch.num_rows == 1
    assert decode_records(short, **kw, max_decoded_bytes=None).batch.num_rows == 1
    with pytest.raises(DecompressionBoundError) as exc:
        decode_records(data, **kw, max_decoded_bytes=DECODED - 1)
    assert exc.value.bound == DECODED - 1


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoded_stream_decodes_up_to_the_default_bound_and_not_past(name):
    def run(data: bytes, **kw: Any) -> list:
        s = DecodedStream(
            data,
            topic="t",
            partition=0,
            start_offset=0,
            end_offset=1 << 62,
            max_arrow_bytes=1,
            decoder=DECODERS[name],
            **kw,
        )
        return [b.num_rows for b in s]

    assert run(at_the_default_bound(ZSTD)) == [1]
    with pytest.raises(DecompressionBoundError, match="default max_decoded_bytes"):
        run(at_the_default_bound(ZSTD, -1))
    assert run(at_the_default_bound(ZSTD, -1), max_decoded_bytes=DECODED) == [1]
    with pytest.raises(DecompressionBoundError, match=r"\(max_decoded_bytes\)"):
        run(at_the_default_bound(ZSTD), max_decoded_bytes=DECODED - 1)


def test_decode_records_equal_in_both_decoders_under_the_default(monkeypatch):
    data = b"".join(
        batch_v2([Rec(b"k%d" % i, b"v" * (i * 50), 0)], base_offset=i, codec=ZSTD)
        for i in range(20)
    )
    results: list[DecodedRecords] = []
    for name in sorted(DECODERS):
        with_kernel(name, monkeypatch)
        results.append(decode_records(data, topic="t", partition=0, start_offset=0, end_offset=99))
    assert results[0].batch.num_rows == 20
    assert results[0].batch.equals(results[1].batch)
    assert results[0].next_offset == results[1].next_offset == 20


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD], ids=["gzip", "lz4", "zstd"])
def test_decompress_decodes_up_to_the_default_bound_and_not_past(codec):
    raw = bytes(ZEROS)
    payload = batch_v2([Rec(None, raw, 0)], codec=codec)[61:]
    size = len(payload)
    assert decompress(codec, payload, ZEROS + 100) == encode_record(Rec(None, raw, 0))
    with pytest.raises(DecompressionBoundError, match="default bound of max_bytes") as exc:
        decompress(codec, payload)
    assert exc.value.bound == 100 * size
    small = b"abc" * 100
    one = batch_v2([Rec(None, small, 0)], codec=codec)[61:]
    assert decompress(codec, one) == encode_record(Rec(None, small, 0))
    with pytest.raises(ValueError, match="'ratio'"):
        decompress(codec, one, "rattio")  # type: ignore[arg-type]  # a misspelt mode, on purpose


def test_decompress_of_the_bomb_stream_is_bounded_by_default():
    stream = records_sections(zstd_bomb(zeros=ZEROS, count=3))
    with pytest.raises(DecompressionBoundError) as exc:
        decompress(CODEC_ZSTD, stream)
    assert exc.value.bound == 100 * len(stream)
    assert len(decompress(CODEC_ZSTD, stream, 3 * DECODED)) == 3 * DECODED


def test_decode_legacy_entry_decodes_up_to_the_default_bound_and_not_past():
    def run(entry: bytes, **kw: Any) -> int:
        cols = ColumnBuilder(False)
        decode_legacy_entry(memoryview(entry), cols, "t", 0, 0, 1 << 62, 1 << 30, **kw)
        return len(cols)

    bomb = legacy_bomb(zeros=ZEROS)
    with pytest.raises(DecompressionBoundError, match="default budget") as exc:
        run(bomb)
    assert (exc.value.bound, exc.value.offset) == (100 * len(bomb), 0)
    assert run(bomb, budget=None) == 1
    plain = legacy_bomb(zeros=1000)  # gzip of 1 KB of zeros: under 100x
    assert run(plain) == 1


def test_a_legit_input_decodes_with_every_default(monkeypatch):
    """JSON-like values, compressing ~10x: nothing to raise by default."""
    values = [
        b'{"id": %d, "user": "u%d", "event": "click", "ok": true}' % (i, i % 7) for i in range(500)
    ]
    recs = [Rec(None, v, i) for i, v in enumerate(values)]
    for codec in (GZIP, LZ4, ZSTD):
        data = batch_v2(recs, codec=codec)
        for name in sorted(DECODERS):
            with_kernel(name, monkeypatch)
            got = decode_records(data, topic="t", partition=0, start_offset=0, end_offset=1 << 62)
            assert got.batch.column("value").to_pylist() == values
        assert decompress(codec, data[61:]) == b"".join(encode_record(r) for r in recs)
