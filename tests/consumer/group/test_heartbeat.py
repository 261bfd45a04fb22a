"""The pure heartbeat timer: due times, failures, session and poll expiry."""

from __future__ import annotations

import pytest

from spark_kafka_py.client.retry import Backoff
from spark_kafka_py.consumer.group.heartbeat import HeartbeatTimer
from spark_kafka_py.errors import ConfigError


def test_interval_and_backoff() -> None:
    t = HeartbeatTimer(session_timeout_ms=10_000, heartbeat_interval_ms=1_000, retry_backoff_ms=50)
    t.reset(0)
    assert not t.due(999) and t.due(1_000)
    assert t.time_to_next_ms(400) == 600
    t.sent(1_000)
    assert not t.due(1_999) and t.due(2_000)
    t.failed(1_010)
    assert t.due(1_060) and not t.due(1_059)


def test_failed_heartbeats_back_off_exponentially_until_one_is_answered() -> None:
    backoff = Backoff(100, 300, rng=lambda: 0.5)  # no jitter
    t = HeartbeatTimer(session_timeout_ms=10_000, heartbeat_interval_ms=1_000, backoff=backoff)
    t.reset(0)
    for pause in (100, 200, 300, 300):
        t.failed(1_000)
        assert t.time_to_next_ms(1_000) == pause
    t.received(1_500)
    t.failed(1_500)
    assert t.time_to_next_ms(1_500) == 100


def test_session_and_poll_expiry() -> None:
    t = HeartbeatTimer(
        session_timeout_ms=10_000, heartbeat_interval_ms=1_000, max_poll_interval_ms=5_000
    )
    t.reset(0)
    assert not t.session_expired(10_000) and t.session_expired(10_001)
    t.received(8_000)
    assert not t.session_expired(18_000)
    assert not t.poll_expired(5_000) and t.poll_expired(5_001)
    t.poll(5_000)
    assert not t.poll_expired(10_000)


def test_interval_must_be_below_session_timeout() -> None:
    with pytest.raises(ConfigError, match=r"kafka.heartbeat.interval.ms"):
        HeartbeatTimer(session_timeout_ms=3_000, heartbeat_interval_ms=3_000)
