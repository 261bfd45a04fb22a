"""The fuzz targets of :mod:`benchmarks.fuzz`: every decoder that sees bytes from the network.

Each target is a function ``target(data: bytes) -> None`` that feeds ``data`` to one decoder
and lets its errors out. The fuzzing process (:mod:`benchmarks.fuzz_child`) counts a
:class:`~spark_kafka_py.errors.KafkaError` as the expected answer to bad bytes; any other
exception, an input taking more than 1 s, or one allocating more than 8 MiB beyond its own
size is a finding. The first bytes of an input choose what the rest is fed to (the message
type and version, a codec, flags); the layout of each target's input is in its docstring, and
:func:`seed_inputs` turns captured broker traffic into inputs of that layout.

Targets:

``framing``
    :class:`~spark_kafka_py.protocol.framing.KafkaProtocol`: a request of any type and
    version in flight, then the bytes of a response stream fed in pieces.
``responses``
    :func:`~spark_kafka_py.protocol.schema.decode` of every response schema at every
    version we support.
``records``
    :class:`~spark_kafka_py.records.decoder.DecodedStream` as the Fetch loop uses it (bounded
    decompressed bytes per response, Arrow batches closed past 1 KiB or 64 KiB), with the pure
    reference and the accelerated kernel on the same input (outcomes must be equal), over raw record
    sections (CRCs fixed up on request, so that mutations reach the parsers behind them),
    record bodies wrapped into a valid v2 batch with any codec, and message sets wrapped into a
    legacy v0/v1 wrapper message with any codec.
``sasl``
    SCRAM-SHA-256/512 server-first and server-final messages, OAUTHBEARER server challenges,
    and the whole SaslHandshake + SaslAuthenticate exchange of
    :func:`~spark_kafka_py.client.sasl.authenticate` over decoded responses.
``oauth``
    The OAuth client-credentials token endpoint's HTTP response (status line, headers, body)
    read by the client through ``urllib``/``http.client`` over an in-memory socket.

Only this module imports the code under test, so that the fuzzing process can import it
under ``atheris.instrument_imports`` (coverage feedback for every decoder).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.client
import io
import ssl
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from unittest import mock

import cramjam
import crc32c
import lz4.frame
import zstandard

from spark_kafka_py.client import sasl
from spark_kafka_py.client.security import SaslConfig, Secret
from spark_kafka_py.errors import KafkaError
from spark_kafka_py.protocol.framing import KafkaProtocol, response_header_version
from spark_kafka_py.protocol.messages import REQUEST_TYPES
from spark_kafka_py.protocol.messages.fetch import FetchResponse
from spark_kafka_py.protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from spark_kafka_py.protocol.messages.sasl_handshake import SaslHandshakeResponse
from spark_kafka_py.protocol.primitives import Reader
from spark_kafka_py.protocol.schema import decode
from spark_kafka_py.records._protocols import RecordsDecoder
from spark_kafka_py.records._pure import decode_records_pure
from spark_kafka_py.records.decoder import DecodedStream

decode_records_accel: RecordsDecoder | None
try:
    from spark_kafka_py.records._accel import decode_records_accel
except ImportError:  # not built: the fuzzing process reports it (and fails under CI)
    decode_records_accel = None

__all__ = [
    "ACCEL",
    "MAX_BATCH_BYTES",
    "MAX_DECODED_BYTES",
    "MAX_FRAME_BYTES",
    "TARGETS",
    "seed_inputs",
    "synthetic_seeds",
]

#: Bounds configured in the targets (bytes): a response frame, a record batch (stated length
#: and decompressed size), the decompressed records of one partition's response. Small, so
#: that the 8 MiB per-input limit is meaningful.
MAX_FRAME_BYTES = 1 << 20
MAX_BATCH_BYTES = 1 << 20
MAX_DECODED_BYTES = 4 << 20
#: Whether the accelerated records decoder is there (the ``records`` target runs both).
ACCEL = decode_records_accel is not None

_REQUESTS = [REQUEST_TYPES[k] for k in sorted(REQUEST_TYPES)]
_INT32_MAX = 0x7FFFFFFF


def _request_type(selector: int) -> Any:
    """The request type of API key ``selector``, else the one at that index (mod the count):
    inputs name the API by its key, so that adding an API does not change what they mean."""
    return REQUEST_TYPES.get(selector) or _REQUESTS[selector % len(_REQUESTS)]


def _pick_version(cls: Any, selector: int) -> int:
    return int(cls.MIN_VERSION + selector % (cls.MAX_VERSION - cls.MIN_VERSION + 1))


# ---------------------------------------------------------------------------------- framing


def framing(data: bytes) -> None:
    """``data[0]``: the request's API key (not one we speak: the type at that index in API-key
    order), ``data[1]``: its version (from its lowest we support), ``data[2]``: piece size
    (``< 16``: 1-16 bytes, else a power of two), ``data[3]``: bit 0 -- the first correlation id
    is the one in the stream (else 0), bits 1-2 -- 1 to 3 requests in flight; ``data[4:]``: the
    bytes received (frames with their size prefix)."""
    if len(data) < 4:
        return
    request_type = _request_type(data[0])
    version = _pick_version(request_type, data[1])
    piece = data[2] + 1 if data[2] < 16 else 1 << (data[2] % 21)
    stream = data[4:]
    first = 0
    if data[3] & 1 and len(stream) >= 8:
        first = int.from_bytes(stream[4:8], "big") & _INT32_MAX
    proto = KafkaProtocol("fuzz", max_frame_bytes=MAX_FRAME_BYTES, first_correlation_id=first)
    for _ in range(1 + (data[3] >> 1) % 3):
        proto.send_request(request_type(), version)
    for i in range(0, len(stream), piece):
        proto.receive_bytes(stream[i : i + piece])


def framing_input(api_key: int, version: int, frame: bytes) -> bytes:
    """A ``framing`` input answering ``api_key`` at ``version`` with ``frame``."""
    cls = REQUEST_TYPES[api_key]
    return bytes([api_key, version - cls.MIN_VERSION, 255, 1]) + frame


# -------------------------------------------------------------------------------- responses


def responses(data: bytes) -> None:
    """``data[0]``: the API key (as in :func:`framing`), ``data[1]``: the version (from the
    lowest we support), ``data[2:]``: the response body (after the response header)."""
    if len(data) < 2:
        return
    cls = _request_type(data[0]).response_type
    decode(cls, data[2:], _pick_version(cls, data[1]))


def responses_input(api_key: int, version: int, body: bytes) -> bytes:
    """A ``responses`` input decoding ``body`` as the response to ``api_key`` v``version``."""
    return bytes([api_key, version - REQUEST_TYPES[api_key].MIN_VERSION]) + body


# ---------------------------------------------------------------------------------- records

#: ``records`` modes (``data[0]`` bits 0-1).
RAW, RAW_FIXED_CRC, WRAP_V2, WRAP_LEGACY = 0, 1, 2, 3
_STARTS = (0, 3, 10, 1 << 40)
_ENDS = (1 << 62, 5, 20, 1)
#: Producer ids whose transactions are aborted from offset 0 when reading committed.
_ABORTED = ((0, 0), (1, 0), (7, 0))


def _fix_crcs(data: bytearray, start: int = 0) -> None:
    """Recompute the CRC of every complete entry: CRC-32C of a v2 batch, CRC-32 of a legacy
    message (and of the inner messages of a legacy wrapper's uncompressed value)."""
    pos = start
    n = len(data)
    while pos + 17 <= n:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 5 or end > n:
            return
        magic = data[pos + 16]
        if magic == 2 and length >= 9:
            struct.pack_into(">I", data, pos + 17, crc32c.crc32c(bytes(data[pos + 21 : end])))
        elif magic in (0, 1):
            struct.pack_into(">I", data, pos + 12, zlib.crc32(bytes(data[pos + 16 : end])))
        pos = end


def compress(codec: int, data: bytes, *, xerial: bool = False) -> bytes:
    """``data`` compressed with Kafka codec id ``codec`` (ids above 4 leave it as is)."""
    if codec == 1:
        return gzip.compress(data, compresslevel=1, mtime=0)
    if codec == 2:
        block = bytes(cramjam.snappy.compress_raw(data))
        if not xerial:
            return block
        magic = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
        return magic + struct.pack(">i", len(block)) + block
    if codec == 3:
        return bytes(lz4.frame.compress(data))
    if codec == 4:
        return zstandard.ZstdCompressor(level=1).compress(data)
    return data


def v2_batch(
    body: bytes,
    *,
    attributes: int,
    count: int,
    last_delta: int,
    producer_id: int = -1,
    base_offset: int = 0,
    base_timestamp: int = 1_700_000_000_000,
    xerial: bool = False,
) -> bytes:
    """A record batch v2 (``DefaultRecordBatch``) whose records section is ``body``
    compressed with the codec of ``attributes`` (bits 0-2), with a correct CRC-32C."""
    payload = compress(attributes & 7, body, xerial=xerial)
    rest = struct.pack(
        ">hiqqqhii",
        attributes,
        last_delta,
        base_timestamp,
        base_timestamp,
        producer_id,
        0,
        0,
        count,
    )
    rest += payload
    return struct.pack(">qiibI", base_offset, 9 + len(rest), 0, 2, crc32c.crc32c(rest)) + rest


def legacy_message(
    magic: int, attributes: int, offset: int, key: bytes | None, value: bytes | None
) -> bytes:
    """One legacy message (v0/v1) with a correct CRC-32; timestamp 1 (v1)."""
    body = bytes([magic, attributes]) + (struct.pack(">q", 1) if magic == 1 else b"")
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def _stream(decoder: Any, records: bytes, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    stream = DecodedStream(records, decoder=decoder, **kwargs)
    batches = list(stream)
    return batches, stream.next_offset, stream.incomplete_tail


def _decode_both(records: bytes, flags: int, max_arrow_bytes: int) -> None:
    """Decode ``records`` as the Fetch loop does (:class:`DecodedStream`, bounded per response
    and per Arrow batch), with the pure and the accelerated decoder; outcomes must be equal."""
    read_committed = bool(flags & 4)
    kwargs: dict[str, Any] = {
        "topic": "t",
        "partition": 0,
        "start_offset": _STARTS[(flags >> 4) & 3],
        "end_offset": _ENDS[(flags >> 6) & 3],
        "include_headers": bool(flags & 8),
        "read_committed": read_committed,
        "aborted_transactions": _ABORTED if read_committed else (),
        "max_batch_bytes": MAX_BATCH_BYTES,
        "max_decoded_bytes": MAX_DECODED_BYTES,
        "max_arrow_bytes": max_arrow_bytes,
    }
    pure_error: KafkaError | None = None
    try:
        pure = _stream(decode_records_pure, records, kwargs)
    except KafkaError as exc:
        pure_error = exc
    if decode_records_accel is None:
        if pure_error is not None:
            raise pure_error
        return
    try:
        accel = _stream(decode_records_accel, records, kwargs)
    except KafkaError as exc:
        if pure_error is None or (type(exc), str(exc)) != (type(pure_error), str(pure_error)):
            raise DecodersDiffer(f"pure: {pure_error!r}, accel: {exc!r}") from exc
        raise
    if pure_error is not None:
        raise DecodersDiffer(f"pure: {pure_error!r}, accel: returned") from pure_error
    same_batches = len(pure[0]) == len(accel[0]) and all(
        a.equals(b) for a, b in zip(pure[0], accel[0], strict=True)
    )
    if pure[1:] != accel[1:] or not same_batches:
        raise DecodersDiffer(
            f"pure and accel return different results: next_offset {pure[1]} / {accel[1]}, "
            f"incomplete_tail {pure[2]} / {accel[2]}, batches {len(pure[0])} / "
            f"{len(accel[0])}, same rows: {same_batches}"
        )


class DecodersDiffer(AssertionError):
    """The pure and the accelerated records decoder disagree on one input (a finding)."""


def records(data: bytes) -> None:
    """``data[0]``: bits 0-1 mode (0 raw, 1 raw with CRCs fixed up, 2 v2 batch around a
    records body, 3 legacy wrapper around a message set), bit 2 read_committed (producers 0, 1
    and 7 aborted from offset 0), bit 3 include_headers, bits 4-5 start offset (0, 3, 10,
    2**40), bits 6-7 end offset (2**62, 5, 20, 1).

    Raw modes: ``data[1:]`` is a partition's records section (v2 batches and legacy messages).
    An odd-sized input closes Arrow batches past 1 KiB of decoded data, an even-sized one past
    64 KiB. Mode 2: ``data[1]`` attributes (codec = bits 0-2 folded into 0-4; timestamp type,
    transactional and control bits as is; bit 6: snappy with xerial framing), ``data[2]``
    record count, ``data[3]`` lastOffsetDelta, ``data[4]`` producer id (255: -1),
    ``data[5:]`` the uncompressed records. Mode 3: ``data[1]`` bit 0 magic (0/1), bits 1-3
    codec (folded into 0-4), bit 4 LogAppendTime, ``data[2]`` wrapper offset, ``data[3:]`` the
    inner message set (its CRCs fixed up).
    """
    if not data:
        return
    flags = data[0]
    mode = flags & 3
    if mode == RAW:
        body = data[1:]
    elif mode == RAW_FIXED_CRC:
        fixed = bytearray(data[1:])
        _fix_crcs(fixed)
        body = bytes(fixed)
    elif mode == WRAP_V2:
        if len(data) < 5:
            return
        attrs = data[1]
        codec = attrs & 7
        codec = codec - 5 if codec >= 5 else codec
        body = v2_batch(
            data[5:],
            attributes=(attrs & 0x38) | codec,
            count=data[2],
            last_delta=data[3],
            producer_id=-1 if data[4] == 255 else data[4],
            xerial=bool(attrs & 0x40),
        )
    else:
        if len(data) < 3:
            return
        magic = data[1] & 1
        codec = (data[1] >> 1) & 7
        codec = codec - 5 if codec >= 5 else codec
        inner = bytearray(data[3:])
        _fix_crcs(inner)
        attributes = codec | (data[1] & 0x10 if magic else 0)
        value = compress(codec, bytes(inner)) if codec else bytes(inner)
        body = legacy_message(magic, attributes, data[2], None, value)
    _decode_both(body, flags, 1024 if len(data) % 2 else 1 << 16)


def _records_batches(section: bytes) -> Iterator[tuple[int, bytes]]:
    """``(magic, entry)`` of every complete entry of a records section."""
    pos = 0
    while pos + 17 <= len(section):
        (length,) = struct.unpack_from(">i", section, pos + 8)
        end = pos + 12 + length
        if length < 5 or end > len(section):
            return
        yield section[pos + 16], section[pos:end]
        pos = end


def records_inputs(section: bytes) -> list[bytes]:
    """``records`` inputs from one fetched records section: the section as is (raw, with and
    without CRC fix-up), and the records body of every v2 batch re-wrapped with every codec
    (and as the inner message set of a legacy wrapper, v0 and v1, every codec)."""
    from spark_kafka_py.records.compression import decompress

    out = [bytes([RAW]) + section, bytes([RAW_FIXED_CRC | 8]) + section]
    for magic, entry in _records_batches(section):
        if magic != 2 or len(entry) < 61:
            continue
        attributes, last_delta = struct.unpack_from(">hi", entry, 21)
        producer_id = struct.unpack_from(">q", entry, 43)[0]
        count = struct.unpack_from(">i", entry, 57)[0]
        try:
            body = decompress(attributes & 7, entry[61:], MAX_BATCH_BYTES)
        except KafkaError:
            continue
        head = bytes([min(count, 255), min(last_delta, 255), producer_id & 0xFF])
        for codec in range(5):
            out.append(bytes([WRAP_V2 | 8, (attributes & 0x38) | codec]) + head + body)
        for magic_bit in (0, 1):
            inner = b"".join(
                legacy_message(magic_bit, 0, i, b"k%d" % i, body[i * 8 : i * 8 + 40])
                for i in range(3)
            )
            for codec in range(5):
                out.append(bytes([WRAP_LEGACY, magic_bit | codec << 1, 2]) + inner)
    return out


# ------------------------------------------------------------------------------------- sasl

#: The client nonce of the SCRAM target (fixed, so that inputs can extend it).
SCRAM_NONCE = "fyko+d2lbbFgONRv9qkxdawL"
_SCRAM_USER, _SCRAM_PASSWORD = "user", "pencil"


def _chunks(data: bytes, count: int) -> list[bytes]:
    parts = data.split(b"\x00", count - 1)
    return parts + [b""] * (count - len(parts))


def _sasl_exchange(data: bytes) -> None:
    """SaslHandshake v1 then SaslAuthenticate v2 responses, decoded from NUL-separated
    bodies, answered to :func:`~spark_kafka_py.client.sasl.authenticate` (mechanism from
    ``data[0]``)."""
    mechanism = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")[data[0] & 3]
    bodies = iter(data[1:].split(b"\x00\x00\x00"))
    config = SaslConfig(
        mechanism=mechanism,
        username=_SCRAM_USER,
        password=Secret(_SCRAM_PASSWORD),
        token=Secret("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c2VyIn0.") if data[0] & 3 == 3 else None,
    )

    def exchange(request: Any) -> Any:
        body = next(bodies, b"")
        if request.API_KEY == 17:
            return decode(SaslHandshakeResponse, body, 1)
        return decode(SaslAuthenticateResponse, body, 2)

    sasl.authenticate(exchange, config, "broker 0 at fuzz:9092")


def sasl_messages(data: bytes) -> None:
    """``data[0]`` bits 0-1: 0 SCRAM-SHA-256, 1 SCRAM-SHA-512 (``data[1:]`` = server-first
    NUL server-final; client nonce :data:`SCRAM_NONCE`), 2 OAUTHBEARER (``data[1:]`` = the
    server's challenge, then the broker's next token after a NUL), 3 the whole exchange
    (``data[1]`` mechanism, then response bodies separated by three NULs)."""
    if not data:
        return
    kind = data[0] & 3
    if kind == 3:
        if len(data) > 1:
            _sasl_exchange(data[1:])
        return
    if kind == 2:
        first, second = _chunks(data[1:], 2)
        bearer = sasl.OAuthBearer("token")
        bearer.initial()
        if bearer.respond(first) is not None:
            bearer.respond(second)
        return
    scram = sasl.Scram(
        "SCRAM-SHA-512" if kind else "SCRAM-SHA-256",
        _SCRAM_USER,
        _SCRAM_PASSWORD,
        nonce=SCRAM_NONCE,
    )
    scram.initial()
    first, final = _chunks(data[1:], 2)
    if scram.respond(first) is not None:
        scram.respond(final)


# ------------------------------------------------------------------------------------ oauth

_TOKEN_ENDPOINT = "https://token.fuzz.invalid/oauth2/token"
_OAUTH_CONFIG = SaslConfig(
    mechanism="OAUTHBEARER",
    token_endpoint_url=_TOKEN_ENDPOINT,
    client_id="spark",
    client_secret=Secret("s3cr3t"),
    scope="kafka",
)


class _FakeSocket:
    """A connected socket whose peer sent ``data`` (an HTTP response) and ignores requests."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def sendall(self, data: bytes) -> None:
        pass

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self._data))

    def settimeout(self, timeout: float | None) -> None:
        pass

    def setsockopt(self, *args: Any) -> None:
        pass

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _https_answers(data: bytes) -> Iterator[None]:
    """Every HTTPS connection opened inside reads ``data`` as the server's bytes."""

    def connect(self: http.client.HTTPSConnection) -> None:
        self.sock = _FakeSocket(data)

    with (
        mock.patch.object(http.client.HTTPSConnection, "connect", connect),
        # a default context loads the system's CA certificates (~50 ms): made once, not per input
        mock.patch.object(ssl, "_create_default_https_context", _tls_context),
    ):
        yield


@functools.cache
def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def oauth(data: bytes) -> None:
    """``data``: the raw HTTP response of the token endpoint to the client-credentials POST
    (KIP-768), read by the client as it reads a real one (``urllib`` over ``http.client``)."""
    with _https_answers(data):
        sasl._client_credentials_token(_OAUTH_CONFIG)


# ------------------------------------------------------------------------------------ seeds

#: name -> (target function, what it decodes).
TARGETS: dict[str, tuple[Callable[[bytes], None], str]] = {
    "framing": (framing, "response frames through KafkaProtocol, every API and version"),
    "responses": (responses, "every response schema at every version"),
    "records": (records, "records sections, v2 and legacy v0/v1, every codec, both decoders"),
    "sasl": (sasl_messages, "SCRAM and OAUTHBEARER server messages, the SASL exchange"),
    "oauth": (oauth, "OAuth token endpoint HTTP responses"),
}


def seed_inputs(captured: Iterable[tuple[int, int, bytes]]) -> dict[str, list[bytes]]:
    """Inputs of every target built from captured ``(api_key, api_version, frame)`` response
    frames (:meth:`spark_kafka_py.testing.faultproxy.FaultProxy.capture`)."""
    out: dict[str, list[bytes]] = {"framing": [], "responses": [], "records": [], "sasl": []}
    for api_key, version, frame in captured:
        request_type = REQUEST_TYPES.get(api_key)
        if request_type is None:
            continue
        if not request_type.MIN_VERSION <= version <= request_type.MAX_VERSION:
            continue
        out["framing"].append(framing_input(api_key, version, frame))
        reader = Reader(frame[4:])
        reader.int32("correlation_id")
        if response_header_version(request_type, version) >= 1:
            reader.skip_tagged_fields("header")
        body = frame[4 + reader.position :]
        out["responses"].append(responses_input(api_key, version, body))
        if request_type.response_type is FetchResponse:
            response = decode(FetchResponse, body, version)
            for topic in response.responses:
                for part in topic.partitions:
                    if part.records:
                        out["records"] += records_inputs(bytes(part.records))
        if api_key in (17, 36):
            out["sasl"].append(bytes([3, 1]) + body)
    return out


def synthetic_seeds() -> dict[str, list[bytes]]:
    """Seeds that a plaintext broker cannot give: legacy messages, control batches, SASL
    server messages (RFC 5802 section 5 shapes) and token endpoint answers (RFC 6749
    section 5.1/5.2)."""
    legacy = b"".join(legacy_message(1, 0, i, b"k", b"value-%d" % i) for i in range(3))
    control = struct.pack(">hh", 0, 0)
    control_record = b"\x00\x00\x00\x08" + control + b"\x0c" + b"\x00\x00\x00\x00\x00\x00\x00"
    records_seeds = [
        bytes([RAW_FIXED_CRC]) + legacy,
        bytes([RAW_FIXED_CRC]) + b"".join(legacy_message(0, 0, i, None, b"v") for i in range(2)),
        bytes([WRAP_V2 | 4, 0x30, 1, 0, 7]) + bytes([len(control_record) * 2]) + control_record,
    ]
    for codec in range(5):
        records_seeds.append(bytes([WRAP_LEGACY, 1 | codec << 1, 2]) + legacy)
        records_seeds.append(bytes([WRAP_LEGACY, codec << 1, 2]) + legacy)
    nonce = SCRAM_NONCE + "3rfcNHYJY1ZVvWVs7j"
    first = f"r={nonce},s=QSXCR+Q6sek8bf92,i=4096".encode()
    final = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    sasl_seeds = [
        b"\x00" + first + b"\x00" + final,
        b"\x01" + first + b"\x00" + final,
        b"\x00e=invalid-proof",
        b'\x02{"status":"invalid_token","scope":"kafka"}\x00',
    ]
    body = b'{"access_token":"eyJhbGciOiJub25lIn0.e30.","token_type":"Bearer","expires_in":3600}'
    oauth_seeds = [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}".encode()
        + b"\r\n"
        + body
        + b"\r\n0\r\n\r\n",
        b'HTTP/1.1 401 Unauthorized\r\nContent-Length: 25\r\n\r\n{"error":"invalid_client"}',
        b"HTTP/1.1 302 Found\r\nLocation: https://token.fuzz.invalid/other\r\n"
        b"Content-Length: 0\r\n\r\n",
    ]
    return {"records": records_seeds, "sasl": sasl_seeds, "oauth": oauth_seeds}
