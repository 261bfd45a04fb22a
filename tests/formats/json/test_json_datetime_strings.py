"""Timestamp, date and ``timestamp_ntz`` strings read without a format (``decode.py``'s
``parseTimestampString``/``stringToDate`` readers), without Spark: the expected values are
written by hand (each one what Spark 4.3's ``from_json`` gave, measured by
``test_from_json_datetime_oracle.py``)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from spark_kafka_py.formats.json.decode import (
    JsonDecoder,
    _parse_date,
    _parse_date_fallback,
    _parse_timestamp,
    _parse_timestamp_ntz,
    _zone_id,
)
from tests.formats.json._helpers import field

_S = 1_000_000
#: 2020-01-02T00:00:00Z in seconds, and in days.
_JAN2 = 1_577_923_200
_JAN2_DAYS = 18_263


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        # the time may stop after the hour
        ("2020-01-02T03", (_JAN2 + 3 * 3600) * _S),
        ("2020-01-02 3", (_JAN2 + 3 * 3600) * _S),
        ("2020-01-02T03:04:05.", (_JAN2 + 11045) * _S),
        ("2020-01-02T03:04:05.1234567891234", (_JAN2 + 11045) * _S + 123456),
        # zone ids: short ids, ZoneOffset.of's lengths, getZoneId's padding, spaces
        ("2020-01-02T03:04:05 EST", (_JAN2 + 8 * 3600 + 245) * _S),
        ("2020-07-02T03:04:05 PST", 1_593_684_245 * _S),
        ("2020-01-02T03:04:05+01:30:15", (_JAN2 + 5630) * _S),
        ("2020-01-02T03:04:05+013015", (_JAN2 + 5630) * _S),
        ("2020-01-02T03:04:05+01:3", (_JAN2 + 7265) * _S),
        ("2020-01-02T03:04:05+1:30", (_JAN2 + 5645) * _S),
        ("2020-01-02T03:04:05  UTC", (_JAN2 + 11045) * _S),
        ("2020-01-02T03:04:05UT-8", (_JAN2 + 11 * 3600 + 245) * _S),
        ("2020-01-02T03:04:05 +01:00 ", (_JAN2 + 7445) * _S),
        # a gap and an overlap in Europe/Paris
        ("2020-03-29T02:30:00 Europe/Paris", 1_585_445_400 * _S),
        ("2020-10-25T02:30:00 Europe/Paris", 1_603_585_800 * _S),
        # years: a sign, 4 to 6 digits, within a long
        ("0000-01-01", -62_167_219_200 * _S),
        ("-2020-01-02", -125_912_188_800 * _S),
        ("-0001-12-31", -62_167_305_600 * _S),
        ("00002-01-01", -62_104_060_800 * _S),
        ("+10000-01-01T00:00:00", 253_402_300_800 * _S),
        ("18262", 514_125_878_400 * _S),
        ("294247-01-10T04:00:54.775807Z", (1 << 63) - 1),
        # a zone's offset outside 1..9999: its recurring rules, its local mean time before
        ("+10000-07-01T00:00:00 Europe/Paris", 253_418_018_400 * _S),
        ("-0100-07-01T00:00:00 Europe/Paris", -65_307_254_961 * _S),
        ("+100000-03-26T02:30:00 Europe/Paris", 3_093_535_330_200 * _S),
        # trimmed: U+0000..U+0020 and U+007F
        ("\x002020-01-02", _JAN2 * _S),
        ("2020-01-02\x7f", _JAN2 * _S),
        ("\x0b2020-01-02", _JAN2 * _S),
        ("\t2020-01-02T03:04:05\n", (_JAN2 + 11045) * _S),
        ("2020-01-02T03:04:05\x00", (_JAN2 + 11045) * _S),
    ],
)
def test_timestamp(text: str, micros: int) -> None:
    assert _parse_timestamp(text) == micros


@pytest.mark.parametrize(
    "text",
    [
        # a zone only after the seconds
        "2020-01-02T03Z",
        "2020-01-02T03:04Z",
        "2020-01-02T03:04+01:00",
        "2020-01-02Z",
        "2020-01-02-03",
        "2020-01-02T",
        "2020-01-02T03:",
        "2020-01-02  03:04",
        # zone ids Java refuses
        "2020-01-02T03:04:05z",
        "2020-01-02T03:04:05 utc",
        "2020-01-02T03:04:05+19:00",
        "2020-01-02T03:04:05+18:01",
        "2020-01-02T03:04:05+01:60",
        "2020-01-02T03:04:05+01:3015",
        "2020-01-02T03:04:05 Z Z",
        "2020-01-02T03:04:05.1.2",
        # not trimmed: non-ASCII spaces
        "\u00a02020-01-02",
        "2020-01-02\u00a0",
        "\u00852020-01-02",
        "\u20032020-01-02",
        "\u30002020-01-02",
        "2020-01-02T03:04:05\u00a0",
        "2020-01-02T03:04:05 \u00a0UTC",
        # ASCII digits only
        "\u0662\u0660\u0662\u0660-01-02",
        "2020-01-0\u0662",
        "2020-01-02T0\u0663:04",
        # years
        "999-01-01",
        "1234567-01-01",
        "294248-01-01",
        "+-2020-01-02",
        # a time alone after trimmed text, or with a sign
        " T03:04",
        "+03:04",
        "12",
    ],
)
def test_timestamp_refused(text: str) -> None:
    assert _parse_timestamp(text) is None


def _today_at(zone: dt.tzinfo, seconds: int) -> int:
    """Microseconds since the epoch of today (in ``zone``) at ``seconds`` of the day there."""
    day = dt.datetime.now(zone).date()
    midnight = dt.datetime.combine(day, dt.time(), zone)
    return int(midnight.timestamp()) * _S + seconds * _S


@pytest.mark.parametrize(
    ("text", "zone", "seconds"),
    [
        ("T03:04", dt.timezone.utc, 11040),
        ("T03:04:05", dt.timezone.utc, 11045),
        ("03:04:05", dt.timezone.utc, 11045),
        ("3:04", dt.timezone.utc, 11040),
        ("T3", dt.timezone.utc, 10800),
        ("T03:04:05Z", dt.timezone.utc, 11045),
        ("03:04:05+01:00", dt.timezone(dt.timedelta(hours=1)), 11045),
    ],
)
def test_time_without_a_date_is_today(text: str, zone: dt.tzinfo, seconds: int) -> None:
    before = _today_at(zone, seconds)
    value = _parse_timestamp(text)
    assert value in (before, _today_at(zone, seconds))  # midnight may pass meanwhile


def test_time_without_a_date_in_the_time_zone_option() -> None:
    zone = dt.timezone(dt.timedelta(hours=-8))
    before = _today_at(zone, 11045)
    assert _parse_timestamp("T03:04:05", zone) in (before, _today_at(zone, 11045))


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("2020-01-02T03", (_JAN2 + 3 * 3600) * _S),
        ("-2020-01-02", -125_912_188_800 * _S),
        ("10000-07-01T12:00:00", 253_418_068_800 * _S),
        ("\x002020-01-02", _JAN2 * _S),
    ],
)
def test_timestamp_ntz(text: str, micros: int) -> None:
    assert _parse_timestamp_ntz(text) == micros


@pytest.mark.parametrize(
    "text", ["T03:04", "03:04:05", "2020-01-02T03:04:05 EST", "2020-01-02\u00a0", "294248-01-01"]
)
def test_timestamp_ntz_refused(text: str) -> None:
    assert _parse_timestamp_ntz(text) is None


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("18262", 5_950_531),
        ("1234567-01-01", 450_196_810),
        ("-2020-01-02", -1_457_317),
        ("0000-01-01", -719_528),
        ("\x002020-01-02", _JAN2_DAYS),
        ("2020-01-02T03:04:05\u00a0", _JAN2_DAYS),
        ("2020-01-02  03:04", _JAN2_DAYS),
        ("2020-01-02Tzzz", _JAN2_DAYS),
    ],
)
def test_date(text: str, days: int) -> None:
    assert _parse_date(text) == days


@pytest.mark.parametrize(
    "text",
    ["12345678-01-01", "\u00a02020-01-02", "2020-01-02\u00a0", "2020-01-02Z", "2020-01-02-03",
     "2020 01", "2020T", "\u0662\u0660\u0662\u0660-01-02", "12", "T03:04"],
)  # fmt: skip
def test_date_refused(text: str) -> None:
    assert _parse_date(text) is None


@pytest.mark.parametrize(
    ("text", "days"),
    [("12", 12), ("-1", -1), ("+5", 5), ("\u0661\u0662", 12), (" 18262", 5_950_531)],
)
def test_date_fallback(text: str, days: int) -> None:
    assert _parse_date_fallback(text) == days


@pytest.mark.parametrize("text", ["99999999999", "0x10", " 12", "1_2", ""])
def test_date_fallback_refused(text: str) -> None:
    assert _parse_date_fallback(text) is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("Z", 0), ("+1", 3600), ("-08", -28800), ("+0130", 5400), ("+01:30:15", 5415),
     ("+013015", 5415), ("+1:30", 5400), ("+01:3", 3780), ("+1:3", 3780), ("+18:00", 64800),
     ("UTC", 0), ("GMT-08:00", -28800), ("UT+1", 3600), ("EST", -18000), (" +01:00 ", 3600)],
)  # fmt: skip
def test_zone_offsets(text: str, seconds: int) -> None:
    zone = _zone_id(text)
    assert zone is not None
    assert zone.utcoffset(dt.datetime(2020, 1, 2)) == dt.timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "text",
    ["z", "utc", "+19", "+18:01", "+01:60", "+01:3015", "UTC+", "UTCX", "Nowhere/City",
     "A", "", "\u00a0UTC", "+\u0661"],
)  # fmt: skip
def test_zone_refused(text: str) -> None:
    assert _zone_id(text) is None


@pytest.mark.parametrize("compiled", [True, False])
def test_every_path_reads_them_alike(compiled: bool) -> None:
    """In one batch the compiled reader reads (most rows strict), the odd strings go to the
    per-row path; alone, to pyarrow's reader or the per-row path."""
    schema = {
        "type": "struct",
        "fields": [field("t", "timestamp"), field("d", "date"), field("_corrupt_record", "string")],
    }
    strict = [f'{{"t": "2020-01-{d:02d}T03:04:05Z", "d": "2020-01-{d:02d}"}}' for d in range(1, 25)]
    odd = [
        '{"t": "2020-01-02T03", "d": "18262"}',
        '{"t": "\\u00a02020-01-02", "d": "2020-01-02\\u00a0"}',
        '{"t": "+10000-01-01T00:00:00", "d": "\\u00002020-01-02"}',
    ]
    expected_odd = [
        ((_JAN2 + 3 * 3600) * _S, 5_950_531, None),
        (None, None, odd[1]),
        (253_402_300_800 * _S, _JAN2_DAYS, None),
    ]
    decoder = JsonDecoder(schema, mode="PERMISSIVE", compiled=compiled)
    for docs in (strict + odd, odd):
        array = decoder.decode(pa.array(docs, pa.string()))
        t = array.field("t").cast(pa.int64()).to_pylist()
        d = array.field("d").cast(pa.int32()).to_pylist()
        c = array.field("_corrupt_record").to_pylist()
        assert list(zip(t, d, c, strict=True))[-3:] == expected_odd
