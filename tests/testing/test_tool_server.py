"""The tool server (``java/ToolServer.java``): Kafka tools' main classes run one after the other
in one JVM give the exit code, stdout and stderr a JVM of their own gives; an exit through
Kafka's ``Exit`` ends the run (shutdown hooks run, nothing printed after it), a ``System.exit``
ends the server with its code, a run past its timeout kills the server, and the next run
starts a new one."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from spark_kafka_py.testing import tools
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import compile_java
from spark_kafka_py.testing.tools import (
    GET_OFFSET_SHELL,
    TOOL_SERVER_ENV,
    TOPIC_COMMAND,
    KafkaToolError,
    ProducedRecord,
    read_all,
    run_tool,
)

pytestmark = pytest.mark.integration

T = TypeVar("T")

#: A main class of ours: ``exit N`` prints then System.exit(N); ``hook N`` adds a shutdown hook
#: through Kafka's Exit, prints, Exit.exit(N), and prints again (never seen); ``cat`` copies
#: stdin to stdout; ``sleep`` sleeps a minute.
PROBE = """
package probe;

import org.apache.kafka.common.utils.Exit;

public final class Probe {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "exit":
                System.out.println("out");
                System.err.println("err");
                System.exit(Integer.parseInt(args[1]));
                break;
            case "hook":
                Exit.addShutdownHook("probe-hook", () -> System.out.println("hook ran"));
                System.out.println("before");
                try {
                    Exit.exit(Integer.parseInt(args[1]));
                } catch (Throwable t) {
                    System.err.println("caught " + t);
                }
                System.out.println("after");
                break;
            case "cat":
                System.out.write(System.in.readAllBytes());
                System.out.flush();
                break;
            case "throw":
                throw new IllegalStateException("probe failed");
            default:
                Thread.sleep(60_000);
        }
    }
}
"""


#: The time stamp of a log4j line (``[2026-11-27 11:23:34,706] ERROR ...``).
_LOG_TIME = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\]")


@pytest.fixture(scope="module")
def probe_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    source = tmp_path_factory.mktemp("probe") / "Probe.java"
    source.write_text(PROBE, encoding="utf-8")
    classes = compile_java([source], kafka_classpath(KAFKA_VERSION))
    return os.pathsep.join([str(classes), tools._tool_server_classpath()])


@pytest.fixture
def server(probe_classpath: str) -> Iterator[tools._ToolServer]:
    started = tools._ToolServer(probe_classpath)
    yield started
    started.close()


def _both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], object]) -> tuple[object, object]:
    """``run()`` on the tool server, then in JVMs of their own."""
    monkeypatch.setenv(TOOL_SERVER_ENV, "1")
    served = run()
    monkeypatch.setenv(TOOL_SERVER_ENV, "0")
    alone = run()
    return served, alone


def test_runs_equal_a_jvm_of_their_own(
    kafka_bootstrap: str, new_topic: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [
        (TOPIC_COMMAND, ["--version"]),
        (TOPIC_COMMAND, ["--no-such-option"]),
        (TOPIC_COMMAND, ["--bootstrap-server", kafka_bootstrap, "--describe", "--topic", "nx"]),
        (GET_OFFSET_SHELL, ["--bootstrap-server", kafka_bootstrap, "--topic", "nx-2"]),
    ]
    # Java 17 replaces a reflective call by a generated accessor after 15 calls, and the
    # frame it prints has no module (the fresh-clone run of 2026-11-27 failed here after a
    # suite's worth of runs): the server makes its 16th and later calls before the cases
    monkeypatch.setenv(TOOL_SERVER_ENV, "1")
    for _ in range(16):
        run_tool(TOPIC_COMMAND, ["--version"])
    for main_class, args in cases:

        def one(main_class: str = main_class, args: list[str] = args) -> tuple[int, str, str]:
            proc = run_tool(main_class, args, check=False)
            return proc.returncode, proc.stdout, _LOG_TIME.sub("[time]", proc.stderr)

        served, alone = _both(monkeypatch, one)
        assert served == alone, (main_class, args)
    assert tools._tool_server is not None and not tools._tool_server.dead

    topic = new_topic(partitions=2)
    records = [ProducedRecord(f"k{i}", f"v{i} ä", [("h", b"\x00")], i % 2) for i in range(20)]
    monkeypatch.setenv(TOOL_SERVER_ENV, "1")
    tools.produce(kafka_bootstrap, topic, records)
    served, alone = _both(monkeypatch, lambda: read_all(kafka_bootstrap, topic))
    assert served == alone
    assert sorted((r.key, r.value) for r in served) == sorted(
        (f"k{i}".encode(), f"v{i} ä".encode()) for i in range(20)
    )
    with pytest.raises(KafkaToolError, match="exited 2") as caught:  # ReadAll's Exit.exit(2)
        read_all(kafka_bootstrap, topic + "-missing")
    assert "unknown topic" in caught.value.stderr


def test_exit_hooks_system_exit_and_timeout(server: tools._ToolServer, tmp_path: Path) -> None:
    assert server.run("probe.Probe", ["cat"], "a\tb ä\n".encode(), 60) == (0, "a\tb ä\n", "")
    code, out, err = server.run("probe.Probe", ["hook", "4"], b"", 60)
    assert (code, out, err) == (4, "before\nhook ran\n", "")
    code, out, err = server.run("probe.Probe", ["throw"], b"", 60)
    assert code == 1 and out == ""
    assert err.startswith('Exception in thread "main" java.lang.IllegalStateException: probe')
    assert "ToolServer" not in err
    assert not server.dead
    assert server.run("probe.Probe", ["exit", "3"], b"", 60) == (3, "out\n", "err\n")
    assert server.dead and server.proc.returncode == 3

    again = tools._ToolServer(server.classpath)
    try:
        with pytest.raises(KafkaToolError, match="timed out after 3 s") as caught:
            again.run("probe.Probe", ["sleep"], b"", 3)
        assert caught.value.returncode is None
        assert again.dead and again.proc.poll() is not None
    finally:
        again.close()


def test_busy_server_and_other_class_paths_run_alone(
    probe_classpath: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOOL_SERVER_ENV, "1")
    assert tools._run_on_tool_server(
        TOPIC_COMMAND, ["--version"], kafka_classpath(KAFKA_VERSION), None, 60
    )
    # not on the server's class path: a JVM of its own
    assert tools._run_on_tool_server("probe.Probe", ["cat"], probe_classpath, None, 60) is None
    with tools._tool_server_lock:  # another thread's run
        assert (
            tools._run_on_tool_server(
                TOPIC_COMMAND, ["--version"], kafka_classpath(KAFKA_VERSION), None, 60
            )
            is None
        )
