# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled twin of :class:`spark_kafka_py.formats.json.decode.JsonDecoder`'s per-row path
(Cython): a schema-directed JSON reader for the documents it is sure of, the rest declined.

Reads a batch's Arrow value buffers (``binary``, ``string``, ``large_binary``,
``large_string``: offsets + data) straight into the result's Arrow buffers (validity bitmaps,
fixed-width values, string offsets + data, list offsets, nested structs), one document after
another, without the GIL. A document is *accepted* only when it is, with certainty, read the
same as the per-row path reads it (Python's :mod:`json` + ``from_json``'s rules, see
:mod:`spark_kafka_py.formats.json.decode`); anything else is *declined*: its row is left null
here and its index returned, and the caller decodes it with the per-row path (which then
gives the row, the error or the corrupt record).

Accepted (RFC 8259 strict JSON, the top level an object, whitespace only after it):

- whitespace is space, tab, LF, CR (RFC 8259 section 2; Python's :mod:`json` and Jackson
  alike); a value of whitespace only, empty or null: a null row, as the per-row path;
- strings with the escapes of RFC 8259 section 7 (``\\uXXXX``: a surrogate pair is one
  character, as Python's :mod:`json` joins it); valid UTF-8 (the whole value is checked);
- numbers by RFC 8259 section 6's grammar (no leading zeros, no ``+``, digits after ``.``
  and the exponent letter);
- a schema field's value of its own JSON type: an integer token within the Spark type's range
  (``byte``, ``short``, ``integer``, ``long``); an integer or fractional token into
  ``double`` (correctly rounded as Python's ``float()``: Clinger's exact fast path, else
  ``strtod``, see :func:`double_value`; a result that is not finite is declined) and
  ``float`` (the double rounded to a float by the C cast, as Java's ``Float.parseFloat`` of
  the text rounds it, except a double exactly half-way between two floats: declined, see
  :func:`float32_midpoint`); ``true``/``false`` into ``boolean``; a string into
  ``string``; an object into
  a struct; an array into an array; an object into a map (its entries in document order,
  the names with their escapes read; at most :data:`MAX_MAP_ENTRIES`, no name twice);
  ``null`` into anything (a null field);
- a timestamp string ``yyyy-mm-ddThh:mm:ss[.f{1,6}]Z`` (``T`` or a space) and an integer
  of seconds since the epoch (whose microseconds fit 64 bits), when there is no
  ``timestampFormat``; a date string ``yyyy-mm-dd`` when there is no ``dateFormat``; years
  0001-9999, a day within its month (proleptic Gregorian, as ``datetime.date``);
- fields not in the schema are skipped, still read as strict JSON (nesting bounded);
- the corrupt-record field (if any) is null.

Declined: everything else, among it single quotes, comments, the ``NaN``/``Infinity`` tokens,
leading zeros, trailing commas, raw control characters in strings, other escapes, a lone
surrogate escape, invalid UTF-8, a top level that is not an object, anything but whitespace
after the object, a name with an escape, a schema field given twice, any type mismatch
(``"1"`` for a number, ``1.5`` or ``1e3`` for an integer type, a number for a string, ...), an
integer token of more than 19 digits or a number token of more than :data:`MAX_NUMBER` bytes
(a number token anywhere of more than 1000 bytes: Jackson's ``maxNumberLength``),
nesting deeper than :data:`MAX_DEPTH` (a value of :data:`.jackson.MAX_NESTING` or less: the
per-row path then decides), strings for float fields (``"NaN"`` ...).

Since every document accepted here is strict JSON read in the one way both Jackson and
Python's :mod:`json` read it, the ``allow*`` read features change nothing here; the datetime
options matter only through the formats (above).

Bounds: every read is checked against the value's end; the offsets are checked against the
data buffer (an inconsistent array is refused: :meth:`Plan.decode` returns None); memory grows
with the output only (linear in the input); recursion is bounded by :data:`MAX_DEPTH`; a
string or list column past 2 GiB (32-bit Arrow offsets) makes :meth:`Plan.decode` return None.
The result's value, offset and string buffers are handed to Arrow without a copy; the rest is
freed after each batch (a plan holds no memory between batches but its compiled type), and a
plan reads one batch at a time (a lock: a batch arriving meanwhile gets None, the caller's
other paths).

Type stub: ``_accel.pyi``.
"""

from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.math cimport INFINITY, fabs, isfinite


cdef extern from "<math.h>" nogil:
    float nextafterf(float x, float y)

#: Half-way between float's largest finite value and 2**128 (decode._FLOAT32_OVERFLOW).
cdef double FLOAT32_OVERFLOW = 340282356779733661637539395458142568448.0


cdef inline bint float32_midpoint(double x) noexcept nogil:
    """Whether the finite double ``x`` lies exactly half-way between two adjacent floats (or
    on the overflow threshold), where rounding it again to a float may differ from rounding
    the decimal it came from once."""
    cdef double ax = fabs(x)
    cdef float f
    cdef double g
    if ax >= FLOAT32_OVERFLOW:
        return ax == FLOAT32_OVERFLOW
    f = <float>ax
    if <double>f == ax:
        return False
    g = nextafterf(f, INFINITY) if <double>f < ax else nextafterf(f, 0.0)
    return (<double>f + g) * 0.5 == ax
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, realloc, strtod
from libc.string cimport memcmp, memcpy

import threading

import pyarrow as pa

from spark_kafka_py._cutil cimport address, bit, bitmap_bytes, valid_utf8

__all__ = ["MAX_DEPTH", "MAX_MAP_ENTRIES", "MAX_NUMBER", "Plan", "plan"]

#: The deepest nesting read here (the top-level object is 1); deeper documents are declined
#: (the per-row path reads up to ``jackson.MAX_NESTING`` = 1000). Bounds the C recursion.
MAX_DEPTH = 256
DEF C_MAX_DEPTH = 256
#: The longest number token converted to a double here (bytes); longer ones are declined.
MAX_NUMBER = 64
DEF C_MAX_NUMBER = 64
DEF INT32_MAX = 2147483647
#: ``jackson.MAX_NUMBER_LENGTH``: a number token of at most that many bytes has at most that
#: many digits, which Jackson takes; a longer one is declined.
DEF C_MAX_NUMBER_LENGTH = 1000
#: The most entries of one map object read here (a key given twice is looked for among the
#: entries before it); a larger object is declined.
MAX_MAP_ENTRIES = 64
DEF C_MAX_MAP_ENTRIES = 64
#: A batch's buffers start with the room the last batch used, up to this (bytes) each.
DEF RESERVED = 16777216
cdef extern from "<stdint.h>":
    const int64_t INT64_MIN
    const int64_t INT64_MAX
cdef int64_t MICROS_PER_SECOND = 1000000
cdef int64_t MICROS_PER_DAY = 86400 * MICROS_PER_SECOND
#: The largest seconds since the epoch whose microseconds fit a long (2**63 // 10**6).
cdef int64_t MAX_SECONDS = INT64_MAX // MICROS_PER_SECOND

# results of the readers
cdef enum:
    R_OK = 0
    R_DECLINE = 1   # this document is declined
    R_NOMEM = 2     # malloc failed
    R_TOOBIG = 3    # a 32-bit offset would overflow: the batch is refused
    R_TOOMANY = 4   # more documents declined than allowed: the batch is refused
    R_BADINPUT = 5  # the value offsets are not consistent with the data buffer

# node kinds
cdef enum:
    K_STRUCT = 1
    K_ARRAY = 2
    K_I8 = 3
    K_I16 = 4
    K_I32 = 5
    K_I64 = 6
    K_F64 = 7
    K_F32 = 8
    K_BOOL = 9
    K_STR = 10
    K_TS = 11
    K_DATE = 12
    K_CORRUPT = 13  # the corrupt-record field: always null, never matched by a name
    K_MAP = 14      # fields[0]: the keys (strings), fields[1]: the values


# -- growable buffers ----------------------------------------------------------------------------


cdef struct CBuf:
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef inline int reserve(CBuf* b, Py_ssize_t extra) noexcept nogil:
    """Room for ``extra`` more bytes (doubling from 256); R_NOMEM when realloc fails."""
    cdef Py_ssize_t need = b.size + extra
    cdef Py_ssize_t cap
    cdef uint8_t* grown
    if need <= b.cap:
        return R_OK
    cap = b.cap * 2 if b.cap else 256
    while cap < need:
        cap *= 2
    grown = <uint8_t*>realloc(b.data, cap)
    if grown == NULL:
        return R_NOMEM
    b.data = grown
    b.cap = cap
    return R_OK


cdef inline int put(CBuf* b, const void* src, Py_ssize_t size) noexcept nogil:
    if reserve(b, size):
        return R_NOMEM
    memcpy(b.data + b.size, src, size)
    b.size += size
    return R_OK


cdef inline int put_int32(CBuf* b, int32_t v) noexcept nogil:
    if reserve(b, 4):
        return R_NOMEM
    (<int32_t*>(b.data + b.size))[0] = v
    b.size += 4
    return R_OK


cdef inline int put_int64(CBuf* b, int64_t v) noexcept nogil:
    if reserve(b, 8):
        return R_NOMEM
    (<int64_t*>(b.data + b.size))[0] = v
    b.size += 8
    return R_OK


cdef class Owned:
    """Memory taken from a :c:type:`CBuf` (freed with this object), read through the buffer
    protocol: a ``pyarrow.Buffer`` over it copies nothing."""

    cdef uint8_t* data
    cdef Py_ssize_t size

    def __dealloc__(self):
        free(self.data)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.data if self.data != NULL else <void*>&self.size,
                          self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass


cdef object take_buffer(CBuf* b, Py_ssize_t* hint):
    """The bytes in use as a ``pyarrow.Buffer`` without a copy: the memory is handed over
    (``b`` is then empty, without memory; ``hint[0]``: the size it had)."""
    cdef Owned owned = Owned.__new__(Owned)
    hint[0] = b.size
    owned.data = b.data
    owned.size = b.size
    b.data = NULL
    b.size = 0
    b.cap = 0
    return pa.py_buffer(owned)


# -- the compiled Spark type ---------------------------------------------------------------------


cdef struct JNode:
    int kind
    int width              # bytes per value of a fixed-width kind
    Py_ssize_t index       # in Plan._types
    Py_ssize_t nfields
    JNode** fields
    const char** names     # UTF-8, kept alive by Plan._keep
    Py_ssize_t* name_lens  # -1: never matched (the corrupt-record field)
    uint8_t* seen          # fields met in the object being read (a key given twice: declined)
    uint8_t* plain         # a name without '"', '\\' or control characters (matched in place)
    JNode* element
    Py_ssize_t count       # rows (slots) written
    bint row_slot          # one slot per row: the root and the struct fields below it
    CBuf valid             # one byte per slot
    CBuf data              # fixed-width values (booleans one byte each)
    CBuf offsets           # int32, count + 1 of them (strings, lists)
    CBuf chars             # string bytes
    # sizes at the start of the current document (restored when it is declined)
    Py_ssize_t s_count
    Py_ssize_t s_valid
    Py_ssize_t s_data
    Py_ssize_t s_offsets
    Py_ssize_t s_chars
    # sizes of the last batch's data, offsets and strings (handed over to Arrow): the next
    # batch reserves as much at once instead of growing from nothing
    Py_ssize_t h_valid
    Py_ssize_t h_data
    Py_ssize_t h_offsets
    Py_ssize_t h_chars


cdef inline int append_one(JNode* n) noexcept nogil:
    """A null slot at the end of ``n`` itself (a struct's children not touched)."""
    cdef int32_t last
    if reserve(&n.valid, 1):
        return R_NOMEM
    n.valid.data[n.valid.size] = 0
    n.valid.size += 1
    n.count += 1
    if n.kind == K_STRUCT:
        return R_OK
    if n.kind == K_ARRAY or n.kind == K_STR or n.kind == K_CORRUPT or n.kind == K_MAP:
        last = (<int32_t*>(n.offsets.data + n.offsets.size - 4))[0]
        return put_int32(&n.offsets, last)
    if reserve(&n.data, 8):
        return R_NOMEM
    # a zero of the value's width (stores, not a memset call: this runs per field per row)
    if n.width == 8:
        (<int64_t*>(n.data.data + n.data.size))[0] = 0
    elif n.width == 4:
        (<int32_t*>(n.data.data + n.data.size))[0] = 0
    elif n.width == 2:
        (<int16_t*>(n.data.data + n.data.size))[0] = 0
    else:
        n.data.data[n.data.size] = 0
    n.data.size += n.width
    return R_OK


cdef int append_null(JNode* n) noexcept nogil:
    """A null slot at the end of ``n`` (a struct: a null slot in each child, as Arrow's struct
    children have one slot per struct slot); reading a value then fills it in."""
    cdef Py_ssize_t i
    if append_one(n):
        return R_NOMEM
    if n.kind == K_STRUCT:
        for i in range(n.nfields):
            if append_null(n.fields[i]):
                return R_NOMEM
    return R_OK


cdef inline void set_valid(JNode* n) noexcept nogil:
    n.valid.data[n.count - 1] = 1


cdef inline void set_end_offset(JNode* n, int32_t end) noexcept nogil:
    (<int32_t*>(n.offsets.data + n.offsets.size - 4))[0] = end


cdef int reset_node(JNode* n) noexcept nogil:
    """``n`` emptied for a batch (strings and lists: their first offset, 0), with the room
    the last batch used reserved (at most :data:`RESERVED` bytes a buffer)."""
    if reserve(&n.data, min(n.h_data, RESERVED)) or reserve(&n.chars, min(n.h_chars, RESERVED)):
        return R_NOMEM
    if reserve(&n.offsets, min(n.h_offsets, RESERVED)) or reserve(&n.valid, min(n.h_valid, RESERVED)):
        return R_NOMEM
    n.count = 0
    n.valid.size = 0
    n.data.size = 0
    n.chars.size = 0
    n.offsets.size = 0
    if n.kind == K_ARRAY or n.kind == K_STR or n.kind == K_CORRUPT or n.kind == K_MAP:
        return put_int32(&n.offsets, 0)
    return R_OK


cdef inline void release(CBuf* b, Py_ssize_t* hint) noexcept nogil:
    """``b``'s memory freed (``hint[0]``: the size it held, when it held memory)."""
    if b.data != NULL:
        hint[0] = b.size
    free(b.data)
    b.data = NULL
    b.cap = 0
    b.size = 0


cdef void release_node(JNode* n) noexcept nogil:
    """Everything ``n`` holds freed after a batch (a plan holds no batch's memory between
    batches: a decoder cached per schema costs its plan only)."""
    release(&n.valid, &n.h_valid)
    release(&n.data, &n.h_data)
    release(&n.chars, &n.h_chars)
    release(&n.offsets, &n.h_offsets)


cdef void free_node(JNode* n) noexcept nogil:
    free(n.fields)
    free(n.names)
    free(n.name_lens)
    free(n.seen)
    free(n.plain)
    free(n.valid.data)
    free(n.data.data)
    free(n.offsets.data)
    free(n.chars.data)
    free(n)


# -- the reader ----------------------------------------------------------------------------------


cdef struct Cur:
    const uint8_t* p
    Py_ssize_t pos
    Py_ssize_t end
    bint ts_ok    # no timestampFormat: the strict timestamp forms are read here
    bint date_ok  # no dateFormat


cdef inline bint is_ws(uint8_t c) noexcept nogil:
    # RFC 8259 section 2: space, tab, LF, CR
    return c == 32 or c == 9 or c == 10 or c == 13


cdef inline void skip_ws(Cur* c) noexcept nogil:
    while c.pos < c.end and is_ws(c.p[c.pos]):
        c.pos += 1


cdef inline bint is_digit(uint8_t c) noexcept nogil:
    return 48 <= c <= 57


cdef inline int hex4(const uint8_t* p, Py_ssize_t at, Py_ssize_t end, uint32_t* out) noexcept nogil:
    """Four hex digits at ``at`` (RFC 8259 section 7's ``\\uXXXX``): R_OK and ``out``."""
    cdef uint32_t v = 0
    cdef uint8_t ch
    cdef int k
    if at + 4 > end:
        return R_DECLINE
    for k in range(4):
        ch = p[at + k]
        if 48 <= ch <= 57:
            v = v * 16 + (ch - 48)
        elif 97 <= ch <= 102:
            v = v * 16 + (ch - 87)
        elif 65 <= ch <= 70:
            v = v * 16 + (ch - 55)
        else:
            return R_DECLINE
    out[0] = v
    return R_OK


cdef int put_utf8(CBuf* b, uint32_t code) noexcept nogil:
    """``code`` (not a surrogate) in UTF-8 (RFC 3629)."""
    cdef uint8_t tmp[4]
    cdef Py_ssize_t k
    if code < 0x80:
        tmp[0] = <uint8_t>code
        k = 1
    elif code < 0x800:
        tmp[0] = <uint8_t>(0xC0 | (code >> 6))
        tmp[1] = <uint8_t>(0x80 | (code & 0x3F))
        k = 2
    elif code < 0x10000:
        tmp[0] = <uint8_t>(0xE0 | (code >> 12))
        tmp[1] = <uint8_t>(0x80 | ((code >> 6) & 0x3F))
        tmp[2] = <uint8_t>(0x80 | (code & 0x3F))
        k = 3
    else:
        tmp[0] = <uint8_t>(0xF0 | (code >> 18))
        tmp[1] = <uint8_t>(0x80 | ((code >> 12) & 0x3F))
        tmp[2] = <uint8_t>(0x80 | ((code >> 6) & 0x3F))
        tmp[3] = <uint8_t>(0x80 | (code & 0x3F))
        k = 4
    return put(b, tmp, k)


cdef int scan_string(Cur* c, CBuf* out) noexcept nogil:
    """The string whose opening quote is at ``c.pos`` (RFC 8259 section 7), its text appended
    to ``out`` (NULL: checked only); ``c.pos`` then past the closing quote. Declined: a raw
    control character (below U+0020), an escape RFC 8259 does not list, a lone surrogate
    escape (Python's :mod:`json` keeps it, from_json writes ``?``: the per-row path does it),
    the end of the value first."""
    cdef const uint8_t* p = c.p
    cdef Py_ssize_t end = c.end
    cdef Py_ssize_t i = c.pos + 1
    cdef Py_ssize_t run
    cdef uint8_t ch, byte
    cdef uint32_t code, low
    while True:
        run = i
        while i < end:
            ch = p[i]
            if ch == 34 or ch == 92 or ch < 0x20:
                break
            i += 1
        if out != NULL and i > run:
            if put(out, p + run, i - run):
                return R_NOMEM
        if i >= end:
            return R_DECLINE
        ch = p[i]
        if ch == 34:  # '"'
            c.pos = i + 1
            return R_OK
        if ch < 0x20:
            return R_DECLINE
        # a backslash
        if i + 1 >= end:
            return R_DECLINE
        ch = p[i + 1]
        if ch == 34 or ch == 92 or ch == 47:  # " \ /
            byte = ch
        elif ch == 98:  # b
            byte = 8
        elif ch == 102:  # f
            byte = 12
        elif ch == 110:  # n
            byte = 10
        elif ch == 114:  # r
            byte = 13
        elif ch == 116:  # t
            byte = 9
        elif ch == 117:  # u
            if hex4(p, i + 2, end, &code):
                return R_DECLINE
            i += 6
            if 0xDC00 <= code <= 0xDFFF:
                return R_DECLINE  # a lone low surrogate
            if 0xD800 <= code <= 0xDBFF:
                # a high surrogate: a low one must follow as an escape
                if i + 1 >= end or p[i] != 92 or p[i + 1] != 117:
                    return R_DECLINE
                if hex4(p, i + 2, end, &low) or not (0xDC00 <= low <= 0xDFFF):
                    return R_DECLINE
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            if out != NULL:
                if put_utf8(out, code):
                    return R_NOMEM
            continue
        else:
            return R_DECLINE
        if out != NULL:
            if put(out, &byte, 1):
                return R_NOMEM
        i += 2


cdef int raw_string(Cur* c, Py_ssize_t* start, Py_ssize_t* size) noexcept nogil:
    """The text of a string without escapes at ``c.pos`` (a date or timestamp): its start and
    size; an escape or a control character: declined."""
    cdef Py_ssize_t i = c.pos + 1
    cdef uint8_t ch
    while i < c.end:
        ch = c.p[i]
        if ch == 34:
            start[0] = c.pos + 1
            size[0] = i - c.pos - 1
            c.pos = i + 1
            return R_OK
        if ch == 92 or ch < 0x20:
            return R_DECLINE
        i += 1
    return R_DECLINE


cdef int scan_number(Cur* c, bint* is_int) noexcept nogil:
    """A number token at ``c.pos`` by RFC 8259 section 6's grammar (``-``? ``0`` or a digit
    1-9 and digits, then optionally ``.`` digits, then optionally ``e``/``E`` sign? digits);
    ``c.pos`` past it. What follows is checked by the caller (``01`` fails there). A token
    of more than ``jackson.MAX_NUMBER_LENGTH`` bytes is declined (Jackson may refuse it)."""
    cdef const uint8_t* p = c.p
    cdef Py_ssize_t i = c.pos
    cdef Py_ssize_t end = c.end
    is_int[0] = True
    if i < end and p[i] == 45:  # '-'
        i += 1
    if i >= end:
        return R_DECLINE
    if p[i] == 48:  # '0'
        i += 1
    elif 49 <= p[i] <= 57:
        i += 1
        while i < end and is_digit(p[i]):
            i += 1
    else:
        return R_DECLINE
    if i < end and p[i] == 46:  # '.'
        is_int[0] = False
        i += 1
        if i >= end or not is_digit(p[i]):
            return R_DECLINE
        while i < end and is_digit(p[i]):
            i += 1
    if i < end and (p[i] == 101 or p[i] == 69):  # e E
        is_int[0] = False
        i += 1
        if i < end and (p[i] == 43 or p[i] == 45):
            i += 1
        if i >= end or not is_digit(p[i]):
            return R_DECLINE
        while i < end and is_digit(p[i]):
            i += 1
    if i - c.pos > C_MAX_NUMBER_LENGTH:
        return R_DECLINE  # perhaps more digits than Jackson takes: the per-row path counts
    c.pos = i
    return R_OK


cdef int integer_value(const uint8_t* p, Py_ssize_t start, Py_ssize_t end, int64_t lo, int64_t hi,
                       int64_t* out) noexcept nogil:
    """An integer token's value when it lies in ``[lo, hi]``; more than 19 digits or out of
    the range: declined (the per-row path then calls it a bad value)."""
    cdef bint negative = p[start] == 45
    cdef Py_ssize_t i = start + 1 if negative else start
    cdef uint64_t v = 0
    if end - i > 19:
        return R_DECLINE
    while i < end:
        v = v * 10 + (p[i] - 48)  # at most 19 digits: no overflow of 64 bits
        i += 1
    if negative:
        if v > <uint64_t>(-(lo + 1)) + 1:
            return R_DECLINE
        out[0] = <int64_t>(0 - v)
    else:
        if v > <uint64_t>hi:
            return R_DECLINE
        out[0] = <int64_t>v
    return R_OK


#: The powers of ten a double holds exactly (10**0 .. 10**22).
cdef double EXACT_TENS[23]
for _k in range(23):
    EXACT_TENS[_k] = float(10 ** _k)
#: 2**53: every integer up to it is a double exactly.
cdef uint64_t MAX_EXACT_INT = 9007199254740992


cdef extern from *:
    """
    #include <math.h>
    /* m / 10**k (m > 0, 0 <= k <= 19) rounded to the nearest double, ties to even, by exact
       128-bit integer division: 1 and *out, or 0 where the compiler has no 128-bit integers. */
    static int skp_ratio_to_double(unsigned long long m, int k, double* out) {
    #ifdef __SIZEOF_INT128__
        static const unsigned long long tens[20] = {
            1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
            100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
            10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
            10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL,
            10000000000000000000ULL};
        unsigned long long d, mant;
        unsigned __int128 num, den, q;
        int lm, ld, s, sticky, half;
        if (m == 0 || k < 0 || k > 19) return 0;
        d = tens[k];
        lm = 64 - __builtin_clzll(m);
        ld = 64 - __builtin_clzll(d);
        /* q = floor(m * 2**s / d) lies in [2**53, 2**55) */
        s = 54 + ld - lm;
        if (s > 64 || s < -64) return 0;
        if (s >= 0) { num = (unsigned __int128)m << s; den = d; }
        else { num = m; den = (unsigned __int128)d << (-s); }
        q = num / den;
        sticky = (num % den) != 0;
        while (q >= ((unsigned __int128)1 << 54)) { sticky |= (int)(q & 1); q >>= 1; s -= 1; }
        if (q < ((unsigned __int128)1 << 53)) return 0;
        /* q's top 53 bits, then the round bit, then the sticky remainder */
        mant = (unsigned long long)(q >> 1);
        half = (int)(q & 1);
        if (half && (sticky || (mant & 1))) {
            mant += 1;
            if (mant == (1ULL << 53)) { mant = 1ULL << 52; s -= 1; }
        }
        *out = ldexp((double)mant, 1 - s);
        return 1;
    #else
        (void)m; (void)k; (void)out;
        return 0;
    #endif
    }
    """
    int skp_ratio_to_double(uint64_t m, int k, double* out) noexcept nogil


cdef int double_value(const uint8_t* p, Py_ssize_t start, Py_ssize_t end, double* out) noexcept nogil:
    """A number token (RFC 8259 grammar, checked) as a double, correctly rounded as Python's
    ``float()``:

    - when its digits, without the point, make an integer ``m`` of at most 19 digits with
      ``m <= 2**53``, and its decimal exponent ``e`` (the exponent part less the fraction's
      digits) is within ±22: ``m * 10**e`` or ``m / 10**-e``, one IEEE operation on two
      exact doubles, hence correctly rounded (Clinger's fast path, "How to read floating
      point numbers accurately", PLDI 1990);
    - else, when ``m`` has at most 19 digits and ``-19 <= e <= 0``: ``m / 10**-e`` by exact
      128-bit integer division, rounded to nearest, ties to even, by its remainder
      (``skp_ratio_to_double``; compilers with ``__int128``), as Python's repr of a double
      has 17 significant digits, past Clinger's ``2**53``;
    - otherwise C's ``strtod`` on a NUL-terminated copy (glibc's is correctly rounded); all
      of the token must be read (a locale whose decimal point is not ``.`` reads less:
      declined).

    A token longer than :data:`MAX_NUMBER` bytes, or a result that is not finite (``1e400``),
    is declined."""
    cdef char buf[C_MAX_NUMBER + 1]
    cdef char* stop
    cdef Py_ssize_t size = end - start
    cdef Py_ssize_t i = start
    cdef bint negative = False
    cdef bint exp_negative = False
    cdef uint64_t m = 0
    cdef int ndigits = 0
    cdef int64_t e = 0
    cdef int64_t exp_part = 0
    cdef double x
    if size > C_MAX_NUMBER:
        return R_DECLINE
    if p[i] == 45:
        negative = True
        i += 1
    while i < end and is_digit(p[i]):
        m = m * 10 + (p[i] - 48)
        ndigits += 1
        i += 1
        if ndigits > 19:
            break
    if ndigits <= 19 and i < end and p[i] == 46:
        i += 1
        while i < end and is_digit(p[i]):
            m = m * 10 + (p[i] - 48)
            ndigits += 1
            e -= 1
            i += 1
            if ndigits > 19:
                break
    if ndigits <= 19 and i < end and (p[i] == 101 or p[i] == 69):
        i += 1
        if p[i] == 43:
            i += 1
        elif p[i] == 45:
            exp_negative = True
            i += 1
        while i < end and exp_part < 100000:
            exp_part = exp_part * 10 + (p[i] - 48)
            i += 1
        e += -exp_part if exp_negative else exp_part
    if ndigits <= 19 and i == end:
        if m <= MAX_EXACT_INT and -22 <= e <= 22:
            x = <double>m
            if e >= 0:
                x = x * EXACT_TENS[e]
            else:
                x = x / EXACT_TENS[-e]
            out[0] = -x if negative else x
            return R_OK
        if -19 <= e <= 0 and skp_ratio_to_double(m, <int>-e, &x):
            out[0] = -x if negative else x
            return R_OK
    memcpy(buf, p + start, size)
    buf[size] = 0
    x = strtod(buf, &stop)
    if stop != buf + size or not isfinite(x):
        return R_DECLINE
    out[0] = x
    return R_OK


cdef inline bint is_leap(int64_t y) noexcept nogil:
    return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0


cdef inline int64_t month_days(int64_t y, int64_t m) noexcept nogil:
    """The days of month ``m`` (1-12) of year ``y`` (proleptic Gregorian)."""
    if m == 2:
        return 29 if is_leap(y) else 28
    if m == 4 or m == 6 or m == 9 or m == 11:
        return 30
    return 31


cdef int64_t days_from_civil(int64_t y, int64_t m, int64_t d) noexcept nogil:
    """Days since 1970-01-01 of a proleptic Gregorian date (years 1..9999): the days of the
    whole years and months before it, counted."""
    cdef int64_t yy = y - 1
    cdef int64_t days = yy * 365 + yy // 4 - yy // 100 + yy // 400  # 0001-01-01 .. y-01-01
    cdef int64_t k
    for k in range(1, m):
        days += month_days(y, k)
    days += d - 1
    return days - 719162  # 1970-01-01 is day 719162 counted from 0001-01-01


cdef inline int digits(const uint8_t* p, Py_ssize_t at, int count, int64_t* out) noexcept nogil:
    cdef int64_t v = 0
    cdef int k
    for k in range(count):
        if not is_digit(p[at + k]):
            return R_DECLINE
        v = v * 10 + (p[at + k] - 48)
    out[0] = v
    return R_OK


cdef int strict_date(const uint8_t* p, Py_ssize_t at, Py_ssize_t size, int64_t* days) noexcept nogil:
    """``yyyy-mm-dd`` at ``at`` (size at least 10; only the first 10 bytes read): years
    0001-9999, months 01-12, a day within its month; days since the epoch."""
    cdef int64_t y, m, d
    if size < 10 or p[at + 4] != 45 or p[at + 7] != 45:
        return R_DECLINE
    if digits(p, at, 4, &y) or digits(p, at + 5, 2, &m) or digits(p, at + 8, 2, &d):
        return R_DECLINE
    if y < 1 or m < 1 or m > 12 or d < 1:
        return R_DECLINE
    if d > month_days(y, m):
        return R_DECLINE
    days[0] = days_from_civil(y, m, d)
    return R_OK


cdef int strict_timestamp(const uint8_t* p, Py_ssize_t at, Py_ssize_t size, int64_t* micros) noexcept nogil:
    """``yyyy-mm-ddThh:mm:ss[.f{1,6}]Z`` (``T`` or a space) at ``at``, exactly ``size`` bytes:
    hours 00-23, minutes and seconds 00-59; microseconds since the epoch (UTC)."""
    cdef int64_t days, h, mi, s, frac = 0
    cdef Py_ssize_t nfrac, k
    if size < 20 or size == 21 or size > 27:
        return R_DECLINE
    if strict_date(p, at, size, &days):
        return R_DECLINE
    if (p[at + 10] != 84 and p[at + 10] != 32) or p[at + 13] != 58 or p[at + 16] != 58:
        return R_DECLINE
    if digits(p, at + 11, 2, &h) or digits(p, at + 14, 2, &mi) or digits(p, at + 17, 2, &s):
        return R_DECLINE
    if h > 23 or mi > 59 or s > 59 or p[at + size - 1] != 90:  # 'Z'
        return R_DECLINE
    if size > 20:
        if p[at + 19] != 46:  # '.'
            return R_DECLINE
        nfrac = size - 21
        if digits(p, at + 20, <int>nfrac, &frac):
            return R_DECLINE
        for k in range(nfrac, 6):
            frac *= 10
    micros[0] = days * MICROS_PER_DAY + ((h * 60 + mi) * 60 + s) * MICROS_PER_SECOND + frac
    return R_OK


cdef int literal(Cur* c, const char* word, Py_ssize_t size) noexcept nogil:
    if c.end - c.pos >= size and memcmp(c.p + c.pos, word, size) == 0:
        c.pos += size
        return R_OK
    return R_DECLINE


cdef int skip_value(Cur* c, int depth) noexcept nogil:
    """A value not in the schema at ``c.pos``, read as strict JSON and dropped; ``depth`` is
    the nesting of the object or array holding it."""
    cdef uint8_t ch
    cdef uint8_t close
    cdef bint is_int
    cdef int rc
    if c.pos >= c.end:
        return R_DECLINE
    ch = c.p[c.pos]
    if ch == 34:
        return scan_string(c, NULL)
    if ch == 45 or is_digit(ch):
        return scan_number(c, &is_int)
    if ch == 116:
        return literal(c, b"true", 4)
    if ch == 102:
        return literal(c, b"false", 5)
    if ch == 110:
        return literal(c, b"null", 4)
    if ch != 123 and ch != 91:
        return R_DECLINE
    if depth + 1 > C_MAX_DEPTH:
        return R_DECLINE
    close = 125 if ch == 123 else 93
    c.pos += 1
    skip_ws(c)
    if c.pos < c.end and c.p[c.pos] == close:
        c.pos += 1
        return R_OK
    while True:
        if ch == 123:  # a name, ':'
            if c.pos >= c.end or c.p[c.pos] != 34:
                return R_DECLINE
            rc = scan_string(c, NULL)
            if rc:
                return rc
            skip_ws(c)
            if c.pos >= c.end or c.p[c.pos] != 58:
                return R_DECLINE
            c.pos += 1
            skip_ws(c)
        rc = skip_value(c, depth + 1)
        if rc:
            return rc
        skip_ws(c)
        if c.pos >= c.end:
            return R_DECLINE
        if c.p[c.pos] == 44:  # ','
            c.pos += 1
            skip_ws(c)
            continue
        if c.p[c.pos] == close:
            c.pos += 1
            return R_OK
        return R_DECLINE


cdef int parse_array(Cur* c, JNode* n, int depth) noexcept nogil:
    """An array at ``c.pos`` into ``n``'s last (null) slot; ``depth`` is its own nesting."""
    cdef JNode* e = n.element
    cdef int rc
    if depth > C_MAX_DEPTH:
        return R_DECLINE
    c.pos += 1
    skip_ws(c)
    if c.pos < c.end and c.p[c.pos] == 93:
        c.pos += 1
    else:
        while True:
            rc = append_null(e)
            if rc:
                return rc
            rc = parse_value(c, e, depth)
            if rc:
                return rc
            skip_ws(c)
            if c.pos >= c.end:
                return R_DECLINE
            if c.p[c.pos] == 44:
                c.pos += 1
                skip_ws(c)
                continue
            if c.p[c.pos] == 93:
                c.pos += 1
                break
            return R_DECLINE
    if e.count > INT32_MAX:
        return R_TOOBIG
    set_end_offset(n, <int32_t>e.count)
    set_valid(n)
    return R_OK


cdef int parse_map(Cur* c, JNode* n, int depth) noexcept nogil:
    """An object at ``c.pos`` into map ``n``'s last (null) slot: its entries in document
    order (``decode._container``: the names as strings, escapes read, each value converted
    as the map's value type); ``depth`` is its own nesting. Declined: a name given twice
    (Python's dict keeps the last value at the first place: the per-row path does it), more
    than :data:`MAX_MAP_ENTRIES` entries."""
    cdef JNode* keys = n.fields[0]
    cdef JNode* vals = n.fields[1]
    cdef Py_ssize_t first = keys.count
    cdef Py_ssize_t kstart, klen, j
    cdef int32_t* offs
    cdef uint8_t ch
    cdef int rc
    if depth > C_MAX_DEPTH:
        return R_DECLINE
    c.pos += 1
    skip_ws(c)
    if c.pos < c.end and c.p[c.pos] == 125:
        c.pos += 1
    else:
        while True:
            if c.pos >= c.end or c.p[c.pos] != 34:
                return R_DECLINE
            if keys.count - first >= C_MAX_MAP_ENTRIES:
                return R_DECLINE
            rc = append_null(keys)
            if rc:
                return rc
            kstart = keys.chars.size
            rc = scan_string(c, &keys.chars)
            if rc:
                return rc
            if keys.chars.size > INT32_MAX:
                return R_TOOBIG
            set_end_offset(keys, <int32_t>keys.chars.size)
            set_valid(keys)
            klen = keys.chars.size - kstart
            offs = <int32_t*>keys.offsets.data
            for j in range(first, keys.count - 1):
                if offs[j + 1] - offs[j] == klen and same_bytes(
                    keys.chars.data + offs[j], keys.chars.data + kstart, klen
                ):
                    return R_DECLINE  # a name given twice
            skip_ws(c)
            if c.pos >= c.end or c.p[c.pos] != 58:
                return R_DECLINE
            c.pos += 1
            skip_ws(c)
            rc = append_null(vals)
            if rc:
                return rc
            rc = parse_value(c, vals, depth)
            if rc:
                return rc
            skip_ws(c)
            if c.pos >= c.end:
                return R_DECLINE
            ch = c.p[c.pos]
            c.pos += 1
            if ch == 44:
                skip_ws(c)
                continue
            if ch == 125:
                break
            return R_DECLINE
    if keys.count > INT32_MAX:
        return R_TOOBIG
    set_end_offset(n, <int32_t>keys.count)
    set_valid(n)
    return R_OK


cdef inline bint same_bytes(const uint8_t* a, const uint8_t* b, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(size):
        if a[k] != b[k]:
            return False
    return True


cdef inline Py_ssize_t find_field(JNode* n, const uint8_t* key, Py_ssize_t size,
                                  Py_ssize_t* hint) noexcept nogil:
    """The schema field named ``key`` (UTF-8 bytes, compared exactly: names match
    case-sensitively), or -1; the field after the last one found is tried first."""
    cdef Py_ssize_t i, k
    cdef Py_ssize_t nf = n.nfields
    for k in range(nf):
        i = hint[0] + k
        if i >= nf:
            i -= nf
        if n.name_lens[i] == size and same_bytes(<const uint8_t*>n.names[i], key, size):
            hint[0] = i + 1 if i + 1 < nf else 0
            return i
    return -1


cdef int parse_struct(Cur* c, JNode* n, int depth) noexcept nogil:
    """An object at ``c.pos`` into ``n``'s last (null) slot, whose children's last slots
    are null already; ``depth`` is its own nesting."""
    cdef Py_ssize_t hint = 0
    cdef Py_ssize_t kstart, i, f, size
    cdef uint8_t ch
    cdef int rc
    if depth > C_MAX_DEPTH:
        return R_DECLINE
    for i in range(n.nfields):
        n.seen[i] = 0
    c.pos += 1
    skip_ws(c)
    if c.pos < c.end and c.p[c.pos] == 125:
        c.pos += 1
        set_valid(n)
        return R_OK
    while True:
        if c.pos >= c.end or c.p[c.pos] != 34:
            return R_DECLINE
        kstart = c.pos + 1
        f = hint
        size = n.name_lens[f]
        if (n.plain[f] and kstart + size < c.end and c.p[kstart + size] == 34
                and same_bytes(<const uint8_t*>n.names[f], c.p + kstart, size)):
            # the expected field's name, then a quote: as the name has no quote, backslash
            # or control character, the name read below would be this one
            i = kstart + size
            hint = f + 1 if f + 1 < n.nfields else 0
        else:
            i = kstart
            while i < c.end:
                ch = c.p[i]
                if ch == 34:
                    break
                if ch == 92 or ch < 0x20:
                    return R_DECLINE  # a name with an escape (or a control character)
                i += 1
            if i >= c.end:
                return R_DECLINE
            f = find_field(n, c.p + kstart, i - kstart, &hint)
        c.pos = i + 1
        skip_ws(c)
        if c.pos >= c.end or c.p[c.pos] != 58:
            return R_DECLINE
        c.pos += 1
        skip_ws(c)
        if f >= 0:
            if n.seen[f]:
                return R_DECLINE  # given twice
            n.seen[f] = 1
            rc = parse_value(c, n.fields[f], depth)
        else:
            rc = skip_value(c, depth)
        if rc:
            return rc
        skip_ws(c)
        if c.pos >= c.end:
            return R_DECLINE
        ch = c.p[c.pos]
        c.pos += 1
        if ch == 44:
            skip_ws(c)
            continue
        if ch == 125:
            set_valid(n)
            return R_OK
        return R_DECLINE


cdef int parse_value(Cur* c, JNode* n, int depth) noexcept nogil:
    """The value at ``c.pos`` into ``n``'s last (null) slot; ``depth`` is the nesting of the
    object or array holding it. ``null`` leaves the slot null."""
    cdef uint8_t ch
    cdef int kind = n.kind
    cdef bint is_int
    cdef Py_ssize_t start, size
    cdef int64_t iv
    cdef double x
    cdef int rc
    if c.pos >= c.end:
        return R_DECLINE
    ch = c.p[c.pos]
    if ch == 110:  # null
        return literal(c, b"null", 4)
    if kind == K_STRUCT:
        if ch != 123:
            return R_DECLINE
        return parse_struct(c, n, depth + 1)
    if kind == K_ARRAY:
        if ch != 91:
            return R_DECLINE
        return parse_array(c, n, depth + 1)
    if kind == K_MAP:
        if ch != 123:
            return R_DECLINE
        return parse_map(c, n, depth + 1)
    if kind == K_STR:
        if ch != 34:
            return R_DECLINE
        rc = scan_string(c, &n.chars)
        if rc:
            return rc
        if n.chars.size > INT32_MAX:
            return R_TOOBIG
        set_end_offset(n, <int32_t>n.chars.size)
        set_valid(n)
        return R_OK
    if kind == K_BOOL:
        if ch == 116:
            rc = literal(c, b"true", 4)
            n.data.data[n.count - 1] = 1
        elif ch == 102:
            rc = literal(c, b"false", 5)
        else:
            return R_DECLINE
        if rc:
            return rc
        set_valid(n)
        return R_OK
    if kind == K_TS or kind == K_DATE:
        if kind == K_TS and not c.ts_ok or kind == K_DATE and not c.date_ok:
            return R_DECLINE
        if ch == 34:
            if raw_string(c, &start, &size):
                return R_DECLINE
            if kind == K_TS:
                if strict_timestamp(c.p, start, size, &iv):
                    return R_DECLINE
                (<int64_t*>n.data.data)[n.count - 1] = iv
            else:
                if size != 10 or strict_date(c.p, start, size, &iv):
                    return R_DECLINE
                (<int32_t*>n.data.data)[n.count - 1] = <int32_t>iv
            set_valid(n)
            return R_OK
        if kind == K_DATE or not (ch == 45 or is_digit(ch)):
            return R_DECLINE
        # an integer into a timestamp: seconds since the epoch (decode._convert), when its
        # microseconds fit a long
        start = c.pos
        if scan_number(c, &is_int) or not is_int:
            return R_DECLINE
        if integer_value(c.p, start, c.pos, -MAX_SECONDS, MAX_SECONDS, &iv):
            return R_DECLINE
        (<int64_t*>n.data.data)[n.count - 1] = iv * MICROS_PER_SECOND
        set_valid(n)
        return R_OK
    if kind == K_CORRUPT:
        return R_DECLINE  # never reached: its name never matches
    # numbers
    if not (ch == 45 or is_digit(ch)):
        return R_DECLINE
    start = c.pos
    if scan_number(c, &is_int):
        return R_DECLINE
    if kind == K_F64 or kind == K_F32:
        if double_value(c.p, start, c.pos, &x):
            return R_DECLINE
        if kind == K_F64:
            (<double*>n.data.data)[n.count - 1] = x
        else:
            # Spark's float is Java's Float.parseFloat of the text (Jackson 2.15+): the decimal
            # rounded once. The double x rounded again (C's cast: to nearest, ties to even,
            # overflow to infinity) agrees except when x lies exactly half-way between two
            # floats or on the overflow threshold: declined, the per-row path decides by the
            # text's exact value (decode._float32)
            if float32_midpoint(x):
                return R_DECLINE
            (<float*>n.data.data)[n.count - 1] = <float>x
        set_valid(n)
        return R_OK
    if not is_int:
        return R_DECLINE  # a fraction or an exponent for an integer type
    if kind == K_I64:
        if integer_value(c.p, start, c.pos, INT64_MIN, INT64_MAX, &iv):
            return R_DECLINE
        (<int64_t*>n.data.data)[n.count - 1] = iv
    elif kind == K_I32:
        if integer_value(c.p, start, c.pos, -2147483648, 2147483647, &iv):
            return R_DECLINE
        (<int32_t*>n.data.data)[n.count - 1] = <int32_t>iv
    elif kind == K_I16:
        if integer_value(c.p, start, c.pos, -32768, 32767, &iv):
            return R_DECLINE
        (<int16_t*>n.data.data)[n.count - 1] = <int16_t>iv
    else:
        if integer_value(c.p, start, c.pos, -128, 127, &iv):
            return R_DECLINE
        (<int8_t*>n.data.data)[n.count - 1] = <int8_t>iv
    set_valid(n)
    return R_OK


# -- the plan ------------------------------------------------------------------------------------

_LEAVES = {
    "long": (K_I64, 8),
    "integer": (K_I32, 4),
    "short": (K_I16, 2),
    "byte": (K_I8, 1),
    "double": (K_F64, 8),
    "float": (K_F32, 4),
    "boolean": (K_BOOL, 1),
    "string": (K_STR, 0),
    "timestamp": (K_TS, 8),
    "date": (K_DATE, 4),
}


class _Unsupported(Exception):
    pass


cdef class Plan:
    """A compiled struct type; :meth:`decode` reads batches with it (one at a time: a batch
    arriving while another is read returns None)."""

    cdef JNode* root
    cdef JNode** nodes
    cdef Py_ssize_t n_nodes
    cdef Py_ssize_t cap_nodes
    cdef list _types
    cdef list _keep
    cdef bint ts_ok
    cdef bint date_ok
    cdef object _lock
    cdef CBuf declined

    def __cinit__(self):
        self.nodes = NULL
        self.n_nodes = 0
        self.cap_nodes = 0
        self.root = NULL
        self._types = []
        self._keep = []
        self._lock = threading.Lock()

    def __dealloc__(self):
        cdef Py_ssize_t i
        for i in range(self.n_nodes):
            free_node(self.nodes[i])
        free(self.nodes)
        free(self.declined.data)

    cdef JNode* _node(self, int kind, int width, object arrow) except NULL:
        cdef JNode* n = <JNode*>calloc(1, sizeof(JNode))
        cdef JNode** grown
        if n == NULL:
            raise MemoryError()
        if self.n_nodes == self.cap_nodes:
            grown = <JNode**>realloc(self.nodes, (self.cap_nodes * 2 + 8) * sizeof(JNode*))
            if grown == NULL:
                free(n)
                raise MemoryError()
            self.nodes = grown
            self.cap_nodes = self.cap_nodes * 2 + 8
        self.nodes[self.n_nodes] = n
        n.index = self.n_nodes
        self.n_nodes += 1
        self._types.append(arrow)
        n.kind = kind
        n.width = width
        if kind == K_ARRAY or kind == K_STR or kind == K_CORRUPT or kind == K_MAP:
            if reserve(&n.offsets, 4):
                raise MemoryError()
        return n

    cdef JNode* _build(self, object t, object corrupt) except NULL:
        cdef JNode* n
        cdef Py_ssize_t i, nf
        cdef bytes name
        kind = t.kind
        if kind in _LEAVES:
            code, width = _LEAVES[kind]
            return self._node(code, width, t.arrow)
        if kind == "array":
            n = self._node(K_ARRAY, 0, t.arrow)
            n.element = self._build(t.element, None)
            return n
        if kind == "map":
            n = self._node(K_MAP, 0, t.arrow)
            n.nfields = 2
            n.fields = <JNode**>calloc(2, sizeof(JNode*))
            if n.fields == NULL:
                raise MemoryError()
            n.fields[0] = self._node(K_STR, 0, pa.string())
            n.fields[1] = self._build(t.element, None)
            return n
        if kind != "struct":
            raise _Unsupported(kind)
        n = self._node(K_STRUCT, 0, t.arrow)
        nf = len(t.fields)
        n.nfields = nf
        n.fields = <JNode**>calloc(nf + 1, sizeof(JNode*))
        n.names = <const char**>calloc(nf + 1, sizeof(char*))
        n.name_lens = <Py_ssize_t*>calloc(nf + 1, sizeof(Py_ssize_t))
        n.seen = <uint8_t*>calloc(nf + 1, 1)
        n.plain = <uint8_t*>calloc(nf + 1, 1)
        if (n.fields == NULL or n.names == NULL or n.name_lens == NULL or n.seen == NULL
                or n.plain == NULL):
            raise MemoryError()
        for i, (field_name, field_type) in enumerate(t.fields):
            name = field_name.encode("utf-8", "surrogatepass")
            self._keep.append(name)
            n.names[i] = name
            if corrupt is not None and field_name == corrupt:
                n.fields[i] = self._node(K_CORRUPT, 0, pa.string())
                n.name_lens[i] = -1
            else:
                n.fields[i] = self._build(field_type, None)
                n.name_lens[i] = len(name)
                n.plain[i] = all(b >= 0x20 and b not in b'"\\' for b in name)
        return n

    cdef object _array(self, JNode* n):
        """``n``'s slots as an Arrow array (buffers copied)."""
        cdef Py_ssize_t i
        t = self._types[n.index]
        validity = pa.py_buffer(bitmap_bytes(n.valid.data, n.count))
        if n.kind == K_STRUCT:
            children = [self._array(n.fields[i]) for i in range(n.nfields)]
            return pa.Array.from_buffers(t, n.count, [validity], children=children)
        if n.kind == K_MAP:
            entries = pa.StructArray.from_arrays(
                [self._array(n.fields[0]), self._array(n.fields[1])],
                fields=[t.key_field, t.item_field],
            )
            return pa.Array.from_buffers(
                t, n.count, [validity, take_buffer(&n.offsets, &n.h_offsets)], children=[entries]
            )
        if n.kind == K_ARRAY:
            child = self._array(n.element)
            return pa.Array.from_buffers(
                t, n.count, [validity, take_buffer(&n.offsets, &n.h_offsets)], children=[child]
            )
        if n.kind == K_STR or n.kind == K_CORRUPT:
            return pa.Array.from_buffers(
                t, n.count, [validity, take_buffer(&n.offsets, &n.h_offsets), take_buffer(&n.chars, &n.h_chars)]
            )
        if n.kind == K_BOOL:
            return pa.Array.from_buffers(
                t, n.count, [validity, pa.py_buffer(bitmap_bytes(n.data.data, n.count))]
            )
        return pa.Array.from_buffers(t, n.count, [validity, take_buffer(&n.data, &n.h_data)])

    def decode(self, values, Py_ssize_t max_declined, Py_ssize_t skip=0):
        """Read a batch: ``values`` one JSON document per value (``binary``, ``string``,
        ``large_binary``, ``large_string``; nulls allowed), each past its first ``skip``
        bytes (a framing the caller has checked: a value shorter refuses the batch).

        Returns:
            ``(array, declined, order)``: the struct array (one row per value; a declined row
            null), the declined rows' indices (ascending) and, when some are declined, the
            int64 ``take`` indices that put rows decoded apart for them (concatenated after
            ``array``, in ``declined``'s order) in their places; or None: the type is not one of those
            four, more than ``max_declined`` rows were declined, a string or list column
            would pass 2 GiB, the offsets do not fit the data buffer, or another batch is
            being read.

        Raises:
            MemoryError: malloc failed.
            ValueError: ``skip`` is negative.
        """
        cdef Py_ssize_t k
        cdef Py_ssize_t unused = 0
        if skip < 0:
            raise ValueError(f"skip must be >= 0, not {skip}")
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self._decode(values, max_declined, skip)
        finally:
            for k in range(self.n_nodes):
                release_node(self.nodes[k])
            release(&self.declined, &unused)
            self._lock.release()

    cdef object _decode(self, values, Py_ssize_t max_declined, Py_ssize_t skip):
        cdef const uint8_t* valid_bits
        cdef const uint8_t* offs
        cdef const uint8_t* data
        cdef Py_ssize_t data_size, n, offset, row, start, end, k, ndeclined
        cdef bint large
        cdef Cur cur
        cdef JNode* node
        cdef int rc = R_OK
        cdef int64_t* positions
        vt = values.type
        if pa.types.is_binary(vt) or pa.types.is_string(vt):
            large = False
        elif pa.types.is_large_binary(vt) or pa.types.is_large_string(vt):
            large = True
        else:
            return None
        buffers = values.buffers()
        n = len(values)
        offset = values.offset
        valid_bits = address(buffers[0]) if values.null_count else NULL
        offs = address(buffers[1])
        data = address(buffers[2])
        data_size = 0 if buffers[2] is None else buffers[2].size
        if n and (buffers[1] is None or buffers[1].size < (offset + n + 1) * (8 if large else 4)):
            return None
        if valid_bits != NULL and buffers[0].size * 8 < offset + n:
            return None
        for k in range(self.n_nodes):
            if reset_node(self.nodes[k]):
                raise MemoryError()
        self.declined.size = 0
        cur.ts_ok = self.ts_ok
        cur.date_ok = self.date_ok
        cur.p = data
        with nogil:
            for row in range(n):
                if valid_bits != NULL and not bit(valid_bits, offset + row):
                    rc = append_null(self.root)
                    if rc:
                        break
                    continue
                if large:
                    start = <Py_ssize_t>(<const int64_t*>offs)[offset + row]
                    end = <Py_ssize_t>(<const int64_t*>offs)[offset + row + 1]
                else:
                    start = (<const int32_t*>offs)[offset + row]
                    end = (<const int32_t*>offs)[offset + row + 1]
                if start < 0 or end - start < skip or end > data_size:
                    rc = R_BADINPUT
                    break
                start += skip
                # each node's sizes saved (a declined document is undone), and a null slot
                # in the nodes with one per row (append_null(root), unrolled)
                for k in range(self.n_nodes):
                    node = self.nodes[k]
                    node.s_count = node.count
                    node.s_valid = node.valid.size
                    node.s_data = node.data.size
                    node.s_offsets = node.offsets.size
                    node.s_chars = node.chars.size
                    if node.row_slot:
                        rc = append_one(node)
                        if rc:
                            break
                if rc:
                    break
                cur.pos = start
                cur.end = end
                skip_ws(&cur)
                if cur.pos == end:
                    continue  # blank: a null row
                if not valid_utf8(data + start, end - start) or data[cur.pos] != 123:
                    rc = R_DECLINE
                else:
                    rc = parse_struct(&cur, self.root, 1)
                    if rc == R_OK:
                        skip_ws(&cur)
                        if cur.pos != end:
                            rc = R_DECLINE  # something after the object
                if rc == R_DECLINE:
                    for k in range(self.n_nodes):
                        node = self.nodes[k]
                        node.count = node.s_count
                        node.valid.size = node.s_valid
                        node.data.size = node.s_data
                        node.offsets.size = node.s_offsets
                        node.chars.size = node.s_chars
                    rc = append_null(self.root)
                    if rc:
                        break
                    rc = put_int64(&self.declined, row)
                    if rc:
                        break
                    if self.declined.size // 8 > max_declined:
                        rc = R_TOOMANY
                        break
                elif rc:
                    break
        if rc == R_NOMEM:
            raise MemoryError()
        if rc != R_OK:
            return None
        array = self._array(self.root)
        ndeclined = self.declined.size // 8
        declined = [(<int64_t*>self.declined.data)[k] for k in range(ndeclined)]
        if ndeclined == 0:
            return array, declined, None
        # ``take`` indices over ``array`` followed by the declined rows' own decoding: row i
        # from ``array`` unless it is the j-th declined row, then from n + j
        order = PyBytes_FromStringAndSize(NULL, n * 8)
        positions = <int64_t*>PyBytes_AS_STRING(order)
        for row in range(n):
            positions[row] = row
        for k in range(ndeclined):
            positions[(<int64_t*>self.declined.data)[k]] = n + k
        return array, declined, pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(order)])


cdef void mark_row_slots(JNode* n) noexcept nogil:
    """``row_slot`` for ``n`` and, through struct fields only, the nodes below it."""
    cdef Py_ssize_t i
    n.row_slot = True
    if n.kind == K_STRUCT:
        for i in range(n.nfields):
            mark_row_slots(n.fields[i])


def plan(t, corrupt, bint timestamps, bint dates):
    """The compiled reader of ``t`` (``decode._Type``, a struct), or None when it has a type
    not read here (none today: every type ``decode`` compiles is).

    Args:
        t: the struct read (fields ``kind``, ``arrow``, ``fields``, ``element``).
        corrupt: the corrupt-record field's name (always null here), or None.
        timestamps: whether timestamps are read here (no ``timestampFormat``); else every
            non-null timestamp value is declined.
        dates: the same for dates (no ``dateFormat``).
    """
    cdef Plan p = Plan()
    try:
        p.root = p._build(t, corrupt)
    except _Unsupported:
        return None
    if p.root.kind != K_STRUCT:
        return None
    mark_row_slots(p.root)
    p.ts_ok = timestamps
    p.date_ok = dates
    return p
