"""Whether PySpark finds ``format("pykafka")`` by itself, and what to tell the user when not.

PySpark registers a Python data source by itself when a top-level module named ``pyspark_*``
with a ``DefaultSource`` is on ``sys.path``: its look-up (``pyspark.sql.worker.
lookup_data_sources``, run in a Python worker whose working directory is the driver's) lists
modules with ``pkgutil.iter_modules``. Ours is ``pyspark_pykafka``. A wheel, ``pip install .``
and the README's editable install (``--config-settings editable_mode=compat``, which puts the
checkout itself on ``sys.path``) leave it where that scan sees it; setuptools' default editable
install (a plain ``pip install -e .``) serves the package through an import hook instead, the
scan does not see it, and every ``format("pykafka")`` fails with ``[DATA_SOURCE_NOT_FOUND]``
until ``spark_kafka_py.register(spark)`` registers the source in the session.
"""

from __future__ import annotations

import os
import pkgutil
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "AUTO_REGISTRATION_MODULE",
    "CHECKOUT_INSTALL",
    "NOT_FOUND_HINT",
    "REGISTERING_NOTE",
    "ensure_registered",
    "source_discoverable",
]

#: The README's command installing a source checkout (tests, demo, notebook), from its root.
CHECKOUT_INSTALL = 'python3 -m pip install -e ".[test,demo]" --config-settings editable_mode=compat'

#: The module PySpark's look-up must see (:mod:`pyspark_pykafka`).
AUTO_REGISTRATION_MODULE = "pyspark_pykafka"

#: What a user whose PySpark does not find the source can do (one line).
NOT_FOUND_HINT = (
    "PySpark does not find the pykafka data source by itself in this installation: its "
    "look-up scans sys.path for pyspark_* modules, and a plain editable install (pip install "
    '-e .) hides pyspark_pykafka from it, so format("pykafka") fails with '
    "[DATA_SOURCE_NOT_FOUND]. Call spark_kafka_py.register(spark) once in each session, or "
    f"reinstall the checkout from its root with: {CHECKOUT_INSTALL}"
)

#: Put before :data:`NOT_FOUND_HINT` by :func:`ensure_registered`.
REGISTERING_NOTE = "registering the pykafka data source with spark_kafka_py.register(spark): "


def source_discoverable() -> bool:
    """Whether PySpark's look-up of Python data sources finds ``pykafka`` by itself: a
    top-level :data:`AUTO_REGISTRATION_MODULE` on ``sys.path`` or in the working directory
    (the look-up's Python worker starts there), as ``pkgutil.iter_modules`` lists modules.

    Reads the file system only (no Spark session needed; a few ms). Never raises.
    """
    paths = [*sys.path, os.getcwd()]
    return any(m.name == AUTO_REGISTRATION_MODULE for m in pkgutil.iter_modules(paths))


def ensure_registered(spark: SparkSession, *, out: TextIO | None = None) -> bool:
    """Make ``format("pykafka")`` work in ``spark``: when :func:`source_discoverable` is false,
    print :data:`REGISTERING_NOTE` and :data:`NOT_FOUND_HINT` (one line, to ``out``, default
    ``sys.stderr``) and call :func:`spark_kafka_py.register`; otherwise do nothing
    (registering over the source PySpark found would only log a warning that it was replaced).

    Returns:
        Whether it registered the source.

    Raises:
        Whatever ``spark.dataSource.register`` raises (e.g. a stopped session).
    """
    if source_discoverable():
        return False
    from spark_kafka_py import register

    print(REGISTERING_NOTE + NOT_FOUND_HINT, file=out or sys.stderr, flush=True)
    register(spark)
    return True
