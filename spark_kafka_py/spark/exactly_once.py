"""Exactly-once writes (``deliveryGuarantee=exactly-once``): a micro-batch's rows become visible
to ``read_committed`` readers once, all at Spark's commit of the batch (issues 13 and 23).

The protocol (docs/sink.md, "Exactly-once"):

1. **Tasks.** Each task attempt of micro-batch *B* writes its rows in a Kafka transaction of
   its own transactional id (:func:`transactional_id`: ``<prefix>-<Spark partition id>`` for a
   first attempt, ``-a<attempt>`` appended for any other, so two attempts of one task never
   fence each other). It flushes, does not commit, and returns the transaction's
   handle (transactional id, producer id, epoch, partitions) in its commit message.
2. **Driver commit** (:meth:`ExactlyOnceCommitter.commit`), in this order:

   - the commit log (a compacted Kafka topic keyed by the prefix, ``commitLogTopic``) is read
     for the prefix's last record: a record of another query (another checkpoint's query id)
     refuses the batch; a batch already committed (a replay) is aborted, not committed;
   - every handle is described (DescribeTransactions, in parallel): each must be open with its
     producer id and epoch and have at least :func:`commit_margin_ms` left before its
     ``transaction.timeout.ms`` runs out (its start time plus timeout, on the coordinator's
     clock). Otherwise every handle is aborted and the batch fails, naming the batch, how long
     it took, ``kafka.transaction.timeout.ms``, the broker's ``transaction.max.timeout.ms`` and
     what to change; nothing of it is visible;
   - the batch is recorded as being committed, with every handle, then every transaction is
     committed with EndTxn by producer id and epoch, all in parallel;
   - every other open transaction of the prefix (other attempts, ids no longer used; found
     with ListTransactions, KIP-664) is fenced, and the batch is recorded as committed.
3. **Restart** (:meth:`ExactlyOnceCommitter.recover`, when the stream writer is created). A
   batch the log shows as being committed is finished: its open transactions are committed if
   they all still have time (or some were already committed), or aborted and the batch recorded
   as aborted (Spark replays it) when none was committed. A batch found part committed, part
   aborted (the driver died between two EndTxn calls and stayed down past the others'
   deadline: only KIP-939 could save it) is recorded as part visible and fails every restart,
   naming the transactions and partitions committed and lost, until the query is restarted with
   ``recoverPartialBatch=<batch>``: the replay then commits only the tasks whose transactions
   were lost. At query start, open transactions of the prefix left by the previous run are
   fenced.
4. **Abort** (:meth:`ExactlyOnceCommitter.abort`, a failed batch). Every handle is aborted.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from types import FrameType
from typing import TypeVar

import pyarrow as pa

from spark_kafka_py.admin.configs import describe_broker_configs, describe_topic_configs
from spark_kafka_py.admin.topics import create_topic
from spark_kafka_py.admin.transactions import (
    TransactionState,
    describe_transaction,
    list_transactions,
)
from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import (
    ConfigError,
    ExactlyOnceError,
    KafkaApiError,
    KafkaError,
    TransactionError,
)
from spark_kafka_py.producer.producer import KafkaProducer
from spark_kafka_py.producer.transactions import (
    TransactionHandle,
    check_transaction_support,
    end_transaction,
    fence,
)
from spark_kafka_py.spark.sink_options import SinkOptions

__all__ = [
    "ABORTED",
    "COMMITTED",
    "COMMITTING",
    "DEFAULT_TRANSACTION_MAX_TIMEOUT_MS",
    "PARTIAL",
    "PAUSE_STEPS",
    "CommitLog",
    "CommitRecord",
    "ExactlyOnceCommitter",
    "commit_margin_ms",
    "query_id_of",
    "resolve_transaction_timeout",
    "task_of",
    "transactional_id",
]

log = logging.getLogger(__name__)

#: ``segment.ms`` of the commit log topic (ms): how soon old records become compactable.
_SEGMENT_MS = 600_000
#: Commit log states of a micro-batch.
COMMITTING = "committing"
COMMITTED = "committed"
#: A batch recorded as being committed whose transactions were all found aborted (or could not
#: be committed in time) at a restart: nothing of it is visible, Spark replays it.
ABORTED = "aborted"
#: A batch found part committed, part aborted at a restart (see the module docstring).
PARTIAL = "partial"
#: Test hooks (the exactly-once fault matrix): with ``SPARK_KAFKA_PY_EO_PAUSE_AT`` set to one of
#: these steps and ``SPARK_KAFKA_PY_EO_PAUSE_FILE`` to a path, the driver's commit creates that
#: file when it reaches the step and then waits to be killed. ``before-commit``: tasks wrote,
#: nothing recorded; ``committing``: the batch recorded as being committed, no transaction
#: ended yet; ``mid-commit``: recorded and the first transaction committed; ``after-commit``:
#: every transaction committed and the batch recorded as committed.
PAUSE_STEPS = ("before-commit", "committing", "mid-commit", "after-commit")
#: Kafka's default ``transaction.max.timeout.ms`` (ms; ``TransactionStateManagerConfig``), used
#: when the broker does not let us read its own.
DEFAULT_TRANSACTION_MAX_TIMEOUT_MS = 900_000
#: The broker setting capping ``transaction.timeout.ms``.
TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms"
#: Coordinator states (DescribeTransactions / ListTransactions) of a transaction.
_OPEN = "Ongoing"
_COMMITTED = frozenset({"PrepareCommit", "CompleteCommit"})
#: Margin bounds of :func:`commit_margin_ms` (ms).
_MARGIN_MIN_MS = 5_000
_MARGIN_MAX_MS = 60_000
#: Parallel coordinator calls of one commit (threads, each with a client of its own).
_MAX_PARALLEL = 8
#: Records read per step when looking for the prefix's last record from the log's end; each
#: step reads four times more, back to the log start.
_FIRST_WINDOW = 64
#: The Spark worker module that creates the stream writer when a query starts (PySpark's
#: ``write_into_data_source``); the commit runs in another (``python_streaming_sink_runner``).
_QUERY_START_MODULE = "write_into_data_source"

T = TypeVar("T")
R = TypeVar("R")


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


def transactional_id(prefix: str, partition_id: int, attempt: int = 0) -> str:
    """The transactional id of a Spark task attempt writing partition ``partition_id``:
    ``<prefix>-<partition>`` for a task's first attempt (the usual case, and the ids of earlier
    releases), ``<prefix>-<partition>-a<attempt>`` for a retry or a speculative copy
    (``TaskContext.attemptNumber()``), so that attempts of one task never fence each other's
    transaction. (PySpark's ``TaskContext`` has no stage attempt number: a stage retry's first
    attempt shares the id of the first stage attempt's, and fences it, as before.)"""
    if attempt == 0:
        return f"{prefix}-{partition_id}"
    return f"{prefix}-{partition_id}-a{attempt}"


def _id_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(prefix)}-(\d+)(?:-a\d+)?")


def task_of(prefix: str, tid: str) -> int | None:
    """The Spark partition id in transactional id ``tid`` of ``prefix``, ``None`` if not one."""
    m = _id_pattern(prefix).fullmatch(tid)
    return None if m is None else int(m.group(1))


def commit_margin_ms(timeout_ms: int) -> int:
    """The time (ms) every transaction of a batch must have left before its
    ``transaction.timeout.ms`` runs out for the driver to start ending them: a tenth of the
    timeout, at least 5 s, at most 60 s, and at most half the timeout.

    Between the check and the last EndTxn the driver writes one record to the commit log
    (``acks=all``) and sends the EndTxn calls in parallel: milliseconds on a healthy cluster.
    The margin covers what stretches that: a retried request (a coordinator move,
    ``retry.backoff.ms``), a GC pause of the driver, and the skew between the driver's clock and
    the coordinator's (a transaction's start time is the coordinator's wall clock; NTP keeps the
    skew well under a second). Once EndTxn is answered the transaction is PrepareCommit and the
    timeout no longer applies.
    """
    return max(1, min(max(_MARGIN_MIN_MS, timeout_ms // 10), _MARGIN_MAX_MS, timeout_ms // 2))


def query_id_of(checkpoint_location: str | None) -> str | None:
    """The Spark query's id (``<checkpointLocation>/metadata``, ``{"id": ...}``, written by
    Spark when the query first starts on the checkpoint): the same for every restart of the
    query, new for a new checkpoint. ``None`` when the location is not given as an option or
    cannot be read from this process (a local path or ``file:`` URI is read directly, other
    file systems through ``pyarrow.fs``)."""
    if not checkpoint_location:
        return None
    try:
        if "://" in checkpoint_location and not checkpoint_location.startswith("file:"):
            from pyarrow import fs

            filesystem, path = fs.FileSystem.from_uri(checkpoint_location)
            with filesystem.open_input_stream(f"{path.rstrip('/')}/metadata") as f:
                text = f.read(65_536).decode("utf-8")
        else:
            path = checkpoint_location.removeprefix("file://").removeprefix("file:")
            with open(os.path.join(path, "metadata"), encoding="utf-8") as f:
                text = f.read(65_536)
        first = text.splitlines()[0] if text else ""
        value = json.loads(first).get("id")
        return str(value) if value else None
    except (OSError, ValueError, AttributeError, IndexError) as exc:
        log.warning(
            "exactly-once: cannot read the query id from checkpointLocation %r (%s); a new "
            "checkpoint reusing this transactionalIdPrefix is then not recognised",
            checkpoint_location,
            exc,
        )
        return None


def at_query_start() -> bool:
    """Whether the stream writer is being created for a query's start (PySpark's
    ``write_into_data_source`` worker) rather than for a commit: only then may the open
    transactions of the prefix be fenced, since no task of the query runs yet."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name.endswith(_QUERY_START_MODULE) or frame.f_code.co_filename.endswith(
            f"{_QUERY_START_MODULE}.py"
        ):
            return True
        frame = frame.f_back
    return False


@dataclass(frozen=True)
class CommitRecord:
    """One commit log record of the query with ``prefix``.

    Attributes:
        batch_id: the micro-batch.
        state: :data:`COMMITTING` (with ``handles``), :data:`COMMITTED`, :data:`ABORTED` or
            :data:`PARTIAL` (with ``committed`` and ``lost``).
        handles: the batch's transactions (COMMITTING; PARTIAL keeps them too).
        query_id: the Spark query id of the checkpoint that wrote it (:func:`query_id_of`), or
            ``None`` when not known.
        committed, lost: PARTIAL: the transactional ids committed and those aborted.
        resolved: COMMITTED after a PARTIAL batch was completed by ``recoverPartialBatch``.
    """

    prefix: str
    batch_id: int
    state: str
    handles: tuple[TransactionHandle, ...] = ()
    query_id: str | None = None
    committed: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()

    def to_json(self) -> bytes:
        """The record value (UTF-8 JSON)."""
        data: dict[str, object] = {
            "batch": self.batch_id,
            "state": self.state,
            "transactions": [h.to_json() for h in self.handles],
        }
        if self.query_id is not None:
            data["query"] = self.query_id
        if self.state == PARTIAL:
            data["committed"] = list(self.committed)
            data["lost"] = list(self.lost)
        return json.dumps(data, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, prefix: str, value: bytes) -> CommitRecord:
        """Parse a record value.

        Raises:
            ExactlyOnceError: the value is not a commit record (naming the prefix).
        """
        try:
            data = json.loads(value)
            query = data.get("query")
            return cls(
                prefix,
                int(data["batch"]),
                str(data["state"]),
                tuple(TransactionHandle.from_json(h) for h in data["transactions"]),
                None if query is None else str(query),
                tuple(str(t) for t in data.get("committed", ())),
                tuple(str(t) for t in data.get("lost", ())),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ExactlyOnceError(
                f"commit log record of transactionalIdPrefix {prefix!r} is malformed: {exc}"
            ) from exc


#: Commit logs checked in this process: ``(bootstrap servers, topic)``.
_checked_logs: set[tuple[object, str]] = set()
_checked_lock = threading.Lock()


class CommitLog:
    """The driver's durable record of the micro-batch it commits, in Kafka.

    A compacted topic with one partition, keyed by ``transactionalIdPrefix``; values are
    :class:`CommitRecord` JSON. Created on first use with replication factor ``min(3,
    brokers)`` and ``min.insync.replicas`` ``min(2, brokers)``; an existing topic whose
    ``cleanup.policy`` is not ``compact`` is refused (a ``delete`` policy expires the records the
    guarantee stands on). Written with the idempotent producer (``acks=all``), read with the
    consumer from its end backwards until the prefix's last record is found.

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
        ``segment.ms`` 10 minutes, replicated as the class says), else check its
        ``cleanup.policy``; once per process and topic.

        Raises:
            ExactlyOnceError: the topic exists with a ``cleanup.policy`` other than ``compact``.
            KafkaApiError / KafkaTimeoutError: creating or describing it failed.
        """
        key = (client.config.bootstrap_servers, self.topic)
        with _checked_lock:
            if key in _checked_logs:
                return
        brokers = len(client.metadata([]).brokers)
        created = create_topic(
            client,
            self.topic,
            partitions=1,
            replication_factor=min(3, brokers),
            # roll segments every 10 minutes, so that compaction (which never touches the
            # active segment) keeps the log near one record per prefix
            configs={
                "cleanup.policy": "compact",
                "segment.ms": str(_SEGMENT_MS),
                "min.insync.replicas": str(min(2, brokers)),
            },
            timeout_ms=self.timeout_ms,
        )
        if created:
            log.info("exactly-once: created the commit log topic %r", self.topic)
        else:
            configs = describe_topic_configs(
                client, [self.topic], ["cleanup.policy"], timeout_ms=self.timeout_ms
            )
            policy = configs[self.topic].get("cleanup.policy")
            if policy != "compact":
                raise ExactlyOnceError(
                    f"the commit log topic {self.topic!r} (option 'commitLogTopic') has "
                    f"cleanup.policy={policy}, not compact: records of the exactly-once sink "
                    "would expire, and with them the record of which micro-batches were "
                    "committed. Set cleanup.policy=compact on the topic, or name a new topic "
                    "in 'commitLogTopic' (the sink creates it compacted)"
                )
        with _checked_lock:
            _checked_logs.add(key)

    def last(self, client: KafkaClient) -> CommitRecord | None:
        """The last record of this prefix, or ``None``: read from the log's end backwards,
        64 records first, four times more at each step."""
        tp = TopicPartition(self.topic, 0)
        ends = list_offsets(client, {tp: LATEST_TIMESTAMP}, api_timeout_ms=self.timeout_ms)
        starts = list_offsets(client, {tp: EARLIEST_TIMESTAMP}, api_timeout_ms=self.timeout_ms)
        start, high = starts[tp], ends[tp]
        key = self.prefix.encode()
        window = _FIRST_WINDOW
        while high > start:
            low = max(start, high - window)
            found: bytes | None = None
            for batch in read_range(self._consumer, tp, low, high, fail_on_data_loss=False):
                keys = batch.column("key").to_pylist()
                values = batch.column("value").to_pylist()
                for k, value in zip(keys, values, strict=True):
                    if k == key and value is not None:
                        found = value
            if found is not None:
                return CommitRecord.from_json(self.prefix, found)
            high, window = low, window * 4
        return None

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


def resolve_transaction_timeout(options: SinkOptions, client: KafkaClient) -> SinkOptions:
    """The write's options with ``kafka.transaction.timeout.ms`` settled against the broker's
    ``transaction.max.timeout.ms`` (DescribeConfigs of a broker): unset, it becomes the broker's
    maximum (the longest a micro-batch may take); set above it, the query fails now rather than
    at every task's InitProducerId. Where the broker does not let us read its configuration,
    Kafka's default maximum (15 min) is assumed with one WARN line.

    Raises:
        ConfigError: the option exceeds the broker's maximum, naming both values.
    """
    maximum: int | None = None
    try:
        node = client.least_loaded_node()
        value = describe_broker_configs(
            client, node, [TRANSACTION_MAX_TIMEOUT], timeout_ms=options.producer.max_block_ms
        ).get(TRANSACTION_MAX_TIMEOUT)
        maximum = int(value) if value is not None else None
    except (KafkaApiError, ValueError) as exc:
        log.warning(
            "exactly-once: cannot read the broker's %s (%s); assuming Kafka's default, %d ms",
            TRANSACTION_MAX_TIMEOUT,
            exc,
            DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
        )
    known = maximum is not None
    if maximum is None:
        maximum = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS
    producer = options.producer
    if options.transaction_timeout_set:
        if known and producer.transaction_timeout_ms > maximum:
            raise ConfigError(
                f"Option 'kafka.transaction.timeout.ms'={producer.transaction_timeout_ms} "
                f"exceeds the broker's {TRANSACTION_MAX_TIMEOUT}={maximum} ms: every task's "
                "transaction would be refused (INVALID_TRANSACTION_TIMEOUT). Lower the option, "
                "or leave it unset to use the broker's maximum"
            )
        return replace(options, transaction_max_timeout_ms=maximum)
    return replace(
        options,
        producer=replace(producer, transaction_timeout_ms=maximum),
        transaction_max_timeout_ms=maximum,
    )


# ---- the driver -------------------------------------------------------------------------------


class _Parallel:
    """Coordinator calls of one commit in parallel: up to :data:`_MAX_PARALLEL` threads, each
    with a client of its own, kept for the whole commit so that the connections the check
    opened to the coordinators serve the EndTxn calls."""

    def __init__(self, client: KafkaClient) -> None:
        self._config = client.config
        self._local = threading.local()
        self._clients: list[KafkaClient] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(_MAX_PARALLEL, thread_name_prefix="exactly-once")

    def _client(self) -> KafkaClient:
        client: KafkaClient | None = getattr(self._local, "client", None)
        if client is None:
            client = KafkaClient(self._config)
            self._local.client = client
            with self._lock:
                self._clients.append(client)
        return client

    def map(self, fn: Callable[[KafkaClient, T], R], items: Sequence[T]) -> list[R | KafkaError]:
        """``fn(client, item)`` for every item, in parallel; a :class:`KafkaError` raised is
        returned in the item's place (anything else is raised)."""

        def call(item: T) -> R | KafkaError:
            try:
                return fn(self._client(), item)
            except KafkaError as exc:
                return exc

        if len(items) == 1:
            return [call(items[0])]
        return list(self._pool.map(call, items))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()


def _raise_first(results: Sequence[object]) -> None:
    for r in results:
        if isinstance(r, KafkaError):
            raise r


class ExactlyOnceCommitter:
    """The driver's side of exactly-once: recovery at start, commit and abort per batch.

    Args:
        options: the write's options (``exactly_once``), with the transaction timeout
            resolved (:func:`resolve_transaction_timeout`).
        client: the driver's client (default: a new one from the options).
    """

    def __init__(self, options: SinkOptions, *, client: KafkaClient | None = None) -> None:
        assert options.transactional_id_prefix is not None
        self.options = options
        self.prefix = options.transactional_id_prefix
        self.client = client or KafkaClient(options.producer.client)
        self.timeout_ms = options.producer.max_block_ms
        self.log = CommitLog(options, timeout_ms=self.timeout_ms)
        self.query_id = query_id_of(options.checkpoint_location)
        self._pool: _Parallel | None = None

    @property
    def pool(self) -> _Parallel:
        if self._pool is None:
            self._pool = _Parallel(self.client)
        return self._pool

    def close(self) -> None:
        """Close the log's producer, the parallel clients and the client."""
        self.log.close()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self.client.close()

    # -- helpers ---------------------------------------------------------------------------
    def _describe(
        self, handles: Sequence[TransactionHandle]
    ) -> list[TransactionState | KafkaError]:
        return self.pool.map(
            lambda c, h: describe_transaction(c, h.transactional_id, timeout_ms=self.timeout_ms),
            handles,
        )

    def _end(
        self, handles: Sequence[TransactionHandle], *, commit: bool
    ) -> list[KafkaError | None]:
        return self.pool.map(
            lambda c, h: end_transaction(c, h, commit=commit, timeout_ms=self.timeout_ms),
            handles,
        )

    def _abort_quietly(self, handles: Sequence[TransactionHandle]) -> None:
        for handle, result in zip(handles, self._end(handles, commit=False), strict=True):
            if isinstance(result, KafkaError):  # already aborted or fenced: nothing visible
                log.info("exactly-once: abort of %s: %s", handle.transactional_id, result)

    def _open_ids(self, keep: Sequence[TransactionHandle]) -> list[str]:
        """Transactional ids of the prefix with an open transaction, other than ``keep``'s."""
        pattern = _id_pattern(self.prefix)
        kept = {h.transactional_id for h in keep}
        listed = list_transactions(
            self.client,
            states=(_OPEN,),
            pattern=f"{re.escape(self.prefix)}-.*",
            timeout_ms=self.timeout_ms,
            skip_unavailable=True,
        )
        return sorted(
            {t for t, _, state in listed if state == _OPEN and pattern.fullmatch(t)} - kept
        )

    def _fence(self, tids: Sequence[str], why: str) -> None:
        """InitProducerId for each id: aborts its open transaction and bumps its epoch, so the
        attempt that opened it cannot write again (KIP-98 zombie fencing)."""
        if not tids:
            return
        log.warning("exactly-once: fencing %d open transactions of %s: %s", len(tids), why, tids)
        results = self.pool.map(
            lambda c, t: fence(
                c,
                t,
                transaction_timeout_ms=self.options.producer.transaction_timeout_ms,
                timeout_ms=self.timeout_ms,
            ),
            tids,
        )
        _raise_first(results)

    def _record(self, batch_id: int, state: str, handles: Sequence[TransactionHandle] = ()) -> None:
        self.log.append(
            CommitRecord(self.prefix, batch_id, state, tuple(handles), query_id=self.query_id)
        )

    def _timeout_error(
        self, batch_id: int, why: str, states: Sequence[TransactionState | KafkaError]
    ) -> ExactlyOnceError:
        timeout = self.options.producer.transaction_timeout_ms
        now = int(time.time() * 1000)
        starts = [
            s.start_time_ms
            for s in states
            if isinstance(s, TransactionState) and s.start_time_ms > 0
        ]
        took = f"{(now - min(starts)) / 1000:.1f} s" if starts else "unknown"
        return ExactlyOnceError(
            f"micro-batch {batch_id} cannot be committed in time: {why}. Its transactions have "
            f"been open {took} (from the first task's first write), "
            f"kafka.transaction.timeout.ms={self.options.producer.transaction_timeout_ms} ms, "
            f"the broker's {TRANSACTION_MAX_TIMEOUT}="
            f"{self.options.transaction_max_timeout_ms or DEFAULT_TRANSACTION_MAX_TIMEOUT_MS} ms, "
            f"and the commit needs {commit_margin_ms(timeout)} ms left. Nothing of this batch "
            "was committed; Spark replays it when the query restarts. Raise "
            "kafka.transaction.timeout.ms (up to the broker's maximum, or raise that), or make "
            "micro-batches shorter with maxOffsetsPerTrigger",
            batch_id=batch_id,
        )

    # -- recovery --------------------------------------------------------------------------
    def recover(self) -> None:
        """Finish what a previous driver left (the stream writer's creation, before any task
        of a starting query runs): a batch recorded as being committed, and at query start
        the prefix's open transactions.

        Raises:
            ExactlyOnceError: a batch is part visible (see the module docstring), the commit
                log was lost (the coordinators know committed transactions of the prefix but
                the log has no record of it), or the log's topic is not compacted.
            UnsupportedByBrokerError: a broker lacks a request version the commit needs.
        """
        check_transaction_support(self.client, timeout_ms=self.timeout_ms)
        self.log.ensure_topic(self.client)
        last = self.log.last(self.client)
        if last is None:
            self._check_log_not_lost()
        elif last.state == COMMITTING:
            self._finish(last)
        elif last.state == PARTIAL and self.options.recover_partial_batch != last.batch_id:
            raise self._partial_error(last)
        if at_query_start():
            self._fence(self._open_ids(()), "the previous run (ids no longer used, attempts)")

    def _check_log_not_lost(self) -> None:
        pattern = _id_pattern(self.prefix)
        listed = list_transactions(
            self.client,
            pattern=f"{re.escape(self.prefix)}-.*",
            timeout_ms=self.timeout_ms,
            skip_unavailable=True,
        )
        committed = sorted(t for t, _, s in listed if s in _COMMITTED and pattern.fullmatch(t))
        if committed:
            raise ExactlyOnceError(
                f"the commit log topic {self.log.topic!r} (option 'commitLogTopic') has no "
                f"record of transactionalIdPrefix {self.prefix!r}, yet the transaction "
                f"coordinators know committed transactions of it ({', '.join(committed[:5])}): "
                "the commit log was deleted or emptied. Going on could commit a replayed "
                "micro-batch a second time. Restore the topic's records, or, accepting that "
                "the last micro-batch may be written twice, restart with a new "
                "transactionalIdPrefix"
            )

    def _finish(self, last: CommitRecord) -> None:
        """Finish batch ``last`` recorded as being committed by a driver that died."""
        handles = [h for h in last.handles if h.partitions]
        states = self._describe(handles)
        committed, open_, lost = [], [], []
        for handle, state in zip(handles, states, strict=True):
            same = isinstance(state, TransactionState) and (
                state.producer_id,
                state.producer_epoch,
            ) == (handle.producer_id, handle.producer_epoch)
            now = state.state if same and isinstance(state, TransactionState) else None
            if now in _COMMITTED:
                committed.append(handle)
            elif now == _OPEN:
                open_.append(handle)
            else:
                lost.append(handle)
        log.warning(
            "exactly-once: micro-batch %d was being committed by the previous driver: %d "
            "transactions committed, %d open, %d aborted",
            last.batch_id,
            len(committed),
            len(open_),
            len(lost),
        )
        if not committed:
            timeout = self.options.producer.transaction_timeout_ms
            short = [
                s
                for s in states
                if isinstance(s, TransactionState)
                and s.start_time_ms + s.timeout_ms - int(time.time() * 1000)
                < commit_margin_ms(timeout)
            ]
            if lost or short:
                self._abort_quietly(open_)
                self._record(last.batch_id, ABORTED)
                log.warning(
                    "exactly-once: micro-batch %d recorded as aborted (nothing of it is "
                    "visible); Spark replays it",
                    last.batch_id,
                )
                return
        results = self._end(open_, commit=True)
        unknown = [r for r in results if r is not None and not isinstance(r, TransactionError)]
        if unknown:
            raise unknown[0]  # not known whether it ended: the next restart looks again
        failed = {h.transactional_id for h, r in zip(open_, results, strict=True) if r is not None}
        lost += [h for h in open_ if h.transactional_id in failed]
        committed += [h for h in open_ if h.transactional_id not in failed]
        if lost and not committed:
            self._record(last.batch_id, ABORTED)
            return
        if lost:
            record = CommitRecord(
                self.prefix,
                last.batch_id,
                PARTIAL,
                last.handles,
                self.query_id,
                tuple(h.transactional_id for h in committed),
                tuple(h.transactional_id for h in lost),
            )
            self.log.append(record)
            raise self._partial_error(record)
        self._record(last.batch_id, COMMITTED)

    def _partial_error(self, record: CommitRecord) -> ExactlyOnceError:
        by_id = {h.transactional_id: h for h in record.handles}

        def where(tids: Sequence[str]) -> str:
            def parts(t: str) -> str:
                if t not in by_id:
                    return "?"
                return ", ".join(f"{tp}-{p}" for tp, p in by_id[t].partitions)

            return "; ".join(f"{t} ({parts(t)})" for t in tids) or "none"

        return ExactlyOnceError(
            f"micro-batch {record.batch_id} of transactionalIdPrefix {self.prefix!r} is part "
            "visible: the driver died while committing it and stayed down past the "
            "transaction timeout of the rest (a window only KIP-939 closes). Committed: "
            f"{where(record.committed)}. Lost (aborted by the broker): {where(record.lost)}. "
            "To go on without duplicates, restart the query with "
            f".option('recoverPartialBatch', '{record.batch_id}'): the replay of the batch then "
            "commits only the tasks whose transactions were lost (this needs each replayed task "
            "to write the rows its first run wrote, as a query without shuffles over the same "
            "offsets does)",
            batch_id=record.batch_id,
        )

    # -- commit ----------------------------------------------------------------------------
    def commit(self, handles: Sequence[TransactionHandle], batch_id: int) -> None:
        """Make micro-batch ``batch_id``'s transactions visible, once.

        Raises:
            ExactlyOnceError: the batch cannot be committed (not in time, fenced, the prefix is
                another query's, a part-visible batch not resolved); nothing of it is visible.
            KafkaError: the commit log or a broker failed; a restart finishes the commit.
        """
        handles = list(handles)
        last = self.log.last(self.client)
        if last is not None:
            self._check_same_query(last, handles, batch_id)
            if last.state == COMMITTING:  # a commit of this run failed midway: finish it
                self._finish(last)
                last = self.log.last(self.client)
                assert last is not None
        if last is not None and last.batch_id > batch_id:
            self._abort_quietly(handles)
            raise ExactlyOnceError(
                f"micro-batch {batch_id}: the commit log {self.log.topic!r} says micro-batch "
                f"{last.batch_id} of transactionalIdPrefix {self.prefix!r} was committed "
                "already; a query started on a new checkpoint must use a new "
                "transactionalIdPrefix (nothing of this batch was committed)",
                batch_id=batch_id,
            )
        if last is not None and last.batch_id == batch_id and last.state == COMMITTED:
            log.warning(
                "exactly-once: micro-batch %d was committed before; aborting the %d "
                "transactions of its replay",
                batch_id,
                len(handles),
            )
            self._abort_quietly(handles)
            self._fence(self._open_ids(()), f"micro-batch {batch_id}'s other attempts")
            return
        if last is not None and last.batch_id == batch_id and last.state == PARTIAL:
            handles = self._complete_partial(last, handles)
        self._commit(handles, batch_id)

    def _check_same_query(
        self, last: CommitRecord, handles: Sequence[TransactionHandle], batch_id: int
    ) -> None:
        if last.query_id is None or self.query_id is None or last.query_id == self.query_id:
            return
        self._abort_quietly(handles)
        raise ExactlyOnceError(
            f"micro-batch {batch_id}: transactionalIdPrefix {self.prefix!r} belongs to another "
            f"query: the commit log {self.log.topic!r} holds micro-batch {last.batch_id} of "
            f"query {last.query_id}, and this query ({self.query_id}, checkpointLocation "
            f"{self.options.checkpoint_location!r}) runs on another checkpoint. Give each "
            "query (and each new checkpoint) its own transactionalIdPrefix. Nothing of this "
            "batch was committed",
            batch_id=batch_id,
        )

    def _complete_partial(
        self, record: CommitRecord, handles: list[TransactionHandle]
    ) -> list[TransactionHandle]:
        """The replay of a part-visible batch: only the tasks whose transactions were lost."""
        if self.options.recover_partial_batch != record.batch_id:
            self._abort_quietly(handles)
            raise self._partial_error(record)
        lost = {task_of(self.prefix, t) for t in record.lost}
        done = {task_of(self.prefix, t) for t in record.committed}
        mine = {task_of(self.prefix, h.transactional_id) for h in handles}
        if not mine <= lost | done or not lost <= mine:
            self._abort_quietly(handles)
            raise ExactlyOnceError(
                f"micro-batch {record.batch_id}: recoverPartialBatch needs the replay to run the "
                f"tasks of the first run: tasks {sorted(t for t in mine if t is not None)} "
                f"replayed, {sorted(t for t in lost if t is not None)} lost and "
                f"{sorted(t for t in done if t is not None)} committed before. Nothing of this "
                "batch was committed",
                batch_id=record.batch_id,
            )
        keep = [h for h in handles if task_of(self.prefix, h.transactional_id) in lost]
        self._abort_quietly([h for h in handles if h not in keep])
        log.warning(
            "exactly-once: completing part-visible micro-batch %d with the replay transactions %s",
            record.batch_id,
            sorted(h.transactional_id for h in keep),
        )
        return keep

    def _commit(self, handles: list[TransactionHandle], batch_id: int) -> None:
        written = [h for h in handles if h.partitions]
        checked_at = time.monotonic()
        states = self._describe(written)
        timeout = self.options.producer.transaction_timeout_ms
        margin = commit_margin_ms(timeout)
        now_ms = int(time.time() * 1000)
        for handle, state in zip(written, states, strict=True):
            if isinstance(state, KafkaError):
                self._abort_quietly(handles)
                raise state
            same = (state.producer_id, state.producer_epoch) == (
                handle.producer_id,
                handle.producer_epoch,
            )
            if state.state != _OPEN or not same:
                self._abort_quietly(handles)
                raise self._timeout_error(
                    batch_id,
                    f"transaction {handle.transactional_id!r} (producer id {handle.producer_id}, "
                    f"epoch {handle.producer_epoch}) is {state.state} with producer id "
                    f"{state.producer_id}, epoch {state.producer_epoch}, not open: the broker "
                    "aborted it after its timeout, or a newer producer fenced it",
                    states,
                )
            left = state.start_time_ms + state.timeout_ms - now_ms
            if left < margin:
                self._abort_quietly(handles)
                raise self._timeout_error(
                    batch_id,
                    f"transaction {handle.transactional_id!r} has {max(left, 0)} ms left of its "
                    f"{state.timeout_ms} ms timeout",
                    states,
                )
        _pause_at("before-commit", batch_id)
        self._record(batch_id, COMMITTING, handles)
        _pause_at("committing", batch_id)
        if (time.monotonic() - checked_at) * 1000 > margin / 2:
            self._abort_quietly(handles)
            self._record(batch_id, ABORTED)
            raise self._timeout_error(
                batch_id, "recording the batch took longer than half the margin", states
            )
        first = written[:1] if os.environ.get("SPARK_KAFKA_PY_EO_PAUSE_AT") == "mid-commit" else []
        results: list[KafkaError | None] = []
        if first:
            results += self._end(first, commit=True)
            _pause_at("mid-commit", batch_id)
        results += self._end(written[len(first) :], commit=True)
        failed = [(h, r) for h, r in zip(written, results, strict=True) if r is not None]
        for _, error in failed:
            if not isinstance(error, TransactionError):
                raise error  # not known whether it ended: the restart's recovery finds out
        if failed:
            # fenced or aborted after the check
            lost = {h.transactional_id for h, _ in failed}
            ok = tuple(h.transactional_id for h in written if h.transactional_id not in lost)
            error = failed[0][1]
            if not ok:
                self._record(batch_id, ABORTED)
                raise self._timeout_error(batch_id, str(error), states) from error
            record = CommitRecord(
                self.prefix,
                batch_id,
                PARTIAL,
                tuple(handles),
                self.query_id,
                ok,
                tuple(sorted(lost)),
            )
            self.log.append(record)
            raise self._partial_error(record) from error
        self._fence(self._open_ids(handles), f"micro-batch {batch_id}'s other attempts")
        self._record(batch_id, COMMITTED)
        _pause_at("after-commit", batch_id)

    def abort(self, handles: Sequence[TransactionHandle], batch_id: int) -> None:
        """Abort micro-batch ``batch_id``'s transactions (a task failed)."""
        log.warning(
            "exactly-once: micro-batch %d failed; aborting %d transactions", batch_id, len(handles)
        )
        self._abort_quietly(handles)
