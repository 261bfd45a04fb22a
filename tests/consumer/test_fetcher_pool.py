"""Reads through :func:`read_range`: many small Fetches, ranges split, and pooled clients.

With tiny fetches (``max.partition.fetch.bytes`` = 1: one batch per Fetch, KIP-74) a read
takes about a thousand Fetch round trips against a real broker (data from Kafka's Java
producer) and must return every record once, in order, also when the range is read in two
parts with the pooled client; clients are pooled only after a read that ended normally.
"""

from __future__ import annotations

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.consumer import fetcher
from spark_kafka_py.consumer.fetcher import read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.testing.tools import ProducedRecord, produce


@pytest.mark.integration
def test_tiny_fetches_return_every_record_once(kafka_bootstrap, new_topic):
    topic = new_topic(partitions=1)
    values = [f"value-{i:05d}".encode() * 20 for i in range(3000)]
    records = [ProducedRecord(key=None, value=v, partition=0) for v in values]
    produce(kafka_bootstrap, topic, records)
    settings = ConsumerSettings(
        ClientConfig.from_bootstrap(kafka_bootstrap), max_partition_fetch_bytes=1
    )
    tp = TopicPartition(topic, 0)
    got = [v for b in read_range(settings, tp, 0, 3000) for v in b.column("value").to_pylist()]
    assert got == values
    # a range ending inside the data, then the rest with the pooled client
    first = [v for b in read_range(settings, tp, 0, 1234) for v in b.column("value").to_pylist()]
    rest = [v for b in read_range(settings, tp, 1234, 3000) for v in b.column("value").to_pylist()]
    assert first + rest == values
    # an abandoned read; the next read starts clean
    reader = read_range(settings, tp, 0, 3000)
    next(reader)
    reader.close()
    again = [v for b in read_range(settings, tp, 0, 3000) for v in b.column("value").to_pylist()]
    assert again == values


@pytest.mark.integration
def test_clients_are_pooled_across_reads_and_closed_after_errors(kafka_bootstrap, new_topic):
    fetcher.close_pooled_clients()
    topic = new_topic(partitions=1)
    produce(kafka_bootstrap, topic, [ProducedRecord(key=None, value=b"x", partition=0)] * 10)
    settings = ConsumerSettings(ClientConfig.from_bootstrap(kafka_bootstrap))
    tp = TopicPartition(topic, 0)
    assert sum(b.num_rows for b in read_range(settings, tp, 0, 10)) == 10
    (pooled,) = [c for idle in fetcher._pool.values() for _, c in idle]
    assert sum(b.num_rows for b in read_range(settings, tp, 0, 10)) == 10
    assert [c for idle in fetcher._pool.values() for _, c in idle] == [pooled]  # reused
    reader = read_range(settings, tp, 0, 10)
    next(reader)
    reader.close()  # abandoned mid-way: that client is closed, not pooled
    assert [c for idle in fetcher._pool.values() for _, c in idle] == []
    fetcher.close_pooled_clients()
