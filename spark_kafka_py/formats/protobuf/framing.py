"""Confluent's Protobuf wire framing: magic byte, schema id, message indexes, then the message.

Layout (Confluent Schema Registry documentation, "Wire format", Protobuf; the indexes as
Confluent's ``MessageIndexes`` writes them)::

    offset  size  field
    0       1     magic byte 0x00
    1       4     schema id, big-endian signed 32-bit
    5       ...   message indexes: a zigzag varint count, then that many zigzag varint
                  indexes (the path to the message: top-level index, then nested indexes);
                  the common case, the file's first message ([0]), is the single byte 0x00
    ...           the message's Protobuf binary encoding

The magic byte and id are :mod:`spark_kafka_py.formats.framing`'s; this module adds the
indexes. Hostile input is bounded: at most :data:`MAX_MESSAGE_INDEXES` indexes, varints of
at most 5 bytes (32-bit values).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from spark_kafka_py.formats import framing
from spark_kafka_py.formats._extension import load_extension
from spark_kafka_py.formats.errors import FramingError

#: The compiled twin's :func:`common_head` when it is built (else Arrow kernels do it).
_ACCEL: Final = load_extension("spark_kafka_py.formats.protobuf._accel")

#: The most message indexes read (nesting depth of the message named); protoc's own nesting
#: limit is far below this.
MAX_MESSAGE_INDEXES: Final = 100
_MAX_VARINT32_BYTES: Final = 5


class ProtobufFramed(NamedTuple):
    """A parsed Protobuf framing.

    Attributes:
        schema_id: the registry's schema id.
        indexes: the message indexes (``(0,)`` for the first message).
        payload: the message bytes (a memoryview over the input).
    """

    schema_id: int
    indexes: tuple[int, ...]
    payload: memoryview


def _read_zigzag(view: memoryview, pos: int, what: str) -> tuple[int, int]:
    result = 0
    for n in range(_MAX_VARINT32_BYTES):
        if pos >= len(view):
            raise FramingError(f"the {what} varint runs past the end ({len(view)} bytes)")
        b = view[pos]
        pos += 1
        result |= (b & 0x7F) << (7 * n)
        if not b & 0x80:
            result &= 0xFFFFFFFF
            return (result >> 1) ^ -(result & 1), pos
    raise FramingError(f"the {what} varint is longer than {_MAX_VARINT32_BYTES} bytes")


def parse_indexes(data: bytes | bytearray | memoryview) -> tuple[tuple[int, ...], memoryview]:
    """Read the message indexes at the start of ``data`` (what follows the 5-byte header).

    Returns:
        (indexes, the rest: the message bytes).

    Raises:
        FramingError: a truncated or over-long varint, a negative count or index, or more
            than :data:`MAX_MESSAGE_INDEXES` indexes.
    """
    view = memoryview(data)
    count, pos = _read_zigzag(view, 0, "message index count")
    if count == 0:
        return (0,), view[pos:]
    if count < 0 or count > MAX_MESSAGE_INDEXES:
        raise FramingError(f"a message index count of {count} (0..{MAX_MESSAGE_INDEXES} accepted)")
    indexes: list[int] = []
    for _ in range(count):
        index, pos = _read_zigzag(view, pos, "message index")
        if index < 0:
            raise FramingError(f"a negative message index {index}")
        indexes.append(index)
    return tuple(indexes), view[pos:]


def parse(data: bytes | bytearray | memoryview) -> ProtobufFramed:
    """Split a Confluent Protobuf-framed value into schema id, message indexes and message.

    Raises:
        FramingError: as :func:`spark_kafka_py.formats.framing.parse` and
            :func:`parse_indexes`.
    """
    head = framing.parse(data)
    indexes, payload = parse_indexes(head.payload)
    return ProtobufFramed(head.schema_id, indexes, payload)


def _zigzag(value: int) -> bytes:
    z = ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def build_indexes(indexes: Sequence[int]) -> bytes:
    """Encode message indexes: ``[0]`` as the single byte 0x00, else count then indexes.

    Raises:
        FramingError: no index, a negative index or one past 32 bits, or too many.
    """
    if not indexes:
        raise FramingError("no message index (the first message is [0])")
    if len(indexes) > MAX_MESSAGE_INDEXES:
        raise FramingError(f"{len(indexes)} message indexes (max {MAX_MESSAGE_INDEXES})")
    for i in indexes:
        if not 0 <= i < 2**31:
            raise FramingError(f"message index {i} outside 0..2**31-1")
    if tuple(indexes) == (0,):
        return b"\x00"
    return _zigzag(len(indexes)) + b"".join(_zigzag(i) for i in indexes)


def build(schema_id: int, indexes: Sequence[int], payload: bytes | bytearray | memoryview) -> bytes:
    """Frame a Protobuf message: magic byte, id, message indexes, message.

    Raises:
        FramingError: as :func:`spark_kafka_py.formats.framing.build` and
            :func:`build_indexes`.
    """
    return framing.build(schema_id, build_indexes(indexes) + bytes(payload))


def common_head(values: pa.Array, size: int) -> bytes | None:
    """The ``size`` bytes every non-null value of a ``binary`` Arrow column starts with: the
    framing (magic byte, schema id, message indexes) a whole batch shares, so that its
    messages can be read in place past it. None when a value is shorter than ``size`` bytes,
    two values differ in them, or every value is null.

    One pass over the column's buffers in the compiled twin
    (:mod:`spark_kafka_py.formats.protobuf._accel`); Arrow kernels (lengths, then the distinct
    heads) without it. Nothing is copied but the ``size`` bytes returned.

    Raises:
        ValueError: ``values`` is not ``binary`` or ``large_binary``, or ``size`` < 0.
    """
    if _ACCEL is not None:
        head: bytes | None = _ACCEL.common_head(values, size)
        return head
    if not (pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
        raise ValueError(f"a binary column was expected, not {values.type}")
    if size < 0:
        raise ValueError(f"size must be >= 0, not {size}")
    present = values.drop_null() if values.null_count else values
    if len(present) == 0 or pc.min(pc.binary_length(present)).as_py() < size:
        return None
    if size == 0:
        return b""
    heads = pc.unique(pc.binary_slice(present, 0, size))
    if len(heads) != 1:
        return None
    return bytes(heads[0].as_py())
