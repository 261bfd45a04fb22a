"""The Fetch loop's retries follow the one retry policy (spark_kafka_py.client.retry): the pause
after a leader error doubles per round without progress up to retry.backoff.max.ms, with
KIP-580's jitter, and starts again at retry.backoff.ms after progress; the poll timeout comes
from the consumer settings. ListOffsets backs off the same way while brokers are unreachable."""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

import spark_kafka_py.consumer.fetcher as fetcher_module
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.retry import JITTER
from spark_kafka_py.client_defaults import POLL_TIMEOUT_MS, RETRY_BACKOFF_MAX_MS
from spark_kafka_py.consumer.fetcher import PartitionFetcher
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaConnectionError, KafkaTimeoutError
from spark_kafka_py.protocol.error_codes import NOT_LEADER_OR_FOLLOWER
from spark_kafka_py.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from tests.client.fake_broker import FakeBroker, api_versions_for
from tests.records.encoder import Rec, batch_v2

TP = TopicPartition("t", 0)
BACKOFF_MS = 100


class _FlakyLeader:
    """Answers NOT_LEADER_OR_FOLLOWER ``failures[offset]`` times for a Fetch at ``offset``, then
    five records from there (offsets 0-4, then 5-9)."""

    def __init__(self, failures: dict[int, int]) -> None:
        self.failures = dict(failures)

    def fetch(self, request: Any, version: int) -> FetchResponse:
        offset = request.topics[0].partitions[0].fetch_offset
        data: dict[str, Any] = {"partition_index": 0, "high_watermark": 10}
        if self.failures.get(offset, 0) > 0:
            self.failures[offset] -= 1
            data["error_code"] = NOT_LEADER_OR_FOLLOWER.code
            data["records"] = b""
        else:
            recs = [Rec(None, f"v{offset + i}".encode(), i) for i in range(5)]
            data["records"] = batch_v2(recs, base_offset=offset, leader_epoch=1)
        return FetchResponse(
            responses=(FetchableTopicResponse(topic="t", partitions=(PartitionData(**data),)),)
        )


def _read(
    leader: _FlakyLeader, monkeypatch: pytest.MonkeyPatch, *, poll_timeout_ms: int | None = None
) -> tuple[list[str], list[float], PartitionFetcher]:
    """Read [0, 10) from ``leader``; the values read and the fetcher's pauses (ms)."""
    sleeps: list[float] = []
    # only the fetcher's clock: the fake broker's threads keep the real one
    fake_time = SimpleNamespace(monotonic=time.monotonic, sleep=lambda s: sleeps.append(s * 1000))
    monkeypatch.setattr(fetcher_module, "time", fake_time)
    handlers: dict[int, Any] = {
        18: lambda r, v: api_versions_for(MetadataRequest, FetchRequest),
        1: leader.fetch,
    }
    with FakeBroker(handlers) as broker:
        handlers[3] = lambda r, v: MetadataResponse(
            brokers=(MetadataResponseBroker(node_id=1, host=broker.host, port=broker.port),),
            topics=(
                MetadataResponseTopic(
                    name="t",
                    partitions=(
                        MetadataResponsePartition(partition_index=0, leader_id=1, leader_epoch=1),
                    ),
                ),
            ),
        )
        cfg = ClientConfig.from_bootstrap(
            f"{broker.host}:{broker.port}", retry_backoff_ms=BACKOFF_MS
        )
        with KafkaClient(cfg) as client:
            fetcher = PartitionFetcher(
                client, TP, ConsumerSettings(cfg), poll_timeout_ms=poll_timeout_ms
            )
            values: list[str] = []
            for batch in fetcher.read(0, 10):
                values += [v.decode() for v in batch.column("value").to_pylist()]
    return values, sleeps, fetcher


def _bounds(attempts: int) -> tuple[float, float]:
    """The pause after ``attempts`` rounds without progress (ms): KIP-580's range (the
    exponential term stops at the cap, then the jitter, then the cap again)."""
    base = min(BACKOFF_MS * 2**attempts, RETRY_BACKOFF_MAX_MS)
    return base * (1 - JITTER), min(base * (1 + JITTER), RETRY_BACKOFF_MAX_MS)


def test_leader_errors_back_off_exponentially_to_the_cap_and_reset_after_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values, sleeps, _ = _read(_FlakyLeader({0: 6, 5: 2}), monkeypatch)
    assert values == [f"v{i}" for i in range(10)]
    # six failures at offset 0: 100, 200, 400, 800 ms, then the 1 s cap twice (all +-20 %,
    # never above the cap)
    expected = [_bounds(n) for n in range(6)] + [_bounds(0), _bounds(1)]
    assert len(sleeps) == len(expected)
    for pause, (low, high) in zip(sleeps, expected, strict=True):
        assert low <= pause <= high, (pause, low, high)
    # progress at offset 5 starts the backoff again at retry.backoff.ms
    assert sleeps[6] < sleeps[5]


def test_the_poll_timeout_defaults_to_the_consumer_settings_and_still_bounds_the_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = ClientConfig.from_bootstrap("127.0.0.1:9")
    with KafkaClient(cfg) as client:  # never connected: no request is sent
        fetcher = PartitionFetcher(client, TP, ConsumerSettings(cfg))
        assert fetcher.poll_timeout_ms == POLL_TIMEOUT_MS
        short = PartitionFetcher(client, TP, ConsumerSettings(cfg, poll_timeout_ms=1_234))
        assert short.poll_timeout_ms == 1_234
    # a leader that never recovers: the read ends with a timeout naming the option
    with pytest.raises(KafkaTimeoutError, match=r"kafkaConsumer.pollTimeoutMs=1 ms"):
        _read(_FlakyLeader({0: 10**6}), monkeypatch, poll_timeout_ms=1)


class _Unreachable:
    """A client whose Metadata always fails with ``error`` (no broker answers)."""

    cached_metadata = None

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls: list[float] = []  # time.monotonic() of each Metadata

    def metadata_is_stale(self) -> bool:
        return True

    def metadata(self, topics: list[str]) -> Any:
        self.calls.append(time.monotonic())
        raise self.error


def test_list_offsets_backs_off_exponentially_while_brokers_are_unreachable() -> None:
    client = _Unreachable(KafkaConnectionError("connection refused by 127.0.0.1:9"))
    with pytest.raises(KafkaTimeoutError, match=r"unreachable for default.api.timeout.ms=1200 ms"):
        list_offsets(cast(KafkaClient, client), {TP: -1}, api_timeout_ms=1_200, retry_backoff_ms=50)
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(client.calls)]
    # 50, 100, 200, 400 ms (-20 % at most; a loaded machine may sleep longer, never shorter),
    # the last pause cut at the deadline
    assert len(gaps) >= 2
    for n, gap in enumerate(gaps[:-1]):
        assert gap >= 50 * 2**n * (1 - JITTER), (n, gaps)


def test_list_offsets_does_not_retry_what_waiting_cannot_mend() -> None:
    client = _Unreachable(KafkaConnectionError("TLS handshake failed", retriable=False))
    with pytest.raises(KafkaConnectionError, match="TLS handshake failed"):
        list_offsets(cast(KafkaClient, client), {TP: -1}, api_timeout_ms=60_000)
    assert len(client.calls) == 1
