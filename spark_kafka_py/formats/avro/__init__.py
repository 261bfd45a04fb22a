"""Avro: schema parsing (:mod:`.schema`), the Spark type mapping (:mod:`.types`), the reference
decoder with schema resolution (:mod:`.decoder`), framed columns (:mod:`.column`), the
reference encoder (:mod:`.encoder`) and schemas derived from Arrow types (:mod:`.derive`)."""

from __future__ import annotations

from spark_kafka_py.formats.avro.column import decode_framed
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.derive import (
    derive_schema,
    derive_schema_from_spark,
    derive_schema_json,
)
from spark_kafka_py.formats.avro.encoder import AvroEncoder
from spark_kafka_py.formats.avro.schema import Schema, parse_schema
from spark_kafka_py.formats.avro.types import MappedType, to_spark

__all__ = [
    "AvroDecoder",
    "AvroEncoder",
    "MappedType",
    "Schema",
    "decode_framed",
    "derive_schema",
    "derive_schema_from_spark",
    "derive_schema_json",
    "parse_schema",
    "to_spark",
]
