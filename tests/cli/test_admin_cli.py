"""``spark-kafka-py topics|groups|transactions`` against the real broker, compared with Kafka's
own tools (``kafka-topics.sh --describe``, ``kafka-consumer-groups.sh --describe``,
``kafka-transactions.sh describe``) on the same topics, groups and transactional id.

One JVM per tool comparison: the three groups (offsets only, a live classic member, a live
KIP-848 member) are described by one ``kafka-consumer-groups.sh`` run.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_kafka_py.admin import committed_offsets, describe_group
from spark_kafka_py.admin_cli import parse_properties
from spark_kafka_py.cli import main
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.errors import KafkaError
from spark_kafka_py.producer.transactions import (
    TransactionHandle,
    add_partitions_to_transaction,
    end_transaction,
    fence,
)
from spark_kafka_py.testing import tools
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import java_command

pytestmark = pytest.mark.integration

TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"
#: The columns both ``groups describe`` and Kafka's tool print, in order.
GROUP_COLUMNS = (
    "GROUP",
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``spark-kafka-py *argv`` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> Any:
    code, out, err = run_cli(capsys, *argv, "--bootstrap-servers", bootstrap, "--json")
    assert code == 0, err
    return json.loads(out)


def group_rows(text: str) -> dict[tuple[str, str, int], tuple[str, ...]]:
    """Rows of a ``--describe`` table (ours or Kafka's) by (group, topic, partition)."""
    rows = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) != len(GROUP_COLUMNS) or cells[0] == "GROUP":
            continue
        rows[(cells[0], cells[1], int(cells[2]))] = tuple(cells)
    return rows


@pytest.fixture(scope="module")
def topics(kafka_bootstrap: str) -> Iterator[dict[str, str]]:
    """Topics of this module, created with ``spark-kafka-py topics create`` (which is tested
    by that): ``plain`` (3 partitions), ``compact`` (2 partitions, two settings), ``txn``."""
    prefix = f"admin-cli-{uuid.uuid4().hex[:8]}"
    names = {
        "plain": f"{prefix}-plain",
        "compact": f"{prefix}-compact",
        "txn": f"{prefix}-txn",
    }
    b = ["--bootstrap-servers", kafka_bootstrap]
    assert main(["topics", "create", names["plain"], "--partitions", "3", *b]) == 0
    assert (
        main(
            [
                "topics",
                "create",
                names["compact"],
                "--partitions",
                "2",
                "--config",
                "cleanup.policy=compact",
                "--config",
                "min.compaction.lag.ms=1000",
                *b,
            ]
        )
        == 0
    )
    assert main(["topics", "create", names["txn"], "--partitions", "1", *b]) == 0
    yield names


def _kafka_topics_describe(text: str) -> dict[str, dict[str, Any]]:
    """``kafka-topics.sh --describe`` output: per topic its id, settings and partitions."""
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        fields = dict(
            part.split(": ", 1) if ": " in part else (part.rstrip(":"), "")
            for part in line.strip().split("\t")
            if part
        )
        if "Partition" in fields:
            out[fields["Topic"]]["partitions"][int(fields["Partition"])] = (
                int(fields["Leader"]),
                [int(x) for x in fields["Replicas"].split(",") if x],
                [int(x) for x in fields["Isr"].split(",") if x],
            )
        elif "TopicId" in fields:
            configs = fields.get("Configs", "")
            out[fields["Topic"]] = {
                "topic_id": fields["TopicId"],
                "configs": dict(c.split("=", 1) for c in configs.split(",") if c),
                "partitions": {},
            }
    return out


def test_topics_as_kafka_topics_shows_them(
    kafka_bootstrap: str, topics: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    wanted = [topics["plain"], topics["compact"]]
    ours = cli_json(capsys, kafka_bootstrap, "topics", "describe", *wanted)
    regex = "|".join(wanted)
    theirs = _kafka_topics_describe(
        tools.run_tool(
            tools.TOPIC_COMMAND,
            ["--bootstrap-server", kafka_bootstrap, "--describe", "--topic", regex],
        ).stdout
    )
    assert sorted(theirs) == sorted(wanted)
    for t in ours:
        kafka = theirs[t["topic"]]
        assert t["topic_id"] == kafka["topic_id"]
        assert t["configs"] == kafka["configs"]
        assert {
            p["partition"]: (p["leader"], p["replicas"], p["isr"]) for p in t["partitions"]
        } == kafka["partitions"]
    compact = ours[[t["topic"] for t in ours].index(topics["compact"])]["configs"]
    assert compact.items() >= {("cleanup.policy", "compact"), ("min.compaction.lag.ms", "1000")}

    listed = cli_json(capsys, kafka_bootstrap, "topics", "list")
    assert set(topics.values()) <= set(listed)
    # The table for people: a header line per topic, then one row per partition.
    code, out, _ = run_cli(
        capsys, "topics", "describe", topics["plain"], "--bootstrap-servers", kafka_bootstrap
    )
    assert code == 0
    assert out.splitlines()[0].startswith(f"Topic: {topics['plain']}  TopicId: ")
    assert "PartitionCount: 3" in out.splitlines()[0]
    assert out.splitlines()[1].split() == ["TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR"]


def test_topic_errors_are_one_line(
    kafka_bootstrap: str, topics: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    b = ("--bootstrap-servers", kafka_bootstrap)
    code, out, err = run_cli(capsys, "topics", "create", topics["plain"], *b)
    assert (code, out) == (1, "")
    assert err == f"spark-kafka-py topics create: error: topic {topics['plain']!r} already exists\n"
    assert run_cli(capsys, "topics", "create", topics["plain"], "--if-not-exists", *b)[0] == 0

    doomed = f"{topics['plain']}-doomed"
    assert run_cli(capsys, "topics", "create", doomed, "--partitions", "1", *b)[0] == 0
    code, out, _ = run_cli(capsys, "topics", "delete", doomed, *b)
    assert (code, out) == (0, f"Deleted topic {doomed}.\n")
    code, out, err = run_cli(capsys, "topics", "describe", doomed, *b)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("spark-kafka-py topics describe: error: UNKNOWN_TOPIC_OR_PARTITION")
    assert repr(doomed) in err
    code, _, err = run_cli(capsys, "topics", "delete", doomed, *b)
    assert code == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in err and repr(doomed) in err


def test_unreachable_broker_fails_within_the_timeout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    conf = tmp_path / "client.properties"
    # bootstrap.servers from the file, as Kafka's tools take it; port 1: nothing listens.
    conf.write_text("# a comment\nbootstrap.servers=127.0.0.1:1\nrequest.timeout.ms = 1000\n")
    start = time.monotonic()
    code, out, err = run_cli(
        capsys, "groups", "list", "--command-config", str(conf), "--timeout-ms", "1500"
    )
    assert time.monotonic() - start < 10
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "127.0.0.1:1" in err and "1500 ms" in err

    code, _, err = run_cli(capsys, "topics", "list", "--command-config", str(tmp_path / "nope"))
    assert code == 1 and "--command-config" in err and "nope" in err


def test_properties_files_as_java_reads_them() -> None:
    text = (
        "# comment\n! also a comment\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism : PLAIN\n"
        "client.id   tools\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule \\\n"
        '    required username="u" password="p\\=q";\n'
        "empty=\n"
    )
    assert parse_properties(text) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "client.id": "tools",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
        'required username="u" password="p=q";',
        "empty": "",
    }


def _live_consumer(
    bootstrap: str, topic: str, group: str, protocol: str
) -> subprocess.Popen[bytes]:
    """A Java ConsoleConsumer in ``group`` (``group.protocol=protocol``), committing every
    200 ms, running until terminated."""
    props = {
        "group.protocol": protocol,
        "client.id": f"cli-{protocol}",
        "auto.commit.interval.ms": "200",
    }
    args = ["--bootstrap-server", bootstrap, "--topic", topic, "--group", group]
    args += ["--from-beginning", "--timeout-ms", "60000"]
    for k, v in props.items():
        args += ["--command-property", f"{k}={v}"]
    cmd = java_command(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        args,
        classpath=kafka_classpath(KAFKA_VERSION),
    )
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _settled(bootstrap: str, group: str, topic: str, partitions: int) -> bool:
    """The group has a member and has committed all ``partitions`` of ``topic``."""
    with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
        try:
            described = describe_group(client, group, timeout_ms=5000)
        except KafkaError:  # not there yet
            return False
        offsets = committed_offsets(client, group, timeout_ms=5000)
    done = {p for (t, p) in offsets if t == topic}
    return described.state == "Stable" and len(done) == partitions


def test_groups_as_kafka_consumer_groups_shows_them(
    kafka_bootstrap: str, topics: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topics["plain"]
    records = [tools.ProducedRecord(key=f"k{i}", value=f"v{i}") for i in range(60)]
    tools.produce(kafka_bootstrap, topic, records)
    suffix = uuid.uuid4().hex[:8]
    idle, classic, modern = (f"cli-{kind}-{suffix}" for kind in ("idle", "classic", "consumer"))
    # An empty group with committed offsets: ConsoleConsumer reads 10 records and commits.
    tools.consume(kafka_bootstrap, topic, 10, group=idle, timeout_ms=10000)
    live = [
        _live_consumer(kafka_bootstrap, topic, classic, "classic"),
        _live_consumer(kafka_bootstrap, topic, modern, "consumer"),
    ]
    try:
        deadline = time.monotonic() + 40
        while not all(_settled(kafka_bootstrap, g, topic, 3) for g in (classic, modern)):
            assert time.monotonic() < deadline, "the live consumers did not commit in 40 s"
            time.sleep(0.5)
        kafka = tools.run_tool(
            tools.CONSUMER_GROUP_COMMAND,
            ["--bootstrap-server", kafka_bootstrap, "--describe"]
            + [x for g in (idle, classic, modern) for x in ("--group", g)],
        ).stdout
        ours: dict[tuple[str, str, int], tuple[str, ...]] = {}
        for group in (idle, classic, modern):
            code, out, err = run_cli(
                capsys, "groups", "describe", group, "--bootstrap-servers", kafka_bootstrap
            )
            assert code == 0, err
            ours.update(group_rows(out))
        described = {
            g: cli_json(capsys, kafka_bootstrap, "groups", "describe", g) for g in (classic, modern)
        }
        listed = cli_json(capsys, kafka_bootstrap, "groups", "list")
    finally:
        for proc in live:
            proc.terminate()
        for proc in live:
            proc.wait(timeout=30)

    theirs = group_rows(kafka)
    assert sorted(ours) == sorted(theirs)
    assert len(ours) == 9
    for key, row in theirs.items():
        assert ours[key] == row, f"{key}: ours {ours[key]} vs kafka-consumer-groups {row}"
    # The idle group: committed offsets and lag, no member.
    idle_rows = [r for k, r in ours.items() if k[0] == idle]
    assert sum(int(r[3]) for r in idle_rows) == 10
    assert sum(int(r[5]) for r in idle_rows) == 50
    assert all(r[6:] == ("-", "-", "-") for r in idle_rows)
    # The live groups: one member each, with the three partitions assigned.
    for group, kind in ((classic, "classic"), (modern, "consumer")):
        d = described[group]
        assert (d["state"], d["type"]) == ("Stable", kind)
        assert len(d["members"]) == 1 and d["members"][0]["client_id"] == f"cli-{kind}"
        assert sorted(map(tuple, d["members"][0]["assignment"])) == [(topic, p) for p in range(3)]
    types = {g["group"]: g["type"] for g in listed}
    assert (types[idle], types[classic], types[modern]) == ("classic", "classic", "consumer")


def test_transactions_as_kafka_transactions_shows_them(
    kafka_bootstrap: str, topics: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    tid = f"cli-txn-{uuid.uuid4().hex[:8]}"
    with KafkaClient(ClientConfig.from_bootstrap(kafka_bootstrap)) as client:
        pid, epoch = fence(client, tid, transaction_timeout_ms=60000, timeout_ms=30000)
        add_partitions_to_transaction(
            client, tid, pid, epoch, [(topics["txn"], 0)], timeout_ms=30000
        )
        try:
            kafka = tools.run_tool(
                TRANSACTIONS_COMMAND,
                ["--bootstrap-server", kafka_bootstrap, "describe", "--transactional-id", tid],
            ).stdout
            code, out, err = run_cli(
                capsys, "transactions", "describe", tid, "--bootstrap-servers", kafka_bootstrap
            )
            listed = cli_json(capsys, kafka_bootstrap, "transactions", "list")
        finally:
            handle = TransactionHandle(tid, pid, epoch, ((topics["txn"], 0),))
            end_transaction(client, handle, commit=False, timeout_ms=30000)
    assert code == 0, err
    header, row = ([c.strip() for c in line.split()] for line in kafka.splitlines()[:2])
    theirs = dict(zip(header, row, strict=True))
    (our_header, our_row) = (line.split() for line in out.splitlines()[:2])
    mine = dict(zip(our_header, our_row, strict=True))
    assert list(mine) == list(theirs)
    for column in mine:
        if column != "TransactionDurationMs":  # measured at different moments
            assert mine[column] == theirs[column], column
    assert {
        "transactional_id": tid,
        "coordinator": int(theirs["CoordinatorId"]),
        "producer_id": pid,
        "state": "Ongoing",
    } in listed
