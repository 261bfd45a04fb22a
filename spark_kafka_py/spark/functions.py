"""Column functions: decode Avro in any DataFrame, not only ``format("pykafka")``'s.

``from_avro`` decodes a binary column (files, Spark's own ``format("kafka")``, a table) with
the decoder the ``pykafka`` source uses on its executors, as a PySpark Arrow UDF (PySpark >=
4.1, ``pyspark.sql.functions.arrow_udf``): whole Arrow batches, no row-by-row Python objects.

Its signature follows spark-avro's ``from_avro(data, jsonFormatSchema, options)`` and, for
the registry, Databricks' ``from_avro(data, options=..., subject=..., schemaRegistryAddress=...)``,
so switching is a change of import::

    from spark_kafka_py.spark.functions import from_avro

    df = spark.read.format("kafka").option("subscribe", "orders")...load()
    orders = df.select(from_avro("value", subject="orders-value",
                                 schemaRegistryAddress="http://registry:8081").alias("order"))

Without ``schemaRegistryAddress`` the values are plain Avro datums of ``jsonFormatSchema``
(spark-avro's ``to_avro`` output); with it, Confluent-framed values whose writer schemas come
from the registry, read as ``jsonFormatSchema`` (when given) or as the subject's latest schema.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import DataType, StructType

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.avro.types import to_spark
from spark_kafka_py.formats.errors import FormatError
from spark_kafka_py.spark.payload import (
    ReaderSchema,
    check_registry_schema,
    decode_column,
    parse_payload_options,
    registry_client,
)

__all__ = ["from_avro"]


def _spark_type(spark_json: object) -> DataType:
    field = {"name": "v", "type": spark_json, "nullable": True, "metadata": {}}
    return StructType.fromJson({"type": "struct", "fields": [field]})[0].dataType


def from_avro(
    data: Column | str,
    jsonFormatSchema: str | None = None,
    options: Mapping[str, str] | None = None,
    *,
    subject: str | None = None,
    schemaRegistryAddress: str | None = None,
) -> Column:
    """A column of ``data``'s Avro values decoded to the reader schema's Spark type.

    Args:
        data: a binary column (or its name).
        jsonFormatSchema: the reader schema as Avro JSON; required without a registry.
        options: ``mode`` (``FAILFAST``, the default, or ``PERMISSIVE``: a value that does
            not decode gives null) and the ``schema.registry.*`` settings of the ``pykafka``
            source (authentication, TLS, timeouts; see the README's option table).
        subject: the registry subject whose latest schema is the reader schema (without
            ``jsonFormatSchema``).
        schemaRegistryAddress: the registry's base URL(s): values are Confluent-framed (magic
            byte 0 and the writer schema's 4-byte id).

    Returns:
        A :class:`pyspark.sql.Column` of the reader schema's type (spark-avro's mapping).

    Raises:
        ConfigError: no schema to read with, a bad option, a schema Spark cannot represent;
            at run time (in the Spark job) :class:`~spark_kafka_py.errors.RecordFormatError`
            for a value that does not decode with ``FAILFAST``.
        SchemaRegistryError: the registry failed or has no such subject (now, on the driver).
    """
    opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    opts["valueformat"] = "avro"
    if schemaRegistryAddress is not None:
        opts["schema.registry.url"] = schemaRegistryAddress
    if jsonFormatSchema is not None:
        opts["avroschema"] = jsonFormatSchema
    elif subject is None:
        raise ConfigError("from_avro needs jsonFormatSchema, or subject and schemaRegistryAddress")
    payload = parse_payload_options(opts)
    schema_id = None
    if jsonFormatSchema is not None:
        schema_json = jsonFormatSchema
    else:
        assert subject is not None and payload.registry is not None
        latest = registry_client(payload.registry).latest(subject)
        check_registry_schema(
            latest.schema.schema_type,
            f"subject {subject!r} version {latest.version}",
            latest.schema.references,
        )
        schema_json, schema_id = latest.schema.schema_str, latest.schema_id
    try:
        mapped = to_spark(parse_schema(schema_json))
    except FormatError as exc:
        raise ConfigError(f"from_avro: the Avro schema cannot be read: {exc}") from None
    reader = ReaderSchema("value", schema_json, schema_id, mapped.spark_json)

    def decode(values: pa.Array) -> pa.Array:
        return decode_column(values, reader, payload)

    udf = arrow_udf(decode, _spark_type(mapped.spark_json))  # type: ignore[call-overload]  # PySpark types returnType narrower than it accepts
    return udf(data)
