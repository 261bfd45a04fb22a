"""The producer's sender: Produce requests from the accumulator's batches, their responses,
retries, idempotence (issue 12).

Kafka's Java ``Sender`` and ``TransactionManager`` (idempotent part) are the model; facts
from Kafka's source, KIP-98 (producer id, epoch, sequences), KIP-360 (epoch bump after an
unknown producer id or an out-of-order sequence on the oldest batch) and KIP-679
(idempotence on by default); no code taken.

Threads:

- the sender thread (``pykafka-producer-sender``) expires batches past
  ``delivery.timeout.ms``, gets the producer id (InitProducerId, API key 22), refreshes
  metadata, drains ready batches into one ProduceRequest (API key 0) per broker, at most one
  batch per partition and ``max.request.size`` bytes, and writes it with
  :meth:`~spark_kafka_py.client.connection.BrokerConnection.send_pipelined`, keeping up to
  ``max.in.flight.requests.per.connection`` requests in flight per broker;
- one reader thread per broker (``pykafka-producer-reader-<node>``) reads that broker's
  responses in order (Kafka answers the requests of a connection in order) and completes
  their batches.

Idempotence: a batch gets its base sequence (the partition's next) when first drained and
keeps it on retries; the order of a partition is kept because its batches go, in sequence
order, over one ordered connection, and a retried batch is only resent once no batch of its
partition is in flight (the batches after it fail too and are requeued in sequence order).
DUPLICATE_SEQUENCE_NUMBER counts as success. OUT_OF_ORDER_SEQUENCE_NUMBER or
UNKNOWN_PRODUCER_ID on the oldest unacknowledged batch of its partition, or a batch with a
sequence failed for good, bumps the epoch once nothing is in flight and renumbers the queued
batches from 0. As Java's idempotent producer (``TransactionManager``), the epoch is bumped
locally (KIP-360: the broker accepts a higher epoch starting at sequence 0); only an exhausted
epoch asks InitProducerId again, which for a producer without transactional id always hands
out a new producer id.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
import uuid
from dataclasses import dataclass

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.connection import BrokerConnection, Pipelined
from spark_kafka_py.errors import (
    KafkaApiError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    ProduceError,
)
from spark_kafka_py.producer.accumulator import (
    ProducerBatch,
    RecordAccumulator,
    TopicPartition,
    stamp_batch,
)
from spark_kafka_py.producer.settings import MAX_IN_FLIGHT_IDEMPOTENT, ProducerSettings
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.init_producer_id import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from spark_kafka_py.protocol.messages.produce import (
    ACKS_NONE,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.records.format import PRODUCER_ID_OFFSET

__all__ = ["ProducerStats", "Sender"]

log = logging.getLogger(__name__)

#: An idempotent producer asks InitProducerId with this transaction timeout (ms): Java's
#: ``TransactionManager`` sends ``Integer.MAX_VALUE`` when there is no transactional id.
_IDEMPOTENT_TXN_TIMEOUT_MS = 2**31 - 1
#: The largest producer epoch (int16); past it an idempotent producer gets a new producer id.
_MAX_EPOCH = 2**15 - 1
#: Produce v13 names topics by id (KIP-516); without a topic id we stay at v12.
_PRODUCE_BY_TOPIC_ID_VERSION = 13
#: Per-request bytes of a ProduceRequest besides its batches, generously bounded
#: (header, transactional id, acks, timeout, arrays, a topic name per batch).
_REQUEST_OVERHEAD = 512
#: Errors after which the partition's leader may have moved: refresh metadata first.
_REFRESH_METADATA_ON = frozenset(
    {
        ec.NOT_LEADER_OR_FOLLOWER,
        ec.LEADER_NOT_AVAILABLE,
        ec.UNKNOWN_TOPIC_OR_PARTITION,
        ec.UNKNOWN_TOPIC_ID,
        ec.KAFKA_STORAGE_ERROR,
        ec.FENCED_LEADER_EPOCH,
        ec.UNKNOWN_LEADER_EPOCH,
        ec.NOT_CONTROLLER,
        ec.NETWORK_EXCEPTION,
    }
)


@dataclass
class ProducerStats:
    """Counters of one producer (since it was created).

    Attributes:
        records: records acknowledged (with ``acks=0``: written).
        batches: batches acknowledged.
        requests: Produce requests written.
        retries: batches requeued after a retriable error.
        bytes: bytes of batches written (retries included).
        epoch_bumps: producer epoch bumps or producer id resets (KIP-360).
        max_in_flight: most Produce requests in flight at once on one connection.
        splits: batches split in two after MESSAGE_TOO_LARGE.
    """

    records: int = 0
    batches: int = 0
    requests: int = 0
    retries: int = 0
    bytes: int = 0
    epoch_bumps: int = 0
    max_in_flight: int = 0
    splits: int = 0


@dataclass(frozen=True)
class _Request:
    """A Produce request in flight: its connection, handle, batches and topic ids."""

    conn: BrokerConnection
    pending: Pipelined
    batches: tuple[ProducerBatch, ...]
    names_by_id: dict[uuid.UUID, str]


class _Reader:
    """Reads one broker's Produce responses, in order, in its own thread."""

    def __init__(self, sender: Sender, node: int) -> None:
        self.sender = sender
        self.node = node
        self.items: collections.deque[_Request] = collections.deque()
        self.cv = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(
            target=self._run, name=f"pykafka-producer-reader-{node}", daemon=True
        )
        self.thread.start()

    def put(self, item: _Request) -> None:
        with self.cv:
            self.items.append(item)
            self.cv.notify()

    def stop(self) -> None:
        with self.cv:
            self.stopping = True
            self.cv.notify()

    def _run(self) -> None:
        while True:
            with self.cv:
                while not self.items and not self.stopping:
                    self.cv.wait()
                if not self.items:
                    return
                item = self.items[0]
            try:
                try:
                    response = item.conn.receive(item.pending)
                except KafkaError as exc:
                    self.sender.complete_error(self.node, item.batches, exc)
                else:
                    self.sender.complete(self.node, item, response)
            except Exception as exc:  # a bug: its batches fail with it, flush() raises it
                log.exception("reading Produce responses from broker %d failed", self.node)
                self.sender.fail_request(item.batches, exc)
            with self.cv:
                self.items.popleft()


class Sender:
    """The sender of one :class:`~spark_kafka_py.producer.producer.KafkaProducer`.

    State shared with the appending thread lives under ``accumulator.cond``.
    """

    def __init__(
        self, settings: ProducerSettings, client: KafkaClient, accumulator: RecordAccumulator
    ) -> None:
        self.settings = settings
        self.client = client
        self.acc = accumulator
        self.cond = accumulator.cond
        self.idempotent = settings.enable_idempotence
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self.stats = ProducerStats()
        #: the first failure not yet raised to the caller
        self.failure: BaseException | None = None
        self._next_sequence: dict[TopicPartition, int] = {}
        self._in_flight: collections.Counter[TopicPartition] = collections.Counter()
        self._node_in_flight: collections.Counter[int] = collections.Counter()
        self._bump_needed = False
        self._metadata_wanted = True
        self._last_metadata_attempt = -1e9
        self._last_metadata_error: str | None = None
        self._init_retry_at = 0.0
        self._readers: dict[int, _Reader] = {}
        self._stopping = False
        self._drain_start = 0
        self._thread = threading.Thread(
            target=self._run, name="pykafka-producer-sender", daemon=True
        )

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Start the sender thread."""
        self._thread.start()

    @property
    def alive(self) -> bool:
        """Whether the sender thread runs."""
        return self._thread.is_alive()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop the sender thread (after failing what is still queued) and tell the readers
        to end once their requests are answered or lost (see :meth:`join_readers`)."""
        with self.cond:
            self._stopping = True
            self.cond.notify_all()
        self._thread.join(timeout_s)
        for reader in list(self._readers.values()):
            reader.stop()

    def join_readers(self, timeout_s: float | None = None) -> None:
        """Wait for the reader threads (closing the connections first makes it quick)."""
        for reader in list(self._readers.values()):
            reader.thread.join(timeout_s)

    def take_failure(self) -> BaseException | None:
        """The first failure since the last call (cleared: the producer goes on)."""
        with self.cond:
            failure, self.failure = self.failure, None
            return failure

    # -- the sender thread ----------------------------------------------------------------
    def _run(self) -> None:
        try:
            while True:
                with self.cond:
                    if self._stopping:
                        self._fail_all_queued(
                            KafkaError("the producer was closed before these records were sent")
                        )
                        return
                now = time.monotonic()
                self._expire(now)
                if self.idempotent and not self._ensure_producer_id(now):
                    continue
                self._maybe_refresh_metadata(now)
                sends, wake = self._drain(now)
                for node, batches in sends:
                    self._send(node, batches)
                if sends:
                    continue
                with self.cond:
                    if not self._stopping:
                        self.cond.wait(wake)
        except BaseException as exc:
            log.exception("the producer's sender thread failed")
            with self.cond:
                self._fail_all_queued(KafkaError(f"the producer's sender thread failed: {exc!r}"))
            raise

    def _expire(self, now: float) -> None:
        limit_s = self.settings.delivery_timeout_ms / 1000
        with self.cond:
            for queue in list(self.acc.queues.values()):
                # oldest first: requeued batches go back before younger ones
                while queue and now - queue[0].created >= limit_s:
                    batch = queue[0]
                    self._fail(batch, self._timeout_error(batch))
                    if queue and queue[0] is batch:  # done() removed it unless already done
                        queue.popleft()

    def _timeout_error(self, batch: ProducerBatch) -> KafkaTimeoutError:
        last = batch.last_error or self._last_metadata_error
        return KafkaTimeoutError(
            f"producing to {batch.topic}-{batch.partition}: {batch.record_count} records not "
            f"acknowledged within kafka.delivery.timeout.ms={self.settings.delivery_timeout_ms}"
            f" ms since they were written ({batch.attempts} attempts"
            + (f"; last error: {last}" if last else "")
            + ")"
        )

    # -- producer id ----------------------------------------------------------------------
    def _ensure_producer_id(self, now: float) -> bool:
        """Whether batches may be drained; gets or bumps the producer id when due."""
        with self.cond:
            if self.producer_id >= 0 and not self._bump_needed:
                return True
            if not self.acc.incomplete:
                self.cond.wait(0.5)  # nothing to send: no producer id needed yet
                return False
            if self._bump_needed and sum(self._node_in_flight.values()) > 0:
                self.cond.wait(0.1)  # the bump waits until nothing is in flight
                return False
            if now < self._init_retry_at:
                self.cond.wait(self._init_retry_at - now)
                return False
            bump = self.producer_id >= 0
            if bump and self.producer_epoch < _MAX_EPOCH:
                # an idempotent producer bumps its epoch itself; the broker accepts a higher
                # epoch starting at sequence 0 (KIP-360, Java's bumpIdempotentProducerEpoch)
                self.producer_epoch += 1
                self._reset_sequences()
                return True
        try:
            response = self._init_producer_id()
            ec.raise_for_error(response.error_code, "in InitProducerId (idempotent producer)")
        except KafkaError as exc:
            retriable = getattr(exc, "retriable", False) or isinstance(exc, KafkaTimeoutError)
            with self.cond:
                self._init_retry_at = (
                    time.monotonic() + self.settings.client.retry_backoff_ms / 1000
                )
                self._last_metadata_error = str(exc)
                if not retriable:
                    self._fail_all_queued(exc)
            log.info("InitProducerId failed: %s", exc)
            return False
        with self.cond:
            self.producer_id = response.producer_id
            self.producer_epoch = response.producer_epoch
            if bump:  # the epoch is exhausted: a new producer id
                self._reset_sequences()
            self._bump_needed = False
            log.info("producer id %d epoch %d", self.producer_id, self.producer_epoch)
        return True

    def _reset_sequences(self) -> None:
        """After an epoch bump or a new producer id: sequences start again at 0, queued
        batches are renumbered when drained next (in their queue order). Call locked."""
        self.stats.epoch_bumps += 1
        self._bump_needed = False
        self._next_sequence.clear()
        for batch in self.acc.queued():
            batch.base_sequence = -1
        log.info("producer %d bumped to epoch %d", self.producer_id, self.producer_epoch)

    def _init_producer_id(self) -> InitProducerIdResponse:
        """InitProducerId without a transactional id: the broker hands out a new producer id
        (``TransactionCoordinator.handleInitProducerId`` for a null transactional id)."""
        request = InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=_IDEMPOTENT_TXN_TIMEOUT_MS
        )
        return self.client.send(self.client.least_loaded_node(), request)

    # -- metadata -------------------------------------------------------------------------
    def _maybe_refresh_metadata(self, now: float) -> None:
        with self.cond:
            topics = sorted({tp[0] for tp, queue in self.acc.queues.items() if queue})
            want = self._metadata_wanted or self.client.metadata_is_stale()
            backoff_s = self.settings.client.retry_backoff_ms / 1000
            if not topics or not want or now - self._last_metadata_attempt < backoff_s:
                return
            self._last_metadata_attempt = now
        try:
            metadata = self.client.metadata(topics, allow_auto_topic_creation=True)
        except KafkaError as exc:
            log.info("producer metadata refresh failed: %s", exc)
            with self.cond:
                self._last_metadata_error = str(exc)
            return
        with self.cond:
            self._metadata_wanted = False
            self._last_metadata_error = None
            for topic in topics:
                info = metadata.topics.get(topic)
                code = ec.error_for(info.error_code) if info else ec.UNKNOWN_TOPIC_OR_PARTITION
                if code == ec.NONE:
                    continue
                self._last_metadata_error = f"{code.name} in Metadata for topic {topic!r}"
                if not code.retriable and code != ec.UNKNOWN_TOPIC_OR_PARTITION:
                    for batch in self.acc.queued():
                        if batch.topic == topic:
                            self._fail(batch, ProduceError(code, topic, batch.partition))

    # -- draining and sending -------------------------------------------------------------
    def _drain(self, now: float) -> tuple[list[tuple[int, list[ProducerBatch]]], float]:
        """Ready batches grouped into one request per broker; and how long to wait (s) when
        there are none: until the next batch is ready by the clock (linger, backoff), or
        ``retry.backoff.ms`` when a leader is unknown; a ready batch held back by requests in
        flight waits for their completion, which notifies."""
        s = self.settings
        limit = s.max_in_flight_requests_per_connection
        with self.cond:
            wake = 1.0
            if self._bump_needed:
                return [], 0.1
            metadata = self.client.cached_metadata
            by_node: dict[int, list[ProducerBatch]] = {}
            sizes: dict[int, int] = {}
            items = list(self.acc.queues.items())
            if items:  # rotate the start, so that every partition gets its turn first
                self._drain_start = (self._drain_start + 1) % len(items)
                items = items[self._drain_start :] + items[: self._drain_start]
            for tp, queue in items:
                if not queue:
                    continue
                batch = queue[0]
                if not self.acc.is_ready(batch, now):
                    wake = min(wake, self.acc.time_until_ready(batch, now))
                    continue
                if self.idempotent and (
                    (batch.attempts > 0 and self._in_flight[tp] > 0)
                    or self._in_flight[tp] >= MAX_IN_FLIGHT_IDEMPOTENT
                ):
                    continue  # a retry waits until its partition has nothing in flight
                leader = metadata.leader(*tp) if metadata is not None else None
                if leader is None:
                    self._metadata_wanted = True
                    wake = min(wake, s.client.retry_backoff_ms / 1000)
                    continue
                if self._node_in_flight[leader] >= limit:
                    continue
                self.acc.seal(batch)
                assert batch.data is not None
                size = sizes.get(leader, _REQUEST_OVERHEAD)
                if leader in by_node and size + len(batch.data) > s.max_request_size:
                    continue
                sizes[leader] = size + len(batch.data)
                queue.popleft()
                self._prepare(batch)
                by_node.setdefault(leader, []).append(batch)
            for node in by_node:
                self._node_in_flight[node] += 1
                self.stats.max_in_flight = max(self.stats.max_in_flight, self._node_in_flight[node])
            return list(by_node.items()), wake

    def _prepare(self, batch: ProducerBatch) -> None:
        """Mark in flight; give it its sequence and producer id (KIP-98). Call locked."""
        batch.in_flight = True
        batch.attempts += 1
        self._in_flight[batch.tp] += 1
        if not self.idempotent:
            return
        if batch.base_sequence < 0:
            seq = self._next_sequence.get(batch.tp, 0)
            batch.base_sequence = seq
            self._next_sequence[batch.tp] = (seq + batch.record_count) % (1 << 31)
        stamped = (batch.producer_id, batch.producer_epoch)
        if stamped != (self.producer_id, self.producer_epoch) or _sequence_of(batch) != (
            batch.base_sequence
        ):
            assert batch.data is not None
            batch.data = stamp_batch(
                batch.data, self.producer_id, self.producer_epoch, batch.base_sequence
            )
            batch.producer_id, batch.producer_epoch = self.producer_id, self.producer_epoch

    def _send(self, node: int, batches: list[ProducerBatch]) -> None:
        s = self.settings
        metadata = self.client.cached_metadata
        topics: dict[str, list[PartitionProduceData]] = {}
        for batch in batches:
            topics.setdefault(batch.topic, []).append(
                PartitionProduceData(index=batch.partition, records=batch.data)
            )
        ids: dict[str, uuid.UUID] = {}
        for topic in topics:
            info = metadata.topics.get(topic) if metadata is not None else None
            if info is not None and info.topic_id is not None:
                ids[topic] = info.topic_id
        request = ProduceRequest(
            transactional_id=None,
            acks=s.acks,
            timeout_ms=s.client.request_timeout_ms,
            topic_data=tuple(
                TopicProduceData(
                    name=topic, topic_id=ids.get(topic, ZERO_UUID), partition_data=tuple(parts)
                )
                for topic, parts in topics.items()
            ),
        )
        max_version = None if len(ids) == len(topics) else _PRODUCE_BY_TOPIC_ID_VERSION - 1
        try:
            conn = self.client.connection(node)
            pending = conn.send_pipelined(
                request, expect_response=s.acks != ACKS_NONE, max_version=max_version
            )
        except KafkaError as exc:
            self.complete_error(node, batches, exc)
            return
        with self.cond:
            self.stats.requests += 1
            self.stats.bytes += sum(len(b.data or b"") for b in batches)
        if pending is None:  # acks=0: written is all we will ever know
            with self.cond:
                self._node_in_flight[node] -= 1
                for batch in batches:
                    self._in_flight[batch.tp] -= 1
                    self._succeed(batch)
                self.cond.notify_all()
            return
        reader = self._readers.get(node)
        if reader is None:
            reader = self._readers[node] = _Reader(self, node)
        names_by_id = {v: k for k, v in ids.items()}
        reader.put(_Request(conn, pending, tuple(batches), names_by_id))

    # -- completion (reader threads, or the sender thread on a failed write) ---------------
    def complete(self, node: int, request: _Request, response: ProduceResponse) -> None:
        """Handle a Produce response: every batch acknowledged, retried or failed."""
        by_version = request.pending.version >= _PRODUCE_BY_TOPIC_ID_VERSION
        results: dict[TopicPartition, PartitionProduceResponse] = {}
        for topic in response.responses:
            name = request.names_by_id.get(topic.topic_id, "") if by_version else topic.name
            for part in topic.partition_responses:
                results[(name, part.index)] = part
        with self.cond:
            self._node_in_flight[node] -= 1
            for batch in request.batches:
                self._in_flight[batch.tp] -= 1
            for batch in request.batches:
                part = results.pop(batch.tp, None)
                if part is None:
                    self._retry_or_fail(
                        batch,
                        f"the Produce response of broker {node} has no result for "
                        f"{batch.topic}-{batch.partition}",
                        None,
                    )
                else:
                    self._handle_partition(batch, part)
            if results and self.failure is None:
                self.failure = KafkaError(
                    f"broker {node} answered Produce for partitions not asked for: "
                    f"{sorted(results)}"
                )
            self.cond.notify_all()

    def complete_error(
        self,
        node: int,
        batches: tuple[ProducerBatch, ...] | list[ProducerBatch],
        exc: BaseException,
    ) -> None:
        """A request failed as a whole (connection lost, timeout, no common version)."""
        retriable = isinstance(exc, KafkaTimeoutError) or (
            isinstance(exc, KafkaConnectionError | KafkaApiError) and exc.retriable
        )
        with self.cond:
            self._node_in_flight[node] -= 1
            self._metadata_wanted = True
            for batch in batches:
                self._in_flight[batch.tp] -= 1
            for batch in batches:
                if retriable:
                    self._retry_or_fail(batch, str(exc), None)
                else:
                    self._fail(batch, exc)
            self.cond.notify_all()

    def fail_request(self, batches: tuple[ProducerBatch, ...], exc: BaseException) -> None:
        """Fail every batch of a request whose handling broke (the first failure is kept for
        :meth:`take_failure`)."""
        with self.cond:
            for batch in batches:
                self._fail(batch, exc)
            self.cond.notify_all()

    def _handle_partition(self, batch: ProducerBatch, part: PartitionProduceResponse) -> None:
        code = ec.error_for(part.error_code)
        if code == ec.NONE or (self.idempotent and code == ec.DUPLICATE_SEQUENCE_NUMBER):
            self._succeed(batch)
            return
        tp = f"{batch.topic}-{batch.partition}"
        if code in _REFRESH_METADATA_ON:
            self._metadata_wanted = True
        if self.idempotent and code in (ec.OUT_OF_ORDER_SEQUENCE_NUMBER, ec.UNKNOWN_PRODUCER_ID):
            if self._is_oldest(batch):
                self._bump_needed = True  # KIP-360: the broker lost our state; new epoch
            self._retry_or_fail(batch, f"{code.name} from the partition leader for {tp}", code)
            return
        if code == ec.MESSAGE_TOO_LARGE and batch.record_count > 1:
            # as Java's producer: split the batch in two and send the halves (sequences kept)
            pieces = self.acc.split(batch)
            self.acc.replace(batch, pieces)
            self.stats.retries += 1
            self.stats.splits += 1
            log.info("%r was too large for the broker: split in %d", batch, len(pieces))
            return
        if code in (ec.MESSAGE_TOO_LARGE, ec.RECORD_LIST_TOO_LARGE):
            what = (
                f"a batch of {len(batch.data or b'')} bytes ({batch.record_count} records)"
                if batch.record_count > 1
                else f"a record of {len(batch.data or b'')} bytes (in a batch of its own)"
            )
            detail = (
                f"the broker refused {what}: it is larger than the topic's max.message.bytes "
                "(or the broker's message.max.bytes)"
            )
            self._fail(batch, ProduceError(code, batch.topic, batch.partition, detail))
            return
        if code.retriable:
            self._retry_or_fail(batch, f"{code.name} for {tp}", code)
            return
        detail = code.description
        if part.error_message:
            detail += f" Broker: {part.error_message}"
        if part.record_errors:
            detail += " Records: " + "; ".join(
                f"#{r.batch_index}: {r.batch_index_error_message}" for r in part.record_errors
            )
        self._fail(batch, ProduceError(code, batch.topic, batch.partition, detail))

    def _is_oldest(self, batch: ProducerBatch) -> bool:
        """Whether no batch of its partition with a lower sequence is unacknowledged."""
        return all(
            other.base_sequence < 0 or other.base_sequence >= batch.base_sequence
            for other in self.acc.incomplete
            if other.tp == batch.tp
        )

    def _retry_or_fail(self, batch: ProducerBatch, error: str, code: ec.ErrorCode | None) -> None:
        now = time.monotonic()
        batch.last_error = error
        batch.in_flight = False
        if (now - batch.created) * 1000 >= self.settings.delivery_timeout_ms:
            self._fail(batch, self._timeout_error(batch))
        elif batch.attempts > self.settings.retries:
            if code is not None:
                self._fail(
                    batch,
                    ProduceError(
                        code,
                        batch.topic,
                        batch.partition,
                        f"{code.description} (kafka.retries={self.settings.retries} exhausted)",
                    ),
                )
            else:
                self._fail(
                    batch,
                    KafkaError(
                        f"producing to {batch.topic}-{batch.partition} failed after "
                        f"{batch.attempts} attempts (kafka.retries={self.settings.retries}): "
                        f"{error}"
                    ),
                )
        else:
            batch.retry_at = now + self.settings.client.retry_backoff_ms / 1000
            self.acc.requeue(batch)
            self.stats.retries += 1

    def _succeed(self, batch: ProducerBatch) -> None:
        self.stats.records += batch.record_count
        self.stats.batches += 1
        self.acc.done(batch)

    def _fail(self, batch: ProducerBatch, exc: BaseException) -> None:
        if batch not in self.acc.incomplete:
            return
        log.debug("batch %r failed: %s", batch, exc)
        if self.failure is None:
            self.failure = exc
        if self.idempotent and batch.base_sequence >= 0:
            self._bump_needed = True  # a gap in the partition's sequences (Java does so too)
        self.acc.done(batch)

    def _fail_all_queued(self, exc: BaseException) -> None:
        for batch in self.acc.queued():
            self._fail(batch, exc)
        self.cond.notify_all()


def _sequence_of(batch: ProducerBatch) -> int:
    """The base sequence written in a sealed batch's header (KIP-98)."""
    assert batch.data is not None
    return int.from_bytes(
        batch.data[PRODUCER_ID_OFFSET + 10 : PRODUCER_ID_OFFSET + 14], "big", signed=True
    )
