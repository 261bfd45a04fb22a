"""OAUTHBEARER helpers without I/O: the unsecured JWS of Kafka's unsecured login, and the
token endpoint URL (checked when the options are parsed, shown without credentials).

The token request itself is :func:`spark_kafka_py.client.sasl.oauth_token`.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from spark_kafka_py.errors import ConfigError

__all__ = [
    "ALLOWED_URLS_OPTION",
    "TOKEN_ENDPOINT_OPTION",
    "check_token_endpoint",
    "display_url",
    "unsecured_jws",
]

#: The option naming the KIP-768 token endpoint (Java client: ``sasl.oauthbearer.token.
#: endpoint.url``).
TOKEN_ENDPOINT_OPTION = "kafka.sasl.oauthbearer.token.endpoint.url"
#: The option listing the token endpoints allowed, as Kafka's JVM system property
#: ``org.apache.kafka.sasl.oauthbearer.allowed.urls`` (Kafka 3.9.1 and 4.0+).
ALLOWED_URLS_OPTION = "kafka.sasl.oauthbearer.allowed.urls"
#: Longest part of a URL shown in a message, characters.
_MAX_URL_PART = 200


def display_url(url: str) -> str:
    """``url`` as messages show it: ``scheme://host[:port]/path`` without user name, password,
    query or fragment (any of which may hold a credential), non-printable characters escaped,
    each part cut at 200 characters."""

    def part(text: str) -> str:
        return "".join(
            c if c.isprintable() else c.encode("unicode_escape").decode()
            for c in text[:_MAX_URL_PART]
        )

    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(a malformed URL)"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    scheme = part(parts.scheme)
    return f"{scheme}://{part(netloc)}{part(parts.path)}" if scheme else part(parts.path)


def check_token_endpoint(url: str, allowed_urls: str | None) -> None:
    """Check the token endpoint before anything is sent to it.

    An ``https://`` URL with a host, or a ``file:`` URL (KIP-768's token file); ``http://``
    only when listed in ``allowed_urls`` (the client secret would cross the network in
    clear). When ``allowed_urls`` (comma-separated URLs) is given, the endpoint must be one of
    them, whatever its scheme, as with Kafka's ``org.apache.kafka.sasl.oauthbearer.allowed.urls``.

    Raises:
        ConfigError: naming :data:`TOKEN_ENDPOINT_OPTION` (and :data:`ALLOWED_URLS_OPTION`
            where listing the URL would help); the URL is shown by :func:`display_url`.
    """
    shown = display_url(url)
    try:
        parts = urllib.parse.urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ConfigError(f"Option '{TOKEN_ENDPOINT_OPTION}' is not a valid URL: {shown}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http", "file"):
        raise ConfigError(
            f"Option '{TOKEN_ENDPOINT_OPTION}' must be an https URL (or a file: URL of a "
            f"token), got {shown}"
        )
    if scheme != "file" and not parts.hostname:
        raise ConfigError(f"Option '{TOKEN_ENDPOINT_OPTION}' names no host: {shown}")
    if allowed_urls is not None:
        allowed = {u.strip() for u in allowed_urls.split(",") if u.strip()}
        if url.strip() not in allowed:
            raise ConfigError(
                f"Option '{TOKEN_ENDPOINT_OPTION}' {shown} is not one of the URLs listed in "
                f"option '{ALLOWED_URLS_OPTION}'"
            )
    elif scheme == "http":
        raise ConfigError(
            f"Option '{TOKEN_ENDPOINT_OPTION}' must be an https URL, got {shown}: over http the "
            "client secret would travel in clear. For a local test endpoint, list the URL in "
            f"option '{ALLOWED_URLS_OPTION}'"
        )


def unsecured_jws(claims: Mapping[str, Any], lifetime_s: int, now: float | None = None) -> str:
    """An unsecured JWS (``alg: none``, RFC 7515 appendix A.5) with ``iat``/``exp`` set.

    Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` builds the same kind of token from the
    ``unsecuredLogin*`` JAAS options; Kafka's unsecured validator accepts it (KIP-255). Tests
    and development only: anyone can forge such a token.
    """
    t = int(time.time() if now is None else now)
    body = {"iat": t, "exp": t + lifetime_s, **dict(claims)}

    def b64(obj: Any) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    return f"{b64({'alg': 'none'})}.{b64(body)}."
