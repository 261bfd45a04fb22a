"""Spark's ``from_json`` as the oracle of ``decimal(p,s)``, ``binary`` and ``timestamp_ntz``
fields and of the ``timestampNTZFormat`` option (``formats/json/decode.py``).

The documents of :data:`DOCS` go through ``from_json(v, SCHEMA, {"mode": "PERMISSIVE",
**options})`` in the test run's Spark session (``spark.sql.session.timeZone`` UTC, as
``conftest.py``'s ``utc_spark`` sets it) and through our :func:`decode_json` with the same
options, in one batch and each alone: rows must be equal, corrupt records included. Then
``FAILFAST``: Spark fails the query on a document exactly when we raise. Expected values are
Spark's, never ours.

What Spark 4.3 does, as measured here: a decimal from a number or a string (commas removed,
then ``BigDecimal``'s grammar) rounded half up to the scale, a bad value when more digits
than the precision remain; binary as Jackson's base64 (padding required, whitespace only
between quads, a double-quoted string ending one character into a quad or after a single ``=``
makes the whole document malformed, a single-quoted one is a bad value); ``timestamp_ntz``
from ``stringToTimestampWithoutTimeZone``'s forms or ``timestampNTZFormat``, a zone refused,
no fallback, numbers refused. A number token of
more than 1000 digits as Jackson counts them (``maxNumberLength``) makes the document
malformed wherever it stands (:data:`LONG_NUMBER_DOCS`).

Differences kept (strict xfails, :data:`KNOWN_DIFFERENCES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonDecodeError
from spark_kafka_py.formats.json.decode import JsonDecoder, decode_json
from spark_kafka_py.formats.json.options import json_options
from tests.formats.json._helpers import field, known_differences, norm, spark_from_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.integration


def _struct(*fields: dict[str, object]) -> dict[str, object]:
    return {"type": "struct", "fields": list(fields)}


SCHEMA: dict[str, object] = _struct(
    field("d", "decimal(5,2)"),
    field("big", "decimal(38,0)"),
    field("frac", "decimal(10,10)"),
    field("b", "binary"),
    field("t", "timestamp_ntz"),
    field("i", "integer"),
    field("a", {"type": "array", "elementType": "decimal(3,1)", "containsNull": True}),
    field("ab", {"type": "array", "elementType": "binary", "containsNull": True}),
    field(
        "m",
        {"type": "map", "keyType": "string", "valueType": "binary", "valueContainsNull": True},
    ),
    field(
        "mt",
        {
            "type": "map",
            "keyType": "string",
            "valueType": "timestamp_ntz",
            "valueContainsNull": True,
        },
    ),
    field(
        "s",
        _struct(
            field("t", "timestamp_ntz"),
            field("b", "binary"),
            field("d", "decimal(3,1)"),
            field("i", "integer"),
        ),
    ),
    field("_corrupt_record", "string"),
)

_DECIMAL_VALUES = [
    "1", "1.005", "1.004", "-1.005", "0.005", "-0.005", "0.001", "-0.001", "-0.0", "999.994",
    "999.995", "1000", "1e2", "1E-3", "5e-3", "1e-1000", "1e-100000", "1e-700000000",
    "1e2147483648", "1e1000", "NaN", "Infinity", "-Infinity", "true", "[1]", "{}", "null",
    '"1.5"', '"+1.5"', '".5"', '"5."', '"1e+2"', '"1E2"', '"1,0.5"', '"1,,2"', '"-,1"',
    '"1,.5"', '"12,34,5"', '"1,000.5"', '"\\u0661\\u0662"', '"\\uff11"', '"0e-700000000"',
    '"1e-100000"', '","', '""', '" 1.5 "', '"\\t1.5"', '"1.5\\n"', '"1_000"', '"0x10"',
    '"NaN"', '"Infinity"', '"."', '"-"', '"e5"', '"1.5d"', '"1e12345678901"',
    '"1e00000000000000000002"', '"-0"', "'1.5'",
]  # fmt: skip
_BIG_VALUES = [
    "9" * 38, "1" + "0" * 38, "0.5", "1.5", "2.5", "-2.5", '"2.5"', "1e38", "9.9e37",
    "12345678901234567890.5", '"99999999999999999999999999999999999999.4"',
]  # fmt: skip
_FRAC_VALUES = ["0.12345678905", "1", "0.99999999999", "0.999999999949", "-0.00000000005"]
_BASE64 = [
    "QUJD", "QUI=", "QQ==", "", "//8=", "+/+/", "QQ==QUJD", "QUI=QUJD", " QUJD", "QUJD ",
    "QUJD  QUJD", "\\nQUJD\\r\\n", "\\tQUJD", "QUJ\\u0044", "QQ\\u003d\\u003d", "QR==",
    "QUF=", "QUI", "QQ", "QU JD", "QU\\tJD", "-_-_", "QUJD=", "====", "Q===", "QQ=A", "Q=",
    "Q!JD", "Q\\u00e9\\u00e9=", "\\u003dQUJD", 'Q\\"', "QUJDQU", "QUJDQUI", "Q", "QQ=",
    "QQ\\u003d", "QUJDQ", "QUJD\\/",
]  # fmt: skip
_NTZ = [
    "2020-01-02T03:04:05", "2020-01-02 03:04:05.123456789", "2020-01-02T03:04:05.1",
    "2020-01-02T03:04:05.", "2020-01-02T03:04", "2020-01-02T03", "2020-01-02T3:4",
    "2020-1-2 3:4:5", "2020-01-02", "2020-01", "2020", "+2020-01-02", " 2020-01-02T03:04:05 ",
    "2020-01-02 ", "0001-01-01T00:00:00", "9999-12-31T23:59:59.999999", "1582-10-10T00:00:00",
    "2020-01-02T03:04:05Z", "2020-01-02T03:04:05 Z", "2020-01-02T03:04:05+01:00",
    "2020-01-02T03:04:05 +01:00", "2020-01-02T03:04:05-0800", "2020-01-02T03:04:05+1",
    "2020-01-02T03:04:05 UTC", "2020-01-02T03:04:05GMT", "2020-01-02 03:04:05GMT+01:00",
    "2020-01-02T03:04:05 Europe/Paris", "T03:04:05", "03:04:05", "2020-01-02T",
    "2020-01-02X03:04:05", "2020-01-02\\t03:04:05", "2020-02-30T00:00:00",
    "2020-01-02T24:00:00", "2020-01-02T03:04:60", "\\u00a02020-01-02", "\\u0662020-01-02",
    "", "2020/01/02 03:04", "02.01.2020", "03:04", "2020-01-02 03:04:05.1234",
    "20200102030405", "2020-01-02 03:04 PM",
]  # fmt: skip

DOCS: list[str | None] = [
    *(f'{{"d": {v}, "i": 7}}' for v in _DECIMAL_VALUES),
    *(f'{{"i": 7, "big": {v}}}' for v in _BIG_VALUES),
    *(f'{{"frac": {v}, "i": 7}}' for v in _FRAC_VALUES),
    *(f'{{"b": "{v}", "i": 7}}' for v in _BASE64),
    *(f'{{"i": 7, "b": "{v}"}}' for v in _BASE64),
    *(f'{{"b": {v}, "i": 7}}' for v in ("123", "true", '["QQ=="]', "{}", "null", "'QQ=='")),
    # single-quoted: Jackson decodes the string's whole text, every error a bad value
    *(f"{{'b': '{v}', 'i': 7}}" for v in _BASE64),
    *(f'{{"i": 7, "b": \'{v}\'}}' for v in ("Q", "QQ=", "QUJDQ", "QUJD")),
    "{'ab': ['QQ==', 'Q'], 'i': 7}",
    "{'m': {'k': 'QQ=', 'j': 'QQ=='}, 'i': 7}",
    "{'s': {'b': 'Q', 'i': 1}, 'i': 7}",
    "{'t': 'QQ=', 'd': 'Q', 'i': 7}",
    *(f'{{"t": "{v}", "i": 7}}' for v in _NTZ),
    *(f'{{"t": {v}, "i": 7}}' for v in ("1577934245", "-1", "1.5", "true", '["2020"]', "{}")),
    # raw control characters: skipped by the base64 decoder before a quad and at the end; a
    # bad value inside a quad (then none may follow); malformed in any other string
    '{"b": "QUJD\t", "i": 7}',
    '{"b": "\tQUJD\t", "i": 7}',
    '{"b": "QUJD\x01\nQUI=\r", "i": 7}',
    '{"b": "QU\tJD", "i": 7}',
    '{"b": "Q!J\tD", "i": 7}',
    '{"b": "QUJD\tQ!JD", "i": 7}',
    '{"b": "QUJD\t\\u0041", "i": 7}',
    '{"b": "Q\t", "i": 7}',
    '{"i": 7, "zz": "a\tb"}',
    '{"b": "QUJD\t", "zz": "a\tb", "i": 7}',
    '{"b": "QUJD\t", "b": "QQ==\t", "i": 7}',
    '{"ab": ["QQ==\n", "\tQUI="], "m": {"k": "QQ==\r"}, "i": 7}',
    '{"s": {"b": "a\tb", "i": 1}, "i": 7}',
    '{"s": {"b": "QQ==\t", "t": "2020-01-02\t"}, "i": 7}',
    '{"t": "2020-01-02\t", "i": 7}',
    '{"b": "\t\\ud83d\\ude00", "i": 7}',
    # in containers: a bad element makes an array or map null, a struct keeps the rest
    '{"a": [1.25, 2, null], "ab": ["QQ==", null, ""], "m": {"k": "QQ==", "e": ""}, '
    '"mt": {"k": "2020-01-02 03:04"}, "s": {"t": "2020-01-02", "b": "QUI=", "d": 1.25, "i": 1}}',
    '{"a": [1000, 2], "i": 7}',
    '{"ab": ["QQ==", "!"], "i": 7}',
    '{"ab": ["QQ==", "Q"], "i": 7}',
    '{"i": 7, "ab": ["Q", ""]}',
    '{"m": {"k": "!", "j": "QQ=="}, "i": 7}',
    '{"m": {"k": "QQ=", "j": "QQ=="}, "i": 7}',
    '{"mt": {"k": "x", "j": "2020-01-02"}, "i": 7}',
    '{"s": {"t": "2020-01-02Z", "b": "QQ==", "d": 1, "i": 1}, "i": 7}',
    '{"s": {"t": "2020-01-02", "b": "!", "d": 100, "i": 1}, "i": 7}',
    '{"s": {"i": 1, "b": "Q"}, "i": 7}',
    # several bad fields: each field null, the row bad once
    '{"d": "x", "b": "QUI", "t": 5, "i": 7}',
    # a key given twice
    '{"d": 1, "d": "x", "i": 7}',
    '{"b": "QQ==", "b": "QUI", "i": 7}',
    None,
    "",
]


def _z(n: int) -> str:
    return "0" * n


def _straddling(number: str, at: int, pad: str = "a") -> str:
    """A document whose ``number`` (for ``big``) starts at UTF-16 unit ``at``, after a string
    field not in the schema padded with ``pad`` (one or two UTF-16 units each)."""
    head, middle = '{"p": "', '", "i": 7, "big": '
    units = at - len(head) - len(middle)
    width = len(pad.encode("utf-16-le")) // 2
    return head + "a" * (units % width) + pad * (units // width) + middle + number + "}"


#: Numbers around Jackson's ``maxNumberLength`` (1000 digits): integer, fraction and exponent
#: digits added; an absent part counts 0 on the parser's fast path (a number not starting with
#: 0, ending in the input buffer of 4000 UTF-16 units where it starts), -1 on its other path.
LONG_NUMBER_DOCS: list[str | None] = [
    '{"i": 7, "d": 1' + _z(1000) + "}",
    '{"i": 7, "d": 1' + _z(999) + "}",
    '{"i": 7, "d": -1' + _z(1000) + "}",
    '{"i": 7, "d": -1' + _z(999) + "}",
    '{"i": 7, "big": 1.' + _z(999) + "}",
    '{"i": 7, "big": 1.' + _z(1000) + "}",
    '{"i": 7, "big": -1.' + _z(1000) + "}",
    '{"i": 7, "big": 0.' + _z(1000) + "}",
    '{"i": 7, "big": 0.' + _z(1001) + "}",
    '{"i": 7, "big": -0.' + _z(999) + "5}",
    '{"i": 7, "big": 0.5' + _z(1000) + "}",
    '{"i": 7, "big": 1e' + _z(998) + "1}",
    '{"i": 7, "big": 1e' + _z(999) + "1}",
    '{"i": 7, "big": 1E+' + _z(998) + "1}",
    '{"i": 7, "big": 1e-' + _z(999) + "1}",
    '{"i": 7, "big": 0e' + _z(999) + "1}",
    '{"i": 7, "big": 0e' + _z(1000) + "1}",
    '{"i": 7, "big": 1' + _z(498) + "e" + _z(500) + "1}",
    '{"i": 7, "big": 1' + _z(499) + "e" + _z(500) + "1}",
    '{"i": 7, "big": 1.' + _z(498) + "e" + _z(500) + "1}",
    '{"i": 7, "big": 1.' + _z(499) + "e" + _z(500) + "1}",
    '{"i": 7, "big": 0.' + _z(499) + "e" + _z(499) + "1}",
    '{"i": 7, "big": 0.' + _z(500) + "e" + _z(499) + "1}",
    '{"i": 7, "zz": 1' + _z(1000) + "}",
    '{"i": 7, "zz": [0.5, {"q": 1.' + _z(1000) + "}]}",
    '{"i": 7, "d": "1' + _z(1000) + '"}',
    '{"i": 7, "s": {"d": 1' + _z(999) + "}}",
    # the parser's input buffer: a number ending (with the character after it) past unit
    # 4000 is counted the other way
    *(_straddling("1." + _z(1000), at) for at in (2990, 2997, 2998, 3999, 4000, 6997, 6998)),
    *(_straddling("1." + _z(1000), at, "\U0001f600") for at in (2997, 2998, 6997)),
    *(_straddling("1." + _z(1000), at, "\u00e9") for at in (2997, 2998)),
    _straddling("1" + _z(1000), 3500),
    _straddling("1e" + _z(1000), 3500),
]


def _theirs(spark: SparkSession, docs: list[str | None], options: dict[str, str]) -> list[Any]:
    return spark_from_json(spark, SCHEMA, docs, {"mode": "PERMISSIVE", **options})


def _ours_rows(array: pa.Array) -> list[Any]:
    """Our rows as :func:`norm` of Spark's (maps as dicts)."""
    return [norm(row) for row in array.to_pylist(maps_as_pydicts="strict")]


def _compare(theirs: list[Any], docs: list[str | None], options: dict[str, str]) -> list[Any]:
    """The differences between Spark's rows and ours, decoded in one batch and each alone."""
    opts = json_options(options)
    diffs = []
    batch = _ours_rows(decode_json(pa.array(docs), SCHEMA, mode="PERMISSIVE", options=opts))
    diffs += [("batch", d, t, o) for d, t, o in zip(docs, theirs, batch, strict=True) if t != o]
    no_corrupt = _struct(*SCHEMA["fields"][:-1])  # type: ignore[index]
    alone = JsonDecoder(no_corrupt, mode="PERMISSIVE", options=opts)
    for doc, t in zip(docs, theirs, strict=True):
        if t is not None and t["_corrupt_record"] is not None:
            continue  # a bad row: its partial row is compared by the batch
        (o,) = _ours_rows(alone.decode(pa.array([doc], pa.string())))
        expected = None if t is None else {k: v for k, v in t.items() if k != "_corrupt_record"}
        if o != expected:
            diffs.append(("alone", doc, expected, o))
    return diffs


def test_defaults(utc_spark: SparkSession) -> None:
    theirs = _theirs(utc_spark, DOCS, {})
    assert _compare(theirs, DOCS, {}) == []
    # the documents reach every outcome: good values, bad values kept apart from the rest of
    # the row, and malformed documents
    bad = [t for t in theirs if t is not None and t["_corrupt_record"] is not None]
    assert any(t["i"] == 7 for t in bad)
    assert any(t["i"] is None for t in bad)
    assert sum(t is not None and t["_corrupt_record"] is None for t in theirs) > 50


def test_time_zone_does_not_apply(utc_spark: SparkSession) -> None:
    options = {"timeZone": "America/Los_Angeles"}
    theirs = _theirs(utc_spark, DOCS, options)
    assert _compare(theirs, DOCS, options) == []


NTZ_PATTERNS = [
    "yyyy/MM/dd HH:mm",
    "yyyy-MM-dd'T'HH:mm:ssXXX",
    "yyyy-MM-dd HH:mm:ss[XXX]",
    "yyyy-MM-dd HH:mm:ss VV",
    "dd.MM.yyyy",
    "HH:mm",
    "yyyy-MM-dd HH:mm:ss.SSS",
    "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
    "yyyy-MM-dd hh:mm a",
    "yyyyMMddHHmmss",
    "yyyy-MM-dd[ HH:mm:ss]",
]
#: Of :data:`NTZ_PATTERNS`, those every match of which has a zone or offset.
ZONE_REQUIRED = {"yyyy-MM-dd'T'HH:mm:ssXXX", "yyyy-MM-dd HH:mm:ss VV"}
_PATTERN_STRINGS = [
    "2020/01/02 03:04", "2020-01-02T03:04:05", "2020/01/02 03:04 ", "2020/1/2 03:04",
    "2020-01-02T03:04:05+01:00", "2020-01-02T03:04:05Z", "2020-01-02 03:04:05",
    "2020-01-02 03:04:05+01:00", "2020-01-02 03:04:05Z", "2020-01-02 03:04:05 Europe/Paris",
    "2020-01-02 03:04:05 UTC", "02.01.2020", "2.1.2020", "03:04", "2020-01-02 03:04:05.1",
    "2020-01-02 03:04:05.123", "2020-01-02 03:04:05.1234", "2020-01-02T03:04:05.123456",
    "2020-01-02T03:04:05.1234567", "2020-01-02 03:04 PM", "2020-01-02 03:04 pm",
    "2020-01-02 13:04 PM", "20200102030405", "2020-01-02", "2020-02-30", "",
]  # fmt: skip


@pytest.mark.parametrize("fallback", [None, "true", "false"])
@pytest.mark.parametrize("pattern", NTZ_PATTERNS)
def test_timestamp_ntz_format(utc_spark: SparkSession, pattern: str, fallback: str | None) -> None:
    options = {"timestampNTZFormat": pattern}
    if fallback is not None:
        options["enableDateTimeParsingFallback"] = fallback
    docs: list[str | None] = [f'{{"t": "{v}", "i": 7}}' for v in _PATTERN_STRINGS]
    docs += [f'{{"mt": {{"k": "{v}"}}, "s": {{"t": "{v}"}}}}' for v in _PATTERN_STRINGS[:8]]
    theirs = _theirs(utc_spark, docs, options)
    assert _compare(theirs, docs, options) == []
    # the pattern reads at least one string, unless it requires a zone, which Spark refuses
    read = any(t is not None and t["t"] is not None for t in theirs)
    assert read == (pattern not in ZONE_REQUIRED), pattern


def test_timestamp_format_leaves_timestamp_ntz_alone(utc_spark: SparkSession) -> None:
    options = {"timestampFormat": "yyyy/MM/dd", "dateFormat": "dd.MM.yyyy"}
    docs: list[str | None] = [f'{{"t": "{v}", "i": 7}}' for v in _PATTERN_STRINGS]
    theirs = _theirs(utc_spark, docs, options)
    assert _compare(theirs, docs, options) == []


@pytest.mark.parametrize("leading_zeros", ["false", "true"])
def test_long_numbers(utc_spark: SparkSession, leading_zeros: str) -> None:
    options = {"allowNumericLeadingZeros": leading_zeros}
    docs = list(LONG_NUMBER_DOCS)
    docs += [
        '{"i": 7, "big": ' + _z(5000) + "1}",
        '{"i": 7, "big": -' + _z(1000) + "." + _z(1000) + "}",
        '{"i": 7, "big": 00.' + _z(1000) + "}",
        '{"i": 7, "big": 00.' + _z(1001) + "}",
        '{"i": 7, "big": 000001.' + _z(1000) + "}",
        '{"i": 7, "big": 00e' + _z(999) + "1}",
        '{"i": 7, "big": 00e' + _z(1000) + "1}",
        '{"i": 7, "d": 0012.5, "big": -000}',
    ]
    theirs = _theirs(utc_spark, docs, options)
    assert _compare(theirs, docs, options) == []
    # both outcomes are reached: malformed documents, and numbers near the limit read
    malformed = [t for t in theirs if t is not None and t["i"] is None]
    assert len(malformed) >= 10
    assert sum(t is not None and t["_corrupt_record"] is None for t in theirs) >= 10


NTZ_YEARS = [
    "+12024-01-02 00:00", "-0005-01-02 00:00", "0000-01-02 00:00", "12024-01-02 00:00",
    "+2024-01-02 00:00", "-0000-01-02 00:00", "+294247-01-02 00:00", "+294248-01-02 00:00",
    "-290307-01-02 00:00", "-290308-01-02 00:00", "+12024-02-29 00:00", "+12000-02-29 23:59",
]  # fmt: skip


def test_timestamp_ntz_format_years(utc_spark: SparkSession) -> None:
    """Signed and wide years with ``timestampNTZFormat`` (``yyyy``: EXCEEDS_PAD), compared as
    microseconds (Python's datetime cannot hold them)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    options = {"timestampNTZFormat": "yyyy-MM-dd HH:mm"}
    docs = [f'{{"t": "{v}", "i": 7}}' for v in NTZ_YEARS]
    struct = StructType.fromJson(SCHEMA)
    df = utc_spark.createDataFrame(list(enumerate(docs)), "n int, v string")
    j = F.from_json("v", struct, {"mode": "PERMISSIVE", **options})
    rows = df.select(
        "n",
        F.unix_micros(j.t.cast("timestamp")).alias("t"),  # a UTC session: the same micros
        j._corrupt_record.isNotNull().alias("bad"),
    ).collect()
    theirs = [(r.t, r.bad) for r in sorted(rows)]
    out = decode_json(pa.array(docs), SCHEMA, mode="PERMISSIVE", options=json_options(options))
    ours = list(
        zip(
            out.field("t").cast(pa.int64()).to_pylist(),
            out.field("_corrupt_record").is_valid().to_pylist(),
            strict=True,
        )
    )
    assert theirs == ours
    assert sum(t is not None for t, _ in theirs) >= 6


FAILFAST_DOCS = [
    '{"i": 7, "d": 1' + "0" * 1000 + "}",
    '{"i": 7, "zz": 1.' + "0" * 1000 + "}",
    '{"i": 7, "big": 1.' + "0" * 999 + "}",
    '{"d": 1.005, "b": "QUJD", "t": "2020-01-02T03:04:05", "i": 7}',
    '{"d": 999.995, "i": 7}',
    '{"d": "1,0.5", "i": 7}',
    '{"b": "QUI", "i": 7}',
    '{"b": "Q", "i": 7}',
    "{'b': 'Q', 'i': 7}",
    '{"b": "QUJD\t", "i": 7}',
    '{"b": "QU\tJD", "i": 7}',
    '{"b": "Q!J\tD", "i": 7}',
    '{"t": "2020-01-02T03:04:05Z", "i": 7}',
    '{"t": 1577934245, "i": 7}',
    '{"ab": ["QQ==", "!"], "i": 7}',
    '{"s": {"d": 100}}',
]


@pytest.mark.parametrize("doc", FAILFAST_DOCS)
def test_failfast(utc_spark: SparkSession, doc: str) -> None:
    schema = _struct(*SCHEMA["fields"][:-1])  # type: ignore[index]
    try:
        (theirs,) = spark_from_json(utc_spark, schema, [doc], {"mode": "FAILFAST"})
    except Exception as exc:  # Py4J/Spark errors: the query failed
        assert "FAILFAST" in str(exc) or "Malformed" in str(exc), str(exc)[:500]
        with pytest.raises(JsonDecodeError):
            decode_json(pa.array([doc]), schema, mode="FAILFAST")
        return
    (ours,) = _ours_rows(decode_json(pa.array([doc]), schema, mode="FAILFAST"))
    assert ours == theirs


KNOWN_DIFFERENCES = [
    (
        '{"i": 7, "a": [1' + "0" * 1000 + "]}",
        {},
        "a number Jackson refuses inside a schema field's array, map or struct fails that "
        "field's conversion: Spark keeps a partial row (i 7), going on from where the parser "
        "stopped; here the whole document is malformed",
    ),
    (
        '{"i": 7, "s": {"d": 1' + "0" * 1000 + "}}",
        {},
        "as above, in a nested struct",
    ),
    (
        '{"d": "1e2", "i": 7}',
        {"locale": "en"},
        "with a locale other than en-US Spark parses decimal strings with DecimalFormat "
        "(no exponent); here strings are read the en-US way whatever the locale",
    ),
]


@pytest.mark.parametrize(("doc", "options", "reason"), known_differences(KNOWN_DIFFERENCES))
def test_known_differences(
    utc_spark: SparkSession, doc: str, options: dict[str, str], reason: str
) -> None:
    theirs = _theirs(utc_spark, [doc], options)
    assert _compare(theirs, [doc], options) == [], reason
