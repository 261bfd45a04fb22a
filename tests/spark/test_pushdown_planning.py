"""Unit tests of spark/pushdown.py: which offsets, timestamps and topic-partitions Spark's
filters leave, with values worked out by hand from SQL's semantics."""

from __future__ import annotations

import datetime

import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.planner import (
    KafkaInputPartition,
    KafkaRangeGroup,
    group_small_ranges,
    planned_ranges,
)
from spark_kafka_py.spark.pushdown import Pushdown, allowed, keeps

UTC = datetime.timezone.utc
BIG = 2**63
OFF = ("offset",)
TS = ("timestamp",)
P = ("partition",)
T = ("topic",)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([], ((-BIG, BIG),)),
        ([EqualTo(OFF, 5)], ((5, 6),)),
        ([GreaterThan(OFF, 5), LessThanOrEqual(OFF, 9)], ((6, 10),)),
        ([GreaterThanOrEqual(OFF, 5), LessThan(OFF, 9)], ((5, 9),)),
        ([In(OFF, (3, 1, 2, 7))], ((1, 4), (7, 8))),
        ([Not(EqualTo(OFF, 5))], ((-BIG, 5), (6, BIG))),
        ([Not(GreaterThan(OFF, 5))], ((-BIG, 6),)),
        ([Not(In(OFF, (5, 6))), GreaterThanOrEqual(OFF, 0)], ((0, 5), (7, BIG))),
        # x NOT IN (5, NULL) is never true; x IN (5, NULL) only for 5
        ([Not(In(OFF, (5, None)))], ()),
        ([In(OFF, (5, None))], ((5, 6),)),
        ([EqualTo(OFF, None)], ()),
        ([Not(EqualTo(OFF, None))], ()),
        ([EqualNullSafe(OFF, None)], ()),
        ([Not(EqualNullSafe(OFF, None))], ((-BIG, BIG),)),
        ([IsNull(OFF)], ()),
        ([IsNotNull(OFF)], ((-BIG, BIG),)),
        ([Not(Not(LessThan(OFF, 3)))], ((-BIG, 3),)),
        ([GreaterThan(OFF, 9), LessThan(OFF, 3)], ()),
        # filters on other columns, and literals of another type, allow everything
        ([EqualTo(("value",), b"x"), EqualTo(OFF, "5"), EqualTo(OFF, True)], ((-BIG, BIG),)),
    ],
)
def test_allowed_offsets(filters, expected):
    assert allowed(filters, "offset") == expected


def test_allowed_timestamps_are_microseconds_of_aware_datetimes():
    t = datetime.datetime(2026, 11, 24, 1, 0, 0, 1500, tzinfo=UTC)
    micros = 1_795_482_000_001_500  # date -u -d "2026-11-24 01:00:00" +%s, then µs
    assert allowed([GreaterThanOrEqual(TS, t)], "timestamp") == ((micros, BIG),)
    naive = datetime.datetime(2026, 11, 24, 1, 0, 0)
    assert allowed([GreaterThanOrEqual(TS, naive)], "timestamp") == ((-BIG, BIG),)


@pytest.mark.parametrize(
    ("filters", "bounds"),
    [
        ([], (None, None)),
        # a record at t ms is t * 1000 µs: >= 1,500 µs needs t >= 2; > 2,000 µs needs t >= 3
        ([GreaterThanOrEqual(TS, 1_500)], (2, None)),
        ([GreaterThan(TS, 2_000)], (3, None)),
        ([LessThan(TS, 2_000)], (None, 2)),
        ([LessThanOrEqual(TS, 2_000)], (None, 3)),
        ([LessThan(TS, 1_500)], (None, 2)),
        ([GreaterThanOrEqual(TS, 1_000), LessThanOrEqual(TS, 5_000)], (1, 6)),
        ([EqualTo(TS, 1_500)], (2, 2)),
        ([IsNull(TS)], (0, 0)),
    ],
)
def test_timestamp_bounds_in_ms(filters, bounds):
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)

    def at(f):
        if isinstance(f, IsNull):
            return f
        return type(f)(f.attribute, epoch + datetime.timedelta(microseconds=f.value))

    pushdown = Pushdown.of([at(f) for f in filters])
    assert (pushdown.timestamp_bounds_ms() if pushdown else (None, None)) == bounds


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        ([EqualTo(P, 1)], {("a", 1), ("b", 1)}),
        ([Not(EqualTo(P, 1))], {("a", 0), ("a", 2), ("b", 0)}),
        ([In(P, (0, 2)), EqualTo(T, "a")], {("a", 0), ("a", 2)}),
        ([GreaterThanOrEqual(P, 1), LessThan(P, 2)], {("a", 1), ("b", 1)}),
        ([In(T, ("b", None))], {("b", 0), ("b", 1)}),
        ([Not(In(T, ("b", None)))], set()),
        ([EqualTo(P, None)], set()),
        ([EqualNullSafe(T, "a"), LessThanOrEqual(P, 0)], {("a", 0)}),
        ([StringStartsWith(T, "b")], {("b", 0), ("b", 1)}),
        ([StringEndsWith(T, "a"), GreaterThan(P, 1)], {("a", 2)}),
        ([Not(StringContains(T, "a"))], {("b", 0), ("b", 1)}),
        ([IsNull(P)], set()),
        (
            [EqualTo(P, "1"), EqualTo(("key",), b"k")],
            {("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)},
        ),
    ],
)
def test_keeps_topic_partitions(filters, kept):
    tps = [TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("a", 2)]
    tps += [TopicPartition("b", 0), TopicPartition("b", 1)]
    assert {(tp.topic, tp.partition) for tp in tps if keeps(filters, tp)} == kept


def _no_lookups(_timestamps):
    raise AssertionError("no ListOffsets expected")


def _no_configs(_topics):
    raise AssertionError("no DescribeConfigs expected")


def test_narrow_offsets_and_partitions_without_lookups():
    a0, a1 = TopicPartition("a", 0), TopicPartition("a", 1)
    pushdown = Pushdown.of([EqualTo(P, 1), In(OFF, (3, 4, 50, 999))])
    assert pushdown is not None
    narrowed = pushdown.narrow([(a0, 0, 100), (a1, 10, 100)], _no_lookups, _no_configs)
    assert narrowed == [(a1, 50, 51)]


def test_narrow_by_timestamps():
    a0, a1, b0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
    calls = []

    def lookups(timestamps):
        calls.append(dict(timestamps))
        table = {
            (a0, 5_000): 40,  # the first record at or after 5 s
            (a1, 5_000): -1,  # none: the start moves to the latest offset
            (b0, 5_000): 7,
            (a0, -1): 90,
            (a1, -1): 60,
            (b0, -1): 30,
            (b0, 9_001): 20,  # b is LogAppendTime: from offset 20 on, records are later
        }
        return {tp: table[tp, ts] for tp, ts in timestamps.items()}

    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    pushdown = Pushdown.of(
        [
            GreaterThanOrEqual(TS, epoch + datetime.timedelta(seconds=5)),
            LessThanOrEqual(TS, epoch + datetime.timedelta(seconds=9)),
            GreaterThan(OFF, 44),
        ]
    )
    assert pushdown is not None
    narrowed = pushdown.narrow(
        [(a0, 0, 90), (a1, 0, 60), (b0, 0, 30)], lookups, lambda topics: {"b"} & set(topics)
    )
    # a0: [40, 90) ∩ offset > 44; a1: [60, 60) empty; b0: [7, 20) ∩ offset > 44 empty
    assert narrowed == [(a0, 45, 90)]
    assert calls == [{a0: 5_000, a1: 5_000, b0: 5_000}, {a1: -1}, {b0: 9_001}]


def test_many_offset_points_are_merged_across_the_smallest_gaps():
    a0 = TopicPartition("a", 0)
    points = (*range(0, 1000, 10), 5000)
    pushdown = Pushdown.of([In(OFF, points)])
    assert pushdown is not None
    narrowed = pushdown.narrow([(a0, 0, 10_000)], _no_lookups, _no_configs)
    assert len(narrowed) == 64
    assert narrowed[-1] == (a0, 5000, 5001)
    assert sum(hi - lo for _, lo, hi in narrowed) < 1100
    assert all(any(lo <= p < hi for _, lo, hi in narrowed) for p in points)


def test_filters_on_other_columns_make_no_pushdown():
    assert Pushdown.of([EqualTo(("key",), b"k"), StringContains(("value",), "x")]) is None


def test_small_ranges_share_tasks_and_large_ones_stay_alone():
    parts = [
        KafkaInputPartition("a", 0, 0, 40_000),
        KafkaInputPartition("a", 1, 0, 200_000),  # large: a task of its own
        KafkaInputPartition("a", 2, 10, 50_010),
        KafkaInputPartition("a", 3, 0, 30_000),  # 40k + 50k + 30k > 100k: next group
        KafkaInputPartition("a", 4, 5, 6),
    ]
    grouped = group_small_ranges(parts, limit=100_000)
    assert grouped == [
        parts[1],
        KafkaRangeGroup((parts[0], parts[2])),
        KafkaRangeGroup((parts[3], parts[4])),
    ]
    assert planned_ranges(grouped) == [parts[1], parts[0], parts[2], parts[3], parts[4]]
    assert group_small_ranges([parts[4]]) == [parts[4]]  # a group of one is the range
