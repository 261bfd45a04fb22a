"""``spark-kafka-py bench``: ``format("pykafka")`` side by side with its peers, as ratios.

Every figure is a ratio of two systems measured in the same run, on the same local broker and
the same topic (written by Kafka's own Java producer), so that a busy or small machine changes
both sides alike. Benchmarks (one module each, over :mod:`benchmarks.harness`):

``batch`` (:mod:`benchmarks.batch_read`)
    ``spark.read.format(F).load().write.format("noop")`` for ``F`` = ``pykafka`` and Spark's
    built-in ``kafka``, local[2], one topic per codec (none, lz4, zstd by default), and the
    limit of a Python data source (:mod:`benchmarks.limit_source`: pre-built Arrow batches of
    the sizes pykafka yields). Warm-up run per source, then the sources alternate; medians of
    ``--repeat`` runs; pykafka / kafka and pykafka / limit.
``decoder`` (:mod:`benchmarks.decoder`)
    The executor's decoder alone: the topic's Fetch responses are first read into memory, then
    decoded to ``pyarrow.RecordBatch`` (accelerated and pure). Peers: confluent-kafka
    (librdkafka) and kafka-python consuming the same topic into Python message objects, and
    our own fetch + decode over the network without Spark. Kafka's Java
    ``ConsumerPerformance`` gives the machine's ceiling (fetch MB/s).
``stream`` (:mod:`benchmarks.streaming`)
    ``readStream`` with ``maxOffsetsPerTrigger`` (each of a comma-separated list, default
    250,000 and 25,000) and AvailableNow into the ``noop`` sink: sustained records/s of
    pykafka, the built-in and the limit of a Python stream reader
    (:mod:`benchmarks.limit_stream_source`: the same offsets, pre-built Arrow batches), the
    ratios, the query progress's ``durationMs`` per micro-batch and the pykafka reader's
    driver calls.
``planning`` (:mod:`benchmarks.planning`)
    The driver's latest-offset look-up per micro-batch for 1 to 10,000 partitions
    (``--planning-partitions``; topics of at most 1,000 partitions), both sources measured
    the same way: ``durationMs.latestOffset`` of idle streaming queries; and the pykafka
    stream reader object's ``latestOffset`` + ``partitions``. Without ``--bootstrap-servers``
    on a 3-node local cluster started for it.
``latency`` (:mod:`benchmarks.latency`)
    End-to-end latency at a steady ``--rate`` (default 2,000 records/s, Kafka's
    ``ProducerPerformance``) for ``--seconds``: a streaming query per source with the default
    trigger into ``foreachBatch``, record CreateTime to the batch on the driver, p50 / p99.
``memory`` (:mod:`benchmarks.memory`)
    Peak RSS of a fresh Python process reading one large partition with our fetcher.
``write`` (:mod:`benchmarks.write`)
    ``df.write.format(F).save()`` for ``F`` = ``pykafka`` and Spark's built-in ``kafka``: the
    same cached DataFrame (``--records`` rows, ``--key-size``/``--value-size`` bytes) into a
    fresh topic per write, one case per codec (``kafka.compression.type``), each topic's
    record count checked; the peak RSS of the pykafka sink's Python workers next to
    ``kafka.buffer.memory`` and the Arrow batch size.
``eos`` (:mod:`benchmarks.eos`)
    The same stream (``readStream.format("pykafka")``, ``--per-trigger`` records per
    micro-batch, AvailableNow) into ``writeStream.format("pykafka")`` with
    ``deliveryGuarantee`` ``exactly-once`` and ``at-least-once``, alternating: rows/s of each,
    the ratio, ``addBatch`` per micro-batch of each mode and the driver's EndTxn phase; each
    output's record count checked (``read_committed`` for exactly-once).
``pushdown`` (:mod:`benchmarks.pushdown`)
    Filter pushdown: "the last 1% by timestamp", "one partition" and "an offset window of
    10,000 records" over one topic (``--records``, default 10M, ``--partitions``, default 8,
    CreateTime spread over ``--hours``, written by our own producer and reused by later runs on
    the same cluster), ``format("pykafka")`` with ``spark.sql.python.filterPushdown.enabled``
    against ``format("kafka")``: records fetched (the scan's ``numOutputRows``), the matching
    records, seconds and the speed-up.
``group-pause`` (:mod:`benchmarks.group_pause`)
    The pause in reading the partitions a member keeps while another member joins its group:
    classic eager (``range``), classic ``cooperative-sticky`` and the consumer protocol
    (KIP-848), ``--pause-runs`` runs each, alternating (median and max, ms), and the joining
    member's time to its first record. Not a comparison with a peer; no Spark; without
    ``--bootstrap-servers`` on a local broker of its own (``--partitions``, default 4).
``avro`` (:mod:`benchmarks.avro`)
    The Avro decoder alone: registry-framed values of a 10-field record decoded into one
    Arrow array (``decode_framed``, accelerated and pure) against the Python route (fastavro's
    ``schemaless_reader`` and confluent-kafka's ``AvroDeserializer`` per record, then
    ``pa.array``); records/s, ns/record and the ratios. No broker, no Spark; ``--records``
    (default 200,000), ``--repeat``.
``formats`` (:mod:`benchmarks.formats`)
    JSON and Protobuf values read as typed columns: one topic per format (``--format``
    ``json``, ``protobuf`` or ``both``) of ``--records`` values of the Avro benchmark's
    10-field shape, local[2] reads into the noop sink of ``format("pykafka")`` with
    ``valueFormat=json``/``protobuf`` against ``format("kafka")`` + ``from_json`` (the JVM
    Protobuf route, spark-protobuf's ``from_protobuf``, is reported as not run: its jar is not
    served here) and + ``mapInArrow`` parsing each record in Python; rows compared first;
    records/s and ratios; and each decoder alone against the per-record Python route.
``fuzz`` (:mod:`benchmarks.fuzz`)
    Coverage-guided fuzzing (atheris) of every decoder of network bytes, seeded with real
    broker traffic: executions, exec/s, findings, slowest input and largest allocation per
    input (``--executions``, ``--targets``, ``--jobs``; needs the ``fuzz`` extra). Not a
    comparison; run on its own, it exits 1 when there were findings.

Data: ``sparkkafkapy.BenchProducer`` (``benchmarks/java/BenchProducer.java``, compiled with
``javac`` on first use): 16-byte keys, 100-byte values by default. Jars (Kafka 4.3.0 broker and
tools, Spark's Kafka connector) come from Maven Central on first use, as for the tests; peers
come with the ``bench`` extra (``pip install -e ".[bench]"``); a missing peer is reported and
skipped.

Output: a Markdown table per benchmark, with both systems and the ratio, then versions and the
machine. ``--json FILE`` also writes every measurement.

Where it runs: ``benchmarks/`` belongs to the source checkout and is not shipped in the
wheel. ``spark-kafka-py bench`` (:mod:`spark_kafka_py.cli`) finds it beside the imported
``spark_kafka_py`` package, as in a checkout or an editable install, and registers this
module's :func:`add_parser`; from an installed wheel, ``bench`` says that it needs a source
checkout. The same runs: ``python -m benchmarks.cli [which ...] [options]`` or
``python benchmarks/cli.py ...`` from the checkout, and one benchmark per script,
``python benchmarks/batch_read.py [options]`` (``decoder.py``, ``streaming.py``,
``memory.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.avro import run as run_avro
from benchmarks.batch_read import bench_batch, format_batch_table
from benchmarks.decoder import bench_decoder
from benchmarks.eos import EosLatency, bench_eos, format_latency_table
from benchmarks.formats import add_arguments as add_formats_arguments
from benchmarks.formats import run as run_formats
from benchmarks.fuzz import add_arguments as add_fuzz_arguments
from benchmarks.fuzz import run as run_fuzz
from benchmarks.group_pause import add_arguments as add_group_pause_arguments
from benchmarks.group_pause import run as run_group_pause
from benchmarks.harness import (
    DEFAULT_CODECS,
    BenchResult,
    environment,
    format_table,
    local_broker,
    produce_bench_data,
    spread,
)
from benchmarks.latency import LatencyResult, bench_latency, format_e2e_latency_table
from benchmarks.memory import bench_memory
from benchmarks.planning import (
    PlanningResult,
    as_bench_results,
    bench_planning,
    format_planning_table,
    load_average,
    planning_cluster,
)
from benchmarks.pushdown import (
    DEFAULT_HOURS,
    DEFAULT_OFFSET_WINDOW,
    PushdownResult,
    bench_pushdown,
    format_pushdown_table,
)
from benchmarks.pushdown import DEFAULT_PARTITIONS as PUSHDOWN_PARTITIONS
from benchmarks.pushdown import DEFAULT_RECORDS as PUSHDOWN_RECORDS
from benchmarks.streaming import (
    StreamRun,
    bench_stream,
    enable_driver_timings,
    format_breakdown_table,
    format_driver_calls,
    format_stream_table,
)
from benchmarks.write import WriteMemory, bench_write, format_memory_table
from spark_kafka_py.discovery import ensure_registered
from spark_kafka_py.testing.spark import local_spark_session
from spark_kafka_py.testing.spark_cluster import StandaloneCluster, cluster_spark_session

__all__ = ["add_parser", "main", "run"]

#: The ``--help`` description (plain text: argparse prints it as it is).
DESCRIPTION = (
    'spark-kafka-py bench: format("pykafka") side by side with its peers (Spark\'s '
    'format("kafka"), Kafka clients, the limit of a Python data source), as ratios of two '
    "systems measured in the same run on the same local broker and topic."
)

#: ``--records`` and ``--partitions`` when not given, for every benchmark but ``pushdown``.
DEFAULT_RECORDS = 5_000_000
DEFAULT_PARTITIONS = 4


#: ``--master standalone``: the workers of the cluster started for the run (1 core each), the
#: memory of each worker and the heap of its executor.
STANDALONE_WORKERS = 2
STANDALONE_WORKER_MEMORY = "2g"
STANDALONE_EXECUTOR_MEMORY = "1g"


def _bench_session(master: str) -> tuple[Any, StandaloneCluster | None]:
    """The Spark session of the benchmarks, and the standalone cluster started for it.

    ``master``: ``local[...]`` (one JVM), ``spark://host:port`` (a running standalone
    cluster), or ``standalone``: a cluster of :data:`STANDALONE_WORKERS` 1-core workers
    (:class:`~spark_kafka_py.testing.spark_cluster.StandaloneCluster`) started here, one
    1-core executor per worker with a :data:`STANDALONE_EXECUTOR_MEMORY` heap.

    When PySpark does not find ``format("pykafka")`` by itself (a plain ``pip install -e .``),
    the session registers it and one line on stderr says so and how to install instead
    (:func:`spark_kafka_py.discovery.ensure_registered`).
    """
    if master.startswith("local"):
        spark = local_spark_session("spark-kafka-py bench", master=master)
        ensure_registered(spark)
        return spark, None
    cluster = None
    if master == "standalone":
        cluster = StandaloneCluster(
            workers=STANDALONE_WORKERS, memory_per_worker=STANDALONE_WORKER_MEMORY
        ).start()
        master = cluster.master_url
    try:
        spark = cluster_spark_session(
            master,
            "spark-kafka-py bench",
            executor_memory=STANDALONE_EXECUTOR_MEMORY,
            with_kafka_connector=True,
        )
        ensure_registered(spark)
    except BaseException:
        if cluster is not None:
            cluster.stop()
        raise
    return spark, cluster


def _on_master(
    results: list[BenchResult], master: str, masters: Sequence[str]
) -> list[BenchResult]:
    """``results`` with ``master`` named in each case when several masters are compared."""
    if len(masters) < 2:
        return results
    return [replace(r, case=f"{r.case}, {master}") for r in results]


def run(args: argparse.Namespace) -> int:
    """Run the benchmarks named in ``args.which``; print the tables; return 0."""
    which = set(args.which) if args.which else {"batch", "decoder"}
    known = {
        *("batch", "decoder", "stream", "latency", "memory", "write", "eos", "pushdown"),
        *("planning", "fuzz", "all"),
    }
    known.add("group-pause")
    known.add("avro")
    known.add("formats")
    unknown = which - known
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    if "fuzz" in which:
        status = run_fuzz(args)
        which.discard("fuzz")
        if not which:
            return status
    if "group-pause" in which:  # no Spark; a broker of its own (benchmarks.group_pause)
        status = run_group_pause(args)
        which.discard("group-pause")
        if not which:
            return status
    if "avro" in which:  # no broker, no Spark (benchmarks.avro)
        status = run_avro(args)
        which.discard("avro")
        if not which:
            return status
    if "formats" in which:  # a broker and Spark of its own (benchmarks.formats)
        status = run_formats(args)
        which.discard("formats")
        if not which:
            return status
    if "all" in which:
        which = {"batch", "decoder", "stream", "planning"}
    masters = [m.strip() for m in args.master.split(",") if m.strip()]
    if len(masters) > 1 and which - {"batch", "decoder"}:
        raise SystemExit("several --master values are for the batch benchmark only")
    pushdown_records = args.records or PUSHDOWN_RECORDS
    pushdown_partitions = args.partitions or PUSHDOWN_PARTITIONS
    args.records = args.records or DEFAULT_RECORDS
    args.partitions = args.partitions or DEFAULT_PARTITIONS
    codecs = [c.strip() for c in args.codecs.split(",") if c.strip()]
    record_bytes = args.key_size + args.value_size
    results: list[BenchResult] = []
    memory: list[dict[str, float]] = []
    write_memory: list[WriteMemory] = []
    eos_latency: EosLatency | None = None
    pushdown: list[PushdownResult] = []
    planning: list[PlanningResult] = []
    stream_runs: list[StreamRun] = []
    driver_calls = ""
    latency: list[LatencyResult] = []
    # before the Spark session starts: its JVM hands the environment to the stream readers
    stream_timings = enable_driver_timings() if which & {"stream", "latency"} else None
    part_mb = 0.0
    with local_broker(args.bootstrap_servers) as bootstrap:
        topics: dict[str, str] = {}
        run_id = uuid.uuid4().hex[:8]
        data_free = {"memory", "write", "eos", "pushdown", "latency", "planning"}
        for codec in codecs if which - data_free else []:
            topic = f"bench-{codec}-{args.records}-{run_id}"
            secs = produce_bench_data(
                bootstrap,
                topic,
                args.records,
                partitions=args.partitions,
                key_size=args.key_size,
                value_size=args.value_size,
                compression=codec,
            )
            print(f"produced {args.records:,} records ({codec}) in {secs:.1f} s", flush=True)
            topics[codec] = topic
        if "decoder" in which:
            for codec, topic in topics.items():
                results += bench_decoder(
                    bootstrap,
                    topic,
                    codec,
                    args.records,
                    record_bytes,
                    args.partitions,
                    repeat=args.repeat,
                )
                print(format_table(results[-4:]), flush=True)

        # several --master values: the batch benchmark on each, the same topics, one session
        # after the other (the others run on the last one)
        def batch_on(spark: Any, master: str) -> list[BenchResult]:
            return _on_master(
                bench_batch(
                    spark,
                    bootstrap,
                    topics,
                    args.records,
                    record_bytes,
                    repeat=args.repeat,
                    key_size=args.key_size,
                    value_size=args.value_size,
                ),
                master,
                masters,
            )

        for master in masters[:-1] if "batch" in which else []:
            spark, cluster = _bench_session(master)
            try:
                results += batch_on(spark, master)
            finally:
                spark.stop()
                if cluster is not None:
                    cluster.stop()
        if which & {"batch", "stream", "latency", "write", "eos", "pushdown", "planning"}:
            spark, cluster = _bench_session(masters[-1])
            try:
                if "batch" in which:
                    results += batch_on(spark, masters[-1])
                    print(format_table([r for r in results if r.bench == "batch"]), flush=True)
                    print(format_batch_table(results), flush=True)
                if "stream" in which:
                    first = next(iter(topics.values()))
                    streamed, stream_runs = bench_stream(
                        spark,
                        bootstrap,
                        first,
                        args.records,
                        record_bytes,
                        [int(t) for t in args.max_offsets_per_trigger.split(",") if t.strip()],
                        repeat=args.repeat,
                        key_size=args.key_size,
                        value_size=args.value_size,
                        timings=stream_timings,
                    )
                    results += streamed
                    print(format_table(streamed), flush=True)
                    print(format_stream_table(streamed), flush=True)
                    print(format_breakdown_table(stream_runs), flush=True)
                    driver_calls = format_driver_calls([args.partitions, 1_000, 10_000])
                    print(driver_calls, flush=True)
                if "latency" in which:
                    latency = bench_latency(
                        spark,
                        bootstrap,
                        rate=args.rate,
                        seconds=args.seconds,
                        partitions=args.partitions,
                        value_size=args.value_size,
                        warm_up_s=args.warm_up_s,
                        repeat=args.latency_repeat,
                        timings=stream_timings,
                    )
                    print(format_e2e_latency_table(latency), flush=True)
                if "write" in which:
                    written, write_memory = bench_write(
                        spark,
                        bootstrap,
                        codecs,
                        args.records,
                        args.key_size,
                        args.value_size,
                        partitions=args.partitions,
                        repeat=args.repeat,
                        buffer_memory=args.buffer_memory,
                    )
                    results += written
                    print(format_table(written), flush=True)
                if "eos" in which:
                    eos_result, eos_latency = bench_eos(
                        spark,
                        bootstrap,
                        args.records,
                        key_size=args.key_size,
                        value_size=args.value_size,
                        partitions=args.partitions,
                        per_trigger=args.per_trigger,
                        repeat=args.repeat,
                    )
                    results.append(eos_result)
                    print(format_table([eos_result]), flush=True)
                    print(format_latency_table(eos_latency), flush=True)
                if "pushdown" in which:
                    pushed, pushdown = bench_pushdown(
                        spark,
                        bootstrap,
                        pushdown_records,
                        partitions=pushdown_partitions,
                        hours=args.hours,
                        window=args.offset_window,
                        repeat=args.repeat,
                        key_size=args.key_size,
                        value_size=args.value_size,
                    )
                    results += pushed
                    print(format_pushdown_table(pushdown), flush=True)
                if "planning" in which:
                    counts = [int(c) for c in args.planning_partitions.split(",") if c.strip()]
                    with planning_cluster(args.bootstrap_servers) as planning_bootstrap:
                        planning = bench_planning(
                            spark, planning_bootstrap, counts, repeat=max(args.repeat, 1)
                        )
            finally:
                spark.stop()
                if cluster is not None:
                    cluster.stop()
        if "memory" in which:
            topic = f"bench-memory-{args.memory_records}-{run_id}"
            secs = produce_bench_data(
                bootstrap, topic, args.memory_records, partitions=1,
                key_size=args.key_size, value_size=args.value_size,
            )  # fmt: skip
            part_mb = args.memory_records * record_bytes / 1e6
            print(f"produced one {part_mb:,.0f} MB partition in {secs:.1f} s", flush=True)
            sizes = [int(x) for x in args.memory_fetch_bytes.split(",") if x.strip()]
            memory = bench_memory(bootstrap, topic, args.memory_records, sizes)
    env = environment()
    command = "spark-kafka-py bench " + " ".join(args.argv) if args.argv else "spark-kafka-py bench"
    print()
    print(f"### spark-kafka-py benchmarks, {env['date']}")
    print()
    if which - {"pushdown", "planning"}:
        print(
            f"`{command}`: {args.records:,} records/topic, {args.key_size}-byte keys, "
            f"{args.value_size}-byte values, {args.partitions} partitions, {args.master}, "
            f"medians of {args.repeat} runs; ratio = ours / peer throughput (> 1: ours faster)."
        )
    elif which == {"planning"}:
        print(f"`{command}`: {args.master}; empty topics, idle queries (see below).")
    else:
        print(
            f"`{command}`: {args.master}, medians of {args.repeat} runs; ratio = ours / peer "
            "throughput of the matching records (> 1: ours faster)."
        )
    print()
    if results:
        print(format_table(results))
        print()
    if memory:
        print(
            f"Peak RSS reading one partition of {part_mb:,.0f} MB (keys + values) in a fresh "
            "Python process, every batch written as Arrow IPC (as a PySpark worker does):"
        )
        print()
        print(
            "| max.partition.fetch.bytes | rows | RSS before (MB) | peak RSS (MB) | "
            "peak - before (MB) | largest Arrow batch (MB) |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for m in memory:
            print(
                f"| {m['max_partition_fetch_bytes']:,} | {m['rows']:,} | {m['base_mb']:.0f} | "
                f"{m['peak_mb']:.0f} | {m['peak_mb'] - m['base_mb']:.0f} | "
                f"{m['largest_batch_mb']:.1f} |"
            )
        print()
    if write_memory:
        print(
            "The pykafka sink's Python workers during its timed writes (RSS sampled every "
            "20 ms; largest single worker):"
        )
        print()
        print(format_memory_table(write_memory))
        print()
    if stream_runs:
        print(
            "Streaming, sustained records/s (AvailableNow, noop sink; rows of micro-batches "
            "2..n over their triggerExecution ms) of the limit of a Python stream reader, "
            "pykafka and the built-in:"
        )
        print()
        print(format_stream_table(results))
        print()
        print(
            "Where a micro-batch's time goes (query progress durationMs, ms, median over "
            "micro-batches 2..n):"
        )
        print()
        print(format_breakdown_table(stream_runs))
        print()
        print(
            "The pykafka stream reader's own Python work per micro-batch on the driver, "
            "without network (AvailableNow target known; best of 7, ms):"
        )
        print()
        print(driver_calls)
        print()
    if latency:
        print(
            f"End-to-end latency at {args.rate:,} records/s for {args.seconds:g} s, default "
            "trigger, foreachBatch to the driver (record CreateTime to the batch on the driver):"
        )
        print()
        print(format_e2e_latency_table(latency))
        print()
    if eos_latency is not None:
        print(
            "Per micro-batch, exactly-once against at-least-once (medians; addBatch includes "
            "the sink's driver commit; EndTxn phase from the commit log's timestamps):"
        )
        print()
        print(format_latency_table(eos_latency))
        print()
    if pushdown:
        print(
            f"Filter pushdown over one topic of {pushdown_records:,} records, "
            f"{pushdown_partitions} partitions, CreateTime over {args.hours:g} hours; fetched = "
            "the scan's numOutputRows, seconds = medians; speed-up = kafka s / pykafka s:"
        )
        print()
        print(format_pushdown_table(pushdown))
        print()
    if planning:
        print(
            "The driver's latest-offset look-up per micro-batch (medians of "
            f"{max(args.repeat, 1)} triggers, ms; ratio = kafka ms / pykafka ms, > 1: pykafka "
            f"faster; load average at the end {load_average()}):"
        )
        print()
        print(format_planning_table(planning))
        print()
    for k, v in env.items():
        print(f"- {k}: {v}")
    noise = spread(results)
    if noise:
        print(f"- run-to-run spread: {noise}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "env": env,
                    "command": command,
                    "results": [
                        {**asdict(r), "ratio": r.ratio}
                        for r in [*results, *as_bench_results(planning)]
                    ],
                    "memory": memory,
                    "write_memory": [asdict(m) for m in write_memory],
                    "eos_latency": asdict(eos_latency) if eos_latency else None,
                    "stream_runs": [asdict(r) for r in stream_runs],
                    "latency": [asdict(r) for r in latency],
                    "pushdown": [
                        {
                            **asdict(p),
                            "fetched_ratio": {s: p.fetched_ratio(s) for s in p.fetched},
                            "speedup": p.speedup,
                        }
                        for p in pushdown
                    ],
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``spark-kafka-py bench`` (see the module docstring)."""
    p = subparsers.add_parser(
        "bench",
        help="benchmark format('pykafka') against Spark's format('kafka') and Kafka clients",
        description=DESCRIPTION,
    )
    p.add_argument(
        "which",
        nargs="*",
        metavar="{batch,decoder,stream,latency,memory,write,eos,pushdown,planning,fuzz,group-pause,avro,formats,all}",
        help="benchmarks to run (default: batch decoder)",
    )
    p.add_argument(
        "--records",
        type=int,
        help=f"records per topic (default {DEFAULT_RECORDS:,}; pushdown: {PUSHDOWN_RECORDS:,})",
    )
    p.add_argument(
        "--partitions",
        type=int,
        help=f"partitions per topic (default {DEFAULT_PARTITIONS}; pushdown: "
        f"{PUSHDOWN_PARTITIONS})",
    )
    p.add_argument("--key-size", type=int, default=16, help="bytes")
    p.add_argument("--value-size", type=int, default=100, help="bytes")
    p.add_argument(
        "--codecs",
        default=",".join(DEFAULT_CODECS),
        help="producer compression per topic, comma separated",
    )
    p.add_argument("--repeat", type=int, default=2, help="timed runs per system")
    p.add_argument(
        "--max-offsets-per-trigger",
        default="250000,25000",
        help="maxOffsetsPerTrigger of the stream benchmark, records; comma separated for "
        "several runs",
    )
    p.add_argument(
        "--per-trigger",
        type=int,
        default=200_000,
        help="maxOffsetsPerTrigger of the eos benchmark (records per micro-batch)",
    )
    p.add_argument(
        "--planning-partitions",
        default="1,100,1000,10000",
        help="partition counts of the planning benchmark, comma separated",
    )
    p.add_argument(
        "--rate", type=int, default=2000, help="records/s of the latency benchmark's producer"
    )
    p.add_argument(
        "--seconds", type=float, default=60.0, help="seconds the latency benchmark produces"
    )
    p.add_argument(
        "--warm-up-s",
        type=float,
        default=5.0,
        help="seconds of records left out at the start of each latency run",
    )
    p.add_argument(
        "--latency-repeat", type=int, default=1, help="latency runs per source (alternating)"
    )
    p.add_argument(
        "--hours",
        type=float,
        default=DEFAULT_HOURS,
        help="hours the pushdown topic's record timestamps span, ending now (within the "
        "broker's retention)",
    )
    p.add_argument(
        "--offset-window",
        type=int,
        default=DEFAULT_OFFSET_WINDOW,
        help="records of the pushdown benchmark's offset-window query",
    )
    p.add_argument(
        "--memory-records",
        type=int,
        default=18_500_000,
        help="records of the one-partition topic of the memory benchmark (18.5M x 116 B = 2.1 GB)",
    )
    p.add_argument(
        "--memory-fetch-bytes",
        default="1048576,8388608",
        help="max.partition.fetch.bytes values of the memory benchmark",
    )
    p.add_argument(
        "--buffer-memory",
        type=int,
        default=33_554_432,
        help="kafka.buffer.memory of both sinks in the write benchmark, bytes",
    )
    p.add_argument("--bootstrap-servers", help="use this cluster instead of a local broker")
    p.add_argument(
        "--spark",
        action="store_true",
        help="avro: also read an Avro topic through Spark, format('pykafka') valueFormat=avro "
        "against format('kafka') + spark-avro's from_avro and + confluent-kafka in mapInArrow",
    )
    p.add_argument(
        "--schema-registry-url",
        help="avro --spark: use this registry instead of starting one",
    )
    p.add_argument(
        "--no-python-route",
        action="store_true",
        help="avro --spark: skip the confluent-kafka mapInArrow read (about 3 minutes at 5M)",
    )
    p.add_argument(
        "--no-reads",
        action="store_true",
        help="avro --spark: the write routes only (no topic written or read)",
    )
    p.add_argument(
        "--master",
        default="local[2]",
        help="spark.master of the Spark benchmarks: local[n], spark://host:port, or "
        "'standalone' (a 2-worker standalone cluster started for the run, 1 core each); "
        "batch only: several, comma separated, each reading the same topics in turn",
    )
    p.add_argument("--json", help="also write the results to this JSON file")
    add_formats_arguments(p.add_argument_group("formats"))
    add_fuzz_arguments(p.add_argument_group("fuzz"))
    add_group_pause_arguments(p.add_argument_group("group-pause"))
    p.set_defaults(func=_main_from_cli)


def _main_from_cli(args: argparse.Namespace) -> int:
    args.argv = sys.argv[2:] if len(sys.argv) > 1 and sys.argv[1] == "bench" else []
    return run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.cli [which ...] [options]``: parse ``argv`` (default
    ``sys.argv[1:]``) as ``spark-kafka-py bench`` does, run, return the exit code."""
    parser = argparse.ArgumentParser(prog="spark-kafka-py")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(["bench", *argv])
    args.argv = argv
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
