"""OAUTHBEARER tokens that expire in seconds: refreshed before expiry, re-authentication on
long-lived connections (KIP-368), never an expired token sent.

A local token endpoint (an HTTP server thread of this module) issues unsecured JWS tokens
that expire :data:`LIFETIME_S` seconds after the whole second they are issued in (3 to 4 s
ahead), which the session broker's REAUTH listener (Kafka's unsecured validator,
``connections.max.reauth.ms`` 4 s) accepts until their ``exp`` and refuses after it. The
token provider is :func:`fetch_token` of this module, given the endpoint's URL as its
argument (``kafka.sasl.oauthbearer.config``) and returning ``(token, expiry_ms)`` as AWS
MSK IAM's signer does; Spark's Python workers import it as the driver does (they start in
the test's working directory, the repository root).

The broker sets each session's lifetime to what is left of the token (at most 4 s), so a
connection that lives several token lifetimes must re-authenticate with newer tokens, and
the provider must be called again before each token expires.
"""

from __future__ import annotations

import base64
import http.server
import itertools
import json
import os
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.client.sasl import authenticate
from spark_kafka_py.client.security import parse_security_options, unsecured_jws
from spark_kafka_py.consumer import fetcher
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.producer import KafkaProducer, ProducerSettings
from spark_kafka_py.protocol.messages.metadata import MetadataRequest
from spark_kafka_py.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from spark_kafka_py.testing.secure import SecureKafka
from spark_kafka_py.testing.tools import create_topic, read_all

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

#: Tokens expire this many seconds after the whole second they were issued in.
LIFETIME_S = 4
PROVIDER = "tests.integration.test_oauth_refresh:fetch_token"


def fetch_token(url: str) -> tuple[str, int]:
    """The token provider: a token from the endpoint at ``url``, with its expiry (epoch ms)."""
    request = urllib.request.Request(url, headers={"X-Caller-Pid": str(os.getpid())})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.loads(response.read())
    return body["token"], body["expiry_ms"]


@dataclass
class _Issued:
    at_ms: int
    expiry_ms: int
    token: str
    pid: int  # of the process that called the provider


@dataclass
class _Endpoint:
    url: str
    issued: list[_Issued] = field(default_factory=list)

    def since(self, start_ms: int) -> list[_Issued]:
        return [i for i in list(self.issued) if i.at_ms >= start_ms]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[_Endpoint]:
    state = _Endpoint("")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            now = time.time()
            token = unsecured_jws({"sub": "alice"}, LIFETIME_S, now=now)
            expiry_ms = (int(now) + LIFETIME_S) * 1000  # the token's exp claim, in ms
            pid = int(self.headers.get("X-Caller-Pid", "0"))
            state.issued.append(_Issued(int(now * 1000), expiry_ms, token, pid))
            data = json.dumps({"token": token, "expiry_ms": expiry_ms}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/token"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def kafka(secure_kafka: SecureKafka) -> SecureKafka:
    """The session's secured broker; its REAUTH listener's ``connections.max.reauth.ms``."""
    assert secure_kafka.reauth_ms >= LIFETIME_S * 1000
    return secure_kafka


def _options(endpoint: _Endpoint) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.token.provider": PROVIDER,
        "sasl.oauthbearer.config": endpoint.url,
    }


def _claims(token: bytes) -> dict[str, Any]:
    payload = token.split(b".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + b"=" * (-len(payload) % 4))))


#: How late past the old token's expiry the next may be fetched, ms. The provider is called
#: when a connection needs a token: a re-authentication comes at 85-95% of the session (the
#: token's remaining life, whole seconds of ``exp``: 3-4 s here), on the connection's next
#: request (every 0.2 s in the tests), so on a loaded machine it may land just past the old
#: token's expiry. What must never happen, an expired token sent, is asserted on its own.
REFRESH_SLACK_MS = 1_000


def _assert_refreshed_before_expiry(issued: list[_Issued]) -> None:
    """Each token but the last was followed by a newer one, issued before it expired or
    within :data:`REFRESH_SLACK_MS` of that."""
    for older, newer in itertools.pairwise(issued):
        assert newer.at_ms < older.expiry_ms + REFRESH_SLACK_MS, (older, newer)


# ----------------------------------------------------------------------------- one connection


def test_one_connection_reauthenticates_with_fresh_tokens(
    kafka: SecureKafka, endpoint: _Endpoint
) -> None:
    """Four token lifetimes of requests on one connection: the same socket throughout, a
    re-authentication per token lifetime, every token it sent still valid when sent (read
    from the SaslAuthenticate requests themselves), the provider called again by each
    token's expiry (within REFRESH_SLACK_MS), and no more often than the refresh rule asks."""
    config = parse_security_options(_options(endpoint)).sasl
    assert config is not None
    sent: list[tuple[int, int]] = []  # (sent at, token exp), ms

    def spying(exchange: Any) -> Any:
        def send(request: Any) -> Any:
            if isinstance(request, SaslAuthenticateRequest):
                message = bytes(request.auth_bytes)
                assert message.startswith(b"n,,\x01auth=Bearer ")
                token = message.split(b"\x01")[1][len(b"auth=Bearer ") :]
                sent.append((int(time.time() * 1000), int(_claims(token)["exp"]) * 1000))
            return exchange(request)

        return send

    host, port = kafka.bootstrap("REAUTH").rsplit(":", 1)
    start_ms = int(time.time() * 1000)
    conn = BrokerConnection(
        host,
        int(port),
        authenticator=lambda ex, broker: authenticate(spying(ex), config, broker),
    )
    with conn:
        assert conn.send(MetadataRequest(topics=())).brokers
        sock = conn._sock
        end = time.monotonic() + 4 * LIFETIME_S
        while time.monotonic() < end:
            assert conn.send(MetadataRequest(topics=())).brokers
            time.sleep(0.2)
        assert conn._sock is sock, "one socket throughout: the broker never closed it"
        authentications = conn.authentications
    assert authentications >= 4, authentications
    assert len(sent) == authentications
    assert all(exp > at for at, exp in sent), "an expired token was sent"
    issued = endpoint.since(start_ms)
    _assert_refreshed_before_expiry(issued)
    # one provider call per token: never more than one per authentication
    assert 4 <= len(issued) <= authentications


def test_tokens_are_shared_by_the_connections_of_a_process(
    kafka: SecureKafka, endpoint: _Endpoint
) -> None:
    """Three connections opened at once authenticate with one token: the provider is called
    once, not per connection."""
    config = parse_security_options(_options(endpoint)).sasl
    assert config is not None
    host, port = kafka.bootstrap("REAUTH").rsplit(":", 1)
    time.sleep(LIFETIME_S)  # the previous test's token is past its refresh time now
    start_ms = int(time.time() * 1000)
    conns = [
        BrokerConnection(host, int(port), authenticator=lambda ex, b: authenticate(ex, config, b))
        for _ in range(3)
    ]
    try:
        for conn in conns:
            assert conn.send(MetadataRequest(topics=())).brokers
    finally:
        for conn in conns:
            conn.close()
    assert len(endpoint.since(start_ms)) == 1


# -------------------------------------------------------------------------- producer, consumer


def test_producer_and_consumer_keep_working_across_token_lifetimes(
    kafka: SecureKafka, endpoint: _Endpoint
) -> None:
    """Our producer writes for four token lifetimes through the REAUTH listener (requests in
    flight while re-authenticating), without a retry; Kafka's Java consumer reads back every
    record on the plaintext listener; our consumer then reads them in small ranges through
    the REAUTH listener for four more lifetimes with one pooled client."""
    topic = f"oauth-refresh-{uuid.uuid4().hex[:8]}"
    create_topic(kafka.plaintext_bootstrap, topic, 1)
    client = ClientConfig.from_bootstrap(
        kafka.bootstrap("REAUTH"),
        request_timeout_ms=20_000,
        security=parse_security_options(_options(endpoint)),
    )
    start_ms = int(time.time() * 1000)
    n = 0
    now_ms = int(time.time() * 1000)
    with KafkaProducer(ProducerSettings(client, batch_size=1024, linger_ms=0)) as producer:
        end = time.monotonic() + 4 * LIFETIME_S
        while time.monotonic() < end:
            values = pa.array([f"v{i}".encode() for i in range(n, n + 100)], pa.binary())
            producer.append(topic, 0, None, values, None, now_ms)
            n += 100
            time.sleep(0.05)
        producer.flush()
        assert producer.stats.retries == 0, "no connection closed by the broker"
        connections = list(producer.client._connections.values())
        assert max(c.authentications for c in connections) >= 4
    want = [f"v{i}".encode() for i in range(n)]
    assert [r.value for r in read_all(kafka.plaintext_bootstrap, topic)] == want

    settings = ConsumerSettings(client)
    got: list[bytes] = []
    step = max(1, n // 40)
    end = time.monotonic() + 4 * LIFETIME_S
    position = 0
    while position < n:
        stop = min(n, position + step)
        for batch in read_range(settings, TopicPartition(topic, 0), position, stop):
            got.extend(batch.column("value").to_pylist())
        position = stop
        time.sleep(max(0.0, min(0.4, end - time.monotonic())))
    assert got == want
    pooled = [c for _, c in fetcher._pool.get(client, [])]
    assert len(pooled) == 1
    assert max(c.authentications for c in pooled[0]._connections.values()) >= 4
    assert len(endpoint.since(start_ms)) >= 8, "a token per lifetime, producing and reading"


# ------------------------------------------------------------------------------------- Spark


def test_streaming_query_runs_across_token_lifetimes(
    kafka: SecureKafka, endpoint: _Endpoint, spark: SparkSession, tmp_path: Any
) -> None:
    """A streaming query (its Python workers authenticating with the provider) reads what
    our producer writes, a batch every 0.5 s, during four token lifetimes once the query
    runs: every record arrives, the query never fails, the workers called the provider
    themselves and kept getting fresh tokens for several token lifetimes."""
    topic = f"oauth-stream-{uuid.uuid4().hex[:8]}"
    create_topic(kafka.plaintext_bootstrap, topic, 1)
    reader = spark.readStream.format("pykafka").option(
        "kafka.bootstrap.servers", kafka.bootstrap("REAUTH")
    )
    for key, value in _options(endpoint).items():
        reader = reader.option(f"kafka.{key}", value)
    name = f"oauth_{uuid.uuid4().hex[:8]}"
    query = (
        reader.option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("CAST(value AS STRING) AS v")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )

    def rows_within(n: int, seconds: float) -> int:
        deadline = time.monotonic() + seconds
        count = 0
        while time.monotonic() < deadline:
            assert query.exception() is None, query.exception()
            count = spark.sql(f"SELECT count(*) AS c FROM {name}").collect()[0]["c"]
            if count >= n:
                break
            time.sleep(0.5)
        return int(count)

    try:
        client = ClientConfig.from_bootstrap(kafka.plaintext_bootstrap, request_timeout_ms=20_000)
        now_ms = int(time.time() * 1000)
        with KafkaProducer(ProducerSettings(client, linger_ms=0)) as producer:
            producer.append(topic, 0, None, pa.array([b"s0"], pa.binary()), None, now_ms)
            producer.flush()
            assert rows_within(1, 180) == 1, "the query started and read the first record"
            start_ms = int(time.time() * 1000)
            n = 1
            end = time.monotonic() + 4 * LIFETIME_S
            while time.monotonic() < end:
                values = pa.array([f"s{i}".encode() for i in range(n, n + 20)], pa.binary())
                producer.append(topic, 0, None, values, None, now_ms)
                producer.flush()
                n += 20
                time.sleep(0.5)
        assert rows_within(n, 120) == n
        rows = sorted(r.v for r in spark.sql(f"SELECT v FROM {name}").collect())
        assert rows == sorted(f"s{i}" for i in range(n))
        assert query.exception() is None
    finally:
        query.stop()
    issued = endpoint.since(start_ms)
    by_process: dict[int, list[_Issued]] = {}
    for token in issued:
        by_process.setdefault(token.pid, []).append(token)
    seen = {  # for failure messages: when each process got tokens, and their expiry, ms
        pid: [(t.at_ms - start_ms, t.expiry_ms - start_ms) for t in ts]
        for pid, ts in by_process.items()
    }
    workers = {pid: ts for pid, ts in by_process.items() if pid != os.getpid()}
    assert workers, f"Spark's Python workers called the provider themselves: {seen}"
    # some process kept authenticating with fresh tokens for several token lifetimes
    spans = [ts[-1].at_ms - ts[0].at_ms for ts in by_process.values()]
    assert max(spans) >= 2 * LIFETIME_S * 1000, seen
