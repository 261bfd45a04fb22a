"""``spark-kafka-py bench pushdown``: the table, and the benchmark end to end at a tiny scale
(smoke test: both sources ran every query and agreed on its count; pykafka fetched only the
matching records of the partition and offset queries; never how fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import pushdown
from spark_kafka_py.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_cli_registers_pushdown_with_its_own_defaults():
    args = build_parser().parse_args(["bench", "pushdown", "--hours", "2", "--offset-window", "50"])
    assert args.which == ["pushdown"] and args.hours == 2 and args.offset_window == 50
    # unset: 10M records and 8 partitions for pushdown, 5M and 4 for the other benchmarks
    assert args.records is None and args.partitions is None
    assert pushdown.DEFAULT_RECORDS == 10_000_000 and pushdown.DEFAULT_PARTITIONS == 8


def test_topic_is_named_by_its_shape():
    assert pushdown.topic_name(10_000_000, 8, 6.0) == "bench-pushdown-10000000r-8p-6h"
    assert pushdown.topic_name(20_000, 4, 1.5) == "bench-pushdown-20000r-4p-1.5h"


def test_table_shows_fetched_matching_and_speedup():
    ours, peer = (name for _fmt, name in pushdown.SOURCES)
    result = pushdown.PushdownResult(
        "one partition",
        "partition = 7",
        1_250_000,
        {ours: 1_250_000, peer: 10_000_000},
        {ours: 2.0, peer: 10.0},
    )
    assert result.fetched_ratio(ours) == 1.0 and result.fetched_ratio(peer) == 8.0
    assert result.speedup == 5.0
    table = pushdown.format_pushdown_table([result])
    assert "| one partition | 1,250,000 | 1,250,000 | 1.00 | 2.00 | 10,000,000 | 8.00 | " in table
    assert table.endswith("| 10.00 | 5.00 |")


@pytest.mark.integration
@pytest.mark.long  # the long-run command (README), not CI's: see pyproject's marker
def test_bench_pushdown_runs_at_tiny_scale(kafka_bootstrap, tmp_path):
    report = tmp_path / "bench.json"
    cmd = [
        sys.executable, "-m", "spark_kafka_py.cli", "bench", "pushdown",
        "--records", "20000", "--partitions", "4", "--hours", "2", "--repeat", "1",
        "--bootstrap-servers", kafka_bootstrap, "--json", str(report),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-5000:]
    assert "| one partition | 5,000 | 5,000 | 1.00 |" in out.stdout
    data = json.loads(report.read_text())
    ours, peer = (name for _fmt, name in pushdown.SOURCES)
    results = {r["query"]: r for r in data["pushdown"]}
    assert set(results) == {"last 1% by timestamp", "one partition", "offset window of 2,500"}
    for r in results.values():
        assert r["matching"] > 0 and r["seconds"][ours] > 0 and r["seconds"][peer] > 0
        assert r["fetched"][peer] == 20_000  # the built-in source reads the whole topic
        assert r["matching"] <= r["fetched"][ours] <= 2 * r["matching"]
        assert r["speedup"] > 0
    assert results["one partition"]["matching"] == 5_000
    assert results["one partition"]["fetched"][ours] == 5_000
    assert results["offset window of 2,500"]["matching"] == 2_500
    assert results["offset window of 2,500"]["fetched"][ours] == 2_500
    # 20 records per timestamp, 1,000 timestamps over 2 hours: the last 1% is 10 or 11 of them
    assert 200 <= results["last 1% by timestamp"]["matching"] <= 220
    # a later run on the same cluster finds the topic and reuses it
    assert "produced 20,000 records" in out.stdout or "reusing " in out.stdout
    assert pushdown._holds(kafka_bootstrap, "bench-pushdown-20000r-4p-2h", 20_000, 4)
    assert not pushdown._holds(kafka_bootstrap, "bench-pushdown-20000r-4p-2h", 20_001, 4)
