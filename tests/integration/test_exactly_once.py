"""``writeStream.format("pykafka")`` with ``deliveryGuarantee=exactly-once`` (issue 13) on a real
broker: what ``read_committed`` readers see, read by Kafka's own Java consumer.

The crash matrix (driver killed at each step of the commit, task retries, a leader killed) is in
``tests/faults/test_exactly_once.py``.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.admin.transactions import describe_transaction
from spark_kafka_py.errors import ExactlyOnceError
from spark_kafka_py.producer import KafkaProducer
from spark_kafka_py.spark.exactly_once import COMMITTED, ExactlyOnceCommitter, transactional_id
from spark_kafka_py.spark.sink_options import parse_sink_options
from spark_kafka_py.testing.tools import ProducedRecord, produce, read_all

pytestmark = pytest.mark.integration


def _run(
    spark: SparkSession, bootstrap: str, source: str, out: str, checkpoint: Path, prefix: str
) -> None:
    query = (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "200")
        .load()
        .selectExpr("key", "value")
        .writeStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", out)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", prefix)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    if query.exception() is not None:
        raise query.exception()  # type: ignore[misc]


def _values(bootstrap: str, topic: str, isolation: str) -> Counter[str]:
    records = read_all(bootstrap, [topic], isolation_level=isolation)
    return Counter((r.value or b"").decode() for r in records)


def _committed(bootstrap: str, topic: str, expected: Counter[str]) -> Counter[str]:
    """What read_committed reads, asked again for up to 30 s until it equals ``expected``:
    the driver's last EndTxn returns before the coordinator wrote the transaction markers."""
    deadline = time.monotonic() + 30
    while (got := _values(bootstrap, topic, "read_committed")) != expected:
        if time.monotonic() > deadline:
            break
        time.sleep(1)
    return got


@pytest.mark.broker_matrix
def test_every_record_once_for_read_committed_and_a_replay_is_not_written_twice(
    spark: SparkSession, kafka_bootstrap: str, new_topic, tmp_path: Path
) -> None:
    source, out = new_topic(partitions=3), new_topic(partitions=2)
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    produce(
        kafka_bootstrap,
        source,
        [ProducedRecord(key=f"k{i % 7}", value=f"v{i}") for i in range(700)],
    )
    checkpoint = tmp_path / "chk"
    _run(spark, kafka_bootstrap, source, out, checkpoint, prefix)
    expected = Counter(f"v{i}" for i in range(700))
    assert _committed(kafka_bootstrap, out, expected) == expected
    options = parse_sink_options(
        {
            "kafka.bootstrap.servers": kafka_bootstrap,
            "topic": out,
            "deliveryGuarantee": "exactly-once",
            "transactionalIdPrefix": prefix,
        }
    )
    committer = ExactlyOnceCommitter(options)
    try:
        last = committer.log.last(committer.client)
    finally:
        committer.close()
    assert last is not None and last.state == COMMITTED
    assert last.batch_id == 3  # 700 records, 200 per micro-batch: batches 0..3

    # Spark replays the last batch when its commit is not in the checkpoint (the driver died
    # after the sink's commit): the replay's transactions are aborted, nothing is written twice
    for name in ("3", ".3.crc"):
        (checkpoint / "commits" / name).unlink()
    _run(spark, kafka_bootstrap, source, out, checkpoint, prefix)
    assert _committed(kafka_bootstrap, out, expected) == expected
    # the aborted replay (the last micro-batch's rows, about 100) is in the log, visible to
    # read_uncommitted only
    replayed = _values(kafka_bootstrap, out, "read_uncommitted") - expected
    assert 50 <= sum(replayed.values()) <= 150 and set(replayed.values()) == {1}, replayed


def test_a_new_checkpoint_with_a_used_prefix_fails_naming_it(
    spark: SparkSession, kafka_bootstrap: str, new_topic, tmp_path: Path
) -> None:
    source, out = new_topic(), new_topic()
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    produce(kafka_bootstrap, source, [ProducedRecord(key=None, value=f"v{i}") for i in range(450)])
    _run(spark, kafka_bootstrap, source, out, tmp_path / "first", prefix)
    with pytest.raises(Exception, match=r"transactionalIdPrefix .* belongs to another query"):
        _run(spark, kafka_bootstrap, source, out, tmp_path / "second", prefix)
    # the second query's first batch was aborted: still each record once
    expected = Counter(f"v{i}" for i in range(450))
    assert _committed(kafka_bootstrap, out, expected) == expected


def test_a_transaction_the_broker_aborted_fails_the_batch_and_aborts_the_rest(
    kafka_bootstrap: str, new_topic
) -> None:
    """The driver's commit finds one task's transaction aborted by the broker (past
    ``kafka.transaction.timeout.ms``): it aborts the batch's other transactions and fails the
    batch naming it and the setting; nothing of the batch is visible."""
    topic = new_topic(partitions=2)
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    options = parse_sink_options(
        {
            "kafka.bootstrap.servers": kafka_bootstrap,
            "topic": topic,
            "deliveryGuarantee": "exactly-once",
            "transactionalIdPrefix": prefix,
        }
    )
    handles = []
    for task, timeout_ms in ((0, 2_000), (1, 60_000)):
        settings = replace(
            options.producer,
            transactional_id=transactional_id(prefix, task),
            transaction_timeout_ms=timeout_ms,
        )
        with KafkaProducer(settings) as producer:
            producer.begin_transaction()
            producer.append(
                topic,
                task,
                None,
                pa.array([f"t{task}-{i}" for i in range(10)]),
                None,
                int(time.time() * 1000),
            )
            handles.append(producer.prepare_commit())
    committer = ExactlyOnceCommitter(options)
    try:
        committer.recover()  # creates the commit log topic; nothing to finish
        deadline = time.monotonic() + 60
        while describe_transaction(
            committer.client, handles[0].transactional_id, timeout_ms=10_000
        ).state in ("Ongoing", "PrepareAbort"):
            assert time.monotonic() < deadline, "the broker did not abort the transaction"
            time.sleep(0.5)
        with pytest.raises(ExactlyOnceError, match=r"micro-batch 7 .*kafka\.transaction\.timeout"):
            committer.commit(handles, 7)
        state = describe_transaction(
            committer.client, handles[1].transactional_id, timeout_ms=10_000
        )
        assert state.state in ("PrepareAbort", "CompleteAbort")
    finally:
        committer.close()
    assert _values(kafka_bootstrap, topic, "read_committed") == Counter()
