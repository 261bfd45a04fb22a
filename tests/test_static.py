"""Static checks as part of the test command: ruff (lint and format) and mypy.

Each runs as ``python -m <tool>`` from the repository root with the configuration in
``pyproject.toml`` (``[tool.ruff]``, ``[tool.mypy]``: the package and ``benchmarks/``); a
finding fails the test with the tool's output. mypy keeps its cache in ``.mypy_cache``: 15-50 s
on a cold cache (machine load), under 1 s warm; each ruff run takes well under a second.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"`{' '.join(args)}` exited {proc.returncode}:\n{proc.stdout}{proc.stderr}",
            pytrace=False,
        )


def test_ruff_check() -> None:
    _run("ruff", "check", ".")


def test_ruff_format() -> None:
    _run("ruff", "format", "--check", ".")


def test_mypy() -> None:
    _run("mypy")
