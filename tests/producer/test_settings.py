"""ProducerSettings: the registry's defaults and Java's cross-checks, one test per check."""

from __future__ import annotations

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.producer import ProducerSettings, parse_acks
from spark_kafka_py.registry import default

CLIENT = ClientConfig.from_bootstrap("localhost:9092")


def test_defaults_are_the_registry_defaults() -> None:
    s = ProducerSettings(CLIENT)
    assert s.acks == -1 and s.enable_idempotence is True
    assert s.batch_size == default("kafka.batch.size") == 16_384
    assert s.linger_ms == default("kafka.linger.ms")
    assert s.buffer_memory == default("kafka.buffer.memory")
    assert s.max_block_ms == default("kafka.max.block.ms")
    assert s.max_request_size == default("kafka.max.request.size")
    assert s.max_in_flight_requests_per_connection == 5
    assert s.delivery_timeout_ms == default("kafka.delivery.timeout.ms")
    assert s.retries == default("kafka.retries")


@pytest.mark.parametrize(("text", "acks"), [("all", -1), ("-1", -1), ("1", 1), ("0", 0)])
def test_parse_acks(text: str, acks: int) -> None:
    assert parse_acks(text) == acks


def test_parse_acks_rejects_other_values() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.acks"):
        parse_acks("2")


@pytest.mark.parametrize("acks", [0, 1])
def test_idempotence_needs_acks_all(acks: int) -> None:
    with pytest.raises(ConfigError, match=r"kafka\.acks=.*kafka\.enable\.idempotence=false"):
        ProducerSettings(CLIENT, acks=acks)
    assert ProducerSettings(CLIENT, acks=acks, enable_idempotence=False).acks == acks


def test_idempotence_needs_retries() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.retries=0.*kafka\.enable\.idempotence=false"):
        ProducerSettings(CLIENT, retries=0)
    assert ProducerSettings(CLIENT, retries=0, enable_idempotence=False).retries == 0


def test_idempotence_needs_at_most_5_in_flight() -> None:
    with pytest.raises(ConfigError, match=r"max\.in\.flight\.requests\.per\.connection=6"):
        ProducerSettings(CLIENT, max_in_flight_requests_per_connection=6)
    s = ProducerSettings(CLIENT, max_in_flight_requests_per_connection=6, enable_idempotence=False)
    assert s.max_in_flight_requests_per_connection == 6


def test_delivery_timeout_at_least_linger_plus_request_timeout() -> None:
    client = ClientConfig.from_bootstrap("localhost:9092", request_timeout_ms=1000)
    with pytest.raises(ConfigError, match=r"kafka\.delivery\.timeout\.ms=1099.*1100"):
        ProducerSettings(client, linger_ms=100, delivery_timeout_ms=1099)
    assert ProducerSettings(client, linger_ms=100, delivery_timeout_ms=1100).linger_ms == 100


@pytest.mark.parametrize(
    ("field", "value", "option"),
    [
        ("batch_size", -1, "kafka.batch.size"),
        ("max_request_size", 0, "kafka.max.request.size"),
        ("max_in_flight_requests_per_connection", 0, "kafka.max.in.flight.requests.per.connection"),
        ("buffer_memory", -5, "kafka.buffer.memory"),
    ],
)
def test_ranges_name_the_option(field: str, value: int, option: str) -> None:
    with pytest.raises(ConfigError, match=option.replace(".", r"\.")):
        ProducerSettings(CLIENT, **{field: value})


def test_unknown_codec_and_acks() -> None:
    with pytest.raises(ConfigError, match="compression"):
        ProducerSettings(CLIENT, compression_type=7)
    with pytest.raises(ConfigError, match=r"kafka\.acks"):
        ProducerSettings(CLIENT, acks=2, enable_idempotence=False)
