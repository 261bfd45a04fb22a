"""JSON: JSON Schema -> Spark types (:mod:`.schema`), documents -> Arrow with Spark's
``from_json`` semantics (:mod:`.decode`), Arrow -> documents as Spark's ``to_json``
(:mod:`.encode`)."""

from __future__ import annotations

from spark_kafka_py.formats.json.decode import (
    DEFAULT_CORRUPT_COLUMN,
    JsonDecoder,
    arrow_type_of,
    decode_json,
)
from spark_kafka_py.formats.json.encode import JsonEncodeError, JsonEncoder, encode_json
from spark_kafka_py.formats.json.schema import parse_json_schema, to_spark

__all__ = [
    "DEFAULT_CORRUPT_COLUMN",
    "JsonDecoder",
    "JsonEncodeError",
    "JsonEncoder",
    "arrow_type_of",
    "decode_json",
    "encode_json",
    "parse_json_schema",
    "to_spark",
]
