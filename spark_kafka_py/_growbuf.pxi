# The growable output buffer of the compiled readers (``formats/avro/_accel.pyx``,
# ``formats/protobuf/_accel.pyx``), compiled into each of them by ``include``: its methods stay
# inline in their hot loops, which a class cimported from another extension module would not
# (calls through a vtable). Built on ``_cutil.pxd``'s allocator (:func:`grow`) and hand-over to
# Arrow (:func:`hand_over`). The sdist carries it (``MANIFEST.in``).

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from spark_kafka_py._cutil cimport bitmap_bytes, grow, hand_over

import pyarrow as pa


cdef class Buf:
    """A malloc'd byte buffer that grows by doubling; ``size`` bytes in use."""

    cdef uint8_t* data
    cdef Py_ssize_t size
    cdef Py_ssize_t cap
    cdef Py_ssize_t first  # the first allocation's size (the last one handed over)

    def __cinit__(self):
        self.first = 256

    def __dealloc__(self):
        free(self.data)

    cdef inline int reserve(self, Py_ssize_t extra) except -1:
        if self.size + extra > self.cap:
            return grow(&self.data, &self.cap, self.size + extra, self.first)
        return 0

    cdef inline int put(self, const void* src, Py_ssize_t size) except -1:
        self.reserve(size)
        memcpy(self.data + self.size, src, size)
        self.size += size
        return 0

    cdef inline int put_byte(self, uint8_t value) except -1:
        self.reserve(1)
        self.data[self.size] = value
        self.size += 1
        return 0

    cdef inline int put_int32(self, int32_t value) except -1:
        self.reserve(4)
        (<int32_t*>(self.data + self.size))[0] = value
        self.size += 4
        return 0

    cdef inline int put_int64(self, int64_t value) except -1:
        self.reserve(8)
        (<int64_t*>(self.data + self.size))[0] = value
        self.size += 8
        return 0

    cdef inline int zeros(self, Py_ssize_t size) except -1:
        self.reserve(size)
        memset(self.data + self.size, 0, size)
        self.size += size
        return 0

    cdef object take(self):
        """The bytes in use as a ``pyarrow.Buffer``, handed over without a copy
        (:func:`hand_over`); the buffer is then empty, its next memory first as large as
        this."""
        cdef Py_ssize_t size = self.size
        if size == 0:
            return pa.py_buffer(b"")
        owner = hand_over(&self.data, size, &self.cap)
        self.size = 0
        self.first = size
        return pa.foreign_buffer(<size_t>PyCapsule_GetPointer(owner, NULL), size, base=owner)


cdef object _bitmap(Buf valid, Py_ssize_t n):
    """Arrow's validity bitmap (LSB first) of ``n`` validity bytes; empties ``valid``."""
    out = bitmap_bytes(valid.data, n)
    valid.size = 0
    return pa.py_buffer(out)
