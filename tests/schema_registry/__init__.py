"""Tests of spark_kafka_py.schema_registry."""
