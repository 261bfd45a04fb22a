"""BrokerConnection against a scripted loopback broker: negotiation, versions, errors, large
responses received in place."""

from __future__ import annotations

import socket
import time

import pytest

from spark_kafka_py.client.connection import CLIENT_SOFTWARE_NAME, BrokerConnection
from spark_kafka_py.errors import (
    KafkaApiError,
    KafkaConnectionError,
    KafkaProtocolError,
    KafkaTimeoutError,
    LocalProtocolError,
)
from spark_kafka_py.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
)
from spark_kafka_py.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
)

from .fake_broker import CLOSE, FakeBroker, api_versions_for

META = MetadataResponse(
    brokers=(MetadataResponseBroker(node_id=1, host="h", port=1),), cluster_id="x"
)


def metadata_handler(request: object, version: int) -> MetadataResponse:
    return META


def test_negotiates_and_picks_min_of_max_versions() -> None:
    api = ApiVersionsResponse(
        api_keys=(
            ApiVersion(api_key=18, min_version=0, max_version=4),
            ApiVersion(api_key=3, min_version=0, max_version=9),
        )
    )
    with FakeBroker({18: lambda r, v: api, 3: metadata_handler}) as broker:
        conn = BrokerConnection(broker.host, broker.port, client_id="me")
        assert not conn.connected  # lazy: no socket yet
        assert broker.connections == 0
        assert conn.send(MetadataRequest(topics=None)) == META
        assert conn.connected
        (k0, v0, req0), (k1, v1, _) = broker.requests
        assert (k0, v0) == (18, 4)
        assert isinstance(req0, ApiVersionsRequest)
        assert req0.client_software_name == CLIENT_SOFTWARE_NAME
        assert (k1, v1) == (3, 9)  # min(our 13, broker 9)
        assert broker.client_ids == ["me", "me"]
        assert conn.api_versions[3] == (0, 9)
        assert conn.pick_version(MetadataRequest, 5) == 5
        with pytest.raises(LocalProtocolError, match="does not support FetchRequest"):
            conn.send(FetchRequest())
        conn.close()
        assert not conn.connected


def test_api_versions_retry_on_unsupported_version() -> None:
    def api_handler(request: object, version: int) -> ApiVersionsResponse:
        if version > 2:
            return ApiVersionsResponse(
                error_code=35, api_keys=(ApiVersion(api_key=18, min_version=0, max_version=2),)
            )
        return api_versions_for(MetadataRequest)

    with FakeBroker({18: api_handler, 3: metadata_handler}) as broker:
        with BrokerConnection(broker.host, broker.port) as conn:
            conn.send(MetadataRequest(topics=None))
        assert [(k, v) for k, v, _ in broker.requests] == [(18, 4), (18, 2), (3, 13)]


def test_api_versions_error_is_raised_and_closes() -> None:
    with FakeBroker({18: lambda r, v: ApiVersionsResponse(error_code=-1)}) as broker:
        conn = BrokerConnection(broker.host, broker.port)
        with pytest.raises(KafkaApiError, match="UNKNOWN_SERVER_ERROR"):
            conn.send(MetadataRequest(topics=None))
        assert not conn.connected


def test_no_common_version() -> None:
    api = ApiVersionsResponse(
        api_keys=(
            ApiVersion(api_key=18, min_version=0, max_version=4),
            ApiVersion(api_key=1, min_version=0, max_version=3),
        )
    )
    with FakeBroker({18: lambda r, v: api}) as broker:
        conn = BrokerConnection(broker.host, broker.port)
        with pytest.raises(LocalProtocolError, match="no common version of FetchRequest"):
            conn.send(FetchRequest())
        conn.close()


def test_timeout_names_request_broker_and_ms_then_reconnects() -> None:
    silent = {"on": True}

    def meta(request: object, version: int) -> MetadataResponse | None:
        return None if silent["on"] else META

    with FakeBroker({18: lambda r, v: api_versions_for(MetadataRequest), 3: meta}) as broker:
        conn = BrokerConnection(broker.host, broker.port, node_id=7)
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            conn.send(MetadataRequest(topics=None), timeout_ms=200)
        assert time.monotonic() - start < 5
        text = str(info.value)
        assert "MetadataRequest v13" in text and "broker 7" in text and "200 ms" in text
        assert not conn.connected
        silent["on"] = False
        assert conn.send(MetadataRequest(topics=None)) == META
        assert broker.connections == 2


def test_broker_closing_connection() -> None:
    with FakeBroker(
        {18: lambda r, v: api_versions_for(MetadataRequest), 3: lambda r, v: CLOSE}
    ) as b:
        conn = BrokerConnection(b.host, b.port)
        with pytest.raises(KafkaConnectionError, match=f"127.0.0.1:{b.port}"):
            conn.send(MetadataRequest(topics=None))
        assert not conn.connected


def test_malformed_response_closes() -> None:
    garbage = b"\x7f\xff\xff\xff"  # a 2 GiB frame

    with FakeBroker(
        {18: lambda r, v: api_versions_for(MetadataRequest), 3: lambda r, v: garbage}
    ) as b:
        conn = BrokerConnection(b.host, b.port, max_frame_bytes=1 << 20)
        with pytest.raises(KafkaProtocolError, match="max_frame_bytes"):
            conn.send(MetadataRequest(topics=None))
        assert not conn.connected


def test_connection_refused_names_host_port() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    conn = BrokerConnection("127.0.0.1", port, connect_timeout_ms=1000)
    with pytest.raises(KafkaConnectionError, match=f"127.0.0.1:{port}"):
        conn.send(MetadataRequest(topics=None))


def test_reconnect_backoff_after_failure() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    conn = BrokerConnection("127.0.0.1", port, reconnect_backoff_ms=300)
    with pytest.raises(KafkaConnectionError):
        conn.send(MetadataRequest(topics=None))
    start = time.monotonic()
    with pytest.raises(KafkaConnectionError):
        conn.send(MetadataRequest(topics=None))
    assert time.monotonic() - start >= 0.25


def test_large_responses_received_in_place_and_kept_views_stay_intact() -> None:
    """Responses larger than the receive scratch are read straight into buffers of their
    own (records are views of them); a response kept (by a caller, or stashed for a
    pipelined receive) is never overwritten by the responses read after it."""
    fills = iter(range(1, 100))

    def fetch(request: object, version: int) -> FetchResponse:
        fill = next(fills)
        partition = PartitionData(partition_index=0, records=bytes([fill]) * 300_000)
        return FetchResponse(
            responses=(FetchableTopicResponse(topic="t", partitions=(partition,)),)
        )

    def records(response: FetchResponse) -> bytes:
        return bytes(response.responses[0].partitions[0].records)

    broker = FakeBroker({18: lambda r, v: api_versions_for(FetchRequest), 1: fetch})
    with broker, BrokerConnection(broker.host, broker.port) as conn:
        first = conn.send(FetchRequest(), max_version=12)
        view = first.responses[0].partitions[0].records
        assert isinstance(view, memoryview) and isinstance(view.obj, bytearray)
        pending = [conn.send_pipelined(FetchRequest(), max_version=12) for _ in range(3)]
        fifth = conn.send(FetchRequest(), max_version=12)  # stashes the three before it
        assert records(fifth) == b"\x05" * 300_000
        got = [conn.receive(p) for p in reversed(pending) if p is not None]
        assert [records(r) for r in got] == [bytes([f]) * 300_000 for f in (4, 3, 2)]
        for _ in range(5):
            conn.send(FetchRequest(), max_version=12)
        assert records(first) == b"\x01" * 300_000
        assert [records(r) for r in got] == [bytes([f]) * 300_000 for f in (4, 3, 2)]
