"""Offset-range splitting (minPartitions, maxRecordsPerPartition), expected pieces worked out
by hand from Spark's KafkaOffsetRangeCalculator rules; the conformance suite compares the real
splits with Spark's own (tests/conformance/test_batch_conformance.py)."""

from __future__ import annotations

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.spark.planner import split_ranges

A, B, C = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)


def test_no_options_drops_empty_ranges_only() -> None:
    assert split_ranges([(A, 0, 10), (B, 5, 5), (C, 3, 4)], None, None) == [(A, 0, 10), (C, 3, 4)]


def test_enough_ranges_for_min_partitions_are_not_split() -> None:
    assert split_ranges([(A, 0, 100), (B, 0, 1)], 2, None) == [(A, 0, 100), (B, 0, 1)]


def test_min_partitions_splits_in_proportion() -> None:
    # total 40; A: 30/40*4 = 3 pieces, B: 10/40*4 = 1 piece (unsplit); A gets 4-1 = 3.
    assert split_ranges([(A, 0, 30), (B, 100, 110)], 4, None) == [
        (A, 0, 10),
        (A, 10, 20),
        (A, 20, 30),
        (B, 100, 110),
    ]


def test_min_partitions_rounding_rest_goes_to_last_piece() -> None:
    assert split_ranges([(A, 0, 10)], 3, None) == [(A, 0, 3), (A, 3, 6), (A, 6, 10)]


def test_max_records_per_partition() -> None:
    # ceil(25/10) = 3 pieces of 8, 8, 9; B (5) stays whole.
    assert split_ranges([(A, 0, 25), (B, 0, 5)], None, 10) == [
        (A, 0, 8),
        (A, 8, 16),
        (A, 16, 25),
        (B, 0, 5),
    ]
