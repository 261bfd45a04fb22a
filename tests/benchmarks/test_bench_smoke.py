"""The benchmark scripts and ``spark-kafka-py bench`` run end to end at a tiny scale.

Smoke tests only: they check that every benchmark runs against a real broker and real Spark
and reports both systems, never how fast anything is (timings are not asserted).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.harness import BenchResult, format_table
from spark_kafka_py.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
BENCH_SCRIPTS = {"batch_read.py", "decoder.py", "streaming.py", "write.py"}


def test_table_has_both_systems_and_the_ratio():
    r = BenchResult("batch", "none", "pykafka", "kafka (built-in)", 1000, 0.116, 0.5, 1.0)
    table = format_table([r])
    assert (
        "| batch | none | pykafka | 2,000 | 0.2 | kafka (built-in) | 1,000 | 0.1 | 2.00 |" in table
    )
    assert r.ratio == 2.0
    missing = BenchResult("decoder", "none", "ours", "peer", 10, 0.0, 1.0, None, note="absent")
    assert "| - |" in format_table([missing]) and "absent" in format_table([missing])


def test_cli_registers_bench():
    args = build_parser().parse_args(["bench", "decoder", "--records", "10"])
    assert args.which == ["decoder"] and args.records == 10 and callable(args.func)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_scripts_show_help(script):
    out = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    if script.name in BENCH_SCRIPTS:  # the front ends of `spark-kafka-py bench`
        assert "--records" in out.stdout


@pytest.mark.integration
def test_bench_runs_every_benchmark_at_tiny_scale(kafka_bootstrap, tmp_path):
    report = tmp_path / "bench.json"
    cmd = [
        sys.executable, "-m", "spark_kafka_py.cli", "bench", "all",
        "--records", "400", "--codecs", "lz4", "--repeat", "1",
        "--max-offsets-per-trigger", "200", "--planning-partitions", "3",
        "--bootstrap-servers", kafka_bootstrap, "--json", str(report),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-5000:]
    assert "| batch | lz4 | pykafka |" in out.stdout
    assert "| decoder | lz4 |" in out.stdout
    data = json.loads(report.read_text())
    kinds = {(r["bench"], r["case"]) for r in data["results"]}
    assert {("batch", "lz4"), ("decoder", "lz4"), ("stream", "maxOffsetsPerTrigger=200")} <= kinds
    assert ("planning", "3 partitions") in kinds
    # the stream benchmark's three sources (test_bench_stream_limit.py's in-process run of it
    # is in the long run): each counted every record, in more than one micro-batch
    runs = data["stream_runs"]
    assert {r["source"] for r in runs} == {"pykafka_stream_limit", "pykafka", "kafka"}, runs
    for r in runs:
        assert r["rows"] == 400 and r["batches"] >= 2 and r["durations_ms"]["triggerExecution"] > 0
    assert "stream-limit" in {r["bench"] for r in data["results"]}
    # the limit column: pre-built Arrow batches of pykafka's sizes, the same rows
    assert "| batch | lz4 | pykafka |" in out.stdout and "limit (pre-built Arrow)" in out.stdout
    assert "pykafka/limit" in out.stdout
    (limit,) = [r for r in data["results"] if r["peer"] == "limit (pre-built Arrow)"]
    assert limit["case"] == "lz4" and limit["peer_s"] > 0 and limit["ratio"] > 0
    assert limit["rows"] == {"pykafka": 400, "limit": 400}
    for r in data["results"]:
        if r["bench"] in ("batch", "decoder") and r["peer_s"] is not None:
            assert r["ours_s"] > 0 and r["ratio"] > 0
    assert data["env"]["kafka broker/tools"] == "4.3.0"
