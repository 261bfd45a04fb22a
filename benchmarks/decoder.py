"""The executor's decoder alone (Fetch responses in memory to ``pyarrow.RecordBatch``) against
confluent-kafka and kafka-python consuming the same topic, with Kafka's Java
``ConsumerPerformance`` as the machine's ceiling. Same as ``spark-kafka-py bench decoder``.

The topic's Fetch responses are first read into memory with our client
(:func:`fetch_to_memory`), then decoded to ``pyarrow.RecordBatch`` (accelerated and pure).
Peers: confluent-kafka (librdkafka) and kafka-python consuming the same topic into Python
message objects (the ``bench`` extra; a missing peer is reported and skipped), and our own
fetch + decode over the network without Spark against Kafka's Java ``ConsumerPerformance``
(fetch MB/s).

Usage::

    python benchmarks/decoder.py [--records 5000000] [--codecs none,lz4,zstd] [--repeat 2]
"""

from __future__ import annotations

import contextlib
import datetime
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import BenchResult

__all__ = [
    "CONSUMER_PERFORMANCE",
    "PROTOBUF_EVENT",
    "FetchedPartition",
    "bench_decoder",
    "bench_protobuf_encode",
    "bench_protobuf_payloads",
    "consumer_performance",
    "fetch_to_memory",
]

CONSUMER_PERFORMANCE = "org.apache.kafka.tools.ConsumerPerformance"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass
class FetchedPartition:
    """Raw ``records`` bytes of every Fetch response of one partition, in order."""

    topic: str
    partition: int
    chunks: list[bytes]
    start: int
    end: int


def fetch_to_memory(
    bootstrap: str, topic: str, max_partition_fetch_bytes: int = 1 << 20
) -> list[FetchedPartition]:
    """Read a whole topic's Fetch responses into memory (our client), for decoder timings.

    Each chunk is one Fetch response's records bytes for one partition, as the executor gets
    them (``max.partition.fetch.bytes`` each).
    """
    from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
    from spark_kafka_py.consumer.fetcher import CONSUMER_REPLICA_ID, answered_partition
    from spark_kafka_py.consumer.settings import ConsumerSettings
    from spark_kafka_py.consumer.types import TopicPartition
    from spark_kafka_py.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
    from spark_kafka_py.protocol.primitives import ZERO_UUID
    from spark_kafka_py.records import decode_records
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.planner import Planner

    options = parse_options(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, streaming=False
    )
    planner = Planner(options)
    try:
        leaders, _ = planner.topic_partitions()
        start = planner.resolve(options.starting_offsets, leaders, "startingOffsets")
        assert options.ending_offsets is not None  # a batch read's ("latest" by default)
        end = planner.resolve(options.ending_offsets, leaders, "endingOffsets")
    finally:
        planner.close()
    settings = ConsumerSettings(ClientConfig.from_bootstrap(bootstrap))
    client = KafkaClient(settings.client)
    out = []
    try:
        metadata = client.metadata([topic])
        info = metadata.topics[topic]
        for tp in sorted(start, key=lambda t: t.partition):
            assert isinstance(tp, TopicPartition)
            leader = info.partitions[tp.partition].leader_id
            pos, stop = start[tp], end[tp]
            chunks = []
            while pos < stop:
                request = FetchRequest(
                    replica_id=CONSUMER_REPLICA_ID,
                    max_wait_ms=500,
                    min_bytes=1,
                    max_bytes=settings.fetch_max_bytes,
                    isolation_level=0,
                    session_id=0,
                    session_epoch=-1,
                    topics=(
                        FetchTopic(
                            topic=topic,
                            topic_id=ZERO_UUID if info.topic_id is None else info.topic_id,
                            partitions=(
                                FetchPartition(
                                    partition=tp.partition,
                                    current_leader_epoch=-1,
                                    fetch_offset=pos,
                                    log_start_offset=-1,
                                    partition_max_bytes=max_partition_fetch_bytes,
                                ),
                            ),
                        ),
                    ),
                    rack_id="",
                )
                response = client.send(leader, request)
                part = answered_partition(response, tp, info.topic_id)
                if part is None or part.error_code:
                    raise RuntimeError(f"Fetch of {tp} at {pos} failed: {part}")
                data = bytes(part.records or b"")
                decoded = decode_records(
                    data, topic=topic, partition=tp.partition, start_offset=pos, end_offset=stop
                )
                if decoded.next_offset <= pos:
                    raise RuntimeError(f"no progress fetching {tp} at {pos}")
                chunks.append(data)
                pos = decoded.next_offset
            out.append(FetchedPartition(topic, tp.partition, chunks, start[tp], stop))
    finally:
        client.close()
    return out


def _time_decode(
    fetched: list[FetchedPartition], decode: Callable[..., Any], limit: int | None = None
) -> tuple[float, int]:
    """Seconds to decode every chunk (in order, as the executor would) and the row count."""
    rows = 0
    start_t = time.perf_counter()
    for fp in fetched:
        pos = fp.start
        for data in fp.chunks:
            res = decode(
                data, topic=fp.topic, partition=fp.partition, start_offset=pos, end_offset=fp.end
            )
            rows += res.batch.num_rows
            pos = res.next_offset
            if limit is not None and rows >= limit:
                return time.perf_counter() - start_t, rows
    return time.perf_counter() - start_t, rows


def _time_confluent(bootstrap: str, topic: str, partitions: int, records: int) -> float:
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        count = 0
        start = time.perf_counter()
        deadline = start + 600
        while count < records and time.perf_counter() < deadline:
            for msg in consumer.consume(num_messages=10_000, timeout=1.0):
                if msg.error() is None:
                    msg.key()
                    msg.value()
                    count += 1
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if count < records:
        raise RuntimeError(f"confluent-kafka consumed {count} of {records} records")
    return elapsed


def _time_kafka_python(bootstrap: str, topic: str, partitions: int, records: int) -> float:
    import kafka

    consumer = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None
    )
    try:
        tps = [kafka.TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        count = 0
        start = time.perf_counter()
        deadline = start + 600
        while count < records and time.perf_counter() < deadline:
            for msgs in consumer.poll(timeout_ms=1000, max_records=10_000).values():
                for msg in msgs:
                    msg.key  # noqa: B018 - touch what the other systems return
                    msg.value  # noqa: B018
                    count += 1
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if count < records:
        raise RuntimeError(f"kafka-python consumed {count} of {records} records")
    return elapsed * records / count


def _time_ours_fetch_decode(bootstrap: str, topic: str) -> tuple[float, int]:
    """Our fetcher end to end without Spark (network + decode), partitions one after another."""
    from spark_kafka_py.consumer.fetcher import read_range
    from spark_kafka_py.spark.options import parse_options
    from spark_kafka_py.spark.planner import Planner

    options = parse_options(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, streaming=False
    )
    planner = Planner(options)
    try:
        leaders, _ = planner.topic_partitions()
        start = planner.resolve(options.starting_offsets, leaders, "startingOffsets")
        assert options.ending_offsets is not None  # a batch read's ("latest" by default)
        end = planner.resolve(options.ending_offsets, leaders, "endingOffsets")
    finally:
        planner.close()
    rows = 0
    t0 = time.perf_counter()
    for tp in start:
        for batch in read_range(options.consumer, tp, start[tp], end[tp]):
            rows += batch.num_rows
    return time.perf_counter() - t0, rows


def consumer_performance(bootstrap: str, topic: str, records: int) -> dict[str, float]:
    """Kafka's Java ``ConsumerPerformance`` on ``topic``: its CSV summary as a dict
    (``fetch.MB.sec``, ``fetch.nMsg.sec``, ``fetch.time.ms`` ...)."""
    from spark_kafka_py.testing.tools import run_tool

    proc = run_tool(
        CONSUMER_PERFORMANCE,
        [
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--messages",
            str(records),
            "--timeout",
            "60000",
        ],
        timeout_s=900,
        heap="512m",
        fast_start=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if "fetch.MB.sec" in line and i + 1 < len(lines):
            keys = [k.strip() for k in line.split(",")]
            values = [v.strip() for v in lines[i + 1].split(",")]
            out = {}
            for k, v in zip(keys, values, strict=False):
                with contextlib.suppress(ValueError):
                    out[k] = float(v)
            return out
    raise RuntimeError(f"ConsumerPerformance printed no summary:\n{proc.stdout[-2000:]}")


def bench_decoder(
    bootstrap: str,
    topic: str,
    case: str,
    records: int,
    record_bytes: int,
    partitions: int,
    repeat: int = 2,
    pure_limit: int = 500_000,
    kafka_python_limit: int = 1_000_000,
) -> list[BenchResult]:
    """Decoder-only and consumer comparisons on one topic (see the module docstring)."""
    from spark_kafka_py.records import decoder
    from spark_kafka_py.records._pure import decode_records_pure

    mb = records * record_bytes / 1e6
    fetched = fetch_to_memory(bootstrap, topic)
    runs: dict[str, list[float]] = {"decode": []}
    rows = 0
    for _ in range(repeat):
        secs, rows = _time_decode(fetched, decoder.decode_records)
        runs["decode"].append(secs)
    if rows != records:
        raise RuntimeError(f"decoded {rows} rows, expected {records}")
    ours = statistics.median(runs["decode"])
    name = f"decode to Arrow ({decoder.IMPLEMENTATION})"
    out = []

    # pure reference, on a prefix (it is slow), scaled to the whole topic
    secs, n = _time_decode(fetched, decode_records_pure, limit=pure_limit)
    pure_s = secs * records / max(n, 1)
    out.append(
        BenchResult(
            "decoder",
            case,
            name,
            "decode to Arrow (pure Python)",
            records,
            mb,
            ours,
            pure_s,
            {"decode": runs["decode"], "pure": [pure_s]},
            f"pure timed on {n:,} records, scaled",
        )
    )
    try:
        conf = [_time_confluent(bootstrap, topic, partitions, records) for _ in range(repeat)]
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "confluent-kafka consume()",
                records,
                mb,
                ours,
                statistics.median(conf),
                {"decode": runs["decode"], "confluent": conf},
                "peer includes its network fetch from the local broker",
            )
        )
    except ImportError:
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "confluent-kafka",
                records,
                mb,
                ours,
                None,
                note="confluent-kafka not installed",
            )
        )
    try:
        limit = min(records, kafka_python_limit)
        kp = _time_kafka_python(bootstrap, topic, partitions, limit) * records / limit
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "kafka-python poll()",
                records,
                mb,
                ours,
                kp,
                {"decode": runs["decode"], "kafka-python": [kp]},
                f"kafka-python timed on {limit:,} records, scaled",
            )
        )
    except ImportError:
        out.append(
            BenchResult(
                "decoder",
                case,
                name,
                "kafka-python",
                records,
                mb,
                ours,
                None,
                note="kafka-python not installed",
            )
        )
    e2e = [_time_ours_fetch_decode(bootstrap, topic)[0] for _ in range(repeat)]
    cp = consumer_performance(bootstrap, topic, records)
    fetch_ms = cp.get("fetch.time.ms") or 0.0
    java_s = fetch_ms / 1000 if fetch_ms else None
    out.append(
        BenchResult(
            "decoder",
            case,
            "our fetch + decode (no Spark)",
            "Java ConsumerPerformance (ceiling)",
            records,
            mb,
            statistics.median(e2e),
            java_s,
            {"ours_e2e": e2e, "java": [java_s or 0.0]},
            f"Java fetch {cp.get('fetch.MB.sec', 0):.1f} MB/s, "
            f"{cp.get('fetch.nMsg.sec', 0):,.0f} records/s (its MB: MiB of keys + values)",
        )
    )
    return out


#: The Protobuf payload microbenchmark's message: ``benchmarks/avro.py``'s ten-field ``Event``
#: (the decimal as int64 cents; Protobuf has no decimal).
PROTOBUF_EVENT = """
syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Origin { int32 zone = 1; string host = 2; }
message Event {
  int32 id = 1; int64 seq = 2; double score = 3; string name = 4; Origin origin = 5;
  repeated int32 tags = 6; optional string note = 7; google.protobuf.Timestamp at = 8;
  int64 amount = 9; bool ok = 10;
}
"""


def _protobuf_events(records: int) -> tuple[Any, Any, list[Any]]:
    """(schema, ``bench.Event`` descriptor, ``records`` generated messages) of
    :data:`PROTOBUF_EVENT` (seeded: the same messages every run)."""
    import random

    from spark_kafka_py.formats.protobuf import parse_proto

    schema = parse_proto(PROTOBUF_EVENT)
    event = schema.message("bench.Event")
    cls = schema.decode_class(event)
    rng = random.Random(26)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    messages = []
    for i in range(records):
        m = cls(
            id=rng.randrange(-(2**31), 2**31),
            seq=i * 7919 + rng.randrange(1 << 40),
            score=rng.random() * 1000.0,
            name="".join(rng.choices(letters, k=rng.randrange(8, 25))),
            tags=[rng.randrange(-1000, 1000) for _ in range(rng.randrange(5))],
            amount=rng.randrange(-(10**10) + 1, 10**10),
            ok=rng.random() < 0.5,
        )
        m.origin.zone = rng.randrange(64)
        m.origin.host = f"host-{rng.randrange(1000)}"
        if i % 3:
            m.note = f"note {rng.randrange(10**6)}"
        m.at.seconds = 1_704_067_200 + rng.randrange(10**7)
        m.at.nanos = rng.randrange(1000) * 1_000_000
        messages.append(m)
    return schema, event, messages


def bench_protobuf_payloads(records: int = 100_000, repeat: int = 3) -> dict[str, float]:
    """In process, no broker: CPU ns/record (``time.process_time``, best of ``repeat``) of
    ``ProtobufDecoder.decode`` over ``records`` :data:`PROTOBUF_EVENT` payloads (written by the
    protobuf package's serializer), compiled reader (``"accel"``) against the upb route
    (``"upb"``: upb parses, Python converts). Both arrays are compared on the first 2,000.

    Usage: ``python3 -c "from benchmarks.decoder import bench_protobuf_payloads as b; print(b())"``
    """
    from spark_kafka_py.formats.protobuf import ProtobufDecoder

    schema, event, messages = _protobuf_events(records)
    values = [m.SerializeToString() for m in messages]
    decoders = {
        "accel": ProtobufDecoder(schema, event),
        "upb": ProtobufDecoder(schema, event, accelerate=False),
    }
    if decoders["accel"].implementation != "accel":
        raise RuntimeError("the compiled Protobuf reader is not built or not used")
    if not decoders["accel"].decode(values[:2000]).equals(decoders["upb"].decode(values[:2000])):
        raise RuntimeError("the compiled reader and the upb route disagree")
    out = {}
    for name, decoder in decoders.items():
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            decoder.decode(values)
            best = min(best, time.process_time() - start)
        out[name] = best / records * 1e9
    return out


def bench_protobuf_encode(records: int = 100_000, repeat: int = 3) -> dict[str, float]:
    """In process, no broker: CPU ns/record (``time.process_time``, best of ``repeat``) of
    writing ``records`` :data:`PROTOBUF_EVENT` messages (the same ten-field shape as the Avro
    benchmark) from one Arrow struct column: ``ProtobufEncoder.encode`` on the compiled plan
    (``"accel"``) and on the pure-Python plan (``"pure"``), against the protobuf package
    (``"upb"``: ``Message(**fields).SerializeToString()`` per row, the message built from the
    row's Python values, as a ``mapInArrow`` UDF would; the rows' ``to_pylist`` not timed).

    The struct column is the compiled reader's decoding of the protobuf package's payloads;
    before timing, both plans' bytes are checked equal to each other and, parsed back by the
    protobuf package, equal to the messages generated.

    Usage: ``python3 -c "from benchmarks.decoder import bench_protobuf_encode as b; print(b())"``
    """
    from spark_kafka_py.formats.protobuf import ProtobufDecoder, ProtobufEncoder

    schema, event, messages = _protobuf_events(records)
    cls = schema.decode_class(event)
    column = ProtobufDecoder(schema, event).decode([m.SerializeToString() for m in messages])
    encoders = {
        "accel": ProtobufEncoder(schema, event, column.type),
        "pure": ProtobufEncoder(schema, event, column.type, accelerate=False),
    }
    if encoders["accel"].implementation != "accel":
        raise RuntimeError("the compiled Protobuf writer is not built or not used")
    check = column.slice(0, 2000)
    written = encoders["accel"].encode(check)
    if not written.equals(encoders["pure"].encode(check)):
        raise RuntimeError("the compiled and the pure-Python writers disagree")
    if [cls.FromString(b) for b in written.to_pylist()] != messages[:2000]:
        raise RuntimeError("the written messages do not parse back to the generated ones")
    rows = column.to_pylist()
    Origin = type(cls().origin)
    Timestamp = type(cls().at)

    def upb() -> None:
        for r in rows:
            at = r["at"]
            seconds, micros = divmod(
                (at - _EPOCH).days * 86_400_000_000
                + (at - _EPOCH).seconds * 1_000_000
                + (at - _EPOCH).microseconds,
                1_000_000,
            )
            cls(
                id=r["id"],
                seq=r["seq"],
                score=r["score"],
                name=r["name"],
                origin=Origin(**r["origin"]),
                tags=r["tags"],
                note=r["note"],
                at=Timestamp(seconds=seconds, nanos=micros * 1000),
                amount=r["amount"],
                ok=r["ok"],
            ).SerializeToString()

    timed: dict[str, Callable[[], Any]] = {
        "accel": lambda: encoders["accel"].encode(column),
        "pure": lambda: encoders["pure"].encode(column),
        "upb": upb,
    }
    out = {}
    for name, run in timed.items():
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            run()
            best = min(best, time.process_time() - start)
        out[name] = best / records * 1e9
    return out


if __name__ == "__main__":
    from benchmarks.cli import main

    raise SystemExit(main(["decoder", *sys.argv[1:]]))
