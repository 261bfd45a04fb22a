"""The stream reader's debug timings (``SPARK_KAFKA_PY_STREAM_TIMINGS``): one JSON line per
driver-side call when set, nothing when unset; the calls keep their signatures and results."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from pyspark.sql.datasource import InputPartition
from pyspark.sql.streaming.datasource import ReadMaxRows

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.planner import KafkaInputPartition
from spark_kafka_py.spark.source import KafkaStreamReader
from spark_kafka_py.spark.stream_timings import STREAM_TIMINGS_ENV

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
A, B = TopicPartition("t", 0), TopicPartition("t", 1)


def reader(**opts: str) -> KafkaStreamReader:
    return KafkaStreamReader(parse_options({**BASE, **opts}, streaming=True))


def test_driver_calls_are_timed_into_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv(STREAM_TIMINGS_ENV, str(path))
    r = reader(maxoffsetspertrigger="10")
    r._available_now = {A: 100, B: 4}  # AvailableNow: latestOffset asks no broker
    end = r.latestOffset({"t": {"0": 0, "1": 0}}, ReadMaxRows(10))
    assert end == {"t": {"0": 9, "1": 1}}  # 10 split by backlog, at least 1 each
    parts = r.partitions({"t": {"0": 0, "1": 0}}, end)
    assert parts == [KafkaInputPartition("t", 0, 0, 9), KafkaInputPartition("t", 1, 0, 1)]
    r.commit(end)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["call"] for e in lines] == ["latestOffset", "partitions", "commit"]
    assert all(e["ms"] >= 0 and e["at"] > 0 for e in lines)


def test_nothing_is_written_without_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STREAM_TIMINGS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    r = reader()
    r.commit({"t": {"0": 1}})
    assert r._timings_path is None and list(tmp_path.iterdir()) == []


def test_latest_offset_keeps_its_signature_for_pyspark() -> None:
    # PySpark's runner passes (start, limit) only if latestOffset takes parameters
    # (check_support_func inspects the bound method's signature).
    assert list(inspect.signature(reader().latestOffset).parameters) == ["start", "limit"]


def test_report_latest_offset_builds_each_lookup_once() -> None:
    r = reader()
    assert r.reportLatestOffset() is None
    r._latest = {B: 7, A: 5}
    first = r.reportLatestOffset()
    assert first == {"t": {"0": 5, "1": 7}}
    assert r.reportLatestOffset() is first  # asked after every micro-batch
    r._latest = {A: 6, B: 7}  # a new look-up
    assert r.reportLatestOffset() == {"t": {"0": 6, "1": 7}}


def test_executor_reads_are_timed_per_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv(STREAM_TIMINGS_ENV, str(path))
    r = reader()
    # PySpark's placeholder of an empty plan: no rows, one line when the task's read ends
    assert list(r.read(InputPartition(None))) == []
    (line,) = [json.loads(x) for x in path.read_text().splitlines()]
    assert line["call"] == "read" and line["batches"] == 0 and line["rows"] == 0
    assert line["ms"] >= 0
