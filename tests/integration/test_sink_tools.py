"""Kafka's own tools read what ``df.write.format("pykafka")`` wrote, for every codec.

For each ``kafka.compression.type`` (none, gzip, snappy, lz4, zstd) one batch write of keyed
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

import uuid
from collections import Counter, defaultdict

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import (
    COMPRESSION_CODECS,
    DumpedBatch,
    consume,
    create_topic,
    dump_log,
    get_offsets,
    segment_files,
)

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


def _check_sequences(batches: list[DumpedBatch], records: int) -> None:
    """Idempotent batches of one partition: valid, sequences per (producer id, epoch) from 0
    and contiguous, offsets contiguous, ``records`` in all."""
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
    assert next_offset == records
    for producer, own in by_producer.items():
        expected = 0
        for b in own:
            assert b.base_sequence == expected, (producer, b, expected)
            expected = b.last_sequence + 1


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

    # nothing more than the rows (end offsets), then Kafka's console consumer: every key and
    # value (it stops after ROWS records)
    ends = get_offsets(bootstrap, topic)
    assert sum(ends.values()) == ROWS
    lines = consume(bootstrap, topic, ROWS, timeout_ms=10_000)
    got = Counter(tuple(line.split("\t", 1)) for line in lines)
    assert got == Counter(rows)

    # kafka-dump-log: valid batches of this codec with contiguous idempotent sequences
    log_dir = kafka_cluster.nodes[0].data_dir
    files = [f for p in range(PARTITIONS) for f in segment_files(log_dir, topic, p)]
    batches = dump_log(files)
    assert {b.compression for b in batches} == {codec}
    for p in range(PARTITIONS):
        own = [b for b in batches if b.segment.parent.name == f"{topic}-{p}"]
        _check_sequences(own, ends[p])
        assert len(own) > 1, f"partition {p}: expected several batches (batch.size 2048)"
