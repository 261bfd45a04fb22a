"""The write side of ``valueFormat`` / ``keyFormat``: the sink encodes the ``key`` / ``value``
columns as Avro (``df.write.format("pykafka").option("valueFormat", "avro")``).

Two halves, as the read side (:mod:`spark_kafka_py.spark.payload`):

* :func:`resolve_write`, on the driver, once per write (once per streaming query, at its
  start: the query keeps that writer schema until it is restarted): for each formatted column
  the **writer schema** and its registry id, in the order Confluent's ``AvroSerializer``
  decides them (Confluent Schema Registry docs, "Formats, Serializers, and Deserializers":
  ``use.schema.id``, then ``use.latest.version``, then ``auto.register.schemas``, else a
  lookup):

  1. ``value.schema.id``: that schema (``GET /schemas/ids/{id}``); no subject is needed.
  2. ``value.schema.version``, or ``use.latest.version=true``: that version, or the latest, of
     the column's subject.
  3. ``auto.register.schemas=true`` (the default, as Confluent's serializer): the column's own
     schema, ``avroSchema`` or else the schema derived from the column's Spark type as
     spark-avro's ``SchemaConverters.toAvroType`` derives it (top-level record
     ``topLevelRecord``, nested records named after their fields; the top level not
     nullable, see "Null rows"), registered under the subject (``POST
     /subjects/{subject}/versions``; the id of an identical schema already there is
     returned; the registry's compatibility level applies).
  4. otherwise the column's own schema looked up under the subject (``POST
     /subjects/{subject}``): it must be registered there already.

  Without ``schema.registry.url`` the writer schema is ``avroSchema``, else the schema derived
  from the column's type (as in 3.), and the values are plain Avro datums, unframed, as
  spark-avro's ``to_avro`` writes them.

  **Subjects.** ``TopicNameStrategy`` (``<topic>-value`` / ``<topic>-key``) and
  ``TopicRecordNameStrategy`` (``<topic>-<record full name>``) need the topic, which is the
  ``topic`` option. Without it each row's ``topic`` column picks the topic, so one write may
  go to many subjects; Confluent's serializer would register or look up a schema per topic,
  record by record. Here the schema is chosen once, on the driver, so the write is refused
  with a :class:`~spark_kafka_py.errors.ConfigError` naming the options, unless no subject
  is needed: the schema pinned by ``value.schema.id`` (an id names one schema in the whole
  registry, whatever the topic), or ``RecordNameStrategy`` (the subject is the record's full
  name: ``avroSchema``'s, else the derived ``topLevelRecord``). ``avroSchema`` alone does not
  pin a registry schema (it must be registered or looked up under a subject), so it does not
  lift the refusal.

  **Fit.** The column's type must be writable with the writer schema (the encoder's plan,
  :class:`~spark_kafka_py.formats.avro.encoder.AvroEncoder`, built on the driver with the
  Arrow type PySpark gives the column): if not, a ``ConfigError`` names the column, the
  schema id and why, before any task runs. Values that do not fit (a null into a non-null
  field, an enum symbol the enum lacks, a decimal beyond its precision) can only be found
  row by row, on the executors.

* :func:`encode_batches`, on the executors: each Arrow batch's formatted columns are encoded
  whole (a cached encoder per process and schema) and framed (magic byte 0, the 4-byte id),
  and only then is the batch handed to the producer: a row that does not fit fails the task
  with a :class:`~spark_kafka_py.errors.RecordFormatError` naming the column, the row and
  the schema id, and nothing of that batch is written (batches of the same task written
  before it stay written: at-least-once, as every sink failure). The key is encoded before
  partitioning, so ``murmur2`` hashes the encoded key, as Kafka's producer hashes the
  serialized key.

**Null rows.** A null ``value`` (or ``key``) row is written as a null record value (key), a
tombstone, whatever the schema: Confluent's ``AvroSerializer`` returns ``None`` for ``None``
without consulting the schema, and spark-avro's ``to_avro`` is null-intolerant (null in, null
out). Hence the derived schema's top level is not a ``[..., "null"]`` union even for a
nullable column.

**Top-level ``bytes``.** When the writer schema is the plain ``"bytes"`` type (no logical
type), framed values carry the bytes raw after the 5-byte framing, without Avro's length
prefix, as Confluent's serializers write them (the Java serializer writes a ``byte[]`` value
as is; confluent-kafka 2.16's Python ``AvroSerializer`` has the same ``is_bytes`` branch, and
its deserializers read the rest of the value raw). Unframed (plain Avro) values are Avro
``bytes`` datums, length first, as spark-avro's ``to_avro``.

Sources: Confluent Schema Registry documentation ("Formats, Serializers, and Deserializers":
the wire format, ``auto.register.schemas``, ``use.latest.version``, ``use.schema.id``,
``SubjectNameStrategy``); confluent-kafka-python 2.16 ``AvroSerializer``; spark-avro's
``to_avro`` and ``SchemaConverters.toAvroType``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from google.protobuf import descriptor_pb2  # type: ignore[import-untyped]
from pyspark.sql.types import StructField, StructType

from spark_kafka_py.errors import ConfigError, RecordFormatError, SchemaRegistryError
from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro.column import raw_in_framing
from spark_kafka_py.formats.avro.derive import derive_schema_from_spark
from spark_kafka_py.formats.avro.encoder import AvroEncoder
from spark_kafka_py.formats.avro.schema import Record, parse_schema
from spark_kafka_py.formats.errors import (
    AvroEncodeError,
    FormatError,
    JsonSchemaError,
    ProtobufEncodeError,
    ProtobufSchemaError,
)
from spark_kafka_py.formats.json.derive import derive_json_schema
from spark_kafka_py.formats.json.encode import JsonEncodeError, JsonEncoder
from spark_kafka_py.formats.protobuf import framing as protobuf_framing
from spark_kafka_py.formats.protobuf.descriptors import (
    ProtobufSchema,
    parse_base64_file_descriptor,
    parse_descriptor_set,
    parse_proto,
)
from spark_kafka_py.formats.protobuf.encoder import ProtobufEncoder
from spark_kafka_py.schema_registry.client import AVRO, Schema
from spark_kafka_py.spark.payload import (
    JSON_FORMAT,
    JSON_SCHEMA,
    PROTOBUF_FORMAT,
    PROTOBUF_SCHEMA,
    ColumnFormat,
    PayloadOptions,
    check_registry_schema,
    parsed_schema,
    registry_client,
)

__all__ = [
    "WritePayload",
    "WriterSchema",
    "encode_batch",
    "encode_batches",
    "encode_protobuf_column",
    "registered_writer_schema",
    "resolve_write",
]

#: HTTP statuses the registry answers when a schema is not under a subject (lookup) and when a
#: schema breaks the subject's compatibility level (register).
_NOT_FOUND = 404
_CONFLICT = 409


@dataclass(frozen=True)
class WriterSchema:
    """The writer schema of one formatted column, fixed on the driver (picklable).

    Attributes:
        column: ``"key"`` or ``"value"``.
        schema_json: the schema's JSON text.
        schema_id: its registry id; None for plain Avro (no registry: values unframed).
        source: how it was chosen, for messages (``"schema id 7"``, ``"subject 't-value'
            latest (version 3)"``, ``"avroSchema"``, ...).
        format: ``"avro"``, ``"json"`` (``to_json``'s text; ``schema_json`` empty), or
            ``"protobuf"`` (``schema_json``: the registry's schema text, or empty).
        descriptor_set: ``protobuf``: the serialized ``FileDescriptorSet`` of the writer
            schema (the registry's, compiled on the driver, or ``descFilePath`` /
            ``descriptorSet``), shipped to the executors.
        message_name: ``protobuf``: the full name of the message written.
        indexes: ``protobuf`` with a registry: the message's Confluent message indexes in the
            registry's schema (``(0,)`` for its first message).
    """

    column: str
    schema_json: str
    schema_id: int | None
    source: str
    format: str = "avro"
    descriptor_set: bytes | None = None
    message_name: str | None = None
    indexes: tuple[int, ...] = ()

    @property
    def framed(self) -> bool:
        return self.schema_id is not None

    def describe(self) -> str:
        """``schema id 7 (subject 't-value' latest, version 3)``: the id and where from."""
        if self.format == PROTOBUF_FORMAT:
            where = (
                self.source
                if self.schema_id is None
                else f"schema id {self.schema_id} ({self.source})"
            )
            return f"message {self.message_name} of {where}"
        if self.schema_id is None:
            return f"the plain Avro schema of {self.source}"
        return f"schema id {self.schema_id} ({self.source})"


@dataclass(frozen=True)
class WritePayload:
    """What a write's executors need to encode: the writer schema of each formatted column
    present in the DataFrame (a ``keyFormat=avro`` write without a ``key`` column has none
    for the key: every key is null)."""

    writers: tuple[WriterSchema, ...]


# -- the driver --------------------------------------------------------------------------------


def _spark_json(field: StructField) -> object:
    return json.loads(field.dataType.json())


def _own_schema(col: ColumnFormat, field: StructField) -> tuple[str, str]:
    """The column's own schema (``avroSchema``, else derived from its Spark type) and how it
    was chosen."""
    if col.avro_schema is not None:
        return col.avro_schema, f"'{col.schema_option}'"
    try:
        derived = derive_schema_from_spark(_spark_json(field), nullable=False)
    except FormatError as exc:
        raise ConfigError(
            f"the {col.column} column ({field.dataType.simpleString()}) has no Avro schema "
            f"(derived as spark-avro's to_avro derives one): {exc}; give "
            f"'{col.schema_option}' or '{col.option_prefix}schema.id'"
        ) from None
    return json.dumps(derived, separators=(",", ":")), "the schema derived from its type"


def _record_name(schema_json: str) -> str | None:
    root = parse_schema(schema_json).root
    return root.name if isinstance(root, Record) else None


def _subject(col: ColumnFormat, topic: str | None, own_json: str) -> str:
    """The subject of ``col`` by its strategy (Confluent's ``TopicNameStrategy``,
    ``RecordNameStrategy``, ``TopicRecordNameStrategy``), the record named by the column's
    own schema."""
    name = f"{col.option_prefix}subject.name.strategy"
    if col.strategy != "RecordNameStrategy" and topic is None:
        raise ConfigError(
            f"'{name}'={col.strategy} names the {col.column}'s subject after the topic, and "
            "without the 'topic' option each row's 'topic' column chooses it (one write, many "
            f"subjects): set the 'topic' option, pin the schema with "
            f"'{col.option_prefix}schema.id', or set '{name}'=RecordNameStrategy"
        )
    record = _record_name(own_json)
    if col.strategy == "TopicNameStrategy":
        return f"{topic}-{col.column}"
    if record is None:
        raise ConfigError(
            f"'{name}'={col.strategy} names the subject after the record, and the "
            f"{col.column}'s schema is not a record: give a record schema in "
            f"'{col.schema_option}' or pin one with '{col.option_prefix}schema.id'"
        )
    return record if col.strategy == "RecordNameStrategy" else f"{topic}-{record}"


def _writer_schema(
    col: ColumnFormat, options: PayloadOptions, field: StructField, topic: str | None
) -> WriterSchema:
    if options.registry is None:  # plain Avro of avroSchema, or of the derived schema
        schema_json, source = _own_schema(col, field)
        return WriterSchema(col.column, schema_json, None, source)
    if col.schema_id is not None:  # pinned: the column's own schema is not needed
        return registered_writer_schema(col, options, None, None)
    own = _own_schema(col, field)
    return registered_writer_schema(col, options, _subject(col, topic, own[0]), own)


def _json_writer(
    col: ColumnFormat, options: PayloadOptions, field: StructField, topic: str | None
) -> WriterSchema:
    """``json``: the column is written as ``to_json`` writes it (:mod:`.formats.json.encode`);
    with a registry, framed (magic byte 0, the 4-byte id) with the id chosen as for Avro
    (:func:`registered_writer_schema`): pinned, latest, or the JSON Schema derived from the
    column's type (:func:`~spark_kafka_py.formats.json.derive.derive_json_schema`) registered
    (``auto.register.schemas``) or looked up under ``<topic>-value`` / ``<topic>-key``. The
    documents are not validated against the registry's schema.

    Raises:
        ConfigError: a column type ``to_json`` does not take or that is not written here
            (naming the column and the path); a subject strategy other than
            ``TopicNameStrategy`` or no ``topic`` option (without a pinned id); the registry
            errors of :func:`registered_writer_schema`.
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    arrow_type = _arrow_type(field)
    try:
        JsonEncoder(arrow_type)
    except JsonSchemaError as exc:
        hint = (
            f" (a {field.dataType.simpleString()} column already holds the bytes: write it "
            f"with '{col.column}Format'='binary')"
            if field.dataType.simpleString() in ("string", "binary")
            else ""
        )
        raise ConfigError(
            f"the {col.column} column ({field.dataType.simpleString()}) cannot be written as "
            f"JSON: {exc}{hint}"
        ) from None
    if options.registry is None:
        return WriterSchema(col.column, "", None, "to_json", JSON_FORMAT)
    if col.schema_id is not None:
        pinned = registered_writer_schema(col, options, None, None, schema_type=JSON_SCHEMA)
        return dataclasses.replace(pinned, format=JSON_FORMAT)
    name = f"{col.option_prefix}subject.name.strategy"
    if col.strategy != "TopicNameStrategy":
        raise ConfigError(
            f"'{name}'={col.strategy} names the subject after a record, and a JSON column has "
            f"none here: use TopicNameStrategy or pin the schema with "
            f"'{col.option_prefix}schema.id'"
        )
    if topic is None:
        raise ConfigError(
            f"'{name}'=TopicNameStrategy names the {col.column}'s subject after the topic, and "
            "without the 'topic' option each row's 'topic' column chooses it: set the 'topic' "
            f"option or pin the schema with '{col.option_prefix}schema.id'"
        )
    try:
        derived = derive_json_schema(_spark_json(field))
    except JsonSchemaError as exc:
        raise ConfigError(
            f"the {col.column} column ({field.dataType.simpleString()}) has no JSON Schema: "
            f"{exc}; pin one with '{col.option_prefix}schema.id'"
        ) from None
    own = (json.dumps(derived, separators=(",", ":")), "the JSON Schema derived from its type")
    writer = registered_writer_schema(
        col, options, f"{topic}-{col.column}", own, schema_type=JSON_SCHEMA
    )
    return dataclasses.replace(writer, format=JSON_FORMAT)


def _protobuf_indexes(descriptor: object) -> tuple[int, ...]:
    """Confluent's message indexes of a message in its file: the top-level message's position,
    then each nested message's position in its parent (declaration order)."""
    path: list[int] = []
    d: Any = descriptor
    while d.containing_type is not None:
        parent = d.containing_type
        path.append(list(parent.nested_types).index(d))
        d = parent
    path.append(list(d.file.message_types_by_name.values()).index(d))
    return tuple(reversed(path))


def _registry_protobuf(text: str, what: str) -> ProtobufSchema:
    """A registry's Protobuf schema text: a base64 ``FileDescriptorProto`` (as confluent-kafka's
    Python serializer registers it and Apicurio serves it) or ``.proto`` text.

    Raises:
        ConfigError: neither parses (naming ``what``).
    """
    try:
        base64.b64decode(text, validate=True)
        is_base64 = True
    except (binascii.Error, ValueError):
        is_base64 = False
    try:
        return parse_base64_file_descriptor(text) if is_base64 else parse_proto(text)
    except ProtobufSchemaError as exc:
        raise ConfigError(f"the registry's {what} is not a usable Protobuf schema: {exc}") from None


def _own_protobuf(col: ColumnFormat) -> tuple[ProtobufSchema, Any] | None:
    """``descFilePath`` / ``descriptorSet``'s schema and the message ``messageName`` names (its
    first file's first message without one), None when neither option is given."""
    schema = col.protobuf_schema()
    if schema is None:
        return None
    try:
        return schema, schema.message(col.message_name)
    except ProtobufSchemaError as exc:
        raise ConfigError(f"Option '{col.schema_option}': {exc}") from None


def _file_to_register(col: ColumnFormat, descriptor: Any) -> str:
    """The message's file as a base64 ``FileDescriptorProto`` (what confluent-kafka's Python
    ``ProtobufSerializer`` registers).

    Raises:
        ConfigError: the file imports a file other than the well-known types (those would be
            registered as references, which are not written here).
    """
    file = descriptor.file
    imports = [d.name for d in file.dependencies if not d.name.startswith("google/protobuf/")]
    if imports:
        raise ConfigError(
            f"message {descriptor.full_name} of '{col.schema_option}' is in {file.name!r}, "
            f"which imports {', '.join(imports)}: registering imports as schema references is "
            f"not supported; register the schema yourself and pin it with "
            f"'{col.option_prefix}schema.id', or put the messages in one file"
        )
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    return base64.b64encode(proto.SerializeToString()).decode("ascii")


def _protobuf_writer(
    col: ColumnFormat, options: PayloadOptions, field: StructField, topic: str | None
) -> WriterSchema:
    """``protobuf``: the message written and, with a registry, its schema id and indexes.

    Without ``schema.registry.url``: ``messageName`` of ``descFilePath`` / ``descriptorSet``,
    values unframed (spark-protobuf's ``to_protobuf``). With it, the writer schema is chosen as
    for Avro (:func:`registered_writer_schema`): ``[key.]schema.id`` pinned, ``schema.version``
    or ``use.latest.version``; else the descriptor set's message file registered (base64
    ``FileDescriptorProto``, schemaType ``PROTOBUF``, ``auto.register.schemas``) or looked up
    under the subject; without a descriptor set, the subject's latest. The message is
    ``messageName`` in that schema, else its first; values are framed with the id and the
    message's indexes.

    Raises:
        ConfigError: a subject that cannot be named; a registry schema that is not Protobuf,
            has references or does not parse; no such message; imports to register; the
            column's type does not fit the message (naming the field's path).
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    own = _own_protobuf(col)
    if options.registry is None:
        assert own is not None and col.descriptor_set is not None  # parse_payload_options
        schema, descriptor = own
        writer = WriterSchema(
            col.column,
            "",
            None,
            "the descriptor set given",
            PROTOBUF_FORMAT,
            descriptor_set=col.descriptor_set,
            message_name=descriptor.full_name,
        )
    else:
        if col.schema_id is not None:
            found = registered_writer_schema(col, options, None, None, schema_type=PROTOBUF_SCHEMA)
        else:
            name = f"{col.option_prefix}subject.name.strategy"
            record = own[1].full_name if own is not None else col.message_name
            if col.strategy != "RecordNameStrategy" and topic is None:
                raise ConfigError(
                    f"'{name}'={col.strategy} names the {col.column}'s subject after the topic, "
                    "and without the 'topic' option each row's 'topic' column chooses it: set "
                    f"the 'topic' option or pin the schema with '{col.option_prefix}schema.id'"
                )
            if col.strategy != "TopicNameStrategy" and record is None:
                raise ConfigError(
                    f"'{name}'={col.strategy} names the subject after the message: give "
                    f"'{'key.messageName' if col.is_key else 'messageName'}'"
                )
            if col.strategy == "TopicNameStrategy":
                subject = f"{topic}-{col.column}"
            elif col.strategy == "RecordNameStrategy":
                subject = str(record)
            else:
                subject = f"{topic}-{record}"
            registering = None
            use = options
            if own is not None:
                registering = (
                    _file_to_register(col, own[1]),
                    f"the file of message {own[1].full_name} of '{col.schema_option}'",
                )
            elif col.schema_version is None:
                use = dataclasses.replace(options, use_latest=True)
            found = registered_writer_schema(
                col, use, subject, registering, schema_type=PROTOBUF_SCHEMA
            )
        schema = _registry_protobuf(found.schema_json, found.describe())
        try:
            if own is not None:
                descriptor = schema.message(own[1].full_name)
            else:
                descriptor = schema.message(col.message_name)
        except ProtobufSchemaError as exc:
            raise ConfigError(f"the registry's {found.describe()}: {exc}") from None
        fds: Any = descriptor_pb2.FileDescriptorSet(file=schema.files)
        writer = dataclasses.replace(
            found,
            format=PROTOBUF_FORMAT,
            descriptor_set=fds.SerializeToString(),
            message_name=descriptor.full_name,
            indexes=_protobuf_indexes(descriptor),
        )
        if descriptor.file.name != schema.main:
            raise ConfigError(
                f"message {descriptor.full_name} is not in the registry's schema "
                f"({writer.describe()}) itself but in its import {descriptor.file.name!r}"
            )
    check_protobuf_fits(writer, _arrow_type(field), col)
    return writer


def check_protobuf_fits(
    writer: WriterSchema, arrow_type: pa.DataType, col: ColumnFormat | None = None
) -> ProtobufEncoder:
    """The Protobuf encoder of ``writer`` for columns of ``arrow_type``.

    Raises:
        ConfigError: the type does not fit the message (naming the column, the message, the
            field's path and why).
    """
    assert writer.descriptor_set is not None and writer.message_name is not None
    try:
        schema = parse_descriptor_set(writer.descriptor_set)
        options = col.protobuf if col is not None else None
        return ProtobufEncoder(schema, schema.message(writer.message_name), arrow_type, options)
    except ProtobufSchemaError as exc:
        raise ConfigError(
            f"the {writer.column} column ({arrow_type}) cannot be written as "
            f"{writer.describe()}: {exc}"
        ) from None


def registered_writer_schema(
    col: ColumnFormat,
    options: PayloadOptions,
    subject: str | None,
    own: tuple[str, str] | None,
    *,
    schema_type: str = AVRO,
) -> WriterSchema:
    """The writer schema of ``col`` from the registry, in Confluent's serializer order.

    Args:
        col: the column's format (a pinned ``schema.id`` / ``schema.version``).
        options: the write's options (registry, ``use.latest.version``,
            ``auto.register.schemas``); ``options.registry`` is set.
        subject: the column's subject; None only with a pinned id.
        own: the column's own schema and how it was chosen (``avroSchema``, or derived from
            its type), to register or look up; None only with a pinned id or version, or
            ``use.latest.version``.
        schema_type: the registry's ``schemaType`` expected and registered (``AVRO``,
            ``JSON``).

    Raises:
        ConfigError: the registry's schema is not Avro or has references; registration
            refused by the subject's compatibility (409); not registered and
            ``auto.register.schemas=false`` (404).
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    assert options.registry is not None
    client = registry_client(options.registry)
    if col.schema_id is not None:
        found = client.schema_by_id(col.schema_id)
        what = f"'{col.option_prefix}schema.id'={col.schema_id}"
        check_registry_schema(
            found.schema_type, f"schema of {what}", found.references, expected=schema_type
        )
        return WriterSchema(col.column, found.schema_str, col.schema_id, what)
    assert subject is not None
    if col.schema_version is not None or options.use_latest:
        registered = (
            client.version(subject, col.schema_version)
            if col.schema_version is not None
            else client.latest(subject)
        )
        which = "latest" if col.schema_version is None else "pinned"
        what = f"subject {subject!r} {which}, version {registered.version}"
        check_registry_schema(
            registered.schema.schema_type, what, registered.schema.references, expected=schema_type
        )
        return WriterSchema(col.column, registered.schema.schema_str, registered.schema_id, what)
    assert own is not None
    own_json, own_source = own
    if options.auto_register:
        try:
            schema_id = client.register(subject, Schema(own_json, schema_type))
        except SchemaRegistryError as exc:
            if exc.status != _CONFLICT:
                raise
            raise ConfigError(
                f"the registry refused to register {own_source} of the {col.column} column "
                f"under subject {subject!r} (incompatible with the subject's compatibility "
                f"level): {exc}; write with the subject's schema ('use.latest.version'=true) or "
                f"give a compatible '{col.schema_option}'"
            ) from None
        return WriterSchema(
            col.column, own_json, schema_id, f"{own_source}, registered under {subject!r}"
        )
    try:
        registered = client.lookup(subject, Schema(own_json, schema_type))
    except SchemaRegistryError as exc:
        if exc.status != _NOT_FOUND:
            raise
        raise ConfigError(
            f"{own_source} of the {col.column} column is not registered under subject "
            f"{subject!r} and 'auto.register.schemas' is false: register it, set "
            "'auto.register.schemas'=true, or write with the subject's latest schema "
            f"('use.latest.version'=true): {exc}"
        ) from None
    return WriterSchema(
        col.column,
        own_json,
        registered.schema_id,
        f"{own_source}, found under {subject!r} as version {registered.version}",
    )


def _arrow_type(field: StructField) -> pa.DataType:
    """The Arrow type PySpark hands a writer for ``field`` (strings and binaries may arrive
    large, timestamps with the session's zone: the encoder takes either)."""
    from pyspark.sql.pandas.types import to_arrow_type

    try:
        return to_arrow_type(field.dataType, timezone="UTC")
    except (TypeError, ValueError, NotImplementedError) as exc:
        raise ConfigError(
            f"the {field.name} column's type {field.dataType.simpleString()} has no Arrow "
            f"form for Python writers: {exc}"
        ) from None


def check_fits(writer: WriterSchema, arrow_type: pa.DataType) -> AvroEncoder:
    """The encoder of ``writer`` for columns of ``arrow_type``.

    Raises:
        ConfigError: the type cannot be written with the schema (naming the column, the schema
            id and why).
    """
    try:
        return AvroEncoder(
            parsed_schema(writer.schema_json), arrow_type, schema_id=writer.schema_id
        )
    except FormatError as exc:
        raise ConfigError(
            f"the {writer.column} column ({arrow_type}) cannot be written with "
            f"{writer.describe()}: {exc}"
        ) from None


def resolve_write(
    options: PayloadOptions, schema: StructType, topic: str | None
) -> WritePayload | None:
    """Driver side: the writer schema of each formatted column, checked against the column.

    Args:
        options: the write's payload options (``SinkOptions.payload``).
        schema: the DataFrame's schema.
        topic: the ``topic`` option, None when each row's ``topic`` column decides.

    Returns:
        The writer schemas, or None when no column is formatted.

    Raises:
        ConfigError: ``keyFormat=avro`` without a ``key`` column; no way to name the
            subject; a registry schema that is not Avro or has
            references; a schema the column cannot be written with; ``auto.register.schemas``
            refused by the subject's compatibility (409); ``auto.register.schemas=false`` and
            the schema not under the subject.
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    if not options.active:
        return None
    fields = {f.name: f for f in schema.fields}
    writers = []
    for col in options.columns:
        field = fields.get(col.column)
        if field is None:
            if col.is_key:  # the option asks to encode keys the rows do not have
                raise ConfigError(
                    f"Option 'keyFormat'='{col.format}' but the DataFrame has no 'key' column "
                    "(every key would be null): add a key column or remove the option"
                )
            continue  # no value column: check_sink_schema names it
        if col.format == JSON_FORMAT:
            writers.append(_json_writer(col, options, field, topic))
            continue
        if col.format == PROTOBUF_FORMAT:
            writers.append(_protobuf_writer(col, options, field, topic))
            continue
        writer = _writer_schema(col, options, field, topic)
        check_fits(writer, _arrow_type(field))
        writers.append(writer)
    return WritePayload(tuple(writers))


# -- the executors -----------------------------------------------------------------------------

_LOCK = threading.Lock()
_ENCODERS: dict[tuple[str, int | None, pa.DataType], AvroEncoder] = {}
#: Bounds of the per-process caches (a long-lived executor sees many queries' schemas).
_MAX_CACHED = 64


def _encoder(writer: WriterSchema, arrow_type: pa.DataType) -> AvroEncoder:
    """This process's encoder of ``writer`` for ``arrow_type`` (the plan is built once)."""
    key = (writer.schema_json, writer.schema_id, arrow_type)
    with _LOCK:
        encoder = _ENCODERS.get(key)
    if encoder is None:
        encoder = check_fits(writer, arrow_type)
        with _LOCK:
            if len(_ENCODERS) >= _MAX_CACHED:
                _ENCODERS.clear()
            _ENCODERS[key] = encoder
    return encoder


def _raw_bytes(writer: WriterSchema) -> bool:
    """Confluent's quirk: a framed top-level ``"bytes"`` value is written raw."""
    if not writer.framed:
        return False
    return raw_in_framing(parsed_schema(writer.schema_json))


def _task_text() -> str:
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
    except ImportError:  # pragma: no cover - pyspark is a dependency
        context = None
    return "" if context is None else f" of Spark partition {context.partitionId()}"


def encode_column(writer: WriterSchema, values: pa.Array, batch_index: int = 0) -> pa.Array:
    """Encode (and frame) one column of one batch.

    Args:
        writer: the column's writer schema.
        values: the column (any type the schema can be written from; nulls allowed).
        batch_index: the batch's position in the task, for messages.

    Returns:
        A ``binary`` array of the same length: the framed (or plain) payloads, null where
        ``values`` is null.

    Raises:
        RecordFormatError: a row does not fit the schema (naming the column, the row, the
            schema id, the field's path and why); nothing is returned then.
        ConfigError: the column's type cannot be written with the schema at all.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    encoder = _encoder(writer, values.type)
    prefix = b"" if writer.schema_id is None else framing.build(writer.schema_id, b"")
    if _raw_bytes(writer):
        valid = None
        present = values
        if values.null_count:
            valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            present = values.filter(pa.array(valid))
        payloads = [prefix + bytes(v) for v in present.to_pylist()]
        if valid is None:
            return pa.array(payloads, type=pa.binary())
        it = iter(payloads)
        return pa.array([next(it) if ok else None for ok in valid.tolist()], type=pa.binary())
    try:
        # one binary array, framed, nulls passed through (the Cython plan when built)
        return encoder.encode_column(values, prefix)
    except AvroEncodeError as exc:
        raise RecordFormatError(
            f"cannot encode the {writer.column} of row {exc.index} of batch {batch_index}"
            f"{_task_text()} as Avro with {writer.describe()}: {exc.reason} at "
            f"{exc.path or '/'}; nothing of this batch was written",
            column=writer.column,
            schema_id=writer.schema_id,
        ) from None


_JSON_ENCODERS: dict[pa.DataType, JsonEncoder] = {}


def encode_json_column(writer: WriterSchema, values: pa.Array, batch_index: int = 0) -> pa.Array:
    """One column of one batch as ``to_json`` writes it (:class:`JsonEncoder`).

    Returns:
        A ``binary`` array of the same length: UTF-8 documents, null where ``values`` is null.

    Raises:
        RecordFormatError: a value ``to_json`` writes differently from what is written here
            (a year outside 1..9999), naming the column, row and batch.
        ConfigError: the column's type is not written as JSON.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    with _LOCK:
        encoder = _JSON_ENCODERS.get(values.type)
    if encoder is None:
        try:
            encoder = JsonEncoder(values.type)
        except JsonSchemaError as exc:
            raise ConfigError(
                f"the {writer.column} column cannot be written as JSON: {exc}"
            ) from None
        with _LOCK:
            if len(_JSON_ENCODERS) >= _MAX_CACHED:
                _JSON_ENCODERS.clear()
            _JSON_ENCODERS[values.type] = encoder
    try:
        documents = encoder.encode(values)
    except JsonEncodeError as exc:
        raise RecordFormatError(
            f"cannot encode the {writer.column} of row {exc.index} of batch {batch_index}"
            f"{_task_text()} as JSON: {exc.reason}; nothing of this batch was written",
            column=writer.column,
        ) from None
    if writer.schema_id is not None:
        prefix = framing.build(writer.schema_id, b"")
        documents = [None if d is None else prefix + d for d in documents]
    return pa.array(documents, type=pa.binary())


_PROTOBUF_ENCODERS: dict[tuple[bytes, str, pa.DataType], ProtobufEncoder] = {}


def encode_protobuf_column(
    writer: WriterSchema, values: pa.Array, batch_index: int = 0
) -> pa.Array:
    """One column of one batch as Protobuf messages (:class:`ProtobufEncoder`), framed with
    the schema id and message indexes when ``writer`` has an id.

    Returns:
        A ``binary`` array of the same length, null where ``values`` is null.

    Raises:
        RecordFormatError: a value does not fit the message (naming the column, the row, the
            batch, the field's path and why); nothing of the batch is returned then.
        ConfigError: the column's type does not fit the message at all.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    assert writer.descriptor_set is not None and writer.message_name is not None
    key = (writer.descriptor_set, writer.message_name, values.type)
    with _LOCK:
        encoder = _PROTOBUF_ENCODERS.get(key)
    if encoder is None:
        encoder = check_protobuf_fits(writer, values.type)
        with _LOCK:
            if len(_PROTOBUF_ENCODERS) >= _MAX_CACHED:
                _PROTOBUF_ENCODERS.clear()
            _PROTOBUF_ENCODERS[key] = encoder
    prefix = b""
    if writer.schema_id is not None:
        prefix = protobuf_framing.build(writer.schema_id, writer.indexes, b"")
    try:
        return encoder.encode(values, prefix)
    except ProtobufEncodeError as exc:
        raise RecordFormatError(
            f"cannot encode the {writer.column} of row {exc.index} of batch {batch_index}"
            f"{_task_text()} as Protobuf {writer.describe()}: {exc.reason} at {exc.path}; "
            "nothing of this batch was written",
            column=writer.column,
            schema_id=writer.schema_id,
        ) from None


def encode_batch(
    batch: pa.RecordBatch, payload: WritePayload, batch_index: int = 0
) -> pa.RecordBatch:
    """``batch`` with each formatted column replaced by its encoded ``binary`` column (every
    column encoded before the batch is returned).

    Raises:
        RecordFormatError: see :func:`encode_column` and :func:`encode_json_column`.
    """
    columns = dict(zip(batch.schema.names, batch.columns, strict=True))
    for writer in payload.writers:
        values = columns.get(writer.column)
        if values is None:
            continue
        if writer.format == JSON_FORMAT:
            columns[writer.column] = encode_json_column(writer, values, batch_index)
        elif writer.format == PROTOBUF_FORMAT:
            columns[writer.column] = encode_protobuf_column(writer, values, batch_index)
        else:
            columns[writer.column] = encode_column(writer, values, batch_index)
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def encode_batches(
    batches: Iterator[pa.RecordBatch], payload: WritePayload | None
) -> Iterator[pa.RecordBatch]:
    """:func:`encode_batch` over a task's batches (as they come; ``payload`` None: as is)."""
    if payload is None or not payload.writers:
        yield from batches
        return
    for index, batch in enumerate(batches):
        yield encode_batch(batch, payload, index) if batch.num_rows else batch
