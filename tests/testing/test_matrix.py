"""The broker matrix runner without running pytest: one process per run, the release and the
feature levels in the environment, a local broker, an existing cluster's address dropped, a
summary and an exit code; the plan's transactions-v2 runs of the exactly-once tests."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from spark_kafka_py.testing import matrix
from spark_kafka_py.testing.jars import KAFKA_FEATURES_ENV, KAFKA_VERSION_ENV

ROOT = Path(__file__).resolve().parents[2]


def test_one_pytest_per_release_with_its_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[list[str], dict[str, str]]] = []

    def fake_run(cmd: list[str], *, env: dict[str, str], check: bool) -> Any:
        calls.append((cmd, env))
        return subprocess.CompletedProcess(cmd, 1 if env[KAFKA_VERSION_ENV] == "3.6.2" else 0)

    monkeypatch.setattr(matrix.subprocess, "run", fake_run)
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "elsewhere:9092")
    monkeypatch.setenv(KAFKA_FEATURES_ENV, "transaction.version=1")  # not for these runs
    # --versions alone: the broker_matrix runs only, no transactions-v2 run
    assert matrix.main(["--versions", "4.0.2, 3.6.2", "--", "-x"]) == 1
    assert [env[KAFKA_VERSION_ENV] for _, env in calls] == ["4.0.2", "3.6.2"]
    for cmd, env in calls:
        assert cmd[1:] == ["-m", "pytest", "-m", "broker_matrix", "tests/integration", "-x"]
        assert env["SPARK_KAFKA_PY_BROKER"] == "local"
        assert "KAFKA_BOOTSTRAP_SERVERS" not in env
        assert KAFKA_FEATURES_ENV not in env
    out = capsys.readouterr().out
    summary = [line.split() for line in out.splitlines() if not line.startswith("===")]
    assert [line[:3] for line in summary] == [
        ["Kafka", "4.0.2", "passed"],
        ["Kafka", "3.6.2", "FAILED"],
    ]


def test_default_releases() -> None:
    assert matrix.MATRIX_VERSIONS == ("4.4.0", "4.0.2", "3.9.1", "3.6.2")


def test_plan_has_transaction_version_2_runs_of_the_exactly_once_tests() -> None:
    runs = matrix.plan(root=ROOT)
    assert [(r.version, dict(r.features)) for r in runs] == [
        ("4.4.0", {}),
        ("4.0.2", {}),
        ("3.9.1", {}),
        ("3.6.2", {}),
        ("4.4.0", {"transaction.version": 2}),
        ("4.0.2", {"transaction.version": 2}),
    ]
    for run in runs[:4]:
        assert run.pytest_args == ("-m", "broker_matrix", "tests/integration")
    for run in runs[4:]:
        assert run.label == f"Kafka {run.version} transaction.version=2"
        selected = run.pytest_args
        assert "-m" not in selected  # whole files, not only their broker_matrix tests
        # the integration tests and issue 13's crash matrix, and any test_exactly_once*.py of
        # tests/faults present (issue 23's guarantees join when they land)
        assert {
            "tests/integration/test_exactly_once.py",
            "tests/faults/test_exactly_once.py",
        } <= set(selected)
        faults = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("tests/faults/*.py"))
        want = [f for f in faults if Path(f).name.startswith("test_exactly_once")]
        assert [s for s in selected if s.startswith("tests/faults/")] == want
        assert (
            "tests/testing/test_features.py::"
            "test_session_broker_has_the_selected_feature_levels" in selected
        )
        for s in selected:
            assert (ROOT / s.split("::")[0]).is_file(), s


def test_a_new_exactly_once_fault_test_joins_the_tv2_runs(tmp_path: Path) -> None:
    faults = tmp_path / "tests" / "faults"
    faults.mkdir(parents=True)
    for name in ("test_exactly_once.py", "test_exactly_once_guarantees.py", "test_other.py"):
        (faults / name).write_text("", encoding="utf-8")
    (run,) = matrix.plan([], ["4.4.0"], root=tmp_path)
    assert [s for s in run.pytest_args if s.startswith("tests/faults/")] == [
        "tests/faults/test_exactly_once.py",
        "tests/faults/test_exactly_once_guarantees.py",
    ]


def test_tv2_runs_format_their_brokers_with_the_features(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[list[str], dict[str, str]]] = []

    def fake_run(cmd: list[str], *, env: dict[str, str], check: bool) -> Any:
        calls.append((cmd, env))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(matrix.subprocess, "run", fake_run)
    monkeypatch.chdir(ROOT)
    assert matrix.main([]) == 0  # the whole plan
    assert [(env[KAFKA_VERSION_ENV], env.get(KAFKA_FEATURES_ENV)) for _, env in calls] == [
        ("4.4.0", None),
        ("4.0.2", None),
        ("3.9.1", None),
        ("3.6.2", None),
        ("4.4.0", "transaction.version=2"),
        ("4.0.2", "transaction.version=2"),
    ]
    assert "tests/faults/test_exactly_once.py" in calls[-1][0]
    out = capsys.readouterr().out
    assert "=== Kafka 4.0.2 transaction.version=2: " in out
    summary = [line.split() for line in out.splitlines() if not line.startswith("===")]
    assert summary[-1][:4] == ["Kafka", "4.0.2", "transaction.version=2", "passed"]

    calls.clear()
    assert matrix.main(["--tv2-versions", "4.4.0", "--", "-x"]) == 0  # those runs only
    assert [(env[KAFKA_VERSION_ENV], env[KAFKA_FEATURES_ENV]) for _, env in calls] == [
        ("4.4.0", "transaction.version=2")
    ]
    assert calls[0][0][-1] == "-x"
