"""``spark.read.format("pykafka")`` against a real broker, data written by Kafka's Java producer.

Each test checks our rows against what was produced (the producer's input, not our decoder's
output), and where it matters against Spark's built-in ``format("kafka")`` on the same topic
(chispa), which is our conformance oracle.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
#: Record batch v2 attributes bits 0-2 (Kafka's CompressionType ids).
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def compression_on_the_wire(bootstrap: str, topic: str) -> set[int]:
    """Codec ids of the first record batch of each partition, read from raw Fetch bytes.

    Proves the producer really compressed (the test's input), independently of our decoder:
    attributes are the int16 at byte 21 of a v2 batch (after baseOffset 8, batchLength 4,
    partitionLeaderEpoch 4, magic 1, crc 4).
    """
    codecs = set()
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        info = client.metadata([topic]).topics[topic]
        for pid, part in info.partitions.items():
            response = client.send(
                part.leader_id,
                FetchRequest(
                    max_wait_ms=100,
                    min_bytes=1,
                    max_bytes=1 << 20,
                    topics=[
                        FetchTopic(
                            topic=topic,
                            topic_id=info.topic_id,
                            partitions=[
                                FetchPartition(
                                    partition=pid, fetch_offset=0, partition_max_bytes=1 << 20
                                )
                            ],
                        )
                    ],
                ),
            )
            raw = bytes(response.responses[0].partitions[0].records)
            assert raw[16] == 2, "magic"
            codecs.add(int.from_bytes(raw[21:23], "big") & 0x07)
    return codecs


def make_records(n: int, seed: str) -> list[ProducedRecord]:
    """Keys from a small set (so the default partitioner spreads them), some nulls, headers."""
    records = []
    for i in range(n):
        key = None if i % 17 == 0 else f"key-{i % 7}"
        value = None if i % 23 == 5 else f'{{"seed":"{seed}","i":{i},"text":"value {i} é"}}'
        headers = [("h1", f"v{i}"), ("h2", None)] if i % 5 == 0 else []
        records.append(ProducedRecord(key=key, value=value, headers=headers))
    return records


def read_pykafka(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    reader = spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def read_builtin(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def as_produced(rows: list) -> Counter:
    out: Counter = Counter()
    for r in rows:
        headers = tuple(
            (h["key"], None if h["value"] is None else bytes(h["value"]).decode())
            for h in (r["headers"] or [])
        )
        out[
            (
                None if r["key"] is None else bytes(r["key"]).decode(),
                None if r["value"] is None else bytes(r["value"]).decode(),
                headers,
            )
        ] += 1
    return out


def expected_counter(records: list[ProducedRecord]) -> Counter:
    return Counter((r.key, r.value, tuple(r.headers)) for r in records)


@pytest.mark.broker_matrix
@pytest.mark.parametrize("codec", CODECS)
def test_batch_read_equals_what_the_java_producer_wrote(
    spark: SparkSession, kafka_bootstrap: str, codec: str
) -> None:
    topic = f"batch-{codec}-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=3)
    records = make_records(400, codec)
    produce(kafka_bootstrap, topic, records, compression=codec)
    assert compression_on_the_wire(kafka_bootstrap, topic) == {CODEC_IDS[codec]}

    df = read_pykafka(spark, kafka_bootstrap, subscribe=topic, includeHeaders="true")
    assert df.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "headers",
    ]
    rows = df.collect()
    assert len(rows) == len(records)
    assert as_produced(rows) == expected_counter(records)

    # Offsets are 0..n-1 in every partition, and a partition keeps the producer's order.
    by_partition: dict[int, list] = defaultdict(list)
    for r in rows:
        assert r["topic"] == topic
        by_partition[r["partition"]].append(r)
    assert len(by_partition) > 1
    for part_rows in by_partition.values():
        part_rows.sort(key=lambda r: r["offset"])
        assert [r["offset"] for r in part_rows] == list(range(len(part_rows)))
        # Values carry the producer's sequence number: increasing within a partition.
        seq = [json.loads(bytes(r["value"]))["i"] for r in part_rows if r["value"] is not None]
        assert seq == sorted(seq)

    # Same rows, every column, as Spark's built-in Kafka source.
    builtin = read_builtin(spark, kafka_bootstrap, subscribe=topic, includeHeaders="true")
    assert_df_equality(df, builtin, ignore_row_order=True)


def test_check_crcs_false_reads_the_same_rows(spark: SparkSession, kafka_bootstrap: str) -> None:
    """``kafka.check.crcs=false`` (the Java consumer's ``check.crcs``) skips only the CRC
    comparison: on intact data the rows, every column, equal the default read's."""
    topic = f"crcs-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=3)
    records = make_records(400, "crcs")
    produce(kafka_bootstrap, topic, records[:200], compression="lz4")
    produce(kafka_bootstrap, topic, records[200:])
    options = {
        "subscribe": topic,
        "includeHeaders": "true",
        "kafka.max.partition.fetch.bytes": "4096",
    }
    unchecked = read_pykafka(spark, kafka_bootstrap, **options, **{"kafka.check.crcs": "false"})
    default = read_pykafka(spark, kafka_bootstrap, **options)
    assert as_produced(unchecked.collect()) == expected_counter(records)
    assert_df_equality(unchecked, default, ignore_row_order=True)


@pytest.mark.broker_matrix
def test_json_offsets_bound_the_read(spark: SparkSession, kafka_bootstrap: str) -> None:
    topic = f"offsets-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=2)
    records = [ProducedRecord(key=None, value=f"v{i}", partition=i % 2) for i in range(40)]
    produce(kafka_bootstrap, topic, records)

    start = f'{{"{topic}":{{"0":3,"1":-2}}}}'
    end = f'{{"{topic}":{{"0":7,"1":-1}}}}'
    rows = read_pykafka(
        spark, kafka_bootstrap, subscribe=topic, startingOffsets=start, endingOffsets=end
    ).collect()
    got = sorted((r["partition"], r["offset"], bytes(r["value"]).decode()) for r in rows)
    p0 = [r.value for r in records if r.partition == 0]
    p1 = [r.value for r in records if r.partition == 1]
    want = sorted([(0, o, p0[o]) for o in range(3, 7)] + [(1, o, p1[o]) for o in range(len(p1))])
    assert got == want


def test_assign_reads_only_the_assigned_partitions(
    spark: SparkSession, kafka_bootstrap: str
) -> None:
    topic = f"assign-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=3)
    records = [ProducedRecord(key=None, value=f"v{i}", partition=i % 3) for i in range(30)]
    produce(kafka_bootstrap, topic, records)
    rows = read_pykafka(spark, kafka_bootstrap, assign=f'{{"{topic}":[0,2]}}').collect()
    assert sorted(bytes(r["value"]).decode() for r in rows) == sorted(
        r.value for r in records if r.partition in (0, 2)
    )


def test_subscribe_pattern(spark: SparkSession, kafka_bootstrap: str) -> None:
    stem = f"pat{time.time_ns()}"
    for name in (f"{stem}-a", f"{stem}-b", f"x{stem}-c"):
        create_topic(kafka_bootstrap, name, partitions=1)
        produce(kafka_bootstrap, name, [ProducedRecord(key="k", value=name)])
    rows = read_pykafka(spark, kafka_bootstrap, subscribePattern=f"{stem}-.*").collect()
    assert sorted((r["topic"], bytes(r["value"]).decode()) for r in rows) == [
        (f"{stem}-a", f"{stem}-a"),
        (f"{stem}-b", f"{stem}-b"),
    ]


def test_headers_column_only_when_asked(spark: SparkSession, kafka_bootstrap: str) -> None:
    topic = f"hdr-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(
        kafka_bootstrap,
        topic,
        [
            ProducedRecord(key="a", value="1", headers=[("x", "y"), ("x", "z"), ("n", None)]),
            ProducedRecord(key="b", value="2"),
        ],
    )
    plain = read_pykafka(spark, kafka_bootstrap, subscribe=topic)
    assert "headers" not in plain.columns
    rows = read_pykafka(spark, kafka_bootstrap, subscribe=topic, includeHeaders="true").collect()
    rows.sort(key=lambda r: r["offset"])
    assert [(h["key"], h["value"]) for h in rows[0]["headers"]] == [
        ("x", b"y"),
        ("x", b"z"),
        ("n", None),
    ]
    # A record without headers has an empty header array in Spark's source too: compare.
    builtin = read_builtin(spark, kafka_bootstrap, subscribe=topic, includeHeaders="true")
    assert_df_equality(
        read_pykafka(spark, kafka_bootstrap, subscribe=topic, includeHeaders="true"),
        builtin,
        ignore_row_order=True,
    )


def test_unknown_topic_is_a_clear_error(spark: SparkSession, kafka_bootstrap: str) -> None:
    with pytest.raises(Exception, match=r"UNKNOWN_TOPIC_OR_PARTITION.*no-such-topic"):
        read_pykafka(spark, kafka_bootstrap, subscribe="no-such-topic").collect()


def test_bad_option_fails_at_load(spark: SparkSession, kafka_bootstrap: str) -> None:
    with pytest.raises(Exception, match=r"auto\.offset\.reset"):
        read_pykafka(
            spark, kafka_bootstrap, subscribe="t", **{"kafka.auto.offset.reset": "earliest"}
        ).collect()


@pytest.mark.broker_matrix
def test_compacted_topic_with_offset_gaps(spark: SparkSession, kafka_bootstrap: str) -> None:
    topic = f"compact-{time.time_ns()}"
    create_topic(
        kafka_bootstrap,
        topic,
        partitions=1,
        configs={
            "cleanup.policy": "compact",
            "segment.ms": "100",
            "min.cleanable.dirty.ratio": "0.01",
            "min.compaction.lag.ms": "0",
            "delete.retention.ms": "100",
        },
    )
    written = [ProducedRecord(key=f"k{i % 5}", value=f"old{i}") for i in range(50)]
    produce(kafka_bootstrap, topic, written)
    # Each later write rolls the segment before it (segment.ms passed), so the log cleaner
    # may compact everything but the active segment.
    for round_ in range(2):
        time.sleep(0.3)
        batch = [ProducedRecord(key=f"k{i}", value=f"new{round_}-{i}") for i in range(5)]
        produce(kafka_bootstrap, topic, batch)
        written += batch
    time.sleep(0.3)
    tail = [ProducedRecord(key="tail", value="tail")]
    produce(kafka_bootstrap, topic, tail)
    written += tail

    deadline = time.monotonic() + 120
    while read_builtin(spark, kafka_bootstrap, subscribe=topic).count() == len(written):
        assert time.monotonic() < deadline, "the log cleaner did not compact the topic in 120 s"
        time.sleep(2)

    ours = read_pykafka(spark, kafka_bootstrap, subscribe=topic)
    assert_df_equality(
        ours, read_builtin(spark, kafka_bootstrap, subscribe=topic), ignore_row_order=True
    )
    rows = sorted(ours.collect(), key=lambda r: r["offset"])
    offsets = [r["offset"] for r in rows]
    assert offsets != list(range(len(offsets)))  # there are gaps
    assert offsets[-1] == len(written) - 1  # the last record is never compacted away
    # Every key still has the value written for it last (compaction keeps the latest).
    last: dict[str, str] = {}
    for r in written:
        last[r.key] = r.value
    seen: dict[str, str] = {}
    for r in rows:
        seen[bytes(r["key"]).decode()] = bytes(r["value"]).decode()
    assert seen == last
