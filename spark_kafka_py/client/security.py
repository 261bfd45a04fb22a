"""Security settings of a connection: TLS and SASL options, parsed once into a frozen config.

The option names are the Java client's (``security.protocol``, ``sasl.mechanism``,
``sasl.jaas.config``, ``ssl.truststore.*``, ``ssl.keystore.*``, ``ssl.key.password``,
``ssl.endpoint.identification.algorithm``; see Kafka's ``SslConfigs``/``SaslConfigs`` and the
"Security" chapter of Kafka's documentation), given here without Spark's ``kafka.`` prefix;
error messages name them with it, as users write them.

:func:`parse_security_options` runs once, on the driver: it reads every key and trust store
named by a ``*.location`` option (so a missing or unreadable file fails the query at once)
and keeps their contents, converted to PEM, in a :class:`SecurityConfig`. That object is
frozen and picklable, so the executors get the key material with the reader Spark ships them;
passwords, private keys and tokens are held in :class:`Secret`, whose ``repr``/``str`` never
show the value, so neither logs, exception messages nor ``explain()`` output can contain them.

TLS goes through Python's :mod:`ssl` (hostname verification on by default, as Kafka's
``ssl.endpoint.identification.algorithm=https``); PKCS12 through the ``cryptography``
package; JKS stores are converted to PKCS12 with the JDK's ``keytool`` (Spark always has a
JDK on the driver). SASL itself lives in :mod:`spark_kafka_py.client.sasl`.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import functools
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_kafka_py.errors import ConfigError

__all__ = [
    "PLAINTEXT",
    "SASL_MECHANISMS",
    "SECURITY_OPTIONS",
    "SECURITY_PROTOCOLS",
    "JaasConfig",
    "SaslConfig",
    "Secret",
    "SecurityConfig",
    "SslConfig",
    "TlsError",
    "looks_like_tls",
    "parse_jaas_config",
    "parse_security_options",
    "redact_options",
    "ssl_context",
    "ssl_socket_factory",
    "tls_error_message",
    "unsecured_jws",
]

#: ``security.protocol`` values (Kafka's ``SecurityProtocol`` enum).
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: ``sasl.mechanism`` values this client implements.
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

#: The JAAS login module each mechanism expects (Kafka's ``PlainLoginModule``,
#: ``ScramLoginModule``, ``OAuthBearerLoginModule``).
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}

#: Every option (without ``kafka.``) read by :func:`parse_security_options`.
SECURITY_OPTIONS = frozenset(
    {
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "sasl.oauthbearer.token",
        "sasl.oauthbearer.token.provider",
        "sasl.oauthbearer.token.endpoint.url",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.login.callback.handler.class",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
        "ssl.truststore.certificates",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.type",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
    }
)

#: Options whose whole value is secret, and what :func:`redact_options` shows instead.
_SECRET_OPTIONS = frozenset(
    {
        "sasl.jaas.config",
        "sasl.oauthbearer.token",
        "ssl.truststore.password",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.key.password",
    }
)
REDACTED = "*********(redacted)"


class Secret:
    """A secret value (password, private key, token) whose ``repr``/``str`` hide it.

    ``reveal()`` returns the value; equality and hashing use it (so configs compare by
    content). It pickles with its value: that is how executors receive key material.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str | bytes) -> None:
        if not isinstance(value, (str, bytes)):
            raise TypeError(f"Secret holds str or bytes, not {type(value).__name__}")
        self._value = value

    def reveal(self) -> str | bytes:
        """The secret value."""
        return self._value

    def reveal_str(self) -> str:
        """The secret as text (bytes are decoded as UTF-8)."""
        v = self._value
        return v.decode("utf-8") if isinstance(v, bytes) else v

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Secret, (self._value,))

    def __bool__(self) -> bool:
        return bool(self._value)


class TlsError(OSError):
    """A TLS connection could not be set up; the message says why and what to check.

    An :class:`OSError` so that :class:`~spark_kafka_py.client.connection.BrokerConnection`
    reports it as a :class:`~spark_kafka_py.errors.KafkaConnectionError` naming the broker.
    """


# --------------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class SslConfig:
    """TLS settings, with the stores already read and converted to PEM.

    Attributes:
        ca_pem: trusted CA certificates (PEM text), or ``None`` for the system's defaults.
        cert_chain_pem: the client certificate chain (PEM, leaf first) for mutual TLS.
        key_pem: the client's private key (unencrypted PKCS#8 PEM) for mutual TLS.
        check_hostname: verify the broker's certificate names the host we connect to
            (``ssl.endpoint.identification.algorithm=https``, Kafka's default since 2.0).
    """

    ca_pem: str | None = None
    cert_chain_pem: str | None = None
    key_pem: Secret | None = None
    check_hostname: bool = True


@dataclass(frozen=True, slots=True)
class SaslConfig:
    """SASL settings.

    Attributes:
        mechanism: one of :data:`SASL_MECHANISMS`.
        username, password: for PLAIN and SCRAM-SHA-256/512.
        token: a static OAUTHBEARER token (a compact JWS).
        token_provider: ``"module:callable"``; the callable (no arguments) returns a token
            string, called at each (re-)authentication (OAUTHBEARER).
        token_endpoint_url, client_id, client_secret, scope: the OAuth client-credentials
            flow of KIP-768 (OAUTHBEARER).
        unsecured_claims: claims of an unsecured JWS built by the client, from the
            ``OAuthBearerLoginModule``'s ``unsecuredLogin*`` options (tests only, KIP-255).
        unsecured_lifetime_s: lifetime of that token, seconds.
        extensions: SASL extensions sent with OAUTHBEARER (KIP-342, ``extension_*`` options).
    """

    mechanism: str
    username: str | None = None
    password: Secret | None = None
    token: Secret | None = None
    token_provider: str | None = None
    token_endpoint_url: str | None = None
    client_id: str | None = None
    client_secret: Secret | None = None
    scope: str | None = None
    unsecured_claims: tuple[tuple[str, Any], ...] | None = None
    unsecured_lifetime_s: int = 3600
    extensions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SecurityConfig:
    """``security.protocol`` with its TLS and SASL settings (frozen, picklable, hashable).

    ``ssl`` is set for SSL and SASL_SSL, ``sasl`` for SASL_PLAINTEXT and SASL_SSL.
    """

    protocol: str = "PLAINTEXT"
    ssl: SslConfig | None = None
    sasl: SaslConfig | None = None

    @property
    def uses_tls(self) -> bool:
        """True for SSL and SASL_SSL."""
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        """True for SASL_PLAINTEXT and SASL_SSL."""
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


#: The default: no TLS, no SASL.
PLAINTEXT = SecurityConfig()


# ------------------------------------------------------------------------------------ JAAS


@dataclass(frozen=True, slots=True)
class JaasConfig:
    """One parsed ``sasl.jaas.config`` entry: ``<LoginModule> <flag> key=value ... ;``.

    ``options`` values may be secrets; this class's repr hides them.
    """

    login_module: str
    flag: str
    options: Mapping[str, str] = field(repr=False)


_JAAS_TOKEN = re.compile(
    r"""\s*(?:
        (?P<quoted>"(?:[^"\\]|\\.)*")       # "quoted value"
      | (?P<eq>=)
      | (?P<semi>;)
      | (?P<word>[^\s=;"]+)
    )""",
    re.VERBOSE | re.DOTALL,
)


def parse_jaas_config(text: str) -> JaasConfig:
    """Parse a Kafka ``sasl.jaas.config`` value (JAAS file syntax, one login module).

    ``org.example.LoginModule required user="alice" password="s3cret";``: the module class,
    a control flag (required, requisite, sufficient, optional), ``key=value`` options with
    values quoted or bare, and a closing ``;`` (Kafka's ``JaasConfig`` requires exactly one
    module). Source: Kafka ``org.apache.kafka.common.security.JaasConfig``, Java's
    ``javax.security.auth.login.ConfigFile`` syntax.

    Raises:
        ConfigError: naming ``kafka.sasl.jaas.config`` and what is wrong -- never quoting
            option values, which may be passwords.
    """
    name = "kafka.sasl.jaas.config"
    tokens: list[tuple[str, str]] = []
    pos = 0
    stripped = text.strip()
    while pos < len(stripped):
        m = _JAAS_TOKEN.match(stripped, pos)
        if m is None or m.end() == pos:
            raise ConfigError(f"Option '{name}': unbalanced quotes or bad character")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind)))
        while pos < len(stripped) and stripped[pos].isspace():
            pos += 1
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise ConfigError(
            f"Option '{name}' must look like '<LoginModule class> required key=\"value\" ...;'"
        )
    module, flag = tokens[0][1], tokens[1][1].lower()
    if flag not in ("required", "requisite", "sufficient", "optional"):
        raise ConfigError(
            f"Option '{name}': login module control flag must be required, requisite, "
            f"sufficient or optional, got {tokens[1][1]!r}"
        )
    if tokens[-1][0] != "semi":
        raise ConfigError(f"Option '{name}' must end with ';'")
    body = tokens[2:-1]
    if any(kind == "semi" for kind, _ in body):
        raise ConfigError(f"Option '{name}' must hold exactly one login module")
    options: dict[str, str] = {}
    i = 0
    while i < len(body):
        if len(body) - i < 3:
            raise ConfigError(f"Option '{name}': expected key=value after {module}")
        (k_kind, key), (e_kind, _), (v_kind, value) = body[i], body[i + 1], body[i + 2]
        if k_kind != "word" or e_kind != "eq" or v_kind not in ("word", "quoted"):
            raise ConfigError(f"Option '{name}': expected key=value after {module}")
        if v_kind == "quoted":
            value = re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL)
        options[key] = value
        i += 3
    return JaasConfig(module, flag, options)


# --------------------------------------------------------------------------------- parsing


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``kafka.*`` options (prefix stripped or not) with secret values replaced.

    Secret options: ``sasl.jaas.config``, ``sasl.oauthbearer.token``, ``ssl.*.password``,
    ``ssl.keystore.key`` (and any key containing ``password``, ``secret`` or ``token``).
    """
    out = {}
    for key, value in options.items():
        bare = key[len("kafka.") :] if key.startswith("kafka.") else key
        low = bare.lower()
        if low in _SECRET_OPTIONS or any(w in low for w in ("password", "secret", "token")):
            out[key] = REDACTED
        else:
            out[key] = value
    return out


def _opt(kafka: Mapping[str, str], key: str) -> str | None:
    value = kafka.get(key)
    if value is None:
        return None
    value = str(value)
    return value if value.strip() else None


def parse_security_options(kafka: Mapping[str, str]) -> SecurityConfig:
    """Build a :class:`SecurityConfig` from Kafka client options (``kafka.`` prefix stripped).

    Reads the files named by ``ssl.truststore.location`` / ``ssl.keystore.location`` now.
    Options of a layer that ``security.protocol`` does not use (e.g. ``ssl.*`` with
    SASL_PLAINTEXT) are ignored, as the Java client does.

    Raises:
        ConfigError: an unknown protocol or mechanism, a malformed or mismatched
            ``sasl.jaas.config``, a missing/unreadable store, a wrong store password, a
            store without the expected key or certificates. The message names the option;
            it never contains a password, key or token.
    """
    raw_protocol = _opt(kafka, "security.protocol") or "PLAINTEXT"
    protocol = raw_protocol.strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise ConfigError(
            f"Option 'kafka.security.protocol' must be one of {', '.join(SECURITY_PROTOCOLS)}, "
            f"got {raw_protocol!r}"
        )
    tls = _parse_ssl(kafka) if protocol in ("SSL", "SASL_SSL") else None
    sasl = _parse_sasl(kafka) if protocol in ("SASL_PLAINTEXT", "SASL_SSL") else None
    return SecurityConfig(protocol, tls, sasl)


def _parse_sasl(kafka: Mapping[str, str]) -> SaslConfig:
    raw = _opt(kafka, "sasl.mechanism") or "GSSAPI"
    mechanism = raw.strip().upper()
    if mechanism not in SASL_MECHANISMS:
        extra = " (GSSAPI is the Java client's default; Kerberos is not supported)"
        raise ConfigError(
            f"Option 'kafka.sasl.mechanism' must be one of {', '.join(SASL_MECHANISMS)}, "
            f"got {raw!r}" + (extra if mechanism == "GSSAPI" else "")
        )
    jaas_text = _opt(kafka, "sasl.jaas.config")
    jaas = parse_jaas_config(jaas_text) if jaas_text is not None else None
    expected = _LOGIN_MODULES[mechanism]
    if jaas is not None and jaas.login_module != expected:
        raise ConfigError(
            f"Option 'kafka.sasl.jaas.config' uses {jaas.login_module}, but "
            f"kafka.sasl.mechanism={mechanism} needs {expected}"
        )
    opts = dict(jaas.options) if jaas is not None else {}
    if mechanism == "OAUTHBEARER":
        return _parse_oauthbearer(kafka, opts)
    if jaas is None:
        raise ConfigError(
            f"Option 'kafka.sasl.jaas.config' is required for kafka.sasl.mechanism={mechanism}, "
            f'e.g. {expected} required username="alice" password="...";'
        )
    for key in ("username", "password"):
        if not opts.get(key):
            raise ConfigError(
                f"Option 'kafka.sasl.jaas.config': {jaas.login_module} needs a non-empty "
                f'{key}="..."'
            )
    return SaslConfig(mechanism, username=opts["username"], password=Secret(opts["password"]))


def _parse_oauthbearer(kafka: Mapping[str, str], opts: Mapping[str, str]) -> SaslConfig:
    token = _opt(kafka, "sasl.oauthbearer.token")
    provider = _opt(kafka, "sasl.oauthbearer.token.provider")
    endpoint = _opt(kafka, "sasl.oauthbearer.token.endpoint.url")
    unsecured = {k: v for k, v in opts.items() if k.startswith("unsecuredLogin")}
    extensions = tuple(
        (k[len("extension_") :], v) for k, v in sorted(opts.items()) if k.startswith("extension_")
    )
    given = [
        name
        for name, present in (
            ("kafka.sasl.oauthbearer.token", token is not None),
            ("kafka.sasl.oauthbearer.token.provider", provider is not None),
            ("kafka.sasl.oauthbearer.token.endpoint.url", endpoint is not None),
            ("unsecuredLogin* options in kafka.sasl.jaas.config", bool(unsecured)),
        )
        if present
    ]
    if len(given) != 1:
        raise ConfigError(
            "OAUTHBEARER needs exactly one token source: kafka.sasl.oauthbearer.token (a static "
            "token), kafka.sasl.oauthbearer.token.provider ('module:function' returning a "
            "token), kafka.sasl.oauthbearer.token.endpoint.url with clientId/clientSecret in "
            "kafka.sasl.jaas.config (KIP-768), or unsecuredLoginStringClaim_sub in "
            f"kafka.sasl.jaas.config (tests only); got {', '.join(given) or 'none'}"
        )
    if provider is not None and not re.fullmatch(r"[\w.]+:[\w.]+", provider.strip()):
        raise ConfigError(
            "Option 'kafka.sasl.oauthbearer.token.provider' must be 'module:function', "
            f"got {provider!r}"
        )
    claims: tuple[tuple[str, Any], ...] | None = None
    lifetime = 3600
    if unsecured:
        claims, lifetime = _unsecured_claims(unsecured, kafka)
    client_id = opts.get("clientId")
    client_secret = opts.get("clientSecret")
    if endpoint is not None:
        if not endpoint.startswith(("https://", "http://", "file:")):
            raise ConfigError(
                "Option 'kafka.sasl.oauthbearer.token.endpoint.url' must be an http(s) URL, "
                f"got {endpoint!r}"
            )
        if not endpoint.startswith("file:") and not (client_id and client_secret):
            raise ConfigError(
                "Option 'kafka.sasl.jaas.config' must give clientId=\"...\" and "
                'clientSecret="..." with kafka.sasl.oauthbearer.token.endpoint.url (KIP-768)'
            )
    return SaslConfig(
        "OAUTHBEARER",
        token=Secret(token.strip()) if token is not None else None,
        token_provider=provider.strip() if provider is not None else None,
        token_endpoint_url=endpoint,
        client_id=client_id,
        client_secret=Secret(client_secret) if client_secret else None,
        scope=opts.get("scope"),
        unsecured_claims=claims,
        unsecured_lifetime_s=lifetime,
        extensions=extensions,
    )


def _unsecured_claims(
    opts: Mapping[str, str], kafka: Mapping[str, str]
) -> tuple[tuple[tuple[str, Any], ...], int]:
    """Claims of Kafka's unsecured login (``OAuthBearerUnsecuredLoginCallbackHandler``)."""
    claims: dict[str, Any] = {}
    lifetime = 3600
    principal_claim = opts.get("unsecuredLoginPrincipalClaimName", "sub")
    for key, value in opts.items():
        for prefix, kind in (
            ("unsecuredLoginStringClaim_", "string"),
            ("unsecuredLoginNumberClaim_", "number"),
            ("unsecuredLoginListClaim_", "list"),
        ):
            if key.startswith(prefix):
                name = key[len(prefix) :]
                if kind == "string":
                    claims[name] = value
                elif kind == "number":
                    try:
                        claims[name] = float(value) if "." in value else int(value)
                    except ValueError:
                        raise ConfigError(
                            f"Option 'kafka.sasl.jaas.config': {key} must be a number"
                        ) from None
                else:  # first character is the separator (Kafka's convention)
                    claims[name] = [x for x in value[1:].split(value[:1]) if x] if value else []
        if key == "unsecuredLoginLifetimeSeconds":
            try:
                lifetime = int(value)
            except ValueError:
                raise ConfigError(
                    "Option 'kafka.sasl.jaas.config': unsecuredLoginLifetimeSeconds must be an "
                    "integer"
                ) from None
    if not claims.get(principal_claim):
        raise ConfigError(
            "Option 'kafka.sasl.jaas.config': the unsecured OAUTHBEARER login needs "
            f'unsecuredLoginStringClaim_{principal_claim}="<principal>"'
        )
    return tuple(sorted(claims.items())), lifetime


def _parse_ssl(kafka: Mapping[str, str]) -> SslConfig:
    algo = kafka.get("ssl.endpoint.identification.algorithm", "https")
    algo_text = str(algo).strip().lower()
    if algo_text not in ("https", ""):
        raise ConfigError(
            "Option 'kafka.ssl.endpoint.identification.algorithm' must be 'https' (verify the "
            f"broker's host name, the default) or '' (do not), got {algo!r}"
        )
    ca_pem = _load_truststore(kafka)
    chain, key = _load_keystore(kafka)
    return SslConfig(
        ca_pem=ca_pem, cert_chain_pem=chain, key_pem=key, check_hostname=bool(algo_text)
    )


def _store_type(kafka: Mapping[str, str], option: str, location: str | None) -> str:
    raw = _opt(kafka, option)
    if raw is None:
        if location is not None and location.lower().endswith((".pem", ".crt", ".cer")):
            return "PEM"
        if location is not None and location.lower().endswith((".p12", ".pfx", ".pkcs12")):
            return "PKCS12"
        return "JKS"  # the Java client's default
    kind = raw.strip().upper()
    if kind not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError(f"Option 'kafka.{option}' must be JKS, PKCS12 or PEM, got {raw!r}")
    return kind


def _read_file(option: str, location: str) -> bytes:
    try:
        return Path(location).expanduser().read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"Option 'kafka.{option}': file {location!r} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"Option 'kafka.{option}': {location!r} is a directory") from None
    except OSError as exc:
        raise ConfigError(
            f"Option 'kafka.{option}': cannot read {location!r}: {exc.strerror}"
        ) from None


def _load_truststore(kafka: Mapping[str, str]) -> str | None:
    location = _opt(kafka, "ssl.truststore.location")
    pem = _opt(kafka, "ssl.truststore.certificates")
    if location is not None and pem is not None:
        raise ConfigError(
            "Options 'kafka.ssl.truststore.location' and 'kafka.ssl.truststore.certificates' "
            "are exclusive; give one"
        )
    if pem is not None:
        kind = (
            _store_type(kafka, "ssl.truststore.type", None)
            if _opt(kafka, "ssl.truststore.type")
            else "PEM"
        )
        if kind != "PEM":
            raise ConfigError(
                "Option 'kafka.ssl.truststore.certificates' needs kafka.ssl.truststore.type=PEM"
            )
        return _check_certs_pem(pem, "ssl.truststore.certificates")
    if location is None:
        return None
    kind = _store_type(kafka, "ssl.truststore.type", location)
    data = _read_file("ssl.truststore.location", location)
    password = _opt(kafka, "ssl.truststore.password")
    if kind == "PEM":
        if password is not None:
            raise ConfigError(
                "Option 'kafka.ssl.truststore.password' is not supported with "
                "kafka.ssl.truststore.type=PEM (PEM trust stores are not encrypted)"
            )
        return _check_certs_pem(data.decode("utf-8", "replace"), "ssl.truststore.location")
    if kind == "JKS":
        data = _jks_to_pkcs12(data, "ssl.truststore", password)
    _key, certs = _load_pkcs12(data, "ssl.truststore", password, want_key=False)
    if not certs:
        raise ConfigError(
            f"Option 'kafka.ssl.truststore.location': {location!r} has no certificates"
        )
    return "".join(certs)


def _load_keystore(kafka: Mapping[str, str]) -> tuple[str | None, Secret | None]:
    location = _opt(kafka, "ssl.keystore.location")
    chain = _opt(kafka, "ssl.keystore.certificate.chain")
    key = _opt(kafka, "ssl.keystore.key")
    key_password = _opt(kafka, "ssl.key.password")
    if location is not None and (chain is not None or key is not None):
        raise ConfigError(
            "Option 'kafka.ssl.keystore.location' and 'kafka.ssl.keystore.certificate.chain'/"
            "'kafka.ssl.keystore.key' are exclusive; give one"
        )
    if chain is not None or key is not None:
        if chain is None or key is None:
            raise ConfigError(
                "Options 'kafka.ssl.keystore.certificate.chain' and 'kafka.ssl.keystore.key' "
                "must be given together"
            )
        certs = _check_certs_pem(chain, "ssl.keystore.certificate.chain")
        return certs, _pem_private_key(key.encode(), "ssl.keystore.key", key_password)
    if location is None:
        return None, None
    kind = _store_type(kafka, "ssl.keystore.type", location)
    data = _read_file("ssl.keystore.location", location)
    password = _opt(kafka, "ssl.keystore.password")
    if kind == "PEM":
        text = data.decode("utf-8", "replace")
        certs = _check_certs_pem(text, "ssl.keystore.location")
        return certs, _pem_private_key(data, "ssl.keystore.location", key_password)
    if kind == "JKS":
        data = _jks_to_pkcs12(data, "ssl.keystore", password)
    key_obj, certs = _load_pkcs12(data, "ssl.keystore", password, want_key=True)
    assert key_obj is not None
    return "".join(certs), key_obj


_PEM_CERT = re.compile(
    r"-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----", re.DOTALL
)


def _check_certs_pem(text: str, option: str) -> str:
    from cryptography import x509

    blocks = _PEM_CERT.findall(text)
    if not blocks:
        raise ConfigError(f"Option 'kafka.{option}' holds no PEM certificate (BEGIN CERTIFICATE)")
    for block in blocks:
        try:
            x509.load_pem_x509_certificate(block.encode("ascii"))
        except ValueError:
            raise ConfigError(f"Option 'kafka.{option}' holds a malformed certificate") from None
    return "\n".join(blocks) + "\n"


def _pem_private_key(data: bytes, option: str, password: str | None) -> Secret:
    from cryptography.hazmat.primitives import serialization

    match = re.search(
        rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.+?-----END \1PRIVATE KEY-----", data, re.DOTALL
    )
    if match is None:
        raise ConfigError(f"Option 'kafka.{option}' holds no PEM private key")
    try:
        key = serialization.load_pem_private_key(
            match.group(0), password.encode() if password is not None else None
        )
    except TypeError:
        if password is None:
            raise ConfigError(
                f"Option 'kafka.{option}': the private key is encrypted; "
                "give kafka.ssl.key.password"
            ) from None
        raise ConfigError(
            f"Option 'kafka.{option}': the private key is not encrypted, but "
            "kafka.ssl.key.password is set"
        ) from None
    except ValueError:
        raise ConfigError(
            f"Option 'kafka.{option}': cannot decrypt or parse the private key (wrong "
            "kafka.ssl.key.password?)"
        ) from None
    return _key_to_pem(key)


def _key_to_pem(key: Any) -> Secret:
    from cryptography.hazmat.primitives import serialization

    return Secret(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode("ascii")
    )


def _load_pkcs12(
    data: bytes, prefix: str, password: str | None, *, want_key: bool
) -> tuple[Secret | None, list[str]]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        hint = "" if password is not None else f" (kafka.{prefix}.password is not set)"
        raise ConfigError(
            f"Option 'kafka.{prefix}.location': not a PKCS12 store, or wrong "
            f"kafka.{prefix}.password{hint}"
        ) from None
    certs = []
    if store.cert is not None:
        certs.append(store.cert.certificate)
    certs.extend(c.certificate for c in store.additional_certs)
    pems = [c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs]
    if not want_key:
        return None, pems
    if store.key is None or store.cert is None:
        raise ConfigError(
            f"Option 'kafka.{prefix}.location': the key store holds no private key with its "
            "certificate"
        )
    return _key_to_pem(store.key), pems


def _jks_to_pkcs12(data: bytes, prefix: str, password: str | None) -> bytes:
    """Convert a JKS store to PKCS12 with the JDK's ``keytool -importkeystore``.

    The key entries must be protected by the store password (``keytool`` converts a whole
    store only then; a different ``ssl.key.password`` needs a PKCS12 or PEM store).

    Raises:
        ConfigError: no ``keytool`` (name ``JAVA_HOME`` or use PKCS12/PEM), no password, or
            keytool refused the store (wrong password, not a JKS file).
    """
    if password is None:
        raise ConfigError(
            f"Option 'kafka.{prefix}.password' is required to read a JKS store "
            f"(kafka.{prefix}.type=JKS, the default)"
        )
    keytool = _keytool()
    if keytool is None:
        raise ConfigError(
            f"Option 'kafka.{prefix}.location': reading a JKS store needs the JDK's keytool "
            "(set JAVA_HOME), or convert the store to PKCS12 or PEM"
        )
    with tempfile.TemporaryDirectory(prefix="spark-kafka-py-jks-") as tmp:
        src = Path(tmp, "in.jks")
        dst = Path(tmp, "out.p12")
        src.write_bytes(data)
        os.chmod(src, 0o600)
        cmd = [
            keytool, "-importkeystore", "-noprompt",
            "-srckeystore", str(src), "-srcstoretype", "JKS",
            "-destkeystore", str(dst), "-deststoretype", "PKCS12",
        ]  # fmt: skip
        env = dict(os.environ)
        env["SKP_SRC"] = password
        env["SKP_DST"] = password
        cmd += ["-srcstorepass:env", "SKP_SRC", "-deststorepass:env", "SKP_DST"]
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=False)
        if proc.returncode != 0 or not dst.exists():
            out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            reason = "wrong password" if "password" in out.lower() else "not a JKS store"
            raise ConfigError(
                f"Option 'kafka.{prefix}.location': keytool cannot read the JKS store "
                f"({reason}; check kafka.{prefix}.password)"
            )
        return dst.read_bytes()


def _keytool() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "keytool").exists():
        return str(Path(home, "bin", "keytool"))
    return shutil.which("keytool")


# -------------------------------------------------------------------------------------- TLS


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
