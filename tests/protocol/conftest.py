"""Fixtures of the protocol tests: the kafka-clients jar of the Kafka release under test.

The jar carries Kafka's own message specs (``common/message/*.json``) and its error table
(``org.apache.kafka.common.protocol.Errors``); the tests read both from it at test time, so
nothing of Kafka's is copied into this repository. The jar is resolved with Maven by
:func:`spark_kafka_py.testing.jars.kafka_jars` (cached; the first run downloads it). When it
cannot be obtained the tests that need it skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_kafka_py.testing.jars import KAFKA_VERSION, JarResolutionError, kafka_jars


@pytest.fixture(scope="session")
def kafka_jar_paths() -> list[Path]:
    """The jars of Kafka :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION` (kafka-clients
    and its dependencies among them).

    Skips when Maven cannot resolve them, unless ``CI=true`` (then the error is raised).
    """
    try:
        return kafka_jars()
    except JarResolutionError as exc:
        if os.environ.get("CI", "").lower() == "true":
            raise
        pytest.skip(f"the Kafka {KAFKA_VERSION} jars cannot be resolved: {exc}")


@pytest.fixture(scope="session")
def kafka_clients_jar(kafka_jar_paths: list[Path]) -> Path:
    """Path of ``kafka-clients-<KAFKA_VERSION>.jar`` among :func:`kafka_jar_paths`."""
    name = f"kafka-clients-{KAFKA_VERSION}.jar"
    found = [p for p in kafka_jar_paths if p.name == name]
    assert len(found) == 1, f"expected one {name} among the resolved Kafka jars, got {found}"
    return found[0]
