"""Batch read throughput: ``format("pykafka")`` against Spark's built-in ``format("kafka")``.

Both sources read the same topic on the same broker in the same run, in the same local Spark
session, with ``spark.read.format(...).load().write.format("noop")``. The topic is written by
Kafka's own ``ProducerPerformance`` tool. Prints records/s and MB/s for each, and the ratio
pykafka / kafka (> 1 means pykafka is faster). A 2-core machine: read the ratio, not the
absolute numbers.

Usage::

    python benchmarks/batch_read.py [--records 2000000] [--record-size 100] [--partitions 4]
        [--compression none] [--repeat 2] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import pyspark


def time_read(spark, fmt: str, bootstrap: str, topic: str) -> float:
    start = time.perf_counter()
    (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--record-size", type=int, default=100, help="value size in bytes")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument(
        "--compression", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"]
    )
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per source")
    parser.add_argument("--bootstrap-servers", help="existing cluster (default: local broker)")
    args = parser.parse_args(argv)

    from spark_kafka_py.testing.broker import LocalKafkaCluster
    from spark_kafka_py.testing.spark import local_spark_session
    from spark_kafka_py.testing.tools import create_topic, produce_perf

    cluster = None
    bootstrap = args.bootstrap_servers
    if not bootstrap:
        cluster = LocalKafkaCluster(num_brokers=1)
        cluster.start()
        bootstrap = cluster.bootstrap_servers
    try:
        topic = f"bench-{args.compression}-{args.records}-{time.time_ns()}"
        create_topic(bootstrap, topic, partitions=args.partitions)
        t0 = time.perf_counter()
        produce_perf(bootstrap, topic, args.records, args.record_size, args.compression)
        produce_s = time.perf_counter() - t0

        spark = local_spark_session("spark-kafka-py bench")
        results: dict[str, list[float]] = {"pykafka": [], "kafka": []}
        # Warm-up (JVM JIT, Python workers), then alternate the two sources.
        for fmt in results:
            time_read(spark, fmt, bootstrap, topic)
        for _ in range(args.repeat):
            for fmt in results:
                results[fmt].append(time_read(spark, fmt, bootstrap, topic))
        spark.stop()
    finally:
        if cluster is not None:
            cluster.stop()

    mb = args.records * args.record_size / 1e6
    print(
        f"\n{args.records:,} records x {args.record_size} B, {args.partitions} partitions, "
        f"compression={args.compression}, local[2]; produced in {produce_s:.1f} s"
    )
    print(
        f"pyspark {pyspark.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, {platform.processor() or platform.system()}"
    )
    print(f"{'source':<10}{'median s':>10}{'records/s':>14}{'MB/s':>10}")
    medians = {}
    for fmt, times in results.items():
        med = statistics.median(times)
        medians[fmt] = med
        print(f"{fmt:<10}{med:>10.2f}{args.records / med:>14,.0f}{mb / med:>10.1f}")
    ratio = medians["kafka"] / medians["pykafka"]
    print(f"ratio pykafka/kafka (throughput): {ratio:.2f}")
    print(
        json.dumps(
            {
                "records": args.records,
                "compression": args.compression,
                "pykafka_s": medians["pykafka"],
                "kafka_s": medians["kafka"],
                "ratio": round(ratio, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
