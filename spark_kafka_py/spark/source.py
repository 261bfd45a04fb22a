"""The ``pykafka`` data source: batch and streaming readers over PySpark's Data Source API.

``spark.read.format("pykafka")`` plans one input partition per topic-partition range and
reads each range on an executor with Fetch; ``spark.readStream.format("pykafka")`` does the
same per micro-batch, with offsets checkpointed by Spark as ``{topic: {partition: offset}}``.

Source: ``pyspark.sql.datasource`` (PySpark >= 4.2: ``DataSourceStreamReader.latestOffset(start,
limit)``, ``ReadLimit``, ``SupportsTriggerAvailableNow``), and Spark's Structured Streaming + Kafka
Integration Guide for option names, schema and semantics.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    Filter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.group import StreamGroup, commit_read_range, plan_commits
from spark_kafka_py.spark.offsets import SparkOffsets, to_offset_dict
from spark_kafka_py.spark.options import (
    Assign,
    SourceOptions,
    Subscribe,
    include_headers,
    parse_options,
    parse_subscription,
)
from spark_kafka_py.spark.payload import (
    ReadPayload,
    decode_batch,
    parse_payload_options,
    read_payload_from_schema,
    resolve_read,
)
from spark_kafka_py.spark.plan_report import report_plan
from spark_kafka_py.spark.planner import (
    KafkaInputPartition,
    KafkaRangeGroup,
    Planner,
    planned_ranges,
)
from spark_kafka_py.spark.pushdown import Pushdown
from spark_kafka_py.spark.sink import (
    KafkaArrowWriter,
    KafkaStreamArrowWriter,
    check_topic_exists,
    options_for_write,
    save_mode_error,
)
from spark_kafka_py.spark.stream_timings import STREAM_TIMINGS_ENV, timed, timed_read
from spark_kafka_py.spark.tokens import (
    Authenticated,
    authenticate_plan,
    executor_credentials,
    lasting_credentials,
)
from spark_kafka_py.spark.trigger import TriggerRules, group_plan_start, next_batch
from spark_kafka_py.spark.trigger import rate_limit as rate_limit  # importers of source
from spark_kafka_py.spark.user_errors import user_facing

log = logging.getLogger(__name__)


def kafka_schema(include_headers: bool) -> StructType:
    """Spark's Kafka source schema (``KafkaRecordToRowConverter``), every field nullable.

    ``key binary, value binary, topic string, partition int, offset long, timestamp timestamp,
    timestampType int`` and, with ``includeHeaders=true``,
    ``headers array<struct<key:string,value:binary>>``.
    """
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(
            StructField(
                "headers",
                ArrayType(
                    StructType(
                        [StructField("key", StringType()), StructField("value", BinaryType())]
                    )
                ),
            )
        )
    return StructType(fields)


def source_schema(options: Mapping[str, str]) -> StructType:
    """The DataFrame's schema: :func:`kafka_schema`, with ``valueFormat`` / ``keyFormat`` the
    formatted columns' types from their reader schemas (asked of the registry now, on the
    driver: :func:`~spark_kafka_py.spark.payload.resolve_read`) and, with
    ``includeRawBytes``, ``key_raw`` / ``value_raw`` binary columns at the end.

    Raises:
        ConfigError: a bad payload option, a subject that cannot be named, a schema Spark
            cannot represent.
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    base = kafka_schema(include_headers(opts))
    payload = parse_payload_options(opts)
    if not payload.active:
        return base
    subscription = parse_subscription(opts)
    if isinstance(subscription, Subscribe):
        topics: list[str] | None = list(subscription.topics)
    elif isinstance(subscription, Assign):
        topics = [tp.topic for tp in subscription.partitions]
    else:
        topics = None
    return with_payload(base, resolve_read(payload, topics))


def with_payload(base: StructType, payload: ReadPayload) -> StructType:
    """``base`` with the formatted columns' fields (:meth:`ReaderSchema.field`) and the raw
    byte columns of ``includeRawBytes``."""
    fields = []
    for f in base.fields:
        reader = payload.reader(f.name)
        fields.append(reader.field() if reader is not None else f)
    if payload.options.include_raw:
        fields.extend(StructField(f"{r.column}_raw", BinaryType()) for r in payload.readers)
    return StructType(fields)


def on_executor(
    options: SourceOptions, partition: InputPartition
) -> tuple[SourceOptions, InputPartition]:
    """A task's options and work: with ``delegationToken=true`` the partition carries the
    token's login (:class:`~spark_kafka_py.spark.tokens.Authenticated`), which replaces the
    driver's; otherwise both as given."""
    if not isinstance(partition, Authenticated):
        return options, partition
    consumer = dataclasses.replace(
        options.consumer, client=partition.credentials.apply(options.consumer.client)
    )
    return dataclasses.replace(options, consumer=consumer), partition.partition


def read_partition(options: SourceOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    """Executor side: the records of one planned range as Arrow batches (Spark's schema).

    A plan with nothing to read reaches here as PySpark's placeholder ``InputPartition(None)``
    (``partitions()`` returned no ranges): it yields no rows.
    """
    if isinstance(partition, KafkaRangeGroup):
        for part in partition.ranges:
            yield from read_partition(options, part)
        return
    if not isinstance(partition, KafkaInputPartition):
        if type(partition) is InputPartition and partition.value is None:
            return
        raise TypeError(f"format('pykafka') cannot read input partition {partition!r}")
    payload = options.read_payload
    # header schema ids (Confluent 8) are read from the headers: fetch them with a registry
    headers = options.include_headers or (
        payload is not None and payload.options.registry is not None
    )
    batches = read_range(
        options.consumer,
        partition.topic_partition,
        partition.from_offset,
        partition.until_offset,
        include_headers=headers,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
        leader_hint=partition.leader_hint,
    )
    if payload is None:
        yield from batches
        return
    for batch in batches:
        yield decode_batch(batch, payload, keep_headers=options.include_headers)


class _PushFilters:
    """``KafkaBatchReader.pushFilters`` as PySpark's planner sees it.

    PySpark refuses a reader whose class overrides ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false, its default
    (``DATA_SOURCE_PUSHDOWN_DISABLED``, raised before any filter is looked at), so a reader
    that simply overrode it would fail every batch read in a session without that setting.
    Our pushdown only narrows the plan and hands every filter back to Spark, so a read
    without it returns the same rows. Hence this descriptor: the bound object PySpark's check
    inspects reports the base class's ``pushFilters`` as its ``__func__`` (so the check passes
    with pushdown off), and calling it runs :meth:`KafkaBatchReader.push_filters` (what
    PySpark does with pushdown on).
    """

    def __get__(self, reader: KafkaBatchReader | None, owner: type | None = None) -> object:
        if reader is None:
            return self
        return _BoundPushFilters(reader)


class _BoundPushFilters:
    def __init__(self, reader: KafkaBatchReader) -> None:
        self._reader = reader
        self.__func__ = DataSourceReader.pushFilters  # what PySpark's check compares

    def __call__(self, filters: list[Filter]) -> Iterable[Filter]:
        return self._reader.push_filters(filters)


class KafkaBatchReader(DataSourceReader):
    """``spark.read.format("pykafka")``: the records in ``[startingOffsets, endingOffsets)``.

    With ``spark.sql.python.filterPushdown.enabled=true``, the query's filters on ``topic``,
    ``partition``, ``offset`` and ``timestamp`` narrow the plan (:mod:`.pushdown`).
    """

    # a descriptor in place of the base class's method (see _PushFilters for why)
    pushFilters = _PushFilters()  # type: ignore[assignment]

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.group = options.group if options.group.config is not None else None
        self.pushdown: Pushdown | None = None
        # the filters Spark offered (pushFilters is called only with PySpark's switch on)
        self.offered: tuple[Filter, ...] | None = None

    def push_filters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Keep the filters that narrow the plan; return every filter (Spark applies them
        all again, so rows never depend on the narrowing).

        With ``commitGroupOffsets=true`` nothing is narrowed: the read commits each
        topic-partition's whole range, so it must read it all.
        """
        self.offered = tuple(filters)
        if self.group is None or not self.group.commit_batch_reads:
            self.pushdown = Pushdown.of(filters)
        return filters

    @user_facing
    def partitions(self) -> Sequence[InputPartition]:
        planner = Planner(self.options)
        try:
            leaders, _ = planner.topic_partitions()
            if self.group is not None and self.group.start_from_group:
                # startingOffsets=group: the group's committed offsets (OffsetFetch, no join)
                reader_group = StreamGroup(self.options, self.group, planner)
                try:
                    start = reader_group.start_offsets(set(leaders))
                finally:
                    reader_group.close()
            else:
                start = planner.resolve(self.options.starting_offsets, leaders, "startingOffsets")
            assert self.options.ending_offsets is not None
            end = planner.resolve(self.options.ending_offsets, leaders, "endingOffsets")
            for tp, lo in start.items():
                if end[tp] < lo:
                    raise ConfigError(
                        f"Offset range for {tp} is invalid: endingOffsets {end[tp]} is before "
                        f"startingOffsets {lo}"
                    )
            plan = planner.plan(start, end, leaders, self.pushdown)
        finally:
            planner.close()
        report_plan(start, end, plan, self.offered, self.pushdown)  # log line, last_plan()
        tokens = self.options.delegation_token
        if self.group is not None and self.group.commit_batch_reads:
            # a read id and each topic-partition's whole range (never grouped: no pushdown)
            commits = plan_commits(planned_ranges(plan))
            return authenticate_plan(commits, self.options.consumer.client, tokens)
        return authenticate_plan(plan, self.options.consumer.client, tokens)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        options, partition = on_executor(self.options, partition)
        if (
            self.group is None
            or not self.group.commit_batch_reads
            or not isinstance(partition, KafkaInputPartition)  # PySpark's empty-plan stand-in
        ):
            return read_partition(options, partition)
        return self._read_and_commit(options, partition)

    def _read_and_commit(
        self, options: SourceOptions, partition: KafkaInputPartition
    ) -> Iterator[pa.RecordBatch]:
        """``commitGroupOffsets=true``: once every record of the range was handed to Spark,
        record it; the group moves when every range of the topic-partition was read
        (:func:`spark_kafka_py.spark.group.commit_after_read`). A task stopped before (an
        error, a ``limit`` satisfied, a kill) records nothing."""
        assert self.group is not None
        yield from read_partition(options, partition)
        commit_read_range(options, self.group, partition)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("pykafka")``.

    PySpark builds this object in a long-lived driver-side Python process (offsets, planning,
    commits) and pickles a copy to executors (``read``); the constructor opens no sockets.
    """

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._planner = Planner(options)
        # kafka.group.id: group membership and commits (spark/group.py), lazy, driver only.
        self._group = (
            StreamGroup(options, options.group, self._planner)
            if options.group.config is not None
            else None
        )
        self._available_now: dict[TopicPartition, int] | None = None
        self._latest: dict[TopicPartition, int] | None = None
        # reportLatestOffset's answer for the look-up it was built from
        self._reported: tuple[dict[TopicPartition, int], dict] | None = None
        # minOffsetsPerTrigger/maxTriggerDelay: when the last batch was let through (ms since
        # the epoch; 0 lets the first one through, as Spark's KafkaMicroBatchStream).
        self._last_trigger_ms = 0
        self._rules = TriggerRules(
            max_offsets=options.max_offsets_per_trigger,
            min_offsets=options.min_offsets_per_trigger,
            max_delay_ms=options.max_trigger_delay_ms,
        )
        # the offsets dicts PySpark hands us and we hand it, each converted once
        self._offsets = SparkOffsets()
        self._timings_path = os.environ.get(STREAM_TIMINGS_ENV) or None

    @user_facing
    @timed
    def initialOffset(self) -> dict:
        """``startingOffsets`` resolved, ``{topic: {partition: offset}}`` (with
        ``kafka.group.id``: for the assigned partitions, after joining)."""
        if self._group is not None:
            return self._offsets.dump(self._group.initial_offsets())
        leaders, _ = self._planner.topic_partitions()
        offsets = self._planner.resolve(self.options.starting_offsets, leaders, "startingOffsets")
        return self._offsets.dump(offsets)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``ReadMinRows`` with ``minOffsetsPerTrigger``, else ``ReadMaxRows`` with
        ``maxOffsetsPerTrigger``, else ``ReadAllAvailable``.

        Spark's source returns a composite of both limits; PySpark's read limits have neither
        a composite nor ``ReadMinRows``' delay, so :meth:`latestOffset` applies the options
        themselves whenever the engine does not ask for everything (``ReadAllAvailable``).
        """
        if self.options.min_offsets_per_trigger is not None:
            return ReadMinRows(self.options.min_offsets_per_trigger)
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def _fetch_latest(self) -> dict[TopicPartition, int]:
        # Cached topic-partitions and leaders, Metadata asked between micro-batches
        # (Planner.latest_offsets, Planner.refresh_metadata)
        latest = self._planner.latest_offsets()
        self._latest = latest
        return latest

    @timed
    def prepareForTriggerAvailableNow(self) -> None:
        """``Trigger.AvailableNow``: fix the target (the latest offsets now); batches never
        wait for ``minOffsetsPerTrigger`` from here on."""
        self._available_now = self._fetch_latest()

    @user_facing
    @timed
    def latestOffset(self, start: dict | None = None, limit: ReadLimit | None = None) -> dict:
        """The end offsets of the next micro-batch (:func:`.trigger.next_batch`).

        Spark's ``KafkaMicroBatchStream.latestOffset(start, readLimit)``; ``start`` is
        converted once here and the answer once on the way out (:class:`SparkOffsets`).
        With ``kafka.group.id``, ``start`` (processed) is committed first and the group's
        assignment asked (a rejoin when needed).

        Raises:
            ConfigError: a ``ReadLimit`` PySpark offers that we do not support.
        """
        begin = None if start is None else self._offsets.parse(start)
        end = self._next_end(begin, limit)
        if end == begin:
            # No micro-batch now (partitions() is not called): ask Metadata while the
            # trigger waits.
            self._planner.refresh_metadata()
        return self._offsets.dump(end)

    def _next_end(
        self, begin: dict[TopicPartition, int] | None, limit: ReadLimit | None
    ) -> dict[TopicPartition, int]:
        latest = self._available_now if self._available_now is not None else self._fetch_latest()
        group = self._group
        assigned = None
        if group is not None:
            # Batch boundary: commit `begin` (processed), rejoin if needed.
            if begin:
                group.commit(begin)
            assigned = group.assigned(dict.fromkeys(latest, -1))
        rules = self._rules._replace(available_now=self._available_now is not None)
        now = int(time.time() * 1000)
        step = next_batch(
            begin, latest, limit, now, rules, self._last_trigger_ms, assigned=assigned
        )
        if step.missing:
            if group is not None:  # newly assigned: the group's offsets, else the fallback
                first = group.start_offsets(set(step.missing))
            else:  # new partitions start at their earliest offset
                first = self._planner.list_offsets(dict.fromkeys(step.missing, EARLIEST_TIMESTAMP))
            step = next_batch(
                begin,
                latest,
                limit,
                now,
                rules,
                self._last_trigger_ms,
                assigned=assigned,
                first=first,
            )
        self._last_trigger_ms = step.last_trigger_ms
        if step.revoked or step.entering:
            log.info(
                "group '%s': partitions revoked %s, assigned %s",
                self.options.group.config.group_id if self.options.group.config else "?",
                [str(tp) for tp in step.revoked],
                {str(tp): off for tp, off in step.entering.items()},
            )
        return step.end

    @user_facing
    @timed
    def reportLatestOffset(self) -> dict | None:
        """The latest offsets of the last look-up (query progress: ``latestOffset``); Spark
        asks after every micro-batch, so the dict of one look-up is built once."""
        latest = self._latest
        if latest is None:
            return None
        if self._reported is None or self._reported[0] is not latest:
            self._reported = (latest, to_offset_dict(latest))
        return self._reported[1]

    @user_facing
    @timed
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """The input partitions of the micro-batch ``[start, end)`` (:meth:`Planner.plan`);
        with ``kafka.group.id``, revoked partitions are not read and entering ones read
        nothing (:func:`.trigger.group_plan_start`)."""
        begin, ends = self._offsets.parse(start), self._offsets.parse(end)
        if self._group is not None:
            begin = group_plan_start(begin, ends)
        planned = self._planner.plan(begin, ends)
        # The micro-batch's job runs next: ask Metadata for the next one meanwhile.
        self._planner.refresh_metadata()
        return authenticate_plan(
            planned, self.options.consumer.client, self.options.delegation_token
        )

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        options, partition = on_executor(self.options, partition)
        batches = read_partition(options, partition)
        path = getattr(self, "_timings_path", None)
        return batches if path is None else timed_read(path, batches)

    @user_facing
    @timed
    def commit(self, end: dict) -> None:
        """Spark has processed every offset below ``end``: with ``kafka.group.id``, commit
        them to the group (OffsetCommit); nothing to do without a group."""
        if self._group is not None:
            self._group.commit(self._offsets.parse(end))

    def stop(self) -> None:
        try:
            if self._group is not None:
                self._group.close()  # heartbeats stop; LeaveGroup (dynamic members)
        finally:
            self._planner.close()


class PyKafkaDataSource(DataSource):
    """The ``pykafka`` data source: Spark's Kafka source and sink, in Python.

    Options: see :func:`spark_kafka_py.spark.options.parse_options` (reads),
    :func:`spark_kafka_py.spark.sink_options.parse_sink_options` (writes) and the README.
    """

    @classmethod
    def name(cls) -> str:
        return "pykafka"

    @user_facing
    def schema(self) -> StructType:
        return source_schema(self.options)

    def _options(self, schema: StructType, *, streaming: bool) -> SourceOptions:
        """The read's options, with the reader schemas ``schema`` carries.

        Spark's Kafka source has a fixed schema; a user-specified one is an error. With
        ``valueFormat``/``keyFormat`` the formatted columns' types are the reader schemas'
        that :meth:`schema` resolved (carried in the fields' metadata), so a query keeps the
        schema it was planned with even if the subject's latest schema changes.
        """
        options = parse_options(self.options, streaming=streaming)
        expected = kafka_schema(options.include_headers)
        payload = None
        if options.payload.active:
            payload = read_payload_from_schema(options.payload, schema.fields)
            expected = with_payload(expected, payload)
        if schema != expected:
            raise ConfigError(
                "Kafka source has a fixed schema and cannot be set with a custom one "
                f"(got {schema.simpleString()}); remove .schema(...) and use select/cast "
                "or from_json on the value column instead"
            )
        return dataclasses.replace(options, read_payload=payload)

    @user_facing
    def reader(self, schema: StructType) -> KafkaBatchReader:
        return KafkaBatchReader(self._options(schema, streaming=False))

    @user_facing
    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(self._options(schema, streaming=True))

    @user_facing
    def writer(self, schema: StructType, overwrite: bool) -> KafkaArrowWriter:
        """``df.write.format("pykafka")`` (mode Append; Spark's sink refuses Overwrite)."""
        save_mode_error(overwrite)
        options = options_for_write(self.options, schema, streaming=False)
        check_topic_exists(options)
        credentials = None
        if options.delegation_token is not None:
            credentials = executor_credentials(options.producer.client, options.delegation_token)
        return KafkaArrowWriter(options, credentials)

    @user_facing
    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaStreamArrowWriter:
        """``writeStream.format("pykafka")`` in any output mode Spark's sink accepts."""
        from spark_kafka_py.spark.exactly_once import at_query_start

        options = options_for_write(self.options, schema, streaming=True)
        credentials = None
        if at_query_start():  # PySpark creates the writer again for every commit
            check_topic_exists(options)
            if options.delegation_token is not None:
                # the tasks of every micro-batch use the writer made here: a token of their
                # own, valid up to its max lifetime (docs/security.md)
                credentials = lasting_credentials(options.producer.client, options.delegation_token)
        return KafkaStreamArrowWriter(options, credentials)
