"""Sans-I/O framing: responses fed whole, byte by byte, with trailing bytes; bad frames;
receiving into the protocol's own buffers and their reuse."""

from __future__ import annotations

import struct
import tracemalloc

import pytest

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError
from spark_kafka_py.protocol import framing
from spark_kafka_py.protocol.framing import (
    REUSED_FRAME_BUFFERS,
    SCRATCH_BYTES,
    KafkaProtocol,
    encode_request_header,
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
        proto.send_request(METADATA, 1)  # type: ignore[arg-type]  # a response: under test
    assert proto.in_flight == ()
    with pytest.raises(ValueError):
        KafkaProtocol(max_frame_bytes=1)


# -- receiving into the protocol's buffers (recv_buffer / bytes_received) -------------------


def fetch_frame(correlation_id: int, records: bytes, version: int = 12) -> bytes:
    """A Fetch response frame (header v1 from v12) carrying ``records`` in one partition."""
    response = FetchResponse(
        responses=(
            FetchableTopicResponse(
                topic="t",
                partitions=(PartitionData(partition_index=0, high_watermark=9, records=records),),
            ),
        )
    )
    return frame(correlation_id, encode(response, version), flexible_header=version >= 12)


def records_of(response: FetchResponse) -> memoryview:
    records = response.responses[0].partitions[0].records
    assert isinstance(records, memoryview)
    return records


def feed(proto: KafkaProtocol, data: bytes, most: int | None = None) -> list:
    """Write ``data`` into the protocol's receive buffers as a socket's ``recv_into`` would,
    at most ``most`` bytes per call (``None``: as much as each buffer takes)."""
    out = []
    pos = 0
    while pos < len(data):
        view = proto.recv_buffer()
        assert len(view) >= 1 and not view.readonly
        n = min(len(view), len(data) - pos, most or len(data))
        view[:n] = data[pos : pos + n]
        view.release()
        pos += n
        out += proto.bytes_received(n)
    return out


def stream_of_mixed_frames(proto: KafkaProtocol) -> tuple[bytes, list[bytes]]:
    """Small and large (> the 64-byte scratch below) frames; returns the stream and the
    records each Fetch response carries."""
    records = [bytes(range(10)), bytes(range(200)), b"", bytes(range(90, 190)) * 2]
    stream = b""
    for r in records:
        cid, _ = proto.send_request(FetchRequest(), 12)
        stream += fetch_frame(cid, r)
    cid, _ = proto.send_request(MetadataRequest(topics=None), 12)
    stream += frame(cid, encode(METADATA, 12), flexible_header=True)
    return stream, records


def check_mixed(got: list, records: list[bytes]) -> None:
    assert [bytes(records_of(r)) for _, r in got[:-1]] == records
    assert got[-1][1] == METADATA


@pytest.mark.parametrize("scratch", [8, 64, 4096])
def test_recv_into_split_at_every_byte_boundary(scratch: int) -> None:
    template = KafkaProtocol(scratch_bytes=scratch)
    stream, records = stream_of_mixed_frames(template)
    for i in range(len(stream) + 1):
        proto = KafkaProtocol(scratch_bytes=scratch)
        stream_of_mixed_frames(proto)  # the same requests in flight
        got = feed(proto, stream[:i]) + feed(proto, stream[i:])
        check_mixed(got, records)
        assert proto.in_flight == () and proto.buffered_bytes == 0
        assert proto.bytes_needed() == 4


@pytest.mark.parametrize("most", [1, 2, 3, 5, 7, 64, 1000])
def test_recv_into_short_reads(most: int) -> None:
    proto = KafkaProtocol(scratch_bytes=64)
    stream, records = stream_of_mixed_frames(proto)
    check_mixed(feed(proto, stream, most), records)
    assert proto.buffered_bytes == 0


def test_several_frames_in_one_recv_and_header_split_across_recvs() -> None:
    proto = KafkaProtocol()
    stream, records = stream_of_mixed_frames(proto)
    view = proto.recv_buffer()
    assert len(view) == SCRATCH_BYTES
    view[: len(stream)] = stream
    del view
    check_mixed(proto.bytes_received(len(stream)), records)
    # a size field in two pieces, then a large frame whose view ends exactly at its end
    proto = KafkaProtocol(scratch_bytes=64)
    cid, _ = proto.send_request(FetchRequest(), 12)
    data = fetch_frame(cid, bytes(500))
    assert feed(proto, data[:2]) == [] and proto.bytes_needed() == 2
    assert feed(proto, data[2:30]) == [] and proto.buffered_bytes == 30
    view = proto.recv_buffer()
    assert len(view) == len(data) - 30  # the rest of the frame, not more
    assert proto.bytes_needed() == len(data) - 30
    view[:] = data[30:]
    del view
    [(got, response)] = proto.bytes_received(len(data) - 30)
    assert got == cid and bytes(records_of(response)) == bytes(500)


def test_bytes_received_beyond_the_buffer() -> None:
    proto = KafkaProtocol(scratch_bytes=64)
    with pytest.raises(ValueError, match="outside the receive buffer"):
        proto.bytes_received(65)
    with pytest.raises(ValueError, match="outside the receive buffer"):
        proto.bytes_received(-1)
    with pytest.raises(ValueError, match="scratch_bytes"):
        KafkaProtocol(scratch_bytes=4)


@pytest.mark.parametrize("size", [-1, 3, 50 * 1024 * 1024 + 1, 2**31 - 1])
def test_bad_sizes_fail_before_any_allocation(size: int) -> None:
    proto = KafkaProtocol(max_frame_bytes=50 * 1024 * 1024)
    proto.send_request(FetchRequest(), 12)
    tracemalloc.start()
    try:
        with pytest.raises(KafkaProtocolError, match="frame"):
            feed(proto, struct.pack(">i", size) + b"\x00" * 8)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
    assert proto._frame_buffers == []


def test_large_frame_without_request_fails_before_allocation() -> None:
    proto = KafkaProtocol()
    with pytest.raises(KafkaProtocolError, match="no request in flight"):
        feed(proto, struct.pack(">i", 10 * 1024 * 1024))
    assert proto._frame_buffers == []


def test_records_are_read_only_views_of_the_frame_buffer() -> None:
    proto = KafkaProtocol(scratch_bytes=64)
    cid, _ = proto.send_request(FetchRequest(), 12)
    [(_, response)] = feed(proto, fetch_frame(cid, bytes(range(256))))
    records = records_of(response)
    assert records.readonly and bytes(records) == bytes(range(256))
    assert isinstance(records.obj, bytearray)  # no copy of the frame was made
    assert records.obj is proto._frame_buffers[0]


def test_reused_buffers_never_overwrite_a_live_view() -> None:
    proto = KafkaProtocol(scratch_bytes=64)

    def one(fill: int) -> FetchResponse:
        cid, _ = proto.send_request(FetchRequest(), 12)
        [(_, response)] = feed(proto, fetch_frame(cid, bytes([fill]) * 1000), 300)
        return response

    kept = records_of(one(1))  # a response's records view the caller keeps
    piece = records_of(one(2))[100:110]  # a slice of another one; the response is dropped
    stashed = one(3)  # a whole response (e.g. a stashed pipelined one)
    buffers = {id(kept.obj), id(piece.obj), id(stashed.responses[0].partitions[0].records.obj)}
    assert len(buffers) == 3  # all three kept buffers are busy
    for fill in range(4, 20):
        assert bytes(records_of(one(fill))) == bytes([fill]) * 1000
        assert bytes(kept) == b"\x01" * 1000
        assert bytes(piece) == b"\x02" * 10
        assert bytes(records_of(stashed)) == b"\x03" * 1000
    assert len(proto._frame_buffers) == REUSED_FRAME_BUFFERS
    assert {id(b) for b in proto._frame_buffers} == buffers  # new ones were not kept
    # once nothing refers to them, the kept buffers are used again
    del kept, piece, stashed
    reused = {id(records_of(one(fill)).obj) for fill in range(3)}
    assert reused <= buffers


def test_steady_state_reuses_one_buffer_and_bounds_what_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proto = KafkaProtocol(scratch_bytes=64)
    first = None
    for fill in range(10):
        cid, _ = proto.send_request(FetchRequest(), 12)
        [(_, response)] = feed(proto, fetch_frame(cid, bytes([fill]) * (1000 + fill)))
        obj = records_of(response).obj
        first = first or id(obj)
        assert id(obj) == first  # one buffer, reused (1/8 headroom for larger frames)
        del response, obj
    assert len(proto._frame_buffers) == 1
    # frames above the kept size get a buffer of exactly their size that is not kept
    monkeypatch.setattr(framing, "REUSED_FRAME_MAX_BYTES", 2000)
    proto = KafkaProtocol(scratch_bytes=64)
    for size in (5000, 1000, 6000):
        cid, _ = proto.send_request(FetchRequest(), 12)
        [(_, response)] = feed(proto, fetch_frame(cid, bytes(size)))
        obj = records_of(response).obj
        if size > 2000:
            assert size < len(obj) < size + 100  # the frame: records and a few header bytes
            assert all(obj is not kept for kept in proto._frame_buffers)
        else:
            assert [len(kept) for kept in proto._frame_buffers] == [2000]  # capped
        del response, obj
