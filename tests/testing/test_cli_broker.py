"""``spark-kafka-py broker start|status|stop`` with a real, detached broker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_kafka_py.testing.jars import cache_dir, kafka_jars
from spark_kafka_py.testing.tools import create_topic, list_topics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spark_kafka_py.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=180,
        check=False,
    )


def test_broker_start_status_stop(tmp_path: Path) -> None:
    kafka_jars()  # resolved into the real cache; the CLI's private cache links to it
    private = tmp_path / "cache"
    private.mkdir()
    (private / "jars").symlink_to(cache_dir() / "jars")
    env = {**os.environ, "SPARK_KAFKA_PY_CACHE": str(private)}

    assert _cli(env, "broker", "status").returncode == 1
    started = _cli(env, "broker", "start")
    try:
        assert started.returncode == 0, started.stderr
        bootstrap = started.stdout.strip()
        assert bootstrap.startswith("127.0.0.1:")
        status = _cli(env, "broker", "status")
        assert status.returncode == 0
        assert bootstrap in status.stdout
        # Outlives the CLI process: usable from here.
        create_topic(bootstrap, "cli-topic")
        assert "cli-topic" in list_topics(bootstrap)
        again = _cli(env, "broker", "start")
        assert again.stdout.strip() == bootstrap  # idempotent: the running one
    finally:
        stopped = _cli(env, "broker", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert _cli(env, "broker", "status").returncode == 1
    assert not (private / "broker" / "state.json").exists()
