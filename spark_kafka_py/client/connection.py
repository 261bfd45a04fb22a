"""One blocking TCP connection to one Kafka broker.

Drives the sans-I/O :class:`~spark_kafka_py.protocol.framing.KafkaProtocol` over a socket:
connects lazily on the first :meth:`BrokerConnection.send`, then negotiates API versions with
ApiVersions (API key 18, KIP-511: we send our software name and version; if the broker answers
UNSUPPORTED_VERSION we retry with the highest ApiVersions version it advertises, or v0, as
Kafka's Java client does). Each request is then sent at ``min(our max, broker max)``.

Errors: a timeout raises :class:`KafkaTimeoutError`, a socket error
:class:`KafkaConnectionError`, malformed bytes :class:`KafkaProtocolError`; after any of
them the connection is closed and the next :meth:`~BrokerConnection.send` reconnects.

TLS and SASL: ``socket_factory`` opens the (TLS) socket (see
:func:`spark_kafka_py.client.security.ssl_socket_factory`) and ``authenticator`` runs SASL after
ApiVersions and before the first request, and again before the session expires (KIP-368).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import random
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, Literal, Protocol, TypeVar, cast, overload

from spark_kafka_py.client.security import TlsError, looks_like_tls, tls_error_message
from spark_kafka_py.errors import (
    KafkaConnectionError,
    KafkaProtocolError,
    KafkaTimeoutError,
    LocalProtocolError,
    UnsupportedByBrokerError,
)
from spark_kafka_py.protocol.error_codes import UNSUPPORTED_VERSION, raise_for_error
from spark_kafka_py.protocol.features import (
    METADATA_VERSION_FEATURE,
    api_requirement,
    release_of_metadata_level,
)
from spark_kafka_py.protocol.framing import DEFAULT_MAX_FRAME_BYTES, KafkaProtocol
from spark_kafka_py.protocol.messages.api_versions import (
    API_VERSIONS_KEY,
    ApiVersionsRequest,
)
from spark_kafka_py.protocol.schema import Request, Response

__all__ = [
    "CLIENT_SOFTWARE_NAME",
    "CLIENT_SOFTWARE_VERSION",
    "Authenticator",
    "BrokerConnection",
    "Exchange",
    "Pipelined",
    "SocketFactory",
]

#: KIP-511 client software name and version sent in ApiVersions v3+.
CLIENT_SOFTWARE_NAME = "spark-kafka-py"
try:
    CLIENT_SOFTWARE_VERSION = importlib.metadata.version("spark-kafka-py")
except importlib.metadata.PackageNotFoundError:  # running from a source tree
    CLIENT_SOFTWARE_VERSION = "unknown"

#: ``socket_factory(host, port, timeout_s) -> connected socket``.
SocketFactory = Callable[[str, int, float], socket.socket]

#: the response class of the request being sent (``Request[R]`` -> ``R``)
R = TypeVar("R", bound=Response)


class Exchange(Protocol):
    """``exchange(request) -> response``: sends one request on the connection being set up
    (during SASL) and returns its response, typed as the request's (``Request[R]`` -> ``R``).

    Raises: as :meth:`BrokerConnection.send`.
    """

    def __call__(self, request: Request[R], /) -> R: ...


#: ``authenticator(exchange, broker_description) -> session lifetime ms (0: none)``, run after
#: ApiVersions; ``exchange(request)`` sends one request and returns its response
#: (see :func:`spark_kafka_py.client.sasl.authenticate`).
Authenticator = Callable[[Exchange, str], int]

#: KIP-368: re-authenticate at 85-95% of the session lifetime the broker returned, as the
#: Java client does (``SaslClientAuthenticator``); the fraction is drawn per session.
_REAUTH_FRACTION = (0.85, 0.95)

#: :meth:`BrokerConnection.receive` waits for bytes without the connection's lock, and looks
#: again at least this often (s) for a closed connection or a response read by another thread.
_RECEIVE_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class Pipelined(Generic[R]):
    """A request written by :meth:`BrokerConnection.send_pipelined`, its response not read yet.

    Generic in the response class (``Pipelined[ProduceResponse]``): what
    :meth:`BrokerConnection.receive` returns for it.

    Attributes:
        correlation_id: the id in the request header.
        generation: which socket of the connection carried it (a reconnect starts a new one;
            the response of a request written on a closed socket never comes).
        name: ``"<Request> v<version>"`` for error messages.
        version: the negotiated version (the response is decoded at it).
        deadline: ``time.monotonic()`` after which the response is late.
        timeout_ms: the bound the deadline came from (ms, for messages).
    """

    correlation_id: int
    generation: int
    name: str
    version: int
    deadline: float
    timeout_ms: int


def _plain_socket(host: str, port: int, timeout_s: float) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class BrokerConnection:
    """A lazily opened, blocking, thread-safe (one lock) connection to one broker.

    Args:
        host, port: the broker's advertised listener.
        client_id: ``client.id`` sent in request headers.
        request_timeout_ms: default bound (ms) on one request's round trip.
        connect_timeout_ms: bound (ms) on opening the TCP connection.
        max_frame_bytes: largest response accepted (bytes).
        node_id: the broker id, when known (used in error messages only).
        socket_factory: opens the socket (seam for TLS); default plain TCP with TCP_NODELAY.
        reconnect_backoff_ms: after a failure, a reconnect waits until this long (ms) has
            passed since the failure (``reconnect.backoff.ms``).
        authenticator: SASL, run after ApiVersions on every new connection and again before
            the session lifetime the broker returned runs out (KIP-368); ``None``: no SASL.

    The constructor opens nothing; :meth:`send` (or :meth:`connect`) does.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str | None = "spark-kafka-py",
        request_timeout_ms: int = 30_000,
        connect_timeout_ms: int = 10_000,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        node_id: int | None = None,
        socket_factory: SocketFactory | None = None,
        reconnect_backoff_ms: int = 50,
        authenticator: Authenticator | None = None,
    ):
        self.host = host
        self.port = port
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.connect_timeout_ms = connect_timeout_ms
        self.max_frame_bytes = max_frame_bytes
        self.node_id = node_id
        self._socket_factory = socket_factory or _plain_socket
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._protocol = KafkaProtocol(client_id, max_frame_bytes=max_frame_bytes)
        #: responses of pipelined requests read by someone else, by correlation id
        self._stash: dict[int, Response] = {}
        #: incremented whenever the socket is closed (see :class:`Pipelined`)
        self._generation = 0
        self._api_versions: dict[int, tuple[int, int]] = {}
        #: finalized feature levels of the cluster (ApiVersions v3+, KIP-584): name -> max level
        self._finalized_features: dict[str, int] = {}
        self.reconnect_backoff_ms = reconnect_backoff_ms
        self._last_failure: float | None = None
        self._authenticator = authenticator
        self._reauth_at: float | None = None
        #: how many SASL authentications succeeded on this object (incl. re-authentications)
        self.authentications = 0

    # -- naming ---------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``host:port`` (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __repr__(self) -> str:
        state = "connected" if self._sock is not None else "closed"
        return f"BrokerConnection({self.description}, {state})"

    @property
    def description(self) -> str:
        """The broker as error messages name it: ``broker <node id> at host:port``, or
        ``broker host:port`` for a bootstrap server (node id not known)."""
        if self.node_id is None:
            return f"broker {self.address}"
        return f"broker {self.node_id} at {self.address}"

    # -- state ----------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """True while a socket is open (ApiVersions done)."""
        return self._sock is not None

    @property
    def in_flight_requests(self) -> int:
        """Requests written to the broker whose responses are not read yet (pipelined ones
        included): the load Java's ``NetworkClient.leastLoadedNode`` compares."""
        return self._protocol.in_flight_count

    @property
    def api_versions(self) -> dict[int, tuple[int, int]]:
        """Broker's supported ``{api_key: (min_version, max_version)}`` (empty until connected)."""
        return dict(self._api_versions)

    @property
    def broker_release(self) -> str | None:
        """The broker's Kafka release line as far as ApiVersions tells (``"3.6"``): the line of
        the cluster's finalized ``metadata.version`` (a lower bound: a cluster upgraded without
        raising it runs newer brokers); ``None`` before connecting or when not reported."""
        level = self._finalized_features.get(METADATA_VERSION_FEATURE)
        return None if level is None else release_of_metadata_level(level)

    def connect(self) -> None:
        """Open the connection and negotiate API versions, if not already done.

        Raises:
            KafkaConnectionError, KafkaTimeoutError, KafkaProtocolError, KafkaApiError.
        """
        with self._lock:
            self._ensure_connected(time.monotonic() + self.request_timeout_ms / 1000)

    def close(self) -> None:
        """Close the socket (idempotent). The next :meth:`send` reconnects."""
        with self._lock:
            self._close(failed=False)

    def __enter__(self) -> BrokerConnection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _close(self, failed: bool = True) -> None:
        if failed and self._sock is not None:
            self._last_failure = time.monotonic()
        sock, self._sock = self._sock, None
        self._reauth_at = None
        self._protocol.reset()
        self._stash.clear()
        self._generation += 1
        self._api_versions = {}
        self._finalized_features = {}
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    # -- versions -------------------------------------------------------------------------
    def pick_version(
        self, request_type: type[Request[Response]], max_version: int | None = None
    ) -> int:
        """``min(our MAX_VERSION, broker max, max_version)`` for ``request_type``.

        Raises:
            LocalProtocolError: not connected yet.
            UnsupportedByBrokerError: the broker lacks the API, or the ranges do not overlap;
                the message names the feature needing the API and the release it needs
                (:data:`~spark_kafka_py.protocol.features.API_SINCE`), the broker's release
                line from its ``metadata.version`` when reported, and what the broker offers.
        """
        broker = self._api_versions.get(request_type.API_KEY)
        name = request_type.__name__
        if not self._api_versions:
            raise LocalProtocolError(f"{name}: API versions of {self.description} not known yet")
        release = self.broker_release
        who = self.description + (
            f" (Kafka {release} or later, from its metadata.version)" if release else ""
        )
        needs = api_requirement(request_type.API_KEY)
        needs = f": {needs}" if needs else ""
        if broker is None:
            raise UnsupportedByBrokerError(
                f"{who} does not support {name} (API key {request_type.API_KEY}; its ApiVersions "
                f"lists {len(self._api_versions)} APIs, not this one){needs}",
                api_name=name,
                api_key=request_type.API_KEY,
                broker_versions=None,
                broker_release=release,
            )
        low, high = broker
        version = min(request_type.MAX_VERSION, high)
        if max_version is not None:
            version = min(version, max_version)
        if version < max(request_type.MIN_VERSION, low):
            cap = "" if max_version is None else f" (capped at {max_version})"
            raise UnsupportedByBrokerError(
                f"no common version of {name} (API key {request_type.API_KEY}): we support "
                f"{request_type.MIN_VERSION}-{request_type.MAX_VERSION}{cap}, {who} supports "
                f"{low}-{high}{needs}",
                api_name=name,
                api_key=request_type.API_KEY,
                broker_versions=broker,
                broker_release=release,
            )
        return version

    # -- requests -------------------------------------------------------------------------
    def send(
        self, request: Request[R], *, timeout_ms: int | None = None, max_version: int | None = None
    ) -> R:
        """Send ``request`` and wait for its response (connecting first if needed).

        Args:
            request: any request message (a ``Request[R]``, e.g. a ``MetadataRequest`` is a
                ``Request[MetadataResponse]``); the version is negotiated.
            timeout_ms: bound on this round trip (default ``request_timeout_ms``); give more
                than a Fetch's ``max_wait_ms``.
            max_version: cap on the negotiated version (e.g. 12 for a Fetch by topic name when
                the topic id is unknown).

        Returns:
            the decoded response, an ``R``: an instance of ``type(request).response_type``.

        Raises:
            LocalProtocolError: no common version, or the request cannot be encoded.
            KafkaTimeoutError: no complete response in time (connection closed).
            KafkaConnectionError: connecting or socket I/O failed (connection closed).
            KafkaProtocolError: malformed response (connection closed).
            KafkaApiError: ApiVersions negotiation failed (connection closed).
        """
        timeout = self.request_timeout_ms if timeout_ms is None else timeout_ms
        with self._lock:
            deadline = time.monotonic() + timeout / 1000
            self._ensure_connected(deadline)
            if self._reauth_at is not None and time.monotonic() >= self._reauth_at:
                try:
                    self._authenticate(deadline)
                except BaseException:
                    self._close()
                    raise
            version = self.pick_version(type(request), max_version)
            return request.response_of(self._round_trip(request, version, deadline, timeout))

    @overload
    def send_pipelined(
        self,
        request: Request[R],
        *,
        expect_response: Literal[True] = True,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> Pipelined[R]: ...

    @overload
    def send_pipelined(
        self,
        request: Request[R],
        *,
        expect_response: bool,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> Pipelined[R] | None: ...

    def send_pipelined(
        self,
        request: Request[R],
        *,
        expect_response: bool = True,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> Pipelined[R] | None:
        """Write ``request`` (connecting first if needed) without waiting for its response.

        Kafka answers the requests of one connection in order, so several requests may be in
        flight at once (the producer's ``max.in.flight.requests.per.connection``); read each
        response with :meth:`receive`. :meth:`send` may be used on the same connection
        meanwhile: responses it reads for pipelined requests are kept for :meth:`receive`.

        Args:
            request: any request message; the version is negotiated as in :meth:`send`.
            expect_response: ``False`` for a request the broker never answers (Produce with
                ``acks=0``): nothing is registered and ``None`` is returned once written.
            timeout_ms: bound (ms) from now on writing it and on its response (default
                ``request_timeout_ms``).
            max_version: cap on the negotiated version.

        Returns:
            a :class:`Pipelined` handle for :meth:`receive` (a ``Pipelined[R]`` for a
            ``Request[R]``), or ``None`` (no response expected; only when
            ``expect_response`` is not ``True``).

        Raises:
            as :meth:`send` (the connection is closed on any I/O failure, which also fails
            every request still in flight on it).
        """
        timeout = self.request_timeout_ms if timeout_ms is None else timeout_ms
        with self._lock:
            deadline = time.monotonic() + timeout / 1000
            self._ensure_connected(deadline)
            # KIP-368 re-authentication also with requests in flight: the broker answers a
            # connection's requests in order, so their responses come first and are kept
            if self._reauth_at is not None and time.monotonic() >= self._reauth_at:
                try:
                    self._authenticate(deadline)
                except BaseException:
                    self._close()
                    raise
            version = self.pick_version(type(request), max_version)
            name = f"{type(request).__name__} v{version}"
            correlation_id, data = self._protocol.send_request(
                request, version, expect_response=expect_response
            )
            sock = self._sock
            assert sock is not None
            try:
                self._set_timeout(sock, deadline)
                sock.sendall(data)
            except TimeoutError:
                self._close()
                raise KafkaTimeoutError(
                    f"writing {name} to {self.description} took more than {timeout} ms"
                ) from None
            except OSError as exc:
                self._close()
                raise KafkaConnectionError(
                    f"{name} to {self.description} failed: {exc}",
                    retriable=not isinstance(exc, ssl.SSLError)
                    or isinstance(exc, ssl.SSLEOFError | ssl.SSLZeroReturnError),
                ) from exc
            if not expect_response:
                return None
            return Pipelined(correlation_id, self._generation, name, version, deadline, timeout)

    def receive(self, pending: Pipelined[R]) -> R:
        """Wait for the response of a request written by :meth:`send_pipelined`.

        Responses come in the order the requests were written; reading a later one first
        keeps the earlier ones for their own :meth:`receive`. The lock is released between
        socket reads, so other threads may send on the connection meanwhile.

        Returns:
            the decoded response, an ``R`` for a ``Pipelined[R]`` (the response class of the
            request :meth:`send_pipelined` wrote).

        Raises:
            KafkaConnectionError: the connection was closed since the request was written
                (its response will never come), or broke while reading (connection closed).
            KafkaTimeoutError: no response by ``pending.deadline`` (connection closed: a late
                response must not be taken for another request's).
            KafkaProtocolError: malformed response (connection closed).
        """
        cid = pending.correlation_id
        while True:
            with self._lock:
                if pending.generation != self._generation or self._sock is None:
                    raise KafkaConnectionError(
                        f"the connection to {self.description} was closed before the response "
                        f"to {pending.name} arrived"
                    )
                if cid in self._stash:
                    # decoded with the response class of the request that was written
                    return cast("R", self._stash.pop(cid))
                remaining = pending.deadline - time.monotonic()
                if remaining <= 0:
                    self._close()
                    raise KafkaTimeoutError(
                        f"{pending.name} to {self.description} got no response within "
                        f"{pending.timeout_ms} ms"
                    )
                sock = self._sock
            # wait for bytes without the lock: others may write requests meanwhile
            if not (isinstance(sock, ssl.SSLSocket) and sock.pending()):
                # a socket closed meanwhile fails select; the recv below (or the generation
                # check) then reports it
                with contextlib.suppress(OSError, ValueError):
                    select.select([sock], [], [], min(remaining, _RECEIVE_POLL_S))
            with self._lock:
                if pending.generation != self._generation or self._sock is not sock:
                    continue
                if cid in self._stash:  # read by a send() meanwhile
                    # decoded with the response class of the request that was written
                    return cast("R", self._stash.pop(cid))
                try:
                    sock.settimeout(0.0)  # only what has arrived; never block under the lock
                    n, _ = self._recv_into(sock)
                except (BlockingIOError, ssl.SSLWantReadError, TimeoutError):
                    continue  # nothing yet (or taken by another reader)
                except OSError as exc:
                    self._close()
                    raise KafkaConnectionError(
                        f"{pending.name} to {self.description} failed: {exc}"
                    ) from exc
                if not n:
                    self._close()
                    raise KafkaConnectionError(
                        f"{self.description} closed the connection before answering {pending.name}"
                    )
                try:
                    for got_id, response in self._protocol.bytes_received(n):
                        self._stash[got_id] = response
                except KafkaProtocolError as exc:
                    self._close()
                    raise KafkaProtocolError(
                        f"{exc} (in {pending.name} from {self.description})"
                    ) from exc
                if cid in self._stash:
                    # decoded with the response class of the request that was written
                    return cast("R", self._stash.pop(cid))

    def _ensure_connected(self, deadline: float) -> None:
        if self._sock is not None:
            return
        if self._last_failure is not None:
            wait = self._last_failure + self.reconnect_backoff_ms / 1000 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        try:
            self._sock = self._socket_factory(self.host, self.port, self.connect_timeout_ms / 1000)
        except TimeoutError:
            self._last_failure = time.monotonic()
            raise KafkaTimeoutError(
                f"connecting to {self.description} timed out after {self.connect_timeout_ms} ms"
            ) from None
        except OSError as exc:
            self._last_failure = time.monotonic()
            raise KafkaConnectionError(
                f"cannot connect to {self.description}: {exc}",
                retriable=not isinstance(exc, TlsError),
            ) from exc
        try:
            self._negotiate(deadline)
            self._authenticate(deadline)
        except BaseException:
            self._close()
            raise

    def _negotiate(self, deadline: float) -> None:
        version = ApiVersionsRequest.MAX_VERSION
        timeout = self.request_timeout_ms
        request = ApiVersionsRequest(
            client_software_name=CLIENT_SOFTWARE_NAME,
            client_software_version=CLIENT_SOFTWARE_VERSION,
        )
        tried: set[int] = set()
        while True:
            tried.add(version)
            response = request.response_of(self._round_trip(request, version, deadline, timeout))
            if response.error_code == UNSUPPORTED_VERSION:
                advertised = {k.api_key: k.max_version for k in response.api_keys}
                retry = min(advertised.get(API_VERSIONS_KEY, 0), ApiVersionsRequest.MAX_VERSION)
                if retry in tried:
                    retry = 0
                if retry not in tried:
                    version = retry
                    continue
            raise_for_error(response.error_code, f"in ApiVersions v{version} to {self.description}")
            self._api_versions = {
                k.api_key: (k.min_version, k.max_version) for k in response.api_keys
            }
            self._finalized_features = {
                f.name: f.max_version_level for f in response.finalized_features
            }
            return

    def _authenticate(self, deadline: float) -> None:
        """SASL (after ApiVersions, before any other request); nothing without an authenticator.

        Also re-authentication (KIP-368): SaslHandshake + SaslAuthenticate again on the open
        connection, scheduled at 85-95% of the session lifetime the broker returned.
        """
        if self._authenticator is None:
            return

        def exchange(request: Request[R], /) -> R:
            version = self.pick_version(type(request))
            response = self._round_trip(request, version, deadline, self.request_timeout_ms)
            return request.response_of(response)

        lifetime_ms = self._authenticator(exchange, self.description)
        self.authentications += 1
        if lifetime_ms > 0:
            fraction = random.uniform(*_REAUTH_FRACTION)
            self._reauth_at = time.monotonic() + lifetime_ms * fraction / 1000
        else:
            self._reauth_at = None

    def _round_trip(
        self, request: Request[Response], version: int, deadline: float, timeout_ms: int
    ) -> Response:
        """Write ``request`` at ``version`` and read until its response (responses of pipelined
        requests read meanwhile are stashed). Raises as :meth:`send`; closes on failure."""
        sock = self._sock
        if sock is None:  # pragma: no cover - guarded by callers
            raise KafkaConnectionError(f"not connected to {self.description}")
        name = f"{type(request).__name__} v{version}"
        correlation_id, data = self._protocol.send_request(request, version)  # may raise Local
        try:
            self._set_timeout(sock, deadline)
            sock.sendall(data)
            while True:
                self._set_timeout(sock, deadline)
                # before ApiVersions, the bytes that came tell a TLS or HTTP listener
                n, chunk = self._recv_into(sock, peek=0 if self._api_versions else 64)
                if not n:
                    raise KafkaConnectionError(
                        f"{self.description} closed the connection during {name}"
                    )
                if not self._api_versions and looks_like_tls(chunk):
                    raise KafkaConnectionError(
                        f"{self.description} answered {name} with TLS: it is a TLS listener; "
                        "set kafka.security.protocol to SSL or SASL_SSL",
                        retriable=False,
                    )
                if not self._api_versions and chunk.startswith(b"HTTP/"):
                    status = bytes(chunk[:64]).split(b"\r\n", 1)[0].decode("ascii", "replace")
                    raise KafkaConnectionError(
                        f"{self.description} answered {name} with HTTP ({status!r}): it is not "
                        "a Kafka listener; check kafka.bootstrap.servers",
                        retriable=False,
                    )
                result: Response | None = None
                for got_id, response in self._protocol.bytes_received(n):
                    if got_id == correlation_id:
                        result = response
                    else:  # a pipelined request's response: kept for its receive()
                        self._stash[got_id] = response
                if result is not None:
                    return result
        except TimeoutError:
            self._close()
            raise KafkaTimeoutError(
                f"{name} to {self.description} got no response within {timeout_ms} ms"
            ) from None
        except KafkaProtocolError as exc:
            self._close()
            raise KafkaProtocolError(f"{exc} (in {name} from {self.description})") from exc
        except KafkaConnectionError:
            self._close()
            raise
        except OSError as exc:
            self._close()
            tls = isinstance(exc, ssl.SSLError)
            detail = tls_error_message(exc) if isinstance(exc, ssl.SSLError) else str(exc)
            raise KafkaConnectionError(
                f"{name} to {self.description} failed: {detail}",
                # A TLS alert (e.g. no client certificate) is final; an EOF may be a crash.
                retriable=not tls or isinstance(exc, ssl.SSLEOFError | ssl.SSLZeroReturnError),
            ) from exc
        except BaseException:
            self._close()
            raise

    def _recv_into(self, sock: socket.socket, peek: int = 0) -> tuple[int, bytes]:
        """One ``recv_into`` straight into the protocol's receive buffer (plain or TLS socket):
        the bytes land where they are decoded (see :meth:`KafkaProtocol.recv_buffer`); the view
        is released at once so that it keeps no frame buffer from being reused.

        Returns:
            ``(n, head)``: the byte count (0: the peer closed; pass it to ``bytes_received``)
            and a copy of the first ``min(n, peek)`` of them.
        """
        view = self._protocol.recv_buffer()
        try:
            n = sock.recv_into(view)
            return n, bytes(view[: min(n, peek)]) if peek else b""
        finally:
            view.release()

    @staticmethod
    def _set_timeout(sock: socket.socket, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
