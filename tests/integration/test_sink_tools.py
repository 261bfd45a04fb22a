"""Kafka's own tools read what ``df.write.format("pykafka")`` wrote, for every codec.

First the reference tools themselves (:func:`read_all`, :func:`dump_log`) on what Kafka's own
Java producers wrote: records exactly as given, idempotent and transactional batches, both
isolation levels. Then our sink:

for each ``kafka.compression.type`` (none, gzip, snappy, lz4, zstd) one batch write of keyed
rows into a 3-partition topic, with small batches (``kafka.batch.size``) so every partition
gets several record batches; then:

- Kafka's Java ConsoleConsumer (``kafka-console-consumer``) returns every key and value;
- ``kafka-dump-log`` (DumpLogSegments) on the broker's segments shows only valid record batches
  (magic 2, the broker's CRC-32C check passes) of the requested codec, written by an
  idempotent producer (producer id and epoch >= 0, not transactional), whose sequence numbers
  per producer and partition start at 0 and follow on from batch to batch (each batch's
  ``baseSequence`` is the previous batch's ``lastSequence + 1``), covering every record.
"""

from __future__ import annotations

import base64
import os
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import compile_java, run_java
from spark_kafka_py.testing.tools import (
    COMPRESSION_CODECS,
    DumpedBatch,
    ProducedRecord,
    consume,
    create_topic,
    dump_log,
    produce,
    read_all,
    segment_files,
)

#: CreateTime of the records written here: now, since the test broker enforces retention (7 days)
#: every 5 s and would delete older records during a long run.
NOW = int(time.time() * 1000)
pytestmark = pytest.mark.integration

#: The sink under test.
SINK = "pykafka"
ROWS = 3000
PARTITIONS = 3


def _row_key(i: int) -> str:
    return f"key-{i % 37}"


def _row_value(i: int) -> str:
    # compressible but not trivially: a counter and some repeated text
    return f"value-{i:05d}-" + "abcdefgh" * (i % 9)


def _check_sequences(batches: list[DumpedBatch]) -> int:
    """Idempotent batches of one partition: valid, sequences per (producer id, epoch) from 0
    and contiguous, offsets contiguous from 0. Returns the number of records."""
    assert batches, "no record batch in the partition's segments"
    by_producer: dict[tuple[int, int], list[DumpedBatch]] = defaultdict(list)
    next_offset = 0
    for b in batches:
        assert b.magic == 2 and b.is_valid, b
        assert not b.is_transactional and not b.is_control, b
        assert b.producer_id >= 0 and b.producer_epoch >= 0, b
        assert b.base_offset == next_offset, (b, next_offset)
        assert b.last_offset - b.base_offset + 1 == b.count, b
        assert b.last_sequence - b.base_sequence + 1 == b.count, b
        next_offset = b.last_offset + 1
        by_producer[(b.producer_id, b.producer_epoch)].append(b)
    for producer, own in by_producer.items():
        expected = 0
        for b in own:
            assert b.base_sequence == expected, (producer, b, expected)
            expected = b.last_sequence + 1
    return next_offset


#: Kafka's transactional Java producer driven by a script (test-only, from tests/records).
SCRIPT_PRODUCER = Path(__file__).resolve().parents[1] / "records" / "java" / "ScriptProducer.java"


def test_reference_tools_on_javas_own_writes(kafka_cluster: LocalKafkaCluster) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    run = uuid.uuid4().hex[:8]
    topics = (f"tools-ref-{run}-a", f"tools-ref-{run}-b")
    given = {}
    for topic in topics:
        create_topic(bootstrap, topic, 2)
        records = [
            ProducedRecord(
                key=None if i % 5 == 0 else f"k{i}-é",
                value=None if i % 7 == 0 else bytes([i % 256]) * (i % 50),
                headers=[("h", f"{i}"), ("h", None), ("ü", b"")][: i % 4],
                partition=i % 2,
                timestamp_ms=NOW + i,
            )
            for i in range(200)
        ]
        produce(bootstrap, topic, records, compression="lz4", batch_size=1024, linger_ms=0)
        given[topic] = records

    log_dir = kafka_cluster.nodes[0].data_dir
    batches = dump_log(f for t in topics for p in (0, 1) for f in segment_files(log_dir, t, p))
    got = read_all(bootstrap, list(topics))
    assert [(r.topic, r.partition) for r in got] == sorted((r.topic, r.partition) for r in got)
    for topic, records in given.items():
        mine = [r for r in got if r.topic == topic]
        assert len(mine) == len(records)
        for p in (0, 1):
            want = [r for r in records if r.partition == p]
            have = [r for r in mine if r.partition == p]
            assert [r.offset for r in have] == list(range(len(want)))
            for w, h in zip(want, have, strict=True):
                assert h.key == (None if w.key is None else w.key.encode())
                assert h.value == w.value
                assert h.headers == tuple(
                    (k, v.encode() if isinstance(v, str) else v) for k, v in w.headers
                )
                assert (h.timestamp_ms, h.timestamp_type) == (w.timestamp_ms, "CreateTime")
            own = [b for b in batches if b.segment.parent.name == f"{topic}-{p}"]
            assert {b.compression for b in own} == {"lz4"} and len(own) > 1
            assert _check_sequences(own) == len(want)


def _field(data: bytes | None) -> str:
    return "-" if data is None else "=" + base64.b64encode(data).decode("ascii")


def test_read_all_isolation_levels_and_dumped_transactions(
    kafka_cluster: LocalKafkaCluster,
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"tools-txn-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1)
    script = []
    for txn, commit in enumerate((True, False, True)):
        script.append("BEGIN")
        script += [f"REC\t-\t{_field(f'{txn}-{i}'.encode())}\t{NOW + i}" for i in range(5)]
        script.append("COMMIT" if commit else "ABORT")
    classpath = kafka_classpath(KAFKA_VERSION)
    run_java(
        "ScriptProducer",
        [bootstrap, topic, f"tools-txn-{uuid.uuid4().hex[:8]}", "none", "16384", "5"],
        classpath=os.pathsep.join([str(compile_java([SCRIPT_PRODUCER], classpath)), classpath]),
        input="\n".join(script) + "\n",
    )
    # Java's commitTransaction returns once the coordinator recorded PrepareCommit; the markers
    # that make the last transaction readable under read_committed follow asynchronously
    want = [f"{t}-{i}".encode() for t in (0, 2) for i in range(5)]
    deadline = time.monotonic() + 30
    while True:
        committed = read_all(bootstrap, topic, isolation_level="read_committed")
        if [r.value for r in committed] == want or time.monotonic() > deadline:
            break
        time.sleep(1)
    everything = read_all(bootstrap, topic)
    assert [r.value for r in committed] == want
    assert [r.value for r in everything] == [
        f"{t}-{i}".encode() for t in (0, 1, 2) for i in range(5)
    ]
    batches = dump_log(segment_files(kafka_cluster.nodes[0].data_dir, topic, 0))
    data = [b for b in batches if not b.is_control]
    markers = [b for b in batches if b.is_control]
    assert len(markers) == 3 and all(b.is_transactional and b.count == 1 for b in markers)
    assert all(b.is_transactional and b.is_valid and b.producer_id >= 0 for b in data)
    assert sum(b.count for b in data) == 15


@pytest.mark.parametrize("codec", COMPRESSION_CODECS)
def test_kafka_tools_read_what_we_wrote(
    spark: SparkSession, kafka_cluster: LocalKafkaCluster, codec: str
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"sink-tools-{codec}-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS)
    rows = [(_row_key(i), _row_value(i)) for i in range(ROWS)]
    (
        spark.createDataFrame(rows, "key string, value string")
        .repartition(4)
        .write.format(SINK)
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("kafka.compression.type", codec)
        .option("kafka.batch.size", "2048")
        .save()
    )

    # Kafka's console consumer: every key and value (it stops after ROWS records; that there
    # are no more is checked below on the log)
    lines = consume(bootstrap, topic, ROWS, timeout_ms=10_000)
    got = Counter(tuple(line.split("\t", 1)) for line in lines)
    assert got == Counter(rows)

    # kafka-dump-log: valid batches of this codec with contiguous idempotent sequences
    log_dir = kafka_cluster.nodes[0].data_dir
    files = [f for p in range(PARTITIONS) for f in segment_files(log_dir, topic, p)]
    batches = dump_log(files)
    assert {b.compression for b in batches} == {codec}
    written = 0
    for p in range(PARTITIONS):
        own = [b for b in batches if b.segment.parent.name == f"{topic}-{p}"]
        written += _check_sequences(own)
        assert len(own) > 1, f"partition {p}: expected several batches (batch.size 2048)"
    assert written == ROWS
