"""A driver process on the standalone cluster (for tests/deploy/test_standalone.py; not a test).

Usage (``python`` or PySpark's ``bin/spark-submit``; it needs no module of the tests)::

    python tests/deploy/_cluster_job.py SPEC.json
    spark-submit --py-files spark_kafka_py.zip tests/deploy/_cluster_job.py SPEC.json

``SPEC.json`` is an object:

- ``master``: ``spark://...`` of the cluster; ``bootstrap``: the Kafka bootstrap servers;
- ``result``: path of the JSON file written at the end: ``{task name: result}``;
- ``conf``: more Spark settings (e.g. ``spark.submit.pyFiles``, ``spark.archives``,
  ``spark.executorEnv.PYTHONPATH``);
- ``tasks``: a list of objects, each with ``kind`` and ``name``, run in order:

  - ``batch`` (``topic``, optional ``options``: more read options, e.g. another cluster's
    bootstrap and login; ``expect_error``): ``spark.read.format("pykafka")``; result: the
    values, as strings, or with ``expect_error`` the error's type and message (the read
    succeeding is then a failure);
  - ``stream`` (``topic``, ``group``, ``checkpoint``, ``out``, ``max_offsets``,
    ``available_now``, ``progress``, ``stop``): ``readStream.format("pykafka")`` with
    ``kafka.group.id`` into a Parquet file sink (columns partition, offset, value). With
    ``available_now`` it runs to its end; else a 250 ms processing-time trigger, the rows
    processed so far and the application id written to ``progress`` after each poll (JSON
    ``{"rows": n, "app": id}``), until the file ``stop`` exists
    (the test creates it); result: ``{"batches": n}``;
  - ``kafka_to_kafka`` (``topic``, ``out_topic``, ``checkpoint``, ``prefix``,
    ``max_offsets``, optional ``options`` for both sides): Kafka ->
    Kafka with ``format("pykafka")`` both ways, ``deliveryGuarantee=exactly-once``,
    value ``out-`` + the input value, AvailableNow; result: ``{"batches": n}``;
  - ``probe_format`` (``topic``): whether ``format("pykafka")`` resolves now; result:
    ``"resolved"`` or the error's message;
  - ``register``: ``spark_kafka_py.register(spark)``; result: ``true``;
  - ``implementations``: 8 one-row tasks report, from the executors' Python workers, the
    record decoder and encoder implementations, where ``spark_kafka_py`` was imported from,
    ``sys.flags.no_site`` and the pid of the executor JVM; result: the distinct rows.

A failed query or task raises: the process exits non-zero with Spark's error on stderr.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from spark_kafka_py.testing.spark_cluster import cluster_session_conf

#: Processing-time trigger of the running (not AvailableNow) streaming query.
TRIGGER = "250 milliseconds"


def _batch(spark: Any, bootstrap: str, task: dict[str, Any]) -> list[str] | str:
    try:
        rows = (
            spark.read.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", task["topic"])
            .options(**task.get("options", {}))
            .load()
            .selectExpr("CAST(value AS STRING) AS value")
            .collect()
        )
    except Exception as exc:
        if not task.get("expect_error"):
            raise
        return f"{type(exc).__name__}: {exc}"
    if task.get("expect_error"):
        raise AssertionError(f"task {task['name']} was expected to fail; it read {len(rows)} rows")
    return [r.value for r in rows]


def _stream(spark: Any, bootstrap: str, task: dict[str, Any]) -> dict[str, int]:
    writer = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", task["topic"])
        .option("kafka.group.id", task["group"])
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(task["max_offsets"]))
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", task["out"])
        .option("checkpointLocation", task["checkpoint"])
    )
    if task["available_now"]:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
    else:
        query = writer.trigger(processingTime=TRIGGER).start()
        progress, stop = Path(task["progress"]), Path(task["stop"])
        while not stop.exists():
            if query.exception() is not None or not query.isActive:
                break
            done = sum(p["numInputRows"] for p in query.recentProgress)
            app = spark.sparkContext.applicationId
            progress.write_text(json.dumps({"rows": done, "app": app}), "utf-8")
            time.sleep(0.25)
        query.stop()
    if query.exception() is not None:
        raise query.exception()
    return {"batches": len(query.recentProgress)}


def _kafka_to_kafka(spark: Any, bootstrap: str, task: dict[str, Any]) -> dict[str, int]:
    options = task.get("options", {})
    query = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", task["topic"])
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(task["max_offsets"]))
        .options(**options)
        .load()
        .selectExpr("key", "CONCAT('out-', CAST(value AS STRING)) AS value")
        .writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**options)
        .option("topic", task["out_topic"])
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", task["prefix"])
        .option("checkpointLocation", task["checkpoint"])
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise query.exception()
    return {"batches": len(query.recentProgress)}


def _implementations(spark: Any) -> list[dict[str, Any]]:
    import pandas as pd

    def report(frames: Any) -> Any:
        import os
        import sys

        import psutil

        import spark_kafka_py
        from spark_kafka_py.records import decoder, encoder

        # the executor JVM: the nearest java ancestor of this Python worker
        executor_pid = next(
            (p.pid for p in psutil.Process(os.getpid()).parents() if p.name() == "java"), -1
        )
        for frame in frames:
            yield pd.DataFrame(
                {
                    "decoder": [decoder.IMPLEMENTATION] * len(frame),
                    "encoder": [encoder.SECTION_IMPLEMENTATION] * len(frame),
                    "package": [spark_kafka_py.__file__] * len(frame),
                    "no_site": [int(sys.flags.no_site)] * len(frame),
                    "executor_pid": [executor_pid] * len(frame),
                }
            )

    schema = "decoder STRING, encoder STRING, package STRING, no_site INT, executor_pid INT"
    rows = spark.range(0, 8, 1, 8).mapInPandas(report, schema).distinct().collect()
    return [r.asDict() for r in rows]


def _probe_format(spark: Any, bootstrap: str, task: dict[str, Any]) -> str:
    """``"resolved"`` when ``format("pykafka")`` loads, else the error's message (recorded for
    the test to check, e.g. Spark's ``DATA_SOURCE_NOT_FOUND``)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap).option(
            "subscribe", task["topic"]
        ).load()
    except (PySparkException, Py4JJavaError) as exc:
        return str(exc)
    return "resolved"


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text("utf-8"))
    from pyspark.sql import SparkSession

    conf = {
        **cluster_session_conf(spec["master"]),
        "spark.app.name": "spark-kafka-py-deploy",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        **spec.get("conf", {}),
    }
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    results: dict[str, Any] = {}
    bootstrap = spec["bootstrap"]
    for task in spec["tasks"]:
        kind = task["kind"]
        if kind == "batch":
            results[task["name"]] = _batch(spark, bootstrap, task)
        elif kind == "stream":
            results[task["name"]] = _stream(spark, bootstrap, task)
        elif kind == "kafka_to_kafka":
            results[task["name"]] = _kafka_to_kafka(spark, bootstrap, task)
        elif kind == "implementations":
            results[task["name"]] = _implementations(spark)
        elif kind == "probe_format":
            results[task["name"]] = _probe_format(spark, bootstrap, task)
        elif kind == "register":
            import spark_kafka_py

            spark_kafka_py.register(spark)
            results[task["name"]] = True
        else:
            raise ValueError(f"unknown task kind {kind!r}")
    Path(spec["result"]).write_text(json.dumps(results), "utf-8")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
