"""The broker matrix runner without running pytest: one process per release, the release in
the environment, a local broker, an existing cluster's address dropped, a summary and an exit
code."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from spark_kafka_py.testing import matrix
from spark_kafka_py.testing.jars import KAFKA_VERSION_ENV


def test_one_pytest_per_release_with_its_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[list[str], dict[str, str]]] = []

    def fake_run(cmd: list[str], *, env: dict[str, str], check: bool) -> Any:
        calls.append((cmd, env))
        return subprocess.CompletedProcess(cmd, 1 if env[KAFKA_VERSION_ENV] == "3.6.2" else 0)

    monkeypatch.setattr(matrix.subprocess, "run", fake_run)
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "elsewhere:9092")
    assert matrix.main(["--versions", "4.0.2, 3.6.2", "--", "-x"]) == 1
    assert [env[KAFKA_VERSION_ENV] for _, env in calls] == ["4.0.2", "3.6.2"]
    for cmd, env in calls:
        assert cmd[1:] == ["-m", "pytest", "-m", "broker_matrix", "tests/integration", "-x"]
        assert env["SPARK_KAFKA_PY_BROKER"] == "local"
        assert "KAFKA_BOOTSTRAP_SERVERS" not in env
    out = capsys.readouterr().out
    summary = [line.split() for line in out.splitlines() if not line.startswith("===")]
    assert [line[:3] for line in summary] == [
        ["Kafka", "4.0.2", "passed"],
        ["Kafka", "3.6.2", "FAILED"],
    ]


def test_default_releases() -> None:
    assert matrix.MATRIX_VERSIONS == ("4.4.0", "4.0.2", "3.9.1", "3.6.2")
