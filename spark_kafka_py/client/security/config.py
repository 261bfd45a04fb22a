"""Security option names and the frozen configuration they are parsed into.

The option names are the Java client's (``security.protocol``, ``sasl.mechanism``,
``sasl.jaas.config``, ``ssl.truststore.*``, ``ssl.keystore.*``, ``ssl.key.password``,
``ssl.endpoint.identification.algorithm``; see Kafka's ``SslConfigs``/``SaslConfigs`` and the
"Security" chapter of Kafka's documentation), given here without Spark's ``kafka.`` prefix;
error messages name them with it, as users write them.

:class:`SecurityConfig` is frozen and picklable, so the executors get the key material with
the reader Spark ships them; passwords, private keys and tokens are held in :class:`Secret`,
whose ``repr``/``str`` never show the value, so neither logs, exception messages nor
``explain()`` output can contain them. :func:`redact_options` hides secret option values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_kafka_py.registry import OPTIONS, SECURITY, kafka_settings

__all__ = [
    "PLAINTEXT",
    "REDACTED",
    "SASL_MECHANISMS",
    "SECURITY_OPTIONS",
    "SECURITY_PROTOCOLS",
    "SaslConfig",
    "Secret",
    "SecurityConfig",
    "SslConfig",
    "option_value",
    "redact_options",
]

#: ``security.protocol`` values (Kafka's ``SecurityProtocol`` enum).
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: ``sasl.mechanism`` values this client implements.
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")

#: Every option (without ``kafka.``) read by :func:`~.parse.parse_security_options`: the
#: registry's :data:`~spark_kafka_py.registry.SECURITY` options.
SECURITY_OPTIONS: frozenset[str] = kafka_settings(SECURITY)

#: Options whose whole value is secret (``secret`` in the registry), and what
#: :func:`redact_options` shows instead.
_SECRET_OPTIONS = frozenset(o.kafka_name or o.key for o in OPTIONS if o.secret)
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
        token_provider: ``"module:callable"`` (OAUTHBEARER); the callable returns a token
            string (then it is called at each (re-)authentication) or a ``(token,
            expiry_ms)`` pair (the token is then reused until near its expiry).
        token_provider_argument: the provider's only argument
            (``sasl.oauthbearer.config``), or None to call it without arguments.
        token_endpoint_url, client_id, client_secret, scope: the OAuth client-credentials
            flow of KIP-768 (OAUTHBEARER).
        unsecured_claims: claims of an unsecured JWS built by the client, from the
            ``OAuthBearerLoginModule``'s ``unsecuredLogin*`` options (tests only, KIP-255).
        unsecured_lifetime_s: lifetime of that token, seconds.
        extensions: SASL extensions sent with OAUTHBEARER (KIP-342, ``extension_*`` options) or
            SCRAM (``tokenauth=true``: a delegation token, KIP-48).
        kerberos_service_name: GSSAPI: the broker's Kerberos service name
            (``sasl.kerberos.service.name``, default ``kafka``): the broker's principal is
            ``<service>/<broker host>@REALM``.
        kerberos_principal: GSSAPI: the client's principal (JAAS ``principal``), or None for
            the ticket cache's default principal.
        keytab: GSSAPI: the keytab file (JAAS ``useKeyTab=true keyTab="..."``), or None to
            use the ticket cache.
        ticket_cache: GSSAPI: the credential cache (JAAS ``ticketCache``, a ``KRB5CCNAME``
            value), or None for the default one.
        krb5_conf: GSSAPI: the Kerberos configuration file: ``sasl.kerberos.krb5.conf``, else
            ``KRB5_CONFIG`` where the options were parsed, else None.
        krb5_conf_given: ``krb5_conf`` came from the option (it then wins over a process's
            own ``KRB5_CONFIG``).
    """

    mechanism: str
    username: str | None = None
    password: Secret | None = None
    token: Secret | None = None
    token_provider: str | None = None
    token_provider_argument: Secret | None = None
    token_endpoint_url: str | None = None
    client_id: str | None = None
    client_secret: Secret | None = None
    scope: str | None = None
    unsecured_claims: tuple[tuple[str, Any], ...] | None = None
    unsecured_lifetime_s: int = 3600
    extensions: tuple[tuple[str, str], ...] = ()
    kerberos_service_name: str = "kafka"
    kerberos_principal: str | None = None
    keytab: str | None = None
    ticket_cache: str | None = None
    krb5_conf: str | None = None
    krb5_conf_given: bool = False


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


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``kafka.*`` options (prefix stripped or not) with secret values replaced.

    Secret options: ``sasl.jaas.config``, ``sasl.oauthbearer.token``, ``ssl.*.password``,
    ``ssl.keystore.key``, the schema registry's ``basic.auth.user.info`` (and any key
    containing ``password``, ``secret`` or ``token``).
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


def option_value(kafka: Mapping[str, str], key: str) -> str | None:
    """The value of option ``key`` in ``kafka`` as text, or ``None`` when absent or blank."""
    value = kafka.get(key)
    if value is None:
        return None
    value = str(value)
    return value if value.strip() else None
