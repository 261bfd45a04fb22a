"""Partition assignors run by the group leader: ``range`` and ``roundrobin``.

An assignor maps the group's members (with their subscriptions) and the partition counts of
the subscribed topics to each member's partitions. Results equal those of Kafka's Java
assignors (``org.apache.kafka.clients.consumer.RangeAssignor`` and ``RoundRobinAssignor``,
without rack information) for the same input; ``tests/consumer/group`` checks this against
the Java classes of the Kafka release under test.

Member order, as Java's ``AbstractPartitionAssignor.MemberInfo``: members with a
``group.instance.id`` (static members, KIP-345) first, ordered by instance id; then the others
ordered by member id.

``cooperative-sticky`` (KIP-429) is not implemented yet; :func:`get_assignor` rejects it with
a :class:`~spark_kafka_py.errors.ConfigError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from spark_kafka_py.consumer.group.protocol import Subscription
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError

__all__ = [
    "ASSIGNORS",
    "Assignor",
    "Member",
    "get_assignor",
    "member_order",
    "range_assign",
    "roundrobin_assign",
]


@dataclass(frozen=True, slots=True)
class Member:
    """A group member as the leader sees it in JoinGroup's ``members``."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None


#: ``assign(partition counts by topic, members) -> {member_id: sorted partitions}``.
Assignor = Callable[[Mapping[str, int], list[Member]], dict[str, list[TopicPartition]]]


def member_order(member: Member) -> tuple[int, str]:
    """Sort key equal to Java's ``MemberInfo.compareTo``: static members first, by instance
    id, then dynamic members by member id."""
    if member.group_instance_id is not None:
        return (0, member.group_instance_id)
    return (1, member.member_id)


def range_assign(
    partitions_per_topic: Mapping[str, int], members: list[Member]
) -> dict[str, list[TopicPartition]]:
    """Kafka's ``range`` strategy: per topic, contiguous ranges of partitions to the members
    subscribed to it, in :func:`member_order`; the first ``partitions % members`` members get
    one extra partition.

    Topics a member subscribes to that are not in ``partitions_per_topic`` (unknown to the
    cluster) are skipped, as the Java assignor does.
    """
    result: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    ordered = sorted(members, key=member_order)
    for topic in sorted(partitions_per_topic):
        count = partitions_per_topic[topic]
        consumers = [m for m in ordered if topic in m.subscription.topics]
        if not consumers or count <= 0:
            continue
        per, extra = divmod(count, len(consumers))
        for i, m in enumerate(consumers):
            start = per * i + min(i, extra)
            length = per + (1 if i < extra else 0)
            result[m.member_id].extend(
                TopicPartition(topic, p) for p in range(start, start + length)
            )
    return {k: sorted(v) for k, v in result.items()}


def roundrobin_assign(
    partitions_per_topic: Mapping[str, int], members: list[Member]
) -> dict[str, list[TopicPartition]]:
    """Kafka's ``roundrobin`` strategy: every subscribed partition, sorted by topic then
    partition, dealt in turn to the members in :func:`member_order`, skipping members not
    subscribed to the partition's topic."""
    result: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    ordered = sorted(members, key=member_order)
    if not ordered:
        return result
    topics = sorted(
        {t for m in members for t in m.subscription.topics if t in partitions_per_topic}
    )
    i = 0
    for topic in topics:
        for p in range(partitions_per_topic[topic]):
            while topic not in ordered[i % len(ordered)].subscription.topics:
                i += 1
            result[ordered[i % len(ordered)].member_id].append(TopicPartition(topic, p))
            i += 1
    return {k: sorted(v) for k, v in result.items()}


#: Assignors by ``partition.assignment.strategy`` name (Java ``ConsumerPartitionAssignor.name()``).
ASSIGNORS: dict[str, Assignor] = {"range": range_assign, "roundrobin": roundrobin_assign}

_JAVA_CLASS_NAMES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
}


def get_assignor(name: str) -> str:
    """The protocol name for a ``kafka.partition.assignment.strategy`` entry.

    Accepts the protocol names (``range``, ``roundrobin``) and the Java class names of the
    same assignors.

    Raises:
        ConfigError: an unknown or not yet supported strategy, naming the option.
    """
    key = name.strip()
    key = _JAVA_CLASS_NAMES.get(key, key).lower()
    if key in ASSIGNORS:
        return key
    if key in ("cooperative-sticky", "sticky"):
        raise ConfigError(
            f"Option 'kafka.partition.assignment.strategy': {name!r} is not supported yet by "
            "format('pykafka'); use 'range' or 'roundrobin'"
        )
    raise ConfigError(
        f"Option 'kafka.partition.assignment.strategy': unknown assignor {name!r}; expected "
        f"one of {sorted(ASSIGNORS)}"
    )
