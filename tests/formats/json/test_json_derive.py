"""``formats/json/derive.py``: the derived JSON Schema is a valid draft-07 schema (checked by
the ``jsonschema`` package's meta-schema), the documents our encoder writes validate against
it (``jsonschema``'s Draft7Validator, as confluent-kafka's ``JSONDeserializer`` validates),
and it maps back through :func:`to_spark` to the type, widened as documented."""

from __future__ import annotations

import json

import jsonschema
import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonSchemaError
from spark_kafka_py.formats.json.derive import derive_json_schema
from spark_kafka_py.formats.json.encode import JsonEncoder
from spark_kafka_py.formats.json.schema import to_spark


def _f(name: str, t: object) -> dict[str, object]:
    return {"name": name, "type": t, "nullable": True, "metadata": {}}


SPARK = {
    "type": "struct",
    "fields": [
        _f("l", "long"),
        _f("i", "integer"),
        _f("d", "double"),
        _f("s", "string"),
        _f("b", "boolean"),
        _f("day", "date"),
        _f("at", "timestamp"),
        _f("xs", {"type": "array", "elementType": "long", "containsNull": True}),
        _f(
            "m",
            {"type": "map", "keyType": "string", "valueType": "string", "valueContainsNull": True},
        ),
        _f("st", {"type": "struct", "fields": [_f("x", "double")]}),
    ],
}
ARROW = pa.struct(
    [
        ("l", pa.int64()),
        ("i", pa.int32()),
        ("d", pa.float64()),
        ("s", pa.string()),
        ("b", pa.bool_()),
        ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("xs", pa.list_(pa.int64())),
        ("m", pa.map_(pa.string(), pa.string())),
        ("st", pa.struct([("x", pa.float64())])),
    ]
)


def test_valid_schema_and_encoded_documents_validate() -> None:
    schema = derive_json_schema(SPARK)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    rows = [
        {
            "l": 1,
            "i": 2,
            "d": 1.5,
            "s": "x",
            "b": True,
            "day": 0,
            "at": 0,
            "xs": [1, None],
            "m": [("k", None), ("j", "v")],
            "st": {"x": 1e20},
        },
        {"l": None, "xs": [], "m": [], "st": {"x": None}},
        {},
    ]
    for doc in JsonEncoder(ARROW).encode(pa.array(rows, ARROW)):
        assert doc is not None
        validator.validate(json.loads(doc))


def test_maps_back_to_the_type() -> None:
    mapped = to_spark(derive_json_schema(SPARK))
    widened = [_f("i", "long") if f["name"] == "i" else f for f in SPARK["fields"]]  # type: ignore[attr-defined]
    assert mapped.spark_json == {"type": "struct", "fields": widened}


def test_widening_and_refusals() -> None:
    narrow = {
        "type": "struct",
        "fields": [_f("f", "float"), _f("n", "short"), _f("c", "decimal(10,2)")],
    }
    assert to_spark(derive_json_schema(narrow)).spark_json == {
        "type": "struct",
        "fields": [_f("f", "double"), _f("n", "long"), _f("c", "double")],
    }
    with pytest.raises(JsonSchemaError, match=r"\(at /v\)"):
        derive_json_schema({"type": "struct", "fields": [_f("v", "variant")]})
