"""The exactly-once driver's commit and recovery against a real broker, without Spark (issue 23):
task transactions are opened with our producer exactly as ``write_transaction`` opens them, and
:class:`~spark_kafka_py.spark.exactly_once.ExactlyOnceCommitter` commits or recovers them. What
``read_committed`` readers see is read by Kafka's own Java consumer.

The Spark-level runs of the same findings (driver killed and restarted, a new checkpoint, fewer
tasks) are in ``tests/faults/test_exactly_once_guarantees.py``.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace

import pyarrow as pa
import pytest

from spark_kafka_py.admin.transactions import describe_transaction
from spark_kafka_py.errors import ConfigError, ExactlyOnceError, UnsupportedByBrokerError
from spark_kafka_py.producer import KafkaProducer
from spark_kafka_py.producer import transactions as txn
from spark_kafka_py.producer.transactions import TransactionHandle, end_transaction
from spark_kafka_py.protocol.messages.end_txn import EndTxnRequest
from spark_kafka_py.spark import exactly_once as eo
from spark_kafka_py.spark.exactly_once import (
    ABORTED,
    COMMITTED,
    COMMITTING,
    PARTIAL,
    CommitRecord,
    ExactlyOnceCommitter,
    transactional_id,
)
from spark_kafka_py.spark.sink_options import SinkOptions, parse_sink_options
from spark_kafka_py.testing.tools import read_all

pytestmark = pytest.mark.integration


def _options(bootstrap: str, topic: str, prefix: str, **extra: str) -> SinkOptions:
    return parse_sink_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "topic": topic,
            "deliveryGuarantee": "exactly-once",
            "transactionalIdPrefix": prefix,
            "commitLogTopic": f"{prefix}-commits",
            **extra,
        }
    )


def _open(
    options: SinkOptions, tid: str, topic: str, partition: int, values: list[str], timeout_ms: int
) -> TransactionHandle:
    """A task's transaction: begun, written and flushed, left open (``write_transaction``)."""
    settings = replace(options.producer, transactional_id=tid, transaction_timeout_ms=timeout_ms)
    with KafkaProducer(settings) as producer:
        producer.begin_transaction()
        producer.append(topic, partition, None, pa.array(values), None, int(time.time() * 1000))
        return producer.prepare_commit()


def _read_committed(bootstrap: str, topic: str) -> Counter[str]:
    records = read_all(bootstrap, [topic], isolation_level="read_committed")
    return Counter((r.value or b"").decode() for r in records)


def _wait_state(committer: ExactlyOnceCommitter, tid: str, states: set[str]) -> str:
    deadline = time.monotonic() + 60
    while (s := describe_transaction(committer.client, tid, timeout_ms=10_000).state) not in states:
        assert time.monotonic() < deadline, f"{tid} still {s}"
        time.sleep(0.5)
    return s


@pytest.fixture()
def setup(kafka_bootstrap: str, new_topic: Callable[..., str]) -> Iterator[tuple[str, str, str]]:
    """``(bootstrap, output topic with 2 partitions, prefix)``."""
    yield kafka_bootstrap, new_topic(partitions=2), f"eoc-{uuid.uuid4().hex[:8]}"


def test_another_attempt_of_a_task_is_fenced_at_commit_not_the_handle(
    setup: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 4: a second attempt of task 1 (a speculative copy, a stage retry's leftover) opens
    its transaction after the driver checked the handles. Its transactional id is its own, so
    the handle it would have fenced under one id per task commits; the other attempt's
    transaction is fenced before the commit returns, and its rows are never visible."""
    bootstrap, topic, prefix = setup
    options = _options(bootstrap, topic, prefix)
    handles = [
        _open(
            options,
            transactional_id(prefix, t),
            topic,
            t,
            [f"a0-t{t}-{i}" for i in range(5)],
            600_000,
        )
        for t in (0, 1)
    ]
    other = transactional_id(prefix, 1, 1)
    assert other != handles[1].transactional_id
    competing: list[TransactionHandle] = []
    real_describe = eo.describe_transaction

    def describe_then_compete(client, tid, *, timeout_ms):  # type: ignore[no-untyped-def]
        state = real_describe(client, tid, timeout_ms=timeout_ms)
        if tid == handles[-1].transactional_id and not competing:
            competing.append(
                _open(options, other, topic, 1, [f"a1-t1-{i}" for i in range(5)], 600_000)
            )
        return state

    monkeypatch.setattr(eo, "describe_transaction", describe_then_compete)
    committer = ExactlyOnceCommitter(options)
    try:
        committer.recover()
        committer.commit(handles, 0)
        assert competing, "the competing attempt did not start"
        assert _wait_state(committer, other, {"CompleteAbort", "Empty"}) in {
            "CompleteAbort",
            "Empty",
        }
        last = committer.log.last(committer.client)
        assert last is not None and (last.batch_id, last.state) == (0, COMMITTED)
    finally:
        committer.close()
    want = Counter(f"a0-t{t}-{i}" for t in (0, 1) for i in range(5))
    assert _read_committed(bootstrap, topic) == want


def test_ids_no_longer_used_are_fenced_when_a_batch_commits(setup: tuple[str, str, str]) -> None:
    """Finding 5: a transaction of the prefix left open by an earlier run with more tasks
    (``<prefix>-7``) is fenced at the next commit, so no ``read_committed`` reader waits for its
    timeout."""
    bootstrap, topic, prefix = setup
    options = _options(bootstrap, topic, prefix)
    stale = _open(options, transactional_id(prefix, 7), topic, 0, ["stale"], 600_000)
    handle = _open(options, transactional_id(prefix, 0), topic, 1, ["fresh"], 600_000)
    committer = ExactlyOnceCommitter(options)
    try:
        committer.recover()
        committer.commit([handle], 3)
        state = describe_transaction(committer.client, stale.transactional_id, timeout_ms=10_000)
        assert state.state != "Ongoing"
        assert state.producer_epoch > stale.producer_epoch
    finally:
        committer.close()
    assert _read_committed(bootstrap, topic) == Counter(["fresh"])


def test_a_batch_without_time_left_fails_before_anything_is_committed(
    setup: tuple[str, str, str],
) -> None:
    """Finding 1: a transaction with less than the margin left (10 s timeout, 5 s margin, 6 s
    gone) is not committed: every handle is aborted, nothing recorded, the error names the
    batch, its duration, both timeouts and what to change."""
    bootstrap, topic, prefix = setup
    options = _options(bootstrap, topic, prefix, **{"kafka.transaction.timeout.ms": "10000"})
    assert eo.commit_margin_ms(10_000) == 5000
    handles = [
        _open(options, transactional_id(prefix, t), topic, t, [f"late-{t}"], 10_000) for t in (0, 1)
    ]
    time.sleep(6)
    committer = ExactlyOnceCommitter(options)
    try:
        committer.recover()
        with pytest.raises(ExactlyOnceError) as info:
            committer.commit(handles, 5)
        text = str(info.value)
        for part in (
            "micro-batch 5",
            "been open",
            "kafka.transaction.timeout.ms=10000",
            "transaction.max.timeout.ms",
            "maxOffsetsPerTrigger",
        ):
            assert part in text, (part, text)
        for h in handles:
            assert _wait_state(committer, h.transactional_id, {"CompleteAbort"})
        assert committer.log.last(committer.client) is None
    finally:
        committer.close()
    assert _read_committed(bootstrap, topic) == Counter()


def test_recovery_of_a_batch_the_broker_aborted_records_it_aborted(
    setup: tuple[str, str, str],
) -> None:
    """Finding 2: the driver died after recording COMMITTING and before any EndTxn; the
    restart comes after the broker aborted every transaction. Recovery records the batch as
    aborted (Spark replays it) instead of failing every restart."""
    bootstrap, topic, prefix = setup
    options = _options(bootstrap, topic, prefix)
    handles = [
        _open(options, transactional_id(prefix, t), topic, t, [f"dead-{t}"], 2000) for t in (0, 1)
    ]
    committer = ExactlyOnceCommitter(options)
    try:
        committer.log.ensure_topic(committer.client)
        committer.log.append(CommitRecord(prefix, 4, COMMITTING, tuple(handles)))
        for h in handles:
            _wait_state(committer, h.transactional_id, {"CompleteAbort"})
        committer.recover()
        last = committer.log.last(committer.client)
        assert last is not None and (last.batch_id, last.state) == (4, ABORTED)
        # the replay of batch 4 then commits normally
        replay = [
            _open(options, transactional_id(prefix, t), topic, t, [f"replay-{t}"], 600_000)
            for t in (0, 1)
        ]
        committer.commit(replay, 4)
    finally:
        committer.close()
    assert _read_committed(bootstrap, topic) == Counter(["replay-0", "replay-1"])


@pytest.mark.parametrize("ended", [0, 1], ids=["committing", "mid-commit"])
def test_recovery_of_a_batch_recorded_committing_with_time_left_commits_it(
    setup: tuple[str, str, str], ended: int
) -> None:
    """The driver died after recording COMMITTING, before any EndTxn (``committing``) or after
    the first (``mid-commit``); the restart comes while the other transactions are still open
    with time left: recovery commits them (rolls forward, nothing replayed twice) and records
    the batch as committed. The Spark-level runs (the driver SIGKILLed at ``committing``;
    at ``mid-commit`` in the default run too) are in ``tests/faults/test_exactly_once.py``."""
    bootstrap, topic, prefix = setup
    options = _options(bootstrap, topic, prefix)
    handles = [
        _open(options, transactional_id(prefix, t), topic, t, [f"b3-t{t}"], 600_000) for t in (0, 1)
    ]
    committer = ExactlyOnceCommitter(options)
    try:
        committer.log.ensure_topic(committer.client)
        committer.log.append(CommitRecord(prefix, 3, COMMITTING, tuple(handles)))
        for h in handles[:ended]:  # the EndTxn the dead driver sent
            end_transaction(committer.client, h, commit=True, timeout_ms=30_000)
        committer.recover()
        last = committer.log.last(committer.client)
        assert last is not None and (last.batch_id, last.state) == (3, COMMITTED)
        for h in handles:
            assert _wait_state(committer, h.transactional_id, {"CompleteCommit"})
    finally:
        committer.close()
    assert _read_committed(bootstrap, topic) == Counter(["b3-t0", "b3-t1"])


def test_a_part_visible_batch_fails_every_restart_until_recover_partial_batch(
    setup: tuple[str, str, str],
) -> None:
    """The window only KIP-939 closes: the driver committed task 0's transaction and died; task
    1's ran out of time. Every restart fails naming what was committed and lost; with
    ``recoverPartialBatch`` the replay commits only task 1's rows: each row once."""
    bootstrap, topic, prefix = setup
    options = _options(bootstrap, topic, prefix)
    done = _open(options, transactional_id(prefix, 0), topic, 0, ["b6-t0"], 600_000)
    lost = _open(options, transactional_id(prefix, 1), topic, 1, ["b6-t1"], 2000)
    committer = ExactlyOnceCommitter(options)
    try:
        committer.log.ensure_topic(committer.client)
        committer.log.append(CommitRecord(prefix, 6, COMMITTING, (done, lost)))
        end_transaction(committer.client, done, commit=True, timeout_ms=30_000)
        _wait_state(committer, lost.transactional_id, {"CompleteAbort"})
        for _ in range(2):
            with pytest.raises(ExactlyOnceError, match="part visible") as info:
                committer.recover()
            assert f"{done.transactional_id} ({topic}-0)" in str(info.value)
            assert f"Lost (aborted by the broker): {lost.transactional_id} ({topic}-1)" in str(
                info.value
            )
            assert "recoverPartialBatch" in str(info.value)
        last = committer.log.last(committer.client)
        assert last is not None and (last.batch_id, last.state) == (6, PARTIAL)
    finally:
        committer.close()

    resolving = ExactlyOnceCommitter(replace(options, recover_partial_batch=6))
    try:
        resolving.recover()
        replay = [
            _open(options, transactional_id(prefix, t), topic, t, [f"b6-t{t}"], 600_000)
            for t in (0, 1)
        ]
        resolving.commit(replay, 6)
        last = resolving.log.last(resolving.client)
        assert last is not None and (last.batch_id, last.state) == (6, COMMITTED)
    finally:
        resolving.close()
    assert _read_committed(bootstrap, topic) == Counter(["b6-t0", "b6-t1"])


def test_a_broker_without_the_versions_the_commit_needs_fails_at_start(
    setup: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 7: the check asks every broker's ApiVersions. Staged with a cap below every
    EndTxn version (what a broker that dropped v0-4 would answer), the writer's start fails
    with UnsupportedByBrokerError naming the request."""
    bootstrap, topic, prefix = setup
    needed = txn._needed()
    monkeypatch.setattr(
        txn,
        "_needed",
        lambda: tuple((r, -1 if r is EndTxnRequest else cap) for r, cap in needed),
    )
    monkeypatch.setattr(txn, "_supported", set())
    committer = ExactlyOnceCommitter(_options(bootstrap, topic, prefix))
    try:
        with pytest.raises(UnsupportedByBrokerError, match="exactly-once needs EndTxnRequest"):
            committer.recover()
    finally:
        committer.close()


def test_the_timeout_defaults_to_the_broker_maximum_and_a_larger_one_fails_at_start(
    setup: tuple[str, str, str],
) -> None:
    """Unset, ``kafka.transaction.timeout.ms`` becomes the broker's ``transaction.max.timeout.ms``
    (900000 ms: Kafka's documented default, which the test broker keeps); set above it, the
    writer's creation fails naming both values."""
    bootstrap, topic, prefix = setup
    unset = _options(bootstrap, topic, prefix)
    committer = ExactlyOnceCommitter(unset)
    try:
        resolved = eo.resolve_transaction_timeout(unset, committer.client)
        assert resolved.producer.transaction_timeout_ms == 900_000
        assert resolved.transaction_max_timeout_ms == 900_000
        below = _options(bootstrap, topic, prefix, **{"kafka.transaction.timeout.ms": "30000"})
        kept = eo.resolve_transaction_timeout(below, committer.client)
        assert kept.producer.transaction_timeout_ms == 30_000
        above = _options(bootstrap, topic, prefix, **{"kafka.transaction.timeout.ms": "900001"})
        with pytest.raises(ConfigError) as info:
            eo.resolve_transaction_timeout(above, committer.client)
        assert "kafka.transaction.timeout.ms'=900001" in str(info.value)
        assert "transaction.max.timeout.ms=900000" in str(info.value)
    finally:
        committer.close()
