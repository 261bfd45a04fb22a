# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Accelerated twin of :class:`spark_kafka_py.formats.protobuf.encoder.ProtobufEncoder` (Cython).

Same input, same bytes as the pure-Python reference
(:mod:`spark_kafka_py.formats.protobuf.encoder`): the Protobuf wire format ("Encoding",
protobuf.dev/programming-guides/encoding: varints, zig-zag, fixed 32/64-bit little-endian,
length-delimited) written straight from the Arrow buffers of a struct column, fields in
field-number order, with the reference's rules for every (field, Arrow type) pair it accepts:

- bool; int8/16/32 and date32 into the 32-bit integer kinds and enums (by number, checked
  against the enum's numbers), int64 and the narrower ones into the 64-bit kinds, int64 into
  uint32/fixed32 (range-checked), decimal128(p, 0) into uint64/fixed64 (range-checked),
  durations of any unit into the 64-bit kinds (as microseconds); float32/float64; string and
  large_string into string (checked UTF-8) and into enums by value name; binary and
  large_binary into bytes; timestamps and durations of any unit into
  ``google.protobuf.Timestamp``/``Duration`` (seconds floored, nanos the rest); structs into
  messages; list/large_list into repeated fields (packed where the reference packs them); maps
  into map fields (a null value: the value's default entry);
- presence as the reference: a null leaves a field unset (a proto2 ``required`` scalar: its
  default, precomputed by the reference's own function), an implicit-presence field holding
  its zero is not written, a null row gives a null payload, nothing under a null row is read.

Not supported (:func:`plan` returns None and the reference encodes every batch): decimal32,
decimal64 and decimal256 columns. The plan is only asked after the reference's plan was built,
so every schema error (:class:`~spark_kafka_py.formats.errors.ProtobufSchemaError`) is the
reference's; the field matching, wire types, defaults and packing are read from the reference
module's own functions, once, when the plan is built.

Refusals: a value that does not fit (an enum name or number the enum lacks, a null list
element, an unsigned value out of range, a null map key), a string that is not UTF-8, a time
whose conversion to microseconds would lose digits or overflow 64 bits (Arrow's safe cast
refuses those in the reference), payloads beyond a ``binary`` array's 2 GiB, or an array of
another type than the plan's make :meth:`EncodePlan.encode` raise :class:`Fallback` (the row's
index and what was refused). The caller then encodes the batch with the reference, whose bytes
or error (:class:`~spark_kafka_py.formats.errors.ProtobufEncodeError` naming the row and path,
or Arrow's cast error) are therefore the ones given: every error is the reference's.

How: the plan is a tree of nodes built once per (message, Arrow type). Each call binds the
tree to the column's arrays (validity bitmaps, offsets and values, with each array's offset, so
sliced arrays are read in place) and writes every row's message into one growable C buffer
(a message or packed field's length is written after its body, the body moved when the length
takes more than one byte), with ``int32`` offsets and a validity bitmap, wrapped (not copied)
into one ``binary`` array by ``pyarrow.Array.from_buffers``. No Python object is made per
value.

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
    grow,
    put_varint,
    valid_utf8,
    value_range,
    zigzag64,
)

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.object cimport PyObject
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdint cimport INT32_MAX
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memmove

import pyarrow as pa
from google.protobuf.descriptor import FieldDescriptor

__all__ = ["EncodePlan", "Fallback", "plan"]


cdef extern from *:
    """
    typedef __int128 spe_int128;
    static int spe_mul_overflow(long long a, long long b, long long* out) {
        return __builtin_mul_overflow(a, b, out);
    }
    """
    ctypedef long long spe_int128
    int spe_mul_overflow(long long a, long long b, long long* out) nogil


class Fallback(Exception):
    """This plan refuses the batch (see the module's docstring): encode it with the reference,
    which decides (its bytes, or its error). ``index``: the refused row; ``reason``: why."""

    def __init__(self, index, reason):
        super().__init__(f"row {index}: {reason}")
        self.index = index
        self.reason = reason


class _Unsupported(Exception):
    """The (message, Arrow type) pair needs what this plan does not do."""


class _Refused(Exception):
    """A value this plan does not write (the row is known to the caller only)."""


# -- the output buffer ---------------------------------------------------------------------------


cdef class Buf:
    """The owner of one output :c:type:`~spark_kafka_py._cutil.ByteBuf` (written by
    ``_cutil``'s ``buf_*`` functions), freed with it; the encoded array's data buffer keeps it
    alive (``pyarrow.foreign_buffer(..., base=)``)."""

    cdef ByteBuf b

    def __dealloc__(self):
        free(self.b.data)

    cdef int trim(self) except -1:
        """The allocation cut to the bytes in use (none: kept)."""
        cdef uint8_t* cut
        if 0 < self.b.size < self.b.cap:
            cut = <uint8_t*>realloc(self.b.data, self.b.size)
            if cut != NULL:
                self.b.data = cut
                self.b.cap = self.b.size
        return 0


cdef inline Py_ssize_t _begin(ByteBuf* out) except -1:
    """Room for a length (one byte, as most are); :func:`_end` writes it."""
    cdef Py_ssize_t start = out.size
    buf_byte(out, 0)
    return start


cdef inline int _end(ByteBuf* out, Py_ssize_t start) except -1:
    """The length of what was written since :func:`_begin` (``start``) before it, the body
    moved when the length takes more than one byte."""
    cdef Py_ssize_t n = out.size - start - 1
    cdef uint64_t raw = <uint64_t>n
    cdef int width = 1
    while raw >= 0x80:
        width += 1
        raw >>= 7
    if width > 1:
        buf_reserve(out, width - 1)
        memmove(out.data + start + width, out.data + start + 1, n)
        out.size += width - 1
    put_varint(out.data + start, <uint64_t>n)
    return 0


cdef inline bint _zeros(const uint8_t* p, Py_ssize_t size) noexcept:
    """``size`` zero bytes at ``p``: the payload of an implicit-presence field's zero when one,
    four or eight bytes long (0, false, an empty string, +0.0; -0.0's bits differ)."""
    cdef Py_ssize_t k
    for k in range(size):
        if p[k]:
            return False
    return True


cdef inline int _refuse(str reason) except -1:
    raise _Refused(reason)


# -- value nodes: one element's payload (no tag) --------------------------------------------------


cdef class Node:
    """One (field, Arrow type) pair bound to an array: :meth:`put` writes the payload of
    element ``i`` (counted from the array's own offset), which the caller found valid."""

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


cdef inline bint _valid(Node node, Py_ssize_t i) noexcept:
    return node.validity == NULL or bit(node.validity, node.offset + i)


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


#: Sources of integers.
cdef enum Source:
    S_I8, S_I16, S_I32, S_I64, S_DEC128

#: How an integer is written.
cdef enum Enc:
    E_VARINT,  # int32 (sign-extended), int64, uint64, enum: the 64-bit two's complement
    E_U32,  # uint32 from a signed source: its low 32 bits
    E_ZZ32,
    E_ZZ64,
    E_FIX32,
    E_FIX64

#: What is checked before writing.
cdef enum Check:
    C_NONE,
    C_U32,  # 0..2**32-1
    C_U64,  # 0..2**64-1 (decimal)
    C_ENUM  # one of the enum's numbers


cdef class IntNode(ValuesNode):
    """Integers (dates as their int32 days, durations as microseconds, decimals unscaled) into
    one of the integer kinds or an enum by number."""

    cdef Source source
    cdef Enc enc
    cdef Check check
    cdef int64_t mul  # a duration's units -> microseconds (1: none)
    cdef bint from_ns  # a duration in ns: / 1000, exactly
    cdef int32_t* numbers  # C_ENUM: the enum's numbers, sorted
    cdef Py_ssize_t count

    def __dealloc__(self):
        free(self.numbers)

    cdef bint known(self, int64_t v) noexcept:
        cdef Py_ssize_t lo = 0, hi = self.count, mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.numbers[mid] < v:
                lo = mid + 1
            elif self.numbers[mid] > v:
                hi = mid
            else:
                return True
        return False

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t j = self.offset + i
        cdef int64_t v
        cdef long long scaled
        cdef spe_int128 wide
        cdef uint64_t u
        cdef uint32_t u32
        cdef Source s = self.source
        if s == S_DEC128:
            memcpy(&wide, self.values + j * 16, 16)
            if wide < 0 or (wide >> 64) != 0:
                _refuse("outside the unsigned range")
            u = <uint64_t>wide
            if self.enc == E_FIX64:
                return buf_put(out, &u, 8)  # little-endian hosts only (x86-64, arm64)
            return buf_varint(out, u)
        if s == S_I64:
            v = (<const int64_t*>self.values)[j]
        elif s == S_I32:
            v = (<const int32_t*>self.values)[j]
        elif s == S_I16:
            v = (<const int16_t*>self.values)[j]
        else:
            v = (<const int8_t*>self.values)[j]
        if self.from_ns:
            if v % 1000 != 0:
                _refuse("a duration in ns loses digits as microseconds")
            v = v // 1000
        elif self.mul != 1:
            if spe_mul_overflow(v, self.mul, &scaled):
                _refuse("a duration overflows 64-bit microseconds")
            v = scaled
        if self.check == C_U32:
            if v < 0 or v > 0xFFFFFFFF:
                _refuse("outside uint32's range")
        elif self.check == C_ENUM:
            if not self.known(v):
                _refuse("not a number of the enum")
        cdef Enc e = self.enc
        if e == E_VARINT:
            return buf_varint(out, <uint64_t>v)
        if e == E_U32:
            return buf_varint(out, <uint64_t>(<uint32_t>v))
        if e == E_ZZ32:
            u32 = (<uint32_t>(<int32_t>v) << 1) ^ <uint32_t>((<int32_t>v) >> 31)
            return buf_varint(out, u32)
        if e == E_ZZ64:
            return buf_varint(out, zigzag64(v))
        if e == E_FIX32:
            u32 = <uint32_t>v
            return buf_put(out, &u32, 4)
        u = <uint64_t>v
        return buf_put(out, &u, 8)


cdef class FloatNode(ValuesNode):
    """float32/float64: the IEEE 754 bits, little-endian."""

    cdef int width

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        return buf_put(out, self.values + (self.offset + i) * self.width, self.width)


cdef class BinaryNode(Node):
    """Strings and bytes: the length and the bytes (strings checked UTF-8); ``names`` set: an
    enum by value name (its number's varint)."""

    cdef int width  # offsets: 4 or 8 bytes
    cdef bint text
    cdef const uint8_t* offsets
    cdef const uint8_t* data
    cdef bytes names  # the enum's value names, one after another (UTF-8)
    cdef Py_ssize_t* starts
    cdef Py_ssize_t* sizes
    cdef int64_t* numbers
    cdef Py_ssize_t count

    def __dealloc__(self):
        free(self.starts)
        free(self.sizes)
        free(self.numbers)

    cdef int bind(self, object array) except -1:
        Node.bind(self, array)
        buffers = array.buffers()
        self.offsets = address(buffers[1])
        self.data = address(buffers[2])
        return 0

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t j = self.offset + i
        cdef int64_t start, end
        cdef Py_ssize_t size, k
        cdef const uint8_t* p
        cdef const char* names
        start = value_range(self.offsets, self.width, j, &end)
        size = end - start
        p = self.data + start
        if self.count:
            names = PyBytes_AS_STRING(self.names)
            for k in range(self.count):
                if self.sizes[k] == size and memcmp(names + self.starts[k], p, size) == 0:
                    return buf_varint(out, <uint64_t>self.numbers[k])
            _refuse("not a value name of the enum")
        if self.text and not valid_utf8(p, size):
            _refuse("a string that is not UTF-8")
        buf_varint(out, <uint64_t>size)
        return buf_put(out, p, size)


cdef class TimeNode(ValuesNode):
    """A timestamp or duration as a ``google.protobuf.Timestamp``/``Duration`` message:
    seconds floored (field 1), nanos the rest (field 2), zeros not written."""

    cdef int64_t mul
    cdef bint from_ns

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef int64_t v = (<const int64_t*>self.values)[self.offset + i]
        cdef long long scaled
        cdef int64_t seconds, micros
        cdef Py_ssize_t start
        if self.from_ns:
            if v % 1000 != 0:
                _refuse("a time in ns loses digits as microseconds")
            v = v // 1000
        elif self.mul != 1:
            if spe_mul_overflow(v, self.mul, &scaled):
                _refuse("a time overflows 64-bit microseconds")
            v = scaled
        seconds = v // 1000000
        micros = v % 1000000
        if micros < 0:
            micros += 1000000
            seconds -= 1
        start = _begin(out)
        if seconds:
            buf_byte(out, 0x08)
            buf_varint(out, <uint64_t>seconds)
        if micros:
            buf_byte(out, 0x10)
            buf_varint(out, <uint64_t>(micros * 1000))
        return _end(out, start)


# -- fields of a message: their tags and values ---------------------------------------------------


cdef class Field:
    """One struct field written as one message field: :meth:`emit` writes row ``i``'s
    occurrences (tags included), or none."""

    cdef bytes tag
    cdef const char* tag_data
    cdef Py_ssize_t tag_size

    cdef int set_tag(self, bytes tag) except -1:
        self.tag = tag
        self.tag_data = PyBytes_AS_STRING(tag)
        self.tag_size = PyBytes_GET_SIZE(tag)
        return 0

    cdef int bind(self, object array) except -1:
        return 0

    cdef int emit(self, ByteBuf* out, Py_ssize_t i) except -1:
        return 0


cdef class SingularField(Field):
    """A singular field: unset for a null (a required scalar: ``default``); with implicit
    presence, not written when its payload is the zero's (0, false, +0.0, empty)."""

    cdef Node node
    cdef bint implicit
    cdef bytes default

    cdef int bind(self, object array) except -1:
        return self.node.bind(array)

    cdef int emit(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t start, size
        cdef const uint8_t* p
        if not _valid(self.node, i):
            if self.default is not None:
                buf_put(out, self.tag_data, self.tag_size)
                buf_bytes(out, self.default)
            return 0
        start = out.size
        buf_put(out, self.tag_data, self.tag_size)
        self.node.put(out, i)
        if self.implicit:
            size = out.size - start - self.tag_size
            p = out.data + start + self.tag_size
            if (size == 1 or size == 4 or size == 8) and _zeros(p, size):
                out.size = start
        return 0


cdef class ListField(Field):
    """A field from a list or map column: its offsets and validity, bound per call."""

    cdef int width  # offsets: 4 or 8 bytes
    cdef const uint8_t* offsets
    cdef const uint8_t* validity
    cdef Py_ssize_t offset
    cdef object array

    cdef int bind(self, object array) except -1:
        self.array = array
        self.offset = array.offset
        buffers = array.buffers()
        self.validity = address(buffers[0]) if array.null_count else NULL
        self.offsets = address(buffers[1])
        return 0

    cdef inline bint entries(self, Py_ssize_t i, int64_t* lo, int64_t* hi) noexcept:
        """Row ``i``'s elements, ``lo[0]`` to ``hi[0]`` (of the child arrays); False when
        the row is null or empty (nothing written)."""
        cdef Py_ssize_t j = self.offset + i
        if self.validity != NULL and not bit(self.validity, j):
            return False
        lo[0] = value_range(self.offsets, self.width, j, hi)
        return hi[0] > lo[0]


cdef class RepeatedField(ListField):
    """A repeated field from a list: one tag per element, or packed (one tag, the length,
    the elements); a null or empty list: nothing; a null element: refused."""

    cdef Node element
    cdef bint packed

    cdef int bind(self, object array) except -1:
        ListField.bind(self, array)
        return self.element.bind(array.values)

    cdef int emit(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef int64_t lo, hi, k
        cdef Py_ssize_t start = 0
        cdef Node element = self.element
        cdef bint packed = self.packed
        if not self.entries(i, &lo, &hi):
            return 0
        if packed:
            buf_put(out, self.tag_data, self.tag_size)
            start = _begin(out)
        for k in range(lo, hi):
            if not _valid(element, k):
                _refuse("a null element in a list")
            if not packed:
                buf_put(out, self.tag_data, self.tag_size)
            element.put(out, k)
        if packed:
            return _end(out, start)
        return 0


cdef class MapField(ListField):
    """A map field: one entry message per map entry (key, then value; a null value: the
    value's default entry bytes)."""

    cdef Node key
    cdef Node value
    cdef bytes key_tag
    cdef bytes value_tag
    cdef bytes value_default  # tag included

    cdef int bind(self, object array) except -1:
        ListField.bind(self, array)
        entries = array.values
        self.key.bind(entries.field(0))
        return self.value.bind(entries.field(1))

    cdef int emit(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef int64_t lo, hi, k
        cdef Py_ssize_t start
        if not self.entries(i, &lo, &hi):
            return 0
        for k in range(lo, hi):
            buf_put(out, self.tag_data, self.tag_size)
            start = _begin(out)
            if not _valid(self.key, k):
                _refuse("a null map key")
            buf_bytes(out, self.key_tag)
            self.key.put(out, k)
            if _valid(self.value, k):
                buf_bytes(out, self.value_tag)
                self.value.put(out, k)
            else:
                buf_bytes(out, self.value_default)
            _end(out, start)
        return 0


cdef class MessageNode(Node):
    """A message from a struct: its fields in field-number order (:meth:`body`); as a field's
    value, length-delimited (:meth:`put`)."""

    cdef list fields
    cdef list columns
    cdef PyObject** slots  # the fields, borrowed (``fields`` holds them)
    cdef Py_ssize_t count

    def __dealloc__(self):
        free(self.slots)

    cdef int seal(self) except -1:
        cdef Py_ssize_t k
        self.count = len(self.fields)
        self.slots = <PyObject**>malloc(max(1, self.count) * sizeof(PyObject*))
        if self.slots == NULL:
            raise MemoryError()
        for k in range(self.count):
            self.slots[k] = <PyObject*>self.fields[k]
        return 0

    cdef int bind(self, object array) except -1:
        cdef Field f
        Node.bind(self, array)
        for f, column in zip(self.fields, self.columns):
            f.bind(array.field(column))
        return 0

    cdef int body(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t k
        for k in range(self.count):
            (<Field>self.slots[k]).emit(out, i)
        return 0

    cdef int put(self, ByteBuf* out, Py_ssize_t i) except -1:
        cdef Py_ssize_t start = _begin(out)
        self.body(out, i)
        return _end(out, start)


# -- the planner ----------------------------------------------------------------------------------


_INT32_TYPES = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_FIXED32,
}
_INT64_TYPES = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
}
_UNSIGNED = {
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
}
_ENC = {
    FieldDescriptor.TYPE_INT32: E_VARINT,
    FieldDescriptor.TYPE_INT64: E_VARINT,
    FieldDescriptor.TYPE_UINT64: E_VARINT,
    FieldDescriptor.TYPE_ENUM: E_VARINT,
    FieldDescriptor.TYPE_UINT32: E_U32,
    FieldDescriptor.TYPE_SINT32: E_ZZ32,
    FieldDescriptor.TYPE_SINT64: E_ZZ64,
    FieldDescriptor.TYPE_FIXED32: E_FIX32,
    FieldDescriptor.TYPE_SFIXED32: E_FIX32,
    FieldDescriptor.TYPE_FIXED64: E_FIX64,
    FieldDescriptor.TYPE_SFIXED64: E_FIX64,
}
#: Units per microsecond's multiplier (``mul``); ns is divided.
_MICROS_PER = {"s": 1_000_000, "ms": 1_000, "us": 1}


cdef class _Planner:
    """Builds the node tree, asking the reference module (``ref``) for its field matching,
    wire types, tags and defaults."""

    cdef object ref

    def __init__(self, ref):
        self.ref = ref

    cdef MessageNode message(self, d, arrow):
        cdef MessageNode node = MessageNode()
        ref = self.ref
        planned = []
        for column, fd in ref._match(d, arrow, d.full_name):
            t = arrow.field(column).type
            if pa.types.is_null(t):  # a column of nulls: never written
                continue
            planned.append((fd.number, column, self.field(fd, t)))
        planned.sort(key=lambda p: p[0])
        node.fields = [p[2] for p in planned]
        node.columns = [p[1] for p in planned]
        node.seal()
        return node

    cdef Field field(self, fd, arrow):
        ref = self.ref
        cdef MapField mf
        cdef RepeatedField rf
        cdef SingularField sf
        is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
        if is_map:
            key_fd = fd.message_type.fields_by_name["key"]
            value_fd = fd.message_type.fields_by_name["value"]
            mf = MapField()
            mf.width = 4  # Arrow maps: int32 offsets
            mf.set_tag(ref._tag(fd.number, ref._LEN))
            mf.key = self.value(key_fd, arrow.key_type)
            mf.value = self.value(value_fd, arrow.item_type)
            mf.key_tag = ref._tag(1, ref._wire_type(key_fd))
            mf.value_tag = ref._tag(2, ref._wire_type(value_fd))
            if value_fd.message_type is not None:
                mf.value_default = mf.value_tag + b"\x00"  # an empty message
            else:
                mf.value_default = mf.value_tag + ref._default_payload(value_fd)
            return mf
        if fd.is_repeated:
            rf = RepeatedField()
            rf.element = self.value(fd, arrow.value_type)
            rf.packed = bool(getattr(fd, "is_packed", False)) and ref._wire_type(fd) != ref._LEN
            rf.set_tag(ref._tag(fd.number, ref._LEN if rf.packed else ref._wire_type(fd)))
            rf.width = 8 if pa.types.is_large_list(arrow) else 4
            return rf
        sf = SingularField()
        sf.node = self.value(fd, arrow)
        sf.set_tag(ref._tag(fd.number, ref._wire_type(fd)))
        is_message = fd.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP)
        sf.default = None
        if fd.is_required and not is_message:
            sf.default = ref._default_payload(fd)
        sf.implicit = not (bool(fd.has_presence) or is_message)
        return sf

    cdef Node value(self, fd, arrow):
        """One element's node (the reference's ``_value_writer``'s cases)."""
        ref = self.ref
        cdef TimeNode time
        if fd.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
            m = fd.message_type
            if pa.types.is_timestamp(arrow) and ref._is_seconds_nanos(m, "Timestamp"):
                return self.time(arrow)
            if pa.types.is_duration(arrow) and ref._is_seconds_nanos(m, "Duration"):
                return self.time(arrow)
            if pa.types.is_struct(arrow):
                return self.message(m, arrow)
            raise _Unsupported(str(arrow))  # the reference refused it already
        return self.scalar(fd, arrow)

    cdef Node time(self, arrow):
        cdef TimeNode node = TimeNode()
        node.from_ns = arrow.unit == "ns"
        node.mul = _MICROS_PER.get(arrow.unit, 1)
        return node

    cdef Node scalar(self, fd, arrow):
        cdef FloatNode floating
        cdef BinaryNode binary
        t = fd.type
        is_int32_src = (
            pa.types.is_int8(arrow)
            or pa.types.is_int16(arrow)
            or pa.types.is_int32(arrow)
            or pa.types.is_date32(arrow)
        )
        if t == FieldDescriptor.TYPE_BOOL and pa.types.is_boolean(arrow):
            return BoolNode()
        if t in _INT32_TYPES and is_int32_src:
            return self.integer(t, arrow, C_NONE)
        if t in _INT32_TYPES and pa.types.is_int64(arrow) and t in _UNSIGNED:
            return self.integer(t, arrow, C_U32)
        if t in _INT64_TYPES and (pa.types.is_int64(arrow) or is_int32_src):
            return self.integer(t, arrow, C_NONE)
        if t in _INT64_TYPES and pa.types.is_duration(arrow):
            return self.integer(t, arrow, C_NONE)
        if t in _INT64_TYPES and t in _UNSIGNED and pa.types.is_decimal(arrow) and arrow.scale == 0:
            if not pa.types.is_decimal128(arrow):
                raise _Unsupported(str(arrow))
            return self.integer(t, arrow, C_U64)
        if t == FieldDescriptor.TYPE_FLOAT and pa.types.is_float32(arrow):
            floating = FloatNode()
            floating.width = 4
            return floating
        if t == FieldDescriptor.TYPE_DOUBLE and pa.types.is_float64(arrow):
            floating = FloatNode()
            floating.width = 8
            return floating
        is_text = pa.types.is_string(arrow) or pa.types.is_large_string(arrow)
        is_binary = pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow)
        if (t == FieldDescriptor.TYPE_STRING and is_text) or (
            t == FieldDescriptor.TYPE_BYTES and is_binary
        ):
            binary = BinaryNode()
            large = pa.types.is_large_string(arrow) or pa.types.is_large_binary(arrow)
            binary.width = 8 if large else 4
            binary.text = is_text
            return binary
        if t == FieldDescriptor.TYPE_ENUM and is_text:
            return self.enum_names(fd, arrow)
        if t == FieldDescriptor.TYPE_ENUM and is_int32_src:
            return self.integer(t, arrow, C_ENUM, fd)
        raise _Unsupported(str(arrow))  # the reference refused it already

    cdef Node integer(self, t, arrow, Check check, fd=None):
        cdef IntNode node = IntNode()
        cdef Py_ssize_t k
        node.enc = _ENC[t]
        node.check = check
        node.mul = 1
        if pa.types.is_decimal(arrow):
            node.source = S_DEC128
        elif pa.types.is_int8(arrow):
            node.source = S_I8
        elif pa.types.is_int16(arrow):
            node.source = S_I16
        elif pa.types.is_int32(arrow) or pa.types.is_date32(arrow):
            node.source = S_I32
        elif pa.types.is_int64(arrow):
            node.source = S_I64
        elif pa.types.is_duration(arrow):
            node.source = S_I64
            node.from_ns = arrow.unit == "ns"
            node.mul = _MICROS_PER.get(arrow.unit, 1)
        else:
            raise _Unsupported(str(arrow))
        if check == C_ENUM:
            numbers = sorted({v.number for v in fd.enum_type.values})
            node.count = len(numbers)
            node.numbers = <int32_t*>malloc(max(1, node.count) * sizeof(int32_t))
            if node.numbers == NULL:
                raise MemoryError()
            for k in range(node.count):
                node.numbers[k] = numbers[k]
        return node

    cdef Node enum_names(self, fd, arrow):
        cdef BinaryNode node = BinaryNode()
        cdef Py_ssize_t k, at = 0
        values = list(fd.enum_type.values)
        encoded = [v.name.encode("utf-8") for v in values]
        node.width = 8 if pa.types.is_large_string(arrow) else 4
        node.text = True
        node.names = b"".join(encoded)
        node.count = len(values)
        if node.count == 0:
            raise _Unsupported("an enum without values")
        node.starts = <Py_ssize_t*>malloc(node.count * sizeof(Py_ssize_t))
        node.sizes = <Py_ssize_t*>malloc(node.count * sizeof(Py_ssize_t))
        node.numbers = <int64_t*>malloc(node.count * sizeof(int64_t))
        if node.starts == NULL or node.sizes == NULL or node.numbers == NULL:
            raise MemoryError()
        for k in range(node.count):
            node.starts[k] = at
            node.sizes[k] = len(encoded[k])
            node.numbers[k] = values[k].number
            at += len(encoded[k])
        return node


# -- the plan -------------------------------------------------------------------------------------


cdef class EncodePlan:
    """The compiled plan of one (message, Arrow struct type) pair."""

    cdef MessageNode root
    cdef object _arrow_type
    cdef object lock
    cdef object empty
    cdef Py_ssize_t per_row  # the last call's bytes per row: the next buffer's first size

    @property
    def arrow_type(self):
        return self._arrow_type

    def encode(self, array, prefix=b""):
        """Every non-null row's message, after ``prefix``, as one ``binary`` array (null where
        ``array`` is null); the contract of
        :meth:`~spark_kafka_py.formats.protobuf.encoder.ProtobufEncoder.encode`.

        Raises:
            Fallback: this plan refuses the batch (see the module's docstring); encode it
                with the reference.
        """
        if array.type != self._arrow_type:
            raise Fallback(0, f"an array of {array.type}, not the plan's {self._arrow_type}")
        cdef bytes pre = bytes(prefix)
        cdef const char* pre_data = PyBytes_AS_STRING(pre)
        cdef Py_ssize_t pre_size = PyBytes_GET_SIZE(pre)
        cdef Py_ssize_t n = len(array)
        cdef Py_ssize_t i = 0, offset
        cdef const uint8_t* validity = NULL
        cdef Buf owner = Buf()
        cdef ByteBuf* out = &owner.b
        cdef MessageNode root = self.root
        cdef int32_t* offsets
        if self.per_row and n:
            grow(&out.data, &out.cap, n * (self.per_row + 1), 4096)
        offsets_bytes = PyBytes_FromStringAndSize(NULL, (n + 1) * 4)
        offsets = <int32_t*>PyBytes_AS_STRING(offsets_bytes)
        offsets[0] = 0
        null_count = array.null_count
        if null_count:
            validity = address(array.buffers()[0])
        offset = array.offset
        with self.lock:
            root.bind(array)
            try:
                for i in range(n):
                    if validity != NULL and not bit(validity, offset + i):
                        offsets[i + 1] = <int32_t>out.size
                        continue
                    buf_put(out, pre_data, pre_size)
                    root.body(out, i)
                    if out.size > INT32_MAX:
                        raise Fallback(i, "the payloads exceed a binary array's 2 GiB")
                    offsets[i + 1] = <int32_t>out.size
            except _Refused as refused:
                raise Fallback(i, refused.args[0]) from None
            finally:
                root.bind(self.empty)  # no array kept alive between calls
        if n:
            self.per_row = out.size // n
        validity_buffer = None
        if null_count:
            validity_buffer = pa.py_buffer(bitmap_slice(validity, offset, n))
        # the payloads' buffer handed to Arrow as it is (``owner`` kept alive by it), trimmed
        if out.size == 0:
            data = pa.py_buffer(b"")
        else:
            owner.trim()
            data = pa.foreign_buffer(<size_t>out.data, out.size, base=owner)
        return pa.Array.from_buffers(
            pa.binary(),
            n,
            [validity_buffer, pa.py_buffer(offsets_bytes), data],
            null_count=null_count,
        )


def plan(descriptor, arrow_type):
    """The compiled plan of ``descriptor`` written from ``arrow_type`` (a struct), or None
    when the pair needs what only the reference does (see the module's docstring). Call it
    only after the reference's plan was built (its schema errors come first)."""
    from spark_kafka_py.formats.protobuf import encoder as ref  # loaded by then: no cycle

    cdef EncodePlan p = EncodePlan()
    try:
        p.root = _Planner(ref).message(descriptor, arrow_type)
    except _Unsupported:
        return None
    p._arrow_type = arrow_type
    p.empty = pa.array([], type=arrow_type)
    p.lock = threading.Lock()
    return p
