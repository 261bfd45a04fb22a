"""An exactly-once streaming query run as its own driver process (for the exactly-once fault
matrix, tests/faults/test_exactly_once.py; not a test).

Usage::

    python -m tests.faults._eo_job BOOTSTRAP IN_TOPIC OUT_TOPIC CHECKPOINT PREFIX \
        [--master local[2,4]] [--max-offsets 400] [--available-now] \
        [--fail-id N] [--exit-id N]

Runs ``readStream.format("pykafka")`` over ``IN_TOPIC`` -> ``writeStream.format("pykafka")``
into ``OUT_TOPIC`` with ``deliveryGuarantee=exactly-once`` and ``transactionalIdPrefix=PREFIX``
on the checkpoint ``CHECKPOINT``: key as read, value = ``out-`` + the input value.

- Without ``--available-now`` the trigger is ``processingTime=200 ms`` and the job runs until
  it is killed (the driver-kill points: the commit's test hook pauses it, see
  ``spark_kafka_py.spark.exactly_once.PAUSE_STEPS``).
- With ``--available-now`` it processes what is there and exits 0, or 1 if the query failed.
- ``--fail-id N``: the task attempt 0 that maps input value ``N`` raises (a failed task,
  retried by Spark: the master needs task retries, ``local[n,maxFailures]``).
- ``--exit-id N``: the Python worker of attempt 0 that maps input value ``N`` exits at once
  (``os._exit``: an executor's Python worker killed mid-write).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
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
    return p.parse_args(argv)


def start_query(
    spark: SparkSession,
    bootstrap: str,
    in_topic: str,
    out_topic: str,
    checkpoint: str,
    prefix: str,
    *,
    max_offsets: int = 400,
    available_now: bool = False,
    fail_id: int | None = None,
    exit_id: int | None = None,
) -> StreamingQuery:
    """Start the query (see the module docstring); the test restarts it with this too."""
    df = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", in_topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(max_offsets))
        .load()
        .selectExpr("key", "CAST(value AS STRING) AS value")
    )
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
    writer = (
        df.selectExpr("key", "CONCAT('out-', value) AS value")
        .writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", out_topic)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", prefix)
        .option("checkpointLocation", checkpoint)
    )
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="200 milliseconds").start()


def main(argv: list[str]) -> int:
    args = _parse(argv)
    spark = local_spark_session(
        "exactly-once-fault", master=args.master, with_kafka_connector=False
    )
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
    )
    if not args.available_now:
        while True:  # until SIGKILL
            time.sleep(1)
    query.awaitTermination()
    failure = query.exception()
    if failure is not None:
        print(f"query failed: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
