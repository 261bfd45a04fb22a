"""What the ``from_json`` tests of ``formats/json`` share: Spark's JSON form of a struct field,
Spark's own ``from_json`` over documents (the oracle), and a comparable form of rows.

The module-scoped ``utc_spark`` session fixture is in ``conftest.py`` beside this file.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def field(name: str, spark: object) -> dict[str, object]:
    """A nullable struct field of Spark type ``spark`` (a type name or a type's JSON), as
    ``StructField.jsonValue()`` writes it."""
    return {"name": name, "type": spark, "nullable": True, "metadata": {}}


def norm(value: Any) -> Any:
    """Comparable form: NaN as the string ``"NaN"``, aware datetimes as naive UTC, maps
    (pyarrow's lists of pairs) as dicts, -0.0 kept apart from 0.0."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if value == 0:
            return ("zero", math.copysign(1.0, value))
        return value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [norm(v) for v in value]
    return value


def spark_from_json(
    spark: SparkSession, schema: dict[str, object], docs: list[str | None], options: dict[str, str]
) -> list[Any]:
    """Spark's ``from_json(v, schema, options)`` over ``docs`` (a string column, in order):
    each row as :func:`norm` of its dict, None for a null struct."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    struct = StructType.fromJson(schema)
    df = spark.createDataFrame(list(enumerate(docs)), "i int, v string")
    rows = df.select("i", F.from_json("v", struct, options).alias("j")).collect()
    return [norm(r.j.asDict(recursive=True)) if r.j is not None else None for r in sorted(rows)]


def known_differences(cases: Sequence[tuple[str, dict[str, str], str]]) -> list[Any]:
    """The ``(doc, options, reason)`` parameters of a module's differences from Spark that are
    kept, each a strict xfail with its reason: such a test fails the day ours agrees."""
    return [
        pytest.param(d, o, r, marks=pytest.mark.xfail(strict=True, reason=r)) for d, o, r in cases
    ]
