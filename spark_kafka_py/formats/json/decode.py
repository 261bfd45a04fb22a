"""A column of JSON documents -> one Arrow array of a Spark type, as Spark's ``from_json``.

One document per value (a Kafka record's value); the Spark type is given as Spark's JSON
(``DataType.jsonValue()``, e.g. :func:`.schema.parse_json_schema`'s ``spark_json``) and must
be a struct. The result is what ``from_json(CAST(value AS STRING), schema, {"mode": mode})``
returns in Spark 4.x (``JsonToStructs``, ``JacksonParser``, ``FailureSafeParser``) with the
JSON options given (:class:`.options.JsonOptions`: Spark's defaults unless set) and
``spark.sql.session.timeZone`` UTC (or the ``timeZone`` option), as measured by
``tests/formats/json/test_from_json_oracle.py`` (defaults) and
``tests/formats/json/test_from_json_options_oracle.py`` (options):

- A null value, an empty value and a value of whitespace only: a null row (not a struct of
  nulls), in both modes.
- A document that is not JSON under the options' Jackson features (:mod:`.jackson`: by
  default single quotes and the tokens ``NaN``, ``Infinity``, ``+Infinity``, ``-Infinity``,
  ``+INF``, ``-INF`` are read; truncated text, a trailing comma, comments, unquoted names, a
  leading zero, a raw control character in a string, a byte-order mark are not) or whose top
  level is not an object (an array, ``null``, a number, a string): ``FAILFAST`` raises
  :class:`JsonDecodeError`; ``PERMISSIVE`` gives a struct whose fields are all null, the
  corrupt-record field (below) holding the document's text.
- Anything after the first complete JSON value is ignored (``{"a": 1} xx`` is ``{"a": 1}``),
  as Jackson stops after one value.
- A value of the wrong type (``"1"`` or ``1.5`` or ``1e3`` for a long, an integer beyond
  the type's range, ``"true"`` for a boolean, ``5`` for a struct or an array, a number for a
  date): ``FAILFAST`` raises; ``PERMISSIVE`` keeps the rest ("partial results"): the field of
  the innermost struct holding the bad value is null (an array or map of primitives with one
  bad element is null as a whole; a struct inside an array or map keeps its partial value),
  and the corrupt-record field holds the document.
- Fields not in the schema are ignored; names match case-sensitively (``"A"`` does not fill
  ``a``). A key given twice: each value is converted in turn, a good one replacing the
  field's value, a bad one leaving it and making the row bad (``{"a": 1, "a": "x"}`` gives
  ``a`` 1 and, in ``PERMISSIVE``, the corrupt record).
- A document nested deeper than 1000 (Jackson 2.15+'s ``StreamReadConstraints`` default),
  fields not in the schema included, is malformed; so is a document with a number token of
  more than 1000 digits (``maxNumberLength``: integer, fraction and exponent digits added; as
  Jackson counts them, :func:`.jackson.number_length_ok`), wherever it stands.
- A lone surrogate escape (``"\\ud800"``) in a string becomes ``?`` (Java's UTF-8
  encoder).
- Coercions that are not errors: an integer into a double or float; the non-numeric tokens
  and (with ``allowNonNumericNumbers``, the default) the strings ``"NaN"``, ``"Infinity"``,
  ``"+Infinity"``, ``"-Infinity"``, ``"+INF"``, ``"-INF"`` into a double or float; any
  non-string value into a string field as Jackson writes it (integers as their digits, other
  numbers as Java's ``Double.toString``: ``1e3`` -> ``1000.0``, ``1.5e17`` -> ``1.5E17``;
  ``true``; objects and arrays as compact JSON, a key given twice written twice; ``NaN``,
  and a number beyond a double (``1e400``), as ``"NaN"``/``"Infinity"`` with their quotes);
  an integer into a timestamp as seconds since the epoch.
- A number into a ``float``: the text rounded once to the nearest float (ties to even; from
  half-way between the largest float and 2**128 on, infinity), as Java's
  ``Float.parseFloat``, which Jackson's ``getFloatValue`` is (``3.4028235e38`` is the largest
  float, ``16777217.000000001`` is 16777218), not the double rounded again.
- Timestamps from strings: with ``timestampFormat``, by the pattern
  (:mod:`.datetime_pattern`), and only if ``enableDateTimeParsingFallback`` is true also as
  below when the pattern does not match; without it, as ``DateTimeUtils.stringToTimestamp``
  (Spark's default formatter and its fallback, which first removes ``GMT``), whose forms
  (``parseTimestampString``) are, after trimming U+0000..U+0020 and U+007F from both ends
  (not U+00A0 or other non-ASCII spaces), with ASCII digits only: ``[+-]yyyy[yy]``,
  ``-[m]m``, ``-[d]d``, then optionally ``T`` or a space and ``[h]h``, ``:[m]m``, ``:[s]s``,
  ``.`` and fraction digits (past the sixth dropped), each part optional after the hour;
  then, only after the seconds or the fraction, a zone id with or without spaces before it
  (Java's ``ZoneId.of`` after Spark's ``getZoneId``: ``Z``, ``+h``, ``+hh``, ``+hh:mm``,
  ``+hhmm``, ``+hh:mm:ss``, ``+hhmmss``, ``+h:mm`` and ``+hh:m`` padded, up to 18 hours;
  ``UTC``, ``GMT``, ``UT`` alone or with such an offset; a short id such as ``EST`` or
  ``PST``; a region such as ``Europe/Paris``, case as written). So ``2020-01-02T03`` is
  read, ``2020-01-02T03:04Z`` and ``2020-01-02Z`` are bad values. A time alone
  (``T03:04``, ``03:04:05``, ``T3``; ``T`` must be the very first character) is on today's
  date in its zone, as Spark's ``LocalDate.now(zoneId)``: its value depends on the day it is
  read. Years from ``-999999`` to ``+999999`` within a ``long`` of microseconds (to
  ``+294247-01-10T04:00:54.775807Z``); a zone's offset for a year outside 1..9999 is the one
  of a year 400*k years away (the same calendar). Without a zone the ``timeZone`` option's
  (UTC by default). An impossible date (``2024-02-30``) or time (``24:00``) is a bad value.
- ``timestamp_ntz`` from strings only (a number is a bad value), without any fallback: with
  ``timestampNTZFormat`` by the pattern, else as ``stringToTimestampWithoutTimeZone``: the
  forms above without a zone (any zone, ``Z`` included, and a time alone make it a bad
  value), as is a pattern matching one. ``timeZone`` does not apply.
- ``decimal(p,s)`` from a number, or a string with its commas removed (``1,0.5`` is 10.5),
  read as ``java.math.BigDecimal`` reads text (a sign, digits with an optional point, an
  exponent; Unicode digits; no spaces, ``NaN`` or ``Infinity``), rounded to ``s`` fraction
  digits half away from zero on the exact text (``1.005`` is 1.01); more than ``p`` digits
  after rounding (``999.995`` into ``decimal(5,2)``) is a bad value, as is an exponent
  ``BigDecimal`` refuses. A bare ``decimal`` is ``decimal(10,0)``; Arrow's ``decimal128``.
- ``binary`` from a string as Jackson's base64 (``getBinaryValue``): the standard alphabet,
  padding required, whitespace before a quad only, more quads after a padded one; the empty
  string is no bytes; anything else is a bad value, except a string that ends one character
  into a quad or after a quad's single ``=`` (``"Q"``, ``"QQ="``): Jackson has then read
  the closing quote as base64 and goes on past it, and the document is malformed. A
  single-quoted string (``allowSingleQuotes``) is decoded from its text: such a string is a
  bad value. Raw control characters (``allowUnquotedControlChars`` off) in a double-quoted
  string are skipped by the decoder before a quad and at the end, a bad value inside a quad
  (the document malformed if one follows the bad character); in any other string, the
  document is malformed.
- Dates from strings: with ``dateFormat`` by the pattern (the fallback as for timestamps);
  without it as ``DateTimeUtils.stringToDate`` (trimmed as timestamps; ASCII digits;
  ``[+-]yyyy[yyy]``, ``-[m]m``, ``-[d]d``, optionally followed by a space or ``T`` and
  anything; days within an ``int``), then the same without ``GMT``, then as
  ``Integer.parseInt`` of days since the epoch (Spark 1.5's form, Spark's last fallback: a
  sign and decimal digits, Unicode ones too, untrimmed; from 1582-10-15 on). ``18262`` is the
  year 18262 (four to seven digits are a year), ``12`` is 1970-01-13.

The corrupt-record field: a top-level field named ``corrupt_column`` (Spark's
``columnNameOfCorruptRecord``, default ``spark.sql.columnNameOfCorruptRecord`` =
``_corrupt_record``) of type string, when the schema has one; it is never read from the
document.

Differences kept: without the ``timeZone`` option Spark reads zone-less strings in the
session time zone, unknown here (UTC is taken; a strict xfail in the options oracle).
A number of more than 1000 digits inside a schema field's array, map or nested struct makes
the whole document malformed here; Spark keeps a partial row. Decimal strings are
read the ``en-US`` way whatever the ``locale`` (Spark uses ``DecimalFormat`` for another).
(``tests/formats/json/test_from_json_types_oracle.py``, strict xfails.) A date string of
digits (days since the epoch) before 1582-10-15 is a bad value here (Spark rebases it from the
Julian calendar). Timestamp and date strings without a format:
``tests/formats/json/test_from_json_datetime_oracle.py``.

Input: a ``binary``/``large_binary`` array is read as UTF-8 with invalid bytes replaced by
U+FFFD; ``string``/``large_string`` as is. (Invalid UTF-8 is not compared with Spark:
``from_json`` takes a string column, and what ``CAST(value AS STRING)`` then gives Jackson
is not checked by the oracle.)

Compiled path (when the optional extension :mod:`spark_kafka_py.formats.json._accel` is
built; maps included; ``JsonDecoder(..., compiled=False)`` or ``SPARK_KAFKA_PY_PURE=1`` turn
it off): a schema-directed reader in Cython reads the batch's Arrow value buffers straight
into the result's buffers, without the GIL. It accepts only documents it reads with
certainty as the per-row path does (strict RFC 8259 JSON, an object at the top level and
only whitespace after it, every schema field of its own JSON type and in range, no key given
twice, in a map either, timestamps ``yyyy-mm-ddThh:mm:ss[.f{1,6}]Z`` and dates
``yyyy-mm-dd`` when no format is set; ``_accel.pyx`` lists it all) and declines every other
one: the declined rows are decoded by the per-row path (in row order, with its modes,
corrupt records and errors: accepted rows are never bad, so ``FAILFAST`` still raises for the
first bad row) and put back in place. A batch with more than 1/8 of its rows declined goes
whole to the paths below. ``compiled_rows`` and ``declined_rows`` count the rows
(``tests/formats/json/test_json_accel.py`` compares both paths).

A struct with a ``decimal``, ``binary`` or ``timestamp_ntz`` anywhere in it is read by the
per-row path only (neither the compiled path nor pyarrow's reader is given it).

Fast path (for a struct without maps anywhere in it: pyarrow's reader does not convert to
maps): when every non-empty document of the batch is a single line that starts with
``{`` and ends with ``}``, the batch goes through ``pyarrow.json.read_json`` (one document
per line, the explicit schema with dates and timestamps read as strings and converted by
this module's parsers, other fields ignored). pyarrow refuses everything on which it and
``from_json`` could disagree (numbers as strings, strings as numbers, a float into a long,
duplicate keys, a non-object top level), so any error, or a row count that is not the
number of documents, sends the whole batch to the per-row path (Python's :mod:`json`, with
the rules above), which finds and handles the bad rows. pyarrow also reads ``Inf``, ``-Inf``
and ``-NaN`` tokens, which Jackson does not: a batch with ``Inf``, ``INF`` or ``NaN``
anywhere in a document (strings included) takes the per-row path. pyarrow's reader accepts
strict JSON only, so a document that needs one of Jackson's features (single quotes,
comments, ...) also sends its batch to the per-row path; with ``timestampFormat`` the
vectorized ISO 8601 cast is not used. pyarrow never sees a value that is not an object
(``null`` alone crashes pyarrow 26's reader).

Bounds: nesting beyond :data:`MAX_NESTING` is malformed (and deeper than Python's recursion
limit never recurses further: the parser's ``RecursionError`` is caught); a batch with a
document of more than that many ``{``/``[``, or with a run of more than
:data:`.jackson.MAX_NUMBER_LENGTH` number characters (``-+.0-9eE``, strings included), takes
the per-row path, where a number token's digits are counted once (linear); memory is linear in
the batch.

A number that goes into a string field is written with Python's shortest repr digits, laid
out as Java's ``Double.toString``; Java's digits differ for a few values (``5e-324`` is
``4.9E-324`` for Java, ``5.0E-324`` here; JDK 17, what Spark runs on here, is not always
shortest), so such values may differ in the last digits.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import io
import json
import math
import re
import struct
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_UP, Context, Decimal
from typing import TYPE_CHECKING, Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from spark_kafka_py.formats import framing
from spark_kafka_py.formats._extension import load_extension
from spark_kafka_py.formats.errors import JsonDecodeError, JsonSchemaError
from spark_kafka_py.formats.java_numbers import java_double
from spark_kafka_py.formats.json.datetime_pattern import SHORT_IDS
from spark_kafka_py.formats.json.datetime_pattern import civil_days as _days
from spark_kafka_py.formats.json.datetime_pattern import zoned_micros as _zoned_micros
from spark_kafka_py.formats.json.jackson import (
    MAX_NESTING,
    MAX_NUMBER_LENGTH,
    NO_VALUE,
    Malformed,
    parse_document,
    python_decoder,
)
from spark_kafka_py.formats.json.jackson import Const as _Const
from spark_kafka_py.formats.json.jackson import Float as _Float
from spark_kafka_py.formats.json.jackson import Int as _Int
from spark_kafka_py.formats.json.jackson import Pairs as _Pairs
from spark_kafka_py.formats.json.jackson import Quoted as _Quoted
from spark_kafka_py.formats.json.jackson import RawControls as _RawControls
from spark_kafka_py.formats.json.options import JsonOptions

if TYPE_CHECKING:
    from spark_kafka_py.formats.json._accel import Plan

#: Spark's default ``spark.sql.columnNameOfCorruptRecord``.
DEFAULT_CORRUPT_COLUMN: Final = "_corrupt_record"

Mode = Literal["FAILFAST", "PERMISSIVE"]
#: PERMISSIVE's report of a bad row (its error carries the row's index).
OnError = Callable[[JsonDecodeError], None]

_INT_RANGES: Final[Mapping[str, tuple[int, int]]] = {
    "long": (-(1 << 63), (1 << 63) - 1),
    "integer": (-(1 << 31), (1 << 31) - 1),
    "short": (-(1 << 15), (1 << 15) - 1),
    "byte": (-(1 << 7), (1 << 7) - 1),
}
_ARROW_LEAVES: Final[Mapping[str, pa.DataType]] = {
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "double": pa.float64(),
    "float": pa.float32(),
    "boolean": pa.bool_(),
    "string": pa.string(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "date": pa.date32(),
    "binary": pa.binary(),
    "timestamp_ntz": pa.timestamp("us"),
}
#: The types neither pyarrow's reader nor the compiled reader is given (a schema with one of
#: them takes the per-row path): their conversions are this module's alone.
_PER_ROW_KINDS: Final = frozenset({"decimal", "binary", "timestamp_ntz"})
#: Spark's ``DecimalType`` in its JSON form (``DataType.fromJson``'s ``FIXED_DECIMAL``); a bare
#: ``decimal`` is ``decimal(10,0)`` (``DecimalType.USER_DEFAULT``).
_DECIMAL_TYPE: Final = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)")
#: ``DecimalType.MAX_PRECISION``.
_MAX_DECIMAL_PRECISION: Final = 38
_FLOAT_STRINGS: Final[Mapping[str, float]] = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "+INF": math.inf,
    "-Infinity": -math.inf,
    "-INF": -math.inf,
}
_FLOAT32_MAX: Final = 3.4028234663852886e38
#: Half-way between float's largest finite value and 2**128: a value from it up rounds to
#: infinity (IEEE 754 round to nearest, ties to even: FLT_MAX's significand is odd).
_FLOAT32_OVERFLOW: Final = 2.0**128 - 2.0**103
#: pyarrow's JSON reader's default block size (1 MiB), raised for a longer document.
_BLOCK_SIZE: Final = 1 << 20
_MICROS_PER_SECOND: Final = 1_000_000
#: A bare non-numeric token pyarrow's reader would take as a number (``Inf``, ``-NaN``, ...):
#: after ``:``, ``,`` or ``[`` (the only places a value starts inside an object), spaces
#: allowed. The same text inside a string also matches (the batch then merely takes the
#: per-row path); a name such as ``"aNaNb"`` does not.
_NON_NUMERIC_TOKEN: Final = r"[:,\[][ \t\r\n]*[-+]?(?:Inf|NaN|INF)"
#: A line break (documents go to pyarrow's reader one per line) or :data:`_NON_NUMERIC_TOKEN`.
_LINE_BREAK_OR_NON_NUMERIC: Final = r"[\n\r]|" + _NON_NUMERIC_TOKEN
#: A timestamp string the fast path converts with Arrow's cast: ``yyyy-mm-dd``, ``T`` or a
#: space, ``hh:mm:ss``, 1 to 6 fraction digits, ``Z``; years 0001-9999, months 01-12, days
#: 01-31 (a day past the month's end fails Arrow's cast), hours 00-23, minutes and seconds
#: 00-59, nothing around it.
_ISO_UTC: Final = (
    r"^(?:[1-9]\d{3}|0[1-9]\d{2}|00[1-9]\d|000[1-9])-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"[T ](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?Z$"
)
_MICROS_PER_DAY: Final = 86_400 * _MICROS_PER_SECOND
_EPOCH_ORDINAL: Final = dt.date(1970, 1, 1).toordinal()


def arrow_type_of(spark_type: object) -> pa.DataType:
    """PySpark's Arrow type of a Spark type given as Spark JSON (the subset read here:
    struct, array, map with string keys, long, integer, short, byte, double, float, boolean,
    string, binary, decimal(p,s) (``decimal128(p, s)``, p 1..38, s 0..p), timestamp
    (``timestamp[us, tz=UTC]``), timestamp_ntz (``timestamp[us]``), date; everything
    nullable).

    Raises:
        JsonSchemaError: another type.
    """
    return _compile(spark_type, "").arrow


def decode_json(
    values: pa.Array | pa.ChunkedArray,
    spark_type: object,
    *,
    mode: Mode = "FAILFAST",
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN,
    on_error: OnError | None = None,
    options: JsonOptions | None = None,
) -> pa.Array:
    """Decode one JSON document per value into an array of ``spark_type`` (a struct).

    Args:
        values: ``binary``, ``large_binary``, ``string`` or ``large_string``; nulls allowed.
        spark_type: the struct to read, as Spark JSON (``{"type": "struct", "fields": [...]}``).
        mode: ``FAILFAST`` (a bad document raises) or ``PERMISSIVE`` (see the module).
        corrupt_column: the name of the corrupt-record field (used when the struct has a
            string field of that name).
        on_error: in ``PERMISSIVE``, called with each bad row's error (after the row is
            handled); ignored in ``FAILFAST``.
        options: ``from_json``'s options (:class:`.options.JsonOptions`); None: Spark's
            defaults.

    Returns:
        An array of :func:`arrow_type_of` ``(spark_type)``, one row per value.

    Raises:
        JsonDecodeError: ``FAILFAST`` and a bad document (the first, by row).
        JsonSchemaError: ``spark_type`` is not a struct of the supported types.
        ValueError: an unknown ``mode``.
    """
    return JsonDecoder(
        spark_type, mode=mode, corrupt_column=corrupt_column, options=options
    ).decode(values, on_error=on_error)


_ACCEL: Final = load_extension("spark_kafka_py.formats.json._accel")
#: The compiled path reads a batch only while at most this share of its rows is declined
#: (1/8: past it the whole batch goes to pyarrow's reader or the per-row path).
_DECLINED_SHARE: Final = 8


# -- the Spark type, compiled ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Type:
    kind: str  # a leaf name, or "struct", "array", "map"
    arrow: pa.DataType
    fields: tuple[tuple[str, _Type], ...] = ()
    element: _Type | None = None  # array element, map value


def _compile(spark: object, pointer: str) -> _Type:
    if isinstance(spark, str) and spark.startswith("decimal"):
        return _decimal_type(spark, pointer)
    if isinstance(spark, str):
        arrow = _ARROW_LEAVES.get(spark)
        if arrow is None:
            raise JsonSchemaError(f"Spark type {spark!r} is not read from JSON here", pointer)
        return _Type(spark, arrow)
    if not isinstance(spark, Mapping):
        raise JsonSchemaError(f"not a Spark type: {spark!r}", pointer)
    kind = spark.get("type")
    if kind == "struct":
        raw_fields = spark.get("fields")
        if not isinstance(raw_fields, list):
            raise JsonSchemaError("a struct without 'fields'", pointer)
        fields: list[tuple[str, _Type]] = []
        for i, f in enumerate(raw_fields):
            if not isinstance(f, Mapping) or not isinstance(f.get("name"), str):
                raise JsonSchemaError("a struct field without a name", f"{pointer}/fields/{i}")
            fields.append((f["name"], _compile(f.get("type"), f"{pointer}/fields/{i}/type")))
        arrow = pa.struct([pa.field(n, t.arrow, nullable=True) for n, t in fields])
        return _Type("struct", arrow, tuple(fields))
    if kind == "array":
        element = _compile(spark.get("elementType"), f"{pointer}/elementType")
        return _Type("array", pa.list_(pa.field("element", element.arrow)), element=element)
    if kind == "map":
        if spark.get("keyType") != "string":
            raise JsonSchemaError("a map's keys must be strings for JSON", f"{pointer}/keyType")
        value = _compile(spark.get("valueType"), f"{pointer}/valueType")
        return _Type("map", pa.map_(pa.string(), pa.field("value", value.arrow)), element=value)
    raise JsonSchemaError(f"Spark type {kind!r} is not read from JSON here", pointer)


def _decimal_type(spark: str, pointer: str) -> _Type:
    """``decimal(p,s)`` (or ``decimal``: ``decimal(10,0)``) as ``decimal128(p, s)``, PySpark's
    Arrow type of ``DecimalType``.

    Raises:
        JsonSchemaError: not that form, a precision outside 1..38, a scale outside 0..p
            (Spark 4 refuses a negative scale unless
            ``spark.sql.legacy.allowNegativeScaleOfDecimal``).
    """
    if spark == "decimal":
        precision, scale = 10, 0
    else:
        m = _DECIMAL_TYPE.fullmatch(spark)
        if m is None:
            raise JsonSchemaError(f"Spark type {spark!r} is not read from JSON here", pointer)
        precision, scale = int(m[1]), int(m[2])
    if not 1 <= precision <= _MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
        raise JsonSchemaError(
            f"Spark type {spark!r}: the precision must be 1..{_MAX_DECIMAL_PRECISION} and "
            "the scale 0..precision",
            pointer,
        )
    return _Type("decimal", pa.decimal128(precision, scale))


def _has_kind(t: _Type, kinds: frozenset[str]) -> bool:
    if t.kind in kinds:
        return True
    return any(_has_kind(f, kinds) for _, f in t.fields) or (
        t.element is not None and _has_kind(t.element, kinds)
    )


def _fast_arrow(t: _Type) -> pa.DataType:
    """The type pyarrow's reader is given: dates and timestamps as strings."""
    if t.kind in ("timestamp", "date"):
        return pa.string()
    if t.kind == "struct":
        return pa.struct([pa.field(n, _fast_arrow(f)) for n, f in t.fields])
    if t.kind == "array":
        assert t.element is not None
        return pa.list_(pa.field("element", _fast_arrow(t.element)))
    if t.kind == "map":
        assert t.element is not None
        return pa.map_(pa.string(), pa.field("value", _fast_arrow(t.element)))
    return t.arrow


def _has_temporal(t: _Type) -> bool:
    if t.kind in ("timestamp", "date"):
        return True
    return any(_has_temporal(f) for _, f in t.fields) or (
        t.element is not None and _has_temporal(t.element)
    )


def _has_map(t: _Type) -> bool:
    if t.kind == "map":
        return True
    return any(_has_map(f) for _, f in t.fields) or (t.element is not None and _has_map(t.element))


# -- the decoder ----------------------------------------------------------------------------------


class JsonDecoder:
    """A compiled struct type and mode; :meth:`decode` decodes batches with them.

    Attributes:
        arrow_type: the result's Arrow type.
        compiled: whether the compiled path (``_accel``) is used.
        fast_batches, slow_batches: how many batches were decoded by a fast path (the
            compiled path or pyarrow's reader) and by the per-row path alone (for tests and
            metrics).
        compiled_batches: of ``fast_batches``, those of the compiled path.
        compiled_rows, declined_rows: the rows of the compiled path's batches it read, and
            those it declined (decoded by the per-row path).
    """

    def __init__(
        self,
        spark_type: object,
        *,
        mode: Mode = "FAILFAST",
        corrupt_column: str = DEFAULT_CORRUPT_COLUMN,
        options: JsonOptions | None = None,
        compiled: bool = True,
    ) -> None:
        """Compile ``spark_type`` (a struct, as Spark JSON) for ``mode``, the corrupt-record
        field ``corrupt_column`` and ``from_json``'s ``options`` (default: Spark's defaults);
        ``compiled=False`` keeps the compiled path off (pyarrow's reader and the per-row path
        only, as without the extension).

        Raises:
            JsonSchemaError: not a struct of the types read here.
            ValueError: an unknown ``mode``.
        """
        if mode not in ("FAILFAST", "PERMISSIVE"):
            raise ValueError(f"mode must be FAILFAST or PERMISSIVE, not {mode!r}")
        self._type = _compile(spark_type, "")
        if self._type.kind != "struct":
            raise JsonSchemaError("the type read from JSON documents must be a struct")
        self.arrow_type: pa.DataType = self._type.arrow
        self._mode = mode
        corrupt = dict(self._type.fields).get(corrupt_column)
        self._corrupt = corrupt_column if corrupt is not None and corrupt.kind == "string" else None
        # the struct read from the documents: without the corrupt-record field
        self._read_type = _Type(
            "struct",
            self._type.arrow,
            tuple((n, f) for n, f in self._type.fields if n != self._corrupt),
        )
        fast = _fast_arrow(self._read_type)
        self._fast_schema = pa.schema(list(fast))
        self._temporal = _has_temporal(self._read_type)
        # pyarrow's JSON reader does not convert to maps ("JSON conversion to map<...> is
        # not supported"): a type with a map always takes the per-row path
        # nor are decimals, binaries and timestamp_ntz given to it (nor to the compiled
        # reader, whose plan refuses them): the per-row path reads them as Spark does
        self._fast_ok = not _has_map(self._read_type) and not _has_kind(
            self._read_type, _PER_ROW_KINDS
        )
        self._options = options if options is not None else JsonOptions()
        self._ctx = _context(self._options)
        self._python = python_decoder(self._options.features)
        # Arrow's ISO 8601 cast agrees with stringToTimestamp on _ISO_UTC strings only
        self._iso_cast = self._options.timestamp_format is None
        self._plan: Plan | None = None
        if compiled and _ACCEL is not None and not _has_kind(self._read_type, _PER_ROW_KINDS):
            self._plan = _ACCEL.plan(
                self._type,
                self._corrupt,
                self._options.timestamp_format is None,
                self._options.date_format is None,
            )
        self.compiled = self._plan is not None
        self.compiled_batches = 0
        self.compiled_rows = 0
        self.declined_rows = 0
        self.fast_batches = 0
        self.slow_batches = 0

    def decode(
        self,
        values: pa.Array | pa.ChunkedArray,
        *,
        on_error: OnError | None = None,
        skip: int = 0,
    ) -> pa.Array:
        """Decode a batch (see :func:`decode_json`); with ``skip``, each value's document
        starts after its first ``skip`` bytes (a framing the caller has checked, e.g.
        Confluent's magic byte and schema id: the compiled path reads in place past it, the
        others read the documents cut out of the values).

        Raises:
            JsonDecodeError: as :func:`decode_json`.
            ValueError: ``skip`` with values that are not binary, or a value shorter than
                ``skip`` bytes.
        """
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if skip and not (pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
            raise ValueError(f"skip needs binary values, not {values.type}")
        if self._plan is not None:
            compiled = self._compiled(self._plan, values, on_error, skip)
            if compiled is not None:
                self.compiled_batches += 1
                self.fast_batches += 1
                return compiled
        if skip:
            values = framing.payloads_past(values, skip)
        text = _as_text(values) if self._fast_ok else None
        if text is not None:
            fast = self._fast(text)
            if fast is not None:
                self.fast_batches += 1
                return fast
        self.slow_batches += 1
        return self._slow(values, on_error)

    # -- compiled path: _accel --

    def _compiled(
        self, plan: Plan, values: pa.Array, on_error: OnError | None, skip: int
    ) -> pa.Array | None:
        """The batch by the compiled reader (each document past ``skip`` bytes), its
        declined rows by the per-row path (in row order, so ``FAILFAST`` raises for the
        first bad row: accepted rows are never bad); None when the reader refuses the batch
        (too many declined rows, see :data:`_DECLINED_SHARE`; an input type or size it does
        not take, a value shorter than ``skip``)."""
        n = len(values)
        result = plan.decode(values, n // _DECLINED_SHARE, skip)
        if result is None:
            return None
        array, declined, order = result
        self.compiled_rows += n - len(declined)
        self.declined_rows += len(declined)
        if order is None:
            return array
        taken = values.take(pa.array(declined, pa.int64()))
        rows = self._slow(framing.payloads_past(taken, skip) if skip else taken, on_error, declined)
        # the declined rows (nulls in ``array``) replaced by the per-row path's
        return pa.concat_arrays([array, rows]).take(order)

    # -- fast path: pyarrow's reader --

    def _fast(self, text: pa.Array) -> pa.Array | None:
        # blank: null, empty or ASCII whitespace only (trimming ASCII bytes of UTF-8 text
        # is trimming those characters)
        blank = pc.or_kleene(
            pc.is_null(text), pc.equal(pc.binary_length(pc.ascii_trim(text, " \t\n\r")), 0)
        )
        blank = pc.fill_null(blank, True)
        any_blank = pc.any(blank).as_py()
        docs = text.filter(pc.invert(blank)) if any_blank else text
        n = len(docs)
        if n == 0:
            return pa.nulls(len(text), self.arrow_type)
        # one line each, ``{`` ... ``}`` with spaces or tabs around
        trimmed = pc.ascii_trim(docs, " \t")
        if not (
            pc.all(pc.starts_with(trimmed, "{")).as_py()
            and pc.all(pc.ends_with(trimmed, "}")).as_py()
        ):
            return None
        if pc.any(pc.match_substring_regex(docs, _LINE_BREAK_OR_NON_NUMERIC)).as_py():
            # a line break; or a token pyarrow (rapidjson) reads as a number, Inf, -Inf,
            # -NaN, which Jackson refuses
            return None
        # a block holds whole lines: at least the longest document and its newline
        longest = pc.max(pc.binary_length(docs)).as_py()
        if longest > MAX_NESTING:
            # nesting deeper than MAX_NESTING needs more than that many brackets: only
            # documents longer than it are counted
            long_docs = docs.filter(pc.greater(pc.binary_length(docs), MAX_NESTING))
            brackets = pc.add(
                pc.count_substring(long_docs, "{"), pc.count_substring(long_docs, "[")
            )
            if pc.max(brackets).as_py() > MAX_NESTING:
                return None  # perhaps nested too deeply: pyarrow would read it
        if longest > MAX_NUMBER_LENGTH and _long_number_run(docs):
            return None  # perhaps a number Jackson refuses: pyarrow would read it
        try:
            joined = pc.binary_join(
                pa.ListArray.from_arrays(pa.array([0, n], pa.int32()), docs), "\n"
            )
            table = pa_json.read_json(
                io.BytesIO(joined[0].as_buffer()),
                read_options=pa_json.ReadOptions(
                    use_threads=False, block_size=max(_BLOCK_SIZE, longest + 1)
                ),
                parse_options=pa_json.ParseOptions(
                    explicit_schema=self._fast_schema, unexpected_field_behavior="ignore"
                ),
            )
        except pa.ArrowException:  # a parse or conversion error; a batch past 2 GiB
            return None
        if table.num_rows != n:
            return None
        columns = []
        for name, t in self._type.fields:
            if name == self._corrupt:
                columns.append(pa.nulls(n, pa.string()))
                continue
            column = table.column(name).combine_chunks()
            if self._temporal:
                column = _convert_temporal(column, t, self._ctx, self._iso_cast)
                if column is None:
                    return None
            columns.append(column)
        read = pa.StructArray.from_arrays(columns, fields=list(self.arrow_type))
        if n == len(text):
            return read
        # blank rows back in place, as nulls
        positions = pc.subtract(pc.cumulative_sum(pc.cast(pc.invert(blank), pa.int64())), 1)
        indices = pc.if_else(blank, pa.scalar(None, pa.int64()), positions)
        return read.take(indices)

    # -- per-row path: Python's json --

    def _slow(
        self, values: pa.Array, on_error: OnError | None, rows_of: Sequence[int] | None = None
    ) -> pa.Array:
        """Every row by the per-row path; ``rows_of``: the batch's row index of each value
        (for errors), None: the value's own index."""
        binary = pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)
        rows: list[object] = []
        for position, value in enumerate(values.to_pylist()):
            index = position if rows_of is None else rows_of[position]
            if value is None:
                rows.append(None)
                continue
            doc = value.decode("utf-8", "replace") if binary else value
            if not doc.strip(" \t\n\r"):
                rows.append(None)
                continue
            row, reason = self._row(doc)
            if reason is not None:
                error = JsonDecodeError(index, reason)
                if self._mode == "FAILFAST":
                    raise error
                if self._corrupt is not None:
                    assert row is not None
                    row[self._corrupt] = doc
                if on_error is not None:
                    on_error(error)
            rows.append(row)
        return pa.array(rows, type=self.arrow_type)

    def _row(self, doc: str) -> tuple[dict[str, object] | None, str | None]:
        """One document: (the struct's row, None) or (the partial row, why it is bad); (None,
        None) for a null row (only comments, with ``allowComments``).

        Run with the interpreter's recursion limit raised by ``4 * MAX_NESTING`` frames, so a
        document as deep as Jackson allows parses wherever the caller's stack stands (the
        JSON parser and the conversion recurse once a level); deeper still is malformed."""
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + 4 * MAX_NESTING)
        try:
            return self._row_within_limit(doc)
        except RecursionError:
            return {}, "malformed JSON: nested too deeply"
        finally:
            sys.setrecursionlimit(limit)

    def _with_raw_controls(
        self, parsed: object, raw: list[_RawControls]
    ) -> tuple[dict[str, object] | None, str | None]:
        """A document whose strings ``raw`` hold raw control characters: read as any other,
        then malformed unless the base64 decoder of a ``binary`` field read each of them
        (Jackson reads a string lazily: only that decoder skips such characters)."""
        if not isinstance(parsed, dict):
            return {}, f"the top level is not an object but {_json_kind(parsed)}"
        try:
            row: dict[str, object] = _struct(parsed, self._read_type, "", self._ctx)
            reason = None
        except _Malformed as malformed:
            return {}, f"malformed JSON: {malformed.reason}"
        except _Partial as partial:
            assert isinstance(partial.value, dict)
            row, reason = partial.value, partial.reason
        if not all(s.consumed for s in raw):
            return {}, "malformed JSON: a control character in a string"
        return row, reason

    def _row_within_limit(self, doc: str) -> tuple[dict[str, object] | None, str | None]:
        start = len(doc) - len(doc.lstrip(" \t\n\r"))
        try:
            parsed, _ = self._python.raw_decode(doc, start)
        except RecursionError:
            return {}, "malformed JSON: nested too deeply"
        except ValueError as strict_error:
            # not strict JSON: read as Jackson reads it with the options' features (the
            # strict parser's message is kept when that fails too: it says more)
            raw: list[_RawControls] | None = (
                None if self._options.features.allow_unquoted_control_chars else []
            )
            try:
                parsed = parse_document(doc, start, self._options.features, raw)
            except Malformed:
                return {}, f"malformed JSON: {strict_error}"
            if parsed is NO_VALUE:
                return None, None  # comments only: no token, a null row as for blank text
            if raw:
                return self._with_raw_controls(parsed, raw)
        if doc.count("{") + doc.count("[") > MAX_NESTING and _depth(parsed) > MAX_NESTING:
            return {}, f"malformed JSON: nested deeper than {MAX_NESTING}"
        if not isinstance(parsed, dict):
            return {}, f"the top level is not an object but {_json_kind(parsed)}"
        try:
            return _struct(parsed, self._read_type, "", self._ctx), None
        except _Malformed as malformed:
            return {}, f"malformed JSON: {malformed.reason}"
        except _Partial as partial:
            assert isinstance(partial.value, dict)
            return partial.value, partial.reason


#: A run of characters a number token may hold: long ones are looked at more closely.
_NUMBER_RUN: Final = "[-+.0-9eE]{100}"


def _long_number_run(docs: pa.Array) -> bool:
    """Whether a document of ``docs`` (text) has a run of more than
    :data:`.jackson.MAX_NUMBER_LENGTH` characters of ``-+.0-9eE`` (what a number token longer
    than that needs; strings count too). Linear: a regular expression picks the documents
    with a run of 100, which are split into runs."""
    long_docs = docs.filter(pc.greater(pc.binary_length(docs), MAX_NUMBER_LENGTH))
    candidates = long_docs.filter(pc.match_substring_regex(long_docs, _NUMBER_RUN))
    if len(candidates) == 0:
        return False
    runs = pc.list_flatten(pc.split_pattern_regex(candidates, "[^-+.0-9eE]+"))
    return bool(pc.max(pc.binary_length(runs)).as_py() > MAX_NUMBER_LENGTH)


def _depth(value: object) -> int:
    """The nesting depth of a parsed document (an object or array counts 1), iteratively."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _as_text(values: pa.Array) -> pa.Array | None:
    """``values`` as a string array, or None when it is not valid UTF-8."""
    t = values.type
    if pa.types.is_string(t):
        return values
    if pa.types.is_large_string(t):
        return values.cast(pa.string())
    try:
        return values.cast(pa.string())  # validates UTF-8
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _iso_utc_timestamps(column: pa.Array) -> pa.Array | None:
    """A string column of timestamps as ``timestamp[us, tz=UTC]`` by Arrow's cast, when every
    string is :data:`_ISO_UTC` (on those, Arrow's ISO 8601 parser and
    ``stringToTimestamp`` agree; an impossible day such as Feb 30 makes the cast fail);
    otherwise None (the strings are then parsed one by one)."""
    if column.null_count == len(column):
        return None
    if not pc.all(pc.match_substring_regex(column, _ISO_UTC)).as_py():
        return None
    try:
        return column.cast(_ARROW_LEAVES["timestamp"])
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _convert_temporal(column: pa.Array, t: _Type, ctx: _Context, iso_cast: bool) -> pa.Array | None:
    """The fast path's string columns of dates and timestamps converted (recursively); None
    when one string is not a date or timestamp (the batch then takes the per-row path)."""
    if t.kind == "timestamp" and iso_cast:
        vectorized = _iso_utc_timestamps(column)
        if vectorized is not None:
            return vectorized
    vector = ctx.vector_timestamps if t.kind == "timestamp" else ctx.vector_dates
    if t.kind in ("timestamp", "date") and vector is not None:
        vectorized = vector(column)
        if vectorized is not None:
            return vectorized
    if t.kind in ("timestamp", "date"):
        parse = ctx.parse_timestamp if t.kind == "timestamp" else ctx.parse_date
        out: list[int | None] = []
        cache: dict[str, int] = {}
        for s in column.to_pylist():
            if s is None:
                out.append(None)
                continue
            v = cache.get(s)
            if v is None:
                v = parse(s)
                if v is None:
                    return None
                cache[s] = v
            out.append(v)
        return pa.array(out, type=t.arrow)
    if not _has_temporal(t):
        return column
    mask = column.is_null() if column.null_count else None
    if t.kind == "struct":
        children = []
        for i, (_, f) in enumerate(t.fields):
            child = _convert_temporal(column.field(i), f, ctx, iso_cast)
            if child is None:
                return None
            children.append(child)
        return pa.StructArray.from_arrays(children, fields=list(t.arrow), mask=mask)
    assert t.element is not None
    if t.kind == "array":
        values = _convert_temporal(column.values, t.element, ctx, iso_cast)
        if values is None:
            return None
        return pa.ListArray.from_arrays(column.offsets, values, type=t.arrow, mask=mask)
    items = _convert_temporal(column.items, t.element, ctx, iso_cast)
    if items is None:
        return None
    return pa.MapArray.from_arrays(column.offsets, column.keys, items, type=t.arrow, mask=mask)


# -- the per-row conversion -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    """What the conversion of values needs of the options."""

    parse_timestamp: Callable[[str], int | None]
    parse_date: Callable[[str], int | None]
    #: ``allowNonNumericNumbers``: the strings ``"NaN"``, ``"+INF"``, ... into doubles
    non_numeric: bool
    #: a ``timestamp_ntz`` string: microseconds since 1970-01-01T00:00 (local), or None
    parse_timestamp_ntz: Callable[[str], int | None]
    #: a column of timestamp / date strings by Arrow's kernels (a pattern Arrow reads
    #: exactly), else None: string by string
    vector_timestamps: Callable[[pa.Array], pa.Array | None] | None = None
    vector_dates: Callable[[pa.Array], pa.Array | None] | None = None


def _context(options: JsonOptions) -> _Context:
    zone = options.zone
    ts_pattern = options.timestamp_pattern()
    date_pattern = options.date_pattern()
    ts_fallback = options.timestamp_fallback()
    date_fallback = options.date_fallback()

    def parse_timestamp(text: str) -> int | None:
        if ts_pattern is not None:
            value = ts_pattern.parse_timestamp(text, zone)
            if value is not None or not ts_fallback:
                return value
            return _parse_timestamp(text.replace("GMT", ""), zone)
        value = _parse_timestamp(text, zone)
        if value is None and ts_fallback and "GMT" in text:
            value = _parse_timestamp(text.replace("GMT", ""), zone)
        return value

    def parse_date(text: str) -> int | None:
        if date_pattern is not None:
            value = date_pattern.parse_date(text)
            if value is not None or not date_fallback:
                return value
        elif not date_fallback:
            return _parse_date(text)
        return _parse_date_fallback(text)

    ntz_pattern = options.timestamp_ntz_pattern()
    # JacksonParser: timestampNTZFormatter.parseWithoutTimeZone(text, false), no fallback
    parse_timestamp_ntz = (
        _parse_timestamp_ntz if ntz_pattern is None else ntz_pattern.parse_local_timestamp
    )

    vector_timestamps = (
        None if ts_pattern is None else functools.partial(ts_pattern.arrow_timestamps, zone=zone)
    )
    return _Context(
        parse_timestamp,
        parse_date,
        options.features.allow_non_numeric_numbers,
        parse_timestamp_ntz,
        vector_timestamps,
        None if date_pattern is None else date_pattern.arrow_dates,
    )


class _Bad(Exception):
    """A value that does not fit its type: the enclosing struct's field becomes null. ``at``:
    for a base64 string, the index of the character the decoder stopped at."""

    def __init__(self, reason: str, at: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.at = at


class _Malformed(Exception):
    """A value whose reading leaves Jackson's parser past the string's closing quote (a base64
    error found at the quote itself): the whole document is malformed, as for bad JSON."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Partial(Exception):
    """A struct (or an array or map of structs) some of whose values were bad."""

    def __init__(self, value: object, reason: str) -> None:
        super().__init__(reason)
        self.value = value
        self.reason = reason


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (_Int, _Float, _Const)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _bad(t: _Type, value: object, path: str) -> _Bad:
    return _Bad(f"expected {t.kind} at {path or '/'}, got {_json_kind(value)} {_short(value)}")


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)[:40]
    return repr(text[:40])


def _struct(obj: dict[str, object], t: _Type, path: str, ctx: _Context) -> dict[str, object]:
    row: dict[str, object] = {}
    reason: str | None = None
    if obj.__class__ is _Pairs:
        # a key given twice: each value converted in turn; a good one replaces the field's
        # value, a bad one leaves it (and makes the row bad), as JacksonParser does
        types = dict(t.fields)
        items = [(k, v, types[k]) for k, v in obj.pairs if k in types]
    else:
        items = [(name, obj[name], ft) for name, ft in t.fields if name in obj]
    for name, value, ft in items:
        sub = f"{path}/{name}"
        try:
            row[name] = _convert(value, ft, sub, ctx)
        except _Bad as exc:
            reason = reason or exc.reason
        except _Partial as exc:
            row[name] = exc.value
            reason = reason or exc.reason
    if reason is not None:
        raise _Partial(row, reason)
    return row


def _convert(value: object, t: _Type, path: str, ctx: _Context) -> object:
    if value is None:
        return None
    kind = t.kind
    cls = value.__class__
    if cls is _Quoted:
        assert isinstance(value, str)
        if kind == "binary":
            return _base64(value, path, whole_text=True)
        value, cls = str(value), str
    elif cls is _RawControls:
        assert isinstance(value, _RawControls)
        if kind != "binary":
            raise _Malformed(f"a control character in a string at {path or '/'}")
        value.consumed = True
        try:
            return _base64(value, path)
        except _Bad as bad:
            # Jackson skips the rest of the string past the bad character, refusing a raw
            # control character there
            if bad.at is not None and any(k > bad.at for k in value.controls):
                raise _Malformed(f"a control character in a string at {path or '/'}") from None
            raise
    if kind == "struct":
        if cls is not dict and cls is not _Pairs:
            raise _bad(t, value, path)
        assert isinstance(value, dict)
        return _struct(value, t, path, ctx)
    if kind in ("array", "map"):
        return _container(value, t, path, ctx)
    if kind in _INT_RANGES:
        if cls is _Int:
            assert isinstance(value, str)
            n = int(value)
            lo, hi = _INT_RANGES[kind]
            if lo <= n <= hi:
                return n
        raise _bad(t, value, path)
    if kind in ("double", "float"):
        if cls in (_Int, _Float, _Const):
            assert isinstance(value, str)
            x = float(value)
        elif cls is str and ctx.non_numeric and value in _FLOAT_STRINGS:
            x = _FLOAT_STRINGS[value]  # type: ignore[index]  # str checked above
        else:
            raise _bad(t, value, path)
        if kind == "float" and cls is not str:
            return _float32(value, x)  # type: ignore[arg-type]  # the token's text
        return x
    if kind == "boolean":
        if cls is bool:
            return value
        raise _bad(t, value, path)
    if kind == "string":
        if cls is str:
            assert isinstance(value, str)
            return _utf8(value)
        return _utf8(_jackson_text(value))
    if kind == "timestamp":
        if cls is _Int:
            assert isinstance(value, str)
            micros = int(value) * _MICROS_PER_SECOND
            if _INT_RANGES["long"][0] <= micros <= _INT_RANGES["long"][1]:
                return micros
        elif cls is str:
            assert isinstance(value, str)
            parsed = ctx.parse_timestamp(value)
            if parsed is not None:
                return parsed
        raise _bad(t, value, path)
    if kind == "decimal":
        if cls is _Int or cls is _Float:
            assert isinstance(value, str)
            number = _decimal(value, t.arrow)
        elif cls is str and value:
            assert isinstance(value, str)
            # ExprUtils.getDecimalParser(Locale.US): commas removed, then BigDecimal(String)
            number = _decimal(value.replace(",", ""), t.arrow)
        else:
            number = None
        if number is None:
            raise _bad(t, value, path)
        return number
    if kind == "binary":
        if cls is str:
            assert isinstance(value, str)
            return _base64(value, path)
        raise _bad(t, value, path)
    if kind == "timestamp_ntz":
        if cls is str and value:
            assert isinstance(value, str)
            local = ctx.parse_timestamp_ntz(value)
            if local is not None:
                return local
        raise _bad(t, value, path)
    assert kind == "date", kind
    if cls is str:
        assert isinstance(value, str)
        days = ctx.parse_date(value)
        if days is not None:
            return days
    raise _bad(t, value, path)


def _container(value: object, t: _Type, path: str, ctx: _Context) -> object:
    assert t.element is not None
    reason: str | None = None
    if t.kind == "array":
        if value.__class__ is not list:
            raise _bad(t, value, path)
        assert isinstance(value, list)
        out: list[object] = []
        for i, item in enumerate(value):
            try:
                out.append(_convert(item, t.element, f"{path}/{i}", ctx))
            except _Partial as exc:
                out.append(exc.value)
                reason = reason or exc.reason
        if reason is not None:
            raise _Partial(out, reason)
        return out
    if value.__class__ is not dict and value.__class__ is not _Pairs:
        raise _bad(t, value, path)
    assert isinstance(value, dict)
    pairs: list[tuple[str, object]] = []
    for key, item in value.items():
        try:
            pairs.append((_utf8(key), _convert(item, t.element, f"{path}/{key}", ctx)))
        except _Partial as exc:
            pairs.append((_utf8(key), exc.value))
            reason = reason or exc.reason
    if reason is not None:
        raise _Partial(pairs, reason)
    return pairs


def _float32_bits(f: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", f))[0])


def _from_float32_bits(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def _float32(text: str, x: float) -> float:
    """A number token into ``float`` as Spark reads it: Jackson's ``getFloatValue`` is Java's
    ``Float.parseFloat`` of the text (Jackson 2.15+), the decimal rounded once to the nearest
    float (ties to even), from :data:`_FLOAT32_OVERFLOW` on to infinity. ``x`` is the text
    rounded to a double; rounding it again to a float gives the same result except when ``x``
    lies exactly half-way between two floats (or on the overflow threshold) while the text
    does not: then the text's exact decimal value (:class:`decimal.Decimal`, no rounding,
    bounded by the text's length) decides the side.

    Returns the float's value as a Python float (exact; Arrow's cast to float32 keeps it).
    """
    if not math.isfinite(x):
        return x
    ax = abs(x)
    if ax >= _FLOAT32_OVERFLOW:
        if ax == _FLOAT32_OVERFLOW and Decimal(text).copy_abs() < Decimal(ax):
            return math.copysign(_FLOAT32_MAX, x)
        return math.copysign(math.inf, x)
    f = _from_float32_bits(_float32_bits(ax))  # round to nearest, ties to even
    if f == ax:
        return x
    # the float on x's other side, and whether x is the midpoint between the two
    bits = _float32_bits(f)
    g = _from_float32_bits(bits + 1 if f < ax else bits - 1)
    if (f + g) / 2 == ax:  # exact: float values in double arithmetic
        exact = Decimal(text).copy_abs()  # exact (abs() would round to the context)
        if exact != Decimal(ax):
            f = max(f, g) if exact > Decimal(ax) else min(f, g)
    return math.copysign(f, x)


#: ``java.math.BigDecimal(String)``'s grammar: a sign, digits with an optional point (a digit
#: on one side at least), an optional exponent; digits are any Unicode decimal digits (Java's
#: ``Character.isDigit``, Python's ``\\d`` on ``str``).
_BIG_DECIMAL: Final = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?)(\d+))?")
#: A ``BigDecimal``'s scale is an ``int``.
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
#: ``BigDecimal.setScale`` lowering the scale by more than this divides by a power of ten past
#: ``BigInteger``'s range (``10**n`` needs fewer than ``2**31 - 1`` bits):
#: ``ArithmeticException``, a bad value.
_MAX_SCALE_DROP: Final = 646_456_992
#: Room for any rounded value of at most 38 digits (and the one digit rounding may add).
_DECIMAL_CONTEXT: Final = Context(prec=80, Emax=MAX_EMAX, Emin=MIN_EMIN)


def _decimal(text: str, arrow: pa.Decimal128Type) -> Decimal | None:
    """A decimal as Spark's ``Decimal(new BigDecimal(text), p, s)`` makes it: the exact
    value of ``text`` (``BigDecimal``'s grammar, :data:`_BIG_DECIMAL`), rounded to ``s``
    fraction digits half away from zero (``ROUND_HALF_UP``); None (a bad value) for a text
    that is not a ``BigDecimal`` (no digit; an exponent of more than 10 digits after its
    leading zeros; a scale outside ``int``), a rounded value of more than ``p`` digits, or a
    rounding past ``BigInteger``'s range. Work is bounded by the text's length whatever its
    exponent."""
    m = _BIG_DECIMAL.fullmatch(text)
    if m is None:
        return None
    sign, whole, fraction, exp_sign, exp_digits = m.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        return None
    exponent = 0
    if exp_digits is not None:
        significant = exp_digits.lstrip("0") or "0"
        if len(significant) > 10:  # BigDecimal: "Too many nonzero exponent digits."
            return None
        exponent = int(significant) * (-1 if exp_sign == "-" else 1)
    scale = len(fraction) - exponent
    if not _INT_MIN <= scale <= _INT_MAX:  # BigDecimal: "Scale out of range."
        return None
    digits = whole + fraction
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(c)) for c in digits)
    coefficient = digits.lstrip("0")
    p, s = arrow.precision, arrow.scale
    zero = Decimal(0).scaleb(-s)
    if not coefficient:
        return zero  # BigDecimal.setScale of zero: zero (no arithmetic)
    if scale - s > _MAX_SCALE_DROP:
        return None
    # the exponent of the leading digit: the value lies in [10**adjusted, 10**(adjusted+1))
    adjusted = len(coefficient) - 1 - scale
    if adjusted >= p - s:
        return None  # at least p - s + 1 integer digits, before rounding (which only grows)
    if adjusted < -s - 1:
        return zero  # below 10**(-s-1), less than half the last place: rounds to zero
    exact = Decimal(f"{sign}{coefficient}E{-scale}")
    rounded = exact.quantize(Decimal(1).scaleb(-s), ROUND_HALF_UP, _DECIMAL_CONTEXT)
    if len(rounded.as_tuple().digits) > p:
        return None  # 999.995 into decimal(5,2): 1000.00
    return rounded if rounded else zero  # no negative zero (BigDecimal has none)


_BASE64: Final = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)}  # fmt: skip


def _base64(text: str, path: str, *, whole_text: bool = False) -> bytes:
    """A JSON string into ``binary`` as Jackson's ``getBinaryValue`` decodes it (its default
    ``Base64Variants.MIME_NO_LINEFEEDS``; ``ReaderBasedJsonParser._decodeBase64``, Jackson
    2.15+): the standard alphabet in quads of four characters, padding ``=`` required (``QQ``
    is bad, ``QQ==`` is ``A``), characters up to U+0020 skipped before a quad and at the end
    only, more quads allowed after a padded one (``QQ==QQ==`` is ``AA``), the unused bits of
    a padded quad ignored (``QR==`` is ``A``); the empty string is no bytes.
    ``whole_text``: a single-quoted string, which Jackson decodes from its text
    (``Base64Variant.decode(String)``, the same rules): every error is a bad value.

    Raises:
        _Bad: another string (the field is null: "partial results").
        _Malformed: (not ``whole_text``) the string ends one character into a quad, or right
            after a quad's first ``=`` (``Q``, ``QQ=``): Jackson then reads the closing quote
            as part of the value and goes on past it, which leaves the document malformed.
    """
    out = bytearray()
    n = len(text)
    i = 0

    def bad(why: str, at: int) -> _Bad:
        return _Bad(f"expected base64 (binary) at {path or '/'}: {why} in {_short(text)}", at)

    while True:
        while i < n and text[i] <= " ":
            i += 1
        if i == n:
            return bytes(out)
        a = _BASE64.get(text[i], -1)
        if a < 0:
            raise bad(f"{text[i]!r} at {i}", i)
        if i + 1 == n:
            if whole_text:
                raise bad("one character into a quad at the end", n)
            raise _Malformed(f"base64 ending one character into a quad at {path or '/'}")
        b = _BASE64.get(text[i + 1], -1)
        if b < 0:
            raise bad(f"{text[i + 1]!r} at {i + 1}", i + 1)
        if i + 2 == n:
            raise bad("missing padding", n)
        if text[i + 2] == "=":
            if i + 3 == n:
                if whole_text:
                    raise bad("one '=' at the end", n)
                raise _Malformed(f"base64 ending after one '=' at {path or '/'}")
            if text[i + 3] != "=":
                raise bad(f"{text[i + 3]!r} at {i + 3} where '=' is expected", i + 3)
            out.append(((a << 6 | b) >> 4) & 0xFF)
            i += 4
            continue
        c = _BASE64.get(text[i + 2], -1)
        if c < 0:
            raise bad(f"{text[i + 2]!r} at {i + 2}", i + 2)
        if i + 3 == n:
            raise bad("missing padding", n)
        if text[i + 3] == "=":
            out += (((a << 12 | b << 6 | c) >> 2) & 0xFFFF).to_bytes(2, "big")
            i += 4
            continue
        d = _BASE64.get(text[i + 3], -1)
        if d < 0:
            raise bad(f"{text[i + 3]!r} at {i + 3}", i + 3)
        out += (a << 18 | b << 12 | c << 6 | d).to_bytes(3, "big")
        i += 4


def _utf8(text: str) -> str:
    """``text`` with each lone surrogate (a ``\\ud800`` escape without its pair) as ``?``,
    as Java's UTF-8 encoder writes it when Spark makes the string a ``UTF8String``."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode()
    return text


def _jackson_text(value: object) -> str:
    """A non-string JSON value as ``from_json`` puts it into a string field: Jackson's
    ``JsonGenerator.copyCurrentStructure`` output (compact; integers as their value's digits;
    other numbers as Java's ``Double.toString``; ``NaN``/``Infinity`` quoted)."""
    cls = value.__class__
    if cls is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if cls is _Int:
        assert isinstance(value, str)
        return str(int(value))
    if cls is _Float:
        assert isinstance(value, str)
        x = float(value)
        # Jackson quotes non-finite numbers (QUOTE_NON_NUMERIC_NUMBERS): 1e400 -> "Infinity"
        return java_double(x) if math.isfinite(x) else f'"{java_double(x)}"'
    if cls is _Const:
        return f'"{value}"'
    if cls is str or cls is _Quoted:
        return json.dumps(value, ensure_ascii=False)
    if cls is _RawControls:
        raise _Malformed("a control character in a string")
    if cls is list:
        assert isinstance(value, list)
        return "[" + ",".join(_jackson_text(v) for v in value) + "]"
    assert isinstance(value, dict)
    items = value.pairs if cls is _Pairs else value.items()  # type: ignore[attr-defined]
    return (
        "{"
        + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_jackson_text(v)}" for k, v in items)
        + "}"
    )


# -- dates and timestamps -------------------------------------------------------------------------

#: What ``SparkDateTimeUtils`` trims from both ends of a date or timestamp string before
#: parsing it (``getTrimmedStart``/``getTrimmedEnd``: each UTF-8 byte that is
#: ``Character.isWhitespace`` or ``isISOControl``): U+0000..U+0020 and U+007F. A non-ASCII
#: character (U+00A0, U+0085, U+3000) is never trimmed: its UTF-8 bytes are negative in Java.
_SPARK_TRIM: Final = "".join(map(chr, range(0x21))) + "\x7f"
#: What Java's ``String.trim`` removes (the zone id's text, ``parseTimestampString``).
_JAVA_TRIM: Final = "".join(map(chr, range(0x21)))
#: ``stringToDate``'s forms (after trimming; ASCII digits only): ``[+-]yyyy*``,
#: ``[+-]yyyy*-[m]m``, ``[+-]yyyy*-[m]m-[d]d``, the last optionally followed by a space or
#: ``T`` and anything; the year of 4 to 7 digits.
_DATE: Final = re.compile(
    r"([+-]?)([0-9]{4,7})(?:-([0-9]{1,2})(?:-([0-9]{1,2})(?:[ T].*)?)?)?", re.DOTALL
)
#: ``parseTimestampString``'s date part (after trimming): a sign, a year of 4 to 6 digits,
#: ``-[m]m``, ``-[d]d``, then a space or ``T`` and the time part (group 5).
_TS_DATE: Final = re.compile(
    r"([+-]?)([0-9]{4,6})(?:-([0-9]{1,2})(?:-([0-9]{1,2})(?:[ T](.*))?)?)?", re.DOTALL
)
#: ``parseTimestampString``'s time part: ``[h]h``, ``:[m]m``, ``:[s]s``, ``.`` and any number
#: of fraction digits; a zone id (anything from the first other character on) only after the
#: seconds or the fraction.
_TS_TIME: Final = re.compile(
    r"([0-9]{1,2})(?::([0-9]{1,2})(?::([0-9]{1,2})(?:\.([0-9]*))?([^0-9].*)?)?)?", re.DOTALL
)
#: A time without a date that does not start with ``T``: ``[h]h:`` first.
_JUST_TIME: Final = re.compile(r"[0-9]{1,2}:")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
#: A zone id of a region (``ZoneRegion.checkName``).
_REGION_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")


def _parse_date(text: str) -> int | None:
    """``DateTimeUtils.stringToDate``: days since the epoch, or None. The text is trimmed as
    Spark trims it (:data:`_SPARK_TRIM`); the year has 4 to 7 digits and a sign; the days
    must fit an ``int``."""
    m = _DATE.fullmatch(text.strip(_SPARK_TRIM))
    if m is None:
        return None
    days = _days(int(m[1] + m[2]), int(m[3] or 1), int(m[4] or 1))
    if days is None or not _INT_MIN <= days <= _INT_MAX:
        return None  # localDateToDays: Math.toIntExact
    return days


#: The Julian day number of 1970-01-01.
_EPOCH_JDN: Final = 2_440_588


def _julian_epoch_days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a date of the Julian calendar (astronomical years: 0 is 1 BC),
    by its Julian day number (the Julian calendar's count of March-based years)."""
    a = (14 - month) // 12
    y = year + 4800 - a
    m = month + 12 * a - 3
    return day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083 - _EPOCH_JDN


def _julian_date(days: int) -> tuple[int, int, int]:
    """The Julian calendar's (astronomical year, month, day) of days since 1970-01-01: the
    inverse of :func:`_julian_epoch_days` (floor divisions, so any integer works)."""
    c = days + _EPOCH_JDN + 32082
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    return d - 4800 + m // 10, m + 3 - 12 * (m // 10), e - (153 * m + 2) // 5 + 1


#: Where the count of days that the Julian calendar lags the proleptic Gregorian one changes,
#: as ``RebaseDateTime.rebaseJulianToGregorianDays`` takes it: (the first day, in the Julian
#: calendar's days since the epoch, and the days to add from it), from 0001-01-01 (before it,
#: :func:`_rebase_julian_days` converts each date) through each 1 March of a year divisible by 100
#: but not by 400 (where the Julian calendar has a 29 February the Gregorian one lacks) to
#: 1582-10-15, the first Gregorian day, from which nothing is added.
_JULIAN_SHIFTS: Final = (
    [(_julian_epoch_days(1, 1, 1), 2)]
    + [
        (_julian_epoch_days(y, 3, 1), -(y // 100 - y // 400 - 2))
        for y in range(100, 1582, 100)
        if y % 400
    ]
    + [(-141_427, 0)]
)


def _rebase_julian_days(days: int) -> int:
    """``RebaseDateTime.rebaseJulianToGregorianDays``: days since the epoch counted in the
    Julian calendar (before 1582-10-15) as the proleptic Gregorian calendar counts the same
    year, month and day: from 0001-01-01 by :data:`_JULIAN_SHIFTS`; before it (Spark 4's
    ``localRebaseJulianToGregorianDays``) by the date itself: its year and month, day 1,
    then its day of the month less one added (so a 29 February the Gregorian year lacks is
    1 March)."""
    if days < _JULIAN_SHIFTS[0][0]:
        year, month, day = _julian_date(days)
        first = _days(year, month, 1)
        assert first is not None  # month 1..12, day 1
        return first + day - 1
    firsts = [first for first, _ in _JULIAN_SHIFTS]
    return days + _JULIAN_SHIFTS[bisect.bisect_right(firsts, days) - 1][1]


def _parse_date_fallback(text: str) -> int | None:
    """JacksonParser's fallback for a date string: ``stringToDate`` of the text without
    ``GMT`` (``cleanLegacyTimestampStr``), else the text (not trimmed) as
    ``Integer.parseInt`` reads it (a sign and decimal digits, Unicode ones too) of days since
    the epoch (Spark 1.5's way), days before 1582-10-15 counted in the Julian calendar, as
    Spark rebases them (:func:`_rebase_julian_days`)."""
    days = _parse_date(text.replace("GMT", ""))
    if days is not None:
        return days
    m = re.fullmatch(r"[+-]?\d+", text)
    if m is None:
        return None
    n = int(text)
    if not _INT_MIN <= n <= _INT_MAX:
        return None  # Integer.parseInt: NumberFormatException
    return _rebase_julian_days(n)


def _parse_timestamp_string(text: str) -> tuple[int, int, str | None, bool] | None:
    """``SparkDateTimeUtils.parseTimestampString``: the text's local date-time and zone.

    Returns (the local date's days since the epoch, or 0 for a time without a date; the
    microseconds of the day; the zone id's text or None; whether it is a time without a
    date), or None when the text is none of its forms. Forms (after
    trimming :data:`_SPARK_TRIM`; ASCII digits): ``[+-]yyyy[yy]``, ``-[m]m``, ``-[d]d``,
    then ``T`` or a space and ``[h]h``, ``:[m]m``, ``:[s]s``, ``.`` and fraction digits
    (past the sixth dropped), then a zone id (any text from the first character that is not
    a digit after the seconds or fraction: checked by :func:`_zone_id`); or a time alone,
    ``T[h]h...`` (``T`` the very first character, nothing trimmed before it) or
    ``[h]h:[m]m...`` (no sign).
    """
    trimmed = text.strip(_SPARK_TRIM)
    if not trimmed:
        return None
    just_time = False
    if text[0] == "T":
        just_time, rest, days = True, trimmed[1:], 0
    elif _JUST_TIME.match(trimmed):
        just_time, rest, days = True, trimmed, 0
    else:
        m = _TS_DATE.fullmatch(trimmed)
        if m is None:
            return None
        found = _days(int(m[1] + m[2]), int(m[3] or 1), int(m[4] or 1))
        if found is None:
            return None
        days, rest = found, m[5]
        if rest is None:
            return days, 0, None, False
    t = _TS_TIME.fullmatch(rest)
    if t is None:
        return None
    hour, minute, second = int(t[1]), int(t[2] or 0), int(t[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None  # LocalTime.of
    fraction = int((t[4] or "")[:6].ljust(6, "0"))
    micros = ((hour * 60 + minute) * 60 + second) * _MICROS_PER_SECOND + fraction
    return days, micros, t[5], just_time


def _offset(text: str) -> dt.timezone | None:
    """``ZoneOffset.of``: ``Z``, ``+h``, ``+hh``, ``+hh:mm``, ``+hhmm``, ``+hh:mm:ss``,
    ``+hhmmss`` (ASCII digits; hours up to 18, minutes and seconds up to 59, at most
    18:00:00 in all); None for another text."""
    if text == "Z":
        return dt.timezone.utc
    if len(text) == 2:
        text = f"{text[0]}0{text[1]}"
    n = len(text)
    shapes = {3: "shh", 5: "shhmm", 6: "shh:mm", 7: "shhmmss", 9: "shh:mm:ss"}
    shape = shapes.get(n)
    if shape is None or text[0] not in "+-":
        return None
    for c, want in zip(text[1:], shape[1:], strict=True):
        if (c not in "0123456789") if want != ":" else c != ":":
            return None
    digits = text[1:].replace(":", "")
    hours, minutes, seconds = int(digits[:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours > 18 or minutes > 59 or seconds > 59 or (hours == 18 and (minutes or seconds)):
        return None
    total = (hours * 60 + minutes) * 60 + seconds
    return dt.timezone(dt.timedelta(seconds=-total if text[0] == "-" else total))


@functools.lru_cache(maxsize=1)
def _regions() -> frozenset[str]:
    return frozenset(available_timezones())


@functools.lru_cache(maxsize=256)
def _zone_id(text: str) -> dt.tzinfo | None:
    """``SparkDateTimeUtils.getZoneId`` of a timestamp string's zone text (Java-trimmed
    first): ``+h:`` and a final ``+hh:m`` padded, a short id (``PST``, ``EST``) replaced
    (``ZoneId.SHORT_IDS``), then ``ZoneId.of``: an offset (:func:`_offset`) for a text of
    one character or starting with a sign; ``UTC``, ``GMT``, ``UT`` alone or followed by an
    offset; else a region of the time-zone database (case as written: ``utc`` is none).
    None when Java throws."""
    name = text.strip(_JAVA_TRIM)
    name = re.sub(r"([+-])([0-9]):", r"\g<1>0\2:", name, count=1)
    name = re.sub(r"([+-])([0-9]{2}):([0-9])\Z", r"\1\2:0\3", name, count=1)
    name = SHORT_IDS.get(name, name)
    if len(name) <= 1 or name[0] in "+-":
        return _offset(name)
    prefix = 3 if name.startswith(("UTC", "GMT")) else 2 if name.startswith("UT") else 0
    if prefix:
        if len(name) == prefix:
            return dt.timezone.utc
        if name[prefix] in "+-":
            return _offset(name[prefix:])
    if not _REGION_NAME.fullmatch(name) or name not in _regions():
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _parse_timestamp_ntz(text: str) -> int | None:
    """``DateTimeUtils.stringToTimestampWithoutTimeZone(text, allowTimeZone=false)`` (what
    ``from_json`` reads a ``timestamp_ntz`` string with when no ``timestampNTZFormat`` is
    given; no fallback): microseconds since 1970-01-01T00:00 of the local date-time
    (:func:`_parse_timestamp_string`'s forms), or None for a string with a zone id (valid or
    not), a time without a date, or an impossible date or time, or beyond a ``long``."""
    parsed = _parse_timestamp_string(text)
    if parsed is None or parsed[2] is not None or parsed[3]:
        return None
    value = parsed[0] * _MICROS_PER_DAY + parsed[1]
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _parse_timestamp(text: str, zone: dt.tzinfo = dt.timezone.utc) -> int | None:
    """``DateTimeUtils.stringToTimestamp``: microseconds since the epoch of the text
    (:func:`_parse_timestamp_string`'s forms) in its own zone (:func:`_zone_id`) or, without
    one, in ``zone``; or None (not a form, an impossible date or time, an unknown zone, beyond
    a ``long``). A time without a date is on today's date in that zone, as Spark's
    ``LocalDate.now(zoneId)`` (so its value depends on when it is read)."""
    parsed = _parse_timestamp_string(text)
    if parsed is None:
        return None
    days, micros, zone_text, just_time = parsed
    if zone_text is not None:
        found = _zone_id(zone_text)
        if found is None:
            return None
        zone = found
    if just_time:
        days = dt.datetime.now(zone).date().toordinal() - _EPOCH_ORDINAL
    return _zoned_micros(days, micros, zone)
