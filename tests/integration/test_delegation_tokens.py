"""``delegationToken=true``: the driver logs in with Kerberos and obtains a Kafka delegation
token; the executors authenticate with it (SCRAM-SHA-512, ``tokenauth=true``), as Spark's
connector does (issue 28).

The broker (:class:`~spark_kafka_py.testing.kerberos.KerberizedKafka`, a real MIT KDC) lets a
token live :data:`EXPIRY_MS` unless renewed, so the driver's renewals happen within the tests:

- the driver's token holder (:func:`spark_kafka_py.spark.tokens.executor_credentials`) against
  the real broker: it renews the token (each planning, the broker's expiry being short), and
  the renewal matters: a token whose life was cut to 3 s at the broker still authenticates
  after those 3 s once renewed, while a control token cut the same way is refused; near its
  max lifetime, or once expired, the holder replaces the token with a new one that
  authenticates;
- Spark (local[2]): a streaming Kafka -> Kafka query, tokens on both sides, exactly-once, fed
  for longer than a token's expiry: Kafka's Java consumer, logging in with alice's keytab,
  reads every record once (the oracle); the token's HMAC, read with Kafka's own
  ``kafka-delegation-tokens`` tool, is in neither the query's progress nor its plan;
- a batch write and a batch read with tokens;
- a broker without ``delegation.token.secret.key``: a typed error naming the option.

Executors that have no Kerberos configuration at all are in tests/deploy/test_standalone.py.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.datasource import InputPartition

from spark_kafka_py.admin.delegation_tokens import (
    create_delegation_token,
    renew_delegation_token,
    token_sasl_config,
    wait_until_usable,
)
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.security import parse_security_options
from spark_kafka_py.errors import ConfigError, KafkaApiError, KafkaError
from spark_kafka_py.spark import tokens
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.testing.kerberos import KerberizedKafka
from spark_kafka_py.testing.secure import USERS, SecureKafka
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    create_topic,
    produce,
    read_all,
    run_tool,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

#: ``delegation.token.expiry.time.ms`` of the long test's broker, ms.
SHORT_EXPIRY_MS = 45_000


@pytest.fixture(scope="module")
def krb(kerberized_kafka: KerberizedKafka) -> KerberizedKafka:
    """The session's Kerberized broker (Kafka's default token expiry: 24 h)."""
    return kerberized_kafka


def _client(krb: KerberizedKafka, name: str = "app") -> ClientConfig:
    options = krb.client_options(name)
    kafka = {k[len("kafka.") :]: v for k, v in options.items() if k != "kafka.bootstrap.servers"}
    return ClientConfig.from_bootstrap(
        krb.bootstrap, security=parse_security_options(kafka), request_timeout_ms=20_000
    )


def _authenticates(krb: KerberizedKafka, credentials: tokens.Credentials) -> KafkaError | None:
    """None when a new connection with ``credentials`` gets Metadata, else the error."""
    try:
        with KafkaClient(credentials.apply(_client(krb))) as client:
            client.metadata([])
    except KafkaError as exc:
        return exc
    return None


def _describe_tokens(krb: KerberizedKafka, tmp_path: Path) -> str:
    """``kafka-delegation-tokens.sh --describe`` as ``app`` (Kafka's own tool): the tokens,
    with their HMACs."""
    config = tmp_path / f"tool-{uuid.uuid4().hex[:6]}.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in krb.java_client_properties("app").items()))
    return run_tool(
        "org.apache.kafka.tools.DelegationTokenCommand",
        [
            "--bootstrap-server",
            krb.bootstrap,
            "--command-config",
            str(config),
            "--describe",
            "--owner-principal",
            "User:app",
        ],
        jvm_options=krb.jvm_options(),
    ).stdout


# ---------------------------------------------------------------------------- the driver


def test_the_driver_renews_then_replaces_the_token(krb: KerberizedKafka) -> None:
    """The holder against the real broker; the holder's clock is moved (``now_ms``) to
    make renewal and replacement due. The renewal is checked to matter by first cutting the
    token's life to 3 s at the broker (RenewDelegationToken with a 3 s period): past those
    3 s the renewed token still authenticates, while a control token cut the same way and
    not renewed is refused."""
    tokens.forget_tokens()
    client = _client(krb)
    options = tokens.TokenOptions()
    first = tokens.executor_credentials(client, options)
    # not due: the same token, not renewed
    again = tokens.executor_credentials(client, options)
    assert (again.token_id, again.expiry_timestamp_ms) == (
        first.token_id,
        first.expiry_timestamp_ms,
    )
    assert first.sasl.mechanism == "SCRAM-SHA-512" and first.sasl.username == first.token_id
    assert ("tokenauth", "true") in tuple(first.sasl.extensions or ())
    assert _authenticates(krb, first) is None
    with KafkaClient(client) as kafka:
        control = create_delegation_token(kafka)
        wait_until_usable(client, control)
        for token in (first.token, control):
            renew_delegation_token(kafka, token, renew_period_ms=3_000)
    cut = time.time()

    # due (75% of the period since the last renewal): RenewDelegationToken
    due = first.token.issue_timestamp_ms + int(
        0.8 * (first.expiry_timestamp_ms - first.token.issue_timestamp_ms)
    )
    renewed = tokens.executor_credentials(client, options, now_ms=due)
    assert renewed.token_id == first.token_id
    assert renewed.expiry_timestamp_ms > first.expiry_timestamp_ms
    time.sleep(max(0.0, cut + 4.5 - time.time()))
    assert _authenticates(krb, renewed) is None
    control_credentials = tokens.Credentials(
        control.token_id, token_sasl_config(control), control.expiry_timestamp_ms, control
    )
    refused = _authenticates(krb, control_credentials)
    assert refused is not None and "SASL_AUTHENTICATION_FAILED" in str(refused)

    # near its max lifetime (75% of issue -> max): a new token, which authenticates
    issue = first.token.issue_timestamp_ms
    late = issue + int(0.8 * (first.token.max_timestamp_ms - issue))
    replaced = tokens.executor_credentials(client, options, now_ms=late)
    assert replaced.token_id != first.token_id
    assert _authenticates(krb, replaced) is None
    # expired (a holder that slept through the expiry): replaced too
    gone = tokens.executor_credentials(client, options, now_ms=replaced.expiry_timestamp_ms + 1)
    assert gone.token_id not in (first.token_id, replaced.token_id)
    assert _authenticates(krb, gone) is None
    secret = gone.sasl.password.reveal_str() if gone.sasl.password else ""
    assert secret and secret not in repr(gone)
    assert secret not in repr(tokens.Authenticated(InputPartition(0), gone))


def test_a_broker_without_tokens_is_a_typed_error_naming_the_option(
    secure_kafka: SecureKafka,
) -> None:
    """SCRAM on the secure broker, which has no ``delegation.token.secret.key``."""
    user, password = next(iter(USERS.items()))
    options = {
        "kafka.bootstrap.servers": secure_kafka.bootstrap("SASL_PLAINTEXT"),
        "subscribe": "t",
        "delegationToken": "true",
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{user}" password="{password}";'
        ),
    }
    parsed = parse_options(options, streaming=False)
    assert parsed.delegation_token is not None
    with pytest.raises(KafkaApiError) as info:
        tokens.executor_credentials(parsed.consumer.client, parsed.delegation_token)
    text = str(info.value)
    assert info.value.name == "DELEGATION_TOKEN_AUTH_DISABLED"
    assert "'delegationToken'='true'" in text and password not in text


def test_options_refused() -> None:
    base = {"kafka.bootstrap.servers": "localhost:9", "subscribe": "t"}
    with pytest.raises(ConfigError, match="'delegationToken'='true' needs an authenticated"):
        parse_options({**base, "delegationToken": "true"}, streaming=False)
    with pytest.raises(ConfigError, match=r"'delegationToken\.mechanism' needs"):
        parse_options({**base, "delegationToken.mechanism": "SCRAM-SHA-256"}, streaming=False)
    token_login = {
        **base,
        "delegationToken": "true",
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'tokenauth=true username="id" password="hmac";'
        ),
    }
    with pytest.raises(ConfigError, match="already authenticates with a delegation token"):
        parse_options(token_login, streaming=False)


# ---------------------------------------------------------------------------- Spark


def _token_options(krb: KerberizedKafka) -> dict[str, str]:
    return {
        **krb.client_options("app"),
        "kafka.sasl.kerberos.krb5.conf": str(krb.krb5_conf),
        "delegationToken": "true",
    }


def _stream_through_tokens(
    krb: KerberizedKafka, spark: SparkSession, tmp_path: Path, rounds: int
) -> tuple[str, str]:
    """A Kafka -> Kafka query (exactly-once, a 1 s processing-time trigger) with tokens on
    both sides, fed 5 records a second for ``rounds`` seconds; asserts Kafka's Java consumer
    (alice's keytab, read_committed) reads each output record once. Returns the query's
    progress (JSON) and its plan as Spark prints them."""
    source = f"dt-in-{uuid.uuid4().hex[:8]}"
    target = f"dt-out-{uuid.uuid4().hex[:8]}"
    create_topic(krb.plaintext_bootstrap, source, 2)
    create_topic(krb.plaintext_bootstrap, target, 2)
    options = _token_options(krb)

    def feed() -> None:
        for r in range(rounds):
            produce(
                krb.plaintext_bootstrap,
                source,
                [
                    ProducedRecord(key=f"k{r}-{i}", value=f"v{r}-{i}", partition=i % 2)
                    for i in range(5)
                ],
            )
            time.sleep(1.0)

    query = (
        spark.readStream.format("pykafka")
        .options(**options)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "concat('out-', CAST(value AS STRING)) AS value")
        .writeStream.format("pykafka")
        .options(**options)
        .option("topic", target)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", f"dt-{uuid.uuid4().hex[:6]}")
        .option("checkpointLocation", str(tmp_path / f"cp-{target}"))
        .trigger(processingTime="1 second")
        .start()
    )
    feeder = threading.Thread(target=feed)
    feeder.start()
    expected = {(f"k{r}-{i}", f"out-v{r}-{i}") for r in range(rounds) for i in range(5)}
    got: list[tuple[str, str]] = []
    try:
        feeder.join(rounds * 10)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and query.exception() is None:
            java = read_all(
                krb.bootstrap,
                target,
                isolation_level="read_committed",
                extra_props=krb.java_client_properties("alice"),
                jvm_options=krb.jvm_options(),
            )
            got = [(r.key.decode(), r.value.decode()) for r in java]
            if len(got) >= len(expected):
                break
            time.sleep(2)
        progress = "\n".join(p.json for p in query.recentProgress)
        plan = str(query._jsq.explainInternal(True))  # the plan as Spark prints it
    finally:
        query.stop()
    assert query.exception() is None
    assert sorted(got) == sorted(expected)  # each once
    return progress, plan


def test_spark_stream_and_batch_with_tokens(
    krb: KerberizedKafka, spark: SparkSession, tmp_path: Path
) -> None:
    """A streaming Kafka -> Kafka query (exactly-once) with tokens on both sides; the tokens'
    HMACs (Kafka's own tool prints them) are in neither its progress nor its plan; then a
    batch write and a batch read with tokens."""
    tokens.forget_tokens()
    progress, plan = _stream_through_tokens(krb, spark, tmp_path, rounds=3)
    described = _describe_tokens(krb, tmp_path)
    assert "User:app" in described
    hmacs = [
        word
        for line in described.splitlines()
        for word in line.split()
        if len(word) >= 40 and word.endswith("=")  # base64 of a 64-byte HmacSHA512
    ]
    assert hmacs, described
    for hmac in hmacs:
        assert hmac not in progress and hmac not in plan

    options = _token_options(krb)
    batch_topic = f"dt-batch-{uuid.uuid4().hex[:8]}"
    create_topic(krb.plaintext_bootstrap, batch_topic, 1)
    rows = [(f"bk{i}", f"bv{i}") for i in range(20)]
    (
        spark.createDataFrame(rows, "key STRING, value STRING")
        .write.format("pykafka")
        .mode("append")
        .options(**options)
        .option("topic", batch_topic)
        .save()
    )
    java = read_all(
        krb.bootstrap,
        batch_topic,
        extra_props=krb.java_client_properties("alice"),
        jvm_options=krb.jvm_options(),
    )
    assert sorted((r.key.decode(), r.value.decode()) for r in java) == sorted(rows)
    back = (
        spark.read.format("pykafka")
        .options(**options)
        .option("subscribe", batch_topic)
        .load()
        .selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v")
        .collect()
    )
    assert sorted((r.k, r.v) for r in back) == sorted(rows)


@pytest.mark.long
def test_stream_outlives_a_short_token_expiry(spark: SparkSession, tmp_path: Path) -> None:
    """A broker whose tokens expire after SHORT_EXPIRY_MS unless renewed; the query runs
    for more than two expiries: the driver renews the read's token at each micro-batch (it
    keeps less than MIN_REMAINING_MS), the write's token was renewed to its max lifetime at
    the start; every record arrives once. (Long: its own KDC and broker, and about 2 minutes.)"""
    with KerberizedKafka(token_expiry_ms=SHORT_EXPIRY_MS) as short:
        _stream_through_tokens(short, spark, tmp_path, rounds=2 * SHORT_EXPIRY_MS // 1000 + 5)
