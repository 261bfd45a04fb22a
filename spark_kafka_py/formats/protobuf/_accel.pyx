# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Accelerated twin of :class:`spark_kafka_py.formats.protobuf.decoder.ProtobufDecoder` (Cython).

Reads the Protobuf wire format ("Encoding", protobuf.dev/programming-guides/encoding) straight
into Arrow buffers, one payload after another, with the reading rules of upb (the parser the
reference decoder runs):

- varints of at most 10 bytes (tags and lengths: 5); ``int32``/``uint32``/``enum`` keep the low 32 bits, ``sint``
  zig-zag, ``bool`` any non-zero; ``fixed32``/``sfixed32``/``float`` 4 little-endian bytes,
  the 64-bit ones 8; ``string``/``bytes``/messages length-delimited (a length past the end is
  an error); strings must be UTF-8;
- a field met with another wire type than its declared one is an unknown field; unknown fields
  are skipped (groups too, to their matching end, nesting bounded); wire types 6 and 7, field
  number 0 and a stray end-group are errors;
- a singular field read several times: the last one wins; a singular message: the occurrences
  merge (read as one message, in wire order); a oneof: the last member read wins (a message
  member merges only its occurrences after the last other member); the occurrences not read
  are still checked, as upb parses them all;
- repeated scalars packed or not (both may mix); a closed enum's unknown numbers are dropped
  (upb keeps them as unknown fields); maps: one entry per entry on the wire, in wire order,
  duplicate keys kept, a missing key or value read as its zero.

How: a payload is first read in one pass, each value appended to its column as it is met
(``MsgNode.read_fast``); a message in which a field occurs twice or a oneof member occurs
(what the rules above make order-dependent) is read again, its half-written row dropped, in
two passes: its fields' occurrences listed (``scan``), then each field's winning or merged
value appended (``emit``).

The conversions are the reference's (see :mod:`spark_kafka_py.formats.protobuf.decoder`).

Support: :func:`plan` returns None for what it does not read (the reference then decodes
everything): proto2 declared defaults and ``required`` fields, groups (``TYPE_GROUP`` fields),
fields of the message left out of the Spark type (recursion truncated, empty messages), maps
whose values are closed enums, ``Timestamp``/``Duration`` look-alikes whose ``seconds``/
``nanos`` are not ``int64 = 1``/``int32 = 2``, a message with no field kept.

Errors: a payload this reader finds malformed (or a Timestamp/Duration past 64-bit
microseconds, or a string that is not UTF-8) is refused: :meth:`AccelPlan.append` stops
there (the rows before it kept, the half-written row dropped), :meth:`AccelPlan.decode` raises
:class:`Fallback`; the caller has the reference decode it, which then gives its own errors
(``FAILFAST``) or null rows (``PERMISSIVE``), the same as without this module. Every length is
checked against the bytes left before it is read; nesting (messages and groups) is bounded by
:data:`MAX_DEPTH`; memory grows with the output only.

Type stub: ``_accel.pyi``.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.object cimport PyObject
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memcpy, memset

import pyarrow as pa

from cpython.pycapsule cimport PyCapsule_GetPointer
from spark_kafka_py._cutil cimport hand_over, address, bit, bitmap_bytes, grow, valid_utf8, value_range
from google.protobuf.descriptor import FieldDescriptor

__all__ = ["MAX_DEPTH", "AccelPlan", "Fallback", "common_head", "plan"]

#: Nesting bound (messages and unknown groups); upb's is 100, so whatever upb reads nested
#: deeper than this is left to it.
MAX_DEPTH = 64
DEF C_MAX_DEPTH = 64


cdef extern from *:
    """
    static int skp_mul_overflow(long long a, long long b, long long* out) {
        return __builtin_mul_overflow(a, b, out);
    }
    static int skp_add_overflow(long long a, long long b, long long* out) {
        return __builtin_add_overflow(a, b, out);
    }
    """
    int skp_mul_overflow(long long a, long long b, long long* out)
    int skp_add_overflow(long long a, long long b, long long* out)


class Fallback(Exception):
    """This reader refuses a payload (malformed, or outside what it reads): decode the batch
    with the reference decoder, which decides (its error, or its null row)."""


# -- growable buffers --------------------------------------------------------------------------


include "../../_growbuf.pxi"


# -- the wire format -----------------------------------------------------------------------------

# wire types
DEF WT_VARINT = 0
DEF WT_I64 = 1
DEF WT_LEN = 2
DEF WT_SGROUP = 3
DEF WT_EGROUP = 4
DEF WT_I32 = 5


cdef struct Occ:
    # one occurrence of a known field in a message's bytes
    int32_t slot
    int32_t wt
    int32_t next      # the next occurrence of the same slot (-1: none)
    uint64_t v        # varint / fixed bits; LEN: the data's start
    Py_ssize_t end    # LEN: the data's end


cdef inline int _bad(str reason) except -1:
    raise Fallback(reason)


cdef inline uint64_t _varint(const uint8_t* b, Py_ssize_t end, Py_ssize_t* at) except? 0xFFFFFFFFFFFFFFFF:
    """A varint at ``at[0]`` (advanced past it), at most 10 bytes."""
    cdef Py_ssize_t pos = at[0]
    cdef uint64_t raw = 0
    cdef int shift = 0
    cdef uint8_t byte
    if pos < end and b[pos] < 0x80:
        at[0] = pos + 1
        return b[pos]
    while True:
        if pos >= end:
            _bad("truncated varint")
        byte = b[pos]
        pos += 1
        raw |= (<uint64_t>(byte & 0x7F)) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift >= 70:
            _bad("varint longer than 10 bytes")
    at[0] = pos
    return raw


cdef inline uint32_t _tag(const uint8_t* b, Py_ssize_t end, Py_ssize_t* at) except? 0xFFFFFFFF:
    """A tag at ``at[0]`` (advanced past it): a varint of at most 5 bytes, 32 bits, field
    number not 0 (upb's ``_upb_Decoder_DecodeTag``)."""
    cdef Py_ssize_t start = at[0]
    cdef uint64_t tag
    if start < end and b[start] < 0x80:
        if b[start] < 8:
            _bad("field number 0")
        at[0] = start + 1
        return b[start]
    tag = _varint(b, end, at)
    if at[0] - start > 5 or (tag >> 32) or (tag >> 3) == 0:
        _bad("bad tag")
    return <uint32_t>tag


cdef inline Py_ssize_t _size(const uint8_t* b, Py_ssize_t end, Py_ssize_t* at) except -1:
    """A length at ``at[0]`` (advanced past it), checked against the bytes left: a varint of at
    most 5 bytes, below 2^31 - 1 (upb's ``upb_Decoder_DecodeSize``)."""
    cdef Py_ssize_t start = at[0]
    cdef uint64_t size
    if start < end and b[start] < 0x80:
        size = b[start]
        at[0] = start + 1
    else:
        size = _varint(b, end, at)
        if at[0] - start > 5 or size >= 0x7FFFFFFF:
            _bad("bad length")
    if size > <uint64_t>(end - at[0]):
        _bad("length past the end")
    return <Py_ssize_t>size


cdef Py_ssize_t _skip(
    const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, uint32_t number, int wt, int depth
) except -1:
    """Skip an unknown field's value (its tag read: ``number``, ``wt``); the position after."""
    cdef uint64_t size
    cdef uint32_t tag
    cdef int inner
    if wt == WT_VARINT:
        _varint(b, end, &pos)
        return pos
    if wt == WT_I64:
        if end - pos < 8:
            _bad("truncated fixed64")
        return pos + 8
    if wt == WT_I32:
        if end - pos < 4:
            _bad("truncated fixed32")
        return pos + 4
    if wt == WT_LEN:
        size = <uint64_t>_size(b, end, &pos)
        return pos + <Py_ssize_t>size
    if wt == WT_SGROUP:
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        while True:
            if pos >= end:
                _bad("unterminated group")
            tag = _tag(b, end, &pos)
            inner = <int>(tag & 7)
            if inner == WT_EGROUP:
                if <uint32_t>(tag >> 3) != number:
                    _bad("mismatched end group")
                return pos
            pos = _skip(b, pos, end, <uint32_t>(tag >> 3), inner, depth + 1)
    _bad("bad wire type")
    return -1


cdef inline Py_ssize_t _occurrence(
    const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, int32_t slot, int wt, Occ* o
) except -1:
    """Read one occurrence's value (its tag read: ``slot``, wire type ``wt``) at ``pos`` into
    ``o``; the position after it."""
    cdef uint64_t size
    o.slot = slot
    o.wt = wt
    o.next = -1
    o.end = 0
    if wt == WT_VARINT:
        o.v = _varint(b, end, &pos)
    elif wt == WT_LEN:
        size = <uint64_t>_size(b, end, &pos)
        o.v = <uint64_t>pos
        pos += <Py_ssize_t>size
        o.end = pos
    elif wt == WT_I64:
        if end - pos < 8:
            _bad("truncated fixed64")
        memcpy(&o.v, b + pos, 8)
        pos += 8
    else:  # WT_I32
        if end - pos < 4:
            _bad("truncated fixed32")
        o.v = 0
        memcpy(&o.v, b + pos, 4)
        pos += 4
    return pos


# -- nodes: one per output Arrow array -----------------------------------------------------------


# how a type's zero is recognised (proto3 implicit presence: the zero reads as null)
DEF Z_NEVER = 0       # no zero (messages, timestamps, ...)
DEF Z_V64 = 1         # the 64 bits read are 0
DEF Z_V32 = 2         # their low 32 bits are 0
DEF Z_LEN = 3         # an empty length-delimited value


cdef inline bint _is_zero(int32_t kind, Occ* o) noexcept:
    """Whether occurrence ``o`` holds the zero of a type whose zero is recognised as ``kind``
    (``Z_*``)."""
    if kind == Z_V64:
        return o.v == 0
    if kind == Z_V32:
        return (<uint32_t>o.v) == 0
    if kind == Z_LEN:
        return o.end == <Py_ssize_t>o.v
    return False


cdef class PNode:
    """Appends one value a row into one Arrow array's buffers; ``n`` rows so far.

    ``put_one``: the value of one occurrence; ``put_chain``: a message's occurrences merged
    (those after index ``cut``); ``put_zero``: the type's zero (a message: empty);
    ``put_null``: a null row. ``valid`` holds one flag byte per row from the first null on
    (``valid.size == n`` while ``nulls``); the rows past ``valid.size`` are valid, so a
    column without nulls keeps no flags at all."""

    cdef object arrow
    cdef Py_ssize_t n
    cdef Py_ssize_t nulls
    cdef Buf valid

    def __cinit__(self):
        self.valid = Buf()

    cdef inline int push_valid(self) except -1:
        if self.nulls:  # before the first null no flag is kept (the rows are valid)
            self.valid.put_byte(1)
        self.n += 1
        return 0

    cdef int put_null(self) except -1:
        cdef Py_ssize_t kept = self.valid.size
        if kept < self.n:  # the first null: the rows before it were valid
            self.valid.reserve(self.n - kept)
            memset(self.valid.data + kept, 1, self.n - kept)
            self.valid.size = self.n
        self.valid.put_byte(0)
        self.n += 1
        self.nulls += 1
        return 0

    cdef int put_one(self, const uint8_t* b, Occ* o, int depth) except -1:
        raise NotImplementedError

    cdef int put_chain(self, const uint8_t* b, Occ* occs, int32_t head, int32_t cut, int depth) except -1:
        # scalars: the last occurrence after cut
        cdef int32_t last = -1
        cdef int32_t i = head
        while i >= 0:
            if i > cut:
                last = i
            i = occs[i].next
        if last < 0:
            return self.put_zero(depth)
        return self.put_one(b, &occs[last], depth)

    cdef int put_zero(self, int depth) except -1:
        raise NotImplementedError

    cdef int32_t zero_kind(self) noexcept:
        """How this type's zero is recognised (``Z_*``; proto3 implicit presence: null)."""
        return Z_NEVER

    cdef int check(self, const uint8_t* b, Occ* o, int depth) except -1:
        """Check an occurrence that is not read (a later one wins)."""
        return 0

    cdef int put_raw(self, uint64_t raw) except -1:
        """A packed element's bits (varint or fixed)."""
        raise NotImplementedError

    cdef int reset(self) except -1:
        self.n = 0
        self.nulls = 0
        self.valid.size = 0
        return 0

    cdef int truncate(self, Py_ssize_t rows) except -1:
        """Keep the first ``rows`` rows (drop a row left half-written by a refused payload)."""
        cdef Py_ssize_t i
        for i in range(rows, self.valid.size):  # the dropped tail's kept flags only
            if not self.valid.data[i]:
                self.nulls -= 1
        self.n = rows
        if self.valid.size > rows:
            self.valid.size = rows
        return 0

    cdef object validity(self):
        if self.nulls == 0:
            self.valid.size = 0
            return None
        return _bitmap(self.valid, self.n)

    cdef object finish(self):
        raise NotImplementedError


# scalar conversions of the raw bits (a varint or fixed field's)
DEF C_INT32 = 0       # int32 / enum_int: low 32 bits -> int32
DEF C_INT64 = 1       # int64 / uint64 / fixed64 / sfixed64 (signed view): int64
DEF C_UINT32 = 2      # uint32 / fixed32 signed view -> int32 (same as C_INT32)
DEF C_UINT32L = 3     # uint32 upcast -> int64
DEF C_SINT32 = 4
DEF C_SINT64 = 5
DEF C_BOOL = 6
DEF C_FLOAT = 7
DEF C_DOUBLE = 8
DEF C_DEC = 9         # uint64 upcast -> decimal128(20, 0)
DEF C_SFIX32 = 10     # sfixed32 / fixed32 -> int32 (bits)


cdef class ScalarNode(PNode):
    """A numeric or bool value: ``conv`` one of the ``C_*`` conversions, ``width`` its bytes."""

    cdef Buf values
    cdef int conv
    cdef int width
    cdef int wire      # WT_VARINT, WT_I32, WT_I64
    cdef object closed  # a closed enum's numbers (a set), or None

    def __cinit__(self):
        self.values = Buf()

    cdef int put_raw(self, uint64_t raw) except -1:
        cdef int conv = self.conv
        cdef uint32_t u32
        cdef float f
        cdef double d
        cdef uint64_t dec[2]
        self.values.reserve(16)
        if conv == C_INT32 or conv == C_UINT32 or conv == C_SFIX32:
            (<int32_t*>(self.values.data + self.values.size))[0] = <int32_t>(<uint32_t>raw)
        elif conv == C_INT64:
            (<int64_t*>(self.values.data + self.values.size))[0] = <int64_t>raw
        elif conv == C_UINT32L:
            (<int64_t*>(self.values.data + self.values.size))[0] = <int64_t>(<uint32_t>raw)
        elif conv == C_SINT32:
            u32 = <uint32_t>raw
            (<int32_t*>(self.values.data + self.values.size))[0] = (
                <int32_t>((u32 >> 1) ^ (<uint32_t>0 - (u32 & 1)))
            )
        elif conv == C_SINT64:
            (<int64_t*>(self.values.data + self.values.size))[0] = (
                <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))
            )
        elif conv == C_BOOL:
            self.values.data[self.values.size] = 1 if raw else 0
        elif conv == C_FLOAT:
            u32 = <uint32_t>raw
            memcpy(self.values.data + self.values.size, &u32, 4)
        elif conv == C_DOUBLE:
            memcpy(self.values.data + self.values.size, &raw, 8)
        else:  # C_DEC
            dec[0] = raw
            dec[1] = 0
            memcpy(self.values.data + self.values.size, dec, 16)
        self.values.size += self.width
        self.push_valid()
        return 0

    cdef int put_one(self, const uint8_t* b, Occ* o, int depth) except -1:
        return self.put_raw(o.v)

    cdef int put_zero(self, int depth) except -1:
        return self.put_raw(0)

    cdef int32_t zero_kind(self) noexcept:
        cdef int conv = self.conv
        if conv == C_INT64 or conv == C_SINT64 or conv == C_DEC or conv == C_DOUBLE:
            return Z_V64
        if conv == C_BOOL:
            return Z_V64
        return Z_V32

    cdef int put_null(self) except -1:
        PNode.put_null(self)
        self.values.zeros(self.width)
        return 0

    cdef int reset(self) except -1:
        PNode.reset(self)
        self.values.size = 0
        return 0

    cdef int truncate(self, Py_ssize_t rows) except -1:
        PNode.truncate(self, rows)
        self.values.size = rows * self.width
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        if self.conv == C_BOOL:
            values = _bitmap(self.values, n)
        else:
            values = self.values.take()
        self.n = self.nulls = 0
        return pa.Array.from_buffers(self.arrow, n, [validity, values], nulls)


cdef class SizedNode(PNode):
    """``string`` (UTF-8 checked) or ``bytes``: offsets and data."""

    cdef Buf offsets
    cdef Buf data
    cdef bint text

    def __cinit__(self):
        self.offsets = Buf()
        self.data = Buf()
        self.offsets.put_int32(0)

    cdef inline int put_bytes(self, const uint8_t* s, Py_ssize_t size) except -1:
        if self.data.size + size > 0x7FFFFFFF:
            _bad("column over 2 GiB")
        self.data.put(s, size)
        self.offsets.put_int32(<int32_t>self.data.size)
        self.push_valid()
        return 0

    cdef int put_one(self, const uint8_t* b, Occ* o, int depth) except -1:
        cdef Py_ssize_t start = <Py_ssize_t>o.v
        if self.text and not valid_utf8(b + start, o.end - start):
            _bad("string not UTF-8")
        return self.put_bytes(b + start, o.end - start)

    cdef int put_zero(self, int depth) except -1:
        return self.put_bytes(NULL, 0)

    cdef int32_t zero_kind(self) noexcept:
        return Z_LEN

    cdef int check(self, const uint8_t* b, Occ* o, int depth) except -1:
        cdef Py_ssize_t start = <Py_ssize_t>o.v
        if self.text and not valid_utf8(b + start, o.end - start):
            _bad("string not UTF-8")
        return 0

    cdef int put_null(self) except -1:
        PNode.put_null(self)
        self.offsets.put_int32(<int32_t>self.data.size)
        return 0

    cdef int reset(self) except -1:
        PNode.reset(self)
        self.offsets.size = 0
        self.offsets.put_int32(0)
        self.data.size = 0
        return 0

    cdef int truncate(self, Py_ssize_t rows) except -1:
        PNode.truncate(self, rows)
        self.offsets.size = (rows + 1) * 4
        self.data.size = (<int32_t*>self.offsets.data)[rows]
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        out = pa.Array.from_buffers(
            self.arrow, n, [validity, self.offsets.take(), self.data.take()], nulls
        )
        self.reset()
        return out


cdef class EnumNode(SizedNode):
    """An enum as its value's name (``UNKNOWN_ENUM_VALUE_<Enum>_<n>`` for an unknown number)."""

    cdef dict names      # number -> UTF-8 name bytes
    cdef object prefix   # "UNKNOWN_ENUM_VALUE_<Enum>_"
    cdef object closed

    cdef int put_raw(self, uint64_t raw) except -1:
        cdef int32_t number = <int32_t>(<uint32_t>raw)
        name = self.names.get(number)
        if name is None:
            name = f"{self.prefix}{number}".encode()
        return self.put_bytes(<const uint8_t*>PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name))

    cdef int put_one(self, const uint8_t* b, Occ* o, int depth) except -1:
        return self.put_raw(o.v)

    cdef int put_zero(self, int depth) except -1:
        return self.put_raw(0)

    cdef int32_t zero_kind(self) noexcept:
        return Z_V32

    cdef int check(self, const uint8_t* b, Occ* o, int depth) except -1:
        return 0


# slot modes (how an absent / present field reads)
DEF M_PRESENCE = 0    # absent: null
DEF M_IMPLICIT = 1    # absent or zero: null
DEF M_ZERO = 2        # absent: the zero (emit.default.values, map entries)
DEF M_DUMMY = 3       # always null
DEF M_MANY = 4        # repeated / map: every occurrence

# slot kinds
DEF K_SCALAR = 0      # last occurrence wins
DEF K_MESSAGE = 1     # occurrences merge

# how read_fast hands a slot's value to its child
DEF F_ONE = 0         # put_one
DEF F_MESSAGE = 1     # a MsgNode: its own read_fast
DEF F_LIST = 2        # a ListNode (repeated, map): add, close_row at the message's end
DEF F_IMPLICIT = 3    # implicit presence: put_null for the type's zero (``zerok``), else put_one
DEF F_RARE = 4        # a closed enum or a oneof member: checked first, then as ``fastr``


cdef class MsgNode(PNode):
    """A message: its kept fields (slots) read from the wire into a struct array's children.

    ``transparent``: an unwrapped wrapper: no struct, its one child is the output."""

    cdef list children
    cdef int nslots
    cdef int32_t* mode
    cdef int32_t* kind
    cdef int32_t* wire        # expected wire type
    cdef int32_t* packable    # repeated scalars: packed (LEN) accepted too
    cdef int32_t* oneof       # oneof group or -1
    cdef list closed          # per slot: a closed enum's numbers (singular / unpacked) or None
    cdef int32_t* has_closed  # per slot: closed[slot] is not None
    cdef PyObject** kids      # children, borrowed (the list holds them)
    cdef int32_t* lookup      # field number -> slot + 1 (0: unknown), numbers < nlookup
    cdef int32_t nlookup
    cdef dict far             # field numbers >= nlookup -> slot
    cdef int32_t* head
    cdef int32_t* tail
    cdef int32_t* last
    cdef Buf occs
    cdef bint transparent
    cdef uint32_t* seen       # read_fast: per slot, the stamp of the last message it was met in
    cdef uint32_t stamp       # read_fast: this message's stamp (no clearing of seen per message)
    cdef int32_t* fastk       # read_fast: how a slot's child takes a value (F_*)
    cdef int32_t* fastr       # read_fast: the same without F_RARE (what a rare slot is then)
    cdef int32_t* zerok       # per slot, how the child's zero is recognised (Z_*)

    def __dealloc__(self):
        free(self.seen)
        free(self.fastk)
        free(self.fastr)
        free(self.zerok)
        free(self.mode)
        free(self.kind)
        free(self.wire)
        free(self.packable)
        free(self.oneof)
        free(self.lookup)
        free(self.head)
        free(self.tail)
        free(self.last)
        free(self.has_closed)
        free(self.kids)

    cdef inline int32_t slot_of(self, uint32_t number, int wt) except -2:
        """The slot of field ``number`` met with wire type ``wt``, or -1: an unknown field (not
        kept, or met with another wire type than its declared one; a repeated scalar's may
        be packed)."""
        cdef int32_t slot = -1
        if number < <uint32_t>self.nlookup:
            slot = self.lookup[number] - 1
        elif self.far is not None:
            slot = self.far.get(number, -1)
        if slot >= 0 and (wt == self.wire[slot] or (wt == WT_LEN and self.packable[slot])):
            return slot
        return -1

    cdef int scan(self, const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, int depth) except -1:
        """Record the known fields' occurrences of one segment of the message's bytes."""
        cdef uint32_t tag
        cdef uint32_t number
        cdef int wt
        cdef int32_t slot
        cdef int32_t idx
        cdef Occ* o
        while pos < end:
            tag = _tag(b, end, &pos)
            number = <uint32_t>(tag >> 3)
            wt = <int>(tag & 7)
            slot = self.slot_of(number, wt)
            if slot >= 0:
                self.occs.reserve(sizeof(Occ))
                idx = <int32_t>(self.occs.size // sizeof(Occ))
                o = (<Occ*>self.occs.data) + idx
                pos = _occurrence(b, pos, end, slot, wt, o)
                if self.has_closed[slot] and wt == WT_VARINT and (
                    <int32_t>(<uint32_t>o.v) not in self.closed[slot]
                ):
                    continue  # a closed enum's unknown number: an unknown field
                self.occs.size += sizeof(Occ)
                if self.head[slot] < 0:
                    self.head[slot] = idx
                else:
                    (<Occ*>self.occs.data)[self.tail[slot]].next = idx
                self.tail[slot] = idx
                self.last[slot] = idx
            else:
                if wt == WT_EGROUP:
                    _bad("end group outside a group")
                pos = _skip(b, pos, end, number, wt, depth)
        return 0

    cdef int start_scan(self) except -1:
        cdef int i
        self.occs.size = 0
        for i in range(self.nslots):
            self.head[i] = -1
            self.tail[i] = -1
            self.last[i] = -1
        return 0

    cdef int emit(self, const uint8_t* b, int depth) except -1:
        """Append the scanned fields to the children (and this row's validity)."""
        cdef int i, j
        cdef int32_t cut, mode, group
        cdef Occ* occs = <Occ*>self.occs.data
        cdef PNode child
        cdef Occ* o
        for i in range(self.nslots):
            child = <PNode>self.kids[i]
            mode = self.mode[i]
            if mode == M_DUMMY:
                child.put_null()
                continue
            cut = -1
            group = self.oneof[i]
            if group >= 0:
                for j in range(self.nslots):
                    if j != i and self.oneof[j] == group and self.last[j] > cut:
                        cut = self.last[j]
            if mode == M_MANY:
                child.put_chain(b, occs, self.head[i], cut, depth)
                continue
            if self.head[i] >= 0 and (self.head[i] != self.last[i] or self.last[i] <= cut):
                self.check_superseded(b, i, cut, depth)
            if self.last[i] <= cut:  # absent (or lost to a later oneof member)
                if mode == M_ZERO:
                    child.put_zero(depth)
                else:
                    child.put_null()
                continue
            if self.kind[i] == K_MESSAGE:
                child.put_chain(b, occs, self.head[i], cut, depth)
                continue
            o = occs + self.last[i]
            if mode == M_IMPLICIT and _is_zero(self.zerok[i], o):
                child.put_null()
            else:
                child.put_one(b, o, depth)
        if not self.transparent:
            self.push_valid()
        return 0

    cdef int check_superseded(self, const uint8_t* b, int slot, int32_t cut, int depth) except -1:
        """upb reads (and checks) every occurrence, also those a later one replaces: check
        those of ``slot`` that are not read into the output."""
        cdef Occ* occs = <Occ*>self.occs.data
        cdef PNode child = <PNode>self.children[slot]
        cdef int32_t i = self.head[slot]
        cdef int32_t last = self.last[slot]
        cdef bint message = self.kind[slot] == K_MESSAGE
        while i >= 0:
            if i <= cut or (not message and i != last):
                child.check(b, occs + i, depth)
            i = occs[i].next
        return 0

    cdef int check(self, const uint8_t* b, Occ* o, int depth) except -1:
        """Check a message occurrence that is not read (a oneof member a later member
        replaced): its bytes, and those of every field in it, as upb reads them."""
        cdef int i
        cdef int32_t j
        cdef Occ* occs
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        self.start_scan()
        self.scan(b, <Py_ssize_t>o.v, o.end, depth + 1)
        occs = <Occ*>self.occs.data
        for i in range(self.nslots):
            j = self.head[i]
            while j >= 0:
                (<PNode>self.kids[i]).check(b, occs + j, depth + 1)
                j = occs[j].next
        return 0

    cdef int put_one(self, const uint8_t* b, Occ* o, int depth) except -1:
        cdef Py_ssize_t rows = self.n
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        # one pass first, as put_top (a repeated message's items come here); a transparent
        # node counts no rows of its own, so it reads with the two passes only
        if not self.transparent:
            if self.read_fast(b, <Py_ssize_t>o.v, o.end, depth + 1) == 0:
                return 0
            self.truncate(rows)  # the half-written item: read it again with the two passes
        self.start_scan()
        self.scan(b, <Py_ssize_t>o.v, o.end, depth + 1)
        return self.emit(b, depth + 1)

    cdef int put_chain(self, const uint8_t* b, Occ* occs, int32_t head, int32_t cut, int depth) except -1:
        cdef int32_t i = head
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        self.start_scan()
        while i >= 0:
            if i > cut:
                self.scan(b, <Py_ssize_t>occs[i].v, occs[i].end, depth + 1)
            i = occs[i].next
        return self.emit(b, depth + 1)

    cdef int read_fast(self, const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, int depth) except -1:
        """Read one segment of the message's bytes in one pass, each value appended to its
        child as it is met (no occurrence list, no second pass): what :meth:`scan` then
        :meth:`emit` append when every field occurs at most once (repeated fields and maps
        any number of times) and no oneof member occurs. Returns 0, or 1 when the message
        needs the two passes (a field met twice, a oneof member; here or in a message
        inside): the row is then half-written, and the caller drops it (``truncate``) and
        reads it again with the two passes. Raises :class:`Fallback` as :meth:`scan` does."""
        cdef uint32_t tag
        cdef uint32_t number
        cdef int wt, i
        cdef int32_t slot, mode, fk
        cdef Occ o
        cdef PyObject* child  # borrowed (self.children holds it): no reference counting
        cdef uint32_t* seen = self.seen
        cdef uint32_t stamp = self.stamp + 1
        if stamp == 0:  # wrapped: the old stamps could match again
            memset(seen, 0, self.nslots * sizeof(uint32_t))
            stamp = 1
        self.stamp = stamp
        while pos < end:
            tag = _tag(b, end, &pos)
            number = <uint32_t>(tag >> 3)
            wt = <int>(tag & 7)
            slot = self.slot_of(number, wt)
            if slot < 0:
                if wt == WT_EGROUP:
                    _bad("end group outside a group")
                pos = _skip(b, pos, end, number, wt, depth)
                continue
            pos = _occurrence(b, pos, end, slot, wt, &o)
            fk = self.fastk[slot]
            if fk == F_RARE:
                if self.has_closed[slot] and wt == WT_VARINT and (
                    <int32_t>(<uint32_t>o.v) not in self.closed[slot]
                ):
                    continue  # a closed enum's unknown number: an unknown field
                if self.oneof[slot] >= 0:
                    return 1
                fk = self.fastr[slot]
            child = self.kids[slot]
            if fk == F_LIST:
                (<ListNode>child).add(b, &o, depth)
                continue
            if seen[slot] == stamp:
                return 1
            seen[slot] = stamp
            if fk == F_ONE:
                (<PNode>child).put_one(b, &o, depth)
            elif fk == F_MESSAGE:
                if depth + 1 > C_MAX_DEPTH:
                    _bad("nesting too deep")
                if (<MsgNode>child).read_fast(b, <Py_ssize_t>o.v, o.end, depth + 1):
                    return 1
            elif _is_zero(self.zerok[slot], &o):  # F_IMPLICIT: the zero reads as null
                (<PNode>child).put_null()
            else:
                (<PNode>child).put_one(b, &o, depth)
        for i in range(self.nslots):
            child = self.kids[i]
            if self.fastr[i] == F_LIST:
                (<ListNode>child).close_row()
            elif seen[i] != stamp:
                if self.mode[i] == M_ZERO:
                    (<PNode>child).put_zero(depth)
                else:
                    (<PNode>child).put_null()
        if not self.transparent:
            self.push_valid()
        return 0

    cdef int put_top(self, const uint8_t* b, Py_ssize_t n) except -1:
        cdef Py_ssize_t rows = self.n
        if self.read_fast(b, 0, n, 0) == 0:
            return 0
        self.truncate(rows)  # the half-written row: read it again with the two passes
        self.start_scan()
        self.scan(b, 0, n, 0)
        return self.emit(b, 0)

    cdef int put_zero(self, int depth) except -1:
        self.start_scan()
        return self.emit(NULL, depth + 1)

    cdef int put_null(self) except -1:
        cdef int i
        for i in range(self.nslots):
            (<PNode>self.children[i]).put_null()
        if not self.transparent:
            PNode.put_null(self)
        return 0

    cdef int reset(self) except -1:
        PNode.reset(self)
        for child in self.children:
            (<PNode>child).reset()
        return 0

    cdef int truncate(self, Py_ssize_t rows) except -1:
        if not self.transparent:
            PNode.truncate(self, rows)
        for child in self.children:
            (<PNode>child).truncate(rows)
        return 0

    cdef object finish(self):
        if self.transparent:
            return (<PNode>self.children[0]).finish()
        n, nulls = self.n, self.nulls
        validity = self.validity()
        children = [(<PNode>child).finish() for child in self.children]
        self.n = self.nulls = 0
        return pa.Array.from_buffers(self.arrow, n, [validity], nulls, children=children)


cdef class TimeNode(ScalarNode):
    """``Timestamp`` / ``Duration`` (``int64 seconds = 1; int32 nanos = 2``) as int64
    microseconds: seconds * 10^6 plus nanos / 1000, the division truncating (both, as
    spark-protobuf's ``TimeUnit.NANOSECONDS.toMicros``); past 64 bits: :class:`Fallback`."""

    cdef int read(self, const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, int64_t* s, int32_t* ns, int depth) except -1:
        cdef uint32_t tag
        cdef uint32_t number
        cdef int wt
        cdef uint64_t v
        while pos < end:
            tag = _tag(b, end, &pos)
            number = <uint32_t>(tag >> 3)
            wt = <int>(tag & 7)
            if wt == WT_VARINT and (number == 1 or number == 2):
                v = _varint(b, end, &pos)
                if number == 1:
                    s[0] = <int64_t>v
                else:
                    ns[0] = <int32_t>(<uint32_t>v)
            else:
                if wt == WT_EGROUP:
                    _bad("end group outside a group")
                pos = _skip(b, pos, end, number, wt, depth)
        return 0

    cdef int put_value(self, int64_t s, int32_t ns) except -1:
        cdef long long micros
        cdef long long frac = ns // 1000 if ns >= 0 else -((-<int64_t>ns) // 1000)
        if skp_mul_overflow(s, 1000000, &micros) or skp_add_overflow(micros, frac, &micros):
            _bad("past 64-bit microseconds")
        self.values.put_int64(micros)
        self.push_valid()
        return 0

    cdef int put_one(self, const uint8_t* b, Occ* o, int depth) except -1:
        cdef int64_t s = 0
        cdef int32_t ns = 0
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        self.read(b, <Py_ssize_t>o.v, o.end, &s, &ns, depth + 1)
        return self.put_value(s, ns)

    cdef int put_chain(self, const uint8_t* b, Occ* occs, int32_t head, int32_t cut, int depth) except -1:
        cdef int64_t s = 0
        cdef int32_t ns = 0
        cdef int32_t i = head
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        while i >= 0:
            if i > cut:
                self.read(b, <Py_ssize_t>occs[i].v, occs[i].end, &s, &ns, depth + 1)
            i = occs[i].next
        return self.put_value(s, ns)

    cdef int put_zero(self, int depth) except -1:
        return self.put_value(0, 0)

    cdef int check(self, const uint8_t* b, Occ* o, int depth) except -1:
        cdef int64_t s = 0
        cdef int32_t ns = 0
        if depth + 1 > C_MAX_DEPTH:
            _bad("nesting too deep")
        return self.read(b, <Py_ssize_t>o.v, o.end, &s, &ns, depth + 1)


cdef class ListNode(PNode):
    """A repeated field: every occurrence after ``cut`` (packed runs too) into a list array."""

    cdef Buf offsets
    cdef PNode item
    cdef int packed_wire    # the element's wire type when it is a packable scalar, else -1
    cdef object closed      # a closed enum's numbers, or None
    cdef Py_ssize_t count

    def __cinit__(self):
        self.offsets = Buf()
        self.offsets.put_int32(0)

    cdef int put_packed(self, const uint8_t* b, Py_ssize_t pos, Py_ssize_t end) except -1:
        cdef uint64_t raw
        cdef int wire = self.packed_wire
        cdef PNode item = self.item
        while pos < end:
            if wire == WT_VARINT:
                raw = _varint(b, end, &pos)
                if self.closed is not None and <int32_t>(<uint32_t>raw) not in self.closed:
                    continue
            elif wire == WT_I32:
                if end - pos < 4:
                    _bad("packed fixed32 run not a multiple of 4 bytes")
                raw = 0
                memcpy(&raw, b + pos, 4)
                pos += 4
            else:
                if end - pos < 8:
                    _bad("packed fixed64 run not a multiple of 8 bytes")
                memcpy(&raw, b + pos, 8)
                pos += 8
            item.put_raw(raw)
            self.count += 1
        return 0

    cdef int check(self, const uint8_t* b, Occ* o, int depth) except -1:
        """Check an occurrence inside a message that is not read."""
        cdef Py_ssize_t pos = <Py_ssize_t>o.v
        cdef Py_ssize_t end = o.end
        cdef int wire = self.packed_wire
        if not (o.wt == WT_LEN and wire >= 0):
            return self.item.check(b, o, depth)
        if wire == WT_VARINT:
            while pos < end:
                _varint(b, end, &pos)
        elif (end - pos) % (4 if wire == WT_I32 else 8):
            _bad("packed fixed run not a multiple of its width")
        return 0

    cdef inline int add(self, const uint8_t* b, Occ* o, int depth) except -1:
        """The elements of one occurrence (a packed run, or one element) to this row."""
        if o.wt == WT_LEN and self.packed_wire >= 0:
            self.put_packed(b, <Py_ssize_t>o.v, o.end)
        else:
            self.item.put_one(b, o, depth)
            self.count += 1
        return 0

    cdef inline int close_row(self) except -1:
        """End this row: its list holds the elements added since the last row."""
        if self.count > 0x7FFFFFFF:
            _bad("list column over 2^31 items")
        self.offsets.put_int32(<int32_t>self.count)
        self.push_valid()
        return 0

    cdef int put_chain(self, const uint8_t* b, Occ* occs, int32_t head, int32_t cut, int depth) except -1:
        cdef int32_t i = head
        while i >= 0:
            if i > cut:
                self.add(b, occs + i, depth)
            i = occs[i].next
        return self.close_row()

    cdef int put_zero(self, int depth) except -1:
        self.offsets.put_int32(<int32_t>self.count)
        self.push_valid()
        return 0

    cdef int put_null(self) except -1:
        PNode.put_null(self)
        self.offsets.put_int32(<int32_t>self.count)
        return 0

    cdef int reset(self) except -1:
        PNode.reset(self)
        self.offsets.size = 0
        self.offsets.put_int32(0)
        self.count = 0
        self.item.reset()
        return 0

    cdef int truncate(self, Py_ssize_t rows) except -1:
        PNode.truncate(self, rows)
        self.offsets.size = (rows + 1) * 4
        self.count = (<int32_t*>self.offsets.data)[rows]
        self.item.truncate(self.count)
        return 0

    cdef object finish(self):
        n, nulls = self.n, self.nulls
        validity = self.validity()
        offsets = self.offsets.take()
        items = self.item.finish()
        out = pa.Array.from_buffers(self.arrow, n, [validity, offsets], nulls, children=[items])
        self.reset()
        return out


# -- the plan ------------------------------------------------------------------------------------


class _Unsupported(Exception):
    """The message needs something this reader does not do: the reference decodes it."""


_T = FieldDescriptor
_VARINT_TYPES = {_T.TYPE_INT32, _T.TYPE_INT64, _T.TYPE_UINT32, _T.TYPE_UINT64, _T.TYPE_SINT32,
                 _T.TYPE_SINT64, _T.TYPE_BOOL, _T.TYPE_ENUM}
_I32_TYPES = {_T.TYPE_FIXED32, _T.TYPE_SFIXED32, _T.TYPE_FLOAT}
_I64_TYPES = {_T.TYPE_FIXED64, _T.TYPE_SFIXED64, _T.TYPE_DOUBLE}


def _wire_of(fd):
    t = fd.type
    if t in _VARINT_TYPES:
        return WT_VARINT
    if t in _I32_TYPES:
        return WT_I32
    if t in _I64_TYPES:
        return WT_I64
    if t == _T.TYPE_GROUP:
        raise _Unsupported("group field")
    return WT_LEN


def _closed_numbers(fd):
    if fd.type != _T.TYPE_ENUM or not fd.enum_type.is_closed:
        return None
    return frozenset(v.number for v in fd.enum_type.values)


def _scalar(fd, node):
    t = fd.type
    kind = node.kind
    cdef ScalarNode s = ScalarNode()
    s.arrow = node.arrow
    s.wire = _wire_of(fd)
    if kind == "bool":
        s.conv, s.width = C_BOOL, 1
    elif kind == "float":
        s.conv, s.width = C_FLOAT, 4
    elif kind == "double":
        s.conv, s.width = C_DOUBLE, 8
    elif kind == "uint32_long":
        s.conv, s.width = C_UINT32L, 8
    elif kind == "uint64_decimal":
        s.conv, s.width = C_DEC, 16
    elif kind in ("int32", "uint32", "enum_int"):
        s.width = 4
        s.conv = C_SINT32 if t == _T.TYPE_SINT32 else C_INT32
    elif kind in ("int64", "uint64"):
        s.width = 8
        s.conv = C_SINT64 if t == _T.TYPE_SINT64 else C_INT64
    else:
        raise _Unsupported(kind)
    return s


def _value(fd, node, int depth, bint emit):
    """The node reading one value of field ``fd`` (a repeated field's element)."""
    cdef SizedNode sized
    cdef EnumNode enum
    cdef TimeNode time
    cdef ListNode lst
    cdef MsgNode entry_node
    kind = node.kind
    if depth > C_MAX_DEPTH - 4:
        raise _Unsupported("too deep")
    if fd.type == _T.TYPE_GROUP:
        raise _Unsupported("group")
    if kind in ("string", "bytes"):
        if fd.type not in (_T.TYPE_STRING, _T.TYPE_BYTES):
            raise _Unsupported(kind)
        sized = SizedNode()
        sized.arrow = node.arrow
        sized.text = kind == "string"
        return sized
    if kind == "enum":
        enum = EnumNode()
        enum.arrow = node.arrow
        enum.text = True
        enum.names = {v.number: v.name.encode() for v in node.enum.values}
        enum.prefix = f"UNKNOWN_ENUM_VALUE_{node.enum.name}_"
        return enum
    if kind in ("timestamp", "duration"):
        fields = fd.message_type.fields
        if len(fields) != 2:
            raise _Unsupported("Timestamp/Duration look-alike")
        f1, f2 = fields
        if (f1.number, f1.type, f2.number, f2.type) != (1, _T.TYPE_INT64, 2, _T.TYPE_INT32) or (
            f1.is_repeated or f2.is_repeated
        ):
            raise _Unsupported("Timestamp/Duration look-alike")
        time = TimeNode()
        time.arrow = node.arrow
        time.conv, time.width = C_INT64, 8
        time.wire = WT_LEN
        return time
    if kind == "wrapper":
        inner_fd = fd.message_type.fields_by_name["value"]
        # the value has no presence: its zero reads as null unless emit.default.values, as
        # spark-protobuf's getFieldValue gives it
        return _message(fd.message_type, [(inner_fd, node.fields[0])], False, True, depth, emit)
    if kind == "message":
        return _message(fd.message_type, None, False, False, depth, emit, node)
    if kind == "map":
        entry = fd.message_type
        key_fd = entry.fields_by_name["key"]
        value_fd = entry.fields_by_name["value"]
        if _closed_numbers(value_fd) is not None:
            raise _Unsupported("map of a closed enum")
        lst = ListNode()
        lst.arrow = node.arrow
        lst.packed_wire = -1
        entry_node = _message(
            entry, [(key_fd, node.fields[0]), (value_fd, node.fields[1])], True, False, depth,
            emit,
        )
        entry_node.arrow = pa.struct([node.arrow.key_field, node.arrow.item_field])
        lst.item = entry_node
        return lst
    return _scalar(fd, node)


def _message(d, pairs, bint zero_fill, bint transparent, int depth, bint emit, node=None):
    """A :class:`MsgNode` for message ``d`` and its kept fields: ``pairs`` of (field
    descriptor, plan), or ``node``'s fields."""
    cdef MsgNode m = MsgNode()
    cdef ListNode lst
    cdef SizedNode dummy
    cdef int i
    cdef int wire
    if pairs is None:
        fields = node.fields
        if not fields:
            raise _Unsupported("no field")
        if any(f.dummy for f in fields):
            if len(d.fields):  # fields left out: upb still reads (and checks) them
                raise _Unsupported("a field left out of the Spark type")
            pairs = [(None, f) for f in fields]
        else:
            pairs = [(d.fields_by_name[f.name], f) for f in fields]
            kept = {f.name for f in fields}
            if any(fd.name not in kept for fd in d.fields):
                raise _Unsupported("a field left out of the Spark type")
        m.arrow = node.arrow
    m.transparent = transparent
    m.nslots = len(pairs)
    m.children = []
    m.closed = []
    size = sizeof(int32_t) * max(m.nslots, 1)
    m.mode = <int32_t*>realloc(NULL, size)
    m.kind = <int32_t*>realloc(NULL, size)
    m.wire = <int32_t*>realloc(NULL, size)
    m.packable = <int32_t*>realloc(NULL, size)
    m.oneof = <int32_t*>realloc(NULL, size)
    m.head = <int32_t*>realloc(NULL, size)
    m.tail = <int32_t*>realloc(NULL, size)
    m.last = <int32_t*>realloc(NULL, size)
    m.has_closed = <int32_t*>realloc(NULL, size)
    m.kids = <PyObject**>realloc(NULL, sizeof(PyObject*) * max(m.nslots, 1))
    m.seen = <uint32_t*>realloc(NULL, max(m.nslots, 1) * sizeof(uint32_t))
    m.fastk = <int32_t*>realloc(NULL, size)
    m.fastr = <int32_t*>realloc(NULL, size)
    m.zerok = <int32_t*>realloc(NULL, size)
    if not (
        m.mode and m.kind and m.wire and m.packable and m.oneof and m.head and m.tail and m.last
        and m.has_closed and m.kids and m.seen and m.fastk and m.fastr
        and m.zerok
    ):
        raise MemoryError()
    memset(m.seen, 0, max(m.nslots, 1) * sizeof(uint32_t))  # no stamp yet (stamp 0 is never used)
    numbers = [fd.number if fd is not None else 0 for fd, _ in pairs]
    m.nlookup = min(max(numbers) + 1, 1024)
    m.lookup = <int32_t*>realloc(NULL, sizeof(int32_t) * m.nlookup)
    if m.lookup == NULL:
        raise MemoryError()
    memset(m.lookup, 0, sizeof(int32_t) * m.nlookup)
    m.far = None
    m.occs = Buf()
    oneofs = {}
    for i, (fd, f) in enumerate(pairs):
        m.oneof[i] = -1
        m.packable[i] = 0
        m.kind[i] = K_SCALAR
        m.wire[i] = -1
        m.mode[i] = M_DUMMY
        m.has_closed[i] = 0
        if fd is None:
            dummy = SizedNode()
            dummy.arrow = pa.string()
            m.children.append(dummy)
            m.closed.append(None)
            continue
        if fd.type == _T.TYPE_GROUP:
            raise _Unsupported("group")
        if f.default is not None or fd.is_required:
            raise _Unsupported("proto2 default or required")
        value = _value(fd, f.node, depth + 1, emit)
        wire = _wire_of(fd)
        m.wire[i] = wire
        closed = _closed_numbers(fd)
        if f.repeated and not f.is_map:
            lst = ListNode()
            lst.arrow = pa.list_(pa.field("element", f.node.arrow, nullable=False))
            lst.item = value
            lst.packed_wire = wire if wire != WT_LEN else -1
            lst.closed = closed
            m.packable[i] = 1 if wire != WT_LEN else 0
            value = lst
            m.mode[i] = M_MANY
        elif f.is_map:
            m.mode[i] = M_MANY
        elif zero_fill:
            m.mode[i] = M_ZERO
        elif f.presence:
            m.mode[i] = M_PRESENCE
        elif emit:
            m.mode[i] = M_ZERO
        else:
            m.mode[i] = M_IMPLICIT
        if not f.repeated and fd.type == _T.TYPE_MESSAGE:
            m.kind[i] = K_MESSAGE
        oneof = fd.containing_oneof
        if oneof is not None:
            m.oneof[i] = oneofs.setdefault(oneof.full_name, len(oneofs))
        m.closed.append(closed)
        m.children.append(value)
        number = fd.number
        m.has_closed[i] = closed is not None
        if number < m.nlookup:
            m.lookup[number] = i + 1
        else:
            if m.far is None:
                m.far = {}
            m.far[number] = i
    # a oneof of one member (proto3 ``optional``'s synthetic oneof, or one member kept) reads
    # as a field of its own: no other member can replace it
    members = {}
    for i in range(m.nslots):
        if m.oneof[i] >= 0:
            members[m.oneof[i]] = members.get(m.oneof[i], 0) + 1
    for i in range(m.nslots):
        if m.oneof[i] >= 0 and members[m.oneof[i]] == 1:
            m.oneof[i] = -1
        m.kids[i] = <PyObject*>m.children[i]
        m.zerok[i] = (<PNode>m.children[i]).zero_kind()
        m.fastr[i] = _fast_kind(m.mode[i], m.kind[i], m.children[i])
        m.fastk[i] = F_RARE if m.has_closed[i] or m.oneof[i] >= 0 else m.fastr[i]
    return m


cdef int32_t _fast_kind(int32_t mode, int32_t kind, object child):
    """How read_fast hands a slot's value to ``child`` (``F_*``, never F_RARE)."""
    if mode == M_MANY:
        return F_LIST
    if kind == K_MESSAGE and isinstance(child, MsgNode):
        return F_MESSAGE
    if mode == M_IMPLICIT:
        return F_IMPLICIT
    return F_ONE


cdef struct BinaryColumn:
    # A binary Arrow column's buffers, as read in place: ``n`` values from element
    # ``offset``; ``width``-byte offsets (4: binary, 8: large_binary); no validity bitmap
    # (NULL) when no value is null.
    Py_ssize_t n
    Py_ssize_t offset
    int width
    const uint8_t* valid_bits
    const uint8_t* offsets
    const uint8_t* data
    Py_ssize_t data_size


cdef object _binary_column(object values, BinaryColumn* c):
    """Fill ``c`` from a ``binary`` / ``large_binary`` Arrow column; returns its buffers, which
    the caller keeps alive while it reads. Raises ValueError: another type, or buffers
    shorter than the column's length says."""
    vt = values.type
    if pa.types.is_binary(vt):
        c.width = 4
    elif pa.types.is_large_binary(vt):
        c.width = 8
    else:
        raise ValueError(f"a binary column was expected, not {vt}")
    buffers = values.buffers()
    c.n = len(values)
    c.offset = values.offset
    c.valid_bits = NULL
    c.offsets = NULL
    c.data = NULL
    c.data_size = 0
    if c.n == 0:
        return buffers
    if buffers[1] is None or buffers[1].size < (c.offset + c.n + 1) * c.width:
        raise ValueError("the column's offsets buffer is shorter than its length")
    if values.null_count:
        c.valid_bits = address(buffers[0])
        if c.valid_bits != NULL and buffers[0].size * 8 < c.offset + c.n:
            raise ValueError("the column's validity bitmap is shorter than its length")
    c.offsets = address(buffers[1])
    c.data = address(buffers[2])
    c.data_size = 0 if buffers[2] is None else buffers[2].size
    return buffers


cdef class AccelPlan:
    """The compiled reader of one message type (see :func:`plan`)."""

    cdef MsgNode root
    cdef readonly object arrow_type

    def decode(self, payloads):
        """Payloads (unframed message bytes; None: a null row) -> one ``pa.StructArray`` of
        :attr:`arrow_type`.

        Raises:
            Fallback: a payload this reader refuses (decode the batch with the reference).
        """
        self.reset()
        refused = self.append(payloads, 0)
        if refused >= 0:
            self.reset()
            raise Fallback(f"payload {refused} refused")
        return self.finish()

    def reset(self):
        """Start a new array (drop the rows appended so far)."""
        self.root.reset()

    def append(self, payloads, Py_ssize_t start):
        """Append the rows of ``payloads[start:]`` up to the first one this reader refuses.

        Returns:
            The refused payload's index (its half-written row dropped: the rows so far are
            those before it), or -1 when all were appended.
        """
        cdef MsgNode root = self.root
        cdef Py_buffer view
        cdef Py_ssize_t i = start
        cdef Py_ssize_t n = len(payloads)
        cdef Py_ssize_t rows = root.n
        try:
            while i < n:
                p = payloads[i]
                if p is None:
                    root.put_null()
                elif type(p) is bytes:
                    root.put_top(<const uint8_t*>PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p))
                else:
                    PyObject_GetBuffer(p, &view, PyBUF_SIMPLE)
                    try:
                        root.put_top(<const uint8_t*>view.buf, view.len)
                    finally:
                        PyBuffer_Release(&view)
                i += 1
        except Fallback:
            root.truncate(rows + (i - start))
            return i
        return -1

    def append_arrow(self, values, Py_ssize_t start, Py_ssize_t skip):
        """:meth:`append` of the rows ``values[start:]`` of an Arrow column (``binary`` or
        ``large_binary``; a null value: a null row), read in place from its buffers (no
        Python object per value), each value past its first ``skip`` bytes (a framing the
        caller has checked).

        Returns:
            As :meth:`append`: the refused value's index, or -1 when all were appended.

        Raises:
            ValueError: ``values`` is of another type, its buffers are shorter than its
                offsets say, or a value is shorter than ``skip`` bytes.
        """
        cdef MsgNode root = self.root
        cdef BinaryColumn c
        cdef Py_ssize_t i, rows
        cdef int64_t s, e
        if skip < 0:
            raise ValueError(f"skip must be >= 0, not {skip}")
        buffers = _binary_column(values, &c)  # kept alive while read
        if c.n == 0:
            return -1
        i = start
        rows = root.n
        try:
            while i < c.n:
                if c.valid_bits != NULL and not bit(c.valid_bits, c.offset + i):
                    root.put_null()
                else:
                    s = value_range(c.offsets, c.width, c.offset + i, &e)
                    if s < 0 or e > c.data_size or e - s < skip:
                        raise ValueError(
                            f"value {i} is outside the column's data or shorter than {skip} bytes"
                        )
                    root.put_top(c.data + s + skip, <Py_ssize_t>(e - s - skip))
                i += 1
        except Fallback:
            root.truncate(rows + (i - start))
            return i
        return -1

    def append_null(self):
        """Append a null row."""
        self.root.put_null()

    def finish(self):
        """The rows appended since :meth:`reset`, as one ``pa.StructArray``; then empty."""
        out = self.root.finish()
        self.root.reset()
        return out


def plan(descriptor, node, options):
    """The compiled reader of message ``descriptor`` mapped to ``node``
    (:func:`~spark_kafka_py.formats.protobuf.types.map_message` with ``options``), or None when
    it needs something this reader does not do (see the module's docstring)."""
    try:
        root = _message(descriptor, None, False, False, 0, bool(options.emit_default_values), node)
    except _Unsupported:
        return None
    p = AccelPlan()
    p.root = root
    p.arrow_type = node.arrow
    return p


def common_head(values, Py_ssize_t size):
    """The ``size`` bytes every non-null value of a ``binary`` or ``large_binary`` Arrow
    column starts with, read in place from its buffers (one pass, no copy): the framing the
    whole batch shares. None when a value is shorter than ``size`` bytes, two values differ
    in them, or no value is non-null.

    Raises:
        ValueError: ``values`` is of another type, ``size`` is negative, or its buffers are
            shorter than its offsets say.
    """
    cdef BinaryColumn c
    cdef const uint8_t* first = NULL
    cdef Py_ssize_t i
    cdef int64_t s, e
    if size < 0:
        raise ValueError(f"size must be >= 0, not {size}")
    buffers = _binary_column(values, &c)  # kept alive while read
    for i in range(c.n):
        if c.valid_bits != NULL and not bit(c.valid_bits, c.offset + i):
            continue
        s = value_range(c.offsets, c.width, c.offset + i, &e)
        if s < 0 or e > c.data_size or s > e:
            raise ValueError(f"value {i} is outside the column's data")
        if e - s < size:
            return None
        if first == NULL:
            first = c.data + s
        elif memcmp(c.data + s, first, size) != 0:
            return None
    if first == NULL:  # no value, or every value null
        return None
    return PyBytes_FromStringAndSize(<const char*>first, size)
