"""Transactions against the real broker (issue 13): a task-like producer prepares, another
client ends; zombie fencing; the broker's timeout abort; DescribeTransactions; CreateTopics.

What a ``read_committed`` consumer sees is read with Kafka's own Java consumer
(:func:`spark_kafka_py.testing.tools.read_all`).
"""

from __future__ import annotations

import time
import uuid

import pytest

from spark_kafka_py.admin.topics import create_topic
from spark_kafka_py.admin.transactions import describe_transaction, list_transactions
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.errors import (
    ConfigError,
    KafkaApiError,
    KafkaError,
    ProducerFencedError,
    TransactionError,
)
from spark_kafka_py.producer import KafkaProducer, TransactionHandle, end_transaction, fence
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.testing.tools import dump_log, read_all, segment_files

from .helpers import settings, values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

TS = int(
    time.time() * 1000
)  # CreateTime now: the test broker enforces retention (7 days) every 5 s
T = 20_000  # ms, bound of the driver-side calls


def _tid() -> str:
    return f"txn-test-{uuid.uuid4().hex[:10]}"


def _client(bootstrap: str) -> KafkaClient:
    return KafkaClient(ClientConfig.from_bootstrap(bootstrap, retry_backoff_ms=50))


def _values(bootstrap: str, topic: str, isolation: str) -> list[bytes | None]:
    return sorted(r.value or b"" for r in read_all(bootstrap, topic, isolation_level=isolation))


def _wait_ended(driver: KafkaClient, tid: str) -> None:
    """Until the coordinator wrote the markers (EndTxn v4 answers at PrepareCommit/PrepareAbort;
    the markers, and with them what read_committed may read, follow asynchronously)."""
    deadline = time.monotonic() + 30
    while describe_transaction(driver, tid, timeout_ms=T).state in (
        "PrepareCommit",
        "PrepareAbort",
    ):
        assert time.monotonic() < deadline, f"{tid}: markers not written within 30 s"
        time.sleep(0.1)


def _write(producer: KafkaProducer, topic: str, partitions: int, n: int, prefix: str) -> None:
    for p in range(partitions):
        producer.append(topic, p, None, values(n, f"{prefix}{p}-"), None, TS)


def _expected(partitions: int, n: int, prefix: str) -> list[bytes]:
    return sorted(f"{prefix}{p}-{i}".encode() for p in range(partitions) for i in range(n))


def test_prepared_transaction_committed_by_another_client_once(
    kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic(partitions=3)
    tid = _tid()
    with KafkaProducer(settings(kafka_bootstrap, transactional_id=tid)) as producer:
        producer.begin_transaction()
        _write(producer, topic, 3, 50, "a")
        handle = producer.prepare_commit()
    assert handle.transactional_id == tid and handle.producer_id >= 0
    assert handle.partitions == ((topic, 0), (topic, 1), (topic, 2))
    assert TransactionHandle.from_json(handle.to_json()) == handle
    assert _values(kafka_bootstrap, topic, "read_committed") == []
    assert len(_values(kafka_bootstrap, topic, "read_uncommitted")) == 150

    with _client(kafka_bootstrap) as driver:
        state = describe_transaction(driver, tid, timeout_ms=T)
        assert state.state == "Ongoing"
        assert (state.producer_id, state.producer_epoch) == (
            handle.producer_id,
            handle.producer_epoch,
        )
        assert state.partitions == handle.partitions
        assert state.timeout_ms == 60_000  # kafka.transaction.timeout.ms default

        end_transaction(driver, handle, commit=True, timeout_ms=T)
        state = describe_transaction(driver, tid, timeout_ms=T)
        # transactions v1 (EndTxn <= v4): the epoch is kept across the end
        assert state.state in ("PrepareCommit", "CompleteCommit")
        assert state.producer_epoch == handle.producer_epoch
        # a retried commit (the driver crashed after the first) returns normally
        end_transaction(driver, handle, commit=True, timeout_ms=T)
        # ending it the other way is an error naming the transaction
        with pytest.raises(TransactionError, match=tid) as info:
            end_transaction(driver, handle, commit=False, timeout_ms=T)
        assert info.value.error == ec.INVALID_TXN_STATE
        assert not isinstance(info.value, ProducerFencedError)
        _wait_ended(driver, tid)
    assert _values(kafka_bootstrap, topic, "read_committed") == _expected(3, 50, "a")


def test_prepared_transaction_aborted_by_another_client(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=2)
    tid = _tid()
    with KafkaProducer(settings(kafka_bootstrap, transactional_id=tid)) as producer:
        producer.begin_transaction()
        _write(producer, topic, 2, 20, "b")
        handle = producer.prepare_commit()
    with _client(kafka_bootstrap) as driver:
        end_transaction(driver, handle, commit=False, timeout_ms=T)
        end_transaction(driver, handle, commit=False, timeout_ms=T)  # retried: no error
        with pytest.raises(TransactionError) as info:
            end_transaction(driver, handle, commit=True, timeout_ms=T)
        assert info.value.error == ec.INVALID_TXN_STATE
        assert describe_transaction(driver, tid, timeout_ms=T).state in (
            "PrepareAbort",
            "CompleteAbort",
        )
    assert _values(kafka_bootstrap, topic, "read_committed") == []
    assert len(_values(kafka_bootstrap, topic, "read_uncommitted")) == 40


def test_producer_reused_after_the_driver_ended_its_transaction(
    kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic(partitions=2)
    tid = _tid()
    handles = []
    with KafkaProducer(settings(kafka_bootstrap, transactional_id=tid)) as producer:
        with _client(kafka_bootstrap) as driver:
            for batch in range(3):
                producer.begin_transaction()
                _write(producer, topic, 2, 10, f"m{batch}-")
                handles.append(producer.prepare_commit())
                end_transaction(driver, handles[-1], commit=batch != 1, timeout_ms=T)
                _wait_ended(driver, tid)
        # each begin runs InitProducerId: same producer id, a higher epoch
        assert len({h.producer_id for h in handles}) == 1
        epochs = [h.producer_epoch for h in handles]
        assert epochs == sorted(set(epochs))
        # an aborted transaction, then the next one on the same producer
        producer.begin_transaction()
        _write(producer, topic, 1, 5, "x")
        producer.abort_transaction()
    expected = _expected(2, 10, "m0-") + _expected(2, 10, "m2-")
    assert _values(kafka_bootstrap, topic, "read_committed") == sorted(expected)


def test_zombie_fenced_by_a_new_producer_of_the_same_id(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=3)
    tid = _tid()
    zombie = KafkaProducer(
        settings(kafka_bootstrap, transactional_id=tid, delivery_timeout_ms=15_000)
    )
    successor = KafkaProducer(settings(kafka_bootstrap, transactional_id=tid))
    try:
        zombie.begin_transaction()
        _write(zombie, topic, 2, 10, "z")
        zombie.flush()
        old = TransactionHandle(tid, zombie.producer_id, zombie.producer_epoch, ((topic, 0),))

        successor.begin_transaction()  # InitProducerId: aborts the zombie's transaction
        assert successor.producer_id == zombie.producer_id
        assert successor.producer_epoch > zombie.producer_epoch

        # the zombie's next write to a new partition: AddPartitionsToTxn is fenced
        with pytest.raises(ProducerFencedError, match=tid) as info:
            zombie.append(topic, 2, None, values(1, "z2-"), None, TS)
        assert info.value.error == ec.PRODUCER_FENCED
        # to a partition it had: the Produce is refused, prepare_commit says fenced
        zombie.append(topic, 0, None, values(1, "late"), None, TS)
        with pytest.raises(ProducerFencedError, match=r"kafka\.transaction\.timeout\.ms"):
            zombie.prepare_commit()
        # the driver ending the zombie's handle: fenced, typed, naming the setting
        with _client(kafka_bootstrap) as driver:
            with pytest.raises(
                ProducerFencedError, match=r"kafka\.transaction\.timeout\.ms"
            ) as info:
                end_transaction(driver, old, commit=True, timeout_ms=T)
            assert info.value.producer_epoch == old.producer_epoch

            _write(successor, topic, 3, 5, "s")
            end_transaction(driver, successor.prepare_commit(), commit=True, timeout_ms=T)
    finally:
        zombie.close(timeout_ms=0)
        successor.close()
    assert _values(kafka_bootstrap, topic, "read_committed") == _expected(3, 5, "s")


def test_fence_aborts_an_open_transaction(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=1)
    tid = _tid()
    with KafkaProducer(settings(kafka_bootstrap, transactional_id=tid)) as producer:
        producer.begin_transaction()
        _write(producer, topic, 1, 10, "f")
        handle = producer.prepare_commit()
    with _client(kafka_bootstrap) as driver:
        producer_id, epoch = fence(driver, tid, transaction_timeout_ms=30_000, timeout_ms=T)
        assert producer_id == handle.producer_id
        # fenced at E+1 (PrepareAbort), then re-initialised at E+2
        assert epoch == handle.producer_epoch + 2
        state = describe_transaction(driver, tid, timeout_ms=T)
        assert state.state == "Empty" and state.producer_epoch == epoch
        assert state.timeout_ms == 30_000
        with pytest.raises(ProducerFencedError):
            end_transaction(driver, handle, commit=True, timeout_ms=T)
    assert _values(kafka_bootstrap, topic, "read_committed") == []


def test_transaction_past_its_timeout_is_aborted_by_the_broker(
    kafka_bootstrap: str, new_topic
) -> None:
    topic = new_topic(partitions=1)
    tid = _tid()
    s = settings(kafka_bootstrap, transactional_id=tid, transaction_timeout_ms=2000)
    with KafkaProducer(s) as producer:
        producer.begin_transaction()
        _write(producer, topic, 1, 10, "t")
        handle = producer.prepare_commit()
    with _client(kafka_bootstrap) as driver:
        deadline = time.monotonic() + 60
        while (state := describe_transaction(driver, tid, timeout_ms=T)).state == "Ongoing":
            assert time.monotonic() < deadline, "the broker did not abort the transaction"
            time.sleep(0.5)
        while state.state == "PrepareAbort":
            time.sleep(0.2)
            state = describe_transaction(driver, tid, timeout_ms=T)
        # the coordinator aborts with the epoch bumped once
        assert (state.state, state.producer_epoch) == ("CompleteAbort", handle.producer_epoch + 1)
        with pytest.raises(ProducerFencedError, match=r"kafka\.transaction\.timeout\.ms") as info:
            end_transaction(driver, handle, commit=True, timeout_ms=T)
        assert "2000 ms" in str(info.value)
    assert _values(kafka_bootstrap, topic, "read_committed") == []


def test_transaction_timeout_above_the_broker_maximum(kafka_bootstrap: str) -> None:
    s = settings(kafka_bootstrap, transactional_id=_tid(), transaction_timeout_ms=10**9)
    with (
        KafkaProducer(s) as producer,
        pytest.raises(ConfigError, match=r"transaction\.max\.timeout\.ms"),
    ):
        producer.begin_transaction()


def test_misuse_is_refused(kafka_bootstrap: str, new_topic) -> None:
    topic = new_topic(partitions=1)
    with KafkaProducer(settings(kafka_bootstrap, transactional_id=_tid())) as producer:
        with pytest.raises(KafkaError, match="begin_transaction"):
            producer.append(topic, 0, None, values(1), None, TS)
        producer.begin_transaction()
        with pytest.raises(KafkaError, match="already open"):
            producer.begin_transaction()
        empty = producer.prepare_commit()  # nothing written: nothing to end
        assert empty.partitions == ()
        with _client(kafka_bootstrap) as driver:
            end_transaction(driver, empty, commit=True, timeout_ms=T)
    with (
        KafkaProducer(settings(kafka_bootstrap)) as plain,
        pytest.raises(KafkaError, match="not transactional"),
    ):
        plain.begin_transaction()


def test_describe_unknown_transactional_id(kafka_bootstrap: str) -> None:
    with _client(kafka_bootstrap) as driver, pytest.raises(TransactionError) as info:
        describe_transaction(driver, _tid(), timeout_ms=T)
    assert info.value.error == ec.TRANSACTIONAL_ID_NOT_FOUND


def test_create_topic(kafka_bootstrap: str) -> None:
    name = f"created-{uuid.uuid4().hex[:8]}"
    with _client(kafka_bootstrap) as client:
        assert create_topic(
            client,
            name,
            partitions=3,
            replication_factor=-1,
            configs={"cleanup.policy": "compact"},
            timeout_ms=T,
        )
        assert not create_topic(
            client, name, partitions=3, replication_factor=1, configs={}, timeout_ms=T
        )
        deadline = time.monotonic() + 10
        while len(client.metadata([name]).topics[name].partitions) != 3:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        with pytest.raises(KafkaApiError, match="INVALID_REPLICATION_FACTOR"):
            create_topic(
                client,
                f"bad-{uuid.uuid4().hex[:8]}",
                partitions=1,
                replication_factor=5,
                configs={},
                timeout_ms=T,
            )


def test_listed_while_open_and_dumped_as_kafka_writes_them(kafka_cluster, new_topic) -> None:
    """ListTransactions shows the prepared transactions until the driver ends them;
    kafka-dump-log shows our batches transactional with the producer id, and one commit or
    abort marker per transaction."""
    bootstrap = kafka_cluster.bootstrap_servers
    topic = new_topic(partitions=1, bootstrap=bootstrap)
    prefix = _tid()
    handles = []
    for name in ("c", "a"):
        s = settings(bootstrap, transactional_id=f"{prefix}-{name}", batch_size=200)
        with KafkaProducer(s) as producer:
            producer.begin_transaction()
            _write(producer, topic, 1, 20, name)
            handles.append(producer.prepare_commit())
    with _client(bootstrap) as driver:
        listed = list_transactions(driver, states=("Ongoing",), pattern=f"{prefix}.*", timeout_ms=T)
        assert [(t, s) for t, _, s in listed] == [
            (f"{prefix}-a", "Ongoing"),
            (f"{prefix}-c", "Ongoing"),
        ]
        end_transaction(driver, handles[0], commit=True, timeout_ms=T)
        end_transaction(driver, handles[1], commit=False, timeout_ms=T)
        assert (
            list_transactions(driver, states=("Ongoing",), pattern=f"{prefix}.*", timeout_ms=T)
            == []
        )
        ended = {t: s for t, _, s in list_transactions(driver, pattern=f"{prefix}.*", timeout_ms=T)}
        assert set(ended) == {f"{prefix}-a", f"{prefix}-c"}
    assert _values(bootstrap, topic, "read_committed") == _expected(1, 20, "c")
    batches = dump_log(segment_files(kafka_cluster.nodes[0].data_dir, topic, 0))
    data = [b for b in batches if not b.is_control]
    markers = [b for b in batches if b.is_control]
    assert len(data) > 2 and sum(b.count for b in data) == 40
    assert all(b.is_transactional and b.is_valid for b in data)
    assert {b.producer_id for b in data} == {h.producer_id for h in handles}
    assert len(markers) == 2 and all(b.is_transactional for b in markers)
