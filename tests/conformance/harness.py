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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


@dataclass
class StreamRun:
    """What one streaming query did: per micro-batch, per Kafka partition, the first and last
    offset and the row count, in batch order; and the query's progress reports."""

    batches: list[list[tuple[int, int, int, int]]]
    progress: list[dict[str, Any]]
    error: str | None
    rows: list[Row] = field(default_factory=list)


def start_stream(
    spark: SparkSession,
    fmt: str,
    bootstrap: str,
    checkpoint: Path,
    options: Mapping[str, str],
    *,
    processing_time: str | None = None,
    all_rows: list[Row] | None = None,
) -> tuple[StreamingQuery, list[list[tuple[int, int, int, int]]]]:
    """Start ``readStream.format(fmt)`` into ``foreachBatch``; ``Trigger.AvailableNow`` unless
    ``processing_time`` (e.g. ``"1 second"``) is given.

    Returns the query and the list it appends to: per non-empty micro-batch, sorted
    ``(partition, first offset, last offset, rows)``. The rows themselves are appended to
    ``all_rows`` when given.
    """
    if all_rows is None:
        all_rows = []
    batches: list[list[tuple[int, int, int, int]]] = []
    lock = threading.Lock()

    def record(df: DataFrame, batch_id: int) -> None:
        rows = df.collect()
        if not rows:
            return
        summary: dict[int, list[int]] = {}
        for r in rows:
            lo, hi, n = summary.get(r["partition"], [r["offset"], r["offset"], 0])
            summary[r["partition"]] = [min(lo, r["offset"]), max(hi, r["offset"]), n + 1]
        with lock:
            batches.append(sorted((p, lo, hi, n) for p, (lo, hi, n) in summary.items()))
            all_rows.extend(rows)

    reader = spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    writer = (
        reader.load().writeStream.foreachBatch(record).option("checkpointLocation", str(checkpoint))
    )
    writer = (
        writer.trigger(processingTime=processing_time)
        if processing_time
        else writer.trigger(availableNow=True)
    )
    return writer.start(), batches


def run_stream(
    spark: SparkSession,
    fmt: str,
    bootstrap: str,
    checkpoint: Path,
    options: Mapping[str, str],
    *,
    timeout_s: float = 240,
) -> StreamRun:
    """Run ``readStream.format(fmt)`` with ``Trigger.AvailableNow`` to its end.

    Returns the per-batch offset summary (empty batches left out), the progress reports and
    the error text (``None`` when the query finished cleanly; a failure to start counts).
    """
    error: str | None = None
    batches: list[list[tuple[int, int, int, int]]] = []
    progress: list[dict[str, Any]] = []
    rows: list[Row] = []
    try:
        query, batches = start_stream(spark, fmt, bootstrap, checkpoint, options, all_rows=rows)
    except Exception as exc:
        return StreamRun(batches=batches, progress=progress, error=str(exc))
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
    progress = [json.loads(p.json) for p in query.recentProgress]
    return StreamRun(batches=batches, progress=progress, error=error, rows=rows)


def latest_offsets_reported(run: StreamRun) -> list[dict[str, Any] | None]:
    """``sources[0].latestOffset`` of each progress report with input rows, as JSON objects."""
    out = []
    for p in run.progress:
        if p.get("numInputRows", 0) <= 0:
            continue
        latest = p["sources"][0].get("latestOffset")
        out.append(json.loads(latest) if isinstance(latest, str) else latest)
    return out


def assert_rows_equal_batch_oracle(
    spark: SparkSession, bootstrap: str, rows: list[Row], **options: str
) -> None:
    """Rows a streaming query delivered equal what Spark's built-in batch source reads with
    ``options`` (chispa, any order). The built-in *streaming* source is no oracle here: the
    connector 4.0.0 on Maven Central cannot run micro-batches on Spark 4.3."""
    theirs = load(spark, THEIRS, bootstrap, options)
    ours = spark.createDataFrame(rows, theirs.schema) if rows else theirs.limit(0)
    assert_df_equality(ours, theirs, ignore_row_order=True)
