"""Batch read throughput: ``format("pykafka")`` against Spark's built-in ``format("kafka")``.

Same as ``spark-kafka-py bench batch``: both sources read the same topics (one per codec,
written by Kafka's Java producer: 16-byte keys, 100-byte values) on the same local broker in
the same run, ``spark.read.format(...).load().write.format("noop")``, local[2]; prints
records/s, MB/s and the ratio pykafka / kafka. See :mod:`spark_kafka_py.bench`.

Usage::

    python benchmarks/batch_read.py [--records 5000000] [--partitions 4]
        [--codecs none,lz4,zstd] [--repeat 2] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import sys

from spark_kafka_py.bench import main

if __name__ == "__main__":
    raise SystemExit(main(["batch", *sys.argv[1:]]))
