"""Avro schemas (JSON text) parsed into an immutable model.

Written from the Avro specification, 1.11 and 1.12 (https://avro.apache.org/docs/1.12.0/specification/):

- "Schema Declaration": a schema is a JSON string (a type name), a JSON object (``{"type":
  ...}``) or a JSON array (a union).
- "Primitive Types": ``null``, ``boolean``, ``int``, ``long``, ``float``, ``double``,
  ``bytes``, ``string`` (:class:`Primitive`).
- "Complex Types": records (:class:`Record`, fields with ``default`` and ``aliases``), enums
  (:class:`Enum`, with ``default``, 1.9+), arrays (:class:`Array`), maps (:class:`Map`),
  unions (:class:`Union`: no union directly inside a union, no two branches of the same
  unnamed kind or the same full name), fixed (:class:`Fixed`).
- "Names": a name matches ``[A-Za-z_][A-Za-z0-9_]*``; a name with a dot is a full name,
  otherwise the namespace is the ``namespace`` attribute or, absent that, the namespace of the
  most tightly enclosing named type; a named type may be defined once; references to a
  defined name follow the same rule (and, as the Java implementation and fastavro do, fall
  back to the null namespace when the qualified name is not defined).
- "Aliases": relative to the namespace of the type (or field) they belong to.
- "Logical Types": ``decimal`` on ``bytes`` and ``fixed`` (precision > 0, 0 <= scale <=
  precision, and for fixed a precision the size can hold), ``uuid`` (``string``; 1.12 also
  ``fixed`` of 16), ``date`` and ``time-millis`` (``int``), ``time-micros``,
  ``timestamp-millis``/``-micros``/``-nanos`` and ``local-timestamp-millis``/``-micros``/
  ``-nanos`` (``long``). "Language implementations must ignore unknown logical types ...
  If a logical type is invalid ... implementations should ignore the logical type and use
  the underlying Avro type": an unknown or invalid logical type leaves ``logical_type`` None.

The model is a tree: a named type is defined once, where it first appears; later uses (and a
record's uses of itself) are :class:`Ref` nodes, looked up through :attr:`Schema.names`. So the
model has no cycles even for recursive schemas (which :mod:`.types` refuses, as spark-avro
does).

Schema JSON comes from a registry we do not control, so it is hostile input: its size in bytes
and its nesting depth are bounded (:data:`DEFAULT_MAX_SCHEMA_BYTES`,
:data:`DEFAULT_MAX_DEPTH`) and every defect raises :class:`SchemaError` naming where it is.

Field defaults are kept as the JSON value given (``Field.default``); they are checked against
the field's type where they are used (schema resolution), not here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, TypeAlias, TypeGuard

from spark_kafka_py.formats.errors import SchemaError

#: The largest schema accepted, in bytes of UTF-8 JSON (1 MiB). A registry's schemas are
#: typically a few KiB; the bound keeps a hostile answer from costing more than it.
DEFAULT_MAX_SCHEMA_BYTES: Final = 1 << 20
#: The deepest nesting of types accepted (a record in a field of a record counts 2 levels:
#: the field's type and the record). Far above real schemas; keeps recursion well inside
#: Python's stack in the parser, the type mapping and the decoder.
DEFAULT_MAX_DEPTH: Final = 100

#: The primitive type names ("Primitive Types").
PRIMITIVE_TYPES: Final = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: Logical type -> the underlying types it may annotate ("Logical Types").
_LOGICAL_BASES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "decimal": frozenset({"bytes", "fixed"}),
        "uuid": frozenset({"string", "fixed"}),
        "date": frozenset({"int"}),
        "time-millis": frozenset({"int"}),
        "time-micros": frozenset({"long"}),
        "timestamp-millis": frozenset({"long"}),
        "timestamp-micros": frozenset({"long"}),
        "timestamp-nanos": frozenset({"long"}),
        "local-timestamp-millis": frozenset({"long"}),
        "local-timestamp-micros": frozenset({"long"}),
        "local-timestamp-nanos": frozenset({"long"}),
    }
)


class _Missing:
    """The absence of a field default (``None`` is the JSON ``null`` default)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"


#: ``Field.default`` when the field declares none.
NO_DEFAULT: Final = _Missing()


@dataclass(frozen=True, slots=True)
class Primitive:
    """A primitive type, possibly annotated with a logical type.

    Attributes:
        type: one of :data:`PRIMITIVE_TYPES`.
        logical_type: a valid logical type for ``type`` (``decimal``, ``date``, ...) or None.
        precision, scale: the decimal's digits, for ``logical_type == "decimal"`` only.
    """

    type: str
    logical_type: str | None = None
    precision: int | None = None
    scale: int | None = None


@dataclass(frozen=True, slots=True)
class Fixed:
    """A fixed-size byte string ("Complex Types: Fixed").

    Attributes:
        name: the full name (``namespace.name``, or ``name`` in the null namespace).
        size: the number of bytes of every value.
        aliases: full names this type was known by.
        logical_type, precision, scale: as in :class:`Primitive` (``decimal``, ``uuid``).
    """

    name: str
    size: int
    aliases: tuple[str, ...] = ()
    logical_type: str | None = None
    precision: int | None = None
    scale: int | None = None


@dataclass(frozen=True, slots=True)
class Enum:
    """An enum ("Complex Types: Enums"): encoded as the symbol's index (an int).

    Attributes:
        name: the full name.
        symbols: the symbols, in order (unique names).
        default: the symbol a reader uses for a writer symbol it lacks (schema resolution),
            or None.
        aliases: full names this type was known by.
    """

    name: str
    symbols: tuple[str, ...]
    default: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Field:
    """A record field.

    Attributes:
        name: the field's name (unique within its record).
        type: its type.
        default: the JSON default value, or :data:`NO_DEFAULT`.
        aliases: names this field was known by (schema resolution).
    """

    name: str
    type: AvroType
    default: object = NO_DEFAULT
    aliases: tuple[str, ...] = ()

    @property
    def has_default(self) -> bool:
        """Whether the field declares a default (possibly JSON ``null``)."""
        return self.default is not NO_DEFAULT


@dataclass(frozen=True, slots=True)
class Record:
    """A record ("Complex Types: Records"); ``error`` types parse as records too.

    Attributes:
        name: the full name.
        fields: the fields, in order (the binary encoding's order).
        aliases: full names this type was known by.
    """

    name: str
    fields: tuple[Field, ...]
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Array:
    """An array of ``items``."""

    items: AvroType


@dataclass(frozen=True, slots=True)
class Map:
    """A map from strings to ``values``."""

    values: AvroType


@dataclass(frozen=True, slots=True)
class UnionType:
    """A union: the value of exactly one of ``branches`` (encoded with its index first)."""

    branches: tuple[AvroType, ...]


@dataclass(frozen=True, slots=True)
class Ref:
    """A use of a named type defined elsewhere in the schema (or a record's use of itself).

    Attributes:
        name: the full name, a key of :attr:`Schema.names`.
    """

    name: str


#: The types a name can define ("Names").
NamedType: TypeAlias = Record | Enum | Fixed
#: Any node of the model.
AvroType: TypeAlias = Primitive | Record | Enum | Fixed | Array | Map | UnionType | Ref


@dataclass(frozen=True)
class Schema:
    """A parsed schema: its root type and every named type it defines.

    Attributes:
        root: the top-level type.
        names: full name -> the named type's definition (read-only).
    """

    root: AvroType
    names: Mapping[str, NamedType] = field(default_factory=lambda: MappingProxyType({}))

    def deref(self, avro_type: AvroType) -> AvroType:
        """The definition behind a :class:`Ref`; any other type as it is."""
        if isinstance(avro_type, Ref):
            return self.names[avro_type.name]
        return avro_type


def type_name(avro_type: AvroType) -> str:
    """The name a union branch is known by: a primitive's type, a named type's full name,
    ``array`` or ``map`` (the Avro specification's union rule; also the stable union id)."""
    if isinstance(avro_type, Primitive):
        return avro_type.type
    if isinstance(avro_type, (Record, Enum, Fixed, Ref)):
        return avro_type.name
    if isinstance(avro_type, Array):
        return "array"
    if isinstance(avro_type, Map):
        return "map"
    return "union"


def is_recursive(schema: Schema) -> bool:
    """Whether a record of ``schema`` contains itself (through fields, arrays, maps, unions)."""

    def walk(avro_type: AvroType, records: frozenset[str]) -> bool:
        t = schema.deref(avro_type)
        if isinstance(t, Record):
            if t.name in records:
                return True
            inner = records | {t.name}
            return any(walk(f.type, inner) for f in t.fields)
        if isinstance(t, Array):
            return walk(t.items, records)
        if isinstance(t, Map):
            return walk(t.values, records)
        if isinstance(t, UnionType):
            return any(walk(b, records) for b in t.branches)
        return False

    return walk(schema.root, frozenset())


def parse_schema(
    text: str | bytes,
    *,
    max_bytes: int = DEFAULT_MAX_SCHEMA_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Schema:
    """Parse Avro schema JSON into a :class:`Schema`.

    Args:
        text: the schema's JSON (``str``, or UTF-8 ``bytes``).
        max_bytes: the largest schema accepted, in bytes of UTF-8.
        max_depth: the deepest nesting of types accepted.

    Returns:
        The parsed :class:`Schema`.

    Raises:
        SchemaError: not JSON, larger than ``max_bytes``, deeper than ``max_depth``, or not a
            valid Avro schema (unknown type, undefined or redefined name, invalid name,
            duplicate field or symbol, union inside a union, duplicate union branch, fixed
            without a non-negative size, enum default not a symbol, ...).
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if len(data) > max_bytes:
        raise SchemaError(f"schema of {len(data)} bytes, larger than the limit of {max_bytes}")
    try:
        obj = json.loads(data)
    except RecursionError:
        raise SchemaError(f"schema JSON nested too deeply (limit {max_depth})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise SchemaError(f"not JSON: {exc}") from None
    parser = _Parser(max_depth)
    root = parser.parse(obj, "", "", 0)
    return Schema(root, MappingProxyType(dict(parser.names)))


class _Parser:
    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.names: dict[str, NamedType] = {}
        self.defining: set[str] = set()

    def parse(self, obj: object, namespace: str, path: str, depth: int) -> AvroType:
        if depth > self.max_depth:
            raise SchemaError(f"types nested deeper than the limit of {self.max_depth}", path)
        if isinstance(obj, str):
            return self._reference(obj, namespace, path)
        if isinstance(obj, list):
            return self._union(obj, namespace, path, depth)
        if not isinstance(obj, dict):
            raise SchemaError(f"a schema is a string, an object or an array, not {obj!r:.60}", path)
        kind = obj.get("type")
        if isinstance(kind, (dict, list)):
            # {"type": {...}} or {"type": [...]}: the nested schema, attributes ignored
            return self.parse(kind, namespace, f"{path}/type", depth + 1)
        if not isinstance(kind, str):
            raise SchemaError("an object schema needs a string 'type'", path)
        if kind in PRIMITIVE_TYPES:
            return _annotate_primitive(kind, obj)
        if kind in ("record", "error"):
            return self._record(obj, namespace, path, depth)
        if kind == "enum":
            return self._enum(obj, namespace, path)
        if kind == "fixed":
            return self._fixed(obj, namespace, path)
        if kind == "array":
            if "items" not in obj:
                raise SchemaError("an array needs 'items'", path)
            return Array(self.parse(obj["items"], namespace, f"{path}/items", depth + 1))
        if kind == "map":
            if "values" not in obj:
                raise SchemaError("a map needs 'values'", path)
            return Map(self.parse(obj["values"], namespace, f"{path}/values", depth + 1))
        return self._reference(kind, namespace, path)

    def _reference(self, name: str, namespace: str, path: str) -> AvroType:
        if name in PRIMITIVE_TYPES:
            return Primitive(name)
        full = _full_name(name, namespace)
        if full not in self.names and full not in self.defining and "." not in name:
            full = name  # the null namespace, as Java's Schema.Names and fastavro look up
        if full in self.names or full in self.defining:
            return Ref(full)
        raise SchemaError(f"undefined type name {name!r}", path)

    def _union(self, obj: list[object], namespace: str, path: str, depth: int) -> UnionType:
        branches: list[AvroType] = []
        seen: set[str] = set()
        for i, item in enumerate(obj):
            where = f"{path}/{i}"
            if isinstance(item, list):
                raise SchemaError("a union may not immediately contain a union", where)
            branch = self.parse(item, namespace, where, depth + 1)
            if isinstance(branch, UnionType):  # {"type": [...]} inside a union
                raise SchemaError("a union may not immediately contain a union", where)
            key = type_name(branch)
            if key in seen:
                raise SchemaError(f"a union may not contain {key!r} twice", where)
            seen.add(key)
            branches.append(branch)
        return UnionType(tuple(branches))

    def _define(self, obj: Mapping[str, object], namespace: str, path: str) -> tuple[str, str]:
        """The full name and namespace of a named type being defined; checks the name."""
        name = obj.get("name")
        if not isinstance(name, str):
            raise SchemaError("a named type needs a string 'name'", path)
        own_namespace = obj.get("namespace")
        if own_namespace is not None and not isinstance(own_namespace, str):
            raise SchemaError("'namespace' must be a string", path)
        space = namespace if own_namespace is None else own_namespace
        full = _full_name(name, space)
        _check_full_name(full, path)
        if full.rsplit(".", 1)[-1] in PRIMITIVE_TYPES:
            raise SchemaError(f"a named type may not be called {full!r}", path)
        if full in self.names or full in self.defining:
            raise SchemaError(f"type {full!r} defined twice", path)
        return full, full.rpartition(".")[0]

    def _aliases(self, obj: Mapping[str, object], namespace: str, path: str) -> tuple[str, ...]:
        aliases = obj.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise SchemaError("'aliases' must be an array of strings", path)
        out = tuple(_full_name(a, namespace) for a in aliases)
        for alias in out:
            _check_full_name(alias, path)
        return out

    def _record(self, obj: Mapping[str, object], namespace: str, path: str, depth: int) -> Record:
        full, space = self._define(obj, namespace, path)
        aliases = self._aliases(obj, space, path)
        raw_fields = obj.get("fields")
        if not isinstance(raw_fields, list):
            raise SchemaError("a record needs a 'fields' array", path)
        self.defining.add(full)
        fields: list[Field] = []
        seen: set[str] = set()
        for i, raw in enumerate(raw_fields):
            where = f"{path}/fields/{i}"
            if not isinstance(raw, dict):
                raise SchemaError("a field is an object", where)
            name = raw.get("name")
            if not isinstance(name, str) or not _NAME.match(name):
                raise SchemaError(f"invalid field name {name!r}", where)
            if name in seen:
                raise SchemaError(f"field {name!r} declared twice", where)
            seen.add(name)
            if "type" not in raw:
                raise SchemaError(f"field {name!r} needs a 'type'", where)
            field_type = self.parse(raw["type"], space, f"{where}/type", depth + 1)
            field_aliases = raw.get("aliases", [])
            if not isinstance(field_aliases, list) or not all(
                isinstance(a, str) and _NAME.match(a) for a in field_aliases
            ):
                raise SchemaError("a field's 'aliases' must be an array of names", where)
            default = raw.get("default", NO_DEFAULT)
            fields.append(Field(name, field_type, default, tuple(field_aliases)))
        self.defining.discard(full)
        record = Record(full, tuple(fields), aliases)
        self.names[full] = record
        return record

    def _enum(self, obj: Mapping[str, object], namespace: str, path: str) -> Enum:
        full, space = self._define(obj, namespace, path)
        aliases = self._aliases(obj, space, path)
        symbols = obj.get("symbols")
        if not isinstance(symbols, list):
            raise SchemaError("an enum needs a 'symbols' array", path)
        for symbol in symbols:
            if not isinstance(symbol, str) or not _NAME.match(symbol):
                raise SchemaError(f"invalid enum symbol {symbol!r}", path)
        if len(set(symbols)) != len(symbols):
            raise SchemaError("an enum's symbols must be unique", path)
        default = obj.get("default")
        if default is not None and (not isinstance(default, str) or default not in symbols):
            raise SchemaError(f"enum default {default!r} is not one of its symbols", path)
        enum = Enum(full, tuple(symbols), default, aliases)
        self.names[full] = enum
        return enum

    def _fixed(self, obj: Mapping[str, object], namespace: str, path: str) -> Fixed:
        full, space = self._define(obj, namespace, path)
        aliases = self._aliases(obj, space, path)
        size = obj.get("size")
        if not _is_int(size) or size < 0:
            raise SchemaError("a fixed needs a non-negative integer 'size'", path)
        logical, precision, scale = _logical(obj, "fixed", size)
        fixed = Fixed(full, size, aliases, logical, precision, scale)
        self.names[full] = fixed
        return fixed


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _full_name(name: str, namespace: str) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _check_full_name(full: str, path: str) -> None:
    for part in full.split("."):
        if not _NAME.match(part):
            raise SchemaError(f"invalid name {full!r}", path)


def _annotate_primitive(kind: str, obj: Mapping[str, object]) -> Primitive:
    logical, precision, scale = _logical(obj, kind, None)
    return Primitive(kind, logical, precision, scale)


def _logical(
    obj: Mapping[str, object], base: str, fixed_size: int | None
) -> tuple[str | None, int | None, int | None]:
    """The valid logical type of ``obj`` (on ``base``), or Nones: unknown and invalid logical
    types are ignored ("Logical Types")."""
    logical = obj.get("logicalType")
    if not isinstance(logical, str) or base not in _LOGICAL_BASES.get(logical, ()):
        return None, None, None
    if logical == "uuid" and fixed_size is not None and fixed_size != 16:
        return None, None, None
    if logical != "decimal":
        return logical, None, None
    precision = obj.get("precision")
    scale = obj.get("scale", 0)
    if not _is_int(precision) or not _is_int(scale):
        return None, None, None
    if precision <= 0 or scale < 0 or scale > precision:
        return None, None, None
    if fixed_size is not None and precision > max_decimal_digits(fixed_size):
        return None, None, None
    return logical, precision, scale


def max_decimal_digits(size: int) -> int:
    """The most decimal digits a ``size``-byte two's-complement integer always holds:
    ``floor(log10(2 ** (8 * size - 1) - 1))`` ("Logical Types: Decimal").

    Exact for sizes up to 1,024 bytes; beyond, the floating-point estimate (a hostile size
    must not cost a huge integer).
    """
    if size <= 0:
        return 0
    if size <= 1024:
        return len(str(2 ** (8 * size - 1) - 1)) - 1
    return math.floor((8 * size - 1) * math.log10(2))
