"""Driver-side planning: which topic-partitions, which offsets, which Spark input partitions.

The :class:`Planner` is what Spark's ``KafkaOffsetReader`` is to the built-in source. It
puts together three parts, each with one job, and holds the one client they ask through:

- the subscription's topic-partitions and leaders (:func:`subscribed_partitions`, a Metadata
  request), cached with their age and refreshed between micro-batches by a
  :class:`~spark_kafka_py.client.metadata_cache.MetadataCache`;
- offsets from offset specs (:mod:`spark_kafka_py.spark.offset_resolution`), looked up with
  ListOffsets, one request per leader broker (:mod:`spark_kafka_py.consumer.offsets`);
- ``[start, end)`` offsets to :class:`KafkaInputPartition` s, checking for data loss the way
  Spark's ``KafkaMicroBatchStream`` does (:mod:`spark_kafka_py.spark.range_planner`, no I/O).

It holds a :class:`~spark_kafka_py.client.cluster.KafkaClient` created on first use: PySpark
pickles readers, and a constructor must open no sockets.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from spark_kafka_py.client.cluster import KafkaClient, TopicInfo
from spark_kafka_py.client.metadata_cache import MetadataCache
from spark_kafka_py.consumer.offsets import PreparedListOffsets, list_offsets
from spark_kafka_py.consumer.topic_configs import LOG_APPEND_TIME, timestamp_types
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.protocol.error_codes import UNKNOWN_TOPIC_OR_PARTITION, raise_for_error
from spark_kafka_py.spark.offset_resolution import resolve_offsets
from spark_kafka_py.spark.options import (
    Assign,
    OffsetSpec,
    SourceOptions,
    Subscribe,
    SubscribePattern,
    Subscription,
)
from spark_kafka_py.spark.pushdown import Pushdown
from spark_kafka_py.spark.range_planner import (
    GROUP_OFFSETS,
    KafkaInputPartition,
    KafkaRangeGroup,
    group_small_ranges,
    input_partitions,
    new_partitions,
    offset_ranges,
    planned_ranges,
    report_data_loss,
    split_ranges,
)

# The range planner's names stay importable from here, where the reader code, the group
# code, the benchmarks and the tests import them.
__all__ = [
    "GROUP_OFFSETS",
    "KafkaInputPartition",
    "KafkaRangeGroup",
    "Planner",
    "group_small_ranges",
    "planned_ranges",
    "report_data_loss",
    "split_ranges",
    "subscribed_partitions",
]

log = logging.getLogger(__name__)


def subscribed_partitions(
    client: KafkaClient, subscription: Subscription, api_timeout_ms: int
) -> tuple[dict[TopicPartition, int], dict[str, TopicInfo]]:
    """The topic-partitions a subscription covers now, with their leader node ids (Metadata,
    API key 3: of the named topics, or of all topics for ``subscribePattern``, internal ones
    left out as Spark's ``SubscribePatternStrategy`` does).

    Args:
        client: the client to ask through.
        subscription: ``subscribe``, ``subscribePattern`` or ``assign``.
        api_timeout_ms: ``default.api.timeout.ms``: how long Metadata is retried (ms).

    Returns:
        ``({TopicPartition: leader node id}, topics)``, the first sorted by topic-partition
        (-1: no leader), ``topics`` the metadata's ``name -> TopicInfo`` of the topics
        involved.

    Raises:
        KafkaApiError: a subscribed or assigned topic does not exist
            (UNKNOWN_TOPIC_OR_PARTITION) or is not authorized, naming the topic.
        KafkaTimeoutError: no broker answered Metadata within ``api_timeout_ms`` (retried
            with backoff until then, e.g. through a broker restart).
        ConfigError: ``assign`` names partitions that do not exist.
    """
    if isinstance(subscription, SubscribePattern):
        metadata = client.metadata_retrying(None, timeout_ms=api_timeout_ms)
        topics = {
            name: info
            for name, info in metadata.topics.items()
            if not info.is_internal and subscription.matches(name)
        }
    else:
        names = sorted(
            set(subscription.topics)
            if isinstance(subscription, Subscribe)
            else {tp.topic for tp in subscription.partitions}
        )
        metadata = client.metadata_retrying(names, timeout_ms=api_timeout_ms)
        topics = {name: metadata.topics[name] for name in names if name in metadata.topics}
        for name in names:
            info = topics.get(name)
            code = info.error_code if info is not None else UNKNOWN_TOPIC_OR_PARTITION.code
            if code:
                raise_for_error(code, f"for topic '{name}' (Metadata)")
    result: dict[TopicPartition, int] = {}
    for name, info in topics.items():
        for pid, pinfo in info.partitions.items():
            result[TopicPartition(name, pid)] = pinfo.leader_id
    if isinstance(subscription, Assign):
        missing = [tp for tp in subscription.partitions if tp not in result]
        if missing:
            raise ConfigError(
                "Option 'assign' names partitions that do not exist: "
                + ", ".join(map(str, missing))
            )
        result = {tp: result[tp] for tp in subscription.partitions}
    return dict(sorted(result.items())), topics


class Planner:
    """Resolves topic-partitions and offsets on the driver, and plans input partitions.

    Args:
        options: validated source options.
    """

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._client: KafkaClient | None = None
        self._metadata: MetadataCache | None = None
        # The ListOffsets requests (latest, one per leader) of the cached topic-partitions,
        # with the cache's version they were built for (None: a partition has no leader).
        self._latest_requests: tuple[int, PreparedListOffsets | None] | None = None

    # -- pickling: never ship a live client ------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_client=None, _metadata=None, _latest_requests=None)
        return state

    @property
    def client(self) -> KafkaClient:
        """The Kafka client, created on first use."""
        if self._client is None:
            self._client = KafkaClient(self.options.consumer.client)
        return self._client

    @property
    def metadata(self) -> MetadataCache:
        """The cached topic-partitions and leaders of the subscription (created on first
        use; its background refresh asks through a client of its own)."""
        if self._metadata is None:
            self._metadata = MetadataCache(self.options.consumer.client, self._lookup_leaders)
        return self._metadata

    def close(self) -> None:
        """Close the client's connections (if any were opened), and those of the Metadata
        request running between micro-batches, waited for up to 2 s
        (:meth:`MetadataCache.close`)."""
        try:
            if self._metadata is not None:
                self._metadata.close()
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- topic-partitions -----------------------------------------------------------------
    def topic_partitions(self) -> tuple[dict[TopicPartition, int], dict[str, TopicInfo]]:
        """The topic-partitions the subscription covers now, with their leader node ids
        (:func:`subscribed_partitions`); the answer is cached for :meth:`latest_offsets`.

        Returns:
            ``({TopicPartition: leader_id}, topics)`` where ``topics`` is the metadata's
            ``name -> TopicInfo`` for the topics involved.

        Raises:
            as :func:`subscribed_partitions`.
        """
        asked = time.monotonic()
        leaders, topics = subscribed_partitions(
            self.client, self.options.subscription, self.options.consumer.default_api_timeout_ms
        )
        self.metadata.store(leaders, asked)
        return leaders, topics

    def _lookup_leaders(self, client: KafkaClient) -> dict[TopicPartition, int]:
        """The background refresh's look-up (on the cache's own client)."""
        return subscribed_partitions(
            client, self.options.subscription, self.options.consumer.default_api_timeout_ms
        )[0]

    def forget_metadata(self) -> None:
        """Drop the topic-partitions :meth:`latest_offsets` would reuse: the next one asks
        Metadata."""
        if self._metadata is not None:
            self._metadata.forget()
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
        leaders = self.metadata.fresh()
        if leaders is not None:
            requests = self._latest_requests_of(leaders)
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

    def _latest_requests_of(
        self, leaders: Mapping[TopicPartition, int]
    ) -> PreparedListOffsets | None:
        """The ListOffsets requests (latest) for the cached ``leaders``, built once per
        version of the cache; ``None`` when a partition has no leader."""
        version = self.metadata.version
        if self._latest_requests is None or self._latest_requests[0] != version:
            requests = None
            if -1 not in leaders.values():
                by_leader: dict[int, dict[TopicPartition, int]] = {}
                for tp, leader in leaders.items():
                    by_leader.setdefault(leader, {})[tp] = LATEST_TIMESTAMP
                requests = PreparedListOffsets(
                    by_leader, isolation_level=self.options.consumer.isolation_level
                )
            self._latest_requests = (version, requests)
        return self._latest_requests[1]

    def refresh_metadata(self) -> None:
        """Ask Metadata for the subscription on a thread of its own (a second client, since
        a client is used by one thread at a time), unless such a request is under way; the
        next :meth:`latest_offsets` adopts the answer. Call it when the driver's Python
        process is idle until the next micro-batch (its job runs, or its trigger waits): the
        answer's decoding (about 130 ms of CPU at 10,000 partitions) then holds up no
        planning."""
        self.metadata.refresh()

    # -- offsets --------------------------------------------------------------------------
    def list_offsets(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """ListOffsets for each partition, one request per broker, retried per
        ``fetchOffset.numRetries`` and ``fetchOffset.retryIntervalMs``.

        Args:
            timestamps: ``{TopicPartition: timestamp}``: ms since the epoch, -2 earliest,
                -1 latest.

        Returns:
            ``{TopicPartition: offset}`` (-1 where no record is as late as a timestamp).

        Raises:
            as :func:`spark_kafka_py.consumer.offsets.list_offsets`.
        """
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
        """Concrete offsets for ``partitions`` from an offset spec
        (:func:`~spark_kafka_py.spark.offset_resolution.resolve_offsets` with
        :meth:`list_offsets`).

        Raises:
            ConfigError: JSON offsets that miss a partition of the subscription; timestamps
                per partition that do not name exactly its partitions, or that match no
                record with ``startingOffsetsByTimestampStrategy=error``.
        """
        return resolve_offsets(spec, partitions, option, self.list_offsets)

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
        offset (ListOffsets); Spark reports a new partition whose earliest offset is not 0
        as data loss. End below start is data loss too (e.g. a topic deleted and recreated):
        :func:`~spark_kafka_py.spark.range_planner.offset_ranges`. With a ``pushdown`` (a
        batch read's filters), the ranges are then narrowed to what can match
        (:meth:`Pushdown.narrow`) before they are split into Spark tasks, and small ranges
        then share tasks (:func:`group_small_ranges`) unless ``minPartitions`` or
        ``maxRecordsPerPartition`` set the tasks.

        Raises:
            DataLossError: data loss with ``failOnDataLoss=true``.
        """
        earliest = self.list_offsets(dict.fromkeys(new_partitions(start, end), EARLIEST_TIMESTAMP))
        ranges = offset_ranges(start, end, earliest, self.options.fail_on_data_loss)
        if pushdown is not None:
            ranges = pushdown.narrow(ranges, self.list_offsets, self.log_append_time_topics)
        return input_partitions(
            ranges,
            leaders or {},
            min_partitions=self.options.min_partitions,
            max_records_per_partition=self.options.max_records_per_partition,
            group_small=pushdown is not None,
        )
