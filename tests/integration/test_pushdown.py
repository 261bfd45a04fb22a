"""Filter pushdown in a real Spark session over a real broker: what a query fetches, and that
reads work whether or not PySpark's pushdown switch is on.

Records fetched are the scan node's ``numOutputRows`` (rows the source handed to Spark,
before Spark's own filter).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from pyspark.sql import DataFrame, SparkSession

from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

pytestmark = pytest.mark.integration

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
PARTITIONS = 3
PER_PARTITION = 200


def scan_rows(df: DataFrame) -> int:
    """Run ``df`` and return the rows its (single) scan produced."""
    df.collect()
    plan = df._jdf.queryExecution().executedPlan()
    found = []

    def walk(node) -> None:  # a py4j SparkPlan
        if node.nodeName() == "AdaptiveSparkPlan":
            node = node.executedPlan()
        if node.nodeName().startswith("BatchScan"):
            found.append(node.metrics().get("numOutputRows").get().value())
        children = node.children()
        for i in range(children.size()):
            walk(children.apply(i))

    walk(plan)
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def topic(kafka_bootstrap: str) -> str:
    """3 partitions x 200 records; record i of a partition has CreateTime base + i s."""
    name = f"pushdown-{int(time.time() * 1000)}"
    create_topic(kafka_bootstrap, name, partitions=PARTITIONS)
    base = int(time.time() * 1000) - 3_600_000
    produce(
        kafka_bootstrap,
        name,
        [
            ProducedRecord(key=f"k{i}", value=f"{p}:{i}", partition=p, timestamp_ms=base + i * 1000)
            for p in range(PARTITIONS)
            for i in range(PER_PARTITION)
        ],
    )
    return name


def _pushdown(spark: SparkSession, enabled: str) -> Iterator[None]:
    before = spark.conf.get(PUSHDOWN)
    spark.conf.set(PUSHDOWN, enabled)
    try:
        yield
    finally:
        spark.conf.set(PUSHDOWN, before)


@pytest.fixture()
def pushdown_on(spark: SparkSession) -> Iterator[None]:
    yield from _pushdown(spark, "true")


@pytest.fixture()
def pushdown_off(spark: SparkSession) -> Iterator[None]:
    yield from _pushdown(spark, "false")


def read(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    reader = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
    )
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def values(df: DataFrame) -> list[str]:
    return sorted(r.value.decode() for r in df.select("value").collect())


def test_reads_work_with_pushdown_off(
    spark: SparkSession, kafka_bootstrap: str, topic: str, pushdown_off: None
):
    """PySpark's switch is off by default; a filtered read still works and fetches it all."""
    df = read(spark, kafka_bootstrap, topic).where("partition = 1 AND offset < 5")
    assert values(df) == [f"1:{i}" for i in range(5)]
    assert scan_rows(df) == PARTITIONS * PER_PARTITION


def test_partition_and_offset_window(
    spark: SparkSession, kafka_bootstrap: str, topic: str, pushdown_on: None
):
    df = read(spark, kafka_bootstrap, topic).where("partition = 2 AND offset BETWEEN 100 AND 109")
    assert values(df) == sorted(f"2:{i}" for i in range(100, 110))
    assert scan_rows(df) == 10


def test_timestamp_lower_bound_starts_at_the_matching_offset(
    spark: SparkSession, kafka_bootstrap: str, topic: str, pushdown_on: None
):
    row = read(spark, kafka_bootstrap, topic).where("partition = 0 AND offset = 150").first()
    cut = row.timestamp  # record 150 of every partition has this timestamp
    df = read(spark, kafka_bootstrap, topic).where(
        f"timestamp >= timestamp'{cut.isoformat(sep=' ')}'"
    )
    expected = sorted(f"{p}:{i}" for p in range(PARTITIONS) for i in range(150, PER_PARTITION))
    assert values(df) == expected
    assert scan_rows(df) == len(expected)
    assert df.rdd.getNumPartitions() == 1  # three small ranges share one Spark task


def test_or_is_not_pushed_and_the_result_is_unchanged(
    spark: SparkSession, kafka_bootstrap: str, topic: str, pushdown_on: None
):
    df = read(spark, kafka_bootstrap, topic).where("partition = 0 OR offset < 2")
    expected = sorted(
        [f"0:{i}" for i in range(PER_PARTITION)] + [f"{p}:{i}" for p in (1, 2) for i in (0, 1)]
    )
    assert values(df) == expected
    assert scan_rows(df) == PARTITIONS * PER_PARTITION


def test_pushdown_within_starting_and_ending_offsets(
    spark: SparkSession, kafka_bootstrap: str, topic: str, pushdown_on: None
):
    ending = json.dumps({topic: {"0": 50, "1": 50, "2": 50}})
    df = read(spark, kafka_bootstrap, topic, endingOffsets=ending).where("offset >= 40")
    assert values(df) == sorted(f"{p}:{i}" for p in range(PARTITIONS) for i in range(40, 50))
    assert scan_rows(df) == 30


def test_commit_group_offsets_reads_whole_ranges(
    spark: SparkSession, kafka_bootstrap: str, topic: str, pushdown_on: None
):
    """A read that commits the group's offsets commits each partition's whole range, so it
    reads all of it."""
    df = read(
        spark,
        kafka_bootstrap,
        topic,
        **{"kafka.group.id": f"g-{topic}", "commitGroupOffsets": "true"},
    ).where("partition = 2 AND offset < 3")
    assert values(df) == ["2:0", "2:1", "2:2"]
    assert scan_rows(df) == PARTITIONS * PER_PARTITION
