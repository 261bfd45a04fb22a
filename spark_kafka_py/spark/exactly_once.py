"""Exactly-once writes (``deliveryGuarantee=exactly-once``): a micro-batch's rows become visible
to ``read_committed`` readers once, all at Spark's commit of the batch (issue 13).

The protocol (docs/sink.md, "Exactly-once"):

1. **Tasks.** Each task of micro-batch *B* writes its rows in a Kafka transaction with the
   transactional id ``<transactionalIdPrefix>-<Spark partition id>``. It flushes, does not
   commit, and returns the transaction's handle (transactional id, producer id, epoch,
   partitions) in its commit message. A retried task starts the same transactional id again:
   InitProducerId bumps the epoch and aborts the attempt it replaces (zombie fencing, KIP-98).
2. **Driver commit** (``commit(messages, B)``). It records in the commit log (a compacted Kafka
   topic keyed by the prefix, ``commitLogTopic``) that *B* is being committed, with every
   handle, before ending any transaction. Then it ends each transaction with EndTxn (commit),
   using the handle's producer id and epoch, from the driver. Last, it records *B* as
   committed.
3. **Restart** (the stream writer is created again on the checkpoint). If the commit log's last
   record for the prefix says *B* was being committed, the driver finishes those commits
   (EndTxn is idempotent for a transaction already committed) before any task runs.
4. **Replay.** When Spark replays a batch the commit log already shows as committed (the driver
   died after the sink's commit, before Spark recorded it), the replay's transactions are
   aborted, not committed: the batch stays visible once.
5. **Abort** (``abort(messages, B)``, a failed batch). Every handle is aborted.

Before committing, each handle is checked (DescribeTransactions): a transaction the broker has
already aborted, for instance after ``kafka.transaction.timeout.ms``, aborts the whole batch and
fails it, naming the batch and the setting. Nothing of that batch is then visible, and Spark
replays it on restart.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from spark_kafka_py.admin.topics import create_topic
from spark_kafka_py.admin.transactions import describe_transaction
from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import ExactlyOnceError, KafkaError, TransactionError
from spark_kafka_py.producer.producer import KafkaProducer
from spark_kafka_py.producer.transactions import TransactionHandle, end_transaction
from spark_kafka_py.spark.sink_options import SinkOptions

__all__ = [
    "COMMITTED",
    "COMMITTING",
    "PAUSE_STEPS",
    "CommitLog",
    "CommitRecord",
    "ExactlyOnceCommitter",
    "transactional_id",
]

log = logging.getLogger(__name__)

#: ``segment.ms`` of the commit log topic (ms): how soon old records become compactable.
_SEGMENT_MS = 600_000
#: Commit log states of a micro-batch.
COMMITTING = "committing"
COMMITTED = "committed"
#: Test hooks (issue 13's fault matrix): with ``SPARK_KAFKA_PY_EO_PAUSE_AT`` set to one of these
#: steps and ``SPARK_KAFKA_PY_EO_PAUSE_FILE`` to a path, the driver's commit creates that file
#: when it reaches the step and then waits to be killed. ``before-commit``: tasks wrote, nothing
#: recorded; ``mid-commit``: recorded and the first transaction committed; ``after-commit``:
#: every transaction committed and the batch recorded as committed.
PAUSE_STEPS = ("before-commit", "mid-commit", "after-commit")
#: Transaction states (DescribeTransactions) in which a handle can still be committed.
_OPEN = frozenset({"Ongoing"})
#: States of a transaction already committed (a retried commit is then done).
_COMMITTED = frozenset({"PrepareCommit", "CompleteCommit"})


def _pause_at(step: str, batch_id: int) -> None:
    """The test hook of :data:`PAUSE_STEPS` (a no-op unless the environment asks for it)."""
    if os.environ.get("SPARK_KAFKA_PY_EO_PAUSE_AT") != step:
        return
    marker = os.environ.get("SPARK_KAFKA_PY_EO_PAUSE_FILE")
    if not marker or os.path.exists(marker):
        return  # once per test run: the restarted query goes on
    with open(marker, "w", encoding="utf-8") as out:
        out.write(f"{step} {batch_id}\n")
    log.warning("exactly-once test hook: paused at %s of micro-batch %d", step, batch_id)
    while True:
        time.sleep(1)


def transactional_id(prefix: str, partition_id: int) -> str:
    """The transactional id of the Spark task writing partition ``partition_id``."""
    return f"{prefix}-{partition_id}"


@dataclass(frozen=True)
class CommitRecord:
    """One commit log record: micro-batch ``batch_id`` of the query with ``prefix`` is being
    committed (with its transactions) or is committed."""

    prefix: str
    batch_id: int
    state: str
    handles: tuple[TransactionHandle, ...] = ()

    def to_json(self) -> bytes:
        """The record value (UTF-8 JSON)."""
        return json.dumps(
            {
                "batch": self.batch_id,
                "state": self.state,
                "transactions": [h.to_json() for h in self.handles],
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def from_json(cls, prefix: str, value: bytes) -> CommitRecord:
        """Parse a record value.

        Raises:
            ExactlyOnceError: the value is not a commit record (naming the prefix).
        """
        try:
            data = json.loads(value)
            return cls(
                prefix,
                int(data["batch"]),
                str(data["state"]),
                tuple(TransactionHandle.from_json(h) for h in data["transactions"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ExactlyOnceError(
                f"commit log record of transactionalIdPrefix {prefix!r} is malformed: {exc}"
            ) from exc


class CommitLog:
    """The driver's durable record of the micro-batch it commits, in Kafka.

    A compacted topic with one partition (created on first use with the brokers' default
    replication factor), keyed by ``transactionalIdPrefix``; values are :class:`CommitRecord`
    JSON. Written with the idempotent producer (``acks=all``), read with the consumer.

    Args:
        options: the write's options (connection settings, ``commitLogTopic``).
        timeout_ms: bound on creating the topic and on each read (ms).
    """

    def __init__(self, options: SinkOptions, *, timeout_ms: int) -> None:
        assert options.transactional_id_prefix is not None
        self.prefix = options.transactional_id_prefix
        self.topic = options.commit_log_topic
        self.timeout_ms = timeout_ms
        self._settings = replace(options.producer, transactional_id=None, linger_ms=0)
        self._consumer = ConsumerSettings(client=options.producer.client)
        self._producer: KafkaProducer | None = None

    def ensure_topic(self, client: KafkaClient) -> None:
        """Create the topic if missing (one partition, ``cleanup.policy=compact``,
        ``segment.ms`` 10 minutes)."""
        created = create_topic(
            client,
            self.topic,
            partitions=1,
            replication_factor=-1,
            # roll segments every 10 minutes, so that compaction (which never touches the
            # active segment) keeps the log near one record per prefix
            configs={"cleanup.policy": "compact", "segment.ms": str(_SEGMENT_MS)},
            timeout_ms=self.timeout_ms,
        )
        if created:
            log.info("exactly-once: created the commit log topic %r", self.topic)

    def last(self, client: KafkaClient) -> CommitRecord | None:
        """The last record of this prefix, or ``None``."""
        tp = TopicPartition(self.topic, 0)
        end = list_offsets(client, {tp: LATEST_TIMESTAMP}, api_timeout_ms=self.timeout_ms)[tp]
        found: bytes | None = None
        if end > 0:
            for batch in read_range(self._consumer, tp, 0, end, fail_on_data_loss=False):
                keys = batch.column("key").to_pylist()
                values = batch.column("value").to_pylist()
                for key, value in zip(keys, values, strict=True):
                    if key == self.prefix.encode() and value is not None:
                        found = value
        return None if found is None else CommitRecord.from_json(self.prefix, found)

    def append(self, record: CommitRecord) -> None:
        """Write ``record`` and wait until Kafka acknowledged it (``acks=all``)."""
        if self._producer is None:
            self._producer = KafkaProducer(self._settings)
        self._producer.append(
            self.topic,
            0,
            pa.array([self.prefix.encode()], pa.binary()),
            pa.array([record.to_json()], pa.binary()),
            None,
            int(time.time() * 1000),
        )
        self._producer.flush()

    def close(self) -> None:
        """Close the log's producer."""
        if self._producer is not None:
            self._producer.close()
            self._producer = None


# ---- the driver -------------------------------------------------------------------------------


class ExactlyOnceCommitter:
    """The driver's side of exactly-once: recovery at start, commit and abort per batch.

    Args:
        options: the write's options (``exactly_once``).
        client: the driver's client (default: a new one from the options).
    """

    def __init__(self, options: SinkOptions, *, client: KafkaClient | None = None) -> None:
        self.options = options
        self.client = client or KafkaClient(options.producer.client)
        self.timeout_ms = options.producer.max_block_ms
        self.log = CommitLog(options, timeout_ms=self.timeout_ms)

    def close(self) -> None:
        """Close the log's producer and the client."""
        self.log.close()
        self.client.close()

    def _end(self, handles: Sequence[TransactionHandle], *, commit: bool) -> None:
        for handle in handles:
            end_transaction(self.client, handle, commit=commit, timeout_ms=self.timeout_ms)

    def recover(self) -> None:
        """Finish a commit a previous driver started and did not end (crash mid-commit).

        Raises:
            ExactlyOnceError: a transaction of that batch can no longer be committed (the
                broker aborted it after ``kafka.transaction.timeout.ms``): the batch is part
                visible, and the message says which batch and transactions.
        """
        self.log.ensure_topic(self.client)
        last = self.log.last(self.client)
        if last is None or last.state != COMMITTING:
            return
        log.warning(
            "exactly-once: finishing the commit of micro-batch %d (%d transactions) that the "
            "previous driver started",
            last.batch_id,
            len(last.handles),
        )
        try:
            self._end(last.handles, commit=True)
        except TransactionError as exc:
            raise ExactlyOnceError(
                f"micro-batch {last.batch_id} of transactionalIdPrefix {self.log.prefix!r} is "
                "part visible: the previous driver died while committing it, and a transaction "
                f"it had not committed yet can no longer be committed ({exc}); the restart "
                "came later than kafka.transaction.timeout.ms="
                f"{self.options.producer.transaction_timeout_ms} ms after the crash?",
                batch_id=last.batch_id,
            ) from exc
        self.log.append(CommitRecord(self.log.prefix, last.batch_id, COMMITTED))

    def _check_open(self, batch_id: int, handles: Sequence[TransactionHandle]) -> None:
        """Every handle still open with its producer id and epoch, else abort all and fail."""
        for handle in handles:
            state = describe_transaction(
                self.client, handle.transactional_id, timeout_ms=self.timeout_ms
            )
            same = (state.producer_id, state.producer_epoch) == (
                handle.producer_id,
                handle.producer_epoch,
            )
            if state.state in _OPEN and same:
                continue
            self._abort_quietly(handles)
            raise ExactlyOnceError(
                f"micro-batch {batch_id}: transaction {handle.transactional_id!r} (producer id "
                f"{handle.producer_id}, epoch {handle.producer_epoch}) is {state.state} with "
                f"producer id {state.producer_id}, epoch {state.producer_epoch}, not open: the "
                "broker aborted it (a micro-batch longer than kafka.transaction.timeout.ms="
                f"{self.options.producer.transaction_timeout_ms} ms?) or a newer task attempt "
                "fenced it (speculative execution?). Nothing of this batch was committed; "
                "Spark replays it when the query restarts",
                batch_id=batch_id,
            )

    def _abort_quietly(self, handles: Sequence[TransactionHandle]) -> None:
        for handle in handles:
            try:
                end_transaction(self.client, handle, commit=False, timeout_ms=self.timeout_ms)
            except KafkaError as exc:  # already aborted or fenced: nothing visible either way
                log.info("exactly-once: abort of %s: %s", handle.transactional_id, exc)

    def commit(self, handles: Sequence[TransactionHandle], batch_id: int) -> None:
        """Make micro-batch ``batch_id``'s transactions visible, once.

        Raises:
            ExactlyOnceError: a transaction could not be committed (see :meth:`_check_open`).
            KafkaError: the commit log or a broker failed; a restart finishes the commit.
        """
        last = self.log.last(self.client)
        if last is not None and last.batch_id > batch_id:
            self._abort_quietly(handles)
            raise ExactlyOnceError(
                f"micro-batch {batch_id}: the commit log {self.log.topic!r} says micro-batch "
                f"{last.batch_id} of transactionalIdPrefix {self.log.prefix!r} was committed "
                "already; a query started on a new checkpoint must use a new "
                "transactionalIdPrefix (nothing of this batch was committed)",
                batch_id=batch_id,
            )
        if last is not None and last.batch_id == batch_id and last.state == COMMITTED:
            log.warning(
                "exactly-once: micro-batch %d was committed before (commit log: %d); aborting "
                "the %d transactions of its replay",
                batch_id,
                last.batch_id,
                len(handles),
            )
            self._abort_quietly(handles)
            return
        self._check_open(batch_id, handles)
        _pause_at("before-commit", batch_id)
        self.log.append(CommitRecord(self.log.prefix, batch_id, COMMITTING, tuple(handles)))
        for i, handle in enumerate(handles):
            end_transaction(self.client, handle, commit=True, timeout_ms=self.timeout_ms)
            if i == 0:
                _pause_at("mid-commit", batch_id)
        self.log.append(CommitRecord(self.log.prefix, batch_id, COMMITTED))
        _pause_at("after-commit", batch_id)

    def abort(self, handles: Sequence[TransactionHandle], batch_id: int) -> None:
        """Abort micro-batch ``batch_id``'s transactions (a task failed)."""
        log.warning(
            "exactly-once: micro-batch %d failed; aborting %d transactions", batch_id, len(handles)
        )
        self._abort_quietly(handles)
