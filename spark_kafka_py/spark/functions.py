"""Column functions: decode and encode Avro (and decode Protobuf) in any DataFrame, not only
``format("pykafka")``'s.

``from_avro`` decodes a binary column (files, Spark's own ``format("kafka")``, a table) with
the decoder the ``pykafka`` source uses on its executors, and ``to_avro`` encodes a column with
the encoder its sink uses, each as a PySpark Arrow UDF (PySpark >= 4.1,
``pyspark.sql.functions.arrow_udf``): whole Arrow batches, no row-by-row Python objects.

Their signatures follow spark-avro's ``from_avro(data, jsonFormatSchema, options)`` and
``to_avro(data, jsonFormatSchema)`` and, for the registry, Databricks'
``from_avro(data, options=..., subject=..., schemaRegistryAddress=...)`` and
``to_avro(data, subject=..., schemaRegistryAddress=...)`` (the subject a string here, not a
``lit`` column), so switching is a change of import::

    from spark_kafka_py.spark.functions import from_avro

    df = spark.read.format("kafka").option("subscribe", "orders")...load()
    orders = df.select(from_avro("value", subject="orders-value",
                                 schemaRegistryAddress="http://registry:8081").alias("order"))

Without ``schemaRegistryAddress`` the values are plain Avro datums of ``jsonFormatSchema``
(spark-avro's ``to_avro`` output); with it, Confluent-framed values whose writer schemas come
from the registry, read as ``jsonFormatSchema`` (when given) or as the subject's latest schema.
``to_avro`` is its inverse: see its docstring for how the writer schema is chosen.

``from_protobuf`` takes spark-protobuf's ``from_protobuf(data, messageName, descFilePath,
options, binaryDescriptorSet)`` and, for the registry, Databricks' form
(``options={"schema.registry.subject": ..., "schema.registry.address": ...}``).
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import BinaryType, DataType, StructType

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.formats.avro.derive import derive_schema_json
from spark_kafka_py.formats.avro.schema import parse_schema
from spark_kafka_py.formats.avro.types import to_spark
from spark_kafka_py.formats.errors import FormatError
from spark_kafka_py.spark.payload import (
    ReaderSchema,
    check_registry_schema,
    decode_column,
    parse_payload_options,
    protobuf_reader,
    registry_client,
)
from spark_kafka_py.spark.payload_write import (
    WriterSchema,
    encode_column,
    registered_writer_schema,
)

__all__ = ["from_avro", "from_protobuf", "to_avro"]


def _spark_type(spark_json: object) -> DataType:
    field = {"name": "v", "type": spark_json, "nullable": True, "metadata": {}}
    return StructType.fromJson({"type": "struct", "fields": [field]})[0].dataType


def _options(
    options: Mapping[str, str] | None, schema: str | None, registry: str | None
) -> dict[str, str]:
    """The functions' options as the ``pykafka`` source's, for ``parse_payload_options``."""
    opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    opts["valueformat"] = "avro"
    if registry is not None:
        opts["schema.registry.url"] = registry
    if schema is not None:
        opts["avroschema"] = schema
    return opts


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
    opts = _options(options, jsonFormatSchema, schemaRegistryAddress)
    if jsonFormatSchema is None and subject is None:
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


def _derived_writer(name: str, arrow_type: pa.DataType) -> WriterSchema:
    """The plain Avro writer schema of a column of ``arrow_type``, derived as spark-avro's
    ``to_avro`` derives it (not nullable at the top: see :func:`to_avro`)."""
    try:
        schema_json = derive_schema_json(arrow_type, nullable=False)
    except FormatError as exc:
        raise ConfigError(
            f"to_avro: {name} ({arrow_type}) has no Avro schema (derived as spark-avro's "
            f"to_avro derives one): {exc}; give jsonFormatSchema"
        ) from None
    return WriterSchema(name, schema_json, None, "the schema derived from its type")


def to_avro(
    data: Column | str,
    jsonFormatSchema: str | None = None,
    options: Mapping[str, str] | None = None,
    *,
    subject: str | None = None,
    schemaRegistryAddress: str | None = None,
) -> Column:
    """A ``binary`` column of ``data``'s values encoded as Avro (the inverse of
    :func:`from_avro`).

    The writer schema:

    * without ``schemaRegistryAddress``: ``jsonFormatSchema``, else the schema derived from
      the column's type as spark-avro's ``SchemaConverters.toAvroType`` derives it (each
      batch's Arrow type, on the executors). Values are plain Avro datums, as spark-avro's
      ``to_avro`` writes them.
    * with ``schemaRegistryAddress`` and ``subject``: chosen on the driver, once, as the
      ``pykafka`` sink chooses it (Confluent's serializer order): ``options``'
      ``value.schema.id``, or ``value.schema.version``, or ``use.latest.version=true``;
      else ``jsonFormatSchema`` registered under ``subject`` (``auto.register.schemas``,
      default true) or looked up there (false). Without ``jsonFormatSchema`` the subject's
      latest schema is used (the column's type is not known on the driver, so there is no
      schema to derive and register there). Values are framed: magic byte 0 and the writer
      schema's 4-byte id.

    A null value gives a null (null in, null out, as spark-avro's ``to_avro``). Where we
    differ from spark-avro: its derived schema of a *nullable* column is a ``[type, "null"]``
    union (each value then starts with the union branch); ours is the type alone, as for a
    non-nullable column (``struct(...)``, the usual input), since an Arrow UDF is not told
    the column's nullability. Give ``jsonFormatSchema`` to write the union.

    Args:
        data: the column (or its name) to encode: any type the writer schema can be written
            from (the sink's rules, docs/formats.md).
        jsonFormatSchema: the writer schema as Avro JSON.
        options: ``schema.registry.*`` settings (authentication, TLS, timeouts),
            ``auto.register.schemas``, ``use.latest.version``, ``value.schema.id``,
            ``value.schema.version`` (the ``pykafka`` sink's options, README table).
        subject: the registry subject (with ``schemaRegistryAddress``).
        schemaRegistryAddress: the registry's base URL(s).

    Returns:
        A :class:`pyspark.sql.Column` of type ``binary``.

    Raises:
        ConfigError: a bad option; ``schemaRegistryAddress`` without ``subject`` (and without
            ``value.schema.id``); a registry schema that is not Avro or has references;
            registration refused (409) or the schema not under the subject; at run time
            (in the Spark job) a column type the schema cannot be written from.
            :class:`~spark_kafka_py.errors.RecordFormatError` at run time: a value that does
            not fit the schema, naming the row and the schema id.
        SchemaRegistryError: the registry failed or has no such subject, version or id (now,
            on the driver).
    """
    name = data if isinstance(data, str) else "to_avro input"  # for messages
    writer: WriterSchema | None = None
    if schemaRegistryAddress is None and jsonFormatSchema is None:
        if options:  # only the registry's options exist: refuse them rather than ignore them
            raise ConfigError(
                f"to_avro: options {sorted(options)} need schemaRegistryAddress (without it "
                "the values are plain Avro of jsonFormatSchema or of the derived schema)"
            )
    else:
        payload = parse_payload_options(_options(options, jsonFormatSchema, schemaRegistryAddress))
        col = payload.value
        assert col is not None
        if payload.registry is None:
            writer = WriterSchema(name, jsonFormatSchema or "", None, "jsonFormatSchema")
            try:
                parse_schema(writer.schema_json)
            except FormatError as exc:
                raise ConfigError(f"to_avro: jsonFormatSchema cannot be read: {exc}") from None
        else:
            if subject is None and col.schema_id is None:
                raise ConfigError(
                    "to_avro with schemaRegistryAddress needs subject (or the option "
                    "'value.schema.id')"
                )
            own = None if jsonFormatSchema is None else (jsonFormatSchema, "jsonFormatSchema")
            if own is None:
                payload = dataclasses.replace(payload, use_latest=True)
            found = registered_writer_schema(col, payload, subject, own)
            writer = dataclasses.replace(found, column=name)

    def encode(values: pa.Array) -> pa.Array:
        return encode_column(writer or _derived_writer(name, values.type), values)

    udf = arrow_udf(encode, BinaryType())  # type: ignore[call-overload]  # as from_avro's
    return udf(data)


# -- Protobuf ---------------------------------------------------------------------------------

#: Databricks' registry options of ``from_protobuf``.
_PB_SUBJECT = "schema.registry.subject"
_PB_ADDRESS = "schema.registry.address"


def from_protobuf(
    data: Column | str,
    messageName: str | None = None,
    descFilePath: str | None = None,
    options: Mapping[str, str] | None = None,
    binaryDescriptorSet: bytes | None = None,
) -> Column:
    """A column of ``data``'s Protobuf messages decoded to the message's Spark struct, as
    spark-protobuf's ``from_protobuf`` maps it (its ``SchemaConverters``; docs/formats.md),
    with the decoder the ``pykafka`` source uses on its executors (an Arrow UDF).

    Without a registry the values are plain Protobuf messages of ``messageName`` in the
    descriptor set of ``descFilePath`` (a file, read now on the driver) or
    ``binaryDescriptorSet`` (its bytes). With Databricks' registry options
    (``options={"schema.registry.subject": s, "schema.registry.address": url}``) the values are
    Confluent-framed (magic byte 0, the 4-byte writer schema id, message indexes); the reader
    schema is the descriptor set when given, else the subject's latest schema, and
    ``messageName`` picks the message (default: the schema's first); a record whose message
    indexes name another message in its writer schema is a bad record.

    Args:
        data: a binary column (or its name).
        messageName: the message (full ``pkg.Msg``, or without the package).
        descFilePath: path of a binary ``FileDescriptorSet`` (``protoc --include_imports
            --descriptor_set_out``).
        options: spark-protobuf's options (``mode``: ``FAILFAST``, the default, or
            ``PERMISSIVE``; ``emit.default.values``, ``enums.as.ints``,
            ``upcast.unsigned.ints``, ``unwrap.primitive.wrapper.types``,
            ``retain.empty.message.types``, ``recursive.fields.max.depth``), the two registry
            options above, and the ``pykafka`` source's ``schema.registry.*`` settings.
        binaryDescriptorSet: the descriptor set's bytes (instead of ``descFilePath``).

    Returns:
        A :class:`pyspark.sql.Column` of the message's struct type.

    Raises:
        ConfigError: no message or descriptor set without a registry, both a file and bytes,
            an unreadable file, a message not in the set, a registry subject without an
            address (or the reverse), a message Spark cannot represent; at run time (in the
            Spark job) :class:`~spark_kafka_py.errors.RecordFormatError` for a value that does
            not decode with ``FAILFAST``.
        SchemaRegistryError: the registry failed or has no such subject (now, on the driver).
    """
    opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    subject = opts.pop(_PB_SUBJECT, None)
    address = opts.pop(_PB_ADDRESS, None)
    if address is not None:
        opts["schema.registry.url"] = address
    if subject is not None and "schema.registry.url" not in opts:
        raise ConfigError(
            f"from_protobuf: option '{_PB_SUBJECT}' needs '{_PB_ADDRESS}' (the registry's base URL)"
        )
    opts["valueformat"] = "protobuf"
    if messageName is not None:
        opts["messagename"] = messageName
    if descFilePath is not None:
        opts["descfilepath"] = descFilePath
    if binaryDescriptorSet is not None:
        opts["descriptorset"] = base64.b64encode(bytes(binaryDescriptorSet)).decode("ascii")
    payload = parse_payload_options(opts)
    col = payload.value
    assert col is not None
    pinned = col.descriptor_set is not None or col.schema_id is not None
    if payload.registry is not None and subject is None and not pinned:
        raise ConfigError(
            f"from_protobuf with a registry needs option '{_PB_SUBJECT}' (or a descriptor "
            "set, or 'value.schema.id')"
        )
    reader = protobuf_reader(col, payload, None, subject=subject)

    def decode(values: pa.Array) -> pa.Array:
        return decode_column(values, reader, payload)

    udf = arrow_udf(decode, _spark_type(reader.spark_type))  # type: ignore[call-overload]  # as from_avro's
    return udf(data)
