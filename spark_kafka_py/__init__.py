"""spark-kafka-py: a Kafka source and sink for Apache Spark in Python (``format("pykafka")``).

Installing the package registers the source with PySpark automatically (see
:mod:`pyspark_pykafka`); :func:`register` does it explicitly for a given session.
:func:`last_plan` says what the last batch read planned (filter pushdown, docs/pushdown.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_kafka_py.spark.plan_report import PlanReport

__version__ = "0.1.0"


def register(spark: SparkSession) -> None:
    """Register the ``pykafka`` data source with ``spark`` (``spark.dataSource.register``)."""
    from spark_kafka_py.spark.source import PyKafkaDataSource

    spark.dataSource.register(PyKafkaDataSource)


def last_plan(spark: SparkSession | None = None) -> PlanReport | None:
    """The last ``format("pykafka")`` batch read planned by ``spark``'s driver (default: the
    active session): offsets and topic-partitions planned against the same read without
    filters, and the filters that narrowed it (``explain()`` cannot show them). ``None`` when
    no batch read was planned since the driver started. A classic session only: with Spark
    Connect the server plans reads. See docs/pushdown.md and
    :func:`spark_kafka_py.spark.plan_report.last_plan` (fields, errors, where the report comes
    from)."""
    from spark_kafka_py.spark.plan_report import last_plan as _last_plan

    return _last_plan(spark)


__all__ = ["__version__", "last_plan", "register"]
