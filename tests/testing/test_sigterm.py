"""A test run ended by SIGTERM stops the brokers its fixtures started (the fixtures plugin
turns SIGTERM into Ctrl-C); before, the broker JVMs outlived the killed pytest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

INNER = """
import os, time
from pathlib import Path

def test_waits_with_a_broker(kafka_cluster_factory):
    cluster = kafka_cluster_factory(1)
    Path(os.environ["PID_FILE"]).write_text(str(cluster.nodes[0].pid))
    time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_to_pytest_stops_the_brokers_of_its_fixtures(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["spark_kafka_py.testing.fixtures"]\n')
    pid_file = tmp_path / "broker.pid"
    env = {**os.environ, "PID_FILE": str(pid_file), "PYTHONPATH": str(ROOT)}
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            str(tmp_path / "test_inner.py"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not pid_file.exists() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
        assert pid_file.exists(), run.communicate(timeout=30)[0] if run.poll() is not None else ""
        broker = int(pid_file.read_text())
        assert _alive(broker)
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=120)
        deadline = time.monotonic() + 60
        while _alive(broker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(broker), f"broker pid {broker} outlived the SIGTERMed run:\n{out}"
        assert run.returncode != 0, out
        assert "KeyboardInterrupt" in out, out
    finally:
        if run.poll() is None:
            run.kill()
        if pid_file.exists():
            with_pid = int(pid_file.read_text())
            if _alive(with_pid):
                os.kill(with_pid, signal.SIGKILL)
