"""``spark_kafka_py.discovery``: whether PySpark's look-up sees ``pyspark_pykafka``, and the
hint with ``spark_kafka_py.register(spark)`` when it does not (issue 24: a plain editable
install answered ``[DATA_SOURCE_NOT_FOUND]`` with nothing pointing to ``register``)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import spark_kafka_py
from spark_kafka_py import discovery

ROOT = Path(__file__).resolve().parents[1]


class FakeRegistry:
    def __init__(self) -> None:
        self.registered: list[type] = []

    def register(self, source: type) -> None:
        self.registered.append(source)


class FakeSession:
    def __init__(self) -> None:
        self.dataSource = FakeRegistry()


def test_a_checkout_on_sys_path_is_discoverable() -> None:
    assert str(ROOT) in sys.path  # tests/conftest.py
    assert discovery.source_discoverable()


def _hidden(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As under a plain ``pip install -e .``: the package imports (an import hook), but no
    ``pyspark_pykafka`` is on ``sys.path`` or in the working directory."""
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(ROOT))])
    monkeypatch.chdir(tmp_path)


def test_hidden_source_is_registered_with_the_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _hidden(monkeypatch, tmp_path)
    assert not discovery.source_discoverable()
    spark = FakeSession()
    out = io.StringIO()
    assert discovery.ensure_registered(spark, out=out)  # type: ignore[arg-type]
    from spark_kafka_py.spark.source import PyKafkaDataSource

    assert spark.dataSource.registered == [PyKafkaDataSource]
    line = out.getvalue()
    assert line.count("\n") == 1
    assert "spark_kafka_py.register(spark)" in line
    assert "DATA_SOURCE_NOT_FOUND" in line
    assert line.rstrip().endswith(discovery.CHECKOUT_INSTALL)


def test_discoverable_source_is_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    spark = FakeSession()
    assert not discovery.ensure_registered(spark)  # type: ignore[arg-type]
    assert spark.dataSource.registered == []
    assert capsys.readouterr() == ("", "")


def test_the_install_command_is_the_readmes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert discovery.CHECKOUT_INSTALL in readme
    assert spark_kafka_py.register.__doc__
