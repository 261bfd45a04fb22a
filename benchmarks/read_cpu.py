"""CPU per record of our read path without Spark: decode alone, and fetch + decode.

Both numbers are CPU time of this process (``getrusage``: user + system) divided by the
records read, with the page faults counted alongside; they are what the executor's Python
worker spends per record on top of what PySpark itself costs (see the limit of a Python data
source in ``docs/performance.md``).

- ``decode``: the topic's Fetch responses are read into memory once
  (:func:`benchmarks.decoder.fetch_to_memory`, ``max.partition.fetch.bytes`` 1 MiB), then
  ``decode_records`` runs over them, partition after partition, ``--passes`` times.
- ``fetch``: our fetcher end to end over the network (``read_range`` per partition, the
  executor's loop), ``--passes`` times after an untimed one.

The topic must exist (e.g. written by ``spark-kafka-py bench``'s producer:
:func:`benchmarks.harness.produce_bench_data`, or ``--produce N``).

Usage::

    python benchmarks/read_cpu.py --bootstrap-servers HOST:PORT --topic T [--produce 2000000]
        [--codec none] [--mode decode,fetch] [--passes 3]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.decoder import _time_decode, _time_ours_fetch_decode, fetch_to_memory
from benchmarks.harness import produce_bench_data

__all__ = ["main", "measure"]


def _usage() -> tuple[float, int]:
    """(CPU seconds, minor page faults) of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_minflt


def measure(bootstrap: str, topic: str, mode: str, passes: int) -> list[tuple[float, int, int]]:
    """``passes`` timed passes of ``mode`` (``decode`` or ``fetch``) over ``topic``.

    Returns:
        per pass ``(CPU ns per record, page faults, records)``.

    Raises:
        ValueError: an unknown mode.
    """
    from spark_kafka_py.records import decoder

    if mode == "decode":
        fetched = fetch_to_memory(bootstrap, topic)

        def one() -> int:
            return _time_decode(fetched, decoder.decode_records)[1]

    elif mode == "fetch":

        def one() -> int:
            return _time_ours_fetch_decode(bootstrap, topic)[1]

        one()  # untimed: connections, metadata, the first allocations
    else:
        raise ValueError(f"unknown mode {mode!r} (decode or fetch)")
    out = []
    for _ in range(passes):
        cpu0, faults0 = _usage()
        rows = one()
        cpu1, faults1 = _usage()
        out.append(((cpu1 - cpu0) / max(rows, 1) * 1e9, faults1 - faults0, rows))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--produce", type=int, default=0, help="first write N records")
    parser.add_argument("--codec", default="none", help="compression of --produce")
    parser.add_argument("--mode", default="decode,fetch")
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    if args.produce:
        produce_bench_data(args.bootstrap_servers, args.topic, args.produce, compression=args.codec)
    for mode in args.mode.split(","):
        start = time.strftime("%H:%M:%S", time.gmtime())
        for ns, faults, rows in measure(args.bootstrap_servers, args.topic, mode, args.passes):
            print(
                f"{mode} {args.topic} {start} UTC: {ns:.1f} ns/record CPU, {faults} page faults, "
                f"{rows} records",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
