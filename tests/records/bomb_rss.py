"""Decompression bombs through the public decoding functions, measured in fresh processes.

:func:`zstd_bomb` is the bomb of issue 24: 40 zstd record batches of one record each, whose value
is 48 MiB of zeros (65 KB of records that decompress to 1.9 GiB). :func:`legacy_bomb` is its
magic-1 analogue (KIP-110 allows zstd in magic 2 only): one gzip wrapper of one 48 MiB message.

Run as a program (``python -m tests.records.bomb_rss ZSTD_FILE LEGACY_FILE ENTRY:IMPL ...``,
from the repository root), it reads the bombs from the files, imports and warms up every
function of :data:`ENTRIES` with both decoders (``IMPL``: ``accel`` or ``pure``), then forks one
process per ``ENTRY:IMPL``, which decodes its bomb through that function with the function's
default bound and prints one JSON line: the error raised (class, message, ``bound``), the rows
decoded, and the growth of its peak RSS (``ru_maxrss``, which starts afresh in a forked
process) while decoding. Peak RSS sees the Cython decoder's and the codecs' ``malloc`` as well
as Arrow's and Python's allocations.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import sys
from collections.abc import Callable
from typing import Any

from spark_kafka_py.errors import KafkaProtocolError
from spark_kafka_py.records import DecodedStream, decode_records
from spark_kafka_py.records import decoder as decoder_module
from spark_kafka_py.records._protocols import RecordsDecoder
from spark_kafka_py.records._pure import decode_records_pure
from spark_kafka_py.records.arrow import ColumnBuilder
from spark_kafka_py.records.compression import CODEC_ZSTD, decompress
from spark_kafka_py.records.format import RECORD_BATCH_OVERHEAD
from spark_kafka_py.records.legacy import decode_legacy_entry
from tests.records.encoder import GZIP, ZSTD, Rec, batch_v2, legacy_wrapper

#: Zeros in each bomb record's value.
ZEROS = 48 << 20
#: Batches in :func:`zstd_bomb`.
BATCHES = 40


def zstd_bomb(zeros: int = ZEROS, count: int = BATCHES) -> bytes:
    """``count`` zstd batches at offsets 0..count-1, each one record of ``zeros`` zeros (one
    batch compressed once, copied with its base offset, outside the CRC-32C, rewritten)."""
    one = batch_v2([Rec(None, bytes(zeros), 0)], codec=ZSTD)
    return b"".join(struct.pack(">q", i) + one[8:] for i in range(count))


def legacy_bomb(zeros: int = ZEROS) -> bytes:
    """One magic-1 gzip wrapper at offset 0 of one message of ``zeros`` zeros."""
    return legacy_wrapper(0, [(None, bytes(zeros))], magic=1, codec=GZIP)


def records_sections(records: bytes) -> bytes:
    """The compressed records sections of the v2 batches in ``records``, concatenated (for a
    zstd bomb: one stream of zstd frames, which :func:`decompress` reads across)."""
    out = bytearray()
    pos = 0
    while pos < len(records):
        (length,) = struct.unpack_from(">i", records, pos + 8)
        end = pos + 12 + length
        out += records[pos + RECORD_BATCH_OVERHEAD : end]
        pos = end
    return bytes(out)


def _decode_records(data: bytes, kernel: RecordsDecoder) -> int:
    decoder_module._impl = kernel  # what SPARK_KAFKA_PY_PURE chooses at import
    kw: dict[str, Any] = {"topic": "t", "partition": 0, "start_offset": 0, "end_offset": 1 << 62}
    return decode_records(data, **kw).batch.num_rows


def _decoded_stream(data: bytes, kernel: RecordsDecoder) -> int:
    s = DecodedStream(
        data,
        topic="t",
        partition=0,
        start_offset=0,
        end_offset=1 << 62,
        max_arrow_bytes=1 << 40,
        decoder=kernel,
    )
    return sum(b.num_rows for b in s)


def _decompress(data: bytes, kernel: RecordsDecoder) -> int:
    decompress(CODEC_ZSTD, records_sections(data))
    return 0


def _decode_legacy_entry(data: bytes, kernel: RecordsDecoder) -> int:
    cols = ColumnBuilder(False)
    decode_legacy_entry(memoryview(data), cols, "t", 0, 0, 1 << 62, 1 << 40)
    return len(cols)


#: Entry point name -> (function of the bomb's bytes and a decoder returning the rows, the
#: bomb's builder).
ENTRIES: dict[str, tuple[Callable[[bytes, RecordsDecoder], int], Callable[..., bytes]]] = {
    "decode_records": (_decode_records, zstd_bomb),
    "DecodedStream": (_decoded_stream, zstd_bomb),
    "decompress": (_decompress, zstd_bomb),
    "decode_legacy_entry": (_decode_legacy_entry, legacy_bomb),
    "decode_records/legacy": (_decode_records, legacy_bomb),
}


def _kernels() -> dict[str, RecordsDecoder]:
    out: dict[str, RecordsDecoder] = {"pure": decode_records_pure}
    try:
        from spark_kafka_py.records._accel import decode_records_accel
    except ImportError:
        return out
    out["accel"] = decode_records_accel
    return out


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _measure(name: str, impl: str, data: bytes, kernel: RecordsDecoder) -> dict[str, object]:
    run = ENTRIES[name][0]
    rss0 = _peak_rss()
    error: dict[str, object] | None = None
    rows = 0
    try:
        rows = run(data, kernel)
    except KafkaProtocolError as exc:
        error = {
            "type": type(exc).__name__,
            "message": str(exc),
            "bound": getattr(exc, "bound", None),
        }
    return {
        "entry": name,
        "impl": impl,
        "input_bytes": len(data),
        "rows": rows,
        "error": error,
        "rss_growth": _peak_rss() - rss0,
    }


def main(argv: list[str]) -> None:
    bombs = {}
    for path, build in zip(argv[:2], (zstd_bomb, legacy_bomb), strict=True):
        with open(path, "rb") as f:
            bombs[build] = f.read()
    kernels = _kernels()
    cases = [arg.split(":") for arg in argv[2:]]
    # warm up (imports, codecs, Arrow): each case's function and decoder on a small input
    for name, impl in cases:
        run, build = ENTRIES[name]
        run(build(zeros=1000, **({"count": 2} if build is zstd_bomb else {})), kernels[impl])
    for name, impl in cases:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a fresh peak RSS per case
            os.close(read)
            report = _measure(name, impl, bombs[ENTRIES[name][1]], kernels[impl])
            os.write(write, json.dumps(report).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as f:
            out = f.read()
        _, status = os.waitpid(pid, 0)
        if status or not out:
            raise SystemExit(f"{name}:{impl}: the measuring process failed ({status})")
        print(out.decode(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
