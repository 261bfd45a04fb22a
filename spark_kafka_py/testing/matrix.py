"""Run the ``broker_matrix`` subset of the integration tests against several Kafka releases, and
the exactly-once tests against brokers formatted with ``transaction.version=2``.

One ``pytest`` process per run, one after the other, each with
``SPARK_KAFKA_PY_KAFKA_VERSION=<release>`` (every local cluster of that run, the session broker,
the fault tests' 3-broker cluster and the secured ones, starts that release),
``SPARK_KAFKA_PY_KAFKA_FEATURES`` (the feature levels those clusters are formatted with: set for
the transactions-v2 runs, removed for the others) and ``SPARK_KAFKA_PY_BROKER=local``; each
process shares one Spark session among its tests. The Java tools the tests call stay on
:data:`~spark_kafka_py.testing.jars.KAFKA_VERSION` (Kafka's clients of one release talk to
brokers of the others).

The plan (:func:`plan`):

- per release of :data:`MATRIX_VERSIONS`: the ``broker_matrix`` tests of ``tests/integration``
  (:data:`MATRIX_PYTEST_ARGS`), the release's default feature levels;
- per release of :data:`TV2_VERSIONS`: the exactly-once tests (:data:`EXACTLY_ONCE_TESTS`: the
  integration tests, the exactly-once crash matrix and every ``tests/faults/test_exactly_once*.py``
  present, so a new one joins when it lands) and the check that the session broker finalized
  the levels asked, on brokers formatted with :data:`TV2_FEATURES` (KIP-890 part 2; ``kafka-
  storage format --feature``, KIP-1022).

Usage::

    python -m spark_kafka_py.testing.matrix                   # the whole plan
    python -m spark_kafka_py.testing.matrix --versions 3.6.2,4.0.2          # broker_matrix only
    python -m spark_kafka_py.testing.matrix --tv2-versions 4.4.0            # transactions v2 only
    python -m spark_kafka_py.testing.matrix --versions 3.6.2 -- -x -k groups  # after --: pytest

With neither option, the whole plan; with one of them, only the runs it names.

Prints one line per run (exit code, seconds) and exits 0 only when every run passed.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spark_kafka_py.testing.jars import KAFKA_FEATURES_ENV, KAFKA_VERSION, KAFKA_VERSION_ENV

__all__ = [
    "EXACTLY_ONCE_TESTS",
    "MATRIX_VERSIONS",
    "TV2_FEATURES",
    "TV2_VERSIONS",
    "MatrixResult",
    "MatrixRun",
    "main",
    "plan",
    "run_matrix",
]

#: The releases besides :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION` that the project is
#: tested against: the newest 4.x on Maven Central, the first 4.x line, the last 3.x line and the
#: oldest 3.x line tried (3.6: its combined KRaft node starts with the same settings and passes
#: the subset).
MATRIX_VERSIONS: tuple[str, ...] = ("4.4.0", "4.0.2", "3.9.1", "3.6.2")

#: The pytest selection each release of :data:`MATRIX_VERSIONS` runs.
MATRIX_PYTEST_ARGS: tuple[str, ...] = ("-m", "broker_matrix", "tests/integration")

#: The releases whose brokers the exactly-once tests also run on formatted with
#: :data:`TV2_FEATURES`: the first 4.x line and the newest 4.x (the default broker,
#: :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION`, runs them in the default run).
TV2_VERSIONS: tuple[str, ...] = ("4.4.0", "4.0.2")

#: Feature levels of the transactions-v2 runs (KIP-890 part 2). Every 4.x release checked
#: (4.0.2, 4.3.0, 4.4.0) finalizes transaction.version 2 on a fresh cluster by itself; the runs
#: ask for it explicitly, so they stay on it whatever a release's default.
TV2_FEATURES: Mapping[str, int] = {"transaction.version": 2}

#: The exactly-once tests of the transactions-v2 runs, relative to the repository root (glob
#: patterns; a pattern that matches nothing adds nothing), then the check that the session's
#: broker finalized the feature levels of the run.
EXACTLY_ONCE_TESTS: tuple[str, ...] = (
    "tests/integration/test_exactly_once.py",
    "tests/faults/test_exactly_once*.py",
    "tests/testing/test_features.py::test_session_broker_has_the_selected_feature_levels",
)


@dataclass(frozen=True, slots=True)
class MatrixRun:
    """One pytest process of the matrix.

    Attributes:
        version: the Kafka release of every local cluster, e.g. ``4.0.2``.
        pytest_args: the test selection (before the command line's extra arguments).
        features: feature levels every local cluster is formatted with (``{}``: the
            release's defaults).
    """

    version: str
    pytest_args: tuple[str, ...]
    features: Mapping[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``Kafka 4.0.2`` or ``Kafka 4.0.2 transaction.version=2``."""
        return " ".join([f"Kafka {self.version}", _features_text(self.features)]).strip()


@dataclass(frozen=True, slots=True)
class MatrixResult:
    """Outcome of one run.

    Attributes:
        version: the Kafka release, e.g. ``3.6.2``.
        returncode: pytest's exit code (0: every selected test passed).
        seconds: wall-clock time of the pytest process, s.
        features: the feature levels of the run's brokers (``{}``: the release's defaults).
    """

    version: str
    returncode: int
    seconds: float
    features: Mapping[str, int] = field(default_factory=dict)


def _features_text(features: Mapping[str, int]) -> str:
    """``name=level,...`` (the form of ``$SPARK_KAFKA_PY_KAFKA_FEATURES``)."""
    return ",".join(f"{name}={level}" for name, level in features.items())


def exactly_once_tests(root: Path | None = None) -> tuple[str, ...]:
    """:data:`EXACTLY_ONCE_TESTS` with the glob patterns expanded under ``root`` (default: the
    current directory, the repository root), sorted; node ids (``::``) kept as they are."""
    base = root if root is not None else Path.cwd()
    selected: list[str] = []
    for pattern in EXACTLY_ONCE_TESTS:
        if "::" in pattern or not any(c in pattern for c in "*?["):
            selected.append(pattern)
        else:
            selected += sorted(p.relative_to(base).as_posix() for p in base.glob(pattern))
    return tuple(dict.fromkeys(selected))


def plan(
    versions: Sequence[str] = MATRIX_VERSIONS,
    tv2_versions: Sequence[str] = TV2_VERSIONS,
    *,
    root: Path | None = None,
) -> list[MatrixRun]:
    """The runs of the matrix, in order: the ``broker_matrix`` subset per release of
    ``versions``, then the exactly-once tests per release of ``tv2_versions`` on brokers
    formatted with :data:`TV2_FEATURES`.

    Args:
        versions: Kafka releases ``X.Y.Z`` of the ``broker_matrix`` runs.
        tv2_versions: Kafka releases ``X.Y.Z`` (4.0+) of the transactions-v2 runs.
        root: the repository root the exactly-once tests' patterns are expanded under
            (default: the current directory).
    """
    runs = [MatrixRun(v, MATRIX_PYTEST_ARGS) for v in versions]
    eo_tests = exactly_once_tests(root)
    runs += [MatrixRun(v, eo_tests, dict(TV2_FEATURES)) for v in tv2_versions]
    return runs


def run_matrix(
    versions: Sequence[str] | Sequence[MatrixRun], pytest_args: Sequence[str] = ()
) -> list[MatrixResult]:
    """Run each run, in order, from the current directory (the repository root).

    Args:
        versions: the runs (:func:`plan`), or Kafka releases ``X.Y.Z``, each then the
            ``broker_matrix`` subset with the release's default feature levels.
        pytest_args: appended to each run's selection.

    Returns:
        One :class:`MatrixResult` per run, in order.
    """
    results = []
    for item in versions:
        run = item if isinstance(item, MatrixRun) else MatrixRun(item, MATRIX_PYTEST_ARGS)
        env = dict(os.environ)
        env[KAFKA_VERSION_ENV] = run.version
        if run.features:
            env[KAFKA_FEATURES_ENV] = _features_text(run.features)
        else:
            env.pop(KAFKA_FEATURES_ENV, None)  # the release's defaults
        env["SPARK_KAFKA_PY_BROKER"] = "local"
        env.pop("KAFKA_BOOTSTRAP_SERVERS", None)  # it would bypass the chosen release
        cmd = [sys.executable, "-m", "pytest", *run.pytest_args, *pytest_args]
        print(f"=== {run.label}: {' '.join(cmd)}", flush=True)
        start = time.monotonic()
        code = subprocess.run(cmd, env=env, check=False).returncode
        results.append(
            MatrixResult(run.version, code, time.monotonic() - start, dict(run.features))
        )
    return results


def _releases(text: str | None) -> list[str]:
    return [v.strip() for v in (text or "").split(",") if v.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the process exit code (0: all runs passed)."""
    parser = argparse.ArgumentParser(
        prog="python -m spark_kafka_py.testing.matrix",
        description="Run the broker_matrix tests against several Kafka broker releases, and "
        "the exactly-once tests against brokers formatted with "
        f"{_features_text(TV2_FEATURES)} (default broker of the normal run: {KAFKA_VERSION}). "
        "With neither --versions nor --tv2-versions, every run; with one, only its runs.",
    )
    parser.add_argument(
        "--versions",
        default=None,
        help="comma-separated Kafka releases of the broker_matrix runs "
        f"(default: {','.join(MATRIX_VERSIONS)})",
    )
    parser.add_argument(
        "--tv2-versions",
        default=None,
        help="comma-separated Kafka releases (4.0+) of the exactly-once runs on brokers "
        f"formatted with {_features_text(TV2_FEATURES)} (default: {','.join(TV2_VERSIONS)})",
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args(argv)
    if args.versions is None and args.tv2_versions is None:
        runs = plan()
    else:
        runs = plan(_releases(args.versions), _releases(args.tv2_versions))
    results = run_matrix(runs, args.pytest_args)
    print("=== broker matrix")
    for r in results:
        status = "passed" if r.returncode == 0 else f"FAILED (pytest exit {r.returncode})"
        label = " ".join([r.version, _features_text(r.features)]).strip()
        print(f"Kafka {label:30} {status:28} {r.seconds:7.1f} s")
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
