"""ConsumerProtocolSubscription / ConsumerProtocolAssignment: golden bytes, round trips, every
truncation, forward compatibility, and hypothesis fuzz (errors are KafkaProtocolError only)."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_kafka_py.consumer.group.protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafka_py.consumer.types import TopicPartition as TP
from spark_kafka_py.errors import KafkaProtocolError


def _s(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_subscription_v0_golden() -> None:
    # int16 version 0, [topics] = ["ab"], user_data null (-1)
    assert encode_subscription(Subscription(("ab",)), 0) == (
        b"\x00\x00" + b"\x00\x00\x00\x01" + _s("ab") + b"\xff\xff\xff\xff"
    )


def test_subscription_v3_golden() -> None:
    sub = Subscription(("t",), b"u", (TP("t", 2), TP("t", 5)), 7, "r1")
    expected = (
        b"\x00\x03"
        + b"\x00\x00\x00\x01"
        + _s("t")
        + b"\x00\x00\x00\x01u"
        + b"\x00\x00\x00\x01"
        + _s("t")
        + b"\x00\x00\x00\x02"
        + b"\x00\x00\x00\x02\x00\x00\x00\x05"
        + b"\x00\x00\x00\x07"
        + _s("r1")
    )
    assert encode_subscription(sub) == expected
    assert decode_subscription(expected) == sub


def test_assignment_golden() -> None:
    a = Assignment((TP("x", 0), TP("x", 1), TP("y", 3)))
    expected = (
        b"\x00\x03"
        + b"\x00\x00\x00\x02"
        + _s("x")
        + b"\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01"
        + _s("y")
        + b"\x00\x00\x00\x01\x00\x00\x00\x03"
        + b"\xff\xff\xff\xff"
    )
    assert encode_assignment(a) == expected
    assert decode_assignment(expected) == a
    assert decode_assignment(b"") == Assignment()


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_every_version_round_trip(version: int) -> None:
    full = Subscription(("a", "b"), b"\x00\x01", (TP("a", 1),), 4, "rack")
    got = decode_subscription(encode_subscription(full, version))
    assert got.topics == full.topics and got.user_data == full.user_data
    assert got.owned_partitions == (full.owned_partitions if version >= 1 else ())
    assert got.generation_id == (4 if version >= 2 else -1)
    assert got.rack_id == ("rack" if version >= 3 else None)


def test_newer_versions_read_as_newest_known() -> None:
    data = bytearray(encode_subscription(Subscription(("a",))))
    data[0:2] = b"\x00\x09"
    assert decode_subscription(bytes(data) + b"future field").topics == ("a",)
    adata = bytearray(encode_assignment(Assignment((TP("a", 0),))))
    adata[0:2] = b"\x00\x04"
    assert decode_assignment(bytes(adata) + b"\x01").partitions == (TP("a", 0),)


def test_every_truncation_and_trailing_bytes_fail_cleanly() -> None:
    sub = encode_subscription(Subscription(("topic",), b"ud", (TP("topic", 0),), 1, "r"))
    for n in range(len(sub)):
        with pytest.raises(KafkaProtocolError):
            decode_subscription(sub[:n])
    with pytest.raises(KafkaProtocolError, match="trailing"):
        decode_subscription(sub + b"\x00")
    asg = encode_assignment(Assignment((TP("topic", 0),), b"x"))
    for n in range(1, len(asg)):
        with pytest.raises(KafkaProtocolError):
            decode_assignment(asg[:n])
    with pytest.raises(KafkaProtocolError, match="negative version"):
        decode_assignment(b"\xff\xff" + asg[2:])


def test_forged_counts_do_not_allocate() -> None:
    with pytest.raises(KafkaProtocolError, match="exceeds"):
        decode_subscription(b"\x00\x00\x7f\xff\xff\xff")
    with pytest.raises(KafkaProtocolError, match="exceeds"):
        decode_assignment(b"\x00\x00\x00\x00\x00\x01" + _s("t") + b"\x7f\xff\xff\xff")


_topics = st.text(alphabet="abcxyz._-", min_size=1, max_size=8)


@given(
    st.lists(_topics, max_size=4),
    st.one_of(st.none(), st.binary(max_size=8)),
    st.lists(st.tuples(_topics, st.integers(0, 2**31 - 1)), max_size=5),
    st.integers(-1, 2**31 - 1),
    st.one_of(st.none(), _topics),
)
def test_subscription_round_trip_property(topics, user_data, owned, generation, rack) -> None:  # type: ignore[no-untyped-def]
    # owned partitions are grouped by topic on the wire: order them so the round trip is exact
    owned_tps = tuple(sorted(TP(t, p) for t, p in owned))
    sub = Subscription(tuple(topics), user_data, owned_tps, generation, rack)
    got = decode_subscription(encode_subscription(sub))
    assert got.topics == sub.topics and got.user_data == user_data
    assert sorted(got.owned_partitions) == sorted(owned_tps)
    assert (got.generation_id, got.rack_id) == (generation, rack)


@given(st.binary(max_size=64))
def test_fuzz_only_protocol_errors(data: bytes) -> None:
    for decode in (decode_subscription, decode_assignment):
        with contextlib.suppress(KafkaProtocolError):
            decode(data)
