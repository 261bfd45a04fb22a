# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Accelerated :class:`~spark_kafka_py.records._protocols.RecordsDecoder` (Cython), and the
accelerated records-section encoder of the producer (at the end of this file:
:func:`encode_records_section_accel`, twin of
:func:`spark_kafka_py.records.encoder.encode_records_section`).

Decoder: same contract and same output as the pure-Python reference
:func:`spark_kafka_py.records._pure.decode_records_pure` (tests compare both on the same
inputs, including fuzzed ones); layouts in :mod:`spark_kafka_py.records.format`.

What is different is where the bytes go. The per-record loop runs in C without the GIL and
creates no Python object per record: keys and values are copied once, straight from the
Fetch response (or from the decompressed payload) into the Arrow data buffers of the
``key``/``value`` columns, and offsets, timestamps (already in microseconds) and timestamp
types are written into Arrow's fixed-width buffers. :func:`decode_records_accel` wraps these
malloc'd buffers into ``pyarrow.Buffer`` s without copying (buffer protocol). When pyarrow lets
go of them, the blocks go to a bounded cache (32 blocks, 32 MiB per process) from which the
next call's columns are taken, sized by what the last call needed: a stream of responses then
decodes into memory already mapped, without page faults (see "a cache of freed blocks" below).

Per batch, the few calls that are not in the loop stay Python: CRC-32C through the ``crc32c``
package (C, SSE4.2/ARMv8 when available), decompression through
:func:`spark_kafka_py.records.compression.decompress` (lz4/zstandard/cramjam/zlib, all C),
read_committed bookkeeping through :class:`~spark_kafka_py.records.transactions.
AbortedTransactions` and control-record parsing through the reference module.

Legacy message sets (magic 0/1, Kafka < 0.11 data; Kafka 4 brokers no longer write them) are
rare: an input containing one is decoded whole by the pure reference.

Bounds: every read is checked against the batch (or record) it belongs to; buffers grow by
at most the size of the payload being decoded; decompressed and decoded bytes are bounded and
counted as the reference does (:mod:`spark_kafka_py.records.bounds`); a column larger than
Arrow's 2 GiB int32 offsets raises :class:`~spark_kafka_py.errors.KafkaProtocolError`.
Malformed bytes raise :class:`~spark_kafka_py.errors.CorruptRecordError`/
``KafkaProtocolError`` exactly where the reference raises them, with the same message and the
same ``topic``, ``partition`` and ``offset`` (the record loop returns an error code;
:func:`_record_error` words it as ``_pure`` does).

Layout constants are C enum members repeated from :mod:`spark_kafka_py.records.format`
(``cdef enum Layout``); ``tests/records/test_accel_layout.py`` checks them against it.
Type stub: ``_accel.pyi``.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_FillInfo, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport INT32_MAX, INT64_MAX, INT64_MIN, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

import crc32c as _crc32c
import pyarrow as pa

from spark_kafka_py.errors import CorruptRecordError, InvalidRecordError, KafkaProtocolError
from spark_kafka_py.records import _pure
from spark_kafka_py.records._protocols import DEFAULT_MAX_BATCH_BYTES, DecodedRecords
from spark_kafka_py.records.arrow import (
    HEADER_TYPE,
    HEADERS_TYPE,
    fixed_row_bytes,
    spark_kafka_schema,
)
from spark_kafka_py.records.transactions import AbortedTransactions

__all__ = ["decode_records_accel", "encode_records_section_accel"]

# Layout constants: compile-time copies of the same-named constants of
# spark_kafka_py/records/format.py, where they are explained and cited. The loops below need
# C constants, so they are repeated here; tests/records/test_accel_layout.py checks every
# member of this enum against format.py.
cdef enum Layout:
    LOG_OVERHEAD = 12
    MAGIC_OFFSET = 16
    HEADER_SIZE_UP_TO_MAGIC = 17
    MAGIC_V0 = 0
    MAGIC_V1 = 1
    MAGIC_V2 = 2
    CRC_OFFSET = 17
    ATTRIBUTES_OFFSET = 21
    LAST_OFFSET_DELTA_OFFSET = 23
    BASE_TIMESTAMP_OFFSET = 27
    MAX_TIMESTAMP_OFFSET = 35
    PRODUCER_ID_OFFSET = 43
    RECORDS_COUNT_OFFSET = 57
    RECORD_BATCH_OVERHEAD = 61
    MIN_BATCH_LENGTH_V2 = 49
    LEGACY_RECORD_OVERHEAD_V0 = 14
    MIN_RECORD_BODY = 6
    COMPRESSION_CODEC_MASK = 0x07
    TIMESTAMP_TYPE_MASK = 0x08
    TRANSACTIONAL_FLAG_MASK = 0x10
    CONTROL_FLAG_MASK = 0x20
    NO_PRODUCER_ID = -1
    TIMESTAMP_TYPE_CREATE_TIME = 0
    TIMESTAMP_TYPE_LOG_APPEND_TIME = 1
    CONTROL_TYPE_ABORT = 0

# Error codes of the nogil record loop.
cdef enum:
    OK = 0
    E_PAST_END = 1
    E_VARINT_LONG = 2
    E_RECORD_LENGTH = 3
    E_KEY_LENGTH = 4
    E_VALUE_LENGTH = 5
    E_HEADER_COUNT = 6
    E_HEADER_KEY_LENGTH = 7
    E_HEADER_VALUE_LENGTH = 8
    E_SPAN = 9
    E_TRAILING = 10
    E_NOMEM = 11
    E_TOO_BIG = 12
    E_COUNT = 13
    E_KEY_PAST_RECORD = 14
    E_VALUE_PAST_RECORD = 15
    E_HEADER_KEY_PAST_RECORD = 16
    E_HEADER_VALUE_PAST_RECORD = 17


# ---- growable C buffers ----------------------------------------------------------------------

cdef struct Buf:
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int buf_reserve(Buf* b, Py_ssize_t extra) noexcept nogil:
    """Make room for ``extra`` more bytes (not zeroed: bitmaps zero what they grow into, see
    :func:`grow_bitmap`). 0 on success, -1 when out of memory."""
    cdef Py_ssize_t need = b.size + extra
    cdef Py_ssize_t cap
    cdef uint8_t* p
    if need <= b.cap:
        return 0
    cap = b.cap * 2
    if cap < need:
        cap = need
    cap = block_size(cap)
    p = <uint8_t*> realloc(b.data, <size_t> cap)
    if p == NULL:
        return -1
    b.data = p
    b.cap = cap
    return 0


cdef inline Py_ssize_t block_size(Py_ssize_t want) noexcept nogil:
    """``want`` rounded up to the sizes blocks are allocated in (at least 256 bytes; 256-byte,
    from 4 KiB on 4 KiB, from 64 KiB on 64 KiB steps), so that a freed block serves the next
    response's slightly larger column."""
    if want >= 65536:
        return (want + 65535) & ~(<Py_ssize_t> 65535)
    if want <= 256:
        return 256
    if want < 4096:
        return (want + 255) & ~(<Py_ssize_t> 255)
    return (want + 4095) & ~(<Py_ssize_t> 4095)


# ---- a cache of freed blocks ----------------------------------------------------------------
#
# The Arrow buffers of a decoded batch live until Spark has serialized the batch, then they are
# freed, and the next response's buffers are allocated again. Fresh memory of that size comes
# from the kernel (glibc maps blocks from 128 KiB up, and gives the top of its heap back), so
# every page of every buffer faulted once per response: measured, 60,000 page faults per 2M
# records and 45% of the decoder's time. Freed blocks are therefore kept here for the next
# response, within a bound: at most CACHE_SLOTS blocks of CACHE_MIN_BLOCK to CACHE_MAX_BLOCK
# bytes each, CACHE_MAX_BYTES in all, per process. Every access holds the GIL (the functions
# below are not nogil, so the compiler refuses them in the record loop).

cdef enum:
    CACHE_SLOTS = 32
    CACHE_MIN_BLOCK = 4096
    CACHE_MAX_BLOCK = 16 * 1024 * 1024
    CACHE_MAX_BYTES = 32 * 1024 * 1024

cdef uint8_t* _cache_data[32]
cdef Py_ssize_t _cache_cap[32]
cdef int _cache_count = 0
cdef Py_ssize_t _cache_bytes = 0


cdef void block_release(uint8_t* data, Py_ssize_t cap) noexcept:
    """Keep the malloc'd block ``data`` of ``cap`` bytes for reuse, or free it (GIL held).

    A full cache gives up its smallest block for a larger one."""
    global _cache_count, _cache_bytes
    cdef int i, smallest
    if data == NULL:
        return
    if cap < CACHE_MIN_BLOCK or cap > CACHE_MAX_BLOCK:
        free(data)
        return
    while _cache_count == CACHE_SLOTS or _cache_bytes + cap > CACHE_MAX_BYTES:
        if _cache_count == 0:
            free(data)
            return
        smallest = 0
        for i in range(1, _cache_count):
            if _cache_cap[i] < _cache_cap[smallest]:
                smallest = i
        if _cache_cap[smallest] >= cap:
            free(data)
            return
        free(_cache_data[smallest])
        _cache_bytes -= _cache_cap[smallest]
        _cache_count -= 1
        _cache_data[smallest] = _cache_data[_cache_count]
        _cache_cap[smallest] = _cache_cap[_cache_count]
    _cache_data[_cache_count] = data
    _cache_cap[_cache_count] = cap
    _cache_count += 1
    _cache_bytes += cap


cdef int buf_prepare(Buf* b, Py_ssize_t want) noexcept:
    """Give the empty ``b`` room for ``want`` bytes, from the smallest cached block that holds
    them when there is one (GIL held). 0 on success, -1 when out of memory."""
    global _cache_count, _cache_bytes
    cdef int i, best = -1
    want = block_size(want)
    for i in range(_cache_count):
        if _cache_cap[i] >= want and (best < 0 or _cache_cap[i] < _cache_cap[best]):
            best = i
    if best < 0:
        return buf_reserve(b, want)
    b.data = _cache_data[best]
    b.cap = _cache_cap[best]
    b.size = 0
    _cache_bytes -= _cache_cap[best]
    _cache_count -= 1
    _cache_data[best] = _cache_data[_cache_count]
    _cache_cap[best] = _cache_cap[_cache_count]
    return 0


cdef void buf_release(Buf* b) noexcept:
    """Give ``b``'s block back (to the cache or to malloc) and leave ``b`` empty (GIL held)."""
    block_release(b.data, b.cap)
    b.data = NULL
    b.size = 0
    b.cap = 0


def _block_cache_state():
    """``(blocks, bytes)`` in the cache of freed blocks (for tests)."""
    return _cache_count, _cache_bytes


cdef class _OwnedBuffer:
    """Owns one malloc'd block and exposes it read-only through the buffer protocol, so that
    ``pa.py_buffer`` wraps it without a copy (pyarrow keeps this object alive). The block goes
    to the cache of freed blocks when pyarrow lets go of it."""

    cdef uint8_t* data
    cdef Py_ssize_t size
    cdef Py_ssize_t cap

    def __cinit__(self):
        self.data = NULL
        self.size = 0
        self.cap = 0

    def __dealloc__(self):
        block_release(self.data, self.cap)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, <void*> self.data, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass


cdef object take(Buf* b):
    """Move ``b``'s block into a ``pyarrow.Buffer`` (no copy); ``b`` is left empty."""
    cdef _OwnedBuffer owner = _OwnedBuffer.__new__(_OwnedBuffer)
    cdef uint8_t* p
    if b.data == NULL:
        b.data = <uint8_t*> malloc(64)
        if b.data == NULL:
            raise MemoryError()
        memset(b.data, 0, 64)
        b.cap = 64
    elif b.cap - b.size > 1048576 and b.cap > 4 * b.size:
        # most of a large block unused: give it back rather than keep it alive with the batch
        p = <uint8_t*> realloc(b.data, <size_t> block_size(b.size))
        if p != NULL:
            b.data = p
            b.cap = block_size(b.size)
    owner.data = b.data
    owner.size = b.size
    owner.cap = b.cap
    b.data = NULL
    b.size = 0
    b.cap = 0
    return pa.py_buffer(owner)


# ---- columns --------------------------------------------------------------------------------

cdef struct Cols:
    Py_ssize_t rows
    Buf key_off       # int32 per row + 1
    Buf key_data
    Buf key_valid     # validity bitmap
    Py_ssize_t key_nulls
    Buf val_off
    Buf val_data
    Buf val_valid
    Py_ssize_t val_nulls
    Buf offsets       # int64
    Buf ts            # int64 microseconds
    Buf ts_type       # int32
    bint ts_overflow
    bint include_headers
    Buf h_list_off    # int32 per row + 1 (index into header entries)
    Buf h_list_valid  # validity bitmap: 0 for records without headers
    Py_ssize_t h_list_nulls
    Py_ssize_t h_count
    Buf hk_off        # int32 per header + 1
    Buf hk_data
    Buf hv_off
    Buf hv_data
    Buf hv_valid
    Py_ssize_t hv_nulls


cdef inline void put_i32(Buf* b, Py_ssize_t i, int32_t v) noexcept nogil:
    (<int32_t*> b.data)[i] = v


cdef inline void put_i64(Buf* b, Py_ssize_t i, int64_t v) noexcept nogil:
    (<int64_t*> b.data)[i] = v


cdef inline void set_bit(Buf* b, Py_ssize_t i) noexcept nogil:
    b.data[i >> 3] |= <uint8_t> (1 << (i & 7))


#: Per buffer of :struct:`Cols` (in the order of :func:`cols_bufs`), the size it reached in the
#: last decode call: the next call starts with that much room (from the cache of freed blocks),
#: so that a stream of similar responses neither grows nor faults its buffers.
cdef enum:
    NUM_BUFS = 16
    NUM_ROW_BUFS = 9

cdef Py_ssize_t _size_hint[16]


cdef void cols_bufs(Cols* c, Buf** bufs) noexcept nogil:
    """The 16 buffers of ``c``: the 9 of every batch first, then the 7 of the headers."""
    bufs[0] = &c.key_off; bufs[1] = &c.key_data; bufs[2] = &c.key_valid
    bufs[3] = &c.val_off; bufs[4] = &c.val_data; bufs[5] = &c.val_valid
    bufs[6] = &c.offsets; bufs[7] = &c.ts; bufs[8] = &c.ts_type
    bufs[9] = &c.h_list_off; bufs[10] = &c.h_list_valid; bufs[11] = &c.hk_off
    bufs[12] = &c.hk_data; bufs[13] = &c.hv_off; bufs[14] = &c.hv_data
    bufs[15] = &c.hv_valid


cdef int cols_init(Cols* c, bint include_headers) noexcept:
    """Empty columns with room for what the last call decoded (GIL held: uses the cache)."""
    cdef Buf* bufs[16]
    cdef int i
    cdef Py_ssize_t want
    memset(c, 0, sizeof(Cols))
    c.include_headers = include_headers
    cols_bufs(c, bufs)
    for i in range(NUM_BUFS if include_headers else NUM_ROW_BUFS):
        want = _size_hint[i] + _size_hint[i] // 8
        if buf_prepare(bufs[i], want if want > 64 else 64):
            return -1
    # the offsets columns start with offset 0
    put_i32(&c.key_off, 0, 0)
    put_i32(&c.val_off, 0, 0)
    c.key_off.size = 4
    c.val_off.size = 4
    if include_headers:
        put_i32(&c.h_list_off, 0, 0)
        put_i32(&c.hk_off, 0, 0)
        put_i32(&c.hv_off, 0, 0)
        c.h_list_off.size = 4
        c.hk_off.size = 4
        c.hv_off.size = 4
    return 0


cdef void cols_remember_sizes(Cols* c) noexcept:
    """Note the sizes the buffers reached, for the next :func:`cols_init`."""
    cdef Buf* bufs[16]
    cdef int i
    cols_bufs(c, bufs)
    for i in range(NUM_BUFS if c.include_headers else NUM_ROW_BUFS):
        # a short response (the end of a range) lowers the hint only slowly
        if bufs[i].size >= _size_hint[i] - _size_hint[i] // 4:
            _size_hint[i] = bufs[i].size
        else:
            _size_hint[i] -= _size_hint[i] // 4


cdef void cols_free(Cols* c) noexcept:
    """Give back the buffers not taken by Arrow (GIL held: uses the cache)."""
    cdef Buf* bufs[16]
    cdef int i
    cols_bufs(c, bufs)
    for i in range(NUM_BUFS):
        buf_release(bufs[i])


cdef int grow_bitmap(Buf* b, Py_ssize_t bits) noexcept nogil:
    """Make the bitmap ``b`` at least ``bits`` bits long, the new bytes zeroed."""
    cdef Py_ssize_t need = (bits + 7) // 8 + 1
    if need > b.size:
        if buf_reserve(b, need - b.size):
            return -1
        memset(b.data + b.size, 0, <size_t> (need - b.size))
        b.size = need
    return 0


cdef int cols_reserve_rows(Cols* c, Py_ssize_t count, Py_ssize_t data_bytes) noexcept nogil:
    """Room for ``count`` more rows whose keys and values total at most ``data_bytes``."""
    cdef Py_ssize_t rows = c.rows + count
    if (
        buf_reserve(&c.key_off, 4 * count)
        or buf_reserve(&c.val_off, 4 * count)
        or buf_reserve(&c.key_data, data_bytes)
        or buf_reserve(&c.val_data, data_bytes)
        or buf_reserve(&c.offsets, 8 * count)
        or buf_reserve(&c.ts, 8 * count)
        or buf_reserve(&c.ts_type, 4 * count)
        or grow_bitmap(&c.key_valid, rows)
        or grow_bitmap(&c.val_valid, rows)
    ):
        return -1
    if c.include_headers:
        if buf_reserve(&c.h_list_off, 4 * count) or grow_bitmap(&c.h_list_valid, rows):
            return -1
    return 0


cdef void cols_sync(Cols* c, int32_t key_end, int32_t val_end) noexcept nogil:
    """Set the fixed-width buffers' sizes from the row count after a batch."""
    cdef Py_ssize_t n = c.rows
    c.key_off.size = 4 * (n + 1)
    c.val_off.size = 4 * (n + 1)
    c.key_data.size = key_end
    c.val_data.size = val_end
    c.offsets.size = 8 * n
    c.ts.size = 8 * n
    c.ts_type.size = 4 * n
    if c.include_headers:
        c.h_list_off.size = 4 * (n + 1)


# ---- big-endian loads and varints -----------------------------------------------------------

cdef inline int64_t be64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(8):
        v = (v << 8) | p[i]
    return <int64_t> v


cdef inline int32_t be32(const uint8_t* p) noexcept nogil:
    return <int32_t> ((<uint32_t> p[0] << 24) | (<uint32_t> p[1] << 16) | (<uint32_t> p[2] << 8) | p[3])


cdef inline uint32_t be32u(const uint8_t* p) noexcept nogil:
    return (<uint32_t> p[0] << 24) | (<uint32_t> p[1] << 16) | (<uint32_t> p[2] << 8) | p[3]


cdef inline int16_t be16(const uint8_t* p) noexcept nogil:
    return <int16_t> ((p[0] << 8) | p[1])


cdef inline int read_varint(const uint8_t* buf, Py_ssize_t n, Py_ssize_t* pos, int64_t* out) noexcept nogil:
    """Zigzag varint/varlong at ``pos[0]`` (at most 10 bytes, truncated to 64 bits as Java's
    ``ByteUtils.readVarlong``). 0, or E_PAST_END / E_VARINT_LONG."""
    cdef Py_ssize_t p = pos[0]
    cdef uint64_t u, b
    cdef int shift
    if p >= n:
        return E_PAST_END
    b = buf[p]
    p += 1
    if b < 0x80:
        pos[0] = p
        out[0] = <int64_t> ((b >> 1) ^ (0 - (b & 1)))
        return OK
    u = b & 0x7F
    shift = 7
    while True:
        if p >= n:
            return E_PAST_END
        b = buf[p]
        p += 1
        u |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift >= 70:
            return E_VARINT_LONG
    pos[0] = p
    out[0] = <int64_t> ((u >> 1) ^ (0 - (u & 1)))
    return OK


cdef inline bint add_overflows(int64_t a, int64_t b) noexcept nogil:
    if b > 0:
        return a > INT64_MAX - b
    return a < INT64_MIN - b


cdef inline int64_t ms_to_us(int64_t ms, bint* overflow) noexcept nogil:
    if ms > INT64_MAX // 1000 or ms < INT64_MIN // 1000:
        overflow[0] = True
        return 0
    return ms * 1000


# ---- the record loop ------------------------------------------------------------------------

cdef struct BatchInfo:
    int64_t base_offset
    int64_t base_ts
    int64_t max_ts
    bint log_append_time
    int32_t ts_type
    int64_t start_offset
    int64_t end_offset
    Py_ssize_t count
    # out: detail for error messages
    int64_t bad_value
    int64_t span
    Py_ssize_t err_pos


cdef int append_headers(
    Cols* c, const uint8_t* buf, Py_ssize_t n, Py_ssize_t* pos_p, Py_ssize_t end,
    int64_t header_count, BatchInfo* info,
) noexcept nogil:
    """Append ``header_count`` headers of the record ending at ``end`` (<= ``n``)."""
    cdef Py_ssize_t pos = pos_p[0]
    cdef int64_t klen, vlen
    cdef int rc
    cdef Py_ssize_t h
    for h in range(header_count):
        rc = read_varint(buf, n, &pos, &klen)
        if rc:
            return rc
        if klen < 0:
            info.bad_value = klen
            return E_HEADER_KEY_LENGTH
        if klen > end - pos:
            info.bad_value = klen
            return E_HEADER_KEY_PAST_RECORD
        if (
            buf_reserve(&c.hk_off, 4) or buf_reserve(&c.hv_off, 4)
            or buf_reserve(&c.hk_data, <Py_ssize_t> klen)
            or grow_bitmap(&c.hv_valid, c.h_count + 1)
        ):
            return E_NOMEM
        memcpy(c.hk_data.data + c.hk_data.size, buf + pos, <size_t> klen)
        c.hk_data.size += klen
        if c.hk_data.size > INT32_MAX:
            return E_TOO_BIG
        pos += klen
        put_i32(&c.hk_off, c.h_count + 1, <int32_t> c.hk_data.size)
        c.hk_off.size += 4
        rc = read_varint(buf, n, &pos, &vlen)
        if rc:
            return rc
        if vlen >= 0:
            if vlen > end - pos:
                info.bad_value = vlen
                return E_HEADER_VALUE_PAST_RECORD
            if buf_reserve(&c.hv_data, <Py_ssize_t> vlen):
                return E_NOMEM
            memcpy(c.hv_data.data + c.hv_data.size, buf + pos, <size_t> vlen)
            c.hv_data.size += vlen
            if c.hv_data.size > INT32_MAX:
                return E_TOO_BIG
            pos += vlen
            set_bit(&c.hv_valid, c.h_count)
        elif vlen == -1:
            c.hv_nulls += 1
        else:
            info.bad_value = vlen
            return E_HEADER_VALUE_LENGTH
        put_i32(&c.hv_off, c.h_count + 1, <int32_t> c.hv_data.size)
        c.hv_off.size += 4
        c.h_count += 1
    pos_p[0] = pos
    return OK


cdef int decode_v2_records(
    Cols* c, const uint8_t* buf, Py_ssize_t n, BatchInfo* info
) noexcept nogil:
    """Append the records of one (decompressed) v2 batch that fall in the offset range.

    Mirrors ``_pure._decode_v2_records`` check for check, so that both raise on the same
    inputs. Returns OK or an error code (details in ``info``)."""
    cdef Py_ssize_t count = info.count
    cdef Py_ssize_t pos = 0, end, r, row
    cdef int64_t length, ts_delta, offset_delta, offset, size, header_count, ts_ms
    cdef int rc
    cdef bint stopped = False
    cdef bint include_headers = c.include_headers
    cdef int64_t base_offset = info.base_offset
    cdef int64_t start_offset = info.start_offset
    cdef int64_t end_offset = info.end_offset
    cdef int32_t ts_type = info.ts_type
    cdef int64_t append_us = 0
    cdef int32_t key_end, val_end

    if count > n // (MIN_RECORD_BODY + 1):
        return E_COUNT
    if cols_reserve_rows(c, count, n):
        return E_NOMEM
    if c.key_data.size + n > INT32_MAX or c.val_data.size + n > INT32_MAX:
        return E_TOO_BIG
    if info.log_append_time:
        append_us = ms_to_us(info.max_ts, &c.ts_overflow)
    row = c.rows
    key_end = (<int32_t*> c.key_off.data)[row]
    val_end = (<int32_t*> c.val_off.data)[row]
    for r in range(count):
        info.err_pos = pos
        rc = read_varint(buf, n, &pos, &length)
        if rc:
            return rc
        if length < MIN_RECORD_BODY or length > n - pos:
            info.bad_value = length
            return E_RECORD_LENGTH
        end = pos + length
        pos += 1  # attributes: int8, unused
        rc = read_varint(buf, n, &pos, &ts_delta)
        if rc:
            return rc
        rc = read_varint(buf, n, &pos, &offset_delta)
        if rc:
            return rc
        # offset = base_offset + offsetDelta, compared as the reference does with Python ints
        if add_overflows(base_offset, offset_delta):
            if offset_delta < 0:  # below every int64: before the range
                pos = end
                continue
            stopped = True  # above every int64: past the range
            break
        offset = base_offset + offset_delta
        if offset < start_offset:
            pos = end
            continue
        if offset >= end_offset:
            stopped = True
            break
        # key
        rc = read_varint(buf, n, &pos, &size)
        if rc:
            return rc
        if size >= 0:
            if size > end - pos:
                info.bad_value = size
                return E_KEY_PAST_RECORD
            memcpy(c.key_data.data + key_end, buf + pos, <size_t> size)
            key_end += <int32_t> size
            pos += size
            set_bit(&c.key_valid, row)
        elif size == -1:
            c.key_nulls += 1
        else:
            info.bad_value = size
            return E_KEY_LENGTH
        # value
        rc = read_varint(buf, n, &pos, &size)
        if rc:
            return rc
        if size >= 0:
            if size > end - pos:
                info.bad_value = size
                return E_VALUE_PAST_RECORD
            memcpy(c.val_data.data + val_end, buf + pos, <size_t> size)
            val_end += <int32_t> size
            pos += size
            set_bit(&c.val_valid, row)
        elif size == -1:
            c.val_nulls += 1
        else:
            info.bad_value = size
            return E_VALUE_LENGTH
        # headers
        rc = read_varint(buf, n, &pos, &header_count)
        if rc:
            return rc
        if header_count:
            if header_count < 0 or header_count > (end - pos) // 2:
                info.bad_value = header_count
                return E_HEADER_COUNT
            if include_headers:
                rc = append_headers(c, buf, n, &pos, end, header_count, info)
                if rc:
                    return rc
                set_bit(&c.h_list_valid, row)
            else:
                pos = end  # headers are not wanted: skip them
        elif include_headers:
            c.h_list_nulls += 1
        if pos != end:
            info.bad_value = length
            info.span = pos - end + length
            return E_SPAN
        put_i32(&c.key_off, row + 1, key_end)
        put_i32(&c.val_off, row + 1, val_end)
        put_i64(&c.offsets, row, offset)
        if info.log_append_time:
            put_i64(&c.ts, row, append_us)
        elif add_overflows(info.base_ts, ts_delta):
            c.ts_overflow = True
            put_i64(&c.ts, row, 0)
        else:
            put_i64(&c.ts, row, ms_to_us(info.base_ts + ts_delta, &c.ts_overflow))
        put_i32(&c.ts_type, row, ts_type)
        if include_headers:
            put_i32(&c.h_list_off, row + 1, <int32_t> c.h_count)
        row += 1
        c.rows = row
    cols_sync(c, key_end, val_end)
    if not stopped and pos != n:
        info.err_pos = pos
        return E_TRAILING
    return OK


# ---- the batch loop -------------------------------------------------------------------------

cdef object _record_error(int rc, BatchInfo* info, Py_ssize_t n, str topic, int partition):
    cdef int64_t v = info.bad_value
    if rc == E_NOMEM:
        return MemoryError("out of memory while decoding records")
    if rc == E_TOO_BIG:
        return KafkaProtocolError(
            f"decoded records of {topic}-{partition} exceed Arrow's 2 GiB per column; "
            "lower max.partition.fetch.bytes"
        )
    if rc == E_COUNT:
        what = f"record batch claims {info.count} records in {n} bytes"
        return CorruptRecordError(what, topic=topic, partition=partition, offset=info.base_offset)
    if rc == E_PAST_END:
        what = "record runs past the end of its batch"
    elif rc == E_VARINT_LONG:
        what = "varint longer than 10 bytes"
    elif rc == E_RECORD_LENGTH:
        what = f"record length {v}"
    elif rc == E_KEY_LENGTH:
        what = f"key length {v}"
    elif rc == E_VALUE_LENGTH:
        what = f"value length {v}"
    elif rc == E_HEADER_COUNT:
        what = f"header count {v}"
    elif rc == E_HEADER_KEY_LENGTH:
        what = f"header key length {v}"
    elif rc == E_HEADER_VALUE_LENGTH:
        what = f"header value length {v}"
    elif rc == E_KEY_PAST_RECORD:
        what = f"key length {v} runs past the end of its record"
    elif rc == E_VALUE_PAST_RECORD:
        what = f"value length {v} runs past the end of its record"
    elif rc == E_HEADER_KEY_PAST_RECORD:
        what = f"header key length {v} runs past the end of its record"
    elif rc == E_HEADER_VALUE_PAST_RECORD:
        what = f"header value length {v} runs past the end of its record"
    elif rc == E_TRAILING:
        what = f"{n - info.err_pos} bytes left after the batch's {info.count} records"
    else:  # E_SPAN
        what = f"record fields span {info.span} bytes, its length says {v}"
    return CorruptRecordError(
        f"malformed record in batch: {what}", topic=topic, partition=partition,
        offset=info.base_offset,
    )


cdef int64_t decode_v2_batch(
    Cols* c, object mv, const uint8_t* p, Py_ssize_t pos, Py_ssize_t length,
    str topic, int partition, int64_t start_offset, int64_t end_offset, object txns,
    Py_ssize_t max_batch_bytes, object budget, int64_t row_bytes, int64_t* decoded,
    bint* last_overflow, bint check_crcs,
) except? -1:
    """Check, filter and decode one complete v2 batch at ``p + pos``; return its last offset
    (saturated at INT64_MAX with ``last_overflow`` set). ``decoded`` gets the batch's
    decoded bytes as ``_pure._decode_v2_batch`` counts them: its (decompressed) records size
    plus ``row_bytes`` per record it claims when its records were decoded, else 0; the
    records are charged to ``budget`` (if any) as the reference does. The CRC-32C is
    computed and compared only if ``check_crcs``."""
    cdef const uint8_t* e = p + pos
    cdef Py_ssize_t entry_end = pos + LOG_OVERHEAD + length
    cdef int64_t base_offset = be64(e)
    cdef uint32_t stored_crc = be32u(e + CRC_OFFSET)
    cdef uint32_t actual_crc = 0
    cdef int16_t attributes
    cdef int32_t last_delta, count
    cdef int64_t producer_id, last_offset
    cdef bint is_control
    cdef BatchInfo info
    cdef const uint8_t* payload
    cdef Py_ssize_t payload_len
    cdef object payload_obj = None
    cdef Py_buffer pview
    cdef int rc
    if check_crcs:
        actual_crc = _crc32c.crc32c(mv[pos + ATTRIBUTES_OFFSET:entry_end])
        if actual_crc != stored_crc:
            raise CorruptRecordError(
                f"record batch CRC-32C mismatch (stored {stored_crc:#010x}, computed "
                f"{actual_crc:#010x})",
                topic=topic, partition=partition, offset=base_offset,
            )
    attributes = be16(e + ATTRIBUTES_OFFSET)
    last_delta = be32(e + LAST_OFFSET_DELTA_OFFSET)
    info.base_ts = be64(e + BASE_TIMESTAMP_OFFSET)
    info.max_ts = be64(e + MAX_TIMESTAMP_OFFSET)
    producer_id = be64(e + PRODUCER_ID_OFFSET)
    count = be32(e + RECORDS_COUNT_OFFSET)
    if last_delta < 0 or count < 0:
        raise CorruptRecordError(
            f"record batch has lastOffsetDelta {last_delta} and record count {count}",
            topic=topic, partition=partition, offset=base_offset,
        )
    if add_overflows(base_offset, last_delta):
        last_overflow[0] = True
        last_offset = INT64_MAX
    else:
        last_offset = base_offset + last_delta
    is_control = (attributes & CONTROL_FLAG_MASK) != 0

    if txns is not None and producer_id != NO_PRODUCER_ID:
        txns.consume_up_to(last_offset)
        if is_control:
            if count > 0 and _pure._control_type(
                mv[pos:entry_end], attributes, max_batch_bytes, budget, topic, partition,
                base_offset,
            ) == CONTROL_TYPE_ABORT:
                txns.end_aborted(producer_id)
        elif attributes & TRANSACTIONAL_FLAG_MASK and txns.is_aborted(producer_id):
            return last_offset
    if is_control or count == 0 or last_offset < start_offset:
        return last_offset

    info.base_offset = base_offset
    info.start_offset = start_offset
    info.end_offset = end_offset
    info.count = count
    info.bad_value = 0
    info.span = 0
    info.err_pos = 0
    if attributes & TIMESTAMP_TYPE_MASK:
        info.log_append_time = True
        info.ts_type = TIMESTAMP_TYPE_LOG_APPEND_TIME
    else:
        info.log_append_time = False
        info.ts_type = TIMESTAMP_TYPE_CREATE_TIME
    if (attributes & COMPRESSION_CODEC_MASK) == 0:
        payload = e + RECORD_BATCH_OVERHEAD
        payload_len = entry_end - pos - RECORD_BATCH_OVERHEAD
        if budget is not None:
            budget.charge(payload_len, topic, partition, base_offset)
        with nogil:
            rc = decode_v2_records(c, payload, payload_len, &info)
    else:
        payload_obj = _pure._payload(
            mv[pos:entry_end], attributes, max_batch_bytes, budget, topic, partition,
            base_offset,
        )
        PyObject_GetBuffer(payload_obj, &pview, PyBUF_SIMPLE)
        try:
            payload_len = pview.len
            with nogil:
                rc = decode_v2_records(c, <const uint8_t*> pview.buf, payload_len, &info)
        finally:
            PyBuffer_Release(&pview)
    if rc:
        raise _record_error(rc, &info, payload_len, topic, partition)
    decoded[0] = payload_len + count * row_bytes
    return last_offset


def decode_records_accel(
    records,
    *,
    str topic,
    int partition,
    int64_t start_offset,
    int64_t end_offset,
    bint include_headers=False,
    bint read_committed=False,
    aborted_transactions=(),
    Py_ssize_t max_batch_bytes=DEFAULT_MAX_BATCH_BYTES,
    budget=None,
    max_arrow_bytes=None,
    bint check_crcs=True,
):
    """Accelerated :class:`~spark_kafka_py.records._protocols.RecordsDecoder`.

    See :func:`spark_kafka_py.records.decoder.decode_records` for the contract (arguments,
    the returned :class:`DecodedRecords`, and the errors raised) and
    :class:`~spark_kafka_py.records.decoder.DecodedStream` for ``budget``,
    ``max_arrow_bytes`` and a transactions state; the output equals
    :func:`~spark_kafka_py.records._pure.decode_records_pure`'s for every input.
    """
    cdef Py_buffer view
    cdef const uint8_t* p
    cdef Py_ssize_t n, pos = 0, remaining
    cdef Py_ssize_t resume_at = -1
    cdef int64_t next_offset = start_offset, base_offset, last_offset
    cdef int64_t row_bytes = fixed_row_bytes(topic, include_headers)
    cdef int64_t decoded, arrow_bytes = 0
    cdef int64_t arrow_limit = -1 if max_arrow_bytes is None else max_arrow_bytes
    cdef int64_t budget_used = 0 if budget is None else budget.used
    cdef int32_t length
    cdef uint8_t magic
    cdef bint incomplete = False, last_overflow = False, legacy = False
    cdef Cols c
    mv = memoryview(records)
    if mv.ndim != 1 or mv.itemsize != 1:
        mv = mv.cast("B")
    txns = AbortedTransactions.of(aborted_transactions) if read_committed else None
    # A legacy message set starts this call over with the reference: from this state.
    txns_state = txns.snapshot() if txns is not None else None
    PyObject_GetBuffer(mv, &view, PyBUF_SIMPLE)
    if cols_init(&c, include_headers):
        PyBuffer_Release(&view)
        cols_free(&c)
        raise MemoryError("out of memory while decoding records")
    try:
        p = <const uint8_t*> view.buf
        n = view.len
        while pos < n:
            remaining = n - pos
            if remaining < LOG_OVERHEAD:
                incomplete = True
                break
            base_offset = be64(p + pos)
            length = be32(p + pos + 8)
            if length < LEGACY_RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"record batch length {length} is below the minimum of "
                    f"{LEGACY_RECORD_OVERHEAD_V0} bytes",
                    topic=topic, partition=partition, offset=base_offset,
                )
            if length > max_batch_bytes:
                raise KafkaProtocolError(
                    f"record batch at offset {base_offset} in {topic}-{partition} claims "
                    f"{length} bytes, above max_batch_bytes={max_batch_bytes}"
                )
            if remaining < HEADER_SIZE_UP_TO_MAGIC:
                incomplete = True
                break
            magic = p[pos + MAGIC_OFFSET]
            if magic == MAGIC_V2:
                if length < MIN_BATCH_LENGTH_V2:
                    raise CorruptRecordError(
                        f"record batch length {length} is below the v2 header size "
                        f"{MIN_BATCH_LENGTH_V2}",
                        topic=topic, partition=partition, offset=base_offset,
                    )
            elif magic != MAGIC_V0 and magic != MAGIC_V1:
                raise KafkaProtocolError(
                    f"unknown record batch magic {magic} at offset {base_offset} in "
                    f"{topic}-{partition} (known: 0, 1 legacy message sets; 2 record batches)"
                )
            if remaining < LOG_OVERHEAD + length:
                incomplete = True
                break
            if base_offset >= end_offset and magic == MAGIC_V2:
                next_offset = end_offset
                break
            if magic != MAGIC_V2:
                legacy = True
                break
            decoded = 0
            last_offset = decode_v2_batch(
                &c, mv, p, pos, length, topic, partition, start_offset, end_offset, txns,
                max_batch_bytes, budget, row_bytes, &decoded, &last_overflow, check_crcs,
            )
            pos += LOG_OVERHEAD + length
            if last_overflow:
                next_offset = end_offset
                break
            if last_offset + 1 > next_offset:
                next_offset = last_offset + 1
            if next_offset >= end_offset:
                next_offset = end_offset
                break
            arrow_bytes += decoded
            if arrow_limit >= 0 and decoded and arrow_bytes >= arrow_limit and pos < n:
                resume_at = pos  # the Arrow batch is full: the caller decodes on from here
                break
        if legacy:
            batch = None
        else:
            if c.ts_overflow:
                raise KafkaProtocolError(
                    "record timestamp out of range for Spark's microsecond timestamps"
                )
            batch = _finish(&c, topic, partition)
    finally:
        PyBuffer_Release(&view)
        cols_free(&c)
    if legacy:
        # A legacy message set (magic 0/1): decode the whole input with the reference, from
        # the budget and transactions state this call started with.
        if budget is not None:
            budget.used = budget_used
        if txns is not None:
            txns.restore(txns_state)
        return _pure.decode_records_pure(
            records, topic=topic, partition=partition, start_offset=start_offset,
            end_offset=end_offset, include_headers=include_headers,
            read_committed=read_committed,
            aborted_transactions=txns if txns is not None else aborted_transactions,
            max_batch_bytes=max_batch_bytes, budget=budget, max_arrow_bytes=max_arrow_bytes,
            check_crcs=check_crcs,
        )
    return DecodedRecords(batch, next_offset, incomplete, None if resume_at < 0 else resume_at)



_TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")


cdef object _binary(Buf* off, Buf* data, Buf* valid, Py_ssize_t n, Py_ssize_t nulls, object typ):
    validity = take(valid) if nulls else None
    return pa.Array.from_buffers(typ, n, [validity, take(off), take(data)], null_count=nulls)


cdef object _finish(Cols* c, str topic, int partition):
    cdef Py_ssize_t n = c.rows
    cols_sync(c, (<int32_t*> c.key_off.data)[n], (<int32_t*> c.val_off.data)[n])
    if c.include_headers:
        c.hk_off.size = 4 * (c.h_count + 1)
        c.hv_off.size = 4 * (c.h_count + 1)
    cols_remember_sizes(c)
    columns = [
        _binary(&c.key_off, &c.key_data, &c.key_valid, n, c.key_nulls, pa.binary()),
        _binary(&c.val_off, &c.val_data, &c.val_valid, n, c.val_nulls, pa.binary()),
        _repeat_string(topic, n),
        _repeat_int32(partition, n),
        pa.Array.from_buffers(pa.int64(), n, [None, take(&c.offsets)]),
        pa.Array.from_buffers(_TIMESTAMP_TYPE, n, [None, take(&c.ts)]),
        pa.Array.from_buffers(pa.int32(), n, [None, take(&c.ts_type)]),
    ]
    if c.include_headers:
        columns.append(_headers(c, n))
    return pa.RecordBatch.from_arrays(columns, schema=spark_kafka_schema(c.include_headers))


cdef object _repeat_string(str text, Py_ssize_t n):
    """``text`` n times as a string array, built directly (``pa.repeat`` of a scalar imports
    pandas on first use, a second per Python worker)."""
    cdef bytes raw = text.encode("utf-8")
    cdef Py_ssize_t size = len(raw)
    cdef Buf off, data
    cdef Py_ssize_t i
    cdef const char* src = raw
    if <long long> size * n > INT32_MAX:
        raise KafkaProtocolError(
            f"the topic column of {n} rows exceeds Arrow's 2 GiB per column; "
            "lower max.partition.fetch.bytes"
        )
    memset(&off, 0, sizeof(Buf))
    memset(&data, 0, sizeof(Buf))
    try:
        if buf_prepare(&off, 4 * (n + 1)) or buf_prepare(&data, size * n):
            raise MemoryError()
        for i in range(n + 1):
            (<int32_t*> off.data)[i] = <int32_t> (i * size)
        for i in range(n):
            memcpy(data.data + i * size, src, <size_t> size)
        off.size = 4 * (n + 1)
        data.size = size * n
        return pa.Array.from_buffers(pa.string(), n, [None, take(&off), take(&data)])
    finally:
        buf_release(&off)
        buf_release(&data)


cdef object _repeat_int32(int32_t value, Py_ssize_t n):
    cdef Buf b
    cdef Py_ssize_t i
    memset(&b, 0, sizeof(Buf))
    try:
        if buf_prepare(&b, 4 * n):
            raise MemoryError()
        for i in range(n):
            (<int32_t*> b.data)[i] = value
        b.size = 4 * n
        return pa.Array.from_buffers(pa.int32(), n, [None, take(&b)])
    finally:
        buf_release(&b)


cdef object _headers(Cols* c, Py_ssize_t n):
    cdef Py_ssize_t h = c.h_count  # the offsets' sizes were set by _finish
    keys = pa.Array.from_buffers(pa.string(), h, [None, take(&c.hk_off), take(&c.hk_data)])
    try:
        keys.validate(full=True)
    except pa.ArrowInvalid:
        # Invalid UTF-8 somewhere: decode as the reference does (U+FFFD replacement).
        raw = keys.view(pa.binary()).to_pylist()
        keys = pa.array([k.decode("utf-8", "replace") for k in raw], pa.string())
    values = _binary(&c.hv_off, &c.hv_data, &c.hv_valid, h, c.hv_nulls, pa.binary())
    items = pa.StructArray.from_arrays([keys, values], fields=list(HEADER_TYPE))
    validity = take(&c.h_list_valid) if c.h_list_nulls else None
    return pa.Array.from_buffers(
        HEADERS_TYPE, n, [validity, take(&c.h_list_off)], null_count=c.h_list_nulls,
        children=[items],
    )


# ---- encoder: the records section of a batch being produced (issue 12) ----------------------
#
# encode_records_section_accel is the twin of the pure encode_records_section of
# records/encoder.py: same arguments, same bytes, same errors. Keys, values and headers are read
# in place from the Arrow buffers (binary/string arrays, large ones too, sliced ones through
# their offset, nulls through the validity bitmaps; headers through the list offsets, the
# struct's validity and its key/value children); two loops without the GIL: the first measures
# the records that fit into the budget, the second writes them into one bytes object of exactly
# that size. Every other input goes to the pure function, which then answers (or raises)
# itself: a column of another type (InvalidRecordError naming it), chunked arrays, columns of
# unequal lengths, arguments outside int64, buffers not in CPU memory.
#
# Header errors as the pure function raises them: it converts the header column 512 rows
# (_SECTION_CHUNK) at a time, starting at ``start``, and refuses a chunk holding a header with a
# null key (or a null header) before encoding any row of it, naming the row by its index within
# that chunk. So a bad header is an error when it lies in a chunk the pure function reaches:
# any chunk up to the one holding the first row that does not fit.

cdef struct BinCol:
    const uint8_t* valid     # validity bitmap, NULL when every row is valid
    const uint8_t* offsets   # int32 (binary, string, list) or int64 (large_*) offsets
    const uint8_t* data
    Py_ssize_t offset        # the array's offset into its buffers (sliced arrays)
    int64_t data_size        # bytes of ``data`` (for a list column: rows of its child)
    bint large
    bint all_null            # None or a null-type column


cdef struct HeaderCols:
    bint present             # False: no header column (every record: header count 0)
    BinCol lists             # list offsets and validity of the header column
    const uint8_t* struct_valid
    Py_ssize_t struct_offset
    BinCol keys              # the struct's key child (string / large_string)
    BinCol values            # the struct's value child (binary, string, large ones, null)


# Rows the pure function converts at a time (records/encoder.py ``_SECTION_CHUNK``, checked
# equal by tests/records/test_accel_encoder.py), and error codes of the encoder's measuring loop.
cdef enum:
    SECTION_CHUNK = 512
    E_KEY_OFFSETS = 1
    E_VALUE_OFFSETS = 2
    E_HEADER_OFFSETS = 3
    E_NULL_HEADER_KEY = 4


cdef inline int64_t col_offset(const BinCol* c, Py_ssize_t i) noexcept nogil:
    """Offset ``i`` (relative to the array's own start) of ``c``; memcpy: no aligned load."""
    cdef int32_t v32
    cdef int64_t v64
    if c.large:
        memcpy(&v64, c.offsets + (c.offset + i) * 8, 8)
        return v64
    memcpy(&v32, c.offsets + (c.offset + i) * 4, 4)
    return v32


cdef inline bint bit_clear(const uint8_t* bitmap, Py_ssize_t j) noexcept nogil:
    return bitmap != NULL and ((bitmap[j >> 3] >> (j & 7)) & 1) == 0


cdef inline bint col_is_null(const BinCol* c, Py_ssize_t i) noexcept nogil:
    return c.all_null or bit_clear(c.valid, c.offset + i)


cdef inline uint64_t zigzag(int64_t v) noexcept nogil:
    """Kafka's zigzag (``ByteUtils.writeVarlong``; equal to ``writeVarint`` within int32)."""
    return (<uint64_t> v << 1) ^ <uint64_t> (v >> 63)


cdef inline int64_t varint_size(int64_t v) noexcept nogil:
    cdef uint64_t u = zigzag(v)
    cdef int64_t size = 1
    while u >= 0x80:
        u >>= 7
        size += 1
    return size


cdef inline uint8_t* put_varint(uint8_t* p, int64_t v) noexcept nogil:
    cdef uint64_t u = zigzag(v)
    while u >= 0x80:
        p[0] = <uint8_t> ((u & 0x7F) | 0x80)
        p += 1
        u >>= 7
    p[0] = <uint8_t> u
    return p + 1


cdef inline int field_len(const BinCol* c, Py_ssize_t i, int64_t* start, int64_t* length) noexcept nogil:
    """Where row ``i`` of ``c`` lies in its data buffer; ``length`` -1 for null. -1 when the
    offsets point outside the data buffer (a malformed array), else 0."""
    cdef int64_t s, e
    if col_is_null(c, i):
        length[0] = -1
        return 0
    s = col_offset(c, i)
    e = col_offset(c, i + 1)
    if s < 0 or e < s or e > c.data_size:
        return -1
    start[0] = s
    length[0] = e - s
    return 0


cdef inline int64_t part_size(int64_t length) noexcept nogil:
    return 1 if length < 0 else varint_size(length) + length


cdef inline uint8_t* put_part(uint8_t* out, const BinCol* c, int64_t start, int64_t length) noexcept nogil:
    out = put_varint(out, length)
    if length > 0:
        memcpy(out, c.data + start, <size_t> length)
        out += length
    return out


cdef inline int header_range(const HeaderCols* h, Py_ssize_t row, int64_t* first, int64_t* last) noexcept nogil:
    """The struct rows ``first .. last - 1`` holding the headers of ``row`` (none for a null
    list, as the pure function reads it). -1 when the list offsets leave the struct."""
    first[0] = 0
    last[0] = 0
    if not h.present or col_is_null(&h.lists, row):
        return 0
    first[0] = col_offset(&h.lists, row)
    last[0] = col_offset(&h.lists, row + 1)
    if first[0] < 0 or last[0] < first[0] or last[0] > h.lists.data_size:
        return -1
    return 0


cdef int headers_size(const HeaderCols* h, Py_ssize_t row, int64_t* size) noexcept nogil:
    """Bytes of the headers of ``row``: count varint, then per header key and value."""
    cdef int64_t first, last, j, s, kl, vl
    if header_range(h, row, &first, &last):
        return E_HEADER_OFFSETS
    size[0] = varint_size(last - first)
    for j in range(first, last):
        if bit_clear(h.struct_valid, h.struct_offset + j) or col_is_null(&h.keys, j):
            return E_NULL_HEADER_KEY
        if field_len(&h.keys, j, &s, &kl) or field_len(&h.values, j, &s, &vl):
            return E_HEADER_OFFSETS
        size[0] += varint_size(kl) + kl + part_size(vl)
    return OK


cdef uint8_t* put_headers(uint8_t* out, const HeaderCols* h, Py_ssize_t row) noexcept nogil:
    cdef int64_t first, last, j, ks = 0, kl = 0, vs = 0, vl = 0
    header_range(h, row, &first, &last)
    out = put_varint(out, last - first)
    for j in range(first, last):
        field_len(&h.keys, j, &ks, &kl)
        field_len(&h.values, j, &vs, &vl)
        out = put_part(out, &h.keys, ks, kl)
        out = put_part(out, &h.values, vs, vl)
    return out


cdef int measure_section(
    const BinCol* k, const BinCol* v, const HeaderCols* h, Py_ssize_t start, Py_ssize_t n,
    int64_t offset_delta, int64_t ts_delta, int64_t budget, Py_ssize_t* taken, int64_t* total,
    Py_ssize_t* bad_row,
) noexcept nogil:
    """Rows from ``start`` that fit into ``budget`` (the pure function's rule) and their bytes;
    then the header check of the rest of the pure function's last chunk."""
    cdef Py_ssize_t row = start, chunk_end
    cdef int64_t used = 0, body, size, ks, kl, vs, vl, hsize
    cdef int64_t ts_size = varint_size(ts_delta)
    cdef int rc
    while row < n:
        bad_row[0] = row
        if field_len(k, row, &ks, &kl):
            return E_KEY_OFFSETS
        if field_len(v, row, &vs, &vl):
            return E_VALUE_OFFSETS
        rc = headers_size(h, row, &hsize)
        if rc != OK:
            return rc
        # attributes, timestamp delta, offset delta, key, value, headers
        body = 1 + ts_size + varint_size(offset_delta) + part_size(kl) + part_size(vl) + hsize
        size = varint_size(body) + body
        if used + size > budget and offset_delta > 0:
            break
        used += size
        offset_delta += 1
        row += 1
    taken[0] = row - start
    total[0] = used
    if row < n:
        chunk_end = start + ((row - start) // SECTION_CHUNK + 1) * SECTION_CHUNK
        if chunk_end > n:
            chunk_end = n
        for row in range(row + 1, chunk_end):
            bad_row[0] = row
            rc = headers_size(h, row, &hsize)
            if rc != OK:
                return rc
    return OK


cdef void write_section(
    const BinCol* k, const BinCol* v, const HeaderCols* h, Py_ssize_t start, Py_ssize_t count,
    int64_t offset_delta, int64_t ts_delta, uint8_t* out,
) noexcept nogil:
    """``DefaultRecord.writeTo`` for ``count`` rows already measured (offsets checked)."""
    cdef Py_ssize_t row
    cdef int64_t body, ks = 0, kl = 0, vs = 0, vl = 0, hsize = 1
    cdef int64_t ts_size = varint_size(ts_delta)
    for row in range(start, start + count):
        field_len(k, row, &ks, &kl)
        field_len(v, row, &vs, &vl)
        headers_size(h, row, &hsize)
        body = 1 + ts_size + varint_size(offset_delta) + part_size(kl) + part_size(vl) + hsize
        out = put_varint(out, body)
        out[0] = 0  # attributes
        out = put_varint(out + 1, ts_delta)
        out = put_varint(out, offset_delta)
        out = put_part(out, k, ks, kl)
        out = put_part(out, v, vs, vl)
        out = put_headers(out, h, row)
        offset_delta += 1


_SECTION_CHUNK = SECTION_CHUNK
_BINARY_IDS = {pa.binary().id: False, pa.string().id: False,
               pa.large_binary().id: True, pa.large_string().id: True}
_NULL_ID = pa.null().id
_LIST_IDS = {pa.list_(pa.null()).id: False, pa.large_list(pa.null()).id: True}
#: Header column types the pure type check accepted (it depends on the type alone).
_CHECKED_HEADER_TYPES = set()


cdef inline uintptr_t _address(object buf):
    return 0 if buf is None else <uintptr_t> buf.address


cdef bint _offsets_col(object array, BinCol* c, bint large, object validity, object offsets) except -1:
    """Validity and offsets of ``array`` into ``c``; False when not usable in place."""
    for buf in (validity, offsets):
        if buf is not None and not buf.is_cpu:
            return False
    c.large = large
    c.offset = array.offset
    n = len(array)
    if offsets is None or offsets.size < (c.offset + n + 1) * (8 if large else 4):
        return False
    if validity is not None and validity.size * 8 < c.offset + n:
        return False
    c.valid = <const uint8_t*> _address(validity)
    c.offsets = <const uint8_t*> _address(offsets)
    return True


cdef bint _bin_col(object array, BinCol* c) except -1:
    """Fill ``c`` from a column of the fast path; False when the pure function must answer."""
    memset(c, 0, sizeof(BinCol))
    if array is None:
        c.all_null = True
        return True
    if not isinstance(array, pa.Array):
        return False
    tid = array.type.id
    if tid == _NULL_ID:
        c.all_null = True
        return True
    if tid not in _BINARY_IDS:
        return False
    validity, offsets, data = array.buffers()
    if data is not None and not data.is_cpu:
        return False
    if not _offsets_col(array, c, _BINARY_IDS[tid], validity, offsets):
        return False
    c.data = <const uint8_t*> _address(data)
    c.data_size = 0 if data is None else data.size
    return True


cdef bint _header_cols(object headers, Py_ssize_t n, HeaderCols* h) except -1:
    """Fill ``h`` from the header column (``None``: no headers), after the pure function's type
    check (which raises its InvalidRecordError); False when the pure function must answer."""
    memset(h, 0, sizeof(HeaderCols))
    if headers is None:
        return True
    if not isinstance(headers, pa.Array) or len(headers) != n:
        return False
    typ = headers.type
    if typ not in _CHECKED_HEADER_TYPES:
        _encoder()._headers_column(headers.slice(0, 0), 0)  # the pure type check and its error
        if len(_CHECKED_HEADER_TYPES) < 64:
            _CHECKED_HEADER_TYPES.add(typ)
    tid = typ.id
    if tid not in _LIST_IDS:
        return False
    validity, offsets = headers.buffers()[:2]
    if not _offsets_col(headers, &h.lists, _LIST_IDS[tid], validity, offsets):
        return False
    items = headers.values
    h.lists.data_size = len(items)
    struct_validity = items.buffers()[0]
    if struct_validity is not None and (
        not struct_validity.is_cpu or struct_validity.size * 8 < items.offset + len(items)
    ):
        return False
    h.struct_valid = <const uint8_t*> _address(struct_validity)
    h.struct_offset = items.offset
    if not _bin_col(items.field("key"), &h.keys) or not _bin_col(items.field("value"), &h.values):
        return False
    h.present = True
    return True


cdef object _encoder():
    # imported on first use: records/encoder.py imports this module at its own import
    from spark_kafka_py.records import encoder
    return encoder


_MESSAGES = {
    E_KEY_OFFSETS: ("key", "Arrow offsets outside the data buffer (a malformed array)"),
    E_VALUE_OFFSETS: ("value", "Arrow offsets outside the data buffer (a malformed array)"),
    E_HEADER_OFFSETS: ("headers", "Arrow offsets outside their buffers (a malformed array)"),
}


def encode_records_section_accel(
    keys, values, headers, start, *, first_offset_delta, timestamp_delta, budget
):
    """Accelerated twin of :func:`spark_kafka_py.records.encoder.encode_records_section`.

    See that function for the contract (arguments, ``(records_section_bytes, rows_taken)``,
    :class:`~spark_kafka_py.errors.InvalidRecordError` for bad columns); the result (or the
    error) equals the pure function's for every input. In addition, an array whose offsets
    point outside its buffers (malformed, e.g. from ``pa.Array.from_buffers``) raises
    :class:`~spark_kafka_py.errors.InvalidRecordError` naming the column and the row.
    """
    cdef BinCol k, v
    cdef HeaderCols h
    cdef Py_ssize_t n, first, taken = 0, bad_row = 0
    cdef int64_t od, ts, limit, total = 0
    cdef int rc
    cdef bytes out
    cdef uint8_t* dst
    try:
        od = first_offset_delta
        ts = timestamp_delta
        limit = budget
        first = start
    except (OverflowError, TypeError):
        first = -1
    if (
        first < 0
        or not _bin_col(keys, &k)
        or not _bin_col(values, &v)
        or (keys is None and values is None)
    ):
        return _pure_section(keys, values, headers, start, first_offset_delta, timestamp_delta, budget)
    n = len(values if values is not None else keys)
    if first >= n:
        return b"", 0
    if (keys is not None and len(keys) != n) or not _header_cols(headers, n, &h):
        return _pure_section(keys, values, headers, start, first_offset_delta, timestamp_delta, budget)
    with nogil:
        rc = measure_section(&k, &v, &h, first, n, od, ts, limit, &taken, &total, &bad_row)
    if rc == E_NULL_HEADER_KEY:
        raise InvalidRecordError(
            f"column 'headers', row {(bad_row - first) % SECTION_CHUNK}: a header with a null "
            "key (KIP-82 header keys are non-null strings)",
            column="headers",
        )
    if rc != OK:
        name, what = _MESSAGES[rc]
        raise InvalidRecordError(f"column {name!r}, row {bad_row}: {what}", column=name)
    out = PyBytes_FromStringAndSize(NULL, total)
    dst = <uint8_t*> PyBytes_AS_STRING(out)
    with nogil:
        write_section(&k, &v, &h, first, taken, od, ts, dst)
    return out, taken


cdef object _pure_section(keys, values, headers, start, first_offset_delta, timestamp_delta, budget):
    return _encoder()._encode_records_section_pure(
        keys, values, headers, start, first_offset_delta=first_offset_delta,
        timestamp_delta=timestamp_delta, budget=budget,
    )
