"""A real local Apache Kafka cluster (KRaft) run from Maven Central's jars: no Docker, no mocks.

Each node is a combined broker + controller (``process.roles=broker,controller``), a
``java -cp <kafka jars> kafka.Kafka server.properties`` subprocess listening on 127.0.0.1 on
free ports picked at start. One node is a cluster of its own; three nodes form a controller
quorum of three (static ``controller.quorum.voters``), the set-up for failover tests.

Example::

    with LocalKafkaCluster(1) as cluster:
        create_topic(cluster.bootstrap_servers, "t", partitions=3)
        ...

Files: a temporary base directory (or ``base_dir``) with ``node-<id>/`` per node holding
``server.properties``, ``data/`` (``log.dirs``), ``server.log`` (the broker's log) and
``stdout.log`` (the JVM's own output). Every started cluster is stopped at interpreter exit.

Versions: the broker's release is ``kafka_version``, by default
:func:`~spark_kafka_py.testing.jars.selected_kafka_version` (``$SPARK_KAFKA_PY_KAFKA_VERSION``,
else :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION`). Tested: 3.6.2, 3.9.1, 4.0.2, 4.3.0,
4.4.0. A 3.x node logs through log4j 1.x (``conf/kafka-log4j.properties``), a 4.x node through
log4j2 (``conf/kafka-log4j2.properties``). The tools the harness runs itself (the readiness
check) are those of :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION`.

Feature levels: ``features`` (by default, for a cluster of the selected release,
:func:`~spark_kafka_py.testing.jars.selected_kafka_features`: ``$SPARK_KAFKA_PY_KAFKA_FEATURES``)
are written at format time, ``kafka-storage format --feature name=level`` (KIP-1022), e.g.
``{"transaction.version": 2}`` for KIP-890's transactions v2; ``kafka-features.sh describe``
(:func:`~spark_kafka_py.testing.tools.describe_features`) shows them finalized.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from types import TracebackType

from spark_kafka_py.conf import conf_path
from spark_kafka_py.testing.jars import (
    KAFKA_VERSION,
    kafka_broker_classpath,
    kafka_classpath,
    log4j1_broker,
    selected_kafka_features,
    selected_kafka_version,
)
from spark_kafka_py.testing.jvm import (
    SERVER_LOG4J,
    TOOLS_LOG4J,
    JavaError,
    java_command,
    java_executable,
    run_java,
)
from spark_kafka_py.testing.tools import run_tool, tool_server_running

__all__ = [
    "STORAGE_FEATURES_SINCE",
    "BrokerStartError",
    "KafkaNode",
    "LocalKafkaCluster",
]

#: Main class of a Kafka server (broker and/or controller) in ``kafka_2.13``.
KAFKA_MAIN = "kafka.Kafka"
#: Main class of ``kafka-storage.sh`` (formats ``log.dirs`` with a cluster id) in ``kafka_2.13``.
STORAGE_TOOL_MAIN = "kafka.tools.StorageTool"
#: The first release whose ``StorageTool format`` takes ``--feature name=level`` (KIP-1022:
#: any finalized feature's level at format time; 3.6.2 has no such option, 3.9.1 and every 4.x
#: have it).
STORAGE_FEATURES_SINCE = "3.9.0"
#: Main class of ``kafka-broker-api-versions.sh`` in ``kafka-tools``: one block per live broker.
BROKER_API_VERSIONS_MAIN = "org.apache.kafka.tools.BrokerApiVersionsCommand"

#: Default start timeout, seconds (cold JVMs on a 2-core machine need 10-30 s).
DEFAULT_START_TIMEOUT_S = 120.0
#: Graceful stop: how long SIGTERM may take before SIGKILL, seconds (see
#: :meth:`LocalKafkaCluster.stop` for when a stop is graceful).
DEFAULT_STOP_TIMEOUT_S = 30.0
#: Lines of the broker log quoted in a :class:`BrokerStartError`.
LOG_TAIL_LINES = 60
#: log4j 1.x configuration (in :mod:`spark_kafka_py.conf`) of a 3.x node (reload4j backend),
#: the twin of :data:`~spark_kafka_py.testing.jvm.SERVER_LOG4J`.
SERVER_LOG4J1 = "kafka-log4j.properties"


class BrokerStartError(RuntimeError):
    """A Kafka node did not start (formatting failed, process died, or not serving in time).

    The message holds the node, the reason and the tail of its ``server.log``/``stdout.log``.
    """


def _free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together, then released)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"({path} not readable)"
    return "\n".join(text.splitlines()[-lines:])


def random_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe Base64 without padding (22 chars)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


@dataclass
class KafkaNode:
    """One combined broker+controller node of a :class:`LocalKafkaCluster`.

    Attributes:
        node_id: ``node.id`` (1-based).
        broker_port: PLAINTEXT listener port on 127.0.0.1 (clients).
        controller_port: CONTROLLER listener port on 127.0.0.1 (KRaft quorum).
        node_dir: ``<base_dir>/node-<id>``: config, logs, data, and the JVM's
            ``java.io.tmpdir`` (``tmp``: the native libraries that lz4-java, zstd-jni and
            snappy-java unpack there are not deleted when the node is killed, so they go with
            the node's directory rather than pile up in ``/tmp``).
        process: the running JVM, ``None`` when stopped or killed.
    """

    node_id: int
    broker_port: int
    controller_port: int
    node_dir: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def config_path(self) -> Path:
        """``server.properties`` of this node."""
        return self.node_dir / "server.properties"

    @property
    def data_dir(self) -> Path:
        """``log.dirs`` of this node (the partitions' segments and KRaft metadata)."""
        return self.node_dir / "data"

    @property
    def server_log(self) -> Path:
        """The broker's log4j2 log file."""
        return self.node_dir / "server.log"

    @property
    def stdout_log(self) -> Path:
        """The JVM's stdout/stderr (JVM errors, crashes before log4j2 is up)."""
        return self.node_dir / "stdout.log"

    @property
    def tmp_dir(self) -> Path:
        """The JVM's ``java.io.tmpdir`` (see the class docstring)."""
        return self.node_dir / "tmp"

    @property
    def address(self) -> str:
        """``127.0.0.1:<broker_port>``."""
        return f"127.0.0.1:{self.broker_port}"

    @property
    def pid(self) -> int | None:
        """The JVM's process id, ``None`` when not running."""
        return self.process.pid if self.process is not None else None

    def is_running(self) -> bool:
        """Whether the JVM is alive."""
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of ``server.log`` and ``stdout.log``, for error messages."""
        return (
            f"--- {self.server_log} (tail) ---\n{_tail(self.server_log, lines)}\n"
            f"--- {self.stdout_log} (tail) ---\n{_tail(self.stdout_log, lines)}"
        )


_LIVE: weakref.WeakSet[LocalKafkaCluster] = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    for cluster in list(_LIVE):
        with contextlib.suppress(Exception):
            cluster.stop()


class LocalKafkaCluster:
    """A local KRaft Kafka cluster of ``num_brokers`` combined broker+controller nodes.

    Args:
        num_brokers: 1 (a single node) or more (3 gives a controller quorum of 3).
        kafka_version: Apache Kafka release of the broker's jars, ``X.Y.Z`` (3.3 or later);
            default :func:`~spark_kafka_py.testing.jars.selected_kafka_version`.
        base_dir: where node directories go; default a fresh temporary directory, removed by
            :meth:`stop` (a given ``base_dir`` is kept).
        heap: JVM heap of each node, ``-Xmx`` syntax (default ``512m``).
        server_props: extra ``server.properties`` settings for every node (override ours),
            e.g. ``{"log.retention.ms": "1000"}``; values may use the template's placeholders
            (``${broker_port}``, ``${controller_port}``, ``${node_id}``...).
        start_timeout_s: how long :meth:`start` / :meth:`restart` wait for serving nodes, s.
        features: feature levels (KIP-584's finalized features; levels are integers, no unit)
            the storage is formatted with, passed as ``kafka-storage format --feature
            name=level`` (KIP-1022, Kafka :data:`STORAGE_FEATURES_SINCE`+), e.g.
            ``{"transaction.version": 2}`` (KIP-890 part 2, transactions v2: a producer
            speaking EndTxn v5+ and Produce v12+ gets the new protocol, its partitions added
            by its Produce and its epoch bumped at every commit or abort; one speaking older
            versions keeps v1's protocol). Features not
            named keep the release's defaults for its ``metadata.version``
            (``kafka-features.sh version-mapping``). Default (``None``): for a cluster whose
            ``kafka_version`` is left to the environment,
            :func:`~spark_kafka_py.testing.jars.selected_kafka_features`
            (``$SPARK_KAFKA_PY_KAFKA_FEATURES``), so one variable formats every cluster of a
            test run; a cluster of a release named here gets that release's defaults. ``{}``:
            the release's defaults.
        jvm_options: extra JVM options of every node (e.g. ``-Djava.security.krb5.conf=...``).

    Internal topics get replication factor ``min(3, num_brokers)``, ``min.insync.replicas``
    of ``min(2, num_brokers)``.

    Raises:
        ValueError: ``features`` given (or from the environment) for a release before
            :data:`STORAGE_FEATURES_SINCE`, or a level that is not an integer >= 0.

    Raises (from :meth:`start`):
        BrokerStartError: Java missing, storage formatting failed, a node died or did not
            serve within ``start_timeout_s`` (message has the node's log tail).
        spark_kafka_py.testing.jars.JarResolutionError: the jars could not be fetched.
    """

    def __init__(
        self,
        num_brokers: int = 1,
        *,
        kafka_version: str | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        heap: str = "512m",
        server_props: Mapping[str, str] | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        features: Mapping[str, int] | None = None,
        jvm_options: Sequence[str] = (),
    ) -> None:
        if num_brokers < 1:
            raise ValueError(f"num_brokers must be >= 1, got {num_brokers}")
        self.num_brokers = num_brokers
        if features is None:
            features = selected_kafka_features() if kafka_version is None else {}
        self.kafka_version = kafka_version or selected_kafka_version()
        self.features: dict[str, int] = _checked_features(self.kafka_version, features)
        self.heap = heap
        self.server_props = dict(server_props or {})
        self.jvm_options = tuple(jvm_options)
        self.start_timeout_s = start_timeout_s
        self._given_base_dir = Path(base_dir) if base_dir is not None else None
        self.base_dir: Path | None = None
        self.cluster_id = random_cluster_id()
        self.nodes: list[KafkaNode] = []
        self._classpath: str | None = None
        self._lock = threading.Lock()
        self._detached = False

    # ----------------------------------------------------------------------------- properties

    @property
    def bootstrap_servers(self) -> str:
        """``"127.0.0.1:port,..."`` of every node (running or not), for ``bootstrap.servers``.

        Raises:
            RuntimeError: the cluster was never started.
        """
        if not self.nodes:
            raise RuntimeError("LocalKafkaCluster not started")
        return ",".join(n.address for n in self.nodes)

    @property
    def classpath(self) -> str:
        """The broker's Kafka jars joined for ``java -cp`` (resolved on first use)."""
        if self._classpath is None:
            self._classpath = kafka_broker_classpath(self.kafka_version)
        return self._classpath

    @property
    def tools_classpath(self) -> str:
        """``java -cp`` of Kafka's Java tools for this cluster (``kafka-configs``,
        ``kafka-acls``, ``kafka-broker-api-versions``...): those of
        :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION` whatever the broker's release (the
        tools' clients talk to brokers of other releases; ``kafka-tools`` is not on Maven
        Central for every release)."""
        return kafka_classpath(KAFKA_VERSION)

    def node(self, node_id: int) -> KafkaNode:
        """The node with ``node.id == node_id``.

        Raises:
            KeyError: no such node.
        """
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(f"no node {node_id} (nodes: {[n.node_id for n in self.nodes]})")

    # ------------------------------------------------------------------------------ lifecycle

    def start(self) -> LocalKafkaCluster:
        """Write configs, format storage, start every node and wait until all serve.

        "Serving" means every node's broker port accepts connections and Kafka's
        ``BrokerApiVersionsCommand`` sees all ``num_brokers`` brokers. Returns ``self``.

        Raises:
            BrokerStartError: see the class docstring. Nodes started so far are stopped.
        """
        with self._lock:
            if self.nodes:
                raise RuntimeError("LocalKafkaCluster already started")
            try:
                java_executable()  # fail early and clearly
            except JavaError as exc:
                raise BrokerStartError(str(exc)) from exc
            classpath = self.classpath
            if self._given_base_dir is not None:
                self._given_base_dir.mkdir(parents=True, exist_ok=True)
                self.base_dir = self._given_base_dir
            else:
                self.base_dir = Path(tempfile.mkdtemp(prefix="spark-kafka-py-kafka-"))
            ports = _free_ports(2 * self.num_brokers)
            self.nodes = [
                KafkaNode(
                    node_id=i + 1,
                    broker_port=ports[2 * i],
                    controller_port=ports[2 * i + 1],
                    node_dir=self.base_dir / f"node-{i + 1}",
                )
                for i in range(self.num_brokers)
            ]
            _LIVE.add(self)
        try:
            for n in self.nodes:
                n.node_dir.mkdir(parents=True, exist_ok=True)
                n.config_path.write_text(self._server_properties(n), encoding="utf-8")
            self._format_storage(classpath)
            for n in self.nodes:
                self._launch(n)
            self._wait_serving(self.nodes)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(
        self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S, *, graceful: bool | None = None
    ) -> None:
        """Stop every node and remove a temporary base dir. Idempotent; never raises for nodes
        already gone.

        Args:
            timeout_s: graceful stop only: how long SIGTERM may take before SIGKILL, s.
            graceful: SIGTERM (a controlled shutdown) rather than SIGKILL. Default
                (``None``): graceful only when the nodes' data outlives the cluster (a given
                ``base_dir`` or :meth:`detach`) and every node of the controller quorum is
                running (:meth:`quorum_complete`). A temporary base directory is removed right
                after, so nothing would read what a controlled shutdown writes; and with a node
                of a multi-node quorum dead, the last survivors cannot finish a controlled
                shutdown at all (the broker waits for a controller the remaining voters can
                no longer elect), so SIGTERM would only wait ``timeout_s`` for the SIGKILL.
        """
        with self._lock:
            if graceful is None:
                data_kept = self._given_base_dir is not None or self._detached
                graceful = data_kept and self.quorum_complete()
            running = [n for n in self.nodes if n.process is not None]
            for n in running:
                _signal(n.process, signal.SIGTERM if graceful else signal.SIGKILL)
            deadline = time.monotonic() + (timeout_s if graceful else 0.0)
            for n in running:
                assert n.process is not None
                _wait_or_kill(n.process, max(0.0, deadline - time.monotonic()))
                n.process = None
            _LIVE.discard(self)
            if self.base_dir is not None and self._given_base_dir is None and not self._detached:
                shutil.rmtree(self.base_dir, ignore_errors=True)

    def quorum_complete(self) -> bool:
        """Whether every node (each one a KRaft controller voter) is running.

        A controlled shutdown (KIP-631) needs the active controller to fence the broker; a
        quorum of ``num_brokers`` voters elects one only while a majority runs, so stopping
        the survivors of a quorum that already lost a voter ends with one of them waiting on a
        controller that never comes.
        """
        return bool(self.nodes) and all(n.is_running() for n in self.nodes)

    def stop_node(self, node_id: int, timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> None:
        """Gracefully stop one node (SIGTERM; SIGKILL after ``timeout_s``). Its data is kept.

        When the other running nodes would not make a majority of the controller quorum
        (e.g. the last node of a 3-node cluster with 2 killed), the node cannot finish a
        controlled shutdown; it is killed at once (SIGKILL: a crash, which Kafka recovers
        from on restart) instead of after ``timeout_s``.
        """
        n = self.node(node_id)
        if n.process is not None:
            # Its own controller still votes while its broker shuts down.
            voters_up = 1 + sum(1 for x in self.nodes if x is not n and x.is_running())
            if voters_up < self.num_brokers // 2 + 1:
                _signal(n.process, signal.SIGKILL)
                n.process.wait()
            else:
                _signal(n.process, signal.SIGTERM)
                _wait_or_kill(n.process, timeout_s)
            n.process = None

    def kill(self, node_id: int) -> None:
        """SIGKILL one node (a crash: no controlled shutdown). Its data is kept."""
        n = self.node(node_id)
        if n.process is not None:
            _signal(n.process, signal.SIGKILL)
            n.process.wait()
            n.process = None

    def restart(self, node_id: int, *, wait: bool = True) -> None:
        """Start a stopped/killed node again on the same ports and data (stop it first if up).

        With ``wait``, returns once the node's port accepts connections and all running
        brokers are registered.

        Raises:
            BrokerStartError: the node died or did not serve within ``start_timeout_s``.
        """
        n = self.node(node_id)
        if n.process is not None:
            self.stop_node(node_id)
        self._launch(n)
        if wait:
            self._wait_serving([x for x in self.nodes if x.process is not None])

    def wait_serving(self) -> None:
        """Wait until every running node's broker port accepts connections and Kafka's
        ``BrokerApiVersionsCommand`` sees all of them (e.g. after :meth:`restart` with
        ``wait=False`` of several nodes).

        Raises:
            BrokerStartError: a node died or they did not serve within ``start_timeout_s``.
        """
        self._wait_serving([n for n in self.nodes if n.process is not None])

    def detach(self) -> None:
        """Leave the nodes running after this interpreter exits (used by ``broker start``).

        The cluster is no longer stopped at exit and its base directory is kept.
        """
        self._detached = True
        _LIVE.discard(self)

    def __enter__(self) -> LocalKafkaCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = self.bootstrap_servers if self.nodes else "not started"
        return f"LocalKafkaCluster(num_brokers={self.num_brokers}, {state})"

    # ------------------------------------------------------------------------------- internals

    def _server_properties(self, n: KafkaNode) -> str:
        voters = ",".join(f"{x.node_id}@127.0.0.1:{x.controller_port}" for x in self.nodes)
        template = Template(conf_path("kraft-server.properties.template").read_text("utf-8"))
        values = {
            "node_id": n.node_id,
            "broker_port": n.broker_port,
            "controller_port": n.controller_port,
            "quorum_voters": voters,
            "log_dir": n.data_dir,
            "replication": min(3, self.num_brokers),
            "min_isr": min(2, self.num_brokers),
        }
        text = template.substitute(values)
        if self.server_props:
            # Values may use the template's placeholders too, e.g. a listeners override
            # keeping ${broker_port} and ${controller_port}.
            text += "\n# Overrides (LocalKafkaCluster(server_props=...))\n"
            text += "".join(
                f"{k}={Template(str(v)).safe_substitute(values)}\n"
                for k, v in self.server_props.items()
            )
        return text

    def _format_storage(self, classpath: str) -> None:
        """Run ``StorageTool format`` for every node: one after the other on the process's tool
        server when one runs (the tests' clusters: a request each instead of a JVM start; a run
        the server cannot take, e.g. another release's class path, gets a JVM of its own),
        else in parallel, one JVM each (a first start, the console tools)."""
        errors = []

        def args(n: KafkaNode) -> list[str]:
            return [
                "format",
                f"--cluster-id={self.cluster_id}",  # "=": an id may start with "-"
                "--config",
                str(n.config_path),
                "--ignore-formatted",
                *_feature_args(self.features),
            ]

        if tool_server_running():
            for n in self.nodes:
                done = run_tool(
                    STORAGE_TOOL_MAIN,
                    args(n),
                    classpath=classpath,
                    timeout_s=self.start_timeout_s,
                    check=False,
                )
                if done.returncode != 0:
                    errors.append(
                        f"node {n.node_id}: {STORAGE_TOOL_MAIN} format exited {done.returncode}:"
                        f"\n{(done.stdout + done.stderr)[-4000:]}"
                    )
            if errors:
                raise BrokerStartError("formatting Kafka storage failed\n" + "\n".join(errors))
            return
        procs = []
        for n in self.nodes:
            cmd = java_command(
                STORAGE_TOOL_MAIN,
                args(n),
                classpath=classpath,
                heap="256m",
                fast_start=True,
                log4j_config=TOOLS_LOG4J,
                jvm_options=["-Xss1m"],
            )
            procs.append(
                (n, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
            )
        for n, p in procs:
            out, _ = p.communicate(timeout=self.start_timeout_s)
            if p.returncode != 0:
                errors.append(
                    f"node {n.node_id}: {STORAGE_TOOL_MAIN} format exited {p.returncode}:\n"
                    + out.decode("utf-8", "replace")[-4000:]
                )
        if errors:
            raise BrokerStartError("formatting Kafka storage failed\n" + "\n".join(errors))

    def _launch(self, n: KafkaNode) -> None:
        n.tmp_dir.mkdir(parents=True, exist_ok=True)
        jvm_options = [
            "-Xss1m",
            f"-Xms{min_heap(self.heap)}",
            f"-Dkafka.logs.dir={n.node_dir}",
            f"-Djava.io.tmpdir={n.tmp_dir}",
            *self.jvm_options,
        ]
        if log4j1_broker(self.kafka_version):
            jvm_options.append(f"-Dlog4j.configuration={conf_path(SERVER_LOG4J1).as_uri()}")
        cmd = java_command(
            KAFKA_MAIN,
            [str(n.config_path)],
            classpath=self.classpath,
            heap=self.heap,
            fast_start=False,
            log4j_config=None if log4j1_broker(self.kafka_version) else SERVER_LOG4J,
            jvm_options=jvm_options,
        )
        with n.stdout_log.open("ab") as out:
            # Own session: Ctrl-C in a test run or the CLI does not hit the broker directly;
            # we stop it ourselves (atexit / stop / the CLI's `broker stop`).
            n.process = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=n.node_dir,
                start_new_session=True,
            )

    def _wait_serving(self, nodes: list[KafkaNode]) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        for n in nodes:
            while not _port_open(n.broker_port):
                self._check_alive(n, deadline)
                time.sleep(0.2)
        bootstrap = ",".join(n.address for n in nodes)
        expected = {n.node_id for n in nodes}
        last = ""
        # on the process's tool server when one runs (the tests' restarts: a request instead
        # of a JVM start each time); else a JVM of its own (a first start, the console tools)
        served = tool_server_running()
        probe = run_tool if served else run_java
        while True:
            for n in nodes:
                self._check_alive(n, deadline)
            try:
                out = probe(
                    BROKER_API_VERSIONS_MAIN,
                    ["--bootstrap-server", bootstrap],
                    classpath=self.tools_classpath,
                    timeout_s=max(5.0, deadline - time.monotonic()),
                ).stdout
                seen = _broker_ids(out)
                if expected <= seen:
                    return
                last = f"brokers registered: {sorted(seen)}, expected {sorted(expected)}"
            except JavaError as exc:
                last = str(exc)
            if time.monotonic() > deadline:
                raise BrokerStartError(
                    f"Kafka nodes {sorted(expected)} not serving after {self.start_timeout_s} s "
                    f"({last})\n" + "\n".join(n.log_tail() for n in nodes)
                )
            time.sleep(0.25 if served else 1.0)

    def _check_alive(self, n: KafkaNode, deadline: float) -> None:
        if n.process is None or n.process.poll() is not None:
            code = n.process.returncode if n.process is not None else None
            raise BrokerStartError(
                f"Kafka node {n.node_id} exited during start (exit code {code})\n{n.log_tail()}"
            )
        if time.monotonic() > deadline:
            raise BrokerStartError(
                f"Kafka node {n.node_id} port {n.broker_port} not open after "
                f"{self.start_timeout_s} s\n{n.log_tail()}"
            )


def _checked_features(version: str, features: Mapping[str, int]) -> dict[str, int]:
    """``features`` as a dict, after checking that ``version``'s StorageTool can format with
    them (:data:`STORAGE_FEATURES_SINCE`) and that each level is an integer >= 0.

    Raises:
        ValueError: naming the release, the feature levels asked and the first release that
            takes them.
    """
    checked = dict(features)
    for name, level in checked.items():
        if isinstance(level, bool) or not isinstance(level, int) or level < 0:
            raise ValueError(f"feature {name!r}: the level must be an integer >= 0, got {level!r}")
    if checked and _release(version) < _release(STORAGE_FEATURES_SINCE):
        asked = ",".join(f"{name}={level}" for name, level in checked.items())
        raise ValueError(
            f"Kafka {version} cannot format storage with feature levels ({asked}): its "
            f"kafka-storage format has no --feature option, which came with Kafka "
            f"{STORAGE_FEATURES_SINCE} (KIP-1022); use a later release or no features"
        )
    return checked


def _feature_args(features: Mapping[str, int]) -> list[str]:
    """StorageTool's ``--feature name=level`` options, one per feature."""
    return [arg for name, level in features.items() for arg in ("--feature", f"{name}={level}")]


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def min_heap(heap: str) -> str:
    """Initial heap for a node: a quarter of ``heap`` (``-Xmx`` syntax), at least 64m."""
    units = {"k": 1 / 1024, "m": 1, "g": 1024}
    suffix = heap[-1].lower()
    mb = float(heap[:-1]) * units[suffix] if suffix in units else float(heap) / 2**20
    return f"{max(64, int(mb / 4))}m"


def _broker_ids(api_versions_output: str) -> set[int]:
    """Broker ids in ``BrokerApiVersionsCommand`` output: lines ``host:port (id: N rack: ...``."""
    ids = set()
    for line in api_versions_output.splitlines():
        marker = "(id: "
        at = line.find(marker)
        if at >= 0:
            digits = line[at + len(marker) :].split(" ", 1)[0]
            if digits.lstrip("-").isdigit():
                ids.add(int(digits))
    return ids


def _signal(process: subprocess.Popen[bytes] | None, sig: int) -> None:
    if process is not None and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)


def _wait_or_kill(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _signal(process, signal.SIGKILL)
        process.wait()


def iter_pids(cluster: LocalKafkaCluster) -> Iterator[int]:
    """Process ids of the running nodes of ``cluster``."""
    for n in cluster.nodes:
        if n.pid is not None and n.is_running():
            yield n.pid
