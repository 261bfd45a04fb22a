"""Shared data of the conformance suite: topics written once per session by Kafka's Java
producers (ConsoleProducer through :func:`produce`, and the test-only transactional
``tests/records/java/ScriptProducer.java``), read by many scenarios through both sources.

Topics:

* ``mixed``: 3 partitions, 300 records written in five rounds, one per codec (none, gzip,
  snappy, lz4, zstd), so the log holds batches of every codec; null keys and values, headers
  (none, null values, repeated keys, non-ASCII keys); CreateTime ``T0 + n * 1000`` ms for the
  n-th record (increasing in every partition, so timestamp look-ups have known answers).
* ``pattern_a``/``pattern_b`` match ``pattern`` (a regex), ``pattern_other`` does not.
* ``txn``: 1 partition, five transactions of 10 records, committed and aborted alternately
  (3 committed, 2 aborted), plus the control batches (commit/abort markers) between them.
* ``compacted``: ``cleanup.policy=compact``, 10 keys written 5 times, compacted by the
  broker's log cleaner before any scenario reads it (so offsets have gaps).
"""

from __future__ import annotations

import base64
import os
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import compile_java, run_java
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

#: CreateTime of the first record of ``mixed``, ms: a whole second an hour ago (recent, so
#: the broker's time-based retention, 7 days by default, keeps the records).
T0 = (int(time.time()) - 3600) * 1000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PER_CODEC = 60
SCRIPT_PRODUCER = Path(__file__).resolve().parents[1] / "records" / "java" / "ScriptProducer.java"
TXN_SIZE = 10
#: commit (True) or abort (False), in order.
TXN_OUTCOMES = (True, False, True, False, True)


def mixed_record(n: int) -> ProducedRecord:
    """The n-th record of ``mixed`` (partition ``n % 3``, timestamp ``T0 + n*1000``)."""
    key = None if n % 7 == 3 else f"k{n % 5}"
    value = None if n % 11 == 4 else f'{{"n": {n}, "word": "w{n % 4}", "text": "é{n}"}}'
    headers: list[tuple[str, str | None]]
    if n % 4 == 0:
        headers = []
    elif n % 4 == 1:
        headers = [("h", f"v{n}")]
    elif n % 4 == 2:
        headers = [("h", None), ("\u00e9t\u00e9", "x")]
    else:
        headers = [("a", "1"), ("a", "2")]
    return ProducedRecord(
        key=key, value=value, headers=headers, partition=n % 3, timestamp_ms=T0 + n * 1000
    )


@dataclass(frozen=True)
class ConformanceData:
    """Names of the shared topics and what was written to them."""

    mixed: str
    mixed_count: int
    pattern: str
    pattern_a: str
    pattern_b: str
    pattern_other: str
    txn: str
    txn_committed: int
    txn_aborted: int
    compacted: str
    compacted_keys: int


def _field(data: bytes | None) -> str:
    return "-" if data is None else "=" + base64.b64encode(data).decode("ascii")


def _write_transactions(bootstrap: str, topic: str) -> None:
    """Committed and aborted transactions with Kafka's transactional Java producer."""
    classpath = kafka_classpath(KAFKA_VERSION)
    classes = compile_java([SCRIPT_PRODUCER], classpath)
    lines = []
    n = 0
    for txn, commit in enumerate(TXN_OUTCOMES):
        lines.append("BEGIN")
        for i in range(TXN_SIZE):
            value = f"txn{txn}-{'commit' if commit else 'abort'}-{i}".encode()
            lines.append(
                "\t".join(
                    [
                        "REC",
                        _field(f"k{i % 3}".encode()),
                        _field(value),
                        str(T0 + n * 1000),
                        _field(b"txn"),
                        _field(str(txn).encode()),
                    ]
                )
            )
            n += 1
        lines.append("COMMIT" if commit else "ABORT")
    run_java(
        "ScriptProducer",
        [bootstrap, topic, f"conformance-{uuid.uuid4().hex[:8]}", "lz4", "16384", "5"],
        classpath=os.pathsep.join([str(classes), classpath]),
        input="\n".join(lines) + "\n",
        timeout_s=300,
    )


def _compact(spark: SparkSession, bootstrap: str, topic: str, keys: int) -> None:
    """Write ``keys`` keys five times, roll the segment, wait until the log cleaner has removed
    old versions (seen through Spark's built-in source, the oracle)."""
    first = [
        ProducedRecord(key=f"c{i % keys}", value=f"v{i}", partition=0) for i in range(5 * keys)
    ]
    produce(bootstrap, topic, first)
    time.sleep(1.5)  # segment.ms=1000: the next append rolls the segment, making it cleanable
    produce(bootstrap, topic, [ProducedRecord(key="roll", value="roll", partition=0)])
    deadline = time.monotonic() + 120
    while True:
        count = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .load()
            .count()
        )
        if count < 5 * keys + 1:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the log cleaner did not compact {topic} within 120 s")
        time.sleep(2)


@pytest.fixture(scope="session")
def data(kafka_bootstrap: str, spark: SparkSession) -> Iterator[ConformanceData]:
    """Create and fill the shared topics (see the module docstring). The topics are written
    side by side, each by a thread of its own (Kafka's tools are a JVM each: the set-up is
    mostly their start-up; issue 25 / suite time); ``mixed``'s rounds stay in order."""
    run = uuid.uuid4().hex[:8]
    mixed = f"conf-mixed-{run}"
    pattern = f"conf-pat-{run}-.*"
    pattern_a, pattern_b, other = f"conf-pat-{run}-a", f"conf-pat-{run}-b", f"conf-pat-{run}"
    txn = f"conf-txn-{run}"
    compacted = f"conf-compacted-{run}"

    def write_mixed() -> int:
        create_topic(kafka_bootstrap, mixed, partitions=3)
        n = 0
        for codec in CODECS:  # in order: timestamps increase with offsets in every partition
            produce(
                kafka_bootstrap,
                mixed,
                [mixed_record(n + i) for i in range(PER_CODEC)],
                compression=codec,
            )
            n += PER_CODEC
        return n

    def write_patterns_and_txn() -> None:
        for i, topic in enumerate((pattern_a, pattern_b, other)):
            create_topic(kafka_bootstrap, topic, partitions=i + 1)
            produce(
                kafka_bootstrap,
                topic,
                [
                    ProducedRecord(key=None, value=f"{topic}-{j}", partition=j % (i + 1))
                    for j in range(10)
                ],
            )
        create_topic(kafka_bootstrap, txn, partitions=1)
        _write_transactions(kafka_bootstrap, txn)

    def write_compacted() -> None:
        create_topic(
            kafka_bootstrap,
            compacted,
            partitions=1,
            configs={
                "cleanup.policy": "compact",
                "segment.ms": "1000",
                "min.cleanable.dirty.ratio": "0.01",
                "min.compaction.lag.ms": "0",
                "delete.retention.ms": "100",
            },
        )
        _compact(spark, kafka_bootstrap, compacted, 10)

    with ThreadPoolExecutor(3, thread_name_prefix="conformance-data") as pool:
        writers = [pool.submit(f) for f in (write_mixed, write_patterns_and_txn, write_compacted)]
        n = writers[0].result()
        for writer in writers[1:]:
            writer.result()  # a failed writer fails the fixture with its own error

    yield ConformanceData(
        mixed=mixed,
        mixed_count=n,
        pattern=pattern,
        pattern_a=pattern_a,
        pattern_b=pattern_b,
        pattern_other=other,
        txn=txn,
        txn_committed=TXN_SIZE * sum(TXN_OUTCOMES),
        txn_aborted=TXN_SIZE * (len(TXN_OUTCOMES) - sum(TXN_OUTCOMES)),
        compacted=compacted,
        compacted_keys=10,
    )
