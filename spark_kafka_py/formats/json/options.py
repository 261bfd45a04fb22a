"""``from_json``'s options that change how a document is read when the schema is given
(Spark's ``JSONOptions``), checked once.

- ``timestampFormat`` (none): a Spark datetime pattern for timestamp strings
  (:mod:`.datetime_pattern`); none: Spark's ``stringToTimestamp`` forms.
- ``dateFormat`` (none): the same for dates; none: ``stringToDate``, then days as an integer.
- ``timestampNTZFormat`` (none): the same for ``timestamp_ntz`` strings, which are read
  without a zone (a string with a zone or offset is a bad value) and without any fallback;
  none: ``stringToTimestampWithoutTimeZone``'s forms.
- ``timeZone`` (``UTC``): the zone of a timestamp string without one.
- ``enableDateTimeParsingFallback`` (true for a type without a format): a string the pattern
  does not match is tried with ``stringToTimestamp`` / ``stringToDate``.
- Jackson's read features (:mod:`.jackson`): ``allowComments`` (false),
  ``allowUnquotedFieldNames`` (false), ``allowSingleQuotes`` (true),
  ``allowNumericLeadingZeros`` (false), ``allowNonNumericNumbers`` (true; also the strings
  ``"NaN"``, ``"+INF"``, ... into doubles and floats), ``allowBackslashEscapingAnyCharacter``
  (false), ``allowUnquotedControlChars`` (false).

The session settings Spark also reads are not known on the executors here:
``spark.sql.session.timeZone`` (``timeZone`` defaults to UTC instead),
``spark.sql.legacy.timeParserPolicy`` (taken as ``CORRECTED``, Spark 4's default; ``LEGACY``'s
``SimpleDateFormat`` parsing is not reproduced) and ``spark.sql.json.enableDateTimeParsingFallback``
(give the option instead).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from spark_kafka_py.formats.errors import JsonError
from spark_kafka_py.formats.json.datetime_pattern import (
    DateTimePattern,
    PatternError,
    compile_pattern,
    zone_of,
)
from spark_kafka_py.formats.json.jackson import Features

#: The options' names as Spark spells them, with the :class:`JsonOptions` field each sets.
FEATURE_OPTIONS: Final = {
    "allowComments": "allow_comments",
    "allowUnquotedFieldNames": "allow_unquoted_field_names",
    "allowSingleQuotes": "allow_single_quotes",
    "allowNumericLeadingZeros": "allow_numeric_leading_zeros",
    "allowNonNumericNumbers": "allow_non_numeric_numbers",
    "allowBackslashEscapingAnyCharacter": "allow_backslash_escaping_any_character",
    "allowUnquotedControlChars": "allow_unquoted_control_chars",
}
#: The other options read here.
DATETIME_OPTIONS: Final = (
    "timestampFormat",
    "timestampNTZFormat",
    "dateFormat",
    "timeZone",
    "enableDateTimeParsingFallback",
)


class JsonOptionError(JsonError):
    """A ``from_json`` option whose value is not read here.

    Attributes:
        option: the option's name (Spark's spelling).
        reason: what is wrong.
    """

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(f"Option '{option}': {reason}")
        self.option = option
        self.reason = reason


@dataclass(frozen=True)
class JsonOptions:
    """The options of one JSON column's reading (picklable, hashable: decoders are cached
    by it).

    Attributes:
        features: Jackson's read features (the ``allow*`` options).
        timestamp_format: ``timestampFormat``, or None (Spark's lenient forms).
        date_format: ``dateFormat``, or None.
        time_zone: ``timeZone`` as given (a zone id Spark's ``getZoneId`` takes).
        datetime_fallback: ``enableDateTimeParsingFallback``, or None (Spark's default:
            the fallback only for the types without a format).
        timestamp_ntz_format: ``timestampNTZFormat``, or None (Spark's
            ``stringToTimestampWithoutTimeZone`` forms); ``timestamp_ntz`` has no fallback.
    """

    features: Features = field(default_factory=Features)
    timestamp_format: str | None = None
    date_format: str | None = None
    time_zone: str = "UTC"
    datetime_fallback: bool | None = None
    timestamp_ntz_format: str | None = None

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raises:
        JsonOptionError: a pattern or zone not read here (naming the option, and the
            pattern letter when one is the cause)."""
        for name, pattern in (
            ("timestampFormat", self.timestamp_format),
            ("dateFormat", self.date_format),
            ("timestampNTZFormat", self.timestamp_ntz_format),
        ):
            if pattern is not None:
                try:
                    compile_pattern(pattern)
                except PatternError as exc:
                    raise JsonOptionError(name, exc.reason) from None
        try:
            zone_of(self.time_zone)
        except PatternError as exc:
            raise JsonOptionError("timeZone", exc.reason) from None

    @property
    def zone(self) -> dt.tzinfo:
        return zone_of(self.time_zone)

    def timestamp_fallback(self) -> bool:
        """Whether a timestamp string the format does not match is tried with
        ``stringToTimestamp`` (JacksonParser's ``enableParsingFallbackForTimestampType``)."""
        if self.datetime_fallback is not None:
            return self.datetime_fallback
        return self.timestamp_format is None

    def date_fallback(self) -> bool:
        """The same for dates (``enableParsingFallbackForDateType``)."""
        if self.datetime_fallback is not None:
            return self.datetime_fallback
        return self.date_format is None

    def timestamp_pattern(self) -> DateTimePattern | None:
        return None if self.timestamp_format is None else compile_pattern(self.timestamp_format)

    def date_pattern(self) -> DateTimePattern | None:
        return None if self.date_format is None else compile_pattern(self.date_format)

    def timestamp_ntz_pattern(self) -> DateTimePattern | None:
        if self.timestamp_ntz_format is None:
            return None
        return compile_pattern(self.timestamp_ntz_format)


def _boolean(name: str, raw: str) -> bool:
    low = str(raw).strip().lower()
    if low in ("true", "false"):
        return low == "true"
    raise JsonOptionError(name, f"must be 'true' or 'false', got {raw!r}")


def json_options(options: Mapping[str, str]) -> JsonOptions:
    """:class:`JsonOptions` from ``from_json``-style options (names any case, as PySpark
    lower-cases them); options not read here are ignored.

    Raises:
        JsonOptionError: a value that is not valid, naming the option.
    """
    low = {k.lower(): v for k, v in options.items()}

    def get(name: str) -> str | None:
        return low.get(name.lower())

    flags: dict[str, bool] = {}
    for name, attr in FEATURE_OPTIONS.items():
        raw = get(name)
        if raw is not None:
            flags[attr] = _boolean(name, raw)
    fallback_raw = get("enableDateTimeParsingFallback")
    zone = get("timeZone")
    return JsonOptions(
        features=Features(**flags),
        timestamp_format=get("timestampFormat"),
        date_format=get("dateFormat"),
        timestamp_ntz_format=get("timestampNTZFormat"),
        time_zone="UTC" if zone is None else zone,
        datetime_fallback=(
            None
            if fallback_raw is None
            else _boolean("enableDateTimeParsingFallback", fallback_raw)
        ),
    )
