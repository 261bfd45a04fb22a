"""When the driver renews or replaces a delegation token, and what the tasks authenticate with
(``delegationToken=true``; :mod:`spark_kafka_py.spark.tokens`). Sans broker: the broker side is
tests/integration/test_delegation_tokens.py.

Expected times are written out from the rules: Spark's renewal ratio 0.75
(``spark.security.credentials.renewalRatio``) and at least 60 s of life left for tasks.
"""

from __future__ import annotations

import pickle
import time

import pytest
from pyspark.sql.datasource import InputPartition

from spark_kafka_py.admin.delegation_tokens import DelegationToken, token_sasl_config
from spark_kafka_py.client.security import Secret
from spark_kafka_py.spark import tokens
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.range_planner import KafkaInputPartition
from spark_kafka_py.spark.sink import on_executor as sink_on_executor
from spark_kafka_py.spark.sink_options import parse_sink_options
from spark_kafka_py.spark.source import on_executor

H = 3_600_000  # ms
ISSUE = 1_700_000_000_000


def _token(expiry: int = ISSUE + 24 * H, max_ts: int = ISSUE + 7 * 24 * H) -> DelegationToken:
    return DelegationToken("tok-1", Secret(b"\x01" * 64), "User:app", ISSUE, expiry, max_ts)


def _held(token: DelegationToken, expiry: int, renewed_at: int) -> tokens._Held:
    return tokens._Held(token, expiry, renewed_at)


def test_renewal_is_due_at_three_quarters_of_the_period() -> None:
    held = _held(_token(), ISSUE + 24 * H, ISSUE)
    assert not tokens._due_for_renewal(held, ISSUE + 17 * H)
    assert not tokens._due_for_renewal(held, ISSUE + 18 * H - 1)
    assert tokens._due_for_renewal(held, ISSUE + 18 * H)
    # after a renewal at 18 h that moved the expiry to 42 h: next at 18 + 0.75 * 24 = 36 h
    renewed = _held(_token(), ISSUE + 42 * H, ISSUE + 18 * H)
    assert not tokens._due_for_renewal(renewed, ISSUE + 36 * H - 1)
    assert tokens._due_for_renewal(renewed, ISSUE + 36 * H)


def test_a_short_expiry_is_renewed_at_every_planning() -> None:
    """A 30 s expiry leaves less than a minute: due at once."""
    held = _held(_token(expiry=ISSUE + 30_000), ISSUE + 30_000, ISSUE)
    assert tokens._due_for_renewal(held, ISSUE)


def test_replacement_is_due_near_the_max_lifetime_or_after_the_expiry() -> None:
    token = _token()
    held = _held(token, ISSUE + 24 * H, ISSUE)
    # 75% of 7 days = 126 h
    assert not tokens._due_for_replacement(held, ISSUE + 23 * H)
    late = _held(token, ISSUE + 130 * H, ISSUE + 120 * H)
    assert not tokens._due_for_replacement(late, ISSUE + 126 * H - 1)
    assert tokens._due_for_replacement(late, ISSUE + 126 * H)
    # expired (nobody planned for a day)
    assert tokens._due_for_replacement(held, ISSUE + 24 * H)
    # less than a minute to its max lifetime, whatever the ratio says
    short = _token(expiry=ISSUE + 50_000, max_ts=ISSUE + 100_000)
    assert tokens._due_for_replacement(_held(short, ISSUE + 50_000, ISSUE), ISSUE + 40_001)


GSSAPI = {
    "kafka.bootstrap.servers": "localhost:9092",
    "kafka.security.protocol": "SASL_PLAINTEXT",
    "kafka.sasl.mechanism": "GSSAPI",
    "kafka.sasl.jaas.config": (
        "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;"
    ),
    "delegationToken": "true",
}


def _credentials(mechanism: str = "SCRAM-SHA-512") -> tokens.Credentials:
    token = _token()
    expiry = int(time.time() * 1000) + H  # valid for the test's hour
    return tokens.Credentials(token.token_id, token_sasl_config(token, mechanism), expiry, token)


def test_an_expired_token_is_a_typed_error_at_the_task() -> None:
    """A task started (or retried) after its token's expiry: DELEGATION_TOKEN_EXPIRED naming
    the token and what to do, before any connection."""
    from spark_kafka_py.client.cluster import ClientConfig
    from spark_kafka_py.errors import KafkaApiError

    credentials = _credentials()
    config = ClientConfig.from_bootstrap("h:1")
    with pytest.raises(KafkaApiError) as info:
        credentials.apply(config, now_ms=credentials.expiry_timestamp_ms)
    assert info.value.name == "DELEGATION_TOKEN_EXPIRED"
    assert "tok-1" in str(info.value) and "restart the query" in str(info.value)
    assert "AQEB" not in str(info.value)
    credentials.apply(config, now_ms=credentials.expiry_timestamp_ms - 1)  # still valid


def test_a_task_reads_with_the_token_not_the_drivers_login() -> None:
    options = parse_options({**GSSAPI, "subscribe": "t"}, streaming=True)
    assert options.delegation_token == tokens.TokenOptions("SCRAM-SHA-512")
    credentials = _credentials()
    part = KafkaInputPartition("t", 0, 5, 10)
    shipped = pickle.loads(pickle.dumps(tokens.Authenticated(part, credentials)))
    task_options, task_part = on_executor(options, shipped)
    assert task_part == part
    sasl = task_options.consumer.client.security.sasl
    assert sasl is not None and sasl.mechanism == "SCRAM-SHA-512"
    assert sasl.username == "tok-1" and sasl.keytab is None and sasl.kerberos_principal is None
    assert sasl.extensions == (("tokenauth", "true"),)
    assert sasl.password is not None
    assert sasl.password.reveal_str() == "AQEB" * 21 + "AQ=="  # base64 of 64 bytes 0x01
    assert "AQEB" not in repr(shipped)
    # a plain partition (no token) keeps the driver's settings
    assert on_executor(options, part) == (options, part)
    assert on_executor(options, InputPartition(None))[0] is options


def test_a_task_writes_with_the_token() -> None:
    options = parse_sink_options(
        {**GSSAPI, "topic": "t", "delegationToken.mechanism": "SCRAM-SHA-256"}, streaming=False
    )
    assert options.delegation_token == tokens.TokenOptions("SCRAM-SHA-256")
    task = sink_on_executor(options, _credentials("SCRAM-SHA-256"))
    sasl = task.producer.client.security.sasl
    assert sasl is not None and sasl.mechanism == "SCRAM-SHA-256" and sasl.username == "tok-1"
    assert sink_on_executor(options, None) is options


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [("SASL_PLAINTEXT", "SASL_PLAINTEXT"), ("SASL_SSL", "SASL_SSL"), ("SSL", "SASL_SSL")],
)
def test_the_token_keeps_tls(protocol: str, expected: str) -> None:
    """A driver logged in with a client certificate (SSL): the tasks use SASL over TLS."""
    from spark_kafka_py.client.cluster import ClientConfig
    from spark_kafka_py.client.security import SecurityConfig

    config = ClientConfig.from_bootstrap("h:1", security=SecurityConfig(protocol=protocol))
    assert _credentials().apply(config).security.protocol == expected
