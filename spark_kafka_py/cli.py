"""``spark-kafka-py``: the project's console script.

Subcommands live in their own modules; each module has ``add_parser(subparsers)``, which adds
its subparser and sets ``func`` (``(argparse.Namespace) -> int``, the exit code) with
``set_defaults(func=...)``. To add one, append its module to :data:`COMMAND_MODULES`.

    spark-kafka-py broker start [--brokers N]   # prints bootstrap servers
    spark-kafka-py broker status | stop
    spark-kafka-py registry start | status | stop  # prints the schema registry's URL
    spark-kafka-py topics create|list|describe|delete ...
    spark-kafka-py groups list|describe ...
    spark-kafka-py transactions list|describe ...
    spark-kafka-py demo ...
    spark-kafka-py bench ...                    # needs a source checkout

``bench`` runs the repository's ``benchmarks/`` package, which is not shipped in the wheel.
:func:`source_checkout` finds the repository as the directory holding the imported
``spark_kafka_py`` package when that directory also has ``pyproject.toml`` and
``benchmarks/cli.py`` (a plain checkout, or an editable install, whose package is the
checkout's own); the subcommand is then :data:`BENCH_MODULE`'s ``add_parser``, imported with
the checkout's root on ``sys.path``. From an installed wheel there is no such directory:
``bench`` is still listed, and running it exits with a message saying that the benchmarks
need a source checkout.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spark_kafka_py.discovery import CHECKOUT_INSTALL

__all__ = [
    "BENCH_MODULE",
    "BENCH_NEEDS_CHECKOUT",
    "COMMAND_MODULES",
    "DESCRIPTION",
    "build_parser",
    "main",
    "source_checkout",
]

#: Modules providing ``add_parser(subparsers)``, in the order shown by ``--help``. A module
#: that does not exist (yet) is left out; any other import error is raised.
COMMAND_MODULES: list[str] = [
    "spark_kafka_py.testing.cli_broker",
    "spark_kafka_py.testing.cli_registry",
    "spark_kafka_py.admin_cli",
    "spark_kafka_py.demo",
]

#: The module of ``spark-kafka-py bench`` in a source checkout (``benchmarks/cli.py``).
BENCH_MODULE = "benchmarks.cli"

#: Why ``bench`` cannot run from an installed wheel, and what to do instead: the README's
#: install command (:data:`spark_kafka_py.discovery.CHECKOUT_INSTALL`).
BENCH_NEEDS_CHECKOUT = (
    "spark-kafka-py bench runs the benchmarks of a source checkout (benchmarks/ is not part of "
    "the installed package): clone the spark-kafka-py repository and install it from its root "
    f"as the README says, {CHECKOUT_INSTALL} (add bench to the extras for the peers "
    "confluent-kafka and kafka-python), then run spark-kafka-py bench again."
)

#: The top-level ``--help`` description (plain text: argparse prints it as it is).
DESCRIPTION = (
    "spark-kafka-py: a Kafka source and sink for Apache Spark, written in Python "
    '(format("pykafka")). This console script starts a local Kafka broker; creates, lists, '
    "describes and deletes topics and describes consumer groups and transactions as Kafka's "
    "own tools do; runs the demo job and, from a source checkout, the benchmarks."
)


def source_checkout() -> Path | None:
    """The repository root when ``spark_kafka_py`` is imported from a source checkout, else
    ``None`` (see the module docstring)."""
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "benchmarks" / "cli.py").is_file():
        return root
    return None


def _add_bench_parser(subparsers: Any) -> None:
    root = source_checkout()
    if root is not None:
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        importlib.import_module(BENCH_MODULE).add_parser(subparsers)
        return
    parser = subparsers.add_parser(
        "bench", help="benchmarks (needs a source checkout)", description=BENCH_NEEDS_CHECKOUT
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=_bench_needs_checkout)


def _bench_needs_checkout(args: argparse.Namespace) -> int:
    print(BENCH_NEEDS_CHECKOUT, file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="spark-kafka-py",
        description=DESCRIPTION,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.add_parser(subparsers)
    _add_bench_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the subcommand, return its exit code."""
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
