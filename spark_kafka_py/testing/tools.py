"""Apache Kafka's own Java tools as reference clients: topics, producers, consumers, groups.

Every function runs a tool's main class, ``java -cp <kafka jars> <main class> ...``, from the
same jars as the local broker (:func:`spark_kafka_py.testing.jars.kafka_jars`), and raises
:class:`KafkaToolError` (with the tool's stderr) when the tool fails. The run happens in the
process's tool server (``java/ToolServer.java``: one long-lived JVM running one tool's main at
a time, with its own stdin, stdout, stderr and exit code, compiled and started on first use)
when it is free and the class path is Kafka's and ours, else in a JVM of its own
(:func:`spark_kafka_py.testing.jvm.run_java`); the results are the same, the server saves the
JVM start (about 2 s of wall and CPU time per run). ``SPARK_KAFKA_PY_TOOL_SERVER=0`` turns
the server off. Nothing here speaks the
Kafka protocol itself: this is the independent reference our own client is checked against.

Main classes (Kafka 4.3): ``org.apache.kafka.tools.TopicCommand``,
``org.apache.kafka.tools.ConsoleProducer``, ``org.apache.kafka.tools.consumer.ConsoleConsumer``,
``org.apache.kafka.tools.ProducerPerformance``, ``org.apache.kafka.tools.GetOffsetShell``,
``org.apache.kafka.tools.consumer.group.ConsumerGroupCommand``,
``org.apache.kafka.tools.BrokerApiVersionsCommand``,
``org.apache.kafka.tools.FeatureCommand``,
``org.apache.kafka.tools.DumpLogSegments``; and three
small programs of ours over Kafka's classes (``java/``): a ConsoleProducer record reader,
:func:`read_all`'s KafkaConsumer reader, :func:`run_tool_runs`' launcher of several runs of
one tool in one JVM, and the tool server.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import (
    DEFAULT_TIMEOUT_S,
    ERROR_TAIL_CHARS,
    JavaError,
    compile_java,
    java_command,
    run_java,
)

__all__ = [
    "COMPRESSION_CODECS",
    "ConsumedRecord",
    "DumpedBatch",
    "FeatureState",
    "KafkaToolError",
    "PartitionState",
    "PerfResult",
    "ProducedRecord",
    "add_partitions",
    "broker_api_versions",
    "consume",
    "consumer_groups_describe",
    "create_topic",
    "delete_topic",
    "describe_features",
    "describe_topic",
    "dump_log",
    "finalized_feature_level",
    "get_offsets",
    "list_topics",
    "partition_states",
    "produce",
    "produce_perf",
    "read_all",
    "run_tool",
    "run_tool_runs",
    "segment_files",
    "tool_server_running",
    "wait_for_full_isr",
]

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
PRODUCER_PERFORMANCE = "org.apache.kafka.tools.ProducerPerformance"
GET_OFFSET_SHELL = "org.apache.kafka.tools.GetOffsetShell"
CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
BROKER_API_VERSIONS = "org.apache.kafka.tools.BrokerApiVersionsCommand"
#: ``kafka-features.sh`` (KIP-584 feature flags: describe, upgrade, version-mapping...).
FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"
#: ``kafka-dump-log.sh`` (moved from Scala to ``kafka-tools`` in Kafka 4.x).
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"

#: Our record reader for ConsoleProducer (``java/Base64LineReader.java``, compiled on first use).
RECORD_READER_CLASS = "sparkkafkapy.Base64LineReader"
#: Our reference reader over KafkaConsumer (``java/ReadAll.java``, compiled on first use).
READ_ALL_CLASS = "sparkkafkapy.ReadAll"
#: Several runs of one tool in one JVM (``java/ToolRuns.java``, compiled on first use).
TOOL_RUNS_CLASS = "sparkkafkapy.ToolRuns"
#: One long-lived JVM running tools' main classes one at a time (``java/ToolServer.java``).
TOOL_SERVER_CLASS = "sparkkafkapy.ToolServer"
#: Environment variable: ``0`` runs every tool in a JVM of its own (no tool server).
TOOL_SERVER_ENV = "SPARK_KAFKA_PY_TOOL_SERVER"
#: Runs after which the tool server is replaced by a fresh JVM (bounds what runs leave behind:
#: loaded classes, threads a tool did not stop).
TOOL_SERVER_MAX_RUNS = 200
#: Seconds the tool server may take to start and say it is ready.
TOOL_SERVER_START_TIMEOUT_S = 120.0
#: The separator of :func:`run_tool_runs`' argument groups and output sections.
_RUN_SEPARATOR = "@@spark-kafka-py-tool-run@@"

#: Values of the producer's ``compression.type`` we test with.
COMPRESSION_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

#: Default timeout of one tool run, seconds.
DEFAULT_TOOL_TIMEOUT_S = DEFAULT_TIMEOUT_S


class KafkaToolError(JavaError):
    """A Kafka Java tool exited non-zero, timed out or reported an error.

    Attributes (from :class:`~spark_kafka_py.testing.jvm.JavaError`):
        returncode: the exit code (``None`` on timeout).
        stdout: the tool's standard output.
        stderr: the tool's standard error.
    """


def run_tool(
    main_class: str,
    args: Sequence[str],
    *,
    input: str | bytes | None = None,
    classpath: str | None = None,
    timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
    heap: str = "256m",
    fast_start: bool = True,
    check: bool = True,
    jvm_options: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``java -cp <kafka jars> main_class *args`` and return its output as text.

    :func:`spark_kafka_py.testing.jvm.run_java` with the Kafka jars as the default class path
    and the tools' log4j2 configuration (warnings to stderr).

    Args:
        main_class: fully qualified Java class with ``main``.
        args: the tool's arguments.
        input: written to the tool's stdin (``str`` is UTF-8 encoded); stdin is empty otherwise.
        classpath: ``java -cp`` value; default :func:`kafka_classpath` of :data:`KAFKA_VERSION`.
        timeout_s: the process is killed after this many seconds (on the tool server: the
            server is killed, and a new one started for the next run).
        heap: ``-Xmx`` of the JVM (a JVM of its own; the tool server has 512 MiB).
        fast_start: run with C1 only (quicker start, for short tools; off for benchmarks);
            only such runs go to the tool server.
        check: raise on a non-zero exit code.
        jvm_options: extra JVM options (e.g. ``-Djava.security.krb5.conf=...``); a run with
            them gets a JVM of its own (the tool server's JVM is shared).

    Raises:
        KafkaToolError: Java missing, exit code != 0 (with ``check``) or timeout; message has
            the command line (class and args) and the tail of stderr.
    """
    classpath = classpath or kafka_classpath(KAFKA_VERSION)
    if fast_start and not jvm_options:
        served = _run_on_tool_server(main_class, args, classpath, input, timeout_s)
        if served is not None:
            returncode, out, err = served
            if check and returncode != 0:
                raise KafkaToolError(
                    f"{main_class} {' '.join(args)} exited {returncode}\n"
                    f"stderr:\n{err[-ERROR_TAIL_CHARS:]}\nstdout:\n{out[-2000:]}",
                    returncode,
                    out,
                    err,
                )
            cmd = java_command(main_class, args, classpath=classpath, heap=heap)
            return subprocess.CompletedProcess(cmd, returncode, out, err)
    try:
        return run_java(
            main_class,
            args,
            classpath=classpath,
            input=input,
            timeout_s=timeout_s,
            heap=heap,
            fast_start=fast_start,
            check=check,
            jvm_options=jvm_options,
        )
    except JavaError as exc:
        raise KafkaToolError(str(exc), exc.returncode, exc.stdout, exc.stderr) from exc


class _ToolServer:
    """One running ``java/ToolServer.java`` JVM, spoken to over its stdin and stdout."""

    def __init__(self, classpath: str) -> None:
        self.classpath = classpath
        self.entries = frozenset(classpath.split(os.pathsep))
        self.cwd = os.getcwd()
        self.pid = os.getpid()
        self.runs = 0
        self.dead = False
        self.dir = Path(tempfile.mkdtemp(prefix="spark-kafka-py-tools-"))
        cmd = java_command(TOOL_SERVER_CLASS, classpath=classpath, heap="512m")
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        line = self._read_line(time.monotonic() + TOOL_SERVER_START_TIMEOUT_S)
        if line != "ready":
            self.close()
            raise KafkaToolError(f"the tool server did not start (said {line!r})")

    def _read_line(self, deadline: float) -> str | None:
        """The next answer line; ``None`` at end of output (the JVM ended).

        Raises:
            TimeoutError: no whole line before ``deadline`` (``time.monotonic``).
        """
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        data = b""
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1)
            if not chunk:
                return None
            data += chunk
        return data.decode("utf-8").rstrip("\n")

    def run(
        self, main_class: str, args: Sequence[str], data: bytes, timeout_s: float
    ) -> tuple[int, str, str]:
        """Run ``main_class.main(args)`` with ``data`` as stdin; ``(exit code, stdout, stderr)``.

        Raises:
            KafkaToolError: the timeout passed (the server is killed; ``returncode`` None).
        """
        self.runs += 1
        stdin, stdout, stderr = self.dir / "in", self.dir / "out", self.dir / "err"
        stdin.write_bytes(data)
        fields = [main_class, str(stdin), str(stdout), str(stderr), *args]
        request = "\t".join(base64.b64encode(f.encode("utf-8")).decode("ascii") for f in fields)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(request.encode("ascii") + b"\n")
            self.proc.stdin.flush()
            line = self._read_line(time.monotonic() + timeout_s)
        except TimeoutError:
            self.close()
            out, err = self._outputs()
            raise KafkaToolError(
                f"{main_class} {' '.join(args)} timed out after {timeout_s} s\n"
                f"{err[-ERROR_TAIL_CHARS:]}",
                None,
                out,
                err,
            ) from None
        except BrokenPipeError:
            line = None
        if line is None:  # System.exit in the tool: the JVM's exit code is the run's
            self.dead = True
            returncode = self.proc.wait()
        elif line.startswith("exit "):
            returncode = int(line[len("exit ") :])
        else:
            self.close()
            raise KafkaToolError(f"the tool server answered {line!r} to {main_class}")
        out, err = self._outputs()
        return returncode, out, err

    def _outputs(self) -> tuple[str, str]:
        def text(path: Path) -> str:
            raw = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
            return _SERVER_FRAMES.sub("", raw)

        return text(self.dir / "out"), text(self.dir / "err")

    def close(self) -> None:
        """End the JVM (closing its stdin ends it; killed if it does not) and remove files."""
        self.dead = True
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        shutil.rmtree(self.dir, ignore_errors=True)


#: The frames a stack trace printed in the tool server has below the tool's ``main`` (the
#: reflective call of ``ToolServer``), which a JVM of the tool's own does not print. After
#: some calls the JVM replaces the reflective call by a generated accessor, printed without
#: its module: ``at jdk.internal.reflect.GeneratedMethodAccessor2.invoke(Unknown Source)``.
_SERVER_FRAMES = re.compile(
    r"(?:\tat (?:java\.base/)?jdk\.internal\.reflect\.[^\n]*\n"
    r"|\tat java\.base/java\.lang\.reflect\.Method\.invoke[^\n]*\n)*"
    r"\tat sparkkafkapy\.ToolServer\.run[^\n]*\n\tat sparkkafkapy\.ToolServer\.main[^\n]*\n"
)

_tool_server: _ToolServer | None = None
_tool_server_lock = threading.Lock()


def _tool_server_classpath() -> str:
    """The tool server's class path: our classes (server, record reader, reader) and Kafka's."""
    kafka = kafka_classpath(KAFKA_VERSION)
    ours = [
        str(_java_classes(name, kafka))
        for name in ("ToolServer.java", "Base64LineReader.java", "ReadAll.java")
    ]
    return os.pathsep.join([*ours, kafka])


def tool_server_running() -> bool:
    """Whether this process already runs a live tool server (a :func:`run_tool` call started
    it): then a short tool run costs a request (0.1-0.3 s) instead of a JVM start (2-6 s on
    the loaded 2-core machine). Never starts one."""
    server = _tool_server
    return server is not None and not server.dead and server.pid == os.getpid()


def _close_tool_server() -> None:
    global _tool_server
    with _tool_server_lock:
        if _tool_server is not None and _tool_server.pid == os.getpid():
            _tool_server.close()
        _tool_server = None


atexit.register(_close_tool_server)


def _run_on_tool_server(
    main_class: str,
    args: Sequence[str],
    classpath: str,
    input: str | bytes | None,
    timeout_s: float,
) -> tuple[int, str, str] | None:
    """Run on the tool server: ``(exit code, stdout, stderr)``, or ``None`` when the run needs
    a JVM of its own (server off, busy with another thread's run, another class path or
    working directory, or :func:`run_tool_runs`' launcher, which ends its JVM).

    Raises:
        KafkaToolError: the run timed out, or the server could not start.
    """
    global _tool_server
    if os.environ.get(TOOL_SERVER_ENV, "1") == "0" or main_class == TOOL_RUNS_CLASS:
        return None
    if not _tool_server_lock.acquire(blocking=False):
        return None  # a run in another thread: waiting could deadlock (consume while producing)
    try:
        server = _tool_server
        if server is not None and (
            server.dead or server.runs >= TOOL_SERVER_MAX_RUNS or server.pid != os.getpid()
        ):
            if server.pid == os.getpid():
                server.close()
            server = _tool_server = None
        if server is None:
            server = _tool_server = _ToolServer(_tool_server_classpath())
        if server.cwd != os.getcwd() or not set(classpath.split(os.pathsep)) <= server.entries:
            return None
        data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
        return server.run(main_class, args, data, timeout_s)
    finally:
        _tool_server_lock.release()


def run_tool_runs(
    main_class: str,
    runs: Sequence[Sequence[str]],
    *,
    timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
    heap: str = "256m",
) -> list[tuple[str, str]]:
    """Run ``main_class`` once per argument list of ``runs``, one after the other in one JVM
    (``java/ToolRuns.java``), and return each run's ``(stdout, stderr)``.

    For the tools whose ``main`` returns instead of calling ``Exit.exit`` on success (such as
    ``ConsumerGroupCommand``): one JVM start (seconds each) instead of one per run.

    Args:
        main_class: fully qualified Java class with ``main``.
        runs: the arguments of each run, in order.
        timeout_s: the JVM is killed after this many seconds (all runs together).
        heap: ``-Xmx`` of the JVM.

    Raises:
        ValueError: no run, or an argument equal to the internal separator.
        KafkaToolError: a run threw or made the JVM exit non-zero, or the timeout passed.
    """
    if not runs:
        raise ValueError("run_tool_runs needs at least one run")
    argv = [main_class, _RUN_SEPARATOR]
    for args in runs:
        if _RUN_SEPARATOR in args:
            raise ValueError(f"an argument equals the run separator {_RUN_SEPARATOR!r}")
        argv += [*args, _RUN_SEPARATOR]
    classpath = kafka_classpath(KAFKA_VERSION)
    classpath = os.pathsep.join([str(_java_classes("ToolRuns.java", classpath)), classpath])
    proc = run_tool(TOOL_RUNS_CLASS, argv, classpath=classpath, timeout_s=timeout_s, heap=heap)

    def sections(text: str) -> list[str]:
        parts = re.split(rf"^{re.escape(_RUN_SEPARATOR)} \d+\n", text, flags=re.MULTILINE)
        return parts[1:]  # before the first marker: nothing of a run

    outs, errs = sections(proc.stdout), sections(proc.stderr)
    if len(outs) != len(runs) or len(errs) != len(runs):
        raise KafkaToolError(
            f"{main_class}: {len(runs)} runs asked, output of {len(outs)} found",
            proc.returncode,
            proc.stdout,
            proc.stderr,
        )
    return list(zip(outs, errs, strict=True))


# ------------------------------------------------------------------------------------- topics


def create_topic(
    bootstrap: str,
    topic: str,
    partitions: int = 1,
    replication_factor: int = 1,
    configs: Mapping[str, str] | None = None,
) -> None:
    """Create ``topic`` with TopicCommand (``kafka-topics.sh --create``).

    Args:
        bootstrap: ``host:port,...``.
        topic: topic name.
        partitions: number of partitions.
        replication_factor: replicas per partition (<= number of brokers).
        configs: topic configs, e.g. ``{"cleanup.policy": "compact", "retention.ms": "1000"}``.

    Raises:
        KafkaToolError: the topic exists, bad config, broker unreachable, ...
    """
    args = [
        "--bootstrap-server",
        bootstrap,
        "--create",
        "--topic",
        topic,
        "--partitions",
        str(partitions),
        "--replication-factor",
        str(replication_factor),
    ]
    for key, value in (configs or {}).items():
        args += ["--config", f"{key}={value}"]
    run_tool(TOPIC_COMMAND, args)


def add_partitions(bootstrap: str, topic: str, partitions: int) -> None:
    """Grow ``topic`` to ``partitions`` partitions in total (``kafka-topics.sh --alter``).

    Raises:
        KafkaToolError: ``partitions`` not above the current count, unknown topic, ...
    """
    run_tool(
        TOPIC_COMMAND,
        [
            "--bootstrap-server",
            bootstrap,
            "--alter",
            "--topic",
            topic,
            "--partitions",
            str(partitions),
        ],
    )


def delete_topic(bootstrap: str, topic: str) -> None:
    """Delete ``topic`` (``kafka-topics.sh --delete``). Raises :class:`KafkaToolError`."""
    run_tool(TOPIC_COMMAND, ["--bootstrap-server", bootstrap, "--delete", "--topic", topic])


def describe_topic(bootstrap: str, topic: str) -> str:
    """Raw output of ``kafka-topics.sh --describe --topic``: one line per partition with
    ``Leader``, ``Replicas``, ``Isr``. Raises :class:`KafkaToolError`."""
    return run_tool(
        TOPIC_COMMAND, ["--bootstrap-server", bootstrap, "--describe", "--topic", topic]
    ).stdout


@dataclass(frozen=True)
class PartitionState:
    """One partition line of ``kafka-topics.sh --describe``.

    Attributes:
        partition: partition id.
        leader: leader node id, ``-1`` when there is none.
        replicas: replica node ids (preferred leader first).
        isr: in-sync replica node ids.
    """

    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip().lstrip("-").isdigit())


def partition_states(bootstrap: str, topic: str) -> dict[int, PartitionState]:
    """Leader, replicas and ISR of every partition of ``topic`` (parsed TopicCommand output).

    Raises:
        KafkaToolError: unknown topic, broker unreachable, ...
    """
    states = {}
    for line in describe_topic(bootstrap, topic).splitlines():
        fields = dict(re.findall(r"(\w+): ?([^\t]*)", line))
        if "Partition" in fields and "Leader" in fields:
            leader = fields["Leader"].strip()
            p = int(fields["Partition"])
            states[p] = PartitionState(
                partition=p,
                leader=int(leader) if leader.lstrip("-").isdigit() else -1,
                replicas=_ids(fields.get("Replicas", "")),
                isr=_ids(fields.get("Isr", "")),
            )
    return states


def wait_for_full_isr(
    bootstrap: str, topic: str, timeout_s: float = 60.0, poll_s: float = 0.5
) -> dict[int, PartitionState]:
    """Wait until every partition of ``topic`` has a leader and all replicas in sync.

    For failover tests: after :meth:`LocalKafkaCluster.restart`, followers need a moment to
    catch up. Polled every ``poll_s`` seconds (each poll a served TopicCommand call, 0.2-0.4 s
    on the loaded 2-core machine). Returns the final states.

    Raises:
        TimeoutError: not in sync after ``timeout_s`` seconds (message has the last states).
        KafkaToolError: TopicCommand failed.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        states = partition_states(bootstrap, topic)
        if states and all(s.leader >= 0 and set(s.isr) == set(s.replicas) for s in states.values()):
            return states
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic} not fully in sync after {timeout_s} s: {states}")
        time.sleep(poll_s)


def list_topics(bootstrap: str) -> list[str]:
    """Topic names (``kafka-topics.sh --list``), sorted. Raises :class:`KafkaToolError`."""
    out = run_tool(TOPIC_COMMAND, ["--bootstrap-server", bootstrap, "--list"]).stdout
    return sorted(line.strip() for line in out.splitlines() if line.strip())


def get_offsets(bootstrap: str, topic: str, time: str | int = "latest") -> dict[int, int]:
    """Offsets per partition from GetOffsetShell (``kafka-get-offsets.sh``).

    Args:
        time: ``"latest"`` (log end offset), ``"earliest"`` (log start offset),
            ``"max-timestamp"``, or a timestamp in ms (first offset with timestamp >= it).

    Returns:
        ``{partition: offset}`` (for a timestamp with no later record, Kafka prints no offset
        and that partition is missing).

    Raises:
        KafkaToolError: unknown topic, broker unreachable, ...
    """
    spec = {"latest": "-1", "earliest": "-2", "max-timestamp": "-3"}.get(str(time), str(time))
    out = run_tool(
        GET_OFFSET_SHELL,
        ["--bootstrap-server", bootstrap, "--topic", topic, "--time", spec],
    ).stdout
    offsets: dict[int, int] = {}
    for line in out.splitlines():
        parts = line.strip().rsplit(":", 2)
        if len(parts) == 3 and parts[0] == topic and parts[2].lstrip("-").isdigit():
            offsets[int(parts[1])] = int(parts[2])
    return offsets


def broker_api_versions(bootstrap: str) -> str:
    """Raw output of ``kafka-broker-api-versions.sh``: one block per live broker."""
    return run_tool(BROKER_API_VERSIONS, ["--bootstrap-server", bootstrap]).stdout


@dataclass(frozen=True)
class FeatureState:
    """One feature of ``kafka-features.sh describe`` (KIP-584), as the tool prints it.

    Levels are strings as printed: integers for most features (``transaction.version``,
    ``group.version``...), release names for ``metadata.version`` (``4.3-IV0``).

    Attributes:
        name: the feature, e.g. ``transaction.version``.
        supported_min / supported_max: the range every broker supports.
        finalized: the cluster-wide finalized level (``0``: the feature is off).
        epoch: the epoch of the finalized features (``-`` when the tool prints none).
    """

    name: str
    supported_min: str
    supported_max: str
    finalized: str
    epoch: str


_FEATURE_FIELD = re.compile(r"(\w+):\s*(\S+)")


def describe_features(bootstrap: str) -> dict[str, FeatureState]:
    """The cluster's feature flags as Kafka's ``kafka-features.sh describe`` shows them
    (``FeatureCommand describe --bootstrap-server``: the Admin client's DescribeFeatures,
    i.e. ApiVersions' supported and finalized features).

    Returns:
        Feature name -> :class:`FeatureState`, one per ``Feature:`` line.

    Raises:
        KafkaToolError: broker unreachable, tool failed, or a ``Feature:`` line lacks a field.
    """
    proc = run_tool(FEATURE_COMMAND, ["--bootstrap-server", bootstrap, "describe"])
    states: dict[str, FeatureState] = {}
    for line in proc.stdout.splitlines():
        if not line.startswith("Feature:"):
            continue
        f = dict(_FEATURE_FIELD.findall(line))
        try:
            states[f["Feature"]] = FeatureState(
                name=f["Feature"],
                supported_min=f["SupportedMinVersion"],
                supported_max=f["SupportedMaxVersion"],
                finalized=f["FinalizedVersionLevel"],
                epoch=f.get("Epoch", "-"),
            )
        except KeyError as exc:
            raise KafkaToolError(
                f"unexpected kafka-features describe line (no {exc}): {line}",
                proc.returncode,
                proc.stdout,
                proc.stderr,
            ) from exc
    return states


def finalized_feature_level(bootstrap: str, feature: str) -> int:
    """The finalized level of ``feature`` (e.g. ``transaction.version``) that
    ``kafka-features.sh describe`` shows; ``0`` when the tool does not list the feature (a
    feature the brokers do not know is not finalized).

    Raises:
        KafkaToolError: the tool failed, or printed a level that is not an integer (e.g. for
            ``metadata.version``: use :func:`describe_features`).
    """
    state = describe_features(bootstrap).get(feature)
    if state is None:
        return 0
    if not state.finalized.isdigit():
        raise KafkaToolError(f"{feature}: finalized level {state.finalized!r} is not an integer")
    return int(state.finalized)


def consumer_groups_describe(bootstrap: str, group: str, *, extra: Sequence[str] = ()) -> str:
    """Raw output of ``kafka-consumer-groups.sh --describe --group group`` (plus ``extra``,
    e.g. ``["--members"]`` or ``["--state"]``). Raises :class:`KafkaToolError`."""
    return run_tool(
        CONSUMER_GROUP_COMMAND,
        ["--bootstrap-server", bootstrap, "--describe", "--group", group, *extra],
    ).stdout


# ----------------------------------------------------------------------------------- producing


@dataclass(frozen=True)
class ProducedRecord:
    """One record for :func:`produce`.

    Attributes:
        key: ``None`` for a null key; ``str`` is UTF-8 encoded; ``bytes`` used as is.
        value: ``None`` for a null value (a tombstone); ``str`` UTF-8 encoded; ``bytes`` as is.
        headers: ``(key, value)`` pairs in order; a ``None`` value is a null header value.
        partition: target partition, or ``None`` to let Kafka's default partitioner choose
            (murmur2 of the key; sticky batches for null keys).
        timestamp_ms: CreateTime in ms since the epoch, or ``None`` for the producer's clock.
    """

    key: str | bytes | None
    value: str | bytes | None
    headers: Sequence[tuple[str, str | bytes | None]] = field(default_factory=list)
    partition: int | None = None
    timestamp_ms: int | None = None


def _field(data: str | bytes | None) -> str:
    if data is None:
        return "-"
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return "=" + base64.b64encode(raw).decode("ascii")


def _encode_line(rec: ProducedRecord) -> str:
    parts = [
        "-" if rec.partition is None else f"={int(rec.partition)}",
        "-" if rec.timestamp_ms is None else f"={int(rec.timestamp_ms)}",
        _field(rec.key),
        _field(rec.value),
    ]
    for hkey, hvalue in rec.headers:
        if hkey is None:
            raise ValueError("header keys cannot be null")
        parts += [_field(hkey), _field(hvalue)]
    return "\t".join(parts)


def _java_classes(source_name: str, classpath: str) -> Path:
    """Compile ``java/<source_name>`` of this package once into the cache; return the classes
    directory (to put on ``java -cp`` before ``classpath``).

    Raises:
        KafkaToolError: ``javac`` missing or compilation failed.
    """
    source = resources.files("spark_kafka_py.testing").joinpath(f"java/{source_name}")
    try:
        return compile_java([source], classpath)
    except JavaError as exc:
        raise KafkaToolError(str(exc), exc.returncode, exc.stdout, exc.stderr) from exc


#: Lines of a ConsoleProducer's stderr that mean a record was not written. ConsoleProducer
#: sends asynchronously and only logs failed sends (ErrorLoggingCallback), exiting 0.
#: Matches the level field of ``conf/kafka-tools-log4j2.properties``' pattern ``[%d] %p %m``.
_SEND_ERROR = re.compile(r"^\[[^\]]*\] ERROR ")


def produce(
    bootstrap: str,
    topic: str,
    records: Iterable[ProducedRecord],
    compression: str = "none",
    linger_ms: int = 5,
    batch_size: int = 16384,
    extra_props: Mapping[str, str] | None = None,
    *,
    timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
) -> int:
    """Write ``records`` to ``topic`` with Kafka's ConsoleProducer (one JVM for the whole call).

    The records are handed to ConsoleProducer on stdin through our reader
    ``sparkkafkapy.Base64LineReader`` (``--line-reader``): Kafka's default LineMessageReader
    cannot choose a partition or timestamp per record and breaks on separators in the data.
    The producing itself (batching, compression, idempotence, retries) is Kafka's Java producer.

    Args:
        bootstrap: ``host:port,...``.
        topic: an existing topic.
        records: in order; Kafka keeps that order within each partition (idempotent producer,
            ``acks=all``).
        compression: ``compression.type``: ``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``.
        linger_ms: ``linger.ms`` (ms to wait to fill a batch).
        batch_size: ``batch.size`` in bytes (per-partition batch buffer).
        extra_props: more producer configs (override ours), e.g. ``{"acks": "1"}``.
        timeout_s: the producer JVM is killed after this many seconds.

    Returns:
        The number of records handed to the producer.

    Raises:
        ValueError: unknown compression codec or a null header key.
        KafkaToolError: ConsoleProducer exited non-zero, timed out, or logged a failed send.
    """
    if compression not in COMPRESSION_CODECS:
        raise ValueError(f"compression must be one of {COMPRESSION_CODECS}, got {compression!r}")
    lines = [_encode_line(r) for r in records]
    classpath = kafka_classpath(KAFKA_VERSION)
    classpath = os.pathsep.join([str(_java_classes("Base64LineReader.java", classpath)), classpath])
    props = {
        "acks": "all",
        "enable.idempotence": "true",
        "compression.type": compression,
        "linger.ms": str(linger_ms),
        "batch.size": str(batch_size),
        "max.in.flight.requests.per.connection": "5",
        "delivery.timeout.ms": "120000",
        "retries": "2147483647",
    }
    props.update(extra_props or {})
    args = [
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--line-reader",
        RECORD_READER_CLASS,
    ]
    if props["compression.type"] != "none":
        # ConsoleProducer sets compression.type from its own --compression-codec option
        # (default none) after the command properties, so the codec must go there too.
        args += ["--compression-codec", props["compression.type"]]
    for key, value in props.items():
        args += ["--command-property", f"{key}={value}"]
    proc = run_tool(
        CONSOLE_PRODUCER,
        args,
        input="\n".join(lines) + "\n",
        classpath=classpath,
        timeout_s=timeout_s,
    )
    bad = [line for line in proc.stderr.splitlines() if _SEND_ERROR.search(line)]
    if bad:
        raise KafkaToolError(
            f"ConsoleProducer reported errors writing to {topic}:\n"
            + proc.stderr[-ERROR_TAIL_CHARS:],
            proc.returncode,
            proc.stdout,
            proc.stderr,
        )
    return len(lines)


@dataclass(frozen=True)
class PerfResult:
    """Summary line of ProducerPerformance.

    Attributes:
        records: records sent.
        records_per_s: throughput, records/s.
        mb_per_s: throughput, MB/s (MiB as Kafka prints it).
        avg_latency_ms / max_latency_ms: producer send latency, ms.
        output: the tool's full stdout.
    """

    records: int
    records_per_s: float
    mb_per_s: float
    avg_latency_ms: float
    max_latency_ms: float
    output: str


_PERF_SUMMARY = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), "
    r"([\d.]+) ms avg latency, ([\d.]+) ms max latency"
)


def produce_perf(
    bootstrap: str,
    topic: str,
    num_records: int,
    record_size: int,
    compression: str = "none",
    extra_props: Mapping[str, str] | None = None,
    *,
    throughput: int = -1,
    timeout_s: float = 1800.0,
    heap: str = "512m",
) -> PerfResult:
    """Bulk-write ``num_records`` records of ``record_size`` bytes with ProducerPerformance.

    Values are random bytes (incompressible-ish; Kafka's tool picks a random payload), keys
    null. For benchmarks' input data, not for exact content checks.

    Args:
        throughput: max records/s, ``-1`` for no limit.
        extra_props: producer configs (``linger.ms``, ``batch.size``, ``acks`` ...).

    Returns:
        The parsed final summary.

    Raises:
        ValueError: unknown compression codec.
        KafkaToolError: the tool failed or printed no summary.
    """
    if compression not in COMPRESSION_CODECS:
        raise ValueError(f"compression must be one of {COMPRESSION_CODECS}, got {compression!r}")
    props = {"acks": "1", "compression.type": compression, "linger.ms": "10"}
    props.update(extra_props or {})
    args = [
        "--topic",
        topic,
        "--num-records",
        str(num_records),
        "--record-size",
        str(record_size),
        "--throughput",
        str(throughput),
        "--bootstrap-server",
        bootstrap,
        "--command-property",
        *[f"{k}={v}" for k, v in props.items()],
    ]
    proc = run_tool(PRODUCER_PERFORMANCE, args, timeout_s=timeout_s, heap=heap, fast_start=False)
    matches = _PERF_SUMMARY.findall(proc.stdout)
    if not matches:
        raise KafkaToolError(
            f"ProducerPerformance printed no summary:\n{proc.stdout[-2000:]}\n{proc.stderr}",
            proc.returncode,
            proc.stdout,
            proc.stderr,
        )
    rec, rps, mbps, avg, mx = matches[-1]
    return PerfResult(int(rec), float(rps), float(mbps), float(avg), float(mx), proc.stdout)


# ----------------------------------------------------------------------------------- consuming


def consume(
    bootstrap: str,
    topic: str,
    max_messages: int,
    *,
    timeout_ms: int = 20000,
    partition: int | None = None,
    offset: str | int = "earliest",
    group: str | None = None,
    isolation_level: str = "read_uncommitted",
    print_key: bool = True,
    print_partition: bool = False,
    print_offset: bool = False,
    print_headers: bool = False,
    separator: str = "\t",
    null_literal: str = "null",
    extra_props: Mapping[str, str] | None = None,
) -> list[str]:
    """Read up to ``max_messages`` records with Kafka's ConsoleConsumer; one line per record.

    Each line is the fields ConsoleConsumer's DefaultMessageFormatter prints, in its order
    (``Partition:N``, ``Offset:N``, headers, key, value as enabled), joined by ``separator``;
    null keys/values print as ``null_literal``.

    Args:
        max_messages: stop after this many records.
        timeout_ms: stop when no record arrived for this long (ms); ConsoleConsumer then exits
            non-zero, which is not an error here: the lines read so far are returned.
        partition: read only this partition (then ``offset`` applies); else all partitions.
        offset: ``"earliest"``, ``"latest"`` or an offset (with ``partition``).
        group: consumer group id (default: a random one chosen by the tool).
        isolation_level: ``read_uncommitted`` or ``read_committed``.

    Raises:
        KafkaToolError: the tool failed for another reason than the timeout.
    """
    args = ["--bootstrap-server", bootstrap, "--topic", topic]
    args += ["--max-messages", str(max_messages), "--timeout-ms", str(timeout_ms)]
    if partition is not None:
        args += ["--partition", str(partition), "--offset", str(offset)]
    elif offset == "earliest":
        args.append("--from-beginning")
    if group is not None:
        args += ["--group", group]
    args += ["--isolation-level", isolation_level]
    fmt = {
        "print.key": print_key,
        "print.partition": print_partition,
        "print.offset": print_offset,
        "print.headers": print_headers,
        "print.timestamp": False,
    }
    for key, flag in fmt.items():
        args += ["--formatter-property", f"{key}={str(flag).lower()}"]
    args += [
        "--formatter-property",
        f"key.separator={separator}",
        "--formatter-property",
        f"null.literal={null_literal}",
    ]
    for key, value in (extra_props or {}).items():
        args += ["--command-property", f"{key}={value}"]
    proc = run_tool(CONSOLE_CONSUMER, args, check=False)
    if proc.returncode != 0 and "TimeoutException" not in proc.stderr:
        raise KafkaToolError(
            f"ConsoleConsumer exited {proc.returncode}:\n{proc.stderr[-ERROR_TAIL_CHARS:]}",
            proc.returncode,
            proc.stdout,
            proc.stderr,
        )
    return [line for line in proc.stdout.splitlines() if not line.startswith("Processed a total")]


@dataclass(frozen=True)
class ConsumedRecord:
    """One record as Kafka's Java KafkaConsumer returned it (:func:`read_all`).

    Attributes:
        topic: topic name.
        partition: partition id.
        offset: offset in the partition.
        timestamp_ms: the record's timestamp, ms since the epoch.
        timestamp_type: ``"CreateTime"`` or ``"LogAppendTime"`` (Java's ``TimestampType.name``).
        key: key bytes, ``None`` for a null key.
        value: value bytes, ``None`` for a null value.
        headers: ``(key, value)`` pairs in record order; a ``None`` value is a null header value.
    """

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


def _b64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def read_all(
    bootstrap: str,
    topics: str | Sequence[str],
    *,
    isolation_level: str = "read_uncommitted",
    extra_props: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
    heap: str = "256m",
    jvm_options: Sequence[str] = (),
) -> list[ConsumedRecord]:
    """Every record of ``topics`` present when the call starts, read with Kafka's Java
    KafkaConsumer (``java/ReadAll.java``, compiled on first use).

    Every partition is assigned (no consumer group, nothing committed) and read from its
    beginning offset to its end offset taken once at the start: the high watermark under
    ``read_uncommitted``, the last stable offset under ``read_committed``
    (``KafkaConsumer.endOffsets``). The tool ends when every partition's position reached its
    end offset; no idle timeout decides when it is done.

    Args:
        bootstrap: ``host:port,...``.
        topics: a topic name or several.
        isolation_level: ``read_uncommitted`` or ``read_committed`` (consumer
            ``isolation.level``; aborted records are skipped under ``read_committed``).
        extra_props: more consumer configs (security, ``max.partition.fetch.bytes``, ...).
        timeout_s: the JVM is killed after this many seconds.
        heap: ``-Xmx`` of the JVM.
        jvm_options: extra JVM options (a Kerberized cluster's ``-Djava.security.krb5.conf``).

    Returns:
        The records sorted by ``(topic, partition, offset)``.

    Raises:
        ValueError: bad isolation level or no topic.
        KafkaToolError: unknown topic, broker unreachable, tool failed or timed out.
    """
    if isolation_level not in ("read_uncommitted", "read_committed"):
        raise ValueError(
            f"isolation_level must be read_uncommitted or read_committed, got {isolation_level!r}"
        )
    names = [topics] if isinstance(topics, str) else list(topics)
    if not names:
        raise ValueError("read_all needs at least one topic")
    classpath = kafka_classpath(KAFKA_VERSION)
    classpath = os.pathsep.join([str(_java_classes("ReadAll.java", classpath)), classpath])
    args = [bootstrap, isolation_level, ",".join(names)]
    args += [f"{key}={value}" for key, value in (extra_props or {}).items()]
    proc = run_tool(
        READ_ALL_CLASS,
        args,
        classpath=classpath,
        timeout_s=timeout_s,
        heap=heap,
        jvm_options=jvm_options,
    )
    records = []
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        obj = json.loads(line)
        records.append(
            ConsumedRecord(
                topic=obj["topic"],
                partition=obj["partition"],
                offset=obj["offset"],
                timestamp_ms=obj["timestamp"],
                timestamp_type=obj["timestampType"],
                key=_b64(obj["key"]),
                value=_b64(obj["value"]),
                headers=tuple(
                    (base64.b64decode(k).decode("utf-8"), _b64(v)) for k, v in obj["headers"]
                ),
            )
        )
    records.sort(key=lambda r: (r.topic, r.partition, r.offset))
    return records


# --------------------------------------------------------------------------------- log segments


@dataclass(frozen=True)
class DumpedBatch:
    """One record batch line of ``kafka-dump-log`` (DumpLogSegments without
    ``--deep-iteration``).

    Attributes:
        segment: the ``.log`` file the batch is in.
        base_offset / last_offset: offsets of the batch's first and last record.
        count: records in the batch.
        producer_id / producer_epoch: the idempotent or transactional producer (``-1`` for
            none).
        base_sequence / last_sequence: sequence numbers of the first and last record (``-1``
            for none).
        is_transactional: the batch belongs to a transaction.
        is_control: a control batch (transaction marker).
        compression: ``compresscodec`` as printed: ``none``, ``gzip``, ``snappy``, ``lz4``,
            ``zstd``.
        crc: the stored CRC-32C.
        is_valid: the broker's tool recomputed the CRC and found it equal.
        size: the batch's size on disk, bytes.
        magic: record batch format (2 for v2).
    """

    segment: Path
    base_offset: int
    last_offset: int
    count: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    is_transactional: bool
    is_control: bool
    compression: str
    crc: int
    is_valid: bool
    size: int
    magic: int


_DUMP_FIELD = re.compile(r"(\w+): (\S+)")


def dump_log(segment_files: Iterable[str | os.PathLike[str]]) -> list[DumpedBatch]:
    """The record batches of some log segments, as Kafka's ``kafka-dump-log`` prints them.

    Runs ``org.apache.kafka.tools.DumpLogSegments --files <f1>,<f2>,...`` (no
    ``--deep-iteration``, no ``--print-data-log``): one line per batch with its header fields,
    ``isvalid`` from the tool's own CRC check. Reading a segment the broker is appending to is
    fine (the tool reads the file as it is).

    Returns:
        The batches in file order, then offset order.

    Raises:
        ValueError: no files.
        KafkaToolError: the tool failed, or a batch line lacks one of the fields parsed.
    """
    files = [str(Path(f)) for f in segment_files]
    if not files:
        raise ValueError("dump_log needs at least one segment file")
    proc = run_tool(DUMP_LOG_SEGMENTS, ["--files", ",".join(files)])
    batches: list[DumpedBatch] = []
    segment: Path | None = None
    for line in proc.stdout.splitlines():
        if line.startswith("Dumping "):
            segment = Path(line[len("Dumping ") :].strip())
            continue
        if not line.startswith("baseOffset:"):
            continue
        f = dict(_DUMP_FIELD.findall(line))
        try:
            batches.append(
                DumpedBatch(
                    segment=segment or Path(files[0]),
                    base_offset=int(f["baseOffset"]),
                    last_offset=int(f["lastOffset"]),
                    count=int(f["count"]),
                    producer_id=int(f["producerId"]),
                    producer_epoch=int(f["producerEpoch"]),
                    base_sequence=int(f["baseSequence"]),
                    last_sequence=int(f["lastSequence"]),
                    is_transactional=f["isTransactional"] == "true",
                    is_control=f["isControl"] == "true",
                    compression=f["compresscodec"].lower(),
                    crc=int(f["crc"]),
                    is_valid=f["isvalid"] == "true",
                    size=int(f["size"]),
                    magic=int(f["magic"]),
                )
            )
        except (KeyError, ValueError) as exc:
            raise KafkaToolError(
                f"unexpected kafka-dump-log line ({exc!r}): {line}",
                proc.returncode,
                proc.stdout,
                proc.stderr,
            ) from exc
    return batches


def segment_files(log_dir: str | os.PathLike[str], topic: str, partition: int) -> list[Path]:
    """The ``.log`` segment files of ``topic``-``partition`` in a broker's ``log.dirs``
    directory (e.g. :attr:`spark_kafka_py.testing.broker.KafkaNode.data_dir`), oldest first.

    Kafka names a partition's directory ``<topic>-<partition>`` and each segment
    ``<base offset, 20 digits>.log``, so name order is offset order.

    Raises:
        FileNotFoundError: the broker holds no replica of that partition in ``log_dir``.
    """
    directory = Path(log_dir) / f"{topic}-{partition}"
    if not directory.is_dir():
        raise FileNotFoundError(f"no replica of {topic}-{partition} in {log_dir}")
    return sorted(directory.glob("*.log"))
