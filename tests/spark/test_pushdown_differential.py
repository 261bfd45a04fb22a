"""Filter pushdown of batch reads (issue 14), at the planner level: no Spark query, only the
reader as Spark drives it (``pushFilters``, then ``partitions()``, then ``read()`` of every
planned partition), against the real broker and the topics of ``tests/pushdown_topics.py``
(out-of-order CreateTime, compaction gaps, committed and aborted transactions, several
partitions and topics, a LogAppendTime topic).

Differential: for generated filter lists (hypothesis) and read options, the rows of the pushed
read that satisfy the filters are exactly the rows of the unpushed read (same options, no
``pushFilters``) that satisfy them, row for row. The filters are evaluated by :func:`holds`, a
small evaluator written here from SQL's three-valued logic (a row is kept when the AND of the
filters is TRUE; NULL and FALSE drop it), not from the source's code. Where the options allow
it, the unpushed read is also checked against the content written (``PushdownData``).

Narrowing: exact plans (``partitions()``) for typical filters, with ranges worked out from the
data written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
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

from spark_kafka_py.spark.planner import KafkaInputPartition, planned_ranges
from tests.pushdown_topics import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    PushdownData,
    Rec,
    pushdown_data,
    read_all,
    read_partitions,
    reader_for,
)

pytestmark = pytest.mark.integration

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


@pytest.fixture(scope="module")
def pd(kafka_bootstrap: str) -> PushdownData:
    return pushdown_data(kafka_bootstrap)


def as_datetime(us: int) -> datetime:
    """A tz-aware UTC datetime (as Spark hands timestamp literals to ``pushFilters``)."""
    return EPOCH + timedelta(microseconds=us)


def as_micros(value: datetime) -> int:
    return (value - EPOCH) // timedelta(microseconds=1)


# -- SQL three-valued evaluation of pyspark.sql.datasource filters -------------------------------


def column(row: Rec, attribute: tuple[str, ...]) -> Any:
    """The row's value of a (top-level) column; timestamps as microseconds."""
    (name,) = attribute
    return {
        "key": row.key,
        "value": row.value,
        "topic": row.topic,
        "partition": row.partition,
        "offset": row.offset,
        "timestamp": row.timestamp_us,
        "timestampType": row.timestamp_type,
    }[name]


def literal(value: Any) -> Any:
    return as_micros(value) if isinstance(value, datetime) else value


def _compare(a: Any, b: Any, op: Callable[[Any, Any], bool]) -> bool | None:
    """SQL comparison: NULL when either side is NULL."""
    if a is None or b is None:
        return None
    return op(a, b)


def evaluate(f: Filter, row: Rec) -> bool | None:
    """The filter's value on ``row``: True, False or None (SQL NULL)."""
    if isinstance(f, Not):
        inner = evaluate(f.child, row)
        return None if inner is None else not inner
    value = column(row, f.attribute)
    if isinstance(f, IsNull):
        return value is None
    if isinstance(f, IsNotNull):
        return value is not None
    if isinstance(f, EqualNullSafe):
        lit = literal(f.value)
        return (value is None and lit is None) or (value is not None and lit == value)
    if isinstance(f, In):
        if value is None:
            return None
        members = [literal(v) for v in f.value]
        if value in [m for m in members if m is not None]:
            return True
        return None if None in members else False
    lit = literal(f.value)
    ops: dict[type, Callable[[Any, Any], bool]] = {
        EqualTo: lambda a, b: a == b,
        GreaterThan: lambda a, b: a > b,
        GreaterThanOrEqual: lambda a, b: a >= b,
        LessThan: lambda a, b: a < b,
        LessThanOrEqual: lambda a, b: a <= b,
        StringStartsWith: lambda a, b: a.startswith(b),
        StringEndsWith: lambda a, b: a.endswith(b),
        StringContains: lambda a, b: b in a,
    }
    return _compare(value, lit, ops[type(f)])


def holds(filters: Sequence[Filter], row: Rec) -> bool:
    """The AND of ``filters`` is TRUE on ``row`` (FALSE or NULL drop the row)."""
    return all(evaluate(f, row) is True for f in filters)


def keep(filters: Sequence[Filter], rows: Sequence[Rec]) -> list[Rec]:
    return sorted(r for r in rows if holds(filters, r))


def test_evaluator_three_valued_logic() -> None:
    """The evaluator itself, on hand-made rows (SQL semantics)."""
    row = Rec("t", 1, 5, None, b"v", 2_000, 0)
    assert evaluate(EqualTo(("key",), b"k"), row) is None
    assert evaluate(Not(EqualTo(("key",), b"k")), row) is None
    assert evaluate(EqualNullSafe(("key",), None), row) is True
    assert evaluate(EqualNullSafe(("value",), None), row) is False
    assert evaluate(EqualTo(("partition",), None), row) is None
    assert evaluate(In(("partition",), (1, None)), row) is True
    assert evaluate(In(("partition",), (2, None)), row) is None
    assert evaluate(Not(In(("partition",), (2, None))), row) is None
    assert evaluate(Not(In(("partition",), (2, 3))), row) is True
    assert evaluate(GreaterThan(("timestamp",), as_datetime(1_999)), row) is True
    assert evaluate(GreaterThan(("timestamp",), as_datetime(2_000)), row) is False
    assert evaluate(StringStartsWith(("topic",), ""), row) is True
    assert not holds([IsNotNull(("offset",)), EqualTo(("key",), b"k")], row)
    assert holds([], row)


# -- generated filters ---------------------------------------------------------------------------


def _timestamps(pd: PushdownData) -> list[int]:
    """Microsecond values around the data's timestamps (each, +-1 us, +-1 ms, +0.5 ms) and
    outside it (before the first, after the last, the epoch, far future)."""
    stamps = sorted({r.timestamp_us for r in pd.records})
    edges = [stamps[0], stamps[-1], *stamps[:: max(1, len(stamps) // 40)]]
    near = [s + d for s in edges for d in (-1_000, -1, 0, 1, 500, 999, 1_000)]
    return sorted(set(near) | {0, stamps[0] - 86_400_000_000, stamps[-1] + 3_600_000_000})


def _offsets(pd: PushdownData) -> list[int]:
    ends = set(pd.log_end.values())
    marks = {149, 150, 151, 250, 251, 252, 401, 402, 403}  # around main partition 0's markers
    compacted = {r.offset for r in pd.records if r.topic == pd.compact}
    gaps = {o + d for o in sorted(compacted)[:10] for d in (-1, 1)}
    return sorted(
        {
            -1,
            0,
            1,
            49,
            50,
            51,
            99,
            100,
            199,
            200,
            *ends,
            *(e - 1 for e in ends),
            *(e + 1 for e in ends),
        }
        | marks
        | gaps
        | set(INT64)
    )


def _values(pd: PushdownData, name: str) -> st.SearchStrategy[Any]:
    """Literals of the column ``name``: boundaries of the data and outside it."""
    if name == "partition":
        return st.integers(0, 3) | st.sampled_from([-1, 4, 5, *INT32])
    if name == "offset":
        return st.sampled_from(_offsets(pd)) | st.integers(0, 510)
    if name == "timestamp":
        return st.sampled_from(_timestamps(pd)).map(as_datetime)
    if name == "topic":
        return st.sampled_from([*pd.topics, f"{pd.main}x", "pd-", "", "zzz"])
    if name == "timestampType":
        return st.sampled_from([-1, 0, 1, 2])
    return st.sampled_from([b"k1", b"k4", b"a0", b"m1-3", b"la1-7", b"c-299", b"roll", b"", b"x"])


_ORDERED = (EqualTo, EqualNullSafe, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)
_PUSHABLE = ("partition", "offset", "timestamp", "topic")
_LEFT_ALONE = ("key", "value", "timestampType")


@st.composite
def base_filter(draw: st.DrawFn, pd: PushdownData) -> Filter:
    name = draw(st.sampled_from(_PUSHABLE * 3 + _LEFT_ALONE))
    attr = (name,)
    values = _values(pd, name)
    kinds: list[str] = ["cmp", "cmp", "cmp", "cmp", "in", "in", "null"]
    if name == "topic":
        kinds += ["str", "str", "str"]
    kind = draw(st.sampled_from(kinds))
    # NULL literals now and then (a quarter of the time): the filter is then NULL or FALSE
    with_null = draw(st.integers(0, 3)) == 0
    if kind == "null":
        return draw(st.sampled_from([IsNull(attr), IsNotNull(attr)]))
    if kind == "in":
        members = draw(st.lists(values, min_size=1, max_size=3))
        return In(attr, tuple(members + [None] * with_null))
    if kind == "str":
        cls = draw(st.sampled_from([StringStartsWith, StringEndsWith, StringContains]))
        fragments = [pd.main, pd.pattern[:-2], "main", "compact", "-", "append", "", "x"]
        return cls(attr, draw(st.sampled_from(fragments)))
    cls = draw(st.sampled_from(_ORDERED))
    return cls(attr, None if with_null and cls in (EqualTo, EqualNullSafe) else draw(values))


def filter_lists(pd: PushdownData) -> st.SearchStrategy[list[Filter]]:
    one = st.one_of(base_filter(pd), base_filter(pd), base_filter(pd).map(Not))
    return st.lists(one, min_size=1, max_size=3)


# -- generated read options -------------------------------------------------------------------


@st.composite
def read_options(draw: st.DrawFn, pd: PushdownData) -> dict[str, str]:
    """Subscription, isolation level, optional offsets (JSON or timestamps), minPartitions."""
    subscriptions: list[tuple[dict[str, str], list[tuple[str, int]]]] = []
    for topics in ([pd.main], [pd.main, pd.compact], [pd.logappend]):
        tps = [(t, p) for t in topics for p in pd.partitions_of(t)]
        subscriptions.append(({"subscribe": ",".join(topics)}, tps))
    all_tps = sorted(pd.log_end)
    subscriptions.append(({"subscribePattern": pd.pattern}, all_tps))
    assigned = [(pd.main, 0), (pd.main, 2), (pd.compact, 0), (pd.logappend, 1)]
    by_topic: dict[str, list[int]] = {}
    for t, p in assigned:
        by_topic.setdefault(t, []).append(p)
    subscriptions.append(({"assign": json.dumps(by_topic)}, assigned))
    opts, tps = draw(st.sampled_from(subscriptions))
    opts = dict(opts)
    opts["kafka.isolation.level"] = draw(st.sampled_from([READ_COMMITTED, READ_UNCOMMITTED]))
    mode = draw(st.sampled_from(["none", "json", "json-start", "timestamps", "ending-ts"]))
    if mode.startswith("json"):
        start: dict[str, dict[str, int]] = {}
        end: dict[str, dict[str, int]] = {}
        for t, p in tps:
            last = pd.log_end[(t, p)]
            lo = draw(st.sampled_from([-2, 0]) | st.integers(0, last))
            hi = draw(st.just(-1) | st.integers(max(lo, 0), last))
            start.setdefault(t, {})[str(p)] = lo
            end.setdefault(t, {})[str(p)] = hi
        opts["startingOffsets"] = json.dumps(start)
        if mode == "json":
            opts["endingOffsets"] = json.dumps(end)
    elif mode in ("timestamps", "ending-ts"):
        # a start at or before every partition's newest record (else Spark's default
        # startingOffsetsByTimestampStrategy=error fails the read)
        newest = min(
            max(r.timestamp_us for r in pd.records if (r.topic, r.partition) == tp) for tp in tps
        )
        stamps = sorted({r.timestamp_us // 1000 for r in pd.records if r.timestamp_us <= newest})
        lo_ms = draw(st.sampled_from(stamps))
        hi_ms = draw(st.sampled_from([s for s in stamps if s >= lo_ms] + [lo_ms + 10**9]))
        if mode == "timestamps":
            opts["startingTimestamp"] = str(lo_ms)
        opts["endingTimestamp"] = str(hi_ms)
    if draw(st.booleans()):
        opts["minPartitions"] = "5"
    return opts


def expected_rows(pd: PushdownData, opts: Mapping[str, str]) -> list[Rec] | None:
    """The written content an unpushed read with ``opts`` returns, when it follows from the
    options alone (not with timestamp options: their offsets depend on the markers' times)."""
    if "startingTimestamp" in opts or "endingTimestamp" in opts:
        return None
    if "subscribe" in opts:
        tps = {tp for tp in pd.log_end if tp[0] in opts["subscribe"].split(",")}
    elif "assign" in opts:
        tps = {(t, p) for t, ps in json.loads(opts["assign"]).items() for p in ps}
    else:
        tps = set(pd.log_end)

    def bound(key: str, tp: tuple[str, int], default: int) -> int:
        spec = json.loads(opts[key])[tp[0]][str(tp[1])] if key in opts else default
        return {-2: 0, -1: pd.log_end[tp]}.get(spec, spec)

    return [
        r
        for r in pd.rows(opts["kafka.isolation.level"])
        if (r.topic, r.partition) in tps
        and bound("startingOffsets", (r.topic, r.partition), -2)
        <= r.offset
        < bound("endingOffsets", (r.topic, r.partition), -1)
    ]


_UNPUSHED: dict[tuple[tuple[str, str], ...], list[Rec]] = {}


def unpushed(pd: PushdownData, opts: Mapping[str, str]) -> list[Rec]:
    """The whole read with ``opts`` and no pushFilters (the data is immutable: read once)."""
    key = tuple(sorted(opts.items()))
    if key not in _UNPUSHED:
        rows = read_all(pd.bootstrap, opts)
        expected = expected_rows(pd, opts)
        if expected is not None:
            assert rows == expected, opts
        _UNPUSHED[key] = rows
    return _UNPUSHED[key]


def pushed(
    pd: PushdownData, opts: Mapping[str, str], filters: list[Filter]
) -> tuple[list[KafkaInputPartition], list[Rec]]:
    """Plan with ``filters`` pushed as Spark does; the plan and the rows it reads. Checks the
    reader hands every filter back to Spark (the same objects)."""
    reader = reader_for(pd.bootstrap, opts)
    rest = list(reader.pushFilters(filters))
    assert sorted(map(id, rest)) == sorted(map(id, filters)), (filters, rest)
    tasks = reader.partitions()  # small ranges may share a task (KafkaRangeGroup)
    return planned_ranges(tasks), read_partitions(reader, tasks)


def check(
    pd: PushdownData, opts: Mapping[str, str], filters: list[Filter]
) -> tuple[list[Rec], int, int]:
    """The differential check; returns the matching rows, the number of rows the pushed read
    fetched and the number the unpushed read fetched."""
    full = unpushed(pd, opts)
    _, rows = pushed(pd, opts, filters)
    assert set(rows) <= set(full), "the pushed read returned rows the unpushed read does not"
    want = keep(filters, full)
    got = keep(filters, rows)
    assert got == want, (opts, filters, len(got), len(want), sorted(set(want) - set(got))[:5])
    return got, len(rows), len(full)


@SETTINGS
@given(data=st.data())
def test_pushed_read_equals_unpushed_read(pd: PushdownData, data: st.DataObject) -> None:
    opts = data.draw(read_options(pd), label="options")
    filters = data.draw(filter_lists(pd), label="filters")
    matching, fetched, whole = check(pd, opts, filters)
    # how the examples spread (pytest --hypothesis-show-statistics)
    event("unpushed: none" if not whole else "unpushed: some")
    event("fetched: none" if not fetched else "fetched: fewer" if fetched < whole else "all")
    event("matching: none" if not matching else "matching: some")


def test_full_read_equals_what_was_written(pd: PushdownData) -> None:
    for isolation in (READ_UNCOMMITTED, READ_COMMITTED):
        opts = {"subscribePattern": pd.pattern, "kafka.isolation.level": isolation}
        assert check(pd, opts, [])[0] == pd.rows(isolation)
    assert len(pd.rows(READ_UNCOMMITTED)) - len(pd.rows(READ_COMMITTED)) == len(pd.aborted) > 0


# -- narrowing: exact plans ---------------------------------------------------------------------


def plan(pd: PushdownData, filters: list[Filter], **options: str) -> dict[tuple[str, int], tuple]:
    """``{(topic, partition): (from, until)}`` of the non-empty planned ranges (pieces of one
    topic-partition merged, checked to be contiguous); also runs the differential check."""
    opts = {"kafka.isolation.level": READ_UNCOMMITTED, **options}
    if not {"subscribe", "assign"} & set(options):
        opts["subscribePattern"] = pd.pattern
    check(pd, opts, filters)
    parts, _ = pushed(pd, opts, filters)
    out: dict[tuple[str, int], tuple[int, int]] = {}
    for p in sorted(parts, key=lambda p: (p.topic, p.partition, p.from_offset)):
        if p.until_offset <= p.from_offset:
            continue
        tp = (p.topic, p.partition)
        if tp in out:
            assert out[tp][1] == p.from_offset, parts
            out[tp] = (out[tp][0], p.until_offset)
        else:
            out[tp] = (p.from_offset, p.until_offset)
    return out


def first_offset_at_or_after(pd: PushdownData, topic: str, partition: int, us: int) -> int:
    """ListOffsets' answer, from the data written: the earliest offset whose timestamp is at or
    after ``us`` (ms precision: a bound inside a millisecond rounds up)."""
    ms = -(-us // 1000)
    return min(
        r.offset
        for r in pd.records
        if (r.topic, r.partition) == (topic, partition) and r.timestamp_us >= ms * 1000
    )


def full(pd: PushdownData, topic: str, partition: int) -> tuple[int, int]:
    return (0, pd.log_end[(topic, partition)])


def test_partition_equal_plans_one_partition(pd: PushdownData) -> None:
    assert plan(pd, [EqualTo(("partition",), 2)], subscribe=pd.main) == {
        (pd.main, 2): full(pd, pd.main, 2)
    }


def test_partition_in_and_not_equal(pd: PushdownData) -> None:
    m = pd.main
    assert plan(pd, [In(("partition",), (0, 2, None))], subscribe=m) == {
        (m, 0): full(pd, m, 0),
        (m, 2): full(pd, m, 2),
    }
    assert plan(pd, [Not(EqualTo(("partition",), 1))], subscribe=m) == {
        (m, p): full(pd, m, p) for p in (0, 2, 3)
    }
    assert plan(pd, [EqualTo(("partition",), 7)], subscribe=m) == {}


def test_offset_between_on_one_partition(pd: PushdownData) -> None:
    filters: list[Filter] = [
        GreaterThanOrEqual(("offset",), 100),
        LessThanOrEqual(("offset",), 199),
        EqualTo(("partition",), 1),
    ]
    assert plan(pd, filters, subscribe=pd.main) == {(pd.main, 1): (100, 200)}


def test_offset_bounds_intersect_starting_offsets(pd: PushdownData) -> None:
    m = pd.main
    start = json.dumps({m: {"0": -2, "1": 300, "2": -2, "3": 450}})
    got = plan(pd, [GreaterThan(("offset",), 99)], subscribe=m, startingOffsets=start)
    assert got == {(m, 0): (100, 403), (m, 1): (300, 500), (m, 2): (100, 500), (m, 3): (450, 500)}
    assert plan(pd, [GreaterThan(("offset",), 10), LessThan(("offset",), 5)], subscribe=m) == {}


def test_timestamp_lower_bound_starts_at_the_first_offset_at_or_after_it(
    pd: PushdownData,
) -> None:
    m = pd.main
    p1 = sorted(r for r in pd.records if (r.topic, r.partition) == (m, 1))
    # a record 10 minutes older than its predecessor: the bound is its timestamp, so the first
    # offset at or after the bound is well before it (ListOffsets looks at offsets in order)
    late = next(r for r in p1 if r.offset > 100 and r.offset % 7 == 6)
    bound = late.timestamp_us
    expected_from = first_offset_at_or_after(pd, m, 1, bound)
    assert expected_from < late.offset
    got = plan(pd, [GreaterThanOrEqual(("timestamp",), as_datetime(bound))], subscribe=m)
    assert got[(m, 1)] == (expected_from, 500)
    for p in (0, 2, 3):
        assert got[(m, p)] == (first_offset_at_or_after(pd, m, p, bound), pd.log_end[(m, p)])
    # strictly after, with a bound 1 us past a record's millisecond: that record is excluded
    exact = p1[200].timestamp_us
    got = plan(
        pd,
        [GreaterThan(("timestamp",), as_datetime(exact)), EqualTo(("partition",), 1)],
        subscribe=m,
    )
    assert got == {(m, 1): (first_offset_at_or_after(pd, m, 1, exact + 1), 500)}
    assert got[(m, 1)][0] > first_offset_at_or_after(pd, m, 1, exact)


def test_timestamp_upper_bound_narrows_the_end_only_on_log_append_time(pd: PushdownData) -> None:
    la = pd.logappend
    round1 = min(r.timestamp_us for r in pd.records if r.topic == la and r.offset >= 50)
    round0 = max(r.timestamp_us for r in pd.records if r.topic == la and r.offset < 50)
    for upper in (
        LessThan(("timestamp",), as_datetime(round1)),
        LessThanOrEqual(("timestamp",), as_datetime(round0)),
    ):
        got = plan(pd, [upper], subscribe=f"{pd.main},{la}")
        for p in pd.partitions_of(la):
            assert got[(la, p)] == (0, pd.logappend_split[p]), upper
        for p in pd.partitions_of(pd.main):  # CreateTime: a later record may be older
            assert got[(pd.main, p)] == full(pd, pd.main, p), upper


def test_topic_filters_with_a_pattern(pd: PushdownData) -> None:
    got = plan(pd, [EqualTo(("topic",), pd.compact)])
    assert got == {(pd.compact, 0): full(pd, pd.compact, 0)}
    got = plan(pd, [In(("topic",), (pd.main, pd.logappend, "absent"))])
    assert set(got) == {tp for tp in pd.log_end if tp[0] != pd.compact}
    got = plan(pd, [EqualTo(("topic",), "absent")], subscribe=f"{pd.main},{pd.compact}")
    assert got == {}


def test_filters_on_other_columns_plan_everything(pd: PushdownData) -> None:
    filters: list[Filter] = [EqualTo(("key",), b"k1"), IsNotNull(("value",))]
    assert plan(pd, filters) == {tp: (0, end) for tp, end in pd.log_end.items()}
