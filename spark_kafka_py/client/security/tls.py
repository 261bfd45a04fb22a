"""TLS sockets: the client :class:`ssl.SSLContext`, the TLS socket factory and clear
messages for TLS failures.

TLS goes through Python's :mod:`ssl` (TLS 1.2 or newer, hostname verification on by default,
as Kafka's ``ssl.endpoint.identification.algorithm=https``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import socket
import ssl
import tempfile
import time
from collections.abc import Callable

from spark_kafka_py.client.security.config import SslConfig

__all__ = [
    "TlsError",
    "looks_like_tls",
    "ssl_context",
    "ssl_socket_factory",
    "tls_error_message",
]


class TlsError(OSError):
    """A TLS connection could not be set up; the message says why and what to check.

    An :class:`OSError` so that :class:`~spark_kafka_py.client.connection.BrokerConnection`
    reports it as a :class:`~spark_kafka_py.errors.KafkaConnectionError` naming the broker.
    """


@functools.lru_cache(maxsize=16)
def ssl_context(config: SslConfig) -> ssl.SSLContext:
    """A client :class:`ssl.SSLContext` for ``config`` (cached per process and config).

    TLS 1.2 or newer, certificates always verified against ``ca_pem`` (or the system's CAs),
    host names checked unless ``check_hostname`` is false; the client certificate and key
    loaded for mutual TLS (through a private temporary file removed at once: Python's
    ``ssl`` loads keys only from files).
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = config.check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED
    if config.ca_pem is not None:
        ctx.load_verify_locations(cadata=config.ca_pem)
    else:
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if config.cert_chain_pem is not None and config.key_pem is not None:
        fd, path = tempfile.mkstemp(prefix="spark-kafka-py-key-", suffix=".pem")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(config.key_pem.reveal_str())
                f.write(config.cert_chain_pem)
            ctx.load_cert_chain(path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
    return ctx


#: First bytes of a TLS record (content types 20-23, major version 3): what a TLS listener
#: answers with, e.g. an alert (RFC 8446 section 5.1).
_TLS_RECORD_TYPES = (20, 21, 22, 23)


def ssl_socket_factory(
    config: SslConfig,
) -> Callable[[str, int, float], socket.socket]:
    """A ``socket_factory(host, port, timeout_s)`` opening TCP then a TLS session.

    The handshake runs within ``timeout_s``. Failures raise :class:`TlsError` saying why:
    untrusted certificate, host name mismatch, expired certificate, the listener is not TLS
    (the broker closed the connection during the handshake), or a client certificate the
    broker rejected.
    """

    def factory(host: str, port: int, timeout_s: float) -> socket.socket:
        ctx = ssl_context(config)
        deadline = time.monotonic() + timeout_s
        raw = socket.create_connection((host, port), timeout=timeout_s)
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            raw.settimeout(max(0.001, deadline - time.monotonic()))
            tls = ctx.wrap_socket(raw, server_hostname=host, do_handshake_on_connect=False)
            tls.do_handshake()
            return tls
        except ssl.SSLCertVerificationError as exc:
            raw.close()
            raise TlsError(_verify_message(exc, host, config)) from None
        except ssl.SSLError as exc:
            raw.close()
            raise TlsError(tls_error_message(exc)) from None
        except TimeoutError:
            raw.close()
            raise
        except OSError as exc:
            raw.close()
            if exc.errno in (errno.ECONNRESET, errno.EPIPE) or isinstance(
                exc, ConnectionResetError
            ):
                raise TlsError(_not_tls_message()) from None
            raise

    return factory


def _verify_message(exc: ssl.SSLCertVerificationError, host: str, config: SslConfig) -> str:
    code = exc.verify_code
    detail = exc.verify_message
    where = (
        "kafka.ssl.truststore.location/kafka.ssl.truststore.certificates"
        if config.ca_pem is not None
        else "the system's CA certificates (no kafka.ssl.truststore.* given)"
    )
    if code == 62 or "hostname" in str(detail).lower() or "IP address mismatch" in str(detail):
        return (
            f"TLS: the broker's certificate does not match the host name {host!r} ({detail}); "
            "connect by a name the certificate lists, or set "
            "kafka.ssl.endpoint.identification.algorithm= (empty) to skip host name checks"
        )
    if code == 10:
        return f"TLS: the broker's certificate has expired ({detail})"
    if code == 9:
        return f"TLS: the broker's certificate is not yet valid ({detail})"
    return f"TLS: the broker's certificate is not trusted by {where} ({detail})"


def _not_tls_message() -> str:
    return (
        "TLS handshake failed: the broker closed the connection during the handshake; the "
        "listener is probably not a TLS listener (check kafka.security.protocol: PLAINTEXT or "
        "SASL_PLAINTEXT for a plaintext listener), or it rejected our client certificate"
    )


def tls_error_message(exc: ssl.SSLError) -> str:
    """A clear sentence for an :class:`ssl.SSLError` (handshake or a later TLS alert)."""
    reason = getattr(exc, "reason", None) or ""
    text = str(exc)
    if isinstance(exc, ssl.SSLEOFError) or reason in ("UNEXPECTED_EOF_WHILE_READING",):
        return _not_tls_message()
    if reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"):
        return (
            f"TLS handshake failed ({reason}): the broker did not answer with TLS; the listener "
            "is probably plaintext (check kafka.security.protocol)"
        )
    if "CERTIFICATE_REQUIRED" in text or "BAD_CERTIFICATE" in text or "UNKNOWN_CA" in text:
        return (
            f"TLS: the broker rejected our client certificate ({reason or text}); the listener "
            "requires mutual TLS: check kafka.ssl.keystore.* and that the broker trusts its CA"
        )
    return f"TLS handshake failed: {reason or text}"


def looks_like_tls(data: bytes) -> bool:
    """Whether ``data`` (the first bytes a broker sent) starts like a TLS record."""
    return len(data) >= 2 and data[0] in _TLS_RECORD_TYPES and data[1] == 3
