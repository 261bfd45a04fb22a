"""Kafka's default partitioning of keyed records, bit for bit as the Java producer.

Kafka's built-in partitioner (KIP-794, ``BuiltInPartitioner.partitionForKey``) sends a record
with a non-null key to ``toPositive(murmur2(key)) % numPartitions``, where ``murmur2`` is
``org.apache.kafka.common.utils.Utils.murmur2`` (MurmurHash2, seed ``0x9747b28c``, in Java's
signed 32-bit arithmetic) and ``toPositive`` is ``Utils.toPositive`` (``n & 0x7fffffff``).
Records without a key are spread by :class:`StickyPartitioner`, Kafka's uniform sticky
partitioning (KIP-480, KIP-794).

:func:`murmur2_array` and :func:`partitions_for_keys` are the same functions over a whole Arrow
column at once, vectorised with numpy (32-bit unsigned arithmetic wraps as Java's ``int``).
"""

from __future__ import annotations

import random
from typing import Final

import numpy as np
import pyarrow as pa

from spark_kafka_py.errors import ConfigError

__all__ = [
    "StickyPartitioner",
    "murmur2",
    "murmur2_array",
    "partition_for_key",
    "partitions_for_keys",
    "to_positive",
]

_SEED: Final = 0x9747B28C
_M: Final = 0x5BD1E995
_MASK: Final = 0xFFFFFFFF


def _signed(x: int) -> int:
    x &= _MASK
    return x - 0x100000000 if x & 0x80000000 else x


def murmur2(data: bytes) -> int:
    """``Utils.murmur2(data)``: the signed 32-bit MurmurHash2 of ``data`` (Kafka's seed).

    Arithmetic is done modulo 2**32 as Java's ``int`` (``>>>`` is a logical shift); the
    result is returned as a signed int in ``[-2**31, 2**31)``.
    """
    length = len(data)
    h = (_SEED ^ length) & _MASK
    n4 = length // 4
    for i in range(n4):
        j = 4 * i
        k = data[j] | (data[j + 1] << 8) | (data[j + 2] << 16) | (data[j + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    rest = length % 4
    tail = n4 * 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return _signed(h)


def to_positive(number: int) -> int:
    """``Utils.toPositive``: ``number & 0x7fffffff`` (not ``abs``: maps ``-2**31`` to 0)."""
    return number & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition Kafka's Java producer picks for a record with a non-null ``key``.

    ``BuiltInPartitioner.partitionForKey`` (KIP-794):
    ``toPositive(murmur2(key)) % num_partitions``.

    Raises:
        ConfigError: ``num_partitions`` < 1.
    """
    if num_partitions < 1:
        raise ConfigError(f"a topic has at least 1 partition, got num_partitions={num_partitions}")
    return to_positive(murmur2(key)) % num_partitions


def _binary_parts(keys: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(data uint8, starts int64, lengths int64)`` of a binary/string array (nulls: length 0)."""
    t = keys.type
    if pa.types.is_string(t):
        keys = keys.cast(pa.binary())
    elif pa.types.is_large_string(t):
        keys = keys.cast(pa.large_binary())
    elif not (pa.types.is_binary(keys.type) or pa.types.is_large_binary(keys.type)):
        raise ConfigError(f"keys must be binary or string, got {t}")
    offset_type = np.int64 if pa.types.is_large_binary(keys.type) else np.int32
    bufs = keys.buffers()
    n = len(keys)
    offsets = np.frombuffer(bufs[1], dtype=offset_type, count=keys.offset + n + 1)[keys.offset :]
    data = (
        np.frombuffer(bufs[2], dtype=np.uint8)
        if bufs[2] is not None
        else np.zeros(0, dtype=np.uint8)
    )
    starts = offsets[:-1].astype(np.int64)
    lengths = (offsets[1:] - offsets[:-1]).astype(np.int64)
    return data, starts, lengths


#: Fewer rows of one key length than this are hashed one by one (see :func:`murmur2_array`).
_VECTOR_MIN_ROWS = 8


def murmur2_array(keys: pa.Array) -> np.ndarray:
    """:func:`murmur2` of every value of a binary or string Arrow array, as ``int32``.

    Rows are grouped by key length; each group is hashed with numpy over a ``rows x length``
    byte matrix, one numpy step per 4 bytes of the length. A group of fewer than
    :data:`_VECTOR_MIN_ROWS` rows is hashed key by key with :func:`murmur2` instead: numpy's
    per-step cost would be paid for each 4 bytes of a long key shared by no other row. Null
    rows hash as the empty key (callers mask them out).

    Raises:
        ConfigError: ``keys`` is not a binary or string array.
    """
    data, starts, lengths = _binary_parts(keys)
    out = np.empty(len(keys), dtype=np.uint32)
    m = np.uint32(_M)
    with np.errstate(over="ignore"):
        for length in np.unique(lengths):
            rows = np.nonzero(lengths == length)[0]
            length = int(length)
            if len(rows) < _VECTOR_MIN_ROWS and length > 16:
                for row in rows.tolist():
                    start = int(starts[row])
                    out[row] = murmur2(data[start : start + length].tobytes()) & _MASK
                continue
            h = np.full(len(rows), (_SEED ^ length) & _MASK, dtype=np.uint32)
            if length:
                idx = starts[rows][:, None] + np.arange(length, dtype=np.int64)[None, :]
                b = data[idx].astype(np.uint32)
            n4 = length // 4
            for i in range(n4):
                j = 4 * i
                k = b[:, j] | (b[:, j + 1] << 8) | (b[:, j + 2] << 16) | (b[:, j + 3] << 24)
                k = k * m
                k ^= k >> np.uint32(24)
                k = k * m
                h = h * m
                h ^= k
            rest = length % 4
            tail = n4 * 4
            if rest == 3:
                h ^= b[:, tail + 2] << 16
            if rest >= 2:
                h ^= b[:, tail + 1] << 8
            if rest >= 1:
                h ^= b[:, tail]
                h = h * m
            h ^= h >> np.uint32(13)
            h = h * m
            h ^= h >> np.uint32(15)
            out[rows] = h
    return out.view(np.int32)


def partitions_for_keys(keys: pa.Array, num_partitions: int) -> np.ndarray:
    """:func:`partition_for_key` of every row of ``keys`` (``int32``; null rows get 0: mask
    them, they are not keyed).

    Raises:
        ConfigError: ``num_partitions`` < 1, or ``keys`` not binary or string.
    """
    if num_partitions < 1:
        raise ConfigError(f"a topic has at least 1 partition, got num_partitions={num_partitions}")
    hashes = murmur2_array(keys).view(np.uint32) & np.uint32(0x7FFFFFFF)
    partitions: np.ndarray = (hashes % np.uint32(num_partitions)).astype(np.int32)
    return partitions


class StickyPartitioner:
    """Partitions for records without a key (or all records with ``partitioner.ignore.keys``).

    Kafka's uniform sticky partitioner (KIP-480; ``BuiltInPartitioner`` since KIP-794) sends
    unkeyed records of a topic to one partition until about ``batch.size`` bytes went there,
    then moves to another partition chosen at random; batches fill up and every partition
    gets an even share over time. The same here, per topic, counting each record's key, value
    and header bytes.

    What differs from Java: Java chooses the next partition among those with a leader and,
    with ``partitioner.adaptive.partitioning.enable``, weighs them by their queue sizes; we
    choose uniformly among all partitions (a partition without a leader is retried by the
    producer until ``delivery.timeout.ms``).

    Args:
        batch_size: ``batch.size`` (bytes); 0 switches partition after every record.
        rng: random source (seeded in tests).
    """

    def __init__(self, batch_size: int, rng: random.Random | None = None) -> None:
        self.batch_size = max(1, batch_size)
        self._rng = rng or random.Random()
        #: topic -> (current partition, bytes sent to it so far)
        self._state: dict[str, tuple[int, int]] = {}

    def _next(self, current: int, num_partitions: int) -> int:
        if num_partitions == 1:
            return 0
        choice = self._rng.randrange(num_partitions - 1)
        return choice if choice < current else choice + 1

    def partitions(self, topic: str, sizes: np.ndarray, num_partitions: int) -> np.ndarray:
        """Partitions (``int32``) for consecutive unkeyed records of ``topic`` of ``sizes`` bytes.

        Raises:
            ConfigError: ``num_partitions`` < 1.
        """
        if num_partitions < 1:
            raise ConfigError(
                f"a topic has at least 1 partition, got num_partitions={num_partitions}"
            )
        current, produced = self._state.get(topic, (-1, 0))
        if current < 0 or current >= num_partitions:
            current, produced = self._rng.randrange(num_partitions), 0
        n = len(sizes)
        if n == 0:
            return np.zeros(0, dtype=np.int32)
        # the record that brings a partition to batch.size bytes is its last one there
        cum = produced + np.cumsum(sizes, dtype=np.int64)
        run = np.zeros(n, dtype=np.int64)
        run[1:] = cum[:-1] // self.batch_size
        first = produced // self.batch_size
        run -= first
        runs = int(run[-1]) + 1
        chosen = [current]
        for _ in range(runs - 1):
            chosen.append(self._next(chosen[-1], num_partitions))
        out = np.asarray(chosen, dtype=np.int32)[run]
        last_run_start = (first + runs - 1) * self.batch_size
        if int(cum[-1]) >= (first + runs) * self.batch_size:
            self._state[topic] = (self._next(chosen[-1], num_partitions), 0)
        else:
            self._state[topic] = (chosen[-1], int(cum[-1]) - last_run_start)
        return out
