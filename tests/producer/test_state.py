"""ProducerState without a broker or threads: what each partition result of a Produce
response does to a batch (acknowledged, retried in sequence order, epoch bump, failure naming
the option or the Kafka error)."""

from __future__ import annotations

import dataclasses
import time

import pyarrow as pa
import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.retry import JITTER
from spark_kafka_py.client_defaults import RETRY_BACKOFF_MAX_MS
from spark_kafka_py.errors import (
    KafkaConnectionError,
    KafkaProtocolError,
    KafkaTimeoutError,
    ProduceError,
)
from spark_kafka_py.producer import ProducerSettings
from spark_kafka_py.producer.accumulator import ProducerBatch, RecordAccumulator
from spark_kafka_py.producer.state import ProducerState
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)

TS = 1_700_000_000_000
BAD_RECORD = BatchIndexAndErrorMessage(batch_index=1, batch_index_error_message="bad")
CLIENT = ClientConfig.from_bootstrap("localhost:9092", retry_backoff_ms=10)


def make(**kw: int) -> ProducerState:
    s = ProducerSettings(CLIENT, **kw)
    acc = RecordAccumulator(batch_size=200, buffer_memory=1 << 20, linger_ms=0, codec=0, level=None)
    state = ProducerState(s, acc)
    state.producer_id, state.producer_epoch = 1000, 0
    return state


def drained(state: ProducerState, n: int = 1) -> list[ProducerBatch]:
    """Append rows that make ``n`` batches of partition 0 and take them as the sender does."""
    acc = state.acc
    acc.append("t", 0, None, pa.array([b"x" * 50] * (2 * n)), None, TS, max_block_ms=0)
    out = []
    with state.cond:
        queue = acc.queues[("t", 0)]
        while queue:
            batch = queue.popleft()
            acc.seal(batch)
            state._prepare(batch)
            state._node_in_flight[1] += 1
            out.append(batch)
    return out


def response(*codes: int, message: str | None = None) -> ProduceResponse:
    parts = tuple(
        PartitionProduceResponse(
            index=0,
            error_code=code,
            base_offset=-1,
            error_message=message,
            record_errors=(
                BatchIndexAndErrorMessage(batch_index=1, batch_index_error_message="bad"),
            )
            if message
            else (),
        )
        for code in codes
    )
    return ProduceResponse(responses=(TopicProduceResponse(name="t", partition_responses=parts),))


def complete(state: ProducerState, batch: ProducerBatch, code: int, **kw: str) -> None:
    state.complete(1, [batch], response(code, **kw), 9, {})


def test_sequences_are_contiguous_and_stamped() -> None:
    state = make()
    batches = drained(state, 3)
    assert [b.base_sequence for b in batches] == [0, 2, 4]
    assert all(b.producer_id == 1000 and b.producer_epoch == 0 for b in batches)


def test_ack_and_duplicate_sequence_count_as_success() -> None:
    state = make()
    first, second = drained(state, 2)
    complete(state, first, ec.NONE)
    complete(state, second, ec.DUPLICATE_SEQUENCE_NUMBER)
    assert not state.acc.incomplete and state.take_failure() is None
    assert state.stats.records == 4 and state.stats.batches == 2


def test_retriable_errors_requeue_in_sequence_order() -> None:
    state = make()
    first, second = drained(state, 2)
    complete(state, second, ec.NOT_LEADER_OR_FOLLOWER)
    complete(state, first, ec.NOT_LEADER_OR_FOLLOWER)
    assert list(state.acc.queues[("t", 0)]) == [first, second]
    assert first.retry_at > time.monotonic() - 1 and state._metadata_wanted
    assert state.stats.retries == 2 and state.take_failure() is None


def test_out_of_order_on_the_oldest_batch_asks_for_an_epoch_bump() -> None:
    state = make()
    first, second = drained(state, 2)
    complete(state, second, ec.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert not state._bump_needed  # a later batch: its predecessor is still unacknowledged
    complete(state, first, ec.UNKNOWN_PRODUCER_ID)
    assert state._bump_needed
    with state.cond:
        state.producer_epoch += 1
        state._reset_sequences()
    assert [b.base_sequence for b in state.acc.queues[("t", 0)]] == [-1, -1]


def test_retries_exhausted_name_the_option() -> None:
    state = make(retries=1)
    (batch,) = drained(state)
    complete(state, batch, ec.NOT_ENOUGH_REPLICAS)  # attempt 1 -> retried
    with state.cond:
        state.acc.queues[("t", 0)].popleft()
        state._prepare(batch)
        state._node_in_flight[1] += 1
    complete(state, batch, ec.NOT_ENOUGH_REPLICAS)
    failure = state.take_failure()
    assert isinstance(failure, ProduceError)
    assert "NOT_ENOUGH_REPLICAS" in str(failure) and "kafka.retries=1" in str(failure)
    assert state._bump_needed  # a failed batch with a sequence leaves a gap


def test_a_batch_past_delivery_timeout_fails_naming_it() -> None:
    state = make(delivery_timeout_ms=40_000)
    (batch,) = drained(state)
    batch.created -= 41
    complete(state, batch, ec.REQUEST_TIMED_OUT)
    failure = state.take_failure()
    assert isinstance(failure, KafkaTimeoutError)
    assert "kafka.delivery.timeout.ms=40000" in str(failure) and "t-0" in str(failure)
    assert "REQUEST_TIMED_OUT" in str(failure)


def test_fatal_error_names_partition_error_and_broker_message() -> None:
    state = make()
    (batch,) = drained(state)
    complete(state, batch, ec.INVALID_RECORD, message="timestamp out of range")
    failure = state.take_failure()
    assert isinstance(failure, ProduceError) and failure.partition == 0
    text = str(failure)
    assert "INVALID_RECORD" in text and "t-0" in text
    assert "timestamp out of range" in text and "#1: bad" in text
    assert state.take_failure() is None  # raised once


def test_connection_loss_retries_every_batch_of_the_request() -> None:
    state = make()
    batches = drained(state, 2)
    with state.cond:
        state._node_in_flight[1] -= 1  # one request carried both here
    state.complete_error(1, batches, KafkaConnectionError("broker 1 at h:1 went away"))
    assert list(state.acc.queues[("t", 0)]) == batches
    assert state.stats.retries == 2 and state._node_in_flight[1] == 0


def test_each_retry_of_a_batch_waits_longer_up_to_the_cap() -> None:
    state = make()
    (batch,) = drained(state)
    waits = []
    for _ in range(9):
        before = time.monotonic()
        complete(state, batch, ec.NOT_LEADER_OR_FOLLOWER)
        waits.append((batch.retry_at - before) * 1000)
        with state.cond:  # resent, as the sender does
            assert state.acc.queues[("t", 0)].popleft() is batch
            state._prepare(batch)
            state._node_in_flight[1] += 1
    # retry.backoff.ms=10 doubling per attempt (KIP-580, +-20 % jitter), capped at 1 s
    for n, wait in enumerate(waits):
        base = min(10 * 2**n, RETRY_BACKOFF_MAX_MS)
        assert base * (1 - JITTER) - 1 <= wait <= min(base * (1 + JITTER), RETRY_BACKOFF_MAX_MS) + 1
    assert state.stats.retries == 9 and state.take_failure() is None


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (KafkaConnectionError("broker 1 at h:1 went away"), True),
        (KafkaTimeoutError("no response within 30000 ms"), True),
        (KafkaConnectionError("TLS handshake with h:1 failed", retriable=False), False),
        (KafkaProtocolError("a correlation id never sent"), False),
    ],
)
def test_a_failed_request_is_retried_only_when_its_error_is_retriable(
    error: Exception, retried: bool
) -> None:
    state = make()
    (batch,) = drained(state)
    state.complete_error(1, [batch], error)
    assert (list(state.acc.queues[("t", 0)]) == [batch]) is retried
    failure = state.take_failure()
    assert (failure is None) is retried
    if not retried:
        assert failure is error


def test_missing_partition_in_the_response_is_retried() -> None:
    state = make()
    (batch,) = drained(state)
    empty = ProduceResponse(responses=())
    state.complete(1, [batch], empty, 9, {})
    assert list(state.acc.queues[("t", 0)]) == [batch]
    assert "no result" in (batch.last_error or "")


@pytest.mark.parametrize("acks", [0, 1])
def test_non_idempotent_batches_have_no_sequence(acks: int) -> None:
    state = make(acks=acks, enable_idempotence=False)
    (batch,) = drained(state)
    assert batch.base_sequence == -1 and batch.producer_id == -1
    assert dataclasses.replace(state.stats).requests == 0
