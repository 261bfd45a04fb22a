"""Admission control of the stream reader without a broker: minOffsetsPerTrigger with
maxTriggerDelay (Spark's ``KafkaMicroBatchStream.delayBatch``), the reader's state between
triggers, and the default read limit. The decisions themselves: tests/spark/test_trigger.py;
the whole path against a real broker: tests/conformance/test_stream_conformance.py."""

from __future__ import annotations

import time

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.source import KafkaStreamReader

A, B = TopicPartition("t", 0), TopicPartition("t", 1)
BASE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}


def reader(monkeypatch: pytest.MonkeyPatch, **opts: str) -> KafkaStreamReader:
    r = KafkaStreamReader(parse_options({**BASE, **opts}, streaming=True))
    monkeypatch.setattr(r._planner, "refresh_metadata", lambda: None)  # no broker here
    return r


def serve(r: KafkaStreamReader, latest: dict[TopicPartition, int]) -> None:
    r._fetch_latest = lambda: latest  # type: ignore[method-assign]


def test_default_read_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    assert reader(monkeypatch).getDefaultReadLimit() == ReadAllAvailable()
    assert reader(monkeypatch, maxoffsetspertrigger="7").getDefaultReadLimit() == ReadMaxRows(7)
    both = reader(monkeypatch, maxoffsetspertrigger="7", minoffsetspertrigger="3")
    assert both.getDefaultReadLimit() == ReadMinRows(3)


def test_min_offsets_waits_until_enough_or_delay_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    r = reader(monkeypatch, minoffsetspertrigger="50", maxtriggerdelay="1h")
    start = {"t": {"0": 10, "1": 10}}
    limit = ReadMinRows(50)
    serve(r, {A: 15, B: 15})
    assert r.latestOffset(start, limit) == {"t": {"0": 15, "1": 15}}  # the first always runs
    serve(r, {A: 30, B: 29})
    assert r.latestOffset(start, limit) == start  # 39 < 50: waits
    serve(r, {A: 35, B: 35})
    assert r.latestOffset(start, limit) == {"t": {"0": 35, "1": 35}}  # 50 >= 50
    serve(r, {A: 11, B: 10})
    assert r.latestOffset(start, limit) == start
    r._last_trigger_ms = int(time.time() * 1000) - 3_600_001  # maxTriggerDelay has passed
    assert r.latestOffset(start, limit) == {"t": {"0": 11, "1": 10}}
    assert r.latestOffset(start, limit) == start  # and the delay counts from now again


def test_min_and_max_offsets_together(monkeypatch: pytest.MonkeyPatch) -> None:
    r = reader(monkeypatch, minoffsetspertrigger="5", maxoffsetspertrigger="10")
    serve(r, {A: 100, B: 4})
    # ReadMinRows (the default limit) caps at maxOffsetsPerTrigger: 10 * 100/104 -> 9, and 1
    assert r.latestOffset({"t": {"0": 0, "1": 0}}, ReadMinRows(5)) == {"t": {"0": 9, "1": 1}}


def test_available_now_never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    r = reader(monkeypatch, minoffsetspertrigger="50")
    r._available_now = {A: 11}
    r._last_trigger_ms = int(time.time() * 1000)
    assert r.latestOffset({"t": {"0": 10}}, ReadMinRows(50)) == {"t": {"0": 11}}


def test_new_partitions_under_a_rate_limit_start_at_earliest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r = reader(monkeypatch, maxoffsetspertrigger="10")
    serve(r, {A: 20, B: 30})
    asked: list[dict[TopicPartition, int]] = []

    def list_offsets(timestamps: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        asked.append(dict(timestamps))
        return {B: 25}

    monkeypatch.setattr(r._planner, "list_offsets", list_offsets)
    # backlogs 10 (A from 10) and 5 (B from its earliest, 25): 10 * 10/15 -> 6, 10 * 5/15 -> 3
    end = r.latestOffset({"t": {"0": 10}}, ReadMaxRows(10))
    assert end == {"t": {"0": 16, "1": 28}}
    assert asked == [{B: -2}]  # ListOffsets, earliest (-2), for the new partition only
    asked.clear()
    assert r.latestOffset({"t": {"0": 10}}, ReadAllAvailable()) == {"t": {"0": 20, "1": 30}}
    assert asked == []  # no rate limit: no look-up
