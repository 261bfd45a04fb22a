"""The producer's records-section encoder alone: pure Python against the Cython twin.

What the sink's producer does for every Arrow slice of one partition: call
``records.encoder.encode_records_section`` again and again, each call filling one batch of
``batch.size`` bytes (16 KiB, Kafka's default; the budget of a call is ``batch.size`` minus the
61-byte batch header), until every row is encoded. Rows: ``--records`` records with 8-byte keys
(the row number, big-endian) and ``--value-size``-byte values (default 100) in one binary
array each, and ``--headers`` headers per record (default 0; key ``"h"``, 8-byte value; with
0 no header column is passed). Timed per implementation (``_encode_records_section_pure`` and
``encode_records_section_accel``): ``--repeat`` runs, the median is reported in rows/s and
MB/s of encoded records, and every run's sections are checked equal to the pure ones'.

Usage::

    python benchmarks/encoder.py [--records 1000000] [--value-size 100] [--headers 0]
        [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa

from spark_kafka_py.records.encoder import _encode_records_section_pure
from spark_kafka_py.records.format import RECORD_BATCH_OVERHEAD

__all__ = ["encode_all", "main", "sample_columns", "sample_headers"]

#: Kafka's default ``batch.size`` (bytes).
BATCH_SIZE = 16 * 1024


def sample_columns(records: int, value_size: int) -> tuple[pa.Array, pa.Array]:
    """``records`` 8-byte big-endian keys and ``value_size``-byte values (binary arrays)."""
    keys = pa.array([i.to_bytes(8, "big") for i in range(records)], pa.binary())
    values = pa.array([bytes([65 + i % 26]) * value_size for i in range(records)], pa.binary())
    return keys, values


#: The benchmark's header column type (KIP-82 headers as the sink receives them).
HEADERS_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


def sample_headers(records: int, per_record: int) -> pa.Array | None:
    """``per_record`` headers (key ``"h"``, 8-byte value) for each of ``records`` rows."""
    if per_record == 0:
        return None
    row = [{"key": "h", "value": b"12345678"}] * per_record
    return pa.array([row] * records, HEADERS_TYPE)


def encode_all(
    encode: Callable, keys: pa.Array, values: pa.Array, headers: pa.Array | None = None
) -> list[bytes]:
    """Every row into consecutive sections of one ``BATCH_SIZE`` batch each."""
    sections = []
    start = 0
    while start < len(values):
        data, taken = encode(
            keys,
            values,
            headers,
            start,
            first_offset_delta=0,
            timestamp_delta=0,
            budget=BATCH_SIZE - RECORD_BATCH_OVERHEAD,
        )
        sections.append(data)
        start += taken
    return sections


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per implementation; 2 when accel is not built."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--headers", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        from spark_kafka_py.records._accel import encode_records_section_accel
    except ImportError:
        print("the Cython extension is not built: nothing to compare", file=sys.stderr)
        return 2
    keys, values = sample_columns(args.records, args.value_size)
    headers = sample_headers(args.records, args.headers)
    reference = encode_all(_encode_records_section_pure, keys, values, headers)
    size = sum(map(len, reference))
    print(f"{args.records:,} records, {size / 1e6:.1f} MB in {len(reference):,} sections")
    for name, encode in (
        ("pure", _encode_records_section_pure),
        ("accel", encode_records_section_accel),
    ):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            sections = encode_all(encode, keys, values, headers)
            times.append(time.perf_counter() - t0)
            if sections != reference:
                raise SystemExit(f"{name}: sections differ from the pure encoder's")
        t = statistics.median(times)
        print(
            f"{name:5s} {args.records / t:>14,.0f} rows/s {size / t / 1e6:>9.1f} MB/s "
            f"(median of {args.repeat}: {t:.3f} s; runs {', '.join(f'{x:.3f}' for x in times)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
