# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Accelerated twin of :class:`spark_kafka_py.formats.avro.encoder.AvroEncoder`'s plan (Cython).

Same input, same bytes, same errors as the pure-Python reference
(:mod:`spark_kafka_py.formats.avro.encoder`) for the (writer schema, Arrow type) pairs it
supports; the reference decides everything else. :func:`plan` returns None for a pair it does
not support, and :class:`~spark_kafka_py.formats.avro.encoder.AvroEncoder` then keeps the pure
plan. It is only asked after the reference's plan was built, so every schema error
(:class:`~spark_kafka_py.formats.errors.IncompatibleSchemaError`) is the reference's.

Supported (Avro specification 1.12, "Binary Encoding" and "Logical Types"): ``null``,
``boolean``; ``int``/``long`` from Arrow integers of any width (range-checked as the
reference), ``date`` from date32, ``timestamp-*``/``local-timestamp-*`` from timestamps of
any unit and ``long`` from durations (scaled with floor division); ``float``/``double`` from
float32/float64; ``string`` from string/large_string; ``bytes`` and ``fixed`` from
binary/large_binary/fixed_size_binary; ``decimal`` on bytes or fixed from decimal128 (Avro
precision up to 38); enums from strings; records (fields matched by the reference's rules,
absent nullable fields written null), arrays from list/large_list, maps from map<string, X>;
unions mapped to one Arrow type (``[null, X]``, ``[int, long]``/``[float, double]`` by the
Arrow width) and unions written from the decoder's struct of members (the first member set).
Not supported (the pure plan runs): dictionary arrays, decimal256.

How: the plan is a tree of nodes built once per pair. Each call binds the tree to the
column's arrays (the addresses of their validity bitmaps, offsets and values, with each
array's offset, so sliced arrays read in place) and writes every row's encoding into one
growable C buffer, with ``int32`` offsets and a validity bitmap; :meth:`EncodePlan.encode_column`
wraps them into one ``binary`` array with ``pyarrow.Array.from_buffers``. No Python object is
made per value except an enum symbol's ``bytes`` (a dict look-up).

Errors: a value that does not fit raises :class:`~spark_kafka_py.formats.errors.AvroEncodeError`
with the row's index, the field's path and the reference's reason words
(``tests/formats/test_avro_encode_accel.py`` compares both); the Python value named in a
reason is made only then (``as_py``).

Type stub: ``_encode_accel.pyi``.
"""

import threading

from spark_kafka_py._cutil cimport (
    ByteBuf,
    address,
    bit,
    bitmap_slice,
    buf_byte,
    buf_bytes,
    buf_put,
    buf_reserve,
    buf_varint,
    put_varint,
    value_range,
    zigzag64,
)

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdint cimport INT32_MAX, INT64_MAX
from cpython.object cimport PyObject
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from libc.math cimport isfinite, fabs

import pyarrow as pa

from spark_kafka_py.formats.avro.schema import (
    Array,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    UnionType,
    type_name,
)
from spark_kafka_py.formats.avro.types import union_shape
from spark_kafka_py.formats.errors import AvroEncodeError

__all__ = ["EncodePlan", "plan"]


cdef extern from *:
    """
    typedef __int128 ske_int128;
    static ske_int128 ske_pow10[39];
    static void ske_init_pow10(void) {
        ske_int128 p = 1;
        for (int i = 0; i < 39; i++) { ske_pow10[i] = p; p *= 10; }
    }
    """
    ctypedef long long ske_int128
    int __builtin_clzll(unsigned long long) nogil
    ske_int128 ske_pow10[39]
    void ske_init_pow10()

ske_init_pow10()

cdef double _FLOAT32_MAX = 3.4028234663852886e38
cdef int64_t _INT_MIN = -(2**31)
cdef int64_t _INT_MAX = 2**31 - 1


class _Misfit(Exception):
    """A value that does not fit the schema (the reference's ``_Misfit``)."""

    def __init__(self, path, reason):
        super().__init__(reason)
        self.path = path
        self.reason = reason


class _Unsupported(Exception):
    """The pair needs something this plan does not do: the reference encodes it."""


# -- the output buffer ---------------------------------------------------------------------------


cdef inline int _long(ByteBuf* out, int64_t value) except -1:
    """A zig-zag varint ("Binary Encoding": ``int`` and ``long``) appended to ``out``."""
    return buf_varint(out, zigzag64(value))


cdef bytes _varint_bytes(int64_t value):
    cdef uint8_t b[10]
    cdef uint8_t* after = put_varint(b, zigzag64(value))
    return PyBytes_FromStringAndSize(<char*>b, after - b)


# -- nodes ---------------------------------------------------------------------------------------


cdef class Node:
    """One (Arrow type, Avro type) pair. :meth:`write` writes row ``i`` of the bound array
    (``i`` counted from the array's own offset), refusing a null unless ``null_reason`` is
    None (a ``null`` type, whose writer ignores the value); :meth:`put` writes a non-null
    row."""

    cdef str path
    cdef object null_reason
    cdef object array
    cdef const uint8_t* validity
    cdef Py_ssize_t offset

    cdef int bind(self, object array) except -1:
        self.array = array
        self.offset = array.offset
        self.validity = address(array.buffers()[0]) if array.null_count else NULL
        return 0

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        return 0

    cdef int write(self, ByteBuf* out, Py_ssize_t i) except -1:
        if self.validity != NULL and not bit(self.validity, self.offset + i):
            if self.null_reason is not None:
                raise _Misfit(self.path, self.null_reason)
            return 0
        return self.put(out, i)

    cdef object value(self, Py_ssize_t i):
        """Row ``i`` as Python (for an error's reason only)."""
        return self.array[i].as_py()


cdef class NullNode(Node):
    """Avro ``null`` from an Arrow null column: nothing written, whatever the row."""

    cdef int bind(self, object array) except -1:
        self.array = array
        self.offset = array.offset
        self.validity = NULL
        return 0


cdef class ConstNode(Node):
    """The same bytes for every row (a union of only ``null``: its index)."""

    cdef bytes data

    cdef int bind(self, object array) except -1:
        self.array = array
        self.offset = array.offset
        self.validity = NULL
        return 0

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        return buf_bytes(out, self.data)


cdef class ValuesNode(Node):
    """A node of a fixed-width array (booleans, integers, dates, times, floats, decimals): its
    values buffer (``buffers()[1]``), bound per call."""

    cdef const uint8_t* values

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        self.values = address(array.buffers()[1])
        return 0


cdef class BoolNode(ValuesNode):
    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        return buf_byte(out, 1 if bit(self.values, self.offset + i) else 0)


#: Integer kinds of the values buffer.
cdef enum IntKind:
    K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64


cdef class IntNode(ValuesNode):
    """``int``/``long`` from integers, dates, timestamps and durations: ``v * mul // div``
    (floored), range-checked when ``checked``."""

    cdef IntKind kind
    cdef int64_t mul
    cdef int64_t div
    cdef bint checked
    cdef ske_int128 low
    cdef ske_int128 high
    cdef str avro_kind
    cdef object low_py
    cdef object high_py

    cdef inline ske_int128 raw(self, Py_ssize_t i) noexcept:
        cdef Py_ssize_t j = self.offset + i
        cdef IntKind k = self.kind
        if k == K_I64:
            return (<const int64_t*>self.values)[j]
        if k == K_I32:
            return (<const int32_t*>self.values)[j]
        if k == K_I16:
            return (<const int16_t*>self.values)[j]
        if k == K_I8:
            return (<const int8_t*>self.values)[j]
        if k == K_U64:
            return (<const uint64_t*>self.values)[j]
        if k == K_U32:
            return (<const uint32_t*>self.values)[j]
        if k == K_U16:
            return (<const uint16_t*>self.values)[j]
        return (<const uint8_t*>self.values)[j]

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef ske_int128 v = self.raw(i)
        cdef ske_int128 q
        if self.mul != 1:
            v = v * self.mul
        if self.div != 1:
            q = v / self.div
            if v % self.div != 0 and v < 0:
                q -= 1
            v = q
        if self.checked and (v < self.low or v > self.high):
            value = int(self.raw_py(i)) * self.mul // self.div
            raise _Misfit(
                self.path,
                f"{value} is outside Avro {self.avro_kind}'s range {self.low_py}..{self.high_py}",
            )
        return _long(out, <int64_t>v)

    cdef object raw_py(self, Py_ssize_t i):
        cdef ske_int128 v = self.raw(i)
        if self.kind == K_U64:
            return <uint64_t>v
        return <int64_t>v


cdef class FloatNode(ValuesNode):
    """``float``/``double`` from float32/float64 (as the reference: through a Python float)."""

    cdef bint source64
    cdef bint target64

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef double v
        cdef float f
        if self.source64:
            v = (<const double*>self.values)[self.offset + i]
        else:
            v = (<const float*>self.values)[self.offset + i]
        if self.target64:
            return buf_put(out, &v, 8)
        if isfinite(v) and fabs(v) > _FLOAT32_MAX:
            raise _Misfit(self.path, f"{v!r} is beyond Avro float's (32-bit) range")
        f = <float>v
        return buf_put(out, &f, 4)


cdef class BinaryNode(Node):
    """Strings and bytes: the length and the bytes (``fixed``: the bytes, size-checked;
    ``enum``: the symbol's index)."""

    cdef int width  # 4, 8: offsets; 0: fixed_size_binary
    cdef int byte_width
    cdef const uint8_t* offsets
    cdef const uint8_t* data
    cdef int fixed_size  # -1: sized (string, bytes)
    cdef dict symbols  # enum: utf-8 bytes -> index; None otherwise
    cdef str enum_name

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        buffers = array.buffers()
        if self.width == 0:
            self.data = address(buffers[1])
        else:
            self.offsets = address(buffers[1])
            self.data = address(buffers[2])
        return 0

    cdef inline const uint8_t* span(self, Py_ssize_t i, Py_ssize_t* size) noexcept:
        cdef Py_ssize_t j = self.offset + i
        cdef int64_t start, end
        if self.width:
            start = value_range(self.offsets, self.width, j, &end)
        else:
            start = j * self.byte_width
            end = start + self.byte_width
        size[0] = end - start
        return self.data + start

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t size
        cdef const uint8_t* p = self.span(i, &size)
        if self.symbols is not None:
            index = self.symbols.get(PyBytes_FromStringAndSize(<const char*>p, size))
            if index is None:
                raise _Misfit(
                    self.path,
                    f"{self.value(i)!r:.60} is not a symbol of the enum {self.enum_name!r}",
                )
            return _long(out, <int64_t>index)
        if self.fixed_size >= 0:
            if size != self.fixed_size:
                raise _Misfit(self.path, f"{size} bytes for a fixed of {self.fixed_size}")
            return buf_put(out, p, size)
        _long(out, size)
        return buf_put(out, p, size)


cdef class DecimalNode(ValuesNode):
    """``decimal`` from decimal128: rescaled to the schema's scale (exact), precision-checked,
    minimal big-endian two's complement (bytes) or sign-extended to ``size`` (fixed)."""

    cdef int shift  # schema scale - Arrow scale
    cdef int precision
    cdef int scale
    cdef int size  # -1: bytes

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef ske_int128 v
        memcpy(&v, self.values + (self.offset + i) * 16, 16)
        cdef bint negative = v < 0
        cdef ske_int128 magnitude = -v if negative else v
        cdef ske_int128 p
        cdef uint8_t be[16]
        cdef int k, width
        cdef ske_int128 u
        if self.shift >= 0:
            p = ske_pow10[self.shift]
            if magnitude > ske_pow10[38] / p:  # beyond 38 digits, so beyond the precision
                raise _Misfit(
                    self.path,
                    f"{self.value(i)} is beyond the decimal's precision {self.precision}",
                )
            magnitude = magnitude * p
        else:
            p = ske_pow10[-self.shift]
            if magnitude % p:
                raise _Misfit(
                    self.path,
                    f"{self.value(i)} has more than the schema's {self.scale} decimal places",
                )
            magnitude = magnitude / p
        if magnitude >= ske_pow10[self.precision]:
            raise _Misfit(
                self.path, f"{self.value(i)} is beyond the decimal's precision {self.precision}"
            )
        u = -magnitude if negative else magnitude
        if self.size < 0:
            # minimal: (bit length of u, or of ~u when negative, + 8) // 8 bytes
            width = ((_bit_length(~u if negative else u) + 8) >> 3)
            _long(out, width)
            buf_reserve(out, width)
            for k in range(width):
                out.data[out.size + width - 1 - k] = <uint8_t>(<uint64_t>(u >> (8 * k)) & 0xFF)
            out.size += width
            return 0
        for k in range(16):
            be[15 - k] = <uint8_t>((<uint64_t>(u >> (8 * k))) & 0xFF)
        if self.size >= 0:
            # sign-extended to the size (the precision fits it: checked by the schema)
            if self.size > 16:
                buf_reserve(out, self.size)
                memset(out.data + out.size, 0xFF if negative else 0, self.size - 16)
                out.size += self.size - 16
                return buf_put(out, be, 16)
        return buf_put(out, be + 16 - self.size, self.size)


cdef inline int _bit_length(ske_int128 x) noexcept:
    """Bits of a non-negative ``x`` (Python's ``int.bit_length``)."""
    cdef uint64_t high = <uint64_t>(x >> 64)
    cdef uint64_t low = <uint64_t>x
    if high:
        return 128 - __builtin_clzll(high)
    if low:
        return 64 - __builtin_clzll(low)
    return 0


cdef class RecordNode(Node):
    """A record: each Avro field's node on its Arrow child (an absent field: a
    :class:`ConstNode` of its null's bytes)."""

    cdef list fields  # Node per Avro field (kept alive here)
    cdef list slots  # the Arrow child's index, or None
    cdef int count
    cdef PyObject** nodes  # the fields' nodes, borrowed from ``fields``

    def __dealloc__(self):
        free(self.nodes)

    cdef int seal(self) except -1:
        self.count = len(self.fields)
        self.nodes = <PyObject**>malloc(max(self.count, 1) * sizeof(PyObject*))
        if self.nodes == NULL:
            raise MemoryError()
        for k, node in enumerate(self.fields):
            self.nodes[k] = <PyObject*>node
        return 0

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        cdef Node node
        for field, slot in zip(self.fields, self.slots):
            if slot is not None:
                node = field
                node.bind(array.field(slot))
        return 0

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef int k
        for k in range(self.count):
            (<Node>self.nodes[k]).write(out, i)
        return 0


cdef class ListNode(Node):
    """An array (or, with ``keys``, a map): one block of the count and the items, then 0."""

    cdef int width  # offsets: 4 or 8 bytes
    cdef const uint8_t* offsets
    cdef Node items
    cdef BinaryNode keys  # maps only
    cdef str items_path

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        self.offsets = address(array.buffers()[1])
        values = array.values
        if self.keys is not None:
            self.keys.bind(values.field(0))
            self.items.bind(values.field(1))
        else:
            self.items.bind(values)
        return 0

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t j = self.offset + i
        cdef int64_t start, end, k
        cdef Node items = self.items
        cdef BinaryNode keys = self.keys
        cdef Py_ssize_t size
        cdef const uint8_t* p
        start = value_range(self.offsets, self.width, j, &end)
        if end > start:
            _long(out, end - start)
            for k in range(start, end):
                if keys is not None:
                    if keys.validity != NULL and not bit(keys.validity, keys.offset + k):
                        raise _Misfit(self.items_path, "a null map key")
                    p = keys.span(k, &size)
                    _long(out, size)
                    buf_put(out, p, size)
                items.write(out, k)
        return buf_byte(out, 0)


cdef class UnionNode(Node):
    """A union mapped to one Arrow type: a null row writes the null branch's index (or fails),
    any other the branch's index and the branch's encoding."""

    cdef bytes null_bytes  # None: no null branch
    cdef bytes index_bytes
    cdef Node inner

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        self.inner.bind(array)
        return 0

    cdef int write(self, ByteBuf* out, Py_ssize_t i) except -1:
        if self.validity != NULL and not bit(self.validity, self.offset + i):
            if self.null_bytes is None:
                raise _Misfit(self.path, "a null where the union has no null branch")
            return buf_bytes(out, self.null_bytes)
        buf_bytes(out, self.index_bytes)
        return self.inner.put(out, i)


cdef class MemberUnionNode(Node):
    """A union written from the decoder's struct of members: the first member set writes its
    branch's index and its encoding; none set writes the null branch's index (or fails)."""

    cdef list members  # Node per struct field, in order
    cdef list index_bytes  # bytes per member: its branch's index
    cdef bytes null_bytes  # None: no null branch

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        cdef Node node
        for n, node in enumerate(self.members):
            node.bind(array.field(n))
        return 0

    cdef int write(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Node member
        cdef bytes index
        if self.validity != NULL and not bit(self.validity, self.offset + i):
            if self.null_bytes is None:
                raise _Misfit(self.path, "a null where the union has no null branch")
            return buf_bytes(out, self.null_bytes)
        for n, member in enumerate(self.members):
            if member.validity == NULL or bit(member.validity, member.offset + i):
                index = self.index_bytes[n]
                buf_bytes(out, index)
                return member.put(out, i)
        if self.null_bytes is None:
            raise _Misfit(self.path, "a union value with no member set")
        return buf_bytes(out, self.null_bytes)


# -- the planner (mirrors the reference's decisions; the reference already checked the pair) ----


_TIMESTAMP_UTC = frozenset({"timestamp-millis", "timestamp-micros"})
_TIMESTAMP_NTZ = frozenset({"local-timestamp-millis", "local-timestamp-micros"})
_MICROS_PER = {"s": 1_000_000, "ms": 1_000, "us": 1}
_INT_KINDS = {
    8: (K_I8, K_U8),
    16: (K_I16, K_U16),
    32: (K_I32, K_U32),
    64: (K_I64, K_U64),
}


def _is_string(arrow):
    return pa.types.is_string(arrow) or pa.types.is_large_string(arrow)


def _is_binary(arrow):
    return (
        pa.types.is_binary(arrow)
        or pa.types.is_large_binary(arrow)
        or pa.types.is_fixed_size_binary(arrow)
    )


cdef BinaryNode _binary(arrow):
    cdef BinaryNode node = BinaryNode()
    node.fixed_size = -1
    if pa.types.is_string(arrow) or pa.types.is_binary(arrow):
        node.width = 4
    elif pa.types.is_large_string(arrow) or pa.types.is_large_binary(arrow):
        node.width = 8
    elif pa.types.is_fixed_size_binary(arrow):
        node.width = 0
        node.byte_width = arrow.byte_width
    else:
        raise _Unsupported(str(arrow))
    return node


cdef class _Planner:
    cdef object schema

    def __init__(self, schema):
        self.schema = schema

    cdef Node plan(self, arrow, avro_type, str path):
        """The reference's ``plan``: non-union nodes refuse nulls."""
        if pa.types.is_dictionary(arrow):
            raise _Unsupported("dictionary")
        t = self.schema.deref(avro_type)
        if isinstance(t, UnionType):
            return self.union(arrow, t, path)
        cdef Node node = self.plain(arrow, t, path)
        node.path = path
        if isinstance(t, Primitive) and t.type == "null":
            node.null_reason = None
        else:
            node.null_reason = f"a null where the schema has no null ({type_name(t)})"
        return node

    cdef Node plain(self, arrow, t, str path):
        cdef Node node
        cdef RecordNode record
        cdef ListNode lst
        cdef BinaryNode binary
        cdef DecimalNode decimal
        if isinstance(t, Record):
            return self.record(arrow, t, path)
        if isinstance(t, (Array, Map)):
            lst = ListNode()
            lst.path = path
            if isinstance(t, Array):
                lst.width = 8 if pa.types.is_large_list(arrow) else 4
                lst.items_path = f"{path}/items"
                lst.items = self.plan(arrow.value_type, t.items, lst.items_path)
            else:
                lst.width = 4
                lst.items_path = f"{path}/values"
                lst.keys = _binary(arrow.key_type)
                lst.items = self.plan(arrow.item_type, t.values, lst.items_path)
            return lst
        if isinstance(t, Enum):
            binary = _binary(arrow)
            binary.symbols = {s.encode("utf-8"): i for i, s in enumerate(t.symbols)}
            binary.enum_name = t.name
            binary.path = path
            return binary
        if isinstance(t, Fixed):
            if t.logical_type == "decimal" and pa.types.is_decimal(arrow):
                return self.decimal(arrow, t.precision, t.scale, t.size, path)
            binary = _binary(arrow)
            binary.fixed_size = t.size
            binary.path = path
            return binary
        kind, logical = t.type, t.logical_type
        if kind == "null":
            node = NullNode()
        elif kind == "boolean":
            node = BoolNode()
        elif kind in ("int", "long"):
            node = self.integer(arrow, t, path)
        elif kind in ("float", "double"):
            node = self.floating(arrow, kind)
        elif kind == "bytes" and logical == "decimal" and pa.types.is_decimal(arrow):
            return self.decimal(arrow, t.precision, t.scale, -1, path)
        elif kind in ("bytes", "string"):
            node = _binary(arrow)
        else:
            raise _Unsupported(kind)
        node.path = path
        return node

    cdef Node floating(self, arrow, str kind):
        cdef FloatNode node = FloatNode()
        if pa.types.is_float64(arrow):
            node.source64 = True
        elif not pa.types.is_float32(arrow):
            raise _Unsupported(str(arrow))
        node.target64 = kind == "double"
        return node

    cdef Node decimal(self, arrow, precision, scale, size, str path):
        cdef DecimalNode node = DecimalNode()
        if not pa.types.is_decimal128(arrow) or precision is None or scale is None:
            raise _Unsupported(str(arrow))
        shift = scale - arrow.scale
        if not 0 < precision <= 38 or not -38 <= shift <= 38:
            raise _Unsupported("decimal")
        node.precision = precision
        node.scale = scale
        node.shift = shift
        node.size = size
        node.path = path
        return node

    cdef Node integer(self, arrow, t, str path):
        cdef IntNode node = IntNode()
        low, high = (-(2**31), 2**31 - 1) if t.type == "int" else (-(2**63), 2**63 - 1)
        mul, div = 1, 1
        if pa.types.is_integer(arrow):
            width = 32 if t.type == "int" else 64
            unsigned = pa.types.is_unsigned_integer(arrow)
            checked = arrow.bit_width > width or (unsigned and arrow.bit_width == width)
            node.kind = _INT_KINDS[arrow.bit_width][1 if unsigned else 0]
        elif pa.types.is_date32(arrow) and t.logical_type == "date":
            node.kind = K_I32
            checked = False
        elif pa.types.is_timestamp(arrow) and t.type == "long":
            utc = arrow.tz is not None
            if t.logical_type not in (_TIMESTAMP_UTC if utc else _TIMESTAMP_NTZ):
                raise _Unsupported(str(arrow))
            millis = t.logical_type in ("timestamp-millis", "local-timestamp-millis")
            node.kind = K_I64
            if arrow.unit == "ns":
                div = 1_000_000 if millis else 1_000
                checked = False
            else:
                per = _MICROS_PER[arrow.unit]
                mul, div = per, 1_000 if millis else 1
                checked = per > 1
        elif pa.types.is_duration(arrow) and t.type == "long" and t.logical_type is None:
            per = _MICROS_PER.get(arrow.unit, 1)
            node.kind = K_I64
            mul, div = per, 1_000 if arrow.unit == "ns" else 1
            checked = per > 1
        else:
            raise _Unsupported(str(arrow))
        node.mul, node.div = mul, div
        node.checked = checked
        node.low, node.high = <int64_t>low, <int64_t>high
        node.low_py, node.high_py = low, high
        node.avro_kind = t.type
        return node

    cdef Node record(self, arrow, t, str path):
        cdef RecordNode node = RecordNode()
        cdef ConstNode constant
        names = [arrow.field(i).name for i in range(arrow.num_fields)]
        node.fields = []
        node.slots = []
        for f in t.fields:
            slot = _slot(f.name, names)
            where = f"{path}/{f.name}"
            if slot is None:
                constant = ConstNode()
                constant.data = self.absent(f.type)
                constant.path = where
                node.fields.append(constant)
            else:
                node.fields.append(self.plan(arrow.field(slot).type, f.type, where))
            node.slots.append(slot)
        node.seal()
        node.path = path
        return node

    cdef bytes absent(self, avro_type):
        t = self.schema.deref(avro_type)
        if isinstance(t, Primitive) and t.type == "null":
            return b""
        if isinstance(t, UnionType):
            for i, branch in enumerate(t.branches):
                b = self.schema.deref(branch)
                if isinstance(b, Primitive) and b.type == "null":
                    return _varint_bytes(i)
        raise _Unsupported("absent")  # the reference refused it already

    cdef Node union(self, arrow, t, str path):
        shape = union_shape(t, self.schema)
        branches = [self.schema.deref(b) for b in t.branches]
        null_index = next(
            (i for i, b in enumerate(branches) if isinstance(b, Primitive) and b.type == "null"),
            None,
        )
        cdef ConstNode constant
        cdef UnionNode node
        if not shape.branches:
            if null_index is None:
                raise _Unsupported("union")
            constant = ConstNode()
            constant.data = _varint_bytes(null_index)
            constant.path = path
            return constant
        if shape.kind == "struct":
            return self.member_union(arrow, t, branches, shape.branches, null_index, path)
        index = shape.branches[0]
        if shape.kind in ("long", "double"):
            index = self.by_width(arrow, t, shape.branches)
        node = UnionNode()
        node.path = path
        node.inner = self.plain(arrow, branches[index], f"{path}/{index}")
        node.inner.path = f"{path}/{index}"
        node.index_bytes = _varint_bytes(index)
        node.null_bytes = None if null_index is None else _varint_bytes(null_index)
        return node

    cdef Node member_union(self, arrow, t, branches, members, null_index, str path):
        cdef MemberUnionNode node = MemberUnionNode()
        cdef Node member
        if not pa.types.is_struct(arrow) or arrow.num_fields != len(members):
            raise _Unsupported(str(arrow))
        node.members = []
        node.index_bytes = []
        for n, i in enumerate(members):
            member = self.plain(arrow.field(n).type, branches[i], f"{path}/{i}")
            member.path = f"{path}/{i}"
            node.members.append(member)
            node.index_bytes.append(_varint_bytes(i))
        node.null_bytes = None if null_index is None else _varint_bytes(null_index)
        node.path = path
        return node

    cdef int by_width(self, arrow, t, candidates) except -1:
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
            raise _Unsupported(str(arrow))
        for i in candidates:
            b = self.schema.deref(t.branches[i])
            if isinstance(b, Primitive) and b.type == want:
                return i
        raise _Unsupported(str(arrow))


def _slot(name, names):
    if name in names:
        return names.index(name)
    folded = [i for i, n in enumerate(names) if n.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


# -- the plan ------------------------------------------------------------------------------------


cdef class EncodePlan:
    """The accelerated plan of one (writer schema, Arrow type) pair."""

    cdef Node root
    cdef object _arrow_type
    cdef object lock
    cdef object empty

    @property
    def arrow_type(self):
        return self._arrow_type

    def encode_column(self, array, prefix=b"", schema_id=None):
        """Every non-null row's encoding, after ``prefix``, as one ``binary`` array (null where
        ``array`` is null); see :meth:`~spark_kafka_py.formats.avro.encoder.AvroEncoder.encode_column`.

        Raises:
            AvroEncodeError: a row does not fit (``index``: its position in ``array``).
            OverflowError: the payloads exceed a ``binary`` array's 2 GiB.
        """
        cdef bytes pre = bytes(prefix)
        cdef const char* pre_data = PyBytes_AS_STRING(pre)
        cdef Py_ssize_t pre_size = PyBytes_GET_SIZE(pre)
        cdef Py_ssize_t n = len(array)
        cdef Py_ssize_t i, offset
        cdef const uint8_t* validity = NULL
        cdef bint all_null = pa.types.is_null(array.type)
        cdef ByteBuf out
        cdef Node root = self.root
        cdef int32_t* offsets
        offsets_bytes = PyBytes_FromStringAndSize(NULL, (n + 1) * 4)
        offsets = <int32_t*>PyBytes_AS_STRING(offsets_bytes)
        offsets[0] = 0
        null_count = n if all_null else array.null_count
        if null_count and not all_null:
            validity = address(array.buffers()[0])
        offset = array.offset
        i = 0
        memset(&out, 0, sizeof(ByteBuf))
        try:
            with self.lock:
                root.bind(array)
                try:
                    for i in range(n):
                        if all_null or (validity != NULL and not bit(validity, offset + i)):
                            offsets[i + 1] = <int32_t>out.size
                            continue
                        buf_put(&out, pre_data, pre_size)
                        root.write(&out, i)
                        if out.size > INT32_MAX:
                            raise OverflowError(
                                "the encoded payloads exceed a binary array's 2 GiB"
                            )
                        offsets[i + 1] = <int32_t>out.size
                except _Misfit as misfit:
                    raise AvroEncodeError(i, misfit.path, misfit.reason, schema_id) from None
                finally:
                    root.bind(self.empty)  # no array kept alive between calls
            data = PyBytes_FromStringAndSize(<char*>out.data, out.size)
        finally:
            free(out.data)
        validity_buffer = None
        if null_count:
            if all_null:
                validity_buffer = pa.py_buffer(bytes((n + 7) >> 3))
            else:
                validity_buffer = pa.py_buffer(bitmap_slice(validity, offset, n))
        return pa.Array.from_buffers(
            pa.binary(),
            n,
            [validity_buffer, pa.py_buffer(offsets_bytes), pa.py_buffer(data)],
            null_count=null_count,
        )


def plan(schema, arrow_type):
    """The accelerated plan of ``schema`` written from ``arrow_type``, or None when the pair
    needs what only the reference does (a dictionary, a union of members, decimal256, ...).
    Call it only after the reference's plan was built (its schema errors come first)."""
    cdef EncodePlan p = EncodePlan()
    try:
        p.root = _Planner(schema).plan(arrow_type, schema.root, "")
    except _Unsupported:
        return None
    p._arrow_type = arrow_type
    p.empty = pa.array([], type=arrow_type)
    p.lock = threading.Lock()
    return p
