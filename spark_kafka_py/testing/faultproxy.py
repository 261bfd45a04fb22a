"""A fault-injecting TCP proxy on 127.0.0.1 in front of a real Kafka broker (tests only).

The real broker cannot be told to cut a Fetch response in half, reset a connection after the
first kilobyte of an answer, or accept a connection and never answer. This proxy can: it
forwards whole Kafka frames (``size:int32 payload``, see
:mod:`spark_kafka_py.protocol.framing`) between a client and the broker, remembers the API
key of every request (Kafka answers the requests of one connection in order), and applies
the first matching :class:`Fault` to a response frame.

Actions of a :class:`Fault` (applied after ``after_bytes`` bytes of the response frame,
size prefix included, were forwarded):

* ``"reset"``: abort both connections with a TCP RST (``SO_LINGER`` 0): "connection reset
  by peer" mid-response;
* ``"close"``: close both connections cleanly (FIN): the response is cut short;
* ``"stall"``: forward nothing more on this connection, ever (until the client gives up or
  the proxy stops): a broker that accepts and never answers;
* ``"flip"``: XOR the byte at offset ``after_bytes`` of the frame with ``0xFF`` and forward
  the whole frame (bit rot on the wire, for CRC checks);
* ``"rewrite"``: send ``Fault.rewrite(frame, request)`` instead of the frame and go on
  forwarding (a hostile broker, or a man in the middle on a plaintext listener). The rewrites
  below are written against the real response the broker sent, located with our own response
  schemas (:mod:`spark_kafka_py.protocol.messages`):

  - :func:`inflate_frame_size`: the size prefix claims more bytes than follow;
  - :func:`truncate_body`: the body cut short, the size prefix matching the cut body;
  - :func:`set_length`: one length or count field (a string, bytes, records or array, named
    as in our schemas, e.g. ``"FetchableTopicResponse.partitions"``) replaced, e.g. by
    ``2**31 - 1``;
  - :func:`replace_correlation_id`: a correlation id the client never sent;
  - :func:`edit_response`: the response decoded, changed by a function and encoded again
    (e.g. a Fetch response for a partition that was not asked for).

Two ways to put it in front of a broker:

* :meth:`FaultProxy.socket_factory` gives a ``socket_factory`` for
  :class:`~spark_kafka_py.client.cluster.KafkaClient` that sends *every* connection (bootstrap
  and the brokers the metadata names) through the proxy: for one-broker clusters, no broker
  configuration needed;
* ``FaultProxy(..., advertise=True)`` rewrites every Metadata response so that each broker it
  lists is at the proxy's address: clients given only ``proxy.address`` as bootstrap server
  (Spark's ``kafka.bootstrap.servers``, in any process) then connect through the proxy. For
  one-broker clusters (every node id is sent to the same upstream broker);
* or start a broker whose ``advertised.listeners`` names the proxy's port (bind the proxy
  first with ``FaultProxy(upstream_port=..., listen_port=0)`` and read :attr:`port`).

Everything stays on loopback; every socket has a timeout and :meth:`FaultProxy.close` stops
all threads, so a test using it ends by itself.

Example::

    with FaultProxy("127.0.0.1", broker_port) as proxy:
        proxy.add(Fault(api_key=FETCH_KEY, action="reset", after_bytes=100))
        client = KafkaClient(config, socket_factory=proxy.socket_factory())
        ...
        assert proxy.fired == 1
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from spark_kafka_py.protocol.framing import response_header_version
from spark_kafka_py.protocol.messages import REQUEST_TYPES
from spark_kafka_py.protocol.primitives import Reader, Writer
from spark_kafka_py.protocol.schema import Response, decode, encode

__all__ = [
    "FETCH_KEY",
    "METADATA_KEY",
    "Action",
    "Fault",
    "FaultProxy",
    "RequestHeader",
    "Rewrite",
    "edit_response",
    "inflate_frame_size",
    "replace_correlation_id",
    "set_length",
    "truncate_body",
]

#: Kafka API keys (``FetchRequest.json`` 1, ``MetadataRequest.json`` 3, ApiVersions 18).
FETCH_KEY = 1
METADATA_KEY = 3
API_VERSIONS_KEY = 18

Action = Literal["reset", "close", "stall", "flip", "rewrite"]

_SIZE = struct.Struct(">i")
#: Largest frame the proxy buffers (bytes); Kafka's own ``socket.request.max.bytes`` default.
MAX_FRAME_BYTES = 100 * 1024 * 1024
#: Socket timeout of the proxy's blocking I/O (s): threads wake this often to check for stop.
_POLL_S = 0.2
_INT32_MAX = 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """What the proxy read from the header of the request a response answers.

    Attributes:
        api_key: e.g. 1 (Fetch); -1 when the request frame was too short to tell.
        api_version: the request's version; -1 when unknown.
        correlation_id: the id the client sent; -1 when unknown.
    """

    api_key: int
    api_version: int
    correlation_id: int

    @classmethod
    def parse(cls, frame: bytes) -> RequestHeader:
        """From a request frame (size prefix included): ``api_key:int16 api_version:int16
        correlation_id:int32`` after the size (Kafka's ``RequestHeader``, every version)."""
        if len(frame) < 12:
            return cls(struct.unpack_from(">h", frame, 4)[0] if len(frame) >= 6 else -1, -1, -1)
        api_key, api_version, correlation_id = struct.unpack_from(">hhi", frame, 4)
        return cls(api_key, api_version, correlation_id)


#: ``rewrite(frame, request) -> bytes``: what to send instead of the response ``frame`` (size
#: prefix included) that answers ``request``; the result is sent as is (it is the whole frame,
#: size prefix included, and may lie about its size).
Rewrite = Callable[[bytes, RequestHeader], bytes]


@dataclass
class Fault:
    """One fault to inject into response frames.

    Attributes:
        action: what to do, see the module docstring.
        api_key: only responses to requests of this API key (``None``: any response).
        after_bytes: bytes of the response frame (including its 4-byte size) forwarded before
            the action; for ``"flip"``, the offset of the byte to flip (negative: from the
            end of the frame, e.g. -4 is the last records byte of a one-partition Fetch v12+
            response, before three empty tagged-field sections).
        times: how many matching responses to hit (``-1``: all of them, forever).
        skip: matching responses to let through untouched before the first hit.
        rewrite: for ``"rewrite"``, what to send instead (see :data:`Rewrite` and the
            rewrites of this module).
        fired: how many times it was applied (read it to check that a test really hit it).

    Raises:
        ValueError: ``"rewrite"`` without ``rewrite``, or ``rewrite`` with another action.
    """

    action: Action
    api_key: int | None = None
    after_bytes: int = 0
    times: int = 1
    skip: int = 0
    rewrite: Rewrite | None = None
    fired: int = field(default=0)

    def __post_init__(self) -> None:
        if (self.action == "rewrite") != (self.rewrite is not None):
            raise ValueError("a Fault has a rewrite function if and only if its action is rewrite")

    def _take(self, api_key: int) -> bool:
        if self.api_key is not None and api_key != self.api_key:
            return False
        if self.times >= 0 and self.fired >= self.times:
            return False
        if self.skip > 0:
            self.skip -= 1
            return False
        self.fired += 1
        return True


class _Stop(Exception):
    """The proxy was closed, or a side of the connection went away."""


def _recv_exact(sock: socket.socket, n: int, stopping: threading.Event) -> bytes:
    """``n`` bytes from ``sock`` (waking every ``_POLL_S`` to check ``stopping``)."""
    chunks = bytearray()
    while len(chunks) < n:
        if stopping.is_set():
            raise _Stop
        try:
            chunk = sock.recv(min(n - len(chunks), 1 << 20))
        except TimeoutError:
            continue
        except OSError as exc:
            raise _Stop from exc
        if not chunk:
            raise _Stop
        chunks += chunk
    return bytes(chunks)


def _read_frame(sock: socket.socket, stopping: threading.Event) -> bytes:
    """One whole frame (size prefix included)."""
    head = _recv_exact(sock, 4, stopping)
    (size,) = _SIZE.unpack(head)
    if not 0 <= size <= MAX_FRAME_BYTES:
        raise _Stop
    return head + _recv_exact(sock, size, stopping)


def _abort(sock: socket.socket) -> None:
    """Close with RST instead of FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class _Link:
    """One proxied connection: client <-> upstream, a thread per direction."""

    def __init__(self, proxy: FaultProxy, client: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream: socket.socket | None = None
        self.requests: deque[RequestHeader] = deque()
        self.done = threading.Event()
        self.stalled = False

    def run(self) -> None:
        proxy = self.proxy
        try:
            self.upstream = socket.create_connection(
                (proxy.upstream_host, proxy.upstream_port), timeout=5
            )
        except OSError:
            _abort(self.client)  # the broker is down: the client sees a reset
            self.done.set()
            return
        for sock in (self.client, self.upstream):
            sock.settimeout(_POLL_S)
        threading.Thread(target=self._requests, daemon=True, name="faultproxy-req").start()
        self._responses()

    def close(self, how: Literal["reset", "close"] = "close") -> None:
        self.done.set()
        for sock in (self.client, self.upstream):
            if sock is None:
                continue
            if how == "reset":
                _abort(sock)
            else:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()

    def _requests(self) -> None:
        assert self.upstream is not None
        try:
            while True:
                frame = _read_frame(self.client, self.done)
                if len(frame) >= 6:
                    self.requests.append(RequestHeader.parse(frame))
                if not self.stalled:
                    self.upstream.sendall(frame)
        except (_Stop, OSError):
            self.close()

    def _responses(self) -> None:
        assert self.upstream is not None
        try:
            while True:
                frame = _read_frame(self.upstream, self.done)
                request = self.requests.popleft() if self.requests else RequestHeader(-1, -1, -1)
                api_key = request.api_key
                if self.proxy.captured is not None:
                    self.proxy.captured.append((api_key, request.api_version, frame))
                if self.proxy.advertise and api_key == METADATA_KEY:
                    frame = self.proxy._advertise(frame, request)
                fault = self.proxy._match(api_key)
                if fault is None:
                    self.client.sendall(frame)
                    continue
                if fault.action == "rewrite":
                    assert fault.rewrite is not None  # Fault checks: rewrite if and only if
                    self.client.sendall(fault.rewrite(frame, request))
                    continue
                if fault.action == "flip":
                    mutated = bytearray(frame)
                    i = fault.after_bytes
                    i = min(i, len(mutated) - 1) if i >= 0 else max(len(mutated) + i, 4)
                    mutated[i] ^= 0xFF
                    self.client.sendall(bytes(mutated))
                    continue
                self.client.sendall(frame[: fault.after_bytes])
                if fault.action == "stall":
                    self.stalled = True
                    self.done.wait()  # until the client hangs up or the proxy stops
                    break
                self.close(fault.action)
                return
        except (_Stop, OSError):
            pass
        except Exception as exc:  # a rewrite that does not fit the response: the test's bug
            with self.proxy._lock:
                self.proxy.errors.append(exc)
        self.close()


class FaultProxy:
    """A TCP proxy on ``127.0.0.1`` that forwards to ``upstream_host:upstream_port``.

    Args:
        upstream_host, upstream_port: the real broker (loopback).
        listen_port: port to listen on (0: a free one; see :attr:`port`).
        advertise: rewrite Metadata responses so that every broker is at this proxy
            (one-broker clusters; see the module docstring).

    Attributes:
        port: the port the proxy accepts on.
        faults: the faults in the order they are matched (:meth:`add` appends).
        connections: connections accepted so far.
        captured: ``None``, or after :meth:`capture` the response frames forwarded since,
            ``(api_key, api_version, frame)`` as the broker sent them (size prefix included).
        errors: exceptions raised by rewrite functions (the connection was then closed);
            a test using rewrites should check it is empty.

    Thread-safe; :meth:`close` (or leaving the ``with`` block) stops everything.
    """

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        listen_port: int = 0,
        advertise: bool = False,
    ) -> None:
        if upstream_host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"FaultProxy forwards on loopback only, not to {upstream_host!r}")
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.faults: list[Fault] = []
        self.connections = 0
        self.captured: list[tuple[int, int, bytes]] | None = None
        self.advertise = advertise
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._links: list[_Link] = []
        self._stopping = threading.Event()
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", listen_port))
        self._server.listen(64)
        self._server.settimeout(_POLL_S)
        self.port: int = self._server.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True, name="faultproxy")
        self._thread.start()

    @property
    def address(self) -> str:
        """``127.0.0.1:port`` of the proxy."""
        return f"127.0.0.1:{self.port}"

    @property
    def fired(self) -> int:
        """Total number of faults applied so far."""
        with self._lock:
            return sum(f.fired for f in self.faults)

    def add(self, fault: Fault) -> Fault:
        """Append ``fault`` (matched after those added before) and return it."""
        with self._lock:
            self.faults.append(fault)
        return fault

    def capture(self) -> list[tuple[int, int, bytes]]:
        """Keep every response frame from now on, as the broker sent it (before any fault):
        returns :attr:`captured`, to which ``(api_key, api_version, frame)`` are appended
        (real broker traffic, e.g. the seeds of ``benchmarks/fuzz.py``)."""
        with self._lock:
            if self.captured is None:
                self.captured = []
            return self.captured

    def clear(self) -> None:
        """Remove every fault (connections already stalled stay stalled)."""
        with self._lock:
            self.faults.clear()

    def drop_connections(self, how: Literal["reset", "close"] = "reset") -> int:
        """Break every open proxied connection now; returns how many were open."""
        with self._lock:
            links = [link for link in self._links if not link.done.is_set()]
        for link in links:
            link.close(how)
        return len(links)

    def socket_factory(self) -> Callable[[str, int, float], socket.socket]:
        """A ``socket_factory(host, port, timeout_s)`` that connects to this proxy whatever
        broker address it is asked for (for ``KafkaClient(..., socket_factory=...)``)."""

        def connect(host: str, port: int, timeout_s: float) -> socket.socket:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=timeout_s)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock

        return connect

    def _advertise(self, frame: bytes, request: RequestHeader) -> bytes:
        """A Metadata response frame with every broker at ``127.0.0.1:<port>``."""

        def here(response: Any) -> Any:
            brokers = tuple(
                dataclasses.replace(b, host="127.0.0.1", port=self.port) for b in response.brokers
            )
            return dataclasses.replace(response, brokers=brokers)

        return edit_response(here)(frame, request)

    def _match(self, api_key: int) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault._take(api_key):
                    return fault
        return None

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(self, client)
            with self._lock:
                self.connections += 1
                self._links = [x for x in self._links if not x.done.is_set()]
                self._links.append(link)
            threading.Thread(target=link.run, daemon=True, name="faultproxy-link").start()

    def close(self) -> None:
        """Stop accepting, break every connection, join the accept thread (idempotent)."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._server.close()
        self._thread.join(timeout=5)
        with self._lock:
            links = list(self._links)
        for link in links:
            link.close("close")

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# -- response rewrites ------------------------------------------------------------------------


def _frame(payload: bytes | bytearray) -> bytes:
    return _SIZE.pack(len(payload)) + bytes(payload)


def _body_start(payload: bytes, request: RequestHeader) -> tuple[type[Response], int]:
    """``(response type, offset of the body in payload)`` for the response to ``request``."""
    request_type = REQUEST_TYPES.get(request.api_key)
    if request_type is None:
        raise ValueError(f"no schema for API key {request.api_key}: cannot locate fields")
    reader = Reader(payload)
    reader.int32("correlation_id")
    if response_header_version(request_type, request.api_version) >= 1:
        reader.skip_tagged_fields("response header tagged fields")
    return request_type.response_type, reader.position


class _LocatingReader(Reader):
    """A :class:`Reader` noting where each length or count prefix starts: ``(field, offset,
    encoding)`` with encoding ``"int16"``, ``"int32"`` or ``"uvarint"`` (compact, N+1)."""

    __slots__ = ("lengths",)

    def __init__(self, data: bytes, start: int) -> None:
        super().__init__(data, start)
        self.lengths: list[tuple[str, int, str]] = []

    def _note(self, field: str, encoding: str) -> None:
        self.lengths.append((field, self.position, encoding))

    def array_length(
        self, field: str = "array", *, compact: bool, nullable: bool, min_item_size: int = 1
    ) -> int | None:
        self._note(field, "uvarint" if compact else "int32")
        return super().array_length(
            field, compact=compact, nullable=nullable, min_item_size=min_item_size
        )

    def string(self, field: str = "string") -> str:
        self._note(field, "int16")
        return super().string(field)

    def nullable_string(self, field: str = "string") -> str | None:
        self._note(field, "int16")
        return super().nullable_string(field)

    def compact_string(self, field: str = "string") -> str:
        self._note(field, "uvarint")
        return super().compact_string(field)

    def compact_nullable_string(self, field: str = "string") -> str | None:
        self._note(field, "uvarint")
        return super().compact_nullable_string(field)

    def bytes(self, field: str = "bytes") -> memoryview:
        self._note(field, "int32")
        return super().bytes(field)

    def nullable_bytes(self, field: str = "bytes") -> memoryview | None:
        self._note(field, "int32")
        return super().nullable_bytes(field)

    def compact_bytes(self, field: str = "bytes") -> memoryview:
        self._note(field, "uvarint")
        return super().compact_bytes(field)

    def compact_nullable_bytes(self, field: str = "bytes") -> memoryview | None:
        self._note(field, "uvarint")
        return super().compact_nullable_bytes(field)


def inflate_frame_size(by: int) -> Rewrite:
    """The size prefix claims ``by`` more bytes than the frame has (capped at ``2**31 - 1``);
    the frame itself is forwarded unchanged, so the client waits for bytes that never come
    (or, above its frame limit, rejects the size at once)."""

    def rewrite(frame: bytes, request: RequestHeader) -> bytes:
        (size,) = _SIZE.unpack_from(frame)
        return _SIZE.pack(min(size + by, _INT32_MAX)) + frame[4:]

    return rewrite


def truncate_body(keep: int) -> Rewrite:
    """The response cut to its first ``keep`` bytes after the size prefix (negative: all but
    the last ``-keep``), with a size prefix that matches the cut: a well-framed response whose
    fields end early."""

    def rewrite(frame: bytes, request: RequestHeader) -> bytes:
        return _frame(frame[4:][:keep])

    return rewrite


def replace_correlation_id(correlation_id: int | None = None) -> Rewrite:
    """The response header carries ``correlation_id`` (default: the id sent plus ``2**30``,
    modulo ``2**31``, an id the client has not used) instead of the one the client sent."""

    def rewrite(frame: bytes, request: RequestHeader) -> bytes:
        new = correlation_id
        if new is None:
            new = (request.correlation_id + (1 << 30)) & _INT32_MAX
        return frame[:4] + struct.pack(">i", new) + frame[8:]

    return rewrite


def set_length(field: str, value: int, *, occurrence: int = 0) -> Rewrite:
    """The length or count prefix of a string, bytes, records or array field replaced by
    ``value`` (``-1``: null), everything else left as the broker sent it.

    Args:
        field: the field as our schemas name it, ``<Struct>.<field>``: e.g.
            ``"FetchResponse.responses"``, ``"FetchableTopicResponse.partitions"``,
            ``"FetchableTopicResponse.topic"``, ``"PartitionData.records"``.
        value: the count or length to claim, e.g. ``2**31 - 1``; written in the field's own
            encoding (int16, int32, or compact ``N+1`` unsigned varint).
        occurrence: which occurrence of the field in the response (0: the first).

    The rewrite raises ``ValueError`` (recorded in :attr:`FaultProxy.errors`) when the response
    has no such field or ``value`` does not fit its encoding.
    """

    def rewrite(frame: bytes, request: RequestHeader) -> bytes:
        payload = frame[4:]
        response_type, start = _body_start(payload, request)
        reader = _LocatingReader(payload, start)
        decode(response_type, reader, request.api_version)
        hits = [(pos, enc) for name, pos, enc in reader.lengths if name == field]
        if len(hits) <= occurrence:
            raise ValueError(f"{response_type.__name__} has no occurrence {occurrence} of {field}")
        pos, encoding = hits[occurrence]
        if encoding == "uvarint":
            old = Reader(payload, pos)
            old.uvarint(field)
            width = old.position - pos
            w = Writer()
            w.uvarint(value + 1, field)
            new = w.getvalue()
        else:
            width = 2 if encoding == "int16" else 4
            new = struct.pack(">h" if width == 2 else ">i", value)
        return _frame(payload[:pos] + new + payload[pos + width :])

    return rewrite


def edit_response(edit: Callable[[Any], Any]) -> Rewrite:
    """The response decoded with our schema, passed to ``edit`` (which returns the message to
    send, e.g. a ``dataclasses.replace`` of it) and encoded again at the same version, behind
    the original response header (unknown tagged fields are dropped)."""

    def rewrite(frame: bytes, request: RequestHeader) -> bytes:
        payload = frame[4:]
        response_type, start = _body_start(payload, request)
        response = decode(response_type, Reader(payload, start), request.api_version)
        return _frame(payload[:start] + encode(edit(response), request.api_version))

    return rewrite
