"""The Protobuf wire format written by hand for the tests (protobuf.dev, "Encoding"): what a
serializer would not write (overlong varints, repeated scalars, unknown fields) or must not
(malformed payloads)."""

from __future__ import annotations


def varint(n: int) -> bytes:
    """Base-128 varint of ``n`` as 64 bits (a negative ``n`` takes 10 bytes)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    """A field's tag: ``number << 3 | wire_type`` as a varint."""
    return varint(number << 3 | wire_type)


def length_delimited(number: int, data: bytes) -> bytes:
    """A length-delimited field (wire type 2): its tag, the length, the bytes."""
    return tag(number, 2) + varint(len(data)) + data
