"""Avro: schema parsing (:mod:`.schema`), the Spark type mapping (:mod:`.types`), the reference
decoder with schema resolution (:mod:`.decoder`) and framed columns (:mod:`.column`)."""

from __future__ import annotations

from spark_kafka_py.formats.avro.column import decode_framed
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.schema import Schema, parse_schema
from spark_kafka_py.formats.avro.types import MappedType, to_spark

__all__ = ["AvroDecoder", "MappedType", "Schema", "decode_framed", "parse_schema", "to_spark"]
