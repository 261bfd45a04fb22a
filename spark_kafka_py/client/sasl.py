"""SASL authentication of one connection: PLAIN, SCRAM-SHA-256/512, OAUTHBEARER, GSSAPI.

The exchange (KIP-152): after ApiVersions, SaslHandshake v1 names the mechanism; the broker
answers with its enabled mechanisms (UNSUPPORTED_SASL_MECHANISM if ours is not one of them);
then each SASL token travels in a SaslAuthenticate request, whose response carries the
server's token, an error code (SASL_AUTHENTICATION_FAILED with a message on bad credentials)
and, from v1 (KIP-368), the session lifetime in ms after which the broker closes the
connection unless the client authenticates again on it.

Mechanisms are sans-I/O: :class:`SaslMechanism` turns server tokens into client tokens.

- PLAIN: RFC 4616 (``authzid NUL authcid NUL passwd``). The server sends nothing back (Kafka's
  ``PlainSaslServer`` answers an empty token); whatever it sends is ignored, as the Java
  client does.
- SCRAM-SHA-256 / SCRAM-SHA-512: RFC 5802 and RFC 7677, as Kafka implements them (KIP-84): no
  channel binding (``n,,``), the password's UTF-8 bytes, 4096 to 16384 iterations; the
  server's signature is verified before the connection is used.
- OAUTHBEARER: RFC 7628 client response ``n,,^Aauth=Bearer <token>^A[key=value^A]^A``
  (KIP-255, extensions KIP-342); the token comes from a static option, a user function, the
  client-credentials flow (KIP-768) or, for tests, an unsecured JWS.
- GSSAPI (Kerberos): RFC 4752 as Kafka's Java client runs it (the JDK's ``GssKrb5Client``):
  the security context with mutual authentication, an empty token once the context is
  established, then the server's wrapped 4-byte offer of security layers, answered by the
  wrapped choice "no security layer" (``0x01``), a maximum buffer of 0 and the client's
  principal as authorization id (Kafka's broker requires it to equal the authenticated
  principal). GSS-API itself is MIT Kerberos's, through the ``gssapi`` package.

Everything a broker or a token endpoint sends is parsed strictly and within bounds: a malformed
server token raises :class:`~spark_kafka_py.errors.KafkaProtocolError`, a refusal
:class:`~spark_kafka_py.errors.KafkaApiError` SASL_AUTHENTICATION_FAILED, never a bare Python
exception; text a peer sends reaches exception messages only as printable, length-bounded
excerpts (:func:`printable_excerpt`), and nothing a token endpoint answers is shown beyond its
HTTP status and a standard OAuth error code (its error body may echo the client secret).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import http.client
import importlib
import ipaddress
import json
import logging
import math
import os
import random
import re
import secrets
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from spark_kafka_py.client.connection import Exchange
from spark_kafka_py.client.security import SaslConfig, unsecured_jws
from spark_kafka_py.client.security.oauth import TOKEN_ENDPOINT_OPTION, display_url
from spark_kafka_py.errors import ConfigError, KafkaApiError, KafkaProtocolError, KerberosError
from spark_kafka_py.protocol.error_codes import (
    SASL_AUTHENTICATION_FAILED,
    UNSUPPORTED_SASL_MECHANISM,
    raise_for_error,
)
from spark_kafka_py.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
)
from spark_kafka_py.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
)

log = logging.getLogger(__name__)

__all__ = [
    "KDC_TIMEOUT_MS",
    "OAUTH_MAX_RESPONSE_BYTES",
    "SCRAM_MAX_ITERATIONS",
    "SCRAM_MAX_MESSAGE_BYTES",
    "SCRAM_MAX_SALT_BYTES",
    "SCRAM_MIN_ITERATIONS",
    "Gssapi",
    "OAuthBearer",
    "Plain",
    "SaslMechanism",
    "Scram",
    "authenticate",
    "mechanism_for",
    "oauth_token",
    "printable_excerpt",
    "token_refresh_ms",
]

#: Kafka's SCRAM iteration bounds: ``ScramMechanism`` gives both SCRAM-SHA-256 and
#: SCRAM-SHA-512 ``minIterations`` 4096 and ``maxIterations`` 16384, and Kafka's tools create
#: credentials only within them (``kafka-configs``/``kafka-storage --add-scram`` refuse other
#: counts), so a broker never asks for more. The Java client checks only the minimum
#: (``ScramSaslClient``); we check both, so a hostile broker cannot keep a thread in PBKDF2
#: (``i=2147483647`` takes minutes, ``i=10**20`` does not fit a C long).
SCRAM_MIN_ITERATIONS = 4096
SCRAM_MAX_ITERATIONS = 16384
#: Largest SCRAM server message parsed, bytes. Kafka's server-first-message is about 150 bytes
#: (our 44-character nonce, the server's nonce, a 26-byte salt, ``i=4096``); RFC 5802 sets no
#: bound, this one leaves room for optional extensions.
SCRAM_MAX_MESSAGE_BYTES = 4096
#: Largest salt accepted, bytes after base64 decoding (Kafka's ``ScramFormatter`` salts are
#: about 26 bytes).
SCRAM_MAX_SALT_BYTES = 1024
#: Largest OAUTHBEARER server error (RFC 7628 section 3.2.2 JSON), bytes; Kafka's broker sends
#: ``{"status":"invalid_token"}`` and at most a scope and a discovery URL besides.
OAUTH_MAX_SERVER_ERROR_BYTES = 16384
#: Largest token endpoint answer read, bytes (RFC 6749 sets no bound; an access token is a
#: few KiB, and a broker refuses SASL tokens above its ``sasl.server.max.receive.size``,
#: 512 KiB by default).
OAUTH_MAX_RESPONSE_BYTES = 1 << 20
#: Longest excerpt of peer-sent text in an exception message, characters.
MAX_PEER_TEXT_CHARS = 256
#: How many of the broker's enabled mechanisms an UNSUPPORTED_SASL_MECHANISM message lists.
_MAX_MECHANISMS_SHOWN = 10


def printable_excerpt(text: str, limit: int = MAX_PEER_TEXT_CHARS) -> str:
    """``text`` (sent by a peer) as it may appear in an exception message.

    Characters that are not printable (control characters, terminal escapes, bidirectional
    overrides) appear as Python escapes (``\\x1b``); the result is cut at ``limit``
    characters, saying how many characters were left out. Costs O(``limit``) whatever the
    length of ``text``.
    """
    out: list[str] = []
    size = 0
    for index, char in enumerate(text):
        piece = char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        if size + len(piece) > limit:
            return "".join(out) + f"...({len(text) - index} more characters)"
        out.append(piece)
        size += len(piece)
    return "".join(out)


class SaslMechanism:
    """A client-side SASL mechanism: ``initial()`` then ``respond(server_token)`` until done."""

    name = ""

    def initial(self) -> bytes:
        """The client's first token."""
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        """The next client token for ``challenge``, or ``None`` when the exchange is complete.

        Raises:
            KafkaProtocolError: the server's token is malformed.
            KafkaApiError: the server's token proves authentication failed (SCRAM ``e=``,
                a wrong server signature, an OAUTHBEARER error status).
        """
        raise NotImplementedError

    @property
    def complete(self) -> bool:
        """True once the server's last token was checked."""
        raise NotImplementedError


class Plain(SaslMechanism):
    """SASL PLAIN (RFC 4616): one token, ``NUL username NUL password``."""

    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self._token = b"\0" + username.encode() + b"\0" + password.encode()
        self._done = False

    def initial(self) -> bytes:
        return self._token

    def respond(self, challenge: bytes) -> bytes | None:
        """Ends the exchange. Kafka's broker sends an empty token; any other is ignored, as the
        Java client (whose PLAIN client is complete after its one token) ignores it."""
        self._done = True
        return None

    @property
    def complete(self) -> bool:
        return self._done


def _auth_failed(mechanism: str, detail: str) -> KafkaApiError:
    return KafkaApiError(SASL_AUTHENTICATION_FAILED, f"with SASL mechanism {mechanism}", detail)


def _scram_name(username: str) -> str:
    """RFC 5802 ``saslname``: ``=`` and ``,`` escaped as ``=3D`` and ``=2C``."""
    return username.replace("=", "=3D").replace(",", "=2C")


#: RFC 5802 section 7 ``printable``: the characters of a nonce (ASCII 0x21-0x7E but ",").
_SCRAM_NONCE = re.compile(r"[\x21-\x2b\x2d-\x7e]+")
#: RFC 5802 ``posit-number``: a decimal without a leading zero (ASCII digits only; Python's
#: ``int`` would also take signs, spaces, underscores and non-ASCII digits).
_POSIT_NUMBER = re.compile(r"[1-9][0-9]*")
#: The attribute names RFC 5802 defines; an extension may not reuse one.
_SCRAM_ATTRIBUTES = frozenset("aceimnprsv")


class Scram(SaslMechanism):
    """SCRAM-SHA-256 / SCRAM-SHA-512 client (RFC 5802, RFC 7677; Kafka KIP-84).

    The server's messages are parsed per RFC 5802 section 7::

        server-first-message = [m=ext,] r=nonce, s=base64-salt, i=iterations [,x=ext ...]
        server-final-message = (e=error / v=base64-signature) [,x=ext ...]

    every attribute a single ASCII letter, ``=`` and a value; the nonce must extend ours with
    printable ASCII, the salt is 1 to :data:`SCRAM_MAX_SALT_BYTES` bytes, the iteration count a
    plain decimal from :data:`SCRAM_MIN_ITERATIONS` to :data:`SCRAM_MAX_ITERATIONS`, and each
    message at most :data:`SCRAM_MAX_MESSAGE_BYTES` bytes of UTF-8. Unknown optional
    extensions are ignored; a mandatory one (``m=``) fails, as RFC 5802 requires.

    Args:
        mechanism: ``"SCRAM-SHA-256"`` or ``"SCRAM-SHA-512"``.
        username, password: the credentials (password as text; its UTF-8 bytes are used).
        nonce: the client nonce (tests only; default 32 random bytes, base64).
        extensions: SCRAM extensions appended to the client-first message (``key=value``),
            as Kafka's ``ScramLoginModule`` sends them: ``tokenauth=true`` authenticates with
            a delegation token (KIP-48: the username is the token id, the password the
            token's HMAC, base64).
    """

    def __init__(
        self,
        mechanism: str,
        username: str,
        password: str,
        nonce: str | None = None,
        extensions: tuple[tuple[str, str], ...] = (),
    ) -> None:
        if mechanism not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ValueError(f"not a SCRAM mechanism: {mechanism}")
        self.name = mechanism
        self._hash = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
        self._hash_name = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
        self._password = password.encode("utf-8")
        self._nonce = nonce or base64.b64encode(secrets.token_bytes(32)).decode("ascii")
        ext = "".join(f",{k}={v}" for k, v in extensions)
        self._client_first_bare = f"n={_scram_name(username)},r={self._nonce}{ext}"
        self._server_signature: bytes | None = None
        self._state = "initial"

    def initial(self) -> bytes:
        self._state = "first"
        return ("n,," + self._client_first_bare).encode()

    def _bad(self, what: str) -> KafkaProtocolError:
        return KafkaProtocolError(f"{self.name}: malformed server message: {what}")

    def _attributes(self, message: str) -> list[tuple[str, str]]:
        """``[(name, value)]`` of ``a=value,b=value...`` in order (RFC 5802 ``attr-val``).

        Raises:
            KafkaProtocolError: a part that is not one ASCII letter, ``=`` and a value.
        """
        out = []
        for part in message.split(","):
            if len(part) < 2 or part[1] != "=" or not (part[0].isascii() and part[0].isalpha()):
                raise self._bad(
                    f"attribute {printable_excerpt(part, 40)!r} is not <letter>=<value> "
                    "(RFC 5802 section 7)"
                )
            out.append((part[0], part[2:]))
        return out

    def _extensions(self, attrs: list[tuple[str, str]]) -> None:
        """Optional extensions after the defined attributes: ignored, unless they reuse a name
        RFC 5802 defines (a second ``v=``, an ``e=`` after the verifier...)."""
        for name, _ in attrs:
            if name in _SCRAM_ATTRIBUTES:
                raise self._bad(f"attribute {name}= out of place (RFC 5802 section 7)")

    def _server_error(self, value: str) -> KafkaApiError:
        """``e=server-error-value``: the broker refused the authentication."""
        if not value or "=" in value:
            raise self._bad(
                f"error (e=) {printable_excerpt(value, 40)!r} is not a server-error-value"
            )
        return _auth_failed(self.name, f"server error: {printable_excerpt(value)}")

    def respond(self, challenge: bytes) -> bytes | None:
        if len(challenge) > SCRAM_MAX_MESSAGE_BYTES:
            raise self._bad(
                f"{len(challenge)} bytes, more than the {SCRAM_MAX_MESSAGE_BYTES} bytes a SCRAM "
                "server message may have here"
            )
        try:
            text = challenge.decode("utf-8")
        except UnicodeDecodeError:
            raise self._bad("not UTF-8") from None
        if self._state == "first":
            return self._client_final(text)
        if self._state == "final":
            self._check_server_final(text)
            self._state = "done"
            return None
        raise self._bad(f"unexpected message in state {self._state}")

    def _client_final(self, server_first: str) -> bytes:
        attrs = self._attributes(server_first)
        if attrs[0][0] == "e":
            raise self._server_error(attrs[0][1])
        if attrs[0][0] == "m":
            raise self._bad(
                "the server requires a mandatory extension (m=), which this client does not "
                "support (RFC 5802 section 5.1)"
            )
        if [name for name, _ in attrs[:3]] != ["r", "s", "i"]:
            names = ", ".join(f"{name}=" for name, _ in attrs[:5])
            raise self._bad(
                f"server-first-message must start with r=, s=, i= (RFC 5802 section 7), got {names}"
            )
        self._extensions(attrs[3:])
        nonce, salt_b64, iterations_text = (value for _, value in attrs[:3])
        if not _SCRAM_NONCE.fullmatch(nonce):
            raise self._bad("server nonce is not printable ASCII (RFC 5802 section 7)")
        if not nonce.startswith(self._nonce) or len(nonce) <= len(self._nonce):
            raise self._bad("server nonce does not extend the client nonce")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
        except (binascii.Error, ValueError):
            raise self._bad("salt (s=) is not base64") from None
        if not 0 < len(salt) <= SCRAM_MAX_SALT_BYTES:
            raise self._bad(f"salt (s=) is {len(salt)} bytes, expected 1 to {SCRAM_MAX_SALT_BYTES}")
        iterations = self._iterations(iterations_text)
        salted = hashlib.pbkdf2_hmac(self._hash_name, self._password, salt, iterations)
        client_key = hmac.new(salted, b"Client Key", self._hash).digest()
        stored_key = self._hash(client_key).digest()
        without_proof = f"c=biws,r={nonce}"  # biws = base64("n,,"): no channel binding
        auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode()
        client_signature = hmac.new(stored_key, auth_message, self._hash).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, client_signature, strict=True))
        server_key = hmac.new(salted, b"Server Key", self._hash).digest()
        self._server_signature = hmac.new(server_key, auth_message, self._hash).digest()
        self._state = "final"
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode()

    def _iterations(self, text: str) -> int:
        """The ``i=`` count, checked against Kafka's bounds before any PBKDF2 work."""
        if not _POSIT_NUMBER.fullmatch(text):
            raise self._bad(
                f"iteration count {printable_excerpt(text, 40)!r} is not a decimal number "
                "without sign or leading zero (RFC 5802 posit-number)"
            )
        # more digits than the maximum has: too large, without converting a huge number
        iterations = int(text) if len(text) <= len(str(SCRAM_MAX_ITERATIONS)) else None
        if iterations is None or iterations > SCRAM_MAX_ITERATIONS:
            raise self._bad(
                f"iteration count {printable_excerpt(text, 40)} is above {SCRAM_MAX_ITERATIONS}, "
                "the most Kafka creates SCRAM credentials with (ScramMechanism.maxIterations); "
                "refusing to spend that much work on a broker's request"
            )
        if iterations < SCRAM_MIN_ITERATIONS:
            raise self._bad(
                f"iteration count {iterations} is below the minimum {SCRAM_MIN_ITERATIONS} "
                "(ScramMechanism.minIterations)"
            )
        return iterations

    def _check_server_final(self, text: str) -> None:
        if not text:
            raise self._bad("server-final-message is empty: no verifier (v=) nor error (e=)")
        attrs = self._attributes(text)
        name, value = attrs[0]
        if name == "e":
            raise self._server_error(value)
        if name != "v":
            raise self._bad(
                f"server-final-message starts with {name}=, not a verifier (v=) or an error (e=)"
            )
        self._extensions(attrs[1:])
        if not value:
            raise self._bad("the verifier (v=) is empty")
        try:
            signature = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise self._bad("the verifier (v=) is not base64") from None
        assert self._server_signature is not None
        if not hmac.compare_digest(signature, self._server_signature):
            raise _auth_failed(
                self.name,
                "the broker's server signature is wrong: it does not know this user's "
                "credentials (a man in the middle, or a broker with another user store)",
            )

    @property
    def complete(self) -> bool:
        return self._state == "done"


class OAuthBearer(SaslMechanism):
    """OAUTHBEARER client (RFC 7628 section 3.1, KIP-255; extensions KIP-342).

    After the initial response, a non-empty server token is an error status: a JSON object
    with a ``status`` string and optional ``scope`` and ``openid-configuration`` strings (RFC
    7628 section 3.2.2, at most :data:`OAUTH_MAX_SERVER_ERROR_BYTES`); the client answers with
    a single ``0x01`` and the broker then fails the exchange (RFC 7628 section 3.2.3) -- we
    raise with the status either way. Any other server token is a protocol error.
    """

    name = "OAUTHBEARER"

    def __init__(self, token: str, extensions: tuple[tuple[str, str], ...] = ()) -> None:
        ext = "".join(f"{k}={v}\x01" for k, v in extensions)
        self._message = f"n,,\x01auth=Bearer {token}\x01{ext}\x01".encode()
        self._state = "initial"
        self.error: str | None = None

    def initial(self) -> bytes:
        self._state = "sent"
        return self._message

    def respond(self, challenge: bytes) -> bytes | None:
        if self._state == "error":
            raise _auth_failed(self.name, f"the broker rejected the token: {self.error}")
        if self._state != "sent":
            raise KafkaProtocolError(
                f"{self.name}: unexpected server message in state {self._state}"
            )
        if challenge:
            self.error = self._parse_error(challenge)
            self._state = "error"
            return b"\x01"
        self._state = "done"
        return None

    def _parse_error(self, challenge: bytes) -> str:
        """The server's error status as printable text (``status``, then ``scope`` and
        ``openid-configuration`` when given).

        Raises:
            KafkaProtocolError: the token is longer than :data:`OAUTH_MAX_SERVER_ERROR_BYTES`,
                not UTF-8 JSON, not an object, or has no ``status`` string.
        """

        def bad(what: str) -> KafkaProtocolError:
            return KafkaProtocolError(
                f"{self.name}: malformed server error (RFC 7628 section 3.2.2): {what}"
            )

        if len(challenge) > OAUTH_MAX_SERVER_ERROR_BYTES:
            raise bad(f"{len(challenge)} bytes, more than {OAUTH_MAX_SERVER_ERROR_BYTES}")
        try:
            status = json.loads(challenge.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError too
            raise bad("not UTF-8 JSON") from None
        if not isinstance(status, dict):
            raise bad(f"a JSON {type(status).__name__}, not an object")
        if not isinstance(status.get("status"), str):
            raise bad("no status string")
        parts = [printable_excerpt(status["status"], 64)]
        for key in ("scope", "openid-configuration"):
            if isinstance(status.get(key), str):
                parts.append(f"{key} {printable_excerpt(status[key])}")
        return "; ".join(parts)

    @property
    def complete(self) -> bool:
        return self._state == "done"


# ------------------------------------------------------------------------------ OAuth token


class _TokenCache:
    """Tokens from the client-credentials endpoint, reused until 80% of their lifetime."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[SaslConfig, tuple[str, float]] = {}

    def get(self, config: SaslConfig) -> str:
        with self._lock:
            cached = self._tokens.get(config)
            if cached is not None and time.monotonic() < cached[1]:
                return cached[0]
        token, expires_in = _client_credentials_token(config)
        with self._lock:
            self._tokens[config] = (token, time.monotonic() + 0.8 * expires_in)
        return token


_TOKENS = _TokenCache()


#: RFC 6750 section 2.1 ``b64token``: the characters an access token may have to travel as
#: ``auth=Bearer <token>`` in the OAUTHBEARER client response (RFC 7628 section 3.1).
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
#: Error codes of RFC 6749 sections 4.1.2.1 and 5.2 and RFC 6750 section 3.1: the only part of
#: a token endpoint's error body shown (anything else in it may echo the credentials).
_OAUTH_ERROR_CODES = frozenset(
    {
        "access_denied",
        "insufficient_scope",
        "invalid_client",
        "invalid_grant",
        "invalid_request",
        "invalid_scope",
        "invalid_token",
        "server_error",
        "temporarily_unavailable",
        "unauthorized_client",
        "unsupported_grant_type",
        "unsupported_response_type",
    }
)
#: How much of an HTTP error body is read to find its ``error`` code, bytes.
_OAUTH_ERROR_BODY_BYTES = 16384
#: Timeout of the token request, seconds.
_OAUTH_TIMEOUT_S = 30


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: every 3xx ends in :class:`urllib.error.HTTPError`.

    ``urlopen`` would follow 301/302/303 (re-sending a POST as a GET with the same
    ``Authorization`` header, the client id and secret) to any host the ``Location`` names.
    """

    def http_error_302(self, req: Any, fp: Any, code: int, msg: str, headers: Any) -> None:
        return None

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


#: The opener of token requests: urllib's defaults (proxies from the environment, https with
#: the system's CAs) without following redirects.
_OPENER = urllib.request.build_opener(_NoRedirects)


def _token_failure(url: str, what: str) -> KafkaApiError:
    return _auth_failed("OAUTHBEARER", f"token endpoint {display_url(url)} {what}")


def _http_error_text(url: str, exc: urllib.error.HTTPError) -> str:
    """What to say about an HTTP error status: the status, for a redirect where it led (no
    credentials, query or fragment of the ``Location``), otherwise the body's ``error`` code
    if it is a standard OAuth one. Never the reason phrase, headers or rest of the body."""
    code = exc.code
    if 300 <= code < 400:
        location = exc.headers.get("Location") if exc.headers is not None else None
        target = "a redirect"
        if location:
            try:
                target = f"a redirect to {display_url(urllib.parse.urljoin(url, location))}"
            except ValueError:  # not a URL (e.g. "https://[bad"): say so, show nothing of it
                target = "a redirect to a malformed Location"
        return (
            f"(option '{TOKEN_ENDPOINT_OPTION}') answered HTTP {code}, {target}: redirects are "
            "refused so that the client credentials only go to the configured endpoint; set "
            "the option to the endpoint's final URL"
        )
    error = None
    try:
        body = json.loads(exc.read(_OAUTH_ERROR_BODY_BYTES))
    except (OSError, http.client.HTTPException, ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and body.get("error") in _OAUTH_ERROR_CODES:
        error = body["error"]
    return f"answered HTTP {code}" + (f" ({error})" if error else "")


def _network_failure(exc: BaseException) -> str:
    """A failed token request without anything the peer sent: an OS error's description
    (connection refused, certificate not trusted...), else the exception's type."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, OSError):
        # strerror ("Connection refused", ssl's "[SSL: CERTIFICATE_VERIFY_FAILED] ..."), or the
        # message of an error raised without errno ("timed out"): texts of the OS and Python
        detail = reason.strerror
        if not detail and reason.args and isinstance(reason.args[-1], str):
            detail = reason.args[-1]
        name = type(reason).__name__
        return f"{name}: {printable_excerpt(detail)}" if detail else name
    if isinstance(reason, str):  # URLError("unknown url type") and the like: our text
        return printable_excerpt(reason)
    return f"malformed HTTP answer ({type(reason).__name__})"


def _expires_in(value: object, url: str) -> float:
    """RFC 6749 section 5.1 ``expires_in`` in seconds: a positive finite number (also as a
    decimal string, as some identity providers send it); 3600 when absent."""
    if value is None:
        return 3600.0
    seconds: float | None = None
    if (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
        isinstance(value, str) and re.fullmatch(r"[0-9]{1,12}", value) is not None
    ):
        seconds = float(value)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise _token_failure(url, "returned an expires_in that is not a positive number of seconds")
    return seconds


def _client_credentials_token(config: SaslConfig) -> tuple[str, float]:
    """POST ``grant_type=client_credentials`` to the token endpoint (RFC 6749 section 4.4;
    KIP-768: client id and secret in HTTP Basic auth, optional ``scope``).

    The endpoint was checked when the options were parsed (https, or listed in
    ``kafka.sasl.oauthbearer.allowed.urls``). Redirects are not followed; at most
    :data:`OAUTH_MAX_RESPONSE_BYTES` of the answer are read.

    Returns ``(access_token, expires_in seconds)``.

    Raises:
        KafkaApiError: SASL_AUTHENTICATION_FAILED naming the endpoint (without credentials,
            query or fragment) and the HTTP status, with a standard OAuth error code where the
            endpoint sent one -- never the secret, the reason phrase or the error body; for a
            redirect, the option and the redirect's target; for an answer that is too large,
            not JSON, without a usable ``access_token`` (RFC 6750 ``b64token``) or with a bad
            ``expires_in``, what is wrong.
        ConfigError: a ``file:`` URL whose file cannot be read.
    """
    url = config.token_endpoint_url
    assert url is not None
    if url.startswith("file:"):  # KIP-768 also allows a file holding the token
        path = urllib.parse.urlparse(url).path
        try:
            with open(path, encoding="utf-8") as f:
                return f.read().strip(), 3600.0
        except OSError as exc:
            raise ConfigError(
                f"Option '{TOKEN_ENDPOINT_OPTION}': cannot read {path!r}: {exc.strerror}"
            ) from None
    assert config.client_id is not None and config.client_secret is not None
    form = {"grant_type": "client_credentials"}
    if config.scope:
        form["scope"] = config.scope
    basic = base64.b64encode(
        f"{urllib.parse.quote(config.client_id)}:"
        f"{urllib.parse.quote(config.client_secret.reveal_str())}".encode()
    ).decode("ascii")
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(form).encode(),
        headers={
            "Authorization": f"Basic {basic}",
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
        method="POST",
    )
    # Failures are described inside the except clauses and raised after them, so that no
    # exception carrying the endpoint's reason phrase, headers or body is chained to ours.
    failure: str | None = None
    raw = b""
    try:
        with _OPENER.open(request, timeout=_OAUTH_TIMEOUT_S) as resp:
            raw = resp.read(OAUTH_MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        failure = _http_error_text(url, exc)
        exc.close()
    except (OSError, http.client.HTTPException, ValueError) as exc:
        failure = f"failed: {_network_failure(exc)}"
    if failure is not None:
        raise _token_failure(url, failure)
    if len(raw) > OAUTH_MAX_RESPONSE_BYTES:
        raise _token_failure(url, f"answered with more than {OAUTH_MAX_RESPONSE_BYTES} bytes")
    body: Any = None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        failure = "answered with a body that is not JSON (RFC 6749 section 5.1)"
    if failure is not None:
        raise _token_failure(url, failure)
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not _B64TOKEN.fullmatch(token):
        raise _token_failure(
            url,
            "returned no usable access_token (RFC 6749 section 5.1: a string of RFC 6750 "
            "b64token characters)",
        )
    return token, _expires_in(body.get("expires_in"), url)


#: The option naming the token provider, for messages.
PROVIDER_OPTION = "kafka.sasl.oauthbearer.token.provider"
#: The option whose text is passed to the provider, for messages.
PROVIDER_ARGUMENT_OPTION = "kafka.sasl.oauthbearer.config"

#: Refresh of a provider's expiring tokens: Kafka's Java client's login refresh
#: (``ExpiringCredentialRefreshingLogin``, KIP-255) with its defaults:
#: ``sasl.login.refresh.window.factor`` 0.8, ``sasl.login.refresh.window.jitter`` 0.05,
#: ``sasl.login.refresh.min.period.seconds`` 60, ``sasl.login.refresh.buffer.seconds`` 300.
REFRESH_WINDOW_FACTOR = 0.8
REFRESH_WINDOW_JITTER = 0.05
REFRESH_MIN_PERIOD_MS = 60_000
REFRESH_BUFFER_MS = 300_000
#: An expiry below this (1973-03-03 in epoch ms) is taken for seconds, not milliseconds.
_EPOCH_MS_FLOOR = 100_000_000_000


def token_refresh_ms(obtained_ms: float, expiry_ms: float, jitter: float | None = None) -> float:
    """When (epoch ms) a token obtained at ``obtained_ms`` and expiring at ``expiry_ms`` (epoch
    ms) is replaced, as Kafka's Java client's login refresh computes it
    (``ExpiringCredentialRefreshingLogin.refreshMs``, KIP-255), with its defaults.

    At ``REFRESH_WINDOW_FACTOR`` (0.8) plus up to ``REFRESH_WINDOW_JITTER`` (0.05) of the
    token's lifetime, but no later than ``REFRESH_BUFFER_MS`` (5 min) before its expiry and
    no sooner than ``REFRESH_MIN_PERIOD_MS`` (1 min) after it was obtained. A token whose
    lifetime is shorter than both together (6 min; a test's seconds-long token) is refreshed
    at 80-85% of its lifetime, as the Java client does. An MSK IAM token (15 min) is thus
    replaced 10 min after it was signed, 5 min before its expiry.

    Args:
        obtained_ms: when the provider returned the token, epoch ms.
        expiry_ms: the token's expiry, epoch ms.
        jitter: the jitter fraction in [0, 1) (default: random, per token).
    """
    draw = random.random() if jitter is None else jitter
    pct = REFRESH_WINDOW_FACTOR + REFRESH_WINDOW_JITTER * draw
    lifetime = expiry_ms - obtained_ms
    if obtained_ms + REFRESH_MIN_PERIOD_MS + REFRESH_BUFFER_MS > expiry_ms:
        return obtained_ms + lifetime * pct
    proposed = min(obtained_ms + lifetime * pct, expiry_ms - REFRESH_BUFFER_MS)
    return max(proposed, obtained_ms + REFRESH_MIN_PERIOD_MS)


def _load_provider(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"Option '{PROVIDER_OPTION}': cannot load {spec!r}: {exc}") from None
    if not callable(target):
        raise ConfigError(
            f"Option '{PROVIDER_OPTION}': {spec} is a {type(target).__name__}, not a function"
        )
    return target


def _provided_token(config: SaslConfig) -> tuple[str, int | None]:
    """Call the provider once: ``(token, expiry epoch ms or None)``.

    Raises:
        ConfigError: the provider cannot be loaded, or returned neither a non-empty token
            string nor a ``(token, expiry_ms)`` pair with an ``int`` expiry in epoch ms.
        KafkaApiError: SASL_AUTHENTICATION_FAILED: the provider raised (chained).
    """
    spec = config.token_provider
    assert spec is not None
    provider = _load_provider(spec)
    argument = config.token_provider_argument
    try:
        result = provider() if argument is None else provider(argument.reveal_str())
    except Exception as exc:
        called = f"{spec}()" if argument is None else f"{spec}(<{PROVIDER_ARGUMENT_OPTION}>)"
        raise _auth_failed(
            "OAUTHBEARER",
            f"token provider {called} (option '{PROVIDER_OPTION}') raised "
            f"{type(exc).__name__}: {printable_excerpt(str(exc), 200)}",
        ) from exc

    def bad(what: str) -> ConfigError:
        return ConfigError(
            f"Option '{PROVIDER_OPTION}': {spec} returned {what}; expected a non-empty token "
            "string, or a (token, expiry_ms) tuple with the expiry in epoch milliseconds, as "
            "aws_msk_iam_sasl_signer's generate_auth_token returns"
        )

    expiry: int | None = None
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise bad(f"a {type(result).__name__} of {len(result)} items")
        result, expiry = result
        if not isinstance(expiry, int) or isinstance(expiry, bool):
            raise bad(f"an expiry of type {type(expiry).__name__}, not int")
        if expiry < _EPOCH_MS_FLOOR:
            raise bad(
                f"the expiry {expiry}, which is seconds, not milliseconds, since the epoch "
                "(confluent-kafka's oauth_cb returns seconds)"
            )
    if not isinstance(result, str) or not result:
        raise bad("an empty string" if isinstance(result, str) else type(result).__name__)
    if not _B64TOKEN.fullmatch(result):
        raise bad("a token with characters a bearer token cannot have (RFC 6750 b64token)")
    return result, expiry


class _ProvidedTokens:
    """Expiring tokens of token providers, per process, by provider and argument.

    A token returned with its expiry is reused until :func:`token_refresh_ms`; a token past
    its expiry is never returned. One thread at a time calls a given provider; the others
    wait for its token.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, Any], threading.Lock] = {}
        self._tokens: dict[tuple[str, Any], tuple[str, int, float]] = {}
        #: how many times each provider was called (diagnostics and tests)
        self.calls: dict[tuple[str, Any], int] = {}

    def get(self, config: SaslConfig) -> str:
        assert config.token_provider is not None
        key = (config.token_provider, config.token_provider_argument)
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            now = time.time() * 1000
            cached = self._tokens.get(key)
            if cached is not None and now < cached[2] and now < cached[1]:
                return cached[0]
            expired_at = 0
            for attempt in (1, 2):
                self.calls[key] = self.calls.get(key, 0) + 1
                token, expiry = _provided_token(config)
                now = time.time() * 1000
                if expiry is None:
                    self._tokens.pop(key, None)
                    return token
                if expiry > now:
                    self._tokens[key] = (token, expiry, token_refresh_ms(now, expiry))
                    return token
                expired_at = expiry
                log.warning(
                    "token provider %s returned a token that expired %d ms ago (attempt %d)",
                    config.token_provider,
                    now - expiry,
                    attempt,
                )
            raise _auth_failed(
                "OAUTHBEARER",
                f"token provider {config.token_provider} (option '{PROVIDER_OPTION}') "
                f"returned an expired token twice (expiry {expired_at} epoch ms, "
                f"{int(now - expired_at)} ms ago); an expired token is never sent (check the "
                "provider's credentials and this machine's clock)",
            )


_PROVIDED = _ProvidedTokens()


def oauth_token(config: SaslConfig) -> str:
    """The OAUTHBEARER token to send now: static, from the provider, the endpoint, or unsecured.

    A provider (``kafka.sasl.oauthbearer.token.provider``, called with
    ``kafka.sasl.oauthbearer.config`` as its only argument when that is set) returns either a
    token string, then it is called at every authentication and re-authentication, or a
    ``(token, expiry_ms)`` pair (expiry in epoch ms, what
    ``aws_msk_iam_sasl_signer.MSKAuthTokenProvider.generate_auth_token`` returns), then the
    token is reused by this process until :func:`token_refresh_ms` and never sent past its
    expiry.

    Raises:
        ConfigError: the provider cannot be imported or returned something else than a
            non-empty token (RFC 6750 ``b64token``) or a ``(token, int expiry_ms)`` pair.
        KafkaApiError: SASL_AUTHENTICATION_FAILED: the provider raised (chained, naming the
            option and the provider), or returned an expired token twice; the token endpoint
            failed.
    """
    if config.token is not None:
        return config.token.reveal_str()
    if config.token_provider is not None:
        return _PROVIDED.get(config)
    if config.token_endpoint_url is not None:
        return _TOKENS.get(config)
    assert config.unsecured_claims is not None
    return unsecured_jws(dict(config.unsecured_claims), config.unsecured_lifetime_s)


# ---------------------------------------------------------------------------------- GSSAPI

#: MIT Kerberos messages of a clock out of step with the KDC's or the broker's: a skew past
#: ``clockskew`` (KRB_AP_ERR_SKEW), or tickets that are already expired by this host's clock.
_CLOCK_SIGNS = ("Clock skew too great", "Ticket expired", "Ticket not yet valid")

#: RFC 4752 section 3.3: the security-layer bit "no security layer".
_GSSAPI_NO_SECURITY_LAYER = 0x01


def _gssapi_module() -> Any:
    try:
        return importlib.import_module("gssapi")
    except ImportError as exc:
        raise ConfigError(
            "kafka.sasl.mechanism=GSSAPI needs the 'gssapi' package over MIT Kerberos's "
            "libraries (pip install 'spark-kafka-py[kerberos]'; building it needs krb5-config, "
            f"Debian's libkrb5-dev): {exc}"
        ) from None


def kerberos_host(host: str) -> str:
    """The host name in the broker's service principal, as Kafka's Java client takes it.

    The Java client names the broker ``<service>/<host>`` with ``host`` from the socket's
    ``InetAddress.getHostName()``: the name it connected by, as given, or, for an address
    given as an IP literal, the name a reverse look-up returns (the address itself when
    there is none). Source: Kafka ``SaslChannelBuilder.buildClientAuthenticator``.
    """
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    try:
        return socket.gethostbyaddr(host.strip("[]"))[0]
    except OSError:
        return host


#: How long (ms) the first GSSAPI step may wait for the KDC when the caller gives no bound:
#: the Java client's default ``socket.connection.setup.timeout.ms``.
KDC_TIMEOUT_MS = 10_000
#: Threads still waiting for a KDC after their caller gave up, by credentials
#: (see :meth:`Gssapi.initial`).
_kdc_waits: dict[str, threading.Thread] = {}
_kdc_lock = threading.Lock()

#: The ``KRB5_CONFIG`` this process set from a driver's settings (None: never set here).
_krb5_conf_set: str | None = None
_krb5_conf_lock = threading.Lock()


def _use_krb5_conf(krb5_conf: str | None, given: bool) -> None:
    """Point MIT's library (it reads ``KRB5_CONFIG`` from the environment only) at
    ``krb5_conf``: always when the option gave it; otherwise (the parsing process's own
    ``KRB5_CONFIG``) unless this process's environment has one this module did not set."""
    global _krb5_conf_set
    if not krb5_conf:
        return
    with _krb5_conf_lock:
        current = os.environ.get("KRB5_CONFIG")
        if current == krb5_conf:
            return
        if not given and current and current != _krb5_conf_set:
            return
        os.environ["KRB5_CONFIG"] = krb5_conf
        _krb5_conf_set = krb5_conf
        log.info("KRB5_CONFIG set to %s (kafka.sasl.kerberos.krb5.conf or the driver's)", krb5_conf)


class Gssapi(SaslMechanism):
    """SASL GSSAPI (Kerberos V5), RFC 4752, without a security layer (as Kafka's clients).

    Args:
        config: the SASL settings: ``kerberos_service_name``, ``kerberos_principal``,
            ``keytab`` or ``ticket_cache``.
        host: the broker's host as connected (see :func:`kerberos_host`).
        broker: the broker's description, for messages.

    Credentials come from the keytab through MIT's credential store (``client_keytab``, the
    tickets kept in a per-process ``MEMORY:`` cache, renewed from the keytab by the library
    when they expire; no ``kinit``, no file written), or from the ticket cache (``KRB5CCNAME``
    or JAAS ``ticketCache``). ``KRB5_CONFIG`` names the Kerberos configuration, as for MIT's
    tools, or ``kafka.sasl.kerberos.krb5.conf`` (``config.krb5_conf``), which wins; a process
    whose environment names none (a Python worker started without
    ``spark.executorEnv.KRB5_CONFIG``) takes the one of the process that parsed the options.
    MIT's library reads it from the environment only, so it is set there (process-wide).

    Raises:
        KerberosError: no credentials for the principal, the KDC unreachable, the broker's
            service principal unknown to the KDC, a clock skew (the library's text, the
            principal, the service and the options that chose them).
        KafkaProtocolError: the broker's security-layer message is malformed or offers no
            "no security layer".
    """

    def __init__(
        self,
        config: SaslConfig,
        host: str,
        broker: str = "the broker",
        timeout_ms: int = KDC_TIMEOUT_MS,
    ) -> None:
        gssapi = _gssapi_module()
        _use_krb5_conf(config.krb5_conf, config.krb5_conf_given)
        self._gssapi = gssapi
        self._config = config
        self._broker = broker
        self._timeout_ms = timeout_ms
        self.service = f"{config.kerberos_service_name}@{kerberos_host(host)}"
        self._done = False
        self._layers = False
        self._ctx: Any = None

    def _failure(self, exc: Exception | str, stage: str) -> KerberosError:
        c = self._config
        if c.keytab is not None:
            source = f"keytab {c.keytab!r} (kafka.sasl.jaas.config keyTab)"
        elif c.ticket_cache is not None:
            source = f"ticket cache {c.ticket_cache!r} (kafka.sasl.jaas.config ticketCache)"
        else:
            source = "the default ticket cache (KRB5CCNAME)"
        who = c.kerberos_principal or "the ticket cache's default principal"
        text = printable_excerpt(str(exc), 400)
        if any(sign in text for sign in _CLOCK_SIGNS):
            text += (
                " (tickets just obtained that are expired or out of time: this host's clock "
                "may differ from the KDC's or the broker's by more than the allowed skew, "
                "krb5.conf's clockskew, 5 minutes by default; check their time "
                "synchronisation, e.g. NTP)"
            )
        return KerberosError(
            f"Kerberos (SASL GSSAPI) failed {stage} with {self._broker}: principal {who} "
            f"(kafka.sasl.jaas.config principal), credentials from {source}, broker service "
            f"{self.service} (kafka.sasl.kerberos.service.name="
            f"{c.kerberos_service_name!r} and the broker's host), Kerberos configuration "
            f"{os.environ.get('KRB5_CONFIG') or '/etc/krb5.conf'} (KRB5_CONFIG): {text}",
            principal=c.kerberos_principal,
            service=self.service,
        )

    def _credentials(self) -> Any:
        gssapi, c = self._gssapi, self._config
        name = (
            gssapi.Name(c.kerberos_principal, gssapi.NameType.kerberos_principal)
            if c.kerberos_principal
            else None
        )
        store: dict[str, str] = {}
        if c.keytab is not None:
            # one cache per principal, keytab and configuration: tickets are reused by this
            # process's connections, never across realms
            where = os.environ.get("KRB5_CONFIG", "")
            key = f"{c.kerberos_principal}|{c.keytab}|{where}".encode()
            cache = "MEMORY:spark-kafka-py-" + hashlib.sha256(key).hexdigest()[:16]
            store = {"client_keytab": c.keytab, "ccache": cache}
        elif c.ticket_cache is not None:
            store = {"ccache": c.ticket_cache}
        return gssapi.Credentials(name=name, usage="initiate", store=store or None)

    def _first_step(self) -> tuple[Any, bytes]:
        """The security context and its first token: the step that asks the KDC for tickets
        (a TGT from the keytab unless cached, then the broker's service ticket)."""
        gssapi = self._gssapi
        flags = [
            gssapi.RequirementFlag.mutual_authentication,
            gssapi.RequirementFlag.integrity,
        ]
        creds = self._credentials()
        target = gssapi.Name(self.service, gssapi.NameType.hostbased_service)
        ctx = gssapi.SecurityContext(name=target, creds=creds, usage="initiate", flags=flags)
        return ctx, bytes(ctx.step() or b"")

    def initial(self) -> bytes:
        """The first GSS-API token, asking the KDC for tickets within ``timeout_ms``.

        MIT's library has no bound of its own on one request before release 1.22
        (``request_timeout``): a KDC that accepts the connection and never answers keeps it
        waiting 10 s per KDC on TCP, then retries over UDP, about 27 s per ticket (measured
        with 1.20: 54 s for a keytab login). The step therefore runs in a thread of its own;
        past ``timeout_ms`` the connection fails, and the thread, left to finish, is the only
        one for these credentials: a later attempt waits for it instead of starting another.

        Raises:
            KerberosError: no credentials, an unknown service, no answer from the KDC within
                ``timeout_ms`` (naming ``kafka.socket.connection.setup.timeout.ms``).
        """
        gssapi = self._gssapi
        c = self._config
        key = f"{c.kerberos_principal}|{c.keytab}|{c.ticket_cache}|{os.environ.get('KRB5_CONFIG')}"
        deadline = time.monotonic() + self._timeout_ms / 1000
        stage = "getting a service ticket"
        with _kdc_lock:
            earlier = _kdc_waits.get(key)
        if earlier is not None:
            earlier.join(max(0.0, deadline - time.monotonic()))
            if earlier.is_alive():
                raise self._failure(self._kdc_silent(True), stage)
        outcome: list[Any] = []

        def run() -> None:
            try:
                outcome.append(self._first_step())
            except BaseException as exc:  # handed to the waiting caller below
                outcome.append(exc)

        worker = threading.Thread(target=run, name="spark-kafka-py-kdc", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            with _kdc_lock:
                _kdc_waits[key] = worker
            raise self._failure(self._kdc_silent(False), stage)
        with _kdc_lock:
            if _kdc_waits.get(key) is earlier:
                _kdc_waits.pop(key, None)
        result = outcome[0]
        if isinstance(result, gssapi.exceptions.GSSError):
            raise self._failure(result, stage) from None
        if isinstance(result, BaseException):
            raise result
        self._ctx, token = result
        self._layers = bool(self._ctx.complete)
        return bytes(token)

    def _kdc_silent(self, earlier: bool) -> str:
        return (
            f"no answer from the KDC within {self._timeout_ms} ms "
            "(kafka.socket.connection.setup.timeout.ms)"
            + (" (an earlier attempt with these credentials still waits for it)" if earlier else "")
            + ": the KDCs the Kerberos configuration names for the realm do not answer"
        )

    def respond(self, challenge: bytes) -> bytes | None:
        gssapi = self._gssapi
        if self._done:
            return None  # the broker's last (empty) token
        if not self._layers:
            try:
                token = self._ctx.step(challenge)
            except gssapi.exceptions.GSSError as exc:
                raise self._failure(exc, "checking the broker's reply (mutual auth)") from None
            self._layers = bool(self._ctx.complete)
            return bytes(token or b"")  # an empty token once established, as the JDK sends
        try:
            offer = bytes(self._ctx.unwrap(challenge).message)
        except gssapi.exceptions.GSSError as exc:
            raise KafkaProtocolError(
                f"GSSAPI: the broker's security-layer message does not unwrap: "
                f"{printable_excerpt(str(exc), 200)}"
            ) from None
        if len(offer) != 4:
            raise KafkaProtocolError(
                f"GSSAPI: the broker's security-layer message has {len(offer)} bytes, not 4 "
                "(RFC 4752 section 3.1)"
            )
        if not offer[0] & _GSSAPI_NO_SECURITY_LAYER:
            raise KafkaProtocolError(
                f"GSSAPI: the broker offers security layers {offer[0]:#04x} without 'no "
                "security layer' (0x01), the only one Kafka uses"
            )
        authzid = str(self._ctx.initiator_name).encode("utf-8")
        reply = bytes([_GSSAPI_NO_SECURITY_LAYER, 0, 0, 0]) + authzid
        try:
            wrapped = self._ctx.wrap(reply, False).message
        except gssapi.exceptions.GSSError as exc:
            raise self._failure(exc, "answering the security-layer offer") from None
        self._done = True
        return bytes(wrapped)

    @property
    def complete(self) -> bool:
        return self._done


def mechanism_for(
    config: SaslConfig,
    host: str | None = None,
    broker: str = "the broker",
    timeout_ms: int | None = None,
) -> SaslMechanism:
    """A fresh :class:`SaslMechanism` for one authentication with ``config``; GSSAPI needs
    the broker's ``host`` (its service principal names it) and waits for the KDC at most
    ``timeout_ms`` (default :data:`KDC_TIMEOUT_MS`)."""
    if config.mechanism == "PLAIN":
        assert config.username is not None and config.password is not None
        return Plain(config.username, config.password.reveal_str())
    if config.mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        assert config.username is not None and config.password is not None
        return Scram(
            config.mechanism,
            config.username,
            config.password.reveal_str(),
            extensions=config.extensions,
        )
    if config.mechanism == "OAUTHBEARER":
        return OAuthBearer(oauth_token(config), config.extensions)
    if config.mechanism == "GSSAPI":
        if host is None:
            raise ValueError("GSSAPI needs the broker's host")
        return Gssapi(config, host, broker, KDC_TIMEOUT_MS if timeout_ms is None else timeout_ms)
    raise ValueError(f"unsupported SASL mechanism {config.mechanism}")  # parse rejects these


def authenticate(
    exchange: Exchange,
    config: SaslConfig,
    broker: str,
    *,
    host: str | None = None,
    timeout_ms: int | None = None,
) -> int:
    """Authenticate the connection behind ``exchange`` (SaslHandshake v1 + SaslAuthenticate).

    Args:
        exchange: sends one request on the connection and returns its decoded response.
        config: the SASL settings.
        broker: the broker's description for messages (``"broker 1 at host:port"``).
        host: the broker's host as connected (GSSAPI: the service principal's host).
        timeout_ms: GSSAPI: how long to wait for the KDC (the client's
            ``socket.connection.setup.timeout.ms``; default :data:`KDC_TIMEOUT_MS`).

    Returns:
        the session lifetime in ms the broker returned (KIP-368), 0 for none.

    Raises:
        KafkaApiError: UNSUPPORTED_SASL_MECHANISM (the message lists the broker's enabled
            mechanisms), SASL_AUTHENTICATION_FAILED (naming the mechanism and the broker,
            with the broker's message), ILLEGAL_SASL_STATE.
        KafkaProtocolError: a malformed server token (naming the broker).
        KerberosError: GSSAPI credentials or tickets could not be had (see :class:`Gssapi`).
    """
    mechanism = mechanism_for(config, host, broker, timeout_ms)
    handshake = exchange(SaslHandshakeRequest(mechanism=config.mechanism))
    if handshake.error_code == UNSUPPORTED_SASL_MECHANISM:
        shown = [printable_excerpt(m, 64) for m in handshake.mechanisms[:_MAX_MECHANISMS_SHOWN]]
        hidden = len(handshake.mechanisms) - len(shown)
        enabled = ", ".join(shown) + (f" and {hidden} more" if hidden > 0 else "") or "none"
        raise KafkaApiError(
            UNSUPPORTED_SASL_MECHANISM,
            f"in SaslHandshake with {broker}",
            f"{config.mechanism} is not enabled on this listener; the broker enables: {enabled} "
            "(set kafka.sasl.mechanism to one of them)",
        )
    raise_for_error(handshake.error_code, f"in SaslHandshake ({config.mechanism}) with {broker}")
    token: bytes | None = mechanism.initial()
    lifetime = 0
    while token is not None:
        response = exchange(SaslAuthenticateRequest(auth_bytes=token))
        message = printable_excerpt(response.error_message) if response.error_message else ""
        if response.error_code == SASL_AUTHENTICATION_FAILED:
            detail = message or "no message"
            if isinstance(mechanism, OAuthBearer) and mechanism.error:
                detail += f"; token error: {mechanism.error}"
            raise KafkaApiError(
                SASL_AUTHENTICATION_FAILED,
                f"with SASL mechanism {config.mechanism} at {broker}",
                detail,
            )
        raise_for_error(
            response.error_code,
            f"in SaslAuthenticate ({config.mechanism}) with {broker}"
            + (f": {message}" if message else ""),
        )
        lifetime = response.session_lifetime_ms
        try:
            token = mechanism.respond(bytes(response.auth_bytes))
        except KafkaProtocolError as exc:
            raise KafkaProtocolError(f"{exc} (SaslAuthenticate with {broker})") from None
    if not mechanism.complete:  # pragma: no cover - every mechanism ends complete or raises
        raise KafkaProtocolError(f"{config.mechanism}: exchange with {broker} ended early")
    log.debug(
        "SASL %s authentication with %s succeeded (user %s, session lifetime %d ms)",
        config.mechanism,
        broker,
        config.username or config.kerberos_principal or "from token",
        lifetime,
    )
    return max(0, int(lifetime))
