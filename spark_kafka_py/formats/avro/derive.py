"""An Avro schema derived from an Arrow (Spark) type, as spark-avro derives it.

The sink's ``auto.register.schemas`` registers the schema of the column it writes; this module
gives the schema spark-avro's ``SchemaConverters.toAvroType`` (apache/spark,
``connector/avro``, Spark 4.x; what ``to_avro`` and the Avro file source write) gives for the
same Spark type, so the subject holds the same schema whichever writes first. Each Arrow type
is read as the Spark type PySpark converts it to (``pyspark.sql.pandas.types.from_arrow_type``):

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
    result = _derive(arrow, bool(nullable), record_name, namespace, None)
    try:
        parse_schema(json.dumps(result))
    except SchemaError as exc:
        raise IncompatibleSchemaError(
            f"the Avro schema derived from {arrow} is not valid: {exc.reason}", exc.path
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


def _derive(
    t: pa.DataType, nullable: bool, record_name: str, namespace: str, enclosing: str | None
) -> Json:
    schema: Json
    if pa.types.is_null(t):
        return "null"  # never a union: spark-avro leaves NullType as it is
    if pa.types.is_boolean(t):
        schema = "boolean"
    elif pa.types.is_signed_integer(t):
        schema = "long" if t.bit_width == 64 else "int"
    elif pa.types.is_float32(t):
        schema = "float"
    elif pa.types.is_float64(t):
        schema = "double"
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        schema = "string"
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        schema = "bytes"
    elif pa.types.is_date32(t):
        schema = {"type": "int", "logicalType": "date"}
    elif pa.types.is_timestamp(t):
        logical = "timestamp-micros" if t.tz is not None else "local-timestamp-micros"
        schema = {"type": "long", "logicalType": logical}
    elif pa.types.is_duration(t):
        schema = {"type": "long", CATALYST_TYPE_PROP: "interval day to second"}
    elif pa.types.is_decimal128(t):
        full = f"{record_name}.fixed" if not namespace else f"{namespace}.{record_name}.fixed"
        name, space = _split(full, "")
        fixed = _named("fixed", name, space, enclosing)
        fixed["size"] = min_bytes_for_precision(t.precision)
        fixed.update(logicalType="decimal", precision=t.precision, scale=t.scale)
        schema = fixed
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        item = t.value_field
        items = _derive(item.type, item.nullable, record_name, namespace, enclosing)
        schema = {"type": "array", "items": items}
    elif pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise IncompatibleSchemaError(
                f"a map with {t.key_type} keys: Avro maps have string keys (as spark-avro)"
            )
        value = t.item_field
        values = _derive(value.type, value.nullable, record_name, namespace, enclosing)
        schema = {"type": "map", "values": values}
    elif pa.types.is_struct(t):
        child_namespace = f"{namespace}.{record_name}" if namespace else record_name
        name, space = _split(record_name, namespace)
        record = _named("record", name, space, enclosing)
        record["fields"] = [
            {
                "name": f.name,
                "type": _derive(f.type, f.nullable, f.name, child_namespace, space),
            }
            for f in (t.field(i) for i in range(t.num_fields))
        ]
        schema = record
    else:
        raise IncompatibleSchemaError(f"unexpected type {t}: spark-avro writes no Avro type for it")
    return [schema, "null"] if nullable else schema
