"""Run the ``broker_matrix`` subset of the integration tests against several Kafka releases.

One ``pytest`` process per release, one after the other, each with
``SPARK_KAFKA_PY_KAFKA_VERSION=<release>`` (every local cluster of that run, the session broker
and the secured ones, starts that release) and ``SPARK_KAFKA_PY_BROKER=local``; each process
shares one Spark session among its tests. The Java tools the tests call stay on
:data:`~spark_kafka_py.testing.jars.KAFKA_VERSION` (Kafka's clients of one release talk to
brokers of the others).

Usage::

    python -m spark_kafka_py.testing.matrix                       # every release of MATRIX_VERSIONS
    python -m spark_kafka_py.testing.matrix --versions 3.6.2,4.0.2
    python -m spark_kafka_py.testing.matrix -- -x -k groups       # after --: more pytest arguments

Prints one line per release (exit code, seconds) and exits 0 only when every release passed.

The default test run covers the same releases with a smaller subset in its own process
(``tests/integration/test_broker_versions.py``: one broker per release in turn, the session's
Spark); this command is the long run of every ``broker_matrix`` test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from spark_kafka_py.testing.jars import KAFKA_VERSION, KAFKA_VERSION_ENV

__all__ = ["MATRIX_VERSIONS", "MatrixResult", "main", "run_matrix"]

#: The releases besides :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION` that the project is
#: tested against: the newest 4.x on Maven Central, the first 4.x line, the last 3.x line and the
#: oldest 3.x line tried (3.6: its combined KRaft node starts with the same settings and passes
#: the subset).
MATRIX_VERSIONS: tuple[str, ...] = ("4.4.0", "4.0.2", "3.9.1", "3.6.2")

#: The pytest selection each release runs.
MATRIX_PYTEST_ARGS: tuple[str, ...] = ("-m", "broker_matrix", "tests/integration")


@dataclass(frozen=True, slots=True)
class MatrixResult:
    """Outcome of one release's run.

    Attributes:
        version: the Kafka release, e.g. ``3.6.2``.
        returncode: pytest's exit code (0: every selected test passed).
        seconds: wall-clock time of the pytest process, s.
    """

    version: str
    returncode: int
    seconds: float


def run_matrix(versions: Sequence[str], pytest_args: Sequence[str] = ()) -> list[MatrixResult]:
    """Run the subset once per release of ``versions``, in order, from the current directory
    (the repository root).

    Args:
        versions: Kafka releases ``X.Y.Z``.
        pytest_args: appended to :data:`MATRIX_PYTEST_ARGS`.

    Returns:
        One :class:`MatrixResult` per release, in order.
    """
    results = []
    for version in versions:
        env = dict(os.environ)
        env[KAFKA_VERSION_ENV] = version
        env["SPARK_KAFKA_PY_BROKER"] = "local"
        env.pop("KAFKA_BOOTSTRAP_SERVERS", None)  # it would bypass the chosen release
        cmd = [sys.executable, "-m", "pytest", *MATRIX_PYTEST_ARGS, *pytest_args]
        print(f"=== Kafka {version}: {' '.join(cmd)}", flush=True)
        start = time.monotonic()
        code = subprocess.run(cmd, env=env, check=False).returncode
        results.append(MatrixResult(version, code, time.monotonic() - start))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the process exit code (0: all releases passed)."""
    parser = argparse.ArgumentParser(
        prog="python -m spark_kafka_py.testing.matrix",
        description="Run the broker_matrix tests against several Kafka broker releases "
        f"(default broker of the normal run: {KAFKA_VERSION}).",
    )
    parser.add_argument(
        "--versions",
        default=",".join(MATRIX_VERSIONS),
        help="comma-separated Kafka releases (default: %(default)s)",
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args(argv)
    versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    results = run_matrix(versions, args.pytest_args)
    print("=== broker matrix")
    for r in results:
        status = "passed" if r.returncode == 0 else f"FAILED (pytest exit {r.returncode})"
        print(f"Kafka {r.version:8} {status:28} {r.seconds:7.1f} s")
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
