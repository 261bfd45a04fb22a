"""Assignors: the Javadoc examples of Kafka's RangeAssignor/RoundRobinAssignor, and tables of
member/subscription cases compared with what Kafka's Java assignors assign (run from the
kafka-clients jar of the release under test by ``java/PrintAssignments.java``).

``cooperative-sticky`` cases carry owned partitions and generations (consumer protocol v2
``generation_id``); the harness passes members in a ``TreeMap`` (member-id order), which is the
order :func:`cooperative_sticky_assign` uses. Every case is compared exactly, with no exclusion:
hand-written ones (fresh groups, joins, leaves, mixed subscriptions, old generations, double
claims) and seeded random ones.
"""

from __future__ import annotations

import random

import pytest
from group_java import java_classpath

from spark_kafka_py.consumer.group.assignors import (
    ASSIGNORS,
    Member,
    cooperative_sticky_assign,
    cooperative_user_data,
    get_assignor,
    range_assign,
    roundrobin_assign,
)
from spark_kafka_py.consumer.group.protocol import Subscription
from spark_kafka_py.consumer.types import TopicPartition as TP
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.testing.tools import run_tool


def _m(member_id: str, *topics: str, instance: str | None = None) -> Member:
    return Member(member_id, Subscription(tuple(topics)), instance)


def test_range_javadoc_example() -> None:
    # RangeAssignor's Javadoc: t0, t1 with 3 partitions each, consumers C0, C1.
    got = range_assign({"t0": 3, "t1": 3}, [_m("C1", "t0", "t1"), _m("C0", "t0", "t1")])
    assert got == {
        "C0": [TP("t0", 0), TP("t0", 1), TP("t1", 0), TP("t1", 1)],
        "C1": [TP("t0", 2), TP("t1", 2)],
    }


def test_roundrobin_javadoc_example() -> None:
    # RoundRobinAssignor's Javadoc: same input, C0 gets t0p0, t0p2, t1p1.
    got = roundrobin_assign({"t0": 3, "t1": 3}, [_m("C0", "t0", "t1"), _m("C1", "t0", "t1")])
    assert got == {
        "C0": [TP("t0", 0), TP("t0", 2), TP("t1", 1)],
        "C1": [TP("t0", 1), TP("t1", 0), TP("t1", 2)],
    }


def test_static_members_sort_first() -> None:
    got = range_assign({"t": 2}, [_m("a", "t"), _m("z", "t", instance="i")])
    assert got == {"z": [TP("t", 0)], "a": [TP("t", 1)]}


def test_get_assignor_names() -> None:
    assert get_assignor("range") == "range"
    assert get_assignor("org.apache.kafka.clients.consumer.RoundRobinAssignor") == "roundrobin"
    assert get_assignor("cooperative-sticky") == "cooperative-sticky"
    assert (
        get_assignor(" org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
        == "cooperative-sticky"
    )
    with pytest.raises(ConfigError, match=r"kafka.partition.assignment.strategy.*'sticky'"):
        get_assignor("sticky")
    with pytest.raises(ConfigError, match="unknown assignor 'nope'"):
        get_assignor("nope")


#: (name, {topic: partitions}, [(member id, instance id or None, topics)])
CASES: list[tuple[str, dict[str, int], list[tuple[str, str | None, tuple[str, ...]]]]] = [
    ("one", {"t": 4}, [("m1", None, ("t",))]),
    ("even", {"t": 6}, [("m1", None, ("t",)), ("m2", None, ("t",)), ("m3", None, ("t",))]),
    ("uneven", {"t": 7}, [("b", None, ("t",)), ("a", None, ("t",)), ("c", None, ("t",))]),
    ("more_members", {"t": 2}, [(f"m{i}", None, ("t",)) for i in range(4)]),
    (
        "two_topics",
        {"t0": 3, "t1": 5},
        [("x", None, ("t0", "t1")), ("y", None, ("t0", "t1"))],
    ),
    (
        "mixed_subscriptions",
        {"a": 3, "b": 2, "c": 4},
        [("m1", None, ("a",)), ("m2", None, ("a", "b")), ("m3", None, ("a", "b", "c"))],
    ),
    (
        "static_and_dynamic",
        {"t": 5, "u": 3},
        [("d1", None, ("t", "u")), ("s1", "zz", ("t", "u")), ("s2", "aa", ("t",))],
    ),
    ("unknown_topic", {"t": 3}, [("m1", None, ("t", "missing")), ("m2", None, ("t",))]),
    (
        "many",
        {"t0": 11, "t1": 1, "t2": 8},
        [
            (f"member-{i:02d}", None, ("t0", "t1", "t2") if i % 2 else ("t0", "t2"))
            for i in range(7)
        ],
    ),
]


def _python(assignor: str, topics: dict[str, int], members: list) -> dict[str, list[TP]]:  # type: ignore[type-arg]
    return ASSIGNORS[assignor](
        topics, [Member(mid, Subscription(ts), inst) for mid, inst, ts in members]
    )


def _parse(stdout: str) -> dict[str, dict[str, list[TP]]]:
    """PrintAssignments' lines ``<case> <member> <t:p,...|->`` by case and member."""
    java: dict[str, dict[str, list[TP]]] = {}
    for line in stdout.splitlines():
        case, member, parts = line.split(" ")
        if member == "!":  # the Java assignor threw `parts` (an exception class)
            java[case] = {"!": []}
            continue
        java.setdefault(case, {})[member] = [] if parts == "-" else list(_tps(parts))
    return java


@pytest.mark.integration
def test_assignors_equal_java() -> None:
    classpath = java_classpath("PrintAssignments")
    lines: list[str] = []
    for assignor in ("range", "roundrobin"):
        for name, topics, members in CASES:
            lines.append(f"CASE {assignor} {assignor}/{name}")
            lines.extend(f"TOPIC {t} {n}" for t, n in topics.items())
            lines.extend(f"MEMBER {mid} {inst or '-'} {','.join(ts)}" for mid, inst, ts in members)
            lines.append("END")
    out = run_tool("PrintAssignments", [], input="\n".join(lines) + "\n", classpath=classpath)
    java = _parse(out.stdout)
    compared = 0
    for assignor in ("range", "roundrobin"):
        for name, topics, members in CASES:
            expected = java[f"{assignor}/{name}"]
            assert _python(assignor, topics, members) == expected, f"{assignor}/{name}"
            compared += 1
    assert compared == 2 * len(CASES)


# -- cooperative-sticky -----------------------------------------------------------------------


def _tps(text: str) -> tuple[TP, ...]:
    """``"t:0,t:1"`` -> partitions (``""`` -> none)."""
    return tuple(TP(i.rsplit(":", 1)[0], int(i.rsplit(":", 1)[1])) for i in text.split(",") if i)


def _cm(member_id: str, topics: str, owned: str = "", generation: int = -1) -> Member:
    return Member(member_id, Subscription(tuple(topics.split(",")), None, _tps(owned), generation))


def test_cooperative_sticky_fresh_group_is_balanced() -> None:
    got = cooperative_sticky_assign({"t": 5}, [_cm("b", "t"), _cm("a", "t")])
    assert got == {"a": list(_tps("t:0,t:2,t:4")), "b": list(_tps("t:1,t:3"))}


def test_cooperative_sticky_join_moves_nothing_in_the_first_round() -> None:
    # b joins a owner of all 4: a keeps 2 (the others are revoked from it), b gets nothing
    # until a has given them up (second round: a owns 2, b owns none).
    first = cooperative_sticky_assign(
        {"t": 4}, [_cm("a", "t", "t:0,t:1,t:2,t:3", 3), _cm("b", "t")]
    )
    assert first == {"a": list(_tps("t:0,t:1")), "b": []}
    second = cooperative_sticky_assign({"t": 4}, [_cm("a", "t", "t:0,t:1", 4), _cm("b", "t")])
    assert second == {"a": list(_tps("t:0,t:1")), "b": list(_tps("t:2,t:3"))}


def test_cooperative_sticky_generation_from_user_data() -> None:
    # Before subscription v2, the generation is the int32 of the user data (KIP-341): the
    # claim of the member with the newer generation wins.
    old = Member("a", Subscription(("t",), cooperative_user_data(1), _tps("t:0,t:1")))
    new = Member("b", Subscription(("t",), cooperative_user_data(2), _tps("t:0")))
    got = cooperative_sticky_assign({"t": 2}, [old, new])
    assert got == {"a": [TP("t", 1)], "b": [TP("t", 0)]}
    assert cooperative_user_data(7) == b"\x00\x00\x00\x07"


#: (name, {topic: partitions}, [(member id, topics, owned "t:p,...", generation)])
COOP_CASES: list[tuple[str, dict[str, int], list[tuple[str, str, str, int]]]] = [
    ("fresh_one", {"t": 4}, [("m1", "t", "", -1)]),
    ("fresh_even", {"t": 6}, [("m1", "t", "", -1), ("m2", "t", "", -1), ("m3", "t", "", -1)]),
    ("fresh_uneven", {"t": 7}, [("b", "t", "", -1), ("a", "t", "", -1), ("c", "t", "", -1)]),
    ("fresh_more_members", {"t": 2}, [(f"m{i}", "t", "", -1) for i in range(4)]),
    ("fresh_two_topics", {"t0": 3, "t1": 5}, [("x", "t0,t1", "", -1), ("y", "t0,t1", "", -1)]),
    (
        "join_balanced_group",
        {"t": 4},
        [("a", "t", "t:0,t:1,t:2,t:3", 5), ("b", "t", "", -1)],
    ),
    (
        "second_round_after_join",
        {"t": 4},
        [("a", "t", "t:0,t:1", 6), ("b", "t", "", -1)],
    ),
    (
        "third_member_joins",
        {"t": 6},
        [("a", "t", "t:0,t:2,t:4", 2), ("b", "t", "t:1,t:3,t:5", 2), ("c", "t", "", -1)],
    ),
    (
        "member_leaves",
        {"t": 6},
        [("a", "t", "t:0,t:3", 4), ("c", "t", "t:2,t:5", 4)],
    ),
    (
        "member_leaves_uneven",
        {"t": 7, "u": 2},
        [("m1", "t,u", "t:0,t:3,t:6", 9), ("m3", "t,u", "t:2,t:5,u:1", 9)],
    ),
    (
        "stale_generation_claim",
        {"t": 4},
        [("a", "t", "t:0,t:1", 3), ("b", "t", "t:1,t:2,t:3", 2)],
    ),
    (
        "same_generation_double_claim",
        {"t": 4},
        [("a", "t", "t:0,t:1", 3), ("b", "t", "t:1,t:2", 3), ("c", "t", "", -1)],
    ),
    (
        "three_way_claim",
        {"t": 3},
        [("a", "t", "t:0", 5), ("b", "t", "t:0", 5), ("c", "t", "t:0,t:1", 7)],
    ),
    (
        "no_generation_claims",
        {"t": 5},
        [("a", "t", "t:0,t:1,t:2", -1), ("b", "t", "t:2,t:3", 1), ("c", "t", "", -1)],
    ),
    (
        "owned_unknown_topic",
        {"t": 4},
        [("a", "t", "gone:0,t:0", 2), ("b", "t", "t:1,gone:1", 2)],
    ),
    (
        "overfull_owner",
        {"t": 9},
        [
            ("a", "t", "t:0,t:1,t:2,t:3,t:4,t:5", 8),
            ("b", "t", "t:6,t:7,t:8", 8),
            ("c", "t", "", -1),
            ("d", "t", "", -1),
        ],
    ),
    (
        "mixed_fresh",
        {"a": 3, "b": 2, "c": 4},
        [("m1", "a", "", -1), ("m2", "a,b", "", -1), ("m3", "a,b,c", "", -1)],
    ),
    (
        "mixed_join",
        {"a": 3, "b": 2, "c": 4},
        [
            ("m1", "a", "a:0,a:1,a:2", 4),
            ("m2", "a,b,c", "b:0,b:1,c:0,c:1,c:2,c:3", 4),
            ("m3", "b,c", "", -1),
        ],
    ),
    (
        "mixed_unsubscribe",
        {"a": 4, "b": 4},
        [("m1", "a", "a:0,a:1,b:0,b:1", 2), ("m2", "a,b", "a:2,a:3,b:2,b:3", 2)],
    ),
    (
        "mixed_leave",
        {"t0": 5, "t1": 3, "t2": 2},
        [
            ("x", "t0,t1", "t0:0,t0:1,t1:0", 3),
            ("z", "t0,t1,t2", "t0:4,t1:2,t2:0,t2:1", 3),
        ],
    ),
    (
        "mixed_old_generations",
        {"t": 6, "u": 3},
        [
            ("a", "t", "t:0,t:1,t:2", 7),
            ("b", "t,u", "t:2,t:3,u:0", 5),
            ("c", "t,u", "t:4,t:5,u:1,u:2", 7),
            ("d", "u", "", -1),
        ],
    ),
    (
        "mixed_many",
        {"t0": 11, "t1": 1, "t2": 8},
        [(f"member-{i:02d}", "t0,t1,t2" if i % 2 else "t0,t2", "", -1) for i in range(7)],
    ),
    (
        "static_ids_do_not_matter",
        {"t": 5},
        [("zz", "t", "t:0,t:1,t:2,t:3,t:4", 1), ("aa", "t", "", -1)],
    ),
]


def _random_cases(
    count: int, seed: int
) -> list[tuple[str, dict[str, int], list[tuple[str, str, str, int]]]]:
    """Seeded random groups: 1-6 members (ids with varied hashes), 1-3 topics, equal or mixed
    subscriptions, owned partitions from a previous assignment, generations (some stale)."""
    rng = random.Random(seed)
    cases = []
    for n in range(count):
        topics = {f"topic{t}": rng.randint(1, 9) for t in range(rng.randint(1, 3))}
        names = sorted(topics)
        ids = rng.sample(
            ["a", "b", "c", "m1", "m2", "consumer-1-x", "consumer-2-y", "zz", "Q", "m10"],
            rng.randint(1, 6),
        )
        equal = rng.random() < 0.5
        all_parts = [(t, p) for t in names for p in range(topics[t])]
        generation = rng.randint(1, 9)
        members = []
        for mid in ids:
            subs = names if equal else sorted(rng.sample(names, rng.randint(1, len(names))))
            owned = [tp for tp in all_parts if rng.random() < 1.2 / len(ids)]
            gen = rng.choice([generation, generation, generation - 1, -1]) if owned else -1
            members.append((mid, ",".join(subs), ",".join(f"{t}:{p}" for t, p in owned), gen))
        cases.append((f"random_{seed}_{n}", topics, members))
    return cases


COOP_RANDOM = _random_cases(150, seed=429)


def _coop_python(
    topics: dict[str, int], members: list[tuple[str, str, str, int]]
) -> dict[str, list[TP]]:
    """Our assignment, or ``{"!": []}`` where the assignor raises (as Java's does there)."""
    try:
        return cooperative_sticky_assign(topics, [_cm(*m) for m in members])
    except RuntimeError:
        return {"!": []}


def test_cooperative_sticky_random_cases_are_balanced_where_equal() -> None:
    """Cooperative rebalances (KIP-429) to the end on every random case: round 1 is our
    assignment (partitions that move are left out of it), each next round the assignment for
    the same members owning what the previous round gave them, until a round changes nothing
    (at most 4 rounds). The end assigns every subscribed partition once, each to a
    subscriber; where all members subscribe to the same topics it takes two rounds, the
    second revokes nothing and the end is balanced (member counts differ by at most one), as
    Java's constrained assignor."""
    balanced = 0
    for name, topics, members in COOP_RANDOM:
        rounds = [_coop_python(topics, members)]
        if "!" in rounds[0]:
            continue  # Java's assignor throws on this input too
        while len(rounds) < 2 or rounds[-1] != rounds[-2]:
            assert len(rounds) <= 4, (name, rounds)
            owned = rounds[-1]
            again = [
                (mid, subs, ",".join(f"{tp.topic}:{tp.partition}" for tp in owned[mid]), 100)
                for mid, subs, _, _ in members
            ]
            rounds.append(_coop_python(topics, again))
        end = rounds[-1]
        subscribed = {mid: set(subs.split(",")) for mid, subs, _, _ in members}
        wanted = sorted(
            TP(t, p)
            for t, n in topics.items()
            if any(t in s for s in subscribed.values())
            for p in range(n)
        )
        assert sorted(tp for ps in end.values() for tp in ps) == wanted, name  # each once
        assert all(tp.topic in subscribed[mid] for mid, ps in end.items() for tp in ps), name
        if len({subs for _, subs, _, _ in members}) == 1:
            assert len(rounds) <= 3, name  # round 2 completes, round 3 only confirms it
            assert all(set(rounds[0][mid]) <= set(end[mid]) for mid in end), name
            counts = [len(end[mid]) for mid, _, _, _ in members]
            assert max(counts) - min(counts) <= 1, (name, counts)
            balanced += 1
    assert balanced >= 40  # the seeded cases hold that many with equal subscriptions


@pytest.mark.integration
def test_cooperative_sticky_equals_java() -> None:
    classpath = java_classpath("PrintAssignments")
    cases = COOP_CASES + COOP_RANDOM
    lines: list[str] = []
    for name, topics, members in cases:
        lines.append(f"CASE cooperative-sticky {name}")
        lines.extend(f"TOPIC {t} {n}" for t, n in topics.items())
        lines.extend(f"MEMBER {mid} - {ts} {owned or '-'} {gen}" for mid, ts, owned, gen in members)
        lines.append("END")
    out = run_tool("PrintAssignments", [], input="\n".join(lines) + "\n", classpath=classpath)
    java = _parse(out.stdout)
    mismatches = [
        name for name, topics, members in cases if _coop_python(topics, members) != java[name]
    ]
    assert not mismatches, mismatches
    assert len(java) == len(cases)
