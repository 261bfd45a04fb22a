"""``spark-kafka-py topics|groups|transactions``: the cluster from the command line, on our own
Admin requests (:mod:`spark_kafka_py.admin`), as Kafka's ``kafka-topics.sh``,
``kafka-consumer-groups.sh`` and ``kafka-transactions.sh`` show it::

    spark-kafka-py topics create NAME [--partitions N] [--replication-factor R] [--config k=v]
    spark-kafka-py topics list | describe [NAME...] | delete NAME...
    spark-kafka-py groups list | describe GROUP [--offsets | --members | --state] [--verbose]
    spark-kafka-py transactions list | describe ID

Every command takes ``--bootstrap-servers`` (default: ``bootstrap.servers`` of the
``--command-config`` file, else the local broker of ``spark-kafka-py broker start``),
``--command-config FILE`` (a Java properties file with Kafka's client settings, as Kafka's
tools take: ``security.protocol``, ``sasl.*``, ``ssl.*``, ``client.id``, ``request.timeout.ms``,
``default.api.timeout.ms``, ...; read as the connector reads the same settings with the
``kafka.`` prefix), ``--timeout-ms`` (default ``default.api.timeout.ms``) and ``--json`` (one
JSON document on stdout instead of a table).

``groups describe`` has the three views of ``kafka-consumer-groups.sh --describe``, with its
columns (Kafka 4.x): the offsets (default; GROUP TOPIC PARTITION [LEADER-EPOCH] CURRENT-OFFSET
LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID), ``--members`` (GROUP CONSUMER-ID
[GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS [CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH
TARGET-ASSIGNMENT [UPGRADED]]) and ``--state`` (GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY
STATE [GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH] #MEMBERS); bracketed columns come with
``--verbose`` (GROUP-INSTANCE-ID when a member has one, UPGRADED while a group migrates from
the classic protocol). Epochs and target assignments are KIP-848's (ConsumerGroupDescribe),
``-`` for a classic group. As Kafka's tool, a group without members or in a rebalance gets a
note on stderr before its table. ``--json`` always has every column of the view.

Expected failures (an unknown topic or group, no broker answering within the timeout, a bad
option) print one line, ``spark-kafka-py <command>: error: <cause>``, on stderr and exit 1,
without a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from spark_kafka_py import admin
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.coordinator import deadline_after, find_transaction_coordinator
from spark_kafka_py.consumer.group.protocol import decode_assignment
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError, KafkaError
from spark_kafka_py.registry import option
from spark_kafka_py.spark.options import parse_client_config

__all__ = ["add_parser", "assignment_text", "group_offsets", "parse_properties", "table"]

#: Shown for a value Kafka's tools print as ``-`` (no committed offset, no member, ...).
NONE = "-"

#: The columns of ``kafka-consumer-groups.sh --describe``.
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

#: ``--describe --verbose``: the leader epoch committed with the offset after PARTITION.
GROUP_COLUMNS_VERBOSE = (*GROUP_COLUMNS[:3], "LEADER-EPOCH", *GROUP_COLUMNS[3:])

#: The key of each column in :func:`group_offsets`' rows.
_OFFSET_KEYS = {
    "GROUP": "group",
    "TOPIC": "topic",
    "PARTITION": "partition",
    "LEADER-EPOCH": "leader_epoch",
    "CURRENT-OFFSET": "current_offset",
    "LOG-END-OFFSET": "log_end_offset",
    "LAG": "lag",
    "CONSUMER-ID": "consumer_id",
    "HOST": "host",
    "CLIENT-ID": "client_id",
}

#: ListOffsets timestamp of the latest offset (the high watermark, read_uncommitted).
_LATEST = -1


class CommandError(KafkaError):
    """A command that cannot run as asked (no bootstrap servers, an unreadable file)."""


# ------------------------------------------------------------------------------ configuration


def parse_properties(text: str) -> dict[str, str]:
    """A Java ``.properties`` text as ``{key: value}``: ``#``/``!`` comments, ``=``, ``:`` or
    whitespace between key and value, ``\\`` at a line's end continues it, ``\\t``, ``\\n``,
    ``\\uXXXX`` and ``\\<char>`` escapes (``java.util.Properties.load``)."""
    out: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    for line in logical:
        match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:\s]?\s*(.*)$", line, re.DOTALL)
        if match is None:  # pragma: no cover - the pattern matches any text
            continue
        out[_unescape(match.group(1))] = _unescape(match.group(2))
    return out


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, text)


def _local_bootstrap() -> str | None:
    """The bootstrap servers of ``spark-kafka-py broker start``'s cluster, if it recorded one."""
    from spark_kafka_py.testing.cli_broker import read_state

    try:
        state = read_state()
    except (OSError, ValueError):
        return None
    return None if state is None else str(state.get("bootstrap") or "") or None


def client_settings(args: argparse.Namespace) -> tuple[ClientConfig, int]:
    """The client configuration and the API timeout (ms) of ``args``.

    Raises:
        ConfigError / CommandError: a malformed setting, an unreadable file, no servers.
    """
    props: dict[str, str] = {}
    if args.command_config:
        path = Path(args.command_config)
        try:
            props = parse_properties(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandError(f"--command-config {path}: {exc.strerror or exc}") from None
    bootstrap = args.bootstrap_servers or props.get("bootstrap.servers") or _local_bootstrap()
    if not bootstrap:
        raise CommandError(
            "no --bootstrap-servers given, no bootstrap.servers in --command-config, and no "
            "local broker (start one with: spark-kafka-py broker start)"
        )
    opts = {f"kafka.{k}".lower(): v for k, v in props.items()}
    opts["kafka.bootstrap.servers"] = bootstrap
    config = parse_client_config(opts, props)
    timeout_ms = args.timeout_ms
    if timeout_ms is None:
        timeout_ms = int(option("kafka.default.api.timeout.ms").read(opts))
    if timeout_ms <= 0:
        raise ConfigError(f"--timeout-ms must be positive, got {timeout_ms}")
    return config, timeout_ms


# ------------------------------------------------------------------------------------ output


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Left-aligned columns, two spaces apart, as Kafka's tools print them."""
    cells = [[str(h) for h in headers]] + [
        [NONE if v is None else str(v) for v in row] for row in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells
    )


def _emit(args: argparse.Namespace, data: Any, text: Callable[[], str]) -> None:
    if args.json:
        print(json.dumps(data, indent=1, sort_keys=False))
    else:
        out = text()
        if out:
            print(out)


# ------------------------------------------------------------------------------------- topics


def _topics_create(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    configs: dict[str, str] = {}
    for item in args.config or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--config {item!r}: expected name=value")
        configs[key.strip()] = value.strip()
    created = admin.create_topic(
        client,
        args.name,
        partitions=args.partitions,
        replication_factor=args.replication_factor,
        configs=configs,
        timeout_ms=timeout_ms,
    )
    if not created and not args.if_not_exists:
        raise CommandError(f"topic {args.name!r} already exists")
    _emit(
        args,
        {"topic": args.name, "created": created},
        lambda: f"{'Created' if created else 'Exists:'} topic {args.name}.",
    )
    return 0


def _topics_list(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    names = admin.list_topics(
        client, include_internal=not args.exclude_internal, timeout_ms=timeout_ms
    )
    _emit(args, names, lambda: "\n".join(names))
    return 0


def _topics_describe(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    topics = admin.describe_topics(client, args.names or None, timeout_ms=timeout_ms)
    data: list[dict[str, Any]] = [
        {
            "topic": t.name,
            "topic_id": t.topic_id,
            "internal": t.is_internal,
            "partition_count": len(t.partitions),
            "replication_factor": len(t.partitions[0].replica_nodes) if t.partitions else 0,
            "configs": dict(t.configs),
            "partitions": [
                {
                    "partition": p.partition,
                    "leader": p.leader_id,
                    "replicas": list(p.replica_nodes),
                    "isr": list(p.isr_nodes),
                }
                for p in t.partitions
            ],
        }
        for t in topics
    ]

    def text() -> str:
        blocks = []
        for t in data:
            configs = ",".join(f"{k}={v}" for k, v in t["configs"].items())
            head = (
                f"Topic: {t['topic']}  TopicId: {t['topic_id'] or NONE}  "
                f"PartitionCount: {t['partition_count']}  "
                f"ReplicationFactor: {t['replication_factor']}  Configs: {configs}"
            )
            rows = [
                (
                    t["topic"],
                    p["partition"],
                    p["leader"] if p["leader"] >= 0 else "none",
                    ",".join(map(str, p["replicas"])),
                    ",".join(map(str, p["isr"])),
                )
                for p in t["partitions"]
            ]
            blocks.append(
                head + "\n" + table(("TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR"), rows)
            )
        return "\n\n".join(blocks)

    _emit(args, data, text)
    return 0


def _topics_delete(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    admin.delete_topics(client, args.names, timeout_ms=timeout_ms)
    _emit(
        args,
        {"deleted": list(args.names)},
        lambda: "\n".join(f"Deleted topic {n}." for n in args.names),
    )
    return 0


# ------------------------------------------------------------------------------------- groups


def _groups_list(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    groups = admin.list_groups(client, timeout_ms=timeout_ms)
    data = [
        {"group": g.group_id, "type": g.type, "protocol_type": g.protocol_type, "state": g.state}
        for g in groups
    ]
    _emit(
        args,
        data,
        lambda: table(
            ("GROUP", "TYPE", "PROTOCOL-TYPE", "STATE"),
            [
                (d["group"], d["type"] or None, d["protocol_type"] or None, d["state"] or None)
                for d in data
            ],
        ),
    )
    return 0


def _member_partitions(member: admin.GroupMember, protocol_type: str) -> tuple[TopicPartition, ...]:
    if member.assignment is not None:
        return tuple(TopicPartition(t, p) for t, p in member.assignment)
    if protocol_type == "consumer" and member.assignment_bytes:
        return tuple(sorted(decode_assignment(member.assignment_bytes).partitions))
    return ()


def group_offsets(
    client: KafkaClient, group_id: str, timeout_ms: int
) -> tuple[admin.GroupDescription, list[dict[str, Any]]]:
    """The group and one row per partition as ``kafka-consumer-groups.sh --describe`` shows
    it: every partition a member is assigned, and every other one with a committed offset.

    Each row: ``group``, ``topic``, ``partition``, ``leader_epoch`` (committed with the offset,
    or ``None``), ``current_offset`` (``None``: nothing committed), ``log_end_offset`` (the
    high watermark, ListOffsets latest), ``lag`` (records), ``consumer_id``, ``host``,
    ``client_id`` (``None`` for a partition no member owns).

    Raises:
        KafkaApiError: GROUP_ID_NOT_FOUND, an authorization error, ... naming the group.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    description = admin.describe_group(client, group_id, timeout_ms=timeout_ms)
    committed = admin.committed_offsets_and_epochs(client, group_id, timeout_ms=timeout_ms)
    owner: dict[TopicPartition, admin.GroupMember] = {}
    for member in description.members:
        for tp in _member_partitions(member, description.protocol_type):
            owner[tp] = member
    partitions = sorted({*owner, *(TopicPartition(t, p) for t, p in committed)})
    ends = (
        list_offsets(
            client,
            {tp: _LATEST for tp in partitions},
            api_timeout_ms=timeout_ms,
            retry_backoff_ms=client.config.retry_backoff_ms,
        )
        if partitions
        else {}
    )
    rows = []
    for tp in partitions:
        found = committed.get((tp.topic, tp.partition))
        current = None if found is None else found.offset
        end = ends.get(tp)
        m = owner.get(tp)
        rows.append(
            {
                "group": group_id,
                "topic": tp.topic,
                "partition": tp.partition,
                "leader_epoch": None if found is None else found.leader_epoch,
                "current_offset": current,
                "log_end_offset": end,
                "lag": None if current is None or end is None else max(0, end - current),
                "consumer_id": m.member_id if m else None,
                "host": m.host if m else None,
                "client_id": m.client_id if m else None,
            }
        )
    return description, rows


def assignment_text(partitions: Iterable[tuple[str, int]] | None) -> str | None:
    """Partitions as ``kafka-consumer-groups.sh --members --verbose`` prints an assignment:
    ``topic:0,1,2`` per topic, partitions ascending, topics sorted and joined by ``;``;
    ``None`` (printed ``-``) for no partition."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions or ():
        by_topic.setdefault(topic, []).append(partition)
    if not by_topic:
        return None
    return ";".join(sorted(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in by_topic.items()))


def _members_data(description: admin.GroupDescription) -> list[dict[str, Any]]:
    out = []
    for m in description.members:
        assigned = _member_partitions(m, description.protocol_type)
        target = m.target_assignment
        out.append(
            {
                "member_id": m.member_id,
                "instance_id": m.instance_id,
                "client_id": m.client_id,
                "host": m.host,
                "partitions": len(assigned),
                "assignment": [[tp.topic, tp.partition] for tp in assigned],
                "member_epoch": m.member_epoch,
                "target_assignment": None if target is None else [[t, p] for t, p in target],
                "upgraded": m.upgraded,
            }
        )
    return out


#: Group states in which ``kafka-consumer-groups.sh`` warns that the group is rebalancing
#: (classic: PreparingRebalance, CompletingRebalance; KIP-848: Assigning, Reconciling).
_REBALANCING = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"})


def _group_note(description: admin.GroupDescription) -> str | None:
    """The line Kafka's tool prints on stderr before a group's table, if any."""
    if description.state == "Empty":
        return f"Consumer group '{description.group_id}' has no active members."
    if description.state in _REBALANCING:
        return f"Warning: Consumer group '{description.group_id}' is rebalancing."
    return None


def _coordinator_address(client: KafkaClient, node: int, timeout_ms: int) -> str | None:
    """``host:port`` of broker ``node`` as the cluster advertises it to this client."""
    metadata = client.cached_metadata
    if metadata is None or node not in metadata.brokers:
        metadata = client.metadata_retrying([], timeout_ms=timeout_ms)
    broker = metadata.brokers.get(node)
    return None if broker is None else f"{broker.host}:{broker.port}"


def _describe_offsets(
    args: argparse.Namespace, client: KafkaClient, timeout_ms: int
) -> tuple[Any, Callable[[], str], admin.GroupDescription]:
    description, rows = group_offsets(client, args.group, timeout_ms)
    data = {
        "group": description.group_id,
        "state": description.state,
        "type": description.type,
        "protocol_type": description.protocol_type,
        "assignor": description.assignor,
        "coordinator": description.coordinator,
        "members": _members_data(description),
        "offsets": rows,
    }

    def text() -> str:
        head = (
            f"Group: {description.group_id}  State: {description.state}  "
            f"Type: {description.type}  Assignor: {description.assignor or NONE}  "
            f"Coordinator: {description.coordinator}  Members: {len(description.members)}"
        )
        columns = GROUP_COLUMNS_VERBOSE if args.verbose else GROUP_COLUMNS
        keys = [_OFFSET_KEYS[c] for c in columns]
        body = table(columns, [[r[k] for k in keys] for r in rows])
        return head + "\n\n" + body

    return data, text, description


def _describe_members(
    args: argparse.Namespace, client: KafkaClient, timeout_ms: int
) -> tuple[Any, Callable[[], str], admin.GroupDescription]:
    description = admin.describe_group(client, args.group, timeout_ms=timeout_ms)
    members = _members_data(description)
    data = {
        "group": description.group_id,
        "state": description.state,
        "type": description.type,
        "target_assignment_epoch": description.assignment_epoch,
        "members": members,
    }

    def text() -> str:
        with_instance = any(m["instance_id"] for m in members)
        upgrades = {m["upgraded"] for m in members}
        with_upgraded = args.verbose and {True, False} <= upgrades  # a group migrating
        headers = ["GROUP", "CONSUMER-ID"]
        headers += ["GROUP-INSTANCE-ID"] if with_instance else []
        headers += ["HOST", "CLIENT-ID", "#PARTITIONS"]
        if args.verbose:
            headers += ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
        headers += ["UPGRADED"] if with_upgraded else []
        rows = []
        for m in members:
            row = [description.group_id, m["member_id"]]
            row += [m["instance_id"]] if with_instance else []
            row += [m["host"], m["client_id"], m["partitions"]]
            if args.verbose:
                row += [
                    m["member_epoch"],
                    assignment_text(m["assignment"]),
                    description.assignment_epoch,
                    assignment_text(m["target_assignment"]),
                ]
            if with_upgraded:
                row.append(None if m["upgraded"] is None else str(m["upgraded"]).lower())
            rows.append(row)
        return table(headers, rows)

    return data, text, description


def _describe_state(
    args: argparse.Namespace, client: KafkaClient, timeout_ms: int
) -> tuple[Any, Callable[[], str], admin.GroupDescription]:
    description = admin.describe_group(client, args.group, timeout_ms=timeout_ms)
    address = _coordinator_address(client, description.coordinator, timeout_ms)
    data = {
        "group": description.group_id,
        "coordinator": description.coordinator,
        "coordinator_address": address,
        "assignment_strategy": description.assignor or None,
        "state": description.state,
        "type": description.type,
        "group_epoch": description.group_epoch,
        "target_assignment_epoch": description.assignment_epoch,
        "members": len(description.members),
    }

    def text() -> str:
        headers = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"]
        row: list[object] = [
            description.group_id,
            f"{address or NONE}  ({description.coordinator})",
            data["assignment_strategy"],
            description.state,
        ]
        if args.verbose:
            headers += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
            row += [description.group_epoch, description.assignment_epoch]
        headers.append("#MEMBERS")
        row.append(len(description.members))
        return table(headers, [row])

    return data, text, description


_VIEWS = {"offsets": _describe_offsets, "members": _describe_members, "state": _describe_state}


def _groups_describe(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    data, text, description = _VIEWS[args.view](args, client, timeout_ms)
    if not args.json:
        note = _group_note(description)
        if note:
            print(note, file=sys.stderr)
    _emit(args, data, text)
    return 0


# ------------------------------------------------------------------------------- transactions


def _transactions_list(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    client.metadata_retrying([], timeout_ms=timeout_ms)  # fail fast, with the timeout, if down
    listed = admin.list_transactions_by_coordinator(client, timeout_ms=timeout_ms)
    data = [
        {"transactional_id": t, "coordinator": c, "producer_id": p, "state": s}
        for t, c, p, s in listed
    ]
    _emit(
        args,
        data,
        lambda: table(("TransactionalId", "Coordinator", "ProducerId", "TransactionState"), listed),
    )
    return 0


def _transactions_describe(args: argparse.Namespace, client: KafkaClient, timeout_ms: int) -> int:
    state = admin.describe_transaction(client, args.transactional_id, timeout_ms=timeout_ms)
    coordinator = find_transaction_coordinator(
        client, args.transactional_id, deadline_after(timeout_ms), timeout_ms
    )
    start = state.start_time_ms if state.start_time_ms >= 0 else None
    data: dict[str, Any] = {
        "coordinator_id": coordinator,
        "transactional_id": state.transactional_id,
        "producer_id": state.producer_id,
        "producer_epoch": state.producer_epoch,
        "state": state.state,
        "timeout_ms": state.timeout_ms,
        "start_time_ms": start,
        "duration_ms": None if start is None else max(0, int(time.time() * 1000) - start),
        "partitions": [f"{t}-{p}" for t, p in state.partitions],
    }
    headers = (
        "CoordinatorId",
        "TransactionalId",
        "ProducerId",
        "ProducerEpoch",
        "TransactionState",
        "TransactionTimeoutMs",
        "CurrentTransactionStartTimeMs",
        "TransactionDurationMs",
        "TopicPartitions",
    )
    row = list(data.values())
    row[-1] = ",".join(data["partitions"]) or None
    _emit(args, data, lambda: table(headers, [row]))
    return 0


# --------------------------------------------------------------------------------- the parser

Action = Callable[[argparse.Namespace, KafkaClient, int], int]


def _run(action: Action) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            config, timeout_ms = client_settings(args)
            with KafkaClient(config) as client:
                return action(args, client, timeout_ms)
        except KafkaError as exc:
            message = " ".join(str(exc).split())
            print(f"spark-kafka-py {args.command_line}: error: {message}", file=sys.stderr)
            return 1

    return run


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("connection")
    group.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT[,...]",
        help="the cluster (default: bootstrap.servers of --command-config, else the local "
        "broker of `spark-kafka-py broker start`)",
    )
    group.add_argument(
        "--command-config",
        metavar="FILE",
        help="Java properties file of Kafka client settings (security.protocol, sasl.*, "
        "ssl.*, client.id, request.timeout.ms, default.api.timeout.ms, ...), as Kafka's tools "
        "take; the same settings as the connector's kafka.* options",
    )
    group.add_argument(
        "--timeout-ms",
        type=int,
        metavar="MS",
        help="how long to wait for the cluster (default: default.api.timeout.ms, 60000)",
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return common


def _leaf(
    actions: Any, name: str, help: str, action: Action, common: argparse.ArgumentParser, line: str
) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = actions.add_parser(
        name, help=help, description=help, parents=[common]
    )
    p.set_defaults(func=_run(action), command_line=line)
    return p


def add_parser(subparsers: Any) -> None:
    """Register ``topics``, ``groups`` and ``transactions`` on the CLI's subparsers."""
    common = _common()

    topics = subparsers.add_parser(
        "topics",
        help="create, list, describe and delete topics (as kafka-topics.sh)",
        description="Create, list, describe and delete topics (as kafka-topics.sh).",
    )
    ta = topics.add_subparsers(dest="topics_action", metavar="ACTION", required=True)
    p = _leaf(ta, "create", "create a topic", _topics_create, common, "topics create")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--partitions", type=int, default=-1, help="(default: the broker's)")
    p.add_argument("--replication-factor", type=int, default=-1, help="(default: the broker's)")
    p.add_argument(
        "--config", action="append", metavar="NAME=VALUE", help="a topic setting (repeatable)"
    )
    p.add_argument(
        "--if-not-exists", action="store_true", help="succeed when the topic exists already"
    )
    p = _leaf(ta, "list", "list the topics' names", _topics_list, common, "topics list")
    p.add_argument("--exclude-internal", action="store_true", help="leave out Kafka's own")
    p = _leaf(
        ta,
        "describe",
        "partitions (leader, replicas, ISR) and the settings set on each topic",
        _topics_describe,
        common,
        "topics describe",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="(default: every topic)")
    p = _leaf(ta, "delete", "delete topics", _topics_delete, common, "topics delete")
    p.add_argument("names", nargs="+", metavar="NAME")

    groups = subparsers.add_parser(
        "groups",
        help="list and describe consumer groups (as kafka-consumer-groups.sh)",
        description="List and describe consumer groups (as kafka-consumer-groups.sh).",
    )
    ga = groups.add_subparsers(dest="groups_action", metavar="ACTION", required=True)
    _leaf(ga, "list", "list the groups", _groups_list, common, "groups list")
    p = _leaf(
        ga,
        "describe",
        "committed offsets and lag per partition (default), the members (--members) or the "
        "group's state (--state), as kafka-consumer-groups.sh --describe",
        _groups_describe,
        common,
        "groups describe",
    )
    p.add_argument("group", metavar="GROUP")
    view = p.add_mutually_exclusive_group()
    view.add_argument(
        "--offsets",
        dest="view",
        action="store_const",
        const="offsets",
        help="per partition: CURRENT-OFFSET, LOG-END-OFFSET, LAG and the member (default)",
    )
    view.add_argument(
        "--members",
        dest="view",
        action="store_const",
        const="members",
        help="per member: CONSUMER-ID, HOST, CLIENT-ID, #PARTITIONS",
    )
    view.add_argument(
        "--state",
        dest="view",
        action="store_const",
        const="state",
        help="COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, #MEMBERS",
    )
    p.set_defaults(view="offsets")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="more columns: LEADER-EPOCH (offsets); CURRENT-EPOCH, CURRENT-ASSIGNMENT, "
        "TARGET-EPOCH, TARGET-ASSIGNMENT (members); GROUP-EPOCH, TARGET-ASSIGNMENT-EPOCH "
        "(state); --json always has them",
    )

    txns = subparsers.add_parser(
        "transactions",
        help="list and describe transactions (as kafka-transactions.sh)",
        description="List and describe transactions (as kafka-transactions.sh).",
    )
    xa = txns.add_subparsers(dest="transactions_action", metavar="ACTION", required=True)
    _leaf(xa, "list", "every transactional id", _transactions_list, common, "transactions list")
    p = _leaf(
        xa,
        "describe",
        "one transactional id's state at its coordinator",
        _transactions_describe,
        common,
        "transactions describe",
    )
    p.add_argument("transactional_id", metavar="ID")
