"""Kerberos (SASL/GSSAPI) against a real KDC and a real broker.

The session's :class:`~spark_kafka_py.testing.kerberos.KerberizedKafka` (fixture
``kerberized_kafka``, shared with test_delegation_tokens.py): MIT Kerberos's
``krb5kdc`` from Debian's packages, and a KRaft node whose GSSAPI listener is the JVM's own
Kerberos. Records are written by Kafka's Java producer (on the plaintext listener) and read by
our client through GSSAPI; what our sink writes through GSSAPI is read by Kafka's Java consumer
logging in with a keytab of its own (the oracle). Each bad-credential case is a typed error
naming the option and the principal, never the keytab's content.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError, KafkaError, KerberosError
from spark_kafka_py.testing.kdc import LocalKdc
from spark_kafka_py.testing.kerberos import KerberizedKafka, krb5_config
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce, read_all

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

N = 12


@pytest.fixture(scope="module")
def krb(kerberized_kafka: KerberizedKafka) -> KerberizedKafka:
    """The session's Kerberized broker (shared with test_delegation_tokens.py)."""
    return kerberized_kafka


@pytest.fixture(scope="module")
def topic(krb: KerberizedKafka) -> str:
    name = f"krb-{uuid.uuid4().hex[:8]}"
    create_topic(krb.plaintext_bootstrap, name, 2)
    produce(
        krb.plaintext_bootstrap,
        name,
        [ProducedRecord(key=f"k{i}", value=f"kerberos-{i}", partition=i % 2) for i in range(N)],
    )
    return name


def _kafka_opts(options: Mapping[str, str]) -> dict[str, str]:
    """``kafka.``-prefixed query options -> client options (without the bootstrap)."""
    return {
        k[len("kafka.") :]: v
        for k, v in options.items()
        if k.startswith("kafka.") and k != "kafka.bootstrap.servers"
    }


def _read(krb: KerberizedKafka, options: Mapping[str, str], topic: str, partition: int) -> list:
    settings = ConsumerSettings(
        ClientConfig.from_bootstrap(
            krb.bootstrap,
            request_timeout_ms=20_000,
            security=parse_security_options(_kafka_opts(options)),
        )
    )
    out: list[bytes] = []
    for batch in read_range(
        settings, TopicPartition(topic, partition), 0, N // 2, poll_timeout_ms=30_000
    ):
        out.extend(batch.column("value").to_pylist())
    return out


def _metadata_error(krb: KerberizedKafka, options: Mapping[str, str]) -> KafkaError:
    config = ClientConfig.from_bootstrap(
        krb.bootstrap,
        security=parse_security_options(_kafka_opts(options)),
        request_timeout_ms=20_000,
    )
    with pytest.raises(KafkaError) as info, KafkaClient(config) as client:
        client.metadata([])
    return info.value


# ---------------------------------------------------------------------------- the client


def test_keytab_login_reads_what_java_wrote(krb: KerberizedKafka, topic: str) -> None:
    """A keytab login (JAAS ``useKeyTab=true keyTab principal``): every record of both
    partitions, in offset order."""
    options = krb.client_options("app")
    assert _read(krb, options, topic, 0) == [f"kerberos-{i}".encode() for i in range(0, N, 2)]
    assert _read(krb, options, topic, 1) == [f"kerberos-{i}".encode() for i in range(1, N, 2)]


def test_ticket_cache_after_kinit(krb: KerberizedKafka, topic: str, tmp_path: Path) -> None:
    """``useTicketCache=true ticketCache=...``: the tickets MIT's own ``kinit`` got."""
    cache = tmp_path / "ccache"
    env = {**os.environ, "KRB5_CONFIG": str(krb.krb5_conf), "KRB5CCNAME": f"FILE:{cache}"}
    subprocess.run(
        ["kinit", "-kt", str(krb.keytab("alice")), krb.principal("alice")],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    options = {
        **krb.client_options("alice"),
        "kafka.sasl.jaas.config": (
            "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true "
            f'ticketCache="FILE:{cache}";'
        ),
    }
    assert _read(krb, options, topic, 0) == [f"kerberos-{i}".encode() for i in range(0, N, 2)]


# ---------------------------------------------------------------------------- bad credentials


def test_missing_keytab_is_a_config_error_naming_option_and_principal(
    krb: KerberizedKafka, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.keytab"
    options = {
        **krb.client_options("app"),
        "kafka.sasl.jaas.config": (
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
            f'keyTab="{missing}" principal="{krb.principal("app")}";'
        ),
    }
    with pytest.raises(ConfigError) as info:
        parse_security_options(_kafka_opts(options))
    text = str(info.value)
    assert "kafka.sasl.jaas.config" in text and krb.principal("app") in text
    assert str(missing) in text


def test_principal_not_in_the_keytab(krb: KerberizedKafka) -> None:
    """alice's keytab with principal app: a KerberosError naming app and the option; the
    keytab's bytes appear nowhere."""
    keytab = krb.keytab("alice")
    options = {
        **krb.client_options("app"),
        "kafka.sasl.jaas.config": (
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
            f'keyTab="{keytab}" principal="{krb.principal("app")}";'
        ),
    }
    err = _metadata_error(krb, options)
    assert isinstance(err, KerberosError), repr(err)
    text = str(err)
    assert krb.principal("app") in text and "kafka.sasl.jaas.config" in text
    assert err.principal == krb.principal("app")
    raw = keytab.read_bytes()
    assert raw.hex() not in text and raw[-16:].hex() not in text


def test_wrong_service_name(krb: KerberizedKafka) -> None:
    """``sasl.kerberos.service.name=notkafka``: the KDC has no ``notkafka/localhost``."""
    options = {**krb.client_options("app"), "kafka.sasl.kerberos.service.name": "notkafka"}
    err = _metadata_error(krb, options)
    assert isinstance(err, KerberosError), repr(err)
    assert err.service == "notkafka@localhost"
    assert "kafka.sasl.kerberos.service.name" in str(err) and "notkafka" in str(err)


def test_unreachable_kdc(krb: KerberizedKafka, tmp_path: Path) -> None:
    """A krb5.conf whose KDC port nobody listens on: a KerberosError, quickly (MIT's library
    gets 'connection refused' at once; no hang)."""
    with LocalKdc(base_dir=tmp_path / "dead") as dead:
        keytab = dead.keytab("app", path=tmp_path / "dead-app.keytab")
        conf = dead.krb5_conf.read_text()
    # the KDC is stopped now: its port refuses connections
    (tmp_path / "krb5.conf").write_text(conf)
    with krb5_config(tmp_path / "krb5.conf"):
        options = {
            **krb.client_options("app"),
            "kafka.sasl.jaas.config": (
                "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
                f'keyTab="{keytab}" principal="app@{dead.realm}";'
            ),
        }
        started = time.monotonic()
        err = _metadata_error(krb, options)
        elapsed = time.monotonic() - started
    assert isinstance(err, KerberosError), repr(err)
    assert f"app@{dead.realm}" in str(err)
    assert elapsed < 60, elapsed


# ---------------------------------------------------------------------------- Spark


def test_spark_batch_stream_and_exactly_once_sink_through_gssapi(
    krb: KerberizedKafka, topic: str, spark: SparkSession, tmp_path: Path
) -> None:
    """``format("pykafka")`` over GSSAPI: a batch read returns every record; an AvailableNow
    streaming query reads them and writes them exactly-once (transactions) to another topic,
    where Kafka's Java consumer, logging in with alice's keytab, reads each once (the
    oracle, ``read_committed``).

    The session's Python workers were not started with ``KRB5_CONFIG``: the realm's
    configuration reaches them through ``kafka.sasl.kerberos.krb5.conf``."""
    options = {**krb.client_options("app"), "kafka.sasl.kerberos.krb5.conf": str(krb.krb5_conf)}
    rows = spark.read.format("pykafka").options(**options).option("subscribe", topic).load()
    got = sorted(r.value.decode() for r in rows.select("value").collect())
    assert got == sorted(f"kerberos-{i}" for i in range(N))

    target = f"krb-out-{uuid.uuid4().hex[:8]}"
    create_topic(krb.plaintext_bootstrap, target, 1)
    query = (
        spark.readStream.format("pykafka")
        .options(**options)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "concat('streamed-', CAST(value AS STRING)) AS value")
        .writeStream.format("pykafka")
        .options(**options)
        .option("topic", target)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", f"krb-{uuid.uuid4().hex[:6]}")
        .option("checkpointLocation", str(tmp_path / "stream-cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None
    java = read_all(
        krb.bootstrap,
        target,
        isolation_level="read_committed",
        extra_props=krb.java_client_properties("alice"),
        jvm_options=krb.jvm_options(),
    )
    assert sorted((r.key, r.value) for r in java) == sorted(
        (f"k{i}".encode(), f"streamed-kerberos-{i}".encode()) for i in range(N)
    )


_SKEWED_CLIENT = """
import json, sys
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.errors import KerberosError
bootstrap, options = sys.argv[1], json.loads(sys.argv[2])
config = ClientConfig.from_bootstrap(
    bootstrap, security=parse_security_options(options), request_timeout_ms=20_000
)
try:
    with KafkaClient(config) as client:
        client.metadata([])
    print(json.dumps({"ok": True}))
except KerberosError as exc:
    print(json.dumps({"error": "KerberosError", "message": str(exc)}))
"""


def test_clock_two_hours_ahead_of_the_kdc(krb: KerberizedKafka) -> None:
    """A client whose clock runs 2 h ahead (``faketime``, from Debian's package: the real
    process under libfaketime): the KDC's tickets (1 h) are expired by its clock, a
    KerberosError naming the principal and saying to check the clocks. The control, the same
    client at the real time, reads metadata."""
    options = _kafka_opts(krb.client_options("app"))
    env = {**os.environ, "KRB5_CONFIG": str(krb.krb5_conf)}

    def run(*prefix: str) -> dict[str, Any]:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", _SKEWED_CLIENT, krb.bootstrap, json.dumps(options)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    assert run() == {"ok": True}
    skewed = run("faketime", "-f", "+2h")
    assert skewed["error"] == "KerberosError", skewed
    message = skewed["message"]
    assert krb.principal("app") in message and "kafka.sasl.jaas.config" in message
    assert "Ticket expired" in message and "clock" in message, message


# ---------------------------------------------------------------------------- a hostile broker


def _gss_broker(krb: KerberizedKafka, offer: bytes, wrap: bool = True) -> Any:
    """An exchange playing a broker whose GSS-API side is real (MIT's acceptor with the
    broker's keytab) but whose security-layer offer is ``offer``: what a hostile or broken
    broker could send and a real Kafka broker never does."""
    import gssapi

    from spark_kafka_py.protocol.messages.sasl_authenticate import SaslAuthenticateResponse
    from spark_kafka_py.protocol.messages.sasl_handshake import (
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

    creds = gssapi.Credentials(usage="accept", store={"keytab": str(krb.keytab("kafka/localhost"))})
    ctx = gssapi.SecurityContext(creds=creds, usage="accept")
    sent_offer: list[bool] = []

    def exchange(request):
        if isinstance(request, SaslHandshakeRequest):
            return SaslHandshakeResponse(error_code=0, mechanisms=("GSSAPI",))
        token = bytes(request.auth_bytes)
        if not ctx.complete:
            out = ctx.step(token)
            return SaslAuthenticateResponse(
                error_code=0,
                error_message=None,
                auth_bytes=bytes(out or b""),
                session_lifetime_ms=0,
            )
        if not sent_offer:
            sent_offer.append(True)
            body = offer if not wrap else ctx.wrap(offer, False).message
            return SaslAuthenticateResponse(
                error_code=0, error_message=None, auth_bytes=bytes(body), session_lifetime_ms=0
            )
        return SaslAuthenticateResponse(
            error_code=0, error_message=None, auth_bytes=b"", session_lifetime_ms=0
        )

    return exchange


@pytest.mark.parametrize(
    ("offer", "wrap", "message"),
    [
        (bytes([0x01, 0, 0x10, 0]), True, None),  # a correct offer: authenticates
        (bytes([0x04, 0, 0x10, 0]), True, "without 'no security layer'"),
        (bytes([0x01, 0, 0]), True, "has 3 bytes, not 4"),
        (b"\x01\x00\x10\x00 not a GSS token", False, "does not unwrap"),
    ],
    ids=["correct", "confidentiality-only", "short", "unwrapped"],
)
def test_security_layer_offer_is_checked(
    krb: KerberizedKafka, offer: bytes, wrap: bool, message: str | None
) -> None:
    from spark_kafka_py.client.sasl import authenticate
    from spark_kafka_py.errors import KafkaProtocolError

    config = parse_security_options(_kafka_opts(krb.client_options("app"))).sasl
    assert config is not None
    exchange = _gss_broker(krb, offer, wrap)
    if message is None:
        assert authenticate(exchange, config, "broker 1 at localhost:9", host="localhost") == 0
        return
    with pytest.raises(KafkaProtocolError, match=message):
        authenticate(exchange, config, "broker 1 at localhost:9", host="localhost")


# ---------------------------------------------------------------------------- delegation tokens


def test_delegation_token_created_with_kerberos_authenticates_without_it(
    krb: KerberizedKafka, topic: str, tmp_path: Path
) -> None:
    """CreateDelegationToken over GSSAPI; then a read with SCRAM-SHA-512 ``tokenauth=true``
    and no Kerberos at all (a KRB5_CONFIG naming no realm), as Spark's executors do;
    RenewDelegationToken moves the expiry; the HMAC is in no repr."""
    from spark_kafka_py.admin.delegation_tokens import (
        create_delegation_token,
        renew_delegation_token,
        wait_until_usable,
    )

    config = ClientConfig.from_bootstrap(
        krb.bootstrap,
        security=parse_security_options(_kafka_opts(krb.client_options("app"))),
        request_timeout_ms=20_000,
    )
    with KafkaClient(config) as client:
        token = create_delegation_token(client)
        # Kafka's default sasl.kerberos.principal.to.local.rules: the short name
        assert token.owner == "User:app"
        assert token.expiry_timestamp_ms <= token.max_timestamp_ms
        # KRaft: the controller writes the token; brokers know it once they applied that
        # record (DELEGATION_TOKEN_NOT_FOUND until then)
        deadline = time.monotonic() + 30
        while True:
            try:
                renewed = renew_delegation_token(client, token, renew_period_ms=600_000)
                break
            except KafkaError as exc:
                if "DELEGATION_TOKEN_NOT_FOUND" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    assert renewed > token.issue_timestamp_ms
    wait_until_usable(config, token)
    secret = token.password.reveal_str()
    assert secret not in repr(token) and token.hmac_bytes().hex() not in repr(token)

    (tmp_path / "no-realm.conf").write_text("[libdefaults]\n")
    with krb5_config(tmp_path / "no-realm.conf"):
        options = {
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'tokenauth=true username="{token.token_id}" password="{secret}";'
            ),
        }
        assert _read(krb, options, topic, 1) == [f"kerberos-{i}".encode() for i in range(1, N, 2)]
        # the same without tokenauth: the token id is no SCRAM user
        plain = {
            **options,
            "kafka.sasl.jaas.config": options["kafka.sasl.jaas.config"].replace(
                "tokenauth=true ", ""
            ),
        }
        err = _metadata_error(krb, plain)
    assert "SASL_AUTHENTICATION_FAILED" in str(err) and secret not in str(err)
