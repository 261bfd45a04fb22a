"""A Spark standalone cluster on this machine, from PySpark's own scripts (tests, benchmarks).

:class:`StandaloneCluster` starts one master and ``workers`` workers with PySpark's
``bin/spark-class org.apache.spark.deploy.master.Master`` / ``...deploy.worker.Worker`` (Spark's
"Spark Standalone Mode" guide: the daemons' ``--host``, ``--port``, ``--webui-port``,
``--cores``, ``--memory``, ``--work-dir`` options), all on ``127.0.0.1`` with free ports, each
worker with its own work directory under a temporary directory and small resources (1 core,
1 GiB each by default). Executors are then separate JVMs (``CoarseGrainedExecutorBackend``,
children of their worker) with Python workers of their own: what ``local[n]`` never shows.

``SPARK_HOME`` is the ``pyspark`` package directory (a pip-installed PySpark carries ``jars/``
and ``bin/``); Java is :func:`spark_kafka_py.testing.jvm.java_executable` (``JAVA_HOME`` is set
from it for ``spark-class``); ``PYSPARK_PYTHON`` is the running interpreter unless given. The
start waits until the master's JSON status (``http://127.0.0.1:<web UI port>/json``) lists every
worker ``ALIVE``. :meth:`StandaloneCluster.stop` ends each daemon's process group (the daemon,
its executors and their Python workers): SIGTERM, then SIGKILL after a grace period. The
daemons' logs (stdout and stderr, one file each) are kept and quoted in errors.

Only one SparkSession can be active in a Python process: a test drives the cluster from a
driver process of its own (``python script.py`` or ``spark-submit``), building its session
with :func:`cluster_spark_session` (or :func:`cluster_session_conf`'s settings, where the
package is shipped in a zip: the harness's configuration files do not load from one).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from spark_kafka_py.testing.jars import spark_kafka_connector_jars
from spark_kafka_py.testing.jvm import java_executable
from spark_kafka_py.testing.spark import local_spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "EXECUTOR_MAIN",
    "SparkClusterError",
    "StandaloneCluster",
    "cluster_session_conf",
    "cluster_spark_session",
    "spark_home",
]

#: Main class of a standalone executor JVM (Spark's ``CoarseGrainedExecutorBackend``).
EXECUTOR_MAIN = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
_MASTER_MAIN = "org.apache.spark.deploy.master.Master"
_WORKER_MAIN = "org.apache.spark.deploy.worker.Worker"

#: Characters of each daemon log quoted in a :class:`SparkClusterError`.
_LOG_TAIL_CHARS = 3000


class SparkClusterError(RuntimeError):
    """The standalone cluster did not start (a daemon exited, or the workers did not register
    in time); the message quotes the tails of the daemons' logs."""


def spark_home() -> Path:
    """``SPARK_HOME`` of the installed PySpark: the ``pyspark`` package directory."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _java_home() -> str:
    """``JAVA_HOME`` if set, else the JDK/JRE directory of :func:`java_executable`."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return home
    return str(Path(java_executable()).resolve().parent.parent)


@dataclass
class _Daemon:
    name: str
    process: subprocess.Popen[bytes]
    log: Path


@dataclass
class StandaloneCluster:
    """A standalone Spark master and workers on loopback (see the module docstring).

    Use as a context manager, or :meth:`start` / :meth:`stop`.

    Attributes:
        workers: number of workers.
        cores_per_worker: ``--cores`` of each worker (executor slots).
        memory_per_worker: ``--memory`` of each worker (e.g. ``"1g"``): what its executors may
            take in all.
        python: ``PYSPARK_PYTHON`` of the daemons (default: this interpreter).
        daemon_memory: heap of the master and worker JVMs (``SPARK_DAEMON_MEMORY``).
        start_timeout_s: seconds to wait for every worker to register (seconds).
        root: directory of the work directories and logs (default: a new temporary one);
            kept after :meth:`stop`, for the logs.
    """

    workers: int = 2
    cores_per_worker: int = 1
    memory_per_worker: str = "1g"
    python: str = sys.executable
    daemon_memory: str = "256m"
    start_timeout_s: float = 180.0
    root: Path | None = None
    master_port: int = 0
    webui_port: int = 0
    _daemons: list[_Daemon] = field(default_factory=list, repr=False)

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> StandaloneCluster:
        """Start the master and the workers; return when all workers are ``ALIVE``.

        Raises:
            SparkClusterError: a daemon exited or the workers did not register in
                :attr:`start_timeout_s` (the daemons started are stopped first).
            spark_kafka_py.testing.jvm.JavaError: no Java found.
        """
        if self._daemons:
            raise SparkClusterError("the cluster is already started")
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="spark-standalone-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.master_port = _free_port()
        self.webui_port = _free_port()
        try:
            self._spawn(
                "master",
                _MASTER_MAIN,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.master_port),
                "--webui-port",
                str(self.webui_port),
            )
            for i in range(self.workers):
                work_dir = self.worker_dir(i)
                work_dir.mkdir(parents=True, exist_ok=True)
                self._spawn(
                    f"worker-{i}",
                    _WORKER_MAIN,
                    "--host",
                    "127.0.0.1",
                    "--webui-port",
                    str(_free_port()),
                    "--cores",
                    str(self.cores_per_worker),
                    "--memory",
                    self.memory_per_worker,
                    "--work-dir",
                    str(work_dir),
                    self.master_url,
                )
            self._wait_alive()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop the workers (with their executors), then the master: each daemon's process
        group gets SIGTERM, then SIGKILL if it has not exited within ``grace_s`` seconds."""
        for daemon in reversed(self._daemons):
            _signal_group(daemon.process, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for daemon in reversed(self._daemons):
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.process.wait(max(0.1, deadline - time.monotonic()))
            # the group too: executors and Python workers outlive a daemon killed first
            _signal_group(daemon.process, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.process.wait(10)
        self._daemons.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---- addresses and state ------------------------------------------------------------

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:<port>``: the ``spark.master`` of a driver."""
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def webui_url(self) -> str:
        """``http://127.0.0.1:<port>`` of the master's web UI (and its ``/json`` status)."""
        return f"http://127.0.0.1:{self.webui_port}"

    def worker_dir(self, index: int) -> Path:
        """Work directory of worker ``index`` (``<app id>/<executor id>/stderr`` inside)."""
        assert self.root is not None
        return self.root / f"worker-{index}"

    def status(self) -> dict[str, Any]:
        """The master's JSON status (``/json``: ``workers``, ``activeapps``, ...).

        Raises:
            OSError: the master's web UI does not answer.
        """
        with urllib.request.urlopen(f"{self.webui_url}/json", timeout=5) as response:
            return dict(json.load(response))

    def daemon_pids(self) -> dict[str, int]:
        """Process ids of the daemons: ``{"master": pid, "worker-0": pid, ...}``."""
        return {d.name: d.process.pid for d in self._daemons}

    def executor_pids(self, app_id: str | None = None) -> list[int]:
        """Process ids of the executor JVMs now running (children of the workers running
        ``CoarseGrainedExecutorBackend``), in worker order; only those of application
        ``app_id`` (``SparkContext.applicationId``, e.g. ``app-20261124021623-0008``) when
        given."""
        import psutil

        pids: list[int] = []
        for daemon in self._daemons:
            if not daemon.name.startswith("worker-"):
                continue
            try:
                children = psutil.Process(daemon.process.pid).children(recursive=False)
            except psutil.NoSuchProcess:
                continue
            for child in children:
                try:
                    command = child.cmdline()
                except psutil.NoSuchProcess:
                    continue
                if EXECUTOR_MAIN in command and (app_id is None or app_id in command):
                    pids.append(child.pid)
        return pids

    def executor_logs(self) -> list[Path]:
        """Every executor's ``stderr`` file under the workers' work directories."""
        assert self.root is not None
        return sorted(self.root.glob("worker-*/app-*/*/stderr"))

    def logs(self, chars: int = _LOG_TAIL_CHARS) -> str:
        """The tail of each daemon's log, for failure messages."""
        parts = []
        for daemon in self._daemons:
            text = daemon.log.read_text("utf-8", errors="replace") if daemon.log.exists() else ""
            parts.append(f"--- {daemon.name} ({daemon.log}) ---\n{text[-chars:]}")
        return "\n".join(parts)

    # ---- internals ----------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        assert self.root is not None
        home = spark_home()
        return {
            **os.environ,
            "SPARK_HOME": str(home),
            "JAVA_HOME": _java_home(),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "SPARK_LOG_DIR": str(self.root / "logs"),
            "SPARK_WORKER_DIR": str(self.root),
            "PYSPARK_PYTHON": self.python,
            "SPARK_NO_DAEMONIZE": "1",
        }

    def _spawn(self, name: str, main: str, *args: str) -> None:
        assert self.root is not None
        log = self.root / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), main, *args],
                env=self._env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a process group of its own: stop() ends it whole
            )
        self._daemons.append(_Daemon(name, process, log))

    def _wait_alive(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        alive = 0
        while True:
            for daemon in self._daemons:
                if daemon.process.poll() is not None:
                    raise SparkClusterError(
                        f"{daemon.name} exited with {daemon.process.returncode} while the "
                        f"cluster started\n{self.logs()}"
                    )
            try:
                workers = self.status().get("workers", [])
            except (OSError, ValueError):
                workers = []
            alive = sum(1 for w in workers if w.get("state") == "ALIVE")
            if alive >= self.workers:
                return
            if time.monotonic() > deadline:
                raise SparkClusterError(
                    f"{alive} of {self.workers} workers registered with {self.master_url} "
                    f"within {self.start_timeout_s:.0f} s\n{self.logs()}"
                )
            time.sleep(0.5)


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to the process group led by ``process`` (started with a session of its
    own); nothing when it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def cluster_session_conf(
    master_url: str,
    *,
    executor_memory: str = "512m",
    cores_max: int | None = None,
    with_kafka_connector: bool = False,
) -> dict[str, str]:
    """Spark settings of a driver on a :class:`StandaloneCluster`, for
    :func:`spark_kafka_py.testing.spark.local_spark_session` ``(master=..., extra_conf=...)``.

    ``spark.executor.cores=1`` (one executor per 1-core worker), ``spark.executor.memory``
    ``executor_memory`` (must fit in a worker's ``--memory``), ``spark.driver.host`` loopback,
    jobs held until every executor asked for has registered (at most 120 s:
    ``spark.scheduler.minRegisteredResourcesRatio=1``; tasks then spread over all workers),
    ``spark.cores.max`` when given, and Spark's Kafka connector jars on ``spark.jars`` only
    when ``with_kafka_connector`` (``format("kafka")``; they are fetched from Maven Central
    on first use).

    Args:
        master_url: :attr:`StandaloneCluster.master_url`.
        executor_memory: executor heap, e.g. ``"512m"``.
        cores_max: ``spark.cores.max`` (cores the application takes in all), or none.
        with_kafka_connector: put Spark's Kafka connector on ``spark.jars``.
    """
    conf = {
        "spark.master": master_url,
        "spark.executor.cores": "1",
        "spark.executor.memory": executor_memory,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
    }
    if cores_max is not None:
        conf["spark.cores.max"] = str(cores_max)
    if with_kafka_connector:
        conf["spark.jars"] = ",".join(str(p) for p in spark_kafka_connector_jars())
    return conf


def cluster_spark_session(
    master_url: str,
    app_name: str = "spark-kafka-py",
    *,
    executor_memory: str = "512m",
    cores_max: int | None = None,
    with_kafka_connector: bool = False,
    extra_conf: dict[str, str] | None = None,
) -> SparkSession:
    """A SparkSession of this process on a standalone cluster: the settings of
    :func:`spark_kafka_py.testing.spark.local_spark_session` (log4j, time zone, UI off,
    ``PYSPARK_PYTHON``) with ``master_url`` and :func:`cluster_session_conf`'s, then
    ``extra_conf``. One active session per Python process: call it in a driver process.

    Raises:
        spark_kafka_py.testing.jars.JarResolutionError: ``with_kafka_connector`` and the
            connector's jars could not be fetched.
    """
    conf = cluster_session_conf(
        master_url,
        executor_memory=executor_memory,
        cores_max=cores_max,
        with_kafka_connector=with_kafka_connector,
    )
    conf.update(extra_conf or {})
    return local_spark_session(
        app_name, master=master_url, with_kafka_connector=False, extra_conf=conf
    )
