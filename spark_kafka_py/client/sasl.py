"""SASL authentication of one connection: PLAIN, SCRAM-SHA-256/512, OAUTHBEARER.

The exchange (KIP-152): after ApiVersions, SaslHandshake v1 names the mechanism; the broker
answers with its enabled mechanisms (UNSUPPORTED_SASL_MECHANISM if ours is not one of them);
then each SASL token travels in a SaslAuthenticate request, whose response carries the
server's token, an error code (SASL_AUTHENTICATION_FAILED with a message on bad credentials)
and, from v1 (KIP-368), the session lifetime in ms after which the broker closes the
connection unless the client authenticates again on it.

Mechanisms are sans-I/O: :class:`SaslMechanism` turns server tokens into client tokens.

- PLAIN: RFC 4616 (``authzid NUL authcid NUL passwd``).
- SCRAM-SHA-256 / SCRAM-SHA-512: RFC 5802 and RFC 7677, as Kafka implements them (KIP-84): no
  channel binding (``n,,``), the password's UTF-8 bytes, at least 4096 iterations; the
  server's signature is verified before the connection is used.
- OAUTHBEARER: RFC 7628 client response ``n,,^Aauth=Bearer <token>^A[key=value^A]^A``
  (KIP-255, extensions KIP-342); the token comes from a static option, a user function, the
  client-credentials flow (KIP-768) or, for tests, an unsecured JWS.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib
import json
import logging
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from spark_kafka_py.client.security import SaslConfig, unsecured_jws
from spark_kafka_py.errors import ConfigError, KafkaApiError, KafkaProtocolError
from spark_kafka_py.protocol.error_codes import (
    SASL_AUTHENTICATION_FAILED,
    UNSUPPORTED_SASL_MECHANISM,
    raise_for_error,
)
from spark_kafka_py.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from spark_kafka_py.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from spark_kafka_py.protocol.schema import Request

log = logging.getLogger(__name__)

__all__ = [
    "OAuthBearer",
    "Plain",
    "SaslMechanism",
    "Scram",
    "authenticate",
    "mechanism_for",
]

#: Kafka's minimum SCRAM iteration count (``ScramMechanism.minIterations``).
SCRAM_MIN_ITERATIONS = 4096

#: ``exchange(request) -> response``: sends one request on the connection being set up.
Exchange = Callable[[Request], Any]


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


class Scram(SaslMechanism):
    """SCRAM-SHA-256 / SCRAM-SHA-512 client (RFC 5802, RFC 7677; Kafka KIP-84).

    Args:
        mechanism: ``"SCRAM-SHA-256"`` or ``"SCRAM-SHA-512"``.
        username, password: the credentials (password as text; its UTF-8 bytes are used).
        nonce: the client nonce (tests only; default 32 random bytes, base64).
    """

    def __init__(
        self, mechanism: str, username: str, password: str, nonce: str | None = None
    ) -> None:
        if mechanism not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ValueError(f"not a SCRAM mechanism: {mechanism}")
        self.name = mechanism
        self._hash = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
        self._hash_name = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
        self._password = password.encode("utf-8")
        self._nonce = nonce or base64.b64encode(secrets.token_bytes(32)).decode("ascii")
        self._client_first_bare = f"n={_scram_name(username)},r={self._nonce}"
        self._server_signature: bytes | None = None
        self._state = "initial"

    def initial(self) -> bytes:
        self._state = "first"
        return ("n,," + self._client_first_bare).encode()

    def _bad(self, what: str) -> KafkaProtocolError:
        return KafkaProtocolError(f"{self.name}: malformed server message: {what}")

    @staticmethod
    def _attributes(message: str) -> dict[str, str]:
        out = {}
        for part in message.split(","):
            key, sep, value = part.partition("=")
            if sep and len(key) == 1:
                out.setdefault(key, value)
        return out

    def respond(self, challenge: bytes) -> bytes | None:
        try:
            text = challenge.decode("utf-8")
        except UnicodeDecodeError:
            raise self._bad("not UTF-8") from None
        attrs = self._attributes(text)
        if "e" in attrs:
            raise _auth_failed(self.name, f"server error: {attrs['e']}")
        if self._state == "first":
            return self._client_final(text, attrs)
        if self._state == "final":
            if "v" not in attrs:
                raise self._bad("server-final-message has no verifier (v=)")
            try:
                signature = base64.b64decode(attrs["v"], validate=True)
            except ValueError:
                raise self._bad("server signature is not base64") from None
            assert self._server_signature is not None
            if not hmac.compare_digest(signature, self._server_signature):
                raise _auth_failed(
                    self.name,
                    "the broker's server signature is wrong: it does not know this user's "
                    "credentials (a man in the middle, or a broker with another user store)",
                )
            self._state = "done"
            return None
        raise self._bad(f"unexpected message in state {self._state}")

    def _client_final(self, server_first: str, attrs: dict[str, str]) -> bytes:
        nonce, salt_b64, iterations_text = attrs.get("r"), attrs.get("s"), attrs.get("i")
        if nonce is None or salt_b64 is None or iterations_text is None:
            raise self._bad("server-first-message lacks r=, s= or i=")
        if not nonce.startswith(self._nonce) or len(nonce) <= len(self._nonce):
            raise self._bad("server nonce does not extend the client nonce")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(iterations_text)
        except ValueError:
            raise self._bad("bad salt or iteration count") from None
        if iterations < SCRAM_MIN_ITERATIONS:
            raise self._bad(
                f"iteration count {iterations} is below the minimum {SCRAM_MIN_ITERATIONS}"
            )
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

    @property
    def complete(self) -> bool:
        return self._state == "done"


class OAuthBearer(SaslMechanism):
    """OAUTHBEARER client (RFC 7628 section 3.1, KIP-255; extensions KIP-342).

    After the initial response, a non-empty server token is an error status (JSON); the
    client answers with a single ``0x01`` and the broker then fails the exchange (RFC 7628
    section 3.2.3) -- we raise with the status either way.
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
        if challenge:
            self.error = challenge.decode("utf-8", "replace")
            self._state = "error"
            return b"\x01"
        self._state = "done"
        return None

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


def _client_credentials_token(config: SaslConfig) -> tuple[str, float]:
    """POST ``grant_type=client_credentials`` to the token endpoint (RFC 6749 section 4.4;
    KIP-768: client id and secret in HTTP Basic auth, optional ``scope``).

    Returns ``(access_token, expires_in seconds)``.

    Raises:
        KafkaApiError: SASL_AUTHENTICATION_FAILED naming the endpoint and the HTTP status
            (never the secret).
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
                f"Option 'kafka.sasl.oauthbearer.token.endpoint.url': cannot read {path!r}: "
                f"{exc.strerror}"
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
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise _auth_failed(
            "OAUTHBEARER", f"token endpoint {url} answered HTTP {exc.code} {exc.reason}"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _auth_failed("OAUTHBEARER", f"token endpoint {url} failed: {exc}") from None
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        raise _auth_failed("OAUTHBEARER", f"token endpoint {url} returned no access_token")
    expires_in = body.get("expires_in", 3600)
    return token, float(expires_in) if isinstance(expires_in, (int, float)) else 3600.0


def oauth_token(config: SaslConfig) -> str:
    """The OAUTHBEARER token to send now: static, from the provider, the endpoint, or unsecured.

    Raises:
        ConfigError: the provider cannot be imported or returned something other than a
            non-empty string.
        KafkaApiError: the token endpoint failed.
    """
    if config.token is not None:
        return config.token.reveal_str()
    if config.token_provider is not None:
        module_name, _, attr = config.token_provider.partition(":")
        try:
            target: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"Option 'kafka.sasl.oauthbearer.token.provider': cannot load "
                f"{config.token_provider!r}: {exc}"
            ) from None
        token = target()
        if not isinstance(token, str) or not token:
            raise ConfigError(
                f"Option 'kafka.sasl.oauthbearer.token.provider': {config.token_provider} "
                f"returned {type(token).__name__}, expected a non-empty token string"
            )
        return token
    if config.token_endpoint_url is not None:
        return _TOKENS.get(config)
    assert config.unsecured_claims is not None
    return unsecured_jws(dict(config.unsecured_claims), config.unsecured_lifetime_s)


def mechanism_for(config: SaslConfig) -> SaslMechanism:
    """A fresh :class:`SaslMechanism` for one authentication with ``config``."""
    if config.mechanism == "PLAIN":
        assert config.username is not None and config.password is not None
        return Plain(config.username, config.password.reveal_str())
    if config.mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        assert config.username is not None and config.password is not None
        return Scram(config.mechanism, config.username, config.password.reveal_str())
    if config.mechanism == "OAUTHBEARER":
        return OAuthBearer(oauth_token(config), config.extensions)
    raise ValueError(f"unsupported SASL mechanism {config.mechanism}")  # parse rejects these


def authenticate(exchange: Exchange, config: SaslConfig, broker: str) -> int:
    """Authenticate the connection behind ``exchange`` (SaslHandshake v1 + SaslAuthenticate).

    Args:
        exchange: sends one request on the connection and returns its decoded response.
        config: the SASL settings.
        broker: the broker's description for messages (``"broker 1 at host:port"``).

    Returns:
        the session lifetime in ms the broker returned (KIP-368), 0 for none.

    Raises:
        KafkaApiError: UNSUPPORTED_SASL_MECHANISM (the message lists the broker's enabled
            mechanisms), SASL_AUTHENTICATION_FAILED (naming the mechanism and the broker,
            with the broker's message), ILLEGAL_SASL_STATE.
        KafkaProtocolError: a malformed server token.
    """
    mechanism = mechanism_for(config)
    handshake: SaslHandshakeResponse = exchange(SaslHandshakeRequest(mechanism=config.mechanism))
    if handshake.error_code == UNSUPPORTED_SASL_MECHANISM:
        enabled = ", ".join(handshake.mechanisms) or "none"
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
        response: SaslAuthenticateResponse = exchange(SaslAuthenticateRequest(auth_bytes=token))
        if response.error_code == SASL_AUTHENTICATION_FAILED:
            detail = response.error_message or "no message"
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
            + (f": {response.error_message}" if response.error_message else ""),
        )
        lifetime = response.session_lifetime_ms
        token = mechanism.respond(bytes(response.auth_bytes))
    if not mechanism.complete:  # pragma: no cover - every mechanism ends complete or raises
        raise KafkaProtocolError(f"{config.mechanism}: exchange with {broker} ended early")
    log.debug(
        "SASL %s authentication with %s succeeded (user %s, session lifetime %d ms)",
        config.mechanism,
        broker,
        config.username or "from token",
        lifetime,
    )
    return max(0, int(lifetime))
