"""spark_kafka_py.spark.range_planner: offsets in, ranges and Spark input partitions out, data
loss reported as Spark's ``KafkaMicroBatchStream`` does (pure functions, no broker)."""

from __future__ import annotations

import logging

import pytest

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import DataLossError
from spark_kafka_py.spark.range_planner import (
    KafkaInputPartition,
    KafkaRangeGroup,
    input_partitions,
    new_partitions,
    offset_ranges,
)

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def test_ranges_are_sorted_by_topic_partition_and_empty_ones_kept() -> None:
    ranges = offset_ranges({B0: 4, A0: 0}, {B0: 4, A0: 10}, {}, fail_on_data_loss=True)
    assert ranges == [(A0, 0, 10), (B0, 4, 4)]


def test_a_new_partition_starts_at_its_earliest_offset() -> None:
    start, end = {A0: 3}, {A0: 9, A1: 5}
    assert new_partitions(start, end) == [A1]
    assert offset_ranges(start, end, {A1: 0}, fail_on_data_loss=True) == [(A0, 3, 9), (A1, 0, 5)]


def test_a_new_partition_not_starting_at_0_is_data_loss(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(DataLossError, match=r"Added partition a-1 starts from 2 instead of 0"):
        offset_ranges({A0: 3}, {A0: 9, A1: 5}, {A1: 2}, fail_on_data_loss=True)
    with caplog.at_level(logging.WARNING):
        ranges = offset_ranges({A0: 3}, {A0: 9, A1: 5}, {A1: 2}, fail_on_data_loss=False)
    assert ranges == [(A0, 3, 9), (A1, 2, 5)]
    assert "Added partition a-1 starts from 2 instead of 0" in caplog.text


def test_a_gone_partition_is_data_loss_and_left_out(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(DataLossError, match=r"Partition b-0 was present at offset 4 but is gone"):
        offset_ranges({A0: 0, B0: 4}, {A0: 1}, {}, fail_on_data_loss=True)
    with caplog.at_level(logging.WARNING):
        assert offset_ranges({A0: 0, B0: 4}, {A0: 1}, {}, fail_on_data_loss=False) == [(A0, 0, 1)]
    assert "b-0 was present at offset 4" in caplog.text


def test_an_end_below_the_start_is_data_loss_and_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(DataLossError, match=r"Partition a-0's offset was changed from 9 to 2"):
        offset_ranges({A0: 9, B0: 0}, {A0: 2, B0: 1}, {}, fail_on_data_loss=True)
    with caplog.at_level(logging.WARNING):
        ranges = offset_ranges({A0: 9, B0: 0}, {A0: 2, B0: 1}, {}, fail_on_data_loss=False)
    assert ranges == [(B0, 0, 1)]
    assert "changed from 9 to 2" in caplog.text


def test_input_partitions_carry_leader_hints_and_drop_empty_ranges() -> None:
    parts = input_partitions(
        [(A0, 0, 10), (A1, 5, 5), (B0, 2, 4)],
        {A0: 1, A1: 2},
        min_partitions=None,
        max_records_per_partition=None,
        group_small=False,
    )
    assert parts == [KafkaInputPartition("a", 0, 0, 10, 1), KafkaInputPartition("b", 0, 2, 4, -1)]


def test_input_partitions_split_per_max_records_and_never_group_then() -> None:
    parts = input_partitions(
        [(A0, 0, 10), (B0, 0, 1)],
        {},
        min_partitions=None,
        max_records_per_partition=4,
        group_small=True,
    )
    assert parts == [
        KafkaInputPartition("a", 0, 0, 3),
        KafkaInputPartition("a", 0, 3, 6),
        KafkaInputPartition("a", 0, 6, 10),
        KafkaInputPartition("b", 0, 0, 1),
    ]


def test_small_ranges_share_a_task_when_grouping() -> None:
    ranges = [(A0, 0, 10), (A1, 0, 20), (B0, 0, 200_000)]
    parts = input_partitions(
        ranges, {}, min_partitions=None, max_records_per_partition=None, group_small=True
    )
    assert parts == [
        KafkaInputPartition("b", 0, 0, 200_000),
        KafkaRangeGroup((KafkaInputPartition("a", 0, 0, 10), KafkaInputPartition("a", 1, 0, 20))),
    ]
    ungrouped = input_partitions(
        ranges, {}, min_partitions=None, max_records_per_partition=None, group_small=False
    )
    assert len(ungrouped) == 3
