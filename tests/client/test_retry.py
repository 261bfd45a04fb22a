"""spark_kafka_py.client.retry: the one retry policy (KIP-580 backoff, Kafka's retriable flag)."""

from __future__ import annotations

import pytest

from spark_kafka_py.client.retry import Backoff, Retries, retriable
from spark_kafka_py.errors import (
    ConfigError,
    CorruptRecordError,
    KafkaApiError,
    KafkaConnectionError,
    KafkaTimeoutError,
)
from spark_kafka_py.protocol import error_codes as ec


def test_retriable_follows_kafkas_error_table_and_the_connection_flag() -> None:
    assert retriable(KafkaApiError(ec.NOT_LEADER_OR_FOLLOWER, "in Fetch"))
    assert retriable(KafkaApiError(ec.COORDINATOR_LOAD_IN_PROGRESS, "in OffsetFetch"))
    assert not retriable(KafkaApiError(ec.TOPIC_AUTHORIZATION_FAILED, "in Fetch"))
    assert retriable(KafkaConnectionError("reset"))
    assert not retriable(KafkaConnectionError("TLS handshake failed", retriable=False))
    assert retriable(KafkaTimeoutError("no answer"))
    assert not retriable(ConfigError("bad option"))
    assert not retriable(CorruptRecordError("bad CRC"))
    assert not retriable(ValueError("a bug"))


def test_backoff_doubles_to_the_cap_without_jitter() -> None:
    b = Backoff(100, 1_000, jitter=0)
    assert [b.pause_ms(n) for n in range(6)] == [100, 200, 400, 800, 1_000, 1_000]
    assert b.pause_ms(10_000) == 1_000  # no overflow far past the cap


def test_backoff_jitter_stays_within_twenty_percent() -> None:
    low = Backoff(100, 1_000, rng=lambda: 0.0)
    high = Backoff(100, 1_000, rng=lambda: 0.999999)
    assert low.pause_ms(0) == pytest.approx(80)
    assert high.pause_ms(0) == pytest.approx(120, rel=1e-5)
    assert high.pause_ms(5) == 1_000  # the cap holds after the jitter


def test_backoff_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError, match="jitter"):
        Backoff(100, 1_000, jitter=1.5)
    with pytest.raises(ValueError, match=">= 0 ms"):
        Backoff(-1, 1_000)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_retry_sleeps_the_backoff_then_times_out_naming_the_option() -> None:
    clock = _Clock()
    retry = Retries(
        "ListOffsets for t-0",
        1_000,
        backoff=Backoff(100, 1_000, jitter=0),
        clock=clock,
        sleep=clock.sleep,
    )
    err = KafkaApiError(ec.LEADER_NOT_AVAILABLE, "in ListOffsets")
    with pytest.raises(KafkaTimeoutError) as info:
        for _ in range(100):
            retry.after(err)
    # the last pause ends at the deadline
    assert clock.sleeps == [0.1, 0.2, 0.4, pytest.approx(0.3)]
    assert "ListOffsets for t-0" in str(info.value)
    assert "default.api.timeout.ms" in str(info.value)
    assert "LEADER_NOT_AVAILABLE" in str(info.value)
    assert info.value.__cause__ is err


def test_retry_raises_a_non_retriable_error_at_once() -> None:
    clock = _Clock()
    retry = Retries("Fetch", 60_000, clock=clock, sleep=clock.sleep)
    err = KafkaApiError(ec.TOPIC_AUTHORIZATION_FAILED, "in Fetch")
    with pytest.raises(KafkaApiError) as info:
        retry.after(err)
    assert info.value is err
    assert clock.sleeps == []
