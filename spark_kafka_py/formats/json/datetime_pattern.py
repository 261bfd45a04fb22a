"""Spark's datetime patterns (``timestampFormat``, ``dateFormat``) as parsers, and Spark's
time-zone ids (``timeZone``).

Spark 3+ parses with ``java.time.format.DateTimeFormatter`` built from the pattern by
``DateTimeFormatterHelper`` (Spark's ``sql/api`` ``DateTimeFormatterHelper.scala``, the
"Datetime Patterns for Formatting and Parsing" page of Spark's SQL reference):
``parseCaseInsensitive``, the ISO chronology, ``ResolverStyle.STRICT``; ``y`` becomes ``u``
(the proleptic year) as no era letter ``G`` is allowed here; a run of ``S`` parses 1 to that
many fraction digits (``appendFraction(NANO_OF_SECOND, 1, n, false)``); the whole text must
be consumed. Missing fields take defaults as ``toLocalDate``/``toLocalTime`` give them: year
1970, month 1, day 1, hour 0 (or 12 for a bare ``PM``), minute, second and fraction 0.

A pattern is compiled once into a regular expression (a group per field) and a resolver.
The pattern letters read here, with what ``DateTimeFormatter`` parses for them (strict):

========  ======================================================================
``y``     year: ``yy`` two digits, 2000-2099; ``y``/``yyy`` at least 1/3 digits, a
          ``-`` taken, a ``+`` refused (``SignStyle.NORMAL``); ``yyyy``..``yyyyyy``
          (n letters) exactly n digits, or ``-`` and at least n, or ``+`` and more than n
          (``SignStyle.EXCEEDS_PAD``); year 0 and negative years are proleptic (``-0`` is
          refused), up to ``ChronoField.YEAR``'s +-999999999
``M L``   month: ``M`` 1-2 digits, ``MM`` 2, ``MMM`` ``Jan``..``Dec``, ``MMMM``
          ``January``..``December`` (Locale US, any case)
``d``     day of month: ``d`` 1-2 digits, ``dd`` 2
``D``     day of year: ``D`` 1-3 digits, ``DD`` 2-3, ``DDD`` 3
``H k``   hour of day 0-23 / clock hour 1-24 (``24`` is hour 0): 1-2 digits or 2
``h K``   clock hour of am-pm 1-12 (``12`` is 0) / hour of am-pm 0-11; without ``a``
          the hour is taken as is (AM)
``m s``   minute, second: 1-2 digits or 2
``S``     fraction: ``S`` x n reads 1..n digits (n <= 9); micros kept (truncated)
``a``     ``AM``/``PM``
``X``     offset, ``Z`` for zero: ``X`` ``+HH[mm]``, ``XX`` ``+HHMM``, ``XXX``
          ``+HH:MM``, ``XXXX`` ``+HHMM[ss]``, ``XXXXX`` ``+HH:MM[:ss]``
``x``     the same with ``+00``/``+0000``/``+00:00`` for zero instead of ``Z``
``Z``     ``Z``..``ZZZ`` ``+HHMM`` (``+0000`` for zero), ``ZZZZZ`` ``+HH:MM[:ss]``/``Z``
``VV``    zone id: a region (``Europe/Paris``), ``Z``, ``UTC``/``GMT``/``UT`` with an
          optional ``+hh:mm``, or ``+hh:mm``
``'...'`` literal text (``''`` a quote); ``[...]`` optional section; other
          non-letters literal (any case, as the formatter is case-insensitive)
========  ======================================================================

Refused (:class:`PatternError`): the letters Spark refuses for parsing (week-based ``Y W w
u e c``; ``A B n N p``; ``E F q Q``; five ``G M L``; seven ``y``) and those not supported
here: ``G`` (era), ``z`` and ``v`` (zone names), ``O`` and ``ZZZZ`` (localized offsets),
``V`` other than ``VV``, ``g``, more than 9 ``S``, ``{``, ``}``, ``#`` and any other letter.

A date is kept within an ``int`` of days and a timestamp within a ``long`` of microseconds
(Spark's types), else the value is bad; a zone's offset for a year outside 1..9999 is the one
of the same date 400*k years away (:func:`zoned_micros`).

Differences kept: a variable-width number not followed by a fixed-width one does not give
back digits (as ``DateTimeFormatter``) but one followed by such a field backtracks over the
digits as a regular expression does, which is how ``DateTimeFormatter``'s adjacent value
parsing splits ``yyyyMMdd``.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import pyarrow as pa
import pyarrow.compute as pc

_MICROS_PER_SECOND: Final = 1_000_000
_MICROS_PER_DAY: Final = 86_400 * _MICROS_PER_SECOND
_EPOCH_ORDINAL: Final = dt.date(1970, 1, 1).toordinal()
_UTC: Final = dt.timezone.utc
#: ``ChronoField.YEAR``'s range.
_MIN_YEAR, _MAX_YEAR = -999_999_999, 999_999_999

#: Letters Spark refuses (``DateTimeFormatterHelper``): week-based, unsupported, and
#: unsupported for parsing.
_SPARK_REFUSED: Final = {
    **dict.fromkeys("YWwuec", "week-based pattern letters are refused by Spark 3+"),
    **dict.fromkeys("ABnNp", "Spark refuses this pattern letter"),
    **dict.fromkeys("EFqQ", "Spark refuses this pattern letter for parsing"),
}
#: Letters Spark accepts that are not read here.
_NOT_HERE: Final = {
    "G": "the era is not read here",
    "z": "zone names are not read here (use VV, X, x or Z)",
    "v": "generic zone names are not read here (use VV, X, x or Z)",
    "O": "localized offsets are not read here (use X, x or Z)",
    "g": "the modified Julian day is not read here",
}
_MONTHS_SHORT: Final = tuple(calendar.month_abbr[1:])  # Locale US: Jan .. Dec
_MONTHS_FULL: Final = tuple(calendar.month_name[1:])
#: Java's ``ZoneId.SHORT_IDS`` (accepted by Spark's ``getZoneId``).
SHORT_IDS: Final = {
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}
#: The largest offset ``java.time.ZoneOffset`` takes, in seconds (18 hours).
_MAX_OFFSET_SECONDS: Final = 18 * 3600


class PatternError(ValueError):
    """A datetime pattern (or a time-zone id) that is not read here.

    Attributes:
        reason: what is wrong, naming the letter when one is the cause.
        letter: the pattern letter refused, or ``""``.
    """

    def __init__(self, reason: str, letter: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.letter = letter


# -- time zones -------------------------------------------------------------------------------


def zone_of(zone_id: str) -> dt.tzinfo:
    """Spark's ``DateTimeUtils.getZoneId``: ``ZoneId.of(id, SHORT_IDS)`` after Spark's fixes of
    ``+h:mm`` and ``+hh:m``: ``Z``, ``UTC``, ``GMT``, ``UT`` (optionally followed by an
    offset), ``+h``, ``+hh``, ``+hh:mm``, ``+hhmm``, ``+hh:mm:ss``, ``+hhmmss`` (up to
    18 hours), a region (``Europe/Paris``, case as written), or a short id (``PST``).

    Raises:
        PatternError: anything else.
    """
    text = re.sub(r"^([+-])(\d):", r"\g<1>0\2:", zone_id)
    text = re.sub(r"^([+-]\d\d):(\d)$", r"\1:0\2", text)
    text = SHORT_IDS.get(text, text)
    if not text:
        raise PatternError("not a time zone: ''")
    if text == "Z":
        return _UTC
    prefix = re.match(r"(UTC|GMT|UT)(?=[+-]|$)", text)
    rest = text[prefix.end() :] if prefix else text
    if rest == "":
        return _UTC
    if rest[0] in "+-":
        seconds = _offset_seconds(rest)
        if seconds is None:
            raise PatternError(f"not a time zone: {zone_id!r} (an offset beyond 18:00:00?)")
        return dt.timezone(dt.timedelta(seconds=seconds)) if seconds else _UTC
    if prefix:
        raise PatternError(f"not a time zone: {zone_id!r}")
    try:
        return _region(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise PatternError(f"not a time zone: {zone_id!r}") from None


@lru_cache(maxsize=256)
def _region(name: str) -> ZoneInfo:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9~._+-]*(?:/[A-Za-z0-9~._+-]+)*", name):
        raise ValueError(name)
    return ZoneInfo(name)


def _offset_seconds(text: str) -> int | None:
    """``ZoneOffset.of``'s forms: ``+h``, ``+hh``, ``+hh:mm``, ``+hhmm``, ``+hh:mm:ss``,
    ``+hhmmss``; None for another text or beyond 18 hours."""
    m = re.fullmatch(r"([+-])(\d{1,2})(?::?(\d\d)(?::?(\d\d))?)?", text, re.ASCII)
    if m is None or (len(m[2]) == 1 and m[3] is not None):
        return None
    hours, minutes, seconds = int(m[2]), int(m[3] or 0), int(m[4] or 0)
    if minutes > 59 or seconds > 59:
        return None
    total = hours * 3600 + minutes * 60 + seconds
    if total > _MAX_OFFSET_SECONDS:
        return None
    return -total if m[1] == "-" else total


def local_to_micros(local_micros: int, zone: dt.tzinfo) -> int | None:
    """Microseconds since the epoch of a local date-time (``local_micros`` counted from
    1970-01-01T00:00 local) in ``zone``, as ``ZonedDateTime.of``: a time in a gap is moved
    forward by the gap, a time in an overlap takes the earlier offset (``fold=0`` gives both).
    None when the local date-time is outside years 1..9999."""
    offset: dt.timedelta | None
    if isinstance(zone, dt.timezone):
        offset = zone.utcoffset(None)
    else:
        days, rest = divmod(local_micros, _MICROS_PER_DAY)
        try:
            naive = dt.datetime.fromordinal(days + _EPOCH_ORDINAL) + dt.timedelta(microseconds=rest)
        except (ValueError, OverflowError):
            return None
        offset = naive.replace(tzinfo=zone).utcoffset()
    assert offset is not None
    return local_micros - (offset // dt.timedelta(microseconds=1))


#: 400 Gregorian years: the calendar (and a zone's recurring rules) repeats after them.
_CYCLE_DAYS: Final = 146_097


def civil_days(year: int, month: int, day: int) -> int | None:
    """Days since 1970-01-01 of a proleptic Gregorian date (``LocalDate.of``: any year here,
    negative and beyond 9999 included); None when the month or day does not exist."""
    if not 1 <= month <= 12 or day < 1:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day > (29 if leap else 28) if month == 2 else day > (30 if month in (4, 6, 9, 11) else 31):
        return None
    # the civil-from-days count of March-based years (exact for any integer year)
    y = year - (month <= 2)
    era, yoe = divmod(y, 400)
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * _CYCLE_DAYS + doe - 719_468


def zoned_micros(days: int, micros_of_day: int, zone: dt.tzinfo) -> int | None:
    """Microseconds since the epoch of a local date-time in ``zone`` (``ZonedDateTime.of``,
    :func:`local_to_micros`); a year outside 1..9999 is moved by whole 400-year
    cycles into it to find the zone's offset (the same calendar; past a zone's last
    transition its rules recur each year, before its first one its first offset holds).
    None beyond a ``long`` (``instantToMicros``)."""
    local = days * _MICROS_PER_DAY + micros_of_day
    if isinstance(zone, dt.timezone):
        offset = zone.utcoffset(None) // dt.timedelta(microseconds=1)
        value: int | None = local - offset
    else:
        shift = 0  # in days: the date read is days - shift, within 0001..9999
        if days < _DAY_ONE:
            shift = (days - _DAY_ONE) // _CYCLE_DAYS * _CYCLE_DAYS
        elif days > _DAY_LAST:
            shift = ((days - _DAY_LAST) // _CYCLE_DAYS + 1) * _CYCLE_DAYS
        value = local_to_micros(local - shift * _MICROS_PER_DAY, zone)
        if value is not None:
            value += shift * _MICROS_PER_DAY
    if value is None or not _INT64_MIN <= value <= _INT64_MAX:
        return None
    return value


#: 0001-01-01 and 9999-12-31 in days since the epoch.
_DAY_ONE: Final = -719_162
_DAY_LAST: Final = 2_932_896


#: A ``long``'s range (Spark's microseconds) and an ``int``'s (Spark's days).
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


# -- patterns -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    """A parsed group: its regex group name and what it sets."""

    group: str
    kind: str  # year, year2, month, month_text, day, doy, hour, clock24, hour12, hour_ampm,
    # minute, second, fraction, ampm, offset, zone


@dataclass(frozen=True)
class _Part:
    regex: str
    fixed_number: bool = False  # a fixed-width number (an adjacent value in Java's terms)
    variable_number: bool = False
    field: _Field | None = None
    #: the regex when no fixed-width number follows (Java gives no digits back); None: the
    #: regex's last quantifier made possessive
    possessive: str | None = None


def _split(pattern: str) -> list[tuple[str, object]]:
    """The pattern as tokens: ``("lit", text)``, ``("letters", "yyyy")``, ``("[", None)``,
    ``("]", None)``.

    Raises:
        PatternError: an unterminated quote, unbalanced brackets, a reserved character.
    """
    tokens: list[tuple[str, object]] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "'":
            j = i + 1
            text = []
            while True:
                if j >= n:
                    raise PatternError(f"unterminated quote at {i} in {pattern!r}")
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            tokens.append(("lit", "".join(text) if j > i + 1 else "'"))
            i = j + 1
        elif c == "[":
            depth += 1
            tokens.append(("[", None))
            i += 1
        elif c == "]":
            if depth == 0:
                raise PatternError(f"']' without '[' in {pattern!r}")
            depth -= 1
            tokens.append(("]", None))
            i += 1
        elif c in "{}#":
            raise PatternError(f"the character {c!r} is reserved in patterns", c)
        elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
            j = i
            while j < n and pattern[j] == c:
                j += 1
            tokens.append(("letters", pattern[i:j]))
            i = j
        else:
            tokens.append(("lit", c))
            i += 1
    if depth:
        raise PatternError(f"'[' without ']' in {pattern!r}")
    return tokens


def _digits(lo: int, hi: int) -> str:
    return f"[0-9]{{{lo},{hi}}}" if lo != hi else f"[0-9]{{{lo}}}"


_OFFSET_FORMS: Final = {
    # Java's OffsetIdPrinterParser patterns: (regex for the sign and digits)
    "+HHmm": r"[+-][0-9]{2}(?:[0-5][0-9])?",
    "+HHMM": r"[+-][0-9]{2}[0-5][0-9]",
    "+HH:MM": r"[+-][0-9]{2}:[0-5][0-9]",
    "+HHMMss": r"[+-][0-9]{2}[0-5][0-9](?:[0-5][0-9])?",
    "+HH:MM:ss": r"[+-][0-9]{2}:[0-5][0-9](?::[0-5][0-9])?",
}


def _year(group: str, n: int) -> _Part:
    """``y`` x ``n`` (``n`` not 2) as ``DateTimeFormatterBuilder`` appends it (for ``u``, which
    Spark puts in its place): ``appendValue(YEAR, n, 19, sign)``, parsed strictly. ``n`` < 4:
    ``SignStyle.NORMAL``, a ``-`` taken, a ``+`` refused, at least ``n`` digits. ``n`` >= 4:
    ``SignStyle.EXCEEDS_PAD``, a ``-`` and at least ``n`` digits, or a ``+`` and more than ``n``
    digits, or exactly ``n`` digits without a sign (Java reads every digit, then refuses more
    than ``n`` unsigned ones). Minus zero is refused in :func:`_resolve`."""
    if n < 4:
        body = f"-?[0-9]{{{n},19}}"
        return _Part(
            f"(?P<{group}>{body})",
            variable_number=True,
            field=_Field(group, "year"),
            possessive=f"(?P<{group}>{body}+)",
        )
    signed = f"-[0-9]{{{n},19}}", f"\\+[0-9]{{{n + 1},19}}"
    return _Part(
        f"(?P<{group}>{signed[0]}|{signed[1]}|[0-9]{{{n}}})",
        variable_number=True,
        field=_Field(group, "year"),
        possessive=f"(?P<{group}>{signed[0]}+|{signed[1]}+|[0-9]{{{n}}}(?![0-9]))",
    )


def _letters(run: str, index: int, pattern: str) -> _Part:
    """One run of a pattern letter as a regex part.

    Raises:
        PatternError: a letter or length not read here.
    """
    c, n = run[0], len(run)
    group = f"g{index}"

    def number(kind: str, lo: int, hi: int) -> _Part:
        return _Part(
            f"(?P<{group}>{_digits(lo, hi)})",
            fixed_number=lo == hi,
            variable_number=lo != hi,
            field=_Field(group, kind),
        )

    def too_many() -> PatternError:
        return PatternError(f"too many pattern letters: {run!r} in {pattern!r}", c)

    if c in _SPARK_REFUSED:
        raise PatternError(f"{_SPARK_REFUSED[c]}: {c!r} in {pattern!r}", c)
    if c in _NOT_HERE:
        raise PatternError(f"{_NOT_HERE[c]}: {c!r} in {pattern!r}", c)
    if c == "y":
        if n >= 7:
            raise too_many()
        if n == 2:
            return number("year2", 2, 2)
        return _year(group, n)
    if c in "ML":
        if n == 1:
            return number("month", 1, 19)
        if n == 2:
            return number("month", 2, 2)
        if n in (3, 4):
            names = _MONTHS_SHORT if n == 3 else _MONTHS_FULL
            alternatives = "|".join(sorted(names, key=len, reverse=True))
            return _Part(f"(?P<{group}>{alternatives})", field=_Field(group, "month_text"))
        raise too_many()
    simple = {"d": "day", "H": "hour", "k": "clock24", "h": "hour12", "K": "hour_ampm",
              "m": "minute", "s": "second"}  # fmt: skip
    if c in simple:
        if n > 2:
            raise too_many()
        return number(simple[c], 1, 19) if n == 1 else number(simple[c], 2, 2)
    if c == "D":
        if n > 3:
            raise too_many()
        return number("doy", 1, 19) if n == 1 else number("doy", n, 3)
    if c == "S":
        if n > 9:
            raise too_many()
        return _Part(f"(?P<{group}>[0-9]{{1,{n}}}+)", field=_Field(group, "fraction"))
    if c == "a":
        if n > 1:
            raise too_many()
        return _Part(f"(?P<{group}>AM|PM)", field=_Field(group, "ampm"))
    if c in "Xx":
        if n > 5:
            raise too_many()
        form = ("+HHmm", "+HHMM", "+HH:MM", "+HHMMss", "+HH:MM:ss")[n - 1]
        zero = "Z" if c == "X" else ("+00", "+0000", "+00:00", "+0000", "+00:00")[n - 1]
        # Java tries the zero text first and keeps it (an atomic group)
        return _Part(
            f"(?P<{group}>(?>{re.escape(zero)}|{_OFFSET_FORMS[form]}))",
            field=_Field(group, "offset"),
        )
    if c == "Z":
        if n <= 3:
            return _Part(
                f"(?P<{group}>(?>\\+0000|{_OFFSET_FORMS['+HHMM']}))",
                field=_Field(group, "offset"),
            )
        if n == 5:
            return _Part(
                f"(?P<{group}>(?>Z|{_OFFSET_FORMS['+HH:MM:ss']}))", field=_Field(group, "offset")
            )
        if n == 4:
            raise PatternError(f"localized offsets are not read here: 'ZZZZ' in {pattern!r}", c)
        raise too_many()
    if c == "V":
        if n != 2:
            raise PatternError(f"pattern letter 'V' must be 'VV': {run!r} in {pattern!r}", c)
        return _Part(f"(?P<{group}>{_zone_id_regex()})", field=_Field(group, "zone"))
    raise PatternError(f"unknown pattern letter {c!r} in {pattern!r}", c)


@lru_cache(maxsize=1)
def _zone_id_regex() -> str:
    """``VV``: ``Z``, ``UTC``/``GMT``/``UT`` with an optional offset, an offset, or one of the
    regions this Python knows (longest first, as Java's prefix tree matches the longest)."""
    regions = sorted(
        (z for z in available_timezones() if "/" in z or z.isalpha()), key=len, reverse=True
    )
    offset = r"[+-][0-9]{2}(?::[0-5][0-9](?::[0-5][0-9])?)?"
    named = "|".join(re.escape(z) for z in regions)
    return rf"(?:UTC|GMT|UT)(?:{offset})?|{offset}|{named}|Z"


class DateTimePattern:
    """A Spark datetime pattern compiled for parsing.

    Attributes:
        pattern: the pattern as given.
    """

    def __init__(self, pattern: str) -> None:
        """Compile ``pattern``.

        Raises:
            PatternError: a letter, length or construct not read here (see the module).
        """
        self.pattern = pattern
        tokens = _split(pattern)
        parts: list[_Part | str] = []  # str: "[" / "]"
        index = 0
        for kind, value in tokens:
            if kind == "lit":
                assert isinstance(value, str)
                parts.append(_Part(re.escape(value)))
            elif kind == "letters":
                assert isinstance(value, str)
                parts.append(_letters(value, index, pattern))
                index += 1
            else:
                parts.append(kind)
        regex: list[str] = []
        fields: list[_Field] = []
        for i, part in enumerate(parts):
            if part == "[":
                regex.append("(?>(?:")
                continue
            if part == "]":
                regex.append(")?)")
                continue
            assert isinstance(part, _Part)
            text = part.regex
            if part.variable_number:
                following = parts[i + 1] if i + 1 < len(parts) else None
                adjacent = isinstance(following, _Part) and following.fixed_number
                if not adjacent:  # Java does not give digits back: possessive
                    text = part.possessive if part.possessive is not None else text[:-1] + "+)"
            regex.append(text)
            if part.field is not None:
                fields.append(part.field)
        self._regex = re.compile("".join(regex), re.IGNORECASE)
        self._fields = tuple(fields)
        self._vector = _vector_plan(tokens)

    def _fields_of(self, text: str) -> dict[str, str] | None:
        m = self._regex.fullmatch(text)
        if m is None:
            return None
        return {f.kind: m[f.group] for f in self._fields if m[f.group] is not None}

    def parse_date(self, text: str) -> int | None:
        """``Iso8601DateFormatter.parse``: days since 1970-01-01, or None when ``text`` does
        not match the pattern or gives an impossible date or time."""
        got = self._fields_of(text)
        if got is None:
            return None
        # an offset or zone is read and checked (beyond 18 hours, unknown) though unused
        if "offset" in got and _parsed_offset(got["offset"]) is None:
            return None
        if "zone" in got and _parsed_zone(got["zone"]) is None:
            return None
        resolved = _resolve(got)
        if resolved is None or not _INT32_MIN <= resolved[0] <= _INT32_MAX:
            return None  # Spark's days are an int
        return resolved[0]

    def parse_timestamp(self, text: str, zone: dt.tzinfo) -> int | None:
        """``Iso8601TimestampFormatter.parse``: microseconds since the epoch, the parsed zone or
        offset if any, else ``zone``; None when ``text`` does not match or is impossible."""
        got = self._fields_of(text)
        if got is None:
            return None
        resolved = _resolve(got)
        if resolved is None:
            return None
        days, micros_of_day = resolved
        if "zone" in got:
            parsed_zone = _parsed_zone(got["zone"])
            if parsed_zone is None:
                return None
            zone = parsed_zone
        elif "offset" in got:
            seconds = _parsed_offset(got["offset"])
            if seconds is None:
                return None
            zone = dt.timezone(dt.timedelta(seconds=seconds))
        return zoned_micros(days, micros_of_day, zone)

    def parse_local_timestamp(self, text: str) -> int | None:
        """``Iso8601TimestampFormatter.parseWithoutTimeZone(text, allowTimeZone=false)`` (a
        ``timestamp_ntz`` string with ``timestampNTZFormat``): microseconds since
        1970-01-01T00:00 of the local date-time; None when ``text`` does not match, is
        impossible, or carries a zone or offset (``X``, ``x``, ``Z``, ``VV`` matched, ``Z``
        for zero included: Spark refuses any parsed zone)."""
        got = self._fields_of(text)
        if got is None or "zone" in got or "offset" in got:
            return None
        resolved = _resolve(got)
        if resolved is None:
            return None
        days, micros_of_day = resolved
        local = days * _MICROS_PER_DAY + micros_of_day
        return local if _INT64_MIN <= local <= _INT64_MAX else None

    def arrow_timestamps(self, column: pa.Array, zone: dt.tzinfo) -> pa.Array | None:
        """:meth:`parse_timestamp` over a string column with Arrow's kernels, for the patterns
        Arrow can read exactly (:func:`_vector_plan`): ``timestamp[us, tz=UTC]``, nulls kept;
        None when the pattern is not one of them or one string does not match (the caller then
        parses string by string, which finds the bad ones)."""
        naive = self._arrow_naive(column, with_time=True)
        if naive is None:
            return None
        utc = pa.timestamp("us", tz="UTC")
        if isinstance(zone, dt.timezone):
            offset = zone.utcoffset(None) // dt.timedelta(microseconds=1)
            shifted = pc.subtract(naive.cast(pa.int64()), offset) if offset else naive
            return shifted.cast(pa.int64()).cast(utc)
        key = getattr(zone, "key", None)
        if key is None or pc.max(naive).as_py() >= _ARROW_RULES_END:
            return None  # Arrow's zone rules stop at 2037: later times string by string
        try:
            # ZonedDateTime.of: a time in an overlap takes the earlier offset; one in a gap
            # moves forward by the gap, which is the local time less the offset before the
            # gap. assume_timezone's "earliest" gives, for a time in a gap, the instant just
            # before it, whose offset is that one; for the others, the instant itself.
            before = pc.assume_timezone(naive, key, ambiguous="earliest", nonexistent="earliest")
            offset = pc.subtract(
                pc.local_timestamp(before).cast(pa.int64()), before.cast(pa.int64())
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        return pc.subtract(naive.cast(pa.int64()), offset).cast(utc)

    def arrow_dates(self, column: pa.Array) -> pa.Array | None:
        """:meth:`parse_date` over a string column with Arrow's kernels (``date32``), as
        :meth:`arrow_timestamps`."""
        return self._arrow_naive(column, with_time=False)

    def _arrow_naive(self, column: pa.Array, *, with_time: bool) -> pa.Array | None:
        plan = self._vector
        if plan is None or column.null_count == len(column):
            return None
        regex, slots = plan
        if not pc.all(pc.match_substring_regex(column, regex)).as_py():
            return None
        parts = pc.extract_regex(column, regex)
        # flatten(): the children with the parent's nulls (field() would give "" there)
        got = dict(zip(slots, parts.flatten(), strict=True))

        def two(slot: str, default: str) -> pa.Array | str:
            value = got.get(slot)
            return default if value is None else pc.utf8_lpad(value, 2, "0")

        pieces: list[pa.Array | str] = [
            got.get("year", "1970"), "-", two("month", "01"), "-", two("day", "01")
        ]  # fmt: skip
        if with_time:
            pieces += ["T", two("hour", "00"), ":", two("minute", "00"), ":", two("second", "00")]
            if "fraction" in got:
                micros = pc.utf8_rpad(pc.utf8_slice_codeunits(got["fraction"], 0, 6), 6, "0")
                pieces += [".", micros]
        if all(isinstance(piece, str) for piece in pieces):
            return None  # no field of this type in the pattern (a date of "HH:mm")
        text = pc.binary_join_element_wise(*pieces, "")
        try:
            return text.cast(pa.timestamp("us") if with_time else pa.date32())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # an impossible date (Feb 30): string by string


#: From here Arrow's time-zone database (TZif transitions, no rule extrapolation) and
#: Java's/zoneinfo's (rules extrapolated) disagree on daylight saving time.
_ARROW_RULES_END: Final = dt.datetime(2038, 1, 1)

#: The pattern letter runs Arrow's kernels read exactly: (slot, RE2 regex of what the letters
#: match in Spark for the strings this regex accepts). One-letter fields are 1-2 digits here
#: (Spark takes more; such strings go string by string).
_VECTOR_FIELDS: Final = {
    "yyyy": ("year", "(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"),
    "MM": ("month", "(?:0[1-9]|1[0-2])"),
    "M": ("month", "(?:0?[1-9]|1[0-2])"),
    "dd": ("day", "(?:0[1-9]|[12][0-9]|3[01])"),
    "d": ("day", "(?:0?[1-9]|[12][0-9]|3[01])"),
    "HH": ("hour", "(?:[01][0-9]|2[0-3])"),
    "H": ("hour", "(?:[01]?[0-9]|2[0-3])"),
    "mm": ("minute", "[0-5][0-9]"),
    "m": ("minute", "[0-5]?[0-9]"),
    "ss": ("second", "[0-5][0-9]"),
    "s": ("second", "[0-5]?[0-9]"),
}
#: The runs of :data:`_VECTOR_FIELDS` of fixed width (adjacent numbers split as Java splits).
_FIXED: Final = frozenset({"yyyy", "MM", "dd", "HH", "mm", "ss"})


def _vector_plan(tokens: list[tuple[str, object]]) -> tuple[str, tuple[str, ...]] | None:
    """An RE2 regex (groups in slot order) and its slots for a pattern of literals and the
    runs of :data:`_VECTOR_FIELDS` and ``S`` only, where no variable-width number touches
    another number; None for any other pattern."""
    regex = ["(?i)^"]
    slots: list[str] = []
    previous_variable = False
    previous_number = False
    for kind, value in tokens:
        if kind == "lit":
            assert isinstance(value, str)
            regex.append(
                "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in value)
            )
            previous_variable = previous_number = False
            continue
        if kind != "letters":
            return None  # optional sections
        assert isinstance(value, str)
        if value in _VECTOR_FIELDS:
            slot, field_regex = _VECTOR_FIELDS[value]
            variable = value not in _FIXED
        elif set(value) == {"S"} and len(value) <= 9:
            slot, field_regex = "fraction", f"[0-9]{{1,{len(value)}}}"
            variable = True
        else:
            return None
        if slot in slots or (previous_number and (variable or previous_variable)):
            return None
        regex.append(f"(?P<{slot}>{field_regex})")
        slots.append(slot)
        previous_variable, previous_number = variable, True
    regex.append("$")
    return "".join(regex), tuple(slots)


def _parsed_offset(text: str) -> int | None:
    if text.upper() == "Z":
        return 0
    digits = text[1:].replace(":", "")
    hours, minutes, seconds = int(digits[:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours > 23:
        return None  # Java: "Value out of range: Hour[0-23]"
    total = hours * 3600 + minutes * 60 + seconds
    if total > _MAX_OFFSET_SECONDS:
        return None  # ZoneOffset: beyond 18 hours
    return -total if text[0] == "-" else total


def _parsed_zone(text: str) -> dt.tzinfo | None:
    upper = text.upper()
    for prefix in ("UTC", "GMT", "UT", ""):
        if upper.startswith(prefix) and (len(text) == len(prefix) or text[len(prefix)] in "+-"):
            if len(text) == len(prefix):
                return _UTC if prefix else None
            seconds = _parsed_offset(text[len(prefix) :])
            return None if seconds is None else dt.timezone(dt.timedelta(seconds=seconds))
    if upper == "Z":
        return _UTC
    canonical = _regions_by_upper().get(upper)
    return None if canonical is None else _region(canonical)


@lru_cache(maxsize=1)
def _regions_by_upper() -> dict[str, str]:
    return {z.upper(): z for z in available_timezones()}


def _resolve(got: dict[str, str]) -> tuple[int, int] | None:
    """The parsed fields as (days since the epoch, microseconds of the day), with Spark's
    defaults and ``ResolverStyle.STRICT``'s checks; None when impossible."""
    # -- the date
    if "year2" in got:
        year = 2000 + int(got["year2"])
    elif "year" in got:
        year = int(got["year"])
        if year == 0 and got["year"][0] == "-":
            return None  # Java: minus zero is refused in strict parsing
        if not _MIN_YEAR <= year <= _MAX_YEAR:
            return None  # ChronoField.YEAR's range
    else:
        year = 1970
    month: int | None = None
    if "month" in got:
        month = int(got["month"])
    elif "month_text" in got:
        name = got["month_text"].lower()
        month = 1 + next(
            i
            for i, (short, full) in enumerate(zip(_MONTHS_SHORT, _MONTHS_FULL, strict=True))
            if name in (short.lower(), full.lower())
        )
    day = int(got["day"]) if "day" in got else None
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= 31:
        return None
    if "doy" in got:
        doy = int(got["doy"])
        if not 1 <= doy <= (366 if calendar.isleap(year) else 365):
            return None
        days = civil_days(year, 1, 1)
        assert days is not None
        days += doy - 1
        of_month = doy
        for m in range(1, 13):
            length = calendar.monthrange(2000 if calendar.isleap(year) else 2001, m)[1]
            if of_month <= length:
                break
            of_month -= length
        if (month is not None and m != month) or (day is not None and of_month != day):
            return None
    else:
        found = civil_days(year, month or 1, day or 1)
        if found is None:
            return None
        days = found
    # -- the time
    ampm = got.get("ampm")
    pm = None if ampm is None else ampm.upper() == "PM"
    hour: int | None = None
    if "hour" in got:
        hour = int(got["hour"])
        if hour > 23:
            return None
    if "clock24" in got:
        k = int(got["clock24"])
        if not 1 <= k <= 24:
            return None
        if hour is not None and hour != k % 24:
            return None
        hour = k % 24
    hour_of_ampm: int | None = None
    if "hour12" in got:
        h = int(got["hour12"])
        if not 1 <= h <= 12:
            return None
        hour_of_ampm = h % 12
    if "hour_ampm" in got:
        k = int(got["hour_ampm"])
        if k > 11 or (hour_of_ampm is not None and hour_of_ampm != k):
            return None
        hour_of_ampm = k
    if hour_of_ampm is not None:
        if pm is not None:
            of_day = hour_of_ampm + (12 if pm else 0)
            if hour is not None and hour != of_day:
                return None
            hour = of_day
        elif hour is None:
            hour = hour_of_ampm  # Spark's toLocalTime: am assumed
        elif hour % 12 != hour_of_ampm:
            return None
    elif pm is not None:
        if hour is None:
            hour = 12 if pm else 0
        elif (hour >= 12) != pm:
            return None  # cross-check of AMPM_OF_DAY against the hour
    minute = int(got.get("minute", 0))
    second = int(got.get("second", 0))
    if minute > 59 or second > 59:
        return None
    fraction = got.get("fraction", "")
    micros = int(fraction[:6].ljust(6, "0")) if fraction else 0
    return days, (((hour or 0) * 60 + minute) * 60 + second) * _MICROS_PER_SECOND + micros


@lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> DateTimePattern:
    """:class:`DateTimePattern` of ``pattern``, cached per process.

    Raises:
        PatternError: see :class:`DateTimePattern`.
    """
    return DateTimePattern(pattern)
