"""Side-by-side benchmarks of spark-kafka-py against Spark's Kafka connector and Kafka clients.

Part of the source checkout, not of the installed package (the wheel ships only
``spark_kafka_py``). Modules:

- :mod:`benchmarks.harness`: what every benchmark shares (results, bench data written by Kafka's
  Java producer, the local broker, Markdown tables, versions and machine).
- :mod:`benchmarks.batch_read`, :mod:`benchmarks.decoder`, :mod:`benchmarks.streaming`,
  :mod:`benchmarks.memory` (its reading process: :mod:`benchmarks.memory_reader`),
  :mod:`benchmarks.write`: one benchmark each, each runnable as a script.
- :mod:`benchmarks.cli`: ``spark-kafka-py bench``, several benchmarks over shared topics in
  one report.
- :mod:`benchmarks.soak`: a bounded soak run of a streaming query against a steady producer.

Run from the repository root (after ``pip install -e ".[test,bench]"``)::

    spark-kafka-py bench batch --records 5000000 --codecs none --repeat 3
    python benchmarks/batch_read.py --records 5000000
    python -m benchmarks.cli batch decoder --records 5000000
"""
