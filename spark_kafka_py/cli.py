"""``spark-kafka-py``: the project's console script.

Subcommands live in their own modules; each module has ``add_parser(subparsers)``, which adds
its subparser and sets ``func`` (``(argparse.Namespace) -> int``, the exit code) with
``set_defaults(func=...)``. To add one, append its module to :data:`COMMAND_MODULES`.

    spark-kafka-py broker start [--brokers N]   # prints bootstrap servers
    spark-kafka-py broker status | stop
    spark-kafka-py demo ...
    spark-kafka-py bench ...
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMAND_MODULES", "build_parser", "main"]

#: Modules providing ``add_parser(subparsers)``, in the order shown by ``--help``. A module
#: that does not exist (yet) is left out; any other import error is raised.
COMMAND_MODULES: list[str] = [
    "spark_kafka_py.testing.cli_broker",
    "spark_kafka_py.demo",
    "spark_kafka_py.bench",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="spark-kafka-py",
        description="A Kafka source for Apache Spark written in Python: tools.",
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the subcommand, return its exit code."""
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
