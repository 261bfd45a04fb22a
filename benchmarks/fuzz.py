"""Fuzzing: coverage-guided fuzzing of every decoder that sees network bytes, with figures.

Same as ``spark-kafka-py bench fuzz``. Targets (:mod:`benchmarks.fuzz_targets`): response
framing, every response schema at every version, records sections (v2 batches and legacy
v0/v1 message sets, every codec, the pure and the accelerated decoder compared), SASL server
messages (SCRAM, OAUTHBEARER, the whole exchange) and the OAuth token endpoint's HTTP answer.

Each target runs in its own process (:mod:`benchmarks.fuzz_child`) under atheris, Google's
coverage-guided Python fuzzer built on libFuzzer. An input may return or raise a
:class:`~spark_kafka_py.errors.KafkaError`; anything else is a finding, as are an input taking
more than 1 s of CPU time and one allocating more than 8 MiB beyond its own size (peak
resident memory of the fuzzing process and peak bytes of pyarrow's memory pool, per input).
Findings' inputs are kept in ``<work>/artifacts``.

Seeds: real broker traffic. A :class:`~spark_kafka_py.testing.faultproxy.FaultProxy` in front
of a broker captures the responses of a read of one topic per codec (Metadata, ListOffsets,
Fetch, the group requests, ApiVersions) and :func:`benchmarks.fuzz_targets.seed_inputs` turns
them into inputs; :func:`benchmarks.fuzz_targets.synthetic_seeds` adds what a plaintext broker
cannot send (legacy messages, SASL, token endpoint answers). Seeds are cached in
``~/.cache/spark-kafka-py/fuzz-seeds`` (``--seeds``); without them, a local broker is started
(or ``--bootstrap-servers`` used) to capture them.

Usage (the long run of ``docs/reliability.md``, then the short one CI runs)::

    nice -n 10 python benchmarks/fuzz.py --executions 10000000 --jobs 2 --json fuzz.json
    python benchmarks/fuzz.py --executions 100000
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

__all__ = [
    "CHILD",
    "WEIGHTS",
    "bench_fuzz",
    "capture_seeds",
    "default_seed_dir",
    "format_fuzz_table",
    "main",
    "run_target",
    "write_seeds",
]

#: The fuzzing process's program.
CHILD = Path(__file__).resolve().with_name("fuzz_child.py")
#: Share of the executions per target (about in proportion to their speed).
WEIGHTS = {"records": 3.5, "sasl": 2.5, "responses": 2.0, "oauth": 1.0, "framing": 1.0}
#: Limits of one input: CPU time (s) and bytes beyond the input's size.
MAX_SECONDS = 1.0
MAX_EXTRA_BYTES = 8 << 20
#: Version of the input layouts of benchmarks.fuzz_targets (seeds of another are not reused).
SEED_LAYOUT = "v2"
#: Codecs of the seed topics (producer ``compression.type``).
SEED_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: Environment of a fuzzing process: freed memory goes back to the kernel at once, so that
#: the per-input peak resident size sees every large allocation (see benchmarks.fuzz_child).
CHILD_ENV = {
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "MALLOC_MMAP_THRESHOLD_": "131072",
    "MALLOC_TRIM_THRESHOLD_": "131072",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
#: Exit status of libFuzzer when an input ran past ``-timeout`` / above ``-rss_limit_mb``.
_LIBFUZZER_ARTIFACTS = {"timeout": "hang", "oom": "out of memory", "crash": "crash"}


def default_seed_dir() -> Path:
    """``<cache>/fuzz-seeds/<layout>`` (``~/.cache/spark-kafka-py`` or
    ``$SPARK_KAFKA_PY_CACHE``)."""
    from spark_kafka_py.testing.jars import cache_dir

    return cache_dir() / "fuzz-seeds" / SEED_LAYOUT


# ------------------------------------------------------------------------------------ seeds


def capture_seeds(bootstrap: str, *, records: int = 40) -> list[tuple[int, int, bytes]]:
    """Real broker traffic: ``(api_key, api_version, response frame)`` of a read through a
    :class:`~spark_kafka_py.testing.faultproxy.FaultProxy` in front of ``bootstrap``.

    One topic per codec of :data:`SEED_CODECS`, written by Kafka's Java producer in small
    batches (keys, null keys and values, headers, values of 0 to 300 bytes); then through the
    proxy: Metadata, ListOffsets (earliest, latest, by time), Fetch of each topic with 2 KiB
    per partition (so responses end inside a batch), and a consumer group's FindCoordinator,
    JoinGroup, SyncGroup, Heartbeat, OffsetCommit, OffsetFetch, LeaveGroup.

    Raises:
        spark_kafka_py.errors.KafkaError: the broker failed a request.
        spark_kafka_py.testing.tools.KafkaToolError: a topic could not be created or written.
    """
    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.consumer.fetcher import PartitionFetcher
    from spark_kafka_py.consumer.group.classic.member import GroupMember
    from spark_kafka_py.consumer.group.config import GroupConfig
    from spark_kafka_py.consumer.offsets import list_offsets
    from spark_kafka_py.consumer.settings import ConsumerSettings
    from spark_kafka_py.consumer.types import TopicPartition
    from spark_kafka_py.testing.faultproxy import FaultProxy
    from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

    run = uuid.uuid4().hex[:8]
    topics = {codec: f"fuzz-seeds-{codec}-{run}" for codec in SEED_CODECS}
    for codec, topic in topics.items():
        create_topic(bootstrap, topic, partitions=1)
        produce(
            bootstrap,
            topic,
            [
                ProducedRecord(
                    None if i % 5 == 0 else f"key-{i}",
                    None if i % 7 == 3 else "v" * (i * 37 % 300),
                    headers=[("h", f"{i}"), ("null", None)] if i % 3 == 0 else [],
                    partition=0,
                )
                for i in range(records)
            ],
            compression=codec,
            batch_size=512,
            linger_ms=0,
        )
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with FaultProxy(host, int(port)) as proxy:
        frames = proxy.capture()
        config = ClientConfig.from_bootstrap(bootstrap, request_timeout_ms=10_000)
        settings = ConsumerSettings(config, max_partition_fetch_bytes=2048, fetch_max_wait_ms=50)
        client = KafkaClient(config, socket_factory=proxy.socket_factory())
        try:
            for topic in topics.values():
                tp = TopicPartition(topic, 0)
                list_offsets(client, {tp: -2})
                list_offsets(client, {tp: -1})
                list_offsets(client, {tp: int(time.time() * 1000) - 3_600_000})
                fetcher = PartitionFetcher(client, tp, settings, poll_timeout_ms=30_000)
                for _ in fetcher.read(0, records):
                    pass
            topic = topics["none"]
            member = GroupMember(
                GroupConfig(group_id=f"fuzz-seeds-{run}"),
                client,
                lambda names: dict.fromkeys(names, 1),
            )
            assigned = member.ensure_active([topic], {topic: 1})
            member.heartbeat_once()
            member.commit(dict.fromkeys(assigned, 1))
            member.fetch_committed(assigned)
            member.leave()
        finally:
            client.close()
        return list(frames)


def write_seeds(dest: Path, inputs: dict[str, list[bytes]]) -> dict[str, int]:
    """Write each target's inputs as ``dest/<target>/<sha1>``; return the count per target."""
    counts = {}
    for target, items in inputs.items():
        folder = dest / target
        folder.mkdir(parents=True, exist_ok=True)
        for data in items:
            (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        counts[target] = len(list(folder.iterdir()))
    return counts


def ensure_seeds(seed_dir: Path, bootstrap: str | None) -> dict[str, int]:
    """Seeds in ``seed_dir``: captured now (from ``bootstrap``, or a local broker started for
    it) unless ``seed_dir/captured`` says they already were; synthetic ones added. Returns
    the number of seeds per target."""
    from benchmarks import fuzz_targets
    from benchmarks.harness import local_broker

    marker = seed_dir / "captured"
    if not marker.exists():
        with local_broker(bootstrap) as servers:
            frames = capture_seeds(servers)
        write_seeds(seed_dir, fuzz_targets.seed_inputs(frames))
        marker.write_text(f"{len(frames)} response frames\n", encoding="utf-8")
    write_seeds(seed_dir, fuzz_targets.synthetic_seeds())
    return {t: len(list((seed_dir / t).glob("*"))) for t in fuzz_targets.TARGETS}


# ---------------------------------------------------------------------------------- running


def run_target(
    target: str,
    runs: int,
    *,
    seed_dir: Path,
    work_dir: Path,
    nice: int = 0,
    max_restarts: int = 50,
    max_len: int = 65536,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fuzz ``target`` for ``runs`` executions in fresh processes; return its statistics.

    A process killed by libFuzzer (an input over its ``-timeout``, or the process above
    ``-rss_limit_mb``) counts as a finding; a new process goes on with the remaining
    executions and the same working corpus, at most ``max_restarts`` times.

    Returns:
        The summed statistics of :mod:`benchmarks.fuzz_child` plus ``processes``,
        ``accel`` and ``exec_per_s``.
    """
    corpus = work_dir / "corpus" / target
    artifacts = work_dir / "artifacts"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    seeds = seed_dir / target
    seeds.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env.update(CHILD_ENV)
    total: dict[str, Any] = {"target": target, "executions": 0, "typed_errors": 0, "seconds": 0.0}
    findings: list[dict[str, Any]] = []
    processes = 0
    while total["executions"] < runs and processes <= max_restarts:
        stats_path = work_dir / f"{target}-{processes}.json"
        before = set(artifacts.glob(f"{target}-*"))
        cmd = [
            sys.executable,
            str(CHILD),
            target,
            str(corpus),
            str(seeds),
            "--runs",
            str(runs - total["executions"]),
            "--stats",
            str(stats_path),
            "--artifacts",
            str(artifacts),
            "--max-seconds",
            str(MAX_SECONDS),
            "--max-extra-bytes",
            str(MAX_EXTRA_BYTES),
            "--max-len",
            str(max_len),
        ]
        processes += 1
        with open(work_dir / f"{target}-{processes}.log", "wb") as out:
            proc = subprocess.run(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=(lambda: os.nice(nice)) if nice else None,
                check=False,
            )
        stats: dict[str, Any] = {}
        if stats_path.exists():
            stats = json.loads(stats_path.read_text(encoding="utf-8"))
        _add(total, stats, findings)
        if proc.returncode != 0:
            new = sorted(set(artifacts.glob(f"{target}-*")) - before)
            killed: list[Path | None] = [
                p
                for p in new
                if any(p.name.startswith(f"{target}-{k}-") for k in _LIBFUZZER_ARTIFACTS)
            ]
            for path in killed or [None]:
                kind = "exit" if path is None else path.name.split("-")[1]
                findings.append(
                    {
                        "kind": _LIBFUZZER_ARTIFACTS.get(kind, f"exit {proc.returncode}"),
                        "where": "",
                        "detail": f"process ended with status {proc.returncode}",
                        "input": str(path) if path else "",
                        "count": 1,
                    }
                )
            if proc.returncode < 0 or not stats.get("executions"):
                log(f"{target}: process {processes} ended with {proc.returncode}; stopping")
                break  # killed from outside (or by the kernel), or no progress
            log(f"{target}: process {processes} ended with {proc.returncode}; restarting")
    total["processes"] = processes
    total["findings"] = _merge(findings)
    total["exec_per_s"] = total["executions"] / total["seconds"] if total["seconds"] else 0.0
    return total


def _add(total: dict[str, Any], stats: dict[str, Any], findings: list[dict[str, Any]]) -> None:
    for key in ("executions", "typed_errors", "seconds"):
        total[key] += stats.get(key, 0)
    for key, size_key in (
        ("max_time_s", "max_time_input_bytes"),
        ("max_rss_peak_bytes", "max_rss_peak_input_bytes"),
        ("max_arrow_peak_bytes", "max_arrow_peak_input_bytes"),
        ("max_wall_s", None),
        ("max_input_bytes", None),
    ):
        if stats.get(key, 0) >= total.get(key, 0):
            total[key] = stats.get(key, 0)
            if size_key:
                total[size_key] = stats.get(size_key, 0)
    for key in ("accel",):
        if key in stats:
            total[key] = stats[key]
    findings += stats.get("findings", [])


def _merge(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in findings:
        key = (f["kind"], f["where"], f["detail"].split(":")[0] if f["where"] else f["detail"])
        if key in merged:
            merged[key]["count"] += f["count"]
        else:
            merged[key] = dict(f)
    return list(merged.values())


def bench_fuzz(
    executions: int,
    *,
    targets: Sequence[str] = tuple(WEIGHTS),
    seed_dir: Path,
    work_dir: Path,
    jobs: int = 2,
    nice: int = 0,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Fuzz ``targets`` for ``executions`` executions in all, shared by :data:`WEIGHTS`,
    ``jobs`` processes at a time; return each target's statistics (see :func:`run_target`)."""
    weight = sum(WEIGHTS[t] for t in targets)
    plan = [(t, max(1, round(executions * WEIGHTS[t] / weight))) for t in targets]
    results: dict[str, dict[str, Any]] = {}
    pending = list(plan)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not pending:
                    return
                target, runs = pending.pop(0)
            log(f"fuzzing {target}: {runs:,} executions")
            stats = run_target(
                target, runs, seed_dir=seed_dir, work_dir=work_dir, nice=nice, log=log
            )
            log(
                f"{target}: {stats['executions']:,} executions, {stats['exec_per_s']:,.0f}/s, "
                f"{len(stats['findings'])} findings"
            )
            with lock:
                results[target] = stats

    threads = [threading.Thread(target=worker) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[t] for t, _ in plan if t in results]


# ----------------------------------------------------------------------------------- output


def format_fuzz_table(results: Sequence[dict[str, Any]]) -> str:
    """Markdown table: executions, exec/s, typed errors, findings, slowest input, largest
    per-input peaks (resident memory above the size before the input, Arrow pool)."""
    from benchmarks.fuzz_targets import TARGETS

    lines = [
        "| target | decodes | executions | exec/s | typed errors | findings | "
        "max CPU time/input | max peak RSS/input | max Arrow peak/input |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['target']} | {TARGETS[r['target']][1]} | {r['executions']:,} | "
            f"{r['exec_per_s']:,.0f} | {r['typed_errors']:,} | {len(r['findings'])} | "
            f"{r.get('max_time_s', 0) * 1000:.1f} ms | "
            f"{r.get('max_rss_peak_bytes', 0) / 2**20:.2f} MiB | "
            f"{r.get('max_arrow_peak_bytes', 0) / 2**20:.2f} MiB |"
        )
    execs = sum(r["executions"] for r in results)
    lines.append(f"| all | | {execs:,} | | | {sum(len(r['findings']) for r in results)} | | | |")
    notes = []
    for r in results:
        for f in r["findings"]:
            notes.append(
                f"- {r['target']}: {f['kind']} x{f['count']}: {f['detail']} "
                f"{f['where']} (input {f['input']})"
            )
    return "\n".join(lines + (["", *notes] if notes else []))


def run(args: argparse.Namespace) -> int:
    """Seeds, fuzzing, report; return 0, or 1 when there were findings."""
    from benchmarks.fuzz_targets import ACCEL, TARGETS

    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        raise SystemExit(f"unknown fuzz target(s): {', '.join(sorted(unknown))}")
    if args.require_accel and not ACCEL:
        raise SystemExit("the accelerated records decoder is not built (--require-accel)")
    seed_dir = Path(args.seeds) if args.seeds else default_seed_dir()
    seeds = ensure_seeds(seed_dir, args.bootstrap_servers)
    print(f"seeds in {seed_dir}: {seeds}", flush=True)
    with _work_dir(args.work_dir) as work:
        start = time.monotonic()
        results = bench_fuzz(
            args.executions,
            targets=targets,
            seed_dir=seed_dir,
            work_dir=work,
            jobs=args.jobs,
            nice=args.nice,
            log=lambda m: print(m, flush=True),
        )
        wall = time.monotonic() - start
        print()
        print(format_fuzz_table(results))
        print()
        print(
            f"- {sum(r['executions'] for r in results):,} executions in {wall / 60:.1f} min "
            f"wall time, {args.jobs} processes at a time; accelerated decoder: "
            f"{'yes' if ACCEL else 'NOT BUILT'}; limits per input: {MAX_SECONDS:g} s, "
            f"{MAX_EXTRA_BYTES >> 20} MiB beyond its size"
        )
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    {"results": results, "wall_s": wall, "accel": ACCEL, "seeds": seeds},
                    indent=2,
                ),
                encoding="utf-8",
            )
    return 1 if any(r["findings"] for r in results) else 0


@contextlib.contextmanager
def _work_dir(path: str | None) -> Iterator[Path]:
    if path:
        Path(path).mkdir(parents=True, exist_ok=True)
        yield Path(path)
        return
    tmp = Path(tempfile.mkdtemp(prefix="spark-kafka-py-fuzz-"))
    try:
        yield tmp
    finally:
        if not any((tmp / "artifacts").glob("*")):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"findings' inputs kept in {tmp / 'artifacts'}")


def add_arguments(p: Any) -> None:
    """Add the options of the fuzz benchmark to ``p`` (a parser or an argument group; also
    those of ``spark-kafka-py bench fuzz``)."""
    p.add_argument("--executions", type=int, default=100_000, help="executions over all targets")
    p.add_argument("--targets", default=",".join(WEIGHTS), help="comma separated")
    p.add_argument("--jobs", type=int, default=2, help="fuzzing processes at a time")
    p.add_argument("--nice", type=int, default=0, help="niceness of the fuzzing processes")
    p.add_argument("--seeds", help="seed directory (default: <cache>/fuzz-seeds)")
    p.add_argument("--work-dir", help="corpus and findings (default: a temporary directory)")
    p.add_argument(
        "--require-accel",
        action="store_true",
        help="fail when the accelerated records decoder is not built",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python benchmarks/fuzz.py [options]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--bootstrap-servers", help="capture seeds from this cluster")
    p.add_argument("--json", help="also write the results to this JSON file")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
