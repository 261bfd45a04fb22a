"""Issue 13's fault matrix: an exactly-once Kafka -> Spark -> Kafka query (``deliveryGuarantee=
exactly-once``) that crashes, is restarted on its checkpoint and run to the end leaves every
input record's output exactly once for ``read_committed`` readers, and no transaction open.

The job (tests/faults/_eo_job.py): ``readStream.format("pykafka")`` over a keyed input topic
(2,000 records ``k<i>``/``<i>`` over 4 partitions, ``maxOffsetsPerTrigger=400``: several
micro-batches) -> value ``out-<i>`` -> ``writeStream.format("pykafka")`` with
``deliveryGuarantee=exactly-once`` and a ``transactionalIdPrefix`` of its own per test.

Crash points:

- the driver SIGKILLed (its whole process group: Python driver, Spark JVM, Python workers) at
  each step of ``ExactlyOnceCommitter.commit`` (test hook ``SPARK_KAFKA_PY_EO_PAUSE_AT``):
  ``before-commit`` (tasks wrote, nothing recorded), ``mid-commit`` (batch recorded as
  committing, its first transaction committed), ``after-commit`` (all committed and recorded,
  Spark's checkpoint not: Spark replays the batch); the query is restarted in this process on
  the same checkpoint with ``Trigger.AvailableNow`` (``before-commit`` in the default run, the
  other three in the long run, their recovery paths checked at driver level or by a replay in
  the default run: ``STEPS``);
- a task attempt that fails (a UDF raising on attempt 0) and is retried by Spark;
- an executor's Python worker killed mid-write (``os._exit`` from the UDF on attempt 0);
- the leader of an output partition SIGKILLed while the query writes, on a 3-broker cluster.

Each ends with three checks: ``kafka-transactions.sh list`` shows no transaction of the prefix
unfinished (first: an open transaction would hold back the last stable offset), Kafka's Java
KafkaConsumer with ``isolation.level=read_committed`` and our reader
(``spark.read.format("pykafka")``, ``kafka.isolation.level=read_committed``) both see each
input id's output exactly once, with its key.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.admin.transactions import describe_transaction
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.errors import TransactionError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.spark.exactly_once import PAUSE_STEPS
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    create_topic,
    partition_states,
    produce,
    read_all,
    segment_files,
    wait_for_full_isr,
)

from ._eo_job import start_query
from .helpers import assert_exactly_once, spawn_eo_job, tail

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = 4
RECORDS = 2000
MAX_OFFSETS = 400
#: Seconds a driver may take to start and reach the commit hook on this loaded machine.
START_TIMEOUT_S = 300


def _produce_input(bootstrap: str, topic: str, count: int) -> None:
    produce(
        bootstrap,
        topic,
        [ProducedRecord(f"k{i}", str(i), partition=i % PARTITIONS) for i in range(count)],
        batch_size=4096,
        linger_ms=0,
    )


@pytest.fixture(scope="module")
def input_topic(kafka_bootstrap: str) -> str:
    """The keyed input topic, shared by the tests on the session's broker."""
    topic = f"eo-input-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, PARTITIONS, 1)
    _produce_input(kafka_bootstrap, topic, RECORDS)
    return topic


def _prefix(name: str) -> str:
    return f"eo-{name}-{uuid.uuid4().hex[:8]}"


def _run_to_end(spark: SparkSession, *args: str, restarts: int = 0) -> int:
    """Run the query in this process with ``Trigger.AvailableNow`` until it ends; when it fails
    and ``restarts`` allows, start it again on its checkpoint. Returns the failures seen."""
    failures = 0
    while True:
        q = start_query(spark, *args, max_offsets=MAX_OFFSETS, available_now=True)
        if not q.awaitTermination(300):
            q.stop()
            pytest.fail("the restarted query did not end within 300 s")
        if q.exception() is None:
            return failures
        failures += 1
        if failures > restarts:
            raise AssertionError(f"the query failed: {q.exception()}")


# ---- the driver killed at each step of the commit ------------------------------------------


#: The kill points of the default run, each a distinct path of the restart's recovery; the rest,
#: whose paths other default-run tests cover, run with ``python3 -m pytest -m long`` (issue 25 /
#: suite time: 45-68 s a kill point).
STEPS = [
    # kept: the driver SIGKILLed mid-stream, restarted on its checkpoint (recover() at the
    # writer's creation, the query-start fence of the killed attempt's transactions, the replay)
    pytest.param("before-commit"),
    # long: COMMITTING, nothing ended: the restart's roll-forward (_finish); in the default run
    # at driver level (test_exactly_once_commit.py, "...time_left...[committing]")
    pytest.param("committing", marks=pytest.mark.long),
    # long: COMMITTING, one transaction committed: the restart commits the open rest (_finish);
    # in the default run at driver level (test_exactly_once_commit.py, "...[mid-commit]")
    pytest.param("mid-commit", marks=pytest.mark.long),
    # long: COMMITTED recorded, Spark's checkpoint not: the replay is aborted as committed; in
    # the default run by tests/integration/test_exactly_once.py (Spark's commit file removed,
    # "...a_replay_is_not_written_twice") and the SIGKILL at after-commit by
    # test_exactly_once_guarantees.py's deleted commit log
    pytest.param("after-commit", marks=pytest.mark.long),
]
assert [p.values[0] for p in STEPS] == list(PAUSE_STEPS)  # a new kill point needs a line here


@pytest.mark.parametrize("step", STEPS)
def test_driver_killed_at_commit_step_then_restarted_exactly_once(
    step: str,
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    out_topic = new_topic(partitions=PARTITIONS)
    prefix, cp, marker, log = _prefix(step), tmp_path / "cp", tmp_path / "paused", tmp_path / "log"
    args = [kafka_bootstrap, input_topic, out_topic, str(cp), prefix]
    driver = spawn_eo_job(
        [*args, "--max-offsets", str(MAX_OFFSETS)],
        log,
        SPARK_KAFKA_PY_EO_PAUSE_AT=step,
        SPARK_KAFKA_PY_EO_PAUSE_FILE=str(marker),
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not marker.exists():
            assert driver.poll() is None, f"the driver exited {driver.returncode}:\n{tail(log)}"
            assert time.monotonic() < deadline, f"no commit reached {step}:\n{tail(log)}"
            time.sleep(0.2)
        time.sleep(0.5)  # the hook wrote the marker and sleeps: kill it there
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver's own process group only
        driver.wait(30)
    paused_step, paused_batch = marker.read_text("utf-8").split()
    assert paused_step == step
    assert int(paused_batch) < RECORDS // MAX_OFFSETS - 1  # killed before the last batch

    # restarted without the hook (the marker exists: it would not fire again either)
    _run_to_end(spark, *args)
    assert_exactly_once(spark, kafka_bootstrap, out_topic, prefix, RECORDS)
    # the crash did leave records in the log that read_committed hides: the killed attempt's
    # open transactions (fenced by the restart) or the replay's (aborted: already committed)
    uncommitted = read_all(kafka_bootstrap, out_topic)
    assert len(uncommitted) > RECORDS, f"{len(uncommitted)}: nothing was aborted"


# ---- task retries and killed Python workers ------------------------------------------------


#: Input ids whose task's attempt 0 fails: 1001 is partition 1, offset 250 (micro-batch 2);
#: 1402 is partition 2, offset 350 (micro-batch 3).
FAIL_ID, EXIT_ID = 1001, 1402


def test_failed_task_and_killed_python_worker_retried_exactly_once(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """Two task faults in one query (``local[2,4]``: Spark retries a failed task), each in a
    micro-batch of its own: attempt 0 of the task mapping input ``FAIL_ID`` raises from a UDF
    (a failed task attempt), attempt 0 of the task mapping ``EXIT_ID`` has its Python worker
    exit at once (``os._exit``: a Python worker killed while the task's writer has its
    transaction open; Spark then fails the task and destroys its other workers). The retry's
    InitProducerId fences the failed attempt's transaction; the batch commits once."""
    out_topic = new_topic(partitions=PARTITIONS)
    prefix, log = _prefix("task-faults"), tmp_path / "log"
    driver = spawn_eo_job(
        [
            kafka_bootstrap,
            input_topic,
            out_topic,
            str(tmp_path / "cp"),
            prefix,
            "--master",
            "local[2,4]",
            "--max-offsets",
            str(MAX_OFFSETS),
            "--available-now",
            "--fail-id",
            str(FAIL_ID),
            "--exit-id",
            str(EXIT_ID),
        ],
        log,
    )
    try:
        code = driver.wait(START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(30)
        pytest.fail(f"the job did not end within {START_TIMEOUT_S} s:\n{tail(log)}")
    text = log.read_text("utf-8", errors="replace")
    assert code == 0, f"the job exited {code}:\n{tail(log)}"
    lost = [line for line in text.splitlines() if "Lost task" in line]
    assert any("[batchId = 2]" in line and "PythonException" in line for line in lost), lost
    assert any("[batchId = 3]" in line and "exited unexpectedly" in line for line in lost), lost
    assert f"test fault: task attempt 0 fails at input {FAIL_ID}" in text
    assert_exactly_once(spark, kafka_bootstrap, out_topic, prefix, RECORDS)


# ---- a partition leader killed mid-transaction on 3 brokers --------------------------------

LEADER_RECORDS = 8000
#: Bytes of output partition 0 on its leader's disk before the leader is killed.
KILL_AFTER_BYTES = 12_000


def test_partition_leader_killed_mid_transaction_exactly_once(
    three_brokers: LocalKafkaCluster, spark: SparkSession, tmp_path: Path
) -> None:
    """The output's partition-0 leader is SIGKILLed once its log holds some of the query's
    writes and a transaction of the query with output partition 0 is open (DescribeTransactions
    says ``Ongoing``: the kill lands between the task's writes and the driver's EndTxn). The query
    runs as its own driver (``local[2,4]``); if it fails, it is restarted on its checkpoint in
    this process (at most twice). Then exactly once, with one broker still down."""
    cluster = three_brokers
    bootstrap = cluster.bootstrap_servers
    in_topic, out_topic = (f"eo-leader-{n}-{uuid.uuid4().hex[:8]}" for n in ("in", "out"))
    create_topic(bootstrap, in_topic, PARTITIONS, 3, {"min.insync.replicas": "2"})
    create_topic(bootstrap, out_topic, PARTITIONS, 3, {"min.insync.replicas": "2"})
    _produce_input(bootstrap, in_topic, LEADER_RECORDS)
    leader = wait_for_full_isr(bootstrap, out_topic)[0].leader
    prefix, cp, log = _prefix("leader"), tmp_path / "cp", tmp_path / "log"
    args = [bootstrap, in_topic, out_topic, str(cp), prefix]

    done = threading.Event()
    killed: list[str] = []  # the transactional id open on partition 0 at the kill
    errors: list[BaseException] = []

    def on_disk() -> int:
        files = segment_files(cluster.node(leader).data_dir, out_topic, 0)
        return sum(f.stat().st_size for f in files if f.exists())

    def open_on_partition_0(client: KafkaClient) -> str | None:
        """A transactional id of the prefix whose open transaction has output partition 0."""
        for task in range(PARTITIONS):
            tid = f"{prefix}-{task}"
            try:
                state = describe_transaction(client, tid, timeout_ms=5000)
            except TransactionError as exc:
                if exc.code != ec.TRANSACTIONAL_ID_NOT_FOUND.code:  # else: not begun yet
                    raise
                continue
            if state.state == "Ongoing" and (out_topic, 0) in state.partitions:
                return tid
        return None

    def kill_when_written() -> None:
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            with KafkaClient(ClientConfig.from_bootstrap(bootstrap)) as client:
                while True:
                    if done.is_set() or time.monotonic() > deadline:
                        return
                    if on_disk() >= KILL_AFTER_BYTES:
                        tid = open_on_partition_0(client)
                        if tid is not None:
                            cluster.kill(leader)
                            killed.append(tid)
                            return
                    time.sleep(0.05)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    killer = threading.Thread(target=kill_when_written, name="leader-killer", daemon=True)
    killer.start()
    driver = spawn_eo_job(
        [*args, "--master", "local[2,4]", "--max-offsets", "1600", "--available-now"], log
    )
    try:
        code = driver.wait(START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(30)
        code = None
    finally:
        done.set()
        killer.join(60)
    assert not errors, errors[0]
    assert killed, f"the job ended (exit {code}) before the leader was killed:\n{tail(log)}"
    assert partition_states(bootstrap, out_topic)[0].leader not in (leader, -1)
    print(f"broker {leader} killed while {killed[0]} had output partition 0 open")
    if code != 0:  # the query failed over the kill: restart it on its checkpoint
        print(f"the job exited {code} after the leader kill; restarting:\n{tail(log, 1500)}")
        _run_to_end(spark, *args, restarts=2)
    assert_exactly_once(spark, bootstrap, out_topic, prefix, LEADER_RECORDS)


@pytest.fixture(autouse=True)
def _no_pause_hook() -> Iterator[None]:
    """The hooks must never fire in this process (the in-process restarts)."""
    assert "SPARK_KAFKA_PY_EO_PAUSE_AT" not in os.environ
    yield
