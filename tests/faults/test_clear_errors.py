"""Failures that must end in a clear error within the configured timeouts, naming what was
tried: bootstrap server down, not Kafka (HTTP), never answering, unresolvable; unknown topic;
topic deleted mid-query; the log ending below a planned range (data loss after
``kafkaConsumer.pollTimeoutMs``, as Spark's source)."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

from spark_kafka_py.admin import list_topics
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.types import LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import DataLossError, KafkaTimeoutError
from spark_kafka_py.producer.producer import KafkaProducer
from spark_kafka_py.producer.settings import ProducerSettings
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.source import KafkaBatchReader
from spark_kafka_py.testing.tools import delete_topic

from .helpers import expected_values, fetcher_via, produce_values, rows, settings_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


class _Listener:
    """A loopback server: ``answer`` is sent after the first bytes arrive (``None``: silence)."""

    def __init__(self, answer: bytes | None) -> None:
        self.answer = answer
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._conns.append(conn)
            conn.settimeout(5)
            with contextlib.suppress(OSError):
                conn.recv(4096)
                if self.answer is not None:
                    conn.sendall(self.answer)
                    conn.close()

    def close(self) -> None:
        self._stop.set()
        self.server.close()
        self._thread.join(5)
        for c in self._conns:
            with contextlib.suppress(OSError):
                c.close()


@pytest.fixture()
def listener() -> Iterator[Callable[[bytes | None], _Listener]]:
    made: list[_Listener] = []

    def make(answer: bytes | None) -> _Listener:
        made.append(_Listener(answer))
        return made[-1]

    yield make
    for x in made:
        x.close()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def batch_error(spark: SparkSession, bootstrap: str, topic: str = "t", **options: str) -> str:
    reader = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("kafka.request.timeout.ms", "1500")
        .option("kafka.socket.connection.setup.timeout.ms", "1500")
        # The driver retries unreachable brokers this long before it fails.
        .option("kafka.default.api.timeout.ms", "3000")
    )
    for k, v in options.items():
        reader = reader.option(k, v)
    with pytest.raises(Exception) as info:  # PySpark wraps the driver's Python error
        reader.load().collect()
    return str(info.value)


def _our_frames(text: str) -> list[str]:
    """The traceback lines of spark_kafka_py's files in an error's text."""
    return [line for line in text.splitlines() if 'File "' in line and "spark_kafka_py" in line]


def test_bootstrap_server_down(spark: SparkSession) -> None:
    port = _closed_port()
    text = batch_error(spark, f"127.0.0.1:{port}")
    assert "KafkaTimeoutError" in text and "default.api.timeout.ms=3000" in text
    assert "no broker answered Metadata" in text
    assert f"127.0.0.1:{port}" in text and "Connection refused" in text
    # Issue 24: the planning error shows one frame (the data source's boundary), not the
    # planner's and the client's, and no chained KafkaConnectionError with its own frames.
    assert len(_our_frames(text)) == 1, text
    assert "During handling" not in text and "direct cause" not in text, text


def test_bootstrap_server_is_http(
    spark: SparkSession, listener: Callable[[bytes | None], _Listener]
) -> None:
    http = listener(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    text = batch_error(spark, f"127.0.0.1:{http.port}")
    assert f"127.0.0.1:{http.port}" in text and "not a Kafka listener" in text
    assert "HTTP/1.1 400 Bad Request" in text
    # Not retried for default.api.timeout.ms: waiting cannot make it a Kafka listener.
    assert "KafkaConnectionError" in text and "default.api.timeout.ms" not in text
    assert http.accepted >= 1


def test_bootstrap_server_never_answers(
    spark: SparkSession, listener: Callable[[bytes | None], _Listener]
) -> None:
    silent = listener(None)
    text = batch_error(spark, f"127.0.0.1:{silent.port}")
    assert f"127.0.0.1:{silent.port}" in text and "got no response within 1500 ms" in text


def test_bootstrap_name_does_not_resolve(spark: SparkSession) -> None:
    # RFC 2606: .invalid never resolves.
    text = batch_error(spark, "no-such-broker.invalid:9092,127.0.0.1:" + str(_closed_port()))
    assert "no-such-broker.invalid:9092" in text and "cannot connect" in text


def test_unknown_topic(spark: SparkSession, kafka_bootstrap: str) -> None:
    text = batch_error(spark, kafka_bootstrap, topic="no-such-topic-faults")
    assert "UNKNOWN_TOPIC_OR_PARTITION" in text and "no-such-topic-faults" in text


def test_topic_deleted_mid_query_fails_naming_it(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(partitions=2)
    produce_values(kafka_bootstrap, topic, 20, partitions=2)
    q = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("kafkaConsumer.pollTimeoutMs", "5000")
        .load()
        .selectExpr("partition", "offset")
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 120
        while not any(p["numInputRows"] for p in q.recentProgress):
            assert time.monotonic() < deadline, "the first batch never ran"
            assert q.isActive, q.exception()
            time.sleep(0.5)
        delete_topic(kafka_bootstrap, topic)
        with pytest.raises(StreamingQueryException) as info:
            q.awaitTermination(120)  # raises the query's error once it fails
        assert not q.isActive
        assert topic in str(info.value) and "UNKNOWN_TOPIC_OR_PARTITION" in str(info.value)
    finally:
        q.stop()
    got = sorted(
        (r.partition, r.offset) for r in spark.read.parquet(str(tmp_path / "out")).collect()
    )
    assert got == sorted((p, o) for p in (0, 1) for o in range(10))


@pytest.mark.parametrize("fail", [True, False])
def test_log_ending_below_the_range_is_data_loss_after_poll_timeout(
    kafka_bootstrap: str, new_topic: Callable[..., str], fail: bool
) -> None:
    # The range was planned up to offset 60 but the log ends at 30 (as after an unclean
    # leader election): data loss, decided after pollTimeoutMs (a lagging high watermark of a
    # new leader catches up within that time).
    topic = new_topic(partitions=1)
    produce_values(kafka_bootstrap, topic, 30)
    client, fetcher = fetcher_via(
        None, settings_for(kafka_bootstrap), TopicPartition(topic, 0), poll_timeout_ms=1500
    )
    fetcher.fail_on_data_loss = fail
    try:
        if fail:
            with pytest.raises(DataLossError) as info:
                list(fetcher.read(10, 60))
            assert f"[30, 60) of {topic}-0" in str(info.value)
            assert "high watermark is 30" in str(info.value)
        else:
            assert rows(fetcher.read(10, 60)) == expected_values(30, 1, 0)[10:]
    finally:
        client.close()


# -- issue 24: fail fast, say it first -------------------------------------------------------


def _write(
    spark: SparkSession, bootstrap: str, rows: list[tuple[str, ...]], schema: str, **opts: str
) -> Any:
    w = spark.createDataFrame(rows, schema).write.format("pykafka").mode("append")
    w = w.option("kafka.bootstrap.servers", bootstrap)
    for k, v in opts.items():
        w = w.option(k, v)
    return w


@pytest.mark.parametrize("via", ["topic option", "topic column"])
def test_write_to_a_missing_topic_fails_at_once_naming_the_broker_setting(
    spark: SparkSession, kafka_bootstrap: str, via: str
) -> None:
    # The session broker runs with auto.create.topics.enable=false. Before issue 24 every task
    # waited kafka.max.block.ms (here 300 s) for the topic and failed with the same error; now
    # the driver (topic option) or the task (topic column) fails on the broker's answer, in
    # 3-10 s on an idle machine; the bound below only has to tell that from 300 s.
    missing = f"no-such-topic-{via.split()[1]}-{time.monotonic_ns()}"
    if via == "topic option":
        w = _write(spark, kafka_bootstrap, [("v",)], "value string", topic=missing)
    else:
        w = _write(spark, kafka_bootstrap, [(missing, "v")], "topic string, value string")
    w = w.option("kafka.max.block.ms", "300000")
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        w.save()
    elapsed = time.monotonic() - started
    text = str(info.value)
    assert f"topic '{missing}' does not exist" in text, text[:2000]
    assert "auto.create.topics.enable=false" in text
    assert f"spark-kafka-py topics create {missing}" in text
    assert elapsed < 150, f"waited {elapsed:.1f} s: kafka.max.block.ms, not the broker's answer"
    # Nothing was created by the check (Metadata without allow_auto_topic_creation).
    with KafkaClient(ClientConfig.from_bootstrap(kafka_bootstrap)) as client:
        assert missing not in list_topics(client, timeout_ms=10_000)


class _Timed(logging.Handler):
    """Records (seconds since ``start``, level, message) of every log record."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.start = time.monotonic()
        self.lines: list[tuple[float, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((time.monotonic() - self.start, record.levelname, record.getMessage()))


@pytest.fixture()
def timed_log() -> Iterator[_Timed]:
    handler = _Timed()
    root = logging.getLogger("spark_kafka_py")
    old = root.level
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)
    root.setLevel(old)


def _warnings(handler: _Timed) -> list[tuple[float, str]]:
    return [(t, m) for t, level, m in handler.lines if level == "WARNING"]


def test_refused_read_planning_warns_at_once_naming_the_bound(timed_log: _Timed) -> None:
    # What the driver's planning runs in PySpark's Python worker, in this process: nothing
    # listens at the bootstrap address. Before issue 24 only INFO lines, then the error after
    # default.api.timeout.ms (60 s by default).
    port = _closed_port()
    reader = KafkaBatchReader(
        parse_options(
            {
                "kafka.bootstrap.servers": f"127.0.0.1:{port}",
                "subscribe": "t",
                "kafka.default.api.timeout.ms": "4000",
            },
            streaming=False,
        )
    )
    with pytest.raises(KafkaTimeoutError, match=r"default\.api\.timeout\.ms=4000"):
        reader.partitions()
    warned = _warnings(timed_log)
    assert len(warned) == 1, timed_log.lines  # once, the retries at INFO
    at, message = warned[0]
    assert at < 2.0, f"the WARN line came {at:.1f} s after the start"
    assert f"127.0.0.1:{port}" in message and "Connection refused" in message
    assert "retrying for up to 4000 ms (default.api.timeout.ms)" in message


def test_refused_write_warns_at_once_naming_max_block_ms(timed_log: _Timed) -> None:
    port = _closed_port()
    settings = ProducerSettings(
        client=ClientConfig.from_bootstrap(f"127.0.0.1:{port}"), max_block_ms=3000
    )
    with KafkaProducer(settings) as producer, pytest.raises(Exception, match="3000 ms"):
        producer.partition_count("t")
    warned = _warnings(timed_log)
    assert len(warned) == 1, timed_log.lines
    at, message = warned[0]
    assert at < 2.0, f"the WARN line came {at:.1f} s after the start"
    assert f"127.0.0.1:{port}" in message and "Connection refused" in message
    assert "(kafka.max.block.ms)" in message


def test_exactly_once_options_fail_the_query_before_its_first_batch_cause_first(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    # PySpark runs no code of a Python sink inside start(): the stream writer is created when
    # the query initializes its first micro-batch, on the query's thread. The options are
    # checked there, before any task runs, and the error names the option in its first line
    # (before issue 24: five of our frames above it, from source.py to sink_options.py).
    topic = new_topic()
    q = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 10)
        .load()
        .selectExpr("CAST(CAST(value AS STRING) AS BINARY) AS value")
        .writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", topic)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .start()
    )
    try:
        with pytest.raises(StreamingQueryException) as info:
            q.awaitTermination(120)
        assert not q.isActive
        assert q.recentProgress == []  # no micro-batch ran
    finally:
        q.stop()
    text = str(info.value)
    assert (
        "ConfigError: Option 'deliveryGuarantee'='exactly-once' needs 'transactionalIdPrefix'"
        in text
    )
    assert len(_our_frames(text)) == 1, text
    assert "sink_options.py" not in text and "options_for_write" not in text
    with KafkaClient(ClientConfig.from_bootstrap(kafka_bootstrap)) as client:
        ends = list_offsets(client, {TopicPartition(topic, 0): LATEST_TIMESTAMP})
    assert ends == {TopicPartition(topic, 0): 0}  # nothing written
