"""The schema registry client's settings, named as Confluent's serializers name them.

Source: Confluent's "Configuration Reference for Schema Registry Clients"
(``schema.registry.url``, ``basic.auth.credentials.source``, ``basic.auth.user.info``) and the
``schema.registry.ssl.*`` settings of its Java serializers, which carry Kafka's ``ssl.*`` names
under the ``schema.registry.`` prefix. Ours, in the same style:
``schema.registry.request.timeout.ms``, ``schema.registry.connect.timeout.ms``,
``schema.registry.max.response.bytes`` and the retry settings
``schema.registry.retry.backoff.ms``, ``schema.registry.retry.backoff.max.ms`` and
``schema.registry.retry.timeout.ms`` (after the Kafka client's ``retry.backoff.ms``,
``retry.backoff.max.ms`` and ``default.api.timeout.ms``, with their defaults from
:mod:`spark_kafka_py.client_defaults`).

:func:`parse_settings` reads them once into a frozen :class:`RegistrySettings`; secrets
(``basic.auth.user.info``, passwords in URLs, the key password) never appear in its ``repr``.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field

from spark_kafka_py.client_defaults import (
    DEFAULT_API_TIMEOUT_MS,
    REQUEST_TIMEOUT_MS,
    RETRY_BACKOFF_MAX_MS,
    RETRY_BACKOFF_MS,
    SOCKET_CONNECTION_SETUP_TIMEOUT_MS,
)
from spark_kafka_py.errors import ConfigError

__all__ = [
    "CREDENTIALS_SOURCES",
    "MAX_RESPONSE_BYTES",
    "PREFIX",
    "RegistrySettings",
    "parse_settings",
    "redact_url",
]

#: Prefix of every setting (and of Confluent's TLS settings for the registry).
PREFIX = "schema.registry."

#: ``basic.auth.credentials.source`` values honoured: the user info setting, or the URL's
#: ``user:password@`` part (Confluent also has ``SASL_INHERIT``, which we refuse).
CREDENTIALS_SOURCES = ("USER_INFO", "URL")

#: ``schema.registry.max.response.bytes`` default: 8 MiB. A schema registry's answers are JSON
#: documents holding a schema or a list of versions; Confluent's own limit of a schema is far
#: below this.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


def redact_url(url: str) -> str:
    """``url`` without its ``user:password@`` part (for messages and logs)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port is not None else host
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True, slots=True)
class RegistrySettings:
    """The client's settings, checked.

    Attributes:
        urls: the registries' base URLs without credentials, e.g.
            ``("http://registry:8081",)``, tried in turn (``schema.registry.url``).
        username, password: basic authentication (HTTP ``Authorization: Basic``), or ``None``.
        truststore: a PEM file of CA certificates to verify the registry's certificate with
            (``schema.registry.ssl.truststore.location``), ``None`` for the system's CAs.
        keystore: a PEM file with the client's certificate chain and private key, for mutual
            TLS (``schema.registry.ssl.keystore.location``), or ``None``.
        key_password: the private key's password (``schema.registry.ssl.key.password``).
        check_hostname: ``schema.registry.ssl.endpoint.identification.algorithm`` is ``https``
            (the default) rather than empty.
        request_timeout_ms: the longest one HTTP exchange may take, connection, request and the
            whole answer included (ms).
        connect_timeout_ms: the longest a TCP (and TLS) connection set-up may take (ms).
        max_response_bytes: the largest answer body read (bytes, after content decoding).
        retry_backoff_ms, retry_backoff_max_ms: the first and the longest pause between
            retries (ms; KIP-580's exponential backoff).
        retry_timeout_ms: how long one operation may keep retrying (ms).
    """

    urls: tuple[str, ...]
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    truststore: str | None = None
    keystore: str | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True
    request_timeout_ms: int = REQUEST_TIMEOUT_MS
    connect_timeout_ms: int = SOCKET_CONNECTION_SETUP_TIMEOUT_MS
    max_response_bytes: int = MAX_RESPONSE_BYTES
    retry_backoff_ms: int = RETRY_BACKOFF_MS
    retry_backoff_max_ms: int = RETRY_BACKOFF_MAX_MS
    retry_timeout_ms: int = DEFAULT_API_TIMEOUT_MS


def _int(options: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    raw = options.get(name)
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    return value


def _one_of(options: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """The value of the first of ``names`` set; two set differently is an error."""
    found = {n: str(options[n]) for n in names if options.get(n) not in (None, "")}
    if len(set(found.values())) > 1:
        raise ConfigError(f"{' and '.join(found)} disagree: set one of them")
    return next(iter(found.values()), None)


def parse_settings(options: Mapping[str, str]) -> RegistrySettings:
    """Read the registry settings out of ``options`` (other keys are ignored).

    ``basic.auth.credentials.source`` and ``basic.auth.user.info`` are read with or without the
    ``schema.registry.`` prefix, as Confluent's clients accept both. With ``URL`` the
    credentials come from the first URL's ``user:password@``; with ``USER_INFO`` (the default)
    from ``basic.auth.user.info`` (``user:password``). Credentials are removed from the URLs.

    Raises:
        ConfigError: no ``schema.registry.url``, a URL that is not ``http(s)://host...``, an
            unknown credentials source, user info without ``:``, ``URL`` without user info in
            the URL, a TLS store of a type other than ``PEM``, a number that is not an integer
            or out of range. The message names the setting, never its secret.
    """
    raw_urls = [u.strip() for u in str(options.get(f"{PREFIX}url") or "").split(",") if u.strip()]
    if not raw_urls:
        raise ConfigError(f"{PREFIX}url is required (comma-separated registry URLs)")
    urls: list[str] = []
    url_user: tuple[str, str] | None = None
    for raw in raw_urls:
        try:
            parts = urllib.parse.urlsplit(raw)
            parts.port  # noqa: B018 -- raises ValueError on a bad port
        except ValueError:
            raise ConfigError(f"{PREFIX}url: {redact_url(raw)!r} is not a URL") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"{PREFIX}url: {redact_url(raw)!r} must be http://host[:port][/path] or https://..."
            )
        if parts.username is not None and url_user is None:
            url_user = (
                urllib.parse.unquote(parts.username),
                urllib.parse.unquote(parts.password or ""),
            )
        urls.append(redact_url(raw).rstrip("/"))

    source = (
        _one_of(
            options, (f"{PREFIX}basic.auth.credentials.source", "basic.auth.credentials.source")
        )
        or "USER_INFO"
    ).upper()
    if source not in CREDENTIALS_SOURCES:
        raise ConfigError(
            f"basic.auth.credentials.source must be one of {', '.join(CREDENTIALS_SOURCES)}, "
            f"got {source!r}"
        )
    username: str | None = None
    password: str | None = None
    if source == "URL":
        if url_user is None:
            raise ConfigError(
                "basic.auth.credentials.source=URL but schema.registry.url has no user:password@"
            )
        username, password = url_user
    else:
        info = _one_of(options, (f"{PREFIX}basic.auth.user.info", "basic.auth.user.info"))
        if info is not None:
            if ":" not in info:
                raise ConfigError(
                    f"{PREFIX}basic.auth.user.info must be user:password (value not shown)"
                )
            username, password = info.split(":", 1)
        elif url_user is not None:  # Confluent's Python client also takes them from the URL
            username, password = url_user

    stores: dict[str, str | None] = {}
    for store in ("truststore", "keystore"):
        kind = str(options.get(f"{PREFIX}ssl.{store}.type") or "PEM").upper()
        location = options.get(f"{PREFIX}ssl.{store}.location") or None
        if location is not None and kind != "PEM":
            raise ConfigError(
                f"{PREFIX}ssl.{store}.type={kind} is not supported for the schema registry: "
                f"give a PEM file ({PREFIX}ssl.{store}.type=PEM)"
            )
        stores[store] = str(location) if location is not None else None
    algorithm = str(options.get(f"{PREFIX}ssl.endpoint.identification.algorithm", "https"))
    if algorithm.lower() not in ("https", ""):
        raise ConfigError(
            f"{PREFIX}ssl.endpoint.identification.algorithm must be https or empty, "
            f"got {algorithm!r}"
        )
    key_password = options.get(f"{PREFIX}ssl.key.password") or None

    return RegistrySettings(
        urls=tuple(urls),
        username=username,
        password=password,
        truststore=stores["truststore"],
        keystore=stores["keystore"],
        key_password=str(key_password) if key_password is not None else None,
        check_hostname=algorithm.lower() == "https",
        request_timeout_ms=_int(options, f"{PREFIX}request.timeout.ms", REQUEST_TIMEOUT_MS, 1),
        connect_timeout_ms=_int(
            options, f"{PREFIX}connect.timeout.ms", SOCKET_CONNECTION_SETUP_TIMEOUT_MS, 1
        ),
        max_response_bytes=_int(options, f"{PREFIX}max.response.bytes", MAX_RESPONSE_BYTES, 1024),
        retry_backoff_ms=_int(options, f"{PREFIX}retry.backoff.ms", RETRY_BACKOFF_MS, 0),
        retry_backoff_max_ms=_int(
            options, f"{PREFIX}retry.backoff.max.ms", RETRY_BACKOFF_MAX_MS, 0
        ),
        retry_timeout_ms=_int(options, f"{PREFIX}retry.timeout.ms", DEFAULT_API_TIMEOUT_MS, 0),
    )
