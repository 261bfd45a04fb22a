"""Confluent's schema-registry wire format: a magic byte, a schema id, then the payload.

Layout (Confluent Schema Registry documentation, "Wire format"; Apicurio's and Karapace's
Confluent-compatible serializers write the same)::

    offset  size  field
    0       1     magic byte, always 0x00
    1       4     schema id, big-endian signed 32-bit (the registry's global id)
    5       ...   the payload (Avro binary encoding of one datum, for Avro)

Protobuf adds message indexes after the id; they live beside this module when they are built.

Confluent 8's serializers can instead carry the id in a record header (the value, or key, is
then the bare payload): header ``__value_schema_id`` (``__key_schema_id`` for the key) whose
value is one of (Confluent's ``SchemaId``, ``MAGIC_BYTE_V0`` / ``MAGIC_BYTE_V1``)::

    offset  size  field
    0       1     0x00: a registry id follows; 0x01: a GUID follows
    1       4     the schema id, big-endian signed 32-bit                  (after 0x00)
    1       16    the schema's GUID, big-endian (most significant first)   (after 0x01)

A GUID is looked up at the registry's ``GET /schemas/guids/{guid}``; :func:`parse_header_id`
returns an ``int`` for an id and a :class:`uuid.UUID` for a GUID so the caller can tell.

Pure functions over bytes; no I/O.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable
from typing import Final, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

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


#: The record header carrying the value's schema id (Confluent 8's header-id serializers).
VALUE_SCHEMA_ID_HEADER: Final = "__value_schema_id"
#: The record header carrying the key's schema id.
KEY_SCHEMA_ID_HEADER: Final = "__key_schema_id"
#: The first byte of a header id: a 4-byte registry id follows (``SchemaId.MAGIC_BYTE_V0``).
HEADER_ID_MAGIC: Final = 0
#: The first byte of a header id: a 16-byte GUID follows (``SchemaId.MAGIC_BYTE_V1``).
HEADER_GUID_MAGIC: Final = 1
#: The size of a header value carrying a registry id (magic byte and 4 bytes).
HEADER_ID_SIZE: Final = 5
#: The size of a header value carrying a GUID (magic byte and 16 bytes).
HEADER_GUID_SIZE: Final = 17


def parse_header_id(value: bytes | bytearray | memoryview | None) -> int | uuid.UUID:
    """The schema id in a ``__value_schema_id`` / ``__key_schema_id`` header's value.

    Args:
        value: the header's value (None: a header without a value).

    Returns:
        The registry's schema id (``int``, signed 32-bit) after 0x00, or the schema's GUID
        (:class:`uuid.UUID`) after 0x01.

    Raises:
        FramingError: no value, an empty value, a first byte other than 0x00 or 0x01, or a
            value not exactly 5 (id) or 17 (GUID) bytes long.
    """
    if value is None:
        raise FramingError("a schema id header without a value")
    view = memoryview(value)
    if len(view) == 0:
        raise FramingError("an empty schema id header")
    magic = view[0]
    if magic == HEADER_ID_MAGIC:
        if len(view) != HEADER_ID_SIZE:
            raise FramingError(
                f"a schema id header of {len(view)} bytes; an id's is {HEADER_ID_SIZE} "
                "(0x00 and a 4-byte id)"
            )
        (header_id,) = _ID.unpack_from(view, 1)
        return int(header_id)
    if magic == HEADER_GUID_MAGIC:
        if len(view) != HEADER_GUID_SIZE:
            raise FramingError(
                f"a schema id header of {len(view)} bytes; a GUID's is {HEADER_GUID_SIZE} "
                "(0x01 and a 16-byte GUID)"
            )
        return uuid.UUID(bytes=bytes(view[1:]))
    raise FramingError(
        f"a schema id header starting 0x{magic:02x}, expected 0x00 (an id) or 0x01 (a GUID)"
    )


def build_header_id(schema_id: int | uuid.UUID) -> bytes:
    """A header id's value: ``0x00`` and the 4-byte id, or ``0x01`` and the 16-byte GUID.

    Raises:
        FramingError: an ``int`` id outside the signed 32-bit range.
    """
    if isinstance(schema_id, uuid.UUID):
        return bytes((HEADER_GUID_MAGIC,)) + schema_id.bytes
    if not -(2**31) <= schema_id < 2**31:
        raise FramingError(f"schema id {schema_id} outside the signed 32-bit range")
    return bytes((HEADER_ID_MAGIC,)) + _ID.pack(schema_id)


def header_id(
    headers: Iterable[tuple[str, bytes | bytearray | memoryview | None]], *, key: bool = False
) -> int | uuid.UUID | None:
    """The schema id a record's headers carry for its value (or key), if any.

    Args:
        headers: the record's headers in order, as (name, value) pairs.
        key: look for ``__key_schema_id`` instead of ``__value_schema_id``.

    Returns:
        :func:`parse_header_id` of the last header of that name (Kafka allows repeats; the
        last one wins, as Confluent's deserializers take ``Headers.lastHeader``), or None
        when there is none (the id is then in the payload's framing).

    Raises:
        FramingError: the header's value is malformed (see :func:`parse_header_id`).
    """
    name = KEY_SCHEMA_ID_HEADER if key else VALUE_SCHEMA_ID_HEADER
    found = False
    last: bytes | bytearray | memoryview | None = None
    for header_name, value in headers:
        if header_name == name:
            found, last = True, value
    return parse_header_id(last) if found else None


def payloads_past(values: pa.Array, skip: int) -> pa.Array:
    """Each value of a binary column past its first ``skip`` bytes (its framing, checked by
    the caller), nulls kept: a new ``binary`` array of the payloads.

    Raises:
        ValueError: a value is shorter than ``skip`` bytes.
    """
    if len(values) > values.null_count and pc.min(pc.binary_length(values)).as_py() < skip:
        raise ValueError(f"a value is shorter than the {skip} bytes before its payload")
    # an explicit stop: pyarrow's binary_slice without one fails on some arrays
    return pc.binary_slice(values, skip, 2**31 - 1)
