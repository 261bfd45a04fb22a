"""Spark's ``from_json`` with options as the oracle of ``formats/json`` (issue 27).

The same documents go through ``from_json(v, SCHEMA, {"mode": "PERMISSIVE", **options})`` in
the test run's Spark session (``spark.sql.session.timeZone`` UTC, as
``conftest.py``'s ``utc_spark`` sets it) and through our :func:`decode_json` with
the same options, one batch (per-row path: malformed documents are in it) and each document
alone (the fast path wherever it takes the document): rows must be equal, corrupt records
included.

- Jackson's read features: :data:`FEATURE_DOCS` (documents each feature changes, and strict
  JSON errors no feature allows) with Spark's defaults, each ``allow*`` option flipped, and all
  of them on.
- Timestamps and dates: for each pattern of :data:`TIMESTAMP_PATTERNS` / :data:`DATE_PATTERNS`,
  generated strings (a seeded random sample of instants from 1900 to 2100, written by hand-made
  formatters, not by the code under test, plus times around Europe/Paris's and
  America/Los_Angeles's daylight-saving changes), and mutated ones that must not parse; in
  several ``timeZone`` values; and ``enableDateTimeParsingFallback`` on and off.

- Edge cases of ``DateTimeFormatter``'s parsing (:data:`EDGE_CASES`).

Differences kept (strict xfails): without the ``timeZone`` option Spark uses the session time
zone, which the executors here do not know (UTC is assumed;
:func:`test_session_time_zone_is_not_known_here`). Years past four digits, year 0 and negative
years with a pattern (:data:`YEAR_CASES`) are compared as microseconds and days (Python's
datetime cannot hold them). Without a pattern, such years and a time without a date (today's
date) are read as Spark reads them: ``test_from_json_datetime_oracle.py``.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

from spark_kafka_py.formats.json.decode import JsonDecoder, decode_json
from spark_kafka_py.formats.json.options import JsonOptionError, json_options
from tests.formats.json._helpers import field, norm, spark_from_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.integration


SCHEMA: dict[str, object] = {
    "type": "struct",
    "fields": [
        field("a", "long"),
        field("b", "string"),
        field("d", "double"),
        field("f", "float"),
        field("t", "timestamp"),
        field("dt", "date"),
        field("arr", {"type": "array", "elementType": "long", "containsNull": True}),
        field("s", {"type": "struct", "fields": [field("x", "long"), field("y", "string")]}),
        field("_corrupt_record", "string"),
    ],
}

FEATURE_DOCS: list[str] = [
    # allowSingleQuotes
    "{'a': 1, 'b': 'x\"y'}",
    "{\"b\": 'single'}",
    '{"b": "it\\\'s"}',
    "{'s': {'x': 2, 'y': 'q'}, 'arr': [1, 2]}",
    "{'b': {'k': 'v', 'n': [1, 'two']}}",
    "{'a': 1, 'a': 'x'}",
    # allowComments
    '{"a": 1, /* c */ "b": "x"}',
    '// first\n{"a": 2}',
    '{"a": 1 // to the end\n, "b": "y"}',
    '{"a" /**/ : /**/ 3}',
    '{"a": 1 /* unterminated }',
    '{"a": 1, # yaml }',
    "/* only a comment */",
    "// only a comment",
    # allowUnquotedFieldNames
    "{a: 1, b: 'x'}",
    "{$a: 1, _b: 2, a1: 3}",
    "{a-b: 1, a: 4}",
    "{1a: 1, a: 5}",
    "{a b: 1}",
    "{s: {x: 6}}",
    # allowNumericLeadingZeros
    '{"a": 007}',
    '{"a": -007}',
    '{"d": 00.5}',
    '{"b": 0012}',
    '{"arr": [01, 2]}',
    # allowNonNumericNumbers
    '{"d": NaN}',
    '{"d": Infinity, "f": -Infinity}',
    '{"d": +Infinity}',
    '{"d": -INF}',
    '{"f": +INF}',
    '{"d": "NaN", "f": "-INF"}',
    '{"d": "+Infinity"}',
    '{"b": NaN}',
    '{"b": -INF}',
    '{"d": INF}',
    '{"d": -NaN}',
    # allowBackslashEscapingAnyCharacter
    '{"b": "a\\qb"}',
    '{"b": "\\%\\ "}',
    "{'b': '\\x'}",
    # allowUnquotedControlChars
    '{"b": "a\tb"}',
    '{"b": "line\nbreak"}',
    '{"b": "\x01"}',
    # strict JSON errors no feature allows
    '{"a": 1,}',
    "[1, 2",
    '{"a": +1}',
    '{"a": .5}',
    '{"a": 1.}',
    '{"a" 1}',
    "{'a: 1}",
    "{,}",
    # ordinary documents
    '{"a": 1, "b": "x", "d": 1.5}',
    '{"arr": [1, null], "s": {"x": 1}}',
    '{"a": "1"}',
]

FEATURES = [
    "allowSingleQuotes",
    "allowComments",
    "allowUnquotedFieldNames",
    "allowNumericLeadingZeros",
    "allowNonNumericNumbers",
    "allowBackslashEscapingAnyCharacter",
    "allowUnquotedControlChars",
]
#: Spark's defaults (JSONOptions).
FEATURE_DEFAULTS = {
    name: name in ("allowSingleQuotes", "allowNonNumericNumbers") for name in FEATURES
}


def _theirs(spark: SparkSession, docs: list[str | None], options: dict[str, str]) -> list[Any]:
    return spark_from_json(spark, SCHEMA, docs, {"mode": "PERMISSIVE", **options})


def _ours_rows(array: pa.Array) -> list[Any]:
    return [norm(row) for row in array.to_pylist()]


def _compare(theirs: list[Any], docs: list[str | None], options: dict[str, str]) -> list[Any]:
    """The differences between Spark's rows and ours, decoded in one batch and each alone."""
    opts = json_options(options)
    diffs = []
    batch = _ours_rows(decode_json(pa.array(docs), SCHEMA, mode="PERMISSIVE", options=opts))
    diffs += [("batch", d, t, o) for d, t, o in zip(docs, theirs, batch, strict=True) if t != o]
    no_corrupt = {"type": "struct", "fields": SCHEMA["fields"][:-1]}  # type: ignore[index]
    alone = JsonDecoder(no_corrupt, mode="PERMISSIVE", options=opts)
    for doc, t in zip(docs, theirs, strict=True):
        if t is not None and t["_corrupt_record"] is not None:
            continue  # a bad row: its partial row is compared by the batch
        (o,) = _ours_rows(alone.decode(pa.array([doc], pa.string())))
        expected = None if t is None else {k: v for k, v in t.items() if k != "_corrupt_record"}
        if o != expected:
            diffs.append(("alone", doc, expected, o))
    return diffs


def _feature_cases() -> list[tuple[str, dict[str, str]]]:
    cases: list[tuple[str, dict[str, str]]] = [("defaults", {})]
    for name in FEATURES:
        cases.append(
            (
                f"{name}={not FEATURE_DEFAULTS[name]}",
                {name: str(not FEATURE_DEFAULTS[name]).lower()},
            )
        )
    cases.append(("all on", {name: "true" for name in FEATURES}))
    return cases


@pytest.mark.parametrize(
    ("label", "options"), _feature_cases(), ids=[c[0] for c in _feature_cases()]
)
def test_read_features(utc_spark: SparkSession, label: str, options: dict[str, str]) -> None:
    theirs = _theirs(utc_spark, list(FEATURE_DOCS), options)
    assert _compare(theirs, list(FEATURE_DOCS), options) == []
    # the options change something: at least one document reads differently from the defaults
    if options:
        defaults = _theirs(utc_spark, list(FEATURE_DOCS), {})
        assert theirs != defaults, label


# -- timestamps and dates -------------------------------------------------------------------------

_RNG_SEED = 20261127
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_FULL_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip


def _instants(n: int) -> list[dt.datetime]:
    """Naive local date-times: a seeded sample from 1900 to 2100, with microseconds, and times
    around daylight-saving changes (in a gap, in an overlap, either side)."""
    rng = random.Random(_RNG_SEED)
    start = dt.datetime(1900, 1, 1)
    span = int((dt.datetime(2100, 1, 1) - start).total_seconds())
    out = [
        start + dt.timedelta(seconds=rng.randrange(span), microseconds=rng.randrange(1_000_000))
        for _ in range(n)
    ]
    out += [
        dt.datetime(2024, 3, 31, 2, 30),  # Paris: in the gap
        dt.datetime(2024, 10, 27, 2, 30),  # Paris: in the overlap
        dt.datetime(2024, 3, 10, 2, 15),  # Los Angeles: in the gap
        dt.datetime(2024, 11, 3, 1, 45),  # Los Angeles: in the overlap
        dt.datetime(2024, 2, 29, 23, 59, 59, 999_999),
        dt.datetime(2000, 1, 1),
        dt.datetime(1970, 1, 1),
    ]
    return out


def _offset_text(minutes: int, *, colon: bool, z: bool) -> str:
    if minutes == 0 and z:
        return "Z"
    sign = "-" if minutes < 0 else "+"
    h, m = divmod(abs(minutes), 60)
    return f"{sign}{h:02d}:{m:02d}" if colon else f"{sign}{h:02d}{m:02d}"


def _h12(d: dt.datetime) -> tuple[int, str]:
    return (d.hour % 12 or 12), ("AM" if d.hour < 12 else "PM")


def _writers() -> dict[str, Any]:
    """Each timestamp pattern's writer: (datetime, rng) -> text, written with strftime and
    f-strings from the pattern's documented meaning."""
    zones = ["Europe/Paris", "America/Los_Angeles", "Asia/Kolkata", "UTC", "Australia/Sydney"]

    def iso_ms_offset(d: dt.datetime, rng: random.Random) -> str:
        off = rng.choice([0, 60, -300, 330, -570, 840])
        return f"{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond // 1000:03d}" + _offset_text(
            off, colon=True, z=True
        )

    def iso_optional(d: dt.datetime, rng: random.Random) -> str:
        text = f"{d:%Y-%m-%dT%H:%M:%S}"
        if rng.random() < 0.6:
            text += "." + f"{d.microsecond:06d}"[: rng.randint(1, 6)]
        if rng.random() < 0.5:
            text += _offset_text(rng.choice([0, 120, -480]), colon=True, z=True)
        return text

    def month_name(d: dt.datetime, rng: random.Random) -> str:
        h, ampm = _h12(d)
        text = f"{_MONTHS[d.month - 1]} {d.day}, {d.year} {h}:{d:%M} {ampm}"
        return rng.choice([text, text.upper(), text.lower()])

    def compact_z(d: dt.datetime, rng: random.Random) -> str:
        off = rng.choice([0, 60, -300, 330])
        return f"{d:%Y%m%d%H%M%S} " + _offset_text(off, colon=False, z=False)

    def zone_id(d: dt.datetime, rng: random.Random) -> str:
        return f"{d:%Y-%m-%d %H:%M} {rng.choice(zones)}"

    def nanos(d: dt.datetime, rng: random.Random) -> str:
        fraction = f"{d.microsecond:06d}{rng.randint(0, 999):03d}"
        return f"{d:%d.%m}.{d.year % 100:02d} {d:%H:%M:%S}.{fraction}"

    return {
        "yyyy-MM-dd HH:mm:ss": lambda d, rng: f"{d:%Y-%m-%d %H:%M:%S}",
        "dd/MM/yyyy HH:mm": lambda d, rng: f"{d:%d/%m/%Y %H:%M}",
        "yyyy-MM-dd'T'HH:mm:ss.SSSXXX": iso_ms_offset,
        "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS][XXX]": iso_optional,
        "MMM d, yyyy h:mm a": month_name,
        "yyyyMMddHHmmss Z": compact_z,
        "yyyy-MM-dd HH:mm VV": zone_id,
        "dd.MM.yy HH:mm:ss.SSSSSSSSS": nanos,
    }


TIMESTAMP_PATTERNS = list(_writers())
DATE_PATTERNS = {
    "dd/MM/yyyy": lambda d: f"{d:%d/%m/%Y}",
    "yyyy-MM-dd": lambda d: f"{d:%Y-%m-%d}",
    "MMMM d yyyy": lambda d: f"{_FULL_MONTHS[d.month - 1]} {d.day} {d.year}",
    "yyyyMMdd": lambda d: f"{d:%Y%m%d}",
}


def _mutations(text: str, rng: random.Random) -> list[str]:
    """Strings near a good one that should not parse (or parse differently)."""
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    i = rng.choice(digits)
    return [
        text[:-1],
        text + " ",
        " " + text,
        text[:i] + "x" + text[i + 1 :],
        text.replace("-", "/", 1),
        text + "0",
    ]


def _timestamp_docs(pattern: str, n: int) -> list[str | None]:
    rng = random.Random(f"{_RNG_SEED}:{pattern}")
    write = _writers()[pattern]
    if pattern == "dd.MM.yy HH:mm:ss.SSSSSSSSS":
        instants = [d for d in _instants(n) if 2000 <= d.year < 2100]
    else:
        instants = _instants(n)
    texts = [write(d, rng) for d in instants]
    bad = [m for t in rng.sample(texts, 6) for m in _mutations(t, rng)]
    impossible = [
        write(dt.datetime(2024, 1, 2, 3, 4, 5), rng).replace("02", "31", 1).replace("01", "04", 1)
    ]
    docs: list[str | None] = [
        f'{{"t": "{t}", "a": {i}}}' for i, t in enumerate(texts + bad + impossible)
    ]
    docs += ['{"t": 1700000000}', '{"t": "2024-01-02T03:04:05Z"}', '{"t": "2024-01-02"}', None]
    return docs


ZONES = ["UTC", "America/Los_Angeles", "+05:30", "Europe/Paris"]


@pytest.mark.parametrize("pattern", TIMESTAMP_PATTERNS)
def test_timestamp_formats(utc_spark: SparkSession, pattern: str) -> None:
    docs = _timestamp_docs(pattern, 40)
    for zone in ZONES:
        options = {"timestampFormat": pattern, "timeZone": zone}
        theirs = _theirs(utc_spark, docs, options)
        assert _compare(theirs, docs, options) == [], zone
        parsed = sum(1 for t in theirs if t is not None and t["t"] is not None)
        assert parsed >= 25  # the generated strings parse


@pytest.mark.parametrize("fallback", ["true", "false"])
def test_datetime_parsing_fallback(utc_spark: SparkSession, fallback: str) -> None:
    docs: list[str | None] = [
        '{"t": "2024/01/02 03:04", "dt": "02.01.2024"}',
        '{"t": "2024-01-02T03:04:05Z", "dt": "2024-01-02"}',
        '{"t": "2024-01-02 03:04:05", "dt": "2024-01"}',
        '{"t": "2024-01-02T03:04:05GMT+01:00", "dt": "2024-01-02T10:00"}',
        '{"t": "x", "dt": "123"}',
        '{"dt": "-5"}',
    ]
    options = {
        "timestampFormat": "yyyy/MM/dd HH:mm",
        "dateFormat": "dd.MM.yyyy",
        "enableDateTimeParsingFallback": fallback,
        "timeZone": "Europe/Paris",
    }
    theirs = _theirs(utc_spark, docs, options)
    assert _compare(theirs, docs, options) == []


def _date_docs(pattern: str) -> list[str | None]:
    rng = random.Random(f"{_RNG_SEED}:{pattern}")
    write = DATE_PATTERNS[pattern]
    texts = [write(d) for d in _instants(30)]
    bad = [m for t in rng.sample(texts, 5) for m in _mutations(t, rng)]
    docs: list[str | None] = [f'{{"dt": "{t}"}}' for t in texts + bad]
    docs += ['{"dt": "2024-02-30"}', '{"dt": "31/04/2024"}', '{"dt": "123"}', '{"dt": 5}']
    return docs


@pytest.mark.parametrize("pattern", list(DATE_PATTERNS))
def test_date_formats(utc_spark: SparkSession, pattern: str) -> None:
    docs = _date_docs(pattern)
    options = {"dateFormat": pattern}
    theirs = _theirs(utc_spark, docs, options)
    assert _compare(theirs, docs, options) == []
    assert sum(1 for t in theirs if t is not None and t["dt"] is not None) >= 30


def test_default_formats_in_other_zones(utc_spark: SparkSession) -> None:
    """No format: Spark's ISO 8601 forms, a string without a zone in ``timeZone``."""
    rng = random.Random(_RNG_SEED)
    texts = [f"{d:%Y-%m-%d %H:%M:%S}" for d in _instants(30)]
    texts += [f"{d:%Y-%m-%dT%H:%M}" for d in _instants(10)]
    docs: list[str | None] = [f'{{"t": "{t}"}}' for t in texts]
    docs += [f'{{"t": "{t}"}}' for t in rng.sample(texts, 5)]
    for zone in ZONES:
        options = {"timeZone": zone}
        theirs = _theirs(utc_spark, docs, options)
        assert _compare(theirs, docs, options) == [], zone


@pytest.mark.xfail(
    strict=True,
    reason="without the timeZone option Spark takes spark.sql.session.timeZone, which the "
    "executors here do not know: UTC is assumed",
)
def test_session_time_zone_is_not_known_here(utc_spark: SparkSession) -> None:
    docs: list[str | None] = ['{"t": "2024-07-01 12:00:00"}']
    previous = utc_spark.conf.get("spark.sql.session.timeZone")
    utc_spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        theirs = _theirs(utc_spark, docs, {})
    finally:
        utc_spark.conf.set("spark.sql.session.timeZone", previous)
    # Spark's instant is 19:00Z; ours is 12:00Z
    assert _compare(theirs, docs, {}) == []


def test_zone_names_in_sample_are_known() -> None:
    for name in ("Europe/Paris", "America/Los_Angeles", "Asia/Kolkata", "Australia/Sydney"):
        assert ZoneInfo(name).key == name


#: Patterns and strings at the edges of DateTimeFormatter's rules (the unit tests' cases).
EDGE_CASES: dict[str, list[str]] = {
    "yyyy-MM-dd HH:mm x": [
        "2024-01-02 03:04 +00",
        "2024-01-02 03:04 +0000",
        "2024-01-02 03:04 +0530",
    ],
    "yyyy-MM-dd HH:mm xx": ["2024-01-02 03:04 +0000", "2024-01-02 03:04 +05"],
    "yyyy-MM-dd HH:mm XXX": [
        "2024-01-02 03:04 z",
        "2024-01-02 03:04 +18:00",
        "2024-01-02 03:04 +19:00",
        "2024-01-02 03:04 +0100",
    ],
    "yyyy-MM-dd HH:mm XXXXX": ["2024-01-02 03:04 +01:00:30", "2024-01-02 03:04 -01:00"],
    "yyyy-MM-dd kk:mm": ["2024-01-02 24:00", "2024-01-02 00:00", "2024-01-02 01:00"],
    "yyyy-MM-dd hh:mm": ["2024-01-02 12:30", "2024-01-02 01:30", "2024-01-02 13:30"],
    "yyyy-MM-dd KK:mm a": ["2024-01-02 11:00 PM", "2024-01-02 00:00 am", "2024-01-02 12:00 PM"],
    "yyyy-MM-dd HH:mm a": ["2024-01-02 13:00 PM", "2024-01-02 13:00 AM", "2024-01-02 01:00 AM"],
    "yyyy DDD": ["2024 060", "2023 366", "2024 366", "2024 60"],
    "yyyy D HH": ["2024 60 10", "2024 366 10"],
    "d/M/yyyy H:m:s": [
        "2/1/2024 3:4:5",
        "02/01/2024 03:04:05",
        "002/1/2024 3:4:5",
        "2/1/2024 24:4:5",
    ],
    "yyyyMMdd": ["20240102", "202401023", "2024012"],
    "HH:mm": ["10:15", "25:00"],
    "MM-dd": ["02-29", "02-28"],
    "yyyy-MM-dd'T'HH 'o''clock'": ["2024-01-02T03 o'clock", "2024-01-02t03 O'CLOCK"],
    "yyyy-MM-dd[ HH:mm[:ss]][ VV]": [
        "2024-01-02",
        "2024-01-02 03:04",
        "2024-01-02 03:04:05 Europe/Paris",
        "2024-01-02 03:04 europe/paris",
        "2024-01-02 03:04 UTC+01:00",
        "2024-01-02 03:04 GMT",
    ],
    "yyyy-MM-dd HH:mm:ss.SSS": ["2024-01-02 03:04:05.1", "2024-01-02 03:04:05.1234"],
    "dd MMM yyyy": ["02 jan 2024", "02 January 2024", "02 Sept 2024", "02 SEP 2024"],
}


@pytest.mark.parametrize("pattern", list(EDGE_CASES))
def test_pattern_edges(utc_spark: SparkSession, pattern: str) -> None:
    docs: list[str | None] = [f'{{"t": "{t}", "dt": "{t}"}}' for t in EDGE_CASES[pattern]]
    options = {"timestampFormat": pattern, "dateFormat": pattern, "timeZone": "Europe/Paris"}
    theirs = _theirs(utc_spark, docs, options)
    assert _compare(theirs, docs, options) == []


#: Years around the edges of ``DateTimeFormatter``'s sign styles (``yyyy``..: EXCEEDS_PAD, a sign
#: required past the letters' width and ``+`` refused within it; ``y``/``yyy``: NORMAL, ``-``
#: taken, ``+`` refused; ``yy``: two digits, 2000-2099) and Spark's ranges (a timestamp within
#: a ``long`` of microseconds, a date within an ``int`` of days).
YEAR_CASES: dict[str, list[str]] = {
    "yyyy-MM-dd HH:mm": [
        "+12024-01-02 00:00", "12024-01-02 00:00", "+2024-01-02 00:00", "-2024-01-02 03:04",
        "-0005-01-02 00:00", "-5-01-02 00:00", "+02024-01-02 00:00", "0000-01-02 00:00",
        "-0000-01-02 00:00", "+0000-01-02 00:00", "+00000-01-02 00:00", "+294247-01-02 00:00",
        "+294248-01-02 00:00", "-290308-01-02 00:00", "-290307-01-02 00:00",
        "+999999-12-31 23:59", "+5881580-07-11 00:00", "+5881580-07-12 00:00",
        "-5877641-06-23 00:00", "-5877641-06-24 00:00", "+999999999-01-01 00:00",
        "+1000000000-01-01 00:00", "+12024-02-29 00:00", "+12000-02-29 00:00",
        "+00000000000000002024-01-02 00:00", "-12024-07-01 12:00",
    ],
    "y-MM-dd": [
        "-5-01-02", "+5-01-02", "5-01-02", "0-01-02", "-0-01-02", "12024-01-02",
        "-12024-01-02", "-005-01-02", "00005-01-02", "-1-02-29", "-4-02-29",
    ],
    "yyy-MM-dd": ["-5-01-02", "-005-01-02", "2024-01-02", "12024-01-02", "+12024-01-02"],
    "yy-MM-dd": ["24-01-02", "+24-01-02", "-24-01-02", "124-01-02", "4-01-02"],
    "yyyyy-MM-dd": [
        "02024-01-02", "2024-01-02", "+12024-01-02", "+123456-01-02", "-02024-01-02",
        "12024-01-02",
    ],
    "yyyyMMdd": ["20240102", "+120240102", "120240102", "-00050102", "+20240102"],
    "yMMdd": ["-50102", "120240102", "+50102"],
    "dd/MM/yyyy HH:mm": ["02/01/+12024 10:00", "02/01/-0005 10:00", "02/01/12024 10:00"],
    "yyyy D": ["+12024 366", "+12023 366", "-0004 366", "-0001 366"],
    "MMM d, yyyy": ["Jan 2, +12024", "Feb 29, -0004", "Feb 29, -0001"],
}  # fmt: skip


def _micros_rows(spark: SparkSession, docs: list[str | None], options: dict[str, str]) -> list[Any]:
    """Spark's rows as (``t`` in microseconds, ``dt`` in days, a corrupt record or not): years
    that Python's datetime cannot hold are compared as numbers."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    df = spark.createDataFrame(list(enumerate(docs)), "i int, v string")
    j = F.from_json("v", StructType.fromJson(SCHEMA), {"mode": "PERMISSIVE", **options})
    rows = df.select(
        "i",
        F.unix_micros(j.t).alias("t"),
        F.unix_date(j.dt).alias("dt"),
        j._corrupt_record.isNotNull().alias("bad"),
    ).collect()
    return [(r.t, r.dt, r.bad) for r in sorted(rows)]


def _our_micros_rows(docs: list[str | None], options: dict[str, str]) -> list[Any]:
    out = decode_json(pa.array(docs), SCHEMA, mode="PERMISSIVE", options=json_options(options))
    t = out.field("t").cast(pa.int64()).to_pylist()
    days = out.field("dt").cast(pa.int32()).to_pylist()
    bad = out.field("_corrupt_record").is_valid().to_pylist()
    return list(zip(t, days, bad, strict=True))


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/Los_Angeles", "-08:00"])
@pytest.mark.parametrize("pattern", list(YEAR_CASES))
def test_years_beyond_four_digits_and_signs(
    utc_spark: SparkSession, pattern: str, zone: str
) -> None:
    docs: list[str | None] = [f'{{"t": "{t}", "dt": "{t}"}}' for t in YEAR_CASES[pattern]]
    options = {"timestampFormat": pattern, "dateFormat": pattern, "timeZone": zone}
    theirs = _micros_rows(utc_spark, docs, options)
    ours = _our_micros_rows(docs, options)
    assert [(d, o) for d, t, o in zip(docs, theirs, ours, strict=True) if t != o] == []


@pytest.mark.parametrize("option", ["timestampFormat", "dateFormat"])
def test_u_is_refused_as_spark_refuses_it(utc_spark: SparkSession, option: str) -> None:
    """Spark 3+ refuses ``u`` (its week-based letters) when the pattern is built; ours
    refuses the option, naming it."""
    docs: list[str | None] = ['{"t": "2024-01-02", "dt": "2024-01-02"}']
    with pytest.raises(Exception, match="DATETIME_PATTERN_RECOGNITION"):
        _theirs(utc_spark, docs, {option: "uuuu-MM-dd"})
    with pytest.raises(JsonOptionError, match=f"Option '{option}'.*'u' in 'uuuu-MM-dd'"):
        json_options({option: "uuuu-MM-dd"})


#: Documents where ours differs from from_json on purpose (each named in decode.py's or
#: datetime_pattern.py's docstring): (document, options, reason).
# No kept differences from Spark for these options: a new one is a strict xfail here, as in
# test_from_json_types_oracle (tests/formats/json/_helpers.known_differences).
