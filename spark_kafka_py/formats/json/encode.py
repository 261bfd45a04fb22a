"""One Arrow array -> one JSON document per row, the bytes Spark's ``to_json`` writes.

The sink's side of ``valueFormat=json``: a ``struct``, ``map`` or ``array`` column becomes what
``to_json(col)`` returns in Spark 4.x with the default options (``JacksonGenerator`` over
Jackson's ``JsonGenerator``, ``JSONOptions`` defaults), as measured by
``tests/formats/json/test_to_json_oracle.py``, encoded as UTF-8:

- compact: no spaces; struct fields in schema order; a null struct field is left out
  (``ignoreNullFields``, default ``spark.sql.jsonGenerator.ignoreNullFields`` = true), so a
  struct of nulls is ``{}``; a null array element or map value is ``null``.
- integers as their digits; ``boolean`` as ``true``/``false``.
- ``double`` as Java's ``Double.toString`` (``1.0``, ``1.0E20``, ``1.0E-5``, ``-0.0``),
  ``float`` as Java's ``Float.toString`` (``1.1``, ``1.0E10``); ``NaN``, ``Infinity``,
  ``-Infinity`` as JSON strings (Jackson's ``QUOTE_NON_NUMERIC_NUMBERS``).
- ``decimal`` as Java's ``BigDecimal.toString`` of the value at the type's scale (``1.50``,
  ``100``, ``1.000E-7``, ``0E-8``: scientific when the adjusted exponent is below -6).
- ``string`` in double quotes with Jackson's escapes: ``\\"``, ``\\\\``, ``\\b``, ``\\t``,
  ``\\n``, ``\\f``, ``\\r``, other characters below U+0020 as ``\\u00XX`` (upper-case hex);
  everything else as is (``/``, U+007F, U+2028, non-BMP characters).
- ``binary`` as standard Base64 (with padding) in quotes (Jackson's ``writeBinary``).
- ``date`` as ``yyyy-MM-dd``; ``timestamp`` as ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX`` in the
  column's zone (the Arrow type's ``tz``; UTC when it has none): fractions truncated to
  milliseconds, ``Z`` for a zero offset, else ``+hh:mm``; ``timestamp_ntz`` (a timestamp
  without ``tz``, when declared as such) as ``yyyy-MM-dd'T'HH:mm:ss.SSS``.
- map keys as JSON strings: a string key as is, integer and boolean keys as their text,
  ``float``/``double`` keys as Java's ``toString`` (Spark writes ``key.toString`` of its
  internal value); keys of other types are refused (Spark writes its internal form: days,
  microseconds, ``[1]`` for a struct).
- a null row is a null document (``to_json(null)`` is null: a tombstone for the sink).

Spark's ``to_json`` formats timestamps in ``spark.sql.session.timeZone``; here they are
written in the zone the Arrow type carries (UTC when none), and PySpark hands Arrow
timestamps in UTC whatever the session's zone (measured: ``DataFrame.toArrow`` under
Europe/Paris). So the text equals ``to_json``'s under a UTC session; under another zone the
instant is the same and the offset differs (``2026-07-15T10:00:00.000Z`` for Spark's
``2026-07-15T12:00:00.000+02:00``).

Years outside 1..9999 are refused (:class:`JsonEncodeError`): Spark writes them with a sign
and more digits, not compared here.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pyarrow as pa

from spark_kafka_py.formats.errors import FormatError, JsonSchemaError

__all__ = ["JsonEncodeError", "JsonEncoder", "encode_json"]

_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EPOCH_NAIVE: Final = dt.datetime(1970, 1, 1)
_EPOCH_DATE: Final = dt.date(1970, 1, 1)

_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
_ESCAPE_TABLE: Final = {
    i: _ESCAPES.get(chr(i), f"\\u{i:04X}") for i in [*range(0x20), ord('"'), ord("\\")]
}

Writer = Callable[[object], str]


class JsonEncodeError(FormatError):
    """A row's value cannot be written as ``to_json`` writes it (a year outside 1..9999).

    Attributes:
        index: the row (0-based, in the array given).
        reason: what is wrong.
    """

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"row {index}: {reason}")
        self.index = index
        self.reason = reason


class _Bad(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _string(value: object) -> str:
    assert isinstance(value, str)
    return '"' + value.translate(_ESCAPE_TABLE) + '"'


def _digits_text(sign: str, digits: str, e: int, magnitude: float) -> str:
    """Java's ``Double``/``Float.toString`` layout of the shortest ``digits`` (first digit at
    decimal exponent ``e``): plain for ``1e-3 <= |x| < 1e7``, else ``d.dddE±n``."""
    digits = digits.rstrip("0") or "0"
    if 1e-3 <= magnitude < 1e7:
        if e >= 0:
            whole = digits[: e + 1].ljust(e + 1, "0")
            frac = digits[e + 1 :] or "0"
        else:
            whole, frac = "0", "0" * (-e - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def _non_finite(x: float) -> str | None:
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    return None


def _double(value: object) -> str:
    x = float(value)  # type: ignore[arg-type]
    special = _non_finite(x)
    if special is not None:
        return special
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(x))).as_tuple()
    assert isinstance(exponent, int)
    e = len(digit_tuple) - 1 + exponent
    return _digits_text("-" if x < 0 else "", "".join(map(str, digit_tuple)), e, abs(x))


def _float(value: object) -> str:
    x = float(value)  # type: ignore[arg-type]
    special = _non_finite(x)
    if special is not None:
        return special
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    # the shortest digits that read back as the same float32 (Java's Float.toString)
    text = np.format_float_scientific(np.float32(abs(x)), unique=True, trim="-")
    mantissa, exp = text.split("e")
    return _digits_text("-" if x < 0 else "", mantissa.replace(".", ""), int(exp), abs(x))


def _integer(value: object) -> str:
    return str(int(value))  # type: ignore[call-overload]


def _boolean(value: object) -> str:
    return "true" if value else "false"


def _decimal(value: object) -> str:
    assert isinstance(value, Decimal)
    return str(value)  # the General Decimal Arithmetic's to-sci-string: BigDecimal.toString


def _binary(value: object) -> str:
    assert isinstance(value, bytes)
    return '"' + base64.b64encode(value).decode("ascii") + '"'


def _date(value: object) -> str:
    assert isinstance(value, int)
    try:
        day = _EPOCH_DATE + dt.timedelta(days=value)
    except OverflowError:
        raise _Bad(f"date {value} days from the epoch is outside years 1..9999") from None
    return f'"{day.isoformat()}"'


def _timestamp(zone: dt.tzinfo | None) -> Writer:
    def write(value: object) -> str:
        assert isinstance(value, int)
        millis, _ = divmod(value, 1000)  # truncated to milliseconds (floor), as SSS
        try:
            if zone is None:
                t = _EPOCH_NAIVE + dt.timedelta(milliseconds=millis)
            else:
                t = (_EPOCH + dt.timedelta(milliseconds=millis)).astimezone(zone)
        except OverflowError:
            raise _Bad(f"timestamp {value} us from the epoch is outside years 1..9999") from None
        # the year always 4 digits (strftime's %Y writes year 1 as "1"; Spark: "0001")
        stamp = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        if zone is None:
            return f'"{stamp}.{t.microsecond // 1000:03d}"'
        offset = t.utcoffset() or dt.timedelta(0)
        if offset == dt.timedelta(0):
            zone_text = "Z"
        else:
            minutes = int(offset.total_seconds()) // 60
            sign = "+" if minutes >= 0 else "-"
            hours, mins = divmod(abs(minutes), 60)
            zone_text = f"{sign}{hours:02d}:{mins:02d}"
        return f'"{stamp}.{t.microsecond // 1000:03d}{zone_text}"'

    return write


def _key_writer(t: pa.DataType, path: str) -> Callable[[object], str]:
    """Map keys: ``key.toString`` of Spark's internal value, as a JSON string."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _string
    if pa.types.is_integer(t):
        return lambda v: f'"{int(v)}"'  # type: ignore[call-overload]
    if pa.types.is_boolean(t):
        return lambda v: '"true"' if v else '"false"'
    if pa.types.is_float64(t) or pa.types.is_float32(t):
        number = _double if pa.types.is_float64(t) else _float

        def write(v: object) -> str:
            text = number(v)
            return text if text.startswith('"') else f'"{text}"'

        return write
    raise JsonSchemaError(
        f"map keys of type {t} are written by Spark's to_json in its internal form; "
        "only string, integer, boolean, float and double keys are written here",
        path,
    )


def _writer(t: pa.DataType, path: str, ntz: bool) -> tuple[Writer, pa.DataType]:
    """The writer of values of ``t`` and the type the column is cast to before
    ``to_pylist`` (timestamps and dates as integers)."""
    if pa.types.is_struct(t):
        names: list[str] = []
        writers: list[Writer] = []
        cast_fields: list[pa.Field] = []
        for f in t:
            w, ct = _writer(f.type, f"{path}/{f.name}", ntz)
            names.append(_string(f.name) + ":")
            writers.append(w)
            cast_fields.append(pa.field(f.name, ct, nullable=f.nullable))
        keys = [f.name for f in t]
        parts = list(zip(keys, names, writers, strict=True))

        def write_struct(value: object) -> str:
            assert isinstance(value, dict)
            out = []
            for key, name, w in parts:
                v = value.get(key)
                if v is not None:
                    out.append(name + w(v))
            return "{" + ",".join(out) + "}"

        return write_struct, pa.struct(cast_fields)
    if pa.types.is_map(t):
        kw = _key_writer(t.key_type, f"{path}/key")
        vw, vt = _writer(t.item_type, f"{path}/value", ntz)

        def write_map(value: object) -> str:
            assert isinstance(value, list)
            return (
                "{" + ",".join(f"{kw(k)}:{'null' if v is None else vw(v)}" for k, v in value) + "}"
            )

        return write_map, pa.map_(t.key_field, t.item_field.with_type(vt))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        ew, et = _writer(t.value_type, f"{path}/element", ntz)

        def write_list(value: object) -> str:
            assert isinstance(value, list)
            return "[" + ",".join("null" if v is None else ew(v) for v in value) + "]"

        return write_list, pa.list_(t.value_field.with_type(et))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _string, t
    if pa.types.is_boolean(t):
        return _boolean, t
    if pa.types.is_integer(t):
        return _integer, t
    if pa.types.is_float64(t):
        return _double, t
    if pa.types.is_float32(t):
        return _float, t
    if pa.types.is_decimal(t):
        return _decimal, t
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return _binary, t
    if pa.types.is_date32(t):
        return _date, pa.int32()
    if pa.types.is_timestamp(t):
        if t.tz is None and ntz:
            zone: dt.tzinfo | None = None
        else:
            zone = _zone(t.tz or "UTC", path)
        micros = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": None}[t.unit]
        base = _timestamp(zone)
        if micros == 1:
            return base, pa.int64()
        if micros is None:
            return (lambda v: base(int(v) // 1000)), pa.int64()
        return (lambda v: base(int(v) * micros)), pa.int64()
    raise JsonSchemaError(f"Arrow type {t} is not written as JSON here", path)


def _has_temporal(t: pa.DataType) -> bool:
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_temporal(f.type) for f in t)
    if pa.types.is_map(t):
        return _has_temporal(t.key_type) or _has_temporal(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_temporal(t.value_type)
    return False


def _zone(name: str, path: str) -> dt.tzinfo:
    if name in ("UTC", "Z", "+00:00", "Etc/UTC"):
        return dt.timezone.utc
    if name[:1] in "+-":
        sign = 1 if name[0] == "+" else -1
        hours, _, minutes = name[1:].partition(":")
        return dt.timezone(sign * dt.timedelta(hours=int(hours), minutes=int(minutes or 0)))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise JsonSchemaError(f"unknown time zone {name!r}", path) from None


class JsonEncoder:
    """A compiled Arrow type; :meth:`encode` writes arrays of it as ``to_json`` does.

    Args:
        arrow_type: a struct, map or list type (``to_json``'s inputs); what PySpark hands a
            writer (strings and binaries possibly ``large_*``).
        timestamp_ntz: a timestamp without a zone is Spark's ``timestamp_ntz`` (written
            without an offset); else it is read as UTC.

    Raises:
        JsonSchemaError: another top-level type, or a type inside it not written here
            (naming the path, ``/a/element``).
    """

    def __init__(self, arrow_type: pa.DataType, *, timestamp_ntz: bool = True) -> None:
        if not (
            pa.types.is_struct(arrow_type)
            or pa.types.is_map(arrow_type)
            or pa.types.is_list(arrow_type)
            or pa.types.is_large_list(arrow_type)
        ):
            raise JsonSchemaError(f"to_json writes structs, maps and arrays, not {arrow_type}", "")
        self.arrow_type = arrow_type
        self._write, self._cast = _writer(arrow_type, "", timestamp_ntz)
        self._temporal = _has_temporal(arrow_type)

    def encode(self, values: pa.Array | pa.ChunkedArray) -> list[bytes | None]:
        """One UTF-8 document per row, None for a null row.

        Raises:
            JsonEncodeError: a value Spark would write differently (naming the row).
        """
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if self._temporal:  # dates and timestamps to_pylist as integers
            values = values.cast(self._cast)
        out: list[bytes | None] = []
        write = self._write
        for index, value in enumerate(values.to_pylist()):
            if value is None:
                out.append(None)
                continue
            try:
                out.append(write(value).encode("utf-8", "replace"))
            except _Bad as exc:
                raise JsonEncodeError(index, exc.reason) from None
        return out


def encode_json(values: pa.Array | pa.ChunkedArray) -> list[bytes | None]:
    """``to_json`` of each row of ``values`` (see :class:`JsonEncoder`), as UTF-8 bytes."""
    return JsonEncoder(values.type).encode(values)
