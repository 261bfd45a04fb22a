"""The KIP-848 member state machine (``consumer/group/consumer/membership.py``), driven through
joining, incremental reconciliation, topic ids waiting for their names, fencing, leaving
(dynamic and static) and the heartbeat errors, with hand-made ConsumerGroupHeartbeat
responses. No broker, no sockets, no clock: times are passed in ms."""

from __future__ import annotations

import uuid

import pytest

from spark_kafka_py.consumer.group.consumer.membership import (
    AssignPartitions,
    ConsumerGroupMembership,
    FindCoordinator,
    MembershipFailed,
    MemberState,
    RevokePartitions,
    new_member_id,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError, KafkaApiError, KafkaConnectionError
from spark_kafka_py.protocol import error_codes
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
)
from spark_kafka_py.protocol.schema import decode, encode

T = uuid.UUID(int=1)
U = uuid.UUID(int=2)
NAMES = {T: "t", U: "u"}


def tp(topic: str, *partitions: int) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(topic, p) for p in partitions)


def owned(request: ConsumerGroupHeartbeatRequest) -> dict[uuid.UUID, tuple[int, ...]] | None:
    if request.topic_partitions is None:
        return None
    return {t.topic_id: t.partitions for t in request.topic_partitions}


def response(
    epoch: int,
    assignment: dict[uuid.UUID, tuple[int, ...]] | None = None,
    *,
    interval: int = 3_000,
    error: int = 0,
    message: str | None = None,
) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(
        error_code=error,
        error_message=message,
        member_epoch=epoch,
        heartbeat_interval_ms=interval,
        assignment=None
        if assignment is None
        else ConsumerGroupHeartbeatAssignment(
            topic_partitions=tuple(
                ConsumerGroupHeartbeatTopicPartitions(topic_id=k, partitions=v)
                for k, v in assignment.items()
            )
        ),
    )


def send(member: ConsumerGroupMembership, now_ms: float) -> ConsumerGroupHeartbeatRequest:
    request = member.next_request(now_ms)
    assert request is not None, f"no heartbeat due at {now_ms} in {member.state}"
    # every request the machine builds encodes at both versions the brokers offer
    for version in (0, 1):
        assert decode(ConsumerGroupHeartbeatRequest, encode(request, version), version) == request
    return request


def stable_member(partitions: tuple[int, ...] = (0, 1, 2), **kwargs) -> ConsumerGroupMembership:
    """A member that joined, owns ``t``'s ``partitions`` at epoch 1, and acknowledged them.
    Its backoff has no jitter unless ``rng`` is given (``0.5``: the factor 1)."""
    kwargs.setdefault("rng", lambda: 0.5)
    member = ConsumerGroupMembership("g", member_id="m", server_assignor="uniform", **kwargs)
    member.update_topic_names(NAMES)
    member.subscribe(["t"])
    send(member, 0)
    events = member.on_response(response(1, {T: partitions}), 5)
    assert events == [AssignPartitions(tp("t", *partitions))]
    ack = send(member, 6)
    assert owned(ack) == {T: partitions}
    assert member.state is MemberState.STABLE
    assert member.on_response(response(1), 8) == []
    return member


def test_join_sends_every_field_with_epoch_zero() -> None:
    member = ConsumerGroupMembership(
        "g",
        member_id="m",
        instance_id="i",
        rack_id="r",
        server_assignor="range",
        rebalance_timeout_ms=60_000,
    )
    assert member.state is MemberState.UNSUBSCRIBED
    assert member.next_request(0) is None  # not subscribed: no heartbeat
    assert member.subscribe(["b", "a", "b"]) == []
    assert member.state is MemberState.JOINING
    request = send(member, 0)
    assert request == ConsumerGroupHeartbeatRequest(
        group_id="g",
        member_id="m",
        member_epoch=0,
        instance_id="i",
        rack_id="r",
        rebalance_timeout_ms=60_000,
        subscribed_topic_names=("a", "b"),
        server_assignor="range",
        topic_partitions=(),
    )
    assert member.next_request(0) is None  # one heartbeat in flight at a time


def test_join_waits_for_topic_names_then_acknowledges() -> None:
    member = ConsumerGroupMembership("g", member_id="m")
    member.subscribe(["t"])
    send(member, 0)
    # the assignment names topics by id; "t"'s id is not known yet
    assert member.on_response(response(3, {T: (0, 1)}), 10) == []
    assert member.member_epoch == 3
    assert member.state is MemberState.RECONCILING
    assert member.unresolved_topic_ids == {T}
    assert member.readable_partitions == frozenset()
    assert member.update_topic_names({T: "t"}) == [AssignPartitions(tp("t", 0, 1))]
    assert member.state is MemberState.ACKNOWLEDGING
    assert member.unresolved_topic_ids == frozenset()
    # the acknowledgement goes out at once, with the owned partitions and nothing else new
    ack = send(member, 11)
    assert ack.member_epoch == 3
    assert owned(ack) == {T: (0, 1)}
    assert ack.subscribed_topic_names is None and ack.rebalance_timeout_ms == -1
    assert member.state is MemberState.STABLE
    assert member.readable_partitions == tp("t", 0, 1)


def test_steady_heartbeats_are_deltas_at_the_interval_from_the_response() -> None:
    member = stable_member()
    assert member.next_request(100) is None  # interval not over (sent at 6)
    assert member.time_to_next_request_ms(100) == pytest.approx(3_006 - 100)
    beat = send(member, 3_006)
    assert beat == ConsumerGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=1)
    # the coordinator changes the interval: the next heartbeat is due that long after now
    assert member.on_response(response(1, interval=5_000), 3_010) == []
    assert member.heartbeat_interval_ms == 5_000
    assert member.next_request(8_000) is None
    send(member, 8_010)
    member.on_response(response(1, interval=5_000), 8_012)
    # a subscription change is sent as a delta in the next heartbeat
    member.subscribe(["t", "v"])
    beat = send(member, 13_010)
    assert beat.subscribed_topic_names == ("t", "v")
    assert beat.topic_partitions is None and beat.server_assignor is None


def test_incremental_reconciliation_revokes_before_acknowledging() -> None:
    member = stable_member((0, 1, 2))
    # the coordinator moves 1 and 2 away and offers 3 (3 is usable once 1, 2 are released)
    events = member.on_response(response(2, {T: (0, 3)}), 100)
    assert events == [RevokePartitions(tp("t", 1, 2), lost=False)]
    assert member.state is MemberState.RECONCILING
    assert member.readable_partitions == tp("t", 0)
    assert member.owned_partitions == tp("t", 0, 1, 2)
    assert member.pending_revocation == tp("t", 1, 2)
    # heartbeats go on at the interval meanwhile, still claiming the old partitions (unchanged)
    beat = send(member, 3_006)
    assert beat.member_epoch == 2 and beat.topic_partitions is None
    assert member.on_response(response(2), 3_008) == []
    # the application commits and releases partition by partition
    assert member.partitions_released(tp("t", 1)) == []
    assert member.state is MemberState.RECONCILING
    assert member.partitions_released(tp("t", 2)) == [AssignPartitions(tp("t", 3))]
    assert member.state is MemberState.ACKNOWLEDGING
    assert member.readable_partitions == tp("t", 0, 3)
    ack = send(member, 3_010)  # at once
    assert owned(ack) == {T: (0, 3)}
    assert member.state is MemberState.STABLE
    # a later target that only adds partitions needs no revocation
    assert member.on_response(response(3, {T: (0, 3, 4)}), 3_020) == [AssignPartitions(tp("t", 4))]
    assert owned(send(member, 3_021)) == {T: (0, 3, 4)}


def test_new_target_during_a_reconciliation_follows_its_acknowledgement() -> None:
    member = stable_member((0, 1))
    assert member.on_response(response(2, {T: (0,)}), 100) == [
        RevokePartitions(tp("t", 1), lost=False)
    ]
    send(member, 3_006)
    # the target changes again while partition 1 is still being released
    assert member.on_response(response(3, {T: (0, 2)}), 3_008) == []
    # the running reconciliation finishes and is acknowledged first (so the coordinator can
    # hand partition 1 to its new owner), then the new target is reconciled
    assert member.partitions_released(tp("t", 1)) == []
    assert member.state is MemberState.ACKNOWLEDGING
    assert owned(send(member, 3_009)) == {T: (0,)}
    assert member.state is MemberState.RECONCILING
    assert member.on_response(response(3), 3_011) == [AssignPartitions(tp("t", 2))]
    assert owned(send(member, 3_012)) == {T: (0, 2)}
    assert member.state is MemberState.STABLE


def test_partial_reconciliation_of_known_topics() -> None:
    member = ConsumerGroupMembership("g", member_id="m")
    member.update_topic_names({T: "t"})
    member.subscribe(["t", "u"])
    send(member, 0)
    assert member.on_response(response(1, {T: (0,), U: (1,)}), 5) == [AssignPartitions(tp("t", 0))]
    assert member.unresolved_topic_ids == {U}
    ack = send(member, 6)
    assert owned(ack) == {T: (0,)}
    assert member.state is MemberState.RECONCILING  # u-1 still waits for its name
    assert member.on_response(response(1), 8) == []
    assert member.update_topic_names({U: "u"}) == [AssignPartitions(tp("u", 1))]
    assert owned(send(member, 9)) == {T: (0,), U: (1,)}
    assert member.state is MemberState.STABLE


@pytest.mark.parametrize(
    "code", [error_codes.FENCED_MEMBER_EPOCH.code, error_codes.UNKNOWN_MEMBER_ID.code]
)
def test_fenced_member_loses_everything_then_rejoins_with_epoch_zero(code: int) -> None:
    member = stable_member((0, 1))
    send(member, 3_006)
    events = member.on_response(response(-1, error=code), 3_010)
    assert events == [RevokePartitions(tp("t", 0, 1), lost=True)]
    assert member.state is MemberState.FENCED
    assert member.member_epoch == 0
    assert member.readable_partitions == frozenset()
    assert member.next_request(3_011) is None  # nothing sent until the partitions are released
    assert member.partitions_released(tp("t", 0, 1)) == []
    assert member.state is MemberState.JOINING
    rejoin = send(member, 3_012)  # at once, every field again, same member id
    assert (rejoin.member_id, rejoin.member_epoch) == ("m", 0)
    assert rejoin.subscribed_topic_names == ("t",) and rejoin.server_assignor == "uniform"
    assert rejoin.rebalance_timeout_ms == 300_000
    assert owned(rejoin) == {}
    assert member.on_response(response(5, {T: (1,)}), 3_020) == [AssignPartitions(tp("t", 1))]


def test_fenced_while_reconciling_drops_the_reconciliation() -> None:
    member = stable_member((0, 1))
    member.on_response(response(2, {T: (0, 2)}), 100)
    assert member.pending_revocation == tp("t", 1)
    send(member, 3_006)
    events = member.on_response(response(-1, error=error_codes.FENCED_MEMBER_EPOCH.code), 3_008)
    assert events == [RevokePartitions(tp("t", 0, 1), lost=True)]
    assert member.partitions_released(tp("t", 0, 1)) == []  # no AssignPartitions(t-2)
    assert member.state is MemberState.JOINING
    assert member.owned_partitions == frozenset()


def test_fenced_without_partitions_rejoins_at_once() -> None:
    member = ConsumerGroupMembership("g", member_id="m")
    member.subscribe(["t"])
    send(member, 0)
    events = member.on_response(response(0, error=error_codes.UNKNOWN_MEMBER_ID.code), 1)
    assert events == []
    assert member.state is MemberState.JOINING
    assert send(member, 1).member_epoch == 0


def test_dynamic_member_leaves_with_epoch_minus_one_after_releasing() -> None:
    member = stable_member((0, 1))
    assert member.leave() == [RevokePartitions(tp("t", 0, 1), lost=False)]
    assert member.state is MemberState.PREPARE_LEAVING
    assert member.next_request(10) is None  # not due; leaving waits for the release
    assert member.partitions_released(tp("t", 0, 1)) == []
    assert member.state is MemberState.LEAVING
    leave = send(member, 11)
    assert leave == ConsumerGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=-1)
    assert member.state is MemberState.UNSUBSCRIBED
    assert member.next_request(100_000) is None
    assert member.leave() == []


def test_static_member_leaves_with_epoch_minus_two() -> None:
    member = stable_member((0,), instance_id="exec-1")
    member.leave()
    member.partitions_released(tp("t", 0))
    leave = send(member, 11)
    assert (leave.member_epoch, leave.instance_id) == (-2, "exec-1")
    assert leave.topic_partitions is None and leave.subscribed_topic_names is None
    assert member.state is MemberState.UNSUBSCRIBED


def test_leave_waits_for_the_heartbeat_in_flight_and_ignores_its_answer() -> None:
    member = stable_member((0,))
    send(member, 3_006)
    member.leave()
    member.partitions_released(tp("t", 0))
    assert member.next_request(3_007) is None  # the heartbeat in flight comes first
    assert member.on_response(response(4, {T: (0, 1)}), 3_008) == []  # ignored
    assert send(member, 3_009).member_epoch == -1


def test_leave_before_joining_completes_and_fenced_during_leave() -> None:
    member = ConsumerGroupMembership("g", member_id="m")
    member.subscribe(["t"])
    assert member.leave() == []  # owns nothing: straight to the leave heartbeat
    assert send(member, 0).member_epoch == -1
    member2 = stable_member((0,))
    send(member2, 3_006)
    member2.leave()
    events = member2.on_response(response(-1, error=error_codes.FENCED_MEMBER_EPOCH.code), 3_008)
    assert events == []  # already out of the group: no rejoin, no leave heartbeat
    assert member2.state is MemberState.UNSUBSCRIBED
    assert member2.next_request(10_000) is None


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        (error_codes.UNRELEASED_INSTANCE_ID.code, "group.instance.id 'exec-1'"),
        (error_codes.GROUP_MAX_SIZE_REACHED.code, "group.consumer.max.size"),
        (error_codes.UNSUPPORTED_ASSIGNOR.code, "group 'g'"),
        (error_codes.GROUP_AUTHORIZATION_FAILED.code, "group 'g'"),
        (error_codes.INVALID_REQUEST.code, "group 'g'"),
    ],
)
def test_fatal_errors_end_the_membership(code: int, hint: str) -> None:
    member = stable_member((0,), instance_id="exec-1")
    send(member, 3_006)
    events = member.on_response(response(-1, error=code, message="broker says no"), 3_010)
    assert events[0] == RevokePartitions(tp("t", 0), lost=True)
    assert isinstance(events[1], MembershipFailed)
    error = events[1].error
    assert error.code == code
    assert hint in str(error) and "broker says no" in str(error)
    assert member.state is MemberState.FATAL
    assert member.next_request(100_000) is None
    with pytest.raises(KafkaApiError) as raised:
        member.raise_fatal()
    assert raised.value is error
    with pytest.raises(KafkaApiError):
        member.subscribe(["t"])


@pytest.mark.parametrize(
    "code", [error_codes.NOT_COORDINATOR.code, error_codes.COORDINATOR_NOT_AVAILABLE.code]
)
def test_coordinator_moved_find_it_and_resend_every_field(code: int) -> None:
    member = stable_member((0,))
    send(member, 3_006)
    events = member.on_response(response(-1, error=code), 3_010)
    assert len(events) == 1 and isinstance(events[0], FindCoordinator)
    assert member.state is MemberState.STABLE
    # Retried after the backoff (100 ms), not at once: a broker that names itself coordinator
    # before it has loaded the group would otherwise be asked every few ms.
    assert member.next_request(3_010 + 99) is None
    retry = send(member, 3_010 + 100)
    assert retry.member_epoch == 1
    assert owned(retry) == {T: (0,)} and retry.subscribed_topic_names == ("t",)
    assert retry.rebalance_timeout_ms == 300_000 and retry.server_assignor == "uniform"


def test_coordinator_loading_backs_off_exponentially_up_to_the_cap() -> None:
    member = stable_member((0,), retry_backoff_ms=100, retry_backoff_max_ms=300)
    loading = response(-1, error=error_codes.COORDINATOR_LOAD_IN_PROGRESS.code)
    now = 3_006
    for pause in (100, 200, 300, 300):
        send(member, now)
        assert member.on_response(loading, now) == []
        assert member.next_request(now + pause - 1) is None
        now += pause
    send(member, now)
    member.on_response(response(1), now)  # success resets the backoff
    assert member.time_to_next_request_ms(now) == pytest.approx(3_000)


@pytest.mark.parametrize(
    ("rng", "pauses"),
    [
        (0.0, (80, 160, 240, 240)),  # the factor 0.8 (KIP-580's jitter -20%)
        (0.999_999, (120, 240, 300, 300)),  # the factor 1.2, capped at retry.backoff.max.ms
    ],
)
def test_coordinator_loading_backoff_has_kafkas_jitter(rng: float, pauses: tuple[int, ...]) -> None:
    member = stable_member((0,), retry_backoff_ms=100, retry_backoff_max_ms=300, rng=lambda: rng)
    loading = response(-1, error=error_codes.COORDINATOR_LOAD_IN_PROGRESS.code)
    now = 3_006
    for pause in pauses:
        send(member, now)
        assert member.on_response(loading, now) == []
        assert member.time_to_next_request_ms(now) == pytest.approx(pause, abs=0.01)
        now += pause


def test_failed_request_finds_the_coordinator_and_backs_off() -> None:
    member = stable_member((0,))
    send(member, 3_006)
    events = member.on_request_failed(KafkaConnectionError("broker 1 went away"), 3_050)
    assert len(events) == 1 and isinstance(events[0], FindCoordinator)
    assert "broker 1 went away" in events[0].reason
    assert member.next_request(3_149) is None
    assert owned(send(member, 3_150)) == {T: (0,)}


def test_member_id_is_generated_once_as_kafka_does() -> None:
    member = ConsumerGroupMembership("g")
    assert len(member.member_id) == 22 and not member.member_id.startswith("-")
    assert set(member.member_id) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    assert len({new_member_id() for _ in range(100)}) == 100


def test_bad_settings_raise_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.group\.remote\.assignor"):
        ConsumerGroupMembership("g", server_assignor="sticky")
    with pytest.raises(ConfigError, match=r"kafka\.group\.id"):
        ConsumerGroupMembership("")
    with pytest.raises(ConfigError, match="rebalance_timeout_ms"):
        ConsumerGroupMembership("g", rebalance_timeout_ms=0)


def test_deferred_reconciliation_waits_for_reconcile() -> None:
    """With ``defer_reconciliation`` (a Spark query reconciles at micro-batch boundaries), a
    new target is only recorded by the response; ``reconcile()`` revokes, and the release
    leads to the acknowledgement."""
    member = stable_member()
    member.defer_reconciliation = True
    send(member, 3_010)
    assert member.on_response(response(2, {T: (0,)}), 3_020) == []
    assert member.state is MemberState.RECONCILING
    assert member.readable_partitions == tp("t", 0, 1, 2)  # still read until the boundary
    assert member.reconcile() == [RevokePartitions(tp("t", 1, 2), lost=False)]
    assert member.readable_partitions == tp("t", 0)
    assert member.partitions_released(tp("t", 1, 2)) == []
    assert member.state is MemberState.ACKNOWLEDGING
    ack = send(member, 3_030)
    assert ack.member_epoch == 2 and owned(ack) == {T: (0,)}
    # a gain is deferred too, and needs no release
    assert member.on_response(response(3, {T: (0, 4)}), 3_040) == []
    assert member.readable_partitions == tp("t", 0)
    assert member.reconcile() == [AssignPartitions(tp("t", 4))]
    assert member.reconcile() == []  # nothing left to do


def test_fence_from_a_commit_loses_partitions_and_rejoins() -> None:
    member = stable_member()
    assert member.fence("OffsetCommit: FENCED_MEMBER_EPOCH") == [
        RevokePartitions(tp("t", 0, 1, 2), lost=True)
    ]
    assert member.state is MemberState.FENCED and member.member_epoch == 0
    assert member.partitions_released(tp("t", 0, 1, 2)) == []
    join = send(member, 20)
    assert join.member_epoch == 0 and owned(join) == {}
    # a member not in the group ignores it
    assert ConsumerGroupMembership("g").fence("x") == []


def test_heartbeat_now_makes_the_next_heartbeat_due() -> None:
    member = stable_member()
    assert member.next_request(10) is None  # the interval has not passed
    member.heartbeat_now()
    assert send(member, 10).member_epoch == 1
