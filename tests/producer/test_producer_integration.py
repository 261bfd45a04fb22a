"""The producer against the real broker: round trips, batching, acks, idempotence, codecs.

Rows are read back raw (:func:`tests.producer.helpers.read_back`): the decoded records and
each stored batch's producer id, epoch, base sequence and record count (KIP-98).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_kafka_py.producer import KafkaProducer

from .helpers import HEADERS_TYPE, read_back, settings, values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TS = 1_700_000_000_000


def test_round_trip_keys_values_headers_nulls(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=2)
    keys = pa.array(["k0", None, "k2", "ключ"], pa.string())
    vals = pa.array([b"v0", b"v1", None, "é".encode()], pa.binary())
    headers = pa.array(
        [[{"key": "h", "value": b"1"}], None, [], [{"key": "a", "value": None}]], HEADERS_TYPE
    )
    with KafkaProducer(settings(kafka_bootstrap)) as producer:
        producer.append(topic, 1, keys, vals, headers, TS)
        producer.append(topic, 0, None, values(3), None, TS + 1)
        producer.flush()
        assert producer.producer_id >= 0 and producer.producer_epoch >= 0
        stats = producer.stats
        assert stats.records == 7 and stats.retries == 0
    p1 = read_back(kafka_bootstrap, topic, 1)
    assert p1.rows.column("key").to_pylist() == [b"k0", None, b"k2", "ключ".encode()]
    assert p1.rows.column("value").to_pylist() == [b"v0", b"v1", None, "é".encode()]
    # no headers (null or empty) reads back as null, as from Kafka's Java producer
    assert p1.rows.column("headers").to_pylist() == [
        [{"key": "h", "value": b"1"}],
        None,
        None,
        [{"key": "a", "value": None}],
    ]
    assert p1.rows.column("timestamp").cast(pa.int64()).to_pylist()[0] // 1000 in (TS, TS // 1000)
    p0 = read_back(kafka_bootstrap, topic, 0)
    assert p0.rows.column("value").to_pylist() == [b"v0", b"v1", b"v2"]
    for stored in (p0, p1):
        assert [b.producer_id for b in stored.batches] == [producer.producer_id]
        assert stored.batches[0].base_sequence == 0
