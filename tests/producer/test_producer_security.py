"""The producer over TLS and SASL (:class:`~spark_kafka_py.testing.secure.SecureKafka`):
records written through the secured listeners are read back on the plaintext one; on the
REAUTH listener (``connections.max.reauth.ms``) the producer keeps writing across several
re-authentications (KIP-368) with requests in flight, without losing a connection."""

from __future__ import annotations

import time

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.producer import KafkaProducer, ProducerSettings
from spark_kafka_py.testing.secure import USERS, SecureKafka
from spark_kafka_py.testing.tools import create_topic

from .helpers import read_back, values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
TS = int(
    time.time() * 1000
)  # CreateTime now: the test broker enforces retention (7 days) every 5 s


@pytest.fixture(scope="module")
def kafka(secure_kafka: SecureKafka) -> SecureKafka:
    """The session's secured broker (shared with the security and CLI tests)."""
    return secure_kafka


def producer_settings(bootstrap: str, opts: dict[str, str]) -> ProducerSettings:
    client = ClientConfig.from_bootstrap(
        bootstrap, request_timeout_ms=20_000, security=parse_security_options(opts)
    )
    return ProducerSettings(client, batch_size=1024, linger_ms=0)


def test_tls_and_sasl_ssl(kafka: SecureKafka) -> None:
    trust = {"ssl.truststore.location": str(kafka.pki.ca_pem), "ssl.truststore.type": "PEM"}
    plain = {
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{PLAIN} required username="alice" password="{USERS["alice"]}";',
    }
    cases = {
        "SSL": {"security.protocol": "SSL", **trust},
        "SASL_SSL": {"security.protocol": "SASL_SSL", **trust, **plain},
    }
    for listener, opts in cases.items():
        topic = f"producer-{listener.lower()}-{time.time_ns()}"
        create_topic(kafka.plaintext_bootstrap, topic, 1)
        with KafkaProducer(producer_settings(kafka.bootstrap(listener), opts)) as producer:
            producer.append(topic, 0, None, values(2000), None, TS)
            producer.flush()
            assert producer.stats.retries == 0 and producer.stats.max_in_flight > 1
        stored = read_back(kafka.plaintext_bootstrap, topic)
        assert stored.rows.column("value").to_pylist() == [f"v{i}".encode() for i in range(2000)]


def test_reauthentication_with_requests_in_flight(kafka: SecureKafka) -> None:
    opts = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{PLAIN} required username="alice" password="{USERS["alice"]}";',
    }
    topic = f"producer-reauth-{time.time_ns()}"
    create_topic(kafka.plaintext_bootstrap, topic, 1)
    n = 0
    with KafkaProducer(producer_settings(kafka.bootstrap("REAUTH"), opts)) as producer:
        end = time.monotonic() + 2.5 * kafka.reauth_ms / 1000
        while time.monotonic() < end:
            producer.append(topic, 0, None, values(200, start=n), None, TS)
            n += 200
            time.sleep(0.02)
        producer.flush()
        assert producer.stats.retries == 0  # no connection closed by the broker
        connections = list(producer.client._connections.values())
        assert max(c.authentications for c in connections) >= 3
    stored = read_back(kafka.plaintext_bootstrap, topic)
    assert stored.rows.column("value").to_pylist() == [f"v{i}".encode() for i in range(n)]
