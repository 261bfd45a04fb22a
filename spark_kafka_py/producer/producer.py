"""The sink's Kafka producer: Arrow rows of one partition in, acknowledged records out.

One :class:`KafkaProducer` per executor Python process, reused across tasks and
micro-batches: :meth:`~KafkaProducer.append` encodes rows into the partition's batches
(:mod:`spark_kafka_py.producer.accumulator`), a background sender writes them
(:mod:`spark_kafka_py.producer.sender`), :meth:`~KafkaProducer.flush` waits until every
record is acknowledged and raises the first failure. Kafka's Java ``KafkaProducer`` is the
model for the checks and the errors (``ensureValidRecordSize``, ``waitOnMetadata``).

Thread-safety: one caller thread (the Spark task) plus the producer's own threads.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from types import TracebackType

import pyarrow as pa
import pyarrow.compute as pc

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.retry import Backoff, retriable
from spark_kafka_py.errors import (
    InvalidRecordError,
    KafkaConnectionError,
    KafkaError,
    ProduceError,
    ProducerFencedError,
)
from spark_kafka_py.producer.accumulator import RecordAccumulator
from spark_kafka_py.producer.sender import Sender
from spark_kafka_py.producer.settings import ProducerSettings
from spark_kafka_py.producer.state import ProducerStats
from spark_kafka_py.producer.transactions import (
    TransactionHandle,
    add_partitions_to_transaction,
    end_transaction,
    fence,
)
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.records.encoder import Header, record_size_upper_bound
from spark_kafka_py.records.format import MAX_RECORD_OVERHEAD, RECORD_BATCH_OVERHEAD

__all__ = ["KafkaProducer", "missing_topic_error"]

log = logging.getLogger(__name__)

#: Largest varint overhead of a length (5 bytes) x (key, value, header count), used for a quick
#: upper bound before the exact per-record size is computed (bytes).
_LENGTH_SLACK = 15
#: Per header: key and value lengths as varints, at most 5 bytes each (bytes).
_HEADER_SLACK = 10
#: Metadata errors of a topic that is being created (Java's ``waitOnMetadata`` waits).
_TOPIC_NOT_READY = frozenset({ec.LEADER_NOT_AVAILABLE, ec.UNKNOWN_TOPIC_OR_PARTITION})
#: Produce errors telling a transactional producer that its epoch was fenced.
_FENCED = frozenset({ec.PRODUCER_FENCED, ec.INVALID_PRODUCER_EPOCH})
#: How long a topic the cluster does not create may stay unknown to the broker asked before
#: the write fails (ms): time for a topic created a moment ago to reach every broker's metadata
#: (KRaft propagates it in milliseconds), far below ``max.block.ms``.
UNKNOWN_TOPIC_GRACE_MS = 1000


def missing_topic_error(topic: str, node_id: int, bootstrap: str) -> ProduceError:
    """The error of a write to ``topic`` when the cluster has no such topic and does not create
    topics (broker ``node_id`` said ``auto.create.topics.enable=false``), raised at once instead
    of after ``kafka.max.block.ms``; the first line says so and what to do.

    Returns:
        A :class:`~spark_kafka_py.errors.ProduceError` with UNKNOWN_TOPIC_OR_PARTITION.
    """
    return ProduceError(
        ec.UNKNOWN_TOPIC_OR_PARTITION,
        topic,
        None,
        f"topic {topic!r} does not exist and the cluster does not create topics (broker "
        f"{node_id}: auto.create.topics.enable=false); create it first, e.g. "
        f"`spark-kafka-py topics create {topic} --bootstrap-servers {bootstrap}`, or write to "
        "an existing topic",
    )


def _lengths(array: pa.Array | None) -> int:
    """Largest byte length in a binary/string array (0 when absent or all null)."""
    if array is None or len(array) == 0 or pa.types.is_null(array.type):
        return 0
    biggest = pc.max(pc.binary_length(array)).as_py()
    return biggest or 0


def _header_bytes(headers: pa.Array | None) -> int:
    """Upper bound of the header bytes of the row with the most (bytes)."""
    if headers is None or len(headers) == 0 or headers.null_count == len(headers):
        return 0
    flat = headers.flatten()
    if len(flat) == 0:
        return 0
    sizes = pc.add(pc.binary_length(flat.field("key")).fill_null(0), _HEADER_SLACK)
    value = flat.field("value")
    if not pa.types.is_null(value.type):
        sizes = pc.add(sizes, pc.binary_length(value).fill_null(0))
    parents = pc.list_parent_indices(headers)
    grouped = pa.table({"row": parents, "size": sizes}).group_by("row").aggregate([("size", "sum")])
    return pc.max(grouped.column("size_sum")).as_py() or 0


class KafkaProducer:
    """A Kafka producer for the sink.

    Args:
        settings: :class:`~spark_kafka_py.producer.settings.ProducerSettings`.
        client: a :class:`KafkaClient` to use (not closed by :meth:`close`); default: a new
            one for ``settings.client``, closed by :meth:`close`.

    Starts its sender thread at once; opens connections when the first batch is sent.
    """

    def __init__(self, settings: ProducerSettings, *, client: KafkaClient | None = None):
        self.settings = settings
        self._own_client = client is None
        self.client = client if client is not None else KafkaClient(settings.client)
        self._acc = RecordAccumulator(
            batch_size=settings.batch_size,
            buffer_memory=settings.buffer_memory,
            linger_ms=settings.linger_ms,
            codec=settings.compression_type,
            level=settings.compression_level,
        )
        self._sender = Sender(settings, self.client, self._acc)
        self._sender.start()
        self._closed = False
        #: transactional mode: None (no transaction), "open" (begun), "prepared" (flushed)
        self._txn: str | None = None
        self._txn_partitions: set[tuple[str, int]] = set()
        #: the cluster's ``auto.create.topics.enable`` and the broker that told, once asked
        self._auto_create: tuple[bool, int] | None = None

    def __enter__(self) -> KafkaProducer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"KafkaProducer(producer_id={self.producer_id}, epoch={self.producer_epoch}, "
            f"{len(self._acc.incomplete)} batches pending)"
        )

    # -- state ----------------------------------------------------------------------------
    @property
    def producer_id(self) -> int:
        """The KIP-98 producer id (-1 before the first batch or without idempotence)."""
        return self._sender.producer_id

    @property
    def producer_epoch(self) -> int:
        """The producer epoch (-1 before the first batch or without idempotence)."""
        return self._sender.producer_epoch

    @property
    def stats(self) -> ProducerStats:
        """A copy of the counters (records, batches, requests, retries, bytes, epoch bumps)."""
        with self._acc.cond:
            return dataclasses.replace(self._sender.stats)

    @property
    def buffered_bytes(self) -> int:
        """Bytes of batches held against ``buffer.memory`` now."""
        return self._acc.used_bytes

    # -- metadata -------------------------------------------------------------------------
    def partition_count(self, topic: str) -> int:
        """The number of partitions of ``topic``, from cached or fresh metadata.

        Asks Metadata with ``allow_auto_topic_creation=True``, as the Java producer does, and
        waits up to ``max.block.ms`` for a topic being created (LEADER_NOT_AVAILABLE,
        UNKNOWN_TOPIC_OR_PARTITION), pausing between tries as the one retry policy does
        (:mod:`spark_kafka_py.client.retry`: ``retry.backoff.ms`` doubling up to
        ``retry.backoff.max.ms``, with jitter, KIP-580). A topic still
        unknown after :data:`UNKNOWN_TOPIC_GRACE_MS` on a cluster that does not create topics
        (a broker's ``auto.create.topics.enable=false``, read once with DescribeConfigs) fails
        then. The first unreachable cluster is logged at WARN at once.

        Raises:
            ProduceError: UNKNOWN_TOPIC_OR_PARTITION: the cluster does not create topics
                (:func:`missing_topic_error`, within about a second), or after ``max.block.ms``
                (the topic is not there, and the setting unreadable or true);
                TOPIC_AUTHORIZATION_FAILED or another non-retriable topic error at once.
            KafkaConnectionError: no broker reachable in a way waiting cannot mend (TLS,
                SASL), at once.
        """
        cached = self.client.cached_metadata
        info = cached.topics.get(topic) if cached is not None else None
        if (
            info is not None
            and info.error_code == ec.NONE
            and info.partitions
            and not self.client.metadata_is_stale()
        ):
            return len(info.partitions)
        return self._fetch_partition_count(
            topic, time.monotonic() + self.settings.max_block_ms / 1000
        )

    def _fetch_partition_count(self, topic: str, deadline: float) -> int:
        """:meth:`partition_count` from fresh metadata, waiting until ``deadline``."""
        block_ms = self.settings.max_block_ms
        backoff = Backoff(self.settings.client.retry_backoff_ms)
        last = ""
        reported = False
        unknown_since: float | None = None
        attempt = 0  # failed tries: the backoff's exponent
        while True:
            try:
                metadata = self.client.metadata([topic], allow_auto_topic_creation=True)
            except KafkaConnectionError as exc:
                if not retriable(exc):
                    raise
                last = str(exc)
                if not reported:
                    left_ms = max(0, int((deadline - time.monotonic()) * 1000))
                    self.client.report_unreachable(
                        exc, keeps_trying_ms=left_ms, bound="kafka.max.block.ms"
                    )
                    reported = True
            else:
                info = metadata.topics.get(topic)
                code = ec.error_for(info.error_code) if info else ec.UNKNOWN_TOPIC_OR_PARTITION
                if code == ec.NONE and info is not None and info.partitions:
                    return len(info.partitions)
                if code not in _TOPIC_NOT_READY and code != ec.NONE and not code.retriable:
                    raise ProduceError(code, topic, None)
                last = code.name if code != ec.NONE else "no partitions"
                if code == ec.UNKNOWN_TOPIC_OR_PARTITION:
                    now = time.monotonic()
                    unknown_since = now if unknown_since is None else unknown_since
                    if (now - unknown_since) * 1000 >= UNKNOWN_TOPIC_GRACE_MS:
                        node = self._topics_not_created()
                        if node is not None:
                            servers = ",".join(
                                f"{h}:{p}" for h, p in self.settings.client.bootstrap_servers
                            )
                            raise missing_topic_error(topic, node, servers)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProduceError(
                    ec.UNKNOWN_TOPIC_OR_PARTITION,
                    topic,
                    None,
                    f"topic {topic!r} not present in metadata after kafka.max.block.ms="
                    f"{block_ms} ms (last answer: {last}); create it, or enable the broker's "
                    "auto.create.topics.enable",
                )
            time.sleep(min(backoff.pause_ms(attempt) / 1000, left))
            attempt += 1

    def _topics_not_created(self) -> int | None:
        """The broker that said the cluster does not create topics
        (``auto.create.topics.enable=false``), asked once per producer; ``None`` when topics
        are created or no broker told."""
        if self._auto_create is None:
            from spark_kafka_py.admin.configs import broker_creates_topics

            answer = broker_creates_topics(
                self.client, timeout_ms=self.settings.client.request_timeout_ms
            )
            self._auto_create = (True, -1) if answer is None else answer
        creates, node = self._auto_create
        return None if creates else node

    def _wait_on_metadata(self, topic: str, partition: int) -> None:
        """The partition must be in the topic's metadata before its records are queued (as
        Java's ``KafkaProducer.waitOnMetadata``): cached, or asked for up to ``max.block.ms``.
        """
        if partition < 0:
            raise InvalidRecordError(
                f"partition {partition} of topic {topic!r} is negative", column="partition"
            )
        cached = self.client.cached_metadata
        info = cached.topics.get(topic) if cached is not None else None
        if info is not None and info.error_code == ec.NONE and partition in info.partitions:
            return
        block_ms = self.settings.max_block_ms
        deadline = time.monotonic() + block_ms / 1000
        backoff = Backoff(self.settings.client.retry_backoff_ms)
        attempt = 0
        while True:
            count = self._fetch_partition_count(topic, deadline)
            if partition < count:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProduceError(
                    ec.UNKNOWN_TOPIC_OR_PARTITION,
                    topic,
                    partition,
                    f"partition {partition} of topic {topic!r} with partition count {count} is "
                    f"not present in metadata after kafka.max.block.ms={block_ms} ms",
                )
            time.sleep(min(backoff.pause_ms(attempt) / 1000, left))
            attempt += 1

    # -- writing --------------------------------------------------------------------------
    def append(
        self,
        topic: str,
        partition: int,
        keys: pa.Array | None,
        values: pa.Array | None,
        headers: pa.Array | None,
        timestamp_ms: int,
    ) -> None:
        """Queue the rows of one partition (arrays of equal length), CreateTime
        ``timestamp_ms`` (ms since the epoch) for all.

        ``keys``/``values`` are binary or string (nulls allowed), ``headers``
        ``list<struct<key: string, value: binary>>`` (KIP-82); ``None`` means all null.

        Raises:
            ProduceError: MESSAGE_TOO_LARGE (Java's ``RecordTooLargeException``) when a record,
                with batch overhead, is larger than ``max.request.size`` or ``buffer.memory``;
                nothing of the call is queued then. UNKNOWN_TOPIC_OR_PARTITION when the topic
                or the partition is not in the metadata within ``max.block.ms``. Also the
                failure of an earlier batch not yet raised (e.g. TOPIC_AUTHORIZATION_FAILED).
            KafkaTimeoutError: ``buffer.memory`` stayed full for ``max.block.ms``.
            InvalidRecordError: a column of a wrong type, a negative partition.
            KafkaError: the producer is closed.
        """
        if self._closed:
            raise KafkaError("the producer is closed")
        tid = self.settings.transactional_id
        if tid is not None and self._txn != "open":
            raise KafkaError(
                f"transactional producer {tid!r}: no transaction open; call "
                "begin_transaction() first"
            )
        failure = self._sender.take_failure()
        if failure is not None:
            raise self._fenced_or(failure)
        self._check_sizes(topic, partition, keys, values, headers)
        self._wait_on_metadata(topic, partition)
        if tid is not None and (topic, partition) not in self._txn_partitions:
            add_partitions_to_transaction(
                self.client,
                tid,
                self.producer_id,
                self.producer_epoch,
                [(topic, partition)],
                timeout_ms=self.settings.max_block_ms,
            )
            self._txn_partitions.add((topic, partition))
        self._acc.append(
            topic,
            partition,
            keys,
            values,
            headers,
            timestamp_ms,
            max_block_ms=self.settings.max_block_ms,
        )

    def _check_sizes(
        self,
        topic: str,
        partition: int,
        keys: pa.Array | None,
        values: pa.Array | None,
        headers: pa.Array | None,
    ) -> None:
        """Java's ``ensureValidRecordSize`` for every row, before anything is queued."""
        s = self.settings
        limit = min(s.max_request_size, s.buffer_memory)
        quick = (
            RECORD_BATCH_OVERHEAD
            + MAX_RECORD_OVERHEAD
            + _LENGTH_SLACK
            + _lengths(keys)
            + _lengths(values)
            + _header_bytes(headers)
        )
        if quick <= limit:
            return
        n = len(values) if values is not None else len(keys) if keys is not None else 0
        key_list = _py_bytes(keys, n)
        value_list = _py_bytes(values, n)
        header_list = _py_headers(headers, n)
        for key, value, hs in zip(key_list, value_list, header_list, strict=True):
            size = record_size_upper_bound(key, value, hs)
            if size > s.max_request_size:
                option, bound = "kafka.max.request.size", s.max_request_size
            elif size > s.buffer_memory:
                option, bound = "kafka.buffer.memory", s.buffer_memory
            else:
                continue
            raise ProduceError(
                ec.MESSAGE_TOO_LARGE,
                topic,
                partition,
                f"a record is {size} bytes when serialized (with batch overhead), larger "
                f"than {option}={bound} (Kafka's RecordTooLargeException); nothing of this "
                "write was sent",
            )

    def flush(self) -> None:
        """Send every batch now and wait until every appended record is acknowledged (with
        ``acks=0``: written to its broker's socket).

        Raises:
            ProduceError: the first batch the broker refused for good, naming the
                topic-partition and the Kafka error (e.g. MESSAGE_TOO_LARGE with the batch
                size, TOPIC_AUTHORIZATION_FAILED, INVALID_RECORD with the broker's message).
            KafkaTimeoutError: a batch not acknowledged within ``delivery.timeout.ms``.
            KafkaError: another failure (e.g. retries exhausted after connection losses).

        The failure is raised once; the producer stays usable for new records.
        """
        cond = self._acc.cond
        with cond:
            self._acc.flushing += 1
            cond.notify_all()
            try:
                while self._acc.incomplete and self._sender.alive:
                    cond.wait(0.5)
            finally:
                self._acc.flushing -= 1
            if self._acc.incomplete and not self._sender.alive and self._sender.failure is None:
                self._sender.failure = KafkaError(
                    f"the producer's sender stopped with {len(self._acc.incomplete)} batches "
                    "not acknowledged"
                )
        failure = self._sender.take_failure()
        if failure is not None:
            raise failure

    # -- transactions ---------------------------------------------------------------------------
    def begin_transaction(self) -> None:
        """Begin a transaction (``settings.transactional_id`` must be set).

        Every call runs InitProducerId with the transactional id (Java's ``initTransactions``):
        it fences older producers of the id and aborts any transaction of an older epoch still
        open, including one this producer prepared and the driver has not ended yet; so reuse a
        producer for the next transaction only after its previous one was ended.
        Bounded by ``max.block.ms``.

        Raises:
            ConfigError: the broker refuses ``kafka.transaction.timeout.ms``.
            TransactionError / KafkaTimeoutError: as
                :func:`~spark_kafka_py.producer.transactions.fence`.
            KafkaError: not transactional, closed, or a transaction already open.
        """
        tid = self._transactional_id()
        if self._txn == "open":
            raise KafkaError(f"transactional producer {tid!r}: a transaction is already open")
        self.flush()  # nothing may be in flight when the epoch changes
        s = self.settings
        producer_id, epoch = fence(
            self.client,
            tid,
            transaction_timeout_ms=s.transaction_timeout_ms,
            timeout_ms=s.max_block_ms,
        )
        self._sender.set_transaction_producer(producer_id, epoch)
        self._txn_partitions = set()
        self._txn = "open"

    def prepare_commit(self) -> TransactionHandle:
        """Flush every record of the open transaction and return its handle, WITHOUT ending
        the transaction: the driver ends it with
        :func:`~spark_kafka_py.producer.transactions.end_transaction`.

        Raises:
            ProducerFencedError: a newer producer with the same transactional id began (or the
                broker aborted the transaction after ``kafka.transaction.timeout.ms``).
            ProduceError / KafkaTimeoutError / KafkaError: as :meth:`flush`; the transaction
                stays open then: :meth:`abort_transaction` it.
        """
        tid = self._transactional_id()
        if self._txn != "open":
            raise KafkaError(f"transactional producer {tid!r}: no transaction open")
        try:
            self.flush()
        except KafkaError as exc:
            raise self._fenced_or(exc) from exc
        self._txn = "prepared"
        return TransactionHandle(
            transactional_id=tid,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            partitions=tuple(sorted(self._txn_partitions)),
        )

    def abort_transaction(self) -> None:
        """Abort the open (or prepared) transaction with EndTxn (a task that failed midway).

        Waits first for the batches already queued (their failures are logged, not raised:
        the transaction is aborted with them). Nothing to do without a transaction, or when
        no partition was added to it. Bounded by ``max.block.ms`` (plus the flush).

        Raises:
            ProducerFencedError: the epoch was fenced (the fencing already aborted the
                transaction of this epoch).
            TransactionError / KafkaTimeoutError: as
                :func:`~spark_kafka_py.producer.transactions.end_transaction`.
        """
        tid = self._transactional_id()
        if self._txn is None:
            return
        try:
            self.flush()
        except KafkaError as exc:
            fenced = self._fenced_or(exc)
            if isinstance(fenced, ProducerFencedError):
                self._txn = None
                raise fenced from exc
            log.warning("transaction of %r: records not written before the abort: %s", tid, exc)
        handle = TransactionHandle(
            tid, self.producer_id, self.producer_epoch, tuple(sorted(self._txn_partitions))
        )
        self._txn = None
        end_transaction(self.client, handle, commit=False, timeout_ms=self.settings.max_block_ms)

    def _transactional_id(self) -> str:
        tid = self.settings.transactional_id
        if tid is None:
            raise KafkaError("the producer is not transactional (no transactional id set)")
        if self._closed:
            raise KafkaError(f"transactional producer {tid!r} is closed")
        return tid

    def _fenced_or(self, exc: BaseException) -> BaseException:
        """A transactional producer's fenced Produce error as :class:`ProducerFencedError`."""
        tid = self.settings.transactional_id
        if tid is not None and isinstance(exc, ProduceError) and exc.error in _FENCED:
            return ProducerFencedError(
                exc.error,
                tid,
                self.producer_id,
                self.producer_epoch,
                f"{exc.error.description} (producing to {exc.topic}-{exc.partition}); a newer "
                "producer with the same transactional id began, or the broker aborted the "
                "transaction after kafka.transaction.timeout.ms="
                f"{self.settings.transaction_timeout_ms} ms",
                action="writing",
            )
        return exc

    def close(self, timeout_ms: int | None = None) -> None:
        """Send what is queued (waiting up to ``timeout_ms``, ``None``: until acknowledged or
        failed), then stop the threads and close the connections (if the client is ours).

        Records still unsent after ``timeout_ms`` are dropped with a warning in the log;
        failures are not raised (call :meth:`flush` first to see them). Idempotent.
        """
        if self._closed:
            return
        self._closed = True
        cond = self._acc.cond
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        with cond:
            self._acc.closed = True
            cond.notify_all()
            while self._acc.incomplete and self._sender.alive:
                left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
                if left <= 0:
                    break
                cond.wait(left)
            left_over = sum(b.record_count for b in self._acc.incomplete)
        if left_over:
            log.warning("producer closed with %d records not acknowledged", left_over)
        self._sender.stop(timeout_s=5)
        if self._own_client:
            self.client.close()  # readers still waiting for a response see it closed
        self._sender.join_readers(timeout_s=5)


def _py_bytes(array: pa.Array | None, n: int) -> list[bytes | None]:
    if array is None or pa.types.is_null(array.type):
        return [None] * n
    values: list[bytes | None] = array.cast(pa.large_binary()).to_pylist()  # pyarrow is untyped
    return values


def _py_headers(headers: pa.Array | None, n: int) -> list[list[Header]]:
    if headers is None:
        return [[] for _ in range(n)]
    out: list[list[Header]] = []
    for row in headers.to_pylist():
        hs: list[Header] = []
        for h in row or ():
            value = h["value"]
            hs.append((h["key"] or "", value.encode() if isinstance(value, str) else value))
        out.append(hs)
    return out
