"""``formats/ddl.py`` against Spark's own DDL parser (``StructType.fromDDL`` on the shared
``spark`` fixture): each text's JSON must equal what Spark parses it to; texts Spark refuses
must be refused here too (and a few Spark reads that are outside our grammar are refused
with a named position, listed separately)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spark_kafka_py.formats.ddl import DdlError, parse_ddl, parse_schema_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TEXTS = [
    "a INT",
    "a INT, b STRUCT<c: STRING>",
    "a integer, b bigint, c long, d smallint, e short, f tinyint, g byte",
    "a DOUBLE, b FLOAT, c REAL, d BOOLEAN, e BINARY, f DATE, g TIMESTAMP, h TIMESTAMP_NTZ",
    "a timestamp_ltz",
    "d DECIMAL(10, 2), e DECIMAL, f DECIMAL(5), g dec(38,38), h numeric(1,0)",
    "xs ARRAY<INT>, m MAP<STRING, ARRAY<STRUCT<x: LONG, y: DOUBLE>>>",
    "s STRUCT<a: INT, b STRUCT<c: ARRAY<MAP<STRING, BOOLEAN>>>>",
    "s STRUCT<a INT, b STRING>",
    "s struct<>",
    "`weird name` INT, `back``tick` STRING, `a.b` LONG",
    "a INT NOT NULL, b STRING COMMENT 'the b', c LONG NOT NULL COMMENT \"it's c\"",
    "s STRUCT<a: INT NOT NULL COMMENT 'inner', b: STRING>",
    "a STRING COMMENT 'tab\\tnewline\\nquote\\'backslash\\\\'",
    "  a   INT ,b\tSTRING\n,c LONG  ",
    "1a INT, _b STRING",
    "MiXeD InT, UPPER STRING",
    "struct STRING, array INT, map LONG",
    "m MAP<INT, STRING>",
    "a ARRAY<ARRAY<ARRAY<INT>>>",
]

REFUSED = [
    "",
    "a",
    "a INT,",
    "a INT b",
    "a NOTATYPE",
    "a ARRAY<INT",
    "a MAP<STRING>",
    "a DECIMAL(39, 0)",
    "a DECIMAL(5, 6)",
    "a INT NOT",
    "a INT COMMENT 5",
    "`unclosed INT",
    "a STRUCT<b: INT,>",
    "123 LONG",
]


def _spark_json(spark: SparkSession, text: str) -> object:
    from pyspark.sql.types import StructType

    return json.loads(StructType.fromDDL(text).json())


@pytest.mark.parametrize("text", TEXTS)
def test_equals_sparks_parser(spark: SparkSession, text: str) -> None:
    assert parse_ddl(text) == _spark_json(spark, text)


@pytest.mark.parametrize("text", REFUSED)
def test_refused_as_spark_refuses(spark: SparkSession, text: str) -> None:
    from pyspark.errors import PySparkException

    with pytest.raises(DdlError):
        parse_ddl(text)
    if text:  # Spark's fromDDL("") is an empty struct; ours asks for a schema
        with pytest.raises((PySparkException, ValueError)):
            _from_ddl(text)


def _from_ddl(text: str) -> object:
    from pyspark.sql.types import StructType

    return StructType.fromDDL(text)


def test_struct_form_equals_field_list(spark: SparkSession) -> None:
    assert parse_ddl("STRUCT<a: INT, b: STRING>") == _spark_json(spark, "a INT, b STRING")


def test_schema_text_takes_structtype_json(spark: SparkSession) -> None:
    from pyspark.sql.types import StructType

    for text in TEXTS[:8]:
        printed = StructType.fromDDL(text).json()
        assert parse_schema_text(printed) == json.loads(printed)
        assert parse_schema_text(text) == json.loads(printed)


def test_refusals_name_the_position() -> None:
    with pytest.raises(DdlError) as info:
        parse_ddl("a INT, b VARIANTX")
    assert info.value.position == 9
    assert "VARIANTX" in str(info.value)
    with pytest.raises(DdlError, match="not valid JSON"):
        parse_schema_text("{nope")
    with pytest.raises(DdlError, match="not a struct"):
        parse_schema_text('{"type": "array", "elementType": "integer", "containsNull": true}')


def test_bounded() -> None:
    deep = "a " + "ARRAY<" * 200 + "INT" + ">" * 200
    with pytest.raises(DdlError, match="nested deeper"):
        parse_ddl(deep)
    with pytest.raises(DdlError, match="characters"):
        parse_ddl("a INT, " * 200_000)
