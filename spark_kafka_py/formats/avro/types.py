"""Avro types mapped to Arrow and Spark types, as spark-avro maps them.

The mapping is spark-avro's ``SchemaConverters.toSqlType`` (apache/spark,
``connector/avro``, Spark 4.x), with its default options (``recursiveFieldMaxDepth`` -1,
``enableStableIdentifiersForUnionType`` false unless asked), so a DataFrame read through
``format("pykafka")`` has the types ``from_avro`` gives. Each Spark type is carried as the
Arrow type PySpark converts to it (``pyspark.sql.pandas.types.to_arrow_type``):

=====================================  ====================  ================================
Avro (Avro specification section)      Spark                 Arrow
=====================================  ====================  ================================
null                                   null (nullable)       null
boolean                                boolean               bool
int                                    integer               int32
int, ``date``                          date                  date32 (days since 1970-01-01)
int, ``time-millis``                   integer               int32 (spark-avro has no time)
long                                   long                  int64
long, ``time-micros``                  long                  int64 (spark-avro has no time)
long, ``timestamp-millis``/``-micros`` timestamp             timestamp[us, tz=UTC]
long, ``local-timestamp-millis``/      timestamp_ntz         timestamp[us]
``-micros``
long, ``timestamp-nanos``,             long                  int64 (not mapped by spark-avro)
``local-timestamp-nanos``
float                                  float                 float32
double                                 double                float64
bytes                                  binary                binary
bytes or fixed, ``decimal(p, s)``      decimal(p, s)         decimal128(p, s); p > 38 refused
string (``uuid`` too)                  string                string
fixed (``uuid`` on fixed too)          binary                binary
enum                                   string                string (the symbol)
record                                 struct                struct (field nullability below)
array                                  array                 list (``containsNull`` below)
map                                    map<string, X>        map<string, X>
union [null, X] or [X, null]           X, nullable           X's type, nullable
union [X] (one branch)                 X                     X's type
union [int, long] (either order)       long                  int64 (int widened)
union [float, double]                  double                float64 (float widened)
union [null, A, B, ...]                as [A, B, ...],       (the rules above, on the
                                       nullable              branches but null)
any other union                        struct<member0: A,    struct of the branches, every
                                       member1: B, ...>      member nullable; the branch read
                                                             set, the others null
recursive record (itself inside)       refused               :class:`IncompatibleSchemaError`
=====================================  ====================  ================================

Nullability ("Complex Types" of the specification, Spark's ``StructField.nullable``,
``ArrayType.containsNull``, ``MapType.valueContainsNull``): a type is nullable exactly when
it is ``null`` or a union with a ``null`` branch; every other type is not, so a record field
of type ``int`` is ``NOT NULL``, an array of ``["null", "int"]`` contains nulls.

With ``stable_union_ids`` (spark-avro's ``enableStableIdentifiersForUnionType``), the
members of a struct-mapped union are named ``<prefix><type name>`` (the branch's short name:
``int``, ``array``, a record's name without namespace), the prefix
``stableIdentifierPrefixForUnionType`` (default ``member_``); two names equal ignoring case
are refused as spark-avro refuses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pyarrow as pa

from spark_kafka_py.formats.avro.schema import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    UnionType,
)
from spark_kafka_py.formats.errors import IncompatibleSchemaError

#: Spark's widest decimal (``DecimalType.MAX_PRECISION``).
MAX_DECIMAL_PRECISION: Final = 38
#: spark-avro's default ``stableIdentifierPrefixForUnionType``.
DEFAULT_UNION_PREFIX: Final = "member_"

_TIMESTAMP_UTC = frozenset({"timestamp-millis", "timestamp-micros"})
_TIMESTAMP_NTZ = frozenset({"local-timestamp-millis", "local-timestamp-micros"})


@dataclass(frozen=True)
class MappedType:
    """An Avro type's Spark type, as Arrow, Spark's JSON and Spark's DDL.

    Attributes:
        arrow: the Arrow type PySpark converts to the Spark type.
        nullable: whether values may be null.
        spark_json: Spark's JSON form of the type (what ``DataType.fromJson`` reads; exact,
            nullability of nested fields, elements and values included).
        ddl: Spark's SQL DDL for the type (``STRUCT<`a`: INT NOT NULL>``); nested
            ``containsNull``/``valueContainsNull`` are not expressible in DDL.
    """

    arrow: pa.DataType
    nullable: bool
    spark_json: object
    ddl: str


@dataclass(frozen=True)
class UnionShape:
    """How spark-avro maps a union; the decoder follows the same decision.

    Attributes:
        nullable: the union has a ``null`` branch.
        kind: ``"single"`` (one non-null branch), ``"long"`` (int and
            long), ``"double"`` (float and double), ``"struct"`` (members).
        branches: the non-null branches' indexes in the union, in order (the members'
            order for ``"struct"``).
    """

    nullable: bool
    kind: str
    branches: tuple[int, ...]


def union_shape(union: UnionType, schema: Schema) -> UnionShape:
    """spark-avro's decision for ``union`` (see the module's table)."""
    types = [schema.deref(b) for b in union.branches]
    nulls = [i for i, t in enumerate(types) if _is_null(t)]
    rest = tuple(i for i, t in enumerate(types) if not _is_null(t))
    nullable = bool(nulls)
    if not rest:
        # spark-avro: the null-less remainder is an empty union, mapped to an empty struct
        return UnionShape(nullable, "struct", ())
    if len(rest) == 1:
        return UnionShape(nullable, "single", rest)
    kinds = {_primitive_kind(types[i]) for i in rest}
    if len(rest) == 2 and kinds == {"int", "long"}:
        return UnionShape(nullable, "long", rest)
    if len(rest) == 2 and kinds == {"float", "double"}:
        return UnionShape(nullable, "double", rest)
    return UnionShape(nullable, "struct", rest)


def _is_null(avro_type: AvroType) -> bool:
    return isinstance(avro_type, Primitive) and avro_type.type == "null"


def _primitive_kind(avro_type: AvroType) -> str | None:
    return avro_type.type if isinstance(avro_type, Primitive) else None


def to_spark(
    schema: Schema,
    *,
    stable_union_ids: bool = False,
    union_prefix: str = DEFAULT_UNION_PREFIX,
) -> MappedType:
    """The Spark type (as Arrow, JSON and DDL) of a parsed schema's root type.

    Args:
        schema: a parsed schema.
        stable_union_ids: name union members after their types, not ``member0..n``.
        union_prefix: the prefix of such names.

    Returns:
        :class:`MappedType`.

    Raises:
        IncompatibleSchemaError: a recursive record, a decimal with more than 38 digits,
            or (``stable_union_ids``) two union members whose names differ only in case.
    """
    return _Mapper(schema, stable_union_ids, union_prefix).map(schema.root, ())


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of ``schema``'s root (:func:`to_spark` with the default options)."""
    return to_spark(schema).arrow


class _Mapper:
    def __init__(self, schema: Schema, stable: bool, prefix: str) -> None:
        self.schema = schema
        self.stable = stable
        self.prefix = prefix

    def map(self, avro_type: AvroType, records: tuple[str, ...]) -> MappedType:
        t = self.schema.deref(avro_type)
        if isinstance(t, Primitive):
            return _primitive(t)
        if isinstance(t, Fixed):
            if t.logical_type == "decimal":
                assert t.precision is not None and t.scale is not None
                return _decimal(t.precision, t.scale)
            return _leaf(pa.binary(), "binary", "BINARY")
        if isinstance(t, Enum):
            return _leaf(pa.string(), "string", "STRING")
        if isinstance(t, Record):
            if t.name in records:
                raise IncompatibleSchemaError(
                    f"found recursive reference in Avro schema: record {t.name!r} contains "
                    "itself, which can not be processed by Spark (as spark-avro refuses it)"
                )
            inner = (*records, t.name)
            fields = [(f.name, self.map(f.type, inner)) for f in t.fields]
            return _struct(fields)
        if isinstance(t, Array):
            item = self.map(t.items, records)
            return MappedType(
                pa.list_(pa.field("element", item.arrow, nullable=item.nullable)),
                False,
                {"type": "array", "elementType": item.spark_json, "containsNull": item.nullable},
                f"ARRAY<{item.ddl}>",
            )
        if isinstance(t, Map):
            value = self.map(t.values, records)
            return MappedType(
                pa.map_(pa.string(), pa.field("value", value.arrow, nullable=value.nullable)),
                False,
                {
                    "type": "map",
                    "keyType": "string",
                    "valueType": value.spark_json,
                    "valueContainsNull": value.nullable,
                },
                f"MAP<STRING, {value.ddl}>",
            )
        assert isinstance(t, UnionType), t
        return self._union(t, records)

    def _union(self, union: UnionType, records: tuple[str, ...]) -> MappedType:
        shape = union_shape(union, self.schema)
        if shape.kind == "single":
            mapped = self.map(union.branches[shape.branches[0]], records)
        elif shape.kind == "long":
            mapped = _leaf(pa.int64(), "long", "BIGINT")
        elif shape.kind == "double":
            mapped = _leaf(pa.float64(), "double", "DOUBLE")
        else:
            members: list[tuple[str, MappedType]] = []
            seen: set[str] = set()
            for n, i in enumerate(shape.branches):
                member = self.map(union.branches[i], records)
                name = self._member_name(n, union.branches[i])
                if name.lower() in seen:
                    raise IncompatibleSchemaError(
                        "cannot generate stable identifier for Avro union type due to name "
                        f"conflict of type name {name!r}"
                    )
                seen.add(name.lower())
                members.append((name, _nullable(member)))
            mapped = _struct(members)
        return _nullable(mapped) if shape.nullable else mapped

    def _member_name(self, n: int, branch: AvroType) -> str:
        if not self.stable:
            return f"member{n}"
        t = self.schema.deref(branch)
        if isinstance(t, Primitive):
            short = t.type
        elif isinstance(t, (Record, Enum, Fixed)):
            short = t.name.rpartition(".")[2]
        elif isinstance(t, Array):
            short = "array"
        else:
            short = "map"
        return f"{self.prefix}{short}"


def _leaf(arrow: pa.DataType, json_name: str, ddl: str, nullable: bool = False) -> MappedType:
    return MappedType(arrow, nullable, json_name, ddl)


def _nullable(mapped: MappedType) -> MappedType:
    return MappedType(mapped.arrow, True, mapped.spark_json, mapped.ddl)


def _decimal(precision: int, scale: int) -> MappedType:
    if precision > MAX_DECIMAL_PRECISION:
        raise IncompatibleSchemaError(
            f"decimal({precision}, {scale}) has more digits than Spark's {MAX_DECIMAL_PRECISION}"
        )
    name = f"decimal({precision},{scale})"
    return _leaf(pa.decimal128(precision, scale), name, name.upper())


def _primitive(t: Primitive) -> MappedType:
    kind, logical = t.type, t.logical_type
    if kind == "null":
        return _leaf(pa.null(), "void", "VOID", nullable=True)
    if kind == "boolean":
        return _leaf(pa.bool_(), "boolean", "BOOLEAN")
    if kind == "int":
        if logical == "date":
            return _leaf(pa.date32(), "date", "DATE")
        return _leaf(pa.int32(), "integer", "INT")
    if kind == "long":
        if logical in _TIMESTAMP_UTC:
            return _leaf(pa.timestamp("us", tz="UTC"), "timestamp", "TIMESTAMP")
        if logical in _TIMESTAMP_NTZ:
            return _leaf(pa.timestamp("us"), "timestamp_ntz", "TIMESTAMP_NTZ")
        return _leaf(pa.int64(), "long", "BIGINT")
    if kind == "float":
        return _leaf(pa.float32(), "float", "FLOAT")
    if kind == "double":
        return _leaf(pa.float64(), "double", "DOUBLE")
    if kind == "bytes":
        if logical == "decimal":
            assert t.precision is not None and t.scale is not None
            return _decimal(t.precision, t.scale)
        return _leaf(pa.binary(), "binary", "BINARY")
    assert kind == "string", kind
    return _leaf(pa.string(), "string", "STRING")


def _struct(fields: list[tuple[str, MappedType]]) -> MappedType:
    arrow = pa.struct([pa.field(name, m.arrow, nullable=m.nullable) for name, m in fields])
    spark_json = {
        "type": "struct",
        "fields": [
            {"name": name, "type": m.spark_json, "nullable": m.nullable, "metadata": {}}
            for name, m in fields
        ],
    }
    parts = [f"{_quote(name)}: {m.ddl}{'' if m.nullable else ' NOT NULL'}" for name, m in fields]
    return MappedType(arrow, False, spark_json, f"STRUCT<{', '.join(parts)}>")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
