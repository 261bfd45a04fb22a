"""One Arrow array -> Avro binary payloads: the pure-Python reference encoder (the sink's).

:class:`AvroEncoder` takes the writer schema (the one the payloads are written with, e.g. the
subject's latest) and the Arrow type of the column to encode, and builds a plan once: a tree of
nodes, one per (Arrow type, Avro type) pair, each converting its Arrow column to Python values
in one pass and writing one value's bytes. :meth:`AvroEncoder.encode` then returns one payload
(``bytes``, unframed) per row: row ``i`` is the Avro binary encoding of row ``i``.

The Arrow types taken are the decoder's mapping (:mod:`.types`) in reverse, with the widths
Spark also has (Avro specification 1.11/1.12, "Binary Encoding" and "Logical Types"):

==========================================  ==================================================
Arrow                                       Avro (written as)
==========================================  ==================================================
struct                                      record: fields matched by name (ignoring case
                                            when unambiguous), as spark-avro's serializer;
                                            an Arrow field the record lacks is refused, a
                                            record field the struct lacks is written null
                                            if its type takes null, else refused
string, large_string                        string (``uuid`` too); enum: the symbol's index
                                            (a symbol the enum lacks fails the row)
binary, large_binary, fixed_size_binary     bytes; fixed (a value of another size fails)
decimal128/256(p, s)                        ``decimal`` on bytes (minimal two's complement, as
                                            Java's ``BigInteger.toByteArray``) or fixed
                                            (sign-extended to the size); rescaled to the
                                            schema's scale, exact only (a fractional digit
                                            lost fails the row), beyond the precision fails
bool                                        boolean
int8..int64, uint8..uint64                  int (out of 32-bit range fails), long (``date``,
                                            ``time-*``, ``timestamp-*`` as their raw counts)
date32                                      int, ``date`` (days since 1970-01-01)
timestamp(unit, tz)                         long, ``timestamp-millis``/``-micros``
timestamp(unit) (no tz)                     long, ``local-timestamp-millis``/``-micros``
                                            (microseconds to milliseconds: floor division,
                                            as spark-avro's ``AvroSerializer``; beyond a
                                            long fails the row)
duration(unit)                              long (microseconds: Spark's day-time interval,
                                            as spark-avro writes it)
float32, float64                            float, double (a finite float64 beyond float32's
                                            range fails the row)
null                                        null
list, large_list                            array (one block: the count, the items, 0)
map<string, X>                              map (one block: the count, key and value pairs, 0)
(any of the above, nullable)                a union with ``null``: a null row writes the null
                                            branch's index, any other the non-null branch's
int32/int64 into ``[int, long]``            the branch of the Arrow width (int8..32 -> int)
float32/float64 into ``[float, double]``    the branch of the Arrow width
struct<member0, ...> into another union     the first non-null member's branch (the decoder's
                                            struct of members, in the same order)
dictionary<_, X>                            as X
==========================================  ==================================================

A null into a type without a ``null`` branch fails the row. Row failures raise
:class:`AvroEncodeError` naming the row's index and the field's path (``/order/amount``,
``/items/items`` for an array's items, ``/tags/values`` for a map's values, ``/u/2`` for a
union's branch 2); nothing is returned then (a sink writes no half batch). An Arrow type that
cannot be written with the schema at all raises :class:`IncompatibleSchemaError` when the plan
is built.

An encoder holds no state between calls; it may be shared between threads (the accelerated
plan binds a column's buffers under a lock for the length of a call).

Acceleration: :meth:`AvroEncoder.encode_column` (the sink's path: one ``binary`` array, each
payload after an optional framing prefix, null rows left null) runs the plan of the optional
Cython extension :mod:`spark_kafka_py.formats.avro._encode_accel` when it was built
(``setup.py``) and supports the pair (its module docstring lists what it does), with the same
bytes and the same errors (``tests/formats/test_avro_encode_accel.py``); otherwise, with
``SPARK_KAFKA_PY_PURE=1`` or ``AvroEncoder(..., accelerate=False)``, this module's plan runs.
``AvroEncoder.implementation`` says which (``"accel"`` or ``"pure"``).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Final

import numpy as np
import pyarrow as pa

from spark_kafka_py.formats._extension import load_extension
from spark_kafka_py.formats.avro.schema import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    UnionType,
    is_recursive,
    type_name,
)
from spark_kafka_py.formats.avro.types import union_shape
from spark_kafka_py.formats.errors import AvroEncodeError, IncompatibleSchemaError

if TYPE_CHECKING:
    from spark_kafka_py.formats.avro._encode_accel import EncodePlan

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")
#: The largest finite float32 (values beyond it would become infinity).
_FLOAT32_MAX: Final = 3.4028234663852886e38

#: Microseconds per unit of an Arrow timestamp (nanoseconds: divided, floored).
_MICROS_PER: Final = {"s": 1_000_000, "ms": 1_000, "us": 1}

_TIMESTAMP_UTC: Final = frozenset({"timestamp-millis", "timestamp-micros"})
_TIMESTAMP_NTZ: Final = frozenset({"local-timestamp-millis", "local-timestamp-micros"})

#: Converts an Arrow column to one Python value per row (None for a null row).
Convert = Callable[[pa.Array], list[object]]
#: Appends one (non-converted-away) value's encoding to the output.
Write = Callable[[bytearray, object], None]


class _Misfit(Exception):
    """A value that does not fit the schema, raised inside the writers; :meth:`encode` adds
    the row's index."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


class _NoMember:
    """A struct-of-members row with no member set (a union value that names no branch)."""

    __slots__ = ()


_NO_MEMBER: Final = _NoMember()


class _Node:
    """One (Arrow type, Avro type) pair of the plan."""

    __slots__ = ("convert", "write")

    def __init__(self, convert: Convert, write: Write) -> None:
        self.convert = convert
        self.write = write


# -- primitive writes --------------------------------------------------------------------------


def write_long(out: bytearray, value: int) -> None:
    """A zig-zag varint ("Binary Encoding": ``int`` and ``long``)."""
    raw = value << 1 if value >= 0 else ((-value) << 1) - 1
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


def _write_sized(out: bytearray, data: bytes) -> None:
    write_long(out, len(data))
    out += data


def _plain(array: pa.Array) -> list[object]:
    values: list[object] = array.to_pylist()
    return values


def _path(path: str) -> str:
    return path or "/"


class _Planner:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def incompatible(
        self, arrow: pa.DataType, avro: AvroType, path: str
    ) -> IncompatibleSchemaError:
        return IncompatibleSchemaError(
            f"an Arrow {arrow} column cannot be written as Avro {type_name(avro)!r} "
            f"at {_path(path)}"
        )

    def plan(self, arrow: pa.DataType, avro_type: AvroType, path: str) -> _Node:
        """The node writing Arrow ``arrow`` values as ``avro_type`` (nulls refused)."""
        if pa.types.is_dictionary(arrow):
            inner = self.plan(arrow.value_type, avro_type, path)
            convert = inner.convert
            return _Node(lambda a: convert(a.dictionary_decode()), inner.write)
        t = self.schema.deref(avro_type)
        if isinstance(t, UnionType):
            return self._union(arrow, t, path)
        node = self._plain(arrow, t, path)
        if isinstance(t, Primitive) and t.type == "null":
            return node
        write = node.write

        def non_null(out: bytearray, value: object) -> None:
            if value is None:
                raise _Misfit(path, f"a null where the schema has no null ({type_name(t)})")
            write(out, value)

        return _Node(node.convert, non_null)

    def _plain(self, arrow: pa.DataType, t: AvroType, path: str) -> _Node:
        """The node for a non-union Avro type; its writer never sees None."""
        if isinstance(t, Record):
            return self._record(arrow, t, path)
        if isinstance(t, Array):
            if not (pa.types.is_list(arrow) or pa.types.is_large_list(arrow)):
                raise self.incompatible(arrow, t, path)
            return self._list(arrow.value_type, None, t.items, f"{path}/items")
        if isinstance(t, Map):
            if not pa.types.is_map(arrow) or not _is_string(arrow.key_type):
                raise self.incompatible(arrow, t, path)
            return self._list(arrow.item_type, arrow.key_type, t.values, f"{path}/values")
        if isinstance(t, Enum):
            if not _is_string(arrow):
                raise self.incompatible(arrow, t, path)
            return _enum_node(t, path)
        if isinstance(t, Fixed):
            if t.logical_type == "decimal" and _is_decimal(arrow):
                return _decimal_node(arrow, t.precision, t.scale, t.size, path)
            if not _is_binary(arrow):
                raise self.incompatible(arrow, t, path)
            return _fixed_node(t.size, path)
        assert isinstance(t, Primitive), t
        return self._primitive(arrow, t, path)

    def _primitive(self, arrow: pa.DataType, t: Primitive, path: str) -> _Node:
        kind, logical = t.type, t.logical_type
        if kind == "null":
            if not pa.types.is_null(arrow):
                raise self.incompatible(arrow, t, path)
            return _Node(_plain, lambda out, value: None)
        if kind == "boolean":
            if not pa.types.is_boolean(arrow):
                raise self.incompatible(arrow, t, path)
            return _Node(_plain, lambda out, value: out.append(1 if value else 0))
        if kind in ("int", "long"):
            return self._integer(arrow, t, path)
        if kind in ("float", "double"):
            if not pa.types.is_floating(arrow) or pa.types.is_float16(arrow):
                raise self.incompatible(arrow, t, path)
            return _float_node(kind, path)
        if kind == "bytes":
            if logical == "decimal" and _is_decimal(arrow):
                return _decimal_node(arrow, t.precision, t.scale, None, path)
            if not _is_binary(arrow):
                raise self.incompatible(arrow, t, path)

            def write_bytes(out: bytearray, value: object) -> None:
                assert isinstance(value, bytes)
                _write_sized(out, value)

            return _Node(_plain, write_bytes)
        assert kind == "string", kind
        if not _is_string(arrow):
            raise self.incompatible(arrow, t, path)

        def write_string(out: bytearray, value: object) -> None:
            assert isinstance(value, str)
            _write_sized(out, value.encode("utf-8"))

        return _Node(_plain, write_string)

    def _integer(self, arrow: pa.DataType, t: Primitive, path: str) -> _Node:
        low, high = (_INT_MIN, _INT_MAX) if t.type == "int" else (_LONG_MIN, _LONG_MAX)
        convert: Convert
        if pa.types.is_integer(arrow):
            convert = _plain
            width = 32 if t.type == "int" else 64
            unsigned = pa.types.is_unsigned_integer(arrow)
            # every value fits unless the Arrow type is wider (or as wide and unsigned)
            checked = arrow.bit_width > width or (unsigned and arrow.bit_width == width)
        elif pa.types.is_date32(arrow) and t.logical_type == "date":
            convert = _cast_to(pa.int32(), 1, 1)
            checked = False
        elif pa.types.is_timestamp(arrow) and t.type == "long":
            utc = arrow.tz is not None
            if t.logical_type not in (_TIMESTAMP_UTC if utc else _TIMESTAMP_NTZ):
                raise self.incompatible(arrow, t, path)
            millis = t.logical_type in ("timestamp-millis", "local-timestamp-millis")
            if arrow.unit == "ns":
                convert = _cast_to(pa.int64(), 1, 1_000_000 if millis else 1_000)
                checked = False
            else:
                per = _MICROS_PER[arrow.unit]
                convert = _cast_to(pa.int64(), per, 1_000 if millis else 1)
                # seconds (or milliseconds) scaled up may leave a long
                checked = per > 1
        elif pa.types.is_duration(arrow) and t.type == "long" and t.logical_type is None:
            # Spark's day-time interval: microseconds (spark-avro writes it as a long)
            per = _MICROS_PER.get(arrow.unit, 1)
            convert = _cast_to(pa.int64(), per, 1_000 if arrow.unit == "ns" else 1)
            checked = per > 1
        else:
            raise self.incompatible(arrow, t, path)

        def write_integer(out: bytearray, value: object) -> None:
            assert isinstance(value, int)
            if checked and not low <= value <= high:
                raise _Misfit(path, f"{value} is outside Avro {t.type}'s range {low}..{high}")
            write_long(out, value)

        return _Node(convert, write_integer)

    def _record(self, arrow: pa.DataType, t: Record, path: str) -> _Node:
        """Fields matched by name, as spark-avro's ``AvroSerializer`` (``AvroSchemaHelper``):
        exactly, else ignoring case when that names one field; every Arrow field must match
        one Avro field; an Avro field no Arrow field matches is written as null if its type
        takes null (``null``, a union with ``null``), else refused."""
        if not pa.types.is_struct(arrow):
            raise self.incompatible(arrow, t, path)
        arrow_names = [arrow.field(i).name for i in range(arrow.num_fields)]
        if len(set(arrow_names)) != len(arrow_names):
            raise IncompatibleSchemaError(f"an Arrow struct names a field twice at {_path(path)}")
        slots: list[int | None] = []
        writes: list[Write] = []
        converts: list[Convert] = []
        for f in t.fields:
            slot = self._slot(f.name, arrow_names, t, path)
            where = f"{path}/{f.name}"
            if slot is None:
                writes.append(self._absent(f.type, t, f.name, where))
            else:
                child = self.plan(arrow.field(slot).type, f.type, where)
                writes.append(child.write)
                converts.append(child.convert)
            slots.append(slot)
        matched = [s for s in slots if s is not None]
        if len(set(matched)) != len(matched):
            raise IncompatibleSchemaError(
                f"an Arrow struct field matches two fields of the Avro record {t.name!r} "
                f"at {_path(path)}"
            )
        extra = [n for i, n in enumerate(arrow_names) if i not in matched]
        if extra:
            raise IncompatibleSchemaError(
                f"the Arrow struct's field {extra[0]!r} is not in the Avro record "
                f"{t.name!r} at {_path(path)}"
            )

        def convert(array: pa.Array) -> list[object]:
            valid = array.is_valid().to_pylist()
            found = iter([conv(array.field(s)) for conv, s in zip(converts, matched, strict=True)])
            nulls: list[object] = [None] * len(valid)
            columns = [nulls if s is None else next(found) for s in slots]
            rows: list[tuple[object, ...]] = (
                list(zip(*columns, strict=True)) if columns else [()] * len(valid)
            )
            return [row if ok else None for ok, row in zip(valid, rows, strict=True)]

        def write(out: bytearray, value: object) -> None:
            assert isinstance(value, tuple)
            for field_write, item in zip(writes, value, strict=True):
                field_write(out, item)

        return _Node(convert, write)

    def _slot(self, name: str, arrow_names: list[str], t: Record, path: str) -> int | None:
        """The Arrow field an Avro field takes: the same name, else the one equal ignoring
        case (spark-avro with ``spark.sql.caseSensitive`` false, the default)."""
        if name in arrow_names:
            return arrow_names.index(name)
        folded = [i for i, n in enumerate(arrow_names) if n.lower() == name.lower()]
        if len(folded) > 1:
            raise IncompatibleSchemaError(
                f"the Avro record {t.name!r}'s field {name!r} matches several Arrow struct "
                f"fields ignoring case at {_path(path)}"
            )
        return folded[0] if folded else None

    def _absent(self, avro_type: AvroType, t: Record, name: str, path: str) -> Write:
        """The writer of an Avro field no Arrow field matches: null, if the type takes it."""
        field_type = self.schema.deref(avro_type)
        if isinstance(field_type, Primitive) and field_type.type == "null":
            return lambda out, value: None
        if isinstance(field_type, UnionType):
            for i, branch in enumerate(field_type.branches):
                b = self.schema.deref(branch)
                if isinstance(b, Primitive) and b.type == "null":
                    return _null_writer(i, path)
        raise IncompatibleSchemaError(
            f"the Avro record {t.name!r}'s field {name!r} is not in the Arrow struct and "
            f"takes no null at {_path(path).rpartition('/')[0] or '/'}"
        )

    def _list(
        self, item_arrow: pa.DataType, key_arrow: pa.DataType | None, item: AvroType, path: str
    ) -> _Node:
        node = self.plan(item_arrow, item, path)
        item_convert, item_write = node.convert, node.write
        keyed = key_arrow is not None

        def convert(array: pa.Array) -> list[object]:
            valid = array.is_valid().to_pylist()
            offsets = array.offsets.to_pylist()
            items = item_convert(array.items if keyed else array.values)
            keys = array.keys.to_pylist() if keyed else None
            rows: list[object] = []
            for i, ok in enumerate(valid):
                if not ok:
                    rows.append(None)
                    continue
                start, end = offsets[i], offsets[i + 1]
                chunk = items[start:end]
                rows.append(
                    list(zip(keys[start:end], chunk, strict=True)) if keys is not None else chunk
                )
            return rows

        def write(out: bytearray, value: object) -> None:
            assert isinstance(value, list)
            if value:
                write_long(out, len(value))
                if keyed:
                    for key, item_value in value:
                        if key is None:
                            raise _Misfit(path, "a null map key")
                        _write_sized(out, key.encode("utf-8"))
                        item_write(out, item_value)
                else:
                    for item_value in value:
                        item_write(out, item_value)
            out.append(0)

        return _Node(convert, write)

    def _union(self, arrow: pa.DataType, union: UnionType, path: str) -> _Node:
        shape = union_shape(union, self.schema)
        branches = [self.schema.deref(b) for b in union.branches]
        null_index = next(
            (i for i, b in enumerate(branches) if isinstance(b, Primitive) and b.type == "null"),
            None,
        )
        if not shape.branches:  # only null (or nothing)
            if not pa.types.is_null(arrow) or null_index is None:
                raise self.incompatible(arrow, union, path)
            return _Node(_plain, _null_writer(null_index, path))
        if shape.kind == "struct":
            return self._member_union(arrow, union, shape.branches, null_index, path)
        index = shape.branches[0]
        if shape.kind in ("long", "double"):
            index = self._by_width(arrow, union, shape.branches, path)
        node = self._plain(arrow, branches[index], f"{path}/{index}")
        inner_write = node.write
        null_write = _null_writer(null_index, path)

        def write(out: bytearray, value: object) -> None:
            if value is None:
                null_write(out, value)
                return
            write_long(out, index)
            inner_write(out, value)

        return _Node(node.convert, write)

    def _by_width(
        self, arrow: pa.DataType, union: UnionType, candidates: Sequence[int], path: str
    ) -> int:
        """The ``[int, long]`` or ``[float, double]`` branch of the Arrow type's width."""
        if pa.types.is_integer(arrow):
            wide = arrow.bit_width > 32 or (
                arrow.bit_width == 32 and pa.types.is_unsigned_integer(arrow)
            )
            want = "long" if wide else "int"
        elif pa.types.is_float32(arrow):
            want = "float"
        elif pa.types.is_float64(arrow):
            want = "double"
        else:
            raise self.incompatible(arrow, union, path)
        for i in candidates:
            b = self.schema.deref(union.branches[i])
            if isinstance(b, Primitive) and b.type == want:
                return i
        raise self.incompatible(arrow, union, path)

    def _member_union(
        self,
        arrow: pa.DataType,
        union: UnionType,
        members: Sequence[int],
        null_index: int | None,
        path: str,
    ) -> _Node:
        if not pa.types.is_struct(arrow) or arrow.num_fields != len(members):
            raise self.incompatible(arrow, union, path)
        nodes = [
            self._plain(arrow.field(n).type, self.schema.deref(union.branches[i]), f"{path}/{i}")
            for n, i in enumerate(members)
        ]
        converts = [node.convert for node in nodes]
        writes = [node.write for node in nodes]
        indexes = list(members)
        null_write = _null_writer(null_index, path)

        def convert(array: pa.Array) -> list[object]:
            valid = array.is_valid().to_pylist()
            columns = [conv(array.field(n)) for n, conv in enumerate(converts)]
            rows: list[object] = []
            for row, ok in enumerate(valid):
                if not ok:
                    rows.append(None)
                    continue
                chosen: object = _NO_MEMBER
                for n, column in enumerate(columns):
                    if column[row] is not None:
                        chosen = (n, column[row])
                        break
                rows.append(chosen)
            return rows

        def write(out: bytearray, value: object) -> None:
            if value is None:
                null_write(out, value)
                return
            if value is _NO_MEMBER:
                if null_index is None:
                    raise _Misfit(path, "a union value with no member set")
                null_write(out, None)
                return
            assert isinstance(value, tuple)
            n, member = value
            write_long(out, indexes[n])
            writes[n](out, member)

        return _Node(convert, write)


def _null_writer(null_index: int | None, path: str) -> Write:
    def write(out: bytearray, value: object) -> None:
        if null_index is None:
            raise _Misfit(path, "a null where the union has no null branch")
        write_long(out, null_index)

    return write


def _is_string(arrow: pa.DataType) -> bool:
    return bool(pa.types.is_string(arrow) or pa.types.is_large_string(arrow))


def _is_binary(arrow: pa.DataType) -> bool:
    return bool(
        pa.types.is_binary(arrow)
        or pa.types.is_large_binary(arrow)
        or pa.types.is_fixed_size_binary(arrow)
    )


def _is_decimal(arrow: pa.DataType) -> bool:
    return bool(pa.types.is_decimal(arrow))


def _cast_to(target: pa.DataType, multiply: int, divide: int) -> Convert:
    """Cast to ``target`` (an integer type), then ``value * multiply // divide`` (floored)."""

    def convert(array: pa.Array) -> list[object]:
        raw: list[int | None] = array.cast(target).to_pylist()
        if multiply == 1 and divide == 1:
            return list(raw)
        return [None if v is None else v * multiply // divide for v in raw]

    return convert


def _float_node(kind: str, path: str) -> _Node:
    if kind == "double":
        pack_double = _DOUBLE.pack

        def write_double(out: bytearray, value: object) -> None:
            assert isinstance(value, float)
            out += pack_double(value)

        return _Node(_plain, write_double)
    pack_float = _FLOAT.pack

    def write_float(out: bytearray, value: object) -> None:
        assert isinstance(value, float)
        if math.isfinite(value) and abs(value) > _FLOAT32_MAX:
            raise _Misfit(path, f"{value!r} is beyond Avro float's (32-bit) range")
        out += pack_float(value)

    return _Node(_plain, write_float)


def _enum_node(t: Enum, path: str) -> _Node:
    indexes = {symbol: i for i, symbol in enumerate(t.symbols)}

    def write(out: bytearray, value: object) -> None:
        index = indexes.get(value) if isinstance(value, str) else None
        if index is None:
            raise _Misfit(path, f"{value!r:.60} is not a symbol of the enum {t.name!r}")
        write_long(out, index)

    return _Node(_plain, write)


def _fixed_node(size: int, path: str) -> _Node:
    def write(out: bytearray, value: object) -> None:
        assert isinstance(value, bytes)
        if len(value) != size:
            raise _Misfit(path, f"{len(value)} bytes for a fixed of {size}")
        out += value

    return _Node(_plain, write)


def _decimal_node(
    arrow: pa.DataType, precision: int | None, scale: int | None, size: int | None, path: str
) -> _Node:
    """A ``decimal`` ("Logical Types: Decimal"): the unscaled value at the schema's scale,
    big-endian two's complement, minimal for bytes and sign-extended to ``size`` for fixed."""
    assert precision is not None and scale is not None
    limit = 10**precision

    def write(out: bytearray, value: object) -> None:
        assert isinstance(value, Decimal)
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # Arrow decimals are finite
        unscaled = int("".join(map(str, digits)) or "0")
        shift = exponent + scale
        if shift >= 0:
            unscaled *= 10**shift
        else:
            unscaled, rest = divmod(unscaled, 10**-shift)
            if rest:
                raise _Misfit(path, f"{value} has more than the schema's {scale} decimal places")
        if sign:
            unscaled = -unscaled
        if abs(unscaled) >= limit:
            raise _Misfit(path, f"{value} is beyond the decimal's precision {precision}")
        if size is None:
            width = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
            _write_sized(out, unscaled.to_bytes(width, "big", signed=True))
        else:
            out += unscaled.to_bytes(size, "big", signed=True)

    return _Node(_plain, write)


class AvroEncoder:
    """Arrow arrays of one type -> Avro payloads of one writer schema.

    Args:
        schema: the writer schema (every payload is one datum of its root type).
        arrow_type: the type of the arrays to encode: :func:`.types.to_spark`'s mapping of
            ``schema`` or any the module's table admits (a struct's fields matched by name).
        schema_id: the schema's registry id, named in the errors (None when unframed).
        accelerate: use the Cython plan for :meth:`encode_column` when built and supported
            (see the module's docstring); False: always this module's plan.

    Raises:
        IncompatibleSchemaError: ``arrow_type`` cannot be written with ``schema`` (a struct
            field the record lacks or the reverse, a type the Avro type does not take), or
            the schema is recursive.
    """

    def __init__(
        self,
        schema: Schema,
        arrow_type: pa.DataType,
        *,
        schema_id: int | None = None,
        accelerate: bool = True,
    ) -> None:
        if is_recursive(schema):
            raise IncompatibleSchemaError(
                "found recursive reference in the Avro schema, which can not be written from "
                "Spark (as spark-avro refuses it)"
            )
        self.schema = schema
        self.arrow_type = arrow_type
        self.schema_id = schema_id
        self._root = _Planner(schema).plan(arrow_type, schema.root, "")
        # after the reference's plan: its schema errors are the ones raised
        self._accel: EncodePlan | None = None
        if accelerate and _ACCEL is not None:
            self._accel = _ACCEL.plan(schema, arrow_type)
        self.implementation = "pure" if self._accel is None else "accel"

    def encode(self, array: pa.Array | pa.ChunkedArray) -> list[bytes]:
        """Encode every row of ``array``.

        Args:
            array: an array (or chunked array) of :attr:`arrow_type`.

        Returns:
            One payload per row (the Avro binary encoding of the row's value, unframed), in
            row order.

        Raises:
            AvroEncodeError: a row does not fit the schema (a null where the schema has no
                null, an enum symbol the enum lacks, a fixed of another size, a decimal beyond
                its precision, an integer out of range); ``index`` is the row's position,
                ``path`` the field's. No payload is returned then.
            ValueError: ``array`` is not of :attr:`arrow_type`.
        """
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if array.type != self.arrow_type:
            raise ValueError(f"an array of {array.type}, not the encoder's {self.arrow_type}")
        values = self._root.convert(array)
        write = self._root.write
        payloads: list[bytes] = []
        out = bytearray()
        for index, value in enumerate(values):
            try:
                write(out, value)
            except _Misfit as misfit:
                raise AvroEncodeError(index, misfit.path, misfit.reason, self.schema_id) from None
            payloads.append(bytes(out))
            out.clear()
        return payloads

    def encode_column(self, array: pa.Array | pa.ChunkedArray, prefix: bytes = b"") -> pa.Array:
        """Encode every non-null row of ``array`` into one ``binary`` array (the sink's path).

        Args:
            array: an array (or chunked array) of :attr:`arrow_type`.
            prefix: bytes written before every payload (the Confluent framing: ``0x00`` and
                the 4-byte big-endian schema id, ``framing.build(id, b"")``), or none.

        Returns:
            A ``binary`` array of ``len(array)`` rows: row ``i`` is ``prefix`` and the Avro
            binary encoding of row ``i``, or null where ``array``'s row ``i`` is null (a null
            row is passed through, not encoded: a sink writes it as a null payload).

        Raises:
            AvroEncodeError: a non-null row does not fit the schema (as :meth:`encode`);
                ``index`` is the row's position in ``array``, nulls included. Nothing is
                returned then.
            ValueError: ``array`` is not of :attr:`arrow_type`.
            OverflowError: the payloads exceed a ``binary`` array's 2 GiB.
        """
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if array.type != self.arrow_type:
            raise ValueError(f"an array of {array.type}, not the encoder's {self.arrow_type}")
        if self._accel is not None:
            return self._accel.encode_column(array, prefix, self.schema_id)
        valid = None
        present = array
        if array.null_count:
            valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            present = array.filter(pa.array(valid))
        try:
            payloads = self.encode(present)
        except AvroEncodeError as exc:
            if valid is None:
                raise
            row = int(np.flatnonzero(valid)[exc.index])
            raise AvroEncodeError(row, exc.path, exc.reason, exc.schema_id) from None
        if prefix:
            payloads = [prefix + p for p in payloads]
        if valid is None:
            return pa.array(payloads, type=pa.binary())
        it = iter(payloads)
        return pa.array([next(it) if ok else None for ok in valid.tolist()], type=pa.binary())


#: The accelerated extension, or None: not built, or ``SPARK_KAFKA_PY_PURE`` set.
_ACCEL: Final = load_extension("spark_kafka_py.formats.avro._encode_accel")


def encode(
    schema: Schema, array: pa.Array | pa.ChunkedArray, *, schema_id: int | None = None
) -> list[bytes]:
    """One-off :meth:`AvroEncoder.encode` (builds the plan each call; keep an encoder instead)."""
    return AvroEncoder(schema, array.type, schema_id=schema_id).encode(array)
