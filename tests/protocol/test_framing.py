"""Sans-I/O framing: responses fed whole, byte by byte, with trailing bytes; bad frames."""

from __future__ import annotations

import struct

import pytest

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol.framing import KafkaProtocol, encode_request_header
from spark_kafka_py.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
)
from spark_kafka_py.protocol.schema import encode


def frame(correlation_id: int, body: bytes, *, flexible_header: bool) -> bytes:
    header = struct.pack(">i", correlation_id) + (b"\x00" if flexible_header else b"")
    return struct.pack(">i", len(header) + len(body)) + header + body


METADATA = MetadataResponse(
    brokers=(MetadataResponseBroker(node_id=1, host="localhost", port=9092),),
    cluster_id="abc",
    controller_id=1,
)


def test_send_request_bytes_golden() -> None:
    proto = KafkaProtocol("c", first_correlation_id=7)
    req = ApiVersionsRequest(client_software_name="a", client_software_version="1")
    cid, data = proto.send_request(req, 3)
    assert cid == 7
    # header v2: api_key 18, version 3, correlation 7, client_id "c" (int16 length), tags
    expected_header = bytes.fromhex("0012 0003 00000007 0001 63 00")
    body = bytes.fromhex("02 61 02 31 00")
    assert data == struct.pack(">i", len(expected_header) + len(body)) + expected_header + body
    cid2, data2 = proto.send_request(MetadataRequest(topics=None), 1)
    assert cid2 == 8
    # header v1 for non-flexible: no tagged fields
    assert data2[4:15] == bytes.fromhex("0003 0001 00000008 0001 63")
    assert [f.correlation_id for f in proto.in_flight] == [7, 8]


def test_null_client_id() -> None:
    assert encode_request_header(3, 1, 0, None, 1).endswith(b"\xff\xff")


@pytest.mark.parametrize("mode", ["whole", "byte_by_byte", "trailing"])
def test_receive_modes(mode: str) -> None:
    proto = KafkaProtocol()
    c1, _ = proto.send_request(MetadataRequest(topics=None), 12)  # flexible: header v1
    c2, _ = proto.send_request(ApiVersionsRequest(), 3)  # ApiVersions: header v0 always
    c3, _ = proto.send_request(MetadataRequest(topics=None), 8)
    api = ApiVersionsResponse(api_keys=(ApiVersion(api_key=3, min_version=0, max_version=13),))
    stream = (
        frame(c1, encode(METADATA, 12), flexible_header=True)
        + frame(c2, encode(api, 3), flexible_header=False)
        + frame(c3, encode(METADATA, 8), flexible_header=False)
    )
    got = []
    if mode == "whole":
        got = proto.receive_bytes(stream)
    elif mode == "byte_by_byte":
        for i in range(len(stream)):
            got += proto.receive_bytes(stream[i : i + 1])
    else:
        c4, _ = proto.send_request(MetadataRequest(topics=None), 8)
        extra = frame(c4, encode(METADATA, 8), flexible_header=False)[:7]  # a partial frame
        got = proto.receive_bytes(stream + extra)
        assert proto.buffered_bytes == 7
        assert [f.correlation_id for f in proto.in_flight] == [c4]
        assert [cid for cid, _ in got] == [c1, c2, c3]
        return
    assert [cid for cid, _ in got] == [c1, c2, c3]
    assert got[0][1] == METADATA
    assert got[1][1] == api
    assert got[2][1].cluster_id == "abc"
    assert proto.in_flight == ()
    if mode != "trailing":
        assert proto.buffered_bytes == 0
        assert proto.bytes_needed() == 4


def test_bytes_needed() -> None:
    proto = KafkaProtocol()
    cid, _ = proto.send_request(MetadataRequest(topics=None), 1)
    data = frame(cid, encode(METADATA, 1), flexible_header=False)
    assert proto.receive_bytes(data[:2]) == []
    assert proto.bytes_needed() == 2
    assert proto.receive_bytes(data[2:10]) == []
    assert proto.bytes_needed() == len(data) - 10
    assert len(proto.receive_bytes(data[10:])) == 1


def test_api_versions_unsupported_version_falls_back_to_v0() -> None:
    proto = KafkaProtocol()
    cid, _ = proto.send_request(ApiVersionsRequest(), 4)
    v0 = ApiVersionsResponse(
        error_code=35, api_keys=(ApiVersion(api_key=18, min_version=0, max_version=2),)
    )
    [(got_cid, resp)] = proto.receive_bytes(frame(cid, encode(v0, 0), flexible_header=False))
    assert got_cid == cid
    assert resp == v0


@pytest.mark.parametrize("size", [-1, -(2**31), 0, 3, 101])
def test_bad_frame_sizes(size: int) -> None:
    proto = KafkaProtocol(max_frame_bytes=100)
    proto.send_request(MetadataRequest(topics=None), 1)
    with pytest.raises(KafkaProtocolError, match="frame"):
        proto.receive_bytes(struct.pack(">i", size) + b"\x00" * 8)


def test_oversized_frame_rejected_before_buffering() -> None:
    proto = KafkaProtocol(max_frame_bytes=1000)
    proto.send_request(MetadataRequest(topics=None), 1)
    with pytest.raises(KafkaProtocolError, match="max_frame_bytes"):
        proto.receive_bytes(struct.pack(">i", 2**31 - 1))


def test_correlation_id_mismatch() -> None:
    proto = KafkaProtocol()
    cid, _ = proto.send_request(MetadataRequest(topics=None), 1)
    with pytest.raises(KafkaProtocolError, match="correlation id mismatch"):
        proto.receive_bytes(frame(cid + 1, encode(METADATA, 1), flexible_header=False))


def test_response_without_request() -> None:
    with pytest.raises(KafkaProtocolError, match="no request in flight"):
        KafkaProtocol().receive_bytes(frame(0, b"", flexible_header=False))


def test_truncated_body_and_trailing_garbage_in_frame() -> None:
    proto = KafkaProtocol()
    cid, _ = proto.send_request(MetadataRequest(topics=None), 1)
    body = encode(METADATA, 1)
    with pytest.raises(KafkaProtocolError):
        proto.receive_bytes(frame(cid, body[:-1], flexible_header=False))
    proto = KafkaProtocol()
    cid, _ = proto.send_request(MetadataRequest(topics=None), 1)
    with pytest.raises(KafkaProtocolError, match="trailing"):
        proto.receive_bytes(frame(cid, body + b"\x00", flexible_header=False))


def test_correlation_ids_wrap_and_reset() -> None:
    proto = KafkaProtocol(first_correlation_id=2**31 - 1)
    assert proto.send_request(MetadataRequest(topics=None), 1)[0] == 2**31 - 1
    assert proto.send_request(MetadataRequest(topics=None), 1)[0] == 0
    proto.receive_bytes(b"\x00\x00")
    proto.reset()
    assert proto.in_flight == () and proto.buffered_bytes == 0


def test_local_errors() -> None:
    proto = KafkaProtocol()
    with pytest.raises(LocalProtocolError):
        proto.send_request(MetadataRequest(), 0)  # we support v1+
    with pytest.raises(LocalProtocolError):
        proto.send_request(METADATA, 1)  # type: ignore[arg-type]  # a response
    assert proto.in_flight == ()
    with pytest.raises(ValueError):
        KafkaProtocol(max_frame_bytes=1)
