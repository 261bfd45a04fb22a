"""Group options of format("pykafka"): parsed with the other options, validated with errors
naming the option."""

from __future__ import annotations

import pickle

import pytest

from spark_kafka_py.spark.group import StreamGroup
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.planner import Planner

BASE = {"kafka.bootstrap.servers": "localhost:9092", "subscribe": "t"}


def parse(**extra: str):  # type: ignore[no-untyped-def]
    options = parse_options({**BASE, **extra}, streaming=True)
    return options, options.group


def test_no_group_id_no_group() -> None:
    _, group = parse()
    assert group.config is None


def test_group_settings() -> None:
    options, group = parse(
        **{
            "kafka.group.id": "g",
            "kafka.group.instance.id": "i-1",
            "kafka.session.timeout.ms": "10000",
            "kafka.heartbeat.interval.ms": "1000",
            "kafka.max.poll.interval.ms": "60000",
            "kafka.partition.assignment.strategy": (
                "roundrobin,org.apache.kafka.clients.consumer.RangeAssignor"
            ),
            "startingOffsets": "group",
            "groupOffsetsFallback": "LATEST",
        }
    )
    cfg = group.config
    assert cfg is not None
    assert (cfg.group_id, cfg.group_instance_id) == ("g", "i-1")
    assert (cfg.session_timeout_ms, cfg.heartbeat_interval_ms, cfg.max_poll_interval_ms) == (
        10_000,
        1_000,
        60_000,
    )
    assert cfg.assignors == ("roundrobin", "range")
    assert group.start_from_group and group.fallback == "latest" and group.join
    assert options.consumer.group_id == "g"


def test_assign_commits_without_joining() -> None:
    options = parse_options(
        {"kafka.bootstrap.servers": "h:1", "assign": '{"t":[0]}', "kafka.group.id": "g"},
        streaming=True,
    )
    assert not options.group.join


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"startingOffsets": "group"}, "'startingOffsets'='group' needs 'kafka.group.id'"),
        ({"kafka.session.timeout.ms": "1000"}, "need 'kafka.group.id'"),
        ({"kafka.group.id": "g", "groupOffsetsFallback": "none"}, "'groupOffsetsFallback'"),
        (
            {"kafka.group.id": "g", "kafka.session.timeout.ms": "x"},
            "'kafka.session.timeout.ms' must be an integer",
        ),
        (
            {"kafka.group.id": "g", "kafka.heartbeat.interval.ms": "50000"},
            "'kafka.heartbeat.interval.ms' \\(50000\\) must be lower",
        ),
        (
            {"kafka.group.id": "g", "kafka.partition.assignment.strategy": "sticky"},
            "not supported",
        ),
        (
            {"kafka.group.id": "g", "kafka.partition.assignment.strategy": "magic"},
            "unknown assignor 'magic'",
        ),
        ({"kafka.group.id": " "}, "'kafka.group.id' must not be empty"),
    ],
)
def test_bad_group_options(extra: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(**extra)


def test_stream_group_pickles_without_live_state() -> None:
    options, group = parse(**{"kafka.group.id": "g"})
    sg = StreamGroup(options, group, Planner(options))
    sg._committed[("t", 0)] = 5  # type: ignore[index]
    copy = pickle.loads(pickle.dumps(sg))
    assert copy._member is None and copy._client is None and copy._committed == {}


def test_commit_group_offsets_is_for_batch_reads() -> None:
    with pytest.raises(ValueError, match="'commitGroupOffsets' is for batch reads"):
        parse(**{"kafka.group.id": "g", "commitGroupOffsets": "true"})
    raw = {**BASE, "kafka.group.id": "g", "commitGroupOffsets": "TRUE", "startingOffsets": "group"}
    parsed = parse_options(raw, streaming=False).group
    assert parsed.commit_batch_reads and parsed.start_from_group
    with pytest.raises(ValueError, match="'commitGroupOffsets' must be 'true' or 'false'"):
        parse_options({**raw, "commitGroupOffsets": "yes"}, streaming=False)
