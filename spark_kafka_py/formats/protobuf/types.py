"""Protobuf messages mapped to Spark and Arrow types, as spark-protobuf maps them.

The mapping is spark-protobuf's ``SchemaConverters.toSqlType`` (apache/spark,
``connector/protobuf``, Spark 4.x) with the options of its ``ProtobufOptions``; each Spark type is
carried as the Arrow type PySpark converts it to:

===============================================  ======================  ======================
Protobuf (field type)                            Spark                   Arrow
===============================================  ======================  ======================
int32, sint32, sfixed32, fixed32                 integer                 int32
uint32                                           integer (long with      int32 (int64)
                                                 ``upcast.unsigned.ints``)
int64, sint64, sfixed64, fixed64                 long                    int64
uint64                                           long (decimal(20,0)     int64 (decimal128(20,0))
                                                 with the upcast)
float / double / bool                            float / double / bool   float32/float64/bool
string / bytes                                   string / binary         string / binary
enum                                             string (the value's     string (int32)
                                                 name; integer with
                                                 ``enums.as.ints``)
message named ``Timestamp`` with fields          timestamp               timestamp[us, tz=UTC]
``seconds, nanos`` (any package)
message named ``Duration``, same fields          interval day to second  duration[us]
``google.protobuf.Any``                          struct<type_url:        struct
                                                 string, value: binary>
                                                 (string, the JSON text  (string)
                                                 with ``convert.any.
                                                 fields.to.json``)
``google.protobuf.*Value`` wrappers              struct<value: T>; T     struct / T's type
                                                 with ``unwrap.primitive
                                                 .wrapper.types``
map<K, V>                                        map<K, V>, values       map, values non-null
                                                 not null
repeated T                                       array<T>, elements      list, elements non-null
                                                 not null
other messages                                   struct (declaration     struct
                                                 order of the fields)
a recursive message                              refused; with           :class:`~spark_kafka_py.
                                                 ``recursive.fields.     formats.errors.Protobuf
                                                 max.depth`` n (1..10)   SchemaError` / truncated
                                                 kept n levels deep
a message left with no field                     dropped (a struct       (dropped)
                                                 <__dummy_field_in_
                                                 empty_struct: string>
                                                 with ``retain.empty.
                                                 message.types``)
===============================================  ======================  ======================

Nullability: a map or repeated field is nullable; any other field is nullable unless
``required`` (proto2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import pyarrow as pa
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor  # type: ignore[import-untyped]

from spark_kafka_py.formats.errors import ProtobufSchemaError

#: spark-protobuf's parse modes (``mode``): a malformed message fails the query, or is null.
FAILFAST: Final = "FAILFAST"
PERMISSIVE: Final = "PERMISSIVE"
#: The name of the field spark-protobuf puts in an otherwise empty struct.
DUMMY_FIELD: Final = "__dummy_field_in_empty_struct"

_WRAPPERS: Final = {
    "google.protobuf.BoolValue": "bool",
    "google.protobuf.Int32Value": "int32",
    "google.protobuf.UInt32Value": "uint32",
    "google.protobuf.Int64Value": "int64",
    "google.protobuf.UInt64Value": "uint64",
    "google.protobuf.StringValue": "string",
    "google.protobuf.BytesValue": "bytes",
    "google.protobuf.FloatValue": "float",
    "google.protobuf.DoubleValue": "double",
}


@dataclass(frozen=True)
class ProtobufOptions:
    """spark-protobuf's ``from_protobuf`` options (``ProtobufOptions.scala``), by their names:

    Attributes:
        mode: ``mode``: ``FAILFAST`` (default) or ``PERMISSIVE``.
        recursive_fields_max_depth: ``recursive.fields.max.depth``; -1 (default) refuses
            recursion; 1..10 keeps a recursive field that many levels; other values refuse.
        emit_default_values: ``emit.default.values``: a field without presence (proto3
            implicit) absent from the payload reads as its type's zero, not null.
        enums_as_ints: ``enums.as.ints``: enums as their numbers (integer).
        upcast_unsigned_ints: ``upcast.unsigned.ints``: uint32 as long, uint64 as
            decimal(20,0).
        unwrap_primitive_wrapper_types: ``unwrap.primitive.wrapper.types``.
        retain_empty_message_types: ``retain.empty.message.types``.
        convert_any_fields_to_json: ``convert.any.fields.to.json``: a ``google.protobuf.Any``
            field as ``string``, its value's JSON text (protobuf-java's ``JsonFormat``, see
            :mod:`~spark_kafka_py.formats.protobuf.any_json`), not as
            ``struct<type_url, value>``.
    """

    mode: str = FAILFAST
    recursive_fields_max_depth: int = -1
    emit_default_values: bool = False
    enums_as_ints: bool = False
    upcast_unsigned_ints: bool = False
    unwrap_primitive_wrapper_types: bool = False
    retain_empty_message_types: bool = False
    convert_any_fields_to_json: bool = False

    @classmethod
    def from_map(cls, options: Mapping[str, str]) -> ProtobufOptions:
        """Options from their spark-protobuf names (case-insensitive keys, string values).

        Raises:
            ProtobufSchemaError: an unknown mode, a non-integer depth, a non-boolean flag.
        """
        lower = {k.lower(): v for k, v in options.items()}

        def flag(name: str) -> bool:
            value = lower.get(name, "false").strip().lower()
            if value not in ("true", "false"):
                raise ProtobufSchemaError(f"{value!r} is not true or false", name)
            return value == "true"

        mode = lower.get("mode", FAILFAST).upper()
        if mode not in (FAILFAST, PERMISSIVE):
            raise ProtobufSchemaError(f"mode {mode!r}: FAILFAST or PERMISSIVE", "mode")
        try:
            depth = int(lower.get("recursive.fields.max.depth", "-1"))
        except ValueError as e:
            raise ProtobufSchemaError("not an integer", "recursive.fields.max.depth") from e
        return cls(
            mode=mode,
            recursive_fields_max_depth=depth,
            emit_default_values=flag("emit.default.values"),
            enums_as_ints=flag("enums.as.ints"),
            upcast_unsigned_ints=flag("upcast.unsigned.ints"),
            unwrap_primitive_wrapper_types=flag("unwrap.primitive.wrapper.types"),
            retain_empty_message_types=flag("retain.empty.message.types"),
            convert_any_fields_to_json=flag("convert.any.fields.to.json"),
        )


@dataclass(frozen=True)
class Node:
    """One mapped type and how to read it.

    Attributes:
        kind: ``int32`` ``int64`` ``uint32`` (signed view) ``uint32_long`` ``uint64`` (signed
            view) ``uint64_decimal`` ``float`` ``double`` ``bool`` ``string`` ``bytes``
            ``enum`` ``enum_int`` ``timestamp`` ``duration`` ``wrapper`` (unwrapped)
            ``message`` ``map`` ``any_json`` (an ``Any`` as its JSON text).
        arrow: the Arrow type.
        spark: the Spark type as ``StructType.jsonValue()``-style JSON.
        fields: for ``message``: the kept fields; for ``map``: key and value; for
            ``wrapper``: the inner value.
        enum: for ``enum``: the enum descriptor (names of unknown numbers).
    """

    kind: str
    arrow: pa.DataType
    spark: Any
    fields: tuple[FieldPlan, ...] = ()
    enum: EnumDescriptor | None = None


@dataclass(frozen=True)
class FieldPlan:
    """One kept field of a message: its name, shape and presence.

    Attributes:
        name: the field's name (the Spark column name).
        repeated: a repeated (or map) field.
        is_map: a map field.
        presence: the field tracks presence (``HasField``); otherwise (proto3 implicit) an
            absent field reads as its zero.
        default: proto2's declared default (``[default = ...]``), else None.
        nullable: the Spark field's nullability.
        node: the value's type (a repeated field's element; a map field's map).
        dummy: spark-protobuf's placeholder field of a retained empty message (always null).
    """

    name: str
    repeated: bool
    is_map: bool
    presence: bool
    default: Any
    nullable: bool
    node: Node
    dummy: bool = False


def _leaf(kind: str, arrow: pa.DataType, spark: str, enum: EnumDescriptor | None = None) -> Node:
    return Node(kind, arrow, spark, enum=enum)


_SCALARS: Final = {
    FieldDescriptor.TYPE_INT32: ("int32", pa.int32(), "integer"),
    FieldDescriptor.TYPE_SINT32: ("int32", pa.int32(), "integer"),
    FieldDescriptor.TYPE_SFIXED32: ("int32", pa.int32(), "integer"),
    FieldDescriptor.TYPE_FIXED32: ("uint32", pa.int32(), "integer"),
    FieldDescriptor.TYPE_UINT32: ("uint32", pa.int32(), "integer"),
    FieldDescriptor.TYPE_INT64: ("int64", pa.int64(), "long"),
    FieldDescriptor.TYPE_SINT64: ("int64", pa.int64(), "long"),
    FieldDescriptor.TYPE_SFIXED64: ("int64", pa.int64(), "long"),
    FieldDescriptor.TYPE_FIXED64: ("uint64", pa.int64(), "long"),
    FieldDescriptor.TYPE_UINT64: ("uint64", pa.int64(), "long"),
    FieldDescriptor.TYPE_FLOAT: ("float", pa.float32(), "float"),
    FieldDescriptor.TYPE_DOUBLE: ("double", pa.float64(), "double"),
    FieldDescriptor.TYPE_BOOL: ("bool", pa.bool_(), "boolean"),
    FieldDescriptor.TYPE_STRING: ("string", pa.string(), "string"),
    FieldDescriptor.TYPE_BYTES: ("bytes", pa.binary(), "binary"),
}

_DURATION_SPARK: Final = "interval day to second"
_UINT64_DECIMAL: Final = "decimal(20,0)"


def _is_seconds_nanos(d: Descriptor, short_name: str) -> bool:
    f = d.fields
    return d.name == short_name and len(f) == 2 and f[0].name == "seconds" and f[1].name == "nanos"


def _field_types(f: FieldPlan) -> tuple[pa.DataType, Any]:
    """A field's Arrow and Spark types: the node's, in a non-null-element list if repeated."""
    if f.repeated and not f.is_map:
        return (
            pa.list_(pa.field("element", f.node.arrow, nullable=False)),
            {"type": "array", "elementType": f.node.spark, "containsNull": False},
        )
    return f.node.arrow, f.node.spark


def _struct(fields: list[FieldPlan]) -> Node:
    types = [_field_types(f) for f in fields]
    arrow = pa.struct(
        [pa.field(f.name, a, nullable=f.nullable) for f, (a, _) in zip(fields, types, strict=True)]
    )
    spark = {
        "type": "struct",
        "fields": [
            {"name": f.name, "type": sp, "nullable": f.nullable, "metadata": {}}
            for f, (_, sp) in zip(fields, types, strict=True)
        ],
    }
    return Node("message", arrow, spark, tuple(fields))


def _dummy_struct() -> Node:
    node = _leaf("string", pa.string(), "string")
    return _struct([FieldPlan(DUMMY_FIELD, False, False, True, None, True, node, dummy=True)])


class _Mapper:
    def __init__(self, options: ProtobufOptions) -> None:
        self.o = options

    def message(self, d: Descriptor, seen: dict[str, int]) -> list[FieldPlan]:
        out: list[FieldPlan] = []
        for fd in d.fields:
            plan = self.field(fd, seen)
            if plan is not None:
                out.append(plan)
        return out

    def field(self, fd: FieldDescriptor, seen: dict[str, int]) -> FieldPlan | None:
        node = self.type_of(fd, seen)
        if node is None:
            return None
        is_map = node.kind == "map"
        repeated = fd.is_repeated
        nullable = True if (is_map or repeated) else not fd.is_required
        default = fd.default_value if _has_declared_default(fd) else None
        return FieldPlan(fd.name, repeated, is_map, bool(fd.has_presence), default, nullable, node)

    def type_of(self, fd: FieldDescriptor, seen: dict[str, int]) -> Node | None:
        o = self.o
        t = fd.type
        if t in _SCALARS:
            kind, arrow, spark = _SCALARS[t]
            if o.upcast_unsigned_ints and t == FieldDescriptor.TYPE_UINT32:
                kind, arrow, spark = "uint32_long", pa.int64(), "long"
            elif o.upcast_unsigned_ints and t == FieldDescriptor.TYPE_UINT64:
                kind, arrow, spark = "uint64_decimal", pa.decimal128(20, 0), _UINT64_DECIMAL
            node = _leaf(kind, arrow, spark)
        elif t == FieldDescriptor.TYPE_ENUM:
            if o.enums_as_ints:
                node = _leaf("enum_int", pa.int32(), "integer")
            else:
                node = _leaf("enum", pa.string(), "string", fd.enum_type)
        elif t in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
            found = self.message_type(fd, seen)
            if found is None:
                return None
            node = found
        else:  # pragma: no cover - every wire type is listed above
            raise ProtobufSchemaError(f"field type {t} not supported", fd.full_name)
        return node

    def message_type(self, fd: FieldDescriptor, seen: dict[str, int]) -> Node | None:
        o = self.o
        m: Descriptor = fd.message_type
        if _is_seconds_nanos(m, "Duration"):
            return _leaf("duration", pa.duration("us"), _DURATION_SPARK)
        if _is_seconds_nanos(m, "Timestamp"):
            return _leaf("timestamp", pa.timestamp("us", tz="UTC"), "timestamp")
        if m.full_name == "google.protobuf.Any" and o.convert_any_fields_to_json:
            return _leaf("any_json", pa.string(), "string")
        if m.full_name in _WRAPPERS and o.unwrap_primitive_wrapper_types:
            inner = self.type_of(m.fields_by_name["value"], seen)
            assert inner is not None
            return Node("wrapper", inner.arrow, inner.spark, (_plain(inner),))
        if fd.is_repeated and m.GetOptions().map_entry:
            key = self.type_of(m.fields_by_name["key"], seen)
            value = self.type_of(m.fields_by_name["value"], seen)
            if key is None or value is None:
                return None
            arrow = pa.map_(key.arrow, pa.field("value", value.arrow, nullable=False))
            spark = {
                "type": "map",
                "keyType": key.spark,
                "valueType": value.spark,
                "valueContainsNull": False,
            }
            return Node("map", arrow, spark, (_plain(key), _plain(value)))
        name = m.full_name
        depth = seen.get(name, 0)
        limit = o.recursive_fields_max_depth
        if name in seen and (limit <= 0 or limit > 10):
            raise ProtobufSchemaError(
                f"a recursive field (message {name} inside itself); set "
                "recursive.fields.max.depth (1..10) to truncate it",
                fd.full_name,
            )
        if name in seen and depth >= limit:
            return None
        fields = self.message(m, {**seen, name: depth + 1})
        if not fields:
            return _dummy_struct() if o.retain_empty_message_types else None
        return _struct(fields)


def _plain(node: Node) -> FieldPlan:
    return FieldPlan("value", False, False, False, None, False, node)


def _has_declared_default(fd: FieldDescriptor) -> bool:
    return (
        bool(fd.has_default_value)
        and not fd.is_repeated
        and (fd.type not in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP))
    )


def map_message(descriptor: Descriptor, options: ProtobufOptions | None = None) -> Node:
    """The Spark/Arrow type of a message (``SchemaConverters.toSqlType``) and its read plan.

    Args:
        descriptor: the message.
        options: spark-protobuf's options (defaults: :class:`ProtobufOptions`).

    Returns:
        A ``message`` :class:`Node`: ``.arrow`` a ``pa.struct``, ``.spark`` the
        ``StructType`` JSON (an empty struct for a message with no field left, or the dummy
        field with ``retain.empty.message.types``).

    Raises:
        ProtobufSchemaError: a recursive field without a valid ``recursive.fields.max.depth``.
    """
    o = options or ProtobufOptions()
    fields = _Mapper(o).message(descriptor, {descriptor.full_name: 1})
    if not fields and o.retain_empty_message_types:
        return _dummy_struct()
    return _struct(fields)


def to_spark(descriptor: Descriptor, options: ProtobufOptions | None = None) -> dict[str, Any]:
    """The Spark ``StructType`` (as its JSON) ``from_protobuf`` gives the message
    (see :func:`map_message`)."""
    spark: dict[str, Any] = map_message(descriptor, options).spark
    return spark


def arrow_type(descriptor: Descriptor, options: ProtobufOptions | None = None) -> pa.DataType:
    """The Arrow struct type PySpark carries that Spark type as (see :func:`map_message`)."""
    return map_message(descriptor, options).arrow
