"""Batch reads: ``spark.read.format("pykafka")`` vs ``spark.read.format("kafka")``.

Each scenario runs one set of options through both sources against the same real broker
and topics (see ``conftest.py``) and compares every column of every row (chispa), or checks
that both sources reject the query. Row counts are also checked against what the producers
were given, so two equally wrong sources cannot pass.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import BinaryType, StructField, StructType

from spark_kafka_py.testing.tools import ProducedRecord, get_offsets, produce, run_tool

from .conftest import T0, ConformanceData, mixed_record
from .harness import OURS, THEIRS, assert_both_fail, assert_same_rows, load, task_ranges

pytestmark = pytest.mark.integration


# -- rows ----------------------------------------------------------------------------------------


def test_every_codec_headers_and_nulls(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    rows = assert_same_rows(spark, kafka_bootstrap, subscribe=data.mixed, includeHeaders="true")
    assert len(rows) == data.mixed_count
    expected = [mixed_record(n) for n in range(data.mixed_count)]
    # A record without headers has null headers (not an empty array), as in Spark.
    assert sum(r["headers"] is None for r in rows) == sum(not r.headers for r in expected)
    assert not [r for r in rows if r["headers"] == []]
    assert sum(r["key"] is None for r in rows) == sum(r.key is None for r in expected)
    assert sum(r["value"] is None for r in rows) == sum(r.value is None for r in expected)


def test_without_headers(spark: SparkSession, kafka_bootstrap: str, data: ConformanceData) -> None:
    rows = assert_same_rows(spark, kafka_bootstrap, subscribe=data.mixed)
    assert len(rows) == data.mixed_count
    assert "headers" not in rows[0].asDict()


def test_json_offsets(spark: SparkSession, kafka_bootstrap: str, data: ConformanceData) -> None:
    t = data.mixed
    rows = assert_same_rows(
        spark,
        kafka_bootstrap,
        subscribe=t,
        startingOffsets=json.dumps({t: {"0": 5, "1": -2, "2": 20}}),
        endingOffsets=json.dumps({t: {"0": 50, "1": -1, "2": 30}}),
    )
    assert len(rows) == 45 + 100 + 10


def test_assign_with_json_offsets(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    t = data.mixed
    rows = assert_same_rows(
        spark,
        kafka_bootstrap,
        assign=json.dumps({t: [0, 2]}),
        startingOffsets=json.dumps({t: {"0": 10, "2": -2}}),
    )
    assert len(rows) == 90 + 100
    assert {r["partition"] for r in rows} == {0, 2}


def test_subscribe_pattern(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    rows = assert_same_rows(spark, kafka_bootstrap, subscribePattern=data.pattern)
    assert {r["topic"] for r in rows} == {data.pattern_a, data.pattern_b}
    assert len(rows) == 20


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_transactions(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, isolation: str
) -> None:
    rows = assert_same_rows(
        spark,
        kafka_bootstrap,
        subscribe=data.txn,
        includeHeaders="true",
        **{"kafka.isolation.level": isolation},
    )
    values = [bytes(r["value"]).decode() for r in rows]
    committed = [v for v in values if "-commit-" in v]
    assert len(committed) == data.txn_committed
    if isolation == "read_committed":
        assert len(values) == data.txn_committed
    else:
        assert len(values) == data.txn_committed + data.txn_aborted


def test_compacted_topic(spark: SparkSession, kafka_bootstrap: str, data: ConformanceData) -> None:
    rows = assert_same_rows(spark, kafka_bootstrap, subscribe=data.compacted)
    keys = {bytes(r["key"]).decode() for r in rows}
    assert keys == {f"c{i}" for i in range(data.compacted_keys)} | {"roll"}
    assert len(rows) < 5 * data.compacted_keys + 1  # compaction left gaps in the offsets


# -- timestamps -----------------------------------------------------------------------------------


def test_starting_timestamp(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    rows = assert_same_rows(
        spark, kafka_bootstrap, subscribe=data.mixed, startingTimestamp=str(T0 + 150_000)
    )
    assert len(rows) == data.mixed_count - 150


def test_starting_and_ending_offsets_by_timestamp(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    t = data.mixed
    rows = assert_same_rows(
        spark,
        kafka_bootstrap,
        subscribe=t,
        # 0: from n=30 on; 1: from n=1 on (a timestamp between records); 2: from the start
        startingOffsetsByTimestamp=json.dumps({t: {"0": T0 + 30_000, "1": T0 + 500, "2": 0}}),
        # 0: before n=90; 1: past the last record, so the latest offset; 2: before n=200
        endingOffsetsByTimestamp=json.dumps(
            {t: {"0": T0 + 90_000, "1": T0 + 10_000_000, "2": T0 + 200_000}}
        ),
    )
    assert len(rows) == 20 + 100 + 66


def test_ending_timestamp_with_starting_offsets(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    rows = assert_same_rows(
        spark, kafka_bootstrap, subscribe=data.mixed, endingTimestamp=str(T0 + 100_000)
    )
    assert len(rows) == 100


def test_timestamp_options_win_over_offsets(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    t = data.mixed
    rows = assert_same_rows(
        spark,
        kafka_bootstrap,
        subscribe=t,
        startingOffsets="earliest",
        startingOffsetsByTimestamp=json.dumps({t: {"0": 0, "1": 0, "2": 0}}),
        startingTimestamp=str(T0 + 240_000),
        endingOffsets=json.dumps({t: {"0": 1, "1": 1, "2": 1}}),
        endingTimestamp=str(T0 + 270_000),
    )
    assert len(rows) == 30


def test_no_match_with_strategy_latest_starts_at_the_end(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    rows = assert_same_rows(
        spark,
        kafka_bootstrap,
        min_rows=0,
        subscribe=data.mixed,
        startingTimestamp=str(T0 + 10_000_000),
        startingOffsetsByTimestampStrategy="latest",
    )
    assert rows == []


def test_no_match_with_strategy_error_fails(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    assert_both_fail(
        spark,
        kafka_bootstrap,
        rf"No offset matched .*{data.mixed}-\d",
        subscribe=data.mixed,
        startingTimestamp=str(T0 + 10_000_000),
    )


def test_offsets_by_timestamp_must_name_every_partition(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    assert_both_fail(
        spark,
        kafka_bootstrap,
        "startingOffsetsByTimestamp",
        subscribe=data.mixed,
        startingOffsetsByTimestamp=json.dumps({data.mixed: {"0": T0}}),
    )


# -- splitting into tasks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"minPartitions": "7"},
        {"minPartitions": "2"},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_task_splits_match(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData, options: dict[str, str]
) -> None:
    ours = load(spark, OURS, kafka_bootstrap, {"subscribe": data.mixed, **options})
    theirs = load(spark, THEIRS, kafka_bootstrap, {"subscribe": data.mixed, **options})
    ranges = task_ranges(ours)
    assert ranges == task_ranges(theirs)
    assert sum(n for *_, n in ranges) == data.mixed_count


#: Spark's rule for ``maxRecordsPerPartition`` (KafkaOffsetRangeCalculator, Spark 4.1+): a range
#: above the maximum becomes ceil(size / max) pieces of (nearly) equal size; with
#: ``minPartitions`` too, the pieces may be split further by its proportional rule.
_MAX_RECORDS: list[tuple[dict[str, str], list[tuple[int, int]]]] = [
    # JSON offsets (see test_max_records_per_partition_alone_with_earliest_latest_differs):
    # ceil(100 / 30) = 4 pieces of 25 in each partition
    ({"maxRecordsPerPartition": "30"}, [(0, 25), (25, 50), (50, 75), (75, 100)]),
    # earliest/latest: minPartitions makes Spark resolve them first, then both options apply.
    # 3 pieces (33, 33, 34) per partition; 9 < 12 but each is ~1/9 of the offsets, so
    # round(33 / 300 * 12) = 1: no further split
    ({"maxRecordsPerPartition": "40", "minPartitions": "12"}, [(0, 33), (33, 66), (66, 100)]),
]


def _json_bounds(topic: str) -> dict[str, str]:
    """``startingOffsets``/``endingOffsets`` naming the whole of ``mixed`` as JSON offsets."""
    return {
        "startingOffsets": json.dumps({topic: {str(p): 0 for p in range(3)}}),
        "endingOffsets": json.dumps({topic: {str(p): 100 for p in range(3)}}),
    }


def _pieces(pieces: list[tuple[int, int]]) -> list[tuple[int, int, int, int]]:
    return sorted((p, lo, hi - 1, hi - lo) for p in range(3) for lo, hi in pieces)


@pytest.mark.parametrize(("options", "pieces"), _MAX_RECORDS, ids=["alone", "with_min"])
def test_max_records_per_partition(
    spark: SparkSession,
    kafka_bootstrap: str,
    data: ConformanceData,
    options: dict[str, str],
    pieces: list[tuple[int, int]],
) -> None:
    """The same offset range per Spark task as the oracle, and the splits worked out by hand
    from Spark's rule."""
    bounds = {} if "minPartitions" in options else _json_bounds(data.mixed)
    options = {"subscribe": data.mixed, **bounds, **options}
    ours = load(spark, OURS, kafka_bootstrap, options)
    theirs = load(spark, THEIRS, kafka_bootstrap, options)
    assert task_ranges(ours) == task_ranges(theirs) == _pieces(pieces)
    assert_same_rows(spark, kafka_bootstrap, **options)


def test_max_records_per_partition_alone_with_earliest_latest_differs(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    """A known difference (docs/parity.md): with ``earliest``/``latest`` bounds (the defaults)
    and no ``minPartitions``, Spark's batch source decides whether to split from the
    unresolved bounds (-2/-1, "size" 1), so ``maxRecordsPerPartition`` alone never splits a
    range; ours resolves the offsets first and splits as Spark does for JSON offsets and in
    streaming. Same rows either way."""
    options = {"subscribe": data.mixed, "maxRecordsPerPartition": "30"}
    ours = load(spark, OURS, kafka_bootstrap, options)
    theirs = load(spark, THEIRS, kafka_bootstrap, options)
    assert task_ranges(ours) == _pieces(_MAX_RECORDS[0][1])
    assert task_ranges(theirs) == [(p, 0, 99, 100) for p in range(3)]
    assert_same_rows(spark, kafka_bootstrap, **options)


# -- mistakes both sources reject -----------------------------------------------------------------

_REJECTED: list[tuple[str, dict[str, str]]] = [
    ("startingOffsets", {"startingOffsets": "latest"}),
    ("endingOffsets", {"endingOffsets": "earliest"}),
    ("auto.offset.reset.*startingOffsets", {"kafka.auto.offset.reset": "earliest"}),
    ("enable.auto.commit", {"kafka.enable.auto.commit": "true"}),
    ("key.deserializer", {"kafka.key.deserializer": "x"}),
    ("value.deserializer", {"kafka.value.deserializer": "x"}),
    ("interceptor.classes", {"kafka.interceptor.classes": "x"}),
]


@pytest.mark.parametrize(("match", "options"), _REJECTED, ids=[m for m, _ in _REJECTED])
def test_rejected_options(
    spark: SparkSession,
    kafka_bootstrap: str,
    data: ConformanceData,
    match: str,
    options: dict[str, str],
) -> None:
    assert_both_fail(spark, kafka_bootstrap, match, subscribe=data.mixed, **options)


def test_json_start_latest_or_end_earliest_rejected(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    t = data.mixed
    assert_both_fail(
        spark,
        kafka_bootstrap,
        "startingOffsets.*latest",
        subscribe=t,
        startingOffsets=json.dumps({t: {"0": -1, "1": -2, "2": -2}}),
    )
    assert_both_fail(
        spark,
        kafka_bootstrap,
        "endingOffsets.*earliest",
        subscribe=t,
        endingOffsets=json.dumps({t: {"0": -2, "1": -1, "2": -1}}),
    )


def test_json_offsets_must_name_every_partition(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    assert_both_fail(
        spark,
        kafka_bootstrap,
        rf"startingOffsets.*{data.mixed}-[12]",
        subscribe=data.mixed,
        startingOffsets=json.dumps({data.mixed: {"0": 1}}),
    )


def test_subscription_options(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    assert_both_fail(spark, kafka_bootstrap, "subscribe, subscribePattern, assign")
    assert_both_fail(
        spark,
        kafka_bootstrap,
        "Only one of",
        subscribe=data.mixed,
        assign=json.dumps({data.mixed: [0]}),
    )


def test_user_schema_rejected(
    spark: SparkSession, kafka_bootstrap: str, data: ConformanceData
) -> None:
    schema = StructType([StructField("value", BinaryType())])
    assert_both_fail(spark, kafka_bootstrap, "fixed schema", schema=schema, subscribe=data.mixed)


# -- data loss ----------------------------------------------------------------------------------


def _delete_records(bootstrap: str, topic: str, before: dict[int, int]) -> None:
    """Kafka's DeleteRecordsCommand: advance each partition's log start offset."""
    spec = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": p, "offset": o} for p, o in before.items()],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(spec, f)
        f.flush()
        run_tool(
            "org.apache.kafka.tools.DeleteRecordsCommand",
            ["--bootstrap-server", bootstrap, "--offset-json-file", f.name],
        )


def test_offsets_deleted_before_they_were_read(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(key=None, value=f"v{i}", partition=i % 2) for i in range(40)],
    )
    _delete_records(kafka_bootstrap, topic, {0: 5, 1: 12})
    assert get_offsets(kafka_bootstrap, topic, "earliest") == {0: 5, 1: 12}
    start = json.dumps({topic: {"0": 0, "1": 0}})
    assert_both_fail(
        spark,
        kafka_bootstrap,
        rf"{topic}-[01].*\[0, (5|12)\)",
        subscribe=topic,
        startingOffsets=start,
    )
    # failOnDataLoss=false: both skip to the earliest offset still there; the rows are also
    # checked against the producer's input: value v<i> went to partition i % 2 at offset i // 2.
    rows = assert_same_rows(
        spark, kafka_bootstrap, subscribe=topic, startingOffsets=start, failOnDataLoss="false"
    )
    got = sorted((r["partition"], r["offset"], bytes(r["value"]).decode()) for r in rows)
    kept = {0: 5, 1: 12}
    assert got == sorted((i % 2, i // 2, f"v{i}") for i in range(40) if i // 2 >= kept[i % 2])
