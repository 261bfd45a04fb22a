"""Security options, JAAS parsing, key stores, SASL mechanisms (no broker; see
tests/integration/test_security.py for the real one)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import pickle
import ssl
from pathlib import Path

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.sasl import OAuthBearer, Plain, Scram, authenticate, oauth_token
from spark_kafka_py.client.security import (
    PLAINTEXT,
    REDACTED,
    SaslConfig,
    Secret,
    looks_like_tls,
    parse_jaas_config,
    parse_security_options,
    redact_options,
    ssl_context,
    unsecured_jws,
)
from spark_kafka_py.errors import ConfigError, KafkaApiError, KafkaProtocolError
from spark_kafka_py.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from spark_kafka_py.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.testing.secure import Pki, make_pki

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
PASSWORD = "pa55-W0rd-that-must-not-leak"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def jaas(module: str, **opts: str) -> str:
    return f"{module} required " + " ".join(f'{k}="{v}"' for k, v in opts.items()) + ";"


# ------------------------------------------------------------------------------------ Secret


def test_secret_hides_value_and_pickles_with_it() -> None:
    s = Secret(PASSWORD)
    assert PASSWORD not in repr(s) and PASSWORD not in str(s) and PASSWORD not in f"{s}"
    assert s.reveal() == PASSWORD
    back = pickle.loads(pickle.dumps(s))
    assert back == s and back.reveal() == PASSWORD and hash(back) == hash(s)
    with pytest.raises(TypeError):
        Secret(123)  # type: ignore[arg-type]  # not a str: under test


# -------------------------------------------------------------------------------------- JAAS


def test_jaas_plain_and_scram_forms() -> None:
    cfg = parse_jaas_config(jaas(PLAIN_MODULE, username="alice", password=PASSWORD))
    assert cfg.login_module == PLAIN_MODULE and cfg.flag == "required"
    assert dict(cfg.options) == {"username": "alice", "password": PASSWORD}
    assert PASSWORD not in repr(cfg)
    # bare values, escaped quotes, newlines and extra spaces as in properties files
    text = f'{SCRAM_MODULE}  required\n  username=bob\n password="a\\"b;c=d" ;'
    cfg = parse_jaas_config(text)
    assert dict(cfg.options) == {"username": "bob", "password": 'a"b;c=d'}


@pytest.mark.parametrize(
    "text, message",
    [
        (f'{PLAIN_MODULE} required username="a" password="{PASSWORD}"', "must end with ';'"),
        (f'{PLAIN_MODULE} always username="a" password="{PASSWORD}";', "control flag"),
        (f'{PLAIN_MODULE} required username="a" password="{PASSWORD};', "unbalanced"),
        (f'{PLAIN_MODULE} required username "a" password="{PASSWORD}";', "key=value"),
        (f'{PLAIN_MODULE} required password="{PASSWORD}"; {PLAIN_MODULE} required;', "one"),
        ("", "must look like"),
    ],
)
def test_jaas_errors_name_the_option_not_the_password(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_jaas_config(text)
    assert "kafka.sasl.jaas.config" in str(info.value)
    assert PASSWORD not in str(info.value)


# ----------------------------------------------------------------------------------- options


def test_gssapi_is_the_default_mechanism_with_the_ticket_cache() -> None:
    """As the Java client: SASL without a mechanism is GSSAPI; without a JAAS line, the
    default ticket cache and the service name ``kafka``."""
    sasl = parse_security_options({"security.protocol": "SASL_PLAINTEXT"}).sasl
    assert sasl is not None and sasl.mechanism == "GSSAPI"
    assert sasl.kerberos_service_name == "kafka" and sasl.keytab is None
    assert sasl.kerberos_principal is None and sasl.ticket_cache is None


def test_default_is_plaintext() -> None:
    assert parse_security_options({}) == PLAINTEXT
    assert parse_security_options({"security.protocol": "plaintext"}) == PLAINTEXT


@pytest.mark.parametrize(
    "opts, message",
    [
        ({"security.protocol": "TLS"}, "kafka.security.protocol"),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required "
                "storeKey=true;",
            },
            "useKeyTab=true with keyTab and principal, or useTicketCache=true",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required "
                'useKeyTab=true principal="app@EXAMPLE.COM";',
            },
            'useKeyTab=true needs keyTab="<path>"',
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "GSSAPI",
                "sasl.kerberos.service.name": "kafka/broker1",
                "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required "
                "useTicketCache=true;",
            },
            "kafka.sasl.kerberos.service.name",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "GSSAPI",
                "sasl.jaas.config": jaas(PLAIN_MODULE, username="a", password=PASSWORD),
            },
            "needs com.sun.security.auth.module.Krb5LoginModule",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "GSSAPI",
                "sasl.kerberos.krb5.conf": "/nonexistent/krb5.conf",
            },
            "kafka.sasl.kerberos.krb5.conf",
        ),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "DIGEST-MD5"}, "sasl.mechanism"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "is required"),
        (
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": jaas(PLAIN_MODULE, username="a", password=PASSWORD),
            },
            "needs org.apache.kafka.common.security.scram.ScramLoginModule",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": jaas(PLAIN_MODULE, username="a"),
            },
            "non-empty password",
        ),
        (
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"},
            "exactly one token source",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.oauthbearer.token": PASSWORD,
                "sasl.oauthbearer.token.provider": "mod:fn",
            },
            "exactly one token source",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.oauthbearer.token.provider": "not a function",
            },
            "module:function",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
                "sasl.jaas.config": jaas(OAUTH_MODULE, clientId="app"),
            },
            "clientSecret",
        ),
        ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/t.jks"}, "does not exist"),  # noqa: E501
        ({"security.protocol": "SSL", "ssl.keystore.location": "/nonexistent/k.p12"}, "does not exist"),  # noqa: E501
        ({"security.protocol": "SSL", "ssl.truststore.type": "PFX", "ssl.truststore.location": "/x"}, "JKS, PKCS12 or PEM"),  # noqa: E501
        ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"}, "'https'"),
        ({"security.protocol": "SSL", "ssl.truststore.certificates": "not a cert"}, "no PEM certificate"),  # noqa: E501
        ({"security.protocol": "SSL", "ssl.keystore.key": "x"}, "together"),
    ],
)  # fmt: skip
def test_bad_options_name_the_option(opts: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_security_options(opts)
    assert "kafka." in str(info.value)
    assert PASSWORD not in str(info.value)


def test_layers_not_in_use_are_ignored() -> None:
    """As the Java client: ssl.* is unused with SASL_PLAINTEXT, sasl.* with SSL."""
    cfg = parse_security_options(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": jaas(SCRAM_MODULE, username="alice", password=PASSWORD),
            "ssl.truststore.location": "/nonexistent",
        }
    )
    assert cfg.ssl is None and cfg.sasl is not None
    assert cfg.sasl.mechanism == "SCRAM-SHA-512" and cfg.sasl.username == "alice"
    assert cfg.sasl.password == Secret(PASSWORD)


def test_truststores_of_every_type_give_the_same_ca(pki: Pki) -> None:
    p = pki.password
    expected = pki.ca_pem.read_text().strip()
    variants = [
        {"ssl.truststore.location": str(pki.ca_pem), "ssl.truststore.type": "PEM"},
        {"ssl.truststore.location": str(pki.ca_pem)},  # type from the .pem suffix
        {"ssl.truststore.certificates": pki.ca_pem.read_text()},
        {"ssl.truststore.location": str(pki.truststore_p12), "ssl.truststore.type": "PKCS12",
         "ssl.truststore.password": p},
        {"ssl.truststore.location": str(pki.truststore_jks), "ssl.truststore.password": p},
    ]  # fmt: skip
    for opts in variants:
        cfg = parse_security_options({"security.protocol": "SSL", **opts})
        assert cfg.ssl is not None and cfg.ssl.ca_pem is not None, opts
        assert cfg.ssl.ca_pem.strip() == expected, opts
        assert cfg.ssl.check_hostname


def test_keystores_of_every_type_give_the_same_key(pki: Pki) -> None:
    p = pki.password
    variants = [
        {"ssl.keystore.location": str(pki.client_p12), "ssl.keystore.type": "PKCS12",
         "ssl.keystore.password": p},
        {"ssl.keystore.location": str(pki.client_jks), "ssl.keystore.password": p},
        {"ssl.keystore.location": str(pki.client_chain_and_key_pem), "ssl.keystore.type": "PEM",
         "ssl.key.password": p},
        {"ssl.keystore.certificate.chain": pki.client_cert_pem.read_text(),
         "ssl.keystore.key": pki.client_key_pem.read_text(), "ssl.key.password": p},
    ]  # fmt: skip
    keys = set()
    for opts in variants:
        cfg = parse_security_options({"security.protocol": "SSL", **opts})
        assert cfg.ssl is not None and cfg.ssl.key_pem is not None, opts
        assert cfg.ssl.cert_chain_pem is not None and "BEGIN CERTIFICATE" in cfg.ssl.cert_chain_pem
        keys.add(cfg.ssl.key_pem.reveal())
        assert "PRIVATE KEY" not in repr(cfg)
        ctx = ssl_context(cfg.ssl)
        assert isinstance(ctx, ssl.SSLContext) and ctx.check_hostname
    assert len(keys) == 1


def test_wrong_store_passwords_are_clear(pki: Pki) -> None:
    cases = [
        ({"ssl.keystore.location": str(pki.client_p12), "ssl.keystore.type": "PKCS12",
          "ssl.keystore.password": PASSWORD}, "wrong kafka.ssl.keystore.password"),
        ({"ssl.keystore.location": str(pki.client_jks), "ssl.keystore.password": PASSWORD},
         "wrong password"),
        ({"ssl.truststore.location": str(pki.truststore_jks)}, "password' is required"),
        ({"ssl.keystore.certificate.chain": pki.client_cert_pem.read_text(),
          "ssl.keystore.key": pki.client_key_pem.read_text()}, "give kafka.ssl.key.password"),
        ({"ssl.keystore.certificate.chain": pki.client_cert_pem.read_text(),
          "ssl.keystore.key": pki.client_key_pem.read_text(), "ssl.key.password": PASSWORD},
         "wrong"),
    ]  # fmt: skip
    for opts, message in cases:
        with pytest.raises(ConfigError, match=message) as info:
            parse_security_options({"security.protocol": "SSL", **opts})
        assert PASSWORD not in str(info.value)


def test_hostname_verification_can_be_disabled(pki: Pki) -> None:
    cfg = parse_security_options(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(pki.ca_pem),
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    assert cfg.ssl is not None and not cfg.ssl.check_hostname
    assert ssl_context(cfg.ssl).verify_mode == ssl.CERT_REQUIRED


def test_config_pickles_and_reprs_without_secrets(pki: Pki) -> None:
    cfg = parse_security_options(
        {
            "security.protocol": "SASL_SSL",
            "ssl.truststore.location": str(pki.ca_pem),
            "ssl.keystore.location": str(pki.client_p12),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.password": pki.password,
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": jaas(PLAIN_MODULE, username="alice", password=PASSWORD),
        }
    )
    client_cfg = ClientConfig.from_bootstrap("localhost:9093", security=cfg)
    assert pickle.loads(pickle.dumps(client_cfg)) == client_cfg
    client = pickle.loads(pickle.dumps(KafkaClient(client_cfg)))
    assert client.config.security == cfg
    for text in (repr(cfg), str(cfg), repr(client_cfg)):
        assert PASSWORD not in text and pki.password not in text and "PRIVATE" not in text


def test_source_options_carry_security_without_showing_it(pki: Pki) -> None:
    opts = {
        "kafka.bootstrap.servers": "localhost:9093",
        "subscribe": "t",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.ssl.truststore.location": str(pki.truststore_p12),
        "kafka.ssl.truststore.type": "PKCS12",
        "kafka.ssl.truststore.password": pki.password,
        "kafka.sasl.mechanism": "SCRAM-SHA-256",
        "kafka.sasl.jaas.config": jaas(SCRAM_MODULE, username="alice", password=PASSWORD),
    }
    parsed = parse_options({k.lower(): v for k, v in opts.items()}, streaming=False)
    sec = parsed.consumer.client.security
    assert sec.protocol == "SASL_SSL" and sec.sasl is not None and sec.ssl is not None
    assert sec.sasl.password == Secret(PASSWORD)
    text = repr(parsed)
    assert PASSWORD not in text and pki.password not in text
    assert parsed.kafka_params["sasl.jaas.config"] == REDACTED
    assert pickle.loads(pickle.dumps(parsed)).consumer.client.security == sec


def test_redact_options() -> None:
    out = redact_options(
        {
            "kafka.sasl.jaas.config": "x",
            "ssl.keystore.password": "y",
            "kafka.sasl.oauthbearer.token": "z",
            "kafka.bootstrap.servers": "h:1",
            "ssl.keystore.key": "k",
        }
    )
    assert out == {
        "kafka.sasl.jaas.config": REDACTED,
        "ssl.keystore.password": REDACTED,
        "kafka.sasl.oauthbearer.token": REDACTED,
        "kafka.bootstrap.servers": "h:1",
        "ssl.keystore.key": REDACTED,
    }


def test_looks_like_tls() -> None:
    assert looks_like_tls(bytes([21, 3, 3, 0, 2]))  # an alert record
    assert looks_like_tls(bytes([22, 3, 1]))
    assert not looks_like_tls(b"\x00\x00\x01\x00")  # a Kafka frame size
    assert not looks_like_tls(b"\x15")


# -------------------------------------------------------------------------------------- SASL


def test_plain_token() -> None:
    mech = Plain("alice", PASSWORD)
    assert mech.initial() == b"\0alice\0" + PASSWORD.encode()
    assert mech.respond(b"") is None and mech.complete


def test_scram_sha256_rfc7677_vector() -> None:
    """RFC 7677 section 3: user "user", password "pencil"."""
    mech = Scram("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert mech.initial() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert mech.respond(server_first) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert not mech.complete
    assert mech.respond(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None
    assert mech.complete


def _scram_server_signature(
    hash_name: str, password: str, salt: bytes, i: int, msg: bytes
) -> bytes:
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, i)
    server_key = hmac.new(salted, b"Server Key", hash_name).digest()
    return hmac.new(server_key, msg, hash_name).digest()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_rejects_a_wrong_server_signature(mechanism: str) -> None:
    mech = Scram(mechanism, "a=b,c", PASSWORD, nonce="abc")
    assert mech.initial() == b"n,,n=a=3Db=2Cc,r=abc"  # RFC 5802 saslname escaping
    mech.respond(b"r=abcdef,s=" + base64.b64encode(b"salt") + b",i=4096")
    with pytest.raises(KafkaApiError, match=f"SASL_AUTHENTICATION_FAILED.*{mechanism}"):
        mech.respond(b"v=" + base64.b64encode(b"\0" * 32))


def test_scram_server_signature_accepted_when_right() -> None:
    mech = Scram("SCRAM-SHA-512", "alice", PASSWORD, nonce="n1")
    first = mech.initial()[3:]
    server_first = b"r=n1xyz,s=" + base64.b64encode(b"pepper") + b",i=4096"
    final = mech.respond(server_first)
    assert final is not None
    without_proof = final.rsplit(b",p=", 1)[0]
    sig = _scram_server_signature(
        "sha512", PASSWORD, b"pepper", 4096, first + b"," + server_first + b"," + without_proof
    )
    assert mech.respond(b"v=" + base64.b64encode(sig)) is None and mech.complete


@pytest.mark.parametrize(
    "server_first",
    [
        b"r=other,s=c2FsdA==,i=4096",  # nonce not extending ours
        b"r=abc,s=c2FsdA==,i=4096",  # no server part
        b"r=abcd,s=c2FsdA==,i=1000",  # too few iterations
        b"r=abcd,s=!!,i=4096",  # bad base64
        b"r=abcd,i=4096",  # no salt
        b"\xff\xfe",
    ],
)
def test_scram_malformed_server_first(server_first: bytes) -> None:
    mech = Scram("SCRAM-SHA-256", "u", PASSWORD, nonce="abc")
    mech.initial()
    with pytest.raises(KafkaProtocolError):
        mech.respond(server_first)


def test_scram_server_error_attribute() -> None:
    mech = Scram("SCRAM-SHA-256", "u", PASSWORD, nonce="abc")
    mech.initial()
    with pytest.raises(KafkaApiError, match="other-error"):
        mech.respond(b"e=other-error")


def test_oauthbearer_message_and_error_status() -> None:
    mech = OAuthBearer("tok.en.", (("traceId", "42"),))
    assert mech.initial() == b"n,,\x01auth=Bearer tok.en.\x01traceId=42\x01\x01"
    assert mech.respond(b'{"status":"invalid_token"}') == b"\x01"
    with pytest.raises(KafkaApiError, match="invalid_token"):
        mech.respond(b"")


def test_unsecured_jws_claims() -> None:
    token = unsecured_jws({"sub": "alice", "scope": ["a", "b"]}, 60, now=1000)
    header, payload, signature = token.split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    assert json.loads(base64.urlsafe_b64decode(pad(header))) == {"alg": "none"}
    claims = json.loads(base64.urlsafe_b64decode(pad(payload)))
    assert claims == {"iat": 1000, "exp": 1060, "sub": "alice", "scope": ["a", "b"]}
    assert signature == ""


def token_provider_for_tests() -> str:
    return unsecured_jws({"sub": "provided"}, 60)


def test_oauth_token_sources() -> None:
    cfg = parse_security_options(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="u1" '
            'unsecuredLoginListClaim_scope=",r,w" unsecuredLoginLifetimeSeconds="30" '
            'extension_traceId="7";',
            "ssl.truststore.certificates": "",
        }
    )
    assert cfg.sasl is not None and cfg.sasl.extensions == (("traceId", "7"),)
    token = oauth_token(cfg.sasl)
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "u1" and claims["scope"] == ["r", "w"]
    assert claims["exp"] - claims["iat"] == 30
    static = SaslConfig("OAUTHBEARER", token=Secret("abc"))
    assert oauth_token(static) == "abc"
    provided = SaslConfig(
        "OAUTHBEARER", token_provider="tests.client.test_security:token_provider_for_tests"
    )
    assert oauth_token(provided).count(".") == 2
    with pytest.raises(ConfigError, match=r"token\.provider"):
        oauth_token(SaslConfig("OAUTHBEARER", token_provider="no_such_module_xyz:f"))


class _ScriptedExchange:
    """Answers SaslHandshake/SaslAuthenticate from a list (a sans-I/O test of the flow)."""

    def __init__(self, answers: list[object]) -> None:
        self.answers = answers
        self.sent: list[object] = []

    def __call__(self, request: object) -> object:
        self.sent.append(request)
        return self.answers.pop(0)


def test_authenticate_unsupported_mechanism_lists_enabled() -> None:
    ex = _ScriptedExchange(
        [SaslHandshakeResponse(error_code=33, mechanisms=("PLAIN", "OAUTHBEARER"))]
    )
    cfg = SaslConfig("SCRAM-SHA-512", username="u", password=Secret(PASSWORD))
    with pytest.raises(KafkaApiError, match="UNSUPPORTED_SASL_MECHANISM") as info:
        authenticate(ex, cfg, "broker 1 at h:1")
    assert "PLAIN, OAUTHBEARER" in str(info.value) and "SCRAM-SHA-512" in str(info.value)
    assert isinstance(ex.sent[0], SaslHandshakeRequest)


def test_authenticate_failure_names_mechanism_and_returns_lifetime() -> None:
    cfg = SaslConfig("PLAIN", username="u", password=Secret(PASSWORD))
    ex = _ScriptedExchange(
        [
            SaslHandshakeResponse(error_code=0, mechanisms=("PLAIN",)),
            SaslAuthenticateResponse(error_code=58, error_message="Invalid username or password"),
        ]
    )
    with pytest.raises(KafkaApiError, match=r"SASL_AUTHENTICATION_FAILED.*PLAIN.*h:1") as info:
        authenticate(ex, cfg, "broker h:1")
    assert PASSWORD not in str(info.value)
    ok = _ScriptedExchange(
        [
            SaslHandshakeResponse(error_code=0, mechanisms=("PLAIN",)),
            SaslAuthenticateResponse(error_code=0, session_lifetime_ms=1234),
        ]
    )
    assert authenticate(ok, cfg, "b") == 1234
    assert isinstance(ok.sent[1], SaslAuthenticateRequest)
    assert ok.sent[1].auth_bytes == b"\0u\0" + PASSWORD.encode()


def test_paths_exist(pki: Pki) -> None:
    for value in vars(pki).values():
        if isinstance(value, Path) and value != pki.directory:
            assert value.stat().st_size > 0, value
