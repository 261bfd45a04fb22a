"""Assignors: the Javadoc examples of Kafka's RangeAssignor/RoundRobinAssignor, and a table of
member/subscription cases compared with what Kafka's Java assignors assign (run from the
kafka-clients jar of the release under test by ``java/PrintAssignments.java``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from group_java import compile_java

from spark_kafka_py.consumer.group.assignors import (
    ASSIGNORS,
    Member,
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
    with pytest.raises(ConfigError, match=r"kafka.partition.assignment.strategy"):
        get_assignor("cooperative-sticky")
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


@pytest.mark.integration
def test_assignors_equal_java(tmp_path: Path) -> None:
    classpath = compile_java("PrintAssignments", tmp_path)
    lines: list[str] = []
    for assignor in ("range", "roundrobin"):
        for name, topics, members in CASES:
            lines.append(f"CASE {assignor} {assignor}/{name}")
            lines.extend(f"TOPIC {t} {n}" for t, n in topics.items())
            lines.extend(f"MEMBER {mid} {inst or '-'} {','.join(ts)}" for mid, inst, ts in members)
            lines.append("END")
    out = run_tool("PrintAssignments", [], input="\n".join(lines) + "\n", classpath=classpath)
    java: dict[str, dict[str, list[TP]]] = {}
    for line in out.stdout.splitlines():
        case, member, parts = line.split(" ")
        java.setdefault(case, {})[member] = (
            []
            if parts == "-"
            else [TP(p.rsplit(":", 1)[0], int(p.rsplit(":", 1)[1])) for p in parts.split(",")]
        )
    compared = 0
    for assignor in ("range", "roundrobin"):
        for name, topics, members in CASES:
            expected = java[f"{assignor}/{name}"]
            assert _python(assignor, topics, members) == expected, f"{assignor}/{name}"
            compared += 1
    assert compared == 2 * len(CASES)
