"""The KIP-848 I/O member (``consumer/group/consumer/member.py``) against a scripted
coordinator: joining, reconciliation deferred to the micro-batch boundary, OffsetCommit /
OffsetFetch v9 with the member id and epoch, STALE_MEMBER_EPOCH, fencing (heartbeat and
commit), leaving with epoch -1 / -2, and the check for a Kafka 4.0+ broker. Every request and
response goes through its bytes at the version a 4.x broker negotiates. No sockets, no thread
(the heartbeat thread's step, ``heartbeat_once``, is called by the test)."""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from spark_kafka_py.consumer.group.classic.member import GroupMember
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.consumer.member import (
    ConsumerGroupMember,
    describe_consumer_group,
)
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError, KafkaApiError, UnsupportedByBrokerError
from spark_kafka_py.protocol import error_codes
from spark_kafka_py.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeGroup,
    ConsumerGroupDescribeResponse,
)
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
)
from spark_kafka_py.protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
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
from spark_kafka_py.spark.group import StreamGroup
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.planner import Planner

T = uuid.UUID(int=7)
TP = TopicPartition


class Conn:
    """The coordinator's connection as the member reads it (ApiVersions answer)."""

    def __init__(self, heartbeat: tuple[int, int] | None, release: str | None) -> None:
        self.versions = {} if heartbeat is None else {68: heartbeat}
        self.broker_release = release
        self.description = "broker 7 at h:1"

    @property
    def api_versions(self) -> dict[int, tuple[int, int]]:
        return {8: (2, 10), **self.versions}

    def connect(self) -> None:
        pass

    def pick_version(self, request_type: Any, max_version: int | None = None) -> int:
        raise UnsupportedByBrokerError(
            f"{self.description} does not support {request_type.__name__}",
            api_name=request_type.__name__,
            api_key=68,
            broker_versions=None,
            broker_release=self.broker_release,
        )


class Coordinator7:
    """Answers FindCoordinator with node 7 and every other request with ``answer(request)``;
    requests and responses pass through their bytes at the newest version we support."""

    def __init__(
        self, answer: Callable[[Any], Any], heartbeat: tuple[int, int] | None = (0, 1)
    ) -> None:
        self.answer = answer
        self.sent: list[Any] = []
        self.conn = Conn(heartbeat, "4.3" if heartbeat and heartbeat[1] >= 1 else "3.9")

    def least_loaded_node(self) -> int:
        return 0

    def connection(self, node_id: int) -> Conn:
        assert node_id == 7
        return self.conn

    def send(
        self,
        node_id: int,
        request: Any,
        *,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> Any:
        version = type(request).MAX_VERSION
        request = type(request).decode(request.encode(version), version)
        if isinstance(request, FindCoordinatorRequest):
            response: Any = FindCoordinatorResponse(
                coordinators=(Coordinator(key="g", node_id=7, host="h", port=1, error_code=0),)
            )
        else:
            assert node_id == 7
            self.sent.append(request)
            response = self.answer(request)
        return type(response).decode(response.encode(version), version)

    def of(self, kind: type) -> list[Any]:
        return [r for r in self.sent if isinstance(r, kind)]


def hb(epoch: int, partitions: tuple[int, ...] | None = None, error: int = 0) -> Any:
    return ConsumerGroupHeartbeatResponse(
        error_code=error,
        member_epoch=epoch,
        heartbeat_interval_ms=5_000,
        assignment=None
        if partitions is None
        else ConsumerGroupHeartbeatAssignment(
            topic_partitions=(
                ConsumerGroupHeartbeatTopicPartitions(topic_id=T, partitions=partitions),
            )
        ),
    )


def commit_ok(request: OffsetCommitRequest, error: int = 0) -> OffsetCommitResponse:
    return OffsetCommitResponse(
        topics=tuple(
            OffsetCommitResponseTopic(
                name=t.name,
                partitions=tuple(
                    OffsetCommitResponsePartition(
                        partition_index=p.partition_index, error_code=error
                    )
                    for p in t.partitions
                ),
            )
            for t in request.topics
        )
    )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def member(
    coordinator: Coordinator7, clock: Clock | None = None, **config: Any
) -> ConsumerGroupMember:
    clock = clock or Clock()
    cfg = GroupConfig(
        group_id="g",
        protocol="consumer",
        retry_backoff_ms=1,
        default_api_timeout_ms=2_000,
        **config,
    )
    return ConsumerGroupMember(
        cfg, coordinator, lambda topics: {T: "t"}, clock=clock, sleep=clock.sleep, member_id="m1"
    )


class Script:
    """A coordinator whose heartbeat answers are queued by the test."""

    def __init__(self) -> None:
        self.heartbeats: list[Any] = []
        self.commits: list[int] = []

    def __call__(self, request: Any) -> Any:
        if isinstance(request, ConsumerGroupHeartbeatRequest):
            assert self.heartbeats, f"unexpected heartbeat {request}"
            return self.heartbeats.pop(0)
        if isinstance(request, OffsetCommitRequest):
            return commit_ok(request, self.commits.pop(0) if self.commits else 0)
        raise AssertionError(f"unexpected {request}")


def joined(partitions: tuple[int, ...] = (0, 1, 2, 3), **config: Any):  # type: ignore[no-untyped-def]
    script = Script()
    coordinator = Coordinator7(script)
    m = member(coordinator, **config)
    script.heartbeats += [hb(1, partitions), hb(1)]  # join, then acknowledge
    assert m.ensure_active(["t"]) == tuple(TP("t", p) for p in partitions)
    return script, coordinator, m


def owned(request: ConsumerGroupHeartbeatRequest) -> tuple[int, ...] | None:
    if request.topic_partitions is None:
        return None
    return tuple(p for t in request.topic_partitions for p in t.partitions)


def test_join_then_acknowledge_in_the_boundary_call() -> None:
    _, coordinator, m = joined()
    join, ack = coordinator.of(ConsumerGroupHeartbeatRequest)
    assert (join.member_id, join.member_epoch, join.subscribed_topic_names) == ("m1", 0, ("t",))
    assert join.rebalance_timeout_ms == 300_000  # max.poll.interval.ms, as Java sends
    assert ack.member_epoch == 1 and owned(ack) == (0, 1, 2, 3)
    assert m.generation_id == 1 and m.identity() == ("m1", 1)
    assert m.assignment == tuple(TP("t", p) for p in range(4))


def test_remote_assignor_and_instance_id_are_sent() -> None:
    script = Script()
    coordinator = Coordinator7(script)
    m = member(coordinator, remote_assignor="uniform", group_instance_id="i-1")
    script.heartbeats += [hb(1, ())]
    assert m.ensure_active(["t"]) == ()
    (join,) = coordinator.of(ConsumerGroupHeartbeatRequest)
    assert (join.server_assignor, join.instance_id) == ("uniform", "i-1")


def test_revocation_waits_for_the_boundary_and_is_acknowledged_there() -> None:
    script, coordinator, m = joined()
    # the heartbeat thread learns that partitions 2 and 3 go away ...
    script.heartbeats.append(hb(2, (0, 1)))
    m.machine.heartbeat_now()
    assert m.heartbeat_once() == []
    # ... but the member keeps reading (and may commit) them until the next boundary
    assert m.assignment == tuple(TP("t", p) for p in range(4))
    assert m.machine.readable_partitions == {TP("t", p) for p in range(4)}
    # the boundary: the caller commits first (epoch 2), then releases; the ack goes out at once
    assert m.commit({TP("t", 2): 10, TP("t", 3): 11}) == {TP("t", 2): 10, TP("t", 3): 11}
    script.heartbeats.append(hb(2))
    assert m.ensure_active(["t"]) == (TP("t", 0), TP("t", 1))
    commit = coordinator.of(OffsetCommitRequest)[-1]
    assert (commit.member_id, commit.generation_id_or_member_epoch) == ("m1", 2)
    ack = coordinator.of(ConsumerGroupHeartbeatRequest)[-1]
    assert ack.member_epoch == 2 and owned(ack) == (0, 1)
    assert coordinator.sent.index(commit) < coordinator.sent.index(ack)
    # newly assigned partitions also wait for the boundary
    script.heartbeats.append(hb(3, (0, 1, 5)))
    m.machine.heartbeat_now()
    m.heartbeat_once()
    assert m.machine.readable_partitions == {TP("t", 0), TP("t", 1)}
    script.heartbeats.append(hb(3))
    assert m.ensure_active(["t"]) == (TP("t", 0), TP("t", 1), TP("t", 5))


def test_stale_member_epoch_refreshes_the_epoch_and_commits_again() -> None:
    script, coordinator, m = joined()
    script.commits.append(error_codes.STALE_MEMBER_EPOCH.code)
    script.heartbeats.append(hb(4))  # the refresh: the coordinator moved to epoch 4
    assert m.commit({TP("t", 0): 3}) == {TP("t", 0): 3}
    first, second = coordinator.of(OffsetCommitRequest)
    assert first.generation_id_or_member_epoch == 1
    assert second.generation_id_or_member_epoch == 4


@pytest.mark.parametrize("code", ["FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID"])
def test_commit_fenced_loses_partitions_and_rejoins_with_epoch_zero(
    code: str, caplog: pytest.LogCaptureFixture
) -> None:
    script, coordinator, m = joined((0, 1))
    script.commits.append(getattr(error_codes, code).code)
    script.heartbeats.append(hb(6, (1,)))  # the rejoin
    assert m.commit({TP("t", 0): 3, TP("t", 1): 4}) == {}
    assert "were not committed" in caplog.text
    rejoin = coordinator.of(ConsumerGroupHeartbeatRequest)[-1]
    assert (rejoin.member_id, rejoin.member_epoch, owned(rejoin)) == ("m1", 0, ())
    assert m.assignment == ()
    script.heartbeats.append(hb(6))
    assert m.ensure_active(["t"]) == (TP("t", 1),)


def test_heartbeat_fenced_partitions_are_lost_and_rejoined_at_the_boundary() -> None:
    script, coordinator, m = joined((0, 1))
    script.heartbeats.append(hb(0, error=error_codes.FENCED_MEMBER_EPOCH.code))
    m.machine.heartbeat_now()
    m.heartbeat_once()
    # lost: nothing to commit (the coordinator would refuse the epoch), nothing to read
    assert m.assignment == () and m.generation_id == -1
    assert m.machine.readable_partitions == frozenset()
    script.heartbeats += [hb(8, (0,)), hb(8)]
    assert m.ensure_active(["t"]) == (TP("t", 0),)
    join = coordinator.of(ConsumerGroupHeartbeatRequest)[-2]
    assert join.member_epoch == 0 and join.subscribed_topic_names == ("t",)


def test_offset_fetch_carries_member_id_and_epoch() -> None:
    script, coordinator, m = joined((0,))

    def answer(request: Any) -> Any:
        if isinstance(request, OffsetFetchRequest):
            return OffsetFetchResponse(
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
                                ),
                            ),
                        ),
                    ),
                )
            )
        return script(request)

    coordinator.answer = answer
    assert m.fetch_committed([TP("t", 0)]) == {TP("t", 0): 42}
    (fetch,) = coordinator.of(OffsetFetchRequest)
    assert (fetch.groups[0].member_id, fetch.groups[0].member_epoch) == ("m1", 1)


@pytest.mark.parametrize(("instance", "epoch"), [(None, -1), ("i-1", -2)])
def test_close_leaves_with_epoch_minus_one_or_minus_two(instance: str | None, epoch: int) -> None:
    script, coordinator, m = joined((0,), group_instance_id=instance)
    script.heartbeats.append(hb(epoch))
    m.close()
    leave = coordinator.of(ConsumerGroupHeartbeatRequest)[-1]
    assert (leave.member_id, leave.member_epoch, leave.instance_id) == ("m1", epoch, instance)
    assert m.generation_id == -1


def test_fatal_heartbeat_error_is_raised_at_the_boundary() -> None:
    script, _, m = joined((0,))
    script.heartbeats.append(hb(1, error=error_codes.GROUP_MAX_SIZE_REACHED.code))
    m.machine.heartbeat_now()
    m.heartbeat_once()
    with pytest.raises(KafkaApiError, match=r"GROUP_MAX_SIZE_REACHED.*group 'g'"):
        m.ensure_active(["t"])


@pytest.mark.parametrize("versions", [(0, 0), None])
def test_broker_without_heartbeat_v1_is_unsupported(versions: tuple[int, int] | None) -> None:
    coordinator = Coordinator7(Script(), heartbeat=versions)
    m = member(coordinator)
    with pytest.raises(UnsupportedByBrokerError) as caught:
        m.ensure_active(["t"])
    assert coordinator.sent == []  # nothing sent to the coordinator
    if versions is not None:
        text = str(caught.value)
        assert "'kafka.group.protocol'='consumer'" in text
        assert "versions 0-0 only" in text and "Kafka 3.9 or later" in text
        assert "needs a Kafka 4.0+ broker (KIP-848)" in text
        assert caught.value.broker_versions == (0, 0)


BASE = {"kafka.bootstrap.servers": "h:1", "subscribe": "t", "kafka.group.id": "g"}


def test_options_protocol_and_remote_assignor() -> None:
    config = parse_options(BASE, streaming=True).group.config
    assert config is not None and (config.protocol, config.remote_assignor) == ("classic", None)
    config = parse_options(
        {**BASE, "kafka.group.protocol": "Consumer", "kafka.group.remote.assignor": "RANGE"},
        streaming=True,
    ).group.config
    assert config is not None and (config.protocol, config.remote_assignor) == ("consumer", "range")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"kafka.group.protocol": "eager"}, "kafka.group.protocol"),
        (
            {"kafka.group.remote.assignor": "range"},
            "cannot be set when kafka.group.protocol=classic",
        ),
        (
            {"kafka.group.protocol": "consumer", "kafka.group.remote.assignor": "sticky"},
            "kafka.group.remote.assignor",
        ),
        (
            {"kafka.group.protocol": "consumer", "kafka.partition.assignment.strategy": "range"},
            "'kafka.partition.assignment.strategy' cannot be set when "
            "'kafka.group.protocol'='consumer'",
        ),
        (
            {"kafka.group.protocol": "consumer", "kafka.session.timeout.ms": "10000"},
            "'kafka.session.timeout.ms' cannot be set",
        ),
        (
            {"kafka.group.protocol": "consumer", "kafka.heartbeat.interval.ms": "1000"},
            "'kafka.heartbeat.interval.ms' cannot be set",
        ),
    ],
)
def test_option_errors_name_the_option(extra: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_options({**BASE, **extra}, streaming=True)


def test_protocol_without_group_id_is_an_error() -> None:
    options = {
        "kafka.bootstrap.servers": "h:1",
        "subscribe": "t",
        "kafka.group.protocol": "consumer",
    }
    with pytest.raises(ConfigError, match=re.escape("need 'kafka.group.id'")):
        parse_options(options, streaming=True)


def test_describe_consumer_group_and_its_errors() -> None:
    group = ConsumerGroupDescribeGroup(
        error_code=0,
        group_id="g",
        group_state="Stable",
        group_epoch=3,
        assignment_epoch=3,
        assignor_name="range",
        members=(),
    )
    answers = [
        ConsumerGroupDescribeResponse(
            groups=(dataclasses.replace(group, error_code=error_codes.NOT_COORDINATOR.code),)
        ),
        ConsumerGroupDescribeResponse(groups=(group,)),
        ConsumerGroupDescribeResponse(
            groups=(
                dataclasses.replace(
                    group,
                    error_code=error_codes.GROUP_ID_NOT_FOUND.code,
                    error_message="Group g not found.",
                ),
            )
        ),
    ]
    coordinator = Coordinator7(lambda request: answers.pop(0))
    channel = member(coordinator).channel
    assert describe_consumer_group(channel) == group  # after the coordinator moved
    with pytest.raises(KafkaApiError, match=re.escape("GROUP_ID_NOT_FOUND (error code 69) in")):
        describe_consumer_group(channel)


@pytest.mark.parametrize(
    ("extra", "kind"),
    [
        ({"kafka.group.protocol": "consumer"}, ConsumerGroupMember),
        ({}, GroupMember),
        # assign joins no group (either protocol): "simple" commits of a classic member
        ({"kafka.group.protocol": "consumer", "subscribe": "", "assign": '{"t":[0]}'}, GroupMember),
    ],
)
def test_stream_group_picks_the_member_by_protocol(extra: dict[str, str], kind: type) -> None:
    opts = {**BASE, **extra}
    if not opts["subscribe"]:
        del opts["subscribe"]
    options = parse_options(opts, streaming=True)
    stream_group = StreamGroup(options, options.group, Planner(options))
    assert type(stream_group.member) is kind
    stream_group.close()  # never joined: nothing to send, no connection opened
