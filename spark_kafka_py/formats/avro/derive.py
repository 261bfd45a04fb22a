"""An Avro schema derived from an Arrow (Spark) type, as spark-avro derives it.

The sink's ``auto.register.schemas`` registers the schema of the column it writes; this module
gives the schema spark-avro's ``SchemaConverters.toAvroType`` (apache/spark,
``connector/avro``, Spark 4.x; what ``to_avro`` and the Avro file source write) gives for the
same Spark type, so the subject holds the same schema whichever writes first. The type is
given as Arrow (:func:`derive_schema`; each Arrow type read as the Spark type PySpark converts
it to, ``pyspark.sql.pandas.types.from_arrow_type``, :func:`spark_json_of`) or as Spark's JSON
(:func:`derive_schema_from_spark`, what ``DataType.jsonValue()`` gives):

======================================  ========================  =============================
Arrow                                   Spark                     Avro
======================================  ========================  =============================
bool                                    boolean                   ``"boolean"``
int8, int16, int32                      byte, short, integer      ``"int"``
int64                                   long                      ``"long"``
float32, float64                        float, double             ``"float"``, ``"double"``
string, large_string                    string                    ``"string"``
binary, large_binary, fixed_size_binary binary                    ``"bytes"``
null                                    void                      ``"null"`` (never in a union)
date32                                  date                      int, ``date``
timestamp(_, tz)                        timestamp                 long, ``timestamp-micros``
timestamp(_) (no tz)                    timestamp_ntz             long,
                                                                  ``local-timestamp-micros``
duration                                interval day to second    long with
                                                                  ``spark.sql.catalyst.type``
(none)                                  interval year to month    int with
                                                                  ``spark.sql.catalyst.type``
decimal128(p, s)                        decimal(p, s)             fixed ``decimal(p, s)`` of
                                                                  the fewest bytes holding p
                                                                  digits (Spark's
                                                                  ``Decimal.minBytesForPrecision``)
list<X>, large_list<X>                  array<X>                  array
map<string, X>                          map<string, X>            map
struct                                  struct                    record, fields in order, no
                                                                  defaults
======================================  ========================  =============================

Names, as ``toAvroType(type, nullable, recordName, nameSpace)`` gives them: the top-level
record is ``topLevelRecord`` in the null namespace; a field's record (a struct field, or a
struct in an array or map of a field) is named after the field, in the namespace
``<enclosing namespace>.<enclosing record name>`` (``topLevelRecord`` for the top level's
fields); a decimal is a fixed named ``fixed`` in the namespace ``<namespace>.<field name>``
(an array's or map's items keep their field's names). A nullable type is the union
``[type, "null"]`` (type first; spark-avro's order, so a null default cannot be given). The
JSON is laid out as Avro Java's ``Schema.toString`` writes it: a named type's ``namespace``
only where it differs from the enclosing one.

The result is parsed back (:func:`.schema.parse_schema`) before it is returned, so a Spark
name Avro does not allow (``a-b``, ``1st``) or two types of one full name raise here.
"""

from __future__ import annotations

import json
import re
from typing import Final

import pyarrow as pa

from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.errors import IncompatibleSchemaError, SchemaError

#: spark-avro's default top-level record name (``toAvroType``'s ``recordName``).
DEFAULT_RECORD_NAME: Final = "topLevelRecord"
#: The property spark-avro records a Spark type in when Avro has no equivalent.
CATALYST_TYPE_PROP: Final = "spark.sql.catalyst.type"

#: JSON as :mod:`json` reads and writes it.
Json = object


def min_bytes_for_precision(precision: int) -> int:
    """The fewest bytes of a two's-complement integer holding ``precision`` decimal digits:
    the smallest ``n`` with ``2 ** (8 * n - 1) >= 10 ** precision`` (Spark's
    ``Decimal.minBytesForPrecision``; ``decimal(38, s)`` takes 16)."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def derive_schema(
    arrow: pa.DataType | pa.Field | pa.Schema,
    *,
    nullable: bool | None = None,
    record_name: str = DEFAULT_RECORD_NAME,
    namespace: str = "",
) -> Json:
    """The Avro schema (as a JSON value) of an Arrow type, as spark-avro's ``toAvroType``.

    Args:
        arrow: the type; a ``pa.Field`` gives its nullability, a ``pa.Schema`` is a struct.
        nullable: whether the top-level value may be null (a ``[type, "null"]`` union);
            None for the field's nullability (a ``pa.Field``) or not nullable.
        record_name: the top-level record's name (spark-avro's ``recordName``).
        namespace: its namespace (spark-avro's ``nameSpace``; ``""`` for the null one).

    Returns:
        The schema as a JSON value (a ``str``, ``dict`` or ``list``).

    Raises:
        IncompatibleSchemaError: a type spark-avro does not write (unsigned integers, times,
            maps with non-string keys, ...), a name Avro does not allow, or two named types of
            one full name.
    """
    if isinstance(arrow, pa.Schema):
        arrow = pa.struct(list(arrow))
    if isinstance(arrow, pa.Field):
        nullable = arrow.nullable if nullable is None else nullable
        arrow = arrow.type
    return derive_schema_from_spark(
        spark_json_of(arrow),
        nullable=bool(nullable),
        record_name=record_name,
        namespace=namespace,
    )


def derive_schema_from_spark(
    spark_type: Json,
    *,
    nullable: bool = False,
    record_name: str = DEFAULT_RECORD_NAME,
    namespace: str = "",
) -> Json:
    """The Avro schema (as a JSON value) of a Spark type given as Spark's JSON.

    Args:
        spark_type: the type as ``DataType.jsonValue()`` gives it (``"integer"``,
            ``"decimal(10,2)"``, ``{"type": "struct", "fields": [...]}``, ...), as loaded by
            :func:`json.loads`; Spark's interval types too (``"interval day to second"``,
            written as spark-avro writes them: long or int with ``spark.sql.catalyst.type``).
        nullable, record_name, namespace: as :func:`derive_schema`.

    Returns:
        The schema as a JSON value.

    Raises:
        IncompatibleSchemaError: as :func:`derive_schema`; also a malformed Spark type.
    """
    result = _derive(spark_type, nullable, record_name, namespace, None)
    try:
        parse_schema(json.dumps(result))
    except SchemaError as exc:
        raise IncompatibleSchemaError(
            f"the Avro schema derived is not valid: {exc.reason}", exc.path
        ) from None
    return result


def derive_schema_json(
    arrow: pa.DataType | pa.Field | pa.Schema,
    *,
    nullable: bool | None = None,
    record_name: str = DEFAULT_RECORD_NAME,
    namespace: str = "",
) -> str:
    """:func:`derive_schema` as compact JSON text (no spaces, as Avro Java writes it)."""
    schema = derive_schema(arrow, nullable=nullable, record_name=record_name, namespace=namespace)
    return json.dumps(schema, separators=(",", ":"))


def spark_json_of(arrow: pa.DataType) -> Json:
    """The Spark type (as Spark's JSON) PySpark converts an Arrow type to (the module's table).

    Raises:
        IncompatibleSchemaError: an Arrow type PySpark has no Spark type for here (unsigned
            integers, times, decimal256, ...).
    """
    simple = _SIMPLE.get(arrow)
    if simple is not None:
        return simple
    if pa.types.is_fixed_size_binary(arrow):
        return "binary"
    if pa.types.is_timestamp(arrow):
        return "timestamp" if arrow.tz is not None else "timestamp_ntz"
    if pa.types.is_duration(arrow):
        return "interval day to second"
    if pa.types.is_decimal128(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        item = arrow.value_field
        return {
            "type": "array",
            "elementType": spark_json_of(item.type),
            "containsNull": item.nullable,
        }
    if pa.types.is_map(arrow):
        value = arrow.item_field
        return {
            "type": "map",
            "keyType": spark_json_of(arrow.key_type),
            "valueType": spark_json_of(value.type),
            "valueContainsNull": value.nullable,
        }
    if pa.types.is_struct(arrow):
        fields = (arrow.field(i) for i in range(arrow.num_fields))
        return {
            "type": "struct",
            "fields": [
                {
                    "name": f.name,
                    "type": spark_json_of(f.type),
                    "nullable": f.nullable,
                    "metadata": {},
                }
                for f in fields
            ],
        }
    raise IncompatibleSchemaError(f"unexpected type {arrow}: spark-avro writes no Avro type for it")


_SIMPLE: Final[dict[pa.DataType, str]] = {
    pa.null(): "void",
    pa.bool_(): "boolean",
    pa.int8(): "byte",
    pa.int16(): "short",
    pa.int32(): "integer",
    pa.int64(): "long",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.string(): "string",
    pa.large_string(): "string",
    pa.binary(): "binary",
    pa.large_binary(): "binary",
    pa.date32(): "date",
}

#: Spark's simple types -> their Avro schema (``toAvroType``'s cases).
_AVRO_OF: Final[dict[str, Json]] = {
    "boolean": "boolean",
    "byte": "int",
    "short": "int",
    "integer": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "binary": "bytes",
    "date": {"type": "int", "logicalType": "date"},
    "timestamp": {"type": "long", "logicalType": "timestamp-micros"},
    "timestamp_ntz": {"type": "long", "logicalType": "local-timestamp-micros"},
}

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)\Z")
_YEAR_MONTH = re.compile(r"interval (year|month)( to (year|month))?\Z")
_DAY_TIME = re.compile(r"interval (day|hour|minute|second)( to (day|hour|minute|second))?\Z")


def _split(name: str, space: str) -> tuple[str, str | None]:
    """Avro Java's ``Schema.Name``: a dotted name carries its own namespace; ``""`` is the
    null namespace (None)."""
    if "." in name:
        space, _, name = name.rpartition(".")
    return name, space or None


def _named(kind: str, name: str, space: str | None, enclosing: str | None) -> dict[str, Json]:
    """The start of a named type's JSON: ``namespace`` only where it differs from the
    enclosing namespace (``""`` for the null namespace inside another)."""
    out: dict[str, Json] = {"type": kind, "name": name}
    if space != enclosing:
        out["namespace"] = space or ""
    return out


def _bad(spark_type: Json) -> IncompatibleSchemaError:
    return IncompatibleSchemaError(
        f"unexpected type {spark_type!r:.80}: spark-avro writes no Avro type for it"
    )


def _derive(
    t: Json, nullable: bool, record_name: str, namespace: str, enclosing: str | None
) -> Json:
    schema: Json
    if t in ("void", "null"):
        return "null"  # never a union: spark-avro leaves NullType as it is
    if isinstance(t, str):
        simple = _AVRO_OF.get(t)
        decimal = _DECIMAL.match(t)
        if simple is not None:
            schema = dict(simple) if isinstance(simple, dict) else simple
        elif t == "decimal" or decimal:
            precision, scale = (int(decimal[1]), int(decimal[2])) if decimal else (10, 0)
            if not 0 < precision <= 38 or not 0 <= scale <= precision:
                raise _bad(t)
            full = f"{record_name}.fixed" if not namespace else f"{namespace}.{record_name}.fixed"
            name, space = _split(full, "")
            fixed = _named("fixed", name, space, enclosing)
            fixed["size"] = min_bytes_for_precision(precision)
            fixed.update(logicalType="decimal", precision=precision, scale=scale)
            schema = fixed
        elif _YEAR_MONTH.match(t):
            schema = {"type": "int", CATALYST_TYPE_PROP: t}
        elif _DAY_TIME.match(t):
            schema = {"type": "long", CATALYST_TYPE_PROP: t}
        else:
            raise _bad(t)
    elif isinstance(t, dict) and t.get("type") == "array":
        items = _derive(
            t.get("elementType"), t.get("containsNull") is True, record_name, namespace, enclosing
        )
        schema = {"type": "array", "items": items}
    elif isinstance(t, dict) and t.get("type") == "map":
        if t.get("keyType") != "string":
            raise IncompatibleSchemaError(
                f"a map with {t.get('keyType')!r:.40} keys: Avro maps have string keys "
                "(as spark-avro)"
            )
        values = _derive(
            t.get("valueType"),
            t.get("valueContainsNull") is True,
            record_name,
            namespace,
            enclosing,
        )
        schema = {"type": "map", "values": values}
    elif isinstance(t, dict) and t.get("type") == "struct" and isinstance(t.get("fields"), list):
        child_namespace = f"{namespace}.{record_name}" if namespace else record_name
        name, space = _split(record_name, namespace)
        record = _named("record", name, space, enclosing)
        fields: list[Json] = []
        for f in t["fields"]:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                raise _bad(t)
            field_type = _derive(
                f.get("type"), f.get("nullable") is True, f["name"], child_namespace, space
            )
            fields.append({"name": f["name"], "type": field_type})
        record["fields"] = fields
        schema = record
    else:
        raise _bad(t)
    return [schema, "null"] if nullable else schema
