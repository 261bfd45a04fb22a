"""``format("pykafka")`` through Spark Connect: a thin client, the connector on the server only.

The server is PySpark's own ``start-connect-server.sh`` (``connect_server`` fixture, one per
test session); its Python workers run this environment, where ``pyspark_pykafka`` registers
``pykafka``. The client session (``spark_connect``) sends plans over gRPC and never imports the
connector. Records are written by Kafka's Java producer and, for the write test, read back by
Kafka's Java consumer.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.errors.exceptions.connect import SparkConnectException
from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

from spark_kafka_py.testing.spark_connect import ConnectServer, connect_mode
from spark_kafka_py.testing.tools import ProducedRecord, consume, create_topic, produce

pytestmark = pytest.mark.integration

PARTITIONS = 3
FIRST = 300  # records produced before the first read
MORE = 90  # records produced between the two streaming runs


def records(start: int, count: int) -> list[ProducedRecord]:
    """``count`` records ``v<i>`` from ``i = start``, round-robin over the partitions."""
    return [
        ProducedRecord(key=f"k{i}", value=f"v{i}", partition=i % PARTITIONS)
        for i in range(start, start + count)
    ]


def expected(count: int) -> list[tuple[int, int, str]]:
    """``(partition, offset, value)`` of the first ``count`` records of :func:`records`."""
    return sorted((i % PARTITIONS, i // PARTITIONS, f"v{i}") for i in range(count))


@pytest.fixture(scope="module")
def topic(kafka_bootstrap: str) -> str:
    """A 3-partition topic holding ``FIRST`` records (shared by the module)."""
    name = f"connect-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, name, PARTITIONS)
    produce(kafka_bootstrap, name, records(0, FIRST))
    return name


def rows(df) -> list[tuple[int, int, str]]:
    return sorted(
        (r["partition"], r["offset"], r["value"])
        for r in df.selectExpr("partition", "offset", "CAST(value AS STRING) AS value").collect()
    )


def test_batch_read_returns_every_record(
    spark_connect: RemoteSparkSession, kafka_bootstrap: str, topic: str
) -> None:
    df = (
        spark_connect.read.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .load()
    )
    assert rows(df) == expected(FIRST)


def test_available_now_into_table_then_only_new_records(
    spark_connect: RemoteSparkSession, kafka_bootstrap: str, topic: str, tmp_path: Path
) -> None:
    """Two ``AvailableNow`` runs on one checkpoint into a managed table: every record once."""
    table = f"connect_stream_{uuid.uuid4().hex[:8]}"

    def run() -> None:
        query = (
            spark_connect.readStream.format("pykafka")
            .option("kafka.bootstrap.servers", kafka_bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
            .writeStream.option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .toTable(table)
        )
        if not query.awaitTermination(120):
            query.stop()
            pytest.fail("the AvailableNow query did not end within 120 s")
        assert query.exception() is None

    run()
    assert rows(spark_connect.read.table(table)) == expected(FIRST)
    # The module's other tests read `topic` too; the new records are appended after them.
    produce(kafka_bootstrap, topic, records(FIRST, MORE))
    run()
    assert rows(spark_connect.read.table(table)) == expected(FIRST + MORE)


def test_bad_option_error_names_the_option_at_the_client(
    spark_connect: RemoteSparkSession, kafka_bootstrap: str
) -> None:
    """The server-side ConfigError reaches the client as a Connect exception with its text."""
    with pytest.raises(SparkConnectException, match=r"startingOffsets.*bogus"):
        spark_connect.read.format("pykafka").option(
            "kafka.bootstrap.servers", kafka_bootstrap
        ).option("subscribe", "t").option("startingOffsets", "bogus").load().collect()
    with pytest.raises(PySparkException, match=r"auto\.offset\.reset"):
        spark_connect.read.format("pykafka").option(
            "kafka.bootstrap.servers", kafka_bootstrap
        ).option("subscribe", "t").option("kafka.auto.offset.reset", "earliest").load().collect()


def test_unknown_topic_error_names_the_topic_at_the_client(
    spark_connect: RemoteSparkSession, kafka_bootstrap: str
) -> None:
    missing = f"no-such-topic-{uuid.uuid4().hex[:8]}"
    with pytest.raises(SparkConnectException, match=rf"UNKNOWN_TOPIC_OR_PARTITION.*{missing}"):
        spark_connect.read.format("pykafka").option(
            "kafka.bootstrap.servers", kafka_bootstrap
        ).option("subscribe", missing).load().collect()


def test_write_through_connect_is_read_back_by_kafkas_consumer(
    spark_connect: RemoteSparkSession, kafka_bootstrap: str
) -> None:
    out = f"connect-write-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, out, 1)
    data = [(f"key-{i}", f"value-{i}") for i in range(50)]
    (
        spark_connect.createDataFrame(data, "key string, value string")
        .coalesce(1)
        .write.format("pykafka")
        .mode("append")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", out)
        .save()
    )
    got = consume(kafka_bootstrap, out, len(data), timeout_ms=15_000)
    assert [tuple(line.split("\t")) for line in got] == data


def test_connect_mode_is_left_after_the_client_session(connect_server: ConnectServer) -> None:
    """The client session was created in Connect mode, yet this process stays classic (a later
    test's ``builder.getOrCreate()`` still gets a local session)."""
    from pyspark.sql.utils import is_remote

    assert connect_server.client is not None
    assert not is_remote()
    with connect_mode():
        assert is_remote()
    assert not is_remote()
