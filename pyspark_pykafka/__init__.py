"""Auto-registration hook for PySpark.

PySpark (>= 4.0) looks up every top-level module named ``pyspark_*`` that has a
``DefaultSource`` subclass of ``DataSource`` and registers it under ``DefaultSource.name()``
(``pyspark.sql.worker.lookup_data_sources``). Installing spark-kafka-py therefore makes
``format("pykafka")`` available with no ``register`` call.
"""

from spark_kafka_py.spark.source import PyKafkaDataSource as DefaultSource

__all__ = ["DefaultSource"]
