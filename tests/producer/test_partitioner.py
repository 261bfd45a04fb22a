"""Key partitioning against Kafka's own Java code: ``Utils.murmur2`` and
``BuiltInPartitioner.partitionForKey`` (KIP-794), printed by ``java/Murmur2Keys.java`` for
10,000+ seeded random keys in one JVM run."""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import pytest

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.producer import murmur2, partition_for_key, to_positive
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
