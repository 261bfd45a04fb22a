"""Test-only encoder of record batches v2 and legacy messages v0/v1.

Written from Kafka's record format documentation (see spark_kafka_py/records/format.py for
the layout), independently of the decoder, to build inputs for the structure tests.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass, field

import cramjam
import crc32c
import lz4.frame
import zstandard

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
XERIAL_MAGIC = b"\x82SNAPPY\x00"


def zigzag_varint(value: int) -> bytes:
    u = (value << 1) ^ (value >> 63)
    u &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        if u:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _nullable(data: bytes | None) -> bytes:
    if data is None:
        return zigzag_varint(-1)
    return zigzag_varint(len(data)) + data


@dataclass
class Rec:
    """One record: offset_delta and timestamp_delta relative to the batch."""

    key: bytes | None
    value: bytes | None
    offset_delta: int
    timestamp_delta: int = 0
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


def encode_record(r: Rec) -> bytes:
    body = bytearray(b"\x00")
    body += zigzag_varint(r.timestamp_delta)
    body += zigzag_varint(r.offset_delta)
    body += _nullable(r.key)
    body += _nullable(r.value)
    body += zigzag_varint(len(r.headers))
    for hk, hv in r.headers:
        body += _nullable(hk.encode())
        body += _nullable(hv)
    return zigzag_varint(len(body)) + bytes(body)


def compress(codec: int, data: bytes, *, xerial: bool = True) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return gzip.compress(data)
    if codec == SNAPPY:
        if not xerial:
            return bytes(cramjam.snappy.compress_raw(data))
        out = bytearray(XERIAL_MAGIC + struct.pack(">ii", 1, 1))
        # several blocks, as SnappyOutputStream writes per 32 KiB block; tiny blocks for
        # small inputs so that the structure tests cross block boundaries
        step = 32 * 1024 if len(data) > 4096 else 7
        for i in range(0, len(data), step) if data else [0]:
            block = bytes(cramjam.snappy.compress_raw(data[i : i + step]))
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == LZ4:
        return lz4.frame.compress(data)
    if codec == ZSTD:
        # streaming writer: no content size in the frame header, as ZstdOutputStream
        cctx = zstandard.ZstdCompressor(write_content_size=False)
        return cctx.compress(data)
    raise ValueError(codec)


def batch_v2(
    records: list[Rec],
    *,
    base_offset: int = 0,
    codec: int = NONE,
    log_append_time: bool = False,
    transactional: bool = False,
    control: bool = False,
    delete_horizon: bool = False,
    base_timestamp: int = 1_700_000_000_000,
    max_timestamp: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    last_offset_delta: int | None = None,
    count: int | None = None,
    leader_epoch: int = 0,
    xerial: bool = True,
    corrupt_crc: bool = False,
) -> bytes:
    payload = compress(codec, b"".join(encode_record(r) for r in records), xerial=xerial)
    attributes = codec
    if log_append_time:
        attributes |= 0x08
    if transactional:
        attributes |= 0x10
    if control:
        attributes |= 0x20
    if delete_horizon:
        attributes |= 0x40
    if last_offset_delta is None:
        last_offset_delta = max((r.offset_delta for r in records), default=0)
    if max_timestamp is None:
        max_timestamp = base_timestamp + max((r.timestamp_delta for r in records), default=0)
    after_crc = (
        struct.pack(
            ">hiqqqhii",
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(records) if count is None else count,
        )
        + payload
    )
    crc = crc32c.crc32c(after_crc)
    if corrupt_crc:
        crc ^= 0x1
    length = 4 + 1 + 4 + len(after_crc)
    return struct.pack(">qiibI", base_offset, length, leader_epoch, 2, crc) + after_crc


def control_batch(
    base_offset: int, producer_id: int, *, commit: bool, producer_epoch: int = 0
) -> bytes:
    """An end-transaction marker batch (KIP-98): key version 0 + type (0 abort, 1 commit)."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 7)  # version, coordinator epoch
    return batch_v2(
        [Rec(key, value, 0)],
        base_offset=base_offset,
        control=True,
        transactional=True,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
    )


def legacy_message(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int = 1,
    timestamp: int = 1_600_000_000_000,
    codec: int = NONE,
    log_append_time: bool = False,
) -> bytes:
    attributes = codec | (0x08 if log_append_time and magic == 1 else 0)
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    crc = zlib.crc32(body)
    msg = struct.pack(">I", crc) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def legacy_wrapper(
    wrapper_offset: int,
    inner: list[tuple[bytes | None, bytes | None]],
    *,
    magic: int = 1,
    codec: int = GZIP,
    timestamp: int = 1_600_000_000_000,
    log_append_time: bool = False,
    first_absolute: int | None = None,
) -> bytes:
    """A compressed wrapper; v1 inner offsets relative 0..n-1, v0 absolute."""
    parts = []
    for i, (k, v) in enumerate(inner):
        if magic == 1:
            off = i
        else:
            start = wrapper_offset - len(inner) + 1 if first_absolute is None else first_absolute
            off = start + i
        parts.append(legacy_message(off, k, v, magic=magic, timestamp=timestamp + i))
    data = b"".join(parts)
    payload = compress(codec, data)
    return legacy_message(
        wrapper_offset,
        None,
        payload,
        magic=magic,
        timestamp=timestamp + 1000,
        codec=codec,
        log_append_time=log_append_time,
    )
