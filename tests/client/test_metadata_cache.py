"""spark_kafka_py.client.metadata_cache: the cached leaders, their age, and their refresh on a
thread of its own, with a scripted look-up and clock (no broker)."""

from __future__ import annotations

import logging
import pickle
import threading
import time

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.metadata_cache import MetadataCache
from spark_kafka_py.protocol.topic_partition import TopicPartition

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
MAX_AGE_MS = 1000


class Clock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Lookup:
    """Answers ``leaders`` (or raises ``error``) once ``gate`` is set; records the clients it
    was given."""

    def __init__(self, leaders: dict[TopicPartition, int]) -> None:
        self.leaders = leaders
        self.error: BaseException | None = None
        self.gate = threading.Event()
        self.gate.set()
        self.clients: list[KafkaClient] = []

    def __call__(self, client: KafkaClient) -> dict[TopicPartition, int]:
        self.clients.append(client)
        assert self.gate.wait(30)
        if self.error is not None:
            raise self.error
        return dict(self.leaders)


def _leaders_of_t(client: KafkaClient) -> dict[TopicPartition, int]:
    """A picklable look-up."""
    return {T0: 1}


def _cache(lookup: Lookup, clock: Clock) -> MetadataCache:
    config = ClientConfig.from_bootstrap("127.0.0.1:9", metadata_max_age_ms=MAX_AGE_MS)
    return MetadataCache(config, lookup, clock=clock)


def test_stored_leaders_are_fresh_until_metadata_max_age() -> None:
    clock = Clock()
    cache = _cache(Lookup({}), clock)
    assert cache.fresh() is None
    cache.store({T0: 1, T1: 2}, asked=clock.now)
    clock.now += 0.999
    assert cache.fresh() == {T0: 1, T1: 2}
    clock.now += 0.001  # exactly metadata.max.age.ms old
    assert cache.fresh() is None


def test_store_and_forget_change_the_version() -> None:
    clock = Clock()
    cache = _cache(Lookup({}), clock)
    v0 = cache.version
    cache.store({T0: 1}, asked=clock.now)
    v1 = cache.version
    cache.store({T0: 1}, asked=clock.now)  # a new look-up: derived requests are rebuilt
    v2 = cache.version
    cache.forget()
    v3 = cache.version
    cache.forget()  # nothing more to drop
    assert len({v0, v1, v2, v3}) == 4 and cache.version == v3
    assert cache.fresh() is None


def test_a_refresh_runs_on_its_own_client_and_its_answer_replaces_other_leaders() -> None:
    clock = Clock()
    lookup = Lookup({T0: 1, T1: 2, T2: 1})
    cache = _cache(lookup, clock)
    try:
        cache.store({T0: 1, T1: 2}, asked=clock.now)
        version = cache.version
        lookup.gate.clear()
        clock.now += 0.5
        cache.refresh()
        cache.refresh()  # one under way: not started again
        assert cache.fresh() == {T0: 1, T1: 2}  # the cached answer while it runs
        lookup.gate.set()
        assert cache.wait(30)
        assert len(lookup.clients) == 1
        assert cache.fresh() == {T0: 1, T1: 2, T2: 1}
        assert cache.version != version
        clock.now += 0.999  # the answer's age counts from when the refresh asked
        assert cache.fresh() is not None
        clock.now += 0.001
        assert cache.fresh() is None
        cache.refresh()
        assert cache.wait(30)
        assert lookup.clients[1] is lookup.clients[0]  # the refresh client is kept
    finally:
        cache.close()


def test_a_refresh_with_the_same_leaders_keeps_the_version_and_renews_the_age() -> None:
    clock = Clock()
    lookup = Lookup({T0: 1})
    cache = _cache(lookup, clock)
    try:
        cache.store({T0: 1}, asked=clock.now)
        version = cache.version
        clock.now += 0.9
        cache.refresh()
        assert cache.wait(30)
        clock.now += 0.9  # 1.8 s after the store, 0.9 s after the refresh asked
        assert cache.fresh() == {T0: 1}
        assert cache.version == version
    finally:
        cache.close()


def test_a_failed_refresh_drops_the_cache(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    lookup = Lookup({})
    lookup.error = TimeoutError("no broker answered")
    cache = _cache(lookup, clock)
    try:
        cache.store({T0: 1}, asked=clock.now)
        cache.refresh()
        assert cache.wait(30)
        with caplog.at_level(logging.INFO, logger="spark_kafka_py.client.metadata_cache"):
            assert cache.fresh() is None
        assert "no broker answered" in caplog.text
        lookup.error = None  # the next refresh is started anew
        cache.refresh()
        assert cache.wait(30)
        assert cache.fresh() == {}
    finally:
        cache.close()


def test_close_closes_the_refresh_client_and_a_later_refresh_opens_another() -> None:
    clock = Clock()
    lookup = Lookup({T0: 1})
    cache = _cache(lookup, clock)
    cache.refresh()
    cache.close()
    assert cache.wait(0)  # close took (or dropped) the refresh
    cache.refresh()
    try:
        assert cache.wait(30)
        assert len(lookup.clients) == 2 and lookup.clients[1] is not lookup.clients[0]
        assert cache.fresh() == {T0: 1}  # the refresh after close still lands
    finally:
        cache.close()


def test_a_pickled_cache_carries_no_answer_client_or_thread() -> None:
    config = ClientConfig.from_bootstrap("127.0.0.1:9", metadata_max_age_ms=MAX_AGE_MS)
    cache = MetadataCache(config, _leaders_of_t)
    try:
        cache.store({T0: 1}, asked=time.monotonic())
        cache.refresh()
        assert cache.wait(30)
        assert cache.fresh() == {T0: 1}
        copy = pickle.loads(pickle.dumps(cache))
        assert copy.fresh() is None
        assert copy.config == config
        copy.refresh()
        assert copy.wait(30)
        assert copy.fresh() == {T0: 1}
        copy.close()
    finally:
        cache.close()
