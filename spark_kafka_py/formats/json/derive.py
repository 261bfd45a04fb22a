"""A JSON Schema (draft-07) derived from a Spark type: what the sink registers for
``valueFormat=json`` with ``auto.register.schemas`` (the JSON twin of
:mod:`spark_kafka_py.formats.avro.derive`).

It describes what :mod:`.encode` writes (``to_json``'s documents), so that a consumer that
validates against it (confluent-kafka's ``JSONDeserializer`` does by default) accepts them:

=============================================  ============================================
Spark (``jsonValue``)                          JSON Schema
=============================================  ============================================
struct                                         ``{"type": "object", "properties": {...}}``
                                               (no ``required``: a null field is left out)
map<string, X> (other keys: their text)        ``{"type": "object", "additionalProperties": X}``
array<X>                                       ``{"type": "array", "items": X}``
long, integer, short, byte                     ``{"type": "integer"}``
double, float, decimal(p,s)                    ``{"type": "number"}``
boolean                                        ``{"type": "boolean"}``
string                                         ``{"type": "string"}``
binary                                         ``{"type": "string", "contentEncoding": "base64"}``
date                                           ``{"type": "string", "format": "date"}``
timestamp                                      ``{"type": "string", "format": "date-time"}``
timestamp_ntz                                  ``{"type": "string"}`` (no offset: not RFC 3339)
=============================================  ============================================

An array element or map value that may be null (``containsNull`` / ``valueContainsNull``) is
``{"oneOf": [{"type": "null"}, X]}``. ``NaN`` and infinities, which ``to_json`` writes as the
strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, do not validate as ``number``: such
documents are written all the same (the sink does not validate), a validating consumer
refuses them. Mapped back by :func:`.schema.to_spark` the schema gives the same type, with
``integer`` as ``long``, ``number`` as ``double`` and binary as ``string``.

Raises :class:`JsonSchemaError` (naming the path) for other types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from spark_kafka_py.formats.errors import JsonSchemaError

__all__ = ["DRAFT_07", "derive_json_schema"]

#: The ``$schema`` of derived schemas.
DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"

_LEAVES: Final[Mapping[str, dict[str, object]]] = {
    "long": {"type": "integer"},
    "integer": {"type": "integer"},
    "short": {"type": "integer"},
    "byte": {"type": "integer"},
    "double": {"type": "number"},
    "float": {"type": "number"},
    "boolean": {"type": "boolean"},
    "string": {"type": "string"},
    "binary": {"type": "string", "contentEncoding": "base64"},
    "date": {"type": "string", "format": "date"},
    "timestamp": {"type": "string", "format": "date-time"},
    "timestamp_ntz": {"type": "string"},
}


def derive_json_schema(spark_type: object) -> dict[str, object]:
    """The JSON Schema of the documents ``to_json`` writes for ``spark_type``.

    Args:
        spark_type: a Spark type as Spark JSON (``DataType.jsonValue()``).

    Returns:
        The schema document, with ``$schema`` draft-07 at the top.

    Raises:
        JsonSchemaError: a type not mapped (see the module), naming its path.
    """
    return {"$schema": DRAFT_07, **_derive(spark_type, "")}


def _nullable(schema: dict[str, object], nullable: object) -> dict[str, object]:
    return {"oneOf": [{"type": "null"}, schema]} if nullable is not False else schema


def _derive(t: object, path: str) -> dict[str, object]:
    if isinstance(t, str):
        leaf = _LEAVES.get(t)
        if leaf is not None:
            return dict(leaf)
        if t.startswith("decimal"):
            return {"type": "number"}
        raise JsonSchemaError(f"Spark type {t!r} has no JSON Schema here", path)
    if not isinstance(t, Mapping):
        raise JsonSchemaError(f"not a Spark type: {t!r}", path)
    kind = t.get("type")
    if kind == "struct":
        properties: dict[str, object] = {}
        for f in t.get("fields", []):
            name = f["name"]
            properties[name] = _derive(f["type"], f"{path}/{name}")
        return {"type": "object", "properties": properties}
    if kind == "array":
        items = _derive(t.get("elementType"), f"{path}/element")
        return {"type": "array", "items": _nullable(items, t.get("containsNull"))}
    if kind == "map":
        value = _derive(t.get("valueType"), f"{path}/value")
        return {
            "type": "object",
            "additionalProperties": _nullable(value, t.get("valueContainsNull")),
        }
    raise JsonSchemaError(f"Spark type {kind!r} has no JSON Schema here", path)
