"""Key partitioning against Kafka's own Java code: ``Utils.murmur2`` and
``BuiltInPartitioner.partitionForKey`` (KIP-794), printed by ``java/Murmur2Keys.java`` for
10,000+ seeded random keys in one JVM run."""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.producer import murmur2, partition_for_key, to_positive
from spark_kafka_py.producer.partitioner import (
    StickyPartitioner,
    murmur2_array,
    partitions_for_keys,
)
from spark_kafka_py.testing.jars import kafka_classpath
from spark_kafka_py.testing.jvm import compile_java, run_java

JAVA_DIR = Path(__file__).parent / "java"
PARTITION_COUNTS = (1, 2, 3, 7, 10, 12, 100, 1000, 2**31 - 1)


def random_keys(seed: int = 1794, n: int = 10_000) -> list[bytes]:
    rng = random.Random(seed)
    keys = [b"", b"\x00", b"\xff", b"a", b"ab", b"abc", b"abcd", b"abcde", b"\xff" * 4]
    keys += ["ünïcødé-キー-🔑".encode(), b"\x80" * 1000, bytes(range(256)) * 40]
    while len(keys) < n:
        kind = rng.random()
        if kind < 0.6:
            size = rng.randint(0, 16)
        elif kind < 0.95:
            size = rng.randint(17, 300)
        else:
            size = rng.randint(301, 20_000)
        keys.append(rng.randbytes(size))
    keys.extend(str(i).encode() for i in range(200))
    return keys


def test_known_values() -> None:
    # Values from Kafka's UtilsTest.testMurmur2 (clients/src/test/.../utils/UtilsTest.java).
    cases = {
        b"21": -973932308,
        b"foobar": -790332482,
        b"a-little-bit-long-string": -985981536,
        b"a-little-bit-longer-string": -1486304829,
        b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
        b"abc": 479470107,
    }
    assert {k: murmur2(k) for k in cases} == cases


def test_to_positive() -> None:
    assert to_positive(-(2**31)) == 0
    assert to_positive(-1) == 2**31 - 1
    assert to_positive(0) == 0 and to_positive(5) == 5


def test_bad_partition_count() -> None:
    with pytest.raises(ConfigError):
        partition_for_key(b"k", 0)


def test_matches_kafka_java_partitioner() -> None:
    classpath = kafka_classpath()
    classes = compile_java([JAVA_DIR / "Murmur2Keys.java"], classpath)
    keys = random_keys()
    assert len(keys) >= 10_000
    stdin = "".join(base64.b64encode(k).decode() + "\n" for k in keys)
    printed = run_java(
        "Murmur2Keys",
        [str(n) for n in PARTITION_COUNTS],
        classpath=os.pathsep.join([classpath, str(classes)]),
        input=stdin,
    )
    lines = printed.stdout.splitlines()
    assert len(lines) == len(keys)
    mismatches = []
    for key, line in zip(keys, lines, strict=True):
        theirs = [int(x) for x in line.split("\t")]
        ours = [murmur2(key)] + [partition_for_key(key, n) for n in PARTITION_COUNTS]
        if ours != theirs:
            mismatches.append((key[:32], ours, theirs))
    assert mismatches == []
    # the vectorised path over the same keys, as one Arrow column and as a slice of one
    java = np.array([[int(x) for x in line.split("\t")] for line in lines], dtype=np.int64)
    column = pa.array(keys, pa.binary())
    assert (murmur2_array(column) == java[:, 0]).all()
    for i, n in enumerate(PARTITION_COUNTS, start=1):
        assert (partitions_for_keys(column, n) == java[:, i]).all(), n
    window = pa.array(keys, pa.large_binary()).slice(500, 3000)
    assert (murmur2_array(window) == java[500:3500, 0]).all()


def test_vectorised_partitions_of_strings_and_nulls() -> None:
    keys = pa.array(["a", None, "ünïcødé", "", "abcde"])
    got = partitions_for_keys(keys, 12)
    assert got[0] == partition_for_key(b"a", 12)
    assert got[2] == partition_for_key("ünïcødé".encode(), 12)
    assert got[3] == partition_for_key(b"", 12) and got[4] == partition_for_key(b"abcde", 12)
    with pytest.raises(ConfigError, match="binary or string"):
        murmur2_array(pa.array([1, 2]))
    with pytest.raises(ConfigError):
        partitions_for_keys(keys, 0)


def test_sticky_partitioner_moves_after_batch_size_bytes() -> None:
    """Unkeyed records stick to one partition for about ``batch.size`` bytes, then move to a
    different one; over many records every partition gets a share."""
    sticky = StickyPartitioner(batch_size=100, rng=random.Random(7))
    parts = sticky.partitions("t", np.full(10, 30), 4)
    # 30-byte records: the 4th record brings the partition to 120 >= 100 bytes, the 5th moves
    assert len(set(parts[:4].tolist())) == 1
    assert parts[4] != parts[3]
    # the state carries over to the next call: the run goes on where it stopped
    more = sticky.partitions("t", np.full(1000, 30), 4)
    runs = np.split(more, np.nonzero(np.diff(more))[0] + 1)
    assert len(runs[0]) <= 4 and all(len(r) in (3, 4) for r in runs[1:-1])
    assert set(more.tolist()) == {0, 1, 2, 3}
    # an even share: each partition gets 25% +- 5% of 1000 records
    counts = np.bincount(more, minlength=4)
    assert (abs(counts - 250) <= 50).all(), counts
    # one partition: always 0; batch.size 0: a new partition for every record
    assert StickyPartitioner(100).partitions("u", np.full(5, 30), 1).tolist() == [0] * 5
    every = StickyPartitioner(0, rng=random.Random(1)).partitions("v", np.full(50, 1), 3)
    assert (np.diff(every) != 0).all()
