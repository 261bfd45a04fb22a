"""``spark-kafka-py [COMMAND ...] --help`` prints plain text (issue 24: ``broker --help``
printed a docstring's Sphinx markup), and the top-level help names a source and a sink."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from spark_kafka_py import cli

#: reST/Sphinx markup: ``literal``, :role:`target`, a literal block's ``::``.
MARKUP = re.compile(r"``|:[a-z]+:`|::\s*$", re.MULTILINE)


def _commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every command path of ``parser``: (), ("broker",), ("broker", "start"), ..."""
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*prefix, name))


def _help(command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        cli.main([*command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_every_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    commands = list(_commands(cli.build_parser()))
    assert {("broker",), ("broker", "start"), ("demo",), ("bench",)} <= set(commands)
    for command in commands:
        text = _help(command, capsys)
        found = MARKUP.findall(text)
        assert not found, f"spark-kafka-py {' '.join(command)} --help has markup {found}:\n{text}"


def test_top_level_help_says_source_and_sink(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(_help((), capsys).split())
    assert "a Kafka source and sink for Apache Spark" in text
    assert "tools." not in text


def test_broker_help_says_how_to_create_a_topic(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(_help(("broker",), capsys).split())
    assert text.splitlines()[0].startswith("usage: spark-kafka-py broker")
    assert "spark-kafka-py broker start|stop|status: a local Kafka cluster" in text
    assert "spark-kafka-py topics create NAME" in text
