"""BrokerConnection.send_pipelined / receive (the producer's in-flight requests) against a
scripted broker: responses in order, read in any order, shared with send(), acks=0 requests
that get no response, and requests lost with their connection."""

from __future__ import annotations

import time

import pytest

from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.errors import KafkaConnectionError, KafkaTimeoutError
from spark_kafka_py.protocol.messages.metadata import MetadataRequest, MetadataResponse
from spark_kafka_py.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from tests.client.fake_broker import CLOSE, FakeBroker, api_versions_for

META = MetadataResponse(brokers=(), topics=(), cluster_id="c", controller_id=1)


def produce(partition: int, acks: int = -1) -> ProduceRequest:
    return ProduceRequest(
        acks=acks,
        timeout_ms=1000,
        topic_data=(
            TopicProduceData(
                name="t", partition_data=(PartitionProduceData(index=partition, records=None),)
            ),
        ),
    )


def answer(request: ProduceRequest | None, version: int) -> ProduceResponse | None:
    assert request is not None
    if request.acks == 0:
        return None  # Kafka never answers acks=0
    part = request.topic_data[0].partition_data[0].index
    return ProduceResponse(
        responses=(
            TopicProduceResponse(
                name="t",
                partition_responses=(
                    PartitionProduceResponse(index=part, error_code=0, base_offset=part * 10),
                ),
            ),
        )
    )


def versions(r: object, v: int) -> object:
    return api_versions_for(MetadataRequest, ProduceRequest)


def test_responses_read_in_any_order() -> None:
    with FakeBroker({18: versions, 0: answer}) as broker:
        conn = BrokerConnection(broker.host, broker.port, node_id=1)
        handles = [conn.send_pipelined(produce(p)) for p in range(5)]
        assert all(h is not None for h in handles)
        # the last first: the earlier responses are kept for their own receive()
        last = conn.receive(handles[4])
        assert last.responses[0].partition_responses[0].base_offset == 40
        for p in range(4):
            got = conn.receive(handles[p])
            assert got.responses[0].partition_responses[0].base_offset == p * 10
        conn.close()


def test_send_on_a_connection_with_pipelined_requests_keeps_their_responses() -> None:
    with FakeBroker({18: versions, 0: answer, 3: lambda r, v: META}) as broker:
        conn = BrokerConnection(broker.host, broker.port)
        first = conn.send_pipelined(produce(1))
        assert conn.send(MetadataRequest(topics=None)) == META
        assert first is not None
        assert conn.receive(first).responses[0].partition_responses[0].base_offset == 10
        conn.close()


def test_acks_0_registers_no_response() -> None:
    with FakeBroker({18: versions, 0: answer}) as broker:
        conn = BrokerConnection(broker.host, broker.port)
        assert conn.send_pipelined(produce(1, acks=0), expect_response=False) is None
        handle = conn.send_pipelined(produce(2))
        assert handle is not None
        # the response after the unanswered request is matched with its own request
        assert conn.receive(handle).responses[0].partition_responses[0].base_offset == 20
        assert [k for k, _, _ in broker.requests].count(0) == 2
        conn.close()


def test_requests_in_flight_fail_when_the_connection_breaks() -> None:
    calls = {"n": 0}

    def close_on_second(request: ProduceRequest | None, version: int) -> object:
        calls["n"] += 1
        return CLOSE if calls["n"] == 2 else answer(request, version)

    with FakeBroker({18: versions, 0: close_on_second}) as broker:
        conn = BrokerConnection(broker.host, broker.port, node_id=3)
        handles = [conn.send_pipelined(produce(p)) for p in range(3)]
        assert conn.receive(handles[0]).responses[0].partition_responses[0].index == 0
        with pytest.raises(KafkaConnectionError, match="broker 3"):
            conn.receive(handles[1])
        # the third was written on the same, now closed socket: its answer never comes
        with pytest.raises(KafkaConnectionError, match="closed before the response"):
            conn.receive(handles[2])
        # a new request reconnects
        again = conn.send_pipelined(produce(7))
        assert conn.receive(again).responses[0].partition_responses[0].index == 7
        conn.close()


def test_receive_timeout_names_request_and_ms_and_closes() -> None:
    with FakeBroker({18: versions, 0: lambda r, v: None}) as broker:
        conn = BrokerConnection(broker.host, broker.port, node_id=2)
        handle = conn.send_pipelined(produce(1), timeout_ms=300)
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=r"ProduceRequest v\d+ to broker 2.*300 ms"):
            conn.receive(handle)
        assert time.monotonic() - start < 3
        assert not conn.connected
