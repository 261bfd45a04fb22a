"""A local SparkSession set up for spark-kafka-py's tests, demo and benchmarks.

The session carries Spark's own Kafka connector (``format("kafka")``, the conformance oracle
and benchmark peer) on ``spark.jars``, logs at WARN through ``conf/spark-log4j2.properties``,
runs Python workers with this interpreter, and uses UTC as the session time zone.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from spark_kafka_py.conf import conf_path
from spark_kafka_py.testing.jars import (
    SPARK_PROTOBUF_JARS_ENV,
    spark_avro_jars,
    spark_kafka_connector_jars,
    spark_protobuf_jars,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["local_spark_session"]


def local_spark_session(
    app_name: str = "spark-kafka-py",
    *,
    master: str = "local[2]",
    with_kafka_connector: bool = True,
    extra_jars: Sequence[Path] = (),
    extra_conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Build (or get) a local SparkSession.

    Before the JVM starts, sets ``PYSPARK_PYTHON``/``PYSPARK_DRIVER_PYTHON`` to
    ``sys.executable`` and ``SPARK_LOCAL_IP=127.0.0.1`` (each unless already set). Spark
    settings: ``spark.ui.enabled=false``, ``spark.sql.shuffle.partitions=2``,
    ``spark.sql.session.timeZone=UTC``, log4j2 config ``conf/spark-log4j2.properties`` for
    driver and executors, and ``spark.jars`` = :func:`spark_kafka_connector_jars` and
    :func:`~spark_kafka_py.testing.jars.spark_avro_jars` (spark-avro's ``from_avro``) when
    ``with_kafka_connector``, and the spark-protobuf jars that
    ``$SPARK_KAFKA_PY_SPARK_PROTOBUF_JARS`` names when it is set (spark-protobuf's
    ``from_protobuf``; Maven Central does not serve that module to every machine, so it is not
    resolved by default).

    Args:
        app_name: ``spark.app.name``.
        master: ``spark.master``, e.g. ``local[2]``.
        with_kafka_connector: put Spark's Kafka connector and spark-avro jars on ``spark.jars``.
        extra_jars: more jars for ``spark.jars`` (after those; e.g.
            :func:`~spark_kafka_py.testing.jars.spark_protobuf_jars`).
        extra_conf: more Spark settings (override ours).

    Raises:
        spark_kafka_py.testing.jars.JarResolutionError: the connector jars could not be fetched.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local only; silences a warning
    from pyspark.sql import SparkSession

    log4j = f"-Dlog4j2.configurationFile=file:{conf_path('spark-log4j2.properties')}"
    conf = {
        "spark.master": master,
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": log4j,
        "spark.executor.extraJavaOptions": log4j,
    }
    jars: list[Path] = []
    if with_kafka_connector:
        # spark-avro beside it: from_avro is the oracle of tests/formats' Avro decoder
        jars = [*spark_kafka_connector_jars(), *spark_avro_jars()]
        if os.environ.get(SPARK_PROTOBUF_JARS_ENV, "").strip():
            jars += spark_protobuf_jars()
    jars += [p for p in extra_jars if p not in jars]
    if jars:
        conf["spark.jars"] = ",".join(str(p) for p in jars)
    conf.update(extra_conf or {})
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
