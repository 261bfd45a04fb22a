"""spark-kafka-py: a Kafka source for Apache Spark written in Python (``format("pykafka")``).

Installing the package registers the source with PySpark automatically (see
:mod:`pyspark_pykafka`); :func:`register` does it explicitly for a given session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__version__ = "0.1.0"


def register(spark: SparkSession) -> None:
    """Register the ``pykafka`` data source with ``spark`` (``spark.dataSource.register``)."""
    from spark_kafka_py.spark.source import PyKafkaDataSource

    spark.dataSource.register(PyKafkaDataSource)


__all__ = ["__version__", "register"]
