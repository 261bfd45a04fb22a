"""Issue 23's findings as user-level tests: an exactly-once Kafka -> Spark -> Kafka query
(``deliveryGuarantee=exactly-once``, tests/faults/_eo_job.py) on a real broker and real Spark,
in the runs of events where today's protocol breaks its guarantee (docs/sink.md,
"Exactly-once"). Each test asserts the behaviour the issue requires, so each failed before
its fix.

1. A micro-batch slower than ``kafka.transaction.timeout.ms`` fails with one error that says
   what to change; nothing of it is visible; a restart with a larger timeout delivers.
2. The driver killed after recording the batch as being committed, before any EndTxn, and
   restarted after the broker aborted every transaction: the restart redoes the batch.
3. The driver killed after the first EndTxn, restarted after the others were aborted: every
   restart fails loudly naming the committed and the lost transactions, until
   ``recoverPartialBatch=<batch>`` commits a replay of the lost tasks only.
4. A new checkpoint reusing a prefix, reaching the same batch id: refused, not dropped.
5. Fewer tasks after a restart: the ids no longer used are not left open.
6. The commit log deleted between a sink commit and Spark's: refused, never a duplicate.
7. A commit log with ``cleanup.policy=delete``: refused.

Set-up: one shared 4-partition input of 200 records ``k<i>``/``<i>``; output ``out-<i>``
keyed ``k<i>``; ``maxOffsetsPerTrigger=100`` (2 micro-batches, 4 tasks each) unless a test
says otherwise. The session broker checks for timed-out transactions every second
(``SESSION_BROKER_PROPS``). A killed driver is its own process (``kill_at_step``); restarts run
in this process on the same checkpoint with ``Trigger.AvailableNow``.

Outcomes are gathered as ``problems`` and asserted together at the end where a later step still
means something after an earlier one went wrong (the failure then lists them all).
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

from spark_kafka_py.testing.tools import (
    ProducedRecord,
    create_topic,
    delete_topic,
    list_topics,
    produce,
)

from ._eo_job import start_query
from .helpers import (
    UNFINISHED_TXN_STATES,
    assert_each_output_once,
    assert_exactly_once,
    committed_values,
    kill_at_step,
    wait_no_open_transaction,
    wait_transactions,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PARTITIONS = 4
RECORDS = 200
MAX_OFFSETS = 100
#: ``kafka.transaction.timeout.ms`` of the runs that let the broker abort transactions (ms):
#: short, yet long enough for micro-batch 0 to reach its commit with time left on a loaded
#: 2-core machine (the driver ends a batch only with a margin left on every transaction).
SHORT_TIMEOUT_MS = 20_000
#: How long a restarted in-process query may take (s).
RUN_TIMEOUT_S = 180


@pytest.fixture(scope="module")
def input_topic(kafka_bootstrap: str) -> str:
    """The keyed input, shared by the tests (each query reads it from the start)."""
    topic = f"eo-guarantees-in-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, PARTITIONS, 1)
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(f"k{i}", str(i), partition=i % PARTITIONS) for i in range(RECORDS)],
        linger_ms=0,
    )
    return topic


@pytest.fixture(autouse=True)
def _no_pause_hook() -> Iterator[None]:
    """The commit hooks must never fire in this process (the in-process runs)."""
    assert "SPARK_KAFKA_PY_EO_PAUSE_AT" not in os.environ
    yield


def _prefix(name: str) -> str:
    return f"eog-{name}-{uuid.uuid4().hex[:8]}"


def _run(spark: SparkSession, *args: str, **kwargs: object) -> BaseException | None:
    """Run the query in this process with ``Trigger.AvailableNow`` until it ends; its failure,
    or ``None``. ``kwargs``: :func:`start_query`'s (default ``max_offsets=MAX_OFFSETS``)."""
    kwargs.setdefault("max_offsets", MAX_OFFSETS)
    started = time.monotonic()
    q = start_query(spark, *args, available_now=True, **kwargs)  # type: ignore[arg-type]
    try:
        ended = q.awaitTermination(RUN_TIMEOUT_S)
    except StreamingQueryException:  # raised when the query failed: the failure is returned
        ended = True
    if not ended:
        q.stop()
        pytest.fail(f"the query did not end within {RUN_TIMEOUT_S} s")
    failure = q.exception()
    print(f"query run: {time.monotonic() - started:.1f} s, {_short(failure, 200)}")
    return failure


def _missing(text: str, *needles: str) -> list[str]:
    return [n for n in needles if n not in text]


def _short(exc: BaseException | None, chars: int = 1500) -> str:
    """The query's error in short: Spark's error class and the Python exception's line (the
    tracebacks, the query's plan and the JVM's stack are noise here)."""
    if exc is None:
        return "no error"
    text = str(exc).split("\n\tat ")[0].split("=== Streaming Query ===")[0]
    lines = text.splitlines()
    causes = [line.strip() for line in lines if re.match(r"\s*[\w.]+(Error|Exception): ", line)]
    if not causes:
        return text[:chars]
    return f"{lines[0].split(': Traceback')[0]} ... {causes[-1]}"[:chars]


# ---- 1. a micro-batch slower than the transaction timeout ----------------------------------


# long (issue 25 / suite time, 43 s): a Spark-level repeat of finding 1, which the default run
# keeps at driver level (tests/integration/test_exactly_once_commit.py,
# test_a_batch_without_time_left_fails_before_anything_is_committed: the same error text,
# nothing visible; tests/integration/test_exactly_once.py: a transaction the broker aborted)
@pytest.mark.long
def test_slow_batch_fails_naming_what_to_change_then_larger_timeout_delivers(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """One micro-batch of 4 tasks on ``local[2]``, each sleeping 10 s at its first row, with
    ``kafka.transaction.timeout.ms=6000``: the first wave's transactions (begun at their first
    write, after the sleep) are past their timeout and aborted by the broker before the second
    wave ends. Required: the query fails with one error naming the micro-batch,
    ``kafka.transaction.timeout.ms``, the broker's ``transaction.max.timeout.ms`` and
    ``maxOffsetsPerTrigger``; nothing visible; a restart with 60 s and no sleep delivers all."""
    out_topic, prefix = new_topic(partitions=PARTITIONS), _prefix("slow")
    args = (kafka_bootstrap, input_topic, out_topic, str(tmp_path / "cp"), prefix)
    problems: list[str] = []
    failure = _run(
        spark,
        *args,
        max_offsets=None,
        sleep_ms=10_000,
        options={"kafka.transaction.timeout.ms": "6000"},
    )
    assert failure is not None, "the slow micro-batch was committed: nothing to reproduce"
    text = str(failure)
    wanted = ("micro-batch", "kafka.transaction.timeout.ms", "transaction.max.timeout.ms")
    missing = _missing(text, *wanted, "maxOffsetsPerTrigger")
    if missing:
        problems.append(f"the error does not name {missing}: {_short(failure)}")
    visible = committed_values(kafka_bootstrap, out_topic)
    if visible:
        problems.append(f"{sum(visible.values())} records of the failed batch visible")

    restart = _run(
        spark, *args, max_offsets=None, options={"kafka.transaction.timeout.ms": "60000"}
    )
    if restart is not None:
        problems.append(f"the restart with a 60 s timeout failed: {_short(restart)}")
    else:
        assert_exactly_once(spark, kafka_bootstrap, out_topic, prefix, RECORDS)
    assert not problems, "\n".join(problems)


# ---- 2. and 3. the driver killed while committing, restarted past the deadline --------------


def _killed_past_deadline(
    step: str, kafka_bootstrap: str, input_topic: str, out_topic: str, cp: Path, tmp_path: Path
) -> tuple[str, int, dict[str, str]]:
    """Kill the driver at ``step`` of micro-batch 0's commit (``SHORT_TIMEOUT_MS``), then wait
    until no transaction of the prefix is open any more (the broker aborted what was not
    committed); return the prefix, the batch and the transactions' final states."""
    prefix = _prefix(step)
    args = [kafka_bootstrap, input_topic, out_topic, str(cp), prefix]
    options = ["--option", f"kafka.transaction.timeout.ms={SHORT_TIMEOUT_MS}"]
    paused, batch = kill_at_step(
        [*args, "--max-offsets", str(MAX_OFFSETS), *options], step, tmp_path
    )
    assert (paused, batch) == (step, 0)
    states = wait_transactions(
        kafka_bootstrap,
        prefix,
        lambda s: (
            len(s) == PARTITIONS
            and all(v in ("CompleteCommit", "CompleteAbort") for v in s.values())
        ),
        what="every transaction ended",
        timeout_s=SHORT_TIMEOUT_MS / 1000 + 40,
    )
    return prefix, batch, states


@pytest.mark.long  # the long-run command (README), not CI's: see pyproject's marker
def test_driver_killed_after_recording_committing_restart_past_deadline_redoes_batch(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """The driver is killed with micro-batch 0 recorded as COMMITTING and no EndTxn sent
    (``kafka.transaction.timeout.ms=20000``); the restart comes after the broker aborted all 4
    transactions, so nothing of the batch is visible. Required: the restart (on the same
    checkpoint, with the default timeout, as a user who raised it after the incident would)
    records the batch as aborted, Spark's replay redoes it, and the query ends with every
    record exactly once."""
    out_topic, cp = new_topic(partitions=PARTITIONS), tmp_path / "cp"
    prefix, _, states = _killed_past_deadline(
        "committing", kafka_bootstrap, input_topic, out_topic, cp, tmp_path
    )
    assert set(states.values()) == {"CompleteAbort"}, states
    assert not committed_values(kafka_bootstrap, out_topic), "part of batch 0 visible"

    failure = _run(spark, kafka_bootstrap, input_topic, out_topic, str(cp), prefix)
    assert failure is None, f"the restart failed: {_short(failure)}"
    assert_exactly_once(spark, kafka_bootstrap, out_topic, prefix, RECORDS)


@pytest.mark.long  # the long-run command (README), not CI's: see pyproject's marker
def test_driver_killed_after_first_endtxn_fails_loudly_until_recover_partial_batch(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """The driver is killed after the first of micro-batch 0's 4 EndTxn
    (``kafka.transaction.timeout.ms=20000``) and restarted after the broker aborted the 3
    others: the batch is part visible, which Kafka's protocol cannot undo. Required: every
    restart fails with an error saying so and naming the committed and the lost transactional
    ids; a restart with ``recoverPartialBatch=0`` commits the replay of the lost tasks only
    (the query is deterministic: no repartition, the replay's tasks read the same offsets) and
    the query ends with every record exactly once."""
    out_topic, cp = new_topic(partitions=PARTITIONS), tmp_path / "cp"
    prefix, batch, states = _killed_past_deadline(
        "mid-commit", kafka_bootstrap, input_topic, out_topic, cp, tmp_path
    )
    committed = sorted(t for t, s in states.items() if s == "CompleteCommit")
    lost = sorted(t for t, s in states.items() if s == "CompleteAbort")
    assert len(committed) == 1 and len(lost) == PARTITIONS - 1, states
    visible = sum(committed_values(kafka_bootstrap, out_topic).values())
    assert visible == MAX_OFFSETS // PARTITIONS, f"{visible} records of batch 0 visible"

    args = (kafka_bootstrap, input_topic, out_topic, str(cp), prefix)
    problems: list[str] = []
    for attempt in (1, 2):
        failure = _run(spark, *args)
        if failure is None:
            problems.append(f"restart {attempt} ended without an error (part visible batch)")
            break
        missing = _missing(str(failure), "part visible", *committed, *lost)
        if missing:
            problems.append(f"restart {attempt}'s error does not name {missing}: {_short(failure)}")
    failure = _run(spark, *args, options={"recoverPartialBatch": str(batch)})
    if failure is not None:
        problems.append(f"the restart with recoverPartialBatch={batch} failed: {_short(failure)}")
    else:
        assert_exactly_once(spark, kafka_bootstrap, out_topic, prefix, RECORDS)
    assert not problems, "\n".join(problems)


# ---- 4. a prefix reused by a new checkpoint, at an equal batch id ----------------------------


# long (issue 25 / suite time, 20 s): the refusal (_check_same_query, whatever the batch id)
# stays in the default run through tests/integration/test_exactly_once.py's
# test_a_new_checkpoint_with_a_used_prefix_fails_naming_it ("belongs to another query")
@pytest.mark.long
def test_prefix_reused_by_new_checkpoint_at_equal_batch_id_is_refused(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """Query A (prefix P, checkpoint C1) commits its only micro-batch, 0. Query B, same P, a new
    checkpoint C2 and an output of its own, reaches its micro-batch 0 too. Required: B fails
    naming P and the checkpoint (not: exit 0 with its batch aborted as a "replay"); A's output
    stays exactly once, nothing of B visible."""
    prefix = _prefix("reuse")
    out_a, out_b = new_topic(partitions=PARTITIONS), new_topic(partitions=PARTITIONS)
    a = _run(
        spark, kafka_bootstrap, input_topic, out_a, str(tmp_path / "c1"), prefix, max_offsets=None
    )
    assert a is None, f"query A failed: {_short(a)}"
    assert_exactly_once(spark, kafka_bootstrap, out_a, prefix, RECORDS)

    b = _run(
        spark, kafka_bootstrap, input_topic, out_b, str(tmp_path / "c2"), prefix, max_offsets=None
    )
    problems: list[str] = []
    if b is None:
        problems.append(f"query B on a new checkpoint with prefix {prefix!r} ended without error")
    elif missing := _missing(str(b), prefix, "checkpoint"):
        problems.append(f"query B's error does not name {missing}: {_short(b)}")
    visible_b = sum(committed_values(kafka_bootstrap, out_b).values())
    problems += [f"{visible_b} records of query B visible"] if visible_b else []
    assert not problems, f"{chr(10).join(problems)}\n(query B's output: {visible_b} records)"
    assert_each_output_once(spark, kafka_bootstrap, out_a, RECORDS)


# ---- 5. fewer tasks after a restart ----------------------------------------------------------


@pytest.mark.long  # the long-run command (README), not CI's: see pyproject's marker
def test_fewer_tasks_after_restart_leave_no_transaction_open(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """The driver (``repartition(8)``: 8 write tasks, ``kafka.transaction.timeout.ms=600000``)
    is killed before committing micro-batch 0: 8 transactions open. The restart runs
    ``repartition(4)`` to the end. Required: right after it, no transaction of the prefix is
    open (within 10 s, not the 10 minutes of the timeout), and ``read_committed`` readers see
    every record exactly once."""
    out_topic, cp, prefix = new_topic(partitions=PARTITIONS), tmp_path / "cp", _prefix("fewer")
    args = [kafka_bootstrap, input_topic, out_topic, str(cp), prefix]
    timeout = {"kafka.transaction.timeout.ms": "600000"}
    first = ["--max-offsets", str(MAX_OFFSETS), "--repartition", "8"]
    paused = kill_at_step(
        [*args, *first, "--option", "kafka.transaction.timeout.ms=600000"],
        "before-commit",
        tmp_path,
    )
    assert paused == ("before-commit", 0)
    states = wait_transactions(
        kafka_bootstrap,
        prefix,
        lambda s: [t for t, v in s.items() if v == "Ongoing"] != [],
        what="open",
        timeout_s=30,
    )
    ongoing = sorted(t for t, v in states.items() if v == "Ongoing")
    assert {f"{prefix}-{i}" for i in range(4, 8)} <= set(ongoing), states

    failure = _run(spark, *args, repartition=4, options=timeout)
    assert failure is None, f"the restart failed: {_short(failure)}"
    ended = time.monotonic()
    problems: list[str] = []
    try:
        wait_no_open_transaction(kafka_bootstrap, prefix, timeout_s=10)
    except AssertionError:
        now = wait_transactions(kafka_bootstrap, prefix, lambda _: True, what="listed")
        left = sorted(t for t, v in now.items() if v in UNFINISHED_TXN_STATES)
        problems.append(
            f"{time.monotonic() - ended:.0f} s after the restarted query ended, transactions "
            f"{left} are still open (kafka.transaction.timeout.ms=600000)"
        )
    try:
        assert_each_output_once(spark, kafka_bootstrap, out_topic, RECORDS)
    except AssertionError as exc:
        problems.append(f"right after the restart: {exc}")
    assert not problems, "\n".join(problems)


# ---- 6. and 7. the commit log --------------------------------------------------------------


def test_deleted_commit_log_fails_naming_it_and_never_duplicates(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """The driver is killed after the sink committed micro-batch 0 and before Spark recorded
    it (so Spark replays batch 0), and the query's commit log topic is deleted. Required: the
    restart fails with an error naming the topic and saying the commit log was lost (it cannot
    tell a replay of a committed batch from a new one any more), and ``read_committed`` sees no
    record twice: a lost log never yields duplicates silently (today it is recreated empty and
    the replay of batch 0 is committed a second time)."""
    out_topic, cp, prefix = new_topic(partitions=PARTITIONS), tmp_path / "cp", _prefix("nolog")
    log_topic = f"eog-commits-{uuid.uuid4().hex[:8]}"
    args = [kafka_bootstrap, input_topic, out_topic, str(cp), prefix]
    paused = kill_at_step(
        [*args, "--max-offsets", str(MAX_OFFSETS), "--option", f"commitLogTopic={log_topic}"],
        "after-commit",
        tmp_path,
    )
    assert paused == ("after-commit", 0)
    before = committed_values(kafka_bootstrap, out_topic)
    assert sum(before.values()) == MAX_OFFSETS and max(before.values()) == 1, before
    delete_topic(kafka_bootstrap, log_topic)
    deadline = time.monotonic() + 60
    while log_topic in list_topics(kafka_bootstrap):
        assert time.monotonic() < deadline, f"{log_topic} not deleted within 60 s"
        time.sleep(1)

    failure = _run(spark, *args, options={"commitLogTopic": log_topic})
    problems: list[str] = []
    if failure is None:
        problems.append(f"the restart ended without an error after {log_topic!r} was deleted")
    elif missing := _missing(str(failure), log_topic, "commit log"):
        problems.append(f"the restart's error does not name {missing}: {_short(failure)}")
    values = committed_values(kafka_bootstrap, out_topic)
    twice = sorted(v for v, n in values.items() if n > 1)
    if twice:
        problems.append(
            f"read_committed: {sum(values.values())} records, {len(twice)} values twice "
            f"(e.g. {twice[:5]})"
        )
    assert not problems, "\n".join(problems)


def test_commit_log_with_cleanup_policy_delete_is_refused(
    spark: SparkSession,
    kafka_bootstrap: str,
    input_topic: str,
    new_topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    """The commit log topic exists with ``cleanup.policy=delete`` (its records would expire,
    and with them what the driver knows of committed batches). Required: the query fails at
    its start or first commit naming the topic and ``cleanup.policy``; nothing visible."""
    out_topic, prefix = new_topic(partitions=PARTITIONS), _prefix("delete-policy")
    log_topic = f"eog-commits-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, log_topic, 1, 1, {"cleanup.policy": "delete"})
    failure = _run(
        spark,
        kafka_bootstrap,
        input_topic,
        out_topic,
        str(tmp_path / "cp"),
        prefix,
        max_offsets=None,
        options={"commitLogTopic": log_topic},
    )
    problems: list[str] = []
    if failure is None:
        problems.append(f"the query ran to the end on {log_topic!r} (cleanup.policy=delete)")
    elif missing := _missing(str(failure), log_topic, "cleanup.policy"):
        problems.append(f"the error does not name {missing}: {_short(failure)}")
    visible = sum(committed_values(kafka_bootstrap, out_topic).values())
    problems += [f"{visible} records visible"] if visible else []
    assert not problems, "\n".join(problems)
