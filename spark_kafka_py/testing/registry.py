"""A real schema registry for tests: Apicurio Registry, from Maven Central, on loopback.

Apicurio Registry serves the Confluent Schema Registry REST API at ``/apis/ccompat/v7``
(Apicurio's "ccompat" API; Apicurio docs, "Confluent Schema Registry compatibility API"), which
is what :mod:`spark_kafka_py.schema_registry` speaks. :class:`ApicurioRegistry` runs the Quarkus
distribution of ``io.apicurio:apicurio-registry-app:<version>:tar.gz:all``:

- :func:`apicurio_distribution` downloads the archive (about 159 MB) once from Maven Central
  into ``<cache>/apicurio/`` (``<cache>`` as :func:`spark_kafka_py.testing.jars.cache_dir`),
  checks it against the SHA-512 that Central publishes beside it, unpacks it and marks the
  directory complete only then (a half-finished download or unpack is never taken for a
  complete one). A second call returns at once, with no network. The archive is not a jar with
  dependencies, so Maven's ``copy-dependencies`` of :mod:`.jars` does not fit; Maven's own
  repository layout and checksum file are used instead.
- :func:`find_java` finds a Java of release :data:`MIN_JAVA_RELEASE` or later (Apicurio 3 is
  built for Java 21): ``$SPARK_KAFKA_PY_REGISTRY_JAVA_HOME``, ``$JAVA_HOME``, ``java`` on
  ``PATH``, then the JDKs under the usual directories (``/usr/lib/jvm``, ...), newest first.
- :class:`ApicurioRegistry` starts ``java -jar quarkus-run.jar`` with in-memory storage (H2,
  Apicurio's default), HTTP and the management interface bound to 127.0.0.1 on free ports,
  its output in ``<work_dir>/registry.log``; :meth:`ApicurioRegistry.start` returns once
  ``GET /apis/ccompat/v7/subjects`` answers 200. :meth:`ApicurioRegistry.stop` sends SIGTERM,
  then SIGKILL after a timeout.

The JVM runs with the serial collector and C1 only (``-XX:TieredStopAtLevel=1``): a test
registry answers a few requests, and C2 only slows its start. Measured on the shared 2-core
machine (Temurin 25, load about 3, 2026-11-27): 7-9 s from launch to the first answer and about
260 MB resident; 13-15 s and about 310 MB with the full JIT. Apicurio's defaults differ from
Confluent's (the global compatibility is ``NONE``, Confluent's ``BACKWARD``); Apicurio does not
serve ``/schemas/guids/{guid}`` (404).

Example::

    with ApicurioRegistry() as registry:
        print(registry.url)   # http://127.0.0.1:PORT/apis/ccompat/v7
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterable
from pathlib import Path

from spark_kafka_py.testing.jars import MAVEN_CENTRAL, JarResolutionError, cache_dir

__all__ = [
    "APICURIO_VERSION",
    "CCOMPAT_PATH",
    "DEFAULT_START_TIMEOUT_S",
    "DEFAULT_STOP_TIMEOUT_S",
    "JAVA_HOME_ENV",
    "MIN_JAVA_RELEASE",
    "ApicurioRegistry",
    "ArtifactDownloadError",
    "NoSuitableJavaError",
    "RegistryStartError",
    "apicurio_distribution",
    "confluent_conf",
    "find_java",
    "registry_answers",
]

#: The Apicurio Registry release started (``io.apicurio:apicurio-registry-app``).
APICURIO_VERSION = "3.3.3"

#: Java release Apicurio Registry 3.x needs (its classes are built for Java 21).
MIN_JAVA_RELEASE = 21

#: Environment variable naming a JDK (or JRE) home for the registry, tried before ``JAVA_HOME``:
#: the tests' other JVMs keep ``JAVA_HOME`` (Java 17 is enough for Kafka).
JAVA_HOME_ENV = "SPARK_KAFKA_PY_REGISTRY_JAVA_HOME"

#: Path of the Confluent-compatible API under the registry's root URL.
CCOMPAT_PATH = "/apis/ccompat/v7"

#: How long :meth:`ApicurioRegistry.start` waits for the first answer, seconds.
DEFAULT_START_TIMEOUT_S = 180.0

#: How long :meth:`ApicurioRegistry.stop` waits after SIGTERM before SIGKILL, seconds.
DEFAULT_STOP_TIMEOUT_S = 20.0

#: Lines of the registry's log quoted in a :class:`RegistryStartError`.
LOG_TAIL_LINES = 40

#: Directories holding JDKs side by side (Debian/Ubuntu, RHEL, macOS, SDKMAN, containers).
JDK_ROOTS = (
    "/usr/lib/jvm",
    "/usr/java",
    "/opt/java",
    "/Library/Java/JavaVirtualMachines",
    "~/.sdkman/candidates/java",
)

#: Seconds between two progress lines on stderr while the archive downloads.
PROGRESS_INTERVAL_S = 10.0

#: Bytes read at a time from Maven Central.
_CHUNK_BYTES = 1 << 20

#: Name of the file written into an unpacked distribution once it is complete.
_COMPLETE = ".complete"


class ArtifactDownloadError(JarResolutionError):
    """The registry's archive could not be downloaded, did not match its published SHA-512, or
    could not be unpacked. The message names the URL and the cache directory."""


class RegistryStartError(RuntimeError):
    """The registry did not start: its process exited, or it did not answer in time. The
    message names the log file and quotes its tail."""


class NoSuitableJavaError(RegistryStartError):
    """No Java of release :data:`MIN_JAVA_RELEASE` or later was found; the message lists the
    Javas seen and their releases."""


def _report(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _coordinates_path(version: str) -> str:
    return f"io/apicurio/apicurio-registry-app/{version}/apicurio-registry-app-{version}-all.tar.gz"


def apicurio_distribution(version: str = APICURIO_VERSION) -> Path:
    """The unpacked Quarkus distribution of Apicurio Registry ``version`` (its directory holds
    ``quarkus-run.jar``), downloaded and unpacked on first use.

    The archive ``io.apicurio:apicurio-registry-app:<version>:tar.gz:all`` comes from
    :data:`~spark_kafka_py.testing.jars.MAVEN_CENTRAL` and must match the ``.sha512`` published
    beside it. It is unpacked (tar's ``data`` filter: no absolute paths, no links out) into
    ``<cache>/apicurio/apicurio-registry-<version>/`` via a temporary sibling renamed into place
    once complete, then deleted (only the unpacked tree stays, about 170 MB).

    Raises:
        ArtifactDownloadError: the download failed, the checksum differs, or unpacking failed.
    """
    root = cache_dir() / "apicurio"
    target = root / f"apicurio-registry-{version}"
    if (target / _COMPLETE).is_file() and (target / "quarkus-run.jar").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    url = f"{MAVEN_CENTRAL}/{_coordinates_path(version)}"
    work = Path(tempfile.mkdtemp(prefix=f".apicurio-{version}-", dir=root))
    try:
        expected = _read_text(f"{url}.sha512").split()[0].lower()
        archive = work / "registry.tar.gz"
        digest = _download(url, archive)
        if digest != expected:
            raise ArtifactDownloadError(
                f"{url}: SHA-512 {digest} differs from the published {expected}; "
                f"nothing was kept in {root}"
            )
        unpacked = work / "dist"
        try:
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(unpacked, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise ArtifactDownloadError(f"cannot unpack {url} into {unpacked}: {exc}") from exc
        if not (unpacked / "quarkus-run.jar").is_file():
            raise ArtifactDownloadError(f"{url} has no quarkus-run.jar at its root")
        (unpacked / _COMPLETE).write_text(url, encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)  # a half-written one from a killed run
        try:
            unpacked.rename(target)
        except OSError:  # a concurrent download won the race
            if not (target / _COMPLETE).is_file():
                raise
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _read_text(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            text: str = resp.read(4096).decode("ascii", "replace")
            return text
    except OSError as exc:
        raise ArtifactDownloadError(f"cannot read {url}: {exc}") from exc


def _download(url: str, dest: Path) -> str:
    """Stream ``url`` into ``dest``; return the SHA-512 (hex) of the bytes written."""
    digest = hashlib.sha512()
    started = last = time.monotonic()
    done = 0
    _report(f"downloading Apicurio Registry from {url} into {dest.parent.parent}; first use only")
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, dest.open("wb") as out:
            total = int(resp.headers.get("Content-Length") or 0)
            while chunk := resp.read(_CHUNK_BYTES):
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if time.monotonic() - last >= PROGRESS_INTERVAL_S:
                    last = time.monotonic()
                    _report(
                        f"  apicurio: {done / 1e6:.1f} of {total / 1e6:.1f} MB, "
                        f"{last - started:.0f} s"
                    )
    except OSError as exc:
        raise ArtifactDownloadError(f"cannot download {url}: {exc}") from exc
    _report(
        f"downloaded Apicurio Registry: {done / 1e6:.1f} MB in {time.monotonic() - started:.1f} s"
    )
    return digest.hexdigest()


# ------------------------------------------------------------------------------------- Java


def _release_of(java: Path) -> int | None:
    """The feature release (17, 21, 25...) of ``java`` (a ``bin/java``): from the ``release``
    file of its home when there is one, else from ``java -version``; ``None`` if unknown."""
    home = java.resolve().parent.parent
    release = home / "release"
    text = ""
    if release.is_file():
        with contextlib.suppress(OSError):
            match = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(encoding="utf-8"), re.M)
            text = match.group(1) if match else ""
    if not text:
        try:
            proc = subprocess.run(
                [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        match = re.search(r'version "([^"]+)"', proc.stderr)
        text = match.group(1) if match else ""
    parts = text.split(".")
    if not parts or not parts[0].isdigit():
        return None
    major = int(parts[0])
    if major == 1 and len(parts) > 1 and parts[1].isdigit():  # 1.8.0_x
        major = int(parts[1])
    return major


def _candidates() -> Iterable[tuple[str, Path]]:
    for env in (JAVA_HOME_ENV, "JAVA_HOME"):
        value = os.environ.get(env)
        if value:
            yield f"${env}", Path(value).expanduser() / "bin" / "java"
    on_path = shutil.which("java")
    if on_path:
        yield "java on PATH", Path(on_path)
    homes: list[Path] = []
    for root in JDK_ROOTS:
        base = Path(root).expanduser()
        if base.is_dir():
            for child in sorted(base.iterdir()):
                homes.append(
                    child / "Contents" / "Home" if (child / "Contents").is_dir() else child
                )
    for home in homes:
        yield str(home), home / "bin" / "java"


def find_java(min_release: int = MIN_JAVA_RELEASE) -> str:
    """Path of a ``java`` of release ``min_release`` or later.

    Tried in order: ``$SPARK_KAFKA_PY_REGISTRY_JAVA_HOME/bin/java``, ``$JAVA_HOME/bin/java``,
    ``java`` on ``PATH``; then, newest release first, every ``<dir>/<jdk>/bin/java`` under
    :data:`JDK_ROOTS`. The first two win when they are recent enough.

    Raises:
        NoSuitableJavaError: none is recent enough; the message lists those seen.
    """
    seen: list[str] = []
    fallback: list[tuple[int, str]] = []
    for n, (label, java) in enumerate(_candidates()):
        if not java.is_file() or not os.access(java, os.X_OK):
            continue
        release = _release_of(java)
        seen.append(f"{label} ({java}): Java {release if release is not None else '?'}")
        if release is None or release < min_release:
            continue
        if n < 3 and not label.startswith("/"):  # the variables and PATH win in order
            return str(java)
        fallback.append((release, str(java)))
    if fallback:
        return max(fallback)[1]
    listing = "; ".join(seen) or "no java at all"
    raise NoSuitableJavaError(
        f"Apicurio Registry {APICURIO_VERSION} needs Java {min_release} or later; found "
        f"{listing}. Install a JDK {min_release}+ or point ${JAVA_HOME_ENV} at one."
    )


# ---------------------------------------------------------------------------------- process


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


def registry_answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether ``GET <url>/subjects`` answers 200 (``url`` is the ccompat base URL)."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/subjects", timeout=timeout_s) as resp:
            return bool(resp.status == 200)
    except (OSError, ValueError):
        return False


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"({path} not readable)"
    return "\n".join(text.splitlines()[-lines:])


_LIVE: weakref.WeakSet[ApicurioRegistry] = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    for registry in list(_LIVE):
        with contextlib.suppress(Exception):
            registry.stop()


class ApicurioRegistry:
    """One Apicurio Registry process on 127.0.0.1, in-memory storage.

    Args:
        version: the Apicurio Registry release (:data:`APICURIO_VERSION`).
        work_dir: its log (``registry.log``) and temporary files; default a fresh temporary
            directory, removed by :meth:`stop` (a given one is kept).
        heap: the JVM's ``-Xmx`` (``-Xmx`` syntax; default ``384m``).
        start_timeout_s: how long :meth:`start` waits for the first answer, seconds.
        java: the ``java`` to run; default :func:`find_java`.
        properties: more Quarkus/Apicurio settings, passed as ``-Dname=value`` (they win over
            ours), e.g. ``{"apicurio.ccompat.max-subjects": "5000"}``.

    Attributes (after :meth:`start`):
        port: the HTTP port; management_port: Quarkus' management interface (health, metrics).
        url: the Confluent-compatible base URL, ``http://127.0.0.1:<port>/apis/ccompat/v7``.
        log_path: the process's stdout and stderr.
    """

    def __init__(
        self,
        version: str = APICURIO_VERSION,
        *,
        work_dir: str | os.PathLike[str] | None = None,
        heap: str = "384m",
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        java: str | None = None,
        properties: dict[str, str] | None = None,
    ) -> None:
        self.version = version
        self.heap = heap
        self.start_timeout_s = start_timeout_s
        self.java = java
        self.properties = dict(properties or {})
        self._given_work_dir = Path(work_dir) if work_dir is not None else None
        self.work_dir: Path | None = None
        self.port = 0
        self.management_port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.started_in_s: float | None = None
        self._detached = False

    @property
    def url(self) -> str:
        """The Confluent-compatible base URL.

        Raises:
            RuntimeError: not started.
        """
        if not self.port:
            raise RuntimeError("ApicurioRegistry not started")
        return f"http://127.0.0.1:{self.port}{CCOMPAT_PATH}"

    @property
    def log_path(self) -> Path:
        """``<work_dir>/registry.log`` (the process's stdout and stderr).

        Raises:
            RuntimeError: not started.
        """
        if self.work_dir is None:
            raise RuntimeError("ApicurioRegistry not started")
        return self.work_dir / "registry.log"

    @property
    def pid(self) -> int | None:
        """The JVM's process id, ``None`` before :meth:`start`."""
        return self.process.pid if self.process is not None else None

    def is_running(self) -> bool:
        """Whether the process is alive."""
        return self.process is not None and self.process.poll() is None

    def command(self, java: str) -> list[str]:
        """The command line that starts the registry (``java ... -jar quarkus-run.jar``)."""
        assert self.work_dir is not None
        tmp = self.work_dir / "tmp"
        props = {
            "quarkus.http.host": "127.0.0.1",
            "quarkus.http.port": str(self.port),
            "quarkus.management.host": "127.0.0.1",
            "quarkus.management.port": str(self.management_port),
            # H2 in memory is Apicurio's default storage; say so, whatever the defaults become
            "apicurio.storage.kind": "sql",
            "apicurio.storage.sql.kind": "h2",
            "apicurio.storage.snapshot.location": str(tmp),
            # the pool's 20 connections are for production: 2 are plenty for tests
            "apicurio.datasource.jdbc.initial-size": "2",
            "apicurio.datasource.jdbc.min-size": "2",
            "java.io.tmpdir": str(tmp),
            **self.properties,
        }
        return [
            java,
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            *(f"-D{name}={value}" for name, value in props.items()),
            "-jar",
            "quarkus-run.jar",
        ]

    def start(self) -> ApicurioRegistry:
        """Download if needed, launch, and wait until ``GET <url>/subjects`` answers 200.

        Returns:
            ``self``.

        Raises:
            NoSuitableJavaError: no Java 21+.
            ArtifactDownloadError: the distribution could not be fetched.
            RegistryStartError: the process exited, or did not answer within
                ``start_timeout_s``; the message names the log file and quotes its tail. The
                process is stopped.
        """
        java = self.java or find_java()
        dist = apicurio_distribution(self.version)
        if self._given_work_dir is not None:
            self.work_dir = self._given_work_dir
        else:
            self.work_dir = Path(tempfile.mkdtemp(prefix="apicurio-"))
        (self.work_dir / "tmp").mkdir(parents=True, exist_ok=True)
        self.port, self.management_port = _free_ports(2)
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            # Own session: Ctrl-C in a test run or the CLI does not hit the JVM directly.
            self.process = subprocess.Popen(
                self.command(java),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=dist,
                start_new_session=True,
            )
        _LIVE.add(self)
        deadline = started + self.start_timeout_s
        while not registry_answers(self.url):
            code = self.process.poll()
            if code is not None or time.monotonic() > deadline:
                why = (
                    f"exited with code {code}"
                    if code is not None
                    else f"did not answer GET {self.url}/subjects within {self.start_timeout_s} s"
                )
                self.stop(keep_files=True)  # the log stays for the message to point at
                raise RegistryStartError(
                    f"Apicurio Registry {self.version} ({java}) {why}; log {self.log_path}:\n"
                    f"{_tail(self.log_path)}"
                )
            time.sleep(0.25)
        self.started_in_s = time.monotonic() - started
        return self

    def stop(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S, *, keep_files: bool = False) -> None:
        """SIGTERM, then SIGKILL after ``timeout_s`` seconds; remove a temporary work
        directory unless ``keep_files``. May be called twice."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGKILL)
                process.wait()
        _LIVE.discard(self)
        if (
            not keep_files
            and self.work_dir is not None
            and self._given_work_dir is None
            and not self._detached
            and self.work_dir.exists()
        ):
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def detach(self) -> None:
        """Leave the process running when this Python process exits (for the CLI)."""
        self._detached = True
        _LIVE.discard(self)

    def resident_bytes(self) -> int | None:
        """The JVM's resident memory (bytes, from ``/proc/<pid>/status``), ``None`` if unknown."""
        if self.pid is None:
            return None
        try:
            status = Path(f"/proc/{self.pid}/status").read_text(encoding="ascii")
        except OSError:
            return None
        match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        return int(match.group(1)) * 1024 if match else None

    def __enter__(self) -> ApicurioRegistry:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self.port else "not started"
        return f"ApicurioRegistry({self.version}, {where})"


#: Seconds each HTTP request of confluent-kafka's registry client may take (its default is no
#: limit: a request the registry never answers hung a test for 600 s once; with a limit the
#: client's own retries, ``max.retries``, take over).
CONFLUENT_TIMEOUT_S = 20


def confluent_conf(url: str) -> dict[str, object]:
    """The configuration of confluent-kafka's ``SchemaRegistryClient`` (an oracle in the
    tests) for the registry at ``url``: with a request timeout, :data:`CONFLUENT_TIMEOUT_S`."""
    return {"url": url, "timeout": CONFLUENT_TIMEOUT_S}
