"""Dropped connections, truncated and stalled responses, bit rot: the fetcher through a
fault-injecting proxy in front of the real broker (:mod:`spark_kafka_py.testing.faultproxy`).

Each test reads a known range of a real topic and checks the rows: every offset exactly once,
in order, with the produced value (no partial batch, no duplicate after a retry), and that the
fault really fired. Failing cases check the error type and that it names what was tried.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import CorruptRecordError, KafkaTimeoutError
from spark_kafka_py.testing.faultproxy import FETCH_KEY, METADATA_KEY, Fault, FaultProxy

from .helpers import expected_values, fetcher_via, produce_values, rows, settings_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

COUNT = 400


@pytest.fixture(scope="module")
def topic(kafka_bootstrap: str, request: pytest.FixtureRequest) -> str:
    from spark_kafka_py.testing.tools import create_topic

    name = f"faults-proxy-{id(request)}"
    create_topic(kafka_bootstrap, name, partitions=1)
    produce_values(kafka_bootstrap, name, COUNT)
    return name


@pytest.fixture()
def proxy(kafka_bootstrap: str) -> Iterator[FaultProxy]:
    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)
    with FaultProxy(host, int(port)) as p:
        yield p


def read(proxy: FaultProxy, bootstrap: str, topic: str, start: int, end: int, **kw: int):
    poll = kw.pop("poll_timeout_ms", 30_000)
    client, fetcher = fetcher_via(
        proxy, settings_for(bootstrap, **kw), TopicPartition(topic, 0), poll_timeout_ms=poll
    )
    try:
        return rows(fetcher.read(start, end))
    finally:
        client.close()


def test_no_fault_reads_through_the_proxy(proxy: FaultProxy, kafka_bootstrap: str, topic: str):
    assert read(proxy, kafka_bootstrap, topic, 0, COUNT) == expected_values(COUNT, 1, 0)
    assert proxy.connections >= 1


@pytest.mark.parametrize(
    ("action", "after_bytes"),
    [("reset", 0), ("reset", 700), ("close", 9), ("close", 700), ("stall", 700)],
    ids=[
        "reset-before-response",
        "reset-mid-response",
        "cut-in-header",
        "cut-mid-records",
        "stall-mid-response",
    ],
)
def test_fetch_response_fault_is_retried_without_loss_or_duplicates(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str, action: str, after_bytes: int
) -> None:
    # The 3rd Fetch response of the read (offsets well inside the range) is broken.
    fault = proxy.add(Fault(action, api_key=FETCH_KEY, after_bytes=after_bytes, skip=2))  # type: ignore[arg-type]
    got = read(proxy, kafka_bootstrap, topic, 5, COUNT - 5)
    assert got == expected_values(COUNT, 1, 0)[5 : COUNT - 5]
    assert fault.fired == 1
    assert proxy.connections >= 2  # the broken connection was replaced


def test_metadata_faults_during_leader_lookup_are_retried(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    first = proxy.add(Fault("reset", api_key=METADATA_KEY, after_bytes=30, times=2))
    second = proxy.add(Fault("stall", api_key=METADATA_KEY, times=1))
    got = read(proxy, kafka_bootstrap, topic, 0, 50)
    assert got == expected_values(COUNT, 1, 0)[:50]
    assert (first.fired, second.fired) == (2, 1)


def test_many_random_drops_during_one_read(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    faults = [
        proxy.add(Fault(a, api_key=FETCH_KEY, after_bytes=n, skip=1))  # type: ignore[arg-type]
        for a, n in [("reset", 100), ("close", 2000), ("reset", 4), ("close", 3000)]
    ]
    got = read(proxy, kafka_bootstrap, topic, 0, COUNT)
    assert got == expected_values(COUNT, 1, 0)
    assert [f.fired for f in faults] == [1, 1, 1, 1]


def test_broker_that_never_answers_fails_within_poll_timeout(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    # Accepts, forwards requests, never sends a response byte: every request times out
    # (request.timeout.ms), and the read gives up after kafkaConsumer.pollTimeoutMs.
    proxy.add(Fault("stall", times=-1))
    with pytest.raises(KafkaTimeoutError) as info:
        read(proxy, kafka_bootstrap, topic, 0, 10, request_timeout_ms=500, poll_timeout_ms=2000)
    text = str(info.value)
    assert "pollTimeoutMs=2000" in text and f"{topic}-0" in text
    assert "got no response within 500 ms" in text and kafka_bootstrap in text


def test_broker_stalling_after_some_batches_fails_and_yields_only_whole_batches(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    proxy.add(Fault("stall", api_key=FETCH_KEY, after_bytes=300, skip=2, times=-1))
    client, fetcher = fetcher_via(
        proxy,
        settings_for(kafka_bootstrap, request_timeout_ms=500),
        TopicPartition(topic, 0),
        poll_timeout_ms=2000,
    )
    yielded = []
    with pytest.raises(KafkaTimeoutError):
        for batch in fetcher.read(0, COUNT):
            yielded.append(batch)
    client.close()
    got = rows(yielded)
    # Two good Fetches were yielded whole; nothing of the cut one.
    assert 0 < len(got) < COUNT
    assert got == expected_values(COUNT, 1, 0)[: len(got)]


def test_bit_flip_in_fetched_records_is_a_corrupt_record_error(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    fault = proxy.add(Fault("flip", api_key=FETCH_KEY, after_bytes=-4, times=-1))
    with pytest.raises(CorruptRecordError) as info:
        read(proxy, kafka_bootstrap, topic, 0, COUNT)
    err = info.value
    assert (err.topic, err.partition) == (topic, 0)
    assert err.offset is not None and 0 <= err.offset < COUNT
    assert f"{topic}-0" in str(err) and f"offset {err.offset}" in str(err)
    assert "crc" in str(err).lower()
    assert fault.fired >= 1


def test_proxy_drop_connections_breaks_live_connections(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    client, fetcher = fetcher_via(proxy, settings_for(kafka_bootstrap), TopicPartition(topic, 0))
    try:
        it = fetcher.read(0, COUNT)
        got = rows([next(it)])
        assert proxy.drop_connections("reset") >= 1
        got += rows(it)
    finally:
        client.close()
    assert got == expected_values(COUNT, 1, 0)
    assert proxy.connections >= 2
