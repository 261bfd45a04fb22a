"""The producer's state between its threads, and what a Produce response does to it
(sans-I/O: no sockets, no threads).

:class:`ProducerState` holds the idempotence bookkeeping (KIP-98: producer id, epoch, each
partition's next sequence), the requests in flight per partition and per broker, the first
failure not yet raised, and the counters; it turns each partition's result of a Produce
response (``ProduceResponse.json``) into an acknowledgment, a retry, a split or a failure,
as Kafka's Java ``Sender.completeBatch`` / ``TransactionManager`` do (facts, no code):

- NONE, and DUPLICATE_SEQUENCE_NUMBER with idempotence: acknowledged.
- OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID on the oldest unacknowledged batch of its
  partition: the epoch is bumped (KIP-360) and the batch retried; on a later batch: retried.
- MESSAGE_TOO_LARGE on a batch of several records: split in two and resent.
- retriable errors (:func:`spark_kafka_py.client.retry.retriable`): requeued in sequence order
  after a backoff (``retry.backoff.ms`` doubling per attempt up to ``retry.backoff.max.ms``,
  with jitter: KIP-580, as Java's ``RecordAccumulator``), while attempts stay within
  ``retries`` and the batch within ``delivery.timeout.ms``; else failed.
- anything else: failed with a :class:`~spark_kafka_py.errors.ProduceError` naming the
  topic-partition, the Kafka error and the broker's message (KIP-467 record errors).

Every method runs under ``accumulator.cond`` (taken here where public).
"""

from __future__ import annotations

import collections
import logging
import struct
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from spark_kafka_py.client.retry import Backoff, retriable
from spark_kafka_py.errors import (
    KafkaError,
    KafkaTimeoutError,
    ProduceError,
)
from spark_kafka_py.producer.accumulator import (
    ProducerBatch,
    RecordAccumulator,
    restamp_crc,
    stamp_batch,
)
from spark_kafka_py.producer.settings import ProducerSettings
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.init_producer_id import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from spark_kafka_py.protocol.messages.produce import PartitionProduceResponse, ProduceResponse
from spark_kafka_py.protocol.topic_partition import TopicPartition
from spark_kafka_py.records.format import (
    ATTRIBUTES_OFFSET,
    PRODUCER_ID_OFFSET,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = ["PRODUCE_BY_TOPIC_ID_VERSION", "ProducerState", "ProducerStats", "mark_transactional"]

log = logging.getLogger(__name__)

_ATTRIBUTES = struct.Struct(">h")

#: Produce v13 names topics by id (KIP-516); without a topic id we stay at v12.
PRODUCE_BY_TOPIC_ID_VERSION = 13


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


class ProducerState:
    """What the producer's threads share, under ``accumulator.cond``.

    Args:
        settings: the producer's settings.
        accumulator: its batches (its ``cond`` guards this state too).

    Attributes:
        producer_id, producer_epoch: KIP-98 (-1 until InitProducerId answered).
        stats: :class:`ProducerStats`.
        failure: the first failure not yet raised to the caller.
    """

    def __init__(self, settings: ProducerSettings, accumulator: RecordAccumulator) -> None:
        self.settings = settings
        self.acc = accumulator
        self.cond = accumulator.cond
        self.idempotent = settings.enable_idempotence
        self.transactional = settings.transactional_id is not None
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self.stats = ProducerStats()
        self.failure: BaseException | None = None
        self._next_sequence: dict[TopicPartition, int] = {}
        self._in_flight: collections.Counter[TopicPartition] = collections.Counter()
        self._node_in_flight: collections.Counter[int] = collections.Counter()
        self._bump_needed = False
        self._metadata_wanted = True
        self._last_metadata_error: str | None = None
        #: the pause before a retry (KIP-580; ``ExponentialBackoff.java``)
        self.backoff = Backoff(settings.client.retry_backoff_ms)

    def take_failure(self) -> BaseException | None:
        """The first failure since the last call (cleared: the producer goes on)."""
        with self.cond:
            failure, self.failure = self.failure, None
            return failure

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
    def _reset_sequences(self) -> None:
        """After an epoch bump or a new producer id: sequences start again at 0, queued
        batches are renumbered when drained next (in their queue order). Call locked."""
        self.stats.epoch_bumps += 1
        self._bump_needed = False
        self._next_sequence.clear()
        for batch in self.acc.queued():
            batch.base_sequence = -1
        log.info("producer %d bumped to epoch %d", self.producer_id, self.producer_epoch)

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
        if self.transactional:
            assert batch.data is not None
            batch.data = mark_transactional(batch.data)

    # -- completion (reader threads, or the sender thread on a failed write) ---------------
    def complete(
        self,
        node: int,
        batches: Sequence[ProducerBatch],
        response: ProduceResponse,
        version: int,
        names_by_id: dict[uuid.UUID, str],
    ) -> None:
        """Handle a Produce response (at ``version``; v13+ names topics by id, mapped back
        with ``names_by_id``): every batch acknowledged, retried, split or failed."""
        by_version = version >= PRODUCE_BY_TOPIC_ID_VERSION
        results: dict[TopicPartition, PartitionProduceResponse] = {}
        for topic in response.responses:
            name = names_by_id.get(topic.topic_id, "") if by_version else topic.name
            for part in topic.partition_responses:
                results[TopicPartition(name, part.index)] = part
        with self.cond:
            self._node_in_flight[node] -= 1
            for batch in batches:
                self._in_flight[batch.tp] -= 1
            for batch in batches:
                result = results.pop(batch.tp, None)
                if result is None:
                    self._retry_or_fail(
                        batch,
                        f"the Produce response of broker {node} has no result for "
                        f"{batch.topic}-{batch.partition}",
                        None,
                    )
                else:
                    self._handle_partition(batch, result)
            if results and self.failure is None:
                self.failure = KafkaError(
                    f"broker {node} answered Produce for partitions not asked for: "
                    f"{sorted(results)}"
                )
            self.cond.notify_all()

    def complete_error(
        self,
        node: int,
        batches: Sequence[ProducerBatch],
        exc: BaseException,
    ) -> None:
        """A request failed as a whole (connection lost, timeout, no common version)."""
        again = retriable(exc)
        with self.cond:
            self._node_in_flight[node] -= 1
            self._metadata_wanted = True
            for batch in batches:
                self._in_flight[batch.tp] -= 1
            for batch in batches:
                if again:
                    self._retry_or_fail(batch, str(exc), None)
                else:
                    self._fail(batch, exc)
            self.cond.notify_all()

    def fail_request(self, batches: Sequence[ProducerBatch], exc: BaseException) -> None:
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
        if self.transactional and code in (
            ec.OUT_OF_ORDER_SEQUENCE_NUMBER,
            ec.UNKNOWN_PRODUCER_ID,
            ec.INVALID_PRODUCER_EPOCH,
            ec.PRODUCER_FENCED,
            ec.INVALID_TXN_STATE,
            ec.TRANSACTION_ABORTABLE,
        ):
            # a transactional producer cannot bump its epoch itself: the transaction fails
            # and must be aborted (Java's abortable/fatal errors)
            self._fail(batch, ProduceError(code, batch.topic, batch.partition))
            return
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
            # the n-th retry waits backoff(n - 1), as Java's RecordAccumulator.ready
            batch.retry_at = now + self.backoff.pause_ms(batch.attempts - 1) / 1000
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


def mark_transactional(data: bytes) -> bytes:
    """``data`` (one record batch v2) with the transactional attribute bit set (KIP-98) and its
    CRC-32C recomputed; unchanged if already set."""
    (attributes,) = _ATTRIBUTES.unpack_from(data, ATTRIBUTES_OFFSET)
    if attributes & TRANSACTIONAL_FLAG_MASK:
        return data
    out = bytearray(data)
    _ATTRIBUTES.pack_into(out, ATTRIBUTES_OFFSET, attributes | TRANSACTIONAL_FLAG_MASK)
    restamp_crc(out)
    return bytes(out)


def _sequence_of(batch: ProducerBatch) -> int:
    """The base sequence written in a sealed batch's header (KIP-98)."""
    assert batch.data is not None
    return int.from_bytes(
        batch.data[PRODUCER_ID_OFFSET + 10 : PRODUCER_ID_OFFSET + 14], "big", signed=True
    )
