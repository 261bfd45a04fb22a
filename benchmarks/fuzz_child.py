"""One fuzzing process of :mod:`benchmarks.fuzz`: one target under atheris (libFuzzer).

Usage (started by :func:`benchmarks.fuzz.run_target`, which sets the environment below)::

    python benchmarks/fuzz_child.py TARGET --runs N --stats FILE --artifacts DIR CORPUS SEEDS...

Every input goes through :class:`Meter`, which counts it and checks the limits of one input:

- outcome: returns, or raises :class:`~spark_kafka_py.errors.KafkaError` (typed); any other
  exception is a finding (its input is saved in the artifacts directory);
- time: more than ``--max-seconds`` (1 s) of CPU time is a finding (CPU time of the fuzzing
  thread, so that a loaded machine's scheduling pauses do not count; the wall time is
  reported too); an input still running after ``--hang-seconds`` of wall time is killed by
  libFuzzer (``-timeout``), and the parent process records it as a hang and starts a new
  process for the remaining executions;
- memory: the peak resident set size during the input minus the resident size before it
  (``/proc/self/clear_refs`` resets the kernel's high-water mark ``VmHWM`` to the current size
  before each input), and the peak bytes of pyarrow's memory pool during the input (a fresh
  ``pyarrow.proxy_memory_pool`` as the default pool for each input; ``max_memory()``), each
  at most ``--max-extra-bytes`` (8 MiB) beyond the input's size. The resident size sees what
  ``tracemalloc`` cannot: ``malloc`` in the accelerated decoder, Arrow's buffers and the
  codecs' buffers. The parent sets ``ARROW_DEFAULT_MEMORY_POOL=system`` and fixed glibc
  ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` (128 KiB) so that freed memory goes
  back to the kernel and a large allocation always shows in the resident size, rather than
  reusing pages an earlier input left in an allocator's cache.

Statistics go to ``--stats`` (JSON) every few seconds and at the end: executions, typed
errors, the slowest input, the largest peaks, findings (kind, exception, where, count, the
first input's file). The process ends itself after ``--runs`` executions.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import hashlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import atheris

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.fuzz_meter import PeakMeter

#: Modules whose code is instrumented for coverage feedback, per target (beyond ours).
_INSTRUMENT_EXTRA = {"oauth": ["http", "urllib", "json", "email"]}


class Meter:
    """Runs one input through the target and checks its limits (see the module docstring)."""

    def __init__(
        self, target: str, args: argparse.Namespace, kafka_error: type, accel: bool
    ) -> None:
        self.target = target
        self.accel = accel
        self.kafka_error = kafka_error
        self.runs = args.runs
        self.max_seconds = args.max_seconds
        self.max_extra = args.max_extra_bytes
        self.artifacts = Path(args.artifacts)
        self.stats_path = Path(args.stats)
        self.peak_meter = PeakMeter()
        self.executions = 0
        self.typed = 0
        self.start = time.monotonic()
        self.last_write = self.start
        self.max_time = (0.0, 0)  # CPU seconds, input size
        self.max_wall = 0.0  # seconds
        self.max_rss = (0, 0)  # bytes above the resident size before the input, input size
        self.max_arrow = (0, 0)  # peak Arrow pool bytes, input size
        self.max_input = 0
        self.findings: dict[str, dict[str, Any]] = {}

    def __call__(self, fn: Any, data: bytes) -> None:
        peak = self.peak_meter.measure(lambda: fn(data))
        size = len(data)
        self.executions += 1
        self.max_input = max(self.max_input, size)
        if peak.cpu_seconds > self.max_time[0]:
            self.max_time = (peak.cpu_seconds, size)
        self.max_wall = max(self.max_wall, peak.seconds)
        if peak.rss_bytes > self.max_rss[0]:
            self.max_rss = (peak.rss_bytes, size)
        if peak.arrow_bytes > self.max_arrow[0]:
            self.max_arrow = (peak.arrow_bytes, size)
        if isinstance(peak.error, self.kafka_error):
            self.typed += 1
        elif peak.error is not None:
            self.finding("exception", data, peak.error)
        if peak.cpu_seconds > self.max_seconds:
            self.finding(
                "slow", data, None, f"{peak.cpu_seconds:.2f} s CPU ({peak.seconds:.2f} s wall)"
            )
        if max(peak.rss_bytes, peak.arrow_bytes) > self.max_extra + size:
            self.finding(
                "memory",
                data,
                None,
                f"peak RSS +{peak.rss_bytes:,} B, Arrow pool peak {peak.arrow_bytes:,} B, "
                f"input {size:,} B",
            )
        if self.executions >= self.runs:
            self.write()
            sys.stdout.flush()
            os._exit(0)
        if time.monotonic() - self.last_write > 5:
            self.write()

    def finding(self, kind: str, data: bytes, exc: BaseException | None, detail: str = "") -> None:
        """Record a finding (deduplicated by kind, exception type and innermost frame) and
        save its input as ``<artifacts>/<target>-<kind>-<sha1>``."""
        where = ""
        if exc is not None:
            frames = traceback.extract_tb(exc.__traceback__)
            ours = [f for f in frames if "spark_kafka_py" in f.filename] or frames
            if ours:
                f = ours[-1]
                where = f"{f.filename.split('site-packages/')[-1]}:{f.lineno} ({f.name})"
            detail = f"{type(exc).__name__}: {str(exc)[:300]}"
        key = f"{kind}|{type(exc).__name__ if exc else ''}|{where}"
        entry = self.findings.get(key)
        if entry is None:
            digest = hashlib.sha1(data).hexdigest()
            path = self.artifacts / f"{self.target}-{kind}-{digest}"
            path.write_bytes(data)
            entry = self.findings[key] = {
                "kind": kind,
                "where": where,
                "detail": detail,
                "input": str(path),
                "count": 0,
            }
            self.write()
        entry["count"] += 1

    def write(self) -> None:
        """Write the statistics so far to the stats file (atomically)."""
        elapsed = time.monotonic() - self.start
        stats = {
            "target": self.target,
            "accel": self.accel,
            "executions": self.executions,
            "typed_errors": self.typed,
            "seconds": elapsed,
            "max_time_s": self.max_time[0],
            "max_time_input_bytes": self.max_time[1],
            "max_wall_s": self.max_wall,
            "max_rss_peak_bytes": self.max_rss[0],
            "max_rss_peak_input_bytes": self.max_rss[1],
            "max_arrow_peak_bytes": self.max_arrow[0],
            "max_arrow_peak_input_bytes": self.max_arrow[1],
            "max_input_bytes": self.max_input,
            "max_arrow_pools_alive": self.peak_meter.max_live_pools,
            "findings": list(self.findings.values()),
        }
        tmp = self.stats_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats, indent=1), encoding="utf-8")
        os.replace(tmp, self.stats_path)
        self.last_write = time.monotonic()


def main() -> None:
    """Parse the arguments, import the targets instrumented, and fuzz until ``--runs``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("target")
    p.add_argument("corpus", nargs="+", help="working corpus directory, then seed directories")
    p.add_argument("--runs", type=int, required=True, help="executions, then exit")
    p.add_argument("--stats", required=True, help="JSON statistics file")
    p.add_argument("--artifacts", required=True, help="directory of finding inputs")
    p.add_argument("--max-seconds", type=float, default=1.0)
    p.add_argument("--hang-seconds", type=int, default=20)
    p.add_argument("--max-extra-bytes", type=int, default=8 << 20)
    p.add_argument("--max-len", type=int, default=65536, help="largest input (bytes)")
    p.add_argument("--seed", type=int, default=0, help="libFuzzer -seed (0: random)")
    args = p.parse_args()
    include = ["spark_kafka_py", *_INSTRUMENT_EXTRA.get(args.target, [])]
    with atheris.instrument_imports(include=include):
        from benchmarks import fuzz_targets
        from spark_kafka_py.errors import KafkaError
    fn = fuzz_targets.TARGETS[args.target][0]
    meter = Meter(args.target, args, KafkaError, fuzz_targets.ACCEL)
    for seed_dir in args.corpus[1:]:  # warm up: lazy imports and caches are not per input
        for path in sorted(Path(seed_dir).glob("*"))[:50]:
            with contextlib.suppress(Exception):  # the same inputs run measured right after
                fn(path.read_bytes())
    Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    libfuzzer = [
        sys.argv[0],
        "-runs=-1",
        f"-timeout={args.hang_seconds}",
        f"-max_len={args.max_len}",
        "-rss_limit_mb=4096",
        f"-seed={args.seed}",
        f"-artifact_prefix={args.artifacts}/{args.target}-",
        "-print_final_stats=0",
        "-print_pcs=0",
        *args.corpus,
    ]

    def one_input(data: bytes) -> None:
        if not meter.executions:
            # after libFuzzer's own handlers: a crash prints the Python stack, then libFuzzer
            # saves the input
            faulthandler.enable(all_threads=True)
        meter(fn, data)

    atheris.Setup(libfuzzer, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
