"""Pure-Python reference implementation of :func:`~spark_kafka_py.records.decode_records`.

The layout of every field is written out in :mod:`spark_kafka_py.records.format`.

It reads like the spec: one :func:`_varint` call per varint field, in the order of the record
layout; speed belongs to its accelerated twin (``_accel.pyx``), which must decode the same
bytes to the same columns and errors. The per-record loop appends straight into the column
lists of :class:`~spark_kafka_py.records.arrow.ColumnBuilder` and is bounds-checked once per
record (its stated length) plus one ``except IndexError`` around the loop: a read past the end
of the buffer becomes a :class:`~spark_kafka_py.errors.CorruptRecordError` ("read, then check
once").
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import crc32c

from spark_kafka_py.errors import CorruptRecordError, KafkaProtocolError
from spark_kafka_py.records import legacy
from spark_kafka_py.records._protocols import DEFAULT_MAX_BATCH_BYTES, DecodedRecords
from spark_kafka_py.records.arrow import ColumnBuilder, fixed_row_bytes
from spark_kafka_py.records.bounds import DecodeBudget, decompress_batch
from spark_kafka_py.records.compression import CODEC_NONE
from spark_kafka_py.records.format import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CONTROL_KEY,
    CONTROL_TYPE_ABORT,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_RECORD_OVERHEAD_V0,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    MIN_BATCH_LENGTH_V2,
    MIN_RECORD_BODY,
    NO_PRODUCER_ID,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_CREATE_TIME,
    TIMESTAMP_TYPE_LOG_APPEND_TIME,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    V2_HEADER,
    V2_PREFIX,
)
from spark_kafka_py.records.transactions import AbortedTransactions

__all__ = ["decode_records_pure"]

_FRAME = struct.Struct(">qi")  # baseOffset, batchLength
_MASK64 = 0xFFFFFFFFFFFFFFFF


def decode_records_pure(
    records: bytes | memoryview,
    *,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int,
    include_headers: bool = False,
    read_committed: bool = False,
    aborted_transactions: Sequence[tuple[int, int]] | AbortedTransactions = (),
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    budget: DecodeBudget | None = None,
    max_arrow_bytes: int | None = None,
    check_crcs: bool = True,
) -> DecodedRecords:
    """Pure-Python :class:`~spark_kafka_py.records._protocols.RecordsDecoder`.

    See :func:`spark_kafka_py.records.decoder.decode_records` for the contract (and
    ``check_crcs``), and :class:`~spark_kafka_py.records.decoder.DecodedStream` for
    ``budget``, ``max_arrow_bytes`` and a state of :class:`AbortedTransactions` passed as
    ``aborted_transactions`` (a response decoded in pieces).
    """
    view = memoryview(records)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    n = len(view)
    pos = 0
    next_offset = start_offset
    incomplete = False
    resume_at = None
    cols = ColumnBuilder(include_headers)
    txns = AbortedTransactions.of(aborted_transactions) if read_committed else None
    row_bytes = fixed_row_bytes(topic, include_headers)
    arrow_bytes = 0

    while pos < n:
        remaining = n - pos
        if remaining < LOG_OVERHEAD:
            incomplete = True
            break
        base_offset, length = _FRAME.unpack_from(view, pos)
        if length < LEGACY_RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"record batch length {length} is below the minimum of "
                f"{LEGACY_RECORD_OVERHEAD_V0} bytes",
                topic=topic,
                partition=partition,
                offset=base_offset,
            )
        if length > max_batch_bytes:
            raise KafkaProtocolError(
                f"record batch at offset {base_offset} in {topic}-{partition} claims "
                f"{length} bytes, above max_batch_bytes={max_batch_bytes}"
            )
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            incomplete = True
            break
        magic = view[pos + MAGIC_OFFSET]
        if magic == MAGIC_V2:
            if length < MIN_BATCH_LENGTH_V2:
                raise CorruptRecordError(
                    f"record batch length {length} is below the v2 header size "
                    f"{MIN_BATCH_LENGTH_V2}",
                    topic=topic,
                    partition=partition,
                    offset=base_offset,
                )
        elif magic not in (MAGIC_V0, MAGIC_V1):
            raise KafkaProtocolError(
                f"unknown record batch magic {magic} at offset {base_offset} in "
                f"{topic}-{partition} (known: 0, 1 legacy message sets; 2 record batches)"
            )
        if remaining < LOG_OVERHEAD + length:
            incomplete = True
            break
        if base_offset >= end_offset and magic == MAGIC_V2:
            # Every record of this and later batches is at or past the end.
            next_offset = end_offset
            break
        entry = view[pos : pos + LOG_OVERHEAD + length]
        pos += LOG_OVERHEAD + length
        if magic == MAGIC_V2:
            last_offset, decoded = _decode_v2_batch(
                entry,
                cols,
                topic,
                partition,
                start_offset,
                end_offset,
                txns,
                max_batch_bytes,
                budget,
                row_bytes,
                check_crcs,
            )
        else:
            last_offset, decoded = legacy.decode_legacy_entry(
                entry,
                cols,
                topic,
                partition,
                start_offset,
                end_offset,
                max_batch_bytes,
                budget,
                row_bytes,
                check_crcs,
            )
        if last_offset + 1 > next_offset:
            next_offset = last_offset + 1
        if next_offset >= end_offset:
            next_offset = end_offset
            break
        arrow_bytes += decoded
        if max_arrow_bytes is not None and decoded and arrow_bytes >= max_arrow_bytes and pos < n:
            resume_at = pos  # the Arrow batch is full: the caller decodes on from here
            break

    return DecodedRecords(cols.finish(topic, partition), next_offset, incomplete, resume_at)


def _decode_v2_batch(
    entry: memoryview,
    cols: ColumnBuilder,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int,
    txns: AbortedTransactions | None,
    max_batch_bytes: int,
    budget: DecodeBudget | None,
    row_bytes: int,
    check_crcs: bool = True,
) -> tuple[int, int]:
    """Check, filter and decode one complete v2 batch (its CRC-32C only if ``check_crcs``).

    Returns:
        ``(last offset, decoded bytes)``: the decoded bytes of a batch whose records were
        decoded are its (decompressed) records size plus ``row_bytes`` per record it claims,
        else 0 (what sizes Arrow batches, see :mod:`spark_kafka_py.records.bounds`).
    """
    base_offset, _length, _epoch, _magic, stored_crc = V2_PREFIX.unpack_from(entry, 0)
    if check_crcs:
        actual_crc = crc32c.crc32c(entry[ATTRIBUTES_OFFSET:])
        if actual_crc != stored_crc:
            raise CorruptRecordError(
                f"record batch CRC-32C mismatch (stored {stored_crc:#010x}, computed "
                f"{actual_crc:#010x})",
                topic=topic,
                partition=partition,
                offset=base_offset,
            )
    (attributes, last_delta, base_ts, max_ts, producer_id, _pepoch, _bseq, count) = (
        V2_HEADER.unpack_from(entry, ATTRIBUTES_OFFSET)
    )
    if last_delta < 0 or count < 0:
        raise CorruptRecordError(
            f"record batch has lastOffsetDelta {last_delta} and record count {count}",
            topic=topic,
            partition=partition,
            offset=base_offset,
        )
    last_offset = base_offset + last_delta
    is_control = bool(attributes & CONTROL_FLAG_MASK)

    if txns is not None and producer_id != NO_PRODUCER_ID:
        txns.consume_up_to(last_offset)
        if is_control:
            if (
                count > 0
                and _control_type(
                    entry, attributes, max_batch_bytes, budget, topic, partition, base_offset
                )
                == CONTROL_TYPE_ABORT
            ):
                txns.end_aborted(producer_id)
        elif attributes & TRANSACTIONAL_FLAG_MASK and txns.is_aborted(producer_id):
            return last_offset, 0
    if is_control or count == 0 or last_offset < start_offset:
        return last_offset, 0

    payload = _payload(entry, attributes, max_batch_bytes, budget, topic, partition, base_offset)
    if attributes & TIMESTAMP_TYPE_MASK:
        ts_type = TIMESTAMP_TYPE_LOG_APPEND_TIME
        log_append_time: int | None = max_ts
    else:
        ts_type = TIMESTAMP_TYPE_CREATE_TIME
        log_append_time = None
    _decode_v2_records(
        payload,
        count,
        base_offset,
        base_ts,
        log_append_time,
        ts_type,
        start_offset,
        end_offset,
        cols,
        topic,
        partition,
    )
    return last_offset, len(payload) + count * row_bytes


def _payload(
    entry: memoryview,
    attributes: int,
    max_batch_bytes: int,
    budget: DecodeBudget | None,
    topic: str,
    partition: int,
    base_offset: int,
) -> bytes:
    """A v2 batch's records section, decompressed within ``max_batch_bytes`` and what is
    left of ``budget``, and charged to ``budget``.

    Raises:
        DecompressionBoundError: past either bound.
        CorruptRecordError: malformed compressed data or an unknown codec.
    """
    codec = attributes & COMPRESSION_CODEC_MASK
    raw = entry[RECORD_BATCH_OVERHEAD:]
    if codec == CODEC_NONE:
        if budget is not None:
            budget.charge(len(raw), topic, partition, base_offset)
        return bytes(raw)
    return decompress_batch(
        codec,
        raw,
        max_batch_bytes=max_batch_bytes,
        budget=budget,
        topic=topic,
        partition=partition,
        offset=base_offset,
    )


def _control_type(
    entry: memoryview,
    attributes: int,
    max_batch_bytes: int,
    budget: DecodeBudget | None,
    topic: str,
    partition: int,
    base_offset: int,
) -> int:
    """The type of a control batch's first record (``ControlRecordType``: 0 ABORT, ...)."""
    buf = _payload(entry, attributes, max_batch_bytes, budget, topic, partition, base_offset)
    try:
        pos = 0
        _length, pos = _varint(buf, pos)
        pos += 1  # attributes
        _ts, pos = _varint(buf, pos)
        _od, pos = _varint(buf, pos)
        key_len, pos = _varint(buf, pos)
        if key_len < CONTROL_KEY.size or pos + key_len > len(buf):
            raise IndexError
        version: int
        control_type: int
        version, control_type = CONTROL_KEY.unpack_from(buf, pos)
    except (IndexError, _VarintTooLong):
        raise CorruptRecordError(
            "control record key is shorter than version int16 + type int16",
            topic=topic,
            partition=partition,
            offset=base_offset,
        ) from None
    if version < 0:
        raise CorruptRecordError(
            f"control record key has negative version {version}",
            topic=topic,
            partition=partition,
            offset=base_offset,
        )
    return control_type


def _uvarint_tail(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """Rest of a multi-byte unsigned varint whose first byte was ``first``.

    At most 10 bytes (a varlong); the value is truncated to 64 bits as Java's
    ``ByteUtils.readVarlong`` overflows. Raises IndexError at the end of ``buf``.
    """
    result = first & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _MASK64, pos
        shift += 7
        if shift >= 70:
            raise _VarintTooLong


class _VarintTooLong(Exception):
    pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint/varlong at ``pos``: ``(value, new_pos)``. IndexError past the end."""
    b = buf[pos]
    pos += 1
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos
    u, pos = _uvarint_tail(buf, pos, b)
    return (u >> 1) ^ -(u & 1), pos


def _nullable_bytes(
    buf: bytes, pos: int, end: int, what: str, topic: str, partition: int, base_offset: int
) -> tuple[bytes | None, int]:
    """A record's key or value at ``pos``: a varint length (-1 for null) and that many bytes,
    which must end by ``end`` (the record's end): ``(bytes or None, new_pos)``.

    Raises:
        CorruptRecordError: a length below -1 or past the record's end.
    """
    size, pos = _varint(buf, pos)
    if size >= 0:
        if size > end - pos:
            raise _past_record(what, size, topic, partition, base_offset)
        return buf[pos : pos + size], pos + size
    if size == -1:
        return None, pos
    raise _bad_record(f"{what} length {size}", topic, partition, base_offset)


def _decode_v2_records(
    buf: bytes,
    count: int,
    base_offset: int,
    base_ts: int,
    log_append_time: int | None,
    ts_type: int,
    start_offset: int,
    end_offset: int,
    cols: ColumnBuilder,
    topic: str,
    partition: int,
) -> None:
    """Append the records of one (decompressed) v2 batch that fall in the offset range."""
    n = len(buf)
    if count > n // (MIN_RECORD_BODY + 1):
        raise CorruptRecordError(
            f"record batch claims {count} records in {n} bytes",
            topic=topic,
            partition=partition,
            offset=base_offset,
        )
    keys = cols.keys.append
    values = cols.values.append
    offsets = cols.offsets.append
    timestamps = cols.timestamps.append
    include_headers = cols.include_headers
    if include_headers:
        h_keys = cols.header_keys.append
        h_values = cols.header_values.append
        h_offsets = cols.header_offsets.append
        h_nulls = cols.header_nulls.append
        header_keys = cols.header_keys
    first_row = len(cols.offsets)
    row = first_row
    pos = 0
    stopped = False
    try:
        for _ in range(count):
            # Record (KIP-98): length varint, attributes int8, timestampDelta varlong,
            # offsetDelta varint, key and value (varint length, -1 for null, then bytes),
            # headers (varint count, then each key and value the same way).
            length, pos = _varint(buf, pos)
            end = pos + length
            if length < MIN_RECORD_BODY or end > n:
                raise _bad_record(f"record length {length}", topic, partition, base_offset)
            pos += 1  # attributes: unused
            ts_delta, pos = _varint(buf, pos)
            offset_delta, pos = _varint(buf, pos)
            offset = base_offset + offset_delta
            if offset < start_offset:
                pos = end
                continue
            if offset >= end_offset:
                stopped = True
                break
            key, pos = _nullable_bytes(buf, pos, end, "key", topic, partition, base_offset)
            value, pos = _nullable_bytes(buf, pos, end, "value", topic, partition, base_offset)
            header_count, pos = _varint(buf, pos)
            if header_count:
                if header_count < 0 or header_count > (end - pos) // 2:
                    raise _bad_record(f"header count {header_count}", topic, partition, base_offset)
                if include_headers:
                    for _ in range(header_count):
                        hk_len, pos = _varint(buf, pos)
                        if hk_len < 0:
                            raise _bad_record(
                                f"header key length {hk_len}", topic, partition, base_offset
                            )
                        if hk_len > end - pos:
                            raise _past_record("header key", hk_len, topic, partition, base_offset)
                        h_keys(buf[pos : pos + hk_len].decode("utf-8", "replace"))
                        pos += hk_len
                        header_value, pos = _nullable_bytes(
                            buf, pos, end, "header value", topic, partition, base_offset
                        )
                        h_values(header_value)
                else:
                    pos = end  # headers are not wanted: skip them
            elif include_headers:
                h_nulls(row)
            if pos != end:
                raise _bad_record(
                    f"record fields span {pos - end + length} bytes, its length says {length}",
                    topic,
                    partition,
                    base_offset,
                )
            keys(key)
            values(value)
            offsets(offset)
            timestamps(base_ts + ts_delta if log_append_time is None else log_append_time)
            if include_headers:
                h_offsets(len(header_keys))
            row += 1
    except IndexError:
        raise _bad_record(
            "record runs past the end of its batch", topic, partition, base_offset
        ) from None
    except _VarintTooLong:
        raise _bad_record("varint longer than 10 bytes", topic, partition, base_offset) from None
    if not stopped and pos != n:
        raise _bad_record(
            f"{n - pos} bytes left after the batch's {count} records",
            topic,
            partition,
            base_offset,
        )
    if row > first_row:
        runs = cols.timestamp_type_runs
        if runs and runs[-1][1] == ts_type:
            runs[-1] = (runs[-1][0] + row - first_row, ts_type)
        else:
            runs.append((row - first_row, ts_type))


def _bad_record(what: str, topic: str, partition: int, base_offset: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"malformed record in batch: {what}",
        topic=topic,
        partition=partition,
        offset=base_offset,
    )


def _past_record(
    field: str, length: int, topic: str, partition: int, base_offset: int
) -> CorruptRecordError:
    """A key, value or header field longer than what is left of its record's stated length."""
    return _bad_record(
        f"{field} length {length} runs past the end of its record", topic, partition, base_offset
    )
