"""Batch read throughput: ``format("pykafka")`` against Spark's built-in ``format("kafka")``.

Same as ``spark-kafka-py bench batch``: both sources read the same topics (one per codec,
written by Kafka's Java producer: 16-byte keys, 100-byte values) on the same local broker in
the same run, ``spark.read.format(...).load().write.format("noop")``, local[2]; one warm-up
read per source and topic, then the sources alternate; prints records/s, MB/s and the ratio
pykafka / kafka (medians of ``--repeat`` runs). See :mod:`benchmarks.cli` for the options.

Usage::

    python benchmarks/batch_read.py [--records 5000000] [--partitions 4]
        [--codecs none,lz4,zstd] [--repeat 2] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult

__all__ = ["bench_batch"]


def _time_batch_read(spark: Any, fmt: str, bootstrap: str, topic: str) -> float:
    start = time.perf_counter()
    (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )
    return time.perf_counter() - start


def bench_batch(
    spark: Any,
    bootstrap: str,
    topics: dict[str, str],
    records: int,
    record_bytes: int,
    repeat: int = 2,
) -> list[BenchResult]:
    """Batch read throughput of ``pykafka`` and ``kafka`` on each topic (codec -> topic).

    One warm-up read per source and topic, then ``repeat`` alternating timed reads.
    """
    out = []
    for case, topic in topics.items():
        runs: dict[str, list[float]] = {"pykafka": [], "kafka": []}
        for fmt in runs:
            _time_batch_read(spark, fmt, bootstrap, topic)
        for _ in range(repeat):
            for fmt in runs:
                runs[fmt].append(_time_batch_read(spark, fmt, bootstrap, topic))
        out.append(
            BenchResult(
                "batch",
                case,
                "pykafka",
                "kafka (built-in)",
                records,
                records * record_bytes / 1e6,
                statistics.median(runs["pykafka"]),
                statistics.median(runs["kafka"]),
                runs,
            )
        )
    return out


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["batch", *sys.argv[1:]]))
