"""``kafka.check.crcs`` reaches the executor's Fetch loop (no real broker: a scripted leader).

A response whose batches carry wrong CRCs fails the read with the default setting, naming the
topic-partition and the batch's offset, and is read whole with ``check_crcs=False``, as the Java
consumer's ``check.crcs``.
"""

from __future__ import annotations

import dataclasses

import pytest

from spark_kafka_py.errors import CorruptRecordError
from tests.consumer.decompression_bomb import serve, settings_for
from tests.records.encoder import Rec, batch_v2

#: Where a v2 batch's CRC-32C is (baseOffset int64, batchLength int32, leaderEpoch int32,
#: magic int8: ``DefaultRecordBatch``).
CRC_AT = 17


def _batches(count: int, wrong_from: int) -> list[bytes]:
    """``count`` one-record batches at offsets 0.., the CRC of those from ``wrong_from`` on
    flipped."""
    out = []
    for i in range(count):
        one = bytearray(batch_v2([Rec(b"k%d" % i, b"v%d" % i, 0)], base_offset=i))
        if i >= wrong_from:
            one[CRC_AT] ^= 0xFF
        out.append(bytes(one))
    return out


def test_wrong_crcs_fail_the_read_by_default_and_are_read_with_the_check_off():
    batches = _batches(6, wrong_from=2)
    settings = settings_for(64 * 1024, None)
    assert settings.check_crcs is True
    with pytest.raises(CorruptRecordError, match="CRC-32C mismatch") as info:
        for _ in serve(batches, settings):
            pass
    assert (info.value.topic, info.value.partition, info.value.offset) == ("t", 0, 2)

    off = dataclasses.replace(settings, check_crcs=False)
    values = [v for b in serve(batches, off) for v in b.column("value").to_pylist()]
    assert values == [b"v%d" % i for i in range(6)]
    # the same rows as the same batches with good CRCs
    good = [v for b in serve(_batches(6, wrong_from=6), settings) for v in b.column("value")]
    assert [v.as_py() for v in good] == values
