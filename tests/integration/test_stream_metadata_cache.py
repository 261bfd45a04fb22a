"""The stream reader's cached metadata against a real broker (no Spark: the driver-side
``latestOffset`` calls PySpark makes, on the reader object).

Micro-batches reuse the topic-partitions and leaders Metadata gave between them (asked on a
thread of its own), within ``kafka.metadata.max.age.ms``; a partition added to the topic enters
a ``latestOffset`` within that age, and a deleted topic fails the next batch as before (the
failed ListOffsets drops the cache, and Metadata names the topic).
"""

from __future__ import annotations

import time

import pytest

from spark_kafka_py.errors import KafkaApiError
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.source import KafkaStreamReader
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    add_partitions,
    create_topic,
    delete_topic,
    produce,
)

pytestmark = pytest.mark.integration

MAX_AGE_MS = 3000


def _reader(bootstrap: str, topic: str) -> KafkaStreamReader:
    return KafkaStreamReader(
        parse_options(
            {
                "kafka.bootstrap.servers": bootstrap,
                "subscribe": topic,
                "startingOffsets": "earliest",
                "kafka.metadata.max.age.ms": str(MAX_AGE_MS),
                "fetchOffset.retryIntervalMs": "100",
            },
            streaming=True,
        )
    )


def _latest_when_leaders_known(reader: KafkaStreamReader) -> dict:
    """``latestOffset``, asked again while a new topic's partitions get their leaders."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return reader.latestOffset(None, None)
        except KafkaApiError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_a_new_partition_enters_within_metadata_max_age(kafka_bootstrap: str) -> None:
    topic = f"md-cache-grow-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(None, f"a{i}", partition=0) for i in range(3)])
    reader = _reader(kafka_bootstrap, topic)
    try:
        assert _latest_when_leaders_known(reader) == {topic: {"0": 3}}
        added = time.monotonic()
        add_partitions(kafka_bootstrap, topic, 2)
        produce(kafka_bootstrap, topic, [ProducedRecord(None, "b", partition=1)])
        seen = None
        while seen is None and time.monotonic() - added < MAX_AGE_MS / 1000 + 30:
            latest = reader.latestOffset({topic: {"0": 3}}, None)
            if "1" in latest[topic]:
                seen = time.monotonic()
                assert latest == {topic: {"0": 3, "1": 1}}
            else:
                time.sleep(0.2)
        assert seen is not None, "partition 1 never entered a micro-batch"
        # add_partitions and produce take a few seconds of JVM start-up each, so the bound is
        # the age plus the time of one Metadata request, from when the partition existed.
        assert seen - added <= MAX_AGE_MS / 1000 + 30
        reader._planner.forget_metadata()
        assert reader.latestOffset(None, None) == {topic: {"0": 3, "1": 1}}
    finally:
        reader.stop()


def test_a_deleted_topic_fails_the_next_batch_naming_it(kafka_bootstrap: str) -> None:
    topic = f"md-cache-gone-{time.time_ns()}"
    create_topic(kafka_bootstrap, topic, partitions=1)
    reader = _reader(kafka_bootstrap, topic)
    try:
        _latest_when_leaders_known(reader)
        delete_topic(kafka_bootstrap, topic)
        deadline = time.monotonic() + 60
        with pytest.raises(KafkaApiError, match=rf"UNKNOWN_TOPIC_OR_PARTITION.*'{topic}'"):
            while time.monotonic() < deadline:
                reader.latestOffset(None, None)
                time.sleep(0.5)
    finally:
        reader.stop()
