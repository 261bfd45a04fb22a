"""Kafka client security options (``kafka.`` prefix stripped) parsed into a
:class:`~spark_kafka_py.client.security.config.SecurityConfig`, once, on the driver.

:func:`parse_security_options` validates ``security.protocol``, the SASL mechanism with its
``sasl.jaas.config`` (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER: a static token, a token provider,
the KIP-768 client-credentials flow or Kafka's unsecured login) and the TLS options, reading
every key and trust store named by a ``*.location`` option (:mod:`.stores`), so a missing or
unreadable file fails the query at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from spark_kafka_py.client.security.config import (
    SASL_MECHANISMS,
    SECURITY_PROTOCOLS,
    SaslConfig,
    Secret,
    SecurityConfig,
    SslConfig,
    option_value,
)
from spark_kafka_py.client.security.jaas import parse_jaas_config
from spark_kafka_py.client.security.oauth import check_token_endpoint
from spark_kafka_py.client.security.stores import load_keystore, load_truststore
from spark_kafka_py.errors import ConfigError

__all__ = ["parse_security_options"]

#: The JAAS login module each mechanism expects (Kafka's ``PlainLoginModule``,
#: ``ScramLoginModule``, ``OAuthBearerLoginModule``).
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
    "GSSAPI": "com.sun.security.auth.module.Krb5LoginModule",
}


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
    raw_protocol = option_value(kafka, "security.protocol") or "PLAINTEXT"
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
    raw = option_value(kafka, "sasl.mechanism") or "GSSAPI"
    mechanism = raw.strip().upper()
    if mechanism not in SASL_MECHANISMS:
        hint = ""
        if mechanism == "AWS_MSK_IAM":  # aws-msk-iam-auth's Java mechanism
            hint = (
                "; for AWS MSK IAM use OAUTHBEARER with kafka.sasl.oauthbearer.token.provider="
                "aws_msk_iam_sasl_signer.MSKAuthTokenProvider:generate_auth_token and the "
                "region in kafka.sasl.oauthbearer.config (docs/security.md, AWS MSK (IAM))"
            )
        raise ConfigError(
            f"Option 'kafka.sasl.mechanism' must be one of {', '.join(SASL_MECHANISMS)}, "
            f"got {raw!r}{hint}"
        )
    jaas_text = option_value(kafka, "sasl.jaas.config")
    jaas = parse_jaas_config(jaas_text) if jaas_text is not None else None
    expected = _LOGIN_MODULES[mechanism]
    if jaas is not None and jaas.login_module != expected:
        raise ConfigError(
            f"Option 'kafka.sasl.jaas.config' uses {jaas.login_module}, but "
            f"kafka.sasl.mechanism={mechanism} needs {expected}"
        )
    opts = dict(jaas.options) if jaas is not None else {}
    if mechanism == "GSSAPI":
        return _parse_gssapi(kafka, opts)
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
    token_auth = _flag(opts, "tokenauth")
    return SaslConfig(
        mechanism,
        username=opts["username"],
        password=Secret(opts["password"]),
        # ScramLoginModule's tokenauth=true: a delegation token (KIP-48), sent as a SCRAM
        # extension of the client-first message
        extensions=(("tokenauth", "true"),) if token_auth and mechanism != "PLAIN" else (),
    )


def _flag(opts: Mapping[str, str], key: str) -> bool:
    value = opts.get(key, "false").strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"Option 'kafka.sasl.jaas.config': {key} must be true or false")
    return value == "true"


def _parse_gssapi(kafka: Mapping[str, str], opts: Mapping[str, str]) -> SaslConfig:
    """GSSAPI from the JDK's ``Krb5LoginModule`` options and ``sasl.kerberos.service.name``.

    ``useKeyTab=true keyTab="..." principal="..."`` logs in from a keytab (checked readable
    now, never read here); ``useTicketCache=true`` (optionally ``ticketCache="..."``) uses
    the ticket cache ``kinit`` filled; no ``sasl.jaas.config`` at all means the default
    ticket cache. The Kerberos configuration: ``sasl.kerberos.krb5.conf`` (ours; Java's
    ``-Djava.security.krb5.conf``), used by every process that authenticates; else the
    ``KRB5_CONFIG`` of the process that parsed the options, used by a process whose
    environment names none (see :class:`~spark_kafka_py.client.sasl.Gssapi`). The service name:
    ``sasl.kerberos.service.name``, else JAAS ``serviceName``, else ``kafka``. Source:
    Kafka's "Authentication using SASL/Kerberos", the JDK's ``Krb5LoginModule`` options.
    """
    name = "kafka.sasl.jaas.config"
    service = (option_value(kafka, "sasl.kerberos.service.name") or "").strip()
    service = service or opts.get("serviceName", "").strip() or "kafka"
    if not re.fullmatch(r"[A-Za-z0-9._-]+", service):
        raise ConfigError(
            "Option 'kafka.sasl.kerberos.service.name' must be a plain service name such as "
            f"'kafka', got {service!r}"
        )
    principal = opts.get("principal", "").strip() or None
    krb5_conf = (option_value(kafka, "sasl.kerberos.krb5.conf") or "").strip() or None
    given = krb5_conf is not None
    if krb5_conf is not None and not (os.path.isfile(krb5_conf) and os.access(krb5_conf, os.R_OK)):
        raise ConfigError(
            f"Option 'kafka.sasl.kerberos.krb5.conf': {krb5_conf!r} is not a readable file "
            "(on this machine: the driver; executors need it at the same path)"
        )
    krb5_conf = krb5_conf or os.environ.get("KRB5_CONFIG") or None
    use_keytab = _flag(opts, "useKeyTab")
    use_cache = _flag(opts, "useTicketCache") or not opts
    if use_keytab:
        keytab = opts.get("keyTab", "").strip()
        if not keytab or principal is None:
            raise ConfigError(
                f"Option '{name}': useKeyTab=true needs keyTab=\"<path>\" and "
                'principal="<name>@<REALM>"'
            )
        if not os.path.isfile(keytab) or not os.access(keytab, os.R_OK):
            raise ConfigError(
                f"Option '{name}': keyTab {keytab!r} of principal {principal} is not a readable "
                "file (on this machine: the driver; executors need it at the same path)"
            )
        return SaslConfig(
            "GSSAPI",
            kerberos_service_name=service,
            kerberos_principal=principal,
            keytab=keytab,
            krb5_conf=krb5_conf,
            krb5_conf_given=given,
        )
    if not use_cache:
        raise ConfigError(
            f"Option '{name}': Krb5LoginModule needs useKeyTab=true with keyTab and principal, "
            "or useTicketCache=true (after kinit); a password prompt is not possible here"
        )
    cache = opts.get("ticketCache", "").strip() or None
    return SaslConfig(
        "GSSAPI",
        kerberos_service_name=service,
        kerberos_principal=principal,
        ticket_cache=cache,
        krb5_conf=krb5_conf,
        krb5_conf_given=given,
    )


def _parse_oauthbearer(kafka: Mapping[str, str], opts: Mapping[str, str]) -> SaslConfig:
    token = option_value(kafka, "sasl.oauthbearer.token")
    provider = option_value(kafka, "sasl.oauthbearer.token.provider")
    endpoint = option_value(kafka, "sasl.oauthbearer.token.endpoint.url")
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
    # librdkafka's name: confluent-kafka passes it to its oauth_cb as the only argument
    argument = kafka.get("sasl.oauthbearer.config")
    argument = str(argument) if argument is not None else None
    if argument is not None and provider is None:
        raise ConfigError(
            "Option 'kafka.sasl.oauthbearer.config' is the argument of the function named by "
            "kafka.sasl.oauthbearer.token.provider, which is not set"
        )
    claims: tuple[tuple[str, Any], ...] | None = None
    lifetime = 3600
    if unsecured:
        claims, lifetime = _unsecured_claims(unsecured, kafka)
    client_id = opts.get("clientId")
    client_secret = opts.get("clientSecret")
    if endpoint is not None:
        check_token_endpoint(endpoint, option_value(kafka, "sasl.oauthbearer.allowed.urls"))
        if not endpoint.startswith("file:") and not (client_id and client_secret):
            raise ConfigError(
                "Option 'kafka.sasl.jaas.config' must give clientId=\"...\" and "
                'clientSecret="..." with kafka.sasl.oauthbearer.token.endpoint.url (KIP-768)'
            )
    return SaslConfig(
        "OAUTHBEARER",
        token=Secret(token.strip()) if token is not None else None,
        token_provider=provider.strip() if provider is not None else None,
        token_provider_argument=Secret(argument) if argument is not None else None,
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
    ca_pem = load_truststore(kafka)
    chain, key = load_keystore(kafka)
    return SslConfig(
        ca_pem=ca_pem, cert_chain_pem=chain, key_pem=key, check_hostname=bool(algo_text)
    )
