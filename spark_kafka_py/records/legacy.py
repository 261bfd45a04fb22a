"""Legacy message sets (magic 0 and 1) still found in old log segments.

Layout in :mod:`spark_kafka_py.records.format`. Facts from Kafka's ``LegacyRecord.java``
and ``AbstractLegacyRecordBatch.java``:

* the CRC is CRC-32 (zlib's polynomial) over ``magic .. end``;
* a compressed message (a "wrapper") holds a whole inner message set in its value; inner
  messages are never compressed themselves;
* magic 1 (KIP-31/32): inner offsets are relative (the wrapper's offset is the absolute
  offset of the last inner message, so ``absolute = wrapper_offset - last_relative +
  relative``); a LogAppendTime wrapper gives its timestamp to every inner message;
* magic 0: inner offsets are absolute; there is no timestamp (``timestamp = -1``,
  ``timestampType = -1``, what Spark shows for such records).
"""

from __future__ import annotations

import zlib

from spark_kafka_py.errors import CorruptRecordError
from spark_kafka_py.records.arrow import ColumnBuilder
from spark_kafka_py.records.bounds import DecodeBudget, decompress_batch
from spark_kafka_py.records.compression import (
    CODEC_NONE,
    CODEC_ZSTD,
    RATIO_BOUND,
    RatioBound,
)
from spark_kafka_py.records.format import (
    INT32,
    INT64,
    LEGACY_COMPRESSION_MASK,
    LEGACY_PREFIX,
    LEGACY_RECORD_OVERHEAD_V0,
    LEGACY_RECORD_OVERHEAD_V1,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_V0,
    MAGIC_V1,
    TIMESTAMP_TYPE_CREATE_TIME,
    TIMESTAMP_TYPE_LOG_APPEND_TIME,
    TIMESTAMP_TYPE_NONE,
)

__all__ = ["decode_legacy_entry"]

_NO_TIMESTAMP = -1

# (offset, timestamp, timestamp type, key, value)
_Message = tuple[int, int, int, "bytes | None", "bytes | None"]


def decode_legacy_entry(
    entry: memoryview,
    cols: ColumnBuilder,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int,
    max_batch_bytes: int,
    budget: DecodeBudget | RatioBound | None = RATIO_BOUND,
    row_bytes: int = 0,
    check_crcs: bool = True,
) -> tuple[int, int]:
    """Check and decode one complete magic-0/1 message (a wrapper or a plain message).

    Appends the messages with offset in ``[start_offset, end_offset)`` to ``cols``. A plain
    message is charged its size to ``budget``, a wrapper its decompressed inner messages
    (see :mod:`spark_kafka_py.records.bounds`). ``check_crcs=False`` skips the CRC-32
    comparison of the wrapper and of every inner message, as the Java consumer's
    ``check.crcs=false`` skips ``record.ensureValid()`` for them (``CompletedFetch``); the
    length and layout checks stay.

    ``budget`` defaults to ``"ratio"``: a :class:`DecodeBudget` of
    :data:`~spark_kafka_py.records.compression.DEFAULT_MAX_DECOMPRESSION_RATIO` (100,
    ``maxDecompressionRatio``'s default, as the Fetch path) x ``len(entry)`` bytes. The
    decoders pass their response's budget; ``None`` (explicitly): no bound but
    ``max_batch_bytes``.

    Returns:
        ``(last offset, decoded bytes)``: the entry's last offset (the wrapper's offset), and
        the size of what was decoded plus ``row_bytes`` per message (0 for a wrapper wholly
        before the range).

    Raises:
        CorruptRecordError: CRC-32 mismatch, bad lengths, a compressed inner message, an
            unknown codec.
        DecompressionBoundError: decompression beyond ``max_batch_bytes`` or ``budget`` (by
            default 100 x ``len(entry)`` bytes); names topic, partition, offset and the bound.
    """
    if isinstance(budget, str):
        budget = DecodeBudget.of(budget, entry, "budget")
    offset, codec, ts, ts_type, key, value = _parse_message(entry, topic, partition, check_crcs)
    if codec == CODEC_NONE:
        if budget is not None:
            budget.charge(len(entry), topic, partition, offset)
        _emit(cols, [(offset, ts, ts_type, key, value)], start_offset, end_offset)
        return offset, len(entry) + row_bytes
    if offset < start_offset:
        return offset, 0  # the whole wrapper ends before the range
    if value is None:
        raise CorruptRecordError(
            "compressed legacy message has a null value",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    if codec == CODEC_ZSTD:
        raise CorruptRecordError(
            "zstd compression in a magic 0/1 message (KIP-110 requires magic 2)",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    wrapper_magic = entry[MAGIC_OFFSET]
    inner_bytes = decompress_batch(
        codec,
        value,
        max_batch_bytes=max_batch_bytes,
        budget=budget,
        topic=topic,
        partition=partition,
        offset=offset,
        legacy_lz4=wrapper_magic == MAGIC_V0,
    )
    inner = memoryview(inner_bytes)
    messages: list[_Message] = []
    pos = 0
    while pos < len(inner):
        if len(inner) - pos < LOG_OVERHEAD + LEGACY_RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                "compressed legacy message set ends inside a message",
                topic=topic,
                partition=partition,
                offset=offset,
            )
        (size,) = INT32.unpack_from(inner, pos + 8)
        if size < LEGACY_RECORD_OVERHEAD_V0 or pos + LOG_OVERHEAD + size > len(inner):
            raise CorruptRecordError(
                f"inner legacy message size {size} is invalid",
                topic=topic,
                partition=partition,
                offset=offset,
            )
        sub = inner[pos : pos + LOG_OVERHEAD + size]
        pos += LOG_OVERHEAD + size
        i_off, i_codec, i_ts, i_ts_type, i_key, i_value = _parse_message(
            sub, topic, partition, check_crcs
        )
        if i_codec != CODEC_NONE:
            raise CorruptRecordError(
                "compressed legacy message contains a compressed message",
                topic=topic,
                partition=partition,
                offset=offset,
            )
        if ts_type == TIMESTAMP_TYPE_LOG_APPEND_TIME:
            i_ts, i_ts_type = ts, ts_type
        messages.append((i_off, i_ts, i_ts_type, i_key, i_value))
    if messages and wrapper_magic == MAGIC_V1:
        base = offset - messages[-1][0]
        messages = [(base + m[0], *m[1:]) for m in messages]
    _emit(cols, messages, start_offset, end_offset)
    return offset, len(inner_bytes) + len(messages) * row_bytes


def _parse_message(
    entry: memoryview, topic: str, partition: int, check_crcs: bool = True
) -> tuple[int, int, int, int, bytes | None, bytes | None]:
    """``(offset, codec, timestamp, timestamp type, key, value)`` of one legacy message (its
    CRC-32 checked only if ``check_crcs``)."""
    offset, size, stored_crc, magic, attributes = LEGACY_PREFIX.unpack_from(entry, 0)
    if magic not in (MAGIC_V0, MAGIC_V1):
        raise CorruptRecordError(
            f"legacy message has magic {magic}",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    overhead = LEGACY_RECORD_OVERHEAD_V1 if magic == MAGIC_V1 else LEGACY_RECORD_OVERHEAD_V0
    if size < overhead:
        raise CorruptRecordError(
            f"legacy message size {size} is below the magic-{magic} minimum {overhead}",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    if check_crcs:
        actual_crc = zlib.crc32(entry[MAGIC_OFFSET:])
        if actual_crc != stored_crc:
            raise CorruptRecordError(
                f"legacy message CRC-32 mismatch (stored {stored_crc:#010x}, computed "
                f"{actual_crc:#010x})",
                topic=topic,
                partition=partition,
                offset=offset,
            )
    pos = MAGIC_OFFSET + 2
    if magic == MAGIC_V1:
        (ts,) = INT64.unpack_from(entry, pos)
        pos += 8
        ts_type = (
            TIMESTAMP_TYPE_LOG_APPEND_TIME
            if attributes & LEGACY_TIMESTAMP_TYPE_MASK
            else TIMESTAMP_TYPE_CREATE_TIME
        )
    else:
        ts, ts_type = _NO_TIMESTAMP, TIMESTAMP_TYPE_NONE
    end = len(entry)
    key, pos = _bytes(entry, pos, end, "key", topic, partition, offset)
    value, pos = _bytes(entry, pos, end, "value", topic, partition, offset)
    if pos != end:
        raise CorruptRecordError(
            f"legacy message has {end - pos} bytes after its value",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    return offset, attributes & LEGACY_COMPRESSION_MASK, ts, ts_type, key, value


def _bytes(
    entry: memoryview, pos: int, end: int, what: str, topic: str, partition: int, offset: int
) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecordError(
            f"legacy message ends inside its {what} length",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    (n,) = INT32.unpack_from(entry, pos)
    pos += 4
    if n == -1:
        return None, pos
    if n < 0 or pos + n > end:
        raise CorruptRecordError(
            f"legacy message {what} length {n} does not fit its {end - pos} bytes",
            topic=topic,
            partition=partition,
            offset=offset,
        )
    return bytes(entry[pos : pos + n]), pos + n


def _emit(
    cols: ColumnBuilder, messages: list[_Message], start_offset: int, end_offset: int
) -> None:
    runs = cols.timestamp_type_runs
    for offset, ts, ts_type, key, value in messages:
        if offset < start_offset or offset >= end_offset:
            continue
        if cols.include_headers:
            cols.header_nulls.append(len(cols.offsets))
            cols.header_offsets.append(len(cols.header_keys))
        cols.keys.append(key)
        cols.values.append(value)
        cols.offsets.append(offset)
        cols.timestamps.append(ts)
        if runs and runs[-1][1] == ts_type:
            runs[-1] = (runs[-1][0] + 1, ts_type)
        else:
            runs.append((1, ts_type))
