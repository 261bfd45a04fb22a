"""``spark-kafka-py bench --master``: several masters are for the batch benchmark only
(refused before any broker starts), and each batch result then names its master."""

from __future__ import annotations

import argparse

import pytest

from benchmarks import cli
from benchmarks.harness import BenchResult


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    return parser.parse_args(["bench", *argv])


def test_default_master_is_local_2() -> None:
    assert _args("batch").master == "local[2]"


def test_several_masters_refused_for_other_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_broker(*_: object) -> None:
        raise AssertionError("a broker was started before the arguments were checked")

    monkeypatch.setattr(cli, "local_broker", no_broker)
    with pytest.raises(SystemExit, match="batch benchmark only"):
        cli.run(_args("batch", "stream", "--master", "local[2],standalone"))


def test_batch_cases_name_their_master_when_several() -> None:
    result = BenchResult("batch", "none", "pykafka", "kafka", 10, 1.0, 1.0, 2.0, {})
    assert cli._on_master([result], "local[2]", ["local[2]"])[0].case == "none"
    labelled = cli._on_master([result], "standalone", ["local[2]", "standalone"])
    assert labelled[0].case == "none, standalone"
    assert result.case == "none"  # a copy, not changed in place
