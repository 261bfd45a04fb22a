"""The stream reader's batch boundary with ``kafka.group.id``, without a broker: a stand-in
group records what the reader asks of it (commit the processed start, the assignment, where
newly assigned partitions start) and the offsets Spark gets back; the decisions themselves are
tests/spark/test_trigger.py's, the real group tests/integration's."""

from __future__ import annotations

import pytest
from pyspark.sql.streaming.datasource import ReadMaxRows

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.planner import KafkaInputPartition
from spark_kafka_py.spark.source import KafkaStreamReader

A, B, C = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)


class FakeGroup:
    def __init__(self, mine: set[TopicPartition], starts: dict[TopicPartition, int]) -> None:
        self.mine, self.starts = mine, starts
        self.calls: list[tuple[str, object]] = []

    def commit(self, processed: dict[TopicPartition, int]) -> None:
        self.calls.append(("commit", dict(processed)))

    def assigned(self, partitions: dict[TopicPartition, int]) -> set[TopicPartition]:
        self.calls.append(("assigned", sorted(partitions)))
        return {tp for tp in partitions if tp in self.mine}

    def start_offsets(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        self.calls.append(("start_offsets", sorted(partitions)))
        return {tp: self.starts[tp] for tp in partitions}


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch) -> KafkaStreamReader:
    options = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
    options["kafka.group.id"] = "g"
    r = KafkaStreamReader(parse_options(options, streaming=True))
    monkeypatch.setattr(r._planner, "refresh_metadata", lambda: None)  # no broker here
    r._fetch_latest = lambda: {A: 100, B: 4, C: 50}  # type: ignore[method-assign]
    return r


def test_batch_boundary_commits_splits_and_lets_new_partitions_enter(
    reader: KafkaStreamReader, caplog: pytest.LogCaptureFixture
) -> None:
    group = FakeGroup(mine={A, C}, starts={C: 7})
    reader._group = group  # type: ignore[assignment]
    start = {"t": {"0": 0, "1": 2}}
    with caplog.at_level("INFO", logger="spark_kafka_py.spark.source"):
        end = reader.latestOffset(start, ReadMaxRows(10))
    # A owned (capped at 10), B revoked (left out), C enters at its group start (7)
    assert end == {"t": {"0": 10, "2": 7}}
    assert group.calls == [
        ("commit", {A: 0, B: 2}),
        ("assigned", [A, B, C]),
        ("start_offsets", [C]),
    ]
    assert "partitions revoked ['t-1'], assigned {'t-2': 7}" in caplog.text
    # the batch: A's range; B is not read, C reads nothing yet
    planned = reader.partitions(start, end)
    assert planned == [KafkaInputPartition("t", 0, 0, 10)]
    group.calls.clear()
    reader.commit(end)
    assert group.calls == [("commit", {A: 10, C: 7})]
