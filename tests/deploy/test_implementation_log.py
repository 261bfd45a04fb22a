"""The record decoder and encoder say, once at import, which implementation they chose and,
for the pure one, why (what an executor's log shows when the package arrived without its
compiled extension, e.g. in a ``--py-files`` zip)."""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable
from typing import Any

import pytest

from spark_kafka_py.records import decoder, encoder

CHOOSERS: list[tuple[str, Callable[[], tuple[Any, str]]]] = [
    ("spark_kafka_py.records.decoder", decoder._choose),
    ("spark_kafka_py.records.encoder", encoder._choose_section_encoder),
]


@pytest.mark.parametrize(("logger", "choose"), CHOOSERS)
def test_forced_pure_names_the_variable(
    logger: str,
    choose: Callable[[], tuple[Any, str]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("SPARK_KAFKA_PY_PURE", "1")
    with caplog.at_level(logging.INFO, logger=logger):
        assert choose()[1] == "pure"
    assert [r.getMessage() for r in caplog.records if r.name == logger] == [
        f"record {logger.rsplit('.', 1)[1]}: pure (SPARK_KAFKA_PY_PURE is set)"
    ]


@pytest.mark.parametrize(("logger", "choose"), CHOOSERS)
def test_missing_extension_gives_the_import_error(
    logger: str,
    choose: Callable[[], tuple[Any, str]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("SPARK_KAFKA_PY_PURE", raising=False)
    real_import = builtins.__import__

    def no_accel(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "spark_kafka_py.records._accel":
            raise ImportError("No module named 'spark_kafka_py.records._accel' (test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_accel)
    with caplog.at_level(logging.INFO, logger=logger):
        assert choose()[1] == "pure"
    messages = [r.getMessage() for r in caplog.records if r.name == logger]
    assert len(messages) == 1
    assert messages[0].startswith(f"record {logger.rsplit('.', 1)[1]}: pure (")
    assert "spark_kafka_py.records._accel' (test)" in messages[0]


@pytest.mark.parametrize(("logger", "choose"), CHOOSERS)
def test_accel_is_named_when_built(
    logger: str,
    choose: Callable[[], tuple[Any, str]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import tests.records.accel  # noqa: F401  (required under CI=true, skipped elsewhere if unbuilt)

    monkeypatch.delenv("SPARK_KAFKA_PY_PURE", raising=False)
    with caplog.at_level(logging.INFO, logger=logger):
        assert choose()[1] == "accel"
    assert [r.getMessage() for r in caplog.records if r.name == logger] == [
        f"record {logger.rsplit('.', 1)[1]}: accel (spark_kafka_py.records._accel)"
    ]
