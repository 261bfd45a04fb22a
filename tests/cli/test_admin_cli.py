"""``spark-kafka-py topics|groups|transactions`` against the real broker, compared with Kafka's
own tools (``kafka-topics.sh --describe``, ``kafka-consumer-groups.sh --describe`` with its
offsets, ``--members`` and ``--state`` views, ``kafka-transactions.sh describe``) on the same
topics, groups and transactional id; and the same commands over SSL and SASL_SSL with a
``--command-config`` file that Kafka's tool reads too.

One JVM per tool comparison: the three groups (offsets only, a live classic member, a live
KIP-848 member) are described in their three views by one ``kafka-consumer-groups.sh`` JVM
(:func:`~spark_kafka_py.testing.tools.run_tool_runs`). The secured broker is the session's
``secure_kafka`` (shared with ``tests/integration/test_security.py`` and the producer's).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from spark_kafka_py.admin import committed_offsets, describe_group
from spark_kafka_py.admin_cli import assignment_text, parse_properties
from spark_kafka_py.cli import main
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.group.offsets import GroupOffsets
from spark_kafka_py.consumer.group.transport import CoordinatorChannel
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaError
from spark_kafka_py.producer import KafkaProducer, ProducerSettings
from spark_kafka_py.producer.transactions import (
    TransactionHandle,
    add_partitions_to_transaction,
    end_transaction,
    fence,
)
from spark_kafka_py.testing import tools
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import java_command
from spark_kafka_py.testing.secure import USERS, SecureKafka

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


#: ``groups describe`` views: our flag, Kafka's flags (``--verbose``: every column), the columns
#: only ``--verbose`` prints, and the columns that key a row.
VIEWS: dict[str, tuple[list[str], frozenset[str], tuple[str, ...]]] = {
    "offsets": ([], frozenset({"LEADER-EPOCH"}), ("GROUP", "TOPIC", "PARTITION")),
    "members": (
        ["--members"],
        frozenset({"CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"}),
        ("GROUP", "CONSUMER-ID"),
    ),
    "state": (["--state"], frozenset({"GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"}), ("GROUP",)),
}


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


def table_rows(text: str) -> list[dict[str, str]]:
    """Every row of the ``GROUP ...`` tables of ``text`` (ours or Kafka's), as ``{column:
    cell}``. Cells are split at white space, so ``COORDINATOR (ID)`` is two columns,
    ``COORDINATOR`` and ``(ID)``, and its cell ``host:port  (id)`` two cells."""
    rows: list[dict[str, str]] = []
    header: list[str] = []
    for line in text.splitlines():
        cells = line.split()
        if cells[:1] == ["GROUP"]:
            header = cells
        elif header and len(cells) == len(header):
            rows.append(dict(zip(header, cells, strict=True)))
        elif not cells:
            header = []
    return rows


def keyed(rows: list[dict[str, str]], key: tuple[str, ...]) -> dict[tuple[str, ...], dict]:
    return {tuple(r[k] for k in key): r for r in rows}


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
    groups = (idle, classic, modern)
    # An empty group with committed offsets: ConsoleConsumer reads 10 records and commits.
    tools.consume(kafka_bootstrap, topic, 10, group=idle, timeout_ms=10000)
    live = [
        _live_consumer(kafka_bootstrap, topic, classic, "classic"),
        _live_consumer(kafka_bootstrap, topic, modern, "consumer"),
    ]
    ours: dict[tuple[str, bool], str] = {}  # (view, verbose) -> our tables, every group
    notes: dict[str, str] = {}
    try:
        deadline = time.monotonic() + 40
        while not all(_settled(kafka_bootstrap, g, topic, 3) for g in (classic, modern)):
            assert time.monotonic() < deadline, "the live consumers did not commit in 40 s"
            time.sleep(0.5)
        # Kafka's three views of the three groups, --verbose (every column), in one JVM.
        base = ["--bootstrap-server", kafka_bootstrap, "--describe", "--verbose"]
        base += [x for g in groups for x in ("--group", g)]
        runs = tools.run_tool_runs(
            tools.CONSUMER_GROUP_COMMAND, [base + VIEWS[v][0] for v in VIEWS]
        )
        kafka = {v: out for v, (out, _) in zip(VIEWS, runs, strict=True)}
        kafka_stderr = runs[0][1]
        for view, (flags, _, _) in VIEWS.items():
            for verbose in (False, True):
                text = []
                for group in groups:
                    argv = ["groups", "describe", group, *flags, "--bootstrap-servers"]
                    argv += [kafka_bootstrap] + (["--verbose"] if verbose else [])
                    code, out, err = run_cli(capsys, *argv)
                    assert code == 0, err
                    text.append(out)
                    notes[group] = err
                ours[(view, verbose)] = "\n".join(text)
        described = {
            g: cli_json(capsys, kafka_bootstrap, "groups", "describe", g) for g in (classic, modern)
        }
        members = {
            g: cli_json(capsys, kafka_bootstrap, "groups", "describe", g, "--members")
            for g in groups
        }
        states = {
            g: cli_json(capsys, kafka_bootstrap, "groups", "describe", g, "--state") for g in groups
        }
        listed = cli_json(capsys, kafka_bootstrap, "groups", "list")
    finally:
        for proc in live:
            proc.terminate()
        for proc in live:
            proc.wait(timeout=30)

    # Every view, plain and --verbose: the same rows and cells as Kafka's, column by column.
    for view, (_, verbose_only, key) in VIEWS.items():
        theirs = keyed(table_rows(kafka[view]), key)
        for verbose in (False, True):
            mine = keyed(table_rows(ours[(view, verbose)]), key)
            assert sorted(mine) == sorted(theirs), (view, verbose)
            for k, row in theirs.items():
                wanted = {c: v for c, v in row.items() if verbose or c not in verbose_only}
                assert mine[k] == wanted, f"{view} {k}: ours {mine[k]} vs Kafka's {wanted}"
    assert len(keyed(table_rows(kafka["offsets"]), VIEWS["offsets"][2])) == 9
    assert len(table_rows(kafka["members"])) == 2 and len(table_rows(kafka["state"])) == 3
    # The idle group's note, on stderr as Kafka's tool prints it.
    note = f"Consumer group '{idle}' has no active members."
    assert note in kafka_stderr and notes[idle] == note + "\n"
    assert notes[classic] == notes[modern] == ""

    rows = keyed(table_rows(ours[("offsets", False)]), VIEWS["offsets"][2])
    # The idle group: committed offsets and lag, no member.
    idle_rows = [r for k, r in rows.items() if k[0] == idle]
    assert sum(int(r["CURRENT-OFFSET"]) for r in idle_rows) == 10
    assert sum(int(r["LAG"]) for r in idle_rows) == 50
    assert all(r["CONSUMER-ID"] == r["HOST"] == r["CLIENT-ID"] == "-" for r in idle_rows)
    # The live groups: one member each, with the three partitions assigned.
    everything = [(topic, p) for p in range(3)]
    for group, kind in ((classic, "classic"), (modern, "consumer")):
        d = described[group]
        assert (d["state"], d["type"]) == ("Stable", kind)
        assert len(d["members"]) == 1 and d["members"][0]["client_id"] == f"cli-{kind}"
        assert sorted(map(tuple, d["members"][0]["assignment"])) == everything
        (member,) = members[group]["members"]
        assert member["partitions"] == 3 and member["client_id"] == f"cli-{kind}"
        assert states[group]["state"] == "Stable" and states[group]["members"] == 1
    # KIP-848 only: epochs and the target assignment; a classic member has none.
    (m,) = members[modern]["members"]
    assert m["member_epoch"] >= 1 and sorted(map(tuple, m["target_assignment"])) == everything
    assert members[modern]["target_assignment_epoch"] == states[modern]["group_epoch"]
    (c,) = members[classic]["members"]
    assert (c["member_epoch"], c["target_assignment"], c["upgraded"]) == (None, None, None)
    assert (states[classic]["group_epoch"], states[classic]["target_assignment_epoch"]) == (
        None,
        None,
    )
    assert states[idle]["members"] == 0 and states[idle]["assignment_strategy"] is None
    assert members[idle]["members"] == []
    state_rows = keyed(table_rows(kafka["state"]), ("GROUP",))
    for g in groups:
        assert states[g]["coordinator_address"] == state_rows[(g,)]["COORDINATOR"]
        assert f"({states[g]['coordinator']})" == state_rows[(g,)]["(ID)"]
    types = {g["group"]: g["type"] for g in listed}
    assert (types[idle], types[classic], types[modern]) == ("classic", "classic", "consumer")


def test_assignment_text_as_kafka_prints_it() -> None:
    assert assignment_text([]) is None and assignment_text(None) is None
    assert assignment_text([("b", 2), ("a", 10), ("b", 0), ("a", 9)]) == "a:9,10;b:0,2"


def test_groups_describe_views_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["groups", "describe", "g", "--members", "--state"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--state: not allowed with argument --members" in err and "Traceback" not in err


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


def _properties(path: Path, settings: Mapping[str, str]) -> Path:
    """``settings`` as a Java properties file (``\\`` and line ends escaped)."""
    lines = [f"{k}={v}".replace("\\", "\\\\").replace("\n", "\\n") for k, v in settings.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_commands_over_ssl_and_sasl_ssl(
    secure_kafka: SecureKafka, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The commands through the secured listeners, with the settings in a ``--command-config``
    file, the same file Kafka's ``kafka-consumer-groups.sh`` is given for the comparison."""
    kafka = secure_kafka
    trust = {"ssl.truststore.location": str(kafka.pki.ca_pem), "ssl.truststore.type": "PEM"}
    scram = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="alice" password="{USERS["alice"]}";'
    )
    sasl_ssl = {
        "bootstrap.servers": kafka.bootstrap("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": scram,
        **trust,
    }
    sasl_conf = _properties(tmp_path / "sasl-ssl.properties", sasl_ssl)
    ssl_conf = _properties(
        tmp_path / "ssl.properties",
        {"bootstrap.servers": kafka.bootstrap("SSL"), "security.protocol": "SSL", **trust},
    )
    s = ["--command-config", str(sasl_conf)]
    topic, group = f"cli-secure-{uuid.uuid4().hex[:8]}", f"cli-secure-{uuid.uuid4().hex[:8]}"

    code, out, err = run_cli(capsys, "topics", "create", topic, "--partitions", "2", *s)
    assert (code, out, err) == (0, f"Created topic {topic}.\n", "")
    # Records and a group's offsets through the same listener, with our client.
    client_config = ClientConfig.from_bootstrap(
        kafka.bootstrap("SASL_SSL"),
        request_timeout_ms=20_000,
        security=parse_security_options(sasl_ssl),
    )
    with KafkaProducer(ProducerSettings(client_config, linger_ms=0)) as producer:
        for partition, n in ((0, 7), (1, 5)):
            values = pa.array([f"v{i}" for i in range(n)], pa.string())
            producer.append(topic, partition, None, values, None, int(time.time() * 1000))
        producer.flush()
    with KafkaClient(client_config) as client:
        channel = CoordinatorChannel(
            GroupConfig(group_id=group), client, clock=time.monotonic, sleep=time.sleep
        )
        GroupOffsets(channel).commit({TopicPartition(topic, 0): 4, TopicPartition(topic, 1): 5})

    listed = json.loads(run_cli(capsys, "topics", "list", "--json", *s)[1])
    assert topic in listed
    described = json.loads(run_cli(capsys, "topics", "describe", topic, "--json", *s)[1])
    assert [len(t["partitions"]) for t in described] == [2]
    ours = {}
    for view, (flags, _, key) in VIEWS.items():
        code, out, err = run_cli(capsys, "groups", "describe", group, *flags, "--verbose", *s)
        assert code == 0, err
        ours[view] = keyed(table_rows(out), key)
    offsets = {
        k[2]: (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"])
        for k, r in ours["offsets"].items()
    }
    assert offsets == {"0": ("4", "7", "3"), "1": ("5", "5", "0")}
    (state,) = ours["state"].values()
    assert (state["COORDINATOR"], state["STATE"], state["#MEMBERS"]) == (
        kafka.bootstrap("SASL_SSL"),
        "Empty",
        "0",
    )
    # Kafka's tool, given the same file, shows the same (one JVM for both views).
    base = ["--bootstrap-server", kafka.bootstrap("SASL_SSL"), "--command-config", str(sasl_conf)]
    base += ["--describe", "--verbose", "--group", group]
    runs = tools.run_tool_runs(tools.CONSUMER_GROUP_COMMAND, [base, [*base, "--state"]])
    assert keyed(table_rows(runs[0][0]), VIEWS["offsets"][2]) == ours["offsets"]
    assert keyed(table_rows(runs[1][0]), VIEWS["state"][2]) == ours["state"]

    # SSL (no SASL): the same commands.
    t = ["--command-config", str(ssl_conf)]
    assert topic in json.loads(run_cli(capsys, "topics", "list", "--json", *t)[1])
    state_json = json.loads(
        run_cli(capsys, "groups", "describe", group, "--state", "--json", *t)[1]
    )
    assert state_json["coordinator_address"] == kafka.bootstrap("SSL")
    assert state_json["state"] == "Empty"

    # A wrong password: one line naming the cause, at once (not after the timeout).
    wrong = _properties(
        tmp_path / "wrong.properties",
        {**sasl_ssl, "sasl.jaas.config": scram.replace(USERS["alice"], "not-the-password")},
    )
    start = time.monotonic()
    code, out, err = run_cli(capsys, "topics", "list", "--command-config", str(wrong))
    assert time.monotonic() - start < 20
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "SASL_AUTHENTICATION_FAILED" in err and "SCRAM-SHA-512" in err, err
