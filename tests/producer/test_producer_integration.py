"""The producer against the real broker: round trips, batching, acks, idempotence, codecs.

Rows are read back raw (:func:`tests.producer.helpers.read_back`): the decoded records and
each stored batch's producer id, epoch, base sequence and record count (KIP-98).
"""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from spark_kafka_py.producer import KafkaProducer

from .helpers import HEADERS_TYPE, read_back, settings, values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TS = int(
    time.time() * 1000
)  # CreateTime now: the test broker enforces retention (7 days) every 5 s


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


CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def test_every_codec_read_by_java_console_consumer(kafka_bootstrap: str, new_topic) -> None:
    from spark_kafka_py.testing.tools import consume

    topic = new_topic(partitions=len(CODECS))
    for partition, (name, codec) in enumerate(CODECS.items()):
        keys = pa.array([f"{name}-{i}" for i in range(50)], pa.string())
        with KafkaProducer(settings(kafka_bootstrap, compression_type=codec)) as producer:
            producer.append(topic, partition, keys, values(50, prefix=name), None, TS)
            producer.flush()
        stored = read_back(kafka_bootstrap, topic, partition)
        assert stored.batches and all(b.attributes & 0x07 == codec for b in stored.batches)
    lines = consume(
        kafka_bootstrap, topic, 50 * len(CODECS), print_partition=True, timeout_ms=90_000
    )
    got = sorted(lines)
    want = sorted(
        f"Partition:{p}\t{name}-{i}\t{name}{i}" for p, name in enumerate(CODECS) for i in range(50)
    )
    assert got == want


@pytest.mark.parametrize("acks", [0, 1, -1])
def test_acks(kafka_bootstrap: str, new_topic, acks: int) -> None:
    topic = new_topic()
    s = settings(kafka_bootstrap, acks=acks, enable_idempotence=acks == -1)
    with KafkaProducer(s) as producer:
        producer.append(topic, 0, None, values(100), None, TS)
        producer.flush()
        assert producer.stats.records == 100
        assert (producer.producer_id >= 0) == (acks == -1)
    # acks=0: written to the socket when flush returns; the broker appends it soon after
    deadline = time.monotonic() + 10
    while True:
        stored = read_back(kafka_bootstrap, topic)
        if stored.rows.num_rows == 100 or time.monotonic() > deadline:
            break
    assert stored.rows.column("value").to_pylist() == [f"v{i}".encode() for i in range(100)]
    assert all(
        b.producer_id == (-1 if acks != -1 else producer.producer_id) for b in stored.batches
    )


def test_batch_size_and_linger_shape_the_batches(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=3)
    # batch.size=0: one record per batch
    with KafkaProducer(settings(kafka_bootstrap, batch_size=0)) as producer:
        producer.append(topic, 0, None, values(20), None, TS)
        producer.flush()
        assert producer.stats.batches == 20
    assert [b.count for b in read_back(kafka_bootstrap, topic, 0).batches] == [1] * 20
    # a long linger: many small appends go out as one batch at flush
    with KafkaProducer(
        settings(kafka_bootstrap, linger_ms=10_000, delivery_timeout_ms=60_000)
    ) as p:
        for i in range(30):
            p.append(topic, 1, None, values(1, start=i), None, TS)
        assert p.stats.requests == 0  # nothing sent before linger.ms or flush
        p.flush()
        assert p.stats.batches == 1
    assert [b.count for b in read_back(kafka_bootstrap, topic, 1).batches] == [30]
    # batch.size 1 KiB: 2000 records of ~12 bytes split into batches of at most 1 KiB
    with KafkaProducer(settings(kafka_bootstrap, batch_size=1024)) as producer:
        producer.append(topic, 2, None, values(2000, prefix="value-"), None, TS)
        producer.flush()
    stored = read_back(kafka_bootstrap, topic, 2)
    assert len(stored.batches) > 20 and sum(b.count for b in stored.batches) == 2000
    sequences = [b.base_sequence for b in stored.batches]
    counts = [b.count for b in stored.batches]
    assert sequences == [sum(counts[:i]) for i in range(len(counts))]  # contiguous (KIP-98)
    assert stored.rows.column("value").to_pylist() == [f"value-{i}".encode() for i in range(2000)]


def test_record_too_large_before_anything_is_sent(kafka_bootstrap: str, new_topic) -> None:
    from spark_kafka_py.errors import ProduceError

    topic = new_topic()
    with KafkaProducer(settings(kafka_bootstrap, max_request_size=1000)) as producer:
        rows = pa.array([b"small", b"x" * 2000], pa.binary())
        with pytest.raises(ProduceError) as info:
            producer.append(topic, 0, None, rows, None, TS)
        text = str(info.value)
        assert f"{topic}-0" in text and "kafka.max.request.size=1000" in text
        assert "MESSAGE_TOO_LARGE" in text and "2" in text
        assert info.value.partition == 0
        producer.flush()  # nothing of that call was queued
        assert producer.stats.requests == 0


def test_record_too_large_from_the_broker(kafka_bootstrap: str, new_topic) -> None:
    from spark_kafka_py.errors import ProduceError

    topic = new_topic(configs={"max.message.bytes": "2000"})
    with KafkaProducer(settings(kafka_bootstrap)) as producer:
        producer.append(topic, 0, None, pa.array([b"y" * 5000], pa.binary()), None, TS)
        with pytest.raises(ProduceError) as info:
            producer.flush()
        text = str(info.value)
        assert info.value.name in ("MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE")
        assert f"{topic}-0" in text and "bytes" in text
        # the producer goes on: the next write of a fitting record succeeds (epoch bumped)
        producer.append(topic, 0, None, values(3), None, TS)
        producer.flush()
    assert read_back(kafka_bootstrap, topic).rows.column("value").to_pylist() == [
        b"v0",
        b"v1",
        b"v2",
    ]


def test_unknown_topic_without_auto_creation(kafka_bootstrap: str) -> None:
    # The session broker has auto.create.topics.enable=false: the producer reads it once
    # (DescribeConfigs) and fails after UNKNOWN_TOPIC_GRACE_MS (1 s), not after max.block.ms.
    from spark_kafka_py.errors import ProduceError

    with KafkaProducer(settings(kafka_bootstrap, max_block_ms=60_000)) as producer:
        start = time.monotonic()
        with pytest.raises(ProduceError) as info:
            producer.partition_count("no-such-topic-for-the-producer")
        assert 0.9 < time.monotonic() - start < 30
        text = str(info.value)
        assert "UNKNOWN_TOPIC_OR_PARTITION" in text and "auto.create.topics.enable=false" in text
        assert "topic 'no-such-topic-for-the-producer' does not exist" in text
        assert info.value.topic == "no-such-topic-for-the-producer"


def test_partition_count(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=4)
    with KafkaProducer(settings(kafka_bootstrap)) as producer:
        assert producer.partition_count(topic) == 4


def test_append_to_a_missing_partition_or_topic_fails_after_max_block(
    kafka_bootstrap: str, new_topic
) -> None:
    from spark_kafka_py.errors import InvalidRecordError, ProduceError

    topic = new_topic(partitions=2)
    with KafkaProducer(settings(kafka_bootstrap, max_block_ms=1000)) as producer:
        with pytest.raises(ProduceError) as info:
            producer.append(topic, 5, None, values(1), None, TS)
        text = str(info.value)
        assert f"{topic}-5" in text and "partition count 2" in text
        assert "kafka.max.block.ms=1000" in text and info.value.partition == 5
        with pytest.raises(ProduceError, match="UNKNOWN_TOPIC_OR_PARTITION"):
            producer.append(f"{topic}-missing", 0, None, values(1), None, TS)
        with pytest.raises(InvalidRecordError, match="negative"):
            producer.append(topic, -1, None, values(1), None, TS)
        producer.flush()
        assert producer.stats.requests == 0


def test_batches_too_large_for_the_topic_are_split(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(configs={"max.message.bytes": "3000"})
    keys = pa.array([f"k{i}" for i in range(1000)], pa.string())
    headers = pa.array(
        [[{"key": "i", "value": str(i).encode()}] for i in range(1000)], HEADERS_TYPE
    )
    with KafkaProducer(settings(kafka_bootstrap, batch_size=64_000, linger_ms=50)) as producer:
        producer.append(topic, 0, keys, values(1000, prefix="x" * 40), headers, TS)
        producer.append(topic, 0, None, values(10, prefix="later"), None, TS + 5)
        producer.flush()
        stats = producer.stats
        assert stats.splits >= 3 and stats.records == 1010
    stored = read_back(kafka_bootstrap, topic)
    assert stored.rows.column("value").to_pylist() == [
        f"{'x' * 40}{i}".encode() for i in range(1000)
    ] + [f"later{i}".encode() for i in range(10)]
    assert stored.rows.column("key").to_pylist()[:2] == [b"k0", b"k1"]
    assert stored.rows.column("headers").to_pylist()[999] == [{"key": "i", "value": b"999"}]
    counts = [b.count for b in stored.batches]
    assert [b.base_sequence for b in stored.batches] == [
        sum(counts[:i]) for i in range(len(counts))
    ]
    ts = stored.rows.column("timestamp").cast(pa.int64()).to_pylist()
    assert ts[0] // 1000 == TS and ts[-1] // 1000 == TS + 5
