"""KIP-848 with real brokers, real Spark and Kafka's own Java consumer (issue 16).

Queries with ``kafka.group.protocol=consumer`` share a group with a Java ``KafkaConsumer``
(``group.protocol=consumer``); a member killed with SIGKILL (the Java consumer, or a Python
process holding our member) is fenced by the coordinator after the group's session timeout and
its partitions move to the other with no record lost; a group used by the classic protocol and
left empty is taken over by the consumer protocol (offline migration, KIP-848) from its
committed offsets.

One broker for the module (Kafka 4.0 or later; the release of ``SPARK_KAFKA_PY_KAFKA_VERSION``),
started with short KIP-848 timeouts: the consumer protocol's session timeout and heartbeat
interval are the broker's (``group.consumer.session.timeout.ms``, default 45 s, not below
``group.consumer.min.session.timeout.ms``, also 45 s; ``group.consumer.heartbeat.interval.ms``,
default 5 s), never the member's.

The Java member is ``sparkkafkapy.GroupConsumer`` (``spark_kafka_py/testing/java``): it prints
each record before committing it (commitSync after every poll), so a clean stop commits all it
printed and a kill leaves at most its last poll to be read again. Expected records come from the
producer's input, members and assignments from Kafka's ConsumerGroupCommand.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.jars import kafka_classpath, selected_kafka_version
from spark_kafka_py.testing.jvm import compile_java, java_command
from spark_kafka_py.testing.tools import consumer_groups_describe, create_topic, produce
from tests.group_queries import (
    Row,
    committed_lag,
    describe_member_columns,
    describe_members,
    expected_rows,
    records,
    run_to_end,
    sink_rows,
    start_group_query,
    wait_until,
)

pytestmark = pytest.mark.integration

#: The consumer protocol's session timeout on this module's broker (ms): a killed member is
#: fenced this long after its last heartbeat.
SESSION_TIMEOUT_MS = 10_000
#: Its heartbeat interval (ms).
HEARTBEAT_INTERVAL_MS = 1_000
#: KIP-848 group settings of the broker (Kafka's ``GroupCoordinatorConfig``).
SERVER_PROPS = {
    "group.consumer.session.timeout.ms": str(SESSION_TIMEOUT_MS),
    "group.consumer.min.session.timeout.ms": str(SESSION_TIMEOUT_MS),
    "group.consumer.heartbeat.interval.ms": str(HEARTBEAT_INTERVAL_MS),
    "group.consumer.min.heartbeat.interval.ms": str(HEARTBEAT_INTERVAL_MS),
}
GROUP_CONSUMER_CLASS = "sparkkafkapy.GroupConsumer"


@pytest.fixture(scope="module")
def bootstrap() -> Iterator[str]:
    """A one-node Kafka 4.x cluster with the short KIP-848 timeouts above, for the module."""
    version = selected_kafka_version()
    if tuple(int(x) for x in version.split(".")) < (4, 0, 0):
        pytest.skip(f"KIP-848 (the consumer group protocol) needs Kafka 4.0+, broker {version}")
    with LocalKafkaCluster(1, server_props=SERVER_PROPS) as cluster:
        yield cluster.bootstrap_servers


def new_topic(bootstrap: str, partitions: int) -> str:
    name = f"interop-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, name, partitions)
    return name


def start_query(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    group: str,
    tmp: Path,
    name: str,
    *,
    protocol: str = "consumer",
    available_now: bool = False,
) -> StreamingQuery:
    """A query of ``group`` (``kafka.group.protocol=protocol``) from the group's committed
    offsets (else earliest) into a parquet sink ``tmp/<name>-out``."""
    options = {
        "kafka.group.protocol": protocol,
        "startingOffsets": "group",
        "groupOffsetsFallback": "earliest",
    }
    if protocol == "classic":
        options |= {"kafka.session.timeout.ms": "10000", "kafka.heartbeat.interval.ms": "1000"}
    return start_group_query(
        spark, bootstrap, topic, group, tmp, name, available_now=available_now, defaults=options
    )


class JavaMember:
    """``sparkkafkapy.GroupConsumer`` in a process of its own: a Java KafkaConsumer in
    ``group`` with ``configs`` (e.g. ``group.protocol=consumer``); its stdout is collected by a
    thread (:attr:`rows`, :attr:`events`)."""

    def __init__(self, bootstrap: str, group: str, topic: str, *configs: str) -> None:
        classpath = kafka_classpath()
        source = resources.files("spark_kafka_py.testing").joinpath("java/GroupConsumer.java")
        classes = compile_java([source], classpath)
        cmd = java_command(
            GROUP_CONSUMER_CLASS,
            [bootstrap, group, topic, *configs],
            classpath=f"{classpath}{os.pathsep}{classes}",
            heap="128m",
        )
        self.rows: list[Row] = []
        self.events: list[str] = []
        self._lock = threading.Lock()
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            fields = raw.decode("utf-8").rstrip("\n").split("\t")
            with self._lock:
                if fields[0] == "R":
                    self.rows.append((int(fields[1]), int(fields[2]), fields[3]))
                else:
                    self.events.append(" ".join(fields))

    def read_rows(self) -> list[Row]:
        with self._lock:
            return list(self.rows)

    def owned(self) -> set[int]:
        """The partitions it owns now, from its ASSIGNED / REVOKED / LOST lines."""
        owned: set[int] = set()
        with self._lock:
            for event in self.events:
                kind, _, parts = event.partition(" ")
                changed = {int(p) for p in parts.split(",") if p}
                if kind == "ASSIGNED":
                    owned |= changed
                elif kind in ("REVOKED", "LOST"):
                    owned -= changed
        return owned

    def wait_owned(self, count: int, timeout_s: float = 120) -> None:
        """Wait until it owns ``count`` partitions (its own lines: no tool run per check)."""
        deadline = time.monotonic() + timeout_s
        while len(self.owned()) != count:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"the Java consumer does not own {count}: {self.events}")
            time.sleep(0.2)

    def stop(self, timeout_s: float = 60) -> None:
        """Ask for a clean stop (commit, leave the group) and wait for the exit."""
        assert self.process.stdin is not None
        self.process.stdin.write(b"stop\n")
        self.process.stdin.close()
        code = self.process.wait(timeout_s)
        self._reader.join(10)
        assert code == 0, self.stderr()
        assert self.events[-1] == "CLOSED", self.events

    def kill(self) -> None:
        """SIGKILL: no commit, no leaving heartbeat (a crash)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self._reader.join(10)

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8", "replace")[-3000:]


def assignment_sizes(bootstrap: str, group: str) -> list[int]:
    return sorted(len(parts) for parts in describe_members(bootstrap, group).values())


def consumer_protocol_members(bootstrap: str, group: str) -> list[dict[str, str]]:
    """ConsumerGroupCommand ``--members --verbose`` rows; consumer-protocol members have the
    CURRENT-EPOCH column (member epoch, KIP-848)."""
    rows = describe_member_columns(bootstrap, group)
    assert all("CURRENT-EPOCH" in row for row in rows), rows
    return rows


def test_query_and_java_consumer_share_a_consumer_protocol_group(
    spark: SparkSession, bootstrap: str, tmp_path: Path
) -> None:
    """A query and a Java KafkaConsumer, both ``group.protocol=consumer``, split the 4
    partitions 2 + 2 and together read every record exactly once (clean handovers only)."""
    topic = new_topic(bootstrap, 4)
    group = f"g-{uuid.uuid4().hex[:8]}"
    first = records(4, 5, "a")
    produce(bootstrap, topic, first)
    qa = start_query(spark, bootstrap, topic, group, tmp_path, "a")
    java: JavaMember | None = None
    try:
        wait_until(lambda: len(sink_rows(spark, tmp_path, "a")) == 20, 120, "query a reads 20")
        java = JavaMember(bootstrap, group, topic, "group.protocol=consumer")
        java.wait_owned(2)
        wait_until(
            lambda: assignment_sizes(bootstrap, group) == [2, 2],
            120,
            "the query and the Java consumer own two partitions each",
        )
        assert len(consumer_protocol_members(bootstrap, group)) == 2
        second = records(4, 5, "b")
        produce(bootstrap, topic, second)
        want = expected_rows(first + second)
        wait_until(
            lambda: set(sink_rows(spark, tmp_path, "a")) | set(java.read_rows()) == want,
            120,
            "every record read by the query or the Java consumer",
        )
        wait_until(
            lambda: committed_lag(bootstrap, group, topic) == {p: (10, 0) for p in range(4)},
            60,
            "committed offsets 10, lag 0",
        )
        java.stop()
    finally:
        if java is not None:
            java.kill()
        qa.stop()
    rows_a, java_rows = sink_rows(spark, tmp_path, "a"), java.read_rows()
    # The Java consumer read the second round of its two partitions from the offsets the query
    # had committed (5) when it released them: every record exactly once.
    java_parts = {p for p, _, _ in java_rows}
    assert len(java_parts) == 2 and min(o for _, o, _ in java_rows) == 5, java.events
    assert {p for p, _, v in rows_a if v.startswith("b-")} == set(range(4)) - java_parts
    assert Counter(rows_a + java_rows) == Counter(want)


def test_killed_java_member_is_fenced_and_the_query_takes_its_partitions(
    spark: SparkSession, bootstrap: str, tmp_path: Path
) -> None:
    """SIGKILL of the Java member: the coordinator keeps it until the session timeout (no
    leaving heartbeat), then fences it; the query gets its partitions from their committed
    offsets and the two together lose no record (a record of the Java consumer's last,
    uncommitted poll may be read twice, in the partitions that moved)."""
    topic = new_topic(bootstrap, 4)
    group = f"g-{uuid.uuid4().hex[:8]}"
    first = records(4, 5, "a")
    produce(bootstrap, topic, first)
    java = JavaMember(bootstrap, group, topic, "group.protocol=consumer")
    qa: StreamingQuery | None = None
    try:
        wait_until(lambda: len(java.read_rows()) == 20, 120, "the Java consumer reads 20")
        qa = start_query(spark, bootstrap, topic, group, tmp_path, "a")
        java.wait_owned(2)
        wait_until(
            lambda: assignment_sizes(bootstrap, group) == [2, 2],
            120,
            "the query and the Java consumer own two partitions each",
        )
        members_before = describe_members(bootstrap, group)
        second = records(4, 5, "b")
        produce(bootstrap, topic, second)
        wait_until(
            lambda: len(set(sink_rows(spark, tmp_path, "a")) | set(java.read_rows())) == 40,
            120,
            "40 records across the query and the Java consumer",
        )
        java_parts = {p for p, _, v in java.read_rows() if v.startswith("b-")}
        java.kill()
        killed = time.monotonic()
        # No leaving heartbeat: the member is still there within the session timeout (the tool
        # needs a few seconds; on a machine so busy that it needed more than the timeout, only
        # the time to the fence below tells that the member did not leave).
        members_after_kill = describe_members(bootstrap, group)
        if time.monotonic() - killed < SESSION_TIMEOUT_MS / 1000 * 0.8:
            assert members_after_kill == members_before
        third = records(4, 5, "c")
        produce(bootstrap, topic, third)
        wait_until(
            lambda: (
                list(describe_members(bootstrap, group).values())
                == [{(topic, p) for p in range(4)}]
            ),
            60,
            "the Java member fenced, the query owning the 4 partitions",
        )
        fenced_after = time.monotonic() - killed
        assert fenced_after >= SESSION_TIMEOUT_MS / 1000 * 0.8, fenced_after
        (survivor,) = describe_members(bootstrap, group)
        assert survivor in members_before
        want = expected_rows(first + second + third)
        wait_until(
            lambda: set(sink_rows(spark, tmp_path, "a")) | set(java.read_rows()) == want,
            120,
            "every record read by the query or the Java consumer",
        )
    finally:
        java.kill()
        if qa is not None:
            qa.stop()
    rows_a, java_rows = sink_rows(spark, tmp_path, "a"), java.read_rows()
    assert set(rows_a) | set(java_rows) == want
    assert len(rows_a) == len(set(rows_a)) and len(java_rows) == len(set(java_rows))
    assert len(java_parts) == 2
    # The query read the Java consumer's partitions from their committed offsets on: the only
    # records read twice are, in those partitions, the Java consumer's rows from the offset the
    # query started at (its last poll, printed but not committed before the kill).
    duplicates = set(rows_a) & set(java_rows)
    assert all(p in java_parts for p, _, _ in duplicates)
    for p in java_parts:
        restart = min(o for pp, o, _ in rows_a if pp == p)
        assert {r for r in duplicates if r[0] == p} == {
            r for r in java_rows if r[0] == p and r[1] >= restart
        }
    assert {p for p, _, v in rows_a if v.startswith("c-")} == set(range(4))


#: A consumer-protocol member of our own in a Python process, without Spark: the stream
#: reader a query's driver holds, driven as Spark drives it (latestOffset, partitions, read,
#: every 200 ms); each record read is printed ("R\t<partition>\t<offset>\t<value>") before
#: the next boundary commits it.
PY_MEMBER = """
import sys, time
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.source import KafkaStreamReader
bootstrap, topic, group = sys.argv[1:4]
reader = KafkaStreamReader(parse_options({
    "kafka.bootstrap.servers": bootstrap, "subscribe": topic, "kafka.group.id": group,
    "kafka.group.protocol": "consumer", "startingOffsets": "group",
    "groupOffsetsFallback": "earliest"}, streaming=True))
start = reader.initialOffset()
while True:
    end = reader.latestOffset(start, None)
    for part in reader.partitions(start, end):
        for batch in reader.read(part):
            for row in batch.select(["partition", "offset", "value"]).to_pylist():
                print(f"R\t{row['partition']}\t{row['offset']}\t{row['value'].decode()}")
    sys.stdout.flush()
    start = end
    time.sleep(0.2)
"""


def test_killed_python_member_is_fenced_and_the_java_consumer_takes_its_partitions(
    bootstrap: str, tmp_path: Path
) -> None:
    """SIGKILL of a process holding our consumer-protocol member (no leaving heartbeat, no
    commit of its last batch): fenced after the session timeout, its partitions go to the Java
    consumer, which starts at the offsets our member committed; no record is lost, and the
    only records read twice are our member's uncommitted tail."""
    topic = new_topic(bootstrap, 4)
    group = f"g-{uuid.uuid4().hex[:8]}"
    first = records(4, 5, "a")
    produce(bootstrap, topic, first)
    log = (tmp_path / "member.log").open("wb")
    ours = subprocess.Popen(
        [sys.executable, "-c", PY_MEMBER, bootstrap, topic, group],
        stdout=subprocess.PIPE,
        stderr=log,
    )
    ours_rows: list[Row] = []

    def collect() -> None:
        assert ours.stdout is not None
        for raw in ours.stdout:
            fields = raw.decode("utf-8").rstrip("\n").split("\t")
            if fields[0] == "R":
                ours_rows.append((int(fields[1]), int(fields[2]), fields[3]))

    collector = threading.Thread(target=collect, daemon=True)
    collector.start()
    java: JavaMember | None = None
    try:
        wait_until(lambda: len(ours_rows) == 20, 120, "our member reads 20")
        java = JavaMember(bootstrap, group, topic, "group.protocol=consumer")
        java.wait_owned(2)
        second = records(4, 5, "b")
        produce(bootstrap, topic, second)
        wait_until(
            lambda: len(set(ours_rows) | set(java.read_rows())) == 40,
            120,
            "40 records across our member and the Java consumer",
        )
        ours_parts = {p for p, _, v in ours_rows if v.startswith("b-")}
        ours.send_signal(signal.SIGKILL)
        ours.wait(30)
        killed = time.monotonic()
        third = records(4, 5, "c")
        produce(bootstrap, topic, third)
        java.wait_owned(4, timeout_s=60)
        fenced_after = time.monotonic() - killed
        assert fenced_after >= SESSION_TIMEOUT_MS / 1000 * 0.8, fenced_after
        want = expected_rows(first + second + third)
        wait_until(
            lambda: set(ours_rows) | set(java.read_rows()) == want,
            120,
            "every record read by our member or the Java consumer",
        )
        java.stop()
    finally:
        if ours.poll() is None:
            ours.send_signal(signal.SIGKILL)
            ours.wait(30)
        log.close()
        if java is not None:
            java.kill()
    collector.join(10)
    assert java is not None
    java_rows = java.read_rows()
    assert len(ours_parts) == 2 and len(ours_rows) == len(set(ours_rows))
    assert set(ours_rows) | set(java_rows) == want
    duplicates = set(ours_rows) & set(java_rows)
    assert all(p in ours_parts for p, _, _ in duplicates)
    for p in ours_parts:
        # where the Java consumer started in a partition taken from our member: our commit
        restart = min(o for pp, o, v in java_rows if pp == p and not v.startswith("a-"))
        assert {r for r in duplicates if r[0] == p} == {
            r for r in ours_rows if r[0] == p and r[1] >= restart
        }
        assert restart >= 5  # our member committed what it read before the Java consumer came


def test_classic_group_migrates_offline_to_the_consumer_protocol(
    spark: SparkSession, bootstrap: str, tmp_path: Path
) -> None:
    """Offline migration (KIP-848): a group whose classic members all left is used with
    ``kafka.group.protocol=consumer``; the new query starts at the classic group's committed
    offsets, reading no record again and skipping none."""
    topic = new_topic(bootstrap, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"
    first = records(2, 5, "a")
    produce(bootstrap, topic, first)
    classic = start_query(
        spark, bootstrap, topic, group, tmp_path, "classic", protocol="classic", available_now=True
    )
    run_to_end(classic)
    assert Counter(sink_rows(spark, tmp_path, "classic")) == Counter(expected_rows(first))
    assert committed_lag(bootstrap, group, topic) == {0: (5, 0), 1: (5, 0)}
    assert describe_member_columns(bootstrap, group) == []  # left: the group is empty
    state = consumer_groups_describe(bootstrap, group, extra=["--state"])
    assert "Empty" in state, state

    second = records(2, 3, "b")
    produce(bootstrap, topic, second)
    q = start_query(spark, bootstrap, topic, group, tmp_path, "consumer")
    try:
        wait_until(
            lambda: len(sink_rows(spark, tmp_path, "consumer")) >= 6, 120, "the query reads 6"
        )
        # a consumer-protocol member now (member epoch), holding both partitions
        (member,) = consumer_protocol_members(bootstrap, group)
        assert int(member["CURRENT-EPOCH"]) > 0
        assert list(describe_members(bootstrap, group).values()) == [{(topic, 0), (topic, 1)}]
        wait_until(
            lambda: committed_lag(bootstrap, group, topic) == {0: (8, 0), 1: (8, 0)},
            60,
            "committed offsets 8, lag 0",
        )
    finally:
        q.stop()
    assert Counter(sink_rows(spark, tmp_path, "consumer")) == Counter(
        expected_rows(second, base={0: 5, 1: 5})
    )
