"""Where the next micro-batch of a ``format("pykafka")`` stream ends: a pure function.

:func:`next_batch` decides, from the batch's start offsets, the latest offsets, the
``ReadLimit`` Spark passed to ``latestOffset(start, limit)`` and the clock, what Spark's
``KafkaMicroBatchStream.latestOffset(start, readLimit)`` decides: whether to wait for more
records (``minOffsetsPerTrigger`` within ``maxTriggerDelay``: ``delayBatch``), how far each
partition may advance (``maxOffsetsPerTrigger``: ``rateLimit``) and, with ``kafka.group.id``,
which partitions the query owns, which it lost and which enter. No I/O: the offsets it needs
but cannot know (where a new or newly assigned partition starts) are asked of the caller
(:attr:`NextBatch.missing`), who looks them up and calls again with them (``first``).

All offsets are ``{TopicPartition: offset}`` maps (the offset of the *next* record); times are
ms since the epoch. Inputs are never modified.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import NamedTuple

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError

__all__ = ["NextBatch", "TriggerRules", "group_plan_start", "next_batch", "rate_limit"]

Offsets = Mapping[TopicPartition, int]


class TriggerRules(NamedTuple):
    """The admission options of a stream read (Spark's Kafka source option names).

    Attributes:
        max_offsets: ``maxOffsetsPerTrigger``: records per micro-batch at most, or ``None``.
        min_offsets: ``minOffsetsPerTrigger``: records a micro-batch waits for, or ``None``.
        max_delay_ms: ``maxTriggerDelay`` in ms: the longest a micro-batch waits for
            ``min_offsets`` records, counted from the last batch let through.
        available_now: ``Trigger.AvailableNow``: never wait (the query must reach its target).
    """

    max_offsets: int | None
    min_offsets: int | None
    max_delay_ms: int
    available_now: bool = False


class NextBatch(NamedTuple):
    """What :func:`next_batch` decided.

    Attributes:
        end: the end offsets of the next micro-batch, ``{TopicPartition: offset}``: equal to
            the start offsets when the batch waits or nothing is new. Empty while
            :attr:`missing` is not.
        last_trigger_ms: when the last batch was let through (ms since the epoch), for the
            next call.
        delayed: whether the batch waits for ``minOffsetsPerTrigger`` records.
        missing: partitions whose first offset is needed and was not given: call again with
            ``first`` holding them (group mode: where the group starts them; else their
            earliest offset).
        revoked: group mode: partitions of ``start`` no longer assigned, sorted.
        entering: group mode: newly assigned partitions and the offset they start at.
    """

    end: dict[TopicPartition, int]
    last_trigger_ms: int
    delayed: bool = False
    missing: frozenset[TopicPartition] = frozenset()
    revoked: tuple[TopicPartition, ...] = ()
    entering: dict[TopicPartition, int] = {}


def rate_limit(limit: int, start: Offsets, latest: Offsets) -> dict[TopicPartition, int]:
    """Cap a micro-batch at ``limit`` records, split across partitions by their backlog.

    As Spark's ``KafkaMicroBatchStream.rateLimit``: each partition gets ``limit * backlog /
    total`` records, rounded down, but at least 1 when it has any backlog (so small partitions
    are not starved); a partition of ``latest`` without a start offset, or without backlog,
    ends at its latest offset. With no backlog at all, ``latest`` is returned (as a new dict).

    Args:
        limit: records in the batch at most (``maxOffsetsPerTrigger`` or ``ReadMaxRows``).
        start: ``{TopicPartition: offset}`` where each partition's batch starts.
        latest: ``{TopicPartition: offset}``, the latest offsets.

    Returns:
        ``{TopicPartition: end offset}`` for every partition of ``latest``.
    """
    sizes: dict[TopicPartition, int] = {}
    for tp, end in latest.items():
        begin = start.get(tp)
        if begin is not None and end - begin > 0:
            sizes[tp] = end - begin
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(latest)
    out: dict[TopicPartition, int] = {}
    for tp, end in latest.items():
        size = sizes.get(tp)
        if size is None:
            out[tp] = end
            continue
        prorate = limit * (size / total)
        step = int(prorate) if prorate >= 1 else 1
        out[tp] = min(end, start[tp] + step)
    return out


def group_plan_start(start: Offsets, end: Offsets) -> dict[TopicPartition, int]:
    """``partitions(start, end)`` in group mode: where each range of the batch starts.

    Revoked partitions (in ``start``, not in ``end``) are not read; entering ones (in
    ``end``, not in ``start``: :attr:`NextBatch.entering`) read nothing in this batch, as
    they end where they start.

    Returns:
        ``{TopicPartition: offset}`` for every partition of ``end``.
    """
    return {tp: start.get(tp, off) for tp, off in end.items()}


def next_batch(
    start: Offsets | None,
    latest: Offsets,
    limit: ReadLimit | None,
    now_ms: int,
    rules: TriggerRules,
    last_trigger_ms: int,
    *,
    assigned: Collection[TopicPartition] | None = None,
    first: Offsets | None = None,
) -> NextBatch:
    """The end offsets of the next micro-batch (``latestOffset(start, limit)``).

    As Spark's ``KafkaMicroBatchStream.latestOffset(start, readLimit)``, with PySpark's read
    limits: ``ReadAllAvailable`` (or no limit, or no ``start``) reads up to ``latest``;
    ``ReadMaxRows`` and ``ReadMinRows`` apply the options themselves, since PySpark has neither
    a composite limit nor ``ReadMinRows``' delay: the batch waits (``delayBatch``: its end is
    its start) while fewer than ``rules.min_offsets`` records are new, unless
    ``rules.max_delay_ms`` passed since the last batch let through (the first one always
    passes with ``last_trigger_ms=0``) or ``rules.available_now``; otherwise each partition
    advances by its share of ``ReadMaxRows.max_rows`` (``ReadMinRows``: of
    ``rules.max_offsets``, when set) (:func:`rate_limit`).

    Group mode (``assigned`` given: the partitions the query's consumer group assigns it now):
    the query owns the assigned partitions that are in ``start``, each ending no lower than its
    start; the limits apply to them only. Assigned partitions not in ``start`` enter at the
    offset ``first`` gives them (where the group starts them) and read nothing in this batch;
    partitions of ``start`` not assigned are revoked: left out of ``end``.

    Without a group, a partition of ``latest`` not in ``start`` (a new one) starts at its
    earliest offset, which :func:`rate_limit` needs: asked of the caller when a rate limit
    applies.

    Args:
        start: the batch's start offsets (the previous end), or ``None`` before the first.
        latest: the latest offsets of the subscription's partitions.
        limit: the ``ReadLimit`` Spark passed, or ``None``.
        now_ms: the clock, ms since the epoch.
        rules: the admission options.
        last_trigger_ms: when the last batch was let through (ms since the epoch; 0: never).
        assigned: group mode: the partitions of ``latest`` the group assigns the query.
        first: the first offsets of partitions not in ``start`` (:attr:`NextBatch.missing`),
            once looked up; partitions still missing then are left out (group mode) or end at
            their latest offset (a rate limit, as Spark's ``rateLimit``).

    Returns:
        a :class:`NextBatch`; when its ``missing`` is not empty, call again with ``first``.

    Raises:
        ConfigError: a ``ReadLimit`` other than ``ReadAllAvailable``, ``ReadMaxRows`` and
            ``ReadMinRows`` (e.g. ``ReadMaxFiles``).
    """
    revoked: tuple[TopicPartition, ...] = ()
    entering: dict[TopicPartition, int] = {}
    if assigned is None:
        begin = start
        candidates: Offsets = latest
    else:
        pool = assigned if isinstance(assigned, set | frozenset) else set(assigned)
        mine = {tp for tp in latest if tp in pool}
        before = start or {}
        new = [tp for tp in mine if tp not in before]
        if new and first is None:
            return NextBatch({}, last_trigger_ms, missing=frozenset(new))
        found = first or {}
        entering = {tp: found[tp] for tp in sorted(new) if tp in found}
        revoked = tuple(sorted(tp for tp in before if tp not in mine))
        owned = {tp: off for tp, off in before.items() if tp in mine}
        begin = None if start is None else owned
        candidates = {tp: max(latest[tp], off) for tp, off in owned.items()}

    end, last, delayed, missing = _admit(
        begin, candidates, limit, now_ms, rules, last_trigger_ms, first
    )
    if missing:
        return NextBatch({}, last_trigger_ms, missing=missing)
    if entering:
        end = {**end, **entering}
    return NextBatch(end, last, delayed, revoked=revoked, entering=entering)


def _admit(
    begin: Offsets | None,
    latest: Offsets,
    limit: ReadLimit | None,
    now_ms: int,
    rules: TriggerRules,
    last_trigger_ms: int,
    first: Offsets | None,
) -> tuple[dict[TopicPartition, int], int, bool, frozenset[TopicPartition]]:
    """``latest`` capped by ``limit``: ``(end, last_trigger_ms, delayed, missing)``."""
    if limit is None or isinstance(limit, ReadAllAvailable) or begin is None:
        return dict(latest), last_trigger_ms, False, frozenset()
    if not isinstance(limit, ReadMaxRows | ReadMinRows):
        raise ConfigError(f"Read limit {limit!r} is not supported by format('pykafka')")
    last = last_trigger_ms
    if rules.min_offsets is not None and not rules.available_now:
        if now_ms - last_trigger_ms >= rules.max_delay_ms:
            last = now_ms
        else:
            available = sum(end - begin.get(tp, 0) for tp, end in latest.items())
            if available < rules.min_offsets:
                return dict(begin), last_trigger_ms, True, frozenset()
            last = now_ms
    max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else rules.max_offsets
    if max_rows is None:
        return dict(latest), last, False, frozenset()
    new = [tp for tp in latest if tp not in begin]
    if new:
        if first is None:
            return {}, last_trigger_ms, False, frozenset(new)
        begin = {**begin, **{tp: first[tp] for tp in new if tp in first}}
    return rate_limit(max_rows, begin, latest), last, False, frozenset()
