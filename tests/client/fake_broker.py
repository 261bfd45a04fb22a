"""A scripted in-process broker on 127.0.0.1 for connection tests (tests only).

It decodes request headers and bodies with our own schemas and answers with whatever the
test's handler returns: a response message, ``None`` (stay silent), ``CLOSE`` (drop the
connection) or raw ``bytes`` (sent as is).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

from spark_kafka_py.protocol.messages import REQUEST_TYPES
from spark_kafka_py.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsResponse,
)
from spark_kafka_py.protocol.primitives import Reader
from spark_kafka_py.protocol.schema import decode, encode

CLOSE = object()
Handler = Callable[[Any, int], Any]


def api_versions_for(*request_types: type) -> ApiVersionsResponse:
    keys = [ApiVersion(api_key=18, min_version=0, max_version=4)]
    keys += [
        ApiVersion(api_key=t.API_KEY, min_version=t.MIN_VERSION, max_version=t.MAX_VERSION)
        for t in request_types
    ]
    return ApiVersionsResponse(api_keys=tuple(keys))


class FakeBroker:
    """Accepts connections and answers requests with ``handlers[api_key](request, version)``."""

    def __init__(self, handlers: dict[int, Handler]):
        self.handlers = handlers
        self.requests: list[tuple[int, int, Any]] = []  # (api_key, version, request)
        self.client_ids: list[str | None] = []
        self.connections = 0
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen()
        self.host, self.port = self._server.getsockname()
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop = True
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._server.close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    @staticmethod
    def _recv_exact(conn: socket.socket, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _client(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    head = self._recv_exact(conn, 4)
                    if head is None:
                        return
                    payload = self._recv_exact(conn, struct.unpack(">i", head)[0])
                except OSError:
                    return
                if payload is None:
                    return
                r = Reader(payload)
                api_key, version, cid = r.int16(), r.int16(), r.int32()
                self.client_ids.append(r.nullable_string())
                request_type = REQUEST_TYPES[api_key]
                if request_type.is_flexible(version):
                    r.skip_tagged_fields()
                try:
                    request = decode(request_type, r, version)
                except Exception:  # an unsupported version: answer like Kafka, v0 error
                    request = None
                self.requests.append((api_key, version, request))
                answer = self.handlers[api_key](request, version)
                if answer is None:
                    continue
                if answer is CLOSE:
                    return
                if isinstance(answer, bytes):
                    conn.sendall(answer)
                    continue
                answer_version = 0 if answer is not None and request is None else version
                body = encode(answer, answer_version)
                header = struct.pack(">i", cid)
                if api_key != 18 and request_type.response_type.is_flexible(version):
                    header += b"\x00"
                conn.sendall(struct.pack(">i", len(header) + len(body)) + header + body)
