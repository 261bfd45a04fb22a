"""Bounded decompression of record-batch payloads.

Codec ids are the low three bits of a batch's ``attributes`` (Kafka's ``CompressionType``,
``clients/src/main/java/org/apache/kafka/common/record/CompressionType.java``):

====  =======  ==============================================================================
 id   codec    wire framing written by Kafka's Java producer
====  =======  ==============================================================================
 0    none     --
 1    gzip     RFC 1952 gzip member(s) (``java.util.zip.GZIPOutputStream``)
 2    snappy   xerial snappy-java ``SnappyOutputStream`` framing (see below); some non-Java
              clients write one raw snappy block, which we also accept
 3    lz4      LZ4 frame format (``KafkaLZ4BlockOutputStream``, KIP-57). Magic-0 message sets
              written before KIP-57 carry a wrong header checksum (KAFKA-3160), fixed up here
 4    zstd     a zstd frame (KIP-110), possibly without the content-size field
====  =======  ==============================================================================

xerial framing (``org.xerial.snappy.SnappyOutputStream``; the header is
``SnappyCodec.MAGIC_HEADER`` + ``DEFAULT_VERSION`` + ``MINIMUM_COMPATIBLE_VERSION``)::

    magic            8 bytes  b"\\x82SNAPPY\\x00"
    version          int32    (1)
    compatible       int32    (1)
    repeated until the end:
      block length   int32    big endian, length of the compressed block
      block          bytes    one raw snappy block

Every function here bounds its output: ``max_bytes`` is never exceeded, whatever a length
field or a frame header claims, and :class:`~spark_kafka_py.errors.DecompressionBoundError` is
raised instead, before more than the bound is allocated. Library exceptions (``zlib.error``,
``cramjam.DecompressionError``, ``RuntimeError`` from lz4, ``zstandard.ZstdError``) never leak.

Bounded by default: :func:`decompress`, and the public decoders built on it
(:func:`~spark_kafka_py.records.decoder.decode_records`,
:class:`~spark_kafka_py.records.decoder.DecodedStream`,
:func:`~spark_kafka_py.records.legacy.decode_legacy_entry`), take ``"ratio"``
(:data:`RATIO_BOUND`) as their default bound: :data:`DEFAULT_MAX_DECOMPRESSION_RATIO` times the
compressed bytes given, the ratio the Fetch path applies by default (``maxDecompressionRatio``).
"""

from __future__ import annotations

import struct
import threading
import zlib
from typing import Final, Literal

import cramjam
import lz4.frame
import zstandard

from spark_kafka_py.errors import DecompressionBoundError, KafkaProtocolError
from spark_kafka_py.registry import default as _option_default

__all__ = [
    "CODEC_GZIP",
    "CODEC_LZ4",
    "CODEC_NAMES",
    "CODEC_NONE",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "DEFAULT_MAX_DECOMPRESSION_RATIO",
    "RATIO_BOUND",
    "XERIAL_MAGIC",
    "RatioBound",
    "check_ratio_bound",
    "decompress",
    "ratio_bound",
]

CODEC_NONE: Final = 0
CODEC_GZIP: Final = 1
CODEC_SNAPPY: Final = 2
CODEC_LZ4: Final = 3
CODEC_ZSTD: Final = 4  # KIP-110; only with magic 2
CODEC_NAMES: Final = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

#: snappy-java's ``SnappyCodec.MAGIC_HEADER`` (8 bytes) that starts the xerial framing.
XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"
#: magic (8) + version int32 + minimum compatible version int32.
_XERIAL_HEADER_SIZE: Final = 16

#: ``zlib`` wbits accepting a gzip header only (16 + max window).
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS

_LZ4_FRAME_MAGIC: Final = b"\x04\x22\x4d\x18"

_INT32 = struct.Struct(">i")

#: The default of the ``maxDecompressionRatio`` option (100), which bounds the Fetch path: what
#: the public decoding functions may decompress, by default, per compressed byte given (one
#: source, :mod:`spark_kafka_py.registry`; not a second policy).
DEFAULT_MAX_DECOMPRESSION_RATIO: Final[int] = _option_default("maxDecompressionRatio")

#: Type of the default bound of the public decoding functions, :data:`RATIO_BOUND`.
RatioBound = Literal["ratio"]
#: The default bound of the public decoding functions: :data:`DEFAULT_MAX_DECOMPRESSION_RATIO`
#: x the compressed bytes given (:func:`ratio_bound`).
RATIO_BOUND: Final[RatioBound] = "ratio"

#: Smallest first output chunk asked of lz4/zstd (bytes).
_MIN_CHUNK: Final = 64 * 1024


def ratio_bound(size: int) -> int:
    """The default bound, in bytes, on what ``size`` compressed bytes may decompress to:
    :data:`DEFAULT_MAX_DECOMPRESSION_RATIO` x ``size``."""
    return DEFAULT_MAX_DECOMPRESSION_RATIO * size


def check_ratio_bound(bound: str) -> None:
    """Raise ``ValueError`` unless ``bound`` (a bound given as a string) is :data:`RATIO_BOUND`."""
    if bound != RATIO_BOUND:
        raise ValueError(f"a decompression bound is a number of bytes or 'ratio', not {bound!r}")


def decompress(
    codec: int,
    data: bytes | memoryview,
    max_bytes: int | RatioBound = RATIO_BOUND,
    *,
    legacy_lz4: bool = False,
) -> bytes:
    """Decompress one batch payload, never producing more than ``max_bytes`` bytes.

    Args:
        codec: compression id (attributes bits 0-2), 1..4; 0 returns the data as bytes.
        data: the compressed payload (the records section of one batch).
        max_bytes: upper bound of the decompressed size in bytes. Default ``"ratio"``:
            :data:`DEFAULT_MAX_DECOMPRESSION_RATIO` (100, ``maxDecompressionRatio``'s default)
            x ``len(data)`` bytes; pass a larger bound for data that compresses better.
        legacy_lz4: the payload is the value of a magic-0 wrapper message, whose LZ4 frame
            header checksum was computed over the wrong bytes (KAFKA-3160).

    Returns:
        The decompressed bytes (``len <= max_bytes``).

    Raises:
        DecompressionBoundError: output larger than ``max_bytes`` (``bound`` is the bound in
            bytes; no topic or offset: the caller adds them).
        KafkaProtocolError: unknown codec or malformed compressed data.
    """
    if isinstance(max_bytes, str):
        check_ratio_bound(max_bytes)
        size = memoryview(data).nbytes
        limit = ratio_bound(size)
        try:
            return decompress(codec, data, limit, legacy_lz4=legacy_lz4)
        except DecompressionBoundError:
            name = CODEC_NAMES.get(codec, str(codec))
            raise DecompressionBoundError(
                f"{name}-compressed data decompresses to more than {limit} bytes, the default "
                f"bound of max_bytes ({DEFAULT_MAX_DECOMPRESSION_RATIO} x the {size} bytes "
                f"given; {DEFAULT_MAX_DECOMPRESSION_RATIO} is maxDecompressionRatio's default); "
                "pass a larger max_bytes if the data really compresses this well",
                bound=limit,
            ) from None
    if codec == CODEC_NONE:
        if len(data) > max_bytes:
            _too_big("none", max_bytes)
        return bytes(data)
    try:
        if codec == CODEC_GZIP:
            return _gunzip(data, max_bytes)
        if codec == CODEC_SNAPPY:
            return _unsnappy(data, max_bytes)
        if codec == CODEC_LZ4:
            if legacy_lz4:
                data = _fix_legacy_lz4_header(bytes(data))
            return _unlz4(data, max_bytes)
        if codec == CODEC_ZSTD:
            return _unzstd(data, max_bytes)
    except KafkaProtocolError:
        raise
    except (
        zlib.error,
        cramjam.DecompressionError,
        zstandard.ZstdError,
        RuntimeError,
        ValueError,
        EOFError,
        OSError,
    ) as exc:
        name = CODEC_NAMES.get(codec, str(codec))
        raise KafkaProtocolError(f"malformed {name}-compressed records: {exc}") from exc
    raise KafkaProtocolError(
        f"unknown compression codec id {codec} in record batch attributes (bits 0-2; "
        "known: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)"
    )


def _too_big(name: str, max_bytes: int) -> None:
    raise DecompressionBoundError(
        f"{name}-compressed records decompress to more than {max_bytes} bytes "
        "(max_batch_bytes); raise the bound if the producer really wrote such batches",
        bound=max_bytes,
    )


def _gunzip(data: bytes | memoryview, max_bytes: int) -> bytes:
    out = bytearray()
    rest: bytes | memoryview = data
    while True:
        d = zlib.decompressobj(_GZIP_WBITS)
        chunk = d.decompress(rest, max_bytes + 1 - len(out))
        out += chunk
        if len(out) > max_bytes:
            _too_big("gzip", max_bytes)
        if not d.eof:
            if d.unconsumed_tail:  # stopped by max_length with input left
                _too_big("gzip", max_bytes)
            raise KafkaProtocolError("gzip-compressed records end inside the gzip stream")
        rest = d.unused_data
        # GZIPInputStream reads concatenated members; anything else after a member is junk.
        if not rest:
            return bytes(out)


def _unsnappy(data: bytes | memoryview, max_bytes: int) -> bytes:
    view = memoryview(data)
    if bytes(view[:8]) != XERIAL_MAGIC:
        return _snappy_block(view, max_bytes)
    if len(view) < _XERIAL_HEADER_SIZE:
        raise KafkaProtocolError("xerial snappy stream shorter than its 16-byte header")
    out = bytearray()
    pos = _XERIAL_HEADER_SIZE
    end = len(view)
    while pos < end:
        if pos + 4 > end:
            raise KafkaProtocolError("xerial snappy stream ends inside a block length")
        (n,) = _INT32.unpack_from(view, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise KafkaProtocolError(
                f"xerial snappy block length {n} exceeds the {end - pos} bytes left"
            )
        out += _snappy_block(view[pos : pos + n], max_bytes - len(out))
        pos += n
    return bytes(out)


def _snappy_block(block: memoryview, max_bytes: int) -> bytes:
    # A raw snappy block starts with its uncompressed length (a varint): check it
    # before letting the library allocate that much.
    size = cramjam.snappy.decompress_raw_len(block)
    if size > max_bytes:
        _too_big("snappy", max_bytes)
    return bytes(cramjam.snappy.decompress_raw(block))


def _first_chunk(data: bytes | memoryview, max_bytes: int) -> int:
    """Output size asked of a streaming decompressor at first: enough for the usual ratio,
    never the whole bound (libraries allocate what they are asked for up front)."""
    return min(max_bytes + 1, max(4 * len(data), _MIN_CHUNK))


def _unlz4(data: bytes | memoryview, max_bytes: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    rest: bytes | memoryview = data
    while True:
        d = lz4.frame.LZ4FrameDecompressor()
        chunk = d.decompress(rest, max_length=_first_chunk(rest, max_bytes - total))
        while True:
            total += len(chunk)
            parts.append(chunk)
            if total > max_bytes:
                _too_big("lz4", max_bytes)
            if d.eof or d.needs_input:
                break
            # stopped at max_length with output left: ask for more, doubling
            more = min(max_bytes + 1 - total, max(2 * total, _MIN_CHUNK))
            chunk = d.decompress(b"", max_length=more)
        if not d.eof:
            raise KafkaProtocolError("lz4-compressed records end inside the lz4 frame")
        rest = d.unused_data
        if not rest:
            return parts[0] if len(parts) == 1 else b"".join(parts)


def _unzstd(data: bytes | memoryview, max_bytes: int) -> bytes:
    # Streaming: Kafka's ZstdOutputStream frames may lack the content size, and a frame
    # header's content size is a claim we must not allocate blindly anyway. The decompression
    # context is reused per thread (creating one costs more than a 16 KiB batch).
    dctx = _zstd_dctx()
    parts: list[bytes] = []
    total = 0
    size = _first_chunk(data, max_bytes)
    with dctx.stream_reader(data, read_across_frames=True) as reader:
        while True:
            out = reader.read(min(size, max_bytes + 1 - total))
            if not out:
                break
            parts.append(out)
            total += len(out)
            if total > max_bytes:
                _too_big("zstd", max_bytes)
            size = 2 * total
    return parts[0] if len(parts) == 1 else b"".join(parts)


_zstd_local = threading.local()


def _zstd_dctx() -> zstandard.ZstdDecompressor:
    dctx = getattr(_zstd_local, "dctx", None)
    if dctx is None:
        dctx = _zstd_local.dctx = zstandard.ZstdDecompressor()
    return dctx


# --- KAFKA-3160: magic-0 LZ4 frames with a wrong header checksum --------------------------
# Before KIP-57 (Kafka 0.10), KafkaLZ4BlockOutputStream computed the frame descriptor's
# header checksum (HC) over the magic number too. The LZ4 frame spec defines HC as
# (xxh32(descriptor without magic, seed 0) >> 8) & 0xFF. We recompute it so lz4.frame
# accepts the frame, as Kafka's KafkaLZ4BlockInputStream ignores HC for magic 0.

_P1: Final = 2654435761
_P2: Final = 2246822519
_P3: Final = 3266489917
_P4: Final = 668265263
_P5: Final = 374761393
_M32: Final = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _xxh32_short(data: bytes) -> int:
    """xxHash32 with seed 0 of fewer than 16 bytes (an LZ4 frame descriptor: 2..10 bytes)."""
    h = (_P5 + len(data)) & _M32
    i = 0
    while i + 4 <= len(data):
        (k,) = struct.unpack_from("<I", data, i)
        h = (_rotl((h + k * _P3) & _M32, 17) * _P4) & _M32
        i += 4
    while i < len(data):
        h = (_rotl((h + data[i] * _P5) & _M32, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def _fix_legacy_lz4_header(data: bytes) -> bytes:
    if len(data) < 7 or data[:4] != _LZ4_FRAME_MAGIC:
        return data
    flg = data[4]
    desc_len = 2 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(data) < 4 + desc_len + 1:
        return data
    desc = data[4 : 4 + desc_len]
    hc = (_xxh32_short(desc) >> 8) & 0xFF
    return data[: 4 + desc_len] + bytes([hc]) + data[4 + desc_len + 1 :]
