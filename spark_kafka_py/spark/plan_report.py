"""What a batch read planned against what it would have planned without filters.

PySpark's ``explain()`` shows no pushed filters for a Python data source, and PySpark offers
filters to one only when ``spark.sql.python.filterPushdown.enabled=true`` (off by default), so
nothing in Spark's own output says whether a ``format("pykafka")`` batch read fetched the
offsets its ``WHERE`` asked for or the whole topic. Each batch read's planning therefore

- builds a :class:`PlanReport`: offsets and topic-partitions planned, against those of the
  same read without filters (``[startingOffsets, endingOffsets)``), and the filters that
  narrowed it;
- logs one line (logger ``spark_kafka_py.spark.plan_report``): at INFO when Spark offered
  filters (the switch is on), and at INFO when it offered none and the read plans more than
  :data:`PUSHDOWN_HINT_OFFSETS` offsets (the hint: name the switch and the filters that would
  push down); otherwise at DEBUG;
- writes the report where :func:`last_plan` reads it back in the user's Python process.

Where the planning runs: PySpark plans a Python data source's batch read in a Python worker
process the driver's JVM starts (``pyspark.sql.worker.plan_data_source_read``, or
``data_source_pushdown_filters`` when filters are offered), forked by ``pyspark.daemon`` on
the driver's machine, not in the user's process. Its log goes to that worker's Python logging
(no handler unless the worker's Python is configured; PySpark's
``spark.sql.pyspark.worker.logging.enabled`` collects WARNING and above by default). The
report goes to a file named after the driver JVM's process id in a directory private to the
OS user (:func:`plans_dir`), found from the worker by walking up its parent processes to the
JVM (``/proc``, else ``ps``); :func:`last_plan` asks the session's JVM its process id (py4j).

Whether the switch is on cannot be read from the reader: PySpark passes it to the planning
worker but not to the reader, and the worker has no SparkSession. It is inferred: the
reader's ``pushFilters`` is called only with the switch on and at least one filter Spark can
express, so a read whose ``pushFilters`` was not called had the switch off or no such filter,
and the hint says both.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import os
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
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
from spark_kafka_py.spark.planner import planned_ranges
from spark_kafka_py.spark.pushdown import Pushdown

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

#: PySpark's switch: filters are offered to Python data sources only when it is ``true``.
PUSHDOWN_SWITCH = "spark.sql.python.filterPushdown.enabled"

#: A batch read offered no filters whose plan holds more than this many offsets (records, less
#: compaction gaps and transaction markers) gets the hint line at INFO. Read when planning.
PUSHDOWN_HINT_OFFSETS = 1_000_000

#: Version of the report file's JSON layout.
_REPORT_VERSION = 1
#: Parent processes walked from the planning worker to the driver's JVM: the worker's parent
#: is ``pyspark.daemon`` (or the JVM itself without ``spark.python.use.daemon``).
_MAX_HOPS = 2
#: At most this many topics named in a log line.
_TOPICS_NAMED = 3
#: At most this many values of an ``IN`` named in a log line.
_VALUES_NAMED = 5

Range = tuple[str, int, int, int]
"""``(topic, partition, from offset, until offset)``."""


@dataclass(frozen=True)
class PlanReport:
    """One batch read's plan against the same read without filters.

    Offsets count the positions in ``[from, until)`` ranges: the records fetched, plus the
    compaction gaps and transaction markers among them.

    Attributes:
        topics: the topics of the read's topic-partitions, sorted.
        planned_offsets: offsets in the planned ranges.
        unfiltered_offsets: offsets in ``[startingOffsets, endingOffsets)`` of every
            topic-partition of the read: what it plans without filters.
        planned_partitions: topic-partitions with at least one planned offset.
        unfiltered_partitions: topic-partitions with at least one offset without filters.
        tasks: Spark input partitions (tasks) planned.
        filters_offered: Spark called the reader's ``pushFilters``: the switch
            (:data:`PUSHDOWN_SWITCH`) is on. ``False``: it is off, or the query had no filter
            Spark could offer.
        offered: how many filters Spark offered.
        filters: the offered filters on ``topic``, ``partition``, ``offset`` and
            ``timestamp`` the plan was narrowed with, as SQL, in Spark's order (without the
            ``IS NOT NULL`` Spark adds beside comparisons: every record passes it); empty when
            none were (e.g. with ``commitGroupOffsets=true``).
        ranges: the planned ranges, in plan order.
        unfiltered_ranges: the ranges without filters (non-empty ones), sorted.
        planned_at: when planning ended, seconds since the epoch.
        hint: the read was offered no filters and plans more than
            :data:`PUSHDOWN_HINT_OFFSETS` offsets.
        message: the line logged (at INFO when ``filters_offered`` or ``hint``, else DEBUG).
    """

    topics: tuple[str, ...]
    planned_offsets: int
    unfiltered_offsets: int
    planned_partitions: int
    unfiltered_partitions: int
    tasks: int
    filters_offered: bool
    offered: int
    filters: tuple[str, ...]
    ranges: tuple[Range, ...]
    unfiltered_ranges: tuple[Range, ...]
    planned_at: float
    hint: bool
    message: str

    def to_json(self) -> str:
        """The report as one JSON object (with a ``version`` key)."""
        return json.dumps({"version": _REPORT_VERSION, **dataclasses.asdict(self)})

    @classmethod
    def from_json(cls, text: str) -> PlanReport:
        """The report :meth:`to_json` wrote.

        Raises:
            ValueError: not JSON, another layout version, or fields missing.
        """
        data = json.loads(text)
        if not isinstance(data, dict) or data.pop("version", None) != _REPORT_VERSION:
            raise ValueError("not a format('pykafka') plan report of this version")
        try:
            return cls(
                **{
                    **data,
                    "topics": tuple(data["topics"]),
                    "filters": tuple(data["filters"]),
                    "ranges": tuple(tuple(r) for r in data["ranges"]),
                    "unfiltered_ranges": tuple(tuple(r) for r in data["unfiltered_ranges"]),
                }
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"plan report misses or mistypes a field: {exc}") from None


# -- filters as SQL -----------------------------------------------------------------------------
def _literal(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, bytes | bytearray):
        return f"X'{bytes(value).hex().upper()}'"
    if value is None:
        return "NULL"
    return str(value)


_OPERATORS: Mapping[type, str] = {
    EqualTo: "=",
    EqualNullSafe: "<=>",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}


def describe_filter(f: Filter) -> str:
    """A pushed filter as SQL: ``partition = 2``, ``offset >= 100``, ``topic LIKE 'orders%'``,
    ``NOT (partition IN (1, 2))``. An ``IN`` names its first values and how many there are."""
    if isinstance(f, Not):
        return f"NOT ({describe_filter(f.child)})"
    column = ".".join(getattr(f, "attribute", ()))
    if isinstance(f, IsNull):
        return f"{column} IS NULL"
    if isinstance(f, IsNotNull):
        return f"{column} IS NOT NULL"
    if isinstance(f, In):
        shown = ", ".join(_literal(v) for v in f.value[:_VALUES_NAMED])
        rest = len(f.value) - _VALUES_NAMED
        return f"{column} IN ({shown}{f', ... {len(f.value)} values' if rest > 0 else ''})"
    pattern = {StringStartsWith: "{}%", StringEndsWith: "%{}", StringContains: "%{}%"}.get(type(f))
    value = getattr(f, "value", None)
    if pattern is not None and isinstance(value, str):
        return f"{column} LIKE {_literal(pattern.format(value))}"
    operator = _OPERATORS.get(type(f))
    if operator is not None:
        return f"{column} {operator} {_literal(value)}"
    return repr(f)


# -- the report -----------------------------------------------------------------------------------
def _topics_text(topics: Sequence[str]) -> str:
    if len(topics) == 1:
        return f"topic {topics[0]}"
    named = ", ".join(topics[:_TOPICS_NAMED])
    more = len(topics) - _TOPICS_NAMED
    return f"topics {named}" + (f" and {more} more" if more > 0 else "")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def build_report(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    plan: Sequence[InputPartition],
    offered: Sequence[Filter] | None,
    pushdown: Pushdown | None,
) -> PlanReport:
    """The report of one batch read's planning.

    Args:
        start: the resolved start offset of every topic-partition of the read
            (``startingOffsets`` or its timestamp or group forms).
        end: the resolved end offsets (``endingOffsets`` ...), same keys.
        plan: the planned input partitions (``KafkaInputPartition`` / ``KafkaRangeGroup``).
        offered: the filters Spark offered (``pushFilters``), ``None`` if it offered none.
        pushdown: what narrowed the plan, ``None`` if nothing did.

    Returns:
        The report; :attr:`PlanReport.message` is its log line. Reads
        :data:`PUSHDOWN_HINT_OFFSETS` when called.
    """
    unfiltered = tuple(
        (tp.topic, tp.partition, start.get(tp, hi), hi)
        for tp, hi in sorted(end.items())
        if hi > start.get(tp, hi)
    )
    ranges = tuple(
        (r.topic, r.partition, r.from_offset, r.until_offset)
        for r in planned_ranges(plan)
        if r.until_offset > r.from_offset
    )
    planned = sum(hi - lo for _, _, lo, hi in ranges)
    total = sum(hi - lo for _, _, lo, hi in unfiltered)
    planned_tps = len({(t, p) for t, p, _, _ in ranges})
    topics = tuple(sorted({tp.topic for tp in end}))
    tasks = sum(1 for part in plan if planned_ranges([part]))
    # IS NOT NULL (Spark adds it beside comparisons) allows every record: not named
    used = () if pushdown is None else pushdown.filters
    filters = tuple(describe_filter(f) for f in used if not isinstance(f, IsNotNull))
    head = (
        f"format('pykafka') batch read of {_topics_text(topics)}: planned {planned:,} of "
        f"{_plural(total, 'offset')} in {planned_tps:,} of {len(unfiltered):,} "
        f"topic-partitions ({_plural(tasks, 'Spark task')})"
    )
    hint = False
    if offered is None:
        hint = planned > PUSHDOWN_HINT_OFFSETS
        message = (
            f"{head}, the whole [startingOffsets, endingOffsets): no filter was pushed down. "
            f"Spark offers a query's filters to the source only when {PUSHDOWN_SWITCH}=true "
            "(PySpark's switch, off by default); to fetch less, set it and filter on "
            "partition, offset, timestamp or topic (=, IN, <, <=, >, >=, BETWEEN); "
            "see docs/pushdown.md"
        )
    elif pushdown is not None and filters:
        message = f"{head}, narrowed by the pushed filters {' AND '.join(filters)}"
    elif pushdown is not None:
        message = (
            f"{head}: the pushed filters on topic, partition, offset and timestamp are "
            "IS NOT NULL only, which every record passes"
        )
    elif any(Pushdown.of([f]) is not None for f in offered):  # commitGroupOffsets=true
        message = (
            f"{head}: the filters on topic, partition, offset and timestamp were not applied "
            "(commitGroupOffsets=true commits, so reads, each topic-partition's whole range)"
        )
    else:
        message = (
            f"{head}: none of the {_plural(len(offered), 'filter')} Spark offered is on "
            "topic, partition, offset or timestamp"
        )
    return PlanReport(
        topics=topics,
        planned_offsets=planned,
        unfiltered_offsets=total,
        planned_partitions=planned_tps,
        unfiltered_partitions=len(unfiltered),
        tasks=tasks,
        filters_offered=offered is not None,
        offered=0 if offered is None else len(offered),
        filters=filters,
        ranges=ranges,
        unfiltered_ranges=unfiltered,
        planned_at=time.time(),
        hint=hint,
        message=message,
    )


def report_plan(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    plan: Sequence[InputPartition],
    offered: Sequence[Filter] | None,
    pushdown: Pushdown | None,
) -> PlanReport:
    """Build the report of one batch read's planning (:func:`build_report`), log its line and
    write it for :func:`last_plan` (a failure to write is logged at WARNING, never raised)."""
    report = build_report(start, end, plan, offered, pushdown)
    level = logging.INFO if report.filters_offered or report.hint else logging.DEBUG
    log.log(level, "%s", report.message)
    jvm = _driver_jvm_pid()
    if jvm is None:
        log.debug("plan report not written: no JVM among this process's parents")
        return report
    try:
        _write(report, jvm)
    except OSError as exc:
        log.warning("format('pykafka') plan report not written to %s: %s", plans_dir(), exc)
    return report


# -- where reports are kept -----------------------------------------------------------------------
def plans_dir() -> Path:
    """The directory of the plan reports: ``<temp dir>/spark-kafka-py-plans-<user id>``
    (``tempfile.gettempdir()``, from ``TMPDIR``), private to the OS user (mode 0700)."""
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"spark-kafka-py-plans-{user}"


def _private_dir(create: bool) -> Path:
    """:func:`plans_dir`, created if asked, checked to be a directory of this user that no one
    else may read or write (so another user cannot plant or read reports).

    Raises:
        FileNotFoundError: it does not exist (and ``create`` is false).
        PermissionError: it is not a private directory of this user.
    """
    path = plans_dir()
    if create:
        path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    foreign = hasattr(os, "getuid") and info.st_uid != os.getuid()
    if not stat.S_ISDIR(info.st_mode) or foreign or info.st_mode & 0o077:
        raise PermissionError(f"{path} is not a directory private to this user (mode 0700)")
    return path


def _write(report: PlanReport, jvm: int) -> None:
    """Replace the report of JVM ``jvm`` (written whole, then renamed), and remove those of
    JVMs no longer running."""
    path = _private_dir(create=True)
    target = path / f"{jvm}.json"
    scratch = path / f".{jvm}.{os.getpid()}.tmp"
    scratch.write_text(report.to_json(), encoding="utf-8")
    os.replace(scratch, target)
    if os.name != "posix":
        return
    for old in path.glob("*.json"):
        if old.stem.isdigit() and not _running(int(old.stem)):
            old.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _process(pid: int) -> tuple[str, int] | None:
    """``(executable name, parent pid)`` of ``pid``, from ``/proc`` (Linux) or ``ps``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat_file:
            text = stat_file.read()
    except FileNotFoundError:
        text = ""
    except OSError:
        return None
    if text:  # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        head, _, tail = text.rpartition(")")
        fields = tail.split()
        if len(fields) < 2 or not fields[1].isdigit():
            return None
        return head.partition("(")[2], int(fields[1])
    try:
        out = subprocess.run(
            ["ps", "-o", "ppid=,comm=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.split(None, 1)
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) != 2 or not out[0].isdigit():
        return None
    return os.path.basename(out[1].strip()), int(out[0])


def _driver_jvm_pid() -> int | None:
    """The process id of the JVM that started this Python worker (its parent, or the parent
    of its ``pyspark.daemon``), or ``None`` when no ``java`` process is that close."""
    pid = os.getppid()
    for _ in range(_MAX_HOPS):
        found = _process(pid)
        if found is None:
            return None
        name, parent = found
        if name == "java":
            return pid
        pid = parent
    return None


def last_plan(spark: SparkSession | None = None) -> PlanReport | None:
    """The last ``format("pykafka")`` batch read planned by ``spark``'s driver.

    PySpark plans a batch read in a Python worker its driver JVM starts, not in this process;
    the worker writes a :class:`PlanReport` under :func:`plans_dir`, named after the JVM's
    process id, which this function asks the JVM for. Planning happens when Spark plans the
    query (an action, ``explain()``, ``df.rdd``), once per plan; the report is that of the
    last one, of any query and any SparkSession of this driver.

    Args:
        spark: a classic (non-Connect) SparkSession whose driver runs on this machine;
            default: the active one.

    Returns:
        The report, or ``None`` when this driver has planned no batch read since it started.

    Raises:
        RuntimeError: no active SparkSession, or a Spark Connect session (the server plans
            the read: :func:`plans_dir` on the server's machine holds its reports).
        PermissionError: :func:`plans_dir` is not a directory private to this OS user.
        ValueError: the report file is not one this version wrote.
    """
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            raise RuntimeError("spark_kafka_py.last_plan(): no active SparkSession")
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        raise RuntimeError(
            "spark_kafka_py.last_plan() needs a classic SparkSession: with Spark Connect the "
            "server plans the read (its reports are in spark-kafka-py-plans-<uid> in the "
            "server machine's temporary directory)"
        )
    context = spark.sparkContext
    jvm = context._jvm
    assert jvm is not None
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    try:
        text = (_private_dir(create=False) / f"{pid}.json").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    report = PlanReport.from_json(text)
    if report.planned_at * 1000 < context.startTime:  # a former JVM with the same pid
        return None
    return report
