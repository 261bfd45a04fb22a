"""The reading process of the memory benchmark (:mod:`benchmarks.memory`), run on its own.

Reads offsets ``0`` to ``END`` of partition 0 of ``TOPIC`` with our fetcher
(:func:`spark_kafka_py.consumer.fetcher.read_range`, ``max.partition.fetch.bytes`` =
``FETCH_BYTES``) and writes every batch as an Arrow IPC stream, as a PySpark Python worker
does, then prints one JSON line: ``rows``, ``base_mb`` (resident MiB after the imports and a
first small read, as in a worker that ran a task before), ``peak_mb`` (VmHWM, MiB),
``largest_batch_mb`` (Arrow bytes of the largest batch / 1e6) and ``secs`` (seconds of the
timed read). Linux only (``/proc/self/status``).

Usage::

    python benchmarks/memory_reader.py BOOTSTRAP TOPIC END FETCH_BYTES
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

import pyarrow as pa

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition

__all__ = ["main"]


def _status_mb(field: str) -> float:
    """A ``/proc/self/status`` field given in kB (``VmHWM``, ``VmRSS``), in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(argv: Sequence[str] | None = None) -> int:
    """Read the partition (see the module docstring), print the JSON line, return 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bootstrap", help="bootstrap servers, host:port,...")
    parser.add_argument("topic", help="topic whose partition 0 is read")
    parser.add_argument("end", type=int, help="end offset (exclusive)")
    parser.add_argument("fetch_bytes", type=int, help="max.partition.fetch.bytes, bytes")
    args = parser.parse_args(argv)
    settings = ConsumerSettings(
        ClientConfig.from_bootstrap(args.bootstrap), max_partition_fetch_bytes=args.fetch_bytes
    )
    tp = TopicPartition(args.topic, 0)
    # warm up imports and one batch, as a Python worker that ran a task before
    for _batch in read_range(settings, tp, 0, min(args.end, 1000)):
        pass
    base = _status_mb("VmRSS")
    rows = 0
    largest = 0
    t0 = time.perf_counter()
    for batch in read_range(settings, tp, 0, args.end):
        # what PySpark does with each batch: an Arrow IPC stream to the JVM
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        largest = max(largest, batch.nbytes)
        rows += batch.num_rows
    secs = time.perf_counter() - t0
    result = {
        "rows": rows,
        "base_mb": base,
        "peak_mb": _status_mb("VmHWM"),
        "largest_batch_mb": largest / 1e6,
        "secs": secs,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
