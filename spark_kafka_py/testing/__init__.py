"""A real local Kafka for tests, demo and benchmarks (no mocks).

- :mod:`.jars`: Maven-resolved jars in ``$SPARK_KAFKA_PY_CACHE`` (Kafka 4.3 broker + tools,
  Spark's ``spark-sql-kafka`` connector for ``spark.jars``).
- :mod:`.jvm`: the Java executable, ``javac`` once per source and class path (cached), and
  Java programs launched with a class path and a log4j2 configuration.
- :mod:`.broker`: :class:`~.broker.LocalKafkaCluster`, KRaft nodes as ``java kafka.Kafka``
  subprocesses (1 node, or 3 for failover).
- :mod:`.tools`: Kafka's Java tools as reference clients (topics, console producer/consumer,
  ProducerPerformance, offsets, consumer groups).
- :mod:`.spark`: a local SparkSession with the connector. :mod:`.fixtures`: the pytest plugin.
- :mod:`.cli_broker`: ``spark-kafka-py broker start|stop|status``.
"""
