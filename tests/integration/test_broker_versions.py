"""The representative subset on every other broker release.

For each release of :data:`~spark_kafka_py.testing.matrix.MATRIX_VERSIONS` (the default broker,
:data:`~spark_kafka_py.testing.jars.KAFKA_VERSION`, runs the whole suite), one node of that
release is started in KRaft mode with the TLS and SASL listeners of
:class:`~spark_kafka_py.testing.secure.SecureKafka` and a PLAINTEXT one, and the session's
Spark runs against it:

- the harness starts it, our client negotiates the versions docs/development.md records, reads
  what Kafka's own producer wrote (gzip), and an API the release lacks fails naming the
  feature and the release;
- batch: a ``spark.read`` bounded by JSON offsets;
- streaming restart and groups (classic): an ``AvailableNow`` query with a rate limit and a
  ``kafka.group.id``, restarted on its checkpoint after more records; every record once, and
  Kafka's ``kafka-consumer-groups.sh`` shows the processed offsets committed, lag 0;
- security: reads through TLS (SSL), SASL_SSL with SCRAM-SHA-512 and SASL_PLAINTEXT with PLAIN;
- the sink: a keyed ``df.write`` that Kafka's Java consumer reads back, every row once, each
  key in the partition Java's partitioner picks.

The default run starts the oldest and the newest release (``DEFAULT_RUN_RELEASES``); the
others (4.0.2 and 3.9.1: negotiated versions between those two) are marked ``long``. One
release's broker runs at a time (a module fixture parametrised by release). The fuller subset
per release (every ``broker_matrix`` test) is ``python -m spark_kafka_py.testing.matrix``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import UnsupportedByBrokerError
from spark_kafka_py.producer import partition_for_key
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
)
from spark_kafka_py.protocol.messages.fetch import FetchRequest
from spark_kafka_py.protocol.messages.produce import ProduceRequest
from spark_kafka_py.testing.matrix import MATRIX_VERSIONS
from spark_kafka_py.testing.secure import USERS, Pki, SecureKafka, make_pki
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    consumer_groups_describe,
    create_topic,
    produce,
    read_all,
)

pytestmark = pytest.mark.integration

#: Release -> (Produce, Fetch) versions our client negotiates with its broker (ApiVersions).
NEGOTIATED = {
    "4.4.0": (13, 17),
    "4.0.2": (12, 17),
    "3.9.1": (11, 17),
    "3.6.2": (9, 15),
}

#: Release line the broker's finalized metadata.version names (KIP-584), fresh cluster.
RELEASE_LINE = {"4.4.0": "4.4", "4.0.2": "4.0", "3.9.1": "3.9", "3.6.2": "3.6"}

#: Records of the shared topic (one partition), written by Kafka's Java producer with gzip.
VALUES = [f"v{i}".encode() for i in range(50)]


@dataclass(frozen=True)
class Release:
    """A started node of one release and its shared topic (``VALUES`` in partition 0)."""

    version: str
    kafka: SecureKafka
    topic: str

    @property
    def bootstrap(self) -> str:
        """The PLAINTEXT listener."""
        return self.kafka.plaintext_bootstrap


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki-releases"))


#: The releases of the default run; the others run with ``python3 -m pytest -m long`` (issue 25 /
#: suite time: 25-35 s a release). A release of MATRIX_VERSIONS not named here is long.
DEFAULT_RUN_RELEASES = {
    # the oldest: the lowest versions negotiated (Produce 9, Fetch 15), no KIP-848 heartbeat
    # (the unsupported-API error), log4j 1.x
    "3.6.2",
    # the newest, past the default broker 4.3.0: the highest versions negotiated (Produce 13)
    "4.4.0",
}


def _release_param(version: str) -> object:
    if version in DEFAULT_RUN_RELEASES:
        return version
    return pytest.param(version, marks=pytest.mark.long)


@pytest.fixture(scope="module", params=[_release_param(v) for v in MATRIX_VERSIONS])
def release(request: pytest.FixtureRequest, pki: Pki) -> Iterator[Release]:
    """One node of the release, started once for the release's tests and stopped before the
    next release starts. A node that cannot start is an ERROR of the tests, never a skip."""
    version: str = request.param
    kafka = SecureKafka(pki, kafka_version=version)
    # Only the SCRAM credential the tests use (SecureKafka.start creates six, one JVM each).
    kafka.cluster.start()
    try:
        kafka.config_command(
            [
                "--alter", "--entity-type", "users", "--entity-name", "alice",
                "--add-config", f"SCRAM-SHA-512=[iterations=4096,password={USERS['alice']}]",
            ]
        )  # fmt: skip
        topic = "release-data"
        create_topic(kafka.plaintext_bootstrap, topic, 1)
        records = [ProducedRecord(None, v, partition=0) for v in VALUES]
        produce(kafka.plaintext_bootstrap, topic, records, "gzip")
        yield Release(version, kafka, topic)
    finally:
        kafka.stop()


def _read(bootstrap: str, topic: str, security: Mapping[str, str] | None = None) -> list[bytes]:
    """Offsets [0, len(VALUES)) of partition 0, read by our fetcher."""
    config = ClientConfig.from_bootstrap(
        bootstrap, request_timeout_ms=20_000, security=parse_security_options(security or {})
    )
    return [
        v
        for batch in read_range(ConsumerSettings(config), TopicPartition(topic, 0), 0, len(VALUES))
        for v in batch.column("value").to_pylist()
    ]


def test_release_starts_negotiates_and_serves_reads(release: Release) -> None:
    cluster = release.kafka.cluster
    assert cluster.kafka_version == release.version
    node = cluster.nodes[0]
    with BrokerConnection("127.0.0.1", node.broker_port) as conn:
        conn.connect()
        got = (conn.pick_version(ProduceRequest), conn.pick_version(FetchRequest))
        assert got == NEGOTIATED[release.version]
        assert conn.broker_release == RELEASE_LINE[release.version]
        if 68 not in conn.api_versions:  # KIP-848's heartbeat: 3.7+
            with pytest.raises(UnsupportedByBrokerError, match=r"Kafka 4\.0\+ broker \(KIP-848\)"):
                conn.pick_version(ConsumerGroupHeartbeatRequest)
    assert _read(release.bootstrap, release.topic) == VALUES


def test_release_batch_read_bounded_by_json_offsets(release: Release, spark: SparkSession) -> None:
    rows = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", release.bootstrap)
        .option("subscribe", release.topic)
        .option("startingOffsets", json.dumps({release.topic: {"0": 5}}))
        .option("endingOffsets", json.dumps({release.topic: {"0": 45}}))
        .load()
        .select("partition", "offset", "value")
        .collect()
    )
    got = sorted((r["partition"], r["offset"], bytes(r["value"])) for r in rows)
    assert got == [(0, o, VALUES[o]) for o in range(5, 45)]


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, tuple[int, int]]:
    """``kafka-consumer-groups.sh --describe``: partition -> (committed offset, lag)."""
    out: dict[int, tuple[int, int]] = {}
    for line in consumer_groups_describe(bootstrap, group).splitlines():
        f = line.split()
        if len(f) >= 6 and f[0] == group and f[1] == topic and f[3] != "-" and f[5] != "-":
            out[int(f[2])] = (int(f[3]), int(f[5]))
    return out


def test_release_streaming_restart_commits_to_the_group(
    release: Release, spark: SparkSession, tmp_path: Path
) -> None:
    bootstrap = release.bootstrap
    topic = f"release-stream-{time.time_ns()}"
    group = f"release-group-{time.time_ns()}"
    create_topic(bootstrap, topic, 2)

    def run(max_per_trigger: str | None) -> list[int]:
        reader = (
            spark.readStream.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("kafka.group.id", group)
        )
        if max_per_trigger is not None:
            reader = reader.option("maxOffsetsPerTrigger", max_per_trigger)
        q = (
            reader.load()
            .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        if not q.awaitTermination(180):
            q.stop()
            pytest.fail(f"Kafka {release.version}: the query did not end within 180 s")
        assert q.exception() is None
        return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"] > 0]

    def sink() -> Counter[tuple[int, int, str]]:
        df = spark.read.parquet(str(tmp_path / "out"))
        return Counter((r["partition"], r["offset"], r["value"]) for r in df.collect())

    first = [ProducedRecord(None, f"a{i}", partition=i % 2) for i in range(60)]
    produce(bootstrap, topic, first)
    counts = run("30")  # the rate limit splits the backlog
    assert sum(counts) == 60 and max(counts) <= 30 and len(counts) >= 2
    assert sink() == Counter((i % 2, i // 2, f"a{i}") for i in range(60))

    second = [ProducedRecord(None, f"b{i}", partition=i % 2) for i in range(20)]
    produce(bootstrap, topic, second)
    assert sum(run(None)) == 20  # from the checkpoint: only the new records
    want = [(i % 2, i // 2, f"a{i}") for i in range(60)]
    want += [(i % 2, 30 + i // 2, f"b{i}") for i in range(20)]
    assert sink() == Counter(want)  # nothing lost, nothing twice
    assert _committed(bootstrap, group, topic) == {0: (40, 0), 1: (40, 0)}


def _security(release: Release) -> dict[str, tuple[str, dict[str, str]]]:
    """The secured reads: name -> (listener of SecureKafka, our client's options)."""
    pki = release.kafka.pki
    trust = {"ssl.truststore.location": str(pki.ca_pem), "ssl.truststore.type": "PEM"}
    scram = (
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
        f'password="{USERS["alice"]}";'
    )
    plain = (
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" '
        f'password="{USERS["bob"]}";'
    )
    return {
        "SSL": ("SSL", {"security.protocol": "SSL", **trust}),
        "SASL_SSL": (
            "SASL_SSL",
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": scram,
                **trust,
            },
        ),
        "SASL_PLAINTEXT": (
            "SASL_PLAINTEXT",
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": plain,
            },
        ),
    }


def test_release_reads_over_tls_and_sasl(release: Release) -> None:
    for name, (listener, options) in _security(release).items():
        got = _read(release.kafka.bootstrap(listener), release.topic, options)
        assert got == VALUES, f"Kafka {release.version}, {name}"


def test_release_sink_rows_read_back_by_javas_consumer(
    release: Release, spark: SparkSession
) -> None:
    bootstrap = release.bootstrap
    topic = f"release-sink-{time.time_ns()}"
    create_topic(bootstrap, topic, 3)
    rows = [(f"key-{i % 13}", f"value-{i}") for i in range(300)]
    (
        spark.createDataFrame(rows, "key string, value string")
        .coalesce(1)
        .write.format("pykafka")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .save()
    )
    got = read_all(bootstrap, topic)
    assert Counter((r.key, r.value) for r in got) == Counter(
        (k.encode(), v.encode()) for k, v in rows
    )
    for r in got:
        assert r.key is not None and r.partition == partition_for_key(r.key, 3), r
    # one task, one producer: each key's rows in the order written
    for key in {k for k, _ in rows}:
        mine = [int(r.value.split(b"-")[1]) for r in got if r.key == key.encode() and r.value]
        assert mine == sorted(mine), key
