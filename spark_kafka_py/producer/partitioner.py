"""Kafka's default partitioning of keyed records, bit for bit as the Java producer.

Kafka's built-in partitioner (KIP-794, ``BuiltInPartitioner.partitionForKey``) sends a record
with a non-null key to ``toPositive(murmur2(key)) % numPartitions``, where ``murmur2`` is
``org.apache.kafka.common.utils.Utils.murmur2`` (MurmurHash2, seed ``0x9747b28c``, in Java's
signed 32-bit arithmetic) and ``toPositive`` is ``Utils.toPositive`` (``n & 0x7fffffff``).
Records without a key are spread by the producer's sticky logic (not here).
"""

from __future__ import annotations

from typing import Final

from spark_kafka_py.errors import ConfigError

__all__ = ["murmur2", "partition_for_key", "to_positive"]

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
