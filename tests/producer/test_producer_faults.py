"""The producer through the fault proxy in front of the real broker
(:mod:`spark_kafka_py.testing.faultproxy`): lost responses, stalled and unreachable brokers,
errors the broker could send (rewritten into its real Produce responses).

Every test checks what is stored (:func:`tests.producer.helpers.read_back`): each record
exactly once and in order where the producer promises it (idempotence, KIP-98).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.errors import KafkaTimeoutError, ProduceError
from spark_kafka_py.producer import KafkaProducer, ProducerSettings
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.testing.faultproxy import Fault, FaultProxy, edit_response
from spark_kafka_py.testing.tools import read_all

from .helpers import read_back, settings, values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

PRODUCE_KEY = 0
TS = int(
    time.time() * 1000
)  # CreateTime now: the test broker enforces retention (7 days) every 5 s


@pytest.fixture()
def proxy(kafka_bootstrap: str) -> Iterator[FaultProxy]:
    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)
    with FaultProxy(host, int(port)) as p:
        yield p


def via(proxy: FaultProxy, s: ProducerSettings) -> KafkaProducer:
    client = KafkaClient(s.client, socket_factory=proxy.socket_factory())
    return KafkaProducer(s, client=client)


def set_partition_error(code: int, message: str | None = None) -> Any:
    def edit(response: Any) -> Any:
        topics = tuple(
            dataclasses.replace(
                t,
                partition_responses=tuple(
                    dataclasses.replace(p, error_code=code, base_offset=-1, error_message=message)
                    for p in t.partition_responses
                ),
            )
            for t in response.responses
        )
        return dataclasses.replace(response, responses=topics)

    return edit_response(edit)


def stored_values(bootstrap: str, topic: str) -> list[bytes]:
    """Values of partition 0 in offset order, read by Kafka's Java consumer."""
    return [r.value for r in read_all(bootstrap, [topic]) if r.partition == 0]  # type: ignore[misc]


def test_lost_responses_with_5_in_flight_no_duplicate_no_reorder(
    proxy: FaultProxy, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    # the 4th and 9th Produce responses are cut off after the broker appended the batches:
    # every request in flight on that connection is retried, the broker drops the duplicates
    proxy.add(Fault(action="close", api_key=PRODUCE_KEY, skip=3, times=1))
    proxy.add(Fault(action="reset", api_key=PRODUCE_KEY, skip=8, times=1))
    s = settings(kafka_bootstrap, batch_size=300, linger_ms=0)
    producer = via(proxy, s)
    try:
        for start in range(0, 3000, 100):
            producer.append(topic, 0, None, values(100, start=start), None, TS)
        producer.flush()
        stats = producer.stats
        assert proxy.fired == 2 and stats.retries > 0
        assert stats.max_in_flight == 5
        assert stats.records == 3000
        pid = producer.producer_id
    finally:
        producer.close()
        producer.client.close()
    stored = read_back(kafka_bootstrap, topic)
    assert stored.rows.column("value").to_pylist() == [f"v{i}".encode() for i in range(3000)]
    assert {b.producer_id for b in stored.batches} == {pid}
    counts = [b.count for b in stored.batches]
    assert [b.base_sequence for b in stored.batches] == [
        sum(counts[:i]) for i in range(len(counts))
    ]


def test_not_leader_is_retried_and_the_broker_dedupes(
    proxy: FaultProxy, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    proxy.add(
        Fault(
            action="rewrite",
            api_key=PRODUCE_KEY,
            rewrite=set_partition_error(ec.NOT_LEADER_OR_FOLLOWER),
            times=1,
        )
    )
    producer = via(proxy, settings(kafka_bootstrap))
    try:
        producer.append(topic, 0, None, values(50), None, TS)
        producer.flush()
        assert proxy.fired == 1 and producer.stats.retries == 1
    finally:
        producer.close()
        producer.client.close()
    assert proxy.errors == []
    # the broker had appended the batch; the retry with the same sequence is a duplicate
    assert stored_values(kafka_bootstrap, topic) == [f"v{i}".encode() for i in range(50)]


@pytest.mark.parametrize(
    ("code", "message", "expect"),
    [
        (ec.TOPIC_AUTHORIZATION_FAILED, None, "TOPIC_AUTHORIZATION_FAILED"),
        (ec.INVALID_RECORD, "record 3 has no key", "record 3 has no key"),
    ],
)
def test_fatal_errors_reach_flush_and_the_producer_goes_on(
    proxy: FaultProxy, kafka_bootstrap: str, new_topic, code: int, message: str | None, expect: str
) -> None:
    topic = new_topic()
    proxy.add(
        Fault(
            action="rewrite",
            api_key=PRODUCE_KEY,
            rewrite=set_partition_error(code, message),
            times=1,
        )
    )
    producer = via(proxy, settings(kafka_bootstrap))
    try:
        producer.append(topic, 0, None, values(5), None, TS)
        with pytest.raises(ProduceError) as info:
            producer.flush()
        assert info.value.code == code and info.value.partition == 0
        assert expect in str(info.value) and f"{topic}-0" in str(info.value)
        producer.flush()  # raised once; the producer is reusable
        producer.append(topic, 0, None, values(5, prefix="after"), None, TS)
        producer.flush()
        assert producer.stats.epoch_bumps == 1  # the failed batch left a sequence gap
    finally:
        producer.close()
        producer.client.close()
    assert stored_values(kafka_bootstrap, topic)[-5:] == [f"after{i}".encode() for i in range(5)]


def test_unknown_producer_id_on_the_oldest_batch_bumps_the_epoch(
    proxy: FaultProxy, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    proxy.add(
        Fault(
            action="rewrite",
            api_key=PRODUCE_KEY,
            rewrite=set_partition_error(ec.UNKNOWN_PRODUCER_ID),
            times=1,
        )
    )
    producer = via(proxy, settings(kafka_bootstrap))
    try:
        producer.append(topic, 0, None, values(5), None, TS)
        producer.flush()
        epoch = producer.producer_epoch
        assert producer.stats.epoch_bumps == 1 and producer.stats.retries == 1
    finally:
        producer.close()
        producer.client.close()
    stored = read_back(kafka_bootstrap, topic)
    # the rewritten response hid a real append: that copy has the old epoch, the resent
    # batch has the bumped epoch and starts its sequences again at 0 (KIP-360)
    assert [(b.producer_epoch, b.base_sequence) for b in stored.batches] == [
        (epoch - 1, 0),
        (epoch, 0),
    ]


def test_full_buffer_with_a_stalled_broker_times_out_naming_the_options(
    proxy: FaultProxy, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    proxy.add(Fault(action="stall", api_key=PRODUCE_KEY, times=-1))
    s = settings(kafka_bootstrap, buffer_memory=4096, batch_size=1024, max_block_ms=800)
    producer = via(proxy, s)
    try:
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            for i in range(100):
                producer.append(topic, 0, None, values(50, start=50 * i), None, TS)
        assert time.monotonic() - start < 20
        text = str(info.value)
        assert "kafka.buffer.memory=4096" in text and "kafka.max.block.ms=800" in text
        assert producer.buffered_bytes < 4096 + 1024 + 200
    finally:
        producer.close(timeout_ms=0)
        producer.client.close()


def test_unreachable_broker_fails_flush_naming_delivery_timeout(
    kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)
    proxy = FaultProxy(host, int(port))
    s = settings(kafka_bootstrap, request_timeout_ms=500, delivery_timeout_ms=1500)
    producer = via(proxy, s)
    try:
        assert producer.partition_count(topic) == 1  # metadata known, then the broker goes
        proxy.close()  # connections broken, new ones refused
        producer.append(topic, 0, None, pa.array([b"x"]), None, TS)
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            producer.flush()
        assert time.monotonic() - start < 10
        text = str(info.value)
        assert "kafka.delivery.timeout.ms=1500" in text and f"{topic}-0" in text
        assert "last error" in text
    finally:
        producer.close(timeout_ms=0)
        producer.client.close()


def test_stalled_broker_with_idempotence_fails_flush_naming_delivery_timeout(
    proxy: FaultProxy, kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic()
    proxy.add(Fault(action="stall", api_key=PRODUCE_KEY, times=-1))
    s = settings(kafka_bootstrap, request_timeout_ms=700, delivery_timeout_ms=2000)
    producer = via(proxy, s)
    try:
        producer.append(topic, 0, None, values(10), None, TS)
        with pytest.raises(KafkaTimeoutError, match=r"kafka\.delivery\.timeout\.ms=2000"):
            producer.flush()
        # the next task reuses the producer once the broker answers again: the expired batch
        # left a sequence gap, so the epoch is bumped and the new records go through
        proxy.clear()
        producer.append(topic, 0, None, values(10, prefix="next"), None, TS)
        producer.flush()
        assert producer.stats.epoch_bumps == 1
    finally:
        producer.close(timeout_ms=0)
        producer.client.close()
    stored = stored_values(kafka_bootstrap, topic)
    # the stalled requests reached the broker (only their responses were held back)
    assert stored[-10:] == [f"next{i}".encode() for i in range(10)]
