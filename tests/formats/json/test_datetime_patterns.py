"""Spark datetime patterns as parsers (``formats/json/datetime_pattern.py``).

Expected values are written by hand from Spark's "Datetime Patterns for Formatting and
Parsing" page and ``DateTimeFormatter``'s documented parsing (strict resolver, case-insensitive,
fields defaulting to 1970-01-01T00:00), not computed by the code under test; Spark's own
``from_json`` compares on generated documents in ``test_from_json_options_oracle.py``.
"""

from __future__ import annotations

import datetime as dt

import pytest

from spark_kafka_py.formats.json.datetime_pattern import (
    DateTimePattern,
    PatternError,
    compile_pattern,
    zone_of,
)

UTC = dt.timezone.utc


def micros(*args: int, tz: dt.tzinfo = UTC) -> int:
    """Microseconds since the epoch of a datetime (hand-given fields)."""
    d = dt.datetime(*args, tzinfo=tz)  # type: ignore[misc]
    return (d - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


def days(y: int, m: int, d: int) -> int:
    return (dt.date(y, m, d) - dt.date(1970, 1, 1)).days


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        # Spark's default-looking pattern with optional sections
        ("yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]", "2024-01-02T03:04:05", micros(2024, 1, 2, 3, 4, 5)),
        (
            "yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]",
            "2024-01-02T03:04:05.1+02:00",
            micros(2024, 1, 2, 1, 4, 5, 100_000),
        ),
        (
            "yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]",
            "2024-01-02T03:04:05.123Z",
            micros(2024, 1, 2, 3, 4, 5, 123_000),
        ),
        # case-insensitive literals and zero text
        ("yyyy-MM-dd'T'HH:mm:ssX", "2024-01-02t03:04:05z", micros(2024, 1, 2, 3, 4, 5)),
        # fraction: S x n reads 1..n digits; micros kept, nanos truncated
        (
            "yyyy-MM-dd HH:mm:ss.SSSSSSSSS",
            "2024-01-02 03:04:05.123456789",
            micros(2024, 1, 2, 3, 4, 5, 123_456),
        ),
        (
            "yyyy-MM-dd HH:mm:ss.SSSSSS",
            "2024-01-02 03:04:05.5",
            micros(2024, 1, 2, 3, 4, 5, 500_000),
        ),
        # day first, no time: midnight
        ("dd/MM/yyyy", "02/01/2024", micros(2024, 1, 2)),
        # one letter: one or more digits
        ("d/M/yyyy H:m", "2/1/2024 3:4", micros(2024, 1, 2, 3, 4)),
        # adjacent values: yyyyMMdd splits by the fixed widths after the year
        ("yyyyMMddHHmmss", "20240102030405", micros(2024, 1, 2, 3, 4, 5)),
        # yy: 2000-2099
        ("dd.MM.yy", "02.01.99", micros(2099, 1, 2)),
        # offsets
        ("yyyy-MM-dd HH:mm Z", "2024-01-02 03:04 -0130", micros(2024, 1, 2, 4, 34)),
        ("yyyy-MM-dd HH:mm X", "2024-01-02 03:04 +05", micros(2024, 1, 1, 22, 4)),
        ("yyyy-MM-dd HH:mm X", "2024-01-02 03:04 +0530", micros(2024, 1, 1, 21, 34)),
        ("yyyy-MM-dd HH:mm xxx", "2024-01-02 03:04 +00:00", micros(2024, 1, 2, 3, 4)),
        ("yyyy-MM-dd HH:mm XXXXX", "2024-01-02 03:04 +01:00:30", micros(2024, 1, 2, 2, 3, 30)),
        # zone ids
        ("yyyy-MM-dd HH:mm VV", "2024-07-01 12:00 Europe/Paris", micros(2024, 7, 1, 10)),
        ("yyyy-MM-dd HH:mm VV", "2024-01-01 12:00 europe/paris", micros(2024, 1, 1, 11)),
        ("yyyy-MM-dd HH:mm VV", "2024-01-01 12:00 UTC+01:00", micros(2024, 1, 1, 11)),
        # months by name (Locale US), any case
        ("dd MMM yyyy", "02 jan 2024", micros(2024, 1, 2)),
        ("MMMM d, yyyy", "SEPTEMBER 9, 2024", micros(2024, 9, 9)),
        # am/pm: 12 AM is midnight, 12 PM noon; h without a is taken as is (12 -> 0)
        ("yyyy-MM-dd hh:mm a", "2024-01-02 12:30 AM", micros(2024, 1, 2, 0, 30)),
        ("yyyy-MM-dd hh:mm a", "2024-01-02 12:30 pm", micros(2024, 1, 2, 12, 30)),
        ("yyyy-MM-dd hh:mm a", "2024-01-02 01:30 PM", micros(2024, 1, 2, 13, 30)),
        ("yyyy-MM-dd hh:mm", "2024-01-02 12:30", micros(2024, 1, 2, 0, 30)),
        ("yyyy-MM-dd KK:mm a", "2024-01-02 11:00 PM", micros(2024, 1, 2, 23)),
        ("yyyy-MM-dd kk:mm", "2024-01-02 24:00", micros(2024, 1, 2)),
        # day of year
        ("yyyy DDD", "2024 060", micros(2024, 2, 29)),
        # missing fields: 1970-01-01, hour 0
        ("HH:mm", "10:15", micros(1970, 1, 1, 10, 15)),
        ("MM-dd", "02-03", micros(1970, 2, 3)),
        # quotes: '' is a quote, quoted letters are literal
        ("yyyy-MM-dd'T'HH 'o''clock'", "2024-01-02T03 o'clock", micros(2024, 1, 2, 3)),
    ],
)
def test_timestamps(pattern: str, text: str, expected: int) -> None:
    assert compile_pattern(pattern).parse_timestamp(text, UTC) == expected


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyy-MM-dd", "2024-1-2"),  # MM and dd take exactly two digits
        ("yyyy-MM-dd", "2024-02-30"),  # strict: no such day
        ("yyyy-MM-dd", "2023-02-29"),
        ("yyyy-MM-dd", " 2024-01-02"),  # nothing trimmed
        ("yyyy-MM-dd", "2024-01-02x"),  # the whole text must be read
        ("yyyy-MM-dd HH:mm", "2024-01-02 24:00"),
        ("yyyy-MM-dd HH:mm:ss", "2024-01-02 10:60:00"),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2024-01-02 10:00:00.1234"),  # at most three digits
        ("yyyy-MM-dd HH:mm:ss.SSS", "2024-01-02 10:00:00."),  # at least one
        ("yyyy-MM-dd HH:mm a", "2024-01-02 13:00 AM"),  # H disagrees with AM
        ("yyyy-MM-dd hh:mm", "2024-01-02 13:00"),  # clock hour of am-pm is 1-12
        ("yyyy-MM-dd HH:mm XXX", "2024-01-02 10:00 +0100"),  # XXX needs the colon
        ("yyyy-MM-dd HH:mm XX", "2024-01-02 10:00 +01"),  # XX needs the minutes
        ("yyyy-MM-dd HH:mm XXX", "2024-01-02 10:00 +19:00"),  # beyond 18 hours
        ("yyyy-MM-dd HH:mm VV", "2024-01-02 10:00 Mars/Olympus"),
        ("dd MMM yyyy", "02 January 2024"),  # MMM is the short name only
        ("yyyy DDD", "2023 366"),
        ("yyyy-MM-dd", ""),
    ],
)
def test_timestamps_refused(pattern: str, text: str) -> None:
    assert compile_pattern(pattern).parse_timestamp(text, UTC) is None


def test_session_zone_for_a_text_without_one() -> None:
    paris = zone_of("Europe/Paris")
    pattern = compile_pattern("yyyy-MM-dd HH:mm")
    assert pattern.parse_timestamp("2024-07-01 12:00", paris) == micros(2024, 7, 1, 10)
    assert pattern.parse_timestamp("2024-01-01 12:00", paris) == micros(2024, 1, 1, 11)
    # a time in the spring-forward gap (02:00-03:00 on 2024-03-31) moves forward by the gap:
    # 02:30 is 03:30+02:00, 01:30Z
    assert pattern.parse_timestamp("2024-03-31 02:30", paris) == micros(2024, 3, 31, 1, 30)
    # a time in the autumn overlap (02:00-03:00 twice on 2024-10-27) takes the earlier
    # offset, +02:00
    assert pattern.parse_timestamp("2024-10-27 02:30", paris) == micros(2024, 10, 27, 0, 30)
    # a parsed offset wins over the zone
    with_offset = compile_pattern("yyyy-MM-dd HH:mm XXX")
    assert with_offset.parse_timestamp("2024-07-01 12:00 Z", paris) == micros(2024, 7, 1, 12)
    assert zone_of("-08:00").utcoffset(None) == dt.timedelta(hours=-8)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyy-MM-dd", "2024-01-02", days(2024, 1, 2)),
        ("dd/MM/yyyy", "29/02/2024", days(2024, 2, 29)),
        ("yyyyMMdd", "20240102", days(2024, 1, 2)),
        ("yyyy-MM", "2024-03", days(2024, 3, 1)),
        ("yyyy-MM-dd HH:mm", "2024-01-02 23:59", days(2024, 1, 2)),  # time read, dropped
        ("yyyy-MM-dd XXX", "2024-01-02 +14:00", days(2024, 1, 2)),  # the zone too
        ("d MMM yyyy", "9 Sep 2024", days(2024, 9, 9)),
    ],
)
def test_dates(pattern: str, text: str, expected: int) -> None:
    assert compile_pattern(pattern).parse_date(text) == expected


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyy-MM-dd", "2024-13-01"),
        ("yyyy-MM-dd", "2024-04-31"),
        ("yyyy-MM-dd HH:mm", "2024-01-02 25:00"),  # a bad time makes the date bad too
        ("dd/MM/yyyy", "2024-01-02"),
        ("yyyy-MM-dd XXX", "2024-01-02 +19:00"),  # the offset is checked though unused
    ],
)
def test_dates_refused(pattern: str, text: str) -> None:
    assert compile_pattern(pattern).parse_date(text) is None


@pytest.mark.parametrize(
    ("pattern", "letter"),
    [
        ("YYYY-MM-dd", "Y"),  # week-based: Spark refuses them
        ("yyyy-ww", "w"),
        ("uuuu-MM-dd", "u"),
        ("yyyy-MM-dd E", "E"),  # refused by Spark for parsing
        ("yyyy-MM-dd F", "F"),
        ("yyyy QQ", "Q"),
        ("yyyy-MM-dd hh:mm B", "B"),  # refused by Spark
        ("yyyy-MM-dd n", "n"),
        ("G yyyy", "G"),  # not read here
        ("yyyy-MM-dd HH:mm z", "z"),
        ("yyyy-MM-dd HH:mm O", "O"),
        ("yyyy-MM-dd HH:mm ZZZZ", "Z"),
        ("yyyy-MM-dd HH:mm V", "V"),
        ("yyyy-MM-dd HH:mm:ss.SSSSSSSSSS", "S"),  # more than nine
        ("yyyyyyy", "y"),  # seven y: Spark refuses
        ("MMMMM yyyy", "M"),  # narrow text: Spark refuses
        ("yyyy-MM-dd HHH", "H"),
        ("yyyy-MM-dd t", "t"),  # not a pattern letter
        ("yyyy#MM", "#"),  # reserved
    ],
)
def test_refused_letters_are_named(pattern: str, letter: str) -> None:
    with pytest.raises(PatternError) as info:
        DateTimePattern(pattern)
    assert info.value.letter == letter
    assert repr(letter) in str(info.value) or f"{letter}" in str(info.value)


@pytest.mark.parametrize("pattern", ["yyyy-MM-dd'T", "yyyy-MM-dd[HH", "yyyy]"])
def test_malformed_patterns(pattern: str) -> None:
    with pytest.raises(PatternError):
        DateTimePattern(pattern)


@pytest.mark.parametrize(
    ("zone_id", "offset_hours"),
    [
        ("UTC", 0.0),
        ("Z", 0.0),
        ("GMT", 0.0),
        ("+01:00", 1.0),
        ("+1:00", 1.0),  # Spark's fix of +h:mm
        ("-08:3", -(8 + 3 / 60)),  # and of +hh:m: -08:03
        ("+0530", 5.5),
        ("UTC+02:00", 2.0),
        ("GMT-03", -3.0),
        ("EST", -5.0),  # Java's SHORT_IDS: a fixed offset
    ],
)
def test_fixed_zones(zone_id: str, offset_hours: float) -> None:
    assert zone_of(zone_id).utcoffset(dt.datetime(2024, 1, 1)) == dt.timedelta(hours=offset_hours)


@pytest.mark.parametrize(
    ("zone_id", "january_hours"),
    [("Europe/Paris", 1.0), ("America/New_York", -5.0), ("PST", -8.0), ("IST", 5.5)],
)
def test_region_zones(zone_id: str, january_hours: float) -> None:
    zone = zone_of(zone_id)
    assert dt.datetime(2024, 1, 15, tzinfo=zone).utcoffset() == dt.timedelta(hours=january_hours)


@pytest.mark.parametrize("zone_id", ["Mars/Olympus", "+19:00", "UTC+", "", "+1", "europe/paris"])
def test_bad_zones(zone_id: str) -> None:
    if zone_id == "+1":
        assert zone_of(zone_id).utcoffset(None) == dt.timedelta(hours=1)  # ZoneOffset.of("+1")
        return
    with pytest.raises(PatternError):
        zone_of(zone_id)


# -- Arrow's kernels: the same values as string by string ---------------------------------------

VECTOR_PATTERNS = {
    "yyyy-MM-dd HH:mm:ss": lambda d: f"{d:%Y-%m-%d %H:%M:%S}",
    "dd/MM/yyyy HH:mm:ss.SSS": lambda d: f"{d:%d/%m/%Y %H:%M:%S}.{d.microsecond // 1000:03d}",
    "yyyyMMddHHmmss": lambda d: f"{d:%Y%m%d%H%M%S}",
    "d.M.yyyy H:m": lambda d: f"{d.day}.{d.month}.{d.year} {d.hour}:{d.minute}",
    "yyyy-MM-dd'T'HH:mm:ss.SSSSSS": lambda d: f"{d:%Y-%m-%dT%H:%M:%S.%f}",
}


@pytest.mark.parametrize("pattern", list(VECTOR_PATTERNS))
@pytest.mark.parametrize("zone_id", ["UTC", "-03:30", "Europe/Paris", "America/Los_Angeles"])
def test_arrow_kernels_equal_string_by_string(pattern: str, zone_id: str) -> None:
    import random

    import pyarrow as pa

    rng = random.Random(7)
    start = dt.datetime(1900, 1, 1)
    instants = [
        start
        + dt.timedelta(seconds=rng.randrange(4_300_000_000), microseconds=rng.randrange(10**6))
        for _ in range(3000)
    ]
    # daylight-saving gaps and overlaps of both regions
    instants += [dt.datetime(2024, 3, 31, 2, 30), dt.datetime(2024, 10, 27, 2, 30)]
    instants += [dt.datetime(2024, 3, 10, 2, 15), dt.datetime(2024, 11, 3, 1, 45)]
    texts: list[str | None] = [VECTOR_PATTERNS[pattern](d) for d in instants] + [None]
    compiled, zone = compile_pattern(pattern), zone_of(zone_id)
    vector = compiled.arrow_timestamps(pa.array(texts, pa.string()), zone)
    assert vector is not None
    expected = [None if t is None else compiled.parse_timestamp(t, zone) for t in texts]
    assert vector.cast(pa.int64()).to_pylist() == expected
    dates = compiled.arrow_dates(pa.array(texts, pa.string()))
    assert dates is not None
    assert dates.cast(pa.int32()).to_pylist() == [
        None if t is None else compiled.parse_date(t) for t in texts
    ]


def test_arrow_kernels_leave_what_they_cannot_read_exactly() -> None:
    import pyarrow as pa

    simple = compile_pattern("yyyy-MM-dd HH:mm")
    # an impossible date, a 3-digit field, a year 2038 or later in a region: string by string
    for texts in (["2024-02-30 00:00"], ["2024-01-002 00:00"], ["2040-01-01 00:00"]):
        column = pa.array(texts, pa.string())
        assert simple.arrow_timestamps(column, zone_of("Europe/Paris")) is None
    assert simple.arrow_timestamps(pa.array(["2040-01-01 00:00"]), UTC) is not None
    # patterns not read by the kernels at all
    for pattern in (
        "yyyy-MM-dd[ HH:mm]",
        "dd MMM yyyy",
        "yyyy-MM-dd HH:mm XXX",
        "yy-MM-dd",
        "yyyyMd",
    ):
        assert compile_pattern(pattern).arrow_timestamps(pa.array(["x"]), UTC) is None


# Years past four digits and signed years, with the values Spark 4.3's from_json gives
# (unix_micros / unix_date, measured; test_from_json_options_oracle's year cases): the year
# letters follow DateTimeFormatter's sign styles, ``yyyy`` EXCEEDS_PAD (a sign needed past four
# digits, ``+`` refused within them), ``y``/``yyy`` NORMAL (``-`` taken, ``+`` refused).
@pytest.mark.parametrize(
    ("pattern", "text", "zone_id", "expected_micros", "expected_days"),
    [
        ("yyyy-MM-dd HH:mm", "+12024-01-02 00:00", "UTC", 317273673600000000, 3672149),
        ("yyyy-MM-dd HH:mm", "-2024-01-02 00:00", "UTC", -126038419200000000, -1458778),
        ("yyyy-MM-dd HH:mm", "-0005-01-02 00:00", "UTC", -62324899200000000, -721353),
        ("yyyy-MM-dd HH:mm", "0000-01-02 00:00", "UTC", -62167132800000000, -719527),
        ("yyyy-MM-dd HH:mm", "+02024-01-02 00:00", "UTC", 1704153600000000, 19724),
        ("yyyy-MM-dd HH:mm", "+294247-01-02 00:00", "UTC", 9223371331200000000, 106751983),
        # beyond a long of microseconds: the timestamp is bad, the date is read
        ("yyyy-MM-dd HH:mm", "+294248-01-02 00:00", "UTC", None, 106752348),
        ("yyyy-MM-dd HH:mm", "-290308-01-02 00:00", "UTC", None, -106752346),
        ("yyyy-MM-dd HH:mm", "+5881580-07-11 00:00", "UTC", None, 2147483647),
        ("yyyy-MM-dd HH:mm", "+5881580-07-12 00:00", "UTC", None, None),
        ("yyyy-MM-dd HH:mm", "+12024-07-01 12:00", "Europe/Paris", 317289348000000000, 3672330),
        # before the zone's first transition: its local mean time, +00:09:21
        ("yyyy-MM-dd HH:mm", "-0005-01-02 00:00", "Europe/Paris", -62324899761000000, -721353),
        ("yyyy-MM-dd HH:mm XXX", "+12024-01-02 00:00 -08:00", "UTC", 317273702400000000, 3672149),
        ("y-MM-dd", "-5-01-02", "UTC", -62324899200000000, -721353),
        ("y-MM-dd", "0-01-02", "UTC", -62167132800000000, -719527),
        ("y-MM-dd", "12024-01-02", "UTC", 317273673600000000, 3672149),
        ("y-MM-dd", "-12024-01-02", "UTC", -441607939200000000, -5111203),
        ("y-MM-dd", "-4-02-29", "UTC", -62288352000000000, -720930),
        ("yyy-MM-dd", "-005-01-02", "UTC", -62324899200000000, -721353),
        ("yyyy D", "+12024 366", "UTC", 317305123200000000, 3672513),
        ("yyyy D", "-0004 366", "UTC", -62261913600000000, -720624),
    ],
)
def test_wide_and_signed_years(
    pattern: str, text: str, zone_id: str, expected_micros: int | None, expected_days: int | None
) -> None:
    compiled = compile_pattern(pattern)
    assert compiled.parse_timestamp(text, zone_of(zone_id)) == expected_micros
    assert compiled.parse_date(text) == expected_days


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyy-MM-dd HH:mm", "12024-01-02 00:00"),  # more than four digits need a sign
        ("yyyy-MM-dd HH:mm", "+2024-01-02 00:00"),  # and four digits refuse one
        ("yyyy-MM-dd HH:mm", "+0000-01-02 00:00"),
        ("yyyy-MM-dd HH:mm", "-0000-01-02 00:00"),  # minus zero
        ("yyyy-MM-dd HH:mm", "-5-01-02 00:00"),  # at least four digits
        ("yyyy-MM-dd HH:mm", "+999999999-01-01 00:00"),  # days beyond an int
        ("yyyy-MM-dd HH:mm", "+1000000000-01-01 00:00"),  # beyond ChronoField.YEAR
        ("yyyyMMdd", "120240102"),
        ("yyyyMMdd", "+20240102"),
        ("dd/MM/yyyy", "02/01/12024"),
        ("y-MM-dd", "+5-01-02"),  # NORMAL: no plus sign
        ("y-MM-dd", "-0-01-02"),
        ("y-MM-dd", "-1-02-29"),  # -1 is not a leap year
        ("yyy-MM-dd", "-5-01-02"),
        ("yyy-MM-dd", "+12024-01-02"),
        ("yy-MM-dd", "+24-01-02"),
        ("yy-MM-dd", "-24-01-02"),
        ("yy-MM-dd", "124-01-02"),
        ("yyyyy-MM-dd", "2024-01-02"),
        ("yyyyy-MM-dd", "+12024-01-02"),
        ("yyyy D", "-0001 366"),
    ],
)
def test_wide_and_signed_years_refused(pattern: str, text: str) -> None:
    compiled = compile_pattern(pattern)
    assert compiled.parse_timestamp(text, UTC) is None
    assert compiled.parse_date(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+12024-01-02 00:00", 317273673600000000),
        ("-0005-01-02 00:00", -62324899200000000),
        ("0000-01-02 00:00", -62167132800000000),
        ("+294247-01-02 00:00", 9223371331200000000),
        ("+294248-01-02 00:00", None),  # beyond a long of microseconds
        ("12024-01-02 00:00", None),
    ],
)
def test_wide_years_without_a_zone(text: str, expected: int | None) -> None:
    """``timestampNTZFormat``'s reading (Spark 4.3's values, through unix_micros)."""
    assert compile_pattern("yyyy-MM-dd HH:mm").parse_local_timestamp(text) == expected
