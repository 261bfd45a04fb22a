"""spark_kafka_py.spark.offset_resolution: offset specs to offsets, with ListOffsets played by a
dictionary (Spark's ``KafkaOffsetReaderAdmin`` rules, no broker)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.offset_resolution import resolve_offsets, resolve_timestamps
from spark_kafka_py.spark.options import ByTimestamp

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
PARTITIONS = {T0: 1, T1: 2}  # the subscription: {TopicPartition: leader}


class Broker:
    """ListOffsets over a log per partition: earliest ``begin``, latest ``end``, and
    ``{timestamp: offset}`` of its records; records every request."""

    def __init__(self) -> None:
        self.begin = {T0: 5, T1: 0}
        self.end = {T0: 50, T1: 30}
        self.times = {T0: {1000: 10, 2000: 20}, T1: {1000: 3}}
        self.asked: list[dict[TopicPartition, int]] = []

    def __call__(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        self.asked.append(dict(timestamps))
        out = {}
        for tp, ts in timestamps.items():
            if ts == -2:
                out[tp] = self.begin[tp]
            elif ts == -1:
                out[tp] = self.end[tp]
            else:
                later = [off for t, off in sorted(self.times[tp].items()) if t >= ts]
                out[tp] = later[0] if later else -1
        return out


def test_earliest_and_latest_look_up_every_partition() -> None:
    broker = Broker()
    assert resolve_offsets("earliest", PARTITIONS, "startingOffsets", broker) == {T0: 5, T1: 0}
    assert resolve_offsets("latest", PARTITIONS, "endingOffsets", broker) == {T0: 50, T1: 30}
    assert broker.asked == [{T0: -2, T1: -2}, {T0: -1, T1: -1}]


def test_json_offsets_look_up_only_their_negative_entries() -> None:
    broker = Broker()
    spec = {T1: -1, T0: 7, T2: 3}  # t-2 is not subscribed: ignored
    assert resolve_offsets(spec, PARTITIONS, "startingOffsets", broker) == {T0: 7, T1: 30}
    assert broker.asked == [{T1: -1}]
    assert list(resolve_offsets(spec, PARTITIONS, "startingOffsets", broker)) == [T0, T1]


def test_json_offsets_without_a_lookup_ask_nothing() -> None:
    broker = Broker()
    assert resolve_offsets({T0: 1, T1: 2}, PARTITIONS, "endingOffsets", broker) == {T0: 1, T1: 2}
    assert broker.asked == []


def test_json_offsets_must_name_every_partition() -> None:
    with pytest.raises(ConfigError, match=r"'startingOffsets'.*Missing: t-1\. Specified: t-0"):
        resolve_offsets({T0: 1}, PARTITIONS, "startingOffsets", Broker())


def test_a_timestamp_everywhere_finds_the_first_offset_at_or_after_it() -> None:
    broker = Broker()
    spec = ByTimestamp(everywhere=1500, strategy="latest")
    # t-1 has no record that late: it starts at the latest offset
    assert resolve_offsets(spec, PARTITIONS, "startingTimestamp", broker) == {T0: 20, T1: 30}
    assert broker.asked == [{T0: 1500, T1: 1500}, {T1: -1}]


def test_an_unmatched_start_fails_with_strategy_error_naming_it() -> None:
    spec = ByTimestamp(everywhere=1500)
    with pytest.raises(ConfigError, match=r"topic-partition t-1 and timestamp 1500"):
        resolve_timestamps(spec, PARTITIONS, "startingTimestamp", Broker())


def test_an_unmatched_end_is_the_latest_offset_whatever_the_strategy() -> None:
    spec = ByTimestamp(per_partition={T0: 1000, T1: 5000}, strategy="error")
    assert resolve_timestamps(spec, PARTITIONS, "endingOffsetsByTimestamp", Broker()) == {
        T0: 10,
        T1: 30,
    }


def test_timestamps_per_partition_must_name_exactly_the_subscription() -> None:
    spec = ByTimestamp(per_partition={T0: 1000, T2: 1000})
    with pytest.raises(ConfigError, match=r"'startingOffsetsByTimestamp' must name exactly"):
        resolve_timestamps(spec, PARTITIONS, "startingOffsetsByTimestamp", Broker())
    with pytest.raises(ConfigError, match=r"'endingOffsetsByTimestamp' must name exactly"):
        resolve_timestamps(spec, PARTITIONS, "endingOffsetsByTimestamp", Broker())


def test_no_partitions_asks_nothing() -> None:
    broker = Broker()
    assert resolve_offsets("latest", {}, "endingOffsets", broker) == {}
    assert resolve_offsets(ByTimestamp(everywhere=1), {}, "startingTimestamp", broker) == {}
    assert broker.asked == []
