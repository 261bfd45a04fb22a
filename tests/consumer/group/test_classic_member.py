"""The group state machine, driven by encoded response bytes through a scripted transport
(no sockets): joins as leader and follower, MEMBER_ID_REQUIRED, coordinator re-discovery,
heartbeat-flagged rebalances, commits that must rejoin, fatal errors naming the group."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from spark_kafka_py.consumer.group.classic.member import GroupMember
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafka_py.consumer.types import TopicPartition as TP
from spark_kafka_py.errors import KafkaApiError, KafkaProtocolError
from spark_kafka_py.protocol.error_codes import (
    FENCED_INSTANCE_ID,
    GROUP_AUTHORIZATION_FAILED,
    ILLEGAL_GENERATION,
    INVALID_GROUP_ID,
    MEMBER_ID_REQUIRED,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from spark_kafka_py.protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from spark_kafka_py.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from spark_kafka_py.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
)
from spark_kafka_py.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from spark_kafka_py.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from spark_kafka_py.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from spark_kafka_py.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse


class ScriptedTransport:
    """Answers each request with the next scripted response, passed through its bytes.

    Every request is encoded at the newest version we support (so a request that cannot be
    encoded fails the test) and decoded back; every response is encoded and decoded from
    bytes at that version, as a broker's answer would be.
    """

    def __init__(self, script: list[tuple[type, Any]]) -> None:
        self.script = list(script)
        self.sent: list[tuple[int, Any]] = []

    def least_loaded_node(self) -> int:
        return 0

    def send(
        self,
        node_id: int,
        request: Any,
        *,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> Any:
        assert self.script, f"unexpected {type(request).__name__}"
        expected, response = self.script.pop(0)
        assert isinstance(request, expected), (type(request).__name__, expected.__name__)
        version = type(request).MAX_VERSION
        wire_request = type(request).decode(request.encode(version), version)
        self.sent.append((node_id, wire_request))
        return type(response).decode(response.encode(version), version)


def counts(topics: Sequence[str]) -> Mapping[str, int]:
    return {t: 4 for t in topics if t != "missing"}


def member(transport: ScriptedTransport, **kwargs: Any) -> GroupMember:
    cfg = GroupConfig(group_id="g", retry_backoff_ms=1, default_api_timeout_ms=1_000, **kwargs)
    return GroupMember(cfg, transport, counts, sleep=lambda s: None)


FIND = (
    FindCoordinatorRequest,
    FindCoordinatorResponse(
        coordinators=(Coordinator(key="g", node_id=7, host="h", port=1, error_code=0),)
    ),
)


def join_ok(
    member_id: str,
    leader: str,
    generation: int = 1,
    members: Sequence[tuple[str, Subscription]] = (),
    protocol_name: str = "range",
) -> tuple[type, Any]:
    return (
        JoinGroupRequest,
        JoinGroupResponse(
            error_code=0,
            generation_id=generation,
            protocol_type="consumer",
            protocol_name=protocol_name,
            leader=leader,
            member_id=member_id,
            members=tuple(
                JoinGroupResponseMember(member_id=m, metadata=encode_subscription(s))
                for m, s in members
            ),
        ),
    )


def sync_ok(*tps: TP, protocol_name: str = "range") -> tuple[type, Any]:
    return (
        SyncGroupRequest,
        SyncGroupResponse(
            error_code=0,
            protocol_type="consumer",
            protocol_name=protocol_name,
            assignment=encode_assignment(Assignment(tuple(tps))),
        ),
    )


def commit_resp(errors: Mapping[TP, int]) -> tuple[type, Any]:
    topics: dict[str, list[OffsetCommitResponsePartition]] = {}
    for tp, c in errors.items():
        topics.setdefault(tp.topic, []).append(
            OffsetCommitResponsePartition(partition_index=tp.partition, error_code=c)
        )
    return (
        OffsetCommitRequest,
        OffsetCommitResponse(
            topics=tuple(
                OffsetCommitResponseTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()
            )
        ),
    )


def test_leader_join_assigns_with_range_and_sends_assignments() -> None:
    other = Subscription(("t",))
    t = ScriptedTransport(
        [
            FIND,
            (
                JoinGroupRequest,
                JoinGroupResponse(
                    error_code=MEMBER_ID_REQUIRED,
                    member_id="m-1",
                    leader="",
                    protocol_name=None,
                ),
            ),
            join_ok("m-1", "m-1", members=[("m-1", Subscription(("t",))), ("m-2", other)]),
            sync_ok(TP("t", 0), TP("t", 1)),
        ]
    )
    m = member(t)
    assert m.ensure_active(["t"]) == (TP("t", 0), TP("t", 1))
    assert m.is_leader and m.generation_id == 1 and m.rejoin_needed is None
    first_join, second_join, sync = t.sent[1][1], t.sent[2][1], t.sent[3][1]
    assert all(node == 7 for node, _ in t.sent[1:])
    assert first_join.member_id == "" and second_join.member_id == "m-1"
    assert second_join.protocol_type == "consumer"
    assert [p.name for p in second_join.protocols] == ["range"]
    assert decode_subscription(second_join.protocols[0].metadata).topics == ("t",)
    sent = {a.member_id: decode_assignment(a.assignment).partitions for a in sync.assignments}
    assert sent == {"m-1": (TP("t", 0), TP("t", 1)), "m-2": (TP("t", 2), TP("t", 3))}
    assert (sync.generation_id, sync.member_id, sync.protocol_name) == (1, "m-1", "range")


def test_follower_sends_no_assignments() -> None:
    t = ScriptedTransport([FIND, join_ok("m-2", "m-1", 3), sync_ok(TP("t", 3))])
    m = member(t, group_instance_id="inst-2")
    assert m.ensure_active(["t"]) == (TP("t", 3),)
    assert t.sent[2][1].assignments == ()
    assert t.sent[1][1].group_instance_id == "inst-2"
    assert not m.is_leader


def test_coordinator_rediscovered_on_not_coordinator() -> None:
    moved = (
        FindCoordinatorRequest,
        FindCoordinatorResponse(
            coordinators=(Coordinator(key="g", node_id=9, host="h", port=1, error_code=0),)
        ),
    )
    t = ScriptedTransport(
        [
            FIND,
            (
                JoinGroupRequest,
                JoinGroupResponse(
                    error_code=NOT_COORDINATOR, leader="", member_id="", protocol_name=None
                ),
            ),
            moved,
            join_ok("m", "m", members=[("m", Subscription(("t",)))]),
            sync_ok(TP("t", 0)),
        ]
    )
    member(t).ensure_active(["t"])
    assert [n for n, _ in t.sent] == [0, 7, 0, 9, 9]


def test_heartbeat_flags_rebalance_and_next_boundary_rejoins() -> None:
    now = [0.0]
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0), TP("t", 1)),
            (HeartbeatRequest, HeartbeatResponse(error_code=REBALANCE_IN_PROGRESS)),
            join_ok("m", "x", generation=2),
            sync_ok(TP("t", 1)),
        ]
    )
    cfg = GroupConfig(group_id="g", heartbeat_interval_ms=1_000)
    m = GroupMember(cfg, t, counts, clock=lambda: now[0], sleep=lambda s: None)
    m.ensure_active(["t"])
    m.heartbeat_once()  # not due yet: nothing sent
    assert len(t.sent) == 3
    now[0] = 1.0
    m.heartbeat_once()
    hb = t.sent[3][1]
    assert (hb.group_id, hb.generation_id, hb.member_id) == ("g", 1, "m")
    assert m.rejoin_needed == "the coordinator started a rebalance"
    assert m.ensure_active(["t"]) == (TP("t", 1),)
    rejoin = t.sent[4][1]
    assert rejoin.member_id == "m"
    assert decode_subscription(rejoin.protocols[0].metadata).owned_partitions == (
        TP("t", 0),
        TP("t", 1),
    )
    assert m.generation_id == 2


def test_commit_illegal_generation_rejoins_and_recommits_owned(caplog: Any) -> None:
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0), TP("t", 1)),
            commit_resp({TP("t", 0): ILLEGAL_GENERATION, TP("t", 1): ILLEGAL_GENERATION}),
            join_ok("m", "x", generation=5),
            sync_ok(TP("t", 1)),
            commit_resp({TP("t", 1): 0}),
        ]
    )
    m = member(t)
    m.ensure_active(["t"])
    with caplog.at_level(logging.WARNING):
        done = m.commit({TP("t", 0): 10, TP("t", 1): 20})
    assert done == {TP("t", 1): 20}
    recommit = t.sent[-1][1]
    assert recommit.generation_id_or_member_epoch == 5
    assert [(p.partition_index, p.committed_offset) for p in recommit.topics[0].partitions] == [
        (1, 20)
    ]
    assert "t-0" in caplog.text and "not committed" in caplog.text


def test_commit_retries_after_coordinator_moves() -> None:
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0)),
            commit_resp({TP("t", 0): NOT_COORDINATOR}),
            FIND,
            commit_resp({TP("t", 0): 0}),
        ]
    )
    m = member(t)
    m.ensure_active(["t"])
    assert m.commit({TP("t", 0): 3}) == {TP("t", 0): 3}


def test_fatal_errors_name_group_and_partition() -> None:
    t = ScriptedTransport(
        [
            (
                FindCoordinatorRequest,
                FindCoordinatorResponse(
                    coordinators=(
                        Coordinator(
                            key="g",
                            node_id=-1,
                            host="",
                            port=-1,
                            error_code=GROUP_AUTHORIZATION_FAILED,
                        ),
                    )
                ),
            )
        ]
    )
    with pytest.raises(KafkaApiError, match=r"GROUP_AUTHORIZATION_FAILED.*group 'g'"):
        member(t).ensure_active(["t"])
    t = ScriptedTransport(
        [
            FIND,
            (
                JoinGroupRequest,
                JoinGroupResponse(
                    error_code=INVALID_GROUP_ID, leader="", member_id="", protocol_name=None
                ),
            ),
        ]
    )
    m = member(t)
    with pytest.raises(KafkaApiError, match=r"INVALID_GROUP_ID.*JoinGroup of group 'g'"):
        m.ensure_active(["t"])
    with pytest.raises(KafkaApiError, match="INVALID_GROUP_ID"):  # stays failed
        m.ensure_active(["t"])
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0)),
            commit_resp({TP("t", 0): UNKNOWN_TOPIC_OR_PARTITION}),
        ]
    )
    m = member(t)
    m.ensure_active(["t"])
    with pytest.raises(KafkaApiError, match=r"UNKNOWN_TOPIC_OR_PARTITION.*t-0 for group 'g'"):
        m.commit({TP("t", 0): 1})


def test_fenced_instance_is_fatal_and_names_instance() -> None:
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0)),
            (HeartbeatRequest, HeartbeatResponse(error_code=FENCED_INSTANCE_ID)),
        ]
    )
    m = member(t, group_instance_id="i1", heartbeat_interval_ms=1)
    m.ensure_active(["t"])
    m.timer.sent(-10.0)
    m.heartbeat_once()
    with pytest.raises(KafkaApiError, match=r"FENCED_INSTANCE_ID.*group.instance.id 'i1'"):
        m.commit({TP("t", 0): 1})


def test_unknown_protocol_from_coordinator_is_protocol_error() -> None:
    bad = (
        JoinGroupRequest,
        JoinGroupResponse(
            error_code=0, generation_id=1, protocol_name="sticky", leader="m", member_id="m"
        ),
    )
    with pytest.raises(KafkaProtocolError, match="'sticky'"):
        member(ScriptedTransport([FIND, bad])).ensure_active(["t"])


def test_offset_fetch_none_for_missing_and_leave_group() -> None:
    fetch = (
        OffsetFetchRequest,
        OffsetFetchResponse(
            groups=(
                OffsetFetchResponseGroup(
                    group_id="g",
                    topics=(
                        OffsetFetchResponseTopics(
                            name="t",
                            partitions=(
                                OffsetFetchResponsePartitions(
                                    partition_index=0,
                                    committed_offset=42,
                                    metadata="",
                                    error_code=0,
                                ),
                                OffsetFetchResponsePartitions(
                                    partition_index=1,
                                    committed_offset=-1,
                                    metadata="",
                                    error_code=0,
                                ),
                            ),
                        ),
                    ),
                ),
            )
        ),
    )
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0)),
            fetch,
            (LeaveGroupRequest, LeaveGroupResponse(error_code=0)),
        ]
    )
    m = member(t)
    m.ensure_active(["t"])
    assert m.fetch_committed([TP("t", 1), TP("t", 0)]) == {TP("t", 0): 42, TP("t", 1): None}
    assert t.sent[3][1].require_stable
    m.close()
    leave = t.sent[4][1]
    assert [x.member_id for x in leave.members] == ["m"]
    assert m.assignment == () and m.rejoin_needed


def test_static_member_does_not_leave() -> None:
    t = ScriptedTransport([FIND, join_ok("m", "x"), sync_ok(TP("t", 0))])
    m = member(t, group_instance_id="i")
    m.ensure_active(["t"])
    m.close()
    assert len(t.sent) == 3


# -- cooperative rebalance (KIP-429) -----------------------------------------------------------

COOP = "cooperative-sticky"


def coop_join(
    member_id: str,
    leader: str,
    generation: int,
    members: Sequence[tuple[str, Subscription]] = (),
) -> tuple[type, Any]:
    return join_ok(member_id, leader, generation, members, protocol_name=COOP)


def coop_sync(*tps: TP) -> tuple[type, Any]:
    return sync_ok(*tps, protocol_name=COOP)


def _subscription(request: Any) -> Subscription:
    (protocol,) = request.protocols
    assert protocol.name == COOP
    return decode_subscription(protocol.metadata)


def test_cooperative_follower_keeps_partitions_and_rejoins_after_revocation() -> None:
    t4 = tuple(TP("t", p) for p in range(4))
    t = ScriptedTransport(
        [
            FIND,
            coop_join("m", "x", 1),
            coop_sync(*t4),
            # a second member joined: the first round leaves out t-2, t-3 (moving away) ...
            coop_join("m", "x", 2),
            coop_sync(TP("t", 0), TP("t", 1)),
            # ... so the member gives them up and rejoins at once (second round)
            coop_join("m", "x", 3),
            coop_sync(TP("t", 0), TP("t", 1)),
        ]
    )
    m = member(t, assignors=(COOP,))
    assert m.cooperative
    assert m.ensure_active(["t"]) == t4
    first = _subscription(t.sent[1][1])
    assert (first.owned_partitions, first.generation_id, first.user_data) == (
        (),
        -1,
        b"\xff\xff\xff\xff",
    )
    m.request_rejoin("a member joined")
    assert m.ensure_active(["t"]) == (TP("t", 0), TP("t", 1))
    assert m.rejoin_needed is None and m.generation_id == 3
    round1, round2 = _subscription(t.sent[3][1]), _subscription(t.sent[5][1])
    assert (round1.owned_partitions, round1.generation_id, round1.user_data) == (
        t4,
        1,
        b"\x00\x00\x00\x01",
    )
    assert (round2.owned_partitions, round2.generation_id) == ((TP("t", 0), TP("t", 1)), 2)
    assert "cooperative" in t.sent[5][1].reason
    assert not t.script


def test_cooperative_gain_only_needs_no_second_round() -> None:
    t = ScriptedTransport(
        [FIND, coop_join("m", "x", 4), coop_sync(TP("t", 0)), coop_join("m", "x", 5)]
    )
    t.script.append(coop_sync(TP("t", 0), TP("t", 3)))
    m = member(t, assignors=(COOP,))
    m.ensure_active(["t"])
    m.request_rejoin("a member left")
    assert m.ensure_active(["t"]) == (TP("t", 0), TP("t", 3))
    assert not t.script and m.rejoin_needed is None


def test_cooperative_leader_assigns_two_rounds() -> None:
    t4 = tuple(TP("t", p) for p in range(4))
    newcomer = Subscription(("t",), generation_id=-1)
    t = ScriptedTransport(
        [
            FIND,
            coop_join("a", "a", 1, members=[("a", Subscription(("t",)))]),
            coop_sync(*t4),
            coop_join(
                "a", "a", 2, members=[("a", Subscription(("t",), None, t4, 1)), ("b", newcomer)]
            ),
            coop_sync(TP("t", 0), TP("t", 1)),
            coop_join(
                "a",
                "a",
                3,
                members=[
                    ("a", Subscription(("t",), None, (TP("t", 0), TP("t", 1)), 2)),
                    ("b", newcomer),
                ],
            ),
            coop_sync(TP("t", 0), TP("t", 1)),
        ]
    )
    m = member(t, assignors=(COOP,))
    assert m.ensure_active(["t"]) == t4
    m.request_rejoin("b joined")
    assert m.ensure_active(["t"]) == (TP("t", 0), TP("t", 1))

    def sent(i: int) -> dict[str, tuple[TP, ...]]:
        sync = t.sent[i][1]
        return {a.member_id: decode_assignment(a.assignment).partitions for a in sync.assignments}

    # first round: nothing moves yet (t-2, t-3 still owned by a); second round: b gets them
    assert sent(4) == {"a": (TP("t", 0), TP("t", 1)), "b": ()}
    assert sent(6) == {"a": (TP("t", 0), TP("t", 1)), "b": (TP("t", 2), TP("t", 3))}


def test_cooperative_member_without_generation_claims_nothing() -> None:
    t = ScriptedTransport(
        [
            FIND,
            coop_join("m", "x", 1),
            coop_sync(TP("t", 0), TP("t", 1)),
            (
                JoinGroupRequest,
                JoinGroupResponse(
                    error_code=UNKNOWN_MEMBER_ID,
                    leader="",
                    member_id="",
                    protocol_name=None,
                ),
            ),
            coop_join("m2", "x", 3),
            coop_sync(TP("t", 1)),
        ]
    )
    m = member(t, assignors=(COOP,))
    m.ensure_active(["t"])
    m.request_rejoin("test")
    assert m.ensure_active(["t"]) == (TP("t", 1),)
    fenced = _subscription(t.sent[4][1])
    assert (fenced.owned_partitions, fenced.generation_id) == ((), -1)


def test_eager_member_does_not_rejoin_when_its_assignment_shrinks() -> None:
    t = ScriptedTransport(
        [
            FIND,
            join_ok("m", "x"),
            sync_ok(TP("t", 0), TP("t", 1)),
            join_ok("m", "x", generation=2),
            sync_ok(TP("t", 1)),
        ]
    )
    m = member(t, assignors=("range",))
    assert not m.cooperative
    m.ensure_active(["t"])
    m.request_rejoin("test")
    assert m.ensure_active(["t"]) == (TP("t", 1),)
    assert m.rejoin_needed is None and not t.script
    assert decode_subscription(t.sent[3][1].protocols[0].metadata).user_data is None
