"""The Fetch loop's pure classifiers (:func:`classify_response`, :func:`classify_decoded`) fed
constructed ``PartitionData``: what each answer of a broker means for the read, no broker.

Each case is one row of the module docstring of :mod:`spark_kafka_py.consumer.fetcher` (the
Java consumer's and Spark's ``KafkaDataConsumer``'s rules).
"""

from __future__ import annotations

from typing import Any

import pytest

from spark_kafka_py.consumer.fetcher import (
    REFRESH_METADATA_ERRORS,
    Advance,
    Decode,
    Fail,
    GrowFetch,
    OutOfRange,
    Retry,
    SwitchReplica,
    Truncated,
    classify_decoded,
    classify_response,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaApiError
from spark_kafka_py.protocol.error_codes import (
    CORRUPT_MESSAGE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    TOPIC_AUTHORIZATION_FAILED,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from spark_kafka_py.protocol.messages.fetch import EpochEndOffset, PartitionData
from tests.records.encoder import Rec, batch_v2, legacy_message

TP = TopicPartition("t", 0)
LEADER = 1
RECORDS = batch_v2([Rec(None, b"v", i) for i in range(5)], base_offset=10, leader_epoch=7)


def same(step: object, expected: object) -> bool:
    """Equal and of the same step type (the steps are NamedTuples: equal tuples of two types
    would compare equal)."""
    return type(step) is type(expected) and step == expected


def _part(**fields: Any) -> PartitionData:
    fields.setdefault("partition_index", 0)
    fields.setdefault("high_watermark", 100)
    return PartitionData(**fields)


def _response(part: PartitionData | None, pos: int = 10, read_replica: int = -1) -> Any:
    return classify_response(part, TP, pos, leader=LEADER, read_replica=read_replica)


def _decoded(part: PartitionData, pos: int = 10, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "next_offset": pos,
        "incomplete_tail": False,
        "read_committed": False,
        "max_bytes": 1 << 20,
        "fetch_max_bytes": 50 << 20,
    }
    args.update(kw)
    return classify_decoded(part, TP, pos, 200, **args)


# -- before decoding ------------------------------------------------------------------------
def test_records_without_error_are_decoded() -> None:
    assert same(_response(_part(records=RECORDS)), Decode())
    assert same(_response(_part(records=b"")), Decode())
    assert same(_response(_part(records=None)), Decode())


def test_a_missing_partition_is_retried_after_metadata() -> None:
    step = _response(None)
    assert same(step, Retry("the partition was missing from the Fetch response"))
    assert step.refresh_metadata and step.back_off and not step.lost_if_lasting


@pytest.mark.parametrize("code", sorted(REFRESH_METADATA_ERRORS))
def test_leader_errors_are_retried_after_metadata_naming_the_error(code: int) -> None:
    step = _response(_part(error_code=code, records=RECORDS))  # records ignored
    assert isinstance(step, Retry) and step.refresh_metadata and step.back_off
    assert "fetching t-0 at offset 10" in step.problem
    assert not step.lost_if_lasting


def test_not_leader_names_the_error() -> None:
    step = _response(_part(error_code=NOT_LEADER_OR_FOLLOWER))
    assert "NOT_LEADER_OR_FOLLOWER" in step.problem
    assert UNKNOWN_TOPIC_OR_PARTITION in REFRESH_METADATA_ERRORS


def test_out_of_range_at_the_leader_is_data_loss_with_the_log_start() -> None:
    part = _part(error_code=OFFSET_OUT_OF_RANGE, log_start_offset=42)
    assert same(_response(part), OutOfRange(42))
    assert same(_response(_part(error_code=OFFSET_OUT_OF_RANGE)), OutOfRange(-1))  # ListOffsets


def test_out_of_range_at_a_read_replica_goes_back_to_the_leader_at_once() -> None:
    step = _response(_part(error_code=OFFSET_OUT_OF_RANGE), read_replica=2)
    assert same(
        step,
        Retry("read replica 2: offset 10 out of range", refresh_metadata=True, back_off=False),
    )


@pytest.mark.parametrize("code", [TOPIC_AUTHORIZATION_FAILED, CORRUPT_MESSAGE, 9999])
def test_other_errors_fail_with_the_typed_error_naming_the_partition(code: int) -> None:
    step = _response(_part(error_code=code))
    assert isinstance(step, Fail) and isinstance(step.error, KafkaApiError)
    assert step.error.code == code
    assert "fetching t-0 at offset 10" in str(step.error)


def test_a_diverging_epoch_is_truncation() -> None:
    diverging = EpochEndOffset(epoch=3, end_offset=8)
    assert same(_response(_part(diverging_epoch=diverging, records=b"")), Truncated(3, 8))
    # an error code comes first (a partition with an error carries nothing else)
    step = _response(_part(error_code=NOT_LEADER_OR_FOLLOWER, diverging_epoch=diverging))
    assert isinstance(step, Retry)
    # epoch -1: the tagged field's default, no divergence
    assert same(_response(_part(diverging_epoch=EpochEndOffset(), records=RECORDS)), Decode())


def test_a_preferred_read_replica_without_records_is_switched_to() -> None:
    assert same(_response(_part(preferred_read_replica=2, records=b"")), SwitchReplica(2))
    assert same(_response(_part(preferred_read_replica=2, records=None)), SwitchReplica(2))
    # with records, or already at a replica, or naming the leader itself: decode
    assert same(_response(_part(preferred_read_replica=2, records=RECORDS)), Decode())
    assert same(_response(_part(preferred_read_replica=2, records=b""), read_replica=3), Decode())
    assert same(_response(_part(preferred_read_replica=LEADER, records=b"")), Decode())
    assert same(_response(_part(preferred_read_replica=-1, records=b"")), Decode())


# -- after decoding -------------------------------------------------------------------------
def test_progress_advances_with_the_epoch_of_the_last_batch_read() -> None:
    assert same(_decoded(_part(records=RECORDS), next_offset=15), Advance(15, 7))
    # past records that were not data (control batches, aborted, compacted): same
    assert same(_decoded(_part(records=RECORDS), next_offset=12), Advance(12, 7))
    # legacy message sets carry no epoch
    legacy = legacy_message(10, None, b"x")
    assert same(_decoded(_part(records=legacy), next_offset=11), Advance(11, -1))


def test_a_cut_batch_doubles_the_fetch_size_up_to_fetch_max_bytes() -> None:
    part = _part(records=RECORDS[:30])
    assert same(_decoded(part, incomplete_tail=True, max_bytes=100), GrowFetch(200))
    assert same(
        _decoded(part, incomplete_tail=True, max_bytes=300, fetch_max_bytes=500),
        GrowFetch(500),
    )
    step = _decoded(part, incomplete_tail=True, max_bytes=500, fetch_max_bytes=500)
    assert same(
        step,
        Retry(
            "a record batch at offset 10 is larger than fetch.max.bytes=500",
            refresh_metadata=False,
            back_off=False,
        ),
    )


def test_a_log_end_below_the_range_is_data_loss_if_it_lasts() -> None:
    step = _decoded(_part(high_watermark=10, records=b""))
    assert same(
        step,
        Retry(
            "Cannot fetch offsets [10, 200) of t-0: the high watermark is 10",
            refresh_metadata=True,
            back_off=True,
            lost_if_lasting=True,
        ),
    )
    assert _decoded(_part(high_watermark=4, records=b"")).lost_if_lasting


def test_nothing_yet_below_the_high_watermark_is_fetched_again_at_once() -> None:
    step = _decoded(_part(high_watermark=50, last_stable_offset=50, records=b""))
    assert same(
        step,
        Retry(
            "fetch at offset 10 returned no records (high watermark 50, last stable offset 50)",
            refresh_metadata=False,
            back_off=False,
        ),
    )


def test_read_committed_waits_at_the_last_stable_offset_without_data_loss() -> None:
    # an open transaction holds the last stable offset at 10 (KIP-98): wait, never loss
    part = _part(high_watermark=50, last_stable_offset=10, records=b"")
    step = _decoded(part, read_committed=True)
    assert isinstance(step, Retry) and not step.lost_if_lasting and not step.back_off
    # even with the high watermark itself below: read_committed never reports it
    part = _part(high_watermark=5, last_stable_offset=5, records=b"")
    assert not _decoded(part, read_committed=True).lost_if_lasting


def test_a_cut_batch_comes_before_the_log_end() -> None:
    part = _part(high_watermark=10, records=RECORDS[:30])
    assert same(_decoded(part, incomplete_tail=True, max_bytes=100), GrowFetch(200))
