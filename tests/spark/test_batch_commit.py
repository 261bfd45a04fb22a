"""``commitGroupOffsets=true``: the commit rules of a batch read whose topic-partition is split
over several tasks (:func:`commit_after_read`), without a broker.

The tasks run as threads under a deterministic scheduler: only one runs at a time, and the
scheduler picks (from a seed) which one goes on before every OffsetFetch and OffsetCommit, so
a task can be overtaken between any two requests, as on a real cluster. Tasks finish reading
at chosen times; some ranges never finish (their task failed every attempt), some are read
twice (a retry after a late failure, a speculative copy). Checked on every commit to the
group: it is the end of the read, every range was read by some task before it, and the
group's offset never goes down. At the end: the group is at the end of the read exactly when
every range was read (unless it was beyond already).
"""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.group import (
    RANGE_GROUP_INFIX,
    READ_METADATA_PREFIX,
    commit_after_read,
    plan_commits,
    range_group_id,
)
from spark_kafka_py.spark.planner import KafkaInputPartition

TP = TopicPartition("t", 0)
GROUP = "g"


class Sim:
    """Cooperative threads under one scheduler: a task runs until its next :meth:`point`,
    then the scheduler picks the next task whose time (when it finished reading) has come."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.now = 0.0
        self.tasks: list[Task] = []
        self.current: Task | None = None
        self.back = threading.Semaphore(0)

    def point(self) -> None:
        task = self.current
        assert task is not None
        self.back.release()
        task.go.acquire()

    def run(self) -> None:
        while True:
            live = [t for t in self.tasks if not t.done]
            if not live:
                break
            ready = [t for t in live if t.at <= self.now]
            if not ready:
                self.now = min(t.at for t in live)
                continue
            task = self.rng.choice(ready)
            self.current = task
            if task.thread is None:
                task.thread = threading.Thread(target=task.main, daemon=True)
                task.thread.start()
            else:
                task.go.release()
            assert self.back.acquire(timeout=30), "a task did not hand control back"
        for t in self.tasks:
            if t.error is not None:
                raise t.error


class Task:
    """One task attempt that finished reading ``part`` at time ``at`` and then commits."""

    def __init__(self, sim: Sim, store: Store, part: KafkaInputPartition, at: float) -> None:
        self.sim, self.store, self.part, self.at = sim, store, part, at
        self.go = threading.Semaphore(0)
        self.thread: threading.Thread | None = None
        self.done = False
        self.result: bool | None = None
        self.error: BaseException | None = None

    def main(self) -> None:
        try:
            self.store.finished.add(self.part.range_index)
            self.result = commit_after_read(self.store, GROUP, self.part)
        except BaseException as exc:  # handed to the test by Sim.run
            self.error = exc
        finally:
            self.done = True
            self.sim.back.release()


class Store:
    """Committed offsets in memory; every call lets the scheduler switch tasks first. Checks
    the rules on every commit to the group."""

    def __init__(self, sim: Sim, parts: list[KafkaInputPartition], committed: int | None) -> None:
        self.sim = sim
        self.count = len(parts)
        self.end = parts[-1].until_offset
        self.offsets: dict[tuple[str, TopicPartition], tuple[int, str]] = {}
        if committed is not None:
            self.offsets[GROUP, TP] = (committed, "before")
        self.finished: set[int] = set()  # indexes of the ranges some task has read
        self.group_commits: list[int] = []

    def fetch(self, group_id: str, tp: TopicPartition) -> tuple[int, str] | None:
        self.sim.point()
        return self.offsets.get((group_id, tp))

    def commit(self, group_id: str, tp: TopicPartition, offset: int, metadata: str) -> None:
        self.sim.point()
        if group_id == GROUP:
            before = self.offsets.get((GROUP, tp))
            assert offset == self.end, "the group only ever moves to the end of the read"
            assert len(self.finished) == self.count, "the group moved past a range nobody read"
            assert before is None or before[0] <= offset, "the group moved back"
            self.group_commits.append(offset)
        else:
            assert group_id.startswith(GROUP + RANGE_GROUP_INFIX)
        self.offsets[group_id, tp] = (offset, metadata)


def split(start: int, sizes: list[int], read_id: str = "r1") -> list[KafkaInputPartition]:
    parts, lo = [], start
    for size in sizes:
        parts.append(KafkaInputPartition("t", 0, lo, lo + size))
        lo += size
    return [
        dataclasses.replace(
            p, read_id=read_id, range_index=i, range_count=len(parts), partition_end=lo
        )
        for i, p in enumerate(parts)
    ]


def simulate(
    parts: list[KafkaInputPartition],
    attempts: list[list[float]],
    *,
    committed: int | None,
    seed: int,
) -> tuple[Store, list[Task]]:
    """Run one task per entry of ``attempts[i]`` (the time it finished reading) of range i."""
    sim = Sim(seed)
    store = Store(sim, parts, committed)
    for part, times in zip(parts, attempts, strict=True):
        sim.tasks += [Task(sim, store, part, at) for at in times]
    sim.run()
    return store, sim.tasks


def group_offset(store: Store) -> int | None:
    entry = store.offsets.get((GROUP, TP))
    return None if entry is None else entry[0]


# ------------------------------------------------------------------------------ examples


def test_only_range_commits_its_end_and_never_moves_the_group_back() -> None:
    store, tasks = simulate(split(10, [30]), [[1.0]], committed=10, seed=0)
    assert group_offset(store) == 40 and tasks[0].result is True
    assert list(store.offsets) == [(GROUP, TP)]  # no helper group for a range read whole
    store, _ = simulate(split(10, [30]), [[1.0]], committed=55, seed=0)
    assert group_offset(store) == 55 and store.group_commits == []


def test_ranges_finishing_in_reverse_order_end_at_the_full_end() -> None:
    store, tasks = simulate(split(0, [5] * 4), [[4.0], [3.0], [2.0], [1.0]], committed=0, seed=1)
    assert group_offset(store) == 20 and store.group_commits == [20]
    assert [t.result for t in tasks] == [True, False, False, False]  # range 0 finished last
    assert store.offsets[range_group_id(GROUP, 2), TP] == (15, READ_METADATA_PREFIX + "r1")


def test_a_failed_first_range_leaves_the_group_where_it_was() -> None:
    """The first range fails every attempt; the later ones were read."""
    store, tasks = simulate(split(20, [5] * 4), [[], [1.0], [1.5], [2.0]], committed=20, seed=2)
    assert group_offset(store) == 20 and store.group_commits == []
    assert [t.result for t in tasks] == [False, False, False]


def test_a_failed_middle_range_leaves_the_group_where_it_was() -> None:
    store, _ = simulate(split(0, [5] * 4), [[1.0], [], [1.0], [1.0]], committed=None, seed=3)
    assert group_offset(store) is None


def test_records_of_another_read_do_not_count() -> None:
    """Ranges 0 and 1 are recorded for an earlier read with the same plan: a new read whose
    ranges 2 and 3 are read must not move the group."""
    parts = split(0, [5] * 4, read_id="new")
    sim = Sim(4)
    store = Store(sim, parts, None)
    for i in (0, 1):
        store.offsets[range_group_id(GROUP, i), TP] = (5 * i + 5, READ_METADATA_PREFIX + "old")
    sim.tasks = [Task(sim, store, parts[2], 1.0), Task(sim, store, parts[3], 1.0)]
    sim.run()
    assert [t.result for t in sim.tasks] == [False, False] and group_offset(store) is None


def test_a_range_read_twice_commits_once_more_the_same_end() -> None:
    """A duplicate of the last range, after the group was moved by the first copy."""
    store, tasks = simulate(split(0, [5, 5]), [[1.0], [2.0, 3.0]], committed=None, seed=5)
    assert group_offset(store) == 10 and store.group_commits == [10]
    assert [t.result for t in tasks] == [False, True, True]


def test_unplanned_partition_is_refused() -> None:
    store = Store(Sim(0), split(0, [5]), None)
    with pytest.raises(ValueError, match="plan_commits"):
        commit_after_read(store, GROUP, KafkaInputPartition("t", 0, 0, 5))


def test_plan_commits_gives_one_read_id_and_each_range_its_place() -> None:
    plan = [
        KafkaInputPartition("t", 0, 5, 9),
        KafkaInputPartition("t", 0, 0, 5),
        KafkaInputPartition("t", 1, 3, 7, leader_hint=2),
    ]
    planned = plan_commits(plan)
    assert [(p.range_index, p.range_count, p.partition_end) for p in planned] == [
        (1, 2, 9),
        (0, 2, 9),
        (0, 1, 7),
    ]
    assert len({p.read_id for p in planned}) == 1 and len(planned[0].read_id) == 32
    assert planned[2].leader_hint == 2
    assert (planned[0].from_offset, planned[0].until_offset) == (5, 9)
    assert plan_commits(plan)[0].read_id != planned[0].read_id
    assert range_group_id("orders", 3) == "orders" + RANGE_GROUP_INFIX + "3"


# --------------------------------------------------------------------------- generated


@st.composite
def scenarios(draw: Callable) -> tuple:  # type: ignore[type-arg]
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=6))
    start = draw(st.integers(0, 6))
    times = st.floats(0, 10, allow_nan=False)
    attempts = [draw(st.lists(times, min_size=0, max_size=3)) for _ in sizes]
    committed = draw(st.none() | st.integers(0, start + sum(sizes) + 3))
    return sizes, start, attempts, committed, draw(st.integers(0, 2**32))


@settings(max_examples=400, deadline=None)
@given(scenarios())
def test_any_interleaving_keeps_the_rules(case: tuple) -> None:  # type: ignore[type-arg]
    """Ranges read by zero to three tasks, finishing in any order, under any schedule: the
    rules hold on every commit (Store.commit), and the group ends at the end of the read if
    and only if every range was read (or stays where it was when that is beyond)."""
    sizes, start, attempts, committed, seed = case
    store, _ = simulate(split(start, sizes), attempts, committed=committed, seed=seed)
    end = start + sum(sizes)
    if all(attempts) and (committed is None or committed < end):
        assert group_offset(store) == end
    else:
        assert group_offset(store) == committed
