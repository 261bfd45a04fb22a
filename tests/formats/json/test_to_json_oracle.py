"""Spark's ``to_json`` as the oracle of ``formats/json/encode.py``: each expression of
:data:`EXPRESSIONS` is evaluated by Spark 4.3 (the shared session, ``spark.sql.session.timeZone``
UTC; Europe/Paris for the one documented difference); its ``to_json`` text is compared with what our
:class:`JsonEncoder` writes from the same column as PySpark hands it over in Arrow
(``DataFrame.toArrow``), byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonSchemaError
from spark_kafka_py.formats.json.encode import JsonEncoder

# to_json in a real local Spark is the oracle
pytestmark = pytest.mark.integration

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXPRESSIONS = [
    # timestamps and dates
    "named_struct('ts', timestamp'2026-11-27 12:00:00', 'ts2', timestamp'2026-11-27 "
    "12:00:00.123456', 'ts3', timestamp'0001-01-01 00:00:00', 'ts4', timestamp'1969-12-31 "
    "23:59:59.999999', 'ts5', timestamp'9999-12-31 23:59:59.999999')",
    "named_struct('ntz', timestamp_ntz'2026-11-27 12:00:00.5', 'ntz2', timestamp_ntz'1900-01-01 "
    "00:00:00')",
    "named_struct('d', date'2026-01-02', 'd0', date'0001-01-01', 'd9', date'9999-12-31', "
    "'ad', array(date'2020-02-29', null))",
    # numbers
    "named_struct('db', array(1.0D, 1e20D, 1e-5D, 123456789.0D, 1e7D, 9999999.0D, 1e-3D, "
    "0.00099D, -0.0D, 0.0D, double('NaN'), double('Infinity'), double('-Infinity'), "
    "1.7976931348623157E308D, 0.1D, 1.0E-4D, -2.5D, 3.141592653589793D))",
    "named_struct('fl', array(cast(1.1 as float), cast(1e10 as float), float('NaN'), "
    "cast(3.4028235E38 as float), cast(1e-7 as float), cast(-0.0 as float), cast(0.3 as float), "
    "cast(16777217 as float), cast(1.0E-3 as float), float('-Infinity')))",
    "named_struct('a', cast(1.50 as decimal(5,2)), 'b', cast(0.0000001 as decimal(10,7)), "
    "'c', cast(100 as decimal(10,0)), 'd', cast(-0.01 as decimal(4,2)), 'e', cast(0 as "
    "decimal(10,8)), 'f', cast(1e-7 as decimal(20,10)), 'g', cast(12345678901234567890.12 as "
    "decimal(38,2)), 'h', cast(0.000001 as decimal(10,6)), 'i', cast(-99.9 as decimal(3,1)))",
    "named_struct('bt', cast(5 as tinyint), 'sh', cast(-7 as smallint), 'i', -2147483648, "
    "'l', 9223372036854775807L, 'b', true, 'f', false)",
    # strings and binary
    "named_struct('s', concat('a\"b\\\\c/', char(0), char(1), char(8), char(9), char(10), "
    "char(11), char(12), char(13), char(27), char(31), char(127), 'é€', '\\u2028', '😀', "
    "'\\u00ad'), 'e', '', '`k\"ey', 'v')",
    "named_struct('bin', X'00FF10', 'bin0', X'', 'bin2', X'FBFF')",
    # nulls, nesting, maps
    "named_struct('nul', cast(null as int), 'arr', array(1, null, 3), 'm', map('k', 1, 'n', "
    "cast(null as int)), 'st', named_struct('x', cast(null as string)), 'ea', "
    "cast(array() as array<int>), 'es', named_struct('x', named_struct('y', cast(null as int))))",
    "named_struct('mi', map(1, 'a', 2, 'b'), 'ml', map(5000000000L, true), 'mb', map(true, 1), "
    "'md', map(1.5D, 1, 1e20D, 2), 'mf', map(cast(0.1 as float), 1), 'mn', map('x', "
    "array(named_struct('a', 1))))",
    "array(named_struct('a', 1), null, named_struct('a', cast(null as int)))",
    # (a null struct value of a map: PySpark's toArrow cannot convert it, so not here)
    "map('a', named_struct('b', 2), 'c', named_struct('b', cast(null as int)))",
    "array(1, 2)",
    "array(array(1), array(), cast(null as array<int>))",
    "cast(null as struct<a:int>)",
    "named_struct('deep', array(map('k', array(named_struct('t', timestamp'2020-01-01 "
    "00:00:00.001', 'n', cast(null as string))))))",
]


@pytest.fixture(scope="module")
def utc_spark(spark: SparkSession) -> Iterator[SparkSession]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        yield spark
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def _both(spark: SparkSession, expression: str) -> tuple[list[bytes | None], list[bytes | None]]:
    df = spark.sql(f"SELECT {expression} AS v, to_json({expression}) AS j")
    arrow = df.select("v").toArrow()
    want = [None if r.j is None else r.j.encode() for r in df.select("j").collect()]
    column = arrow.column("v")
    got = JsonEncoder(column.type).encode(column)
    return got, want


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_bytes_equal_to_json(utc_spark: SparkSession, expression: str) -> None:
    got, want = _both(utc_spark, expression)
    assert got == want


def test_other_session_zone_same_instants(spark: SparkSession) -> None:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Europe/Paris")
    try:
        got, want = _both(
            spark,
            "named_struct('w', timestamp'2026-01-15 12:00:00', 's', timestamp'2026-07-15 "
            "12:00:00', 'ntz', timestamp_ntz'2026-07-15 12:00:00')",
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    # ours: UTC (PySpark's Arrow timestamps are UTC); Spark: the session zone; same instants
    assert got == [
        b'{"w":"2026-01-15T11:00:00.000Z","s":"2026-07-15T10:00:00.000Z",'
        b'"ntz":"2026-07-15T12:00:00.000"}'
    ]
    assert want == [
        b'{"w":"2026-01-15T12:00:00.000+01:00","s":"2026-07-15T12:00:00.000+02:00",'
        b'"ntz":"2026-07-15T12:00:00.000"}'
    ]


def test_refused_types_name_the_path() -> None:
    with pytest.raises(JsonSchemaError, match="structs, maps and arrays"):
        JsonEncoder(pa.int32())
    with pytest.raises(JsonSchemaError, match=r"internal form.*\(at /m/key\)"):
        JsonEncoder(pa.struct([("m", pa.map_(pa.date32(), pa.int32()))]))
    with pytest.raises(JsonSchemaError, match=r"\(at /a/element\)"):
        JsonEncoder(pa.struct([("a", pa.list_(pa.duration("us")))]))
