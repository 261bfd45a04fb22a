"""Shared pytest set-up: the real-broker / real-Spark fixtures of spark_kafka_py.testing."""

from __future__ import annotations

import sys
from pathlib import Path

# Importable from a plain checkout too (not only after `pip install -e .`).
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

pytest_plugins = ["spark_kafka_py.testing.fixtures"]
