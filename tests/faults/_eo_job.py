"""An exactly-once streaming query run as its own driver process (for the exactly-once fault
matrix, tests/faults/test_exactly_once.py; not a test).

Usage::

    python -m tests.faults._eo_job BOOTSTRAP IN_TOPIC OUT_TOPIC CHECKPOINT PREFIX \
        [--master local[2,4]] [--max-offsets 400] [--available-now] \
        [--fail-id N] [--exit-id N] [--warm-up] [--sleep-ms N] [--repartition N] \
        [--option KEY=VALUE ...] [--input-option KEY=VALUE ...]

Runs ``readStream.format("pykafka")`` over ``IN_TOPIC`` -> ``writeStream.format("pykafka")``
into ``OUT_TOPIC`` with ``deliveryGuarantee=exactly-once`` and ``transactionalIdPrefix=PREFIX``
on the checkpoint ``CHECKPOINT``: key as read, value = ``out-`` + the input value.

- Without ``--available-now`` the trigger is ``processingTime=200 ms`` and the job runs until
  it is killed (the driver-kill points: the commit's test hook pauses it, see
  ``spark_kafka_py.spark.exactly_once.PAUSE_STEPS``), or exits 1 if the query fails.
- With ``--available-now`` it processes what is there and exits 0, or 1 if the query failed.
- ``--fail-id N``: the task attempt 0 that maps input value ``N`` raises (a failed task,
  retried by Spark: the master needs task retries, ``local[n,maxFailures]``).
- ``--exit-id N``: the Python worker of attempt 0 that maps input value ``N`` exits at once
  (``os._exit``: an executor's Python worker killed mid-write).
- ``--warm-up``: run a small Python UDF job before the query (Python workers started).
- ``--sleep-ms N``: every task attempt sleeps ``N`` ms once, at its first row (slow tasks:
  with more tasks than cores, the first wave's transactions wait out the later waves' sleeps).
- ``--repartition N``: ``df.repartition(N)`` before the write (the number of write tasks,
  hence of transactional ids ``<PREFIX>-0 .. -<N-1>``).
- ``--option KEY=VALUE`` (repeatable): one more ``writeStream`` option (overrides ours);
  ``--input-option KEY=VALUE``: one more ``readStream`` option.
- ``--max-offsets 0``: no ``maxOffsetsPerTrigger`` (AvailableNow then reads all in one
  micro-batch).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from spark_kafka_py.testing.spark import local_spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

#: Exit code of a Python worker the job kills on purpose (``--exit-id``).
WORKER_EXIT_CODE = 17


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.faults._eo_job")
    for name in ("bootstrap", "in_topic", "out_topic", "checkpoint", "prefix"):
        p.add_argument(name)
    p.add_argument("--master", default="local[2,4]")
    p.add_argument("--max-offsets", type=int, default=400)
    p.add_argument("--available-now", action="store_true")
    p.add_argument("--fail-id", type=int, default=None)
    p.add_argument("--exit-id", type=int, default=None)
    p.add_argument("--warm-up", action="store_true")
    p.add_argument("--sleep-ms", type=int, default=0)
    p.add_argument("--repartition", type=int, default=0)
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--input-option", action="append", default=[], metavar="KEY=VALUE")
    return p.parse_args(argv)


def _pairs(items: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` arguments as a dict."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"not KEY=VALUE: {item!r}")
        out[key] = value
    return out


def start_query(
    spark: SparkSession,
    bootstrap: str,
    in_topic: str,
    out_topic: str,
    checkpoint: str,
    prefix: str,
    *,
    max_offsets: int | None = 400,
    available_now: bool = False,
    fail_id: int | None = None,
    exit_id: int | None = None,
    sleep_ms: int = 0,
    repartition: int = 0,
    options: Mapping[str, str] | None = None,
    input_options: Mapping[str, str] | None = None,
) -> StreamingQuery:
    """Start the query (see the module docstring); the test restarts it with this too.
    ``max_offsets`` ``None`` (or 0): no ``maxOffsetsPerTrigger``."""
    reader = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", in_topic)
        .option("startingOffsets", "earliest")
    )
    if max_offsets:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets))
    for key, value in (input_options or {}).items():
        reader = reader.option(key, value)
    df = reader.load().selectExpr("key", "CAST(value AS STRING) AS value")
    if fail_id is not None or exit_id is not None:
        from pyspark.sql.functions import col, udf

        @udf("string")
        def tag(value: str) -> str:
            from pyspark import TaskContext

            context = TaskContext.get()
            attempt = context.attemptNumber() if context is not None else 0
            if attempt == 0 and fail_id is not None and value == str(fail_id):
                raise RuntimeError(f"test fault: task attempt 0 fails at input {value}")
            if attempt == 0 and exit_id is not None and value == str(exit_id):
                os._exit(WORKER_EXIT_CODE)
            return value

        df = df.withColumn("value", tag(col("value")))
    if sleep_ms > 0:
        from pyspark.sql.functions import col, udf

        slept: list[bool] = []  # unpickled afresh for every task: one sleep per task attempt

        @udf("string")
        def slow(value: str) -> str:
            if not slept:
                slept.append(True)
                time.sleep(sleep_ms / 1000)
            return value

        df = df.withColumn("value", slow(col("value")))
    if repartition > 0:
        df = df.repartition(repartition)
    writer = (
        df.selectExpr("key", "CONCAT('out-', value) AS value")
        .writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", out_topic)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", prefix)
        .option("checkpointLocation", checkpoint)
    )
    for key, value in (options or {}).items():
        writer = writer.option(key, value)
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="200 milliseconds").start()


def warm_up(spark: SparkSession) -> None:
    """A small job with a Python UDF on every core first: the query's first micro-batch then
    does not pay for starting Python workers (its transactions' clock starts at its first
    write: tests with a short ``kafka.transaction.timeout.ms`` want that batch quick)."""
    from pyspark.sql.functions import col, udf

    same = udf(lambda v: v, "long")
    spark.range(0, 64, numPartitions=4).select(same(col("id"))).collect()


def main(argv: list[str]) -> int:
    from pyspark.errors import StreamingQueryException

    args = _parse(argv)
    spark = local_spark_session(
        "exactly-once-fault", master=args.master, with_kafka_connector=False
    )
    if args.warm_up:
        warm_up(spark)
    query = start_query(
        spark,
        args.bootstrap,
        args.in_topic,
        args.out_topic,
        args.checkpoint,
        args.prefix,
        max_offsets=args.max_offsets,
        available_now=args.available_now,
        fail_id=args.fail_id,
        exit_id=args.exit_id,
        sleep_ms=args.sleep_ms,
        repartition=args.repartition,
        options=_pairs(args.option),
        input_options=_pairs(args.input_option),
    )
    # without --available-now: until SIGKILL, or until the query fails (exit 1: a test waiting
    # for a commit hook then sees the driver exit instead of waiting out its timeout)
    with contextlib.suppress(StreamingQueryException):
        query.awaitTermination()
    failure = query.exception()
    if failure is not None:
        print(f"query failed: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
