"""A hand-written HTTP server staging the faults a real registry does not make on request.

It never replaces the real registry (Apicurio, the ``schema_registry`` fixture): tests use it
for a 500, an answer slower than the timeout, a body beyond the size bound, a trickle, a body
that is not JSON, an unasked-for compression, a redirect, a 401, and a GUID answer (Apicurio
3.3 serves no ``/schemas/guids``).

Each route is a function ``(handler) -> None`` writing the whole answer; ``hits`` counts the
requests per path.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


def answer(handler: BaseHTTPRequestHandler, status: int, body: object, **headers: str) -> None:
    """Write ``body`` (JSON unless bytes) with ``status`` and ``headers``."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(data)


def slow(seconds: float, then: Route) -> Route:
    """Wait ``seconds`` before answering as ``then`` does."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        then(handler)

    return route


def trickle(byte_every_s: float, total: int) -> Route:
    """Headers at once, then one byte of ``total`` every ``byte_every_s`` seconds."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        for _ in range(total):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(byte_every_s)

    return route


def endless_chunked(handler: BaseHTTPRequestHandler) -> None:
    """A chunked body with no Content-Length that goes on (up to 64 MiB)."""
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b"[" + b"1," * 32_000 + b"1]"
    try:
        for _ in range(1_000):
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    except OSError:  # the client stopped reading: as intended
        pass


def sequence(*routes: Route) -> Route:
    """Answer the n-th request as ``routes[n]`` (the last one from then on)."""
    calls = [0]

    def route(handler: BaseHTTPRequestHandler) -> None:
        index = min(calls[0], len(routes) - 1)
        calls[0] += 1
        routes[index](handler)

    return route


class FakeRegistry:
    """The server: ``routes`` maps ``"GET /path"`` to a :data:`Route`; others get a 404."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.hits: Counter[str] = Counter()
        self.auth: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                key = f"{self.command} {self.path}"
                fake.hits[key] += 1
                fake.auth.append(self.headers.get("Authorization"))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                route = fake.routes.get(key)
                if route is None:
                    answer(self, 404, {"error_code": 40403, "message": f"no route {key}"})
                else:
                    # the client may give up first: what a timeout test wants
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        route(self)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def fake_registry(routes: dict[str, Route]) -> Iterator[FakeRegistry]:
    """A started :class:`FakeRegistry`, shut down afterwards."""
    fake = FakeRegistry(routes)
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()
