"""The JVM of the test and benchmark harness: finding Java, compiling once, launching mains.

Everything in ``testing`` (and ``benchmarks/``, and the tests' own Java programs) that runs a
JVM or ``javac`` goes through this module:

- :func:`java_executable` / :func:`javac_executable`: ``$JAVA_HOME/bin/<tool>`` when set,
  else ``<tool>`` on ``PATH`` (Kafka 4.x and our sources need Java 17+; ``javac`` needs a JDK).
- :func:`compile_java`: ``javac --release 17`` of some source files against a class path,
  cached under ``<cache>/java/<name>-<hash>/`` (:func:`spark_kafka_py.testing.jars.cache_dir`),
  the hash being that of the sources' names and bytes, the class path and the release: a
  class is compiled once per source and class path, then found again with no ``javac`` run.
- :func:`java_command` / :func:`run_java`: ``java -Xmx<heap> ... -cp <classpath> <main>
  <args>``, with a log4j2 configuration file of :mod:`spark_kafka_py.conf` (for Kafka's code
  on the class path) and, for short-lived tools, C1 only (quicker start).

Errors are :class:`JavaError` (Java or ``javac`` missing, a compilation failed, a program
exited non-zero or timed out), with the process's output attached.

This module imports only :mod:`spark_kafka_py.conf` and :mod:`.jars`; the broker and the tools
modules build on it (``jars`` <- ``jvm`` <- ``broker``, ``tools``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from spark_kafka_py.conf import conf_path
from spark_kafka_py.testing.jars import cache_dir

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "ERROR_TAIL_CHARS",
    "JAVA_RELEASE",
    "SERVER_LOG4J",
    "TOOLS_LOG4J",
    "JavaError",
    "compile_java",
    "java_command",
    "java_executable",
    "javac_executable",
    "run_java",
]

#: ``javac --release`` of every source we compile (Kafka 4.x clients and brokers need 17).
JAVA_RELEASE = 17

#: Default timeout of one :func:`run_java`, seconds.
DEFAULT_TIMEOUT_S = 180.0

#: Characters of a process's stderr quoted in a :class:`JavaError` message.
ERROR_TAIL_CHARS = 6000

#: log4j2 configuration (in :mod:`spark_kafka_py.conf`) of short-lived Java programs: warnings
#: and errors to stderr, so that stdout carries only the program's own output.
TOOLS_LOG4J = "kafka-tools-log4j2.properties"

#: log4j2 configuration (in :mod:`spark_kafka_py.conf`) of a Kafka node: ``server.log`` in the
#: directory given by ``-Dkafka.logs.dir``.
SERVER_LOG4J = "kafka-log4j2.properties"

#: Name of the file written into a classes directory once ``javac`` succeeded.
_COMPLETE = ".complete"


class JavaError(RuntimeError):
    """Java or ``javac`` is missing, a compilation failed, or a Java program failed.

    Attributes:
        returncode: the exit code (``None`` on a timeout or when nothing ran).
        stdout: the process's standard output (text).
        stderr: the process's standard error (text).
    """

    def __init__(
        self, message: str, returncode: int | None = None, stdout: str = "", stderr: str = ""
    ) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def _jdk_tool(name: str, needs: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise JavaError(f"no {name} on PATH and no JAVA_HOME/bin/{name}: {needs}")
    return found


def java_executable() -> str:
    """Path of ``java``: ``$JAVA_HOME/bin/java`` when it exists, else ``java`` on ``PATH``.

    Raises:
        JavaError: no Java found.
    """
    return _jdk_tool("java", "Kafka and its tools need Java 17+")


def javac_executable() -> str:
    """Path of ``javac``: ``$JAVA_HOME/bin/javac`` when it exists, else ``javac`` on ``PATH``.

    Raises:
        JavaError: no ``javac`` found (a JRE without a JDK).
    """
    return _jdk_tool("javac", "a JDK 17+ (not just a JRE) is needed to compile Java sources")


def compile_java(
    sources: Sequence[Path | Traversable], classpath: str, *, release: int = JAVA_RELEASE
) -> Path:
    """Compile ``sources`` against ``classpath`` once; return the directory of their classes.

    The classes go to ``<cache>/java/<first source's stem>-<hash>/``, where the hash (SHA-256,
    16 hex digits) covers every source's file name and bytes, ``classpath`` and ``release``.
    A directory is used only once ``javac`` succeeded (a marker file is written last, and the
    directory renamed into place), so a failed or concurrent compilation never leaves a
    half-written one behind; when two processes compile the same sources at once, one wins.

    Args:
        sources: ``.java`` files (paths, or package resources from ``importlib.resources``).
        classpath: ``javac -cp`` value (``os.pathsep``-separated), e.g.
            :func:`spark_kafka_py.testing.jars.kafka_classpath`; may be empty.
        release: ``javac --release``.

    Returns:
        The classes directory, to put on a ``java -cp`` beside ``classpath``.

    Raises:
        ValueError: no sources.
        JavaError: ``javac`` missing, or it failed (message has its stderr).
    """
    if not sources:
        raise ValueError("compile_java needs at least one source file")
    texts = [(source.name, source.read_bytes()) for source in sources]
    digest = hashlib.sha256(f"release={release}\0classpath={classpath}\0".encode())
    for name, text in texts:
        digest.update(name.encode() + b"\0" + len(text).to_bytes(8, "big") + text)
    stem = texts[0][0].removesuffix(".java")
    out_dir = cache_dir() / "java" / f"{stem}-{digest.hexdigest()[:16]}"
    if (out_dir / _COMPLETE).is_file():
        return out_dir
    javac = javac_executable()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{stem}-", dir=out_dir.parent))
    try:
        src_dir = work / "src"
        classes = work / "classes"
        src_dir.mkdir()
        files = []
        for name, text in texts:
            (src_dir / name).write_bytes(text)
            files.append(str(src_dir / name))
        cmd = [javac, "-nowarn", "--release", str(release), "-d", str(classes)]
        if classpath:
            cmd += ["-cp", classpath]
        proc = subprocess.run([*cmd, *files], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise JavaError(
                f"javac {' '.join(name for name, _ in texts)} exited {proc.returncode}:\n"
                f"{proc.stderr[-ERROR_TAIL_CHARS:]}",
                proc.returncode,
                proc.stdout,
                proc.stderr,
            )
        (classes / _COMPLETE).write_text("ok", encoding="utf-8")
        shutil.rmtree(out_dir, ignore_errors=True)  # a half-written one from a killed run
        try:
            classes.rename(out_dir)
        except OSError:
            if not (out_dir / _COMPLETE).is_file():  # not a concurrent compile that won
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_dir


def java_command(
    main_class: str,
    args: Sequence[str] = (),
    *,
    classpath: str,
    heap: str = "256m",
    fast_start: bool = True,
    log4j_config: str | None = TOOLS_LOG4J,
    jvm_options: Sequence[str] = (),
) -> list[str]:
    """The command line ``java <options> -cp classpath main_class *args``.

    Options: ``-Xmx<heap>``, the serial collector (small heaps, two cores), headless, then
    ``jvm_options``, ``-XX:TieredStopAtLevel=1`` with ``fast_start`` and
    ``-Dlog4j2.configurationFile=<conf/log4j_config>`` unless ``log4j_config`` is ``None``.

    Args:
        main_class: fully qualified Java class with ``main``.
        args: the program's arguments.
        classpath: ``java -cp`` value (``os.pathsep``-separated).
        heap: ``-Xmx`` of the JVM (``-Xmx`` syntax, e.g. ``512m``).
        fast_start: C1 only: starts faster, runs slower (short tools; off for benchmarks and
            servers).
        log4j_config: a file name of :mod:`spark_kafka_py.conf` (:data:`TOOLS_LOG4J`,
            :data:`SERVER_LOG4J`), or ``None`` for none.
        jvm_options: more JVM options (``-Xss1m``, ``-Dkey=value`` ...).

    Raises:
        JavaError: no Java found.
        FileNotFoundError: no such log4j2 configuration file.
    """
    cmd = [
        java_executable(),
        f"-Xmx{heap}",
        "-XX:+UseSerialGC",
        "-Djava.awt.headless=true",
        *jvm_options,
    ]
    if fast_start:
        cmd.append("-XX:TieredStopAtLevel=1")
    if log4j_config is not None:
        cmd.append(f"-Dlog4j2.configurationFile={conf_path(log4j_config)}")
    return [*cmd, "-cp", classpath, main_class, *args]


def run_java(
    main_class: str,
    args: Sequence[str],
    *,
    classpath: str,
    input: str | bytes | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    heap: str = "256m",
    fast_start: bool = True,
    log4j_config: str | None = TOOLS_LOG4J,
    check: bool = True,
    jvm_options: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run :func:`java_command` to its end and return its output as text.

    Args:
        main_class, args, classpath, heap, fast_start, log4j_config, jvm_options: as for
            :func:`java_command`.
        input: written to the program's stdin (``str`` is UTF-8 encoded); stdin is empty
            otherwise.
        timeout_s: the process is killed after this many seconds.
        check: raise on a non-zero exit code.

    Returns:
        The finished process (``args`` is the command line; stdout and stderr decoded as
        UTF-8, undecodable bytes replaced).

    Raises:
        JavaError: no Java, exit code != 0 (with ``check``) or timeout; the message has the
            class, its arguments and the tail of stderr.
    """
    cmd = java_command(
        main_class,
        args,
        classpath=classpath,
        heap=heap,
        fast_start=fast_start,
        log4j_config=log4j_config,
        jvm_options=jvm_options,
    )
    data = input.encode("utf-8") if isinstance(input, str) else input
    try:
        proc = subprocess.run(
            cmd,
            input=data if data is not None else b"",
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "replace")
        err = (exc.stderr or b"").decode("utf-8", "replace")
        raise JavaError(
            f"{main_class} {' '.join(args)} timed out after {timeout_s} s\n"
            f"{err[-ERROR_TAIL_CHARS:]}",
            None,
            out,
            err,
        ) from exc
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if check and proc.returncode != 0:
        raise JavaError(
            f"{main_class} {' '.join(args)} exited {proc.returncode}\n"
            f"stderr:\n{err[-ERROR_TAIL_CHARS:]}\nstdout:\n{out[-2000:]}",
            proc.returncode,
            out,
            err,
        )
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
