"""Kafka's on-disk / on-wire record formats: layout, named constants, header parsing.

Sources: Kafka's protocol guide, "Record Batch" (https://kafka.apache.org/documentation/
#recordbatch, KIP-98 for the v2 batch, KIP-82 for headers), and the Java implementation
``clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java``,
``DefaultRecord.java``, ``LegacyRecord.java``, ``ControlRecordType.java``,
``EndTransactionMarker.java``. All integers are big endian unless "varint".

Record batch, magic 2 (``DefaultRecordBatch``)::

    offset  field                 type     notes
    0       baseOffset            int64
    8       batchLength           int32    bytes after this field (from partitionLeaderEpoch)
    12      partitionLeaderEpoch  int32    (rewritten by the broker: not covered by the CRC)
    16      magic                 int8     2
    17      crc                   uint32   CRC-32C (Castagnoli) of bytes 21 .. end of batch
    21      attributes            int16    bits 0-2 compression (0 none, 1 gzip, 2 snappy,
                                           3 lz4, 4 zstd); bit 3 timestampType (0 CreateTime,
                                           1 LogAppendTime); bit 4 isTransactional (KIP-98);
                                           bit 5 isControl (KIP-98); bit 6 hasDeleteHorizonMs
                                           (KIP-534)
    23      lastOffsetDelta       int32    lastOffset = baseOffset + lastOffsetDelta
    27      baseTimestamp         int64    (the delete horizon when bit 6 is set)
    35      maxTimestamp          int64    the LogAppendTime of every record when bit 3 is set
    43      producerId            int64    -1 when none
    51      producerEpoch         int16
    53      baseSequence          int32
    57      recordsCount          int32
    61      records               (compressed as a whole when bits 0-2 != 0)

Record (``DefaultRecord``; varint/varlong = zigzag-encoded base-128, protobuf style)::

    length          varint   bytes of the record after this field
    attributes      int8     unused (0)
    timestampDelta  varlong  timestamp = baseTimestamp + timestampDelta (CreateTime)
    offsetDelta     varint   offset = baseOffset + offsetDelta (gaps allowed: compaction)
    keyLength       varint   -1 = null key
    key             bytes
    valueLength     varint   -1 = null value
    value           bytes
    headersCount    varint   (KIP-82)
    headers         headersCount x [keyLength varint (>= 0), key utf-8,
                                    valueLength varint (-1 = null), value]

Control record (``isControl`` batch, KIP-98; ``ControlRecordType``,
``EndTransactionMarker``): key = version int16 (0) + type int16 (0 ABORT, 1 COMMIT, other
types are KRaft's); value = version int16 + coordinatorEpoch int32 for ABORT/COMMIT.

Legacy message, magic 0 and 1 (``LegacyRecord``, the "message set" of Kafka < 0.11)::

    offset      int64    (v1 wrapper: offset of the last inner message)
    messageSize int32    bytes after this field
    crc         uint32   CRC-32 (zlib's) of magic .. end
    magic       int8     0 or 1
    attributes  int8     bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4);
                         bit 3 timestampType (magic 1 only)
    timestamp   int64    magic 1 only
    key         int32 length (-1 null) + bytes
    value       int32 length (-1 null) + bytes; for a compressed wrapper: the compressed
                inner message set (v1 inner offsets are relative: 0..n-1, KIP-31)

Both layouts put the magic byte at offset 16, so a reader frames on the 12-byte
``offset + length`` prefix (``LOG_OVERHEAD``) and then dispatches on the magic.

This module is the one source of these numbers; code outside ``records/`` that needs a field
of a batch header reads it with :func:`peek_batch_header` (or :func:`last_batch_leader_epoch`),
not at a byte offset of its own. The accelerated decoder (``_accel.pyx``)
needs them as C compile-time constants and repeats the ones it uses in its
``cdef enum Layout`` under the same names; ``tests/records/test_accel_layout.py`` fails when
one of them differs from here.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

# ---- framing shared by every magic (Records.LOG_OVERHEAD, Records.MAGIC_OFFSET) ------------
LOG_OVERHEAD: Final = 12  # baseOffset int64 + length int32
MAGIC_OFFSET: Final = 16
HEADER_SIZE_UP_TO_MAGIC: Final = MAGIC_OFFSET + 1

# ---- magic 2 (field offsets as named in DefaultRecordBatch) --------------------------------
MAGIC_V2: Final = 2
PARTITION_LEADER_EPOCH_OFFSET: Final = 12
CRC_OFFSET: Final = 17
ATTRIBUTES_OFFSET: Final = 21  # the CRC covers attributes .. end of batch
LAST_OFFSET_DELTA_OFFSET: Final = 23
BASE_TIMESTAMP_OFFSET: Final = 27
MAX_TIMESTAMP_OFFSET: Final = 35
PRODUCER_ID_OFFSET: Final = 43
RECORDS_COUNT_OFFSET: Final = 57
RECORD_BATCH_OVERHEAD: Final = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
#: smallest legal ``batchLength`` (the header after the length field, no records).
MIN_BATCH_LENGTH_V2: Final = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD

COMPRESSION_CODEC_MASK: Final = 0x07
TIMESTAMP_TYPE_MASK: Final = 0x08
TRANSACTIONAL_FLAG_MASK: Final = 0x10
CONTROL_FLAG_MASK: Final = 0x20
DELETE_HORIZON_FLAG_MASK: Final = 0x40

NO_PRODUCER_ID: Final = -1
#: ``RecordBatch.NO_PRODUCER_EPOCH``, ``NO_SEQUENCE``, ``NO_PARTITION_LEADER_EPOCH``: what a
#: non-idempotent producer writes (the broker sets the leader epoch).
NO_PRODUCER_EPOCH: Final = -1
NO_SEQUENCE: Final = -1
NO_PARTITION_LEADER_EPOCH: Final = -1
#: ``DefaultRecord.MAX_RECORD_OVERHEAD``: length varint (5) + attributes (1) +
#: timestampDelta varlong (10) + offsetDelta varint (5); the producer's record-size bound.
MAX_RECORD_OVERHEAD: Final = 21

#: Kafka ``TimestampType.id`` values, Spark's ``timestampType`` column.
TIMESTAMP_TYPE_NONE: Final = -1
TIMESTAMP_TYPE_CREATE_TIME: Final = 0
TIMESTAMP_TYPE_LOG_APPEND_TIME: Final = 1

#: smallest record: length, attributes, timestampDelta, offsetDelta, keyLength,
#: valueLength, headersCount at one byte each (the length byte not counted).
MIN_RECORD_BODY: Final = 6

#: ``baseOffset, batchLength, partitionLeaderEpoch, magic, crc``
V2_PREFIX: Final = struct.Struct(">qiibI")
#: ``attributes .. recordsCount`` (offset 21 .. 61)
V2_HEADER: Final = struct.Struct(">hiqqqhii")

# ---- control records (ControlRecordType, EndTransactionMarker) -----------------------------
CONTROL_TYPE_ABORT: Final = 0
CONTROL_TYPE_COMMIT: Final = 1
CONTROL_KEY: Final = struct.Struct(">hh")  # version, type

# ---- magic 0 / 1 (LegacyRecord) ------------------------------------------------------------
MAGIC_V0: Final = 0
MAGIC_V1: Final = 1
#: crc(4) + magic(1) + attributes(1) + keyLength(4) + valueLength(4)
LEGACY_RECORD_OVERHEAD_V0: Final = 14
#: v0 overhead + timestamp(8)
LEGACY_RECORD_OVERHEAD_V1: Final = 22
LEGACY_CRC_OFFSET: Final = 12
LEGACY_PREFIX: Final = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
LEGACY_COMPRESSION_MASK: Final = 0x07
LEGACY_TIMESTAMP_TYPE_MASK: Final = 0x08

INT32: Final = struct.Struct(">i")
INT64: Final = struct.Struct(">q")

# ---- header peeks: framing fields read in place, nothing checked -------------------------
#: ``baseOffset, batchLength`` (``LOG_OVERHEAD``), the prefix common to every magic.
_FRAME: Final = struct.Struct(">qi")


class BatchFrame(NamedTuple):
    """The framing fields of one record batch (or legacy message) as they stand in a buffer.

    ``batch_length`` counts the bytes after the length field (so the next batch starts
    ``LOG_OVERHEAD + batch_length`` bytes further); ``partition_leader_epoch`` is
    ``NO_PARTITION_LEADER_EPOCH`` (-1) unless ``magic`` is 2 (at that place a legacy message
    holds its CRC).
    """

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int


def peek_batch_header(buf: bytes | memoryview, pos: int = 0) -> BatchFrame | None:
    """The :class:`BatchFrame` of the batch starting at byte ``pos`` of ``buf``, or ``None``
    when fewer than ``HEADER_SIZE_UP_TO_MAGIC`` (17) bytes remain there.

    Reads bytes 0 .. 16 of the layout above in place; checks nothing (not the CRC, not that
    ``batch_length`` fits in ``buf`` or is large enough): for bytes the decoder has already
    checked, or where a wrong answer only costs a request (the Fetch loop's
    ``last_fetched_epoch``, KIP-320).
    """
    if pos < 0 or len(buf) - pos < HEADER_SIZE_UP_TO_MAGIC:
        return None
    base_offset, batch_length = _FRAME.unpack_from(buf, pos)
    magic = buf[pos + MAGIC_OFFSET]
    magic = magic - 256 if magic > 127 else magic  # int8
    epoch = NO_PARTITION_LEADER_EPOCH
    if magic == MAGIC_V2:
        epoch = INT32.unpack_from(buf, pos + PARTITION_LEADER_EPOCH_OFFSET)[0]
    return BatchFrame(base_offset, batch_length, epoch, magic)


def last_batch_leader_epoch(records: bytes | memoryview, next_offset: int) -> int:
    """The ``partitionLeaderEpoch`` of the last batch of ``records`` whose ``baseOffset`` is
    below ``next_offset`` (the batch the record before ``next_offset`` came from), or
    ``NO_PARTITION_LEADER_EPOCH`` (-1): no such batch, or it is a legacy message (magic 0/1
    carry no epoch).

    ``records`` is the records field of one Fetch response partition (batches back to back,
    the last one possibly cut short); batches are walked by their framing only
    (:func:`peek_batch_header`). Used for the Fetch request's ``last_fetched_epoch`` (v12+,
    KIP-320).
    """
    view = memoryview(records)
    n = len(view)
    pos = 0
    epoch = NO_PARTITION_LEADER_EPOCH
    # peek_batch_header inlined: one Fetch response holds many batches
    while n - pos >= HEADER_SIZE_UP_TO_MAGIC:
        base_offset, batch_length = _FRAME.unpack_from(view, pos)
        if base_offset >= next_offset:
            break
        epoch = NO_PARTITION_LEADER_EPOCH
        if view[pos + MAGIC_OFFSET] == MAGIC_V2:
            epoch = INT32.unpack_from(view, pos + PARTITION_LEADER_EPOCH_OFFSET)[0]
        if batch_length < 0:  # not a batch; the walk would go backwards
            break
        pos += LOG_OVERHEAD + batch_length
    return epoch
