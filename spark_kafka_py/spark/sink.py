"""The ``pykafka`` sink: ``df.write.format("pykafka")`` and ``writeStream.format("pykafka")``.

The contract of Spark's Kafka sink (Structured Streaming + Kafka Integration Guide, "Writing Data
to Kafka"; ``KafkaWriter.validateQuery``, ``KafkaRowWriter``):

- input columns ``value`` (string or binary, required; with ``valueFormat=avro`` any type the
  writer schema takes, encoded by :mod:`spark_kafka_py.spark.payload_write`), ``key`` (string
  or binary; any type with ``keyFormat=avro``), ``headers``
  (``array<struct<key:string,value:binary>>``), ``topic`` (string; the ``topic`` option
  overrides it) and ``partition`` (int; null or absent: the partitioner decides); other columns
  are ignored; a column of a wrong type fails the query before anything is written, with
  Spark's message;
- at-least-once: each task writes its rows with the executor's producer and waits until Kafka
  acknowledged every one (``flush``) before it reports success; the driver's commit has
  nothing left to do, and an abort cannot take back what was written (as Spark's sink).

Executors receive Arrow batches (PySpark's ``DataSourceArrowWriter`` /
``DataSourceStreamArrowWriter``, PySpark >= 4.1). Each batch's rows are given a partition
(the ``partition`` column, else ``murmur2(key)`` as Kafka's Java producer, else the uniform
sticky partitioner), sorted by partition, and handed to the producer per partition as Arrow
slices, which it encodes straight into record batches. One producer per topic settings lives
in each executor's Python worker, reused by the tasks and micro-batches that worker runs, and
closed when the worker exits.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.errors import ConfigError, InvalidRecordError, KafkaError
from spark_kafka_py.producer.partitioner import StickyPartitioner, partitions_for_keys
from spark_kafka_py.producer.producer import KafkaProducer
from spark_kafka_py.producer.settings import ProducerSettings
from spark_kafka_py.spark.payload_write import encode_batches, resolve_write
from spark_kafka_py.spark.sink_options import SinkOptions, parse_sink_options
from spark_kafka_py.spark.tokens import Credentials
from spark_kafka_py.spark.user_errors import user_facing

__all__ = [
    "HEADERS_TYPE",
    "KafkaArrowWriter",
    "KafkaStreamArrowWriter",
    "KafkaWriteMessage",
    "check_sink_schema",
    "options_for_write",
    "save_mode_error",
    "shared_producer",
    "write_batches",
]

if TYPE_CHECKING:
    from spark_kafka_py.producer.transactions import TransactionHandle

log = logging.getLogger(__name__)

#: The ``headers`` column's type (Spark's ``KafkaRecordToRowConverter.headersType``).
HEADERS_TYPE = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def _without_nullability(t: DataType) -> DataType:
    if isinstance(t, ArrayType):
        return ArrayType(_without_nullability(t.elementType), True)
    if isinstance(t, StructType):
        return StructType([StructField(f.name, _without_nullability(f.dataType)) for f in t])
    return t


def check_sink_schema(
    schema: StructType, topic_option: str | None, formatted: Collection[str] = ()
) -> None:
    """Spark's ``KafkaWriter.validateQuery``: the columns the sink uses, with their types.

    Columns are found by exact name, as Spark's sink does; others are ignored. The ``headers``
    type is compared without nullability (Spark compares it with; a ``headers`` column built
    with ``array(struct(...))`` from literals is accepted here, refused by Spark). The
    ``formatted`` columns (``"key"``, ``"value"`` with ``keyFormat`` / ``valueFormat`` other than
    ``binary``) may be of any type: their writer schema decides what fits
    (:func:`~spark_kafka_py.spark.payload_write.resolve_write`).

    Raises:
        ConfigError: Spark's message: no ``topic`` column and no ``topic`` option, no ``value``
            column, or a column of an unsupported type (naming it and the type expected).
    """
    fields = {f.name: f.dataType for f in schema.fields}

    def check(name: str, accepted: tuple[DataType, ...], expected: str) -> None:
        t = fields.get(name)
        if t is None or name in formatted:
            return
        if not any(_without_nullability(t) == _without_nullability(a) for a in accepted):
            raise ConfigError(
                f"{name} attribute unsupported type {t.simpleString()}. {name} must be a(n) "
                f"{expected}"
            )

    if topic_option is None:
        if "topic" not in fields:
            raise ConfigError(
                "topic option required when no 'topic' attribute is present. Use the topic "
                "option for setting a topic."
            )
        check("topic", (StringType(),), "string")
    check("key", (StringType(), BinaryType()), "string or binary")
    if "value" not in fields:
        raise ConfigError("Required attribute 'value' not found")
    check("value", (StringType(), BinaryType()), "string or binary")
    check("headers", (HEADERS_TYPE,), HEADERS_TYPE.simpleString())
    check("partition", (IntegerType(),), "int")


@dataclass
class KafkaWriteMessage(WriterCommitMessage):
    """What one task wrote (its commit message to the driver).

    Attributes:
        records: rows written and acknowledged.
        partitions: per ``"topic-partition"``, rows written there.
        transaction: ``deliveryGuarantee=exactly-once``: the task's transaction, flushed and
            left open for the driver to commit (``None`` when the task wrote nothing).
    """

    records: int = 0
    partitions: dict[str, int] = field(default_factory=dict)
    #: exactly-once: the task's open transaction, ended by the driver
    transaction: Any = None  # a TransactionHandle


# ---- one producer per settings in each Python worker --------------------------------------

_producers: dict[ProducerSettings, KafkaProducer] = {}
_producers_lock = threading.Lock()


def shared_producer(settings: ProducerSettings) -> KafkaProducer:
    """The executor process's producer for ``settings``, created on first use.

    Spark reuses Python workers across tasks and micro-batches
    (``spark.python.worker.reuse``), so connections, metadata and the producer id survive from
    one task to the next; every producer is closed when the worker exits.
    """
    with _producers_lock:
        producer = _producers.get(settings)
        if producer is None:
            producer = KafkaProducer(settings)
            _producers[settings] = producer
        return producer


@atexit.register
def _close_producers() -> None:
    with _producers_lock:
        producers = list(_producers.values())
        _producers.clear()
    for producer in producers:
        try:
            producer.close()
        except Exception:  # the worker is exiting; nothing to report to
            log.exception("closing the Kafka producer at exit failed")


# ---- rows -> partitions -> producer ----------------------------------------------------------


def _column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)


def _byte_lengths(array: pa.Array | None, n: int) -> np.ndarray:
    if array is None or pa.types.is_null(array.type):
        return np.zeros(n, dtype=np.int64)
    lengths = pc.fill_null(pc.binary_length(array), 0)
    return lengths.to_numpy(zero_copy_only=False).astype(np.int64)


class _Partitioning:
    """Partitions for the rows of one topic (Spark's ``partition`` column, else the Java
    producer's built-in partitioner: ``murmur2(key)``, else sticky)."""

    def __init__(self, sticky: StickyPartitioner, ignore_keys: bool) -> None:
        self.sticky = sticky
        self.ignore_keys = ignore_keys

    def assign(
        self,
        topic: str,
        num_partitions: int,
        keys: pa.Array | None,
        values: pa.Array | None,
        explicit: pa.Array | None,
        n: int,
    ) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int32)
        todo = np.ones(n, dtype=bool)
        if explicit is not None and explicit.null_count < n:
            given = pc.fill_null(explicit, 0).to_numpy(zero_copy_only=False).astype(np.int64)
            valid = np.asarray(explicit.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            bad = valid & ((given < 0) | (given >= num_partitions))
            if bad.any():
                row = int(np.nonzero(bad)[0][0])
                raise InvalidRecordError(
                    f"Invalid partition given with record: {int(given[row])} is not in the range "
                    f"[0...{num_partitions}) of topic {topic!r} ({num_partitions} partitions)",
                    column="partition",
                )
            out[valid] = given[valid].astype(np.int32)
            todo &= ~valid
        if keys is not None and not self.ignore_keys and not pa.types.is_null(keys.type):
            keyed = todo & ~np.asarray(keys.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            if keyed.any():
                rows = np.nonzero(keyed)[0]
                subset = keys if len(rows) == n else keys.take(pa.array(rows))
                out[rows] = partitions_for_keys(subset, num_partitions)
                todo &= ~keyed
        if todo.any():
            rows = np.nonzero(todo)[0]
            sizes = _byte_lengths(keys, n)[rows] + _byte_lengths(values, n)[rows]
            out[rows] = self.sticky.partitions(topic, sizes, num_partitions)
        return out


def _topic_groups(
    batch: pa.RecordBatch, topic_option: str | None
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``(topic, rows)`` of ``batch``: all of it for the ``topic`` option, else per value of
    the ``topic`` column (a null topic is Spark's ``KAFKA_NULL_TOPIC_IN_DATA``)."""
    if topic_option is not None:
        yield topic_option, batch
        return
    topics = _column(batch, "topic")
    assert topics is not None  # check_sink_schema made sure
    if topics.null_count:
        raise InvalidRecordError(
            "The Kafka message data sent to the producer contains a null topic. Use the "
            "`topic` option for setting a default topic.",
            column="topic",
        )
    encoded = pc.dictionary_encode(topics)
    names = encoded.dictionary.to_pylist()
    if len(names) == 1:
        yield names[0], batch
        return
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    for code, name in enumerate(names):
        yield name, batch.take(pa.array(np.nonzero(codes == code)[0]))


def write_batches(
    options: SinkOptions,
    batches: Iterator[pa.RecordBatch],
    *,
    producer: KafkaProducer | None = None,
    sticky: StickyPartitioner | None = None,
) -> KafkaWriteMessage:
    """Write every row of ``batches`` to Kafka and wait until Kafka acknowledged them all.

    Args:
        options: the write's options.
        batches: Arrow record batches with the sink's columns (see :func:`check_sink_schema`).
        producer: default: the worker's :func:`shared_producer`.
        sticky: the unkeyed rows' partitioner (default: a new one with ``batch.size``).

    Returns:
        What was written, per topic-partition.

    Raises:
        InvalidRecordError: a null topic, or a ``partition`` outside the topic's partitions
            (naming the topic and partition).
        RecordFormatError: ``valueFormat`` / ``keyFormat``: a row that does not fit the writer
            schema (naming the column, the row and the schema id); nothing of its batch is
            written.
        KafkaError: what the producer raises: a record too large, a topic that does not exist
            or may not be written, a delivery timeout (``kafka.delivery.timeout.ms``), each
            naming the topic-partition and Kafka's error.
    """
    if options.payload.active and options.write_payload is None:
        raise ConfigError(  # pragma: no cover - options_for_write resolves them for writers
            "valueFormat/keyFormat: the writer schemas were not resolved on the driver"
        )
    producer = producer or shared_producer(options.producer)
    sticky = sticky or StickyPartitioner(options.producer.batch_size)
    partitioning = _Partitioning(sticky, options.partitioner_ignore_keys)
    written: dict[str, int] = {}
    total = 0
    # valueFormat/keyFormat: each batch is encoded whole before any of it reaches the producer
    for batch in encode_batches(batches, options.write_payload):
        if batch.num_rows == 0:
            continue
        timestamp_ms = int(time.time() * 1000)  # CreateTime: the write time, as Java's producer
        for topic, rows in _topic_groups(batch, options.topic):
            n = rows.num_rows
            keys = _column(rows, "key")
            values = _column(rows, "value")
            headers = _column(rows, "headers")
            num_partitions = producer.partition_count(topic)
            parts = partitioning.assign(
                topic, num_partitions, keys, values, _column(rows, "partition"), n
            )
            first = int(parts[0])
            if (parts == first).all():
                producer.append(topic, first, keys, values, headers, timestamp_ms)
                key = f"{topic}-{first}"
                written[key] = written.get(key, 0) + n
                total += n
                continue
            order = np.argsort(parts, kind="stable")
            taken = pa.array(order)
            keys = None if keys is None else keys.take(taken)
            values = None if values is None else values.take(taken)
            headers = None if headers is None else headers.take(taken)
            sorted_parts = parts[order]
            bounds = np.flatnonzero(np.diff(sorted_parts)) + 1
            starts = np.concatenate(([0], bounds))
            stops = np.concatenate((bounds, [n]))
            for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
                partition = int(sorted_parts[start])
                length = stop - start
                producer.append(
                    topic,
                    partition,
                    None if keys is None else keys.slice(start, length),
                    None if values is None else values.slice(start, length),
                    None if headers is None else headers.slice(start, length),
                    timestamp_ms,
                )
                key = f"{topic}-{partition}"
                written[key] = written.get(key, 0) + length
            total += n
    producer.flush()
    return KafkaWriteMessage(records=total, partitions=written)


def _log_commit(messages: list[WriterCommitMessage | None], what: str) -> None:
    records = sum(m.records for m in messages if isinstance(m, KafkaWriteMessage))
    log.info("pykafka sink: %s committed, %d records from %d tasks", what, records, len(messages))


def on_executor(options: SinkOptions, credentials: Credentials | None) -> SinkOptions:
    """The options a task writes with: the driver's, or with ``credentials`` (a delegation
    token's SCRAM login, ``delegationToken=true``) in place of the driver's login."""
    if credentials is None:
        return options
    producer = dataclasses.replace(
        options.producer, client=credentials.apply(options.producer.client)
    )
    return dataclasses.replace(options, producer=producer)


class KafkaArrowWriter(DataSourceArrowWriter):
    """``df.write.format("pykafka")``: each task writes its rows (:func:`write_batches`).

    ``commit`` has nothing to do (every task waited for Kafka's acknowledgements); ``abort``
    cannot take back rows already written (at-least-once, as Spark's sink).
    """

    def __init__(self, options: SinkOptions, credentials: Credentials | None = None) -> None:
        self.options = options
        #: ``delegationToken=true``: the token the tasks write with (the driver keeps its login)
        self.credentials = credentials

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaWriteMessage:
        return write_batches(on_executor(self.options, self.credentials), iterator)

    @user_facing
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        _log_commit(messages, "batch write")

    @user_facing
    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        written = sum(m.records for m in messages if isinstance(m, KafkaWriteMessage))
        log.warning(
            "pykafka sink: the write failed; %d records of the tasks that succeeded stay in "
            "Kafka (at-least-once, as Spark's Kafka sink)",
            written,
        )


def write_transaction(options: SinkOptions, batches: Iterator[pa.RecordBatch]) -> KafkaWriteMessage:
    """Exactly-once: write one task's rows in a transaction left open for the driver.

    The transactional id is ``<transactionalIdPrefix>-<Spark partition id>`` for the first
    attempt, with the task attempt number appended for any other
    (:func:`~spark_kafka_py.spark.exactly_once.transactional_id`): attempts of one task never
    fence each other, and the driver fences every transaction of the prefix other than those it
    commits.

    Raises:
        KafkaError: the write failed; the transaction is aborted (best effort: the retry's
            InitProducerId aborts it anyway).
    """
    from pyspark import TaskContext

    from spark_kafka_py.spark.exactly_once import transactional_id

    context = TaskContext.get()
    if context is None:  # pragma: no cover - Spark always runs writers in a task
        raise ConfigError("deliveryGuarantee=exactly-once: no Spark task context in the writer")
    assert options.transactional_id_prefix is not None
    txn_id = transactional_id(
        options.transactional_id_prefix, context.partitionId(), context.attemptNumber()
    )
    producer = KafkaProducer(dataclasses.replace(options.producer, transactional_id=txn_id))
    try:
        producer.begin_transaction()
        message = write_batches(options, batches, producer=producer)
        handle = producer.prepare_commit()
    except BaseException:
        try:
            producer.abort_transaction()
        except KafkaError as exc:
            log.warning("exactly-once: aborting %s after a failed write: %s", txn_id, exc)
        raise
    finally:
        producer.close()
    message.transaction = handle if handle.partitions else None
    return message


@contextlib.contextmanager
def _committer(options: SinkOptions) -> Iterator[Any]:
    """The driver's :class:`~spark_kafka_py.spark.exactly_once.ExactlyOnceCommitter`, closed
    after use (imported here: at-least-once writes never load the transaction code)."""
    from spark_kafka_py.spark.exactly_once import ExactlyOnceCommitter

    committer = ExactlyOnceCommitter(options)
    try:
        yield committer
    finally:
        committer.close()


def _handles(messages: list[WriterCommitMessage | None]) -> list[TransactionHandle]:
    return [
        m.transaction
        for m in messages
        if isinstance(m, KafkaWriteMessage) and m.transaction is not None
    ]


class KafkaStreamArrowWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("pykafka")``: each micro-batch's tasks write as
    :class:`KafkaArrowWriter` does (append and complete output modes; complete mode writes the
    whole result table every micro-batch, as Spark's sink).

    With ``deliveryGuarantee=exactly-once`` each task writes in a transaction it leaves open
    (:func:`write_transaction`) and the driver commits them all at Spark's commit of the
    micro-batch (:class:`~spark_kafka_py.spark.exactly_once.ExactlyOnceCommitter`). Creating
    the writer (PySpark does at the query's start and again for every commit) settles
    ``kafka.transaction.timeout.ms`` against the broker's maximum and finishes a commit a
    previous driver left half done.

    Raises:
        ConfigError: ``kafka.transaction.timeout.ms`` above the broker's maximum.
        ExactlyOnceError / UnsupportedByBrokerError: from the recovery.
    """

    def __init__(self, options: SinkOptions, credentials: Credentials | None = None) -> None:
        #: ``delegationToken=true``: the token the tasks write with, obtained at the query's
        #: start (the driver's commits keep its own login)
        self.credentials = credentials
        if options.exactly_once:
            from spark_kafka_py.spark.exactly_once import resolve_transaction_timeout

            with _committer(options) as committer:
                options = resolve_transaction_timeout(options, committer.client)
                committer.options = options
                committer.recover()
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaWriteMessage:
        options = on_executor(self.options, self.credentials)
        if options.exactly_once:
            return write_transaction(options, iterator)
        return write_batches(options, iterator)

    @user_facing
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if self.options.exactly_once:
            with _committer(self.options) as committer:
                committer.commit(_handles(messages), batchId)
        _log_commit(messages, f"micro-batch {batchId}")

    @user_facing
    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if self.options.exactly_once:
            with _committer(self.options) as committer:
                committer.abort(_handles(messages), batchId)
            return
        written = sum(m.records for m in messages if isinstance(m, KafkaWriteMessage))
        log.warning(
            "pykafka sink: micro-batch %d failed; %d records of its successful tasks stay in "
            "Kafka and are written again when the batch is retried (at-least-once)",
            batchId,
            written,
        )


def save_mode_error(overwrite: bool) -> None:
    """Spark's Kafka sink allows the save modes Append and ErrorIfExists; PySpark's Python
    data sources get Append or Overwrite (``overwrite``) and refuse ErrorIfExists and Ignore
    themselves.

    Raises:
        ConfigError: Spark's message for Overwrite.
    """
    if overwrite:
        raise ConfigError(
            "Save mode Overwrite not allowed for Kafka. Allowed save modes are Append and "
            "ErrorIfExists (default). With format('pykafka') use .mode('append'): PySpark's "
            "Python data sources accept only Append and Overwrite."
        )


def check_topic_exists(options: SinkOptions) -> None:
    """Fail on the driver, before any task starts, when the ``topic`` option names a topic the
    cluster does not have and does not create (a broker's ``auto.create.topics.enable=false``):
    one Metadata request (not creating the topic) and, only when the topic is unknown, one
    DescribeConfigs of a broker. Without the check every task waits ``kafka.max.block.ms`` for
    the topic (60 s by default) and fails with the same error.

    No ``topic`` option (the ``topic`` column decides): nothing to check here; the tasks fail
    as fast (:meth:`~spark_kafka_py.producer.producer.KafkaProducer.partition_count`). An
    unreadable setting and topic errors other than UNKNOWN_TOPIC_OR_PARTITION are left to the
    tasks, which report them as before.

    Raises:
        ProduceError: UNKNOWN_TOPIC_OR_PARTITION, naming the topic and the broker setting.
        KafkaTimeoutError: no broker answered Metadata within ``kafka.max.block.ms`` (the
            tasks would fail the same way); the first failure is logged at WARN at once.
        KafkaConnectionError: TLS or SASL failed (not retriable), at once.
    """
    topic = options.topic
    if topic is None:
        return
    from spark_kafka_py.admin.configs import broker_creates_topics
    from spark_kafka_py.producer.producer import missing_topic_error
    from spark_kafka_py.protocol.error_codes import UNKNOWN_TOPIC_OR_PARTITION

    config = options.producer.client
    with KafkaClient(config) as client:
        metadata = client.metadata_retrying(
            [topic], timeout_ms=options.producer.max_block_ms, bound="kafka.max.block.ms"
        )
        info = metadata.topics.get(topic)
        if info is not None and info.error_code != UNKNOWN_TOPIC_OR_PARTITION.code:
            return
        answer = broker_creates_topics(client, timeout_ms=config.request_timeout_ms)
    if answer is not None and not answer[0]:
        servers = ",".join(f"{h}:{p}" for h, p in config.bootstrap_servers)
        raise missing_topic_error(topic, answer[1], servers)


def options_for_write(
    options: Mapping[str, str], schema: StructType, *, streaming: bool
) -> SinkOptions:
    """Parse a write's options and check its input schema (both on the driver, before any
    task runs); with ``valueFormat`` / ``keyFormat``, resolve each formatted column's writer
    schema (the registry: lookups, registration) and check the column fits it
    (:func:`~spark_kafka_py.spark.payload_write.resolve_write`). A streaming query does so at
    its start only and keeps that schema: PySpark creates the writer again for every commit,
    which encodes nothing.

    Raises:
        ConfigError: a bad option or column; a column that does not fit its writer schema.
        SchemaRegistryError: the registry failed (after its retries).
    """
    parsed = parse_sink_options(options, streaming=streaming)
    formatted = [c.column for c in parsed.payload.columns]
    check_sink_schema(schema, parsed.topic, formatted)
    if not parsed.payload.active:
        return parsed
    if streaming:
        from spark_kafka_py.spark.exactly_once import at_query_start

        if not at_query_start():
            return parsed
    payload = resolve_write(parsed.payload, schema, parsed.topic)
    return dataclasses.replace(parsed, write_payload=payload)
