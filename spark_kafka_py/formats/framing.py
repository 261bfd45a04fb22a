"""Confluent's schema-registry wire format: a magic byte, a schema id, then the payload.

Layout (Confluent Schema Registry documentation, "Wire format"; Apicurio's and Karapace's
Confluent-compatible serializers write the same)::

    offset  size  field
    0       1     magic byte, always 0x00
    1       4     schema id, big-endian signed 32-bit (the registry's global id)
    5       ...   the payload (Avro binary encoding of one datum, for Avro)

Protobuf adds message indexes after the id and the header-id form (``__value_schema_id``)
carries the id outside the value; both live beside this module when they are built.

Pure functions over bytes; no I/O.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

from spark_kafka_py.formats.errors import FramingError

#: The first byte of a Confluent-framed payload.
MAGIC_BYTE: Final = 0
#: Bytes before the payload: the magic byte and the 4-byte schema id.
HEADER_SIZE: Final = 5

_ID = struct.Struct(">i")


class Framed(NamedTuple):
    """A parsed framing: the schema id and where the payload starts.

    Attributes:
        schema_id: the registry's schema id (signed 32-bit, as Confluent's serializers write).
        payload: the payload bytes (a zero-copy ``memoryview`` slice of the input).
    """

    schema_id: int
    payload: memoryview


def parse(data: bytes | bytearray | memoryview) -> Framed:
    """Split a Confluent-framed value into its schema id and payload.

    Args:
        data: the record's value (or key) bytes.

    Returns:
        :class:`Framed` (schema id, payload as a memoryview over ``data``; may be empty).

    Raises:
        FramingError: fewer than 5 bytes, or a first byte other than 0x00.
    """
    view = memoryview(data)
    if len(view) < HEADER_SIZE:
        raise FramingError(
            f"{len(view)} bytes, fewer than the {HEADER_SIZE}-byte header "
            "(magic byte 0x00 and a 4-byte schema id)"
        )
    if view[0] != MAGIC_BYTE:
        raise FramingError(f"magic byte 0x{view[0]:02x}, expected 0x{MAGIC_BYTE:02x}")
    (schema_id,) = _ID.unpack_from(view, 1)
    return Framed(schema_id, view[HEADER_SIZE:])


def schema_id(data: bytes | bytearray | memoryview) -> int:
    """The schema id of a Confluent-framed value (see :func:`parse` for the errors)."""
    return parse(data).schema_id


def build(schema_id: int, payload: bytes | bytearray | memoryview) -> bytes:
    """Frame a payload: ``0x00``, the 4-byte big-endian schema id, the payload.

    Raises:
        FramingError: ``schema_id`` outside the signed 32-bit range.
    """
    if not -(2**31) <= schema_id < 2**31:
        raise FramingError(f"schema id {schema_id} outside the signed 32-bit range")
    return bytes((MAGIC_BYTE,)) + _ID.pack(schema_id) + bytes(payload)
