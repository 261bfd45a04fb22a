"""Sans-I/O Kafka connection protocol: requests to bytes, bytes to responses.

The idea of kafka-python's ``KafkaProtocol`` (``kafka/protocol/parser.py``) and h11: this
module never touches a socket. :meth:`KafkaProtocol.send_request` returns the bytes to write;
:meth:`KafkaProtocol.receive_bytes` takes whatever bytes arrived and returns the responses
they complete, buffering partial frames up to ``max_frame_bytes``.

Wire format (Kafka protocol guide, "Common Request and Response Structure"; message specs
``RequestHeader.json`` / ``ResponseHeader.json``)::

    frame           := size:int32 payload[size]
    request header  v1 := api_key:int16 api_version:int16 correlation_id:int32
                          client_id:nullable_string(int16 length, even in v2)
                    v2 := v1 + tagged_fields             (flexible request versions)
    response header v0 := correlation_id:int32
                    v1 := v0 + tagged_fields             (flexible response versions)

ApiVersions responses always use response header v0 (KIP-511), so a client can parse the
answer whatever version it asked for. Kafka answers the requests of one connection in order,
so a response whose correlation id is not the oldest in-flight one is a protocol error.
"""

from __future__ import annotations

import collections
import struct
from typing import Any

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol.messages.api_versions import API_VERSIONS_KEY
from spark_kafka_py.protocol.primitives import Reader, Writer
from spark_kafka_py.protocol.schema import Request, Response, decode, encode

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "InFlight",
    "KafkaProtocol",
    "encode_request_header",
    "response_header_version",
]

#: Default cap on one response frame: 100 MiB (Kafka's ``socket.request.max.bytes`` is also
#: 100 MiB on the broker side).
DEFAULT_MAX_FRAME_BYTES = 100 * 1024 * 1024

_SIZE = struct.Struct(">i")
_INT32_MAX = 0x7FFFFFFF


def request_header_version(request_type: type[Request], version: int) -> int:
    """Request header version: 2 for flexible request versions, else 1."""
    return 2 if request_type.is_flexible(version) else 1


def response_header_version(request_type: type[Request], version: int) -> int:
    """Response header version: 1 for flexible versions, else 0; ApiVersions is always 0."""
    if request_type.API_KEY == API_VERSIONS_KEY:
        return 0
    return 1 if request_type.response_type.is_flexible(version) else 0


def encode_request_header(
    api_key: int, version: int, correlation_id: int, client_id: str | None, header_version: int
) -> bytes:
    """Encode a request header (v1 or v2). ``client_id`` stays an int16-length string in v2."""
    w = Writer()
    w.int16(api_key, "api_key")
    w.int16(version, "api_version")
    w.int32(correlation_id, "correlation_id")
    w.nullable_string(client_id, "client_id")
    if header_version >= 2:
        w.tagged_fields()
    return w.getvalue()


class InFlight:
    """A request awaiting its response."""

    __slots__ = ("correlation_id", "request_type", "version")

    def __init__(self, correlation_id: int, request_type: type[Request], version: int):
        self.correlation_id = correlation_id
        self.request_type = request_type
        self.version = version

    def __repr__(self) -> str:
        return (
            f"InFlight({self.request_type.__name__} v{self.version}, "
            f"correlation_id={self.correlation_id})"
        )


class KafkaProtocol:
    """Sans-I/O state of one Kafka connection.

    Args:
        client_id: sent in every request header (``None`` sends a null client id).
        max_frame_bytes: largest response frame accepted (bytes); a size field above it is a
            :class:`KafkaProtocolError` (before any of the frame is buffered).
        first_correlation_id: correlation id of the first request (wraps at 2**31).

    Not thread-safe: one owner (e.g. a connection holding a lock) drives it.
    """

    def __init__(
        self,
        client_id: str | None = "spark-kafka-py",
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        first_correlation_id: int = 0,
    ):
        if max_frame_bytes < 4:
            raise ValueError(f"max_frame_bytes must be >= 4, got {max_frame_bytes}")
        self.client_id = client_id
        self.max_frame_bytes = max_frame_bytes
        self._next_correlation_id = first_correlation_id & _INT32_MAX
        self._in_flight: collections.deque[InFlight] = collections.deque()
        self._buffer = bytearray()
        self._frame_size: int | None = None

    # -- state ----------------------------------------------------------------------------
    @property
    def in_flight(self) -> tuple[InFlight, ...]:
        """Requests sent and not yet answered, oldest first."""
        return tuple(self._in_flight)

    @property
    def buffered_bytes(self) -> int:
        """Bytes received and not yet part of a complete frame."""
        return len(self._buffer)

    def bytes_needed(self) -> int:
        """Bytes still missing to complete the frame being received (4 when between frames).

        A hint for how much a socket reader should ask for next.
        """
        if self._frame_size is None:
            return 4 - len(self._buffer) if len(self._buffer) < 4 else 0
        return self._frame_size + 4 - len(self._buffer)

    def reset(self) -> None:
        """Forget in-flight requests and buffered bytes (after the connection was closed)."""
        self._in_flight.clear()
        self._buffer.clear()
        self._frame_size = None

    # -- sending --------------------------------------------------------------------------
    def send_request(
        self, request: Request, version: int, *, expect_response: bool = True
    ) -> tuple[int, bytes]:
        """Encode ``request`` at ``version`` with a header and a size prefix.

        Args:
            expect_response: ``False`` for a request the broker never answers (Produce with
                ``acks=0``, ``ProduceRequest.json``): it is not recorded as in flight, so the
                next response is matched with the request before it.

        Returns:
            ``(correlation_id, frame_bytes)``; the request is recorded as in flight unless
            ``expect_response`` is false.

        Raises:
            LocalProtocolError: the version is unsupported or a field cannot be encoded.
        """
        request_type = type(request)
        if not isinstance(request, Request):
            raise LocalProtocolError(f"{request_type.__name__} is not a Kafka request")
        body = encode(request, version)
        correlation_id = self._next_correlation_id
        header = encode_request_header(
            request_type.API_KEY,
            version,
            correlation_id,
            self.client_id,
            request_header_version(request_type, version),
        )
        size = len(header) + len(body)
        if size > _INT32_MAX:
            raise LocalProtocolError(f"{request_type.__name__} of {size} bytes is too large")
        self._next_correlation_id = (correlation_id + 1) & _INT32_MAX
        if expect_response:
            self._in_flight.append(InFlight(correlation_id, request_type, version))
        return correlation_id, _SIZE.pack(size) + header + body

    # -- receiving ------------------------------------------------------------------------
    def receive_bytes(self, data: bytes | bytearray | memoryview) -> list[tuple[int, Response]]:
        """Feed received bytes; return ``[(correlation_id, response)]`` for completed frames.

        Bytes after the last complete frame are buffered for the next call.

        Raises:
            KafkaProtocolError: negative or oversized frame size, a response with no request
                in flight, a correlation id other than the oldest in flight, or a malformed
                body. The protocol state is then undefined: close the connection.
        """
        if data:
            self._buffer += data
        out: list[tuple[int, Response]] = []
        buf = self._buffer
        pos = 0
        while True:
            if self._frame_size is None:
                if len(buf) - pos < 4:
                    break
                size = _SIZE.unpack_from(buf, pos)[0]
                if size < 4:
                    raise KafkaProtocolError(
                        f"response frame size {size} is invalid (must be >= 4)"
                    )
                if size > self.max_frame_bytes:
                    raise KafkaProtocolError(
                        f"response frame of {size} bytes exceeds max_frame_bytes "
                        f"({self.max_frame_bytes})"
                    )
                if not self._in_flight:
                    raise KafkaProtocolError("received a response with no request in flight")
                self._frame_size = size
            size = self._frame_size
            if len(buf) - pos < 4 + size:
                break
            # one copy of the frame: decoded byte fields are zero-copy views of it
            frame = bytes(memoryview(buf)[pos + 4 : pos + 4 + size])
            pos += 4 + size
            self._frame_size = None
            out.append(self._decode_frame(frame))
        if pos:
            del buf[:pos]
        return out

    def _decode_frame(self, frame: bytes) -> tuple[int, Response]:
        expected = self._in_flight[0]
        request_type = expected.request_type
        reader = Reader(frame)
        correlation_id = reader.int32("correlation_id")
        if correlation_id != expected.correlation_id:
            raise KafkaProtocolError(
                f"correlation id mismatch: got {correlation_id}, expected "
                f"{expected.correlation_id} for {request_type.__name__}"
            )
        self._in_flight.popleft()
        if response_header_version(request_type, expected.version) >= 1:
            reader.skip_tagged_fields("response header tagged fields")
        return correlation_id, _decode_body(request_type, frame, reader.position, expected.version)


def _decode_body(request_type: type[Request], frame: bytes, start: int, version: int) -> Any:
    response_type = request_type.response_type
    if request_type.API_KEY != API_VERSIONS_KEY:
        return decode(response_type, Reader(frame, start), version)
    # A broker that does not support our ApiVersions version answers with a v0 body
    # (UNSUPPORTED_VERSION); Kafka's client falls back to parsing v0 the same way.
    try:
        return decode(response_type, Reader(frame, start), version)
    except KafkaProtocolError:
        if version == 0:
            raise
    return decode(response_type, Reader(frame, start), 0)
