"""Compile the test-only Java programs of ``tests/consumer/group/java`` against the
kafka-clients jars of the Kafka release under test (once per source and class path: see
:func:`spark_kafka_py.testing.jvm.compile_java`)."""

from __future__ import annotations

import os
from pathlib import Path

from spark_kafka_py.testing.jars import kafka_classpath
from spark_kafka_py.testing.jvm import compile_java

JAVA_DIR = Path(__file__).parent / "java"


def java_classpath(name: str) -> str:
    """``java -cp`` value to run ``java/<name>.java``'s class: the Kafka jars and its classes.

    Raises:
        spark_kafka_py.testing.jvm.JavaError: ``javac`` missing or the compilation failed.
    """
    classpath = kafka_classpath()
    classes = compile_java([JAVA_DIR / f"{name}.java"], classpath)
    return os.pathsep.join([classpath, str(classes)])
