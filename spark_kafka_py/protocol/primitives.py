"""Kafka wire-protocol primitive types: a bounds-checked :class:`Reader` and a :class:`Writer`.

Source: Apache Kafka protocol guide, "Protocol Primitive Types"
(https://kafka.apache.org/protocol#protocol_types), and KIP-482 (compact strings, bytes and
arrays, unsigned varints, tagged fields) for flexible versions.

Encoding summary (all integers big-endian, two's complement):

==================  =======================================================================
``int8..int64``     fixed width signed integers; ``uint16``/``uint32`` unsigned
``varint/varlong``  zig-zag encoded, then written 7 bits per byte, low group first, high bit
                    set on every byte but the last (protobuf style); at most 5/10 bytes
``uvarint``         unsigned varint (no zig-zag), at most 5 bytes (32 bits)
``string``          int16 length N then N UTF-8 bytes; nullable: N = -1 is null
``compact string``  uvarint N+1 then N bytes; nullable: uvarint 0 is null
``bytes``           int32 length N then N bytes; nullable: N = -1 is null
``compact bytes``   uvarint N+1 then N bytes; uvarint 0 is null
``array``           int32 count N then N elements; N = -1 is null (nullable only)
``compact array``   uvarint N+1 then N elements; uvarint 0 is null
``uuid``            16 bytes
``tagged fields``   uvarint count, then per field: uvarint tag, uvarint size, size bytes
==================  =======================================================================

Every :class:`Reader` method checks its bounds before touching the buffer and raises
:class:`~spark_kafka_py.errors.KafkaProtocolError` naming the field: never ``IndexError`` or
``struct.error``. Byte fields are returned as zero-copy ``memoryview`` slices of the input.
Every :class:`Writer` method checks its value's range and raises
:class:`~spark_kafka_py.errors.LocalProtocolError` for values the wire type cannot carry.
"""

from __future__ import annotations

import builtins  # Reader and Writer have methods named bool and bytes
import struct
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from spark_kafka_py.errors import KafkaProtocolError, LocalProtocolError

__all__ = [
    "INT16_MAX",
    "ZERO_UUID",
    "Reader",
    "Writer",
    "uvarint_size",
    "zigzag_decode",
    "zigzag_encode",
]

#: Largest length of a non-compact string (int16 length prefix).
INT16_MAX = 0x7FFF

_V = TypeVar("_V")

#: Kafka's "unset" topic id / uuid default (``Uuid.ZERO_UUID`` in Kafka's Java client).
ZERO_UUID = uuid.UUID(int=0)

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

#: Maximum encoded size of a 32-bit unsigned varint and of a 64-bit varlong.
_MAX_UVARINT_BYTES = 5
_MAX_UVARLONG_BYTES = 10


def zigzag_encode(n: int, bits: int = 64) -> int:
    """Map a signed integer to an unsigned one (0->0, -1->1, 1->2, ...), protobuf zig-zag."""
    return (n << 1) ^ (n >> (bits - 1))


def zigzag_decode(z: int) -> int:
    """Inverse of :func:`zigzag_encode`."""
    return (z >> 1) ^ -(z & 1)


def uvarint_size(n: int) -> int:
    """Number of bytes :meth:`Writer.uvarint` uses for ``n`` (``n >= 0``)."""
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


class Reader:
    """Bounds-checked reader over a buffer (bytes, bytearray or memoryview).

    Args:
        data: the bytes to read; kept as a ``memoryview``, never copied.
        start: first position to read (bytes).
        end: position after the last readable byte (default: end of ``data``).

    Every ``field`` argument is a name used in error messages only. Reads past ``end`` raise
    :class:`KafkaProtocolError` and leave the position unchanged.
    """

    __slots__ = ("_buf", "_end", "_pos")

    def __init__(
        self, data: bytes | bytearray | memoryview, start: int = 0, end: int | None = None
    ):
        buf = data if isinstance(data, memoryview) else memoryview(data)
        if buf.ndim != 1 or buf.itemsize != 1:
            buf = buf.cast("B")
        self._buf = buf
        self._end = len(buf) if end is None else end
        if not 0 <= start <= self._end <= len(buf):
            raise ValueError(f"bad reader bounds start={start} end={end} len={len(buf)}")
        self._pos = start

    # -- position -------------------------------------------------------------------------
    @property
    def position(self) -> int:
        """Current read position (bytes from the start of the underlying buffer)."""
        return self._pos

    @property
    def remaining(self) -> int:
        """Bytes left before ``end``."""
        return self._end - self._pos

    def at_end(self) -> bool:
        """True when every byte up to ``end`` has been read."""
        return self._pos >= self._end

    def expect_end(self, what: str) -> None:
        """Raise :class:`KafkaProtocolError` if unread bytes remain (``what`` names the frame)."""
        if self._pos != self._end:
            raise KafkaProtocolError(
                f"{what}: {self._end - self._pos} unexpected trailing bytes after decoding"
            )

    def _need(self, n: int, field: str) -> int:
        pos = self._pos
        if n > self._end - pos:
            raise KafkaProtocolError(
                f"truncated {field}: needs {n} bytes at offset {pos}, only {self._end - pos} left"
            )
        self._pos = pos + n
        return pos

    def skip(self, n: int, field: str = "skipped bytes") -> None:
        """Advance ``n`` bytes (bounds-checked)."""
        if n < 0:
            raise KafkaProtocolError(f"negative size {n} for {field}")
        self._need(n, field)

    def unpack(self, st: struct.Struct, field: str) -> tuple[Any, ...]:
        """Read ``st.size`` bytes as ``st`` (several fixed-width fields in one call)."""
        return st.unpack_from(self._buf, self._need(st.size, field))

    def peek_structs(self, st: struct.Struct, n: int) -> list[tuple[Any, ...]] | None:
        """The next ``n`` consecutive ``st`` records, without reading them; ``None`` when
        fewer than ``n * st.size`` bytes are left."""
        size = st.size * n
        pos = self._pos
        if size > self._end - pos:
            return None
        return list(st.iter_unpack(self._buf[pos : pos + size]))

    def empty_tagged_fields(self) -> bool:
        """Consume a tagged fields section if it is empty (a count of 0, one byte) and say so;
        otherwise read nothing and return False (KIP-482)."""
        pos = self._pos
        if pos < self._end and self._buf[pos] == 0:
            self._pos = pos + 1
            return True
        return False

    def sub_reader(self, n: int, field: str) -> Reader:
        """A reader over the next ``n`` bytes; this reader advances past them."""
        if n < 0:
            raise KafkaProtocolError(f"negative size {n} for {field}")
        pos = self._need(n, field)
        return Reader(self._buf, pos, pos + n)

    # -- fixed width ----------------------------------------------------------------------
    def bool(self, field: str = "bool") -> bool:
        """Read a boolean (one byte, any non-zero value is true)."""
        pos = self._need(1, field)
        return self._buf[pos] != 0

    def int8(self, field: str = "int8") -> int:
        """Read a signed 8-bit integer."""
        value: int = _I8.unpack_from(self._buf, self._need(1, field))[0]
        return value

    def int16(self, field: str = "int16") -> int:
        """Read a signed 16-bit big-endian integer."""
        value: int = _I16.unpack_from(self._buf, self._need(2, field))[0]
        return value

    def uint16(self, field: str = "uint16") -> int:
        """Read an unsigned 16-bit big-endian integer."""
        value: int = _U16.unpack_from(self._buf, self._need(2, field))[0]
        return value

    def int32(self, field: str = "int32") -> int:
        """Read a signed 32-bit big-endian integer."""
        value: int = _I32.unpack_from(self._buf, self._need(4, field))[0]
        return value

    def uint32(self, field: str = "uint32") -> int:
        """Read an unsigned 32-bit big-endian integer."""
        value: int = _U32.unpack_from(self._buf, self._need(4, field))[0]
        return value

    def int64(self, field: str = "int64") -> int:
        """Read a signed 64-bit big-endian integer."""
        value: int = _I64.unpack_from(self._buf, self._need(8, field))[0]
        return value

    def float64(self, field: str = "float64") -> float:
        """Read an IEEE 754 double."""
        value: float = _F64.unpack_from(self._buf, self._need(8, field))[0]
        return value

    def uuid(self, field: str = "uuid") -> uuid.UUID:
        """Read a 16-byte UUID."""
        pos = self._need(16, field)
        return uuid.UUID(bytes=bytes(self._buf[pos : pos + 16]))

    # -- varints --------------------------------------------------------------------------
    def _uvar(self, max_bytes: int, field: str) -> int:
        buf, pos, end = self._buf, self._pos, self._end
        result = 0
        shift = 0
        for i in range(max_bytes):
            if pos + i >= end:
                raise KafkaProtocolError(f"truncated varint in {field} at offset {self._pos}")
            b = buf[pos + i]
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                self._pos = pos + i + 1
                return result
            shift += 7
        raise KafkaProtocolError(
            f"varint in {field} at offset {pos} is longer than {max_bytes} bytes"
        )

    def uvarint(self, field: str = "uvarint") -> int:
        """Read an unsigned varint of at most 32 bits (KIP-482)."""
        value = self._uvar(_MAX_UVARINT_BYTES, field)
        if value > 0xFFFFFFFF:
            raise KafkaProtocolError(f"unsigned varint {value} in {field} exceeds 32 bits")
        return value

    def varint(self, field: str = "varint") -> int:
        """Read a zig-zag signed varint of at most 32 bits."""
        value = self._uvar(_MAX_UVARINT_BYTES, field)
        if value > 0xFFFFFFFF:
            raise KafkaProtocolError(f"varint {value} in {field} exceeds 32 bits")
        return zigzag_decode(value)

    def uvarlong(self, field: str = "uvarlong") -> int:
        """Read an unsigned varint of at most 64 bits."""
        value = self._uvar(_MAX_UVARLONG_BYTES, field)
        if value > 0xFFFFFFFFFFFFFFFF:
            raise KafkaProtocolError(f"unsigned varlong in {field} exceeds 64 bits")
        return value

    def varlong(self, field: str = "varlong") -> int:
        """Read a zig-zag signed varint of at most 64 bits."""
        return zigzag_decode(self.uvarlong(field))

    # -- lengths --------------------------------------------------------------------------
    def _length(
        self, raw: int, nullable: builtins.bool, field: str, min_item: int = 1
    ) -> int | None:
        """Validate a decoded length/count; ``-1`` means null. Returns None for null."""
        if raw == -1:
            if not nullable:
                raise KafkaProtocolError(f"null {field} where the field is not nullable")
            return None
        if raw < 0:
            raise KafkaProtocolError(f"negative length {raw} for {field}")
        if raw * min_item > self._end - self._pos:
            raise KafkaProtocolError(
                f"length {raw} of {field} exceeds the {self._end - self._pos} bytes left"
            )
        return raw

    def _compact_length(self, field: str, nullable: builtins.bool, min_item: int = 1) -> int | None:
        return self._length(self.uvarint(field) - 1, nullable, field, min_item)

    def _text(self, n: int, field: str) -> str:
        pos = self._need(n, field)
        try:
            return str(self._buf[pos : pos + n], "utf-8")
        except UnicodeDecodeError as exc:
            raise KafkaProtocolError(f"{field} is not valid UTF-8: {exc}") from None

    # -- strings --------------------------------------------------------------------------
    def string(self, field: str = "string") -> str:
        """Read a non-null int16-length string."""
        n = self._length(self.int16(field), False, field)
        assert n is not None
        return self._text(n, field)

    def nullable_string(self, field: str = "string") -> str | None:
        """Read an int16-length string where length -1 is null."""
        n = self._length(self.int16(field), True, field)
        return None if n is None else self._text(n, field)

    def compact_string(self, field: str = "string") -> str:
        """Read a non-null compact (uvarint N+1 length) string."""
        n = self._compact_length(field, False)
        assert n is not None
        return self._text(n, field)

    def compact_nullable_string(self, field: str = "string") -> str | None:
        """Read a compact string where length 0 (N+1 encoding) is null."""
        n = self._compact_length(field, True)
        return None if n is None else self._text(n, field)

    # -- bytes ----------------------------------------------------------------------------
    def raw(self, n: int, field: str = "bytes") -> memoryview:
        """Read exactly ``n`` bytes as a zero-copy memoryview slice."""
        if n < 0:
            raise KafkaProtocolError(f"negative length {n} for {field}")
        pos = self._need(n, field)
        return self._buf[pos : pos + n]

    def bytes(self, field: str = "bytes") -> memoryview:
        """Read non-null int32-length bytes (zero-copy)."""
        n = self._length(self.int32(field), False, field)
        assert n is not None
        return self.raw(n, field)

    def nullable_bytes(self, field: str = "bytes") -> memoryview | None:
        """Read int32-length bytes where length -1 is null (zero-copy)."""
        n = self._length(self.int32(field), True, field)
        return None if n is None else self.raw(n, field)

    def compact_bytes(self, field: str = "bytes") -> memoryview:
        """Read non-null compact bytes (zero-copy)."""
        n = self._compact_length(field, False)
        assert n is not None
        return self.raw(n, field)

    def compact_nullable_bytes(self, field: str = "bytes") -> memoryview | None:
        """Read compact bytes where length 0 (N+1 encoding) is null (zero-copy)."""
        n = self._compact_length(field, True)
        return None if n is None else self.raw(n, field)

    # -- arrays ---------------------------------------------------------------------------
    def array_length(
        self,
        field: str = "array",
        *,
        compact: builtins.bool,
        nullable: builtins.bool,
        min_item_size: int = 1,
    ) -> int | None:
        """Read an array count (int32, or compact uvarint N+1); ``None`` for a null array.

        The count is checked against the bytes left (``count * min_item_size``) before any
        element is allocated, so a forged count cannot make the decoder allocate memory.
        """
        if compact:
            return self._compact_length(field, nullable, max(1, min_item_size))
        return self._length(self.int32(field), nullable, field, max(1, min_item_size))

    def array(
        self,
        read_item: Callable[[Reader], object],
        field: str = "array",
        *,
        compact: builtins.bool = False,
        nullable: builtins.bool = False,
        min_item_size: int = 1,
    ) -> tuple[object, ...] | None:
        """Read an array with ``read_item(reader)`` per element; ``None`` for a null array."""
        n = self.array_length(
            field, compact=compact, nullable=nullable, min_item_size=min_item_size
        )
        if n is None:
            return None
        return tuple(read_item(self) for _ in range(n))

    # -- tagged fields --------------------------------------------------------------------
    def tagged_fields(self, field: str = "tagged fields") -> list[tuple[int, Reader]]:
        """Read a KIP-482 tagged fields section.

        Returns ``[(tag, reader over the field's bytes)]``; callers decode the tags they know
        and ignore the rest (unknown tags are skipped, as Kafka does).
        """
        count = self.uvarint(f"{field} count")
        # every tagged field takes at least 2 bytes (tag, size)
        if count * 2 > self.remaining:
            raise KafkaProtocolError(
                f"{field}: count {count} exceeds the {self.remaining} bytes left"
            )
        out: list[tuple[int, Reader]] = []
        for _ in range(count):
            tag = self.uvarint(f"{field} tag")
            size = self.uvarint(f"{field} tag {tag} size")
            out.append((tag, self.sub_reader(size, f"{field} tag {tag}")))
        return out

    def skip_tagged_fields(self, field: str = "tagged fields") -> None:
        """Read and discard a tagged fields section."""
        self.tagged_fields(field)


class Writer:
    """Append-only encoder into a ``bytearray``.

    Values outside a wire type's range raise :class:`LocalProtocolError` (we were asked to
    encode something the protocol cannot express).
    """

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def getvalue(self) -> bytes:
        """The encoded bytes so far."""
        return bytes(self._buf)

    @property
    def buffer(self) -> bytearray:
        """The underlying buffer (not copied)."""
        return self._buf

    def __len__(self) -> int:
        return len(self._buf)

    def _pack(self, st: struct.Struct, value: object, field: str) -> None:
        try:
            self._buf += st.pack(value)
        except struct.error as exc:
            raise LocalProtocolError(f"cannot encode {field}={value!r}: {exc}") from None

    # -- fixed width ----------------------------------------------------------------------
    def bool(self, value: bool, field: str = "bool") -> None:
        """Write a boolean as one byte (0 or 1)."""
        self._buf.append(1 if value else 0)

    def int8(self, value: int, field: str = "int8") -> None:
        """Write a signed 8-bit integer."""
        self._pack(_I8, value, field)

    def int16(self, value: int, field: str = "int16") -> None:
        """Write a signed 16-bit integer."""
        self._pack(_I16, value, field)

    def uint16(self, value: int, field: str = "uint16") -> None:
        """Write an unsigned 16-bit integer."""
        self._pack(_U16, value, field)

    def int32(self, value: int, field: str = "int32") -> None:
        """Write a signed 32-bit integer."""
        self._pack(_I32, value, field)

    def uint32(self, value: int, field: str = "uint32") -> None:
        """Write an unsigned 32-bit integer."""
        self._pack(_U32, value, field)

    def int64(self, value: int, field: str = "int64") -> None:
        """Write a signed 64-bit integer."""
        self._pack(_I64, value, field)

    def float64(self, value: float, field: str = "float64") -> None:
        """Write an IEEE 754 double."""
        self._pack(_F64, value, field)

    def uuid(self, value: uuid.UUID, field: str = "uuid") -> None:
        """Write a 16-byte UUID."""
        if not isinstance(value, uuid.UUID):
            raise LocalProtocolError(f"cannot encode {field}={value!r}: not a uuid.UUID")
        self._buf += value.bytes

    # -- varints --------------------------------------------------------------------------
    def _uvar(self, value: int) -> None:
        buf = self._buf
        while value >= 0x80:
            buf.append((value & 0x7F) | 0x80)
            value >>= 7
        buf.append(value)

    def uvarint(self, value: int, field: str = "uvarint") -> None:
        """Write an unsigned varint (0 <= value < 2**32)."""
        if not 0 <= value <= 0xFFFFFFFF:
            raise LocalProtocolError(f"cannot encode {field}={value!r} as an unsigned varint")
        self._uvar(value)

    def varint(self, value: int, field: str = "varint") -> None:
        """Write a zig-zag varint (-2**31 <= value < 2**31)."""
        if not -0x80000000 <= value <= 0x7FFFFFFF:
            raise LocalProtocolError(f"cannot encode {field}={value!r} as a varint")
        self._uvar(zigzag_encode(value, 32))

    def uvarlong(self, value: int, field: str = "uvarlong") -> None:
        """Write an unsigned varint of up to 64 bits."""
        if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
            raise LocalProtocolError(f"cannot encode {field}={value!r} as an unsigned varlong")
        self._uvar(value)

    def varlong(self, value: int, field: str = "varlong") -> None:
        """Write a zig-zag varint of up to 64 bits."""
        if not -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
            raise LocalProtocolError(f"cannot encode {field}={value!r} as a varlong")
        self._uvar(zigzag_encode(value, 64))

    # -- strings and bytes ----------------------------------------------------------------
    @staticmethod
    def _utf8(value: object, field: str) -> bytes:
        if not isinstance(value, str):
            raise LocalProtocolError(f"cannot encode {field}={value!r}: not a str")
        return value.encode("utf-8")

    def string(self, value: str, field: str = "string") -> None:
        """Write a non-null int16-length string (at most 32,767 UTF-8 bytes)."""
        self.nullable_string(self._nonnull(value, field), field)

    def nullable_string(self, value: str | None, field: str = "string") -> None:
        """Write an int16-length string; ``None`` is written as length -1."""
        if value is None:
            self.int16(-1, field)
            return
        data = self._utf8(value, field)
        if len(data) > INT16_MAX:
            raise LocalProtocolError(
                f"{field} is {len(data)} UTF-8 bytes, more than {INT16_MAX} (int16 length)"
            )
        self.int16(len(data), field)
        self._buf += data

    def compact_string(self, value: str, field: str = "string") -> None:
        """Write a non-null compact string."""
        self.compact_nullable_string(self._nonnull(value, field), field)

    def compact_nullable_string(self, value: str | None, field: str = "string") -> None:
        """Write a compact string; ``None`` is written as uvarint 0."""
        if value is None:
            self._uvar(0)
            return
        data = self._utf8(value, field)
        self.uvarint(len(data) + 1, field)
        self._buf += data

    @staticmethod
    def _nonnull(value: _V, field: str) -> _V:
        """``value``, checked at run time not to be ``None`` (callers' types already say so)."""
        if value is None:
            raise LocalProtocolError(f"{field} is not nullable in this version")
        return value

    def raw(self, value: bytes | bytearray | memoryview, field: str = "bytes") -> None:
        """Append bytes with no length prefix."""
        try:
            self._buf += value
        except TypeError:
            raise LocalProtocolError(f"cannot encode {field}: not bytes-like") from None

    def bytes(self, value: bytes | bytearray | memoryview, field: str = "bytes") -> None:
        """Write non-null int32-length bytes."""
        self.nullable_bytes(self._nonnull(value, field), field)

    def nullable_bytes(
        self, value: builtins.bytes | bytearray | memoryview | None, field: str = "bytes"
    ) -> None:
        """Write int32-length bytes; ``None`` is written as length -1."""
        if value is None:
            self.int32(-1, field)
            return
        self.int32(_nbytes(value, field), field)
        self.raw(value, field)

    def compact_bytes(
        self, value: builtins.bytes | bytearray | memoryview, field: str = "bytes"
    ) -> None:
        """Write non-null compact bytes."""
        self.compact_nullable_bytes(self._nonnull(value, field), field)

    def compact_nullable_bytes(
        self, value: builtins.bytes | bytearray | memoryview | None, field: str = "bytes"
    ) -> None:
        """Write compact bytes; ``None`` is written as uvarint 0."""
        if value is None:
            self._uvar(0)
            return
        self.uvarint(_nbytes(value, field) + 1, field)
        self.raw(value, field)

    # -- arrays and tagged fields ---------------------------------------------------------
    def array_length(
        self,
        count: int | None,
        field: str = "array",
        *,
        compact: builtins.bool,
        nullable: builtins.bool,
    ) -> None:
        """Write an array count; ``None`` is a null array (only if ``nullable``)."""
        if count is None:
            if not nullable:
                raise LocalProtocolError(f"{field} is not nullable in this version")
            if compact:
                self._uvar(0)
            else:
                self.int32(-1, field)
        elif compact:
            self.uvarint(count + 1, field)
        else:
            self.int32(count, field)

    def tagged_fields(self, fields: list[tuple[int, builtins.bytes]] | None = None) -> None:
        """Write a tagged fields section from ``[(tag, encoded bytes)]`` in ascending tag order."""
        if not fields:
            self._uvar(0)
            return
        self._uvar(len(fields))
        for tag, data in sorted(fields, key=lambda item: item[0]):
            self._uvar(tag)
            self._uvar(len(data))
            self._buf += data


def _nbytes(value: object, field: str) -> int:
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, memoryview):
        return value.nbytes
    raise LocalProtocolError(f"cannot encode {field}: {type(value).__name__} is not bytes-like")
