"""Driver-side planning: which topic-partitions, which offsets, which Spark input partitions.

The :class:`Planner` is what Spark's ``KafkaOffsetReader`` is to the built-in source: it
resolves the subscription with a Metadata request, turns offset specs into offsets with
ListOffsets (one request per leader broker, see :mod:`spark_kafka_py.consumer.offsets`), and
turns ``[start, end)`` offsets into :class:`KafkaInputPartition` s, checking for data loss the
way Spark's ``KafkaMicroBatchStream`` does.

It holds a :class:`~spark_kafka_py.client.cluster.KafkaClient` created on first use: PySpark
pickles readers, and a constructor must open no sockets.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import InputPartition

from spark_kafka_py import errors
from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.consumer.offsets import PreparedListOffsets, list_offsets
from spark_kafka_py.consumer.topic_configs import LOG_APPEND_TIME, timestamp_types
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.protocol.error_codes import raise_for_error
from spark_kafka_py.spark.options import (
    Assign,
    ByTimestamp,
    OffsetSpec,
    SourceOptions,
    Subscribe,
    SubscribePattern,
)
from spark_kafka_py.spark.pushdown import Pushdown

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """One Spark task's work: the records of ``topic``-``partition`` in
    ``[from_offset, until_offset)``.

    Small and picklable: it carries no connection, only the range and the leader's node id
    known at planning time (a hint; the executor re-checks metadata on leader errors).

    A batch read with ``commitGroupOffsets=true`` also carries what its commit needs
    (:func:`spark_kafka_py.spark.group.commit_read_range`): the read's id (one per planned
    read), the range's index among the ``range_count`` consecutive ranges its topic-partition
    was split into, and the end of the last of them. Otherwise they are ``""``, -1, 0, -1.
    """

    topic: str
    partition: int
    from_offset: int
    until_offset: int
    leader_hint: int = -1
    read_id: str = ""
    range_index: int = -1
    range_count: int = 0
    partition_end: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True)
class KafkaRangeGroup(InputPartition):
    """One Spark task's work when it is several small ranges: read one after another.

    Planned only for batch reads narrowed by filter pushdown (:func:`group_small_ranges`),
    where many partitions may each keep a few records: one task per range would cost Spark's
    fixed per-task overhead many times over for little data.
    """

    ranges: tuple[KafkaInputPartition, ...]


def planned_ranges(parts: Sequence[InputPartition]) -> list[KafkaInputPartition]:
    """The ranges of a plan, groups opened, in plan order (for tests and diagnostics)."""
    out: list[KafkaInputPartition] = []
    for part in parts:
        if isinstance(part, KafkaRangeGroup):
            out.extend(part.ranges)
        elif isinstance(part, KafkaInputPartition):
            out.append(part)
    return out


#: Ranges smaller than this many offsets share Spark tasks, up to this many offsets a task.
GROUP_OFFSETS = 100_000


def group_small_ranges(
    parts: Sequence[KafkaInputPartition], limit: int = GROUP_OFFSETS
) -> list[KafkaInputPartition | KafkaRangeGroup]:
    """Put ranges of fewer than ``limit`` offsets together, in plan order, into groups of at
    most ``limit`` offsets; larger ranges stay tasks of their own. A group of one is the range
    itself."""
    out: list[KafkaInputPartition | KafkaRangeGroup] = []
    group: list[KafkaInputPartition] = []
    size = 0

    def close() -> None:
        if group:
            out.append(group[0] if len(group) == 1 else KafkaRangeGroup(tuple(group)))
            group.clear()

    for part in parts:
        n = part.until_offset - part.from_offset
        if n >= limit:
            out.append(part)
            continue
        if size + n > limit:
            close()
            size = 0
        group.append(part)
        size += n
    close()
    return out


def report_data_loss(fail_on_data_loss: bool, message: str) -> None:
    """Raise :class:`DataLossError` or log a warning, per ``failOnDataLoss`` (as Spark does)."""
    errors.report_data_loss(fail_on_data_loss, message, log)


def _divide(
    tp: TopicPartition, lo: int, hi: int, parts: int
) -> list[tuple[TopicPartition, int, int]]:
    """``[lo, hi)`` in ``parts`` consecutive pieces; the last one takes the rounding rest."""
    out = []
    remaining = hi - lo
    start = lo
    for part in range(parts):
        size = remaining // (parts - part)
        remaining -= size
        end = min(start + size, hi)
        out.append((tp, start, end))
        start = end
    return out


def split_ranges(
    ranges: list[tuple[TopicPartition, int, int]],
    min_partitions: int | None,
    max_records_per_partition: int | None,
) -> list[tuple[TopicPartition, int, int]]:
    """Split offset ranges into Spark tasks the way Spark's ``KafkaOffsetRangeCalculator`` does.

    Empty ranges are dropped. With ``maxRecordsPerPartition``, a range of ``n`` offsets becomes
    ``ceil(n / max)`` equal pieces. Then, if ``minPartitions`` is more than the number of
    ranges, ranges are split in proportion to their share of all offsets
    (``max(round(size / total * minPartitions), 1)`` pieces; ranges that get one piece are
    left out of the share of the others). Sizes are offsets, not records (compaction and
    transaction markers make them differ).

    Args:
        ranges: ``(topic-partition, from offset, until offset)`` triples.
        min_partitions: ``minPartitions`` or ``None``.
        max_records_per_partition: ``maxRecordsPerPartition`` or ``None``.

    Returns:
        The pieces, in the order of ``ranges``.
    """
    ranges = [r for r in ranges if r[2] - r[1] > 0]
    if (min_partitions is None or len(ranges) >= min_partitions) and (
        max_records_per_partition is None
    ):
        return ranges
    if max_records_per_partition is not None:
        divided = [
            piece
            for tp, lo, hi in ranges
            for piece in _divide(tp, lo, hi, -(-(hi - lo) // max_records_per_partition))
            if piece[2] > piece[1]
        ]
    else:
        divided = ranges
    if min_partitions is None or min_partitions <= len(divided):
        return divided

    def part_count(size: int, total: int, parts: int) -> int:
        # Java's Math.round: half up.
        return max(int(size / total * parts + 0.5), 1)

    total = sum(hi - lo for _, lo, hi in divided)
    unsplit = [part_count(r[2] - r[1], total, min_partitions) == 1 for r in divided]
    split_total = total - sum(
        r[2] - r[1] for r, whole in zip(divided, unsplit, strict=True) if whole
    )
    split_min = max(min_partitions - sum(unsplit), 1)
    out: list[tuple[TopicPartition, int, int]] = []
    for (tp, lo, hi), whole in zip(divided, unsplit, strict=True):
        parts = 1 if whole else part_count(hi - lo, split_total, split_min)
        out.extend(piece for piece in _divide(tp, lo, hi, parts) if piece[2] > piece[1])
    return out


class Planner:
    """Resolves topic-partitions and offsets on the driver, and plans input partitions.

    Args:
        options: validated source options.
    """

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._client: KafkaClient | None = None
        # The last topic_partitions() answer and when its Metadata was asked
        # (time.monotonic()), reused by latest_offsets() within metadata.max.age.ms.
        self._leaders: dict[TopicPartition, int] | None = None
        self._leaders_time = 0.0
        # The ListOffsets requests (latest, one per leader) of those topic-partitions.
        self._latest_requests: PreparedListOffsets | None = None
        # The Metadata refresh running between micro-batches (latest_offsets), on a planner
        # of its own (its own client: a KafkaClient is used by one thread at a time).
        self._refresh: _MetadataRefresh | None = None
        self._refresher: Planner | None = None

    # -- pickling: never ship a live client ------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"] = None
        state["_leaders"] = None
        state["_latest_requests"] = None
        state["_refresh"] = None
        state["_refresher"] = None
        return state

    @property
    def client(self) -> KafkaClient:
        """The Kafka client, created on first use."""
        if self._client is None:
            self._client = KafkaClient(self.options.consumer.client)
        return self._client

    def close(self) -> None:
        """Close the client's connections (if any were opened), and those of the Metadata
        request running between micro-batches, waited for up to 2 s (a healthy cluster
        answers in ms; one still retrying through a broker outage is cut off by the closed
        connections, and its daemon thread never holds up the stop for longer)."""
        refresh, self._refresh = self._refresh, None
        refresher, self._refresher = self._refresher, None
        try:
            if refresh is not None:
                refresh.thread.join(2.0)
            if refresher is not None:
                refresher.close()
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- topic-partitions -----------------------------------------------------------------
    def topic_partitions(self) -> tuple[dict[TopicPartition, int], dict[str, Any]]:
        """The topic-partitions the subscription covers now, with their leader node ids.

        Returns:
            ``({TopicPartition: leader_id}, topics)`` where ``topics`` is the metadata's
            ``name -> TopicInfo`` for the topics involved.

        Raises:
            KafkaApiError: a subscribed or assigned topic does not exist
                (UNKNOWN_TOPIC_OR_PARTITION) or is not authorized, naming the topic.
            KafkaTimeoutError: no broker answered Metadata for ``default.api.timeout.ms``
                (retried with backoff until then, e.g. through a broker restart).
        """
        sub = self.options.subscription
        api_timeout_ms = self.options.consumer.default_api_timeout_ms
        asked = time.monotonic()
        if isinstance(sub, SubscribePattern):
            metadata = self.client.metadata_retrying(None, timeout_ms=api_timeout_ms)
            topics = {
                name: info
                for name, info in metadata.topics.items()
                if not info.is_internal and sub.matches(name)
            }
        else:
            names = sorted(
                set(sub.topics)
                if isinstance(sub, Subscribe)
                else {tp.topic for tp in sub.partitions}
            )
            metadata = self.client.metadata_retrying(names, timeout_ms=api_timeout_ms)
            topics = {name: metadata.topics[name] for name in names if name in metadata.topics}
            for name in names:
                info = topics.get(name)
                code = info.error_code if info is not None else 3  # UNKNOWN_TOPIC_OR_PARTITION
                if code:
                    raise_for_error(code, f"for topic '{name}' (Metadata)")
        result: dict[TopicPartition, int] = {}
        for name, info in topics.items():
            for pid, pinfo in info.partitions.items():
                result[TopicPartition(name, pid)] = pinfo.leader_id
        if isinstance(sub, Assign):
            missing = [tp for tp in sub.partitions if tp not in result]
            if missing:
                raise ConfigError(
                    "Option 'assign' names partitions that do not exist: "
                    + ", ".join(map(str, missing))
                )
            result = {tp: result[tp] for tp in sub.partitions}
        leaders = dict(sorted(result.items()))
        self._leaders, self._leaders_time = dict(leaders), asked
        self._latest_requests = None
        return leaders, topics

    def forget_metadata(self) -> None:
        """Drop the topic-partitions :meth:`latest_offsets` would reuse: the next one asks
        Metadata."""
        self._leaders = None
        self._latest_requests = None

    def latest_offsets(self) -> dict[TopicPartition, int]:
        """The latest offset of every topic-partition of the subscription, for a micro-batch.

        The topic-partitions and their leaders of the last :meth:`topic_partitions` are
        reused while younger than ``kafka.metadata.max.age.ms``: one ListOffsets per leader
        broker, sent to all of them before any answer is read
        (:func:`~spark_kafka_py.consumer.offsets.list_offsets_once`). Metadata is not asked
        on this critical path but between micro-batches (:meth:`refresh_metadata`, which the
        stream reader calls once a micro-batch is planned, or when there is none), and this
        call adopts its answer when it has arrived. So a partition, or a topic matching
        ``subscribePattern``, added meanwhile enters the micro-batch after next (Spark's
        built-in source, which asks Metadata in every batch: the next one), and within
        ``metadata.max.age.ms`` in any case. A failed background request is not lost: the
        next call drops the cached answer and asks Metadata itself, raising what that raises.

        Any failure of that attempt (a broker that does not answer, a moved leader:
        NOT_LEADER_OR_FOLLOWER, a deleted topic: UNKNOWN_TOPIC_OR_PARTITION, a leaderless
        partition) drops the cached answer and does the full look-up: Metadata, then
        :meth:`list_offsets` with its retries, raising what they raise.

        Returns:
            ``{TopicPartition: offset}`` (the high watermark, or the last stable offset under
            ``read_committed``).

        Raises:
            as :meth:`topic_partitions` and :meth:`list_offsets`.
        """
        self._adopt_refresh()
        leaders = self._leaders
        max_age_ms = self.options.consumer.client.metadata_max_age_ms
        if leaders is not None and (time.monotonic() - self._leaders_time) * 1000 < max_age_ms:
            requests = self._latest_requests
            if requests is None and -1 not in leaders.values():
                by_leader: dict[int, dict[TopicPartition, int]] = {}
                for tp, leader in leaders.items():
                    by_leader.setdefault(leader, {})[tp] = LATEST_TIMESTAMP
                requests = self._latest_requests = PreparedListOffsets(
                    by_leader, isolation_level=self.options.consumer.isolation_level
                )
            if requests is not None:
                found, failures = requests.send(self.client)
                if not failures:
                    return found
                tp, err = min(failures.items())
                log.info(
                    "ListOffsets with cached metadata failed for %d partition(s), e.g. %s: %s; "
                    "asking Metadata again",
                    len(failures),
                    tp,
                    err,
                )
        self.forget_metadata()
        leaders, _ = self.topic_partitions()
        return self.list_offsets(dict.fromkeys(leaders, LATEST_TIMESTAMP))

    def refresh_metadata(self) -> None:
        """Ask Metadata for the subscription on a thread of its own (a second client, since
        a client is used by one thread at a time), unless such a request is under way; the
        next :meth:`latest_offsets` adopts the answer. Call it when the driver's Python
        process is idle until the next micro-batch (its job runs, or its trigger waits): the
        answer's decoding (about 130 ms of CPU at 10,000 partitions) then holds up no
        planning."""
        if self._refresh is not None:
            return
        if self._refresher is None:
            self._refresher = Planner(self.options)
        self._refresh = _MetadataRefresh(self._refresher)

    def _adopt_refresh(self) -> None:
        """Take a finished background Metadata answer: when the topic-partitions or leaders
        changed, they replace the cached ones (the ListOffsets requests are rebuilt), else the
        cached ones are as young as it; after a failure the cache is dropped, so that this
        micro-batch asks Metadata itself (and raises what that raises)."""
        refresh = self._refresh
        if refresh is None or refresh.thread.is_alive():
            return
        self._refresh = None
        if refresh.error is not None:
            log.info(
                "Metadata asked between micro-batches failed (%s); asking again", refresh.error
            )
            self.forget_metadata()
            return
        assert refresh.leaders is not None
        if refresh.leaders != self._leaders:
            self._leaders = refresh.leaders
            self._latest_requests = None
        self._leaders_time = refresh.asked

    # -- offsets --------------------------------------------------------------------------
    def list_offsets(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """ListOffsets for each partition (-2 earliest, -1 latest), one request per broker."""
        if not timestamps:
            return {}
        return list_offsets(
            self.client,
            timestamps,
            isolation_level=self.options.consumer.isolation_level,
            retries=self.options.fetch_offset_num_retries,
            retry_interval_ms=self.options.fetch_offset_retry_interval_ms,
            api_timeout_ms=self.options.consumer.default_api_timeout_ms,
            retry_backoff_ms=self.options.consumer.client.retry_backoff_ms,
        )

    def resolve(
        self, spec: OffsetSpec, partitions: Mapping[TopicPartition, int], option: str
    ) -> dict[TopicPartition, int]:
        """Concrete offsets for ``partitions`` from an offset spec.

        Specific JSON offsets must name every partition of the subscription (Spark's rule);
        -2/-1 entries are looked up.

        Raises:
            ConfigError: JSON offsets that miss a partition of the subscription.
        """
        if isinstance(spec, ByTimestamp):
            return self._resolve_timestamps(spec, partitions, option)
        if spec == "earliest":
            return self.list_offsets(dict.fromkeys(partitions, EARLIEST_TIMESTAMP))
        if spec == "latest":
            return self.list_offsets(dict.fromkeys(partitions, LATEST_TIMESTAMP))
        assert isinstance(spec, Mapping)
        missing = [tp for tp in partitions if tp not in spec]
        if missing:
            raise ConfigError(
                f"Option '{option}' contains specific offsets, so it must name every "
                f"TopicPartition; use -1 for latest, -2 for earliest. Missing: "
                f"{', '.join(map(str, missing))}. Specified: "
                f"{', '.join(map(str, sorted(spec)))}"
            )
        lookups = {tp: off for tp, off in spec.items() if tp in partitions and off < 0}
        result = {tp: off for tp, off in spec.items() if tp in partitions and off >= 0}
        result.update(self.list_offsets(lookups))
        return dict(sorted(result.items()))

    def _resolve_timestamps(
        self, spec: ByTimestamp, partitions: Mapping[TopicPartition, int], option: str
    ) -> dict[TopicPartition, int]:
        """Offsets by timestamp (ListOffsets v1+ with a timestamp in ms): for each partition the
        earliest offset whose record timestamp is >= the timestamp.

        Where no record is that late, a start follows ``startingOffsetsByTimestampStrategy``
        (``error``: fail naming the topic-partition and timestamp; ``latest``: the latest
        offset) and an end is the latest offset, as Spark's ``KafkaOffsetReaderAdmin``.

        Raises:
            ConfigError: per-partition timestamps that do not name exactly the partitions of
                the subscription, or no match with strategy ``error``.
        """
        starting = option.startswith("starting")
        if spec.per_partition is not None:
            key = "startingOffsetsByTimestamp" if starting else "endingOffsetsByTimestamp"
            if set(spec.per_partition) != set(partitions):
                raise ConfigError(
                    f"Option '{key}' must name exactly the partitions of the subscription. "
                    f"Specified: {', '.join(map(str, sorted(spec.per_partition)))}; "
                    f"assigned: {', '.join(map(str, sorted(partitions)))}"
                )
            timestamps = dict(spec.per_partition)
        else:
            assert spec.everywhere is not None
            timestamps = dict.fromkeys(partitions, spec.everywhere)
        found = self.list_offsets(timestamps)
        unmatched = [tp for tp in sorted(found) if found[tp] < 0]
        if unmatched and starting and spec.strategy == "error":
            tp = unmatched[0]
            raise ConfigError(
                f"No offset matched from request of topic-partition {tp} and timestamp "
                f"{timestamps[tp]} ({option}). Set 'startingOffsetsByTimestampStrategy' to "
                "'latest' to start such partitions at the latest offset instead."
            )
        if unmatched:
            found.update(self.list_offsets(dict.fromkeys(unmatched, LATEST_TIMESTAMP)))
        return dict(sorted(found.items()))

    def log_append_time_topics(self, topics: Iterable[str]) -> set[str]:
        """Of ``topics``, those whose ``message.timestamp.type`` is ``LogAppendTime``
        (DescribeConfigs)."""
        kinds = timestamp_types(
            self.client, list(topics), timeout_ms=self.options.consumer.default_api_timeout_ms
        )
        return {topic for topic, kind in kinds.items() if kind == LOG_APPEND_TIME}

    # -- planning -------------------------------------------------------------------------
    def plan(
        self,
        start: Mapping[TopicPartition, int],
        end: Mapping[TopicPartition, int],
        leaders: Mapping[TopicPartition, int] | None = None,
        pushdown: Pushdown | None = None,
    ) -> list[KafkaInputPartition | KafkaRangeGroup]:
        """One input partition per topic-partition with ``start < end`` (more with
        ``minPartitions`` or ``maxRecordsPerPartition``).

        Partitions in ``end`` without a start (new partitions) start at their earliest
        offset; Spark reports a new partition whose earliest offset is not 0 as data loss.
        End below start is data loss too (e.g. a topic deleted and recreated). With a
        ``pushdown`` (a batch read's filters), the ranges are then narrowed to what can match
        (:meth:`Pushdown.narrow`) before they are split into Spark tasks, and small ranges
        then share tasks (:func:`group_small_ranges`) unless ``minPartitions`` or
        ``maxRecordsPerPartition`` set the tasks.
        """
        leaders = leaders or {}
        start = dict(start)
        new = [tp for tp in end if tp not in start]
        if new:
            earliest = self.list_offsets(dict.fromkeys(new, EARLIEST_TIMESTAMP))
            for tp in new:
                off = earliest[tp]
                if off != 0:
                    report_data_loss(
                        self.options.fail_on_data_loss,
                        f"Added partition {tp} starts from {off} instead of 0",
                    )
                start[tp] = off
        gone = [tp for tp in start if tp not in end]
        for tp in gone:
            report_data_loss(
                self.options.fail_on_data_loss,
                f"Partition {tp} was present at offset {start[tp]} but is gone now",
            )
        ranges: list[tuple[TopicPartition, int, int]] = []
        for tp in sorted(end):
            lo, hi = start[tp], end[tp]
            if hi < lo:
                report_data_loss(
                    self.options.fail_on_data_loss,
                    f"Partition {tp}'s offset was changed from {lo} to {hi}",
                )
                continue
            ranges.append((tp, lo, hi))
        if pushdown is not None:
            ranges = pushdown.narrow(ranges, self.list_offsets, self.log_append_time_topics)
        pieces = split_ranges(
            ranges, self.options.min_partitions, self.options.max_records_per_partition
        )
        parts = [
            KafkaInputPartition(tp.topic, tp.partition, lo, hi, leaders.get(tp, -1))
            for tp, lo, hi in pieces
        ]
        if (
            pushdown is not None
            and self.options.min_partitions is None
            and self.options.max_records_per_partition is None
        ):
            return group_small_ranges(parts)
        return list(parts)


class _MetadataRefresh:
    """One :meth:`Planner.topic_partitions` of ``planner`` on a daemon thread: its answer in
    ``leaders`` and ``asked`` (``time.monotonic()`` of the request), or its exception in
    ``error``, once ``thread`` ended."""

    def __init__(self, planner: Planner) -> None:
        self.leaders: dict[TopicPartition, int] | None = None
        self.asked = 0.0
        self.error: BaseException | None = None
        self._planner = planner
        self.thread = threading.Thread(
            target=self._run, name="spark-kafka-py-metadata", daemon=True
        )
        self.thread.start()

    def _run(self) -> None:
        try:
            self.leaders, _ = self._planner.topic_partitions()
            self.asked = self._planner._leaders_time
        except BaseException as exc:  # handed to the next micro-batch (_adopt_refresh)
            self.error = exc
