"""Memory: peak resident memory of a fresh Python process reading one large partition with our
fetcher, every batch written as Arrow IPC (as a PySpark Python worker does), once per
``max.partition.fetch.bytes``. Same as ``spark-kafka-py bench memory``.

The reading process is :mod:`benchmarks.memory_reader`, started by its file path with this
interpreter, so that nothing of this process (Spark, the producer) counts in its memory.

Usage::

    python benchmarks/memory.py [--memory-records 18500000]
        [--memory-fetch-bytes 1048576,8388608] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MEMORY_READER", "bench_memory"]

#: The reading process's program.
MEMORY_READER = Path(__file__).resolve().with_name("memory_reader.py")


def bench_memory(
    bootstrap: str, topic: str, records: int, fetch_sizes: Sequence[int]
) -> list[dict[str, float]]:
    """Peak RSS of a fresh Python process reading partition 0 of ``topic`` (``records``
    records) with our fetcher and writing every batch as an Arrow IPC stream (as a PySpark
    Python worker does), once per ``max.partition.fetch.bytes`` in ``fetch_sizes``.

    Returns:
        Per fetch size: ``rows``, ``base_mb`` (RSS after imports and a first small read),
        ``peak_mb`` (VmHWM), ``largest_batch_mb`` (Arrow bytes of the largest batch), ``secs``,
        ``max_partition_fetch_bytes``.

    Raises:
        RuntimeError: the reading process failed (message has its stderr).
    """
    out = []
    for size in fetch_sizes:
        proc = subprocess.run(
            [sys.executable, str(MEMORY_READER), bootstrap, topic, str(records), str(size)],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"memory benchmark child failed:\n{proc.stderr[-3000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["max_partition_fetch_bytes"] = size
        out.append(res)
    return out


if __name__ == "__main__":
    if not __package__:  # run as a file: the checkout's root on the path
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.cli import main

    raise SystemExit(main(["memory", *sys.argv[1:]]))
