"""One Fetch kept in flight while the previous response is decoded, and pooled clients.

``next_fetch_offset`` (batch headers only) must predict exactly the decoder's ``next_offset``;
reads with prefetching (the next Fetch written on the connection before the current response
is decoded) must return every record once, in order, against a real broker (data from Kafka's
Java producer), with tiny fetches so that almost every Fetch was prefetched, and every
prefetched Fetch must be the one the loop then needs (same offset, size and epochs).
"""

from __future__ import annotations

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.consumer import fetcher
from spark_kafka_py.consumer.fetcher import next_fetch_offset, read_range
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.records import decode_records
from spark_kafka_py.testing.tools import ProducedRecord, produce
from tests.records.encoder import GZIP, Rec, batch_v2, control_batch, legacy_message


def _log() -> bytes:
    recs = [Rec(b"k", b"v" * 50, i) for i in range(5)]
    return b"".join(
        [
            batch_v2(recs, base_offset=0),
            batch_v2(recs, base_offset=5, codec=GZIP),
            control_batch(10, 1, commit=True),
            batch_v2(recs, base_offset=20),  # a gap, as after compaction
        ]
    )


@pytest.mark.parametrize("start,end", [(0, 100), (3, 100), (0, 7), (11, 22), (0, 10)])
def test_prediction_equals_decoder_next_offset_for_every_prefix(start, end):
    data = _log()
    for cut in range(len(data) + 1):
        predicted = next_fetch_offset(data[:cut], start, end)
        decoded = decode_records(
            data[:cut], topic="t", partition=0, start_offset=start, end_offset=end
        )
        assert predicted == decoded.next_offset, cut


def test_no_prediction_for_legacy_message_sets():
    assert next_fetch_offset(legacy_message(0, b"k", b"v", magic=1), 0, 10) is None


@pytest.mark.integration
def test_prefetching_read_returns_every_record_once(kafka_bootstrap, new_topic, monkeypatch):
    topic = new_topic(partitions=1)
    values = [f"value-{i:05d}".encode() * 20 for i in range(3000)]
    records = [ProducedRecord(key=None, value=v, partition=0) for v in values]
    produce(kafka_bootstrap, topic, records)
    sent: list[tuple] = []
    dropped: list[tuple] = []
    original = fetcher._Prefetch.__init__
    original_discard = fetcher._Prefetch.discard

    def spy(self, key, *rest):
        sent.append(key)
        original(self, key, *rest)

    def spy_discard(self):
        dropped.append(self.key)
        original_discard(self)

    monkeypatch.setattr(fetcher._Prefetch, "__init__", spy)
    monkeypatch.setattr(fetcher._Prefetch, "discard", spy_discard)
    monkeypatch.setattr(fetcher.PartitionFetcher, "prefetch", True)  # off by default
    # ~3 batches per Fetch: about a thousand round trips, all but the first prefetched
    settings = ConsumerSettings(
        ClientConfig.from_bootstrap(kafka_bootstrap), max_partition_fetch_bytes=1
    )
    tp = TopicPartition(topic, 0)
    got = [v for b in read_range(settings, tp, 0, 3000) for v in b.column("value").to_pylist()]
    assert got == values
    assert len(sent) > 10
    assert dropped == []  # each one was the Fetch the loop needed next
    # a range ending inside the data, then the rest with the pooled client
    first = [v for b in read_range(settings, tp, 0, 1234) for v in b.column("value").to_pylist()]
    rest = [v for b in read_range(settings, tp, 1234, 3000) for v in b.column("value").to_pylist()]
    assert first + rest == values
    # an abandoned read with a Fetch ahead drops it; the next read starts clean
    reader = read_range(settings, tp, 0, 3000)
    next(reader)
    reader.close()
    assert len(dropped) == 1
    again = [v for b in read_range(settings, tp, 0, 3000) for v in b.column("value").to_pylist()]
    assert again == values
    # and without prefetching, the same records
    monkeypatch.setattr(fetcher.PartitionFetcher, "prefetch", False)
    count = len(sent)
    plain = [v for b in read_range(settings, tp, 0, 3000) for v in b.column("value").to_pylist()]
    assert plain == values and len(sent) == count


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
