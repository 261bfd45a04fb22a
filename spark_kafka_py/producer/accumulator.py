"""The producer's batches: one queue per partition, bounded by ``buffer.memory``.

Kafka's Java ``RecordAccumulator`` is the model (no code taken): records of a partition are
appended to its open batch until ``batch.size`` bytes (uncompressed, the 61-byte batch header
included) are used; a full batch is sealed (compressed into its final bytes by
:func:`~spark_kafka_py.records.encoder.build_batch`) and waits for the sender; a partial batch
is sent once ``linger.ms`` old, or at once when a flush or a blocked append wants it.

The producer id, epoch and base sequence (KIP-98) are stamped into a sealed batch when it is
first drained (and again after an epoch bump, KIP-360): the header fields are patched and the
CRC-32C (attributes .. end) recomputed, without compressing again.

Thread-safety: one :class:`threading.Condition` (:attr:`RecordAccumulator.cond`) guards the
accumulator and the sender's state; the appending thread and the sender threads share it.
"""

from __future__ import annotations

import collections
import struct
import threading
import time
from dataclasses import dataclass, field

import crc32c
import pyarrow as pa

from spark_kafka_py.errors import KafkaTimeoutError
from spark_kafka_py.protocol.topic_partition import TopicPartition
from spark_kafka_py.records.decoder import decode_records
from spark_kafka_py.records.encoder import build_batch, encode_records_section
from spark_kafka_py.records.format import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
)

__all__ = ["ProducerBatch", "RecordAccumulator", "restamp_crc", "stamp_batch"]

#: ``producerId:int64 producerEpoch:int16 baseSequence:int32`` at :data:`PRODUCER_ID_OFFSET`
#: of a record batch v2 (``DefaultRecordBatch``).
_PRODUCER_FIELDS = struct.Struct(">qhi")
_CRC = struct.Struct(">I")
#: Sequence numbers are int32 and wrap to 0 after ``2**31 - 1`` (``DefaultRecordBatch``).
_SEQUENCE_MODULO = 1 << 31


def restamp_crc(batch: bytearray) -> None:
    """Recompute, in place, the CRC-32C of ``batch`` (one record batch v2) over attributes ..
    end, after header fields were patched (``DefaultRecordBatch``, KIP-98)."""
    _CRC.pack_into(batch, CRC_OFFSET, crc32c.crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))


def stamp_batch(data: bytes | bytearray, producer_id: int, epoch: int, base_sequence: int) -> bytes:
    """``data`` (one record batch v2) with its producer id, epoch and base sequence replaced
    and its CRC-32C recomputed over attributes .. end (KIP-98)."""
    out = bytearray(data)
    _PRODUCER_FIELDS.pack_into(out, PRODUCER_ID_OFFSET, producer_id, epoch, base_sequence)
    restamp_crc(out)
    return bytes(out)


@dataclass(eq=False)
class ProducerBatch:
    """One record batch of one partition, from its first append to its acknowledgment.

    Attributes:
        topic, partition: where it goes.
        created: ``time.monotonic()`` of its first append (the ``delivery.timeout.ms`` and
            ``linger.ms`` clocks start there).
        base_timestamp, max_timestamp: CreateTime of the first and the latest record (ms).
        sections: records sections encoded so far (while open).
        records_bytes: bytes of ``sections`` (uncompressed records).
        record_count: records in the batch.
        data: the batch bytes once sealed (``None`` while open).
        base_sequence: KIP-98 sequence of its first record, -1 until first drained.
        producer_id, producer_epoch: stamped with the sequence.
        attempts: sends so far; ``retry_at``: monotonic time before which it is not resent.
        in_flight: written to a broker, response not handled yet.
        last_error: the last retriable error, for the timeout message.
    """

    topic: str
    partition: int
    created: float
    base_timestamp: int
    max_timestamp: int
    sections: list[bytes] = field(default_factory=list)
    records_bytes: int = 0
    record_count: int = 0
    data: bytes | None = None
    base_sequence: int = NO_SEQUENCE
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    attempts: int = 0
    retry_at: float = 0.0
    in_flight: bool = False
    last_error: str | None = None

    @property
    def tp(self) -> TopicPartition:
        """``(topic, partition)``."""
        return TopicPartition(self.topic, self.partition)

    @property
    def held_bytes(self) -> int:
        """Bytes this batch holds against ``buffer.memory``."""
        return len(self.data) if self.data is not None else self.records_bytes

    @property
    def last_sequence(self) -> int:
        """Sequence of its last record (KIP-98, wrapping at ``2**31``)."""
        return (self.base_sequence + self.record_count - 1) % _SEQUENCE_MODULO

    def __repr__(self) -> str:
        return (
            f"ProducerBatch({self.topic}-{self.partition}, {self.record_count} records, "
            f"seq {self.base_sequence}, attempts {self.attempts})"
        )


class RecordAccumulator:
    """Batches per partition, bounded by ``buffer.memory``.

    Args:
        batch_size: ``batch.size`` (bytes, the 61-byte header included; 0: one record per
            batch).
        buffer_memory: ``buffer.memory`` (bytes of open and sealed batches; the bound may be
            passed by at most one batch, as a batch is filled before the next check).
        linger_ms: ``linger.ms``.
        codec, level: compression of sealed batches (codec id 0..4, KIP-390 level or None).
    """

    def __init__(
        self, *, batch_size: int, buffer_memory: int, linger_ms: int, codec: int, level: int | None
    ) -> None:
        self.batch_size = batch_size
        self.buffer_memory = buffer_memory
        self.linger_ms = linger_ms
        self.codec = codec
        self.level = level
        self.cond = threading.Condition(threading.RLock())
        #: queued batches per partition, oldest first (the last may be open)
        self.queues: dict[TopicPartition, collections.deque[ProducerBatch]] = {}
        #: every batch appended and not yet acknowledged or failed (queued or in flight)
        self.incomplete: set[ProducerBatch] = set()
        self.used_bytes = 0
        #: flushes in progress; while > 0 every batch is ready
        self.flushing = 0
        #: appends waiting for memory; while > 0 every batch is ready (as Java's
        #: ``RecordAccumulator.ready`` when the buffer pool has waiters)
        self.memory_waiters = 0
        self.closed = False

    # -- appending ------------------------------------------------------------------------
    def append(
        self,
        topic: str,
        partition: int,
        keys: pa.Array | None,
        values: pa.Array | None,
        headers: pa.Array | None,
        timestamp_ms: int,
        *,
        max_block_ms: int,
    ) -> int:
        """Encode every row into the partition's batches; returns the number of rows.

        Blocks while :attr:`used_bytes` >= ``buffer.memory``, up to ``max_block_ms``.

        Raises:
            KafkaTimeoutError: no memory freed within ``max_block_ms`` (names
                ``kafka.buffer.memory`` and ``kafka.max.block.ms``); rows before the blocked
                one stay queued.
            InvalidRecordError: from the encoder (wrong column type, null header key).
        """
        n = len(values) if values is not None else len(keys) if keys is not None else 0
        tp = TopicPartition(topic, partition)
        row = 0
        cond = self.cond
        while row < n:
            # locked per batch, so that the sender drains and completes between batches
            with cond:
                self._wait_for_memory(max_block_ms, tp)
                queue = self.queues.get(tp)
                if queue is None:
                    queue = self.queues[tp] = collections.deque()
                batch = queue[-1] if queue and queue[-1].data is None else None
                if batch is None:
                    batch = ProducerBatch(topic, partition, time.monotonic(), timestamp_ms, 0)
                    batch.max_timestamp = timestamp_ms
                    queue.append(batch)
                    self.incomplete.add(batch)
                    cond.notify_all()  # the sender's linger clock starts
                budget = self.batch_size - RECORD_BATCH_OVERHEAD - batch.records_bytes
                section, taken = encode_records_section(
                    keys,
                    values,
                    headers,
                    row,
                    first_offset_delta=batch.record_count,
                    timestamp_delta=timestamp_ms - batch.base_timestamp,
                    budget=max(budget, 0),
                )
                if taken:
                    batch.sections.append(section)
                    batch.records_bytes += len(section)
                    batch.record_count += taken
                    batch.max_timestamp = max(batch.max_timestamp, timestamp_ms)
                    self.used_bytes += len(section)
                    row += taken
                if row < n or batch.records_bytes + RECORD_BATCH_OVERHEAD >= self.batch_size:
                    self.seal(batch)  # full: the next row did not fit
                    cond.notify_all()
        return n

    def _wait_for_memory(self, max_block_ms: int, tp: TopicPartition) -> None:
        if self.used_bytes < self.buffer_memory:
            return
        deadline = time.monotonic() + max_block_ms / 1000
        self.memory_waiters += 1
        self.cond.notify_all()  # the sender sends every batch now
        try:
            while self.used_bytes >= self.buffer_memory:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise KafkaTimeoutError(
                        f"producing to {tp[0]}-{tp[1]}: {self.used_bytes} bytes of batches "
                        f"fill kafka.buffer.memory={self.buffer_memory} and none was "
                        f"acknowledged within kafka.max.block.ms={max_block_ms} ms"
                    )
                self.cond.wait(left)
        finally:
            self.memory_waiters -= 1

    def seal(self, batch: ProducerBatch) -> None:
        """Compress an open batch into its final bytes (no producer id yet). Call locked."""
        if batch.data is not None:
            return
        records = b"".join(batch.sections)
        batch.data = build_batch(
            records,
            count=batch.record_count,
            last_offset_delta=batch.record_count - 1,
            base_timestamp=batch.base_timestamp,
            max_timestamp=batch.max_timestamp,
            codec=self.codec,
            level=self.level,
        )
        batch.sections = []
        self.used_bytes += len(batch.data) - batch.records_bytes

    # -- sender side ----------------------------------------------------------------------
    def is_ready(self, batch: ProducerBatch, now: float) -> bool:
        """Whether the first batch of a queue may be sent now (call locked)."""
        if batch.retry_at > now:
            return False
        return (
            batch.data is not None
            or self.flushing > 0
            or self.memory_waiters > 0
            or self.closed
            or (now - batch.created) * 1000 >= self.linger_ms
        )

    def time_until_ready(self, batch: ProducerBatch, now: float) -> float:
        """Seconds until :meth:`is_ready` turns true by the clock alone (linger or backoff);
        0 when it is ready. Call locked."""
        if batch.retry_at > now:
            return batch.retry_at - now
        if self.is_ready(batch, now):
            return 0.0
        return max(batch.created + self.linger_ms / 1000 - now, 0.0)

    def requeue(self, batch: ProducerBatch) -> None:
        """Put a batch that must be sent again back into its queue, in sequence order
        (before every batch with a higher or no sequence; Java's ``insertInSequenceOrder``).
        Call locked."""
        batch.in_flight = False
        queue = self.queues.setdefault(batch.tp, collections.deque())
        for i, other in enumerate(queue):
            if (
                batch.base_sequence < 0
                or other.base_sequence < 0
                or other.base_sequence > batch.base_sequence
            ):
                queue.insert(i, batch)
                return
        queue.append(batch)

    def done(self, batch: ProducerBatch) -> None:
        """Forget a batch acknowledged or failed for good; frees its memory. Call locked."""
        if batch not in self.incomplete:
            return
        self.incomplete.discard(batch)
        queue = self.queues.get(batch.tp)
        if queue is not None and batch in queue:
            queue.remove(batch)
        self.used_bytes -= batch.held_bytes
        batch.sections = []
        batch.in_flight = False
        self.cond.notify_all()

    def split(self, batch: ProducerBatch) -> list[ProducerBatch]:
        """Two sealed batches holding the records of ``batch`` (at least 2 records), halves in
        order, for a batch the broker refused as too large (MESSAGE_TOO_LARGE; Java's producer
        splits such batches too, ``RecordAccumulator.splitAndReenqueue``). Sequences continue
        from ``batch.base_sequence``, so the partition's later batches keep theirs (KIP-98).
        Each piece keeps ``batch``'s creation time and attempts. Pure: the queues and the
        memory count are the caller's business."""
        assert batch.data is not None and batch.record_count > 1
        rows = decode_records(
            batch.data,
            topic=batch.topic,
            partition=batch.partition,
            start_offset=0,
            end_offset=1 << 62,
            include_headers=True,
            max_decoded_bytes=None,  # our own batch: no bound beyond the per-batch one
        ).batch
        ts_type = rows.schema.field("timestamp").type
        per_ms = {"s": 1 / 1000, "ms": 1, "us": 1000, "ns": 1_000_000}[ts_type.unit]
        stamps = [t // per_ms for t in rows.column("timestamp").cast(pa.int64()).to_pylist()]
        keys, values, headers = (rows.column(n) for n in ("key", "value", "headers"))
        half = rows.num_rows // 2
        pieces = []
        for start, stop in ((0, half), (half, rows.num_rows)):
            piece = ProducerBatch(
                batch.topic,
                batch.partition,
                batch.created,
                stamps[start],
                max(stamps[start:stop]),
                attempts=batch.attempts,
                last_error=batch.last_error,
            )
            sections = []
            run = start
            while run < stop:  # rows of one timestamp share one timestamp delta
                end = run + 1
                while end < stop and stamps[end] == stamps[run]:
                    end += 1
                section, taken = encode_records_section(
                    keys.slice(run, end - run),
                    values.slice(run, end - run),
                    headers.slice(run, end - run),
                    0,
                    first_offset_delta=run - start,
                    timestamp_delta=stamps[run] - stamps[start],
                    budget=1 << 62,
                )
                assert taken == end - run
                sections.append(section)
                run = end
            piece.record_count = stop - start
            piece.data = build_batch(
                b"".join(sections),
                count=piece.record_count,
                last_offset_delta=piece.record_count - 1,
                base_timestamp=piece.base_timestamp,
                max_timestamp=piece.max_timestamp,
                codec=self.codec,
                level=self.level,
            )
            if batch.base_sequence >= 0:
                piece.base_sequence = (batch.base_sequence + start) % _SEQUENCE_MODULO
            pieces.append(piece)
        return pieces

    def replace(self, batch: ProducerBatch, pieces: list[ProducerBatch]) -> None:
        """Put ``pieces`` (from :meth:`split`) in place of ``batch`` and queue them. Call
        locked."""
        self.done(batch)
        for piece in pieces:
            self.incomplete.add(piece)
            self.used_bytes += piece.held_bytes
            self.requeue(piece)

    def queued(self) -> list[ProducerBatch]:
        """Every batch in a queue (not in flight), oldest first per partition. Call locked."""
        return [b for queue in self.queues.values() for b in queue]
