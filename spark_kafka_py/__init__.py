"""spark-kafka-py: a Kafka source for Apache Spark written in Python (format("pykafka"))."""
