"""spark_kafka_py.testing.registry (Apicurio Registry from Maven Central) and
``spark-kafka-py registry start|status|stop``.

The real registry is started once here, by the CLI (detached, as a user would), and used
through our client; the start failure and the SIGKILL after an ignored SIGTERM are staged with a
stand-in ``java`` (a Python script), so no second JVM is needed for them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_kafka_py.schema_registry import LruCache, SchemaRegistryClient, parse_settings
from spark_kafka_py.testing.jars import cache_dir
from spark_kafka_py.testing.registry import (
    MIN_JAVA_RELEASE,
    ApicurioRegistry,
    NoSuitableJavaError,
    RegistryStartError,
    _release_of,
    apicurio_distribution,
    find_java,
    registry_answers,
)

ROOT = Path(__file__).resolve().parents[2]

#: A stand-in for ``java``: answers 200 on every path of the port given as
#: -Dquarkus.http.port, and ignores SIGTERM (so only SIGKILL stops it).
STUBBORN_JAVA = """#!{python}
import http.server, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
port = next(int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("-Dquarkus.http.port="))
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"[]")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _script(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.integration
def test_find_java_finds_a_recent_enough_one() -> None:
    java = find_java()
    release = _release_of(Path(java))
    assert release is not None and release >= MIN_JAVA_RELEASE


def test_no_recent_enough_java_is_a_clear_error() -> None:
    with pytest.raises(NoSuitableJavaError) as err:
        find_java(min_release=999)
    assert "needs Java 999 or later" in str(err.value)
    assert "SPARK_KAFKA_PY_REGISTRY_JAVA_HOME" in str(err.value)


@pytest.mark.integration
def test_a_process_that_exits_is_a_start_error_naming_its_log(tmp_path: Path) -> None:
    apicurio_distribution()  # cached after the first use
    failing = _script(tmp_path / "java", "#!/bin/sh\necho 'no such JVM option' >&2\nexit 3\n")
    registry = ApicurioRegistry(java=failing, work_dir=tmp_path / "work", start_timeout_s=30)
    with pytest.raises(RegistryStartError) as err:
        registry.start()
    assert "exited with code 3" in str(err.value)
    assert str(registry.log_path) in str(err.value)
    assert "no such JVM option" in str(err.value)
    assert registry.log_path.is_file()  # kept for the message to point at


@pytest.mark.integration
def test_stop_kills_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    apicurio_distribution()
    stubborn = _script(tmp_path / "java", STUBBORN_JAVA.format(python=sys.executable))
    registry = ApicurioRegistry(java=stubborn, start_timeout_s=30).start()
    assert registry.is_running() and registry_answers(registry.url)
    started = time.monotonic()
    registry.stop(timeout_s=0.5)
    assert not registry.is_running()
    assert registry.process is not None and registry.process.returncode == -9  # SIGKILL
    assert time.monotonic() - started < 10


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spark_kafka_py.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=240,
        check=False,
    )


@pytest.mark.integration
def test_registry_start_status_stop(tmp_path: Path) -> None:
    """The real Apicurio, detached by the CLI, used by our client, then stopped."""
    apicurio_distribution()  # into the real cache; the CLI's private cache links to it
    private = tmp_path / "cache"
    private.mkdir()
    (private / "apicurio").symlink_to(cache_dir() / "apicurio")
    env = {**os.environ, "SPARK_KAFKA_PY_CACHE": str(private)}

    assert _cli(env, "registry", "status").returncode == 1
    started = _cli(env, "registry", "start")
    state_file = private / "registry" / "state.json"
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/apis/ccompat/v7")
        status = _cli(env, "registry", "status", "-v")
        assert status.returncode == 0 and url in status.stdout
        state = json.loads(state_file.read_text(encoding="utf-8"))
        assert Path(state["log"]).is_file()
        # Outlives the CLI process: usable from here, through our client.
        client = SchemaRegistryClient(
            parse_settings({"schema.registry.url": url}), cache=LruCache()
        )
        schema_id = client.register("cli-value", '"string"')
        assert client.schema_by_id(schema_id).schema_str == '"string"'
        again = _cli(env, "registry", "start")  # already running: the same URL
        assert again.returncode == 0 and again.stdout.strip() == url
    finally:
        stopped = _cli(env, "registry", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not state_file.exists()
    assert not registry_answers(url)
    assert _cli(env, "registry", "status").returncode == 1
    help_text = _cli(env, "registry", "--help").stdout
    assert "SCHEMA_REGISTRY_URL" in help_text
