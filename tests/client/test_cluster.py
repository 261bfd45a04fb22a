"""ClientConfig parsing and KafkaClient behaviour against scripted loopback brokers."""

from __future__ import annotations

import pickle
import socket
import uuid
from typing import Any

import pytest

from spark_kafka_py.client.cluster import (
    BrokerInfo,
    ClientConfig,
    ClusterMetadata,
    KafkaClient,
    parse_bootstrap_servers,
)
from spark_kafka_py.consumer.offsets import list_offsets
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError, KafkaConnectionError, KafkaTimeoutError
from spark_kafka_py.protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

from .fake_broker import CLOSE, FakeBroker, api_versions_for


def test_parse_bootstrap_servers() -> None:
    assert parse_bootstrap_servers("a:1, b:2 ,[::1]:9092") == (("a", 1), ("b", 2), ("::1", 9092))
    for bad in ("", "a", "a:", "a:x", "a:0", "a:70000", "[::1]", ":9092"):
        with pytest.raises(ConfigError, match="bootstrap"):
            parse_bootstrap_servers(bad)


def test_client_config() -> None:
    cfg = ClientConfig.from_bootstrap("h:9092", request_timeout_ms=5)
    assert cfg.bootstrap_servers == (("h", 9092),)
    assert cfg.client_id == "spark-kafka-py"
    assert cfg.max_frame_bytes == 100 * 1024 * 1024
    assert ClientConfig(bootstrap_servers=[("h", 1)]).bootstrap_servers == (("h", 1),)  # type: ignore[arg-type]  # a list, normalized
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    with pytest.raises(ConfigError):
        ClientConfig(bootstrap_servers=())
    with pytest.raises(ConfigError, match="request_timeout_ms"):
        ClientConfig.from_bootstrap("h:1", request_timeout_ms=-1)


def test_client_constructor_opens_nothing_and_pickles() -> None:
    client = KafkaClient(ClientConfig.from_bootstrap("127.0.0.1:1"))
    copy = pickle.loads(pickle.dumps(client))
    assert isinstance(copy, KafkaClient) and copy.config == client.config
    assert client.cached_metadata is None and client.metadata_is_stale()
    client.close()


def _metadata_response(port: int) -> MetadataResponse:
    return MetadataResponse(
        brokers=(MetadataResponseBroker(node_id=5, host="127.0.0.1", port=port, rack="r1"),),
        cluster_id="cid",
        controller_id=5,
        topics=(
            MetadataResponseTopic(
                name="t",
                topic_id=uuid.UUID(int=9),
                partitions=(
                    MetadataResponsePartition(
                        partition_index=0,
                        leader_id=5,
                        leader_epoch=2,
                        replica_nodes=(5,),
                        isr_nodes=(5,),
                    ),
                ),
            ),
            MetadataResponseTopic(name="missing", error_code=3),
        ),
    )


def test_metadata_send_and_pool() -> None:
    handlers = {
        18: lambda r, v: api_versions_for(MetadataRequest, ListOffsetsRequest),
        2: lambda r, v: ListOffsetsResponse(),
    }
    with FakeBroker(handlers) as broker:
        handlers[3] = lambda r, v: _metadata_response(broker.port)
        dead = socket.socket()
        dead.bind(("127.0.0.1", 0))
        dead_port = dead.getsockname()[1]
        dead.close()
        cfg = ClientConfig(bootstrap_servers=(("127.0.0.1", dead_port), (broker.host, broker.port)))
        with KafkaClient(cfg) as client:
            md = client.metadata(["t", "missing"])
            assert isinstance(md, ClusterMetadata)
            assert md.cluster_id == "cid" and md.controller_id == 5
            assert md.brokers[5].rack == "r1"
            t = md.topics["t"]
            assert t.topic_id == uuid.UUID(int=9) and t.error_code == 0
            assert t.partitions[0].leader_id == 5 and t.partitions[0].leader_epoch == 2
            assert md.topics["missing"].error_code == 3 and md.topics["missing"].topic_id is None
            assert md.leader("t", 0) == 5 and md.leader("t", 1) is None
            (_, _, req) = broker.requests[1]
            assert req.allow_auto_topic_creation is False
            assert client.send(5, ListOffsetsRequest()) == ListOffsetsResponse()
            assert client.least_loaded_node() == 5
            assert client.cached_metadata is not None
            with pytest.raises(KafkaConnectionError, match="broker 99"):
                client.send(99, ListOffsetsRequest())


class _Loaded:
    """A stand-in connection: connected or not, with some requests in flight."""

    def __init__(self, connected: bool, in_flight: int) -> None:
        self.connected = connected
        self.in_flight_requests = in_flight

    def close(self) -> None:
        pass


def test_least_loaded_node_is_the_connected_broker_with_fewest_in_flight() -> None:
    """As Java's ``NetworkClient.leastLoadedNode``: fewest in-flight requests among connected
    brokers; ties at random; with none connected, any known broker."""
    client = KafkaClient(ClientConfig(bootstrap_servers=(("127.0.0.1", 1),)))
    client._brokers = {n: BrokerInfo(n, "127.0.0.1", 1) for n in (1, 2, 3, 4)}
    fake: dict[int, Any] = {1: _Loaded(True, 3), 2: _Loaded(True, 1), 3: _Loaded(False, 0)}
    client._connections = fake
    assert {client.least_loaded_node() for _ in range(20)} == {2}
    fake[4] = _Loaded(True, 1)
    assert {client.least_loaded_node() for _ in range(60)} == {2, 4}
    client._connections = {3: _Loaded(False, 0)}
    assert {client.least_loaded_node() for _ in range(60)} <= {1, 2, 3, 4}


def test_metadata_error_names_everything_tried() -> None:
    ports = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    cfg = ClientConfig(
        bootstrap_servers=tuple(("127.0.0.1", p) for p in ports), connect_timeout_ms=1000
    )
    with KafkaClient(cfg) as client, pytest.raises(KafkaConnectionError) as info:
        client.metadata()
    for p in ports:
        assert f"127.0.0.1:{p}" in str(info.value)


# -- the driver's retries while brokers are unreachable (default.api.timeout.ms) ----------


def _flaky(answer: Any, failures: int) -> Any:
    """A handler closing the connection on its first ``failures`` calls, then answering."""
    calls = {"n": 0}

    def handler(request: Any, version: int) -> Any:
        calls["n"] += 1
        return CLOSE if calls["n"] <= failures else answer(request, version)

    return handler


def test_metadata_retrying_rides_out_dropped_connections() -> None:
    handlers: dict[int, Any] = {18: lambda r, v: api_versions_for(MetadataRequest)}
    with FakeBroker(handlers) as broker:
        handlers[3] = _flaky(lambda r, v: _metadata_response(broker.port), failures=3)
        cfg = ClientConfig(bootstrap_servers=((broker.host, broker.port),), retry_backoff_ms=1)
        with KafkaClient(cfg) as client:
            with pytest.raises(KafkaConnectionError, match="closed the connection"):
                client.metadata(["t"])  # one pass: no retry
            md = client.metadata_retrying(["t"], timeout_ms=30_000)
        assert md.leader("t", 0) == 5
        assert [k for k, _, _ in broker.requests].count(3) == 4


def test_metadata_retrying_gives_up_after_the_timeout_naming_the_broker() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = ClientConfig(bootstrap_servers=(("127.0.0.1", port),), retry_backoff_ms=1)
    with KafkaClient(cfg) as client, pytest.raises(KafkaTimeoutError) as info:
        client.metadata_retrying([], timeout_ms=300)
    text = str(info.value)
    assert "default.api.timeout.ms=300" in text and f"127.0.0.1:{port}" in text
    assert isinstance(info.value.__cause__, KafkaConnectionError)


def test_metadata_retrying_stops_at_once_for_a_peer_that_is_not_kafka() -> None:
    http = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
    with FakeBroker({18: lambda r, v: http}) as broker:
        cfg = ClientConfig(bootstrap_servers=((broker.host, broker.port),), retry_backoff_ms=1)
        with KafkaClient(cfg) as client, pytest.raises(KafkaConnectionError) as info:
            client.metadata_retrying([], timeout_ms=60_000)
        assert "not a Kafka listener" in str(info.value) and not info.value.retriable
        assert broker.connections == 1


def test_list_offsets_rides_out_a_leader_dropping_connections() -> None:
    """Connection failures do not use up ``fetchOffset.numRetries`` (0 here): they are retried,
    with a Metadata request before each attempt, until ``default.api.timeout.ms``."""

    def offsets(request: Any, version: int) -> ListOffsetsResponse:
        return ListOffsetsResponse(
            topics=tuple(
                ListOffsetsTopicResponse(
                    name=t.name,
                    partitions=tuple(
                        ListOffsetsPartitionResponse(partition_index=p.partition_index, offset=42)
                        for p in t.partitions
                    ),
                )
                for t in request.topics
            )
        )

    handlers: dict[int, Any] = {
        18: lambda r, v: api_versions_for(MetadataRequest, ListOffsetsRequest),
        2: _flaky(offsets, failures=2),
    }
    with FakeBroker(handlers) as broker:
        handlers[3] = lambda r, v: _metadata_response(broker.port)
        cfg = ClientConfig(bootstrap_servers=((broker.host, broker.port),))
        with KafkaClient(cfg) as client:
            got = list_offsets(client, {TopicPartition("t", 0): -1}, retries=0, retry_backoff_ms=1)
            assert got == {TopicPartition("t", 0): 42}
            unreachable = r"t-0: brokers unreachable for default.api.timeout.ms=0 ms"
            with pytest.raises(KafkaTimeoutError, match=unreachable):
                handlers[2] = _flaky(offsets, failures=10**6)
                list_offsets(
                    client,
                    {TopicPartition("t", 0): -1},
                    retries=5,
                    api_timeout_ms=0,
                    retry_backoff_ms=1,
                )
        assert [k for k, _, _ in broker.requests].count(3) >= 3  # metadata before each attempt
