"""Transactions without a broker: the handle's JSON and pickle forms, the settings' checks,
the typed errors, and the transactional bit of a stamped batch."""

from __future__ import annotations

import json
import pickle

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.errors import (
    ConfigError,
    KafkaConnectionError,
    KafkaTimeoutError,
    ProducerFencedError,
    TransactionError,
)
from spark_kafka_py.producer import ProducerSettings, TransactionHandle, end_transaction
from spark_kafka_py.producer.state import mark_transactional
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from spark_kafka_py.protocol.messages.describe_transactions import (
    TransactionState as DescribedState,
)
from spark_kafka_py.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from spark_kafka_py.protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from spark_kafka_py.records.encoder import build_batch, encode_record
from spark_kafka_py.registry import default

CLIENT = ClientConfig.from_bootstrap("localhost:9092")


def test_handle_json_and_pickle_round_trip() -> None:
    handle = TransactionHandle("prefix-3-7", 1234, 5, (("a", 0), ("b", 2)))
    text = json.dumps(handle.to_json())
    assert json.loads(text) == {
        "transactional_id": "prefix-3-7",
        "producer_id": 1234,
        "producer_epoch": 5,
        "partitions": [["a", 0], ["b", 2]],
    }
    assert TransactionHandle.from_json(json.loads(text)) == handle
    assert pickle.loads(pickle.dumps(handle)) == handle


def test_handle_from_bad_json() -> None:
    with pytest.raises(ValueError, match="not a transaction handle"):
        TransactionHandle.from_json({"transactional_id": "x", "producer_id": 1})


def test_transactional_settings() -> None:
    s = ProducerSettings(CLIENT, transactional_id="t")
    assert s.transaction_timeout_ms == default("kafka.transaction.timeout.ms") == 60_000
    with pytest.raises(ConfigError, match=r"kafka\.enable\.idempotence=false conflicts"):
        ProducerSettings(CLIENT, transactional_id="t", enable_idempotence=False, acks=1)
    with pytest.raises(ConfigError, match=r"kafka\.acks"):  # idempotence's own check
        ProducerSettings(CLIENT, transactional_id="t", acks=1)
    with pytest.raises(ConfigError, match="must not be empty"):
        ProducerSettings(CLIENT, transactional_id="")
    with pytest.raises(ConfigError, match=r"kafka\.transaction\.timeout\.ms"):
        ProducerSettings(CLIENT, transactional_id="t", transaction_timeout_ms=0)


def test_errors_name_the_transaction() -> None:
    exc = ProducerFencedError(ec.PRODUCER_FENCED, "t-1", 7, 3, action="ending (commit)")
    assert isinstance(exc, TransactionError)
    assert (exc.transactional_id, exc.producer_id, exc.producer_epoch) == ("t-1", 7, 3)
    text = str(exc)
    assert "PRODUCER_FENCED" in text and "'t-1'" in text and "producer id 7, epoch 3" in text


def test_mark_transactional_equals_a_batch_built_transactional() -> None:
    record = encode_record(0, 0, b"k", b"v", [("h", b"1")])
    kw = {
        "count": 1,
        "last_offset_delta": 0,
        "base_timestamp": 1_700_000_000_000,
        "max_timestamp": 1_700_000_000_000,
        "producer_id": 9,
        "producer_epoch": 2,
        "base_sequence": 0,
    }
    plain = build_batch(record, **kw)
    marked = mark_transactional(plain)
    assert marked != plain
    assert marked == build_batch(record, transactional=True, **kw)
    assert mark_transactional(marked) == marked


class _FakeClient:
    """Answers each request type from a script of (node, response-or-exception) steps and
    records which node each request went to."""

    def __init__(self, script: dict[type, list[object]]) -> None:
        self.config = ClientConfig.from_bootstrap("localhost:9092", retry_backoff_ms=1)
        self.script = script
        self.sent: list[tuple[str, int]] = []

    def least_loaded_node(self) -> int:
        return 0

    def send(self, node: int, request: object, **_: object) -> object:
        self.sent.append((type(request).__name__, node))
        answer = self.script[type(request)].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def _coordinator(node: int) -> FindCoordinatorResponse:
    return FindCoordinatorResponse(
        coordinators=(Coordinator(key="t", node_id=node, host="h", port=1),)
    )


HANDLE = TransactionHandle("t", 7, 3, (("topic", 0),))


def test_end_transaction_retries_moves_loading_and_lost_connections() -> None:
    client = _FakeClient(
        {
            FindCoordinatorRequest: [
                FindCoordinatorResponse(
                    coordinators=(Coordinator(key="t", error_code=ec.COORDINATOR_NOT_AVAILABLE),)
                ),
                _coordinator(1),
                _coordinator(2),
                _coordinator(3),
            ],
            EndTxnRequest: [
                EndTxnResponse(error_code=ec.NOT_COORDINATOR),  # moved: look up again
                KafkaConnectionError("lost"),  # lost: look up again
                EndTxnResponse(error_code=ec.COORDINATOR_LOAD_IN_PROGRESS),  # same node
                EndTxnResponse(error_code=ec.CONCURRENT_TRANSACTIONS),
                EndTxnResponse(error_code=ec.NONE),
            ],
        }
    )
    end_transaction(client, HANDLE, commit=True, timeout_ms=5000)  # type: ignore[arg-type]
    assert [n for name, n in client.sent if name == "EndTxnRequest"] == [1, 2, 3, 3, 3]


def test_end_transaction_times_out_naming_the_last_error() -> None:
    client = _FakeClient(
        {
            FindCoordinatorRequest: [_coordinator(1)],
            EndTxnRequest: [EndTxnResponse(error_code=ec.CONCURRENT_TRANSACTIONS)] * 10_000,
        }
    )
    with pytest.raises(KafkaTimeoutError, match="CONCURRENT_TRANSACTIONS"):
        end_transaction(client, HANDLE, commit=True, timeout_ms=50)  # type: ignore[arg-type]


def _described(state: str, epoch: int) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(
        transaction_states=(
            DescribedState(
                transactional_id="t",
                transaction_state=state,
                producer_id=7,
                producer_epoch=epoch,
                transaction_timeout_ms=2000,
            ),
        )
    )


def test_end_transaction_already_ended_the_same_way_is_not_an_error() -> None:
    client = _FakeClient(
        {
            FindCoordinatorRequest: [_coordinator(1), _coordinator(1)],
            EndTxnRequest: [EndTxnResponse(error_code=ec.INVALID_TXN_STATE)],
            DescribeTransactionsRequest: [_described("CompleteCommit", 3)],
        }
    )
    end_transaction(client, HANDLE, commit=True, timeout_ms=5000)  # type: ignore[arg-type]


def test_end_transaction_fenced_names_the_timeout_setting() -> None:
    client = _FakeClient(
        {
            FindCoordinatorRequest: [_coordinator(1), _coordinator(1)],
            EndTxnRequest: [EndTxnResponse(error_code=ec.PRODUCER_FENCED)],
            DescribeTransactionsRequest: [_described("CompleteAbort", 4)],
        }
    )
    with pytest.raises(ProducerFencedError) as info:
        end_transaction(client, HANDLE, commit=True, timeout_ms=5000)  # type: ignore[arg-type]
    text = str(info.value)
    assert "kafka.transaction.timeout.ms (registered: 2000 ms)" in text
    assert "state CompleteAbort, producer id 7, epoch 4" in text and "'t'" in text


def test_handle_without_partitions_sends_nothing() -> None:
    client = _FakeClient({})
    empty = TransactionHandle("t", 7, 3, ())
    end_transaction(client, empty, commit=True, timeout_ms=5000)  # type: ignore[arg-type]
    assert client.sent == []
