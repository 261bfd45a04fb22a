"""The KIP-848 consumer group protocol (``kafka.group.protocol=consumer``) with a real broker
and real Spark: two queries sharing a group split the partitions and together read every
record exactly once; an AvailableNow run leaves lag 0 in Kafka's own ConsumerGroupCommand; a
Kafka 3.x broker fails with an error naming the feature, the release it needs and the broker's.

Expected values come from the producer's input and from Kafka's tools, never from the code
under test.
"""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.consumer.member import (
    ConsumerGroupMember,
    describe_consumer_group,
)
from spark_kafka_py.consumer.group.transport import CoordinatorChannel
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import UnsupportedByBrokerError
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import (
    consumer_groups_describe,
    create_topic,
    produce,
)
from tests.group_queries import (
    committed_lag,
    describe_members,
    expected_rows,
    records,
    sink_rows,
    start_group_query,
)
from tests.group_queries import wait_until as wait_for

pytestmark = pytest.mark.integration


#: Options of every query of this module: the consumer protocol, from the group's offsets.
QUERY_OPTIONS = {
    "kafka.group.protocol": "consumer",
    "startingOffsets": "group",
    "groupOffsetsFallback": "earliest",
}


start_query = functools.partial(start_group_query, defaults=QUERY_OPTIONS)


def wait_until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    wait_for(check, timeout_s, what, poll_s=0.5)


def members(bootstrap: str, group: str) -> dict[str, set[int]]:
    """ConsumerGroupCommand --describe --members --verbose: member id -> assigned partitions."""
    return {m: {p for _, p in tps} for m, tps in describe_members(bootstrap, group).items()}


def assignment_sizes(bootstrap: str, group: str) -> list[int]:
    """Partitions per member, sorted, from the coordinator's ConsumerGroupDescribe (cheaper to
    poll than Kafka's tool, a JVM each time; the tool confirms the end state)."""
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        channel = CoordinatorChannel(
            GroupConfig(group_id=group), client, clock=time.monotonic, sleep=time.sleep
        )
        described = describe_consumer_group(channel)
    return sorted(
        sum(len(t.partitions) for t in m.assignment.topic_partitions) for m in described.members
    )


def test_two_queries_split_the_partitions_every_record_once(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    """Query a owns the 4 partitions; query b joins; the coordinator moves 2 of them to b once
    a released them (after committing what it processed): 2 + 2 in ConsumerGroupCommand, and
    the two sinks hold every record exactly once (a clean move re-reads nothing)."""
    topic = new_topic(partitions=4)
    group = f"g848-{uuid.uuid4().hex[:8]}"
    first = records(4, 5, "a")
    produce(kafka_bootstrap, topic, first)
    opts = {"kafka.group.remote.assignor": "range"}
    qa = start_query(spark, kafka_bootstrap, topic, group, tmp_path, "a", **opts)
    qb: StreamingQuery | None = None
    try:
        wait_until(lambda: len(sink_rows(spark, tmp_path, "a")) == 20, 90, "query a reads 20")
        assert assignment_sizes(kafka_bootstrap, group) == [4]
        # the coordinator runs the server-side assignor the members asked for
        state = consumer_groups_describe(kafka_bootstrap, group, extra=["--state"])
        assert re.search(rf"^{re.escape(group)}\s.*\brange\s+Stable\b", state, re.M), state
        qb = start_query(spark, kafka_bootstrap, topic, group, tmp_path, "b", **opts)
        wait_until(
            lambda: assignment_sizes(kafka_bootstrap, group) == [2, 2],
            90,
            "two members with two partitions each",
        )
        split = members(kafka_bootstrap, group)
        assert sorted(len(ps) for ps in split.values()) == [2, 2]
        assert sorted(p for ps in split.values() for p in ps) == [0, 1, 2, 3]
        second = records(4, 5, "b")
        produce(kafka_bootstrap, topic, second)
        want = expected_rows(first + second)
        wait_until(
            lambda: (
                set(sink_rows(spark, tmp_path, "a")) | set(sink_rows(spark, tmp_path, "b")) == want
            ),
            90,
            "every record in one of the sinks",
        )
        wait_until(
            lambda: committed_lag(kafka_bootstrap, group, topic) == {p: (10, 0) for p in range(4)},
            60,
            "committed offsets 10, lag 0",
        )
    finally:
        qa.stop()
        if qb is not None:
            qb.stop()
    rows_a, rows_b = sink_rows(spark, tmp_path, "a"), sink_rows(spark, tmp_path, "b")
    assert Counter(rows_a + rows_b) == Counter(want)  # every record exactly once
    b_parts = {p for p, _, _ in rows_b}
    assert len(b_parts) == 2 and all(o >= 5 for _, o, _ in rows_b)
    assert {p for p, _, v in rows_a if v.startswith("b-")} == set(range(4)) - b_parts
    # stop() left the group (epoch -1): no member remains
    wait_until(lambda: assignment_sizes(kafka_bootstrap, group) == [], 30, "both to leave")
    assert members(kafka_bootstrap, group) == {}


def test_available_now_lag_zero_in_consumer_group_command(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    """An AvailableNow run ends with committed == processed: LAG 0 per partition in
    ``kafka-consumer-groups.sh --describe``."""
    topic = new_topic(partitions=3)
    group = f"g848-{uuid.uuid4().hex[:8]}"
    recs = records(3, 7, "a")
    produce(kafka_bootstrap, topic, recs)
    q = start_query(
        spark,
        kafka_bootstrap,
        topic,
        group,
        tmp_path,
        "q",
        available_now=True,
    )
    if not q.awaitTermination(120):
        q.stop()
        pytest.fail("the AvailableNow query did not end within 120 s")
    assert q.exception() is None
    rows = sink_rows(spark, tmp_path, "q")
    assert Counter(rows) == Counter(expected_rows(recs))
    assert committed_lag(kafka_bootstrap, group, topic) == {p: (7, 0) for p in range(3)}


@pytest.mark.parametrize("version", ["3.9.1"])
def test_kafka_3_broker_fails_naming_feature_and_releases(
    version: str, kafka_cluster_factory: Callable[..., LocalKafkaCluster]
) -> None:
    """Kafka 3.9 serves only the early-access ConsumerGroupHeartbeat v0 (3.6 none at all): the
    member fails before joining, naming the option, the release needed and the broker's."""
    cluster = kafka_cluster_factory(1, kafka_version=version)
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, "t", 2)
    config = GroupConfig(group_id="g", protocol="consumer", default_api_timeout_ms=30_000)
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        member = ConsumerGroupMember(config, client, lambda topics: {})
        with pytest.raises(UnsupportedByBrokerError) as caught:
            member.ensure_active(["t"])
    text = str(caught.value)
    line = version.rsplit(".", 1)[0]
    assert "group.protocol" in text and "consumer" in text, text
    assert "Kafka 4.0+ broker (KIP-848)" in text, text
    assert f"Kafka {line} or later" in text, text
    assert caught.value.broker_release == line


@pytest.mark.broker_matrix
def test_member_joins_commits_and_leaves_or_names_the_release(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    """No Spark: the member on the session's broker (any release of the matrix). Kafka 4.0+:
    it joins, owns both partitions, commits with its member epoch (ConsumerGroupCommand shows
    the offset) and leaves (no member remains). Kafka 3.x: the error names the release."""
    topic = new_topic(partitions=2)
    group = f"g848-{uuid.uuid4().hex[:8]}"
    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)
    with BrokerConnection(host, int(port)) as conn:
        conn.connect()
        offered = conn.api_versions.get(68)  # ConsumerGroupHeartbeat, as the broker says
    config = GroupConfig(group_id=group, protocol="consumer", default_api_timeout_ms=30_000)
    with KafkaClient(ClientConfig.from_bootstrap(kafka_bootstrap)) as client:

        def names(topics: object) -> dict[uuid.UUID, str]:
            infos = client.metadata([topic]).topics
            return {i.topic_id: n for n, i in infos.items() if i.topic_id is not None}

        member = ConsumerGroupMember(config, client, names)
        if offered is None or offered[1] < 1:
            with pytest.raises(UnsupportedByBrokerError, match=r"Kafka 4\.0\+ broker \(KIP-848\)"):
                member.ensure_active([topic])
            return
        parts = (TopicPartition(topic, 0), TopicPartition(topic, 1))
        # A topic created a moment ago may not be in the coordinator's metadata image yet: the
        # first heartbeat's target assignment is then empty, and a later one brings both.
        owned = member.ensure_active([topic])
        deadline = time.monotonic() + 30
        while owned != parts and time.monotonic() < deadline:
            time.sleep(0.2)
            member.heartbeat_once()
            owned = member.ensure_active([topic])
        assert owned == parts
        assert member.commit({parts[0]: 0, parts[1]: 0}) == {parts[0]: 0, parts[1]: 0}
        assert member.fetch_committed(parts) == {parts[0]: 0, parts[1]: 0}
        member.close()
        channel = CoordinatorChannel(config, client, clock=time.monotonic, sleep=time.sleep)
        assert describe_consumer_group(channel).members == ()
    assert committed_lag(kafka_bootstrap, group, topic) == {0: (0, 0), 1: (0, 0)}
