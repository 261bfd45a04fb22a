"""``spark-kafka-py bench`` from a source checkout, and from an install without benchmarks/."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_kafka_py import cli
from spark_kafka_py.discovery import CHECKOUT_INSTALL

ROOT = Path(__file__).resolve().parents[2]


def test_checkout_is_found_beside_the_package() -> None:
    assert cli.source_checkout() == ROOT


def test_bench_without_a_checkout_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "source_checkout", lambda: None)
    assert cli.main(["bench", "batch", "--records", "10"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == cli.BENCH_NEEDS_CHECKOUT
    assert "source checkout" in err and "pip install -e" in err
    # the README's install command, which PySpark's look-up of pyspark_pykafka needs
    assert CHECKOUT_INSTALL in err and "editable_mode=compat" in CHECKOUT_INSTALL
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert CHECKOUT_INSTALL in readme
