"""The short coverage-guided fuzzing run of CI: ``benchmarks/fuzz.py``, 30,000 executions
(100,000 in the long run: ``python3 -m pytest -m long``).

Seeds are captured from the test broker's real traffic through the fault proxy (a topic per
codec, a consumer group); then every target (framing, every response schema, records with
both decoders and every codec, SASL server messages, OAuth token endpoint answers) is fuzzed
under atheris in child processes, with the limits of one input: only typed errors, at most
1 s, at most 8 MiB beyond its size (peak resident memory of the fuzzing process, pyarrow's
pool). The long run and its figures are in ``docs/reliability.md``.

Under CI (``CI=true``), a missing atheris or a missing accelerated decoder fails the test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"
TARGETS = {"framing", "responses", "records", "sasl", "oauth"}


@pytest.mark.parametrize(
    "executions",
    [
        # the default run: every target fuzzed, seeds captured from the broker (issue 25 /
        # suite time: alone at load 3-6, 48 s against 63 s for 100,000; the rest is the seeds'
        # capture and the fuzzing processes' start)
        30_000,
        # long: the earlier CI figure; longer fuzzing is benchmarks/fuzz.py (docs/reliability.md)
        pytest.param(100_000, marks=pytest.mark.long),
    ],
)
def test_short_fuzz_run_finds_nothing(
    executions: int, kafka_bootstrap: str, tmp_path: Path
) -> None:
    if importlib.util.find_spec("atheris") is None:
        if IN_CI:
            pytest.fail("atheris is not installed: CI must fuzz (pip install -e '.[test]')")
        pytest.skip("atheris is not installed (pip install -e '.[fuzz]')")
    report = tmp_path / "fuzz.json"
    cmd = [
        sys.executable, str(ROOT / "benchmarks" / "fuzz.py"),
        "--executions", str(executions), "--jobs", "2",
        "--seeds", str(tmp_path / "seeds"), "--work-dir", str(tmp_path / "work"),
        "--bootstrap-servers", kafka_bootstrap, "--json", str(report),
        *(["--require-accel"] if IN_CI else []),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=840, cwd=ROOT, check=False)
    assert report.exists(), out.stdout[-3000:] + out.stderr[-3000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    results = {r["target"]: r for r in data["results"]}
    findings = [f"{t}: {f}" for t, r in results.items() for f in r["findings"]]
    assert not findings, "\n".join(findings) + "\n" + out.stdout[-3000:]
    assert set(results) == TARGETS
    assert sum(r["executions"] for r in results.values()) >= executions
    assert all(r["executions"] > 0 for r in results.values())
    # captured from the broker: the response seeds have no synthetic source
    assert data["seeds"]["responses"] > 0 and data["seeds"]["framing"] > 0
    assert out.returncode == 0, out.stderr[-3000:]
