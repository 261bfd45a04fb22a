"""The classic member state machine (``consumer/group/classic/membership.py``), sans-I/O:
requests built, responses fed in, steps out; no transport, clock or sleep. And the I/O member's
use of it: the pauses between failed join rounds and the retries of failed requests follow
``client/retry.py``'s exponential backoff (KIP-580)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from spark_kafka_py.client.retry import Backoff
from spark_kafka_py.consumer.group.classic.member import GroupMember
from spark_kafka_py.consumer.group.classic.membership import (
    POLL_EXPIRED,
    ClassicMembership,
    JoinAgain,
    Joined,
    RunAssignor,
    Sync,
)
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
from spark_kafka_py.errors import KafkaApiError, KafkaConnectionError, KafkaTimeoutError
from spark_kafka_py.protocol.error_codes import (
    COORDINATOR_NOT_AVAILABLE,
    GROUP_AUTHORIZATION_FAILED,
    MEMBER_ID_REQUIRED,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
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
from spark_kafka_py.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

#: No jitter: the backoff's random factor is 1.
NO_JITTER = 0.5


def machine(**kwargs: Any) -> ClassicMembership:
    cfg = GroupConfig(group_id="g", retry_backoff_ms=100, retry_backoff_max_ms=300, **kwargs)
    return ClassicMembership(cfg, backoff=Backoff(100, 300, rng=lambda: NO_JITTER))


def joined(
    member_id: str = "m1",
    leader: str = "m1",
    generation: int = 1,
    members: Sequence[tuple[str, Subscription]] = (),
    error_code: int = 0,
    protocol_name: str = "range",
) -> JoinGroupResponse:
    return JoinGroupResponse(
        error_code=error_code,
        generation_id=generation,
        protocol_type="consumer",
        protocol_name=protocol_name,
        leader=leader,
        member_id=member_id,
        members=tuple(
            JoinGroupResponseMember(member_id=m, metadata=encode_subscription(s))
            for m, s in members
        ),
    )


def synced(*partitions: TP, error_code: int = 0) -> SyncGroupResponse:
    return SyncGroupResponse(
        error_code=error_code,
        protocol_type="consumer",
        protocol_name="range",
        assignment=encode_assignment(Assignment(partitions)),
    )


def join_as_leader(m: ClassicMembership, now_ms: float = 0.0) -> Joined:
    """One round in which ``m`` leads alone over topic ``t`` with 2 partitions."""
    m.subscribe(["t"], None, now_ms)
    request = m.join_request()
    step = m.on_join(joined(members=[("m1", decode_subscription(request.protocols[0].metadata))]))
    assert step == RunAssignor(("t",))
    sync = m.sync_as_leader({"t": 2})
    assert sync.request.generation_id == 1 and sync.request.member_id == "m1"
    (given,) = sync.request.assignments
    assert given.member_id == "m1"
    assert decode_assignment(given.assignment).partitions == (TP("t", 0), TP("t", 1))
    outcome = m.on_sync(synced(TP("t", 0), TP("t", 1)), now_ms)
    assert isinstance(outcome, Joined)
    return outcome


def test_a_leader_joins_runs_the_assignor_and_syncs() -> None:
    m = machine()
    assert m.subscribe(["t"], {"t": 2}, 0) is True and m.rejoin_needed == "not joined yet"
    request = m.join_request()
    assert request.member_id == "" and request.rebalance_timeout_ms == 300_000
    assert request.reason == "not joined yet"  # the first reason is kept
    assert decode_subscription(request.protocols[0].metadata).topics == ("t",)
    assert join_as_leader(m) == Joined(1, ())
    assert m.assignment == (TP("t", 0), TP("t", 1))
    assert m.identity() == ("m1", 1) and m.is_leader and m.stable
    assert m.subscribe(["t"], {"t": 2}, 10) is False  # nothing changed: no rejoin
    assert m.subscribe(["t"], {"t": 3}, 20) is True  # the leader sees a new partition
    assert m.rejoin_needed == "topic 't' has 3 partitions now, not 2"


def test_a_follower_syncs_with_no_assignments() -> None:
    m = machine()
    m.subscribe(["t"], None, 0)
    m.join_request()
    step = m.on_join(joined(member_id="m2", leader="m1", generation=4))
    assert isinstance(step, Sync) and step.request.assignments == ()
    assert step.request.generation_id == 4 and step.request.member_id == "m2"
    assert m.on_sync(synced(TP("t", 1)), 0) == Joined(4, ())
    assert m.assignment == (TP("t", 1),) and not m.is_leader


def test_member_id_required_joins_again_at_once_with_the_given_id() -> None:
    m = machine()
    m.subscribe(["t"], None, 0)
    m.join_request()
    assert m.on_join(joined(member_id="given", error_code=MEMBER_ID_REQUIRED.code)) == JoinAgain()
    assert m.join_request().member_id == "given"


def test_failed_rounds_back_off_exponentially_and_a_join_resets_it() -> None:
    m = machine()
    m.subscribe(["t"], None, 0)
    pauses = []
    for code in (REBALANCE_IN_PROGRESS, REBALANCE_IN_PROGRESS, REBALANCE_IN_PROGRESS):
        m.join_request()
        step = m.on_join(joined(error_code=code.code))
        assert isinstance(step, JoinAgain) and step.coordinator_lost is None
        pauses.append(step.pause_ms)
    m.join_request()
    lost = m.on_join(joined(error_code=COORDINATOR_NOT_AVAILABLE.code))
    assert lost == JoinAgain(300, "COORDINATOR_NOT_AVAILABLE")
    assert pauses == [100, 200, 300]  # retry.backoff.ms doubling, capped at the max
    join_as_leader(m)
    m.request_rejoin("again")
    m.join_request()
    assert m.on_join(joined(error_code=REBALANCE_IN_PROGRESS.code)) == JoinAgain(100)


def test_jitter_keeps_pauses_within_twenty_percent() -> None:
    cfg = GroupConfig(group_id="g", retry_backoff_ms=100, retry_backoff_max_ms=1_000)
    low = ClassicMembership(cfg, backoff=Backoff(100, 1_000, rng=lambda: 0.0))
    high = ClassicMembership(cfg, backoff=Backoff(100, 1_000, rng=lambda: 0.999_999))
    for m, expected in ((low, 80), (high, 120)):
        m.subscribe(["t"], None, 0)
        m.join_request()
        step = m.on_join(joined(error_code=REBALANCE_IN_PROGRESS.code))
        assert isinstance(step, JoinAgain)
        assert step.pause_ms == pytest.approx(expected, abs=0.01)


def test_a_fatal_join_error_is_raised_and_kept() -> None:
    m = machine()
    m.subscribe(["t"], None, 0)
    m.join_request()
    with pytest.raises(KafkaApiError, match=r"GROUP_AUTHORIZATION_FAILED.*group 'g'") as raised:
        m.on_join(joined(error_code=GROUP_AUTHORIZATION_FAILED.code))
    assert m.fatal is raised.value
    with pytest.raises(KafkaApiError) as again:
        m.subscribe(["t"], None, 1)
    assert again.value is raised.value


def test_cooperative_revocation_asks_for_a_second_round() -> None:
    m = machine(assignors=("cooperative-sticky",))
    m.subscribe(["t"], None, 0)
    m.join_request()
    coop = "cooperative-sticky"
    m.on_join(joined(member_id="m2", leader="m1", protocol_name=coop))
    m.on_sync(synced(TP("t", 0), TP("t", 1)), 0)
    m.request_rejoin("a new member")
    request = m.join_request()
    owned = decode_subscription(request.protocols[0].metadata).owned_partitions
    assert owned == (TP("t", 0), TP("t", 1))
    m.on_join(joined(member_id="m2", leader="m1", generation=2, protocol_name=coop))
    outcome = m.on_sync(synced(TP("t", 0)), 5)
    assert outcome == Joined(2, (TP("t", 1),))
    assert m.assignment == (TP("t", 0),)
    assert m.rejoin_needed == "revoked ['t-1'] in a cooperative rebalance"


def test_heartbeats_only_when_stable_and_due() -> None:
    m = machine(heartbeat_interval_ms=3_000, max_poll_interval_ms=10_000)
    assert m.heartbeat(0) is None  # not joined
    join_as_leader(m, now_ms=1_000)
    assert m.heartbeat(3_999) is None
    request = m.heartbeat(4_000)
    assert isinstance(request, HeartbeatRequest)
    assert (request.member_id, request.generation_id) == ("m1", 1)
    assert m.on_heartbeat(HeartbeatResponse(error_code=0), 4_010).coordinator_lost is None
    lost = m.on_heartbeat(HeartbeatResponse(error_code=COORDINATOR_NOT_AVAILABLE.code), 4_020)
    assert lost.coordinator_lost == "COORDINATOR_NOT_AVAILABLE"
    m.on_heartbeat(HeartbeatResponse(error_code=REBALANCE_IN_PROGRESS.code), 4_030)
    assert m.rejoin_needed == "the coordinator started a rebalance" and not m.stable
    assert m.heartbeat(20_000) is None  # a rejoin is pending: no heartbeat


def test_unknown_member_in_a_heartbeat_resets_the_member() -> None:
    m = machine()
    join_as_leader(m)
    m.on_heartbeat(HeartbeatResponse(error_code=UNKNOWN_MEMBER_ID.code), 10)
    assert m.identity() == ("", -1)
    assert m.rejoin_needed == "Heartbeat: UNKNOWN_MEMBER_ID"


def test_poll_expiry_and_fatal_heartbeat_errors() -> None:
    m = machine(heartbeat_interval_ms=3_000, max_poll_interval_ms=10_000)
    join_as_leader(m, now_ms=0)
    assert m.heartbeat(10_001) is POLL_EXPIRED
    m2 = machine()
    join_as_leader(m2)
    outcome = m2.on_heartbeat(HeartbeatResponse(error_code=GROUP_AUTHORIZATION_FAILED.code), 5)
    assert outcome.fatal is not None and m2.fatal is outcome.fatal
    with pytest.raises(KafkaApiError, match="in Heartbeat of group 'g'"):
        m2.raise_fatal()


def test_leave_gives_a_request_for_dynamic_members_only() -> None:
    m = machine()
    join_as_leader(m)
    request = m.leave("closing")
    assert request is not None and request.members[0].member_id == "m1"
    assert request.members[0].reason == "closing"
    assert m.identity() == ("", -1) and m.assignment == ()
    assert m.leave("again") is None  # no member id any more
    static = machine(group_instance_id="i-1")
    join_as_leader(static)
    assert static.leave("closing") is None
    assert static.member_id == "m1"  # a static member keeps its id and place


# -- the I/O member over the machine -------------------------------------------------------


class Scripted:
    """A transport answering requests in order; a response may be an exception to raise."""

    def __init__(self, script: list[tuple[type, Any]]) -> None:
        self.script = list(script)

    def least_loaded_node(self) -> int:
        return 0

    def send(self, node_id: int, request: Any, **kwargs: Any) -> Any:
        expected, response = self.script.pop(0)
        assert isinstance(request, expected), (type(request).__name__, expected.__name__)
        if isinstance(response, BaseException):
            raise response
        return response


FIND = (
    FindCoordinatorRequest,
    FindCoordinatorResponse(
        coordinators=(Coordinator(key="g", node_id=7, host="h", port=1, error_code=0),)
    ),
)


def counts(topics: Sequence[str]) -> Mapping[str, int]:
    return {t: 1 for t in topics}


def io_member(script: list[tuple[type, Any]], **kwargs: Any) -> tuple[GroupMember, list[float]]:
    slept: list[float] = []
    cfg = GroupConfig(group_id="g", retry_backoff_ms=100, retry_backoff_max_ms=300, **kwargs)
    m = GroupMember(
        cfg,
        Scripted(script),
        counts,
        sleep=slept.append,
        backoff=Backoff(100, 300, rng=lambda: NO_JITTER),
    )
    return m, slept


def test_the_join_loop_sleeps_the_machines_backoff() -> None:
    sub = Subscription(topics=("t",))
    busy = (JoinGroupRequest, joined(error_code=REBALANCE_IN_PROGRESS.code))
    m, slept = io_member(
        [
            FIND,
            busy,
            busy,
            busy,
            (JoinGroupRequest, joined(members=[("m1", sub)])),
            (SyncGroupRequest, synced(TP("t", 0))),
        ]
    )
    assert m.ensure_active(["t"]) == (TP("t", 0),)
    assert slept == [0.1, 0.2, 0.3]


def test_failed_join_requests_are_retried_with_the_backoff_then_time_out() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    down = KafkaConnectionError("broker 7 went away")
    cfg = GroupConfig(
        group_id="g",
        retry_backoff_ms=100,
        retry_backoff_max_ms=300,
        max_poll_interval_ms=400,
        default_api_timeout_ms=400,
    )
    script = [FIND, (JoinGroupRequest, down)] * 10
    m = GroupMember(
        cfg,
        Scripted(script),
        counts,
        clock=lambda: now[0],
        sleep=sleep,
        backoff=Backoff(100, 300, rng=lambda: NO_JITTER),
    )
    with pytest.raises(KafkaTimeoutError, match=r"JoinGroup/SyncGroup for group 'g'.*800 ms"):
        m.ensure_active(["t"])
    assert slept == pytest.approx([0.1, 0.2, 0.3, 0.2])  # the last pause ends at the deadline
    assert sum(slept) == pytest.approx(0.8)
