"""``spark-kafka-py bench eos``: the benchmark end to end at a tiny scale (smoke test: both
modes ran, were counted and timed, the commit latency was read; never how fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import eos
from spark_kafka_py.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_cli_registers_eos():
    args = build_parser().parse_args(["bench", "eos", "--records", "10", "--per-trigger", "5"])
    assert args.which == ["eos"] and args.records == 10 and args.per_trigger == 5


def test_latency_table_shows_the_added_cost():
    latency = eos.EosLatency(
        3, 100.0, 130.0, 30.0, 150.0, 185.0, 12.0, 20.0, 2, 40.0, 55.0, 7.0, 9.0
    )
    table = eos.format_latency_table(latency)
    assert "| 3 | 100 | 130 | +30 | 150 | 185 | 12 / 20 | 2 | 40 / 55 | 7 / 9 |" in table


@pytest.mark.integration
@pytest.mark.long  # the long-run command (README), not CI's: see pyproject's marker
def test_bench_eos_runs_at_tiny_scale(kafka_bootstrap, tmp_path):
    report = tmp_path / "bench.json"
    cmd = [
        sys.executable, "-m", "spark_kafka_py.cli", "bench", "eos",
        "--records", "3000", "--per-trigger", "1000", "--repeat", "1", "--partitions", "2",
        "--bootstrap-servers", kafka_bootstrap, "--json", str(report),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-5000:]
    assert "| eos | maxOffsetsPerTrigger=1000 | exactly-once |" in out.stdout
    data = json.loads(report.read_text())
    (result,) = [r for r in data["results"] if r["bench"] == "eos"]
    assert result["records"] == 3000 and result["ours_s"] > 0 and result["peer_s"] > 0
    assert result["ratio"] > 0
    latency = data["eos_latency"]
    # 1,000 records per trigger split over two unevenly filled partitions: 3 batches or more
    assert latency["batches"] >= 3
    assert len(latency["add_batch_runs"]["exactly-once"]) == latency["batches"]
    assert len(latency["add_batch_runs"]["at-least-once"]) == latency["batches"]
    assert latency["eos_add_batch_ms"] > 0 and latency["alo_add_batch_ms"] > 0
    assert latency["end_txn_ms"] > 0 and latency["transactions"] == 2
    assert latency["commit_max_ms"] >= latency["commit_ms"] > 0
    assert latency["begin_max_ms"] >= latency["begin_ms"] > 0
