# cython: language_level=3
"""Inline C helpers shared by the Cython twins (``cimport``-ed, compiled into each of them).

- :func:`valid_utf8`: strict UTF-8 (RFC 3629), what Python's strict decoder accepts;
- :func:`address`, :func:`bit`: an Arrow buffer's address and one bit of a validity bitmap
  (Arrow columnar format: LSB first);
- :func:`grow`: a malloc'd byte buffer grown by doubling (the ``Buf`` classes' allocator);
- :func:`bitmap_bytes`: Arrow's validity bitmap of one flag byte per row.

Users: ``formats/avro/_accel.pyx``, ``formats/avro/_encode_accel.pyx``,
``formats/protobuf/_accel.pyx``, ``formats/protobuf/_encode_accel.pyx``. A ``.pxd`` of inline
functions only: nothing of it is a module at run time (``setup.py`` builds no extension for
it; the sdist carries it, ``MANIFEST.in``).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t
from libc.stdlib cimport realloc
from libc.string cimport memset


cdef inline bint valid_utf8(const uint8_t* s, Py_ssize_t size) noexcept nogil:
    """Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
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
