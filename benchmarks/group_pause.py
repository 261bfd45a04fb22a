"""The reading pause of a member while another member joins its group: classic eager
(``range``), classic cooperative (``cooperative-sticky``, KIP-429) and the consumer group
protocol (``kafka.group.protocol=consumer``, KIP-848). Same as ``spark-kafka-py bench
group-pause`` (issue 16: "the pause in reading the partitions a member keeps while another
member joins").

No Spark: each member is the stream reader a query's driver holds
(:class:`~spark_kafka_py.spark.source.KafkaStreamReader`, the same object PySpark's driver-side
runner calls), driven by a loop that does what Spark's micro-batch engine does with a
processing-time trigger of ``--trigger-ms``: ``latestOffset(start)`` (the batch boundary, where
the member commits, rejoins or reconciles), ``partitions(start, end)``, then ``read`` of every
planned range (what the executors would do, here in the same thread), ``start = end``. A
producer thread writes one record to every partition every ``--produce-interval-ms`` (ms), so
a member that can read a partition reads records from it at every batch.

One run of a case: a fresh group; member A joins alone and reads all ``--partitions``
partitions for :data:`WARM_S` seconds; member B then joins (its own thread: its first
``initialOffset`` is the JoinGroup or the first heartbeat); the run ends once the group is
settled (each member owns half the partitions and has read from each of them since the join)
and A read :data:`SETTLED_BATCHES` more batches. Measured, from the times at which A's batches
read records, per partition:

- pause (ms): for the partitions A keeps, the longest time between two of A's reads of the
  same partition, from the last read before B's join to the end of the run (the longest over
  A's kept partitions). It includes one trigger interval: a member that never stops reading
  shows about ``--trigger-ms`` plus one batch's time.
- normal gap (ms): the median time between two reads of a partition before B joined, the
  pause a member shows without any rebalance.
- B's first record (ms): from B's start to its first record read, what a joining member pays.

Runs of the three cases alternate (case 1, 2, 3, then again), ``--pause-runs`` each; the table
shows medians and maxima. Classic members use ``kafka.heartbeat.interval.ms`` =
:data:`HEARTBEAT_MS` and ``kafka.session.timeout.ms`` = :data:`SESSION_MS`; the consumer
protocol takes both from the broker, which the benchmark starts with
``group.consumer.heartbeat.interval.ms`` = :data:`HEARTBEAT_MS` (with ``--bootstrap-servers``,
that broker's own setting applies, 5 s by default).

Usage::

    python benchmarks/group_pause.py [--pause-runs 5] [--partitions 4] [--trigger-ms 200]
        [--produce-interval-ms 20] [--bootstrap-servers HOST:PORT] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

__all__ = [
    "CASES",
    "GroupPauseError",
    "PauseResult",
    "add_arguments",
    "bench_group_pause",
    "format_pause_table",
    "main",
    "run",
]

#: The compared cases: name -> the member's group options (beside ``kafka.group.id``).
CASES: dict[str, dict[str, str]] = {
    "classic eager (range)": {"kafka.partition.assignment.strategy": "range"},
    "classic cooperative-sticky": {"kafka.partition.assignment.strategy": "cooperative-sticky"},
    "consumer (KIP-848)": {"kafka.group.protocol": "consumer"},
}
#: Heartbeat interval of every case (ms): classic members' option, the consumer protocol's
#: broker setting (on the broker the benchmark starts).
HEARTBEAT_MS = 1000
#: Session timeout of classic members (ms).
SESSION_MS = 10_000
#: Seconds member A reads alone before B joins.
WARM_S = 2.0
#: Batches A reads after the group settled, before the run ends.
SETTLED_BATCHES = 5
#: Seconds a run may take to settle before it fails.
SETTLE_TIMEOUT_S = 90.0
#: KIP-848 settings of the broker the benchmark starts (Kafka's ``GroupCoordinatorConfig``):
#: the consumer protocol's heartbeat interval equal to the classic members'.
SERVER_PROPS = {
    "group.consumer.heartbeat.interval.ms": str(HEARTBEAT_MS),
    "group.consumer.min.heartbeat.interval.ms": str(HEARTBEAT_MS),
}


class GroupPauseError(RuntimeError):
    """A run did not settle in time, or a member failed (the message names the case)."""


@dataclass
class PauseResult:
    """One case over all its runs (times in ms).

    Attributes:
        case: a key of :data:`CASES`.
        pauses_ms: per run, the longest gap in A's reads of a partition it kept.
        normal_gaps_ms: per run, the median gap between A's reads before B joined.
        b_first_ms: per run, B's start to B's first record.
        kept: per run, the partitions A kept.
    """

    case: str
    pauses_ms: list[float] = field(default_factory=list)
    normal_gaps_ms: list[float] = field(default_factory=list)
    b_first_ms: list[float] = field(default_factory=list)
    kept: list[list[int]] = field(default_factory=list)


class _Member(threading.Thread):
    """A stream reader driven as Spark's micro-batch engine drives it (see the module doc).

    Records, per batch, the monotonic time and the partitions it read records from
    (:attr:`reads`), and the partitions in its end offsets (:attr:`owned`).
    """

    def __init__(self, name: str, options: Mapping[str, str], trigger_s: float) -> None:
        super().__init__(name=name, daemon=True)
        self.options = dict(options)
        self.trigger_s = trigger_s
        self.stop_event = threading.Event()
        self.started_at = 0.0
        self.reads: list[tuple[float, set[int]]] = []
        self.owned: set[int] = set()
        self.batches = 0
        self.error: BaseException | None = None
        self._lock = threading.Lock()

    def snapshot(self) -> tuple[list[tuple[float, set[int]]], set[int], int]:
        with self._lock:
            return list(self.reads), set(self.owned), self.batches

    def run(self) -> None:
        from spark_kafka_py.spark.options import parse_options
        from spark_kafka_py.spark.planner import KafkaInputPartition
        from spark_kafka_py.spark.source import KafkaStreamReader

        self.started_at = time.monotonic()
        reader = KafkaStreamReader(parse_options(self.options, streaming=True))
        try:
            start = reader.initialOffset()
            while not self.stop_event.is_set():
                began = time.monotonic()
                end = reader.latestOffset(start, None)
                read: set[int] = set()
                for part in reader.partitions(start, end):
                    assert isinstance(part, KafkaInputPartition)  # streams never group ranges
                    rows = sum(batch.num_rows for batch in reader.read(part))
                    if rows:
                        read.add(part.topic_partition.partition)
                with self._lock:
                    if read:
                        self.reads.append((time.monotonic(), read))
                    self.owned = {int(p) for p in next(iter(end.values()), {})}
                    self.batches += 1
                start = end
                self.stop_event.wait(max(0.0, self.trigger_s - (time.monotonic() - began)))
        except BaseException as exc:  # handed to the benchmark's thread, raised there
            self.error = exc
        finally:
            reader.stop()


def _gaps(times: Sequence[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def _read_times(reads: Sequence[tuple[float, set[int]]], partition: int) -> list[float]:
    return [t for t, parts in reads if partition in parts]


def _check(member: _Member, case: str) -> None:
    if member.error is not None:
        raise GroupPauseError(f"{case}: member {member.name} failed: {member.error!r}") from (
            member.error
        )


def _one_run(
    bootstrap: str, topic: str, partitions: int, case: str, trigger_ms: int
) -> tuple[float, float, float, list[int]]:
    """One run of ``case``: ``(pause ms, normal gap ms, B's first record ms, A's kept
    partitions)``.

    Raises:
        GroupPauseError: a member failed, or the group did not settle within
            :data:`SETTLE_TIMEOUT_S`.
    """
    group = f"bench-pause-{uuid.uuid4().hex[:8]}"
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "kafka.group.id": group,
        "startingOffsets": "latest",
        "groupOffsetsFallback": "latest",
        **CASES[case],
    }
    if CASES[case].get("kafka.group.protocol", "classic") == "classic":
        options["kafka.heartbeat.interval.ms"] = str(HEARTBEAT_MS)
        options["kafka.session.timeout.ms"] = str(SESSION_MS)
    half = partitions // 2
    a = _Member("A", options, trigger_ms / 1000)
    b = _Member("B", options, trigger_ms / 1000)
    a.start()
    try:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:  # A reads every partition, then WARM_S more seconds
            _check(a, case)
            reads, _, _ = a.snapshot()
            if {p for _, parts in reads for p in parts} == set(range(partitions)):
                break
            if time.monotonic() > deadline:
                raise GroupPauseError(f"{case}: member A read nothing within the timeout")
            time.sleep(0.05)
        time.sleep(WARM_S)
        b.start()
        while not b.started_at:
            time.sleep(0.001)
        join = b.started_at
        while True:
            _check(a, case)
            _check(b, case)
            a_reads, a_owned, _ = a.snapshot()
            b_reads, b_owned, _ = b.snapshot()
            a_after = {p for t, parts in a_reads if t > join for p in parts}
            b_after = {p for _, parts in b_reads for p in parts}
            if (
                len(a_owned) == len(b_owned) == half
                and a_owned | b_owned == set(range(partitions))
                and b_owned <= b_after
                and a_owned <= a_after
            ):
                break
            if time.monotonic() > deadline:
                raise GroupPauseError(
                    f"{case}: the group did not settle within {SETTLE_TIMEOUT_S:.0f} s "
                    f"(A owns {sorted(a_owned)}, B owns {sorted(b_owned)})"
                )
            time.sleep(0.05)
        _, _, settled = a.snapshot()
        while a.snapshot()[2] < settled + SETTLED_BATCHES:
            _check(a, case)
            time.sleep(0.05)
    finally:
        b.stop_event.set()
        a.stop_event.set()
        for member in (b, a):
            if member.ident is not None:  # started
                member.join(60)
    a_reads, kept, _ = a.snapshot()
    b_reads, _, _ = b.snapshot()
    pause = 0.0
    normal: list[float] = []
    for p in kept:
        times = _read_times(a_reads, p)
        before = [t for t in times if t <= join]
        normal += _gaps(before)
        window = [*before[-1:], *(t for t in times if t > join)]
        pause = max(pause, *_gaps(window), 0.0)
    b_first = min(t for t, _ in b_reads) - join
    return pause * 1000, statistics.median(normal) * 1000, b_first * 1000, sorted(kept)


def bench_group_pause(
    bootstrap: str,
    *,
    runs: int = 5,
    partitions: int = 4,
    trigger_ms: int = 200,
    produce_interval_ms: int = 20,
    cases: Sequence[str] = tuple(CASES),
    log: Any = print,
) -> list[PauseResult]:
    """Measure every case of ``cases`` ``runs`` times, alternating (see the module doc).

    Args:
        bootstrap: ``host:port`` list of a Kafka 4.0+ cluster (the consumer protocol).
        runs: runs per case.
        partitions: of the topic created for the benchmark (even, 2 or more).
        trigger_ms: the members' processing-time trigger (ms).
        produce_interval_ms: the producer writes one record to every partition this often.

    Returns:
        One :class:`PauseResult` per case, in ``cases`` order.

    Raises:
        GroupPauseError: a member failed or a run did not settle.
        ValueError: an odd or too small ``partitions``, an unknown case.
    """
    import pyarrow as pa

    from spark_kafka_py.client.cluster import ClientConfig
    from spark_kafka_py.producer.producer import KafkaProducer
    from spark_kafka_py.producer.settings import ProducerSettings
    from spark_kafka_py.testing.tools import create_topic

    if partitions < 2 or partitions % 2:
        raise ValueError(f"--partitions must be even and 2 or more, got {partitions}")
    unknown = set(cases) - set(CASES)
    if unknown:
        raise ValueError(f"unknown case(s) {sorted(unknown)}; known: {list(CASES)}")
    topic = f"bench-pause-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, partitions=partitions)
    stop = threading.Event()
    failure: list[BaseException] = []

    def produce() -> None:
        settings = ProducerSettings(ClientConfig.from_bootstrap(bootstrap), linger_ms=0)
        value = pa.array([b"x" * 100], pa.binary())
        try:
            with KafkaProducer(settings) as producer:
                while not stop.wait(produce_interval_ms / 1000):
                    now_ms = int(time.time() * 1000)
                    for p in range(partitions):
                        producer.append(topic, p, None, value, None, now_ms)
                producer.flush()
        except BaseException as exc:  # raised in the benchmark's thread
            failure.append(exc)

    producer = threading.Thread(target=produce, name="producer", daemon=True)
    producer.start()
    results = {case: PauseResult(case) for case in cases}
    try:
        for i in range(runs):
            for case in cases:
                if failure:
                    raise GroupPauseError(f"the producer failed: {failure[0]!r}") from failure[0]
                pause, normal, b_first, kept = _one_run(
                    bootstrap, topic, partitions, case, trigger_ms
                )
                r = results[case]
                r.pauses_ms.append(pause)
                r.normal_gaps_ms.append(normal)
                r.b_first_ms.append(b_first)
                r.kept.append(kept)
                log(
                    f"run {i + 1}/{runs} {case}: pause {pause:.0f} ms (normal gap "
                    f"{normal:.0f} ms), B's first record after {b_first:.0f} ms, A kept {kept}"
                )
    finally:
        stop.set()
        producer.join(30)
    return list(results.values())


def format_pause_table(results: Sequence[PauseResult]) -> str:
    """Markdown table: per case, the pause of A's kept partitions (median, max), the normal
    gap, B's first record (median, max), in ms."""
    lines = [
        "| protocol | runs | pause of kept partitions, median (ms) | max (ms) | "
        "normal gap (ms) | B's first record, median (ms) | max (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.case} | {len(r.pauses_ms)} | {statistics.median(r.pauses_ms):,.0f} | "
            f"{max(r.pauses_ms):,.0f} | {statistics.median(r.normal_gaps_ms):,.0f} | "
            f"{statistics.median(r.b_first_ms):,.0f} | {max(r.b_first_ms):,.0f} |"
        )
    return "\n".join(lines)


@contextlib.contextmanager
def _broker(bootstrap: str | None) -> Iterator[str]:
    """``bootstrap`` when given, else a one-node local Kafka with :data:`SERVER_PROPS`."""
    if bootstrap:
        yield bootstrap
        return
    from spark_kafka_py.testing.broker import LocalKafkaCluster

    cluster = LocalKafkaCluster(1, heap="1g", server_props=SERVER_PROPS)
    cluster.start()
    try:
        yield cluster.bootstrap_servers
    finally:
        cluster.stop()


def add_arguments(p: Any) -> None:
    """Add the options of this benchmark to ``p`` (a parser or an argument group; also those
    of ``spark-kafka-py bench group-pause``)."""
    p.add_argument("--pause-runs", type=int, default=5, help="runs per protocol")
    p.add_argument("--trigger-ms", type=int, default=200, help="the members' trigger (ms)")
    p.add_argument(
        "--produce-interval-ms",
        type=int,
        default=20,
        help="one record to every partition this often (ms)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the benchmark on ``args`` (``partitions``, ``bootstrap_servers``, ``json`` and
    :func:`add_arguments`' options), print the table, the load average and the versions."""
    from benchmarks.harness import environment

    partitions = getattr(args, "partitions", None) or 4
    load_before = os.getloadavg()
    with _broker(args.bootstrap_servers) as bootstrap:
        results = bench_group_pause(
            bootstrap,
            runs=args.pause_runs,
            partitions=partitions,
            trigger_ms=args.trigger_ms,
            produce_interval_ms=args.produce_interval_ms,
            log=lambda m: print(m, flush=True),
        )
    load_after = os.getloadavg()
    env = environment()
    env["load average (1, 5, 15 min) before / after"] = (
        f"{' '.join(f'{x:.2f}' for x in load_before)} / {' '.join(f'{x:.2f}' for x in load_after)}"
    )
    heartbeat = (
        "the given cluster's group.consumer.heartbeat.interval.ms"
        if args.bootstrap_servers
        else f"{HEARTBEAT_MS} ms (group.consumer.heartbeat.interval.ms of the benchmark's broker)"
    )
    print()
    print(f"### Rebalance pause, {env['date']}")
    print()
    print(
        f"{partitions} partitions, trigger {args.trigger_ms} ms, one record per partition every "
        f"{args.produce_interval_ms} ms; classic heartbeat {HEARTBEAT_MS} ms, consumer protocol "
        f"heartbeat {heartbeat}; {args.pause_runs} runs per protocol, alternating."
    )
    print()
    print(format_pause_table(results))
    print()
    for k, v in env.items():
        print(f"- {k}: {v}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"env": env, "group_pause": [asdict(r) for r in results]}, indent=2),
            encoding="utf-8",
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python benchmarks/group_pause.py [options]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--partitions", type=int, default=4, help="partitions of the topic (even)")
    p.add_argument("--bootstrap-servers", help="use this cluster instead of a local broker")
    p.add_argument("--json", help="also write the results to this JSON file")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
