"""The executor's Fetch loop: the records of one offset range of one partition, as Arrow.

One :class:`PartitionFetcher` reads ``[start, end)`` of a ``TopicPartition`` from its leader
with Fetch requests (Kafka's ``FetchRequest``/``FetchResponse`` specs, no fetch sessions:
session id 0, epoch -1, KIP-227), decodes each response's record batches with
:class:`spark_kafka_py.records.DecodedStream` and yields ``pyarrow.RecordBatch`` es.

Bounds: it never asks past ``end``, and returns nothing at or beyond the high watermark (the
broker does not serve it) or, under ``read_committed``, the last stable offset. Aborted
transactions and control batches are filtered by the decoder. A response may decompress to
``maxDecompressionRatio`` times the bytes it could carry, and its Arrow batches are yielded
as they are decoded, each about :data:`ARROW_BATCH_FETCHES` x ``max.partition.fetch.bytes``
(:mod:`spark_kafka_py.records.bounds`).

Errors, as the Java consumer and Spark's ``KafkaDataConsumer`` treat them:

* leader changes (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, ...) and
  connection failures: refresh metadata, back off, retry, for at most
  ``kafkaConsumer.pollTimeoutMs`` without progress; the backoff is the one retry policy's
  (:mod:`spark_kafka_py.client.retry`: ``retry.backoff.ms`` doubling per round without progress
  up to ``retry.backoff.max.ms``, with jitter, KIP-580); an error that waiting cannot mend
  (not ``retriable``: a failed TLS handshake, a peer that is not Kafka, no broker answering
  Metadata with valid bytes) is raised at once;
* a response that breaks the protocol (malformed bytes, a correlation id never sent: a
  :class:`~spark_kafka_py.errors.KafkaProtocolError` from the connection) or that answers a
  topic or partition the Fetch did not ask for, or the partition twice (a sessionless Fetch,
  KIP-227 session id 0, is answered with exactly the partitions asked for): a
  :class:`~spark_kafka_py.errors.KafkaProtocolError` naming the broker, raised at once, never
  retried: a broken or hostile broker, or a man in the middle, does not heal by waiting;
* OFFSET_OUT_OF_RANGE, or a high watermark below the range for ``kafkaConsumer.pollTimeoutMs``
  (a new leader's high watermark may lag for a moment after a failover): the records are
  gone, which is data loss: :class:`~spark_kafka_py.errors.DataLossError` with
  ``failOnDataLoss=true``, a warning and a skip to what is still there with ``false``;
* log truncation (KIP-320): each Fetch (v12+) carries ``last_fetched_epoch``, the partition
  leader epoch of the last record batch read; a leader whose log for that epoch ends below
  the fetch offset answers with ``diverging_epoch`` instead of records. Records already read
  are then gone from the log (an unclean leader election, a lost disk): data loss, reported
  as above, never a silent re-read;
* any other error code: :class:`~spark_kafka_py.errors.KafkaApiError` naming the partition.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pyarrow as pa

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.retry import Backoff, retriable
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, READ_COMMITTED, TopicPartition
from spark_kafka_py.errors import (
    KafkaApiError,
    KafkaConnectionError,
    KafkaProtocolError,
    KafkaTimeoutError,
    report_data_loss,
)
from spark_kafka_py.protocol.error_codes import (
    FENCED_LEADER_EPOCH,
    INCONSISTENT_TOPIC_ID,
    KAFKA_STORAGE_ERROR,
    LEADER_NOT_AVAILABLE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_NOT_AVAILABLE,
    OFFSET_OUT_OF_RANGE,
    REPLICA_NOT_AVAILABLE,
    UNKNOWN_LEADER_EPOCH,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
    error_for_code,
    raise_for_error,
)
from spark_kafka_py.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    PartitionData,
)
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.records import DecodedStream
from spark_kafka_py.records.format import NO_PARTITION_LEADER_EPOCH, last_batch_leader_epoch

log = logging.getLogger(__name__)

#: Error codes after which the leader must be looked up again (Kafka's ``Errors``).
REFRESH_METADATA_ERRORS = frozenset(
    {
        UNKNOWN_TOPIC_OR_PARTITION,
        LEADER_NOT_AVAILABLE,
        NOT_LEADER_OR_FOLLOWER,
        REPLICA_NOT_AVAILABLE,
        KAFKA_STORAGE_ERROR,
        FENCED_LEADER_EPOCH,
        UNKNOWN_LEADER_EPOCH,
        OFFSET_NOT_AVAILABLE,
        UNKNOWN_TOPIC_ID,
        INCONSISTENT_TOPIC_ID,
    }
)
#: ReplicaId of a consumer in Fetch (not a follower).
CONSUMER_REPLICA_ID = -1
#: An Arrow batch is closed once it holds this many times ``max.partition.fetch.bytes`` of
#: decoded data (:mod:`spark_kafka_py.records.bounds`): a full uncompressed response of small
#: records stays one batch, a compressed one is yielded in pieces (the choice is measured in
#: docs/performance.md).
ARROW_BATCH_FETCHES = 2


# -- what one Fetch response means for the read: pure, no I/O ---------------------------------
# NamedTuples, not dataclasses: a Python worker may import this module for each Spark task, and
# a frozen dataclass costs milliseconds to create. Read them by type (isinstance), not by ==.
class Retry(NamedTuple):
    """No progress; fetch ``pos`` again. ``problem`` is what a timeout will report.

    Attributes:
        problem: why, as the ``KafkaTimeoutError`` after ``kafkaConsumer.pollTimeoutMs``
            without progress says it.
        refresh_metadata: look the leader up again first (Metadata).
        back_off: sleep the backoff first (not when the broker's ``max_wait_ms`` has
            already waited, or the next Fetch differs from this one).
        lost_if_lasting: the log ends below ``pos``; if that lasts until the timeout, the
            range is reported as data loss instead of a timeout.
    """

    problem: str
    refresh_metadata: bool = True
    back_off: bool = True
    lost_if_lasting: bool = False


class Decode(NamedTuple):
    """The response carries no error: decode its records from ``pos``."""


class Advance(NamedTuple):
    """The decoder read up to ``next_offset`` (past records yielded, and past control batches,
    aborted transactions and compacted gaps); ``leader_epoch`` is the partition leader epoch
    of the last batch read, -1 when unknown (legacy message sets), for KIP-320."""

    next_offset: int
    leader_epoch: int


class GrowFetch(NamedTuple):
    """A record batch larger than ``partition_max_bytes`` was cut short (brokers before
    KIP-74): fetch again with ``max_bytes``."""

    max_bytes: int


class SwitchReplica(NamedTuple):
    """KIP-392 (Fetch v11+): the leader names ``node`` as the replica to fetch from (given
    ``rack_id``, ``kafka.client.rack``) and returned no records."""

    node: int


class OutOfRange(NamedTuple):
    """OFFSET_OUT_OF_RANGE from the leader: ``pos`` is no longer (or not yet) in the log;
    ``log_start_offset`` as the response gives it (-1: look it up with ListOffsets)."""

    log_start_offset: int


class Truncated(NamedTuple):
    """KIP-320: the leader's log for our ``last_fetched_epoch`` ends at ``end_offset``
    (``diverging_epoch``, Fetch v12+), below ``pos``: records already read are gone."""

    epoch: int
    end_offset: int


class Fail(NamedTuple):
    """A partition error that waiting cannot mend (e.g. TOPIC_AUTHORIZATION_FAILED)."""

    error: KafkaApiError


#: What to do with one partition's Fetch response, before decoding.
ResponseStep = Retry | Decode | SwitchReplica | OutOfRange | Truncated | Fail
#: What to do after decoding it.
DecodedStep = Advance | GrowFetch | Retry


def classify_response(
    part: PartitionData | None,
    tp: TopicPartition,
    pos: int,
    *,
    leader: int,
    read_replica: int,
) -> ResponseStep:
    """What ``part`` (this partition of a Fetch at offset ``pos``, ``None`` when the response
    left it out) means, before its records are decoded.

    The order is the Java consumer's (``FetchCollector``: errors, then a successful
    partition's diverging epoch and preferred read replica): the error code first
    (``FetchResponse.json``: a partition with an error carries no records), then
    ``diverging_epoch`` (KIP-320), then ``preferred_read_replica`` (KIP-392), else decode.

    Args:
        part: the partition's ``PartitionData`` (checked by :func:`answered_partition`).
        tp: the partition (for messages).
        pos: the ``fetch_offset`` asked.
        leader: the leader's node id as last looked up.
        read_replica: the node the Fetch went to when not the leader (KIP-392), else -1.
    """
    if part is None:
        return Retry("the partition was missing from the Fetch response")
    code = part.error_code
    if code in REFRESH_METADATA_ERRORS:
        return Retry(str(error_for_code(code, f"fetching {tp} at offset {pos}")))
    if code == OFFSET_OUT_OF_RANGE and read_replica >= 0:
        # A follower that lags; the leader decides (as the Java consumer does).
        return Retry(f"read replica {read_replica}: offset {pos} out of range", back_off=False)
    if code == OFFSET_OUT_OF_RANGE:
        return OutOfRange(part.log_start_offset)
    if code:
        return Fail(error_for_code(code, f"fetching {tp} at offset {pos}"))
    diverging = part.diverging_epoch
    if diverging is not None and diverging.epoch >= 0:
        return Truncated(diverging.epoch, diverging.end_offset)
    preferred = part.preferred_read_replica
    if read_replica < 0 and preferred >= 0 and preferred != leader and not part.records:
        return SwitchReplica(preferred)
    return Decode()


def classify_decoded(
    part: PartitionData,
    tp: TopicPartition,
    pos: int,
    end: int,
    *,
    next_offset: int,
    incomplete_tail: bool,
    read_committed: bool,
    max_bytes: int,
    fetch_max_bytes: int,
) -> DecodedStep:
    """What decoding ``part`` (a Fetch at ``pos`` of the range ``[pos, end)``) up to
    ``next_offset`` means: progress, or why there was none.

    Args:
        part: the partition's ``PartitionData``, classified :class:`Decode`.
        tp, pos, end: the partition and what is left of the range (for messages).
        next_offset: the decoder's ``next_offset`` (``pos`` when nothing was read).
        incomplete_tail: the records ended inside a batch the decoder could not read.
        read_committed: ``isolation.level=read_committed`` (bounded by the last stable
            offset, KIP-98).
        max_bytes: the ``partition_max_bytes`` asked (bytes).
        fetch_max_bytes: ``fetch.max.bytes``, the most that may be asked (bytes).
    """
    if next_offset > pos:
        epoch = last_batch_leader_epoch(part.records or b"", next_offset)
        return Advance(next_offset, epoch)
    if incomplete_tail:
        # A batch larger than partition_max_bytes (brokers before KIP-74 cut it).
        if max_bytes >= fetch_max_bytes:
            return Retry(
                f"a record batch at offset {pos} is larger than fetch.max.bytes={fetch_max_bytes}",
                refresh_metadata=False,
                back_off=False,
            )
        return GrowFetch(min(max_bytes * 2, fetch_max_bytes))
    upper = part.high_watermark
    if read_committed and part.last_stable_offset >= 0:
        upper = min(upper, part.last_stable_offset)
    if upper <= pos and not read_committed:
        # The log ends below the planned range: records were truncated away, or a new
        # leader's high watermark still lags the old leader's (for a moment after a
        # failover, until the followers fetch again). As Spark's KafkaDataConsumer (which
        # polls for pollTimeoutMs before comparing with the latest offset), it is data loss
        # only if it lasts pollTimeoutMs; meanwhile look for the leader.
        return Retry(
            f"Cannot fetch offsets [{pos}, {end}) of {tp}: the high watermark is {upper}",
            lost_if_lasting=True,
        )
    # Nothing there yet: the broker has already waited fetch.max.wait.ms.
    return Retry(
        f"fetch at offset {pos} returned no records (high watermark {part.high_watermark},"
        f" last stable offset {part.last_stable_offset})",
        refresh_metadata=False,
        back_off=False,
    )


class PartitionFetcher:
    """Reads offset ranges of one partition; see the module docstring for the rules.

    The attributes hold what the next Fetch is built from (node, leader epoch, topic id,
    size, ``last_fetched_epoch``); :meth:`read` holds the progress of one range (position,
    time of the last progress, the last reason for none).

    Args:
        client: the client to use (not closed by the fetcher).
        tp: the topic-partition.
        settings: consumer settings (fetch sizes in bytes, waits in ms, isolation level).
        include_headers: build the ``headers`` column.
        fail_on_data_loss: raise on missing records (``True``) or warn and skip.
        poll_timeout_ms: how long to keep retrying without progress before failing (ms);
            ``None`` for ``settings.poll_timeout_ms`` (``kafkaConsumer.pollTimeoutMs``).
        leader_hint: the leader's node id known at planning time, or -1.
    """

    def __init__(
        self,
        client: KafkaClient,
        tp: TopicPartition,
        settings: ConsumerSettings,
        *,
        include_headers: bool = False,
        fail_on_data_loss: bool = True,
        poll_timeout_ms: int | None = None,
        leader_hint: int = -1,
    ) -> None:
        self.client = client
        self.tp = tp
        self.settings = settings
        self.include_headers = include_headers
        self.fail_on_data_loss = fail_on_data_loss
        self.poll_timeout_ms = (
            settings.poll_timeout_ms if poll_timeout_ms is None else poll_timeout_ms
        )
        self._backoff = Backoff(settings.client.retry_backoff_ms)
        self._leader = leader_hint
        self._leader_epoch = -1
        # KIP-320: partition leader epoch of the last record batch read, or -1.
        self._last_fetched_epoch = NO_PARTITION_LEADER_EPOCH
        # KIP-392: the replica the leader told us to fetch from (kafka.client.rack), or -1.
        self._read_replica = -1
        # Node id -> serves Fetch v12+ (asked once per node, not per Fetch; see _fetch_request).
        self._fetch_v12: dict[int, bool] = {}
        self._topic_id: uuid.UUID | None = None  # None: unknown or the broker has none
        self._max_bytes = settings.max_partition_fetch_bytes
        self._need_metadata = True

    # -- metadata -------------------------------------------------------------------------
    def _refresh_leader(self) -> None:
        # Any trouble sends us back to the leader, which may name a read replica again.
        self._read_replica = -1
        metadata = self.client.metadata([self.tp.topic])
        topic = metadata.topics.get(self.tp.topic)
        part = topic.partitions.get(self.tp.partition) if topic is not None else None
        if topic is not None and topic.error_code:
            context = f"for topic '{self.tp.topic}' (Metadata)"
            if not error_for_code(topic.error_code, context).retriable:
                # e.g. TOPIC_AUTHORIZATION_FAILED: waiting for a leader would only time out
                raise_for_error(topic.error_code, context)
        if topic is None or part is None:
            self._leader = -1
            return
        self._topic_id = topic.topic_id
        self._leader = part.leader_id
        self._leader_epoch = part.leader_epoch
        self._need_metadata = False

    def _data_loss(self, message: str) -> None:
        report_data_loss(self.fail_on_data_loss, message, log)

    # -- the loop -------------------------------------------------------------------------
    def read(self, start: int, end: int) -> Iterator[pa.RecordBatch]:
        """Yield the records with offsets in ``[start, end)`` as Arrow batches.

        Every offset of the range is either yielded, or was never a data record (control
        batches, aborted transactions, compacted away), or is reported as data loss. Each
        round: one Fetch (:meth:`_fetch`), what its answer means (:func:`classify_response`,
        :func:`classify_decoded`), and that carried out here.

        Raises:
            DataLossError: records of the range are gone and ``failOnDataLoss`` is true.
            KafkaTimeoutError: no progress within ``poll_timeout_ms``.
            KafkaApiError: a non-retriable error code from the broker.
            KafkaConnectionError: a connection error that is not ``retriable``.
            CorruptRecordError / KafkaProtocolError: bad bytes from the broker, or a Fetch
                response for a topic or partition not asked for (the message names the broker).
        """
        pos = start
        read_committed = self.settings.isolation_level == READ_COMMITTED
        last_progress = time.monotonic()
        stalls = 0  # rounds backed off since the last progress: the backoff's exponent
        stalled = Retry("no records returned")  # the last reason for no progress
        step: ResponseStep | DecodedStep = Decode()  # the last round's outcome
        while pos < end:
            if (time.monotonic() - last_progress) * 1000 > self.poll_timeout_ms:
                if isinstance(step, Retry) and step.lost_if_lasting:
                    self._data_loss(step.problem)
                    return
                raise KafkaTimeoutError(
                    f"Cannot fetch records in [{pos}, {end}) of {self.tp} within "
                    f"kafkaConsumer.pollTimeoutMs={self.poll_timeout_ms} ms: {stalled.problem}"
                )
            part = self._fetch(pos)
            if isinstance(part, Retry):
                step = part
            else:
                step = classify_response(
                    part, self.tp, pos, leader=self._leader, read_replica=self._read_replica
                )
            if isinstance(step, Decode):
                assert part is not None and not isinstance(part, Retry)  # as classified
                decoded = self._decode(part, pos, end, read_committed)
                yield from decoded
                step = classify_decoded(
                    part,
                    self.tp,
                    pos,
                    end,
                    next_offset=decoded.next_offset,
                    incomplete_tail=decoded.incomplete_tail,
                    read_committed=read_committed,
                    max_bytes=self._max_bytes,
                    fetch_max_bytes=self.settings.fetch_max_bytes,
                )
            if isinstance(step, Advance):
                if step.leader_epoch >= 0:
                    self._last_fetched_epoch = step.leader_epoch
                pos = step.next_offset
                last_progress = time.monotonic()
                stalls = 0
                self._max_bytes = self.settings.max_partition_fetch_bytes
            elif isinstance(step, Retry):
                stalled = step
                if step.refresh_metadata:
                    self._need_metadata = True
                if step.back_off:
                    time.sleep(self._backoff.pause_ms(stalls) / 1000)
                    stalls += 1
            elif isinstance(step, GrowFetch):
                self._max_bytes = step.max_bytes
            elif isinstance(step, SwitchReplica):
                self._read_replica = step.node
            elif isinstance(step, OutOfRange):
                pos = self._out_of_range(pos, end, step.log_start_offset)
                last_progress = time.monotonic()
                stalls = 0
            elif isinstance(step, Truncated):
                self._log_truncated(pos, step.epoch, step.end_offset)
                self._last_fetched_epoch = NO_PARTITION_LEADER_EPOCH  # learned again
                last_progress = time.monotonic()
                stalls = 0
            else:
                assert isinstance(step, Fail)
                raise step.error

    def _fetch(self, pos: int) -> PartitionData | Retry | None:
        """One Fetch of ``pos`` (looking the leader up first when needed): this partition's
        data (``None`` when the response left it out), or a :class:`Retry` when no Fetch could
        be sent or answered (no leader, a connection error or timeout that is ``retriable``).

        Raises:
            KafkaConnectionError / KafkaTimeoutError: not ``retriable``.
            KafkaApiError: a Metadata topic error that is not retriable.
            KafkaProtocolError: a response that answers what was not asked
                (:func:`answered_partition`), or breaks the protocol.
        """
        try:
            if self._need_metadata or self._leader < 0:
                self._refresh_leader()
                if self._leader < 0:
                    return Retry(f"{self.tp} has no leader in the metadata")
            node, request, max_version = self._fetch_request(pos)
            response = self.client.send(node, request, max_version=max_version)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            if not retriable(exc):
                raise
            return Retry(str(exc))
        part: PartitionData | None = answered_partition(
            response, self.tp, self._topic_id, lambda: self._broker(node)
        )
        return part

    def _decode(
        self, part: PartitionData, pos: int, end: int, read_committed: bool
    ) -> DecodedStream:
        """The Arrow batches of one Fetch response's records for ``[pos, end)``, decoded as
        they are taken, within the decoding bounds (:mod:`spark_kafka_py.records.bounds`).

        The response may decompress to ``maxDecompressionRatio`` times the bytes it could
        carry: the ``partition_max_bytes`` asked for, or what came if more (KIP-74 returns a
        first batch larger than that whole). Arrow batches hold about
        :data:`ARROW_BATCH_FETCHES` x ``max.partition.fetch.bytes`` of decoded data each.
        """
        records = part.records if part.records is not None else b""
        ratio = self.settings.max_decompression_ratio
        carried = max(len(records), self._max_bytes)
        return DecodedStream(
            records,
            topic=self.tp.topic,
            partition=self.tp.partition,
            start_offset=pos,
            end_offset=end,
            include_headers=self.include_headers,
            read_committed=read_committed,
            aborted_transactions=[
                (a.producer_id, a.first_offset) for a in (part.aborted_transactions or ())
            ],
            max_decoded_bytes=ratio * carried,
            max_arrow_bytes=ARROW_BATCH_FETCHES * self.settings.max_partition_fetch_bytes,
            bound_hint=(
                f"maxDecompressionRatio={ratio} x {carried} bytes fetched; raise "
                "maxDecompressionRatio if the producer really wrote data that compresses "
                "this well"
            ),
            check_crcs=self.settings.check_crcs,
        )

    # -- Fetch requests -------------------------------------------------------------------
    def _fetch_request(self, pos: int) -> tuple[int, FetchRequest, int | None]:
        """Node, Fetch request and highest version for ``pos`` as things stand now.

        Raises: as :meth:`BrokerConnection.connect` (the first Fetch to a node asks its
        versions).
        """
        node = self._read_replica if self._read_replica >= 0 else self._leader
        last_fetched_epoch = self._last_fetched_epoch
        # last_fetched_epoch needs Fetch v12+ (it is not ignorable); an older broker gets -1.
        if last_fetched_epoch >= 0 and not self._serves_fetch_v12(node):
            last_fetched_epoch = NO_PARTITION_LEADER_EPOCH
        request = FetchRequest(
            replica_id=CONSUMER_REPLICA_ID,
            max_wait_ms=self.settings.fetch_max_wait_ms,
            min_bytes=self.settings.fetch_min_bytes,
            max_bytes=self.settings.fetch_max_bytes,
            isolation_level=self.settings.isolation_level,
            session_id=0,
            session_epoch=-1,
            topics=(
                FetchTopic(
                    topic=self.tp.topic,
                    topic_id=ZERO_UUID if self._topic_id is None else self._topic_id,
                    partitions=(
                        FetchPartition(
                            partition=self.tp.partition,
                            current_leader_epoch=self._leader_epoch,
                            fetch_offset=pos,
                            log_start_offset=-1,
                            partition_max_bytes=self._max_bytes,
                            last_fetched_epoch=last_fetched_epoch,
                        ),
                    ),
                ),
            ),
            rack_id=self.settings.client_rack,
        )
        # Fetch v13+ names topics by id only; without one, stay at v12.
        return node, request, None if self._topic_id else 12

    def _serves_fetch_v12(self, node: int) -> bool:
        known = self._fetch_v12.get(node)
        if known is None:
            known = self._fetch_v12[node] = _fetch_v12(self.client, node)
        return known

    def _broker(self, node: int) -> str:
        """Broker ``node`` as error messages name it (``broker <id> at host:port``)."""
        return self.client.connection(node).description

    def _log_truncated(self, pos: int, epoch: int, end_offset: int) -> None:
        """KIP-320: the leader's log for our last fetched epoch ends at ``end_offset``, below
        ``pos``; offsets ``[end_offset, pos)`` already read are no longer in the log."""
        self._data_loss(
            f"Log truncation detected for {self.tp} (KIP-320): offsets [{end_offset}, {pos}) "
            f"were read at leader epoch {self._last_fetched_epoch}, but the leader's log for "
            f"epoch {epoch} ends at offset {end_offset} (an unclean leader election or a lost "
            "replica); the records read there are no longer in Kafka"
        )

    def _out_of_range(self, pos: int, end: int, log_start_offset: int) -> int:
        """Handle OFFSET_OUT_OF_RANGE at ``pos``; return where to go on (or ``end``).

        Brokers answer OFFSET_OUT_OF_RANGE with ``log_start_offset`` -1, so the earliest
        offset still in Kafka is then looked up with ListOffsets (timestamp -2), as Spark's
        ``KafkaDataConsumer`` does, to report exactly ``[pos, earliest)`` as lost and, with
        ``failOnDataLoss=false``, go on from ``earliest``.
        """
        if log_start_offset < 0:
            log_start_offset = list_offsets(
                self.client,
                {self.tp: EARLIEST_TIMESTAMP},
                isolation_level=self.settings.isolation_level,
            )[self.tp]
        if log_start_offset >= 0 and pos < log_start_offset:
            self._data_loss(
                f"Cannot fetch offset {pos} of {self.tp}: the earliest offset still in Kafka is "
                f"{log_start_offset}, so offsets [{pos}, {min(log_start_offset, end)}) were lost"
            )
            return min(log_start_offset, end)
        self._data_loss(
            f"Cannot fetch offset {pos} of {self.tp}: it is out of range (log start offset "
            f"{log_start_offset}); offsets [{pos}, {end}) are not available"
        )
        return end


_FETCH_KEY = FetchRequest.API_KEY


def _fetch_v12(client: KafkaClient, node: int) -> bool:
    """Whether broker ``node`` serves Fetch v12+ (``last_fetched_epoch``); connects first if
    needed (ApiVersions). Raises as :meth:`BrokerConnection.connect`."""
    conn = client.connection(node)
    conn.connect()
    return conn.api_versions.get(_FETCH_KEY, (0, -1))[1] >= 12


def answered_partition(
    response: Any,
    tp: TopicPartition,
    topic_id: object,
    broker: Callable[[], str] = lambda: "the broker",
) -> Any | None:
    """The partition ``tp`` of a Fetch ``response`` (``None`` when it is missing), checking
    that the response answers nothing else.

    Our Fetch asks for one partition of one topic (by name up to v12, by topic id from v13,
    ``topic_id``) without a fetch session (KIP-227: session id 0, epoch -1), and Kafka answers
    such a Fetch with exactly the partitions asked for (``FetchResponse.json``). Anything else
    comes from a broken or hostile broker, or a man in the middle: nothing of it is read. A
    missing partition is the caller's business (the Fetch loop retries it).

    Raises:
        KafkaProtocolError: a topic or partition not asked for, or ``tp`` twice; the message
            names the broker (``broker()``: node id and ``host:port``).
    """
    found = None
    for topic in response.responses:
        asked = topic.topic == tp.topic or (topic_id is not None and topic.topic_id == topic_id)
        for part in topic.partitions:
            if asked and part.partition_index == tp.partition:
                if found is None:
                    found = part
                    continue
                what = f"{tp} twice"
            elif asked:
                what = f"partition {tp.topic}-{part.partition_index}, which was not asked for"
            else:
                name = topic.topic or f"with topic id {topic.topic_id}"
                what = f"topic {name} (partition {part.partition_index}), which was not asked for"
            raise KafkaProtocolError(
                f"Fetch response from {broker()} answers {what} (the request asked for {tp} only)"
            )
    return found


def read_range(
    settings: ConsumerSettings,
    tp: TopicPartition,
    start: int,
    end: int,
    *,
    include_headers: bool = False,
    fail_on_data_loss: bool = True,
    poll_timeout_ms: int | None = None,
    leader_hint: int = -1,
) -> Iterator[pa.RecordBatch]:
    """Read ``[start, end)`` of ``tp``; see :class:`PartitionFetcher`.

    The client comes from a small per-process pool keyed by the client settings, so the
    tasks that one Python worker runs one after another (Spark reuses Python workers,
    ``spark.python.worker.reuse``) share connections (no new TCP, ApiVersions, TLS or SASL
    handshake per task). A client is returned to the pool only after a read that ended
    normally; any error or an abandoned read closes it.
    """
    config = settings.client
    client = _borrow_client(config)
    fetcher = PartitionFetcher(
        client,
        tp,
        settings,
        include_headers=include_headers,
        fail_on_data_loss=fail_on_data_loss,
        poll_timeout_ms=poll_timeout_ms,
        leader_hint=leader_hint,
    )
    done = False
    try:
        yield from fetcher.read(start, end)
        done = True
    finally:
        if done:
            _return_client(config, client)
        else:
            client.close()


#: Idle clients kept per client configuration in one Python process.
POOL_MAX_IDLE = 4
#: Pooled clients idle for longer are closed instead of reused, seconds (below the broker's
#: ``connections.max.idle.ms`` default of 10 minutes, after which it drops connections).
POOL_MAX_IDLE_S = 300.0
_pool_lock = threading.Lock()
_pool: dict[Any, list[tuple[float, KafkaClient]]] = {}


def _borrow_client(config: Any) -> KafkaClient:
    now = time.monotonic()
    stale: list[KafkaClient] = []
    found: KafkaClient | None = None
    with _pool_lock:
        idle = _pool.get(config, [])
        while idle:
            since, client = idle.pop()
            if now - since < POOL_MAX_IDLE_S:
                found = client
                break
            stale.append(client)
    for client in stale:
        client.close()
    return found if found is not None else KafkaClient(config)


def _return_client(config: Any, client: KafkaClient) -> None:
    with _pool_lock:
        idle = _pool.setdefault(config, [])
        if len(idle) < POOL_MAX_IDLE:
            idle.append((time.monotonic(), client))
            return
    client.close()


def close_pooled_clients() -> None:
    """Close every idle pooled client of this process (see :func:`read_range`); also run at
    interpreter exit, so pooled connections end with a close, not a dropped socket."""
    with _pool_lock:
        clients = [c for idle in _pool.values() for _, c in idle]
        _pool.clear()
    for client in clients:
        client.close()


atexit.register(close_pooled_clients)
