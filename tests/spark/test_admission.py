"""Admission control of the stream reader without a broker: minOffsetsPerTrigger with
maxTriggerDelay (Spark's ``KafkaMicroBatchStream.delayBatch``) and the default read limit.
The whole path runs against a real broker in tests/conformance/test_stream_conformance.py."""

from __future__ import annotations

import time

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.source import KafkaStreamReader

A, B = TopicPartition("t", 0), TopicPartition("t", 1)
BASE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}


def reader(**opts: str) -> KafkaStreamReader:
    return KafkaStreamReader(parse_options({**BASE, **opts}, streaming=True))


def test_default_read_limit() -> None:
    assert reader().getDefaultReadLimit() == ReadAllAvailable()
    assert reader(maxoffsetspertrigger="7").getDefaultReadLimit() == ReadMaxRows(7)
    both = reader(maxoffsetspertrigger="7", minoffsetspertrigger="3")
    assert both.getDefaultReadLimit() == ReadMinRows(3)


def test_min_offsets_waits_until_enough_or_delay_passed() -> None:
    r = reader(minoffsetspertrigger="50", maxtriggerdelay="1h")
    start = {A: 10, B: 10}
    assert r._delay_batch(start, {A: 15, B: 15}) is False  # the first trigger always runs
    assert r._delay_batch(start, {A: 30, B: 29}) is True  # 39 < 50
    assert r._delay_batch(start, {A: 35, B: 35}) is False  # 50 >= 50
    assert r._delay_batch(start, {A: 11, B: 10}) is True
    r._last_trigger_ms = int(time.time() * 1000) - 3_600_001  # maxTriggerDelay has passed
    assert r._delay_batch(start, {A: 11, B: 10}) is False


def test_available_now_never_waits() -> None:
    r = reader(minoffsetspertrigger="50")
    r._available_now = {A: 11}
    r._last_trigger_ms = int(time.time() * 1000)
    assert r._delay_batch({A: 10}, {A: 11}) is False
