"""The ``consumer`` embedded protocol: subscription and assignment bytes of classic groups.

Members of a group with protocol type ``"consumer"`` put a ``ConsumerProtocolSubscription`` in
JoinGroup's ``protocols[].metadata``; the leader sends each member a
``ConsumerProtocolAssignment`` in SyncGroup's ``assignments[].assignment``. Both start with an
``int16`` version and are not flexible.

Source: Kafka message specs ``ConsumerProtocolSubscription.json`` (versions 0-3: v0 ``topics``
[string], ``user_data`` nullable bytes; v1 ``owned_partitions`` [topic string, partitions
[int32]] (KIP-429); v2 ``generation_id`` int32, default -1 (KIP-792); v3 ``rack_id``
nullable string (KIP-881)) and ``ConsumerProtocolAssignment.json`` (versions 0-3, every
version: ``assigned_partitions`` [topic, partitions], ``user_data`` nullable bytes).
As Java's ``ConsumerProtocol``, a version newer than we know is decoded as the newest we know
(fields appended by later versions are ignored); we write version 3.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaProtocolError
from spark_kafka_py.protocol.primitives import Reader, Writer

__all__ = [
    "ASSIGNMENT_VERSION",
    "CONSUMER_PROTOCOL_TYPE",
    "SUBSCRIPTION_VERSION",
    "Assignment",
    "Subscription",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

#: JoinGroup ``protocol_type`` of consumer groups (Java ``ConsumerProtocol.PROTOCOL_TYPE``).
CONSUMER_PROTOCOL_TYPE = "consumer"
#: Newest ``ConsumerProtocolSubscription`` version we read and the one we write.
SUBSCRIPTION_VERSION = 3
#: Newest ``ConsumerProtocolAssignment`` version we read and the one we write.
ASSIGNMENT_VERSION = 3


@dataclass(frozen=True, slots=True)
class Subscription:
    """A member's subscription (``ConsumerProtocolSubscription``).

    Attributes:
        topics: subscribed topic names (order kept as sent).
        user_data: assignor-specific bytes, or ``None``.
        owned_partitions: partitions the member owns now (v1+, used by cooperative assignors).
        generation_id: the generation the owned partitions belong to (v2+, -1 unknown).
        rack_id: the member's ``client.rack`` (v3+), or ``None``.
    """

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True, slots=True)
class Assignment:
    """A member's assignment (``ConsumerProtocolAssignment``): partitions and user data."""

    partitions: tuple[TopicPartition, ...] = field(default_factory=tuple)
    user_data: bytes | None = None


def _write_partitions(w: Writer, partitions: Iterable[TopicPartition]) -> None:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    w.int32(len(by_topic))
    for topic, parts in by_topic.items():
        w.string(topic, "topic")
        w.int32(len(parts))
        for p in parts:
            w.int32(p, "partition")


def _read_partitions(r: Reader, what: str) -> tuple[TopicPartition, ...]:
    out: list[TopicPartition] = []
    n = r.array_length(what, compact=False, nullable=False, min_item_size=6)
    assert n is not None
    for _ in range(n):
        topic = r.string(f"{what} topic")
        m = r.array_length(f"{what} partitions", compact=False, nullable=False, min_item_size=4)
        assert m is not None
        out.extend(TopicPartition(topic, r.int32(f"{what} partition")) for _ in range(m))
    return tuple(out)


def _version(r: Reader, what: str) -> int:
    version = r.int16(f"{what} version")
    if version < 0:
        raise KafkaProtocolError(f"{what}: negative version {version}")
    return version


def encode_subscription(sub: Subscription, version: int = SUBSCRIPTION_VERSION) -> bytes:
    """``ConsumerProtocolSubscription`` bytes (``int16`` version header + body), v0-3."""
    if not 0 <= version <= SUBSCRIPTION_VERSION:
        raise ValueError(f"ConsumerProtocolSubscription version {version} is not 0-3")
    w = Writer()
    w.int16(version)
    w.int32(len(sub.topics))
    for topic in sub.topics:
        w.string(topic, "topic")
    w.nullable_bytes(sub.user_data, "user_data")
    if version >= 1:
        _write_partitions(w, sub.owned_partitions)
    if version >= 2:
        w.int32(sub.generation_id, "generation_id")
    if version >= 3:
        w.nullable_string(sub.rack_id, "rack_id")
    return w.getvalue()


def decode_subscription(data: bytes | bytearray | memoryview) -> Subscription:
    """Decode ``ConsumerProtocolSubscription`` bytes (any version; >3 read as 3).

    Raises:
        KafkaProtocolError: truncated or malformed bytes, a negative version, or trailing
            bytes after a version we know.
    """
    what = "ConsumerProtocolSubscription"
    r = Reader(data)
    version = _version(r, what)
    n = r.array_length(f"{what} topics", compact=False, nullable=False, min_item_size=2)
    assert n is not None
    topics = tuple(r.string(f"{what} topic") for _ in range(n))
    user_data = r.nullable_bytes(f"{what} user_data")
    owned: tuple[TopicPartition, ...] = ()
    generation = -1
    rack: str | None = None
    if version >= 1:
        owned = _read_partitions(r, f"{what} owned_partitions")
    if version >= 2:
        generation = r.int32(f"{what} generation_id")
    if version >= 3:
        rack = r.nullable_string(f"{what} rack_id")
    if version <= SUBSCRIPTION_VERSION:
        r.expect_end(what)
    return Subscription(
        topics=topics,
        user_data=None if user_data is None else bytes(user_data),
        owned_partitions=owned,
        generation_id=generation,
        rack_id=rack,
    )


def encode_assignment(assignment: Assignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    """``ConsumerProtocolAssignment`` bytes (``int16`` version header + body), v0-3."""
    if not 0 <= version <= ASSIGNMENT_VERSION:
        raise ValueError(f"ConsumerProtocolAssignment version {version} is not 0-3")
    w = Writer()
    w.int16(version)
    _write_partitions(w, assignment.partitions)
    w.nullable_bytes(assignment.user_data, "user_data")
    return w.getvalue()


def decode_assignment(data: bytes | bytearray | memoryview) -> Assignment:
    """Decode ``ConsumerProtocolAssignment`` bytes (any version; >3 read as 3).

    An empty byte string (what a broker hands a member whose leader assigned it nothing in
    some versions of the Java client) decodes as an empty assignment, as Java's
    ``ConsumerCoordinator`` does.

    Raises:
        KafkaProtocolError: truncated or malformed bytes, a negative version, or trailing
            bytes after a version we know.
    """
    what = "ConsumerProtocolAssignment"
    if len(data) == 0:
        return Assignment()
    r = Reader(data)
    version = _version(r, what)
    partitions = _read_partitions(r, f"{what} assigned_partitions")
    user_data = r.nullable_bytes(f"{what} user_data")
    if version <= ASSIGNMENT_VERSION:
        r.expect_end(what)
    return Assignment(partitions, None if user_data is None else bytes(user_data))


def partitions_by_topic(partitions: Iterable[TopicPartition]) -> Mapping[str, tuple[int, ...]]:
    """``{topic: (partition, ...)}`` sorted by topic then partition."""
    out: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        out.setdefault(tp.topic, []).append(tp.partition)
    return {t: tuple(p) for t, p in out.items()}
