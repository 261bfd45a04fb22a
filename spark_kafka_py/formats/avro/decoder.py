"""Avro binary payloads decoded into one Arrow array: the pure-Python reference decoder.

Given a writer schema (the one the payloads were written with) and, optionally, a reader schema
(the one the column should have), :class:`AvroDecoder` builds a plan once: a tree of readers,
one per (writer type, reader type) pair, each appending into an Arrow-shaped builder of the
reader's Spark type (:mod:`.types`). :meth:`AvroDecoder.decode` then runs the plan over every
payload of a column in one pass and returns one array of the reader's mapped type (a
``StructArray`` for a record), row ``i`` for payload ``i``.

Encoding (Avro specification 1.11/1.12, "Binary Encoding"):

- ``null``: no bytes. ``boolean``: one byte, 0 or 1. ``int``, ``long``: zig-zag varints (at
  most 5 and 10 bytes). ``float``, ``double``: 4 and 8 bytes, little-endian IEEE 754.
  ``bytes``, ``string``: a ``long`` length, then that many bytes (UTF-8 for strings).
- records: the fields in order, nothing else; enums: the symbol's index as an ``int``;
  fixed: ``size`` bytes; unions: the branch's index as a ``long``, then the value.
- arrays and maps: blocks, each a ``long`` count then that many items (map items: a string
  key, then the value); a negative count ``-n`` means ``n`` items preceded by the block's size
  in bytes (a ``long``); a count of 0 ends the value.
- Logical types ("Logical Types") as in :mod:`.types`: ``decimal`` is the big-endian two's
  complement unscaled value (its ``bytes`` or ``fixed``), ``date`` days since 1970-01-01,
  ``timestamp-millis``/``-micros`` (and the ``local-`` ones) counts since the epoch, scaled
  here to microseconds (Spark's unit).

Schema resolution ("Schema Resolution"), when the reader schema differs from the writer's:
record fields matched by name (or the reader field's aliases), writer fields the reader lacks
are read and dropped, reader fields the writer lacks take their default (a reader field without
one is an :class:`IncompatibleSchemaError` when the plan is built); ``int`` -> ``long``,
``float``, ``double``; ``long`` -> ``float``, ``double``; ``float`` -> ``double``; ``string``
<-> ``bytes``; an enum symbol the reader lacks becomes the reader's enum default (or fails
that record); a writer union's branches are each resolved (a branch that matches nothing
fails the records that use it); a reader union takes the first branch of the writer's type or
name, else the first the writer's type promotes to. Named types match by unqualified name or
by one of the reader's aliases. The reader's logical type decides how a value is read (a
writer ``bytes`` read as a reader ``decimal`` is its unscaled value); two decimals must have
the same precision and scale.

Bounds: every length and count read from a payload is checked against the bytes left before
anything is allocated or read; items that encode to no bytes at all (``null``, an empty
record) are limited per payload (:data:`DEFAULT_MAX_EMPTY_ITEMS`). A truncated payload,
trailing bytes, an invalid varint, a boolean other than 0 or 1, invalid UTF-8, an out-of-range
union or enum index, a decimal wider than its precision or a timestamp outside 64-bit
microseconds raise :class:`AvroDecodeError` naming the payload's index and the byte where
decoding stopped.

A decoder is not thread-safe (its builders are reused between calls); build one per thread.

Acceleration: when the optional Cython extension :mod:`spark_kafka_py.formats.avro._accel` was
built (``setup.py``) and supports the schema pair (its module docstring lists what it does),
:meth:`AvroDecoder.decode` runs its plan instead, with the same results and the same errors
(``tests/formats/test_avro_accel.py``); otherwise, with ``SPARK_KAFKA_PY_PURE=1`` or with
``AvroDecoder(..., accelerate=False)``, this module's plan runs. ``AvroDecoder.implementation``
says which (``"accel"`` or ``"pure"``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from spark_kafka_py.formats._extension import load_extension
from spark_kafka_py.formats.avro.schema import (
    Array,
    AvroType,
    Enum,
    Field,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    UnionType,
    is_recursive,
    type_name,
)
from spark_kafka_py.formats.avro.types import MappedType, to_spark, union_shape
from spark_kafka_py.formats.errors import AvroDecodeError, IncompatibleSchemaError, SchemaError

if TYPE_CHECKING:
    from spark_kafka_py.formats.avro._accel import AccelPlan

#: Decimal arithmetic without rounding: the default context keeps 28 digits, fewer than a
#: decimal(38, s) has; ``Decimal(int)`` is exact and ``scaleb`` in this context stays exact.
_EXACT: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)

#: The most items that encode to zero bytes (``null``s, empty records) one payload may hold
#: in its arrays and maps together: such items cost no input bytes, so their count is bounded
#: by this instead of by the payload's size.
DEFAULT_MAX_EMPTY_ITEMS: Final = 1 << 20

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")

#: A reader: consumes one value at ``pos`` of the payload, returns the position after it.
Read = Callable[[bytes, int], int]
#: A default filler: appends a reader field's default value to its builder.
Fill = Callable[[], None]


class _Bad(Exception):
    """A payload defect, raised inside the readers; :meth:`AvroDecoder.decode` adds the index."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.position = position


class _Budget:
    """The zero-byte items one payload may still hold."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = 0


# -- primitive reads ---------------------------------------------------------------------------


def _varint(buf: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """A zig-zag varint of at most ``max_bytes`` bytes at ``pos``: (value, next position)."""
    start = pos
    raw = 0
    shift = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise _Bad("truncated: a varint runs past the end", start)
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift >= 7 * max_bytes:
            raise _Bad(f"a varint longer than {max_bytes} bytes", start)
    if raw >> (64 if max_bytes == 10 else 32):
        raise _Bad("a varint outside its type's range", start)
    return (raw >> 1) ^ -(raw & 1), pos


def _long(buf: bytes, pos: int) -> tuple[int, int]:
    """A ``long`` at ``pos``: (value, next position); one byte (-64..63) on the fast path."""
    if pos < len(buf):
        byte = buf[pos]
        if byte < 0x80:
            return (byte >> 1) ^ -(byte & 1), pos + 1
    return _varint(buf, pos, 10)


def _int(buf: bytes, pos: int) -> tuple[int, int]:
    """An ``int`` at ``pos``: (value, next position)."""
    if pos < len(buf):
        byte = buf[pos]
        if byte < 0x80:
            return (byte >> 1) ^ -(byte & 1), pos + 1
    return _varint(buf, pos, 5)


def _sized(buf: bytes, pos: int) -> tuple[bytes, int]:
    """A ``long`` length then that many bytes: (the bytes, next position)."""
    size, start = _long(buf, pos)
    if size < 0:
        raise _Bad(f"negative length {size}", pos)
    end = start + size
    if end > len(buf):
        raise _Bad(f"truncated: a length of {size} bytes runs past the end", pos)
    return buf[start:end], end


def _utf8(data: bytes, pos: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Bad("invalid UTF-8 in a string", pos) from None


def _unscaled(data: bytes) -> int:
    return int.from_bytes(data, "big", signed=True)


# -- builders: the Arrow shape of the reader's Spark type --------------------------------------


class _Builder:
    """Collects one Arrow array's values; ``mark``/``restore`` undo a failed payload."""

    def append_null(self) -> None:
        raise NotImplementedError

    def finish(self) -> pa.Array:
        raise NotImplementedError

    def mark(self) -> object:
        raise NotImplementedError

    def restore(self, mark: object) -> None:
        raise NotImplementedError


class _Values(_Builder):
    """A leaf: one Python value (or None) per row, converted by ``pa.array`` at the end."""

    def __init__(self, arrow: pa.DataType) -> None:
        self.arrow = arrow
        self.values: list[object] = []

    def append_null(self) -> None:
        self.values.append(None)

    def finish(self) -> pa.Array:
        out = pa.array(self.values, type=self.arrow)
        self.values.clear()  # in place: the readers hold this list
        return out

    def mark(self) -> object:
        return len(self.values)

    def restore(self, mark: object) -> None:
        assert isinstance(mark, int)
        del self.values[mark:]


class _Nulls(_Builder):
    def __init__(self) -> None:
        self.count = 0

    def append_null(self) -> None:
        self.count += 1

    def finish(self) -> pa.Array:
        out = pa.nulls(self.count)
        self.count = 0
        return out

    def mark(self) -> object:
        return self.count

    def restore(self, mark: object) -> None:
        assert isinstance(mark, int)
        self.count = mark


def _mask(valid: list[bool]) -> pa.Array | None:
    if all(valid):
        return None
    return pa.array([not v for v in valid], type=pa.bool_())


class _Struct(_Builder):
    def __init__(self, arrow: pa.StructType, children: list[_Builder]) -> None:
        self.arrow = arrow
        self.children = children
        self.valid: list[bool] = []

    def append_null(self) -> None:
        self.valid.append(False)
        for child in self.children:
            child.append_null()

    def finish(self) -> pa.Array:
        valid = list(self.valid)
        self.valid.clear()  # in place: the readers hold this list
        if not self.children:
            return pa.array([{} if v else None for v in valid], type=self.arrow)
        arrays = [child.finish() for child in self.children]
        fields = [self.arrow.field(i) for i in range(self.arrow.num_fields)]
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=_mask(valid))

    def mark(self) -> object:
        return (len(self.valid), [child.mark() for child in self.children])

    def restore(self, mark: object) -> None:
        assert isinstance(mark, tuple)
        del self.valid[mark[0] :]
        for child, child_mark in zip(self.children, mark[1], strict=True):
            child.restore(child_mark)


class _List(_Builder):
    """An Arrow list (``items``) or map (``keys`` and ``items``)."""

    def __init__(self, arrow: pa.DataType, items: _Builder, keys: _Values | None) -> None:
        self.arrow = arrow
        self.items = items
        self.keys = keys
        self.offsets: list[int] = [0]
        self.valid: list[bool] = []

    def append_null(self) -> None:
        self.valid.append(False)
        self.offsets.append(self.offsets[-1])

    def finish(self) -> pa.Array:
        offsets = pa.array(self.offsets, type=pa.int32())
        mask = _mask(self.valid)
        del self.offsets[1:]  # in place: the readers hold these lists
        self.valid.clear()
        items = self.items.finish()
        if self.keys is None:
            return pa.ListArray.from_arrays(offsets, items, type=self.arrow, mask=mask)
        keys = self.keys.finish()
        return pa.MapArray.from_arrays(offsets, keys, items, type=self.arrow, mask=mask)

    def mark(self) -> object:
        keys = self.keys.mark() if self.keys is not None else None
        return (len(self.offsets), len(self.valid), self.items.mark(), keys)

    def restore(self, mark: object) -> None:
        assert isinstance(mark, tuple)
        del self.offsets[mark[0] :]
        del self.valid[mark[1] :]
        self.items.restore(mark[2])
        if self.keys is not None:
            self.keys.restore(mark[3])


def _builder(mapped: MappedType) -> _Builder:
    """An empty builder for a mapped type."""
    return _builder_for(mapped.arrow)


def _builder_for(arrow: pa.DataType) -> _Builder:
    if pa.types.is_struct(arrow):
        children = [_builder_for(arrow.field(i).type) for i in range(arrow.num_fields)]
        return _Struct(arrow, children)
    if pa.types.is_map(arrow):
        return _List(arrow, _builder_for(arrow.item_type), _Values(pa.string()))
    if pa.types.is_list(arrow):
        return _List(arrow, _builder_for(arrow.value_type), None)
    if pa.types.is_null(arrow):
        return _Nulls()
    return _Values(arrow)


# -- the plan ----------------------------------------------------------------------------------

_PROMOTIONS: Final[Mapping[str, frozenset[str]]] = {
    "int": frozenset({"long", "float", "double"}),
    "long": frozenset({"float", "double"}),
    "float": frozenset({"double"}),
    "string": frozenset({"bytes"}),
    "bytes": frozenset({"string"}),
}


def _short(name: str) -> str:
    return name.rpartition(".")[2]


def _names_match(writer_name: str, reader_name: str, reader_aliases: tuple[str, ...]) -> bool:
    """Named types match by unqualified name or a reader alias ("Schema Resolution")."""
    if _short(writer_name) == _short(reader_name):
        return True
    return writer_name in reader_aliases or _short(writer_name) in map(_short, reader_aliases)


def _decimal_digits(t: Primitive | Fixed) -> tuple[int | None, int | None]:
    return (t.precision, t.scale)


class _Planner:
    def __init__(self, writer: Schema, reader: Schema, budget: _Budget) -> None:
        self.writer = writer
        self.reader = reader
        self.budget = budget

    # matching ("Schema Resolution": "if both are ...")
    def matches(self, w_type: AvroType, r_type: AvroType, exact: bool) -> bool:
        w = self.writer.deref(w_type)
        r = self.reader.deref(r_type)
        if isinstance(w, Primitive) and isinstance(r, Primitive):
            if _decimal_digits(w) != _decimal_digits(r) and w.logical_type == r.logical_type:
                return False  # two decimals match only with equal precision and scale
            return w.type == r.type or (not exact and r.type in _PROMOTIONS.get(w.type, ()))
        if isinstance(w, Record) and isinstance(r, Record):
            return _names_match(w.name, r.name, r.aliases)
        if isinstance(w, Enum) and isinstance(r, Enum):
            return _names_match(w.name, r.name, r.aliases)
        if isinstance(w, Fixed) and isinstance(r, Fixed):
            if _decimal_digits(w) != _decimal_digits(r) and w.logical_type == r.logical_type:
                return False
            return w.size == r.size and _names_match(w.name, r.name, r.aliases)
        return (isinstance(w, Array) and isinstance(r, Array)) or (
            isinstance(w, Map) and isinstance(r, Map)
        )

    def reader_branch(self, w_type: AvroType, union: UnionType) -> int | None:
        """The reader union's branch for a (non-union) writer type, or None."""
        for exact in (True, False):
            for i, branch in enumerate(union.branches):
                if self.matches(w_type, branch, exact):
                    return i
        return None

    def plan(self, w_type: AvroType, r_type: AvroType, out: _Builder, path: str) -> Read:
        """A reader of writer type ``w_type`` appending into ``out`` (reader ``r_type``)."""
        w = self.writer.deref(w_type)
        r = self.reader.deref(r_type)
        if isinstance(w, UnionType):
            return self._writer_union(w, r, out, path)
        if isinstance(r, UnionType):
            return self._reader_union(w, r, out, path)
        if not self.matches(w, r, exact=False):
            raise IncompatibleSchemaError(
                f"writer type {type_name(w)!r} does not resolve to reader type "
                f"{type_name(r)!r} at {path or '/'}"
            )
        if isinstance(w, Primitive):
            assert isinstance(r, Primitive)
            return _primitive_reader(w, r, out)
        if isinstance(w, Fixed):
            assert isinstance(r, Fixed)
            return _fixed_reader(w, r, out)
        if isinstance(w, Enum):
            assert isinstance(r, Enum)
            return _enum_reader(w, r, out)
        if isinstance(w, Array):
            assert isinstance(r, Array) and isinstance(out, _List)
            items = self.plan(w.items, r.items, out.items, f"{path}/items")
            return self._blocks(out, None, items, self._min_size(w.items))
        if isinstance(w, Map):
            assert isinstance(r, Map) and isinstance(out, _List) and out.keys is not None
            values = self.plan(w.values, r.values, out.items, f"{path}/values")
            return self._blocks(out, out.keys, values, 1 + self._min_size(w.values))
        assert isinstance(w, Record) and isinstance(r, Record) and isinstance(out, _Struct)
        return self._record(w, r, out, path)

    def _writer_union(self, w: UnionType, r: AvroType, out: _Builder, path: str) -> Read:
        branches: list[Read | str] = []
        for i, branch in enumerate(w.branches):
            try:
                branches.append(self.plan(branch, r, out, f"{path}/{i}"))
            except IncompatibleSchemaError as exc:
                branches.append(str(exc))  # fails only the records that use this branch
        count = len(branches)

        def read(buf: bytes, pos: int) -> int:
            index, after = _long(buf, pos)
            if not 0 <= index < count:
                raise _Bad(f"union index {index} outside 0..{count - 1}", pos)
            branch = branches[index]
            if isinstance(branch, str):
                raise _Bad(f"union branch {index}: {branch}", pos)
            return branch(buf, after)

        return read

    def _reader_union(self, w: AvroType, r: UnionType, out: _Builder, path: str) -> Read:
        index = self.reader_branch(w, r)
        if index is None:
            raise IncompatibleSchemaError(
                f"writer type {type_name(w)!r} matches no branch of the reader's union "
                f"at {path or '/'}"
            )
        target = self.reader.deref(r.branches[index])
        if isinstance(target, Primitive) and target.type == "null":
            return _null_reader(out)
        shape = union_shape(r, self.reader)
        if shape.kind != "struct":
            # nullable X, or int/long -> long, float/double -> double: the same builder
            if shape.kind in ("long", "double"):
                return self.plan(w, Primitive(shape.kind), out, path)
            return self.plan(w, r.branches[index], out, path)
        assert isinstance(out, _Struct)
        member = shape.branches.index(index)
        inner = self.plan(w, r.branches[index], out.children[member], f"{path}/{index}")
        others = [c for n, c in enumerate(out.children) if n != member]
        valid = out.valid

        def read(buf: bytes, pos: int) -> int:
            valid.append(True)
            for other in others:
                other.append_null()
            return inner(buf, pos)

        return read

    def _record(self, w: Record, r: Record, out: _Struct, path: str) -> Read:
        by_name: dict[str, int] = {}
        for i, f in enumerate(r.fields):
            by_name.setdefault(f.name, i)
        for i, f in enumerate(r.fields):
            for alias in f.aliases:
                by_name.setdefault(alias, i)
        readers: list[Read] = []
        written: set[int] = set()
        for f in w.fields:
            slot = by_name.get(f.name)
            where = f"{path}/{f.name}"
            if slot is None or slot in written:
                readers.append(self.skip(f.type))
                continue
            written.add(slot)
            readers.append(self.plan(f.type, r.fields[slot].type, out.children[slot], where))
        fills = [
            self.default(f, out.children[i], f"{path}/{f.name}")
            for i, f in enumerate(r.fields)
            if i not in written
        ]
        valid = out.valid

        def read(buf: bytes, pos: int) -> int:
            for field_reader in readers:
                pos = field_reader(buf, pos)
            for fill in fills:
                fill()
            valid.append(True)
            return pos

        return read

    def _blocks(self, out: _List, keys: _Values | None, item: Read, min_size: int) -> Read:
        offsets = out.offsets
        valid = out.valid
        key_values = keys.values if keys is not None else None
        budget = self.budget

        def read(buf: bytes, pos: int) -> int:
            total = offsets[-1]
            while True:
                start = pos
                count, pos = _long(buf, pos)
                if count == 0:
                    break
                if count < 0:
                    count = -count
                    size, pos = _long(buf, pos)
                    if size < 0:
                        raise _Bad(f"negative block size {size}", start)
                if min_size:
                    if count * min_size > len(buf) - pos:
                        raise _Bad(f"truncated: a block of {count} items runs past the end", start)
                else:
                    budget.left -= count
                    if budget.left < 0:
                        raise _Bad("too many items that encode to no bytes", start)
                for _ in range(count):
                    if key_values is not None:
                        key, pos = _sized(buf, pos)
                        key_values.append(_utf8(key, pos))
                    pos = item(buf, pos)
                total += count
            if total > _INT_MAX:
                raise _Bad("more than 2**31 - 1 items in one column", pos)
            offsets.append(total)
            valid.append(True)
            return pos

        return read

    def _min_size(self, avro_type: AvroType) -> int:
        """The fewest bytes a value of a (writer) type encodes to."""
        t = self.writer.deref(avro_type)
        if isinstance(t, Primitive):
            return {"null": 0, "float": 4, "double": 8}.get(t.type, 1)
        if isinstance(t, Fixed):
            return t.size
        if isinstance(t, Record):
            return sum(self._min_size(f.type) for f in t.fields)
        return 1  # enum, array, map, union

    # writer fields the reader lacks: read and dropped
    def skip(self, w_type: AvroType) -> Read:
        """A reader that checks and drops a value of writer type ``w_type``."""
        w = self.writer.deref(w_type)
        if isinstance(w, Primitive):
            return _primitive_reader(w, w, _Values(pa.null()), keep=False)
        if isinstance(w, Fixed):
            return _fixed_reader(w, w, _Values(pa.null()), keep=False)
        if isinstance(w, Enum):
            return _enum_reader(w, w, _Values(pa.null()), keep=False)
        if isinstance(w, Record):
            fields = [self.skip(f.type) for f in w.fields]

            def record(buf: bytes, pos: int) -> int:
                for skip in fields:
                    pos = skip(buf, pos)
                return pos

            return record
        if isinstance(w, UnionType):
            branches = [self.skip(b) for b in w.branches]

            def union(buf: bytes, pos: int) -> int:
                index, after = _long(buf, pos)
                if not 0 <= index < len(branches):
                    raise _Bad(f"union index {index} outside 0..{len(branches) - 1}", pos)
                return branches[index](buf, after)

            return union
        sink = _List(pa.null(), _Nulls(), _Values(pa.null()) if isinstance(w, Map) else None)
        if isinstance(w, Array):
            read = self._blocks(sink, None, self.skip(w.items), self._min_size(w.items))
        else:
            assert isinstance(w, Map)
            keys = sink.keys
            read = self._blocks(sink, keys, self.skip(w.values), 1 + self._min_size(w.values))

        def dropped(buf: bytes, pos: int) -> int:
            pos = read(buf, pos)
            sink.offsets[:] = [0]
            sink.valid.clear()
            if sink.keys is not None:
                sink.keys.values.clear()
            return pos

        return dropped

    # reader fields the writer lacks: their defaults
    def default(self, f: Field, out: _Builder, path: str) -> Fill:
        if not f.has_default:
            raise IncompatibleSchemaError(
                f"reader field {f.name!r} is not in the writer's schema and has no default "
                f"(at {path})"
            )
        return self._fill(f.type, f.default, out, path)

    def _fill(self, r_type: AvroType, value: object, out: _Builder, path: str) -> Fill:
        r = self.reader.deref(r_type)
        bad = SchemaError(f"default {value!r:.60} does not match its type", path)
        if isinstance(r, UnionType):
            shape = union_shape(r, self.reader)
            for index, branch in enumerate(r.branches):
                b = self.reader.deref(branch)
                if isinstance(b, Primitive) and b.type == "null":
                    if value is None:
                        return out.append_null
                    continue
                try:
                    if shape.kind != "struct":
                        target = Primitive(shape.kind) if shape.kind in ("long", "double") else b
                        return self._fill(target, value, out, path)
                    assert isinstance(out, _Struct)
                    member = shape.branches.index(index)
                    inner = self._fill(b, value, out.children[member], path)
                except SchemaError:
                    continue
                others = [c for n, c in enumerate(out.children) if n != member]
                valid = out.valid

                def fill_member(
                    inner: Fill = inner, others: list[_Builder] = others, valid: list[bool] = valid
                ) -> None:
                    valid.append(True)
                    for other in others:
                        other.append_null()
                    inner()

                return fill_member
            raise bad
        if isinstance(r, Record):
            if not isinstance(value, dict) or not isinstance(out, _Struct):
                raise bad
            fills: list[Fill] = []
            for i, f in enumerate(r.fields):
                if f.name in value:
                    fills.append(self._fill(f.type, value[f.name], out.children[i], path))
                elif f.has_default:
                    fills.append(self._fill(f.type, f.default, out.children[i], path))
                else:
                    raise bad
            struct_valid = out.valid

            def fill_record() -> None:
                for fill in fills:
                    fill()
                struct_valid.append(True)

            return fill_record
        if isinstance(r, (Array, Map)):
            assert isinstance(out, _List)
            if isinstance(r, Array):
                if not isinstance(value, list):
                    raise bad
                items = [self._fill(r.items, v, out.items, path) for v in value]
                keys: list[str] = []
            else:
                if not isinstance(value, dict):
                    raise bad
                items = [self._fill(r.values, v, out.items, path) for v in value.values()]
                keys = list(value)
            offsets, list_valid, key_builder = out.offsets, out.valid, out.keys

            def fill_list() -> None:
                for item in items:
                    item()
                if key_builder is not None:
                    key_builder.values.extend(keys)
                offsets.append(offsets[-1] + len(items))
                list_valid.append(True)

            return fill_list
        converted = _leaf_default(r, value, bad)
        if isinstance(out, _Nulls):
            return out.append_null
        assert isinstance(out, _Values)
        values = out.values
        return lambda: values.append(converted)


def _leaf_default(r: AvroType, value: object, bad: SchemaError) -> object:
    """A leaf's JSON default converted to its builder's value ("Complex Types: Records",
    the default values table: bytes and fixed as strings of code points 0-255)."""
    if isinstance(r, Enum):
        if value not in r.symbols:
            raise bad
        return value
    if isinstance(r, Fixed):
        data = _latin1(value, bad)
        if len(data) != r.size:
            raise bad
        return _from_unscaled(data, r.precision, r.scale, bad) if r.logical_type else data
    assert isinstance(r, Primitive)
    kind = r.type
    if kind == "null":
        if value is not None:
            raise bad
        return None
    if kind == "boolean":
        if not isinstance(value, bool):
            raise bad
        return value
    if kind in ("int", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad
        low, high = (_INT_MIN, _INT_MAX) if kind == "int" else (_LONG_MIN, _LONG_MAX)
        if not low <= value <= high:
            raise bad
        scale = _TIME_SCALE.get(r.logical_type or "", 1)
        return value * scale
    if kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise bad
        return float(value)
    if kind == "bytes":
        data = _latin1(value, bad)
        if r.logical_type == "decimal":
            return _from_unscaled(data, r.precision, r.scale, bad)
        return data
    if not isinstance(value, str):
        raise bad
    return value


def _latin1(value: object, bad: SchemaError) -> bytes:
    if not isinstance(value, str):
        raise bad
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        raise bad from None


def _from_unscaled(
    data: bytes, precision: int | None, scale: int | None, bad: SchemaError
) -> Decimal:
    assert precision is not None and scale is not None
    unscaled = _unscaled(data)
    if abs(unscaled) >= 10**precision:
        raise bad
    return Decimal(unscaled).scaleb(-scale, _EXACT)


#: Logical types stored as Spark microseconds: the factor from the Avro unit.
_TIME_SCALE: Final[Mapping[str, int]] = {
    "timestamp-millis": 1000,
    "timestamp-micros": 1,
    "local-timestamp-millis": 1000,
    "local-timestamp-micros": 1,
}


def _null_reader(out: _Builder) -> Read:
    append_null = out.append_null

    def read(buf: bytes, pos: int) -> int:
        append_null()
        return pos

    return read


def _primitive_reader(w: Primitive, r: Primitive, out: _Builder, keep: bool = True) -> Read:
    """A reader of writer primitive ``w`` into reader primitive ``r``'s builder."""
    if w.type == "null":
        return _null_reader(out) if keep else (lambda buf, pos: pos)
    assert isinstance(out, _Values)
    append = out.values.append if keep else (lambda value: None)
    kind = w.type
    if kind == "boolean":

        def boolean(buf: bytes, pos: int) -> int:
            if pos >= len(buf):
                raise _Bad("truncated: a boolean past the end", pos)
            byte = buf[pos]
            if byte > 1:
                raise _Bad(f"a boolean byte 0x{byte:02x}, not 0 or 1", pos)
            append(byte == 1)
            return pos + 1

        return boolean
    if kind in ("int", "long"):
        varint = _int if kind == "int" else _long
        as_float = r.type in ("float", "double")
        scale = _TIME_SCALE.get(r.logical_type or "", 1)

        def integer(buf: bytes, pos: int) -> int:
            value, after = varint(buf, pos)
            if as_float:
                append(float(value))
            elif scale != 1:
                value *= scale
                if not _LONG_MIN <= value <= _LONG_MAX:
                    raise _Bad("a timestamp outside 64-bit microseconds", pos)
                append(value)
            else:
                append(value)
            return after

        return integer
    if kind in ("float", "double"):
        unpack = (_FLOAT if kind == "float" else _DOUBLE).unpack_from
        width = 4 if kind == "float" else 8

        def floating(buf: bytes, pos: int) -> int:
            if pos + width > len(buf):
                raise _Bad(f"truncated: a {kind} past the end", pos)
            append(unpack(buf, pos)[0])
            return pos + width

        return floating
    # bytes or string, read as the reader's bytes, string or decimal
    as_text = r.type == "string"
    decimal = r.logical_type == "decimal" and r.type == "bytes"
    precision, scale_digits = r.precision, r.scale
    check_text = w.type == "string" or as_text

    def sized(buf: bytes, pos: int) -> int:
        data, after = _sized(buf, pos)
        if decimal:
            append(_decimal(data, precision, scale_digits, pos))
        elif check_text:
            text = _utf8(data, pos)
            append(text if as_text else data)
        else:
            append(data)
        return after

    return sized


def _decimal(data: bytes, precision: int | None, scale: int | None, pos: int) -> Decimal:
    assert precision is not None and scale is not None
    unscaled = _unscaled(data)
    if abs(unscaled) >= 10**precision:
        raise _Bad(f"a decimal wider than its precision {precision}", pos)
    return Decimal(unscaled).scaleb(-scale, _EXACT)


def _fixed_reader(w: Fixed, r: Fixed, out: _Builder, keep: bool = True) -> Read:
    assert isinstance(out, _Values)
    append = out.values.append if keep else (lambda value: None)
    size = w.size
    decimal = r.logical_type == "decimal"
    precision, scale = r.precision, r.scale

    def fixed(buf: bytes, pos: int) -> int:
        end = pos + size
        if end > len(buf):
            raise _Bad(f"truncated: a fixed of {size} bytes runs past the end", pos)
        data = buf[pos:end]
        append(_decimal(data, precision, scale, pos) if decimal else data)
        return end

    return fixed


def _enum_reader(w: Enum, r: Enum, out: _Builder, keep: bool = True) -> Read:
    assert isinstance(out, _Values)
    append = out.values.append if keep else (lambda value: None)
    reader_symbols = set(r.symbols)
    symbols: list[str | None] = [s if s in reader_symbols else r.default for s in w.symbols]
    count = len(symbols)

    def enum(buf: bytes, pos: int) -> int:
        index, after = _int(buf, pos)
        if not 0 <= index < count:
            raise _Bad(f"enum index {index} outside 0..{count - 1}", pos)
        symbol = symbols[index]
        if symbol is None:
            raise _Bad(
                f"enum symbol {w.symbols[index]!r} is not in the reader's enum {r.name!r}, "
                "which has no default",
                pos,
            )
        append(symbol)
        return after

    return enum


class AvroDecoder:
    """Avro payloads of one writer schema -> one Arrow array of the reader schema's type.

    Args:
        writer: the schema the payloads were written with.
        reader: the schema the column has (its mapping, :func:`.types.to_spark`, is the
            array's type); None for the writer's own.
        max_empty_items: see :data:`DEFAULT_MAX_EMPTY_ITEMS`.

        accelerate: use the accelerated plan when there is one for the pair (see the module's
            "Acceleration"); False for this module's plan always.

    Attributes:
        writer: the writer schema.
        mapped: the reader schema's mapped type (:class:`.types.MappedType`).
        arrow_type: ``mapped.arrow``, the type of every array :meth:`decode` returns.
        implementation: ``"accel"`` or ``"pure"``: which plan :meth:`decode` runs.

    Raises:
        IncompatibleSchemaError: either schema cannot be mapped to Spark types (a recursive
            record, a decimal above 38 digits), or the writer's does not resolve to the
            reader's (a reader field without default the writer lacks, types that do not
            match).
        SchemaError: a reader field's default does not match its type.
    """

    def __init__(
        self,
        writer: Schema,
        reader: Schema | None = None,
        *,
        max_empty_items: int = DEFAULT_MAX_EMPTY_ITEMS,
        accelerate: bool = True,
    ) -> None:
        reader = writer if reader is None else reader
        if is_recursive(writer):  # its plan would not end (the reader's: to_spark refuses)
            raise IncompatibleSchemaError(
                "found recursive reference in the writer's Avro schema, which can not be "
                "processed by Spark (as spark-avro refuses it)"
            )
        self.writer = writer
        self.mapped = to_spark(reader)
        self.arrow_type = self.mapped.arrow
        self.max_empty_items = max_empty_items
        self._budget = _Budget()
        self._root = _builder(self.mapped)
        planner = _Planner(writer, reader, self._budget)
        self._read = planner.plan(writer.root, reader.root, self._root, "")
        # after the reference's plan: its schema errors are the ones raised
        self._accel: AccelPlan | None = None
        if accelerate and _ACCEL is not None:
            self._accel = _ACCEL.plan(writer, reader, self.arrow_type)
        self.implementation = "pure" if self._accel is None else "accel"

    def decode(
        self,
        payloads: Iterable[bytes | bytearray | memoryview | None],
        *,
        on_error: Callable[[AvroDecodeError], None] | None = None,
    ) -> pa.Array:
        """Decode a column of payloads (each one datum's Avro binary encoding, unframed).

        Args:
            payloads: the payloads in row order; None gives a null row (a tombstone).
            on_error: None to raise at the first bad payload (spark-avro's ``FAILFAST``);
                otherwise called with each bad payload's error, whose row becomes null
                (``PERMISSIVE``), the rows already decoded kept.

        Returns:
            An array of :attr:`arrow_type`, one row per payload.

        Raises:
            AvroDecodeError: a payload is truncated, has trailing bytes or is malformed
                (``index`` is its position in ``payloads``); only without ``on_error``.
        """
        if self._accel is not None:
            return self._accel.decode(payloads, on_error)
        root = self._root
        read = self._read
        budget = self._budget
        try:
            for index, payload in enumerate(payloads):
                if payload is None:
                    root.append_null()
                    continue
                buf = payload if isinstance(payload, bytes) else bytes(payload)
                budget.left = self.max_empty_items
                mark = root.mark() if on_error is not None else None
                try:
                    end = read(buf, 0)
                    if end != len(buf):
                        raise _Bad(f"{len(buf) - end} trailing bytes after the value", end)
                except _Bad as bad:
                    error = AvroDecodeError(index, bad.reason, bad.position)
                    if on_error is None:
                        raise error from None
                    root.restore(mark)
                    root.append_null()
                    on_error(error)
            return root.finish()
        except BaseException:
            root.restore(_empty_mark(root))  # the next call starts empty
            raise

    def decode_slices(
        self,
        data: pa.Buffer | bytes,
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        valid: npt.NDArray[np.uint8] | None = None,
        *,
        on_error: Callable[[AvroDecodeError], None] | None = None,
    ) -> pa.Array:
        """:meth:`decode` of the payloads ``data[starts[i]:ends[i]]`` of one buffer: an Arrow
        binary column's data buffer, each value's framing skipped by its start. The
        accelerated twin reads the slices in place, with no Python object per row.

        Args:
            data: the buffer holding the payloads.
            starts, ends: int64 arrays of the same length: each payload's byte range.
            valid: None, or a uint8 array of that length: 0 gives a null row.
            on_error: as :meth:`decode`.

        Returns:
            An array of :attr:`arrow_type`, one row per range.

        Raises:
            AvroDecodeError: as :meth:`decode` (``index`` the row).
            ValueError: a range outside ``data``, or arrays of different lengths.
        """
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        if valid is not None:
            valid = np.ascontiguousarray(valid, dtype=np.uint8)
        if self._accel is not None:
            return self._accel.decode_slices(data, starts, ends, valid, on_error)
        view = memoryview(data)
        if len(ends) != len(starts) or (valid is not None and len(valid) != len(starts)):
            raise ValueError("starts, ends and valid differ in length")
        rows = np.ones(len(starts), dtype=bool) if valid is None else valid.astype(bool)
        inside = (starts <= ends) & (starts >= 0) & (ends <= len(view))
        if not bool(np.all(inside | ~rows)):
            row = int(np.flatnonzero(~inside & rows)[0])
            raise ValueError(f"row {row}: bytes {starts[row]}..{ends[row]} outside {len(view)}")
        payloads = [
            view[s:e] if ok else None
            for s, e, ok in zip(starts.tolist(), ends.tolist(), rows.tolist(), strict=True)
        ]
        return self.decode(payloads, on_error=on_error)


_ACCEL: Final = load_extension("spark_kafka_py.formats.avro._accel")


def _empty_mark(builder: _Builder) -> object:
    """The mark of an empty builder of ``builder``'s shape (to reset after a call)."""
    if isinstance(builder, _Struct):
        return (0, [_empty_mark(c) for c in builder.children])
    if isinstance(builder, _List):
        keys = 0 if builder.keys is not None else None
        return (1, 0, _empty_mark(builder.items), keys)
    return 0


def decode(
    writer: Schema,
    payloads: Iterable[bytes | bytearray | memoryview | None],
    reader: Schema | None = None,
) -> pa.Array:
    """One-off :meth:`AvroDecoder.decode` (builds the plan each call; keep a decoder instead)."""
    return AvroDecoder(writer, reader).decode(payloads)
