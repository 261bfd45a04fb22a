"""Resolve Maven artifacts (Apache Kafka's broker and tools, Spark's Kafka connector) into a cache.

The jars are fetched once with the ``mvn`` on the machine: a throw-away POM is generated from
``deps-pom.xml.template`` (package data) and Maven copies the artifacts and their transitive
runtime dependencies into a directory of the cache (in Maven's repository layout, so that group,
artifact and version are read from the path, never guessed from a file name). A marker file is
written only after Maven succeeded, so a half-finished download is never taken for a complete one;
a second call for the same artifact set finds the marker and returns at once, with no network.

While Maven runs (the first use of an artifact set only: Kafka's broker and tools are about
56 MB), progress goes to stderr: one line naming the set, its coordinates and where it goes,
then every :data:`PROGRESS_INTERVAL_S` seconds the jars and megabytes Maven downloaded so far
(from its ``Downloaded from ...`` lines), and one line with the set's jar count, size and time
once it is complete.

The cache lives outside the repository: ``$SPARK_KAFKA_PY_CACHE`` or ``~/.cache/spark-kafka-py``.

Example::

    from spark_kafka_py.testing.jars import kafka_jars, spark_kafka_connector_jars
    classpath = os.pathsep.join(str(p) for p in kafka_jars())
    spark_jars = ",".join(str(p) for p in spark_kafka_connector_jars())
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template

__all__ = [
    "KAFKA_FEATURES_ENV",
    "KAFKA_VERSION",
    "KAFKA_VERSION_ENV",
    "LOG4J_VERSION",
    "PROGRESS_INTERVAL_S",
    "Artifact",
    "JarResolutionError",
    "cache_dir",
    "kafka_broker_classpath",
    "kafka_classpath",
    "kafka_jars",
    "log4j1_broker",
    "parse_features",
    "resolve_artifacts",
    "selected_kafka_features",
    "selected_kafka_version",
    "spark_avro_jars",
    "spark_kafka_connector_jars",
]

#: The default Apache Kafka release: the broker the tests start (unless
#: :data:`KAFKA_VERSION_ENV` picks another) and, always, the Java tools and reference clients the
#: tests run (Kafka's clients of one release talk to brokers of other releases, so the tools stay
#: on this one whatever broker runs). KRaft only, Scala 2.13 build.
KAFKA_VERSION = "4.3.0"

#: Environment variable choosing the release of the broker that :class:`LocalKafkaCluster`
#: (tests, ``spark-kafka-py broker``) starts, e.g. ``3.9.1``; see :func:`selected_kafka_version`.
KAFKA_VERSION_ENV = "SPARK_KAFKA_PY_KAFKA_VERSION"

#: Environment variable of the feature levels (KIP-584) that :class:`LocalKafkaCluster` formats
#: the storage of a broker of :data:`KAFKA_VERSION_ENV`'s release with, e.g.
#: ``transaction.version=2`` (comma-separated ``name=level``); see
#: :func:`selected_kafka_features`.
KAFKA_FEATURES_ENV = "SPARK_KAFKA_PY_KAFKA_FEATURES"

#: Comma-separated paths of spark-protobuf jars to use instead of resolving
#: ``org.apache.spark:spark-protobuf_2.13`` from Maven (:func:`spark_protobuf_jars`); when set,
#: :func:`~spark_kafka_py.testing.spark.local_spark_session` puts them on ``spark.jars``.
SPARK_PROTOBUF_JARS_ENV = "SPARK_KAFKA_PY_SPARK_PROTOBUF_JARS"

#: log4j2 release for the broker's logging backend (``log4j-core`` + the SLF4J 1.x binding), so the
#: broker logs to a file configured by ``conf/kafka-log4j2.properties`` rather than to the console.
LOG4J_VERSION = "2.25.4"

#: SLF4J 1.x binding to reload4j added to a 3.x broker's jars (the slf4j-api of Kafka 3.x).
SLF4J1_VERSION = "1.7.36"

#: Version of maven-dependency-plugin that we call by its full coordinates (reproducible; the
#: version Maven would pick by default depends on the Maven installation).
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

#: Where the connector version look-up goes (only when the installed pyspark version is missing).
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"

#: Name of the file written into an artifact-set directory once Maven succeeded. It holds the
#: JSON list of the resolved jars (paths relative to the directory).
MARKER = ".complete.json"

#: Lines of Maven's output quoted in a :class:`JarResolutionError`.
ERROR_TAIL_LINES = 60

#: Seconds between two progress lines on stderr while Maven fetches an artifact set.
PROGRESS_INTERVAL_S = 10.0

#: Maven's line for one finished transfer (batch mode, Maven 3.x), e.g. ``[INFO] Downloaded
#: from central: https://.../kafka-clients-4.3.0.jar (12 MB at 3.1 MB/s)``: the URL and the size.
_DOWNLOADED = re.compile(r"Downloaded from [^:]+: (\S+) \(([\d.,]+) ([kMG]?B)\b")

#: Maven's size units (decimal: Maven's ``FileSizeFormat`` counts 1 kB as 1,000 bytes).
_UNITS = {"B": 1, "kB": 1_000, "MB": 1_000_000, "GB": 1_000_000_000}

#: ANSI colour codes Maven may put around its lines.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: Spark artifacts that ``spark.jars`` must carry: everything else from ``org.apache.spark`` is
#: already on Spark's own class path (``pyspark/jars``).
SPARK_CONNECTOR_ARTIFACTS = frozenset(
    {"spark-sql-kafka-0-10_2.13", "spark-token-provider-kafka-0-10_2.13"}
)

#: Artifacts never put on ``spark.jars`` even when pyspark does not ship them by the same name:
#: they would clash with Spark's own logging / Scala runtime.
SPARK_ALWAYS_EXCLUDED_PREFIXES = ("scala-", "slf4j-", "log4j-", "jul-to-slf4j", "jcl-over-slf4j")


class JarResolutionError(RuntimeError):
    """Maven could not resolve an artifact set (network, unknown version, no ``mvn``).

    The message holds the command, its exit code and the last lines of Maven's output.
    """


@dataclass(frozen=True, slots=True)
class Artifact:
    """One resolved jar: Maven coordinates and the file in the cache.

    Attributes:
        group_id: e.g. ``org.apache.kafka``.
        artifact_id: e.g. ``kafka-clients``.
        version: e.g. ``4.3.0``.
        path: absolute path of the jar in the cache directory.
    """

    group_id: str
    artifact_id: str
    version: str
    path: Path


def cache_dir() -> Path:
    """Return the root of the cache (created if missing).

    ``$SPARK_KAFKA_PY_CACHE`` if set, else ``~/.cache/spark-kafka-py``. Jars go below
    ``<cache>/jars/``; the CLI's broker state below ``<cache>/broker/``.
    """
    root = os.environ.get("SPARK_KAFKA_PY_CACHE") or str(Path.home() / ".cache" / "spark-kafka-py")
    path = Path(root).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _pom(name: str, coordinates: Sequence[str]) -> str:
    deps = []
    for coord in coordinates:
        parts = coord.split(":")
        if len(parts) != 3:
            raise ValueError(f"expected groupId:artifactId:version, got {coord!r}")
        group, artifact, version = parts
        deps.append(
            "    <dependency>\n"
            f"      <groupId>{group}</groupId>\n"
            f"      <artifactId>{artifact}</artifactId>\n"
            f"      <version>{version}</version>\n"
            "    </dependency>"
        )
    template = (
        resources.files("spark_kafka_py.testing")
        .joinpath("deps-pom.xml.template")
        .read_text(encoding="utf-8")
    )
    return Template(template).substitute(artifact_set=name, dependencies="\n".join(deps))


def _scan(repo_dir: Path) -> list[Artifact]:
    """Read the artifacts copied in Maven's repository layout: ``g/r/o/u/p/artifact/version/f``."""
    found = []
    for jar in sorted(repo_dir.rglob("*.jar")):
        rel = jar.relative_to(repo_dir).parts
        if len(rel) < 4:
            continue
        found.append(
            Artifact(
                group_id=".".join(rel[:-3]),
                artifact_id=rel[-3],
                version=rel[-2],
                path=jar,
            )
        )
    return found


def resolve_artifacts(
    name: str,
    coordinates: Sequence[str],
    *,
    keep: Callable[[Artifact], bool] | None = None,
    mvn: str = "mvn",
) -> list[Artifact]:
    """Resolve ``coordinates`` and their transitive runtime dependencies into the cache.

    Args:
        name: a short label for the artifact set (used in the directory name), e.g. ``kafka``.
        coordinates: ``groupId:artifactId:version`` strings.
        keep: optional filter applied to the resolved artifacts (the result, not the cache).
        mvn: the Maven executable.

    Returns:
        The resolved artifacts, sorted by path. The cache directory is
        ``<cache>/jars/<name>-<sha256 of the coordinates, 12 hex digits>/``.

    Raises:
        JarResolutionError: ``mvn`` is missing or failed (message ends with its output tail).
        ValueError: a coordinate is not ``groupId:artifactId:version``.

    A cached set (marker present) is returned without running Maven (takes a few ms).
    """
    key = hashlib.sha256("\n".join(sorted(coordinates)).encode()).hexdigest()[:12]
    target = cache_dir() / "jars" / f"{name}-{key}"
    marker = target / MARKER
    if not marker.is_file():
        _run_maven(name, coordinates, target, mvn)
    listed = json.loads(marker.read_text(encoding="utf-8"))
    artifacts = [
        Artifact(a["group_id"], a["artifact_id"], a["version"], target / a["path"])
        for a in listed["artifacts"]
    ]
    missing = [a.path for a in artifacts if not a.path.is_file()]
    if missing:  # somebody cleaned part of the cache: resolve again
        marker.unlink()
        return resolve_artifacts(name, coordinates, keep=keep, mvn=mvn)
    if keep is not None:
        artifacts = [a for a in artifacts if keep(a)]
    return artifacts


def _run_maven(name: str, coordinates: Sequence[str], target: Path, mvn: str) -> None:
    exe = shutil.which(mvn)
    if exe is None:
        raise JarResolutionError(
            f"cannot resolve {name} jars: Maven executable {mvn!r} not found on PATH"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    # Work in a sibling temp dir and rename at the end: a concurrent or interrupted run
    # never leaves a directory that looks complete.
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        (work / "pom.xml").write_text(_pom(name, coordinates), encoding="utf-8")
        repo_dir = work / "repo"
        cmd = [
            exe,
            "-B",
            "-f",
            str(work / "pom.xml"),
            f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={repo_dir}",
            "-Dmdep.useRepositoryLayout=true",
            "-DincludeScope=runtime",
        ]
        if not (Path.home() / ".m2" / "settings.xml").is_file():
            settings = work / "settings.xml"
            settings.write_text(
                resources.files("spark_kafka_py.testing")
                .joinpath("maven-settings.xml")
                .read_text(encoding="utf-8"),
                encoding="utf-8",
            )
            cmd[1:1] = ["-s", str(settings)]
        progress = _Progress(name)
        _report(
            f"fetching the {name} jars ({', '.join(coordinates)} and their dependencies) "
            f"with Maven into {target.parent}; only on first use, it can take a few minutes"
        )
        returncode, output = _run_reporting(cmd, progress)
        if returncode != 0:
            tail = "\n".join(output[-ERROR_TAIL_LINES:])
            raise JarResolutionError(
                f"Maven failed (exit {returncode}) resolving {name} "
                f"{list(coordinates)}:\n$ {' '.join(cmd)}\n{tail}"
            )
        artifacts = _scan(repo_dir)
        if not artifacts:
            raise JarResolutionError(f"Maven resolved no jars for {name} {list(coordinates)}")
        _report(progress.done(artifacts))
        listing = {
            "coordinates": list(coordinates),
            "artifacts": [
                {
                    "group_id": a.group_id,
                    "artifact_id": a.artifact_id,
                    "version": a.version,
                    "path": str(Path("repo") / a.path.relative_to(repo_dir)),
                }
                for a in artifacts
            ],
        }
        (work / MARKER).write_text(json.dumps(listing, indent=1), encoding="utf-8")
        if target.exists():  # an earlier run without marker (interrupted) or a concurrent one
            if (target / MARKER).is_file():
                return
            shutil.rmtree(target)
        try:
            work.rename(target)
        except OSError:  # a concurrent resolver won the race
            if not (target / MARKER).is_file():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def _report(line: str) -> None:
    """One progress line on stderr (flushed: the caller may be silent for minutes)."""
    print(line, file=sys.stderr, flush=True)


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _jars(count: int) -> str:
    return f"{count} jar" if count == 1 else f"{count} jars"


@dataclass
class _Progress:
    """What Maven has downloaded so far for one artifact set, from its ``Downloaded`` lines."""

    name: str
    started: float = field(default_factory=time.monotonic)
    files: int = 0
    jars: int = 0
    jar_bytes: int = 0
    all_bytes: int = 0
    latest: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def feed(self, line: str) -> None:
        """Count ``line`` if it is a finished download (any other line is ignored)."""
        match = _DOWNLOADED.search(_ANSI.sub("", line))
        if match is None:
            return
        url, amount, unit = match.groups()
        size = int(float(amount.replace(",", "")) * _UNITS[unit])
        with self.lock:
            self.files += 1
            self.all_bytes += size
            if url.endswith(".jar"):
                self.jars += 1
                self.jar_bytes += size
                self.latest = f"{url.rsplit('/', 1)[-1]} ({amount} {unit})"

    def line(self) -> str:
        """The periodic progress line: jars and bytes downloaded so far, the latest jar."""
        with self.lock:
            text = (
                f"  {self.name}: {_jars(self.jars)} ({_megabytes(self.jar_bytes)}) downloaded "
                f"so far, {time.monotonic() - self.started:.0f} s"
            )
            if self.latest:
                text += f"; latest {self.latest}"
            return text

    def done(self, artifacts: Sequence[Artifact]) -> str:
        """The closing line: the set's jars, their size on disk, the time and the download."""
        size = sum(a.path.stat().st_size for a in artifacts)
        with self.lock:
            if self.files:
                source = f"{self.files} files, {_megabytes(self.all_bytes)} downloaded"
            else:
                source = "all from Maven's local repository, nothing downloaded"
            return (
                f"fetched the {self.name} jars: {_jars(len(artifacts))}, {_megabytes(size)}, in "
                f"{time.monotonic() - self.started:.1f} s ({source})"
            )


def _run_reporting(cmd: Sequence[str], progress: _Progress) -> tuple[int, list[str]]:
    """Run Maven, feeding its output to ``progress`` and printing ``progress.line()`` every
    :data:`PROGRESS_INTERVAL_S` seconds until it exits; return its exit code and output lines
    (stdout and stderr, merged)."""
    output: list[str] = []
    with subprocess.Popen(
        list(cmd),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    ) as proc:
        assert proc.stdout is not None
        stdout = proc.stdout

        def read() -> None:
            for raw in stdout:
                line = raw.rstrip("\n")
                output.append(line)
                progress.feed(line)

        reader = threading.Thread(target=read, name="maven-output", daemon=True)
        reader.start()
        try:
            while True:
                try:
                    proc.wait(timeout=PROGRESS_INTERVAL_S)
                    break
                except subprocess.TimeoutExpired:
                    _report(progress.line())
        except BaseException:  # Ctrl-C or a failure here: Maven must not outlive us
            proc.kill()
            raise
        finally:
            reader.join()
    return proc.returncode, output


def selected_kafka_version() -> str:
    """The Kafka release of the broker to start: ``$SPARK_KAFKA_PY_KAFKA_VERSION`` if set and not
    empty, else :data:`KAFKA_VERSION`.

    Returns:
        A release number ``X.Y.Z`` (e.g. ``3.9.1``) of ``org.apache.kafka:kafka_2.13`` on Maven.

    Raises:
        ValueError: the variable is not of the form ``X.Y.Z``, or names a release before 3.3
            (the first whose KRaft mode is production ready, KIP-833; this harness starts KRaft
            only).
    """
    version = os.environ.get(KAFKA_VERSION_ENV, "").strip() or KAFKA_VERSION
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"{KAFKA_VERSION_ENV} must be a Kafka release X.Y.Z, got {version!r}")
    if _version_key(version) < (3, 3, 0):
        raise ValueError(
            f"{KAFKA_VERSION_ENV}={version}: brokers before 3.3 cannot run in KRaft mode here"
        )
    return version


def parse_features(text: str) -> dict[str, int]:
    """Feature levels from ``name=level[,name=level...]``, e.g. ``transaction.version=2``.

    Blank text gives ``{}``. Names are Kafka feature names (``transaction.version``,
    ``group.version``, ...: KIP-584's finalized features, as ``kafka-features.sh describe``
    prints them); levels are non-negative integers (``metadata.version`` is chosen by the
    release, not here).

    Raises:
        ValueError: an item is not ``name=level``, a level is not an integer >= 0, or a name
            is given twice.
    """
    features: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)\s*=\s*(\d+)", item)
        if match is None:
            raise ValueError(
                f"feature levels are name=level[,name=level...] (e.g. transaction.version=2), "
                f"got {item!r}"
            )
        name, level = match.group(1), int(match.group(2))
        if name in features:
            raise ValueError(f"feature {name!r} given twice in {text!r}")
        features[name] = level
    return features


def selected_kafka_features() -> dict[str, int]:
    """The feature levels to format a broker of the selected release with:
    ``$SPARK_KAFKA_PY_KAFKA_FEATURES`` parsed by :func:`parse_features`, ``{}`` (the release's
    defaults) when unset or empty.

    Raises:
        ValueError: the variable is malformed (the message names it).
    """
    try:
        return parse_features(os.environ.get(KAFKA_FEATURES_ENV, ""))
    except ValueError as exc:
        raise ValueError(f"{KAFKA_FEATURES_ENV}: {exc}") from None


def log4j1_broker(version: str) -> bool:
    """Whether the broker of Kafka ``version`` logs through log4j 1.x (reload4j): every 3.x
    release. Kafka 4.0 moved the broker to log4j2 (KIP-653)."""
    return _version_key(version) < (4, 0, 0)


def kafka_jars(version: str = KAFKA_VERSION, *, tools: bool = True) -> list[Path]:
    """Jars of an Apache Kafka broker (KRaft) and its Java tools, for ``java -cp``.

    Resolves ``org.apache.kafka:kafka_2.13`` (the broker ``kafka.Kafka`` and ``StorageTool``)
    and, with ``tools``, ``kafka-tools`` (console producer/consumer, TopicCommand,
    ProducerPerformance, ConsumerGroupCommand, GetOffsetShell, BrokerApiVersionsCommand) of
    ``version`` with their dependencies. From 4.0 on, plus ``log4j-core`` and the SLF4J 1.x
    binding ``log4j-slf4j-impl`` (Kafka 4.3 still declares ``slf4j-api`` 1.7.36), so the broker
    logs through the log4j2 file we pass instead of to the console. A 3.x broker brings its own
    log4j 1.x backend ``reload4j``; we add its SLF4J binding ``slf4j-reload4j`` (only
    ``kafka-tools`` depends on it), so that the broker logs through the log4j 1.x file we pass
    (see :func:`log4j1_broker`).

    Args:
        version: the Kafka release.
        tools: also resolve ``kafka-tools`` (Maven Central does not serve it for every release
            that has a broker, e.g. 4.4.0); the broker alone needs only ``kafka_2.13``.

    Returns:
        Absolute jar paths (about 90 jars). The first call downloads ~100 MB with Maven.

    Raises:
        JarResolutionError: Maven failed (e.g. ``version`` is not on Maven Central).
    """
    coords = [f"org.apache.kafka:kafka_2.13:{version}"]
    if tools:
        coords.append(f"org.apache.kafka:kafka-tools:{version}")
    if log4j1_broker(version):
        coords.append(f"org.slf4j:slf4j-reload4j:{SLF4J1_VERSION}")
    else:
        coords += [
            f"org.apache.logging.log4j:log4j-core:{LOG4J_VERSION}",
            f"org.apache.logging.log4j:log4j-slf4j-impl:{LOG4J_VERSION}",
        ]
    name = f"kafka-{version}" if tools else f"kafka-broker-{version}"
    return [a.path for a in resolve_artifacts(name, coords)]


def kafka_classpath(version: str = KAFKA_VERSION) -> str:
    """The :func:`kafka_jars` joined with ``os.pathsep``, ready for ``java -cp``."""
    return os.pathsep.join(str(p) for p in kafka_jars(version))


def kafka_broker_classpath(version: str) -> str:
    """``java -cp`` of the broker of Kafka ``version``: :func:`kafka_classpath` for
    :data:`KAFKA_VERSION` (one cached set with the tools), the broker's jars alone for any other
    release (the tools always run from :data:`KAFKA_VERSION`)."""
    if version == KAFKA_VERSION:
        return kafka_classpath(version)
    return os.pathsep.join(str(p) for p in kafka_jars(version, tools=False))


def _pyspark_jar_names() -> list[str]:
    import pyspark  # imported lazily: the broker tooling does not need pyspark

    jars_dir = Path(pyspark.__file__).parent / "jars"
    return sorted(p.name for p in jars_dir.glob("*.jar")) if jars_dir.is_dir() else []


def _shipped_by_spark(artifact: Artifact, shipped: Iterable[str]) -> bool:
    prefix = artifact.artifact_id + "-"
    return any(n.startswith(prefix) and n[len(prefix) : len(prefix) + 1].isdigit() for n in shipped)


#: How long a remembered fallback connector version is trusted before Central is asked again.
_FALLBACK_MEMO_S = 24 * 3600

#: After a failed refresh of a remembered fallback, how long Central is left alone (s): the
#: lookups of that period use the remembered version without touching the network.
REFRESH_BACKOFF_S = 3600

#: The clock of the memo and back-off decisions (seconds since the epoch; tests replace it).
_clock: Callable[[], float] = time.time


def _memo_path(installed: str) -> Path:
    """The file remembering the connector version chosen for pyspark ``installed``."""
    return cache_dir() / "jars" / f"spark-connector-version-{installed}.txt"


def _backoff_path(installed: str) -> Path:
    """The back-off marker of a failed refresh for pyspark ``installed``: JSON
    ``{"failed_at": <seconds since the epoch>, "error": <message>}``."""
    return cache_dir() / "jars" / f"spark-connector-version-{installed}.refresh-failed.json"


def _backing_off(marker: Path, now: float) -> bool:
    """Whether ``marker`` records a failed refresh less than :data:`REFRESH_BACKOFF_S` ago (an
    unreadable marker counts as none: the next lookup asks Central and rewrites it)."""
    try:
        failed_at = float(json.loads(marker.read_text(encoding="utf-8"))["failed_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return 0 <= now - failed_at < REFRESH_BACKOFF_S


def _connector_version(installed: str) -> str:
    """The spark-sql-kafka version to use with pyspark ``installed``.

    ``$SPARK_KAFKA_PY_CONNECTOR_VERSION`` wins. Else the installed version when Maven Central has
    it; else the newest final release of the same major version not newer than ``installed``
    for which Central has both ``spark-sql-kafka`` and ``spark-token-provider-kafka`` (pyspark
    can reach PyPI before, or without, Spark's jars reaching Central). The choice is remembered
    in the cache: the installed version for good; a fallback for a day only, after which Central
    is asked again (a newer fallback, or the installed version, may have been published: the
    4.0.0 fallback of PySpark 4.3.0 could not stream, 4.2.0 can).

    When that refresh fails (no network), the remembered fallback is kept and the failure is
    remembered too (a back-off marker with its time, see :func:`_backoff_path`): for
    :data:`REFRESH_BACKOFF_S` the lookups use the remembered fallback without contacting
    Central, so a machine without network pays the failed request once per back-off period,
    not on every lookup. A successful refresh removes the marker.

    Raises:
        JarResolutionError: Central cannot be read and no version is remembered, or no
            connector release fits ``installed``.
    """
    override = os.environ.get("SPARK_KAFKA_PY_CONNECTOR_VERSION")
    if override:
        return override
    memo = _memo_path(installed)
    backoff = _backoff_path(installed)
    remembered = memo.read_text(encoding="utf-8").strip() if memo.is_file() else None
    now = _clock()
    if remembered is not None and (
        remembered == installed
        or now - memo.stat().st_mtime < _FALLBACK_MEMO_S
        or _backing_off(backoff, now)
    ):
        return remembered
    try:
        # Both artifacts must exist in that version (Central may lag for one of them).
        versions = set(_central_versions("org.apache.spark", "spark-sql-kafka-0-10_2.13"))
        versions &= set(
            _central_versions("org.apache.spark", "spark-token-provider-kafka-0-10_2.13")
        )
    except JarResolutionError as exc:
        if remembered is None:
            raise
        backoff.parent.mkdir(parents=True, exist_ok=True)
        backoff.write_text(json.dumps({"failed_at": now, "error": str(exc)}), encoding="utf-8")
        return remembered
    chosen = _pick_version(installed, versions)
    if chosen != installed:
        warnings.warn(
            f"spark-sql-kafka {installed} is not on Maven Central; using {chosen} with pyspark "
            f"{installed} (set SPARK_KAFKA_PY_CONNECTOR_VERSION to choose another)",
            stacklevel=3,
        )
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(chosen, encoding="utf-8")
    backoff.unlink(missing_ok=True)
    return chosen


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _pick_version(installed: str, available: Iterable[str]) -> str:
    """Newest final ``X.Y.Z`` of ``available`` with the major of ``installed`` and <= it."""
    finals = [v for v in available if re.fullmatch(r"\d+\.\d+\.\d+", v)]
    if installed in finals or not re.fullmatch(r"\d+\.\d+\.\d+", installed):
        return installed
    mine = _version_key(installed)
    fits = [v for v in finals if _version_key(v)[0] == mine[0] and _version_key(v) <= mine]
    if not fits:
        raise JarResolutionError(
            f"no spark-sql-kafka release on Maven Central fits pyspark {installed} "
            f"(available: {sorted(finals, key=_version_key)[-5:]})"
        )
    return max(fits, key=_version_key)


def _central_versions(group_id: str, artifact_id: str) -> list[str]:
    """Versions listed in Maven Central's ``maven-metadata.xml`` of one artifact."""
    url = f"{MAVEN_CENTRAL}/{group_id.replace('.', '/')}/{artifact_id}/maven-metadata.xml"
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            body = resp.read().decode("utf-8")
    except OSError as exc:
        raise JarResolutionError(f"cannot read {url}: {exc}") from exc
    return re.findall(r"<version>([^<]+)</version>", body)


def spark_kafka_connector_jars(spark_version: str | None = None) -> list[Path]:
    """Jars for Spark's built-in Kafka source (``format("kafka")``), suitable for ``spark.jars``.

    Resolves ``org.apache.spark:spark-sql-kafka-0-10_2.13:<version>`` with its transitive
    dependencies, minus what Spark already has on its class path: every ``org.apache.spark``
    artifact except the Kafka connector and token provider, Scala/SLF4J/log4j, and any artifact
    whose jar pyspark ships (e.g. ``lz4-java``, ``snappy-java``, ``zstd-jni``). What remains is
    typically ``spark-sql-kafka``, ``spark-token-provider-kafka``, ``kafka-clients`` and
    ``commons-pool2``.

    Args:
        spark_version: connector version; default: the installed ``pyspark.__version__``, or,
            when Central does not have that one, the newest release of the same major version
            below it (a warning says so), or ``$SPARK_KAFKA_PY_CONNECTOR_VERSION``.

    Returns:
        Absolute jar paths, joined with ``,`` for ``spark.jars``.

    Raises:
        JarResolutionError: Maven failed or no fitting connector version exists.
    """
    if spark_version is None:
        import pyspark

        spark_version = _connector_version(pyspark.__version__)
    shipped = _pyspark_jar_names()

    def keep(a: Artifact) -> bool:
        if a.group_id == "org.apache.spark":
            return a.artifact_id in SPARK_CONNECTOR_ARTIFACTS
        if a.artifact_id.startswith(SPARK_ALWAYS_EXCLUDED_PREFIXES):
            return False
        return not _shipped_by_spark(a, shipped)

    coords = [f"org.apache.spark:spark-sql-kafka-0-10_2.13:{spark_version}"]
    return [a.path for a in resolve_artifacts(f"spark-kafka-{spark_version}", coords, keep=keep)]


def spark_avro_jars(spark_version: str | None = None) -> list[Path]:
    """Jars of Spark's Avro module (``from_avro``/``to_avro``, ``format("avro")``), for
    ``spark.jars``.

    Resolves ``org.apache.spark:spark-avro_2.13:<version>`` with its transitive dependencies,
    minus what Spark already has on its class path, filtered as
    :func:`spark_kafka_connector_jars` does: every ``org.apache.spark`` artifact but
    ``spark-avro`` itself, Scala/SLF4J/log4j, and any artifact whose jar pyspark ships (Avro's
    own ``avro``, ``avro-mapred``, ...). What remains is typically ``spark-avro`` alone.

    Args:
        spark_version: spark-avro version; default: the version chosen for the Kafka connector
            (both are modules of one Spark release): the installed ``pyspark.__version__``,
            or, when Central does not have that one, the newest release of the same major
            version below it, or ``$SPARK_KAFKA_PY_CONNECTOR_VERSION``.

    Returns:
        Absolute jar paths, joined with ``,`` for ``spark.jars``.

    Raises:
        JarResolutionError: Maven failed (e.g. that version of spark-avro is not on Central) or
            no fitting version exists.
    """
    if spark_version is None:
        import pyspark

        spark_version = _connector_version(pyspark.__version__)
    shipped = _pyspark_jar_names()

    def keep(a: Artifact) -> bool:
        if a.group_id == "org.apache.spark":
            return a.artifact_id == "spark-avro_2.13"
        if a.artifact_id.startswith(SPARK_ALWAYS_EXCLUDED_PREFIXES):
            return False
        return not _shipped_by_spark(a, shipped)

    coords = [f"org.apache.spark:spark-avro_2.13:{spark_version}"]
    return [a.path for a in resolve_artifacts(f"spark-avro-{spark_version}", coords, keep=keep)]


def spark_protobuf_jars(spark_version: str | None = None) -> list[Path]:
    """Jars of Spark's Protobuf module (``from_protobuf``/``to_protobuf``), for ``spark.jars``.

    Resolves ``org.apache.spark:spark-protobuf_2.13:<version>`` with its transitive
    dependencies, filtered as :func:`spark_avro_jars` does: every ``org.apache.spark`` artifact
    but ``spark-protobuf`` itself, Scala/SLF4J/log4j, and any artifact whose jar pyspark ships.
    spark-protobuf shades its protobuf-java, so what remains is typically ``spark-protobuf``
    alone.

    ``$SPARK_KAFKA_PY_SPARK_PROTOBUF_JARS`` (:data:`SPARK_PROTOBUF_JARS_ENV`), when set, wins:
    jars of spark-protobuf obtained elsewhere (built from Spark's source for the installed
    pyspark, say, where Maven Central does not serve the module), comma-separated paths, taken
    as they are.

    Args:
        spark_version: spark-protobuf version; default: the version chosen for the Kafka
            connector (see :func:`spark_avro_jars`). Ignored when the variable is set.

    Returns:
        Absolute jar paths, joined with ``,`` for ``spark.jars``.

    Raises:
        JarResolutionError: Maven failed (e.g. that version of spark-protobuf is not on
            Central) or no fitting version exists; or a path the variable names is not a file.
    """
    override = os.environ.get(SPARK_PROTOBUF_JARS_ENV, "").strip()
    if override:
        paths = [Path(p.strip()).resolve() for p in override.split(",") if p.strip()]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise JarResolutionError(
                f"{SPARK_PROTOBUF_JARS_ENV} names jars that are not files: {', '.join(missing)}"
            )
        return paths
    if spark_version is None:
        import pyspark

        spark_version = _connector_version(pyspark.__version__)
    shipped = _pyspark_jar_names()

    def keep(a: Artifact) -> bool:
        if a.group_id == "org.apache.spark":
            return a.artifact_id == "spark-protobuf_2.13"
        if a.artifact_id.startswith(SPARK_ALWAYS_EXCLUDED_PREFIXES):
            return False
        return not _shipped_by_spark(a, shipped)

    coords = [f"org.apache.spark:spark-protobuf_2.13:{spark_version}"]
    return [a.path for a in resolve_artifacts(f"spark-protobuf-{spark_version}", coords, keep=keep)]
