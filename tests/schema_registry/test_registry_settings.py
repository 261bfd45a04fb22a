"""spark_kafka_py.schema_registry's settings (Confluent's names), its cache, and TLS to the
registry (a staged HTTPS server with the test PKI of spark_kafka_py.testing.secure)."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    pkcs12,
)

from spark_kafka_py.errors import ConfigError, SchemaRegistryError
from spark_kafka_py.schema_registry import (
    LruCache,
    SchemaRegistryClient,
    parse_settings,
    redact_url,
)
from spark_kafka_py.testing.secure import Pki, make_pki
from tests.schema_registry.fake_registry import FakeRegistry, answer


def test_defaults_are_the_kafka_clients() -> None:
    s = parse_settings({"schema.registry.url": "http://a:8081/, https://b/path"})
    assert s.urls == ("http://a:8081", "https://b/path")
    assert (s.request_timeout_ms, s.connect_timeout_ms) == (30_000, 10_000)
    assert (s.retry_backoff_ms, s.retry_backoff_max_ms, s.retry_timeout_ms) == (100, 1_000, 60_000)
    assert s.max_response_bytes == 8 * 1024 * 1024
    assert s.username is None and s.check_hostname


def test_credentials_from_user_info_or_url_and_never_in_repr() -> None:
    info = parse_settings(
        {
            "schema.registry.url": "http://reg:8081",
            "schema.registry.basic.auth.user.info": "alice:pa:ss",
        }
    )
    assert (info.username, info.password) == ("alice", "pa:ss")
    from_url = parse_settings(
        {
            "schema.registry.url": "http://bob:p%40ss@reg:8081",
            "basic.auth.credentials.source": "URL",
        }
    )
    assert (from_url.username, from_url.password) == ("bob", "p@ss")
    assert from_url.urls == ("http://reg:8081",)
    for s in (info, from_url):
        assert "pa:ss" not in repr(s) and "p@ss" not in repr(s) and "p%40ss" not in repr(s)
    assert redact_url("https://u:secret@[::1]:8443/x") == "https://[::1]:8443/x"


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({}, "schema.registry.url is required"),
        ({"schema.registry.url": "ftp://reg"}, "must be http"),
        ({"schema.registry.url": "http://u:hunter2@reg:99999"}, "is not a URL"),
        (
            {"schema.registry.url": "http://reg", "basic.auth.credentials.source": "SASL_INHERIT"},
            "USER_INFO, URL",
        ),
        (
            {"schema.registry.url": "http://reg", "basic.auth.credentials.source": "URL"},
            "has no user:password@",
        ),
        (
            {
                "schema.registry.url": "http://reg",
                "schema.registry.basic.auth.user.info": "hunter2",
            },
            "user:password (value not shown)",
        ),
        (
            {
                "schema.registry.url": "http://reg",
                "schema.registry.ssl.truststore.location": "/x.jks",
                "schema.registry.ssl.truststore.type": "JKS",
            },
            "truststore.type=PEM",
        ),
        (
            {"schema.registry.url": "http://reg", "schema.registry.request.timeout.ms": "soon"},
            "must be an integer",
        ),
        (
            {"schema.registry.url": "http://reg", "schema.registry.max.response.bytes": "10"},
            ">= 1024",
        ),
    ],
)
def test_bad_settings_are_config_errors_without_secrets(
    options: dict[str, str], needle: str
) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        parse_settings(options)
    assert needle in str(err.value)
    assert "hunter2" not in str(err.value)


def test_cache_is_bounded_by_entries_and_bytes() -> None:
    cache: LruCache[str] = LruCache(max_entries=3, max_bytes=100)
    for n in range(5):
        cache.put(n, f"v{n}", 10)
    assert len(cache) == 3 and cache.get(0) is None and cache.get(4) == "v4"
    cache.get(2)  # now the most recent: 3 goes first
    cache.put("big", "x", 80)
    assert cache.get(2) == "v2" and cache.get(3) is None and cache.size_bytes <= 100
    cache.put("huge", "y", 101)  # larger than the whole cache: not kept
    assert cache.get("huge") is None
    with pytest.raises(ValueError):
        LruCache(max_entries=0)


# --------------------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("registry-pki"))


def _server_pem(pki: Pki, directory: Path) -> Path:
    key, cert, chain = pkcs12.load_key_and_certificates(
        pki.broker_p12.read_bytes(), pki.password.encode()
    )
    assert key is not None and cert is not None
    path = directory / "server.pem"
    path.write_bytes(
        key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        + cert.public_bytes(Encoding.PEM)
        + b"".join(c.public_bytes(Encoding.PEM) for c in chain or [])
    )
    return path


@pytest.fixture()
def https_registry(pki: Pki, tmp_path: Path) -> Iterator[FakeRegistry]:
    """A staged registry over mutual TLS: the server's certificate names ``localhost``."""
    fake = FakeRegistry({"GET /schemas/ids/1": lambda h: answer(h, 200, {"schema": '"int"'})})
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(_server_pem(pki, tmp_path))
    context.load_verify_locations(pki.ca_pem)
    context.verify_mode = ssl.CERT_REQUIRED
    fake.server.socket = context.wrap_socket(fake.server.socket, server_side=True)
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()


def _tls_client(port: int, host: str, pki: Pki, **extra: str) -> SchemaRegistryClient:
    options = {
        "schema.registry.url": f"https://{host}:{port}",
        "schema.registry.ssl.truststore.location": str(pki.ca_pem),
        "schema.registry.ssl.keystore.location": str(pki.client_chain_and_key_pem),
        "schema.registry.ssl.key.password": pki.password,
        "schema.registry.request.timeout.ms": "5000",
        **extra,
    }
    return SchemaRegistryClient(parse_settings(options), cache=LruCache())


def test_mutual_tls_with_pem_stores_and_an_encrypted_key(
    https_registry: FakeRegistry, pki: Pki
) -> None:
    port = https_registry.server.server_address[1]
    assert _tls_client(port, "localhost", pki).schema_by_id(1).schema_str == '"int"'


def test_a_certificate_of_another_ca_fails_the_handshake(
    https_registry: FakeRegistry, pki: Pki
) -> None:
    port = https_registry.server.server_address[1]
    client = _tls_client(
        port, "localhost", pki, **{"schema.registry.ssl.truststore.location": str(pki.other_ca_pem)}
    )
    with pytest.raises(SchemaRegistryError) as err:
        client.schema_by_id(1)
    assert "TLS failed" in str(err.value) and not err.value.retriable


def test_hostname_checked_unless_the_algorithm_is_empty(
    https_registry: FakeRegistry, pki: Pki
) -> None:
    port = https_registry.server.server_address[1]
    with pytest.raises(SchemaRegistryError, match="TLS failed"):
        _tls_client(port, "127.0.0.1", pki).schema_by_id(1)
    unchecked = _tls_client(
        port, "127.0.0.1", pki, **{"schema.registry.ssl.endpoint.identification.algorithm": ""}
    )
    assert unchecked.schema_by_id(1).schema_str == '"int"'


def test_an_unreadable_store_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(SchemaRegistryError, match="cannot load the schema registry's TLS stores"):
        SchemaRegistryClient(
            parse_settings(
                {
                    "schema.registry.url": "https://reg",
                    "schema.registry.ssl.truststore.location": str(tmp_path / "missing.pem"),
                }
            )
        )
