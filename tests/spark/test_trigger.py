"""The next micro-batch's end as one pure function (spark/trigger.py): Spark's
``KafkaMicroBatchStream`` rules (``latestOffset(start, readLimit)``, ``delayBatch``,
``rateLimit``) and the group split, with hand-computed offsets and times (ms)."""

from __future__ import annotations

import pytest
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxFiles,
    ReadMaxRows,
    ReadMinRows,
)

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.trigger import (
    NextBatch,
    TriggerRules,
    group_plan_start,
    next_batch,
    rate_limit,
)

A, B, C = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
NO_LIMITS = TriggerRules(max_offsets=None, min_offsets=None, max_delay_ms=900_000)
HOUR = 3_600_000


def test_rate_limit_prorates_by_backlog_and_never_starves() -> None:
    start = {A: 0, B: 0, C: 5}
    latest = {A: 1000, B: 1, C: 5}
    # 100 * 1000/1001 = 99.9 -> 99; 100 * 1/1001 = 0.1 -> at least 1; C has no backlog
    assert rate_limit(100, start, latest) == {A: 99, B: 1, C: 5}
    assert rate_limit(10, latest, latest) == latest  # nothing new
    # a partition without a start offset ends at its latest (Spark: "let getBatch alert")
    assert rate_limit(4, {A: 0}, {A: 8, B: 3}) == {A: 4, B: 3}


def test_everything_when_spark_asks_for_everything() -> None:
    start, latest = {A: 1, B: 2}, {A: 10, B: 20}
    for limit in (None, ReadAllAvailable()):
        assert next_batch(start, latest, limit, 5, NO_LIMITS, 0) == NextBatch({A: 10, B: 20}, 0)
    # no start yet: latest, whatever the limit
    assert next_batch(None, latest, ReadMaxRows(1), 5, NO_LIMITS, 0).end == {A: 10, B: 20}


def test_read_max_rows_caps_the_batch() -> None:
    got = next_batch({A: 0, B: 0}, {A: 100, B: 4}, ReadMaxRows(10), 5, NO_LIMITS, 0)
    assert got == NextBatch({A: 9, B: 1}, 0)  # 10 * 100/104 -> 9, 10 * 4/104 -> 1


def test_read_min_rows_waits_until_enough_records() -> None:
    rules = NO_LIMITS._replace(min_offsets=50, max_delay_ms=HOUR)
    start = {A: 10, B: 10}
    limit = ReadMinRows(50)
    t = 1_800_000_000_000  # ms since the epoch
    # the first trigger (never one let through: 0) passes, and is remembered
    assert next_batch(start, {A: 15, B: 15}, limit, t, rules, 0) == NextBatch({A: 15, B: 15}, t)
    # 39 new < 50, an hour not passed: the batch ends where it starts
    assert next_batch(start, {A: 30, B: 29}, limit, t + 500, rules, t) == NextBatch(
        {A: 10, B: 10}, t, delayed=True
    )
    # 50 new: let through
    assert next_batch(start, {A: 35, B: 35}, limit, t + 600, rules, t) == NextBatch(
        {A: 35, B: 35}, t + 600
    )
    # 1 new, an hour less 1 ms: waits; exactly an hour (maxTriggerDelay): let through
    assert next_batch(start, {A: 11, B: 10}, limit, t + HOUR - 1, rules, t).delayed
    assert next_batch(start, {A: 11, B: 10}, limit, t + HOUR, rules, t) == NextBatch(
        {A: 11, B: 10}, t + HOUR
    )


def test_min_rows_also_caps_at_max_offsets_per_trigger() -> None:
    rules = TriggerRules(max_offsets=10, min_offsets=5, max_delay_ms=HOUR)
    got = next_batch({A: 0, B: 0}, {A: 100, B: 4}, ReadMinRows(5), 7, rules, 0)
    assert got == NextBatch({A: 9, B: 1}, 7)
    # Spark's ReadMaxRows wins over maxOffsetsPerTrigger; minOffsetsPerTrigger still waits
    got = next_batch({A: 0, B: 0}, {A: 100, B: 4}, ReadMaxRows(52), 8, rules, 7)
    assert got == NextBatch({A: 50, B: 2}, 8)  # 52 * 100/104 = 50, 52 * 4/104 = 2
    assert next_batch({A: 0}, {A: 4}, ReadMaxRows(52), 9, rules, 8).delayed


def test_available_now_never_waits() -> None:
    rules = TriggerRules(max_offsets=None, min_offsets=50, max_delay_ms=HOUR, available_now=True)
    assert next_batch({A: 10}, {A: 11}, ReadMinRows(50), 100, rules, 99) == NextBatch({A: 11}, 99)


def test_unsupported_read_limit() -> None:
    with pytest.raises(ConfigError, match="is not supported by format"):
        next_batch({A: 0}, {A: 1}, ReadMaxFiles(3), 0, NO_LIMITS, 0)


def test_new_partitions_under_a_rate_limit_ask_for_their_earliest_offset() -> None:
    start, latest = {A: 10}, {A: 20, B: 30}
    asked = next_batch(start, latest, ReadMaxRows(10), 5, NO_LIMITS, 3)
    assert asked == NextBatch({}, 3, missing=frozenset({B}))
    got = next_batch(start, latest, ReadMaxRows(10), 5, NO_LIMITS, 3, first={B: 25})
    assert got == NextBatch({A: 16, B: 28}, 3)  # backlogs 10 and 5: 6 and 3
    # without a rate limit nothing is asked: the planner starts B at its earliest
    assert next_batch(start, latest, None, 5, NO_LIMITS, 3) == NextBatch({A: 20, B: 30}, 3)


def test_group_owns_assigned_partitions_of_start_and_lets_new_ones_enter() -> None:
    start = {A: 10, B: 5}
    latest = {A: 20, B: 9, C: 40}
    # B revoked, C newly assigned: its start offset is asked first
    asked = next_batch(start, latest, None, 5, NO_LIMITS, 0, assigned={A, C})
    assert asked == NextBatch({}, 0, missing=frozenset({C}))
    got = next_batch(start, latest, None, 5, NO_LIMITS, 0, assigned={A, C}, first={C: 33})
    assert got == NextBatch({A: 20, C: 33}, 0, revoked=(B,), entering={C: 33})


def test_group_limits_apply_to_owned_partitions_only() -> None:
    start = {A: 0, B: 0}
    latest = {A: 100, B: 4, C: 50}
    got = next_batch(
        start, latest, ReadMaxRows(10), 5, NO_LIMITS, 0, assigned=[A, B, C], first={C: 7}
    )
    assert got == NextBatch({A: 9, B: 1, C: 7}, 0, entering={C: 7})


def test_group_never_ends_below_start_and_waits_with_entering_partitions() -> None:
    rules = NO_LIMITS._replace(min_offsets=10, max_delay_ms=HOUR)
    # A's latest (3) below its start (5): ends at 5; 0 new records < 10: waits
    got = next_batch(
        {A: 5}, {A: 3, C: 9}, ReadMinRows(10), 10, rules, 1, assigned={A, C}, first={C: 2}
    )
    assert got == NextBatch({A: 5, C: 2}, 1, delayed=True, entering={C: 2})


def test_group_before_the_first_batch_starts_where_the_group_does() -> None:
    got = next_batch(
        None, {A: 9, B: 9}, ReadMaxRows(1), 5, NO_LIMITS, 0, assigned={A}, first={A: 4}
    )
    assert got == NextBatch({A: 4}, 0, entering={A: 4})


def test_group_plan_start_drops_revoked_and_enters_new_at_end() -> None:
    assert group_plan_start({A: 5, B: 1}, {A: 8, C: 3}) == {A: 5, C: 3}


def test_inputs_are_not_modified() -> None:
    start, latest, first = {A: 0}, {A: 10, B: 4}, {B: 0}
    next_batch(start, latest, ReadMaxRows(3), 5, NO_LIMITS, 0, first=first)
    next_batch(start, latest, ReadMaxRows(3), 5, NO_LIMITS, 0, assigned={A, B}, first=first)
    assert (start, latest, first) == ({A: 0}, {A: 10, B: 4}, {B: 0})
