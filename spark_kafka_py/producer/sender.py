"""The producer's sender: Produce requests from the accumulator's batches, their responses,
retries, idempotence.

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
  their batches (what each partition's result does: :mod:`spark_kafka_py.producer.state`).

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
from spark_kafka_py.client.retry import retriable
from spark_kafka_py.errors import (
    KafkaError,
    ProduceError,
)
from spark_kafka_py.producer.accumulator import (
    ProducerBatch,
    RecordAccumulator,
)
from spark_kafka_py.producer.settings import MAX_IN_FLIGHT_IDEMPOTENT, ProducerSettings
from spark_kafka_py.producer.state import PRODUCE_BY_TOPIC_ID_VERSION, ProducerState
from spark_kafka_py.producer.transactions import PRODUCE_TXN_MAX_VERSION
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from spark_kafka_py.protocol.messages.produce import (
    ACKS_NONE,
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from spark_kafka_py.protocol.primitives import ZERO_UUID

__all__ = ["Sender"]

log = logging.getLogger(__name__)

#: An idempotent producer asks InitProducerId with this transaction timeout (ms): Java's
#: ``TransactionManager`` sends ``Integer.MAX_VALUE`` when there is no transactional id.
_IDEMPOTENT_TXN_TIMEOUT_MS = 2**31 - 1
#: The largest producer epoch (int16); past it an idempotent producer gets a new producer id.
_MAX_EPOCH = 2**15 - 1
#: Per-request bytes of a ProduceRequest besides its batches, generously bounded
#: (header, transactional id, acks, timeout, arrays, a topic name per batch).
_REQUEST_OVERHEAD = 512


@dataclass(frozen=True)
class _Request:
    """A Produce request in flight: its connection, handle, batches and topic ids."""

    conn: BrokerConnection
    pending: Pipelined[ProduceResponse]
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
                    self.sender.complete(
                        self.node, item.batches, response, item.pending.version, item.names_by_id
                    )
            except Exception as exc:  # a bug: its batches fail with it, flush() raises it
                log.exception("reading Produce responses from broker %d failed", self.node)
                self.sender.fail_request(item.batches, exc)
            with self.cv:
                self.items.popleft()


class Sender(ProducerState):
    """The sender of one :class:`~spark_kafka_py.producer.producer.KafkaProducer`: the I/O
    around :class:`~spark_kafka_py.producer.state.ProducerState` (shared with the appending
    thread under ``accumulator.cond``)."""

    def __init__(
        self, settings: ProducerSettings, client: KafkaClient, accumulator: RecordAccumulator
    ) -> None:
        super().__init__(settings, accumulator)
        self.client = client
        # Metadata is asked at most once per backoff (KIP-580: growing while it fails)
        self._metadata_retry_at = 0.0
        self._metadata_failures = 0
        # InitProducerId is asked again after a backoff growing while it fails
        self._init_retry_at = 0.0
        self._init_failures = 0
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

    def set_transaction_producer(self, producer_id: int, producer_epoch: int) -> None:
        """A transactional producer's id and epoch from InitProducerId (the caller's thread,
        :func:`~spark_kafka_py.producer.transactions.fence`): sequences start again at 0.
        Call with nothing in flight."""
        with self.cond:
            self.producer_id, self.producer_epoch = producer_id, producer_epoch
            self._reset_sequences()
            self.cond.notify_all()

    def _ensure_producer_id(self, now: float) -> bool:
        """Whether batches may be drained; gets or bumps the producer id when due."""
        if self.transactional:
            # begin_transaction sets the producer id; a failed batch dooms the transaction
            # (its sequences have a gap): what is queued fails until it is aborted
            with self.cond:
                if self.producer_id >= 0 and not self._bump_needed:
                    return True
                self._fail_all_queued(
                    KafkaError(
                        "an earlier batch of this transaction failed, or no transaction was "
                        "begun: abort the transaction and begin a new one"
                    )
                )
                self.cond.wait(0.5)
                return False
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
            with self.cond:
                pause_ms = self.backoff.pause_ms(self._init_failures)
                self._init_failures += 1
                self._init_retry_at = time.monotonic() + pause_ms / 1000
                self._last_metadata_error = str(exc)
                if not retriable(exc):
                    self._fail_all_queued(exc)
            log.info("InitProducerId failed: %s", exc)
            return False
        with self.cond:
            self._init_failures = 0
            self.producer_id = response.producer_id
            self.producer_epoch = response.producer_epoch
            if bump:  # the epoch is exhausted: a new producer id
                self._reset_sequences()
            self._bump_needed = False
            log.info("producer id %d epoch %d", self.producer_id, self.producer_epoch)
        return True

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
            if not topics or not want or now < self._metadata_retry_at:
                return
            # at most one Metadata per retry.backoff.ms, more while it fails
            pause_ms = self.backoff.pause_ms(self._metadata_failures)
            self._metadata_retry_at = now + pause_ms / 1000
        try:
            metadata = self.client.metadata(topics, allow_auto_topic_creation=True)
        except KafkaError as exc:
            log.info("producer metadata refresh failed: %s", exc)
            with self.cond:
                self._metadata_failures += 1
                self._last_metadata_error = str(exc)
            return
        with self.cond:
            self._metadata_failures = 0
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
            transactional_id=s.transactional_id,
            acks=s.acks,
            timeout_ms=s.client.request_timeout_ms,
            topic_data=tuple(
                TopicProduceData(
                    name=topic, topic_id=ids.get(topic, ZERO_UUID), partition_data=tuple(parts)
                )
                for topic, parts in topics.items()
            ),
        )
        max_version = None if len(ids) == len(topics) else PRODUCE_BY_TOPIC_ID_VERSION - 1
        if self.transactional:  # we add partitions ourselves (KIP-890 part 2 not used)
            max_version = PRODUCE_TXN_MAX_VERSION
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
