"""Failures that must end in a clear error within the configured timeouts, naming what was
tried: bootstrap server down, not Kafka (HTTP), never answering, unresolvable; unknown topic;
topic deleted mid-query; the log ending below a planned range (data loss after
``kafkaConsumer.pollTimeoutMs``, as Spark's source)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import DataLossError
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


def test_bootstrap_server_down(spark: SparkSession) -> None:
    port = _closed_port()
    text = batch_error(spark, f"127.0.0.1:{port}")
    assert "KafkaTimeoutError" in text and "default.api.timeout.ms=3000" in text
    assert "no broker answered Metadata" in text
    assert f"127.0.0.1:{port}" in text and "Connection refused" in text


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
