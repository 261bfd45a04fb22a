"""Security settings of a connection: TLS and SASL options, parsed once into a frozen config.

* :mod:`.config` - the option names (:data:`SECURITY_OPTIONS`), :class:`SecurityConfig` with
  its :class:`SslConfig` / :class:`SaslConfig`, :class:`Secret` and :func:`redact_options`;
* :mod:`.jaas` - ``sasl.jaas.config`` values (:func:`parse_jaas_config`);
* :mod:`.parse` - :func:`parse_security_options`: options into a :class:`SecurityConfig`, once,
  on the driver, reading every key and trust store named by a ``*.location`` option;
* :mod:`.stores` - PEM, PKCS12 and JKS key and trust stores read into PEM;
* :mod:`.tls` - the :class:`ssl.SSLContext`, the TLS socket factory, clear TLS failures;
* :mod:`.oauth` - the unsecured JWS of Kafka's unsecured OAUTHBEARER login (KIP-255) and the
  token endpoint URL check (https, or listed in ``kafka.sasl.oauthbearer.allowed.urls``).

SASL itself lives in :mod:`spark_kafka_py.client.sasl`.
"""

from spark_kafka_py.client.security.config import (
    PLAINTEXT,
    REDACTED,
    SASL_MECHANISMS,
    SECURITY_OPTIONS,
    SECURITY_PROTOCOLS,
    SaslConfig,
    Secret,
    SecurityConfig,
    SslConfig,
    redact_options,
)
from spark_kafka_py.client.security.jaas import JaasConfig, parse_jaas_config
from spark_kafka_py.client.security.oauth import unsecured_jws
from spark_kafka_py.client.security.parse import parse_security_options
from spark_kafka_py.client.security.tls import (
    TlsError,
    looks_like_tls,
    ssl_context,
    ssl_socket_factory,
    tls_error_message,
)

__all__ = [
    "PLAINTEXT",
    "REDACTED",
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
