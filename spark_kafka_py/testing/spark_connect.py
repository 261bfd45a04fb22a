"""A local Spark Connect server started with PySpark's own scripts, and its client sessions.

:class:`ConnectServer` runs ``$SPARK_HOME/sbin/start-connect-server.sh`` (``SPARK_HOME`` = the
installed ``pyspark`` package directory, which ships the ``spark-connect`` jar) with
``--master local[2]`` on a free loopback port (``spark.connect.grpc.binding.port``), and stops
it with ``sbin/stop-connect-server.sh`` and then by pid. Everything the server writes (its log
``SPARK_LOG_DIR``, its pid file ``SPARK_PID_DIR``, its working directory with
``spark.sql.warehouse.dir``) lives in one temporary directory, never in the package directory.

The server's Python workers run with this interpreter (``PYSPARK_PYTHON``), so
``format("pykafka")`` is found there through the ``pyspark_pykafka`` auto-registration module of
this environment: the connector is installed on the server side only; the Connect client needs
``pyspark[connect]`` and nothing of spark-kafka-py.

One Python process may hold a classic session and a Connect session at once, with one catch:
``SparkSession.builder.remote(...).create()`` sets ``SPARK_CONNECT_MODE_ENABLED`` in
``os.environ``, after which PySpark treats the whole process as a Connect client
(``pyspark.sql.utils.is_remote``: ``builder.getOrCreate()`` returns a remote session and
``pyspark.sql.functions`` build Connect columns). :func:`connect_mode` sets that variable only
for a block and restores it; :meth:`ConnectServer.session` creates its client inside it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NoReturn

from spark_kafka_py.conf import conf_path

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

__all__ = [
    "CONNECT_SERVER_CLASS",
    "DEFAULT_START_TIMEOUT_S",
    "DEFAULT_STOP_TIMEOUT_S",
    "ConnectServer",
    "ConnectServerError",
    "connect_mode",
    "spark_home",
]

#: Main class of the Spark Connect server (``sbin/start-connect-server.sh``); the name of its
#: pid and log files written by ``sbin/spark-daemon.sh``.
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

#: Start timeout, seconds: a cold JVM plus a first client session on a busy 2-core machine.
DEFAULT_START_TIMEOUT_S = 180.0
#: How long the server may take to exit after ``stop-connect-server.sh`` (SIGTERM) before
#: SIGKILL, seconds.
DEFAULT_STOP_TIMEOUT_S = 30.0
#: Timeout of one run of a start/stop script, seconds (``spark-daemon.sh`` sleeps about 2-7 s).
_SCRIPT_TIMEOUT_S = 60.0
#: Lines of the server log quoted in a :class:`ConnectServerError`.
LOG_TAIL_LINES = 60

#: The environment variable by which PySpark marks a process as a Spark Connect client.
_CONNECT_MODE_VAR = "SPARK_CONNECT_MODE_ENABLED"


class ConnectServerError(RuntimeError):
    """The Spark Connect server did not start (script failed, process died, no session in
    time). The message holds the reason and the tail of the server's log."""


def spark_home() -> Path:
    """``SPARK_HOME`` of the installed PySpark: the ``pyspark`` package directory (it holds
    ``bin/``, ``sbin/`` and ``jars/``)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@contextlib.contextmanager
def connect_mode() -> Iterator[None]:
    """Mark this process as a Spark Connect client for the block (``SPARK_CONNECT_MODE_ENABLED``,
    as ``SparkSession.builder.remote(...).create()`` does), then restore the variable as it was,
    so that classic sessions of the same process keep working after it."""
    before = os.environ.get(_CONNECT_MODE_VAR)
    os.environ[_CONNECT_MODE_VAR] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_CONNECT_MODE_VAR, None)
        else:
            os.environ[_CONNECT_MODE_VAR] = before


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours is not running either; spark-daemon.sh's children are not ours.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


_LIVE: weakref.WeakSet[ConnectServer] = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()


class ConnectServer:
    """A Spark Connect server on ``127.0.0.1:<port>`` started by PySpark's own scripts.

    Use as a context manager or call :meth:`start` / :meth:`stop`. The client URL is
    :attr:`url` (``sc://127.0.0.1:<port>``); :meth:`session` returns a client session.

    Args:
        master: ``--master`` of the server's Spark driver, e.g. ``local[2]``.
        conf: more Spark settings passed as ``--conf key=value`` (override ours).
        work_dir: directory for logs, pid file, warehouse and the server's working directory;
            a new temporary directory (removed by :meth:`stop`) when ``None``.
        start_timeout_s: seconds :meth:`start` waits for a client session to be served.

    Our settings: ``spark.connect.grpc.binding.address=127.0.0.1``, the port,
    ``spark.ui.enabled=false``, ``spark.sql.shuffle.partitions=2``, UTC session time zone,
    ``spark.sql.warehouse.dir=<work_dir>/warehouse``, and log4j2 at WARN
    (``conf/spark-log4j2.properties``) to the server log ``<work_dir>/logs/*.out``.
    """

    def __init__(
        self,
        *,
        master: str = "local[2]",
        conf: Mapping[str, str] | None = None,
        work_dir: str | os.PathLike[str] | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
    ) -> None:
        self.master = master
        self.conf = dict(conf or {})
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="spark-connect-"))
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self.pid: int | None = None
        self._sessions: list[RemoteSparkSession] = []
        #: The client session that :meth:`start` checked the server with (shared by tests).
        self.client: RemoteSparkSession | None = None

    @property
    def url(self) -> str:
        """The Spark Connect URL of the server, ``sc://127.0.0.1:<port>``."""
        return f"sc://127.0.0.1:{self.port}"

    @property
    def log_dir(self) -> Path:
        """``SPARK_LOG_DIR`` of the server (its ``.out`` file is the driver's whole output)."""
        return self.work_dir / "logs"

    @property
    def warehouse_dir(self) -> Path:
        """``spark.sql.warehouse.dir`` of the server: where managed tables' files are."""
        return self.work_dir / "warehouse"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop(_CONNECT_MODE_VAR, None)
        env.pop("SPARK_REMOTE", None)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOG_DIR=str(self.log_dir),
            SPARK_PID_DIR=str(self.work_dir / "pid"),
            SPARK_LOCAL_IP="127.0.0.1",
            PYSPARK_PYTHON=sys.executable,
            PYSPARK_DRIVER_PYTHON=sys.executable,
        )
        return env

    def _script(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(spark_home() / "sbin" / name), *args],
            env=self._env(),
            cwd=self.work_dir,
            capture_output=True,
            text=True,
            timeout=_SCRIPT_TIMEOUT_S,
            check=False,
        )

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the server log (``(no log)`` before it exists)."""
        logs = sorted(self.log_dir.glob("*.out"))
        if not logs:
            return "(no log)"
        text = logs[-1].read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def is_running(self) -> bool:
        """Whether the server's JVM is alive."""
        return self.pid is not None and _pid_alive(self.pid)

    def start(self) -> ConnectServer:
        """Start the server and wait until a client session runs a query on it.

        Raises:
            ConnectServerError: the script failed, the JVM died, or no client session was
                served within ``start_timeout_s`` (the server is stopped first).
        """
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        log4j = f"-Dlog4j2.configurationFile=file:{conf_path('spark-log4j2.properties')}"
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.warehouse.dir": str(self.warehouse_dir),
            "spark.driver.extraJavaOptions": log4j,
            "spark.executor.extraJavaOptions": log4j,
            **self.conf,
        }
        args = ["--master", self.master]
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        _LIVE.add(self)
        done = self._script("start-connect-server.sh", *args)
        pid_files = list((self.work_dir / "pid").glob(f"*{CONNECT_SERVER_CLASS}*.pid"))
        if pid_files:
            self.pid = int(pid_files[0].read_text().strip())
        if done.returncode != 0 or not self.is_running():
            self._fail(f"start-connect-server.sh exited {done.returncode}: {done.stdout}")
        self._wait_serving()
        return self

    def _fail(self, reason: str) -> NoReturn:
        tail = self.log_tail()
        self.stop(remove_dir=False)
        raise ConnectServerError(
            f"Spark Connect server on port {self.port}: {reason}\n"
            f"--- {self.log_dir} (tail) ---\n{tail}"
        )

    def _wait_serving(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while not _port_open(self.port):
            if not self.is_running():
                self._fail("the server JVM exited before listening")
            if time.monotonic() > deadline:
                self._fail(f"not listening after {self.start_timeout_s:.0f} s")
            time.sleep(0.5)
        from pyspark.errors import PySparkException

        try:
            session = self.session()
            with connect_mode():
                got = session.range(1).collect()
        except PySparkException as exc:
            self._fail(f"the first client session failed: {exc!r}")
        if len(got) != 1:
            self._fail(f"spark.range(1) returned {got!r}")
        self.client = session

    def session(self) -> RemoteSparkSession:
        """A new Spark Connect client session on this server (``builder.remote(url).create()``,
        made inside :func:`connect_mode` so that the process is not left in Connect mode).

        Run code that uses ``pyspark.sql.functions`` or ``builder.getOrCreate()`` for it inside
        :func:`connect_mode` too. Sessions are closed by :meth:`stop`.
        """
        from pyspark.sql import SparkSession

        with connect_mode():
            remote = SparkSession.builder.remote(self.url).create()
        # builder.remote() is typed as the classic SparkSession; under connect_mode() it is
        # Spark Connect's
        self._sessions.append(remote)  # type: ignore[arg-type]
        return remote  # type: ignore[return-value]

    def stop(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S, *, remove_dir: bool = True) -> None:
        """Close client sessions, run ``stop-connect-server.sh`` (SIGTERM), SIGKILL the JVM if
        still alive after ``timeout_s`` seconds; remove the temporary directory we made
        (unless ``remove_dir`` is false). Safe to call twice."""
        from pyspark.errors import PySparkException

        for remote in self._sessions:
            # Releasing a session of a server that already died fails; the server goes anyway.
            with connect_mode(), contextlib.suppress(PySparkException):
                remote.stop()
        self._sessions.clear()
        self.client = None
        if self.is_running():
            self._script("stop-connect-server.sh")
            deadline = time.monotonic() + timeout_s
            while self.is_running() and time.monotonic() < deadline:
                time.sleep(0.2)
            if self.is_running():
                assert self.pid is not None
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
        self.pid = None
        _LIVE.discard(self)
        if remove_dir and self._own_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> ConnectServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"ConnectServer(url={self.url!r}, pid={self.pid}, work_dir={str(self.work_dir)!r})"
