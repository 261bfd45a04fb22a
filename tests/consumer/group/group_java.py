"""Compile and run the test-only Java programs of ``tests/consumer/group/java`` with the
kafka-clients jars of the Kafka release under test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from spark_kafka_py.testing.jars import kafka_classpath

JAVA_DIR = Path(__file__).parent / "java"


def compile_java(name: str, out_dir: Path) -> str:
    """``javac`` ``java/<name>.java`` into ``out_dir``; returns the classpath to run it with."""
    javac = shutil.which("javac")
    assert javac is not None, "javac (a JDK) is required by these tests"
    classpath = kafka_classpath()
    subprocess.run(
        [
            javac,
            "-nowarn",
            "--release",
            "17",
            "-cp",
            classpath,
            "-d",
            str(out_dir),
            str(JAVA_DIR / f"{name}.java"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return f"{classpath}:{out_dir}"
