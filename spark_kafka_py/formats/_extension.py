"""Loading a format's compiled twin (the accelerated extension beside its pure reference).

The formats' pure-Python decoders and encoders keep a compiled twin (``_accel``,
``_encode_accel``; Cython) that gives the same rows or bytes; each loads it once, at import,
with :func:`load_extension`. As in
``records/``, the environment variable ``SPARK_KAFKA_PY_PURE`` (any value but empty or
``0``) keeps the pure path.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["load_extension"]


def load_extension(name: str) -> ModuleType | None:
    """The compiled module ``name`` (dotted, e.g.
    ``"spark_kafka_py.formats.avro._encode_accel"``), or None: not built (its import raises
    ImportError), or ``SPARK_KAFKA_PY_PURE`` set. Raises nothing else of its own."""
    if os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
