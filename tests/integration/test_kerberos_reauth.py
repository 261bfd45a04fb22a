"""Kerberos (SASL/GSSAPI) on long-lived connections, and a KDC that never answers.

One module-scoped :class:`~spark_kafka_py.testing.kerberos.KerberizedKafka` whose GSSAPI
listener has ``connections.max.reauth.ms`` (KIP-368): the broker closes a connection that has
not authenticated again within it (shown by a connection that does not), and ours re-runs the
GSSAPI exchange on the same socket before then, across several session lifetimes. The
Kerberos tickets stay valid meanwhile: each re-authentication gets its service ticket from
the per-process credential cache, not from the KDC.

A KDC that accepts connections and never answers cannot be made of a real one: a listening
socket that never replies (TCP and UDP on one port) stands in for it. MIT's library would
wait about 27 s per ticket request on it (54 s for a keytab login, measured with 1.20);
ours fails within ``kafka.socket.connection.setup.timeout.ms``, naming the option and the
principal.
"""

from __future__ import annotations

import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.client.sasl import authenticate
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.consumer import fetcher
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaConnectionError, KafkaError, KerberosError
from spark_kafka_py.protocol.messages.metadata import MetadataRequest
from spark_kafka_py.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from spark_kafka_py.testing.kerberos import KerberizedKafka, krb5_config
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

#: ``connections.max.reauth.ms`` of the module's GSSAPI listener, ms.
REAUTH_MS = 3000


@pytest.fixture(scope="module")
def krb() -> Iterator[KerberizedKafka]:
    with KerberizedKafka(reauth_ms=REAUTH_MS) as kafka, krb5_config(kafka.krb5_conf):
        yield kafka


def _client_opts(options: Mapping[str, str]) -> dict[str, str]:
    """``kafka.``-prefixed query options -> client options (without the bootstrap)."""
    return {
        k[len("kafka.") :]: v
        for k, v in options.items()
        if k.startswith("kafka.") and k != "kafka.bootstrap.servers"
    }


class _Counted:
    """An authenticator running :func:`authenticate` and counting the SaslAuthenticate
    requests it sends; ``lifetime`` overrides the session lifetime the connection is told
    (0: never re-authenticate), to show what the broker does without re-authentication."""

    def __init__(self, krb: KerberizedKafka, lifetime: int | None = None) -> None:
        sasl = parse_security_options(_client_opts(krb.client_options("app"))).sasl
        assert sasl is not None
        self.sasl = sasl
        self.lifetime = lifetime
        self.sasl_authenticates = 0
        self.session_lifetimes: list[int] = []

    def __call__(self, exchange: Any, broker: str) -> int:
        def counting(request: Any) -> Any:
            if isinstance(request, SaslAuthenticateRequest):
                self.sasl_authenticates += 1
            return exchange(request)

        lifetime = authenticate(counting, self.sasl, broker, host="localhost")
        self.session_lifetimes.append(lifetime)
        return lifetime if self.lifetime is None else self.lifetime


def _connection(krb: KerberizedKafka, authenticator: _Counted) -> BrokerConnection:
    host, port = krb.bootstrap.rsplit(":", 1)
    return BrokerConnection(host, int(port), authenticator=authenticator)


# ------------------------------------------------------------------------ re-authentication


def test_without_reauthentication_the_broker_closes_the_connection(krb: KerberizedKafka) -> None:
    """The control: a client that ignores the session lifetime loses its connection once the
    session is over (KIP-368), so the next test's surviving connection is the client's doing."""
    auth = _Counted(krb, lifetime=0)
    with _connection(krb, auth) as conn:
        assert conn.send(MetadataRequest(topics=())).brokers
        assert 0 < auth.session_lifetimes[0] <= REAUTH_MS  # the broker set a session lifetime
        time.sleep(REAUTH_MS / 1000 + 0.5)
        with pytest.raises(KafkaConnectionError):
            conn.send(MetadataRequest(topics=()))


def test_gssapi_reauthenticates_on_the_same_connection(krb: KerberizedKafka) -> None:
    """Across three session lifetimes the connection object keeps its socket; each
    re-authentication is a full GSSAPI exchange (SaslHandshake, then SaslAuthenticate: the
    AP-REQ, the empty token, the security-layer answer) that the broker accepts."""
    auth = _Counted(krb)
    with _connection(krb, auth) as conn:
        conn.send(MetadataRequest(topics=()))
        sock = conn._sock
        assert conn.authentications == 1
        per_exchange = auth.sasl_authenticates
        assert per_exchange >= 2
        for expected in (2, 3, 4):
            time.sleep(REAUTH_MS / 1000 + 0.5)  # past the session lifetime
            assert conn.send(MetadataRequest(topics=())).brokers
            assert conn.authentications == expected
            assert conn._sock is sock, "same socket, not a reconnect"
        assert auth.sasl_authenticates == 4 * per_exchange
        assert all(0 < lifetime <= REAUTH_MS for lifetime in auth.session_lifetimes)


def test_a_consumer_reads_across_several_session_lifetimes(krb: KerberizedKafka) -> None:
    """Reads of a topic while records arrive, for 4 session lifetimes: every record read,
    through one pooled client (as one Python worker's tasks share it) whose connections
    re-authenticated on their sockets instead of being closed by the broker."""
    topic = f"krb-reauth-{uuid.uuid4().hex[:8]}"
    create_topic(krb.plaintext_bootstrap, topic, 1)
    config = ClientConfig.from_bootstrap(
        krb.bootstrap,
        request_timeout_ms=20_000,
        security=parse_security_options(_client_opts(krb.client_options("app"))),
    )
    settings = ConsumerSettings(config)
    written = 0
    got: list[bytes] = []
    end = time.monotonic() + 4 * REAUTH_MS / 1000
    while time.monotonic() < end:
        produce(
            krb.plaintext_bootstrap,
            topic,
            [ProducedRecord(key=None, value=f"r{written + i}") for i in range(5)],
        )
        for batch in read_range(
            settings, TopicPartition(topic, 0), written, written + 5, poll_timeout_ms=20_000
        ):
            got.extend(batch.column("value").to_pylist())
        written += 5
    assert got == [f"r{i}".encode() for i in range(written)]
    pooled = [client for _, client in fetcher._pool.get(config, [])]
    assert len(pooled) == 1, "one client served every read"
    connections = list(pooled[0]._connections.values())
    assert connections and max(c.authentications for c in connections) >= 3


# ------------------------------------------------------------------------------ silent KDC


class _SilentKdc:
    """A KDC address that accepts TCP connections and takes UDP datagrams, answering none."""

    def __init__(self) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:  # closed
                return
            self.accepted.append(conn)  # kept open, never read, never answered

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()
        for conn in self.accepted:
            conn.close()


def _kdc_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "spark-kafka-py-kdc")


def test_a_silent_kdc_fails_within_the_connection_setup_timeout(
    krb: KerberizedKafka, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The realm's KDC replaced by one that never answers, with no ticket cached for this
    configuration: a KerberosError naming the option, the principal and the service, within
    ``kafka.socket.connection.setup.timeout.ms`` (2 s) rather than MIT's 27 s or more; a
    second attempt meanwhile starts no second waiting thread."""
    silent = _SilentKdc()
    try:
        conf = tmp_path / "krb5.conf"
        conf.write_text(
            re.sub(
                r"kdc = 127\.0\.0\.1:\d+",
                f"kdc = 127.0.0.1:{silent.port}",
                krb.krb5_conf.read_text(),
            )
        )
        monkeypatch.setenv("KRB5_CONFIG", str(conf))
        options = {**krb.client_options("app"), "kafka.socket.connection.setup.timeout.ms": "2000"}
        config = ClientConfig.from_bootstrap(
            krb.bootstrap,
            connect_timeout_ms=2000,
            request_timeout_ms=20_000,
            security=parse_security_options(_client_opts(options)),
        )
        threads_before = _kdc_threads()
        for attempt in (1, 2):
            started = time.monotonic()
            with pytest.raises(KafkaError) as info, KafkaClient(config) as client:
                client.metadata([])
            elapsed = time.monotonic() - started
            err = info.value
            assert isinstance(err, KerberosError), repr(err)
            text = str(err)
            assert "kafka.socket.connection.setup.timeout.ms" in text and "2000 ms" in text
            assert krb.principal("app") in text and err.principal == krb.principal("app")
            assert err.service == "kafka@localhost"
            # a bound on a hang, not a speed check: MIT alone waits 27 s or more per ticket
            assert elapsed < 15, (attempt, elapsed)
            assert silent.accepted, "the library did contact the silent KDC"
            assert _kdc_threads() <= threads_before + 1, "one thread left waiting, at most"
            if attempt == 2:
                assert "an earlier attempt with these credentials still waits" in text
    finally:
        silent.close()
