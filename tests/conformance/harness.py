"""Run the same read through ``format("pykafka")`` and Spark's built-in ``format("kafka")``.

The built-in source (``spark-sql-kafka-0-10_2.13`` jars on the test SparkSession, see
:mod:`spark_kafka_py.testing.spark`) is the oracle: every helper here runs one query through
both sources against the same real broker and compares what they return (chispa for rows) or
checks that both fail. Expected values never come from our own code.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

#: Our source and the oracle.
OURS, THEIRS = "pykafka", "kafka"


def load(
    spark: SparkSession,
    fmt: str,
    bootstrap: str,
    options: Mapping[str, str],
    schema: StructType | None = None,
) -> DataFrame:
    """``spark.read.format(fmt)`` with ``kafka.bootstrap.servers`` and ``options``."""
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    if schema is not None:
        reader = reader.schema(schema)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def assert_same_rows(
    spark: SparkSession, bootstrap: str, *, min_rows: int = 1, **options: str
) -> list[Row]:
    """Both sources return the same rows (every column, any order); returns our rows.

    ``min_rows`` guards against a vacuous pass (both empty) where rows are expected.
    """
    ours = load(spark, OURS, bootstrap, options)
    theirs = load(spark, THEIRS, bootstrap, options)
    assert_df_equality(ours, theirs, ignore_row_order=True)
    rows = ours.collect()
    assert len(rows) >= min_rows, f"expected at least {min_rows} rows, got {len(rows)}"
    return rows


def run_failing(action: Any) -> str:
    """Run ``action()``; return the text of the exception it raised (fails if none)."""
    with pytest.raises(Exception) as info:  # any type; text checked
        action()
    return str(info.value)


def assert_both_fail(
    spark: SparkSession,
    bootstrap: str,
    ours_match: str,
    *,
    schema: StructType | None = None,
    **options: str,
) -> dict[str, str]:
    """Both sources fail (at ``load()`` or when rows are collected); ours with a message
    matching the regex ``ours_match`` (naming the option / topic-partition). Returns the
    error texts by format."""
    errors = {
        fmt: run_failing(lambda fmt=fmt: load(spark, fmt, bootstrap, options, schema).collect())
        for fmt in (OURS, THEIRS)
    }
    assert re.search(ours_match, errors[OURS]), errors[OURS][:2000]
    return errors


def task_ranges(df: DataFrame) -> list[tuple[int, int, int, int]]:
    """The offsets each Spark task read: sorted ``(partition, first offset, last offset, rows)``
    per (task, Kafka partition) -- how the source split its offset ranges into tasks."""
    rows = (
        df.groupBy(F.spark_partition_id().alias("task"), "partition")
        .agg(F.min("offset").alias("lo"), F.max("offset").alias("hi"), F.count("*").alias("n"))
        .collect()
    )
    return sorted((r["partition"], r["lo"], r["hi"], r["n"]) for r in rows)


# -- streaming ---------------------------------------------------------------------------------

#: Per micro-batch with rows: sorted ``(partition, first offset, last offset, rows)``.
BatchSummary = list[tuple[int, int, int, int]]


#: Per micro-batch with rows: sorted ``(topic, partition, first offset, last offset, rows)`` per
#: Spark task and Kafka partition -- how the source split the batch into tasks.
TaskSummary = list[tuple[str, int, int, int, int]]

_TASK = "__task"


def _summary(rows: list[Row], key: Callable[[Row], Any]) -> list[tuple[Any, ...]]:
    """Sorted ``(*key, first offset, last offset, rows)`` of ``rows`` grouped by ``key``."""
    out: dict[Any, list[int]] = {}
    for r in rows:
        lo, hi, n = out.get(key(r), [r["offset"], r["offset"], 0])
        out[key(r)] = [min(lo, r["offset"]), max(hi, r["offset"]), n + 1]
    return sorted((*k, lo, hi, n) for k, (lo, hi, n) in out.items())


@dataclass
class StreamCollector:
    """The ``foreachBatch`` function of a test query: keeps every non-empty micro-batch's rows,
    their offset summary (:data:`BatchSummary`), their split into Spark tasks
    (:data:`TaskSummary`) and the schema Spark gave the batches."""

    batches: list[BatchSummary] = field(default_factory=list)
    tasks: list[TaskSummary] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    schema: StructType | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        # one Spark job: the rows and the task that read each
        tagged = df.withColumn(_TASK, F.spark_partition_id()).collect()
        names = df.columns
        rows = [Row(**{name: r[name] for name in names}) for r in tagged]
        with self.lock:
            self.schema = df.schema
        if not rows:
            return
        batch = _summary(rows, lambda r: (r["partition"],))
        tasks = _summary(tagged, lambda r: (r[_TASK], r["topic"], r["partition"]))
        with self.lock:
            self.batches.append(cast(BatchSummary, batch))
            self.tasks.append(cast(TaskSummary, sorted(t[1:] for t in tasks)))
            self.rows.extend(rows)


@dataclass
class StreamRun:
    """What one streaming query did: the non-empty micro-batches (:data:`BatchSummary`, in
    batch order), their rows and schema, the query's progress reports, and the error text
    (``None`` when it finished cleanly) with whether it came before the query ran."""

    batches: list[BatchSummary]
    progress: list[dict[str, Any]]
    error: str | None
    rows: list[Row] = field(default_factory=list)
    schema: StructType | None = None
    tasks: list[TaskSummary] = field(default_factory=list)
    #: the error came from ``load()`` or ``start()``: the query never ran
    failed_at_start: bool = False

    def end_offsets(self) -> list[dict[str, Any]]:
        """``sources[0].endOffset`` of every micro-batch that moved the offsets (rows or not,
        e.g. a range of aborted records), in order: where the source cut the batches."""
        out = []
        for p in self.progress:
            source = p["sources"][0]
            start, end = _offset_json(source.get("startOffset")), _offset_json(source["endOffset"])
            if end is not None and end != start:
                out.append(end)
        return out

    def latest_offsets(self) -> list[dict[str, Any] | None]:
        """``sources[0].latestOffset`` of each progress report with input rows."""
        return [
            _offset_json(p["sources"][0].get("latestOffset"))
            for p in self.progress
            if p.get("numInputRows", 0) > 0
        ]


def _offset_json(value: Any) -> Any:
    """An offset of a progress report as a JSON value (Spark gives objects, or strings when
    it cannot parse them)."""
    return json.loads(value) if isinstance(value, str) else value


def start_stream(
    spark: SparkSession,
    fmt: str,
    bootstrap: str,
    checkpoint: Path,
    options: Mapping[str, str],
    *,
    processing_time: str | None = None,
) -> tuple[StreamingQuery, StreamCollector]:
    """Start ``readStream.format(fmt)`` into ``foreachBatch``; ``Trigger.AvailableNow`` unless
    ``processing_time`` (e.g. ``"1 second"``) is given. Returns the query and what it collects.
    """
    collector = StreamCollector()
    reader = spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    writer = (
        reader.load()
        .writeStream.foreachBatch(collector)
        .option("checkpointLocation", str(checkpoint))
    )
    writer = (
        writer.trigger(processingTime=processing_time)
        if processing_time
        else writer.trigger(availableNow=True)
    )
    return writer.start(), collector


def run_streams(
    spark: SparkSession,
    bootstrap: str,
    checkpoints: Path,
    options: Mapping[str, str],
    *,
    formats: tuple[str, ...] = (OURS, THEIRS),
    timeout_s: float = 240,
) -> dict[str, StreamRun]:
    """Run ``readStream.format(fmt)`` with ``Trigger.AvailableNow`` to its end for each format,
    the queries side by side (checkpoint ``checkpoints / fmt`` each, so a later call with the
    same ``checkpoints`` resumes each query where it stopped).

    Returns a :class:`StreamRun` per format; a failure to start counts as its error.
    """
    started: dict[str, tuple[StreamingQuery, StreamCollector]] = {}
    runs: dict[str, StreamRun] = {}
    for fmt in formats:
        try:
            started[fmt] = start_stream(spark, fmt, bootstrap, checkpoints / fmt, options)
        except Exception as exc:  # e.g. an option rejected: returned for comparison
            runs[fmt] = StreamRun(batches=[], progress=[], error=str(exc), failed_at_start=True)
    for fmt, (query, collector) in started.items():
        error: str | None = None
        try:
            finished = query.awaitTermination(timeout_s)
            assert finished, f"{fmt} streaming query did not finish within {timeout_s} s"
        except Exception as exc:  # the query's own failure: returned for comparison
            error = str(exc)
        finally:
            if query.isActive:
                query.stop()
        if error is None and query.exception() is not None:
            error = str(query.exception())
        runs[fmt] = StreamRun(
            batches=collector.batches,
            progress=[json.loads(p.json) for p in query.recentProgress],
            error=error,
            rows=collector.rows,
            schema=collector.schema,
            tasks=collector.tasks,
        )
    return runs


def assert_same_stream_rows(
    spark: SparkSession, ours: StreamRun | StreamCollector, theirs: StreamRun | StreamCollector
) -> None:
    """Both queries delivered the same rows over all their micro-batches (chispa: every
    column, any order) with the same schema."""
    assert ours.schema == theirs.schema or not (ours.rows or theirs.rows), (
        ours.schema,
        theirs.schema,
    )
    schema = theirs.schema or ours.schema
    assert schema is not None, "neither query ran a micro-batch"
    assert_df_equality(
        spark.createDataFrame(ours.rows, schema),
        spark.createDataFrame(theirs.rows, schema),
        ignore_row_order=True,
    )


def assert_same_stream(
    spark: SparkSession,
    bootstrap: str,
    checkpoints: Path,
    *,
    min_rows: int = 1,
    **options: str,
) -> StreamRun:
    """Run one AvailableNow query through both sources (:func:`run_streams`) and check that
    both finish cleanly with the same rows (chispa), the same micro-batches (offsets and rows
    per partition, the same split into Spark tasks, and ``endOffset`` of every batch in the
    progress reports) and the same ``latestOffset`` reported with each batch. Returns our run.

    ``min_rows`` guards against a vacuous pass (both empty) where rows are expected.
    """
    runs = run_streams(spark, bootstrap, checkpoints, options)
    ours, theirs = runs[OURS], runs[THEIRS]
    assert ours.error is None, ours.error[:2000]
    assert theirs.error is None, theirs.error[:2000]
    assert_same_stream_rows(spark, ours, theirs)
    assert ours.batches == theirs.batches
    assert ours.tasks == theirs.tasks
    assert ours.end_offsets() == theirs.end_offsets()
    assert ours.latest_offsets() == theirs.latest_offsets()
    assert len(ours.rows) >= min_rows, f"expected at least {min_rows} rows, got {len(ours.rows)}"
    return ours


# -- sink ----------------------------------------------------------------------------------------


def save(df: DataFrame, fmt: str, bootstrap: str, options: Mapping[str, str]) -> None:
    """``df.write.format(fmt).mode("append")`` with ``kafka.bootstrap.servers`` and ``options``,
    saved (append: a save mode both sinks accept)."""
    writer = df.write.format(fmt).mode("append").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()


def assert_both_writes_fail(
    make_df: Callable[[str], DataFrame],
    bootstrap: str,
    ours_match: str,
    options: Mapping[str, str],
) -> dict[str, str]:
    """``save(make_df(fmt), fmt, ...)`` fails for both sinks; ours with a message matching the
    regex ``ours_match``. Returns the error texts by format."""
    errors = {
        fmt: run_failing(lambda fmt=fmt: save(make_df(fmt), fmt, bootstrap, options))
        for fmt in (OURS, THEIRS)
    }
    assert re.search(ours_match, errors[OURS]), errors[OURS][:2000]
    return errors
