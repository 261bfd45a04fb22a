# cython: language_level=3
"""Inline C helpers shared by the Cython twins (``cimport``-ed, compiled into each of them).

- :func:`valid_utf8`: strict UTF-8 (RFC 3629), what Python's strict decoder accepts (ASCII
  first checked 8 bytes at a time);
- :func:`address`, :func:`bit`: an Arrow buffer's address and one bit of a validity bitmap
  (Arrow columnar format: LSB first);
- :func:`grow`: a malloc'd byte buffer grown by doubling (the allocator of the readers'
  buffers and of :c:type:`ByteBuf`); :func:`hand_over`: such a buffer given to Arrow
  without a copy;
- :func:`bitmap_bytes`: Arrow's validity bitmap of one flag byte per row;
- :func:`bitmap_slice`: an Arrow validity bitmap read from a bit offset, re-based to bit 0;
- :func:`value_range`: one element's range in an Arrow offsets buffer (``int32`` or ``int64``);
- :c:type:`ByteBuf` and its writers (the encoders' output): :func:`buf_reserve`,
  :func:`buf_put`, :func:`buf_bytes`, :func:`buf_byte`, :func:`buf_varint`; with
  :func:`put_varint` (a varint at a given address) and :func:`zigzag64`. Base-128 varints and
  zig-zag as both wire formats define them (Protobuf "Encoding": varints, ZigZag; Avro 1.12
  "Binary Encoding": ``int``/``long``).

Users: ``formats/avro/_accel.pyx``, ``formats/avro/_encode_accel.pyx``,
``formats/protobuf/_accel.pyx``, ``formats/protobuf/_encode_accel.pyx``. A ``.pxd`` of inline
functions only: nothing of it is a module at run time (``setup.py`` builds no extension for
it; the sdist carries it, ``MANIFEST.in``).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, realloc
from cpython.pycapsule cimport PyCapsule_Destructor, PyCapsule_GetPointer, PyCapsule_New
from libc.string cimport memcpy, memset


cdef inline bint valid_utf8(const uint8_t* s, Py_ssize_t size) noexcept nogil:
    """Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
    A leading run of ASCII is checked 8 bytes at a time."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
    cdef uint64_t word
    while i + 8 <= size:
        memcpy(&word, s + i, 8)
        if word & 0x8080808080808080ULL:
            break
        i += 8
    while i < size:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2 or c > 0xF4:
            return False
        if c < 0xE0:
            if i + 1 >= size or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
            continue
        if i + 1 >= size:
            return False
        c1 = s[i + 1]
        if c < 0xF0:
            if (c1 & 0xC0) != 0x80:
                return False
            if c == 0xE0 and c1 < 0xA0:
                return False
            if c == 0xED and c1 > 0x9F:
                return False
            if i + 2 >= size or (s[i + 2] & 0xC0) != 0x80:
                return False
            i += 3
            continue
        if (c1 & 0xC0) != 0x80:
            return False
        if c == 0xF0 and c1 < 0x90:
            return False
        if c == 0xF4 and c1 > 0x8F:
            return False
        if i + 3 >= size or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
            return False
        i += 4
    return True


cdef inline const uint8_t* address(object buffer):
    """A ``pyarrow.Buffer``'s address (None: NULL)."""
    if buffer is None:
        return NULL
    return <const uint8_t*><size_t>buffer.address


cdef inline bint bit(const uint8_t* bits, Py_ssize_t i) noexcept nogil:
    """Bit ``i`` of an Arrow bitmap (least significant bit first)."""
    return (bits[i >> 3] >> (i & 7)) & 1


cdef inline int grow(uint8_t** data, Py_ssize_t* cap, Py_ssize_t need, Py_ssize_t first) except -1:
    """``data[0]`` reallocated to at least ``need`` bytes: ``cap[0]`` doubled (from ``first``
    when empty) until it holds them. Raises MemoryError (the buffer left as it was)."""
    cdef Py_ssize_t size = cap[0] * 2 if cap[0] else first
    cdef uint8_t* grown
    while size < need:
        size *= 2
    grown = <uint8_t*>realloc(data[0], size)
    if grown == NULL:
        raise MemoryError()
    data[0] = grown
    cap[0] = size
    return 0


cdef inline void _free_owned(object capsule) noexcept:
    free(PyCapsule_GetPointer(capsule, NULL))


cdef inline object hand_over(uint8_t** data, Py_ssize_t size, Py_ssize_t* cap):
    """The malloc'd ``data[0]`` (``size`` > 0 bytes in use) shrunk to ``size`` bytes, in a
    capsule that frees it when released: the ``base`` of a ``pyarrow.foreign_buffer`` at the
    capsule's pointer (``PyCapsule_GetPointer(owner, NULL)``), so that Arrow holds the memory
    and nothing is copied. ``data[0]`` is then NULL and ``cap[0]`` 0 (the next bytes get new
    memory). Raises MemoryError (the buffer kept)."""
    cdef uint8_t* kept = data[0]
    cdef uint8_t* shrunk = <uint8_t*>realloc(kept, size)
    if shrunk != NULL:
        kept = shrunk
    data[0] = kept
    cap[0] = size
    owner = PyCapsule_New(kept, NULL, <PyCapsule_Destructor>_free_owned)
    data[0] = NULL
    cap[0] = 0
    return owner


cdef inline bytes bitmap_bytes(const uint8_t* flags, Py_ssize_t n):
    """Arrow's validity bitmap (LSB first) of ``n`` flag bytes (non-zero: valid)."""
    cdef Py_ssize_t size = (n + 7) >> 3
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
    cdef uint8_t* bits = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    memset(bits, 0, size)
    for i in range(n):
        if flags[i]:
            bits[i >> 3] |= <uint8_t>(1 << (i & 7))
    return out


cdef inline bytes bitmap_slice(const uint8_t* bits, Py_ssize_t offset, Py_ssize_t n):
    """Arrow's validity bitmap (LSB first) of the ``n`` bits of ``bits`` from bit ``offset`` (a
    sliced array's), re-based to bit 0: ``(n + 7) // 8`` bytes, the bits past ``n`` zero."""
    cdef Py_ssize_t size = (n + 7) >> 3
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
    cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    memset(dst, 0, size)
    for i in range(n):
        if bit(bits, offset + i):
            dst[i >> 3] |= <uint8_t>(1 << (i & 7))
    return out


cdef inline int64_t value_range(
    const uint8_t* offsets, int width, Py_ssize_t j, int64_t* end
) noexcept nogil:
    """Element ``j``'s start in an Arrow offsets buffer of ``width``-byte entries (4: ``int32``
    of string/binary/list/map, 8: ``int64`` of their ``large_`` kinds); its end in ``end[0]``."""
    if width == 4:
        end[0] = (<const int32_t*>offsets)[j + 1]
        return (<const int32_t*>offsets)[j]
    end[0] = (<const int64_t*>offsets)[j + 1]
    return (<const int64_t*>offsets)[j]


ctypedef struct ByteBuf:
    # A malloc'd byte buffer grown by doubling (:func:`grow`, first 4096 bytes): ``size`` bytes
    # of ``cap`` in use. Zeroed to start; its owner frees ``data``.
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef inline uint64_t zigzag64(int64_t value) noexcept nogil:
    """Zig-zag of a signed 64-bit value (0, -1, 1, -2 -> 0, 1, 2, 3): Protobuf's ``sint64``,
    Avro's ``long`` (and its ``int``, whose values give the same)."""
    return (<uint64_t>value << 1) ^ <uint64_t>(value >> 63)


cdef inline uint8_t* put_varint(uint8_t* p, uint64_t raw) noexcept nogil:
    """The base-128 varint of ``raw`` (low 7 bits first, the high bit set on all but the last
    byte: 1 to 10 bytes) written at ``p``; the address after it. The caller made room."""
    while raw >= 0x80:
        p[0] = <uint8_t>((raw & 0x7F) | 0x80)
        p += 1
        raw >>= 7
    p[0] = <uint8_t>raw
    return p + 1


cdef inline int buf_reserve(ByteBuf* b, Py_ssize_t extra) except -1:
    """Room for ``extra`` more bytes after ``size``. Raises MemoryError (the buffer kept)."""
    if b.size + extra > b.cap:
        grow(&b.data, &b.cap, b.size + extra, 4096)
    return 0


cdef inline int buf_put(ByteBuf* b, const void* src, Py_ssize_t size) except -1:
    """``size`` bytes from ``src`` appended."""
    cdef Py_ssize_t k
    cdef uint8_t* p
    if b.size + size > b.cap:
        grow(&b.data, &b.cap, b.size + size, 4096)
    p = b.data + b.size
    if size <= 8:  # tags, fixed-width values, short strings: no call
        for k in range(size):
            p[k] = (<const uint8_t*>src)[k]
    else:
        memcpy(p, src, size)
    b.size += size
    return 0


cdef inline int buf_bytes(ByteBuf* b, bytes data) except -1:
    """The bytes of ``data`` (not None) appended."""
    return buf_put(b, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef inline int buf_byte(ByteBuf* b, uint8_t value) except -1:
    """One byte appended."""
    if b.size + 1 > b.cap:
        grow(&b.data, &b.cap, b.size + 1, 4096)
    b.data[b.size] = value
    b.size += 1
    return 0


cdef inline int buf_varint(ByteBuf* b, uint64_t raw) except -1:
    """The base-128 varint of ``raw`` appended (:func:`put_varint`; a negative Protobuf
    ``int32``/``int64`` arrives as its 64-bit two's complement: 10 bytes; a zig-zag value from
    :func:`zigzag64`)."""
    if b.size + 10 > b.cap:
        grow(&b.data, &b.cap, b.size + 10, 4096)
    b.size = put_varint(b.data + b.size, raw) - b.data
    return 0
