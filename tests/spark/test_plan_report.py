"""Pushdown you can see (issue 24): the plan of a ``format("pykafka")`` batch read against the
same read without filters, logged once on the driver and returned by
``spark_kafka_py.last_plan()``.

The first tests build reports from hand-made plans. The others run queries in the shared
Spark session over the real broker: PySpark plans a batch read in Python workers its JVM
starts, so to read their log the source is registered again with ``PYTHONPATH`` (in
``SparkContext.environment``, which PySpark hands to the data source's workers) pointing to a
``sitecustomize`` that sends ``spark_kafka_py.spark.plan_report``'s log to a file at INFO and
lowers :data:`~spark_kafka_py.spark.plan_report.PUSHDOWN_HINT_OFFSETS` to 100 in those
workers. Every expected number below comes from what the topic fixture produced (3
partitions x 200 records on a new topic: offsets 0-199 in each).
"""

from __future__ import annotations

import datetime
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import (
    EqualTo,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

import spark_kafka_py
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark import plan_report
from spark_kafka_py.spark.plan_report import PlanReport, build_report, describe_filter
from spark_kafka_py.spark.planner import KafkaInputPartition, KafkaRangeGroup
from spark_kafka_py.spark.pushdown import Pushdown
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

ROOT = Path(__file__).resolve().parents[2]
SWITCH = "spark.sql.python.filterPushdown.enabled"
UTC = datetime.timezone.utc
P, OFF, T, TS = ("partition",), ("offset",), ("topic",), ("timestamp",)
PARTITIONS, PER_PARTITION = 3, 200
HINT_OFFSETS = 100  # the workers' PUSHDOWN_HINT_OFFSETS (sitecustomize below)
LOGGER = "spark_kafka_py.spark.plan_report"


# -- reports of hand-made plans -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("f", "sql"),
    [
        (EqualTo(P, 2), "partition = 2"),
        (Not(In(P, (1, 2))), "NOT (partition IN (1, 2))"),
        (In(OFF, tuple(range(7))), "offset IN (0, 1, 2, 3, 4, ... 7 values)"),
        (StringStartsWith(T, "o'k"), "topic LIKE 'o''k%'"),
        (
            GreaterThanOrEqual(TS, datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
            "timestamp >= TIMESTAMP '2026-01-02 03:04:05+00:00'",
        ),
        (IsNotNull(OFF), "offset IS NOT NULL"),
    ],
)
def test_filters_read_as_sql(f, sql):
    assert describe_filter(f) == sql


START = {TopicPartition("t", p): 0 for p in range(3)}
END = {TopicPartition("t", p): 200 for p in range(3)}


def test_narrowed_plan_against_the_unfiltered_one():
    offered = [IsNotNull(P), IsNotNull(OFF), EqualTo(P, 2), GreaterThanOrEqual(OFF, 100)]
    offered += [LessThanOrEqual(OFF, 109), EqualTo(("key",), b"k")]
    plan = [KafkaInputPartition("t", 2, 100, 110)]
    report = build_report(START, END, plan, offered, Pushdown.of(offered))
    assert report.message == (
        "format('pykafka') batch read of topic t: planned 10 of 600 offsets in 1 of 3 "
        "topic-partitions (1 Spark task), narrowed by the pushed filters partition = 2 AND "
        "offset >= 100 AND offset <= 109"
    )
    assert (report.planned_offsets, report.unfiltered_offsets) == (10, 600)
    assert (report.planned_partitions, report.unfiltered_partitions, report.tasks) == (1, 3, 1)
    assert report.ranges == (("t", 2, 100, 110),)
    assert report.unfiltered_ranges == tuple(("t", p, 0, 200) for p in range(3))
    assert report.filters_offered and report.offered == 6 and not report.hint
    assert PlanReport.from_json(report.to_json()) == report


def test_grouped_ranges_count_as_one_task_and_empty_partitions_as_none():
    end = {**END, TopicPartition("u", 0): 0}  # an empty topic-partition
    start = {**START, TopicPartition("u", 0): 0}
    plan = [KafkaRangeGroup((KafkaInputPartition("t", 0, 5, 6), KafkaInputPartition("t", 1, 5, 6)))]
    offered = [EqualTo(OFF, 5)]
    report = build_report(start, end, plan, offered, Pushdown.of(offered))
    assert report.message.startswith(
        "format('pykafka') batch read of topics t, u: planned 2 of 600 offsets in 2 of 3 "
        "topic-partitions (1 Spark task), narrowed by the pushed filters offset = 5"
    )


def test_filters_not_applied_or_not_on_kafka_columns():
    plan = [KafkaInputPartition("t", p, 0, 200) for p in range(3)]
    head = "format('pykafka') batch read of topic t: planned 600 of 600 offsets in 3 of 3 "
    head += "topic-partitions (3 Spark tasks)"
    value = [EqualTo(("value",), b"x")]
    assert build_report(START, END, plan, value, None).message == (
        f"{head}: none of the 1 filter Spark offered is on topic, partition, offset or timestamp"
    )
    # commitGroupOffsets=true: the reader keeps no pushdown of the filters it was offered
    assert build_report(START, END, plan, [EqualTo(P, 1)], None).message == (
        f"{head}: the filters on topic, partition, offset and timestamp were not applied "
        "(commitGroupOffsets=true commits, so reads, each topic-partition's whole range)"
    )


def test_hint_only_above_the_threshold(monkeypatch: pytest.MonkeyPatch):
    plan = [KafkaInputPartition("t", p, 0, 200) for p in range(3)]
    monkeypatch.setattr(plan_report, "PUSHDOWN_HINT_OFFSETS", 600)
    assert not build_report(START, END, plan, None, None).hint  # 600 is not more than 600
    monkeypatch.setattr(plan_report, "PUSHDOWN_HINT_OFFSETS", 599)
    report = build_report(START, END, plan, None, None)
    assert report.hint and not report.filters_offered
    assert report.message == hint_line("topic t", 600, 3, 3)


def test_report_file_only_in_a_private_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    plans = tmp_path / "plans"
    monkeypatch.setattr(plan_report, "plans_dir", lambda: plans)
    monkeypatch.setattr(plan_report, "_driver_jvm_pid", os.getpid)  # a running "JVM"
    plan = [KafkaInputPartition("t", 0, 0, 200)]
    report = plan_report.report_plan(START, END, plan, None, None)
    assert oct(plans.stat().st_mode & 0o777) == "0o700"
    written = (plans / f"{os.getpid()}.json").read_text(encoding="utf-8")
    assert PlanReport.from_json(written) == report
    plans.chmod(0o755)  # others may read it: nothing written there, a WARNING instead
    (plans / f"{os.getpid()}.json").unlink()
    with caplog.at_level("WARNING", logger=LOGGER):
        plan_report.report_plan(START, END, plan, None, None)
    assert not (plans / f"{os.getpid()}.json").exists()
    assert "is not a directory private to this user" in caplog.text


def hint_line(topics: str, offsets: int, partitions: int, tasks: int) -> str:
    """The hint, as docs/pushdown.md shows it."""
    return (
        f"format('pykafka') batch read of {topics}: planned {offsets:,} of {offsets:,} offsets "
        f"in {partitions} of {partitions} topic-partitions ({tasks} Spark tasks), the whole "
        "[startingOffsets, endingOffsets): no filter was pushed down. Spark offers a query's "
        "filters to the source only when spark.sql.python.filterPushdown.enabled=true "
        "(PySpark's switch, off by default); to fetch less, set it and filter on partition, "
        "offset, timestamp or topic (=, IN, <, <=, >, >=, BETWEEN); see docs/pushdown.md"
    )


# -- real Spark, real broker ----------------------------------------------------------------------
SITECUSTOMIZE = """\
import logging
_handler = logging.FileHandler({log!r}, encoding="utf-8")
_handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
_logger = logging.getLogger({logger!r})
_logger.addHandler(_handler)
_logger.setLevel(logging.DEBUG)
import spark_kafka_py.spark.plan_report as _report
_report.PUSHDOWN_HINT_OFFSETS = {hint}
"""


@pytest.fixture(scope="module")
def worker_log(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The log file of the planning workers of ``format("pykafka")`` in ``spark`` for this
    module's tests; ``pykafka`` registered again without it afterwards."""
    site = tmp_path_factory.mktemp("plan-report-site")
    log = site / "workers.log"
    log.touch()
    text = SITECUSTOMIZE.format(log=str(log), logger=LOGGER, hint=HINT_OFFSETS)
    (site / "sitecustomize.py").write_text(text)
    environment = spark.sparkContext.environment
    saved = dict(environment)
    environment["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    try:
        spark_kafka_py.register(spark)  # the workers of this registration get the environment
    finally:
        environment.clear()
        environment.update(saved)
    try:
        yield log
    finally:
        spark_kafka_py.register(spark)


@pytest.fixture(scope="module")
def topic(kafka_bootstrap: str) -> str:
    name = f"plan-report-{int(time.time() * 1000)}"
    create_topic(kafka_bootstrap, name, partitions=PARTITIONS)
    base = int(time.time() * 1000) - 3_600_000
    produce(
        kafka_bootstrap,
        name,
        [
            ProducedRecord(key=None, value=f"{p}:{i}", partition=p, timestamp_ms=base + i * 1000)
            for p in range(PARTITIONS)
            for i in range(PER_PARTITION)
        ],
    )
    return name


@pytest.fixture()
def switch(spark: SparkSession) -> Iterator[None]:
    before = spark.conf.get(SWITCH)
    yield
    spark.conf.set(SWITCH, before)


def read(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    reader = spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap)
    return reader.options(subscribe=topic, **options).load()


def run(df: DataFrame, log: Path) -> tuple[list[str], list[str]]:
    """Collect ``df``'s values; return them and the lines its planning logged."""
    mark = log.stat().st_size
    rows = sorted(r.value.decode() for r in df.select("value").collect())
    with log.open(encoding="utf-8") as lines:
        lines.seek(mark)
        return rows, lines.read().splitlines()


@pytest.mark.integration
def test_hint_with_the_switch_off_for_a_large_read(
    spark: SparkSession, kafka_bootstrap: str, topic: str, worker_log: Path, switch: None
):
    spark.conf.set(SWITCH, "false")
    df = read(spark, kafka_bootstrap, topic).where("partition = 1 AND offset < 5")
    rows, logged = run(df, worker_log)
    assert rows == [f"1:{i}" for i in range(5)]
    hint = hint_line(f"topic {topic}", 600, 3, 3)
    assert logged == [f"INFO {LOGGER}: {hint}"]
    report = spark_kafka_py.last_plan(spark)
    assert report is not None and report.hint and not report.filters_offered
    assert (report.planned_offsets, report.unfiltered_offsets) == (600, 600)
    assert (report.planned_partitions, report.unfiltered_partitions) == (3, 3)
    assert report.ranges == tuple((topic, p, 0, 200) for p in range(3))
    assert report.message == hint


@pytest.mark.integration
def test_no_hint_for_a_small_read(
    spark: SparkSession, kafka_bootstrap: str, topic: str, worker_log: Path, switch: None
):
    spark.conf.set(SWITCH, "false")
    ending = json.dumps({topic: {str(p): 30 for p in range(PARTITIONS)}})  # 90 <= 100 offsets
    df = read(spark, kafka_bootstrap, topic, endingOffsets=ending).where("offset < 5")
    rows, logged = run(df, worker_log)
    assert rows == sorted(f"{p}:{i}" for p in range(3) for i in range(5))
    assert [line for line in logged if not line.startswith("DEBUG ")] == []
    report = spark_kafka_py.last_plan(spark)
    assert report is not None and not report.hint and not report.filters_offered
    assert (report.planned_offsets, report.unfiltered_offsets) == (90, 90)
    assert logged == [f"DEBUG {LOGGER}: {report.message}"]


@pytest.mark.integration
def test_switch_on_logs_and_reports_planned_against_unfiltered(
    spark: SparkSession, kafka_bootstrap: str, topic: str, worker_log: Path, switch: None
):
    spark.conf.set(SWITCH, "true")
    df = read(spark, kafka_bootstrap, topic).where("partition = 2 AND offset BETWEEN 100 AND 109")
    rows, logged = run(df, worker_log)
    assert rows == sorted(f"2:{i}" for i in range(100, 110))
    line = (
        f"format('pykafka') batch read of topic {topic}: planned 10 of 600 offsets in 1 of 3 "
        "topic-partitions (1 Spark task), narrowed by the pushed filters partition = 2 AND "
        "offset >= 100 AND offset <= 109"
    )
    assert logged == [f"INFO {LOGGER}: {line}"]
    report = spark_kafka_py.last_plan(spark)
    assert report is not None and report.filters_offered and not report.hint
    assert (report.planned_offsets, report.unfiltered_offsets) == (10, 600)
    assert (report.planned_partitions, report.unfiltered_partitions, report.tasks) == (1, 3, 1)
    assert report.ranges == ((topic, 2, 100, 110),)
    assert report.filters == ("partition = 2", "offset >= 100", "offset <= 109")
    assert report.message == line

    # a timestamp lower bound: record 150 of every partition has the same timestamp
    cut = read(spark, kafka_bootstrap, topic).where("partition = 0 AND offset = 150").first()
    df = read(spark, kafka_bootstrap, topic).where(
        f"timestamp >= timestamp'{cut.timestamp.isoformat(sep=' ')}'"
    )
    rows, logged = run(df, worker_log)
    assert rows == sorted(f"{p}:{i}" for p in range(3) for i in range(150, 200))
    report = spark_kafka_py.last_plan(spark)
    assert report is not None
    assert (report.planned_offsets, report.unfiltered_offsets) == (150, 600)
    assert (report.planned_partitions, report.unfiltered_partitions) == (3, 3)
    assert report.ranges == tuple((topic, p, 150, 200) for p in range(3))
    assert logged == [f"INFO {LOGGER}: {report.message}"]
