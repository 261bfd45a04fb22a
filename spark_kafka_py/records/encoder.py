"""Record batch v2 encoder: Arrow rows into the bytes of Kafka record batches (pure Python).

The reference encoder of the sink; sans-I/O, pure functions over bytes and Arrow.
The layout is Kafka's record batch v2 (KIP-98, headers KIP-82), described in
:mod:`spark_kafka_py.records.format`, as written by Kafka's Java producer
(``MemoryRecordsBuilder``, ``DefaultRecordBatch.writeHeader``, ``DefaultRecord.writeTo``,
``RecordAccumulator``).

Pieces, each usable alone:

- :func:`rows_from_arrow`: validate Arrow columns (``key``, ``value``, ``headers``,
  ``timestamp``) into :class:`Rows`; bad types raise :class:`InvalidRecordError` naming the
  column.
- :func:`encode_record` / :func:`encode_records`: the varint-framed records section.
- :func:`compress`: one codec over the records section, framed as the Java producer frames it
  (gzip member, xerial snappy, LZ4 frame, zstd frame), with KIP-390 levels.
- :func:`build_batch`: header fields + records section -> one batch (CRC-32C over
  attributes .. end).
- :func:`encode_batch`: rows -> one batch; :func:`split_batches`: rows -> batches within a
  ``batch.size`` byte budget, as the Java accumulator splits them.
- :func:`record_size_upper_bound`: Java's ``estimateSizeInBytesUpperBound`` of one record, the
  size checked against ``max.request.size`` (``RECORD_TOO_LARGE``).
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast

import cramjam
import crc32c
import lz4.frame
import pyarrow as pa
import pyarrow.compute as pc
import zstandard

from spark_kafka_py.errors import ConfigError, InvalidRecordError
from spark_kafka_py.records.compression import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    XERIAL_MAGIC,
)
from spark_kafka_py.records.format import (
    CONTROL_FLAG_MASK,
    MAGIC_V2,
    MAX_RECORD_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    V2_HEADER,
    V2_PREFIX,
)

__all__ = [
    "DEFAULT_LEVELS",
    "SECTION_IMPLEMENTATION",
    "EncodedBatch",
    "Header",
    "RecordsSectionEncoder",
    "Rows",
    "build_batch",
    "compress",
    "encode_batch",
    "encode_record",
    "encode_records",
    "encode_records_section",
    "record_size",
    "record_size_upper_bound",
    "rows_from_arrow",
    "split_batches",
    "varint",
]

log = logging.getLogger(__name__)

#: One record header (KIP-82): key (UTF-8 string, never null), value (bytes or null).
Header = tuple[str, bytes | None]

#: Default level of each codec when none is given (KIP-390; Java's ``GzipCompression``
#: ``Deflater.DEFAULT_COMPRESSION`` = zlib's 6, ``Lz4Compression.DEFAULT_LEVEL`` 9,
#: ``ZstdCompression.DEFAULT_LEVEL`` 3). Snappy has no levels.
DEFAULT_LEVELS: Final = {CODEC_GZIP: 6, CODEC_LZ4: 9, CODEC_ZSTD: 3}
#: Accepted levels, inclusive (KIP-390: ``compression.gzip.level`` 1..9 or -1 = default,
#: ``compression.lz4.level`` 1..17, ``compression.zstd.level`` -131072..22).
LEVEL_RANGES: Final = {CODEC_GZIP: (-1, 9), CODEC_LZ4: (1, 17), CODEC_ZSTD: (-131072, 22)}
_LEVEL_OPTIONS: Final = {
    CODEC_GZIP: "compression.gzip.level",
    CODEC_LZ4: "compression.lz4.level",
    CODEC_ZSTD: "compression.zstd.level",
}

#: snappy-java ``SnappyOutputStream.DEFAULT_BLOCK_SIZE``: input bytes per snappy block (32 KiB).
XERIAL_BLOCK_SIZE: Final = 32 * 1024
#: snappy-java ``SnappyCodec.DEFAULT_VERSION`` and ``MINIMUM_COMPATIBLE_VERSION``.
_XERIAL_VERSIONS: Final = struct.pack(">ii", 1, 1)
#: ``java.util.zip.GZIPOutputStream``'s 10-byte header: magic, CM 8 (deflate), no flags,
#: MTIME 0, XFL 0, OS 255 "unknown" (Java 16 and later).
_JAVA_GZIP_HEADER: Final = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

_INT32 = struct.Struct(">i")
_LE_UINT32 = struct.Struct("<I")


# ---- rows ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """Validated rows to encode, column-wise; every list has the same length.

    Attributes:
        keys, values: bytes or ``None`` (null key / value).
        headers: per row, a list of ``(key, value)`` headers (empty when none).
        timestamps: per row, the record's CreateTime in ms since the epoch.
    """

    keys: Sequence[bytes | None]
    values: Sequence[bytes | None]
    headers: Sequence[Sequence[Header]]
    timestamps: Sequence[int]

    def __len__(self) -> int:
        return len(self.keys)

    def slice(self, start: int, stop: int) -> Rows:
        """Rows ``start .. stop - 1``."""
        return Rows(
            self.keys[start:stop],
            self.values[start:stop],
            self.headers[start:stop],
            self.timestamps[start:stop],
        )


def _column(
    data: pa.RecordBatch | pa.Table | Mapping[str, pa.Array | pa.ChunkedArray], name: str
) -> pa.Array | pa.ChunkedArray | None:
    if isinstance(data, (pa.RecordBatch, pa.Table)):
        return data.column(name) if name in data.schema.names else None
    return data.get(name)


def _bytes_column(
    array: pa.Array | pa.ChunkedArray | None, name: str, n: int
) -> list[bytes | None]:
    if array is None:
        return [None] * n
    t = array.type
    if pa.types.is_null(t):
        return [None] * len(array)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        array = array.cast(pa.large_binary())
    elif not (
        pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
    ):
        raise InvalidRecordError(
            f"column {name!r} has type {t}; a Kafka record {name} must be binary or string "
            "(null for no " + name + ")",
            column=name,
        )
    values: list[bytes | None] = array.to_pylist()  # pyarrow is untyped (Any)
    return values


def _headers_column(array: pa.Array | pa.ChunkedArray | None, n: int) -> list[list[Header]]:
    if array is None:
        return [[] for _ in range(n)]
    t = array.type
    ok = pa.types.is_list(t) or pa.types.is_large_list(t)
    if ok:
        item = t.value_type
        ok = pa.types.is_struct(item) and {item.field(i).name for i in range(item.num_fields)} == {
            "key",
            "value",
        }
    if ok:
        kt, vt = item.field("key").type, item.field("value").type
        ok = (pa.types.is_string(kt) or pa.types.is_large_string(kt)) and (
            pa.types.is_binary(vt)
            or pa.types.is_large_binary(vt)
            or pa.types.is_string(vt)
            or pa.types.is_large_string(vt)
            or pa.types.is_null(vt)
        )
    if not ok:
        raise InvalidRecordError(
            f"column 'headers' has type {t}; Kafka record headers (KIP-82) must be "
            "list<struct<key: string, value: binary>>",
            column="headers",
        )
    out: list[list[Header]] = []
    for row, hs in enumerate(array.to_pylist()):
        if hs is None:
            out.append([])
            continue
        row_headers: list[Header] = []
        for h in hs:
            if h is None or h["key"] is None:
                raise InvalidRecordError(
                    f"column 'headers', row {row}: a header with a null key (KIP-82 header "
                    "keys are non-null strings)",
                    column="headers",
                )
            v = h["value"]
            row_headers.append((h["key"], v.encode() if isinstance(v, str) else v))
        out.append(row_headers)
    return out


def _timestamps_column(
    array: pa.Array | pa.ChunkedArray | None, n: int, default_timestamp_ms: int | None
) -> list[int]:
    if array is None:
        values: list[int | None] = [None] * n
    else:
        t = array.type
        if pa.types.is_timestamp(t):
            array = pc.cast(array, pa.timestamp("ms", tz=t.tz), safe=False).cast(pa.int64())
        elif pa.types.is_integer(t):
            array = array.cast(pa.int64())
        elif not pa.types.is_null(t):
            raise InvalidRecordError(
                f"column 'timestamp' has type {t}; a record timestamp must be int64 (ms since "
                "the epoch) or a timestamp",
                column="timestamp",
            )
        values = [None] * n if pa.types.is_null(t) else array.to_pylist()
    if default_timestamp_ms is not None:
        return [default_timestamp_ms if v is None else v for v in values]
    if any(v is None for v in values):
        raise InvalidRecordError(
            "column 'timestamp' has nulls (or is missing) and no default timestamp was given",
            column="timestamp",
        )
    return cast("list[int]", values)  # no None left: checked above


def rows_from_arrow(
    data: pa.RecordBatch | pa.Table | Mapping[str, pa.Array | pa.ChunkedArray],
    *,
    default_timestamp_ms: int | None = None,
) -> Rows:
    """Validate Arrow columns into :class:`Rows`.

    Args:
        data: a record batch, table or mapping with the columns (absent ones are all null):
            ``key``, ``value``: binary or string, nullable; ``headers``:
            ``list<struct<key: string, value: binary>>``, nullable (null = no headers);
            ``timestamp``: int64 ms since the epoch, or a timestamp (truncated to ms).
        default_timestamp_ms: the timestamp of rows whose ``timestamp`` is null or missing
            (the Java producer uses the current time, ``ProducerRecord`` with no timestamp).

    Raises:
        InvalidRecordError: a column of a wrong type, columns of different lengths, a header
            with a null key, a null timestamp with no default; ``column`` names the column.
    """
    arrays = {name: _column(data, name) for name in ("key", "value", "headers", "timestamp")}
    lengths = {name: len(a) for name, a in arrays.items() if a is not None}
    if isinstance(data, (pa.RecordBatch, pa.Table)):
        n = data.num_rows
    else:
        n = max(lengths.values(), default=0)
    for name, length in lengths.items():
        if length != n:
            raise InvalidRecordError(
                f"column {name!r} has {length} rows, other columns {n}", column=name
            )
    return Rows(
        keys=_bytes_column(arrays["key"], "key", n),
        values=_bytes_column(arrays["value"], "value", n),
        headers=_headers_column(arrays["headers"], n),
        timestamps=_timestamps_column(arrays["timestamp"], n, default_timestamp_ms),
    )


# ---- records section ----------------------------------------------------------------------


def varint(value: int) -> bytes:
    """Zigzag base-128 encoding of a signed int (Kafka's varint/varlong, ``ByteUtils``)."""
    u = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _varint_size(value: int) -> int:
    u = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while u >= 0x80:
        u >>= 7
        size += 1
    return size


def _headers_bytes(headers: Sequence[Header]) -> bytes:
    out = bytearray(varint(len(headers)))
    for key, value in headers:
        kb = key.encode("utf-8")
        out += varint(len(kb))
        out += kb
        if value is None:
            out += varint(-1)
        else:
            out += varint(len(value))
            out += value
    return bytes(out)


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[Header] = (),
) -> bytes:
    """One record (``DefaultRecord.writeTo``): length varint, attributes 0, timestampDelta
    varlong (ms), offsetDelta varint, key and value (varint length, -1 = null), headers."""
    body = bytearray(b"\x00")
    body += varint(timestamp_delta)
    body += varint(offset_delta)
    for part in (key, value):
        if part is None:
            body += varint(-1)
        else:
            body += varint(len(part))
            body += part
    body += _headers_bytes(headers)
    return varint(len(body)) + bytes(body)


def encode_records(rows: Rows, base_timestamp: int) -> bytes:
    """The records section of a batch of ``rows``: offset deltas 0..n-1, timestamp deltas
    relative to ``base_timestamp`` (ms; Java's ``MemoryRecordsBuilder`` takes the first
    record's timestamp)."""
    return b"".join(
        encode_record(i, ts - base_timestamp, k, v, hs)
        for i, (k, v, hs, ts) in enumerate(
            zip(rows.keys, rows.values, rows.headers, rows.timestamps, strict=True)
        )
    )


def _arrow_bytes(array: pa.Array | None, name: str) -> pa.Array | None:
    """``array`` as binary (strings cast zero-copy; null type kept as ``None``)."""
    if array is None or pa.types.is_null(array.type):
        return None
    t = array.type
    if pa.types.is_string(t):
        return array.cast(pa.binary())
    if pa.types.is_large_string(t):
        return array.cast(pa.large_binary())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return array
    raise InvalidRecordError(
        f"column {name!r} has type {t}; a Kafka record {name} must be binary or string",
        column=name,
    )


#: Rows converted to Python objects at a time by :func:`encode_records_section`.
_SECTION_CHUNK: Final = 512


class RecordsSectionEncoder(Protocol):
    """What :func:`encode_records_section` runs: the pure :func:`_encode_records_section_pure`
    or its accelerated twin ``records._accel.encode_records_section_accel`` (same bytes, same
    errors; ``tests/records/test_accel_encoder.py``)."""

    def __call__(
        self,
        keys: pa.Array | None,
        values: pa.Array | None,
        headers: pa.Array | None,
        start: int,
        *,
        first_offset_delta: int,
        timestamp_delta: int,
        budget: int,
    ) -> tuple[bytes, int]: ...


def encode_records_section(
    keys: pa.Array | None,
    values: pa.Array | None,
    headers: pa.Array | None,
    start: int,
    *,
    first_offset_delta: int,
    timestamp_delta: int,
    budget: int,
) -> tuple[bytes, int]:
    """Encode rows ``start ..`` of Arrow columns as consecutive records, within ``budget`` bytes.

    The building block of the producer's accumulator: it appends the rows of one partition to
    the open batch, whose records so far used ``first_offset_delta`` offset deltas, until the
    batch is full (``batch.size``). Every record gets the same timestamp delta (the rows of one
    call share one CreateTime, the write time).

    Args:
        keys, values: binary or string arrays (``None`` or null type: every row null), of the
            same length (``values`` may be ``None`` only for tests of null values).
        headers: ``list<struct<key: string, value: binary>>`` (KIP-82) or ``None``.
        start: first row to encode (0 <= start < len).
        first_offset_delta: offset delta of the first encoded record (records already in
            the batch).
        timestamp_delta: ms between the batch's base timestamp and these rows' timestamp.
        budget: bytes the encoded records may take. Rows are taken while the next whole
            record fits; when ``first_offset_delta`` is 0 the first row is taken even if larger
            (a batch holds at least one record, as Java's accumulator allocates
            ``max(batch.size, record size)``).

    Returns:
        ``(records_section_bytes, rows_taken)``; ``rows_taken`` may be 0 when the first record
        does not fit into a batch that already has records.

    Raises:
        InvalidRecordError: a column of a wrong type, or a header with a null key.

    Runs the accelerated twin when the Cython extension is built (as
    :func:`~spark_kafka_py.records.decoder.decode_records` does; ``SPARK_KAFKA_PY_PURE=1``
    forces the pure path); :data:`SECTION_IMPLEMENTATION` says which (``"accel"``/``"pure"``).
    """
    return _section_impl(
        keys,
        values,
        headers,
        start,
        first_offset_delta=first_offset_delta,
        timestamp_delta=timestamp_delta,
        budget=budget,
    )


def _encode_records_section_pure(
    keys: pa.Array | None,
    values: pa.Array | None,
    headers: pa.Array | None,
    start: int,
    *,
    first_offset_delta: int,
    timestamp_delta: int,
    budget: int,
) -> tuple[bytes, int]:
    """The pure-Python reference of :func:`encode_records_section` (same contract)."""
    kb = _arrow_bytes(keys, "key")
    vb = _arrow_bytes(values, "value")
    column = values if values is not None else keys
    if column is None:
        raise TypeError("_encode_records_section_pure needs keys or values")
    n = len(column)
    out: list[bytes] = []
    used = 0
    row = start
    offset_delta = first_offset_delta
    while row < n:
        stop = min(n, row + _SECTION_CHUNK)
        ks = [None] * (stop - row) if kb is None else kb.slice(row, stop - row).to_pylist()
        vs = [None] * (stop - row) if vb is None else vb.slice(row, stop - row).to_pylist()
        hs = _headers_column(
            None if headers is None else headers.slice(row, stop - row), stop - row
        )
        for k, v, h in zip(ks, vs, hs, strict=True):
            rec = encode_record(offset_delta, timestamp_delta, k, v, h)
            if used + len(rec) > budget and offset_delta > 0:
                return b"".join(out), row - start
            out.append(rec)
            used += len(rec)
            offset_delta += 1
            row += 1
    return b"".join(out), row - start


def _choose_section_encoder() -> tuple[RecordsSectionEncoder, str]:
    """The records-section encoder and its name; logs the choice (INFO) and, for pure, why."""
    if os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"):
        log.info("record encoder: pure (SPARK_KAFKA_PY_PURE is set)")
        return _encode_records_section_pure, "pure"
    try:
        from spark_kafka_py.records._accel import encode_records_section_accel
    except ImportError as exc:
        log.info("record encoder: pure (the accelerated extension does not import: %s)", exc)
        return _encode_records_section_pure, "pure"
    log.info("record encoder: accel (spark_kafka_py.records._accel)")
    return encode_records_section_accel, "accel"


_section_impl, SECTION_IMPLEMENTATION = _choose_section_encoder()


def record_size(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[Header] = (),
) -> int:
    """Bytes of :func:`encode_record` with these arguments (``DefaultRecord.sizeInBytes``)."""
    body = (
        1
        + _varint_size(timestamp_delta)
        + _varint_size(offset_delta)
        + _rest_size(key, value, headers)
    )
    return _varint_size(body) + body


def _rest_size(key: bytes | None, value: bytes | None, headers: Sequence[Header]) -> int:
    size = 0
    for part in (key, value):
        size += 1 if part is None else _varint_size(len(part)) + len(part)
    size += _varint_size(len(headers))
    for hk, hv in headers:
        n = len(hk.encode("utf-8"))
        size += _varint_size(n) + n
        size += 1 if hv is None else _varint_size(len(hv)) + len(hv)
    return size


def record_size_upper_bound(
    key: bytes | None, value: bytes | None, headers: Sequence[Header] = ()
) -> int:
    """Upper bound of the bytes one record adds to a request, batch overhead included.

    Java's ``AbstractRecords.estimateSizeInBytesUpperBound`` for magic 2
    (``RECORD_BATCH_OVERHEAD`` 61 + ``DefaultRecord.recordSizeUpperBound``: the uncompressed
    record with its largest varint overhead). ``KafkaProducer`` fails a record with
    ``RecordTooLargeException`` when this exceeds ``max.request.size`` (or ``buffer.memory``).
    """
    return RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + _rest_size(key, value, headers)


# ---- compression --------------------------------------------------------------------------


def _level(codec: int, level: int | None) -> int:
    if level is None:
        return DEFAULT_LEVELS[codec]
    low, high = LEVEL_RANGES[codec]
    if not low <= level <= high or isinstance(level, bool) or (codec == CODEC_GZIP and level == 0):
        accepted = "1..9 or -1 (default)" if codec == CODEC_GZIP else f"{low}..{high}"
        raise ConfigError(f"{_LEVEL_OPTIONS[codec]}={level} is out of range: {accepted} (KIP-390)")
    if codec == CODEC_GZIP and level == -1:
        return DEFAULT_LEVELS[CODEC_GZIP]
    return level


def compress(codec: int, data: bytes, level: int | None = None) -> bytes:
    """Compress a records section as Kafka's Java producer frames it.

    - gzip (1): one gzip member with ``GZIPOutputStream``'s header (MTIME 0, OS 255), deflate at
      ``level`` (``compression.gzip.level``, 1..9, -1 or ``None`` = 6).
    - snappy (2): snappy-java's xerial ``SnappyOutputStream`` framing (magic, version 1,
      compatible 1, then per 32 KiB of input a big-endian int32 length + raw snappy block).
    - lz4 (3): an LZ4 frame as ``Lz4BlockOutputStream`` (KIP-57): independent 64 KiB blocks, no
      checksums, no content size; ``compression.lz4.level`` 1..17 (LZ4 HC), ``None`` = Kafka's
      default 9, for which Kafka uses LZ4's fast compressor.
    - zstd (4): one streamed zstd frame (no content size, no checksum, as ``ZstdOutputStream``);
      ``compression.zstd.level`` -131072..22 (``None`` = 3).

    Args:
        codec: compression id, 0..4 (0 returns ``data``).
        data: the uncompressed records section.
        level: codec level (KIP-390), ``None`` for the codec's default.

    Raises:
        ConfigError: unknown codec, a level out of range, or a level given for snappy.
    """
    if codec == CODEC_NONE:
        return bytes(data)
    if codec == CODEC_SNAPPY:
        if level is not None:
            raise ConfigError("snappy has no compression level (KIP-390 covers gzip, lz4, zstd)")
        out = bytearray(XERIAL_MAGIC + _XERIAL_VERSIONS)
        for i in range(0, len(data), XERIAL_BLOCK_SIZE):
            block = bytes(cramjam.snappy.compress_raw(data[i : i + XERIAL_BLOCK_SIZE]))
            out += _INT32.pack(len(block))
            out += block
        return bytes(out)
    if codec not in DEFAULT_LEVELS:
        raise ConfigError(
            f"unknown compression codec id {codec} (known: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)"
        )
    lvl = _level(codec, level)
    if codec == CODEC_GZIP:
        deflate = zlib.compressobj(lvl, zlib.DEFLATED, -zlib.MAX_WBITS)
        body = deflate.compress(data) + deflate.flush()
        trailer = _LE_UINT32.pack(zlib.crc32(data)) + _LE_UINT32.pack(len(data) & 0xFFFFFFFF)
        return _JAVA_GZIP_HEADER + body + trailer
    if codec == CODEC_LZ4:
        return _lz4_frame(data, level)
    # ZstdOutputStream flushes the data blocks, then ends the frame with an empty last block
    cobj = zstandard.ZstdCompressor(level=lvl, write_content_size=False).compressobj()
    blocks = cobj.compress(data) + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    return blocks + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)


def _lz4_frame(data: bytes, level: int | None) -> bytes:
    """Kafka's ``Lz4BlockOutputStream`` frame: FLG 0x60 (version 01, independent blocks, no
    checksums, no content size), BD 0x40 (64 KiB blocks), blocks stored uncompressed when
    compression does not shrink them, end mark. Kafka's default level 9 compresses with LZ4's
    fast compressor (so does an explicit 9); other levels use LZ4 HC at that level."""
    lvl = _level(CODEC_LZ4, level)
    frame: bytes = lz4.frame.compress(  # lz4 is untyped (Any)
        data,
        compression_level=0 if lvl == DEFAULT_LEVELS[CODEC_LZ4] else lvl,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        content_checksum=False,
        block_checksum=False,
        store_size=False,
    )
    return frame


# ---- batch --------------------------------------------------------------------------------


def build_batch(
    records: bytes,
    *,
    count: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    codec: int = CODEC_NONE,
    level: int | None = None,
    base_offset: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """One record batch v2 (``DefaultRecordBatch.writeHeader``) around a records section.

    Attributes: codec bits, timestamp type CreateTime, ``transactional`` (KIP-98), control
    false. The CRC-32C covers attributes .. end (the compressed records).

    Args:
        records: the uncompressed records section (:func:`encode_records`).
        count: number of records in ``records``.
        last_offset_delta: offset delta of the last record (``count - 1`` without gaps).
        base_timestamp, max_timestamp: ms since the epoch (first record's, largest).
        codec, level: compression (:func:`compress`).
        base_offset: 0 for a produced batch (the broker assigns offsets).
        producer_id, producer_epoch, base_sequence: -1 when not idempotent (KIP-98).
        transactional: set the transactional attribute bit.
        partition_leader_epoch: -1 from a producer.

    Returns:
        The batch bytes, ``LOG_OVERHEAD + batchLength`` long.
    """
    payload = compress(codec, records, level)
    # timestamp type bit clear (CreateTime), control bit clear
    attributes = codec & ~(TIMESTAMP_TYPE_MASK | CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK)
    if transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    header = V2_HEADER.pack(
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )
    crc = crc32c.crc32c(payload, crc32c.crc32c(header))
    batch_length = RECORD_BATCH_OVERHEAD - 12 + len(payload)
    prefix = V2_PREFIX.pack(base_offset, batch_length, partition_leader_epoch, MAGIC_V2, crc)
    return prefix + header + payload


def encode_batch(
    rows: Rows,
    *,
    codec: int = CODEC_NONE,
    level: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
) -> bytes:
    """All of ``rows`` (at least one) as one batch, base offset 0, as
    ``MemoryRecordsBuilder`` writes it (base timestamp = first row's)."""
    if len(rows) == 0:
        raise InvalidRecordError("a record batch needs at least one row", column="value")
    base = rows.timestamps[0]
    return build_batch(
        encode_records(rows, base),
        count=len(rows),
        last_offset_delta=len(rows) - 1,
        base_timestamp=base,
        max_timestamp=max(rows.timestamps),
        codec=codec,
        level=level,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        transactional=transactional,
    )


@dataclass(frozen=True)
class EncodedBatch:
    """One batch of :func:`split_batches`.

    Attributes:
        data: the batch bytes.
        start, stop: its rows, ``rows[start:stop]``.
        uncompressed_size: bytes of the batch before compression (header + records), the
            quantity held within ``batch.size`` (bytes).
    """

    data: bytes
    start: int
    stop: int
    uncompressed_size: int

    @property
    def size(self) -> int:
        """Bytes on the wire (what a ProduceRequest carries for this batch)."""
        return len(self.data)


def split_batches(
    rows: Rows,
    batch_size: int,
    *,
    codec: int = CODEC_NONE,
    level: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
) -> Iterator[EncodedBatch]:
    """Split ``rows`` into consecutive batches of at most ``batch_size`` uncompressed bytes.

    As Kafka's ``RecordAccumulator`` / ``MemoryRecordsBuilder.hasRoomFor``: rows are appended
    while the batch (61-byte header + records, uncompressed) stays within ``batch_size``; a row
    that does not fit starts the next batch; a single row larger than ``batch_size`` is a batch
    of its own (the accumulator allocates ``max(batch.size, record size)``). The uncompressed
    size is the bound even for compressed batches (Java estimates the compressed size; ours
    can only be smaller). Sequence numbers continue across batches when ``base_sequence`` >= 0
    (``base_sequence`` + rows before the batch, KIP-98).

    Args:
        rows: the rows, in order.
        batch_size: ``batch.size`` in bytes (> 0).
        codec, level, producer_id, producer_epoch, transactional: as :func:`build_batch`.
        base_sequence: sequence of the first row, -1 when not idempotent.

    Yields:
        :class:`EncodedBatch`, covering every row once, in order.

    Raises:
        ConfigError: ``batch_size`` < 1.
    """
    if batch_size < 1:
        raise ConfigError(f"batch.size={batch_size} must be at least 1 byte")
    n = len(rows)
    start = 0
    while start < n:
        base_ts = rows.timestamps[start]
        size = RECORD_BATCH_OVERHEAD
        stop = start
        parts: list[bytes] = []
        max_ts = base_ts
        while stop < n:
            rec = encode_record(
                stop - start,
                rows.timestamps[stop] - base_ts,
                rows.keys[stop],
                rows.values[stop],
                rows.headers[stop],
            )
            if stop > start and size + len(rec) > batch_size:
                break
            parts.append(rec)
            size += len(rec)
            max_ts = max(max_ts, rows.timestamps[stop])
            stop += 1
        seq = base_sequence if base_sequence < 0 else (base_sequence + start) & 0x7FFFFFFF
        data = build_batch(
            b"".join(parts),
            count=stop - start,
            last_offset_delta=stop - start - 1,
            base_timestamp=base_ts,
            max_timestamp=max_ts,
            codec=codec,
            level=level,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=seq,
            transactional=transactional,
        )
        yield EncodedBatch(data, start, stop, size)
        start = stop
