"""Header peeks of :mod:`spark_kafka_py.records.format` against batches built by the test encoder.

``peek_batch_header`` reads the framing fields (base offset, batch length, partition leader
epoch, magic) in place; ``last_batch_leader_epoch`` walks a Fetch response's records by them
for the Fetch request's ``last_fetched_epoch`` (KIP-320).
"""

from __future__ import annotations

import pytest

from spark_kafka_py.records import format as fmt
from spark_kafka_py.records.format import (
    BatchFrame,
    last_batch_leader_epoch,
    peek_batch_header,
)
from tests.records.encoder import GZIP, Rec, batch_v2, control_batch, legacy_message


def _recs(n: int) -> list[Rec]:
    return [Rec(None, f"v{i}".encode(), i) for i in range(n)]


#: Offsets 0-4 written at leader epoch 3, then 5-9 at leader epoch 4 (a later leader).
BATCH_A = batch_v2(_recs(5), base_offset=0, leader_epoch=3)
BATCH_B = batch_v2(_recs(5), base_offset=5, leader_epoch=4, codec=GZIP)


def test_peek_reads_the_framing_fields_of_a_v2_batch() -> None:
    assert peek_batch_header(BATCH_A) == BatchFrame(0, len(BATCH_A) - fmt.LOG_OVERHEAD, 3, 2)
    log = BATCH_A + BATCH_B
    frame = peek_batch_header(log, len(BATCH_A))
    assert frame == BatchFrame(5, len(BATCH_B) - fmt.LOG_OVERHEAD, 4, fmt.MAGIC_V2)


def test_peek_of_a_legacy_message_has_no_leader_epoch() -> None:
    for magic in (fmt.MAGIC_V0, fmt.MAGIC_V1):
        msg = legacy_message(7, b"k", b"v", magic=magic)
        frame = peek_batch_header(msg)
        assert frame == BatchFrame(
            7, len(msg) - fmt.LOG_OVERHEAD, fmt.NO_PARTITION_LEADER_EPOCH, magic
        )


def test_peek_needs_the_bytes_up_to_the_magic_only() -> None:
    assert peek_batch_header(BATCH_A[: fmt.HEADER_SIZE_UP_TO_MAGIC]) is not None
    assert peek_batch_header(BATCH_A[: fmt.HEADER_SIZE_UP_TO_MAGIC - 1]) is None
    assert peek_batch_header(BATCH_A, len(BATCH_A)) is None
    assert peek_batch_header(b"") is None
    assert peek_batch_header(BATCH_A, -1) is None
    assert peek_batch_header(memoryview(BATCH_A)) == peek_batch_header(BATCH_A)


def test_peek_reads_a_negative_magic_as_int8() -> None:
    bad = bytearray(BATCH_A)
    bad[fmt.MAGIC_OFFSET] = 0xFF
    frame = peek_batch_header(bytes(bad))
    assert frame is not None and frame.magic == -1
    assert frame.partition_leader_epoch == fmt.NO_PARTITION_LEADER_EPOCH


def test_last_batch_leader_epoch_is_the_epoch_of_the_batch_of_the_last_record_read() -> None:
    log = BATCH_A + BATCH_B
    assert last_batch_leader_epoch(log, 5) == 3
    assert last_batch_leader_epoch(log, 7) == 4  # a batch read in part
    assert last_batch_leader_epoch(log, 10) == 4
    assert last_batch_leader_epoch(log, 0) == fmt.NO_PARTITION_LEADER_EPOCH
    assert last_batch_leader_epoch(b"", 10) == fmt.NO_PARTITION_LEADER_EPOCH
    assert last_batch_leader_epoch(BATCH_A + BATCH_B[:30], 10) == 4  # an incomplete tail
    assert last_batch_leader_epoch(BATCH_A + BATCH_B[:16], 10) == 3  # no magic byte yet
    assert last_batch_leader_epoch(legacy_message(0, None, b"x"), 1) == -1
    assert last_batch_leader_epoch(memoryview(log), 10) == 4


def test_last_batch_leader_epoch_counts_control_batches_and_gaps() -> None:
    marker = batch_v2(  # an end-transaction marker (KIP-98) written at leader epoch 5
        [Rec(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07", 0)],
        base_offset=10,
        control=True,
        transactional=True,
        producer_id=1,
        leader_epoch=5,
    )
    log = BATCH_A + marker + batch_v2(_recs(2), base_offset=20, leader_epoch=6)
    assert last_batch_leader_epoch(log, 11) == 5
    assert last_batch_leader_epoch(log, 20) == 5  # a compacted gap after the marker
    assert last_batch_leader_epoch(log, 22) == 6
    assert last_batch_leader_epoch(control_batch(0, 1, commit=True), 1) == 0


@pytest.mark.parametrize("length", [-12, -1000])
def test_a_negative_batch_length_ends_the_walk(length: int) -> None:
    bad = bytearray(BATCH_B)
    bad[8:12] = length.to_bytes(4, "big", signed=True)
    assert last_batch_leader_epoch(BATCH_A + bytes(bad), 100) == 4


def test_every_peek_of_a_walk_agrees_with_the_walk() -> None:
    log = BATCH_A + BATCH_B + legacy_message(10, None, b"x", magic=1)
    pos, frames = 0, []
    while (frame := peek_batch_header(log, pos)) is not None:
        frames.append(frame)
        pos += fmt.LOG_OVERHEAD + frame.batch_length
    assert pos == len(log)
    assert [f.base_offset for f in frames] == [0, 5, 10]
    for f in frames:
        assert last_batch_leader_epoch(log, f.base_offset + 1) == f.partition_leader_epoch
