"""Partition assignors run by the group leader: ``range``, ``roundrobin``,
``cooperative-sticky``.

An assignor maps the group's members (with their subscriptions) and the partition counts of
the subscribed topics to each member's partitions. Results equal those of Kafka's Java
assignors (``org.apache.kafka.clients.consumer.RangeAssignor``, ``RoundRobinAssignor`` and
``CooperativeStickyAssignor``, without rack information) for the same input;
``tests/consumer/group`` checks this against the Java classes of the Kafka release under test.

Member order of range/roundrobin, as Java's ``AbstractPartitionAssignor.MemberInfo``: members
with a ``group.instance.id`` (static members, KIP-345) first, ordered by instance id; then the
others ordered by member id.

``cooperative-sticky`` (KIP-429; KIP-341 for the generation in the user data; KIP-792 for the
subscription's ``generation_id``) is :func:`cooperative_sticky_assign`, written from the
behaviour of Java's ``AbstractStickyAssignor`` (``ConstrainedAssignmentBuilder`` when every
member subscribes to the same topics, ``GeneralAssignmentBuilder`` otherwise) and
``CooperativeStickyAssignor`` (the removal of partitions that change owner in this round).
Where the Java code depends on iteration orders we reproduce them:

* members are visited in member-id order (the harness ``PrintAssignments`` passes them in a
  ``TreeMap``; Java's own leader passes a ``HashMap``, so a Java leader may resolve the rare
  same-generation double claims among three or more members differently);
* the constrained builder visits owners in the order of a ``java.util.HashMap`` keyed by
  member id, and the general builder picks "the first" partition of a ``HashSet`` of moved
  partitions: both are emulated (``String.hashCode``, ``TopicPartition.hashCode``, table size
  and resizes, insertion order within a bucket) by :class:`_JavaHashOrder`. Not emulated: bins
  Java turns into trees (9 or more keys in one bucket of a table of 64 or more buckets), whose
  order may differ.

Not implemented: rack-aware assignment (KIP-881). The leader knows no replica racks, so it
assigns as Java does when rack information is absent, even if members send ``rack_id``.
Member ids and topic names are compared as Python strings (code points), as Java does for
characters of the Basic Multilingual Plane.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from spark_kafka_py.consumer.group.protocol import Subscription
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError

__all__ = [
    "ASSIGNORS",
    "COOPERATIVE_ASSIGNORS",
    "Assignor",
    "Member",
    "cooperative_sticky_assign",
    "cooperative_user_data",
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


# -- cooperative-sticky ------------------------------------------------------------------------

#: ``AbstractStickyAssignor.DEFAULT_GENERATION``: no generation known.
DEFAULT_GENERATION = -1
_MASK32 = 0xFFFFFFFF
#: ``java.util.HashMap``: default table size, load factor 3/4, a bin of 9 keys resizes a table
#: smaller than 64 buckets (``TREEIFY_THRESHOLD`` 8, ``MIN_TREEIFY_CAPACITY`` 64).
_JAVA_DEFAULT_CAPACITY = 16
_JAVA_TREEIFY_BIN = 9
_JAVA_MIN_TREEIFY_CAPACITY = 64

K = TypeVar("K", bound=Hashable)


def _java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as an unsigned 32-bit int."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return h


def _java_tp_hash(tp: TopicPartition) -> int:
    """Kafka's ``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return (31 * ((31 + tp.partition) & _MASK32) + _java_string_hash(tp.topic)) & _MASK32


class _JavaHashOrder(Generic[K]):
    """The keys of a ``java.util.HashMap`` / ``HashSet`` in Java's iteration order.

    Java iterates bucket by bucket (``(h ^ h >>> 16) & (capacity - 1)``), and within a bucket
    in insertion order (a resize splits a bucket keeping that order). The capacity starts at
    16 and doubles when the size exceeds 3/4 of it, or when a bin reaches 9 keys in a table
    smaller than 64 buckets. It never shrinks.
    """

    def __init__(self, hash_fn: Callable[[K], int], keys: Iterable[K] = ()) -> None:
        self._hash_fn = hash_fn
        self._capacity = _JAVA_DEFAULT_CAPACITY
        self._seq = 0
        self._keys: dict[K, int] = {}
        for key in keys:
            self.add(key)

    def _bucket(self, key: K) -> int:
        h = self._hash_fn(key)
        return (h ^ (h >> 16)) & (self._capacity - 1)

    def add(self, key: K) -> None:
        if key in self._keys:
            return
        self._keys[key] = self._seq
        self._seq += 1
        if self._capacity < _JAVA_MIN_TREEIFY_CAPACITY:
            bucket = self._bucket(key)
            if sum(1 for k in self._keys if self._bucket(k) == bucket) >= _JAVA_TREEIFY_BIN:
                self._capacity *= 2
        if len(self._keys) > self._capacity * 3 // 4:
            self._capacity *= 2

    def discard(self, key: K) -> None:
        self._keys.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def ordered(self) -> list[K]:
        return sorted(self._keys, key=lambda k: (self._bucket(k), self._keys[k]))

    def first(self) -> K:
        return min(self._keys, key=lambda k: (self._bucket(k), self._keys[k]))


def cooperative_user_data(generation: int) -> bytes:
    """The user data Java's ``CooperativeStickyAssignor.subscriptionUserData`` sends: the
    generation of the owned partitions as one ``int32`` (schema ``generation``, KIP-341),
    for leaders that read subscriptions older than v2."""
    return struct.pack(">i", generation)


def _member_generation(sub: Subscription) -> int | None:
    """``CooperativeStickyAssignor.memberData(...).generation``: the subscription's
    ``generation_id`` (v2+) when set, else the ``int32`` of the user data, -1 if the user data
    is shorter, ``None`` without user data."""
    if sub.generation_id >= 0:
        return sub.generation_id
    if sub.user_data is None:
        return None
    if len(sub.user_data) < 4:
        return DEFAULT_GENERATION
    generation: int = struct.unpack_from(">i", sub.user_data)[0]
    return generation


def _remove(items: list[TopicPartition], tp: TopicPartition) -> None:
    """Java's ``List.remove(Object)``: the first occurrence, if any."""
    if tp in items:
        items.remove(tp)


@dataclass
class _Owned:
    """What ``AbstractStickyAssignor.allSubscriptionsEqual`` finds."""

    all_equal: bool
    owned: dict[str, list[TopicPartition]]
    multiple_owners: set[TopicPartition]
    max_generation: int


def _owned_partitions(topics: Mapping[str, int], subs: Mapping[str, Subscription]) -> _Owned:
    """Whether all members subscribe to the same topics, and each member's owned partitions
    of subscribed topics after settling double claims: the higher generation keeps the
    partition; two claims of the same generation invalidate it for both."""
    all_equal = True
    subscribed: set[str] = set()
    owner_of: dict[TopicPartition, str] = {}
    owned: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    max_generation = DEFAULT_GENERATION
    for member_id, sub in subs.items():
        if not subscribed:
            subscribed = set(sub.topics)
        elif all_equal and not (
            len(sub.topics) == len(subscribed) and subscribed.issuperset(sub.topics)
        ):
            all_equal = False
        generation = _member_generation(sub)
        mine_generation = DEFAULT_GENERATION if generation is None else generation
        max_generation = max(max_generation, mine_generation)
        mine: list[TopicPartition] = []
        owned[member_id] = mine
        for tp in sub.owned_partitions:
            if tp.topic not in topics:
                continue
            other = owner_of.get(tp)
            if other is None:
                mine.append(tp)
                owner_of[tp] = member_id
                continue
            # Java compares with the other's Subscription.generationId(), not its user data.
            other_generation = max(subs[other].generation_id, DEFAULT_GENERATION)
            if mine_generation == other_generation:
                multiple.add(tp)
                _remove(owned[other], tp)
                owner_of[tp] = member_id
            elif mine_generation > other_generation:
                mine.append(tp)
                _remove(owned[other], tp)
                owner_of[tp] = member_id
    return _Owned(all_equal, owned, multiple, max_generation)


def _unassigned(
    all_partitions: list[TopicPartition],
    assigned: list[TopicPartition],
    sort_key: Callable[[TopicPartition], tuple[int | str, ...]],
) -> list[TopicPartition]:
    """``getUnassignedPartitions``: the two-pointer walk over ``all_partitions`` (in
    ``sort_key`` order) skipping the sorted ``assigned`` ones, exactly as Java walks it."""
    if not assigned:
        return list(all_partitions)
    ordered = iter(sorted(assigned, key=sort_key))
    following = next(ordered)
    direct = False
    out: list[TopicPartition] = []
    for tp in all_partitions:
        if direct or following != tp:
            out.append(tp)
        else:
            try:
                following = next(ordered)
            except StopIteration:
                direct = True
    return out


def _constrained(
    topics: Mapping[str, int], found: _Owned
) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str]]:
    """``ConstrainedAssignmentBuilder`` (all subscriptions equal), without racks.

    Returns ``(assignment, partitions transferring ownership -> new owner)``.
    """
    owned = found.owned
    total = sum(topics.values())
    members = len(owned)
    min_quota, max_quota = total // members, -(-total // members)
    expected_over = total % members
    current_over = 0
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in owned}
    assigned: list[TopicPartition] = []
    maybe_revoked: dict[TopicPartition, str] = {}
    under: list[str] = []  # unfilledMembersWithUnderMinQuotaPartitions
    exact: list[str] = []  # unfilledMembersWithExactlyMinQuotaPartitions
    for member in _JavaHashOrder(_java_string_hash, owned).ordered():
        mine = sorted(owned[member], key=lambda tp: (tp.partition, tp.topic))
        for tp in found.multiple_owners:
            _remove(mine, tp)
        if len(mine) < min_quota:
            assignment[member].extend(mine)
            assigned.extend(mine)
            under.append(member)
        elif len(mine) >= max_quota and current_over < expected_over:
            current_over += 1
            if current_over == expected_over:
                exact.clear()
            assignment[member].extend(mine[:max_quota])
            assigned.extend(mine[:max_quota])
            maybe_revoked.update(dict.fromkeys(mine[max_quota:], member))
        else:
            assignment[member].extend(mine[:min_quota])
            assigned.extend(mine[:min_quota])
            maybe_revoked.update(dict.fromkeys(mine[min_quota:], member))
            if current_over < expected_over:
                exact.append(member)
    everything = [TopicPartition(t, p) for t in sorted(topics) for p in range(topics[t])]
    unassigned = _unassigned(everything, assigned, lambda tp: (tp.topic, tp.partition))
    under.sort()
    exact.sort()

    transferring: dict[TopicPartition, str] = {}
    pos = 0  # the Java iterator over `under`: index of its next element
    for tp in unassigned:
        from_iterator = True
        if pos < len(under):
            member = under[pos]
            pos += 1
        elif not under and not exact:
            raise RuntimeError("cooperative-sticky: no more unfilled consumers to be assigned")
        elif not under:
            member = exact.pop(0)
            from_iterator = False
        else:
            member = under[0]
            pos = 1
        assignment[member].append(tp)
        previous = maybe_revoked.get(tp)
        if (previous is not None and previous != member) or tp in found.multiple_owners:
            transferring[tp] = member
        count = len(assignment[member])
        if count == min_quota:
            if not from_iterator:  # Java: IllegalStateException from Iterator.remove
                raise RuntimeError("cooperative-sticky: inconsistent quotas")
            pos -= 1
            del under[pos]
            exact.append(member)
        elif count == max_quota:
            current_over += 1
    if under and (
        current_over != expected_over or any(len(assignment[m]) != min_quota for m in under)
    ):
        raise RuntimeError("cooperative-sticky: a member did not reach its quota")
    return assignment, transferring


class _Movements:
    """``AbstractStickyAssignor.PartitionMovements``: partitions moved in this round, per
    topic and (source, destination) pair, to move a partition back rather than another one."""

    def __init__(self) -> None:
        self.moves: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], _JavaHashOrder[TopicPartition]]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        pairs = self.by_topic[tp.topic]
        pairs[pair].discard(tp)
        if not len(pairs[pair]):
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        pairs = self.by_topic.setdefault(tp.topic, {})
        pairs.setdefault(pair, _JavaHashOrder(_java_tp_hash)).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            source, _ = self._remove_record(tp)
            if source != new:
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        pairs = self.by_topic.get(tp.topic)
        if pairs is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = pairs.get((new, old))
        return tp if reverse is None else reverse.first()


class _General:
    """``GeneralAssignmentBuilder`` (subscriptions differ), without racks."""

    def __init__(
        self, topics: Mapping[str, int], subs: Mapping[str, Subscription], found: _Owned
    ) -> None:
        self.topics = topics
        self.subs = subs
        self.max_generation = found.max_generation
        self.total = sum(topics.values())
        self.current = found.owned
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in topics}
        self.consumer_topics: dict[str, list[str]] = {}
        for member_id, sub in subs.items():
            mine = [t for t in sub.topics if t in topics]
            self.consumer_topics[member_id] = mine
            for t in mine:
                self.topic_consumers[t].append(member_id)
            self.current.setdefault(member_id, [])
        self.partition_consumer = {tp: m for m, ps in self.current.items() for tp in ps}
        self.active: set[str] = set()  # sortedCurrentSubscriptions
        self.movements = _Movements()

    def _topic_key(self, tp: TopicPartition) -> tuple[int, str, int]:
        return (len(self.topic_consumers[tp.topic]), tp.topic, tp.partition)

    def _sorted_members(self) -> list[str]:
        return sorted(self.active, key=lambda m: (len(self.current[m]), m))

    def _max_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.topics):
            return self.total
        return sum(self.topics[t] for t in topics)

    def build(self) -> dict[str, list[TopicPartition]]:
        prev: dict[TopicPartition, tuple[str, int]] = {}
        for member_id, sub in self.subs.items():
            generation = _member_generation(sub)
            if generation is not None and generation < self.max_generation:
                gen = generation
            elif generation is None and self.max_generation > DEFAULT_GENERATION:
                gen = DEFAULT_GENERATION
            else:
                continue
            for tp in sub.owned_partitions:
                if tp not in prev or gen > prev[tp][1]:
                    prev[tp] = (member_id, gen)

        revocation_required = False
        assigned: list[TopicPartition] = []
        for member_id, partitions in self.current.items():
            keep: list[TopicPartition] = []
            for tp in partitions:
                if tp.topic not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in self.subs[member_id].topics:
                    revocation_required = True
                else:
                    keep.append(tp)
                    assigned.append(tp)
            partitions[:] = keep
        ordered_topics = sorted(
            self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), t)
        )
        everything = [TopicPartition(t, p) for t in ordered_topics for p in range(self.topics[t])]
        unassigned = _unassigned(everything, assigned, self._topic_key)
        self.active = set(self.current)
        self._balance(prev, everything, unassigned, revocation_required)
        return self.current

    def _balance(
        self,
        prev: dict[TopicPartition, tuple[str, int]],
        everything: list[TopicPartition],
        unassigned: list[TopicPartition],
        revocation_required: bool,
    ) -> None:
        current = self.current
        initializing = not current[self._sorted_members()[-1]]
        for tp in unassigned:
            if not self.topic_consumers[tp.topic]:
                continue
            for member in self._sorted_members():
                if tp.topic in self.consumer_topics[member]:
                    current[member].append(tp)
                    self.partition_consumer[tp] = member
                    break
        fixed = {
            TopicPartition(t, p)
            for t, consumers in self.topic_consumers.items()
            if len(consumers) < 2
            for p in range(self.topics[t])
        }
        everything = [tp for tp in everything if tp not in fixed]
        unassigned = [tp for tp in unassigned if tp not in fixed]
        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for member in self.consumer_topics:
            if not self._can_participate(member):
                self.active.discard(member)
                fixed_assignments[member] = current.pop(member)
        before = {m: list(ps) for m, ps in current.items()}
        before_owners = dict(self.partition_consumer)
        if not revocation_required:
            self._reassign_all(unassigned, prev)
        performed = self._reassign_all(everything, prev)
        if not initializing and performed and _balance_score(current) >= _balance_score(before):
            current.clear()
            current.update(before)
            self.partition_consumer = before_owners
        current.update(fixed_assignments)

    def _can_participate(self, member: str) -> bool:
        partitions = self.current[member]
        if len(partitions) < self._max_size(self.consumer_topics[member]):
            return True
        return any(len(self.topic_consumers[tp.topic]) >= 2 for tp in partitions)

    def _is_balanced(self) -> bool:
        current = self.current
        members = self._sorted_members()
        if len(current[members[0]]) >= len(current[members[-1]]) - 1:
            return True
        owners = {tp: m for m, ps in current.items() for tp in ps}
        for member in members:
            count = len(current[member])
            mine_topics = self.consumer_topics[member]
            if count == self._max_size(mine_topics):
                continue
            mine = set(current[member])
            for t in mine_topics:
                for p in range(self.topics[t]):
                    tp = TopicPartition(t, p)
                    if tp not in mine and count + 1 < len(current[owners[tp]]):
                        return False
        return True

    def _reassign_all(
        self, partitions: list[TopicPartition], prev: dict[TopicPartition, tuple[str, int]]
    ) -> bool:
        current = self.current
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                member = self.partition_consumer[tp]
                if tp in prev and len(current[member]) > len(current[prev[tp][0]]) + 1:
                    self._reassign(tp, prev[tp][0])
                    performed = modified = True
                    continue
                for other in self.topic_consumers[tp.topic]:
                    if len(current[member]) > len(current[other]) + 1:
                        target = next(
                            m for m in self._sorted_members() if tp.topic in self.consumer_topics[m]
                        )
                        self._reassign(tp, target)
                        performed = modified = True
                        break
        return performed

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        moved = self.movements.actual_partition(tp, self.partition_consumer[tp], new)
        old = self.partition_consumer[moved]
        self.movements.move(moved, old, new)
        _remove(self.current[old], moved)
        self.current[new].append(moved)
        self.partition_consumer[moved] = new


def _balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    sizes = [len(ps) for ps in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])


def _transferring(
    subs: Mapping[str, Subscription], assignment: Mapping[str, list[TopicPartition]]
) -> dict[TopicPartition, str]:
    """``CooperativeStickyAssignor.computePartitionsTransferringOwnership``: partitions
    assigned to a member that did not own them while another member owned them."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member_id, partitions in assignment.items():
        owned = subs[member_id].owned_partitions
        owned_set = set(owned)
        added.update({tp: member_id for tp in partitions if tp not in owned_set})
        assigned_set = set(partitions)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: m for tp, m in added.items() if tp in revoked}


def cooperative_sticky_assign(
    partitions_per_topic: Mapping[str, int], members: list[Member]
) -> dict[str, list[TopicPartition]]:
    """Kafka's ``cooperative-sticky`` strategy (Java ``CooperativeStickyAssignor``, KIP-429).

    Balanced (member partition counts differ by at most one where subscriptions allow) and
    sticky: members keep the partitions they own (``Subscription.owned_partitions``, valid for
    the generation in ``generation_id`` or, before v2, in the user data). A partition that
    moves from one member to another is left out of this round's assignment: its owner gives it
    up (it is not in the owner's assignment either), rejoins, and the next round assigns it.

    Args:
        partitions_per_topic: ``{topic: partition count}``; topics nobody subscribes to and
            topics with no partitions are ignored.
        members: the group's members with their subscriptions.

    Returns:
        ``{member_id: sorted partitions}`` for every member.

    Raises:
        RuntimeError: input on which Java's assignor throws too (``IllegalStateException`` on
            inconsistent quotas; ``NullPointerException`` when a partition's previous owner of
            an older generation takes no part in the reassignment, e.g. it owned a partition of
            a topic it no longer subscribes to and all its topics have no other subscriber).
    """
    if not members:
        return {}
    subs = {m.member_id: m.subscription for m in sorted(members, key=lambda m: m.member_id)}
    subscribed = {t for s in subs.values() for t in s.topics}
    topics = {t: n for t, n in partitions_per_topic.items() if t in subscribed and n > 0}
    found = _owned_partitions(topics, subs)
    if found.all_equal:
        assignment, transferring = _constrained(topics, found)
    else:
        try:
            assignment = _General(topics, subs, found).build()
        except KeyError as exc:  # where Java's builder dereferences null
            raise RuntimeError(
                f"cooperative-sticky: the general assignment fails on this input (Java's "
                f"AbstractStickyAssignor throws NullPointerException): member {exc} no longer "
                "takes part in the reassignment"
            ) from exc
        transferring = _transferring(subs, assignment)
    for tp, member_id in transferring.items():
        _remove(assignment[member_id], tp)
    return {m: sorted(ps) for m, ps in assignment.items()}


#: Assignors by ``partition.assignment.strategy`` name (Java ``ConsumerPartitionAssignor.name()``).
ASSIGNORS: dict[str, Assignor] = {
    "range": range_assign,
    "roundrobin": roundrobin_assign,
    "cooperative-sticky": cooperative_sticky_assign,
}
#: Assignors that support the COOPERATIVE rebalance protocol (Java ``supportedProtocols()``);
#: a member uses it only when all its assignors do, as Java's ``ConsumerCoordinator``.
COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})

_JAVA_CLASS_NAMES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
}


def get_assignor(name: str) -> str:
    """The protocol name for a ``kafka.partition.assignment.strategy`` entry.

    Accepts the protocol names (``range``, ``roundrobin``, ``cooperative-sticky``) and the
    Java class names of the same assignors. The eager ``sticky`` assignor is not supported.

    Raises:
        ConfigError: an unknown or not yet supported strategy, naming the option.
    """
    key = name.strip()
    key = _JAVA_CLASS_NAMES.get(key, key).lower()
    if key in ASSIGNORS:
        return key
    if key == "sticky":
        raise ConfigError(
            f"Option 'kafka.partition.assignment.strategy': {name!r} is not supported by "
            "format('pykafka'); use 'cooperative-sticky', 'range' or 'roundrobin'"
        )
    raise ConfigError(
        f"Option 'kafka.partition.assignment.strategy': unknown assignor {name!r}; expected "
        f"one of {sorted(ASSIGNORS)}"
    )
