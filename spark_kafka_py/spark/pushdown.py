"""Filter pushdown for batch reads: plan only the offset ranges a query's filters can match.

Spark hands a batch reader the conjuncts of a query's ``WHERE`` that it can express as
:class:`pyspark.sql.datasource.Filter` s (``DataSourceReader.pushFilters``, PySpark >= 4.1,
with ``spark.sql.python.filterPushdown.enabled=true``). The ones on ``topic``, ``partition``,
``offset`` and ``timestamp`` narrow the plan:

- ``topic`` and ``partition``: every filter is evaluated on each planned topic-partition's
  values (SQL three-valued logic); a topic-partition for which one evaluates to false or null
  is not planned.
- ``offset``: the offsets every filter allows (a union of intervals: ``=``, ``IN``, ``<``,
  ``<=``, ``>``, ``>=``, their ``NOT``) are intersected with each planned range.
- ``timestamp``: the lowest timestamp allowed becomes, per partition, a ListOffsets look-up
  by timestamp, whose answer is the earliest offset with a timestamp at or after it (Kafka's
  ListOffsets v1+; KIP-79), so no earlier record can match. The highest timestamp allowed
  narrows the end only on topics whose ``message.timestamp.type`` is ``LogAppendTime``
  (broker-assigned, non-decreasing timestamps, read with DescribeConfigs): on ``CreateTime``
  topics a producer may write an older timestamp after a newer one, so the end stays.

Pruning is conservative and Spark evaluates every filter again (all are returned from
``pushFilters``), so a query's rows are the same with and without pushdown; only the records
fetched differ. Filters on other columns, and filters this module cannot read (an unexpected
literal type, a naive datetime), prune nothing.

Source: ``pyspark.sql.datasource`` (``Filter`` classes, ``DataSourceReader.pushFilters``);
Kafka's ``ListOffsetsRequest.json`` / ``DescribeConfigsRequest.json`` specs.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

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

from spark_kafka_py.consumer.types import LATEST_TIMESTAMP, TopicPartition

#: The columns whose filters narrow the plan.
PRUNING_COLUMNS = ("topic", "partition", "offset", "timestamp")
#: Bounds of the integer domain intervals are drawn from (long columns; µs for timestamps).
_MIN = -(2**63)
_MAX = 2**63
#: At most this many separate ranges per topic-partition (e.g. ``offset IN (...)`` with many
#: values); beyond it the closest ranges are merged (fetching the records between them).
MAX_RANGES_PER_PARTITION = 64

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_MICROSECOND = datetime.timedelta(microseconds=1)

Intervals = tuple[tuple[int, int], ...]
"""Sorted, disjoint, non-adjacent half-open integer intervals ``[lo, hi)``."""

_ALL: Intervals = ((_MIN, _MAX),)
_NONE: Intervals = ()


class _Unreadable(Exception):
    """A filter this module does not interpret; it prunes nothing (Spark still applies it)."""


def _union(*sets: Intervals) -> Intervals:
    pieces = sorted(piece for s in sets for piece in s)
    out: list[tuple[int, int]] = []
    for lo, hi in pieces:
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _intersect(a: Intervals, b: Intervals) -> Intervals:
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _complement(a: Intervals) -> Intervals:
    out = []
    position = _MIN
    for lo, hi in a:
        if lo > position:
            out.append((position, lo))
        position = hi
    if position < _MAX:
        out.append((position, _MAX))
    return tuple(out)


def _column(f: Filter) -> str | None:
    """The single top-level column a filter reads, or ``None`` (nested, or a ``Not`` chain
    over such)."""
    while isinstance(f, Not):
        f = f.child
    attribute = getattr(f, "attribute", None)
    if isinstance(attribute, tuple) and len(attribute) == 1:
        return attribute[0]
    return None


# -- offsets and timestamps: the set of values each filter makes true --------------------------
def _point(value: object, to_int: Callable[[object], int]) -> Intervals:
    v = to_int(value)
    return ((v, v + 1),)


def _truth(f: Filter, to_int: Callable[[object], int]) -> tuple[Intervals, Intervals]:
    """``(true, null)``: the values for which ``f`` is true, and those for which it is null,
    for a column that is never null (every Kafka record has an offset and a timestamp).

    Raises:
        _Unreadable: a filter kind or literal this function does not interpret.
    """
    if isinstance(f, Not):
        true, null = _truth(f.child, to_int)
        return _complement(_union(true, null)), null
    if isinstance(f, IsNull):
        return _NONE, _NONE
    if isinstance(f, IsNotNull):
        return _ALL, _NONE
    if isinstance(f, In):
        members = [to_int(v) for v in f.value if v is not None]
        true = _union(*(((v, v + 1),) for v in members))
        return true, (_complement(true) if None in f.value else _NONE)
    if isinstance(f, EqualNullSafe):
        return (_NONE if f.value is None else _point(f.value, to_int)), _NONE
    value = getattr(f, "value", None)
    if value is None:  # a comparison with NULL is null
        if isinstance(f, (EqualTo, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)):
            return _NONE, _ALL
        raise _Unreadable(f)
    if isinstance(f, EqualTo):
        return _point(value, to_int), _NONE
    v = to_int(value)
    if isinstance(f, GreaterThan):
        return ((v + 1, _MAX),), _NONE
    if isinstance(f, GreaterThanOrEqual):
        return ((v, _MAX),), _NONE
    if isinstance(f, LessThan):
        return ((_MIN, v),), _NONE
    if isinstance(f, LessThanOrEqual):
        return ((_MIN, v + 1),), _NONE
    raise _Unreadable(f)


def _long(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Unreadable(value)
    return value


def _micros(value: object) -> int:
    """A tz-aware datetime as µs since the epoch (Spark's timestamp literals reach pushFilters
    as UTC datetimes)."""
    if not isinstance(value, datetime.datetime) or value.tzinfo is None:
        raise _Unreadable(value)
    return (value - _EPOCH) // _MICROSECOND


def allowed(filters: Iterable[Filter], column: str) -> Intervals:
    """The values of ``column`` (offsets, or timestamps in µs) that can satisfy every filter.

    Filters this module does not interpret allow everything.
    """
    to_int = _micros if column == "timestamp" else _long
    result = _ALL
    for f in filters:
        if _column(f) != column:
            continue
        try:
            true, _null = _truth(f, to_int)
        except _Unreadable:
            continue
        result = _intersect(result, true)
    return result


# -- topic and partition: evaluated on each topic-partition ------------------------------------
def _evaluate(f: Filter, value: object) -> bool | None:
    """SQL's value of ``f`` for a non-null column value: True, False or None (null).

    Raises:
        _Unreadable: a filter kind, or a literal of a type, this function does not compare.
    """
    if isinstance(f, Not):
        inner = _evaluate(f.child, value)
        return None if inner is None else not inner
    if isinstance(f, IsNull):
        return False
    if isinstance(f, IsNotNull):
        return True
    if isinstance(f, In):
        members = [_comparable(value, v) for v in f.value if v is not None]
        if value in members:
            return True
        return None if None in f.value else False
    if isinstance(f, EqualNullSafe):
        return f.value is not None and value == _comparable(value, f.value)
    literal = getattr(f, "value", None)
    if literal is None:
        if isinstance(f, (EqualTo, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)):
            return None
        raise _Unreadable(f)
    other = _comparable(value, literal)
    # `other` has `value`'s type (int or str: _comparable checked it), which mypy cannot follow
    # through the object-typed values: hence the operator and arg-type ignores below
    if isinstance(f, EqualTo):
        return value == other
    if isinstance(f, GreaterThan):
        return value > other  # type: ignore[operator]
    if isinstance(f, GreaterThanOrEqual):
        return value >= other  # type: ignore[operator]
    if isinstance(f, LessThan):
        return value < other  # type: ignore[operator]
    if isinstance(f, LessThanOrEqual):
        return value <= other  # type: ignore[operator]
    if isinstance(f, (StringStartsWith, StringEndsWith, StringContains)) and isinstance(value, str):
        if isinstance(f, StringStartsWith):
            return value.startswith(other)  # type: ignore[arg-type]
        if isinstance(f, StringEndsWith):
            return value.endswith(other)  # type: ignore[arg-type]
        return other in value  # type: ignore[operator]
    raise _Unreadable(f)


def _comparable(value: object, literal: object) -> object:
    """``literal`` when it has ``value``'s type (int for partitions, str for topics): Spark
    compares a column with a literal of the column's type; anything else is not read here.
    Strings compare by code point here and by UTF-8 bytes in Spark, the same order."""
    if isinstance(literal, bool) or type(literal) is not type(value):
        raise _Unreadable(literal)
    return literal


def keeps(filters: Iterable[Filter], tp: TopicPartition) -> bool:
    """Whether records of ``tp`` can satisfy every ``topic`` and ``partition`` filter."""
    for f in filters:
        column = _column(f)
        if column not in ("topic", "partition"):
            continue
        try:
            if _evaluate(f, tp.topic if column == "topic" else tp.partition) is not True:
                return False
        except _Unreadable:
            continue
    return True


def _cap(ranges: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """At most ``limit`` ranges: the ``len - limit`` smallest gaps (the earlier one on a tie)
    are closed, in one pass (``offset IN (...)`` may bring thousands of ranges)."""
    if len(ranges) <= limit:
        return ranges
    gaps = sorted(range(len(ranges) - 1), key=lambda k: (ranges[k + 1][0] - ranges[k][1], k))
    closed = set(gaps[: len(ranges) - limit])
    out = [ranges[0]]
    for k in range(1, len(ranges)):
        if k - 1 in closed:
            out[-1] = (out[-1][0], ranges[k][1])
        else:
            out.append(ranges[k])
    return out


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Pushdown:
    """The filters a batch read was given, and how they narrow its plan.

    Picklable (PySpark ships the reader holding it to executors): it keeps the filters only
    and computes the rest when planning.

    Args:
        filters: the pushed filters (the AND of them), as Spark gave them.
    """

    filters: tuple[Filter, ...]

    @classmethod
    def of(cls, filters: Sequence[Filter]) -> Pushdown | None:
        """The pushdown of the filters on :data:`PRUNING_COLUMNS`, or ``None`` if there are
        none."""
        relevant = tuple(f for f in filters if _column(f) in PRUNING_COLUMNS)
        return cls(relevant) if relevant else None

    def offsets(self) -> Intervals:
        """The offsets the ``offset`` filters allow."""
        return allowed(self.filters, "offset")

    def timestamp_bounds_ms(self) -> tuple[int | None, int | None]:
        """``(lower, upper)`` in ms since the epoch: a record can match only if
        ``lower <= timestamp < upper``; ``None`` where unbounded. ``(0, 0)`` when no
        timestamp can match."""
        micros = allowed(self.filters, "timestamp")
        if not micros:
            return 0, 0
        lo, hi = micros[0][0], micros[-1][1]
        return (
            None if lo == _MIN else _ceil_div(lo, 1000),
            None if hi == _MAX else _ceil_div(hi, 1000),
        )

    def narrow(
        self,
        ranges: Sequence[tuple[TopicPartition, int, int]],
        list_offsets: Callable[[Mapping[TopicPartition, int]], dict[TopicPartition, int]],
        log_append_time: Callable[[Iterable[str]], set[str]],
    ) -> list[tuple[TopicPartition, int, int]]:
        """The parts of ``ranges`` that can hold matching records.

        Args:
            ranges: ``(topic-partition, from offset, until offset)`` as planned without
                filters, one per topic-partition.
            list_offsets: ListOffsets for ``{TopicPartition: timestamp in ms or -1}``
                (the planner's, with its isolation level): for a timestamp, the earliest
                offset whose timestamp is at or after it, -1 if there is none (below the
                last stable offset under read_committed); for -1 the latest offset.
            log_append_time: of the topics given, those whose ``message.timestamp.type`` is
                ``LogAppendTime`` (DescribeConfigs); called only with an upper timestamp bound.

        Returns:
            The narrowed ranges, in the order of ``ranges``; a topic-partition may have
            several (at most :data:`MAX_RANGES_PER_PARTITION`), none if nothing can match.
        """
        kept = [(tp, lo, hi) for tp, lo, hi in ranges if hi > lo and keeps(self.filters, tp)]
        lower, upper = self.timestamp_bounds_ms()
        if lower is not None and upper is not None and upper <= lower:
            return []
        start = {tp: lo for tp, lo, _ in kept}
        end = {tp: hi for tp, _, hi in kept}
        if lower is not None and lower > 0 and kept:
            found = list_offsets(dict.fromkeys(start, lower))
            unmatched = [tp for tp, offset in found.items() if offset < 0]
            # No record at or after `lower` below the latest offset (the high watermark, or
            # the last stable offset under read_committed): nothing before it can match.
            found.update(list_offsets(dict.fromkeys(unmatched, LATEST_TIMESTAMP)))
            for tp, offset in found.items():
                start[tp] = max(start[tp], min(offset, end[tp]))
        if upper is not None and upper > 0 and kept:
            appended = log_append_time(sorted({tp.topic for tp in start}))
            bounded = [tp for tp in start if tp.topic in appended]
            if bounded:
                for tp, offset in list_offsets(dict.fromkeys(bounded, upper)).items():
                    if offset >= 0:  # every record from it on is at or after `upper`
                        end[tp] = max(start[tp], min(offset, end[tp]))
        offsets = self.offsets()
        out: list[tuple[TopicPartition, int, int]] = []
        for tp, _, _ in kept:
            pieces = [
                (lo, hi) for lo, hi in _intersect(((start[tp], end[tp]),), offsets) if hi > lo
            ]
            out.extend((tp, lo, hi) for lo, hi in _cap(pieces, MAX_RANGES_PER_PARTITION))
        return out
