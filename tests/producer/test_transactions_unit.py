"""Transactions without a broker: the handle's JSON and pickle forms, the settings' checks,
the typed errors, and the transactional bit of a stamped batch."""

from __future__ import annotations

import json
import pickle

import pytest

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.errors import ConfigError, ProducerFencedError, TransactionError
from spark_kafka_py.producer import ProducerSettings, TransactionHandle
from spark_kafka_py.producer.state import mark_transactional
from spark_kafka_py.protocol import error_codes as ec
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
