# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Accelerated twin of :class:`spark_kafka_py.formats.avro.decoder.AvroDecoder`'s plan (Cython).

Same input, same output, same errors as the pure-Python reference
(:mod:`spark_kafka_py.formats.avro.decoder`), for the writer -> reader pairs it supports; the
reference decides everything else. :func:`plan` returns None for a pair it does not support,
and :class:`~spark_kafka_py.formats.avro.decoder.AvroDecoder` then keeps the pure plan. It is
only asked after the reference's plan was built, so every schema error
(:class:`~spark_kafka_py.formats.errors.IncompatibleSchemaError`, ``SchemaError``) is the
reference's.

Supported (Avro specification 1.12, "Binary Encoding" and "Schema Resolution"):

- ``boolean``, ``int``, ``long``, ``float``, ``double``, ``string``, ``bytes``; the
  promotions ``int`` -> ``long``, ``int``/``long``/``float`` -> ``double`` and
  ``string`` <-> ``bytes``; the logical types ``date``, ``time-millis``, ``time-micros``,
  ``timestamp-millis``/``-micros`` (scaled to microseconds, checked against 64 bits),
  the ``local-`` ones, and ``decimal`` on ``bytes`` (decimal128, exact, checked against its
  precision); enums (the symbol, resolved to the reader's symbols or its default) and
  fixed (binary, or a decimal);
- records, nested to any depth: writer fields matched by name or a reader alias, writer
  fields the reader lacks read and dropped (when their type is supported), reader fields the
  writer lacks filled with their default (when it is a leaf: a primitive, a decimal, an enum
  symbol, a null);
- arrays of the above whose items encode to at least one byte, and maps of them;
- unions mapped to one Arrow type (``[null, X]``, ``[X, null]``, ``[X]``, and ``[int,
  long]``/``[float, double]`` on the reader's side), on either side, whose every writer
  branch resolves.

Not supported (the pure plan runs): unions mapped to structs, defaults
of records, arrays and maps, ``null`` outside a union, ``int``/``long`` -> ``float``, arrays
of items that may encode to no bytes (the reference's budget of
zero-byte items is then never spent here, so no budget is needed).

How: the plan is a tree of nodes built once, one per reader Arrow array, each reading its
writer type at a position of the payload (a C pointer and length, no Python object per value)
and appending into growable C buffers in Arrow's layout: a validity byte per row (packed into
Arrow's bitmap at the end), fixed-width values, ``int32`` offsets and data for strings, bytes
and lists. :meth:`AccelPlan.decode` wraps them into one array of the reader's mapped type with
``pyarrow.Array.from_buffers`` (one copy of each buffer into a ``bytes``).

Errors: a defect raises :class:`_Bad` (reason, byte position) where the reference raises its
``_Bad``, with the same words; :meth:`AccelPlan.decode` turns it into
:class:`~spark_kafka_py.formats.errors.AvroDecodeError` with the payload's index, as the
reference does (``tests/formats/test_avro_accel.py`` compares both). Bounds: every length and
count is checked against the bytes left before anything is read or allocated, as in the
reference (``count * min_size > bytes left``; the product computed as a division, which
cannot overflow); varints are at most 5 (``int``) or 10 (``long``) bytes.

Type stub: ``_accel.pyi``.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport INT32_MAX, INT64_MAX, INT64_MIN, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset

import pyarrow as pa

from cpython.pycapsule cimport PyCapsule_GetPointer
from spark_kafka_py._cutil cimport hand_over, bitmap_bytes, grow, valid_utf8

from spark_kafka_py.formats.errors import AvroDecodeError

__all__ = ["AccelPlan", "plan"]


cdef extern from *:
    """
    typedef __int128 skp_int128;
    static skp_int128 skp_pow10[39];
    static void skp_init_pow10(void) {
        skp_int128 p = 1;
        for (int i = 0; i < 39; i++) { skp_pow10[i] = p; p *= 10; }
    }
    """
    ctypedef long long skp_int128
    skp_int128 skp_pow10[39]
    void skp_init_pow10()

skp_init_pow10()


class _Bad(Exception):
    """A payload defect (the reference's ``_Bad``): ``reason`` and the byte ``position``."""

    def __init__(self, reason, position):
        super().__init__(reason)
        self.reason = reason
        self.position = position


class _Unsupported(Exception):
    """The schema pair needs something this plan does not do: the reference decodes it."""


# -- growable buffers --------------------------------------------------------------------------


include "../../_growbuf.pxi"


# -- varints ("Binary Encoding": zig-zag varints, at most 5 bytes for int, 10 for long) ----------


cdef int64_t _varint(const uint8_t* b, Py_ssize_t n, Py_ssize_t* at, int max_bytes) except? -1:
    """A zig-zag varint at ``at[0]`` (advanced past it); the reference's ``_varint``."""
    cdef Py_ssize_t pos = at[0]
    cdef Py_ssize_t start = pos
    cdef uint64_t raw = 0
    cdef int shift = 0
    cdef uint8_t byte
    while True:
        if pos >= n:
            raise _Bad("truncated: a varint runs past the end", start)
        byte = b[pos]
        pos += 1
        raw |= (<uint64_t>(byte & 0x7F)) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift >= 7 * max_bytes:
            raise _Bad(f"a varint longer than {max_bytes} bytes", start)
    # the value must fit 64 (long) or 32 (int) bits before zig-zag: beyond them lie the high
    # bits of a 10th byte (shift 63) or bits 32-34 of a 5th
    if (max_bytes == 10 and shift == 63 and byte > 1) or (max_bytes == 5 and raw >> 32):
        raise _Bad("a varint outside its type's range", start)
    at[0] = pos
    return <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))


cdef inline int64_t _long(const uint8_t* b, Py_ssize_t n, Py_ssize_t* at) except? -1:
    cdef Py_ssize_t pos = at[0]
    cdef uint8_t byte
    if pos < n:
        byte = b[pos]
        if byte < 0x80:
            at[0] = pos + 1
            return (byte >> 1) ^ -(<int64_t>(byte & 1))
    return _varint(b, n, at, 10)


cdef inline int64_t _int(const uint8_t* b, Py_ssize_t n, Py_ssize_t* at) except? -1:
    cdef Py_ssize_t pos = at[0]
    cdef uint8_t byte
    if pos < n:
        byte = b[pos]
        if byte < 0x80:
            at[0] = pos + 1
            return (byte >> 1) ^ -(<int64_t>(byte & 1))
    return _varint(b, n, at, 5)


cdef inline Py_ssize_t _sized(const uint8_t* b, Py_ssize_t n, Py_ssize_t* at) except -1:
    """A ``long`` length at ``at[0]``, checked against the bytes left; ``at[0]`` is left at the
    data, the length is returned (the reference's ``_sized``, errors at the length's start)."""
    cdef Py_ssize_t start = at[0]
    cdef int64_t size = _long(b, n, at)
    if size < 0:
        raise _Bad(f"negative length {size}", start)
    if size > n - at[0]:
        raise _Bad(f"truncated: a length of {size} bytes runs past the end", start)
    return <Py_ssize_t>size


# -- nodes: one per reader Arrow array ---------------------------------------------------------


cdef class Node:
    """Reads one writer value into one Arrow array's buffers; ``n`` rows so far."""

    cdef object arrow
    cdef Py_ssize_t n
    cdef Py_ssize_t nulls
    cdef Buf valid
    cdef Py_ssize_t saved_n
    cdef Py_ssize_t saved_nulls

    def __cinit__(self):
        self.valid = Buf()

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        raise NotImplementedError

    cdef inline int push_valid(self) except -1:
        self.valid.reserve(1)
        self.valid.data[self.valid.size] = 1
        self.valid.size += 1
        self.n += 1
        return 0

    cdef int append_null(self) except -1:
        self.valid.zeros(1)
        self.n += 1
        self.nulls += 1
        return 0

    cdef int append_value(self, bytes value) except -1:
        """Append one row's value in this array's layout (a reader field's default)."""
        raise NotImplementedError

    cdef int save(self) except -1:
        self.saved_n = self.n
        self.saved_nulls = self.nulls
        return 0

    cdef int restore(self) except -1:
        self.n = self.saved_n
        self.nulls = self.saved_nulls
        self.valid.size = self.n
        return 0

    cdef int reset(self) except -1:
        self.saved_n = 0
        self.saved_nulls = 0
        self.restore()
        return 0

    cdef object validity(self):
        """The validity bitmap, or None without nulls; empties the validity bytes."""
        if self.nulls == 0:
            self.valid.size = 0
            return None
        return _bitmap(self.valid, self.n)

    cdef object finish(self):
        raise NotImplementedError


cdef class FixedNode(Node):
    """Fixed-width values (``width`` bytes a row); null rows hold zeros."""

    cdef Buf values
    cdef Py_ssize_t width

    def __cinit__(self):
        self.values = Buf()

    cdef int append_null(self) except -1:
        Node.append_null(self)
        self.values.zeros(self.width)
        return 0

    cdef int append_value(self, bytes value) except -1:
        self.values.put(PyBytes_AS_STRING(value), self.width)
        self.push_valid()
        return 0

    cdef int restore(self) except -1:
        Node.restore(self)
        self.values.size = self.n * self.width
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        out = pa.Array.from_buffers(self.arrow, n, [validity, self.values.take()], nulls)
        self.n = self.nulls = 0
        return out


cdef class IntNode(FixedNode):
    """``int``/``long`` into int32 (``width`` 4) or int64 (8), times ``scale`` (timestamps in
    milliseconds to microseconds, checked against 64 bits)."""

    cdef int max_bytes
    cdef int64_t scale

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef Py_ssize_t start = pos
        cdef int64_t value = (
            _int(b, n, &pos) if self.max_bytes == 5 else _long(b, n, &pos)
        )
        if self.scale != 1:
            if value > INT64_MAX / self.scale or value < INT64_MIN / self.scale:
                raise _Bad("a timestamp outside 64-bit microseconds", start)
            value *= self.scale
        self.values.reserve(8)
        if self.width == 4:
            (<int32_t*>(self.values.data + self.values.size))[0] = <int32_t>value
        else:
            (<int64_t*>(self.values.data + self.values.size))[0] = value
        self.values.size += self.width
        self.push_valid()
        return pos


cdef class IntToDoubleNode(FixedNode):
    """``int``/``long`` read as ``double``."""

    cdef int max_bytes

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef int64_t value = (
            _int(b, n, &pos) if self.max_bytes == 5 else _long(b, n, &pos)
        )
        cdef double d = <double>value
        self.values.put(&d, 8)
        self.push_valid()
        return pos


cdef class FloatNode(FixedNode):
    """``float`` (4 bytes) or ``double`` (8), little-endian IEEE 754; a ``float`` into a
    ``double`` column when ``width`` is 8 and ``single`` is set."""

    cdef bint single
    cdef object kind

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef Py_ssize_t size = 4 if self.single else 8
        cdef float f
        cdef double d
        if pos + size > n:
            raise _Bad(f"truncated: a {self.kind} past the end", pos)
        if self.single and self.width == 8:
            memcpy(&f, b + pos, 4)
            d = f
            self.values.put(&d, 8)
        else:
            self.values.put(b + pos, size)
        self.push_valid()
        return pos + size


cdef class BoolNode(FixedNode):
    """``boolean``: one byte, 0 or 1 (packed into Arrow's bitmap at the end)."""

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef uint8_t byte
        if pos >= n:
            raise _Bad("truncated: a boolean past the end", pos)
        byte = b[pos]
        if byte > 1:
            raise _Bad(f"a boolean byte 0x{byte:02x}, not 0 or 1", pos)
        self.values.put(&byte, 1)
        self.push_valid()
        return pos + 1

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        values = _bitmap(self.values, n)
        self.n = self.nulls = 0
        return pa.Array.from_buffers(self.arrow, n, [validity, values], nulls)


cdef class DecimalNode(FixedNode):
    """``bytes`` read as ``decimal(precision, scale)``: the big-endian two's complement
    unscaled value into decimal128's 16 little-endian bytes, checked against its precision."""

    cdef int precision

    cdef int put_decimal(
        self, const uint8_t* b, Py_ssize_t pos, Py_ssize_t size, Py_ssize_t start
    ) except -1:
        """Append the ``size`` bytes at ``pos`` as a decimal (errors at ``start``)."""
        cdef skp_int128 value = 0
        cdef Py_ssize_t i
        cdef skp_int128 bound = skp_pow10[self.precision]
        if size <= 16:
            if size:
                value = -1 if b[pos] & 0x80 else 0
            for i in range(size):
                value = (value << 8) | b[pos + i]
            if value >= bound or value <= -bound:
                raise _Bad(f"a decimal wider than its precision {self.precision}", start)
            self.values.put(&value, 16)
        else:
            unscaled = int.from_bytes(
                PyBytes_FromStringAndSize(<const char*>(b + pos), size), "big", signed=True
            )
            if abs(unscaled) >= 10**self.precision:
                raise _Bad(f"a decimal wider than its precision {self.precision}", start)
            data = unscaled.to_bytes(16, "little", signed=True)
            self.values.put(PyBytes_AS_STRING(data), 16)
        self.push_valid()
        return 0

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef Py_ssize_t start = pos
        cdef Py_ssize_t size = _sized(b, n, &pos)
        self.put_decimal(b, pos, size, start)
        return pos + size


cdef class FixedDecimalNode(DecimalNode):
    """A ``fixed`` of ``size`` bytes read as a decimal."""

    cdef Py_ssize_t size

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        if self.size > n - pos:
            raise _Bad(f"truncated: a fixed of {self.size} bytes runs past the end", pos)
        self.put_decimal(b, pos, self.size, pos)
        return pos + self.size


cdef class SizedNode(Node):
    """``string``/``bytes`` into a string or binary array (offsets and data); UTF-8 checked
    when either side is a string."""

    cdef Buf offsets
    cdef Buf data
    cdef bint check_text
    cdef Py_ssize_t saved_data

    def __cinit__(self):
        self.offsets = Buf()
        self.data = Buf()
        self.offsets.put_int32(0)

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef Py_ssize_t start = pos
        cdef Py_ssize_t size = _sized(b, n, &pos)
        if self.check_text and not valid_utf8(b + pos, size):
            raise _Bad("invalid UTF-8 in a string", start)
        self.data.put(b + pos, size)
        if self.data.size > INT32_MAX:
            raise OverflowError("more than 2 GiB of strings or bytes in one column")
        self.offsets.put_int32(<int32_t>self.data.size)
        self.push_valid()
        return pos + size

    cdef int append_null(self) except -1:
        Node.append_null(self)
        self.offsets.put_int32(<int32_t>self.data.size)
        return 0

    cdef int append_value(self, bytes value) except -1:
        self.data.put(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))
        if self.data.size > INT32_MAX:
            raise OverflowError("more than 2 GiB of strings or bytes in one column")
        self.offsets.put_int32(<int32_t>self.data.size)
        self.push_valid()
        return 0

    cdef int save(self) except -1:
        Node.save(self)
        self.saved_data = self.data.size
        return 0

    cdef int restore(self) except -1:
        Node.restore(self)
        self.offsets.size = (self.n + 1) * 4
        self.data.size = self.saved_data
        return 0

    cdef int reset(self) except -1:
        self.saved_data = 0
        return Node.reset(self)

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        out = pa.Array.from_buffers(
            self.arrow, n, [validity, self.offsets.take(), self.data.take()], nulls
        )
        self.offsets.put_int32(0)
        self.n = self.nulls = 0
        self.saved_data = 0
        return out


cdef class FixedBinaryNode(SizedNode):
    """A ``fixed`` of ``size`` bytes into a binary array."""

    cdef Py_ssize_t size

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        if self.size > n - pos:
            raise _Bad(f"truncated: a fixed of {self.size} bytes runs past the end", pos)
        self.data.put(b + pos, self.size)
        if self.data.size > INT32_MAX:
            raise OverflowError("more than 2 GiB of strings or bytes in one column")
        self.offsets.put_int32(<int32_t>self.data.size)
        self.push_valid()
        return pos + self.size


cdef class EnumNode(SizedNode):
    """An ``enum``: the symbol's index (an ``int``) into a string array of symbols, resolved
    to the reader's (its default for a symbol it lacks; None: that record fails)."""

    cdef list symbols  # per writer index: the reader's symbol as UTF-8, or None
    cdef list missing  # per writer index: the failure's reason when the symbol is None
    cdef Py_ssize_t count

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef Py_ssize_t start = pos
        cdef int64_t index = _int(b, n, &pos)
        if not 0 <= index < self.count:
            raise _Bad(f"enum index {index} outside 0..{self.count - 1}", start)
        symbol = self.symbols[index]
        if symbol is None:
            raise _Bad(self.missing[index], start)
        self.append_value(symbol)
        return pos


cdef class SkipNode(Node):
    """A writer field the reader lacks: read (checked as the reference checks it) into a
    scratch array that is emptied again; nothing is kept."""

    cdef Node inner

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        pos = self.inner.read(b, n, pos)
        self.inner.reset()
        return pos


cdef class Fill:
    """A reader field the writer lacks: its default ("Schema Resolution"), one value (or a
    null) appended to ``target`` per record."""

    cdef Node target
    cdef bint null
    cdef bytes value

    cdef int fill(self) except -1:
        if self.null:
            return self.target.append_null()
        return self.target.append_value(self.value)


cdef class StructNode(Node):
    """A record: its fields read in the writer's order (``readers``) into the children in the
    reader's order (``children``); the same nodes, permuted."""

    cdef list children
    cdef list readers
    cdef list fills

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef list readers = self.readers
        cdef list fills = self.fills
        cdef Py_ssize_t i
        for i in range(len(readers)):
            pos = (<Node>readers[i]).read(b, n, pos)
        for i in range(len(fills)):
            (<Fill>fills[i]).fill()
        self.push_valid()
        return pos

    cdef int append_null(self) except -1:
        Node.append_null(self)
        for child in self.children:
            (<Node>child).append_null()
        return 0

    cdef int save(self) except -1:
        Node.save(self)
        for child in self.children:
            (<Node>child).save()
        return 0

    cdef int restore(self) except -1:
        Node.restore(self)
        for child in self.children:
            (<Node>child).restore()
        return 0

    cdef int reset(self) except -1:
        Node.reset(self)
        for child in self.children:
            (<Node>child).reset()
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        children = [(<Node>child).finish() for child in self.children]
        self.n = self.nulls = 0
        return pa.Array.from_buffers(self.arrow, n, [validity], nulls, children=children)


cdef class ListNode(Node):
    """An array: blocks of items ("Binary Encoding", arrays), each block's count checked
    against the bytes left (``count * min_size``, ``min_size`` >= 1)."""

    cdef Node items
    cdef Buf offsets
    cdef Py_ssize_t min_size
    cdef int64_t total
    cdef int64_t saved_total

    def __cinit__(self):
        self.offsets = Buf()
        self.offsets.put_int32(0)

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef int64_t total = self.total
        cdef Py_ssize_t start
        cdef int64_t count, size
        cdef uint64_t items
        cdef uint64_t i
        cdef Node item = self.items
        while True:
            start = pos
            count = _long(b, n, &pos)
            if count == 0:
                break
            if count < 0:
                items = <uint64_t>(-(count + 1)) + 1
                size = _long(b, n, &pos)
                if size < 0:
                    raise _Bad(f"negative block size {size}", start)
            else:
                items = <uint64_t>count
            if items > <uint64_t>((n - pos) // self.min_size):
                raise _Bad(f"truncated: a block of {items} items runs past the end", start)
            for i in range(items):
                pos = item.read(b, n, pos)
            total += <int64_t>items
        if total > INT32_MAX:
            raise _Bad("more than 2**31 - 1 items in one column", pos)
        self.total = total
        self.offsets.put_int32(<int32_t>total)
        self.push_valid()
        return pos

    cdef int append_null(self) except -1:
        Node.append_null(self)
        self.offsets.put_int32(<int32_t>self.total)
        return 0

    cdef int save(self) except -1:
        Node.save(self)
        self.saved_total = self.total
        self.items.save()
        return 0

    cdef int restore(self) except -1:
        Node.restore(self)
        self.offsets.size = (self.n + 1) * 4
        self.total = self.saved_total
        self.items.restore()
        return 0

    cdef int reset(self) except -1:
        self.saved_total = 0
        Node.reset(self)
        self.items.reset()
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        offsets = self.offsets.take()
        items = self.items.finish()
        self.offsets.put_int32(0)
        self.n = self.nulls = 0
        self.total = self.saved_total = 0
        return pa.Array.from_buffers(self.arrow, n, [validity, offsets], nulls, children=[items])


cdef class MapNode(ListNode):
    """A map: blocks of (string key, value) pairs, keys UTF-8 checked (the reference's
    ``_blocks`` with keys: a bad key's position is the byte after it)."""

    cdef SizedNode keys

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef int64_t total = self.total
        cdef Py_ssize_t start, size
        cdef int64_t count, block_size
        cdef uint64_t items
        cdef uint64_t i
        cdef Node item = self.items
        cdef SizedNode keys = self.keys
        while True:
            start = pos
            count = _long(b, n, &pos)
            if count == 0:
                break
            if count < 0:
                items = <uint64_t>(-(count + 1)) + 1
                block_size = _long(b, n, &pos)
                if block_size < 0:
                    raise _Bad(f"negative block size {block_size}", start)
            else:
                items = <uint64_t>count
            if items > <uint64_t>((n - pos) // self.min_size):
                raise _Bad(f"truncated: a block of {items} items runs past the end", start)
            for i in range(items):
                size = _sized(b, n, &pos)
                if not valid_utf8(b + pos, size):
                    raise _Bad("invalid UTF-8 in a string", pos + size)
                keys.data.put(b + pos, size)
                if keys.data.size > INT32_MAX:
                    raise OverflowError("more than 2 GiB of strings or bytes in one column")
                keys.offsets.put_int32(<int32_t>keys.data.size)
                keys.push_valid()
                pos = item.read(b, n, pos + size)
            total += <int64_t>items
        if total > INT32_MAX:
            raise _Bad("more than 2**31 - 1 items in one column", pos)
        self.total = total
        self.offsets.put_int32(<int32_t>total)
        self.push_valid()
        return pos

    cdef int save(self) except -1:
        ListNode.save(self)
        self.keys.save()
        return 0

    cdef int restore(self) except -1:
        ListNode.restore(self)
        self.keys.restore()
        return 0

    cdef int reset(self) except -1:
        ListNode.reset(self)
        self.keys.reset()
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        offsets = self.offsets.take()
        keys = self.keys.finish()
        items = self.items.finish()
        self.offsets.put_int32(0)
        self.n = self.nulls = 0
        self.total = self.saved_total = 0
        entries = pa.StructArray.from_arrays(
            [keys, items], fields=[self.arrow.key_field, self.arrow.item_field]
        )
        return pa.Array.from_buffers(
            self.arrow, n, [validity, offsets], nulls, children=[entries]
        )


cdef class UnionNode(Node):
    """A writer union whose branches all go to one array (``target``): the branch index
    ("Binary Encoding", unions: a ``long``), then a null or the branch's value. Everything
    else is ``target``'s."""

    cdef Node target
    cdef list branches  # per writer branch: None (a null) or the node reading it
    cdef Py_ssize_t count

    cdef Py_ssize_t read(self, const uint8_t* b, Py_ssize_t n, Py_ssize_t pos) except -1:
        cdef Py_ssize_t start = pos
        cdef int64_t index = _long(b, n, &pos)
        if not 0 <= index < self.count:
            raise _Bad(f"union index {index} outside 0..{self.count - 1}", start)
        branch = self.branches[index]
        if branch is None:
            self.target.append_null()
            return pos
        return (<Node>branch).read(b, n, pos)

    cdef int append_null(self) except -1:
        return self.target.append_null()

    cdef int save(self) except -1:
        return self.target.save()

    cdef int restore(self) except -1:
        return self.target.restore()

    cdef int reset(self) except -1:
        return self.target.reset()

    cdef object finish(self):
        return self.target.finish()


# -- the plan ----------------------------------------------------------------------------------


cdef class AccelPlan:
    """A planned writer -> reader pair: :meth:`decode` is the reference's
    :meth:`~spark_kafka_py.formats.avro.decoder.AvroDecoder.decode`."""

    cdef Node root
    cdef readonly object arrow_type

    def decode(self, payloads, on_error=None):
        """Decode a column of payloads into one array of :attr:`arrow_type`.

        Args:
            payloads: an iterable of ``bytes``/``bytearray``/``memoryview`` (one datum's Avro
                binary encoding each, unframed) or None (a null row).
            on_error: None to raise at the first bad payload; otherwise called with each bad
                payload's :class:`AvroDecodeError`, its row null.

        Returns:
            A ``pyarrow.Array`` of :attr:`arrow_type`, one row per payload.

        Raises:
            AvroDecodeError: a bad payload (``index``, ``reason``, ``position`` as the
                reference's), without ``on_error``.
        """
        cdef Node root = self.root
        cdef Py_buffer view
        cdef const uint8_t* b
        cdef Py_ssize_t n, end
        cdef Py_ssize_t index = -1
        cdef bint permissive = on_error is not None
        root.reset()
        for payload in payloads:
            index += 1
            if payload is None:
                root.append_null()
                continue
            if permissive:
                root.save()
            try:
                if type(payload) is bytes:
                    end = root.read(
                        <const uint8_t*>PyBytes_AS_STRING(payload), PyBytes_GET_SIZE(payload), 0
                    )
                    n = PyBytes_GET_SIZE(payload)
                else:
                    PyObject_GetBuffer(payload, &view, PyBUF_SIMPLE)
                    try:
                        n = view.len
                        end = root.read(<const uint8_t*>view.buf, n, 0)
                    finally:
                        PyBuffer_Release(&view)
                if end != n:
                    raise _Bad(f"{n - end} trailing bytes after the value", end)
            except _Bad as bad:
                error = AvroDecodeError(index, bad.reason, bad.position)
                if not permissive:
                    root.reset()
                    raise error from None
                root.restore()
                root.append_null()
                on_error(error)
        return root.finish()

    def decode_slices(self, data, const int64_t[:] starts, const int64_t[:] ends, valid=None,
                      on_error=None):
        """Decode the payloads ``data[starts[i]:ends[i]]`` of one buffer (an Arrow binary
        column's data buffer, each value's framing skipped by its start), with no Python
        object per row: :meth:`decode` of those slices.

        Args:
            data: a buffer (``pyarrow.Buffer``, ``bytes``...) holding the payloads.
            starts, ends: int64 arrays of the same length: each payload's byte range.
            valid: None, or a uint8 array of that length: 0 gives a null row.
            on_error: as :meth:`decode`.

        Raises:
            AvroDecodeError: as :meth:`decode` (``index`` the row); ValueError: a range outside
                ``data`` or arrays of different lengths.
        """
        cdef Node root = self.root
        cdef Py_buffer view
        cdef const uint8_t[:] ok
        cdef bint has_valid = valid is not None
        cdef Py_ssize_t rows = starts.shape[0]
        cdef Py_ssize_t size, i, n, end, start
        cdef const uint8_t* base
        cdef bint permissive = on_error is not None
        if ends.shape[0] != rows:
            raise ValueError(f"{rows} starts but {ends.shape[0]} ends")
        if has_valid:
            ok = valid
            if ok.shape[0] != rows:
                raise ValueError(f"{rows} starts but {ok.shape[0]} validity flags")
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)  # any format: read as bytes
        try:
            base = <const uint8_t*>view.buf
            size = view.len
            for i in range(rows):
                if (not has_valid or ok[i]) and not (0 <= starts[i] <= ends[i] <= size):
                    raise ValueError(f"row {i}: bytes {starts[i]}..{ends[i]} outside {size}")
            root.reset()
            for i in range(rows):
                if has_valid and not ok[i]:
                    root.append_null()
                    continue
                if permissive:
                    root.save()
                start = starts[i]
                n = ends[i] - start
                try:
                    end = root.read(base + start, n, 0)
                    if end != n:
                        raise _Bad(f"{n - end} trailing bytes after the value", end)
                except _Bad as bad:
                    error = AvroDecodeError(i, bad.reason, bad.position)
                    if not permissive:
                        root.reset()
                        raise error from None
                    root.restore()
                    root.append_null()
                    on_error(error)
            return root.finish()
        finally:
            PyBuffer_Release(&view)


def plan(writer, reader, arrow_type):
    """The accelerated plan of a writer -> reader pair, or None when it is not supported.

    Args:
        writer, reader: :class:`~spark_kafka_py.formats.avro.schema.Schema` s whose pair the
            reference already planned (so it resolves).
        arrow_type: the reader's mapped Arrow type (``AvroDecoder.arrow_type``).

    Returns:
        An :class:`AccelPlan`, or None (see the module's list of what is supported).
    """
    from spark_kafka_py.formats.avro.decoder import _Budget, _Planner

    planner = _Planner(writer, reader, _Budget())
    try:
        root = _plan(planner, writer.root, reader.root, arrow_type)
    except _Unsupported:
        return None
    out = AccelPlan()
    out.root = root
    out.arrow_type = arrow_type
    return out


_TIME_SCALE = {
    "timestamp-millis": 1000,
    "timestamp-micros": 1,
    "local-timestamp-millis": 1000,
    "local-timestamp-micros": 1,
}


cdef Node _plan(object planner, object w_type, object r_type, object arrow):
    """The node reading writer ``w_type`` into an array of reader ``r_type`` (``arrow``),
    following the reference's ``_Planner.plan`` case by case; _Unsupported otherwise."""
    cdef MapNode map_node
    from spark_kafka_py.formats.avro.schema import (
        Array,
        Enum,
        Fixed,
        Map,
        Primitive,
        Record,
        UnionType,
    )
    from spark_kafka_py.formats.avro.types import union_shape

    w = planner.writer.deref(w_type)
    r = planner.reader.deref(r_type)
    if isinstance(w, UnionType):
        return _writer_union(planner, w, r, arrow)
    if isinstance(r, UnionType):
        index = planner.reader_branch(w, r)
        if index is None:
            raise _Unsupported()
        target = planner.reader.deref(r.branches[index])
        if isinstance(target, Primitive) and target.type == "null":
            raise _Unsupported()  # a null read into a union's array: only as a writer branch
        shape = union_shape(r, planner.reader)
        if shape.kind == "struct":
            raise _Unsupported()
        if shape.kind in ("long", "double"):
            return _plan(planner, w, Primitive(shape.kind), arrow)
        return _plan(planner, w, r.branches[index], arrow)
    if not planner.matches(w, r, False):
        raise _Unsupported()
    if isinstance(w, Primitive):
        return _primitive(w, r, arrow)
    if isinstance(w, Enum) and isinstance(r, Enum) and arrow == pa.string():
        return _enum(w, r, arrow)
    if isinstance(w, Fixed) and isinstance(r, Fixed):
        return _fixed(w, r, arrow)
    if isinstance(w, Array):
        if not isinstance(r, Array) or not pa.types.is_list(arrow):
            raise _Unsupported()
        min_size = planner._min_size(w.items)
        if min_size < 1:
            raise _Unsupported()  # zero-byte items: the reference's budget bounds them
        node = ListNode()
        node.arrow = arrow
        node.items = _plan(planner, w.items, r.items, arrow.value_type)
        node.min_size = min_size
        return node
    if isinstance(w, Map):
        if not isinstance(r, Map) or not pa.types.is_map(arrow) or arrow.key_type != pa.string():
            raise _Unsupported()
        map_node = MapNode()
        map_node.arrow = arrow
        map_node.keys = SizedNode()
        map_node.keys.arrow = pa.string()
        map_node.keys.check_text = True
        map_node.items = _plan(planner, w.values, r.values, arrow.item_type)
        map_node.min_size = 1 + planner._min_size(w.values)
        return map_node
    if isinstance(w, Record) and isinstance(r, Record) and pa.types.is_struct(arrow):
        return _record(planner, w, r, arrow)
    raise _Unsupported()


cdef Node _writer_union(object planner, object w, object r, object arrow):
    """A writer union: every branch must plan into the same array (or be a null the reader's
    union takes)."""
    from spark_kafka_py.formats.avro.schema import Primitive, UnionType

    node = UnionNode()
    node.arrow = arrow
    node.branches = []
    target = None
    for branch in w.branches:
        b = planner.writer.deref(branch)
        if isinstance(b, Primitive) and b.type == "null":
            if not isinstance(r, UnionType):
                raise _Unsupported()  # fails the records that use it: the reference words it
            index = planner.reader_branch(b, r)
            if index is None:
                raise _Unsupported()
            kept = planner.reader.deref(r.branches[index])
            if not (isinstance(kept, Primitive) and kept.type == "null"):
                raise _Unsupported()
            node.branches.append(None)
            continue
        if target is not None or isinstance(b, UnionType):
            raise _Unsupported()  # two branches into one array: not here
        target = _plan(planner, b, r, arrow)
        node.branches.append(target)
    if target is None:
        raise _Unsupported()
    node.target = target
    node.count = len(node.branches)
    return node


cdef Node _record(object planner, object w, object r, object arrow):
    """A record (the reference's ``_record``): writer fields matched by name or a reader alias
    read into their reader field's array, the others read and dropped (:class:`SkipNode`);
    reader fields the writer lacks take their default (:class:`Fill`, leaf types only)."""
    by_name = {}
    for i, f in enumerate(r.fields):
        by_name.setdefault(f.name, i)
    for i, f in enumerate(r.fields):
        for alias in f.aliases:
            by_name.setdefault(alias, i)
    if arrow.num_fields != len(r.fields):
        raise _Unsupported()
    children = [None] * len(r.fields)
    readers = []
    for f in w.fields:
        slot = by_name.get(f.name)
        if slot is None or children[slot] is not None:
            readers.append(_skip(planner, f.type))
            continue
        child = _plan(planner, f.type, r.fields[slot].type, arrow.field(slot).type)
        children[slot] = child
        readers.append(child)
    fills = []
    for i, f in enumerate(r.fields):
        if children[i] is None:
            fill = _default(planner, f, arrow.field(i).type)
            children[i] = fill.target
            fills.append(fill)
    node = StructNode()
    node.arrow = arrow
    node.children = children
    node.readers = readers
    node.fills = fills
    return node


cdef Node _skip(object planner, object w_type):
    """A reader of writer type ``w_type`` that keeps nothing: the writer's type planned
    against itself into a scratch array."""
    from spark_kafka_py.formats.avro.decoder import _Budget, _Planner
    from spark_kafka_py.formats.avro.schema import Schema
    from spark_kafka_py.formats.avro.types import to_spark
    from spark_kafka_py.formats.errors import SchemaError

    writer = planner.writer
    try:
        arrow = to_spark(Schema(w_type, writer.names)).arrow
    except SchemaError:
        raise _Unsupported() from None
    node = SkipNode()
    node.arrow = arrow
    node.inner = _plan(_Planner(writer, writer, _Budget()), w_type, w_type, arrow)
    return node


cdef Fill _default(object planner, object f, object arrow):
    """A reader field's default: the reference's default filler run once into its own
    builder, the one value taken from the array it gives."""
    from spark_kafka_py.formats.avro.decoder import _builder_for
    from spark_kafka_py.formats.errors import SchemaError

    target = _leaf(arrow)
    builder = _builder_for(arrow)
    try:
        planner.default(f, builder, "")()
    except SchemaError:
        raise _Unsupported() from None
    one = builder.finish()
    out = Fill()
    out.target = target
    out.null = one.null_count == 1
    if out.null:
        out.value = b""
    elif isinstance(target, BoolNode):
        out.value = b"\x01" if one[0].as_py() else b"\x00"
    elif isinstance(target, SizedNode):
        value = one[0].as_py()
        out.value = value.encode("utf-8") if isinstance(value, str) else value
    else:
        width = (<FixedNode>target).width
        out.value = one.buffers()[1].to_pybytes()[one.offset * width : (one.offset + 1) * width]
    return out


cdef Node _leaf(object arrow):
    """An empty node of a leaf Arrow type (filled by defaults only, never read)."""
    cdef FixedNode fixed
    cdef SizedNode sized
    if pa.types.is_boolean(arrow):
        fixed = BoolNode()
        fixed.width = 1
    elif arrow in (pa.string(), pa.binary()):
        sized = SizedNode()
        sized.arrow = arrow
        return sized
    elif arrow in (pa.int32(), pa.date32(), pa.float32()):
        fixed = FixedNode()
        fixed.width = 4
    elif arrow == pa.int64() or arrow == pa.float64() or (
        pa.types.is_timestamp(arrow) and arrow.unit == "us"
    ):
        fixed = FixedNode()
        fixed.width = 8
    elif pa.types.is_decimal128(arrow):
        fixed = FixedNode()
        fixed.width = 16
    else:
        raise _Unsupported()
    fixed.arrow = arrow
    return fixed


cdef Node _enum(object w, object r, object arrow):
    """The reference's ``_enum_reader``: writer symbols by index, each the reader's own or
    the reader's default."""
    node = EnumNode()
    node.arrow = arrow
    node.check_text = False
    reader_symbols = set(r.symbols)
    node.symbols = []
    node.missing = []
    for symbol in w.symbols:
        kept = symbol if symbol in reader_symbols else r.default
        node.symbols.append(None if kept is None else kept.encode("utf-8"))
        node.missing.append(
            f"enum symbol {symbol!r} is not in the reader's enum {r.name!r}, which has no default"
        )
    node.count = len(w.symbols)
    return node


cdef Node _fixed(object w, object r, object arrow):
    """The reference's ``_fixed_reader``: ``size`` bytes, binary or a decimal."""
    cdef FixedDecimalNode decimal
    cdef FixedBinaryNode binary
    if r.logical_type == "decimal":
        if not pa.types.is_decimal128(arrow) or r.precision is None or r.precision > 38:
            raise _Unsupported()
        decimal = FixedDecimalNode()
        decimal.arrow = arrow
        decimal.width = 16
        decimal.precision = r.precision
        decimal.size = w.size
        return decimal
    if arrow != pa.binary():
        raise _Unsupported()
    binary = FixedBinaryNode()
    binary.arrow = arrow
    binary.size = w.size
    return binary


cdef Node _primitive(object w, object r, object arrow):
    """A primitive (and its promotions and logical types) into its Arrow array."""
    cdef IntNode integer
    cdef IntToDoubleNode to_double
    cdef FloatNode floating
    cdef BoolNode boolean
    cdef DecimalNode decimal
    cdef SizedNode sized
    kind = w.type
    if kind == "boolean" and r.type == "boolean" and pa.types.is_boolean(arrow):
        boolean = BoolNode()
        boolean.arrow = arrow
        boolean.width = 1
        return boolean
    if kind in ("int", "long"):
        if r.type in ("int", "long"):
            integer = IntNode()
            integer.arrow = arrow
            integer.max_bytes = 5 if kind == "int" else 10
            integer.scale = _TIME_SCALE.get(r.logical_type or "", 1)
            if r.type == "int" and arrow in (pa.int32(), pa.date32()):
                integer.width = 4
            elif r.type == "long" and (
                pa.types.is_int64(arrow) or pa.types.is_timestamp(arrow)
            ) and arrow.bit_width == 64:
                integer.width = 8
            else:
                raise _Unsupported()
            return integer
        if r.type == "double" and pa.types.is_float64(arrow):
            to_double = IntToDoubleNode()
            to_double.arrow = arrow
            to_double.width = 8
            to_double.max_bytes = 5 if kind == "int" else 10
            return to_double
        raise _Unsupported()  # into a float32: the reference rounds twice
    if kind in ("float", "double"):
        floating = FloatNode()
        floating.arrow = arrow
        floating.kind = kind
        floating.single = kind == "float"
        if r.type == "float" and kind == "float" and pa.types.is_float32(arrow):
            floating.width = 4
        elif r.type == "double" and pa.types.is_float64(arrow):
            floating.width = 8
        else:
            raise _Unsupported()
        return floating
    if kind in ("string", "bytes"):
        if r.logical_type == "decimal" and r.type == "bytes":
            if not pa.types.is_decimal128(arrow) or r.precision is None or r.precision > 38:
                raise _Unsupported()
            decimal = DecimalNode()
            decimal.arrow = arrow
            decimal.width = 16
            decimal.precision = r.precision
            return decimal
        if r.type == "string" and arrow == pa.string():
            pass
        elif r.type == "bytes" and arrow == pa.binary():
            pass
        else:
            raise _Unsupported()
        sized = SizedNode()
        sized.arrow = arrow
        sized.check_text = kind == "string" or r.type == "string"
        return sized
    raise _Unsupported()
