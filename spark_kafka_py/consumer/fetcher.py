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
  connection failures: refresh metadata, back off ``retry.backoff.ms``, retry, for at most
  ``kafkaConsumer.pollTimeoutMs`` without progress; a connection error that waiting cannot
  mend (``retriable`` false: a failed TLS handshake, a peer that is not Kafka, no broker
  answering Metadata with valid bytes) is raised at once;
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
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.connection import BrokerConnection, Pipelined
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import EARLIEST_TIMESTAMP, READ_COMMITTED, TopicPartition
from spark_kafka_py.errors import (
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
from spark_kafka_py.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.records import DecodedStream

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
#: decoded data (:mod:`spark_kafka_py.records.bounds`): a full uncompressed response of
#: ~100-byte records decodes to ~1.4 times its size and stays one batch, a compressed one is
#: yielded in pieces (closing at 1x cost ~8% of decode-only throughput on uncompressed data).
ARROW_BATCH_FETCHES = 2


class PartitionFetcher:
    """Reads offset ranges of one partition; see the module docstring for the rules.

    Args:
        client: the client to use (not closed by the fetcher).
        tp: the topic-partition.
        settings: consumer settings (fetch sizes in bytes, waits in ms, isolation level).
        include_headers: build the ``headers`` column.
        fail_on_data_loss: raise on missing records (``True``) or warn and skip.
        poll_timeout_ms: how long to keep retrying without progress before failing.
        leader_hint: the leader's node id known at planning time, or -1.
    """

    #: Write the next Fetch on the connection (``send_pipelined``, same thread) before the
    #: current response is decoded and its Arrow batches are handed to Spark, so that the
    #: broker serves it meanwhile; its response is read when the loop gets there. At most one
    #: Fetch is ahead, so at most one more response (<= ``max.partition.fetch.bytes``, or one
    #: batch, KIP-74) waits in the socket. Off: on a 2-core machine shared with the broker it
    #: used the same CPU and was not faster (the broker then competes with the decoding for
    #: the cores instead of working while the worker waits); see docs/performance.md.
    prefetch: bool = False

    def __init__(
        self,
        client: KafkaClient,
        tp: TopicPartition,
        settings: ConsumerSettings,
        *,
        include_headers: bool = False,
        fail_on_data_loss: bool = True,
        poll_timeout_ms: int = 120_000,
        leader_hint: int = -1,
    ) -> None:
        self.client = client
        self.tp = tp
        self.settings = settings
        self.include_headers = include_headers
        self.fail_on_data_loss = fail_on_data_loss
        self.poll_timeout_ms = poll_timeout_ms
        self._leader = leader_hint
        self._leader_epoch = -1
        # KIP-320: partition leader epoch of the last record batch read, or -1.
        self._last_fetched_epoch = -1
        # KIP-392: the replica the leader told us to fetch from (kafka.client.rack), or -1.
        self._read_replica = -1
        # Node id -> serves Fetch v12+ (asked once per node, not per Fetch; see _fetch_call).
        self._fetch_v12: dict[int, bool] = {}
        self._topic_id: uuid.UUID | None = None  # None: unknown or the broker has none
        self._max_bytes = settings.max_partition_fetch_bytes
        self._need_metadata = True
        # The next Fetch, sent while the current response is decoded (see _send_fetch).
        self._pending: _Prefetch | None = None
        # Node id of the broker that answered the last Fetch (see _send_fetch).
        self._fetched_from = -1

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
        batches, aborted transactions, compacted away), or is reported as data loss.

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
        last_problem: str = "no records returned"
        backoff = self.settings.client.retry_backoff_ms / 1000
        # Set while the log's end (high watermark) is below the range; see below.
        log_end_below: str | None = None
        while pos < end:
            if (time.monotonic() - last_progress) * 1000 > self.poll_timeout_ms:
                if log_end_below is not None:
                    self._data_loss(log_end_below)
                    return
                raise KafkaTimeoutError(
                    f"Cannot fetch records in [{pos}, {end}) of {self.tp} within "
                    f"kafkaConsumer.pollTimeoutMs={self.poll_timeout_ms} ms: {last_problem}"
                )
            log_end_below = None
            if self._need_metadata or self._leader < 0:
                try:
                    self._refresh_leader()
                except (KafkaConnectionError, KafkaTimeoutError) as exc:
                    if not getattr(exc, "retriable", True):
                        raise
                    last_problem = str(exc)
                    time.sleep(backoff)
                    continue
                if self._leader < 0:
                    last_problem = f"{self.tp} has no leader in the metadata"
                    time.sleep(backoff)
                    continue
            try:
                response = self._send_fetch(pos)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                if not getattr(exc, "retriable", True):
                    raise
                last_problem = str(exc)
                self._need_metadata = True
                time.sleep(backoff)
                continue
            part = answered_partition(
                response, self.tp, self._topic_id, lambda: self._broker(self._fetched_from)
            )
            if part is None:
                last_problem = "the partition was missing from the Fetch response"
                self._need_metadata = True
                time.sleep(backoff)
                continue
            code = part.error_code
            if code in REFRESH_METADATA_ERRORS:
                last_problem = str(error_for_code(code, f"fetching {self.tp} at offset {pos}"))
                self._need_metadata = True
                time.sleep(backoff)
                continue
            if code == OFFSET_OUT_OF_RANGE and self._read_replica >= 0:
                # A follower that lags; the leader decides (as the Java consumer does).
                last_problem = f"read replica {self._read_replica}: offset {pos} out of range"
                self._need_metadata = True
                continue
            if code == OFFSET_OUT_OF_RANGE:
                pos = self._out_of_range(pos, end, part.log_start_offset)
                last_progress = time.monotonic()
                continue
            if code:
                raise error_for_code(code, f"fetching {self.tp} at offset {pos}")
            diverging = part.diverging_epoch
            if diverging is not None and diverging.epoch >= 0:
                self._log_truncated(pos, diverging.epoch, diverging.end_offset)
                self._last_fetched_epoch = -1  # learned again from the next batch read
                last_progress = time.monotonic()
                continue
            preferred = part.preferred_read_replica
            if (
                self._read_replica < 0
                and preferred >= 0
                and preferred != self._leader
                and not part.records
            ):
                # KIP-392 (Fetch v11+): the leader, given our rack_id (kafka.client.rack),
                # names a replica closer to us and returns no records; fetch from it.
                self._read_replica = preferred
                continue
            self._prefetch_after(part.records, pos, end)
            decoded = self._decode(part, pos, end, read_committed)
            yield from decoded
            if decoded.next_offset > pos:
                epoch = last_batch_epoch(part.records or b"", decoded.next_offset)
                if epoch >= 0:
                    self._last_fetched_epoch = epoch
                pos = decoded.next_offset
                last_progress = time.monotonic()
                self._max_bytes = self.settings.max_partition_fetch_bytes
                continue
            # No progress: find out why.
            upper = part.high_watermark
            if read_committed and part.last_stable_offset >= 0:
                upper = min(upper, part.last_stable_offset)
            if decoded.incomplete_tail:
                # A batch larger than partition_max_bytes (brokers before KIP-74 cut it).
                if self._max_bytes >= self.settings.fetch_max_bytes:
                    last_problem = (
                        f"a record batch at offset {pos} is larger than fetch.max.bytes="
                        f"{self.settings.fetch_max_bytes}"
                    )
                else:
                    self._max_bytes = min(self._max_bytes * 2, self.settings.fetch_max_bytes)
                continue
            if upper <= pos and not read_committed:
                # The log ends below the planned range: records were truncated away, or a new
                # leader's high watermark still lags the old leader's (for a moment after a
                # failover, until the followers fetch again). As Spark's KafkaDataConsumer
                # (which polls for pollTimeoutMs before comparing with the latest offset), it
                # is data loss only if it lasts pollTimeoutMs; meanwhile look for the leader.
                log_end_below = (
                    f"Cannot fetch offsets [{pos}, {end}) of {self.tp}: the high watermark is "
                    f"{upper}"
                )
                last_problem = log_end_below
                self._need_metadata = True
                time.sleep(backoff)
                continue
            last_problem = (
                f"fetch at offset {pos} returned no records (high watermark {part.high_watermark},"
                f" last stable offset {part.last_stable_offset})"
            )

    def _decode(self, part: Any, pos: int, end: int, read_committed: bool) -> DecodedStream:
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

    # -- Fetch requests, one kept in flight --------------------------------------------------
    def _fetch_key(
        self, pos: int, last_fetched_epoch: int | None = None, max_bytes: int | None = None
    ) -> tuple[Any, ...]:
        """What a Fetch of ``pos`` depends on: node, offset, size, epochs, topic id (the
        last fetched epoch and size as given, else as things stand now)."""
        node = self._read_replica if self._read_replica >= 0 else self._leader
        return (
            node,
            pos,
            self._max_bytes if max_bytes is None else max_bytes,
            self._leader_epoch,
            self._last_fetched_epoch if last_fetched_epoch is None else last_fetched_epoch,
            self._topic_id,
        )

    def _fetch_request(
        self, pos: int, last_fetched_epoch: int | None = None, max_bytes: int | None = None
    ) -> tuple[int, FetchRequest, int | None]:
        """Node, Fetch request and highest version for ``pos`` (see :meth:`_fetch_key`)."""
        node = self._read_replica if self._read_replica >= 0 else self._leader
        if last_fetched_epoch is None:
            last_fetched_epoch = self._last_fetched_epoch
        # last_fetched_epoch needs Fetch v12+ (it is not ignorable); an older broker gets -1.
        if last_fetched_epoch >= 0 and not self._serves_fetch_v12(node):
            last_fetched_epoch = -1
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
                            partition_max_bytes=self._max_bytes if max_bytes is None else max_bytes,
                            last_fetched_epoch=last_fetched_epoch,
                        ),
                    ),
                ),
            ),
            rack_id=self.settings.client_rack,
        )
        # Fetch v13+ names topics by id only; without one, stay at v12.
        return node, request, None if self._topic_id else 12

    def _fetch_call(self, pos: int) -> Callable[[], Any]:
        """A call sending the Fetch of ``pos`` as things stand now and returning its response."""
        node, request, max_version = self._fetch_request(pos)
        client = self.client
        return lambda: client.send(node, request, max_version=max_version)

    def _serves_fetch_v12(self, node: int) -> bool:
        known = self._fetch_v12.get(node)
        if known is None:
            known = self._fetch_v12[node] = _fetch_v12(self.client, node)
        return known

    def _send_fetch(self, pos: int) -> Any:
        """The Fetch response for ``pos``: the one already in flight if it was sent for the
        same offset, node, epoch and size, else a new round trip (a stale one is dropped).

        Raises: as :meth:`KafkaClient.send`.
        """
        pending, self._pending = self._pending, None
        if pending is not None:
            if pending.key == self._fetch_key(pos):
                self._fetched_from = pending.key[0]
                return pending.result()
            pending.discard()
        self._fetched_from = self._fetch_key(pos)[0]
        return self._fetch_call(pos)()

    def _broker(self, node: int) -> str:
        """Broker ``node`` as error messages name it (``broker <id> at host:port``)."""
        return self.client.connection(node).description

    def _prefetch_after(self, records: bytes | memoryview | None, pos: int, end: int) -> None:
        """Write the next Fetch now, before ``records`` (the response for ``pos``) is decoded,
        when its offset can be told from the batch headers and is still below ``end``
        (only with :attr:`prefetch` on). It is asked as the loop will ask it once ``records``
        is decoded: with the leader epoch of the last batch read (KIP-320) and the configured
        size. A failure to write it is left to the Fetch the loop then sends itself."""
        if not self.prefetch or not records:
            return
        nxt = next_fetch_offset(records, pos, end)
        if nxt is None or nxt <= pos or nxt >= end:
            return
        epoch = last_batch_epoch(records, nxt)
        if epoch < 0:
            epoch = self._last_fetched_epoch
        size = self.settings.max_partition_fetch_bytes
        node, request, max_version = self._fetch_request(nxt, epoch, size)
        try:
            conn = self.client.connection(node)
            pending = conn.send_pipelined(request, max_version=max_version)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            log.debug("prefetch of %s at offset %d not sent: %s", self.tp, nxt, exc)
            return
        assert pending is not None  # a Fetch is always answered
        self._pending = _Prefetch(self._fetch_key(nxt, epoch, size), conn, pending)

    def close(self) -> None:
        """Drop the Fetch in flight, if any (reads its response; see :meth:`_Prefetch.discard`)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.discard()

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


_BATCH_FRAME = struct.Struct(">qi")  # baseOffset, batchLength
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23 of a v2 batch
_LEADER_EPOCH = struct.Struct(">i")  # partitionLeaderEpoch, at byte 12 of a v2 batch
_FETCH_KEY = FetchRequest.API_KEY


def _fetch_v12(client: KafkaClient, node: int) -> bool:
    """Whether broker ``node`` serves Fetch v12+ (``last_fetched_epoch``); connects first if
    needed (ApiVersions). Raises as :meth:`BrokerConnection.connect`."""
    conn = client.connection(node)
    conn.connect()
    return conn.api_versions.get(_FETCH_KEY, (0, -1))[1] >= 12


def last_batch_epoch(records: bytes | memoryview, next_offset: int) -> int:
    """The partition leader epoch of the last v2 record batch in ``records`` that starts
    below ``next_offset`` (the batch the last record read came from), or -1 (legacy message
    sets carry none). Headers only; the decoder has already checked these bytes."""
    view = memoryview(records)
    n = len(view)
    p = 0
    epoch = -1
    while p + 17 <= n:  # up to the magic byte
        base, length = _BATCH_FRAME.unpack_from(view, p)
        if base >= next_offset:
            break
        epoch = _LEADER_EPOCH.unpack_from(view, p + 12)[0] if view[p + 16] == 2 else -1
        p += 12 + length
    return epoch


def next_fetch_offset(records: bytes | memoryview, pos: int, end: int) -> int | None:
    """The offset the decoder will report as ``next_offset`` for ``records``, read from the
    batch headers only (``baseOffset + lastOffsetDelta + 1`` of the last complete v2 batch,
    capped at ``end``), or ``None`` when it cannot be told (legacy message sets, a header
    that does not parse: the decoder will have its say). Layout: :mod:`spark_kafka_py.records.
    format`."""
    view = memoryview(records)
    n = len(view)
    p = 0
    nxt = pos
    while p + 17 <= n:  # up to the magic byte
        base, length = _BATCH_FRAME.unpack_from(view, p)
        if view[p + 16] != 2:
            return None
        if length < 49 or p + 12 + length > n:  # below the v2 header size; an incomplete tail
            break
        if base >= end:
            return end
        last = base + _LAST_OFFSET_DELTA.unpack_from(view, p + 23)[0]
        if last + 1 > nxt:
            nxt = last + 1
        if nxt >= end:
            return end
        p += 12 + length
    return nxt


class _Prefetch:
    """A Fetch written ahead on ``conn`` (:meth:`BrokerConnection.send_pipelined`), for the
    request ``key`` (:meth:`PartitionFetcher._fetch_key`). The broker answers it while this
    thread decodes the previous response and Spark takes its batches; the response waits in
    the socket until :meth:`result` reads it (no thread, so no GIL hand-over)."""

    __slots__ = ("_conn", "_pending", "key")

    def __init__(self, key: tuple[Any, ...], conn: BrokerConnection, pending: Pipelined) -> None:
        self.key = key
        self._conn = conn
        self._pending = pending

    def result(self) -> Any:
        """The response. Raises: as :meth:`BrokerConnection.receive`."""
        return self._conn.receive(self._pending)

    def discard(self) -> None:
        """Read the response and drop it, so it does not stay in the connection's buffers.
        A failure here closes the connection (:meth:`BrokerConnection.receive`), and the next
        request on it reconnects and meets the cause itself; it is logged, not raised: the
        response was not needed."""
        try:
            self._conn.receive(self._pending)
        except (KafkaConnectionError, KafkaTimeoutError, KafkaProtocolError) as exc:
            log.debug("dropped prefetched Fetch: %s", exc)


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
    poll_timeout_ms: int = 120_000,
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
        fetcher.close()
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
