"""Where an executor's Python worker spends a batch read: py-spy over PySpark's Python workers.

Writes one topic per codec with Kafka's Java producer (as ``spark-kafka-py bench batch``),
starts a local[2] Spark session, reads each topic once untimed (``format(...).load()`` into
the ``noop`` sink), then samples every PySpark Python worker with ``py-spy record
--subprocesses`` (attached to PySpark's ``pyspark.daemon``, whose forked workers run the
read tasks; ``--nonblocking``, so the workers are never paused) during one more read, and
prints the functions that took the most samples: by own time (the innermost Python frame;
time in C extensions such as pyarrow or the accelerated decoder counts for the Python frame
calling them) and by inclusive time, as a share of the workers' non-idle samples.

``--source limit`` profiles the limit source of the batch benchmark
(:mod:`benchmarks.limit_source`) instead: what PySpark itself costs per batch.

Needs ``py-spy`` (``python -m pip install py-spy``) and permission to ptrace the workers
(they are descendants of this process, which is enough under Yama's ``ptrace_scope`` 1).

Usage::

    python benchmarks/profile_read.py [--records 2000000] [--codecs none,lz4,zstd]
        [--source pykafka|limit] [--rate 200] [--top 20] [--raw-dir DIR]
        [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import local_broker, produce_bench_data
from benchmarks.limit_source import LIMIT_FORMAT, LimitDataSource, pykafka_batches

__all__ = ["Profile", "main", "parse_raw"]


class Profile:
    """py-spy's raw (collapsed) samples of the workers: own and inclusive samples per
    function (``name (file:line)`` without the line), and the total."""

    def __init__(self) -> None:
        self.own: collections.Counter[str] = collections.Counter()
        self.inclusive: collections.Counter[str] = collections.Counter()
        self.total = 0

    def top(self, n: int) -> str:
        """Markdown table of the ``n`` functions with the most own samples, and their
        inclusive share."""
        lines = [
            f"| function | own % | inclusive % |  ({self.total:,} samples) |",
            "|---|---:|---:|---|",
        ]
        for name, count in self.own.most_common(n):
            lines.append(
                f"| `{name}` | {100 * count / self.total:.1f} | "
                f"{100 * self.inclusive[name] / self.total:.1f} | |"
            )
        return "\n".join(lines)

    def top_inclusive(self, n: int) -> str:
        """Markdown list of the ``n`` functions with the most inclusive samples."""
        return "\n".join(
            f"- `{name}`: {100 * count / self.total:.1f}%"
            for name, count in self.inclusive.most_common(n)
        )


def _function(frame: str) -> str:
    """``read (spark_kafka_py/consumer/fetcher.py:123)`` -> ``read (consumer/fetcher.py)``:
    the line dropped (one entry per function), the path shortened to its last two parts."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    return f"{name} ({'/'.join(Path(path).parts[-2:])})"


def parse_raw(lines: Iterable[str], daemon_pid: int) -> Profile:
    """Add up py-spy ``--format raw`` lines (``frame;frame;... count``, outermost first; with
    ``--subprocesses`` the first frames are ``process PID:"command"``, its parents' first) of
    every process but the daemon ``daemon_pid``."""
    profile = Profile()
    for line in lines:
        stack, _, count_text = line.rstrip("\n").rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = stack.split(";")
        pid = ""
        while frames and frames[0].startswith("process "):  # parents first, then the process
            pid = frames[0].split()[1].split(":")[0]
            frames = frames[1:]
        if pid == str(daemon_pid):
            continue
        if not frames:
            continue
        count = int(count_text)
        names = [_function(f) for f in frames]
        profile.total += count
        profile.own[names[-1]] += count
        for name in set(names):
            profile.inclusive[name] += count
    return profile


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children[int(fields[1])].append(int(stat.parent.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _daemon_pid() -> int:
    """The ``pyspark.daemon`` process started by this driver's JVM."""
    for pid in _descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"pyspark.daemon" in cmdline:
            return pid
    raise RuntimeError("no pyspark.daemon among this process's descendants (read once first)")


def _read(spark: Any, fmt: str, options: dict[str, str]) -> float:
    start = time.perf_counter()
    reader = spark.read.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, value)
    reader.load().write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def profile_read(
    spark: Any, fmt: str, options: dict[str, str], rate: int, raw: Path
) -> tuple[Profile, float]:
    """Read once untimed, then once under py-spy; the workers' profile and that read's
    seconds. ``raw``: where py-spy's raw output goes."""
    _read(spark, fmt, options)
    daemon = _daemon_pid()
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy is not installed: python -m pip install py-spy")
    proc = subprocess.Popen(
        [spy, "record", "--pid", str(daemon), "--subprocesses", "--nonblocking",
         "--rate", str(rate), "--format", "raw", "--output", str(raw)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(2.0)  # py-spy attaches
    try:
        secs = _read(spark, fmt, options)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    if not raw.exists():
        raise RuntimeError(f"py-spy wrote no profile: {err[-2000:]}")
    with raw.open(encoding="utf-8") as lines:
        return parse_raw(lines, daemon), secs


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, profile, print the tables; return 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=2_000_000)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--codecs", default="none,lz4,zstd")
    p.add_argument("--source", choices=("pykafka", "limit"), default="pykafka")
    p.add_argument("--rate", type=int, default=200, help="samples per second per process")
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--raw-dir", help="keep py-spy's raw output here")
    p.add_argument("--json", help="also write the profiles to this JSON file")
    p.add_argument("--bootstrap-servers", help="use this cluster instead of a local broker")
    args = p.parse_args(argv)
    from spark_kafka_py.testing.spark import local_spark_session

    raw_dir = Path(args.raw_dir or tempfile.mkdtemp(prefix="profile-read-"))
    raw_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"command": " ".join(sys.argv), "profiles": {}}
    with local_broker(args.bootstrap_servers) as bootstrap:
        topics = {}
        for codec in [c.strip() for c in args.codecs.split(",") if c.strip()]:
            topic = f"profile-{codec}-{args.records}-{uuid.uuid4().hex[:8]}"
            produce_bench_data(
                bootstrap, topic, args.records, partitions=args.partitions, compression=codec
            )
            topics[codec] = topic
        spark = local_spark_session("spark-kafka-py profile", with_kafka_connector=False)
        try:
            spark.dataSource.register(LimitDataSource)
            for codec, topic in topics.items():
                options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
                fmt = "pykafka"
                if args.source == "limit":
                    fmt = LIMIT_FORMAT
                    options = {"batches": json.dumps(pykafka_batches(options)), "topic": topic}
                load = os.getloadavg()[0]
                profile, secs = profile_read(
                    spark, fmt, options, args.rate, raw_dir / f"{args.source}-{codec}.txt"
                )
                print(
                    f"\n### {args.source}, {codec}: {args.records:,} records in {secs:.2f} s "
                    f"under py-spy, load average {load:.1f} -> {os.getloadavg()[0]:.1f}\n"
                )
                print(profile.top(args.top))
                print("\nInclusive:\n")
                print(profile.top_inclusive(args.top))
                report["profiles"][codec] = {
                    "seconds": secs,
                    "samples": profile.total,
                    "own": profile.own.most_common(args.top),
                    "inclusive": profile.inclusive.most_common(args.top),
                }
        finally:
            spark.stop()
    print(f"\nraw py-spy output: {raw_dir}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
