"""``spark-kafka-py bench group-pause``: the table, the pause arithmetic, and the benchmark end to
end at a tiny scale (smoke test: the three protocols ran and were measured; never how fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import group_pause
from spark_kafka_py.testing.jars import selected_kafka_version

ROOT = Path(__file__).resolve().parents[2]


def test_cli_registers_group_pause() -> None:
    from spark_kafka_py.cli import build_parser

    args = build_parser().parse_args(["bench", "group-pause", "--pause-runs", "2"])
    assert args.which == ["group-pause"] and args.pause_runs == 2 and callable(args.func)


def test_gaps_and_table() -> None:
    assert group_pause._gaps([1.0, 1.2, 2.5]) == pytest.approx([0.2, 1.3])
    reads = [(1.0, {0, 1}), (1.2, {1}), (2.0, {0})]
    assert group_pause._read_times(reads, 0) == [1.0, 2.0]
    r = group_pause.PauseResult("consumer (KIP-848)", [300.0, 250.0, 900.0], [200.0] * 3)
    r.b_first_ms = [1500.0, 1400.0, 2000.0]
    table = group_pause.format_pause_table([r])
    assert "| consumer (KIP-848) | 3 | 300 | 900 | 200 | 1,500 | 2,000 |" in table


@pytest.mark.integration
# long (issue 25 / suite time, 29 s), as the other benchmarks' tiny runs besides `bench all`
# (README): the script's options and help stay in the default run (test_bench_smoke.py)
@pytest.mark.long
def test_bench_group_pause_runs_at_tiny_scale(kafka_bootstrap: str, tmp_path: Path) -> None:
    version = selected_kafka_version()
    if tuple(int(x) for x in version.split(".")) < (4, 0, 0):
        pytest.skip(f"the consumer protocol (KIP-848) needs Kafka 4.0+, broker {version}")
    report = tmp_path / "pause.json"
    cmd = [
        sys.executable, "benchmarks/group_pause.py", "--pause-runs", "1", "--partitions", "2",
        "--bootstrap-servers", kafka_bootstrap, "--json", str(report),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-5000:]
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "| 1 |" in line]
    assert [row.split("|")[1].strip() for row in rows] == list(group_pause.CASES)
    assert "load average" in out.stdout
    data = json.loads(report.read_text())
    assert [r["case"] for r in data["group_pause"]] == list(group_pause.CASES)
    for r in data["group_pause"]:
        # A kept one of the two partitions, read it before and after B joined, B read the other
        assert len(r["kept"]) == 1 and len(r["kept"][0]) == 1
        assert r["pauses_ms"][0] > 0 and r["normal_gaps_ms"][0] > 0 and r["b_first_ms"][0] > 0
