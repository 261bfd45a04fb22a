"""Checks shared by the message test modules: a full round trip of one message, and Kafka's own
generated ``<Name>Data`` classes reading our bytes and writing back the same bytes
(``java/ReencodeMessages.java``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from spark_kafka_py.protocol.schema import decode, encode
from spark_kafka_py.testing.jvm import compile_java, run_java

from .strategies import project

JAVA_DIR = Path(__file__).parent / "java"


def assert_round_trip(message: object, version: int) -> None:
    """``message`` (its fields the version lacks reset first) encodes, decodes back equal, and
    encodes again to the same bytes."""
    sent = project(message, version)
    data = encode(sent, version)
    back = decode(type(message), data, version)
    assert back == sent
    assert encode(back, version) == data


def assert_kafka_reencodes(
    cases: Iterable[tuple[object, int]], kafka_jar_paths: list[Path]
) -> None:
    """For each ``(message, version)``: Kafka's ``<Name>Data(readable, version)`` consumes all
    our bytes and its writer produces exactly our bytes again."""
    classpath = os.pathsep.join(str(p) for p in kafka_jar_paths)
    classes = compile_java([JAVA_DIR / "ReencodeMessages.java"], classpath)
    encoded = [
        (type(message), version, encode(project(message, version), version))
        for message, version in cases
    ]
    stdin = "".join(f"{cls.__name__} {version} {data.hex()}\n" for cls, version, data in encoded)
    printed = run_java(
        "ReencodeMessages", [], classpath=os.pathsep.join([classpath, str(classes)]), input=stdin
    )
    lines = printed.stdout.splitlines()
    assert len(lines) == len(encoded)
    for (cls, version, data), line in zip(encoded, lines, strict=True):
        assert line == data.hex(), f"{cls.__name__} v{version}"
