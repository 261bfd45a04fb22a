"""``google.protobuf.Any`` values as the JSON text spark-protobuf gives them with
``convert.any.fields.to.json`` (sans-I/O, pure Python).

spark-protobuf (``ProtobufDeserializer``, Spark 4.x) prints each ``Any`` with protobuf-java's
``JsonFormat.printer().omittingInsignificantWhitespace().preservingProtoFieldNames()``
(``.printingEnumsAsInts()`` with ``enums.as.ints``) ``.usingTypeRegistry(registry)``, the
registry holding every message of the descriptor set. This module writes the same text
(protobuf-java-util 4.x ``JsonFormat.PrinterImpl``; the proto3 JSON mapping,
protobuf.dev/programming-guides/json), over messages parsed by upb:

- an ``Any`` equal to its default (no field, no unknown field): ``{}``; otherwise its type
  name is the last ``/``-separated part of ``type_url`` (trailing empty parts dropped, as
  Java's ``String.split``; fewer than two parts: an error), looked up in the registry (absent:
  an error), its ``value`` parsed as that message (malformed, or a proto2 ``required`` field
  missing: an error); a well-known type prints as ``{"@type":<url>,"value":<its JSON>}``,
  any other message as its object with ``"@type":<url>`` first;
- a message: its set fields in field-number order (``getAllFields``): repeated and map fields
  when not empty, fields with presence when present, proto3 implicit fields when not their
  zero (``-0.0`` is not the zero: Java's ``Double.equals``); the proto field name as key;
  unknown fields and extensions are not printed;
- int32/sint32/sfixed32 and uint32/fixed32 (unsigned) as numbers; the 64-bit integers as
  quoted decimal strings; bool ``true``/``false``; float and double as Java 19+'s
  ``Float.toString`` / ``Double.toString`` (:mod:`spark_kafka_py.formats.java_numbers`), NaN and
  infinities as ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; bytes as standard base64 with
  padding; strings escaped as Gson's default ``toJson`` (:func:`quote`); enums by name (a
  number the enum does not declare, or any with ``enums.as.ints``: the number),
  ``google.protobuf.NullValue`` always ``null``;
- map fields as objects, entries in wire order (duplicate keys kept, as ``DynamicMessage``
  holds them), keys always quoted; repeated fields as arrays;
- well-known types: wrappers as their value (printed even when zero); ``Timestamp`` as RFC 3339
  in UTC with 0, 3, 6 or 9 fraction digits and ``Z`` (seconds outside 0001-01-01 ..
  9999-12-31 or nanos outside 0..999,999,999: an error, ``Timestamps.toString``);
  ``Duration`` as ``<seconds>[.<fraction>]s`` (outside +-315,576,000,000 s, nanos past
  +-999,999,999 or of the other sign: an error); ``FieldMask`` as its paths in lowerCamelCase
  joined by ``,`` (not escaped, as protobuf-java writes it); ``Struct`` as an object,
  ``ListValue`` as an array, ``Value`` as its member (none set: ``null``; a NaN or infinite
  ``number_value``: an error); ``Any`` as above.

Every error is an :class:`AnyJsonError`: protobuf-java throws there, and spark-protobuf makes
the record a bad record (``FAILFAST`` fails, ``PERMISSIVE`` gives a null row). Nesting (messages
and ``Any`` values inside each other) is bounded by :data:`MAX_DEPTH` levels, past which the
value is an error too (protobuf-java recurses until its stack runs out).
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Iterable
from typing import Any, Final

from google.protobuf import message_factory  # type: ignore[import-untyped]
from google.protobuf.descriptor import Descriptor, FieldDescriptor  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError, Message  # type: ignore[import-untyped]

from spark_kafka_py.formats import java_numbers

__all__ = [
    "MAX_DEPTH",
    "AnyJsonError",
    "AnyJsonPrinter",
    "all_messages",
    "java_double",
    "java_float",
    "quote",
]

#: The deepest nesting of messages (``Any`` values included) printed.
MAX_DEPTH: Final = 100

_ANY: Final = "google.protobuf.Any"
_NULL_VALUE: Final = "google.protobuf.NullValue"
_WRAPPERS: Final = frozenset(
    f"google.protobuf.{n}Value"
    for n in ("Bool", "Int32", "UInt32", "Int64", "UInt64", "String", "Bytes", "Float", "Double")
)
#: protobuf-java's ``Timestamps`` range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z.
_TS_MIN: Final = -62_135_596_800
_TS_MAX: Final = 253_402_300_799
#: protobuf-java's ``Durations`` range (+-10,000 years).
_DUR_MAX: Final = 315_576_000_000
_EPOCH: Final = dt.datetime(1970, 1, 1)

_T = FieldDescriptor
_INT32: Final = frozenset({_T.TYPE_INT32, _T.TYPE_SINT32, _T.TYPE_SFIXED32})
_UINT32: Final = frozenset({_T.TYPE_UINT32, _T.TYPE_FIXED32})
_INT64: Final = frozenset(
    {_T.TYPE_INT64, _T.TYPE_SINT64, _T.TYPE_SFIXED64, _T.TYPE_UINT64, _T.TYPE_FIXED64}
)
_MESSAGES: Final = frozenset({_T.TYPE_MESSAGE, _T.TYPE_GROUP})


class AnyJsonError(ValueError):
    """An ``Any`` value protobuf-java's printer refuses (see the module docstring): an unknown
    or malformed type URL, a value that does not parse as its type, an out-of-range
    ``Timestamp``/``Duration``, a NaN ``Value``, nesting past :data:`MAX_DEPTH`."""


# -- scalars ----------------------------------------------------------------------------------

#: Gson's default string escapes (``JsonWriter``, HTML-safe: ``< > & = '`` as ``\\u00XX``).
_ESCAPES: Final = {
    **{c: f"\\u{c:04x}" for c in range(0x20)},
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    ord("\t"): "\\t",
    ord("\b"): "\\b",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\f"): "\\f",
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    ord("="): "\\u003d",
    ord("'"): "\\u0027",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def quote(text: str) -> str:
    """``text`` as a JSON string as Gson's default ``Gson.toJson(String)`` writes it: quoted,
    ``"`` and ``\\`` escaped, ``\\t \\b \\n \\r \\f`` by letter, other control characters,
    ``< > & = '`` and U+2028/U+2029 as ``\\u`` + 4 lowercase hex digits; the rest as is."""
    return '"' + text.translate(_ESCAPES) + '"'


def java_double(value: float) -> str:
    """A double as protobuf-java's printer writes it: ``Double.toString``
    (:func:`spark_kafka_py.formats.java_numbers.java_double`), NaN and infinities quoted
    (``"NaN"``, ``"Infinity"``, ``"-Infinity"``)."""
    text = java_numbers.java_double(value)
    return text if math.isfinite(value) else f'"{text}"'


def java_float(value: float) -> str:
    """A float (the Python float of its exact value) as protobuf-java's printer writes it:
    ``Float.toString`` (:func:`spark_kafka_py.formats.java_numbers.java_float`), NaN and
    infinities quoted."""
    text = java_numbers.java_float(value)
    return text if math.isfinite(value) else f'"{text}"'


def _camel(path: str) -> str:
    """Guava's ``LOWER_UNDERSCORE.to(LOWER_CAMEL, path)``: words split at ``_``; the first
    lowercased, the others capitalized (ASCII letters only)."""
    words = path.split("_")

    def lower(w: str) -> str:
        return "".join(c.lower() if "A" <= c <= "Z" else c for c in w)

    out = [lower(words[0])]
    for w in words[1:]:
        out.append((w[0].upper() if "a" <= w[0] <= "z" else w[0]) + lower(w[1:]) if w else "")
    return "".join(out)


def _nanos(n: int) -> str:
    """``Timestamps.formatNanos``: 3, 6 or 9 digits."""
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000:03d}"
    if n % 1000 == 0:
        return f"{n // 1000:06d}"
    return f"{n:09d}"


def _timestamp(seconds: int, nanos: int) -> str:
    if not (_TS_MIN <= seconds <= _TS_MAX and 0 <= nanos <= 999_999_999):
        raise AnyJsonError(f"Timestamp of {seconds} s and {nanos} ns is not valid")
    d = _EPOCH + dt.timedelta(seconds=seconds)
    text = f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    if nanos:
        text += "." + _nanos(nanos)
    return '"' + text + 'Z"'


def _duration(seconds: int, nanos: int) -> str:
    if (
        not -_DUR_MAX <= seconds <= _DUR_MAX
        or not -999_999_999 <= nanos <= 999_999_999
        or (seconds < 0 < nanos)
        or (nanos < 0 < seconds)
    ):
        raise AnyJsonError(f"Duration of {seconds} s and {nanos} ns is not valid")
    sign = ""
    if seconds < 0 or nanos < 0:
        sign, seconds, nanos = "-", -seconds, -nanos
    text = f"{sign}{seconds}"
    if nanos:
        text += "." + _nanos(nanos)
    return '"' + text + 's"'


def _nonzero(value: Any) -> bool:
    """A proto3 implicit field's value differs from its zero (Java's ``equals``: ``-0.0`` is
    not ``0.0``)."""
    if isinstance(value, float):
        return value != 0.0 or math.copysign(1.0, value) < 0
    return bool(value)


def _text(value: str | bytes) -> str:
    # upb gives a proto2 string that is not UTF-8 as bytes; protobuf-java decodes it with
    # U+FFFD for each malformed sequence
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


# -- the printer ------------------------------------------------------------------------------


def all_messages(file: Any) -> Iterable[Descriptor]:
    """Every message a file descriptor declares, nested ones too (declaration order, each
    before its nested messages)."""
    stack = list(reversed(file.message_types_by_name.values()))
    while stack:
        d = stack.pop()
        yield d
        stack.extend(reversed(d.nested_types))


class AnyJsonPrinter:
    """Prints ``Any`` messages (parsed by upb) as spark-protobuf's JSON text.

    Args:
        files: the file descriptors of the descriptor set (the registry: every message they
            declare, nested ones too), from a pool whose message classes read map fields as
            repeated entries (:meth:`ProtobufSchema.decode_class
            <spark_kafka_py.formats.protobuf.descriptors.ProtobufSchema.decode_class>`).
        map_entries: full names of the map entry messages (their ``map_entry`` option, which
            that pool no longer carries).
        enums_as_ints: ``enums.as.ints``: every enum as its number.
    """

    def __init__(
        self, files: Iterable[Any], map_entries: Iterable[str], enums_as_ints: bool = False
    ) -> None:
        self._registry: dict[str, Descriptor] = {}
        for f in files:
            for d in all_messages(f):
                self._registry.setdefault(d.full_name, d)
        self._map_entries = frozenset(map_entries)
        self._enums_as_ints = enums_as_ints
        self._enum_names: dict[str, dict[int, str]] = {}
        self._fields: dict[str, list[FieldDescriptor]] = {}

    def print_any(self, message: Message) -> str:
        """The JSON text of one ``google.protobuf.Any`` message.

        Raises:
            AnyJsonError: protobuf-java's printer fails on it (see the module docstring).
        """
        try:
            return self._any(message, 0)
        except RecursionError as e:  # a deep stack at the call: still a bad record
            raise AnyJsonError("messages nested too deep to print") from e

    # -- messages ------------------------------------------------------------------------------

    def _any(self, m: Message, depth: int) -> str:
        if depth >= MAX_DEPTH:
            raise AnyJsonError(f"messages nested deeper than {MAX_DEPTH} levels")
        if m.ByteSize() == 0:  # equal to the default instance (unknown fields would count)
            return "{}"
        url = _text(m.type_url)
        parts = url.split("/")
        while parts and not parts[-1]:
            parts.pop()
        if len(parts) <= 1:
            raise AnyJsonError(f"invalid type URL {url!r}")
        name = parts[-1]
        d = self._registry.get(name)
        if d is None:
            raise AnyJsonError(f"cannot find type for URL {url!r}")
        try:
            content = message_factory.GetMessageClass(d).FromString(m.value)
        except DecodeError as e:
            raise AnyJsonError(f"the value of an Any of {name} does not parse: {e}") from e
        if not content.IsInitialized():
            missing = ", ".join(content.FindInitializationErrors())
            raise AnyJsonError(f"the value of an Any of {name} misses {missing}")
        special = self._well_known(d, content, depth + 1)
        if special is not None:
            return '{"@type":' + quote(url) + ',"value":' + special + "}"
        return self._object(content, d, depth + 1, '"@type":' + quote(url))

    def _message(self, m: Message, d: Descriptor, depth: int) -> str:
        if depth >= MAX_DEPTH:
            raise AnyJsonError(f"messages nested deeper than {MAX_DEPTH} levels")
        special = self._well_known(d, m, depth)
        if special is not None:
            return special
        return self._object(m, d, depth, None)

    def _sorted_fields(self, d: Descriptor) -> list[FieldDescriptor]:
        fields = self._fields.get(d.full_name)
        if fields is None:
            fields = sorted(d.fields, key=lambda f: f.number)
            self._fields[d.full_name] = fields
        return fields

    def _object(self, m: Message, d: Descriptor, depth: int, first: str | None) -> str:
        out = [] if first is None else [first]
        for fd in self._sorted_fields(d):
            name = fd.name
            value = getattr(m, name)
            if fd.is_repeated:
                if not len(value):
                    continue
                if fd.message_type is not None and fd.message_type.full_name in self._map_entries:
                    text = self._map(fd, value, depth)
                else:
                    text = "[" + ",".join(self._value(fd, v, depth) for v in value) + "]"
            else:
                present = m.HasField(name) if fd.has_presence else _nonzero(value)
                if not present:
                    continue
                text = self._value(fd, value, depth)
            out.append('"' + name + '":' + text)
        return "{" + ",".join(out) + "}"

    def _map(self, fd: FieldDescriptor, entries: Any, depth: int) -> str:
        entry = fd.message_type
        key_fd = entry.fields_by_name["key"]
        value_fd = entry.fields_by_name["value"]
        items = []
        for e in entries:
            items.append(self._key(key_fd, e.key) + ":" + self._value(value_fd, e.value, depth))
        return "{" + ",".join(items) + "}"

    @staticmethod
    def _key(fd: FieldDescriptor, key: Any) -> str:
        t = fd.type
        if t == _T.TYPE_STRING:
            return quote(_text(key))
        if t == _T.TYPE_BOOL:
            return '"true"' if key else '"false"'
        return '"' + str(int(key)) + '"'

    def _value(self, fd: FieldDescriptor, v: Any, depth: int) -> str:
        t = fd.type
        if t in _INT32 or t in _UINT32:
            return str(int(v))
        if t in _INT64:
            return '"' + str(int(v)) + '"'
        if t == _T.TYPE_BOOL:
            return "true" if v else "false"
        if t == _T.TYPE_DOUBLE:
            return java_double(v)
        if t == _T.TYPE_FLOAT:
            return java_float(v)
        if t == _T.TYPE_STRING:
            return quote(_text(v))
        if t == _T.TYPE_BYTES:
            return '"' + base64.b64encode(v).decode("ascii") + '"'
        if t == _T.TYPE_ENUM:
            return self._enum(fd, int(v))
        if t in _MESSAGES:
            return self._message(v, fd.message_type, depth + 1)
        raise AnyJsonError(f"field type {t} not printable")  # pragma: no cover

    def _enum(self, fd: FieldDescriptor, number: int) -> str:
        enum = fd.enum_type
        if enum.full_name == _NULL_VALUE:
            return "null"
        names = self._enum_names.get(enum.full_name)
        if names is None:
            names = {}
            for ev in enum.values:  # the first value declared with a number names it
                names.setdefault(ev.number, ev.name)
            self._enum_names[enum.full_name] = names
        name = names.get(number)
        if self._enums_as_ints or name is None:
            return str(number)
        return '"' + name + '"'

    # -- well-known types ------------------------------------------------------------------------

    def _well_known(self, d: Descriptor, m: Message, depth: int) -> str | None:
        """The JSON of a well-known type's message (by full name, as protobuf-java picks its
        special printers), or None for any other message."""
        name = d.full_name
        if not name.startswith("google.protobuf."):
            return None
        if name == _ANY:
            return self._any(m, depth)
        if name in _WRAPPERS:
            return self._value(d.fields_by_name["value"], m.value, depth)
        if name == "google.protobuf.Timestamp":
            return _timestamp(m.seconds, m.nanos)
        if name == "google.protobuf.Duration":
            return _duration(m.seconds, m.nanos)
        if name == "google.protobuf.FieldMask":
            return '"' + ",".join(_camel(_text(p)) for p in m.paths if p) + '"'
        if name == "google.protobuf.Struct":
            return self._map(d.fields_by_name["fields"], m.fields, depth)
        if name == "google.protobuf.ListValue":
            values_fd = d.fields_by_name["values"]
            return "[" + ",".join(self._value(values_fd, v, depth) for v in m.values) + "]"
        if name == "google.protobuf.Value":
            kind = m.WhichOneof("kind")
            if kind is None:
                return "null"
            value = getattr(m, kind)
            if kind == "number_value" and (math.isnan(value) or math.isinf(value)):
                raise AnyJsonError("a google.protobuf.Value of NaN or an infinity")
            return self._value(d.fields_by_name[kind], value, depth)
        return None
