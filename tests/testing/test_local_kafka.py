"""The local Kafka tooling itself: real broker, Kafka's Java tools, Spark's Kafka connector."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from spark_kafka_py.testing import jars as jars_module
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.jars import kafka_jars, spark_kafka_connector_jars
from spark_kafka_py.testing.tools import (
    COMPRESSION_CODECS,
    KafkaToolError,
    ProducedRecord,
    add_partitions,
    consume,
    consumer_groups_describe,
    create_topic,
    describe_topic,
    get_offsets,
    list_topics,
    partition_states,
    produce,
    produce_perf,
    wait_for_full_isr,
)

pytestmark = pytest.mark.integration


def _records(n: int, partitions: int) -> list[ProducedRecord]:
    """Keys, values and headers with nulls, separators and non-ASCII text; fixed partitions."""
    out = []
    for i in range(n):
        key = None if i % 4 == 0 else f"key-{i}\tä"
        value = None if i % 7 == 3 else f"value {i}, with: separators\t={i}"
        headers = [("h1", f"x{i}"), ("h-null", None)] if i % 2 else []
        out.append(ProducedRecord(key, value, headers, partition=i % partitions))
    return out


def test_jars_are_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    # Warm the cache (a cold call downloads with Maven; the connector version may be looked
    # up on Maven Central, or a failed look-up remembered).
    kafka_jars()
    spark_kafka_connector_jars()
    network: list[object] = []

    def no_network(*args: object, **kwargs: object) -> None:
        network.append(args)
        raise OSError("network disabled in this test")

    def no_maven(*args: object, **kwargs: object) -> None:
        network.append(args)
        raise AssertionError(f"Maven was run for cached jars: {args}")

    # Cached look-ups run no Maven and ask no Maven Central (whatever time they take).
    monkeypatch.setattr(jars_module.urllib.request, "urlopen", no_network)
    monkeypatch.setattr(jars_module.subprocess, "run", no_maven)
    jars = kafka_jars()
    connector = spark_kafka_connector_jars()
    assert network == []
    names = {p.name for p in jars}
    assert "kafka_2.13-4.3.0.jar" in names
    assert "kafka-tools-4.3.0.jar" in names
    assert all(p.is_file() for p in [*jars, *connector])
    connector_names = {p.name.split("-0-10")[0] for p in connector}
    assert {"spark-sql-kafka", "spark-token-provider-kafka"} <= connector_names
    assert not any(p.name.startswith(("spark-core", "scala-library", "slf4j")) for p in connector)


#: Codecs of the console round trip in the default run (issue 25 / suite time: 7-8 s each): the
#: harness passes ``compression`` to Kafka's producer, the same for every codec; the others are
#: long. Every codec's decoding by our reader: tests/records, tests/conformance (every codec).
ROUND_TRIP_CODECS = {
    "none",  # no compression: the plain round trip, headers and nulls
    "zstd",  # one codec through the harness's compression setting
}


@pytest.mark.parametrize(
    "codec",
    [
        c if c in ROUND_TRIP_CODECS else pytest.param(c, marks=pytest.mark.long)
        for c in COMPRESSION_CODECS
    ],
)
def test_console_producer_round_trip(
    kafka_bootstrap: str, new_topic: Callable[..., str], codec: str
) -> None:
    topic = new_topic(partitions=3)
    records = _records(90, 3)
    assert produce(kafka_bootstrap, topic, records, compression=codec) == 90
    assert get_offsets(kafka_bootstrap, topic) == {0: 30, 1: 30, 2: 30}
    assert get_offsets(kafka_bootstrap, topic, "earliest") == {0: 0, 1: 0, 2: 0}
    # Kafka's console consumer reads partition 1 back, in order, nulls and headers intact.
    lines = consume(
        kafka_bootstrap, topic, 30, partition=1, offset=0, print_headers=True, separator="|"
    )
    expected = []
    for r in records[1::3]:
        headers = ",".join(f"{k}:{'null' if v is None else v}" for k, v in r.headers)
        key = "null" if r.key is None else r.key
        value = "null" if r.value is None else r.value
        expected.append(f"{headers or 'NO_HEADERS'}|{key}|{value}")
    assert lines == expected


def test_timestamps_and_offsets_by_time(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    # Recent timestamps: records older than the topic's retention (7 days by default) may be
    # deleted by the broker's retention check at any moment, which made this test flaky.
    base = (int(time.time()) - 3600) * 1000
    records = [
        ProducedRecord(None, f"v{i}", partition=i % 2, timestamp_ms=base + 1000 * i)
        for i in range(20)
    ]
    produce(kafka_bootstrap, topic, records)
    # First offset with timestamp >= base + 10 s: record 10 (partition 0, offset 5) and
    # record 11 (partition 1, offset 5).
    assert get_offsets(kafka_bootstrap, topic, base + 10_000) == {0: 5, 1: 5}


def test_default_partitioner_and_add_partitions(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(f"k{i}", "v") for i in range(10)])
    add_partitions(kafka_bootstrap, topic, 4)
    assert "PartitionCount: 4" in describe_topic(kafka_bootstrap, topic)
    produce(kafka_bootstrap, topic, [ProducedRecord(f"k{i}", "v") for i in range(200)])
    offsets = get_offsets(kafka_bootstrap, topic)
    assert sum(offsets.values()) == 210
    assert len([p for p, o in offsets.items() if o > 0]) >= 2  # murmur2 spreads the keys


def test_tools_fail_loudly(kafka_bootstrap: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    with pytest.raises(KafkaToolError, match="already exists"):
        create_topic(kafka_bootstrap, topic)
    with pytest.raises(KafkaToolError):  # auto.create.topics.enable=false
        produce(
            kafka_bootstrap,
            topic + "-missing",
            [ProducedRecord(None, "x")],
            extra_props={"max.block.ms": "3000"},
        )
    with pytest.raises(KafkaToolError):  # partition 5 of a 1-partition topic
        produce(
            kafka_bootstrap,
            topic,
            [ProducedRecord(None, "x", partition=5)],
            extra_props={"max.block.ms": "3000"},
        )
    assert topic in list_topics(kafka_bootstrap)


def test_producer_performance_and_groups(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    result = produce_perf(kafka_bootstrap, topic, 5000, 100, compression="lz4")
    assert result.records == 5000
    assert result.records_per_s > 0
    assert sum(get_offsets(kafka_bootstrap, topic).values()) == 5000
    group = f"g-{topic}"
    assert len(consume(kafka_bootstrap, topic, 10, group=group)) == 10
    described = consumer_groups_describe(kafka_bootstrap, group)
    assert group in described
    assert topic in described


def test_spark_builtin_kafka_source_reads_topic(
    spark, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    records = _records(40, 2)
    produce(kafka_bootstrap, topic, records, compression="snappy")
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
        .orderBy("partition", "offset")
        .collect()
    )
    assert len(rows) == 40
    got = [
        (
            r.partition,
            None if r.key is None else r.key.decode(),
            None if r.value is None else r.value.decode(),
            # Spark's source gives a null headers column (not []) for a record without headers.
            None
            if r.headers is None
            else [(h.key, None if h.value is None else h.value.decode()) for h in r.headers],
        )
        for r in rows
    ]
    expected = sorted(
        ((r.partition, r.key, r.value, list(r.headers) or None) for r in records),
        key=lambda t: t[0],  # stable: keeps produce order within a partition
    )
    assert got == expected
    assert [r.offset for r in rows if r.partition == 0] == list(range(20))


# long (issue 25 / suite time: 36 s, a 3-node cluster of its own): the default run kills and
# restarts nodes of 3-node clusters in tests/faults (test_failover.py, and three_brokers of
# tests/faults/conftest.py restarts every killed node and waits until all serve again)
@pytest.mark.long
def test_three_node_cluster_survives_a_killed_leader(
    kafka_cluster_factory: Callable[..., LocalKafkaCluster],
) -> None:
    cluster = kafka_cluster_factory(3)
    bootstrap = cluster.bootstrap_servers
    assert len(bootstrap.split(",")) == 3
    create_topic(bootstrap, "replicated", partitions=3, replication_factor=3)
    produce(
        bootstrap, "replicated", [ProducedRecord(None, f"a{i}", partition=i % 3) for i in range(30)]
    )
    states = wait_for_full_isr(bootstrap, "replicated")
    assert all(len(s.replicas) == 3 for s in states.values())

    victim = states[0].leader
    cluster.kill(victim)
    assert not cluster.node(victim).is_running()
    produce(
        bootstrap, "replicated", [ProducedRecord(None, f"b{i}", partition=i % 3) for i in range(30)]
    )
    assert get_offsets(bootstrap, "replicated") == {0: 20, 1: 20, 2: 20}
    assert partition_states(bootstrap, "replicated")[0].leader not in (victim, -1)

    cluster.restart(victim)
    states = wait_for_full_isr(bootstrap, "replicated")
    assert all(victim in s.isr for s in states.values())
    assert sum(get_offsets(bootstrap, "replicated").values()) == 60
