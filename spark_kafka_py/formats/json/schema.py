"""JSON Schema (a registry's ``JSON`` schema type) -> Spark type, as Spark JSON and Arrow.

What Confluent's and Apicurio's registries hold for ``JSON`` subjects is a JSON Schema
document, draft-07 (``definitions``) or 2020-12 (``$defs``). This module maps the subset that
has one Spark type (JSON Schema Validation, draft-07 section 6 / 2020-12 section 6; Core
2020-12 section 8.2.3 for ``$ref``, RFC 6901 for JSON pointers) onto the types Spark's
``from_json`` reads, so a document decoded by :mod:`.decode` with the mapped type gives what
``from_json(value, <that type>)`` gives.

=========================================  ======================  =======================
JSON Schema                                Spark (``jsonValue``)   Arrow (PySpark's)
=========================================  ======================  =======================
``"type": "object"`` with ``properties``   struct (properties in   struct
                                           declaration order)
``"type": "object"``, no ``properties``,   map<string, X>          map<string, X>
``additionalProperties``: schema X
``"type": "array"``, ``items``: schema X   array<X>                list<element: X>
``"type": "integer"``                      long                    int64
``"type": "number"``                       double                  float64
``["integer", "number"]`` (either order)   double                  float64
``"type": "boolean"``                      boolean                 bool
``"type": "string"``                       string                  string
``"string"``, ``"format": "date-time"``    timestamp               timestamp[us, tz=UTC]
``"string"``, ``"format": "date"``         date                    date32
``"string"``, other or no ``format``       string                  string
``enum`` of strings only (``type``         string                  string
optional), ``const`` of a string
``["T", "null"]`` / ``"null"`` branch of   T (nullable)            T's
``oneOf``/``anyOf``
``oneOf``/``anyOf``/``allOf`` whose        that type               its Arrow type
branches all map to the same type
``$ref`` ``#/definitions/N``,              N's type                N's
``#/$defs/N``, any ``#/...`` pointer
=========================================  ======================  =======================

Refused with :class:`JsonSchemaError` naming the JSON pointer of the offending subschema:
a subschema without ``type`` (and without ``$ref``, ``enum``, ``const``, ``oneOf``,
``anyOf``, ``allOf``), an ``object`` with neither ``properties`` nor an
``additionalProperties`` schema (a free-form object has no Spark type but string, and we do
not guess), an ``array`` without a single ``items`` schema (tuple ``items`` lists, 2020-12
``prefixItems``), ``oneOf``/``anyOf`` of different non-null types, ``"type": "null"`` alone,
``enum``/``const`` of non-strings, a boolean schema (``true``/``false``) where a type is
needed, a ``$ref`` outside the document (another file, a URL, an ``$id``-relative name), a
``$ref`` that does not resolve, and a recursive ``$ref`` (a definition that contains itself,
directly or not: Spark types are finite, as spark-avro refuses recursive records).

Nullability: every struct field, array element and map value is nullable, whatever
``required`` and ``"null"`` say. That is what ``from_json`` returns (``JsonToStructs``
makes its schema ``asNullable``), and a JSON document may hold ``null`` or omit a field
whatever its schema says; ``required`` is validation, which ``from_json`` does not do.

``$ref`` siblings (draft-07 ignores them, 2020-12 applies them) are ignored: the reference
alone gives the type. Annotations (``title``, ``description``, ``default``, ``examples``,
``$comment``, ``$schema``, ``$id``) and validation keywords (``minimum``, ``pattern``,
``maxItems``, ...) are ignored.

A registry's schema is hostile input: the document's size (:data:`DEFAULT_MAX_SCHEMA_BYTES`),
its nesting (:data:`DEFAULT_MAX_DEPTH`, counted in mapped subschemas, ``$ref`` targets
included) and the number of subschemas mapped (:data:`DEFAULT_MAX_NODES`; a ``$ref`` used
twice is mapped twice, so this bounds the expansion of shared definitions: a chain of
definitions each using the previous one twice would otherwise grow exponentially) are
bounded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

import pyarrow as pa

from spark_kafka_py.formats.avro.types import MappedType
from spark_kafka_py.formats.errors import JsonSchemaError

#: The largest schema document accepted, in bytes of UTF-8 JSON (1 MiB).
DEFAULT_MAX_SCHEMA_BYTES: Final = 1 << 20
#: The deepest nesting of mapped subschemas accepted (``$ref`` targets count as a level).
DEFAULT_MAX_DEPTH: Final = 64
#: The most subschemas mapped for one document (each use of a ``$ref`` counts its target).
DEFAULT_MAX_NODES: Final = 10_000

_ANNOTATION_ONLY: Final = frozenset(
    {"title", "description", "default", "examples", "$comment", "$schema", "$id", "deprecated"}
)


def parse_json_schema(
    schema: str | bytes | Mapping[str, object],
    *,
    max_bytes: int = DEFAULT_MAX_SCHEMA_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> MappedType:
    """The Spark type of a JSON Schema document's root (see the module's table).

    Args:
        schema: the document as JSON text (``str`` or UTF-8 ``bytes``, as a registry returns
            it) or already parsed (a ``dict``).
        max_bytes: the largest text accepted (bytes of UTF-8).
        max_depth: the deepest nesting of mapped subschemas.
        max_nodes: the most subschemas mapped (bounds ``$ref`` expansion).

    Returns:
        :class:`~spark_kafka_py.formats.avro.types.MappedType`: ``arrow`` (PySpark's Arrow
        type), ``spark_json`` (``DataType.jsonValue()``'s form), ``ddl``; ``nullable`` True.

    Raises:
        JsonSchemaError: not JSON, too large or deep, or unmappable (its ``pointer`` names the
            subschema).
    """
    if isinstance(schema, (str, bytes)):
        raw = schema.encode() if isinstance(schema, str) else schema
        if len(raw) > max_bytes:
            raise JsonSchemaError(f"schema of {len(raw)} bytes, more than {max_bytes}")
        try:
            document: object = json.loads(raw)
        except RecursionError:
            raise JsonSchemaError(f"schema nested deeper than {max_depth}") from None
        except ValueError as exc:
            raise JsonSchemaError(f"schema is not JSON: {exc}") from None
    else:
        document = schema
    return _Mapper(document, max_depth, max_nodes).map(document, "", (), 0)


def to_spark(schema: str | bytes | Mapping[str, object]) -> MappedType:
    """:func:`parse_json_schema` with the default bounds (the Avro twin's name)."""
    return parse_json_schema(schema)


class _Mapper:
    def __init__(self, document: object, max_depth: int, max_nodes: int) -> None:
        self.document = document
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.nodes = 0

    def map(self, node: object, pointer: str, refs: tuple[str, ...], depth: int) -> MappedType:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise JsonSchemaError(
                f"more than {self.max_nodes} subschemas to map ($ref expansion bounded)", pointer
            )
        if depth > self.max_depth:
            raise JsonSchemaError(f"schema nested deeper than {self.max_depth}", pointer)
        if isinstance(node, bool):
            raise JsonSchemaError(f"boolean schema {str(node).lower()} has no Spark type", pointer)
        if not isinstance(node, dict):
            raise JsonSchemaError(f"a schema must be an object, not {type(node).__name__}", pointer)
        if "$ref" in node:
            return self._ref(node["$ref"], pointer, refs, depth)
        for keyword in ("oneOf", "anyOf", "allOf"):
            if keyword in node and "type" not in node:
                return self._combination(node, keyword, pointer, refs, depth)
        if "enum" in node or "const" in node:
            return self._enum(node, pointer)
        if "type" not in node:
            raise JsonSchemaError("a schema without 'type' has no Spark type", pointer)
        types = node["type"]
        if isinstance(types, str):
            types = [types]
        if isinstance(types, list) and types and all(isinstance(t, str) for t in types):
            names = [t for t in types if t != "null"]
        else:
            raise JsonSchemaError(f"'type' must be a name or a list of names: {types!r}", pointer)
        if not names:
            raise JsonSchemaError("'type' null alone has no Spark type", pointer)
        if len(names) == 1:
            return self._typed(names[0], node, pointer, refs, depth)
        if sorted(set(names)) == ["integer", "number"]:
            return _leaf(pa.float64(), "double", "DOUBLE")
        raise JsonSchemaError(
            f"'type' {types!r} names several non-null types, which have no one Spark type",
            pointer,
        )

    def _typed(
        self, name: str, node: dict[str, object], pointer: str, refs: tuple[str, ...], depth: int
    ) -> MappedType:
        if name == "object":
            return self._object(node, pointer, refs, depth)
        if name == "array":
            items = node.get("items")
            if "prefixItems" in node or isinstance(items, list):
                raise JsonSchemaError(
                    "tuple arrays (prefixItems, a list of items) have no Spark type", pointer
                )
            if items is None:
                raise JsonSchemaError("an array without 'items' has no element type", pointer)
            item = self.map(items, f"{pointer}/items", refs, depth + 1)
            return MappedType(
                pa.list_(pa.field("element", item.arrow, nullable=True)),
                True,
                {"type": "array", "elementType": item.spark_json, "containsNull": True},
                f"ARRAY<{item.ddl}>",
            )
        if name == "integer":
            return _leaf(pa.int64(), "long", "BIGINT")
        if name == "number":
            return _leaf(pa.float64(), "double", "DOUBLE")
        if name == "boolean":
            return _leaf(pa.bool_(), "boolean", "BOOLEAN")
        if name == "string":
            fmt = node.get("format")
            if fmt == "date-time":
                return _leaf(pa.timestamp("us", tz="UTC"), "timestamp", "TIMESTAMP")
            if fmt == "date":
                return _leaf(pa.date32(), "date", "DATE")
            return _leaf(pa.string(), "string", "STRING")
        raise JsonSchemaError(f"unknown type {name!r}", pointer)

    def _object(
        self, node: dict[str, object], pointer: str, refs: tuple[str, ...], depth: int
    ) -> MappedType:
        properties = node.get("properties")
        if properties is not None:
            if not isinstance(properties, dict):
                raise JsonSchemaError("'properties' must be an object", pointer)
            fields = [
                (name, self.map(sub, f"{pointer}/properties/{_escape(name)}", refs, depth + 1))
                for name, sub in properties.items()
            ]
            arrow = pa.struct([pa.field(n, m.arrow, nullable=True) for n, m in fields])
            spark_json = {
                "type": "struct",
                "fields": [
                    {"name": n, "type": m.spark_json, "nullable": True, "metadata": {}}
                    for n, m in fields
                ],
            }
            ddl = ", ".join(f"{_quote(n)}: {m.ddl}" for n, m in fields)
            return MappedType(arrow, True, spark_json, f"STRUCT<{ddl}>")
        additional = node.get("additionalProperties")
        if isinstance(additional, dict):
            value = self.map(additional, f"{pointer}/additionalProperties", refs, depth + 1)
            return MappedType(
                pa.map_(pa.string(), pa.field("value", value.arrow, nullable=True)),
                True,
                {
                    "type": "map",
                    "keyType": "string",
                    "valueType": value.spark_json,
                    "valueContainsNull": True,
                },
                f"MAP<STRING, {value.ddl}>",
            )
        raise JsonSchemaError(
            "an object without 'properties' or an 'additionalProperties' schema has no Spark type",
            pointer,
        )

    def _enum(self, node: dict[str, object], pointer: str) -> MappedType:
        values = node["enum"] if "enum" in node else [node["const"]]
        if not isinstance(values, list) or not values:
            raise JsonSchemaError("'enum' must be a non-empty list", pointer)
        non_null = [v for v in values if v is not None]
        if not non_null or not all(isinstance(v, str) for v in non_null):
            raise JsonSchemaError(
                "an enum or const of non-strings has no Spark type (strings only)", pointer
            )
        declared = node.get("type")
        if declared is not None and declared not in (
            "string",
            ["string", "null"],
            ["null", "string"],
        ):
            raise JsonSchemaError(f"an enum of strings with 'type' {declared!r}", pointer)
        return _leaf(pa.string(), "string", "STRING")

    def _combination(
        self, node: dict[str, object], keyword: str, pointer: str, refs: tuple[str, ...], depth: int
    ) -> MappedType:
        branches = node[keyword]
        if not isinstance(branches, list) or not branches:
            raise JsonSchemaError(f"'{keyword}' must be a non-empty list", pointer)
        mapped: list[MappedType] = []
        for i, branch in enumerate(branches):
            if isinstance(branch, dict) and branch.get("type") == "null" and len(branch) == 1:
                continue  # {"type": "null"}: nullability, which every type has
            mapped.append(self.map(branch, f"{pointer}/{keyword}/{i}", refs, depth + 1))
        if not mapped:
            raise JsonSchemaError(f"'{keyword}' of null alone has no Spark type", pointer)
        first = mapped[0]
        for other in mapped[1:]:
            if other.spark_json != first.spark_json:
                raise JsonSchemaError(
                    f"'{keyword}' of different types ({first.ddl}, {other.ddl}) has no one "
                    "Spark type",
                    f"{pointer}/{keyword}",
                )
        return first

    def _ref(self, ref: object, pointer: str, refs: tuple[str, ...], depth: int) -> MappedType:
        if not isinstance(ref, str):
            raise JsonSchemaError("'$ref' must be a string", pointer)
        if not ref.startswith("#"):
            raise JsonSchemaError(
                f"$ref {ref!r} points outside the document (only '#/...' is resolved)", pointer
            )
        if ref in refs or ref == "#":
            raise JsonSchemaError(
                f"recursive $ref {ref!r}: a recursive schema has no Spark type", pointer
            )
        if not ref.startswith("#/"):
            raise JsonSchemaError(
                f"$ref {ref!r} is not a JSON pointer (anchors are not resolved)", pointer
            )
        target = self.document
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise JsonSchemaError(f"$ref {ref!r} does not resolve", pointer)
        return self.map(target, ref[1:], (*refs, ref), depth + 1)


def _leaf(arrow: pa.DataType, json_name: str, ddl: str) -> MappedType:
    return MappedType(arrow, True, json_name, ddl)


def _escape(name: str) -> str:
    """A property name as a JSON pointer token (RFC 6901 section 3)."""
    return name.replace("~", "~0").replace("/", "~1")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
