"""Sans-I/O Kafka connection protocol: requests to bytes, bytes to responses.

The idea of kafka-python's ``KafkaProtocol`` (``kafka/protocol/parser.py``) and h11: this
module never touches a socket. :meth:`KafkaProtocol.send_request` returns the bytes to write;
:meth:`KafkaProtocol.recv_buffer` names where the next received bytes should be written and
:meth:`KafkaProtocol.bytes_received` returns the responses they complete (a socket reader calls
``sock.recv_into(proto.recv_buffer())``); :meth:`KafkaProtocol.receive_bytes` does the same for
bytes received elsewhere. A partial frame is held up to ``max_frame_bytes``.

Receiving without copies: between frames the bytes go to a small reused scratch buffer
(:data:`SCRATCH_BYTES`). A frame that fits in it is copied out (it is small); a larger one gets
a buffer of its own, the part already in the scratch (< :data:`SCRATCH_BYTES`) is copied there,
and the rest of the frame is received straight into it, never past its end. Decoded byte
fields (a Fetch response's records) are read-only views of that buffer. Frame buffers up to
:data:`REUSED_FRAME_MAX_BYTES` are kept (at most :data:`REUSED_FRAME_BUFFERS`) and written again
only once no view of them is alive (a ``bytearray`` with exported views cannot be resized:
that is the test), so steady-state reading touches no freshly allocated memory.

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
    "REUSED_FRAME_BUFFERS",
    "REUSED_FRAME_MAX_BYTES",
    "SCRATCH_BYTES",
    "InFlight",
    "KafkaProtocol",
    "encode_request_header",
    "response_header_version",
]

#: Default cap on one response frame: 100 MiB (Kafka's ``socket.request.max.bytes`` is also
#: 100 MiB on the broker side).
DEFAULT_MAX_FRAME_BYTES = 100 * 1024 * 1024

#: Scratch buffer receiving the bytes between frames (bytes); frames whose size field plus the
#: frame's own bytes fit in it are copied out of it, larger ones get a buffer of their own.
SCRATCH_BYTES = 64 * 1024

#: How many frame buffers one :class:`KafkaProtocol` keeps for reuse, and the largest one kept
#: (bytes): at most ``REUSED_FRAME_BUFFERS * REUSED_FRAME_MAX_BYTES`` (24 MiB) per connection,
#: a few MiB with Kafka's default ``max.partition.fetch.bytes`` (1 MiB). Larger frames get a
#: buffer of exactly their size that is dropped with the response.
REUSED_FRAME_BUFFERS = 3
REUSED_FRAME_MAX_BYTES = 8 * 1024 * 1024

#: A new reusable frame buffer gets 1/8 more than the frame needs, rounded up to this (bytes),
#: so that the next, slightly larger response of the same kind fits in it.
_FRAME_BUFFER_STEP = 64 * 1024

_SIZE = struct.Struct(">i")
_INT32_MAX = 0x7FFFFFFF


def _unreferenced(buf: bytearray) -> bool:
    """Whether no view of ``buf`` is alive: a ``bytearray`` with exported buffers (any
    ``memoryview`` of it, a slice of one, a buffer taken by C code) refuses to be resized.
    Popping and re-appending its last byte is that resize, and changes nothing."""
    try:
        last = buf.pop()
    except BufferError:
        return False
    buf.append(last)
    return True


def request_header_version(request_type: type[Request[Response]], version: int) -> int:
    """Request header version: 2 for flexible request versions, else 1."""
    return 2 if request_type.is_flexible(version) else 1


def response_header_version(request_type: type[Request[Response]], version: int) -> int:
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

    def __init__(self, correlation_id: int, request_type: type[Request[Response]], version: int):
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
        scratch_bytes: size of the scratch buffer receiving the bytes between frames (bytes,
            >= 8, default :data:`SCRATCH_BYTES`); frames that do not fit in it are received
            into buffers of their own.

    Memory held: the scratch, the frame being received, and up to
    :data:`REUSED_FRAME_BUFFERS` frame buffers of at most :data:`REUSED_FRAME_MAX_BYTES` each
    kept for reuse (a kept buffer is written again only when no view of it is alive).

    Not thread-safe: one owner (e.g. a connection holding a lock) drives it.
    """

    def __init__(
        self,
        client_id: str | None = "spark-kafka-py",
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        first_correlation_id: int = 0,
        scratch_bytes: int = SCRATCH_BYTES,
    ):
        if max_frame_bytes < 4:
            raise ValueError(f"max_frame_bytes must be >= 4, got {max_frame_bytes}")
        if scratch_bytes < 8:
            raise ValueError(f"scratch_bytes must be >= 8, got {scratch_bytes}")
        self.client_id = client_id
        self.max_frame_bytes = max_frame_bytes
        self._next_correlation_id = first_correlation_id & _INT32_MAX
        self._in_flight: collections.deque[InFlight] = collections.deque()
        # between frames: the bytes received are scratch[:_end] (a partial frame at its front)
        self._scratch = bytearray(scratch_bytes)
        self._scratch_view = memoryview(self._scratch)
        self._end = 0
        # inside a large frame: its buffer, its size (bytes) and how many of them arrived
        self._frame: bytearray | None = None
        self._frame_size = 0
        self._frame_filled = 0
        #: frame buffers kept for reuse (see the module docstring)
        self._frame_buffers: list[bytearray] = []

    # -- state ----------------------------------------------------------------------------
    @property
    def in_flight(self) -> tuple[InFlight, ...]:
        """Requests sent and not yet answered, oldest first."""
        return tuple(self._in_flight)

    @property
    def in_flight_count(self) -> int:
        """How many requests are sent and not yet answered (``len`` of :attr:`in_flight`, read
        without copying, so another thread's send does not disturb it)."""
        return len(self._in_flight)

    @property
    def buffered_bytes(self) -> int:
        """Bytes received and not yet part of a complete frame."""
        if self._frame is not None:
            return 4 + self._frame_filled
        return self._end

    def bytes_needed(self) -> int:
        """Bytes still missing to complete the frame being received (4 when between frames).

        A hint for how much a socket reader should ask for next.
        """
        if self._frame is not None:
            return self._frame_size - self._frame_filled
        if self._end < 4:
            return 4 - self._end
        size: int = _SIZE.unpack_from(self._scratch)[0]
        return 4 + size - self._end

    def reset(self) -> None:
        """Forget in-flight requests and buffered bytes (after the connection was closed)."""
        self._in_flight.clear()
        self._end = 0
        self._frame = None
        self._frame_size = self._frame_filled = 0

    # -- sending --------------------------------------------------------------------------
    def send_request(
        self, request: Request[Response], version: int, *, expect_response: bool = True
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
    def recv_buffer(self) -> memoryview:
        """Where the next received bytes go: a writable view, then :meth:`bytes_received`.

        Between frames, the free end of the reused scratch buffer (several small frames may
        arrive at once); inside a frame larger than the scratch, the rest of that frame's own
        buffer (never past the frame's end: the bytes land where they will be decoded). The
        view is at least 1 byte long; drop it (or ``release()`` it) once written: a live view
        keeps a frame buffer from being reused.
        """
        if self._frame is not None:
            return memoryview(self._frame)[self._frame_filled : self._frame_size]
        return self._scratch_view[self._end :]

    def bytes_received(self, n: int) -> list[tuple[int, Response]]:
        """``n`` bytes were written at the start of the last :meth:`recv_buffer` view; return
        ``[(correlation_id, response)]`` for the frames they complete.

        Raises:
            ValueError: ``n`` is negative or larger than that view.
            KafkaProtocolError: negative or oversized frame size (found in the 4-byte size
                field, before anything is allocated for the frame), a response with no
                request in flight, a correlation id other than the oldest in flight, or a
                malformed body. The protocol state is then undefined: close the connection.
        """
        if self._frame is not None:
            room = self._frame_size - self._frame_filled
            if not 0 <= n <= room:
                raise ValueError(f"bytes_received({n}) outside the receive buffer ({room} bytes)")
            self._frame_filled += n
            if self._frame_filled < self._frame_size:
                return []
            buf, size = self._frame, self._frame_size
            self._frame = None
            self._frame_size = self._frame_filled = 0
            # read-only like a bytes frame: decoded byte fields are views of this buffer
            return [self._decode_frame(memoryview(buf)[:size].toreadonly())]
        room = len(self._scratch) - self._end
        if not 0 <= n <= room:
            raise ValueError(f"bytes_received({n}) outside the receive buffer ({room} bytes)")
        self._end += n
        return self._take_frames()

    def _take_frames(self) -> list[tuple[int, Response]]:
        """Decode the complete frames in the scratch; move a large frame to its own buffer."""
        out: list[tuple[int, Response]] = []
        scratch = self._scratch
        pos, end = 0, self._end
        while end - pos >= 4:
            size = self._check_size(_SIZE.unpack_from(scratch, pos)[0])
            if 4 + size > len(scratch):  # a large frame: received into its own buffer
                held = end - pos - 4
                buf = self._frame_buffer(size)
                buf[:held] = self._scratch_view[pos + 4 : end]
                self._frame, self._frame_size, self._frame_filled = buf, size, held
                pos = end
                break
            if end - pos < 4 + size:
                break
            # a small frame: one copy, decoded byte fields are zero-copy views of it
            frame = bytes(self._scratch_view[pos + 4 : pos + 4 + size])
            pos += 4 + size
            out.append(self._decode_frame(frame))
        if pos:  # what is left is a partial small frame (< SCRATCH_BYTES): to the front
            view = self._scratch_view  # memoryview assignment: memmove, overlap is fine
            view[: end - pos] = view[pos:end]
            self._end = end - pos
        return out

    def _check_size(self, size: int) -> int:
        if size < 4:
            raise KafkaProtocolError(f"response frame size {size} is invalid (must be >= 4)")
        if size > self.max_frame_bytes:
            raise KafkaProtocolError(
                f"response frame of {size} bytes exceeds max_frame_bytes ({self.max_frame_bytes})"
            )
        if not self._in_flight:
            raise KafkaProtocolError("received a response with no request in flight")
        return size

    def _frame_buffer(self, size: int) -> bytearray:
        """A buffer of at least ``size`` bytes that no live view refers to."""
        best: bytearray | None = None
        for buf in self._frame_buffers:
            if size <= len(buf) and (best is None or len(buf) < len(best)) and _unreferenced(buf):
                best = buf
        if best is not None:
            return best
        if size > REUSED_FRAME_MAX_BYTES:
            return bytearray(size)  # not kept
        step = _FRAME_BUFFER_STEP
        capacity = min(-(-(size + size // 8) // step) * step, REUSED_FRAME_MAX_BYTES)
        new = bytearray(capacity)
        kept = self._frame_buffers
        if len(kept) < REUSED_FRAME_BUFFERS:
            kept.append(new)
        else:  # replace the smallest unreferenced buffer (too small for this frame)
            free = [i for i, buf in enumerate(kept) if _unreferenced(buf)]
            if free:
                kept[min(free, key=lambda i: len(kept[i]))] = new
        return new

    def receive_bytes(self, data: bytes | bytearray | memoryview) -> list[tuple[int, Response]]:
        """Feed bytes received elsewhere; return ``[(correlation_id, response)]`` for the
        frames they complete (:meth:`recv_buffer` + :meth:`bytes_received`, one copy of
        ``data``). Bytes after the last complete frame are kept for the next call.

        Raises:
            KafkaProtocolError: as :meth:`bytes_received`.
        """
        out: list[tuple[int, Response]] = []
        src = memoryview(data).cast("B")
        pos = 0
        while pos < len(src):
            view = self.recv_buffer()
            n = min(len(view), len(src) - pos)
            view[:n] = src[pos : pos + n]
            view.release()
            pos += n
            out += self.bytes_received(n)
        return out

    def _decode_frame(self, frame: bytes | memoryview) -> tuple[int, Response]:
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


def _decode_body(
    request_type: type[Request[Response]], frame: bytes | memoryview, start: int, version: int
) -> Any:
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
