"""Fixtures of the ``formats/json`` tests: a Spark session in UTC for the oracle modules."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="module")
def utc_spark(spark: SparkSession) -> Iterator[SparkSession]:
    """The test run's shared session with ``spark.sql.session.timeZone`` UTC for the module (its
    own value restored after). The Python process's TZ is UTC meanwhile, so ``collect()``'s
    naive datetimes are UTC."""
    old_tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        yield spark
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
        if old_tz is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old_tz
        time.tzset()
