"""Spark's ``from_json`` as the oracle of timestamp, date and ``timestamp_ntz`` strings read
without a format (``DateTimeUtils.stringToTimestamp``, ``stringToDate``,
``stringToTimestampWithoutTimeZone`` and ``JacksonParser``'s fallbacks; ``formats/json/decode.py``).

Each string of :data:`STRINGS` goes, as ``{"t": s, "d": s, "i": 7}`` and ``{"n": s}``, through
``from_json`` in the test run's Spark session (``spark.sql.session.timeZone`` UTC) and through
our decoder (the default one, and one document alone by each path: compiled, pyarrow's reader,
per-row). Values are compared as integers (``unix_micros``, ``unix_date``), so years outside
Python's ``datetime`` (``+10000``, ``-0001``) are compared too. Expected values are Spark's.

A time without a date (``T03:04``, ``03:04:05``) is today's date in the string's zone (or the
``timeZone`` option's) for Spark: both sides read it within the same test, a few seconds apart.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from spark_kafka_py.formats.json.decode import JsonDecoder
from spark_kafka_py.formats.json.options import json_options
from tests.formats.json._helpers import field

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.integration

SCHEMA: dict[str, object] = {
    "type": "struct",
    "fields": [
        field("t", "timestamp"),
        field("d", "date"),
        field("i", "integer"),
        field("_corrupt_record", "string"),
    ],
}
NTZ_SCHEMA: dict[str, object] = {
    "type": "struct",
    "fields": [field("n", "timestamp_ntz"), field("_corrupt_record", "string")],
}

#: The strings, as JSON string contents (escapes allowed).
STRINGS = [
    # the date and time segments
    "2020", "2020-1", "2020-01", "2020-1-2", "2020-01-02", "2020-01-02 ", "2020-01-02T",
    "2020-01-02T03", "2020-01-02 3", "2020-01-02T03:04", "2020-01-02T3:4:5",
    "2020-01-02T03:04:05", "2020-01-02T03:04:05.", "2020-01-02T03:04:05.1",
    "2020-01-02T03:04:05.123456789", "2020-01-02T03:04:05.1234567891234",
    "2020-01-02 03:04:05.999999", "2020-01-02T03:", "2020-01-02T03:04:",
    # zones and offsets
    "2020-01-02T03:04:05Z", "2020-01-02T03:04:05 Z", "2020-01-02T03:04:05z",
    "2020-01-02T03Z", "2020-01-02T03:04Z", "2020-01-02T03:04+01:00", "2020-01-02Z",
    "2020-01-02T03:04:05+1", "2020-01-02T03:04:05+01", "2020-01-02T03:04:05+0130",
    "2020-01-02T03:04:05+01:30", "2020-01-02T03:04:05+1:30", "2020-01-02T03:04:05+01:3",
    "2020-01-02T03:04:05-08", "2020-01-02T03:04:05+18:00", "2020-01-02T03:04:05+19:00",
    "2020-01-02T03:04:05+01:30:15", "2020-01-02T03:04:05+013015", "2020-01-02T03:04:05+01:60",
    "2020-01-02T03:04:05UTC", "2020-01-02T03:04:05 UTC+1", "2020-01-02T03:04:05UTC+01:30",
    "2020-01-02T03:04:05 GMT-08:00", "2020-01-02T03:04:05UT-8", "2020-01-02T03:04:05 GMT",
    "2020-01-02T03:04:05 UT", "2020-07-02T03:04:05 Europe/Paris",
    "2020-07-02T03:04:05Europe/Paris", "2020-01-02T03:04:05 EST", "2020-07-02T03:04:05 PST",
    "2020-07-02T03:04:05 CET", "2020-01-02T03:04:05 utc", "2020-01-02T03:04:05 Etc/GMT+5",
    "2020-01-02T03:04:05 Nowhere/City", "2020-01-02T03:04:05 +01:00 ",
    "2020-01-02T03:04:05  UTC", "2020-01-02T03:04:05.123Z", "2020-01-02T03:04:05.123+01:00",
    "2020-01-02T03:04:05.123 UTC", "2020-01-02T03:04:05GMT", "2020-01-02GMT",
    "2020-01-02 03:04:05 GMT+01:00", "2020-01-02T03:04:05.1.2", "2020-01-02T03:04:05..1",
    "2020-01-02T03:04:05 +01:00 x", "2020-01-02T03:04:05 Z Z", "2020-01-02T03:04:05+1:3",
    "2020-01-02T03:04:05+01:3015", "2020-01-02T03:04:05+18:01", "2020-01-02T03:04:05UTCX",
    "2020-01-02T03:04:05UTC+", "2020-01-02T03:04:05A", "2020-01-02T03:04:05+\u0661",
    "2020-01-02T03:04:05 GMT0", "2020-01-02T03:04:05 Etc/../UTC",
    # a time without a date
    "T03:04", "T03:04:05", "03:04:05", "03:04", "3:04", "T3", " T03:04", "T03:04:05Z",
    "03:04:05+01:00", "03:04:05.5 UTC", "12",
    # years
    "+2020-01-02", "-2020-01-02", "0000-01-01", "0001-01-01T00:00:00", "10000-01-01",
    "+10000-01-01T00:00:00", "123456-01-01", "1234567-01-01", "-0001-12-31", "999-01-01",
    "00002-01-01", "+-2020-01-02", "294247-01-10T04:00:54.775807Z", "294248-01-01",
    "12345678-01-01", "+10000-07-01T00:00:00 Europe/Paris", "-0100-07-01T00:00:00 Europe/Paris",
    "10000-07-01T12:00:00", "-0100-07-01T12:00:00", "+100000-03-26T02:30:00 Europe/Paris",
    "2020-03-29T02:30:00 Europe/Paris", "2020-10-25T02:30:00 Europe/Paris",
    # impossible values
    "2020-02-30", "2020-01-02T24:00:00", "2020-01-02T23:60", "2020-01-02T03:04:60",
    "2020-13-01", "2020-00-01", "2020-01-00", "2020-001-01", "2020-01-02T003:04",
    "2020-01-02X03", "2020-01-02\\t03:04", "2020-01-02  03:04", "2020-01-02-03",
    # trimming
    "\\u00a02020-01-02", "2020-01-02\\u00a0", "\\u00002020-01-02", "2020-01-02\\u007f",
    "\\u001f2020-01-02", "\\u20032020-01-02", "\\u00852020-01-02", "\\u000b2020-01-02",
    "\\t2020-01-02T03:04:05\\n", "\\u30002020-01-02", "2020-01-02T03:04:05\\u00a0",
    "2020-01-02T03:04:05 \\u00a0UTC", "2020-01-02T03:04:05\\u0000",
    # non-ASCII digits
    "\\u0662\\u0660\\u0662\\u0660-01-02", "2020-01-0\\u0662", "2020-01-02T0\\u0663:04",
    # the date's extras and its fallback of days since the epoch
    "2020-01-02T", "2020-01-02 anything", "2020-01-02Tzzz", "2020-01-02x", "2020 01",
    "2020-01 x", "2020T", "18262", "-1", "+5", " 18262", "18262 ", "\\u0661\\u0662",
    "99999999999", "0x10", "", "2147483647", "2147483648", "-141427", "\uff11\uff12",
    # days before 1582-10-15, counted in the Julian calendar (Spark rebases them); 4 to 7
    # digits are a year (stringToDate), so leading zeros reach the days: the shifts' edges
    # from 0001-01-01, then dates converted one by one (29 February of the Julian year -100,
    # which the Gregorian calendar lacks, and of -400, which it has)
    "-00141428", "-00171595", "-00171596", "-00682945", "-00682946", "-00719164", "-00719165",
    "-00755996", "-00755995", "-00865571", "-10000000", "-2147483648", "-2147483649",
    "-\u0660\u0660\u0661\u0664\u0661\u0664\u0662\u0668",
]  # fmt: skip


def _docs(strings: list[str]) -> list[str | None]:
    return [f'{{"t": "{s}", "d": "{s}", "i": 7}}' for s in strings]


def _ntz_docs(strings: list[str]) -> list[str | None]:
    return [f'{{"n": "{s}"}}' for s in strings]


def _spark(
    spark: SparkSession, schema: dict[str, object], docs: list[str | None], options: dict[str, str]
) -> list[tuple[Any, ...]]:
    """Spark's rows as integers: (micros of ``t``, days of ``d``, ``i``, corrupt record), or
    (micros of ``n``, corrupt record) for :data:`NTZ_SCHEMA`."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    struct = StructType.fromJson(schema)
    df = spark.createDataFrame(list(enumerate(docs)), "k int, v string")
    j = F.from_json("v", struct, {"mode": "PERMISSIVE", **options})
    df = df.select("k", j.alias("j"))
    if schema is NTZ_SCHEMA:
        # timestamp_ntz -> timestamp in the session's zone (UTC): the local micros
        cols = [F.unix_micros(F.col("j.n").cast("timestamp")), F.col("j._corrupt_record")]
    else:
        cols = [
            F.unix_micros("j.t"),
            F.unix_date("j.d"),
            F.col("j.i"),
            F.col("j._corrupt_record"),
        ]
    rows = df.select("k", *cols).collect()
    return [tuple(r)[1:] for r in sorted(rows)]


def _ours(decoder: JsonDecoder, docs: list[str | None]) -> list[tuple[Any, ...]]:
    array = decoder.decode(pa.array(docs, pa.string()))
    columns = []
    for f in decoder.arrow_type:
        column = pc.struct_field(array, f.name)
        if pa.types.is_timestamp(f.type):
            column = column.cast(pa.int64())
        elif pa.types.is_date(f.type):
            column = column.cast(pa.int32())
        columns.append(column.to_pylist())
    return list(zip(*columns, strict=True))


def _compare(
    spark: SparkSession, schema: dict[str, object], docs: list[str | None], options: dict[str, str]
) -> list[Any]:
    theirs = _spark(spark, schema, docs, options)
    opts = json_options(options)
    diffs: list[Any] = []
    batch = _ours(JsonDecoder(schema, mode="PERMISSIVE", options=opts), docs)
    diffs += [("batch", d, t, o) for d, t, o in zip(docs, theirs, batch, strict=True) if t != o]
    for compiled in (True, False):
        alone = JsonDecoder(schema, mode="PERMISSIVE", options=opts, compiled=compiled)
        for doc, t in zip(docs, theirs, strict=True):
            (o,) = _ours(alone, [doc])
            if o != t:
                diffs.append(("alone" if compiled else "not compiled", doc, t, o))
    return diffs


@pytest.mark.parametrize("zone", [None, "America/Los_Angeles"])
def test_timestamp_and_date_strings(utc_spark: SparkSession, zone: str | None) -> None:
    options = {} if zone is None else {"timeZone": zone}
    docs = _docs(STRINGS)
    assert _compare(utc_spark, SCHEMA, docs, options) == []


def test_timestamp_ntz_strings(utc_spark: SparkSession) -> None:
    docs = _ntz_docs(STRINGS)
    assert _compare(utc_spark, NTZ_SCHEMA, docs, {}) == []


def test_compiled_batch_with_odd_strings(utc_spark: SparkSession) -> None:
    """A batch the compiled reader reads, a few odd strings among strict ones (declined rows
    go to the per-row path)."""
    strict = [f'{{"t": "2020-01-{d:02d}T03:04:05Z", "d": "2020-01-{d:02d}"}}' for d in range(1, 29)]
    odd = _docs(["2020-01-02T03", "\\u00a02020-01-02", "+10000-01-01", "2020-01-02T03:04Z"])
    docs = strict[:10] + odd[:2] + strict[10:] + odd[2:]
    assert _compare(utc_spark, SCHEMA, docs, {}) == []


def test_today(utc_spark: SparkSession) -> None:
    """The time-only strings are read on today's date (a sanity check of the oracle itself:
    Spark's value's date is today's in UTC)."""
    (row,) = _spark(utc_spark, SCHEMA, _docs(["T03:04:05"]), {})
    day = dt.datetime.fromtimestamp(row[0] / 1e6, dt.timezone.utc).date()
    assert abs((day - dt.datetime.now(dt.timezone.utc).date()).days) <= 1
