"""The driver process SIGKILLed mid-stream, the query restarted on its checkpoint: exactly once.

The driver runs in a process group of its own (Python driver, Spark JVM, Python workers); it
is killed with SIGKILL as soon as its checkpoint has committed two micro-batches (more are in
flight: 50 records per batch, 100 ms trigger). The query is then restarted on the same
checkpoint in this process; Spark's file sink with its log is the idempotent sink, so the
output holds every record exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from .helpers import assert_sink_holds_rounds, produce_values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]


def _committed_batches(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.is_dir() else 0


# long (issue 25 / suite time, 39 s): the driver SIGKILLed mid-stream and restarted on its
# checkpoint stays in the default run with the exactly-once Kafka sink (tests/faults/
# test_exactly_once.py, kill points before-commit and mid-commit: the source resumes from the
# checkpoint's offsets the same way whatever the sink)
@pytest.mark.long
def test_driver_killed_then_restarted_on_checkpoint_exactly_once(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(partitions=2)
    produce_values(kafka_bootstrap, topic, 600, partitions=2)
    out, cp = tmp_path / "out", tmp_path / "cp"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.faults._driver_job",
            kafka_bootstrap,
            topic,
            str(out),
            str(cp),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while _committed_batches(cp) < 2:
            assert driver.poll() is None, f"the driver exited with {driver.returncode}"
            assert time.monotonic() < deadline, "the driver committed no batch"
            time.sleep(0.1)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver's own process group only
        driver.wait(30)
    killed_at = _committed_batches(cp)
    assert killed_at < 12  # it was killed mid-stream, not after the end (600 / 50 batches)

    q = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "300")
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(cp))
        .trigger(availableNow=True)
        .start()
    )
    if not q.awaitTermination(240):
        q.stop()
        pytest.fail("the restarted query did not end within 240 s")
    assert q.exception() is None
    assert_sink_holds_rounds(spark, out, 600, 2)
