"""Arrow columns -> Protobuf payloads, with spark-protobuf's ``to_protobuf`` semantics.

The encoder writes the Protobuf wire format (Protobuf encoding specification: varints, zigzag,
fixed 32/64-bit little-endian, length-delimited) straight from Arrow arrays, one column at a
time, with a plan built once (per field: its tag bytes and a value writer) by checking the
Arrow type against the message descriptor, as spark-protobuf's ``ProtobufSerializer`` checks
the Catalyst type against it:

- a struct is a message; its fields are matched to the message's fields **by name** (exactly,
  else case-insensitively when that is unambiguous, as Spark's default resolver); a struct
  field with no message field is an error naming it; message fields the struct lacks stay
  unset; a ``required`` (proto2) field the struct lacks is an error;
- a null struct field leaves the message field unset (a ``required`` scalar: its default);
  a null row gives a null payload;
- Arrow -> Protobuf: bool -> bool; int8/16/32 and date32 (days) -> the 32-bit integer types;
  int64 -> the 64-bit integer types; int64 -> uint32/fixed32 (0..2**32-1, as
  ``upcast.unsigned.ints`` reads them) and decimal(p, 0) -> uint64/fixed64 (0..2**64-1); an
  int32 (int64) written to uint32 (uint64) keeps its bits (Java's int/long, as spark-protobuf
  reads them back); float/double; string -> string, or -> enum by value name; int32 -> enum by
  number (a number or name the enum does not declare is an error); binary -> bytes;
  timestamp -> ``google.protobuf.Timestamp`` (seconds = floor(micros / 10**6), nanos the
  rest * 1000); duration -> ``google.protobuf.Duration`` (as ``java.time.Duration``: seconds
  floored, nanos 0..999,999,999) or an int64 field (microseconds, Spark's day-time interval as
  a long); list -> repeated (packed for packable scalars unless ``[packed = false]``);
  map -> map field; struct -> message;
- a null element inside a list is an error (protobuf's repeated fields hold no null); a null
  map value writes the entry with the value's default, as spark-protobuf;
- fields are written in field-number order; a field without presence (proto3 implicit)
  holding its zero is not written (protobuf's canonical encoding), a field with presence is.

Type mismatches are found once, at construction
(:class:`~spark_kafka_py.formats.errors.ProtobufSchemaError` naming the field's path);
values that do not fit (an unknown enum name, a null list element, an out-of-range unsigned)
raise :class:`~spark_kafka_py.formats.errors.ProtobufEncodeError` naming the row and path.
Sans-I/O.

Acceleration: :meth:`ProtobufEncoder.encode` (the sink's and ``to_protobuf``'s path) runs the
plan of the optional Cython extension :mod:`spark_kafka_py.formats.protobuf._encode_accel`
when it was built (``setup.py``) and supports the pair (its module docstring lists what it
does not), with the same bytes (``tests/formats/protobuf/test_encode_accel.py`` compares both).
A batch it refuses (a value that does not fit, a string that is not UTF-8, a time Arrow's safe
cast refuses) is encoded by this module's plan, whose bytes or error are therefore the ones
given. ``SPARK_KAFKA_PY_PURE=1`` or ``ProtobufEncoder(..., accelerate=False)`` keeps this
module's plan; ``ProtobufEncoder.implementation`` says which (``"accel"`` or ``"pure"``). The
accelerated plan binds a column's buffers under a lock for the length of a call, so an encoder
may be shared between threads.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf.descriptor import Descriptor, FieldDescriptor  # type: ignore[import-untyped]

from spark_kafka_py.formats._extension import load_extension
from spark_kafka_py.formats.errors import ProtobufEncodeError, ProtobufSchemaError
from spark_kafka_py.formats.protobuf.descriptors import ProtobufSchema
from spark_kafka_py.formats.protobuf.types import ProtobufOptions

if TYPE_CHECKING:
    from spark_kafka_py.formats.protobuf._encode_accel import EncodePlan

__all__ = ["ProtobufEncoder", "encode_protobuf"]

# wire types (Protobuf encoding specification, "Message Structure")
_VARINT: Final = 0
_I64: Final = 1
_LEN: Final = 2
_I32: Final = 5

_U64: Final = 0xFFFF_FFFF_FFFF_FFFF


def _varint_slow(v: int) -> bytes:
    v &= _U64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


#: Varints of 0..16383 (one or two bytes), precomputed: most lengths, tags and small ints.
_SMALL: Final = [_varint_slow(i) for i in range(1 << 14)]
_SMALL_LIMIT: Final = 1 << 14


def _varint(v: int) -> bytes:
    """A varint of ``v`` (negative: its 64-bit two's complement, 10 bytes)."""
    if 0 <= v < _SMALL_LIMIT:
        return _SMALL[v]
    return _varint_slow(v)


def _tag(number: int, wire: int) -> bytes:
    return _varint_slow((number << 3) | wire)


#: A marker for a value not found (an enum name the enum lacks).
_UNKNOWN: Final = b"\xff unknown"


class _Bad(Exception):
    """A value that does not fit; ``index`` is its position in the array being encoded."""

    def __init__(self, index: int, path: str, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.path = path
        self.reason = reason


# A value writer: an Arrow array -> one bytes per element (the field's payload without its
# tag; None for a null element).
Writer = Callable[[pa.Array], list[Any]]

_INT32_TYPES: Final = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_FIXED32,
}
_INT64_TYPES: Final = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
}
_UNSIGNED: Final = {
    FieldDescriptor.TYPE_UINT32: 32,
    FieldDescriptor.TYPE_FIXED32: 32,
    FieldDescriptor.TYPE_UINT64: 64,
    FieldDescriptor.TYPE_FIXED64: 64,
}
_TYPE_NAMES: Final = {
    v: k.removeprefix("TYPE_").lower()
    for k, v in vars(FieldDescriptor).items()
    if k.startswith("TYPE_") and isinstance(v, int)
}


def _wire_type(fd: FieldDescriptor) -> int:
    t = fd.type
    if t in (
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_FLOAT,
    ):
        return _I32
    if t in (
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_DOUBLE,
    ):
        return _I64
    if t in (
        FieldDescriptor.TYPE_STRING,
        FieldDescriptor.TYPE_BYTES,
        FieldDescriptor.TYPE_MESSAGE,
        FieldDescriptor.TYPE_GROUP,
    ):
        return _LEN
    return _VARINT


def _is_seconds_nanos(d: Descriptor, short_name: str) -> bool:
    f = d.fields
    return d.name == short_name and len(f) == 2 and f[0].name == "seconds" and f[1].name == "nanos"


def _float_writer(dtype: str) -> Writer:
    """float/double: little-endian IEEE 754 (``dtype`` ``<f4`` / ``<f8``), all values packed
    by numpy at once, then cut per value."""
    width = np.dtype(dtype).itemsize

    def write(a: pa.Array) -> list[Any]:
        data = a.fill_null(0).to_numpy(zero_copy_only=False).astype(dtype).tobytes()
        out: list[Any] = [data[i : i + width] for i in range(0, len(data), width)]
        if a.null_count:
            valid = a.is_valid().to_pylist()
            out = [x if ok else None for x, ok in zip(out, valid, strict=True)]
        return out

    return write


def _int_values(array: pa.Array) -> list[Any]:
    if pa.types.is_date32(array.type):
        array = array.cast(pa.int32())
    return array.to_pylist()  # type: ignore[no-any-return]


def _scalar_writer(fd: FieldDescriptor, arrow: pa.DataType, path: str) -> Writer | None:
    """The writer of a scalar (non-message) field from ``arrow``, or None if it does not fit."""
    t = fd.type
    is_int32_src = pa.types.is_int8(arrow) or pa.types.is_int16(arrow) or pa.types.is_int32(arrow)
    is_int32_src = is_int32_src or pa.types.is_date32(arrow)
    if t == FieldDescriptor.TYPE_BOOL and pa.types.is_boolean(arrow):
        return lambda a: [None if v is None else (b"\x01" if v else b"\x00") for v in a.to_pylist()]
    if t in _INT32_TYPES and is_int32_src:
        return _int_writer(t, path, bits_from=32)
    if t in _INT32_TYPES and pa.types.is_int64(arrow) and t in _UNSIGNED:
        return _int_writer(t, path, bits_from=0)  # upcast uint32: range checked
    if t in _INT64_TYPES and (pa.types.is_int64(arrow) or is_int32_src):
        return _int_writer(t, path, bits_from=64)
    if t in _INT64_TYPES and pa.types.is_duration(arrow):  # day-time interval as a long
        return _int_writer(t, path, bits_from=64, cast=pa.duration("us"))
    if t in _INT64_TYPES and t in _UNSIGNED and pa.types.is_decimal(arrow) and arrow.scale == 0:
        return _int_writer(t, path, bits_from=0, decimal=True)
    if t == FieldDescriptor.TYPE_FLOAT and pa.types.is_float32(arrow):
        return _float_writer("<f4")
    if t == FieldDescriptor.TYPE_DOUBLE and pa.types.is_float64(arrow):
        return _float_writer("<f8")
    is_text = pa.types.is_string(arrow) or pa.types.is_large_string(arrow)
    is_binary = pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow)
    if t == FieldDescriptor.TYPE_STRING and is_text:
        return _len_writer(lambda a: [None if v is None else v.encode() for v in a.to_pylist()])
    if t == FieldDescriptor.TYPE_BYTES and is_binary:
        return _len_writer(lambda a: a.to_pylist())
    if t == FieldDescriptor.TYPE_ENUM and is_text:
        numbers = {v.name: v.number for v in fd.enum_type.values}
        declared = ", ".join(numbers)
        enum_name = fd.enum_type.full_name

        payloads: dict[Any, Any] = {name: _varint(n) for name, n in numbers.items()}
        payloads[None] = None

        def by_name(a: pa.Array) -> list[Any]:
            names = a.to_pylist()
            get = payloads.get
            out = [get(v, _UNKNOWN) for v in names]
            if _UNKNOWN in out:  # the first name the enum lacks
                i = out.index(_UNKNOWN)
                raise _Bad(i, path, f"{names[i]!r} is not a value of enum {enum_name} ({declared})")
            return out

        return by_name
    if t == FieldDescriptor.TYPE_ENUM and is_int32_src:
        known = {v.number for v in fd.enum_type.values}
        enum_name = fd.enum_type.full_name

        def by_number(a: pa.Array) -> list[Any]:
            out: list[Any] = []
            for i, v in enumerate(_int_values(a)):  # a date32: its day number
                if v is None:
                    out.append(None)
                    continue
                if v not in known:
                    raise _Bad(i, path, f"{v} is not a number of enum {enum_name}")
                out.append(_varint(v))
            return out

        return by_number
    return None


def _len_writer(values_of: Callable[[pa.Array], list[Any]]) -> Writer:
    def write(a: pa.Array) -> list[Any]:
        small, limit, slow = _SMALL, _SMALL_LIMIT, _varint_slow
        return [
            None if b is None else (small[n] if (n := len(b)) < limit else slow(n)) + b
            for b in values_of(a)
        ]

    return write


def _int_writer(
    t: int, path: str, bits_from: int, cast: pa.DataType | None = None, decimal: bool = False
) -> Writer:
    """Integers into field type ``t``. ``bits_from``: 32/64 = the source is a signed int of
    that width whose bits an unsigned field keeps; 0 = the source holds the unsigned value
    itself (int64 -> uint32, decimal -> uint64), range-checked."""
    unsigned = _UNSIGNED.get(t)
    if t in (FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_SFIXED32):
        pack: Callable[[int], bytes] = struct.Struct("<I").pack
        mask = 0xFFFF_FFFF
        encode: Callable[[int], bytes] = lambda v: pack(v & mask)  # noqa: E731
    elif t in (FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64):
        pack = struct.Struct("<Q").pack
        encode = lambda v: pack(v & _U64)  # noqa: E731
    elif t == FieldDescriptor.TYPE_SINT32:
        encode = lambda v: _varint(((v << 1) ^ (v >> 31)) & 0xFFFF_FFFF)  # noqa: E731
    elif t == FieldDescriptor.TYPE_SINT64:
        encode = lambda v: _varint(((v << 1) ^ (v >> 63)) & _U64)  # noqa: E731
    elif t == FieldDescriptor.TYPE_UINT32:
        encode = lambda v: _varint(v & 0xFFFF_FFFF)  # noqa: E731
    else:  # int32 (negative: 10 bytes, sign-extended), int64, uint64
        encode = _varint
    check = unsigned is not None and bits_from == 0
    limit = 1 << (unsigned or 64)

    def write(a: pa.Array) -> list[Any]:
        if cast is not None:
            a = a.cast(cast).cast(pa.int64())
        values = _int_values(a)
        if decimal:
            values = [None if v is None else int(v) for v in values]
        if check:
            for i, v in enumerate(values):
                if v is not None and not 0 <= v < limit:
                    raise _Bad(
                        i, path, f"{v} is outside the range of {_TYPE_NAMES[t]} (0..{limit - 1})"
                    )
        return [None if v is None else encode(v) for v in values]

    return write


def _timestamp_writer(a: pa.Array) -> list[Any]:
    micros = a.cast(pa.timestamp("us", tz=a.type.tz)).cast(pa.int64()).to_pylist()
    return [None if m is None else _seconds_nanos(*divmod(m, 1_000_000)) for m in micros]


def _duration_writer(a: pa.Array) -> list[Any]:
    micros = a.cast(pa.duration("us")).cast(pa.int64()).to_pylist()
    return [None if m is None else _seconds_nanos(*divmod(m, 1_000_000)) for m in micros]


def _seconds_nanos(seconds: int, micros: int) -> bytes:
    """A Timestamp/Duration message payload: seconds (field 1), nanos (field 2), zeros
    omitted (proto3)."""
    body = b""
    if seconds:
        body = b"\x08" + _varint(seconds)
    if micros:
        body += b"\x10" + _varint(micros * 1000)
    return _varint(len(body)) + body


@dataclass(frozen=True)
class _Field:
    """One struct field matched to one message field."""

    column: int  # the struct field's index
    number: int
    tag: bytes
    repeated: bool
    packed: bool
    presence: bool
    is_message: bool
    write: Writer  # element payloads (no tag); for messages/maps: length-prefixed bodies
    default: bytes | None  # a required scalar's default payload (written for a null)
    path: str


def _match(d: Descriptor, arrow: pa.StructType, path: str) -> list[tuple[int, FieldDescriptor]]:
    by_name = d.fields_by_name
    lower: dict[str, list[FieldDescriptor]] = {}
    for f in d.fields:
        lower.setdefault(f.name.lower(), []).append(f)
    out: list[tuple[int, FieldDescriptor]] = []
    for i in range(arrow.num_fields):
        name = arrow.field(i).name
        fd = by_name.get(name)
        if fd is None:
            same = lower.get(name.lower(), [])
            if len(same) == 1:
                fd = same[0]
        if fd is None:
            raise ProtobufSchemaError(
                f"the struct field {name!r} has no field of that name in message {d.full_name} "
                f"(fields: {', '.join(f.name for f in d.fields)})",
                f"{path}.{name}",
            )
        out.append((i, fd))
    matched = {fd.name for _, fd in out}
    if len(matched) != len(out):
        raise ProtobufSchemaError(
            "two struct fields name the same message field", f"{path} ({d.full_name})"
        )
    for f in d.fields:
        if f.is_required and f.name not in matched:
            raise ProtobufSchemaError(
                f"the required field {f.name!r} of message {d.full_name} has no struct field",
                f"{path}.{f.name}",
            )
    return out


class _MessagePlan:
    """How to write one message from a struct array."""

    def __init__(self, d: Descriptor, arrow: pa.StructType, path: str, depth: int) -> None:
        if depth > 100:
            raise ProtobufSchemaError("struct nesting deeper than 100", path)
        fields = []
        for column, fd in _match(d, arrow, path):
            fields.append(
                self._field(fd, arrow.field(column).type, column, f"{path}.{fd.name}", depth)
            )
        fields.sort(key=lambda f: f.number)
        self.fields = fields

    def _field(
        self, fd: FieldDescriptor, arrow: pa.DataType, column: int, path: str, depth: int
    ) -> _Field:
        is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
        write: Writer | None
        if pa.types.is_null(arrow):  # a column of nulls: never written
            return _Field(
                column,
                fd.number,
                b"",
                False,
                False,
                True,
                False,
                lambda a: [None] * len(a),
                None,
                path,
            )
        if is_map:
            if not pa.types.is_map(arrow):
                raise self._mismatch(fd, arrow, path)
            write = _map_writer(fd, arrow, path, depth)
            return _Field(
                column, fd.number, _tag(fd.number, _LEN), True, False, True, True, write, None, path
            )
        if fd.is_repeated:
            if not (pa.types.is_list(arrow) or pa.types.is_large_list(arrow)):
                raise self._mismatch(fd, arrow, path)
            element = _value_writer(fd, arrow.value_type, path, depth)
            if element is None:
                raise self._mismatch(fd, arrow.value_type, path + "[]")
            packed = bool(getattr(fd, "is_packed", False)) and _wire_type(fd) != _LEN
            wire = _LEN if packed else _wire_type(fd)
            write = _list_writer(element, packed, path)
            return _Field(
                column,
                fd.number,
                _tag(fd.number, wire),
                True,
                packed,
                True,
                False,
                write,
                None,
                path,
            )
        write = _value_writer(fd, arrow, path, depth)
        if write is None:
            raise self._mismatch(fd, arrow, path)
        is_message = fd.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP)
        default = None
        if fd.is_required and not is_message:
            default = _default_payload(fd)
        return _Field(
            column,
            fd.number,
            _tag(fd.number, _wire_type(fd)),
            False,
            False,
            bool(fd.has_presence),
            is_message,
            write,
            default,
            path,
        )

    @staticmethod
    def _mismatch(fd: FieldDescriptor, arrow: pa.DataType, path: str) -> ProtobufSchemaError:
        kind = _TYPE_NAMES.get(fd.type, str(fd.type))
        if fd.message_type is not None:
            kind = f"message {fd.message_type.full_name}"
        shape = (
            "map"
            if fd.message_type is not None and fd.message_type.GetOptions().map_entry
            else ("repeated " if fd.is_repeated else "")
        )
        if shape == "map":
            kind = "map"
            shape = ""
        return ProtobufSchemaError(
            f"a column of Arrow type {arrow} cannot be written to the {shape}{kind} field "
            f"{fd.full_name}",
            path,
        )

    def bodies(self, array: pa.StructArray) -> list[Any]:
        """Each row's message body (bytes; None for a null row)."""
        n = len(array)
        parts: list[list[Any]] = []
        # with null rows, children as flatten() gives them: null where the row is null (a
        # child's value under a null row is unspecified and must not be checked)
        children = array.flatten() if array.null_count else None
        for f in self.fields:
            child = array.field(f.column) if children is None else children[f.column]
            if f.tag == b"":
                continue
            values = f.write(child)
            tag = f.tag
            if f.packed:
                parts.append([b"" if v is None else tag + v for v in values])
            elif f.repeated:  # one tag per element (maps: per entry)
                parts.append([b"" if v is None else tag + tag.join(v) for v in values])
            elif f.presence or f.is_message:
                default = f.default
                if default is None:
                    parts.append([b"" if v is None else tag + v for v in values])
                else:
                    parts.append([tag + (default if v is None else v) for v in values])
            else:  # implicit presence: a zero is not written
                zeros = _ZEROS
                parts.append([b"" if v is None or v in zeros else tag + v for v in values])
        rows: list[Any]
        if not parts:
            rows = [b""] * n
        elif len(parts) == 1:
            rows = parts[0]
        else:
            join = b"".join
            rows = [join(t) for t in zip(*parts, strict=True)]
        if array.null_count:
            valid = array.is_valid().to_pylist()
            rows = [r if ok else None for r, ok in zip(rows, valid, strict=True)]
        return rows


#: The payloads of an implicit-presence field's zero (0, false, 0.0, empty, enum value 0),
#: not written; -0.0 is not among them (its bits differ), as protobuf writes it.
_ZEROS: Final = frozenset({b"\x00", b"\x00\x00\x00\x00", b"\x00" * 8})


def _default_payload(fd: FieldDescriptor) -> bytes:
    """The payload of a required scalar field's default (spark-protobuf sets it for a null)."""
    t = fd.type
    v = fd.default_value
    if t == FieldDescriptor.TYPE_STRING:
        b: bytes = v.encode()
        return _varint(len(b)) + b
    if t == FieldDescriptor.TYPE_BYTES:
        raw: bytes = v
        return _varint(len(raw)) + raw
    if t == FieldDescriptor.TYPE_BOOL:
        return b"\x01" if v else b"\x00"
    if t == FieldDescriptor.TYPE_FLOAT:
        return struct.pack("<f", v)
    if t == FieldDescriptor.TYPE_DOUBLE:
        return struct.pack("<d", v)
    w = _int_writer(t, "", bits_from=64)
    return w(pa.array([int(v)], pa.int64()))[0]  # type: ignore[no-any-return]


def _value_writer(fd: FieldDescriptor, arrow: pa.DataType, path: str, depth: int) -> Writer | None:
    """Payloads of one (non-repeated view of a) field from ``arrow``; None if it does not fit."""
    if fd.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        if fd.type == FieldDescriptor.TYPE_GROUP:
            raise ProtobufSchemaError("proto2 groups are not written", path)
        m = fd.message_type
        if pa.types.is_timestamp(arrow) and _is_seconds_nanos(m, "Timestamp"):
            return _timestamp_writer
        if pa.types.is_duration(arrow) and _is_seconds_nanos(m, "Duration"):
            return _duration_writer
        if pa.types.is_struct(arrow):
            plan = _MessagePlan(m, arrow, path, depth + 1)

            def message(a: pa.Array) -> list[Any]:
                return [None if b is None else _varint(len(b)) + b for b in plan.bodies(a)]

            return message
        return None
    return _scalar_writer(fd, arrow, path)


def _first_null(values: pa.Array) -> int:
    return int(np.argmin(np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)))


def _list_writer(element: Writer, packed: bool, path: str) -> Writer:
    def write(a: pa.Array) -> list[Any]:
        values, bounds = _list_parts(a)
        if values.null_count:
            at = _first_null(values)
            row = bisect.bisect_right(bounds, at) - 1
            raise _Bad(row, path, f"a null element at index {at - bounds[row]} of the list")
        encoded = element(values)
        out: list[Any] = []
        join = b"".join
        for i in range(len(a)):
            lo, hi = bounds[i], bounds[i + 1]
            if lo == hi:
                out.append(None)
            elif packed:
                body = join(encoded[lo:hi])
                out.append(_varint(len(body)) + body)
            else:
                out.append(encoded[lo:hi])
        return out

    return write


def _list_parts(a: pa.Array) -> tuple[pa.Array, list[int]]:
    """A list (or map) array's values, null lists skipped, and each row's bounds in them
    (``bounds[i]..bounds[i+1]``; a null row: empty)."""
    if isinstance(a, pa.MapArray):  # as a list of (key, value) entries
        # keys and items are the whole children, offsets the slice's: rebased to the first
        # entry (Arrow takes no null mask with offsets that are a slice)
        offsets = a.offsets
        start = offsets[0].as_py() if len(offsets) else 0
        entries = pa.StructArray.from_arrays([a.keys, a.items], names=["key", "value"])
        entries = entries.slice(start, (offsets[-1].as_py() - start) if len(offsets) else 0)
        mask = a.is_null() if a.null_count else None
        a = pa.ListArray.from_arrays(pc.subtract(offsets, start), entries, mask=mask)
    values = a.flatten()
    lengths = pc.list_value_length(a).fill_null(0).to_numpy(zero_copy_only=False)
    bounds = np.zeros(len(a) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return values, bounds.tolist()


def _map_writer(fd: FieldDescriptor, arrow: pa.MapType, path: str, depth: int) -> Writer:
    entry = fd.message_type
    key_fd = entry.fields_by_name["key"]
    value_fd = entry.fields_by_name["value"]
    key_w = _value_writer(key_fd, arrow.key_type, path + ".key", depth)
    if key_w is None:
        raise _MessagePlan._mismatch(key_fd, arrow.key_type, path + ".key")
    value_w = _value_writer(value_fd, arrow.item_type, path + ".value", depth)
    if value_w is None:
        raise _MessagePlan._mismatch(value_fd, arrow.item_type, path + ".value")
    key_tag = _tag(1, _wire_type(key_fd))
    value_tag = _tag(2, _wire_type(value_fd))
    value_default = (
        b"" if value_fd.message_type is not None else value_tag + _default_payload(value_fd)
    )
    if value_fd.message_type is not None:
        value_default = value_tag + b"\x00"  # an empty message

    def write(a: pa.Array) -> list[Any]:
        entries_array, bounds = _list_parts(a)
        keys = key_w(entries_array.field(0))
        items = value_w(entries_array.field(1))
        entries = []
        for k, v in zip(keys, items, strict=True):
            body = key_tag + k + (value_default if v is None else value_tag + v)
            entries.append(_varint(len(body)) + body)
        out: list[Any] = []
        for i in range(len(a)):
            lo, hi = bounds[i], bounds[i + 1]
            if lo == hi:
                out.append(None)
            else:
                out.append(entries[lo:hi])
        return out

    return write


class ProtobufEncoder:
    """Encode a struct column as one Protobuf message per row (``to_protobuf``).

    Args:
        schema: the parsed schema (:mod:`~spark_kafka_py.formats.protobuf.descriptors`).
        descriptor: the message written (``schema.message(name)``).
        arrow_type: the column's Arrow type (a struct).
        options: spark-protobuf's options (none changes what is written; kept for symmetry
            with the decoder).
        accelerate: use the compiled plan for :meth:`encode` when built and supported (see
            the module's docstring); False: always this module's plan.

    Attributes:
        implementation: ``"accel"`` (the compiled plan, this module's for batches it
            refuses) or ``"pure"``.

    Raises:
        ProtobufSchemaError: the type does not fit the message (naming the field's path:
            ``pkg.Msg.field.sub``): not a struct, a struct field with no message field, a
            required message field without a struct field, an Arrow type that cannot be
            written to the field's type.
    """

    def __init__(
        self,
        schema: ProtobufSchema,
        descriptor: Descriptor,
        arrow_type: pa.DataType,
        options: ProtobufOptions | None = None,
        *,
        accelerate: bool = True,
    ) -> None:
        self.schema = schema
        self.descriptor = descriptor
        self.options = options or ProtobufOptions()
        self.arrow_type = arrow_type
        if not pa.types.is_struct(arrow_type):
            raise ProtobufSchemaError(
                f"a column of Arrow type {arrow_type} is not a struct: only a struct is "
                f"written as message {descriptor.full_name}",
                descriptor.full_name,
            )
        self._plan = _MessagePlan(descriptor, arrow_type, descriptor.full_name, 0)
        # after the reference's plan: its schema errors are the ones raised
        self._accel: EncodePlan | None = None
        if accelerate and _ACCEL is not None:
            self._accel = _ACCEL.plan(descriptor, arrow_type)
        self.implementation = "pure" if self._accel is None else "accel"

    def encode_list(self, array: pa.Array, prefix: bytes = b"") -> list[bytes | None]:
        """Each row's message bytes (``prefix`` first, e.g. a registry framing), None for a
        null row.

        Raises:
            ProtobufEncodeError: a value does not fit (its row, the field's path, why).
        """
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if self._accel is not None:
            try:
                return self._accel.encode(array, prefix).to_pylist()  # type: ignore[no-any-return]
            except _ACCEL.Fallback:  # type: ignore[union-attr]
                pass  # this module's plan decides: its bytes or its error
        return self._encode_list(array, prefix)

    def _encode_list(self, array: pa.Array, prefix: bytes) -> list[bytes | None]:
        """:meth:`encode_list` on this module's plan (``array`` not chunked)."""
        try:
            bodies = self._plan.bodies(array)
        except _Bad:
            raise self._locate(array) from None
        if prefix:
            return [None if b is None else prefix + b for b in bodies]
        return bodies

    def encode(self, array: pa.Array, prefix: bytes = b"") -> pa.Array:
        """The column's rows as a ``binary`` array of messages (see :meth:`encode_list`).

        Raises:
            ProtobufEncodeError: a value does not fit (its row, the field's path, why).
        """
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if self._accel is not None:
            try:
                return self._accel.encode(array, prefix)
            except _ACCEL.Fallback:  # type: ignore[union-attr]
                pass  # this module's plan decides: its bytes or its error
        return pa.array(self._encode_list(array, prefix), type=pa.binary())

    def _locate(self, array: pa.Array) -> ProtobufEncodeError:
        """The first row that does not fit (encoded alone, row by row: the error path only)."""
        for i in range(len(array)):
            try:
                self._plan.bodies(array.slice(i, 1))
            except _Bad as e:
                return ProtobufEncodeError(i, e.path, e.reason)
        raise AssertionError("a batch failed, but none of its rows alone")  # pragma: no cover


#: The accelerated extension, or None: not built, or ``SPARK_KAFKA_PY_PURE`` set.
_ACCEL: Final = load_extension("spark_kafka_py.formats.protobuf._encode_accel")


def encode_protobuf(
    values: pa.Array,
    schema: ProtobufSchema,
    message_name: str | None = None,
    options: ProtobufOptions | None = None,
) -> pa.Array:
    """``to_protobuf(col, messageName, ...)`` over a struct column (see
    :class:`ProtobufEncoder`)."""
    return ProtobufEncoder(schema, schema.message(message_name), values.type, options).encode(
        values
    )
