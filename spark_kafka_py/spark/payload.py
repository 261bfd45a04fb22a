"""Payload formats of the ``key`` and ``value`` columns: ``valueFormat`` / ``keyFormat``.

With ``valueFormat=avro`` a read's ``value`` column is the Avro schema's Spark type (a struct
for a record) instead of ``binary``, decoded on the executors in the pass that turns fetched
record batches into Arrow; a write encodes it. This module is the Spark layer's side of that:

* :func:`parse_payload_options`: the options (``valueFormat``, ``keyFormat``, ``mode``,
  ``includeRawBytes``, ``avroSchema``, ``value.schema.id``/``.version``, the subject name
  strategies, ``schema.registry.*``), checked once, picklable.
* :func:`resolve_read`: on the driver, at planning time, the reader schema of each formatted
  column: ``avroSchema`` as given, else the registry's schema of ``value.schema.id``, else
  version ``value.schema.version`` (or the latest) of the column's subject. The DataFrame's
  column type is that schema mapped as spark-avro's ``SchemaConverters`` maps it
  (:func:`spark_kafka_py.formats.avro.types.to_spark`).
* :func:`decode_batch`: on an executor, a fetched batch (Spark's Kafka schema, ``value
  binary``) -> the same batch with the formatted columns decoded. Each record names its writer
  schema by the id in Confluent's framing (magic byte 0, 4-byte id) or in a
  ``__value_schema_id`` / ``__key_schema_id`` header (Confluent 8, an id or a GUID); the
  executor fetches each writer schema once per process (the registry client's bounded cache)
  and resolves it to the reader schema by Avro's rules (a decoder per writer/reader pair,
  kept in a bounded per-process cache).

Without ``schema.registry.url`` the values are plain Avro datums of ``avroSchema`` (no framing),
as spark-avro's ``from_avro``/``to_avro`` read and write them.

``valueFormat=json`` reads documents as ``from_json``; ``valueFormat=protobuf`` reads messages
as spark-protobuf's ``from_protobuf`` (``messageName`` of ``descFilePath`` / ``descriptorSet``,
or of the registry's schema; framed values' message indexes are resolved against the writer
schema and must name the reader's message). docs/formats.md describes all three.

Bad records: ``mode=FAILFAST`` (the default, as spark-avro's) fails the task with a
:class:`~spark_kafka_py.errors.RecordFormatError` naming the column, topic-partition, offset
and schema id; ``mode=PERMISSIVE`` makes the column null, logs one warning per task with the
count and the first bad record, and with ``includeRawBytes=true`` the record's bytes stay in
``value_raw`` / ``key_raw``.

Sources: Confluent's wire format and ``SubjectNameStrategy`` (Schema Registry docs, "Formats,
Serializers, and Deserializers"), spark-avro's ``from_avro`` options (``mode``,
``avroSchema``) and ``SchemaConverters``, the Avro 1.12 specification ("Schema Resolution").
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import logging
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf import descriptor_pb2  # type: ignore[import-untyped]
from pyspark.sql.types import StructField, StructType

from spark_kafka_py.client.retry import Backoff, Retries
from spark_kafka_py.errors import ConfigError, RecordFormatError, SchemaRegistryError
from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro.column import (
    Keyed,
    SchemaKey,
    decode_framed_column,
    decode_keyed,
    split_framed,
)
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.schema import Record, Schema, parse_schema
from spark_kafka_py.formats.avro.types import to_spark
from spark_kafka_py.formats.ddl import DdlError, parse_schema_text
from spark_kafka_py.formats.errors import (
    AvroDecodeError,
    FormatError,
    FramingError,
    JsonDecodeError,
    JsonSchemaError,
    ProtobufDecodeError,
    ProtobufSchemaError,
    SchemaError,
    UnknownSchemaError,
)
from spark_kafka_py.formats.json.decode import JsonDecoder, Mode
from spark_kafka_py.formats.json.options import (
    DATETIME_OPTIONS,
    FEATURE_OPTIONS,
    JsonOptionError,
    JsonOptions,
    json_options,
)
from spark_kafka_py.formats.json.schema import to_spark as json_to_spark
from spark_kafka_py.formats.protobuf import framing as pb_framing
from spark_kafka_py.formats.protobuf.decoder import ProtobufDecoder
from spark_kafka_py.formats.protobuf.descriptors import (
    MAX_SCHEMA_BYTES,
    ProtobufSchema,
    parse_base64_file_descriptor,
    parse_descriptor_set,
    parse_proto,
)
from spark_kafka_py.formats.protobuf.types import ProtobufOptions
from spark_kafka_py.formats.protobuf.types import to_spark as protobuf_to_spark
from spark_kafka_py.registry import OPTIONS, option
from spark_kafka_py.schema_registry.cache import LruCache
from spark_kafka_py.schema_registry.client import AVRO, SchemaRegistryClient
from spark_kafka_py.schema_registry.client import Schema as RegistrySchema
from spark_kafka_py.schema_registry.settings import RegistrySettings, parse_settings

log = logging.getLogger(__name__)

__all__ = [
    "BINARY",
    "ColumnFormat",
    "PayloadOptions",
    "ReadPayload",
    "ReaderSchema",
    "decode_batch",
    "parse_payload_options",
    "registry_client",
    "resolve_read",
    "subject_name",
]

BINARY = "binary"
#: The registry's ``schemaType`` of JSON Schemas.
JSON_SCHEMA = "JSON"
AVRO_FORMAT = "avro"
JSON_FORMAT = "json"
PROTOBUF_FORMAT = "protobuf"
#: The registry's ``schemaType`` of Protobuf schemas.
PROTOBUF_SCHEMA = "PROTOBUF"

#: spark-protobuf's ``from_protobuf`` options (its ``ProtobufOptions``), taken under their own
#: names by protobuf columns; ``mode`` is shared with the other formats.
PROTOBUF_OPTION_NAMES = (
    "emit.default.values",
    "enums.as.ints",
    "upcast.unsigned.ints",
    "unwrap.primitive.wrapper.types",
    "retain.empty.message.types",
    "recursive.fields.max.depth",
    "convert.any.fields.to.json",
)
#: ``from_json``'s options read by JSON columns (:mod:`spark_kafka_py.formats.json.options`),
#: shared by the key and the value as ``mode`` is; reads only (the sink writes ``to_json``'s
#: default formats).
JSON_OPTION_NAMES = (*FEATURE_OPTIONS, *DATETIME_OPTIONS, "locale")
#: ``from_json``'s options accepted with no effect here (schema inference, files): a warning
#: says so.
JSON_NO_EFFECT_OPTIONS = (
    "primitivesAsString",
    "prefersDecimal",
    "samplingRatio",
    "dropFieldIfAllNull",
    "multiLine",
    "lineSep",
    "encoding",
)
#: The locales whose month names are read here (Spark's default ``en-US``).
_JSON_LOCALES = ("en-us", "en")

#: The largest ``recursive.fields.max.depth`` spark-protobuf accepts.
MAX_RECURSIVE_DEPTH = 10

#: The subject name strategies (Confluent's ``io.confluent.kafka.serializers.subject.*``).
STRATEGIES = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
_STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."

#: Field metadata key under which a formatted column carries its reader schema through Spark
#: (the schema PySpark hands ``reader(schema)`` is the one ``schema()`` returned).
READER_SCHEMA_METADATA = "spark_kafka_py.avroSchema"
READER_SCHEMA_ID_METADATA = "spark_kafka_py.schemaId"


@dataclass(frozen=True)
class ColumnFormat:
    """How one column (``key`` or ``value``) is formatted.

    Attributes:
        column: ``"key"`` or ``"value"``.
        format: ``"avro"``, ``"json"`` or ``"protobuf"``.
        avro_schema: the schema JSON of ``avroSchema`` / ``key.avroSchema``, or None.
        schema_id: ``value.schema.id`` / ``key.schema.id``, or None.
        schema_version: ``value.schema.version`` / ``key.schema.version``, or None.
        strategy: the subject name strategy, one of :data:`STRATEGIES`.
        spark_schema: ``json``: the struct of ``valueSchema`` / ``keySchema`` as Spark's JSON
            text (parsed from DDL or ``StructType`` JSON, all nullable), or None.
        message_name: ``protobuf``: ``messageName`` / ``key.messageName`` as given (a full
            or a package-less name), or None (with a registry: the schema's first message).
        descriptor_set: ``protobuf``: the serialized ``FileDescriptorSet`` of ``descFilePath``
            (read on the driver) or ``descriptorSet`` (base64-decoded), checked to hold the
            message; None: the schema comes from the registry.
        protobuf: ``protobuf``: spark-protobuf's options (``mode`` as the read's, FAILFAST
            unless ``mode=PERMISSIVE``), None for the other formats.
        descriptor_option: ``protobuf``: the option that gave :attr:`descriptor_set`
            (``[key.]descFilePath`` or ``[key.]descriptorSet``), for messages.
    """

    column: str
    format: str
    avro_schema: str | None
    schema_id: int | None
    schema_version: int | None
    strategy: str
    spark_schema: str | None = None
    message_name: str | None = None
    descriptor_set: bytes | None = None
    protobuf: ProtobufOptions | None = None
    descriptor_option: str | None = None

    @property
    def is_key(self) -> bool:
        return self.column == "key"

    @property
    def option_prefix(self) -> str:
        """``key.`` or ``value.``: how the column's options are named."""
        return f"{self.column}."

    @property
    def schema_option(self) -> str:
        if self.format == JSON_FORMAT:
            return f"{self.column}Schema"
        if self.format == PROTOBUF_FORMAT:
            if self.descriptor_option is not None:
                return self.descriptor_option
            return "key.descFilePath" if self.is_key else "descFilePath"
        return "key.avroSchema" if self.is_key else "avroSchema"

    def protobuf_schema(self) -> ProtobufSchema | None:
        """``protobuf``: :attr:`descriptor_set` parsed (None without one).

        Raises:
            ProtobufSchemaError: the set does not parse (checked by
                :func:`parse_payload_options` already).
        """
        if self.descriptor_set is None:
            return None
        return parse_descriptor_set(self.descriptor_set)


@dataclass(frozen=True)
class PayloadOptions:
    """The payload options of a read or a write, checked (picklable).

    Attributes:
        key, value: the formatted columns, None for ``binary``.
        registry: the registry's settings, None without ``schema.registry.url``.
        permissive: ``mode=PERMISSIVE`` (given; the default of Avro columns).
        mode: ``mode`` as given (lower case), None when unset: Avro columns are then
            ``FAILFAST`` (spark-avro's default), JSON columns ``PERMISSIVE`` (``from_json``'s).
        corrupt_column: ``columnNameOfCorruptRecord`` (JSON columns).
        json: ``from_json``'s other options (JSON columns, reads): formats, zone, Jackson's
            read features.
        include_raw: ``includeRawBytes``.
        auto_register: ``auto.register.schemas`` (writes).
        use_latest: ``use.latest.version`` (writes).
    """

    key: ColumnFormat | None = None
    value: ColumnFormat | None = None
    registry: RegistrySettings | None = None
    permissive: bool = False
    include_raw: bool = False
    auto_register: bool = True
    use_latest: bool = False
    mode: str | None = None
    corrupt_column: str = "_corrupt_record"
    json: JsonOptions = field(default_factory=JsonOptions)

    def permissive_for(self, col: ColumnFormat | str) -> bool:
        """Whether ``col`` (a column format, or a format name) decodes ``PERMISSIVE``ly."""
        fmt = col if isinstance(col, str) else col.format
        if self.mode is None:
            return fmt == JSON_FORMAT
        return self.mode == "permissive"

    @property
    def columns(self) -> tuple[ColumnFormat, ...]:
        """The formatted columns, key first."""
        return tuple(c for c in (self.key, self.value) if c is not None)

    @property
    def active(self) -> bool:
        return bool(self.columns)


#: The payload options that are not ``schema.registry.*`` (lower case).
_FORMAT_KEYS = frozenset(
    k.lower()
    for k in (
        "valueFormat",
        "keyFormat",
        "mode",
        "includeRawBytes",
        "value.schema.id",
        "key.schema.id",
        "value.schema.version",
        "key.schema.version",
        "auto.register.schemas",
        "use.latest.version",
        "valueSchema",
        "keySchema",
        "columnNameOfCorruptRecord",
        "messageName",
        "key.messageName",
        "descFilePath",
        "key.descFilePath",
        "descriptorSet",
        "key.descriptorSet",
        *PROTOBUF_OPTION_NAMES,
        *JSON_OPTION_NAMES,
        *JSON_NO_EFFECT_OPTIONS,
    )
)


def _names(column: str) -> tuple[str, str, str]:
    """A column's ``messageName``, ``descFilePath`` and ``descriptorSet`` option names."""
    if column == "key":
        return "key.messageName", "key.descFilePath", "key.descriptorSet"
    return "messageName", "descFilePath", "descriptorSet"


def _protobuf_options(opts: Mapping[str, str]) -> ProtobufOptions:
    """spark-protobuf's options of a protobuf column (``mode`` and
    :data:`PROTOBUF_OPTION_NAMES`), each checked by the option registry.

    Raises:
        ConfigError: a value that is not valid, naming the option.
    """
    depth = int(option("recursive.fields.max.depth").read(opts))
    if depth > MAX_RECURSIVE_DEPTH:
        raise ConfigError(
            f"Option 'recursive.fields.max.depth' must be -1, 0 (no recursion) or 1.."
            f"{MAX_RECURSIVE_DEPTH} (as spark-protobuf), got {depth}"
        )
    mode = option("mode").read(opts)
    return ProtobufOptions(
        mode="PERMISSIVE" if mode == "permissive" else "FAILFAST",
        recursive_fields_max_depth=depth,
        emit_default_values=bool(option("emit.default.values").read(opts)),
        enums_as_ints=bool(option("enums.as.ints").read(opts)),
        upcast_unsigned_ints=bool(option("upcast.unsigned.ints").read(opts)),
        unwrap_primitive_wrapper_types=bool(option("unwrap.primitive.wrapper.types").read(opts)),
        retain_empty_message_types=bool(option("retain.empty.message.types").read(opts)),
        convert_any_fields_to_json=bool(option("convert.any.fields.to.json").read(opts)),
    )


def _descriptor_bytes(opts: Mapping[str, str], column: str) -> bytes | None:
    """The ``FileDescriptorSet`` bytes of ``[key.]descFilePath`` (read here, on the driver) or
    ``[key.]descriptorSet`` (base64), None when neither is given.

    Raises:
        ConfigError: both given, an unreadable or over-large file, text that is not base64.
    """
    _, path_name, inline_name = _names(column)
    path = option(path_name).read(opts)
    inline = option(inline_name).read(opts)
    if path is not None and inline is not None:
        raise ConfigError(
            f"Options '{path_name}' and '{inline_name}' both give the {column}'s descriptor "
            "set: set one"
        )
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_SCHEMA_BYTES + 1)
        except OSError as exc:
            raise ConfigError(
                f"Option '{path_name}': cannot read the descriptor set {path!r}: "
                f"{exc.strerror or exc}"
            ) from None
        if len(data) > MAX_SCHEMA_BYTES:
            raise ConfigError(
                f"Option '{path_name}': the descriptor set {path!r} is larger than "
                f"{MAX_SCHEMA_BYTES} bytes"
            )
        return data
    if inline is not None:
        try:
            data = base64.b64decode("".join(str(inline).split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ConfigError(
                f"Option '{inline_name}' is not base64 (a serialized FileDescriptorSet, as "
                f"spark-protobuf's binaryDescriptorSet): {exc}"
            ) from None
        if len(data) > MAX_SCHEMA_BYTES:
            raise ConfigError(f"Option '{inline_name}' is larger than {MAX_SCHEMA_BYTES} bytes")
        return data
    return None


def _protobuf_column(
    opts: Mapping[str, str], column: str, *, writing: bool, registry: bool
) -> ColumnFormat:
    """``protobuf``: the message (``messageName``) of a descriptor set (``descFilePath`` /
    ``descriptorSet``), else (with a registry) of the subject's schema.

    Raises:
        ConfigError: Avro or JSON options given; no ``messageName`` without a registry; no
            descriptor set without a registry; both ``descFilePath`` and ``descriptorSet``; an
            unreadable file or bad base64; a set that does not parse or lacks the message;
            the descriptor set together with ``[key.]schema.id`` / ``.version``.
    """
    prefix = f"{column}."
    name_opt, path_opt, inline_opt = _names(column)
    for other in ("key.avroSchema" if column == "key" else "avroSchema", f"{column}Schema"):
        if other.lower() in opts:
            raise ConfigError(
                f"Option '{other}' is not for '{column}Format'='protobuf'; give the {column}'s "
                f"message with '{name_opt}' and '{path_opt}' or '{inline_opt}' (or a registry)"
            )
    pinned = [n for n in (f"{prefix}schema.id", f"{prefix}schema.version") if n.lower() in opts]
    if pinned and not registry:
        raise ConfigError(f"Option '{pinned[0]}' needs 'schema.registry.url'")
    if len(pinned) > 1:
        raise ConfigError(
            f"Options '{pinned[0]}' and '{pinned[1]}' both choose the {column}'s schema: set one"
        )
    message_name = option(name_opt).read(opts)
    if message_name is not None and not str(message_name).strip():
        raise ConfigError(f"Option '{name_opt}' is empty")
    data = _descriptor_bytes(opts, column)
    given = path_opt if path_opt.lower() in opts else inline_opt
    if data is not None and pinned:
        raise ConfigError(
            f"Options '{given}' and '{pinned[0]}' both choose the {column}'s schema: set one"
        )
    if not registry:
        if message_name is None:
            raise ConfigError(
                f"Option '{column}Format'='protobuf' needs '{name_opt}' (the message, as "
                "spark-protobuf's messageName) without 'schema.registry.url'"
            )
        if data is None:
            raise ConfigError(
                f"Option '{column}Format'='protobuf' needs '{path_opt}' (a binary "
                f"FileDescriptorSet file) or '{inline_opt}' (the same, base64) without "
                "'schema.registry.url'"
            )
    if data is not None:
        try:
            parse_descriptor_set(data).message(message_name)
        except ProtobufSchemaError as exc:
            what = (
                f"has no message {message_name!r}"
                if message_name is not None and "no message" in exc.reason
                else f"is not a usable FileDescriptorSet: {exc}"
            )
            raise ConfigError(f"Option '{given}': the descriptor set {what}") from None
    del writing  # reads and writes take the same options
    return ColumnFormat(
        column=column,
        format=PROTOBUF_FORMAT,
        avro_schema=None,
        **_registry_choice(opts, prefix),
        message_name=message_name,
        descriptor_set=data,
        descriptor_option=given if data is not None else None,
        protobuf=_protobuf_options(opts),
    )


def _strategy(raw: str, name: str) -> str:
    text = raw.strip()
    if text.startswith(_STRATEGY_PACKAGE):
        text = text[len(_STRATEGY_PACKAGE) :]
    for strategy in STRATEGIES:
        if strategy.lower() == text.lower():
            return strategy
    raise ConfigError(
        f"Option '{name}' must be one of {', '.join(STRATEGIES)} (or Confluent's class name "
        f"{_STRATEGY_PACKAGE}<name>), got {raw!r}"
    )


class _RegistryChoice(TypedDict):
    schema_id: int | None
    schema_version: int | None
    strategy: str


def _registry_choice(opts: Mapping[str, str], prefix: str) -> _RegistryChoice:
    """One column's registry options (``[key.]schema.id``, ``[key.]schema.version``,
    ``[key.]subject.name.strategy``) as :class:`ColumnFormat` fields, for every format.

    Raises:
        ConfigError: an option's value is not valid (naming the option)."""
    return {
        "schema_id": option(f"{prefix}schema.id").read(opts),
        "schema_version": option(f"{prefix}schema.version").read(opts),
        "strategy": _strategy(
            str(opts.get(f"{prefix}subject.name.strategy", "TopicNameStrategy")),
            f"{prefix}subject.name.strategy",
        ),
    }


def _json_column(
    opts: Mapping[str, str], column: str, *, writing: bool, registry: bool
) -> ColumnFormat:
    """``json``: the struct of ``valueSchema`` / ``keySchema``, else (with a registry) the
    subject's JSON Schema; a write writes ``to_json`` of the column, whatever its type."""
    prefix = f"{column}."
    schema_name = f"{column}Schema"
    avro_name = "key.avroSchema" if column == "key" else "avroSchema"
    if avro_name.lower() in opts:
        raise ConfigError(
            f"Option '{avro_name}' is for '{column}Format'='avro'; with '{column}Format'='json' "
            f"give the {column}'s struct in '{schema_name}'"
        )
    pinned = [n for n in (f"{prefix}schema.id", f"{prefix}schema.version") if n.lower() in opts]
    if pinned and not registry:
        raise ConfigError(f"Option '{pinned[0]}' needs 'schema.registry.url'")
    text = option(schema_name).read(opts)
    if text is not None and pinned:
        raise ConfigError(
            f"Options '{schema_name}' and '{pinned[0]}' both choose the {column}'s schema: set one"
        )
    if len(pinned) > 1:
        raise ConfigError(
            f"Options '{pinned[0]}' and '{pinned[1]}' both choose the {column}'s schema: set one"
        )
    spark_schema = None
    if text is not None:
        spark_schema = json.dumps(_json_reader_type(text, schema_name), separators=(",", ":"))
    elif not writing and not registry:
        raise ConfigError(
            f"Option '{column}Format'='json' needs '{schema_name}' (the {column}'s struct as "
            "Spark DDL ('a INT, b STRING') or StructType JSON, as from_json's schema) or "
            "'schema.registry.url' (framed documents, the subject's JSON Schema)"
        )
    return ColumnFormat(
        column=column,
        format=JSON_FORMAT,
        avro_schema=None,
        **_registry_choice(opts, prefix),
        spark_schema=spark_schema,
    )


def _as_nullable(t: object) -> object:
    """Spark's ``DataType.asNullable`` on Spark JSON (``from_json``'s result type)."""
    if isinstance(t, dict):
        kind = t.get("type")
        if kind == "struct":
            return {
                "type": "struct",
                "fields": [
                    {**f, "type": _as_nullable(f.get("type")), "nullable": True}
                    for f in t.get("fields", [])
                ],
            }
        if kind == "array":
            return {**t, "elementType": _as_nullable(t.get("elementType")), "containsNull": True}
        if kind == "map":
            return {
                **t,
                "keyType": _as_nullable(t.get("keyType")),
                "valueType": _as_nullable(t.get("valueType")),
                "valueContainsNull": True,
            }
    return t


def _json_reader_type(text: str, name: str) -> object:
    """The struct ``text`` gives (DDL or ``StructType`` JSON), nullable as ``from_json``'s
    result, checked readable from JSON here.

    Raises:
        ConfigError: naming ``name``: not a struct type, or a type not read from JSON here.
    """
    try:
        spark_type = _as_nullable(parse_schema_text(text))
    except DdlError as exc:
        raise ConfigError(f"Option '{name}' is not a Spark schema: {exc}") from None
    try:
        JsonDecoder(spark_type)
    except JsonSchemaError as exc:
        raise ConfigError(
            f"Option '{name}' has a type that is not read from JSON here: {exc} (read: "
            "struct, array, map with string keys, long, int, short, byte, double, float, "
            "boolean, string, date, timestamp)"
        ) from None
    return spark_type


def _column(
    opts: Mapping[str, str], column: str, *, writing: bool = False, registry: bool = False
) -> ColumnFormat | None:
    fmt = option(f"{column}Format").read(opts)
    prefix = f"{column}."
    schema_name = "key.avroSchema" if column == "key" else "avroSchema"
    if fmt == PROTOBUF_FORMAT:
        return _protobuf_column(opts, column, writing=writing, registry=registry)
    for pb_name in _names(column):
        if pb_name.lower() in opts:
            raise ConfigError(
                f"Option '{pb_name}' needs '{column}Format'='protobuf' (the {column} column is "
                f"{fmt} without it)"
            )
    if fmt == JSON_FORMAT:
        return _json_column(opts, column, writing=writing, registry=registry)
    json_name = f"{column}Schema"
    if json_name.lower() in opts:
        raise ConfigError(
            f"Option '{json_name}' needs '{column}Format'='json' (the {column} column is "
            f"{fmt} without it)"
        )
    given = [
        n
        for n in (schema_name, f"{prefix}schema.id", f"{prefix}schema.version")
        if n.lower() in opts
    ]
    if fmt == BINARY:
        if given:
            raise ConfigError(
                f"Option '{given[0]}' needs '{column}Format'='avro' (the {column} column is "
                "binary without it)"
            )
        return None
    if len(given) > 1:
        raise ConfigError(
            f"Options {' and '.join(repr(g) for g in given)} both choose the {column}'s "
            "schema: set one"
        )
    avro_schema = option(schema_name).read(opts)
    if avro_schema is not None:
        try:
            parse_schema(avro_schema)
        except (SchemaError, ValueError) as exc:
            raise ConfigError(f"Option '{schema_name}' is not a valid Avro schema: {exc}") from None
    return ColumnFormat(
        column=column,
        format=fmt,
        avro_schema=avro_schema,
        **_registry_choice(opts, prefix),
    )


def parse_payload_options(opts: Mapping[str, str], *, writing: bool = False) -> PayloadOptions:
    """Read the payload options of a read or write (keys lower-cased).

    Args:
        opts: the options, keys lower-cased.
        writing: a write's options: ``avro`` without a registry and without ``avroSchema``
            writes with the schema derived from the column's type (a read has no type to
            derive from, so it needs one of the two).

    Raises:
        ConfigError: a bad value (naming the option); a schema option without its column's
            ``*Format=avro`` (or a Protobuf option without ``protobuf``, an Avro or JSON
            option with it; see :func:`_protobuf_column`); two options choosing one column's
            schema; a read's ``avro`` without ``schema.registry.url`` and without
            ``avroSchema``; a pinned id or
            version without a registry; ``use.latest.version`` with ``auto.register.schemas``.
    """
    for o in OPTIONS:  # typed values checked by the registry's validators, naming the option
        if o.key in opts and (o.key in _FORMAT_KEYS or o.key.startswith("schema.registry.")):
            o.read(opts)
    has_registry = bool(opts.get("schema.registry.url", "").strip())
    key = _column(opts, "key", writing=writing, registry=has_registry)
    value = _column(opts, "value", writing=writing, registry=has_registry)
    registry = parse_settings(opts) if has_registry else None
    if not any(c is not None and c.format == PROTOBUF_FORMAT for c in (key, value)):
        for name in PROTOBUF_OPTION_NAMES:
            if name in opts:
                raise ConfigError(
                    f"Option '{name}' is spark-protobuf's: it needs 'valueFormat' or "
                    "'keyFormat'='protobuf'"
                )
    for col in (key, value):
        if col is None or registry is not None or col.format in (JSON_FORMAT, PROTOBUF_FORMAT):
            continue
        if col.avro_schema is None and not writing:
            raise ConfigError(
                f"Option '{col.column}Format'='avro' needs 'schema.registry.url' (framed "
                f"values, schemas from the registry) or '{col.schema_option}' (plain Avro "
                "values of that schema)"
            )
        pinned = col.schema_id is not None or col.schema_version is not None
        if pinned:
            raise ConfigError(
                f"Options '{col.option_prefix}schema.id' and '{col.option_prefix}schema.version' "
                "need 'schema.registry.url'"
            )
    auto_register = bool(option("auto.register.schemas").read(opts))
    use_latest = bool(option("use.latest.version").read(opts))
    if use_latest and "auto.register.schemas" not in opts:
        auto_register = False  # use.latest.version alone means: encode with the latest
    if use_latest and auto_register:
        raise ConfigError(
            "Options 'use.latest.version'=true and 'auto.register.schemas'=true conflict "
            "(as in Confluent's serializer): set 'auto.register.schemas'=false"
        )
    json_opts = _json_options(opts, key, value, writing=writing)
    mode = option("mode").read(opts)
    return PayloadOptions(
        key=key,
        value=value,
        registry=registry,
        permissive=mode == "permissive",
        include_raw=bool(option("includeRawBytes").read(opts)),
        auto_register=auto_register,
        use_latest=use_latest,
        mode=mode,
        corrupt_column=str(option("columnNameOfCorruptRecord").read(opts)),
        json=json_opts,
    )


def _json_options(
    opts: Mapping[str, str],
    key: ColumnFormat | None,
    value: ColumnFormat | None,
    *,
    writing: bool,
) -> JsonOptions:
    """``from_json``'s options (:data:`JSON_OPTION_NAMES`) of a read with a JSON column,
    checked; the no-effect ones (:data:`JSON_NO_EFFECT_OPTIONS`) warned about.

    Raises:
        ConfigError: one given without a JSON column (reads); a value not read here (a
            pattern letter, a zone, a locale), naming the option.
    """
    given = [n for n in (*JSON_OPTION_NAMES, *JSON_NO_EFFECT_OPTIONS) if n.lower() in opts]
    if writing or not given:
        return JsonOptions()
    if not any(c is not None and c.format == JSON_FORMAT for c in (key, value)):
        raise ConfigError(
            f"Option '{given[0]}' is from_json's: it needs 'valueFormat' or 'keyFormat'='json'"
        )
    locale = str(option("locale").read(opts))
    if locale.strip().lower().replace("_", "-") not in _JSON_LOCALES:
        raise ConfigError(
            f"Option 'locale' must be 'en-US' here (month names are read in English), "
            f"got {locale!r}"
        )
    for name in JSON_NO_EFFECT_OPTIONS:
        if name.lower() in opts:
            log.warning(
                "Option '%s' has no effect here: %s",
                name,
                option(name).doc.removeprefix("`json`: "),
            )
    try:
        return json_options({k: opts[k.lower()] for k in JSON_OPTION_NAMES if k.lower() in opts})
    except JsonOptionError as exc:
        raise ConfigError(str(exc)) from None


def subject_name(strategy: str, topic: str | None, *, is_key: bool, record: str | None) -> str:
    """The subject a column's schema is registered under (Confluent's strategies).

    Args:
        strategy: one of :data:`STRATEGIES`.
        topic: the topic (``TopicNameStrategy``, ``TopicRecordNameStrategy``).
        is_key: the key's subject (``<topic>-key``) rather than the value's.
        record: the record's full name (``RecordNameStrategy``, ``TopicRecordNameStrategy``).

    Raises:
        ConfigError: the strategy needs a topic or a record name that is not known.
    """
    column = "key" if is_key else "value"
    if strategy != "TopicNameStrategy" and record is None:
        raise ConfigError(
            f"{column}.subject.name.strategy={strategy} names the subject after the record: "
            f"give the {column}'s schema ('{'key.avroSchema' if is_key else 'avroSchema'}' or "
            f"'{column}.schema.id')"
        )
    if strategy != "RecordNameStrategy" and topic is None:
        raise ConfigError(
            f"{column}.subject.name.strategy={strategy} names the subject after the topic, and "
            f"this query reads several topics or a pattern: subscribe to one topic or give the "
            f"{column}'s schema ('{'key.avroSchema' if is_key else 'avroSchema'}' or "
            f"'{column}.schema.id')"
        )
    if strategy == "TopicNameStrategy":
        return f"{topic}-{column}"
    if strategy == "RecordNameStrategy":
        assert record is not None
        return record
    return f"{topic}-{record}"


# -- the registry client and decoders, one per process ---------------------------------------

_CLIENTS: dict[RegistrySettings, SchemaRegistryClient] = {}
_LOCK = threading.Lock()


def registry_client(settings: RegistrySettings) -> SchemaRegistryClient:
    """This process's client of the registry ``settings`` names (shared by its tasks), with
    the project's retry policy (:class:`~spark_kafka_py.client.retry.Retries` under
    ``schema.registry.retry.timeout.ms``, KIP-580 backoff)."""
    with _LOCK:
        client = _CLIENTS.get(settings)
        if client is None:

            def retries(what: str) -> Retries:
                return Retries(
                    what,
                    settings.retry_timeout_ms,
                    timeout_option="schema.registry.retry.timeout.ms",
                    backoff=Backoff(settings.retry_backoff_ms, settings.retry_backoff_max_ms),
                )

            client = SchemaRegistryClient(settings, retries=retries)
            _CLIENTS[settings] = client
        return client


# -- the driver: reader schemas ------------------------------------------------------------


@dataclass(frozen=True)
class ReaderSchema:
    """The reader schema of one formatted column, fixed when the query is planned.

    Attributes:
        column: ``"key"`` or ``"value"``.
        schema_json: the schema's JSON text.
        schema_id: its registry id, when it came from the registry.
        spark_type: the column's Spark type, as Spark's JSON.
        format: ``"avro"`` (``schema_json`` is an Avro schema), ``"json"`` (``schema_json``
            is the Spark struct's JSON text) or ``"protobuf"`` (``schema_json`` is a JSON
            object: ``messageName`` (full name), ``main`` (the schema's file) and
            ``descriptorSet`` (the serialized ``FileDescriptorSet``, base64)).
    """

    column: str
    schema_json: str
    schema_id: int | None
    spark_type: object
    format: str = AVRO_FORMAT

    def field(self) -> StructField:
        """The column's ``StructField`` (nullable: tombstones and ``PERMISSIVE`` give null),
        carrying the schema in its metadata so the reader gets the same one."""
        metadata: dict[str, object] = {READER_SCHEMA_METADATA: self.schema_json}
        if self.schema_id is not None:
            metadata[READER_SCHEMA_ID_METADATA] = self.schema_id
        field = {"name": self.column, "type": self.spark_type, "nullable": True}
        return StructType.fromJson({"type": "struct", "fields": [{**field, "metadata": metadata}]})[
            0
        ]


@dataclass(frozen=True)
class ReadPayload:
    """What a read's executors need to decode: the options and each column's reader schema."""

    options: PayloadOptions
    readers: tuple[ReaderSchema, ...]

    def reader(self, column: str) -> ReaderSchema | None:
        return next((r for r in self.readers if r.column == column), None)


def _record_name(schema_json: str | None) -> str | None:
    if schema_json is None:
        return None
    root = parse_schema(schema_json).root
    return root.name if isinstance(root, Record) else None


def _reader_schema(
    col: ColumnFormat, options: PayloadOptions, topic: str | None
) -> tuple[str, int | None]:
    if col.avro_schema is not None:
        return col.avro_schema, None
    assert options.registry is not None  # parse_payload_options saw to it
    client = registry_client(options.registry)
    if col.schema_id is not None:
        found = client.schema_by_id(col.schema_id)
        check_registry_schema(found.schema_type, f"schema id {col.schema_id}", found.references)
        return found.schema_str, col.schema_id
    subject = subject_name(col.strategy, topic, is_key=col.is_key, record=None)
    registered = (
        client.version(subject, col.schema_version)
        if col.schema_version is not None
        else client.latest(subject)
    )
    check_registry_schema(
        registered.schema.schema_type,
        f"subject {subject!r} version {registered.version}",
        registered.schema.references,
    )
    return registered.schema.schema_str, registered.schema_id


def _json_reader(col: ColumnFormat, options: PayloadOptions, topic: str | None) -> ReaderSchema:
    """``json``: ``valueSchema``'s struct, else the registry's JSON Schema (by
    ``value.schema.id``, ``value.schema.version`` or the subject's latest) mapped to Spark
    (:func:`spark_kafka_py.formats.json.schema.to_spark`).

    Raises:
        ConfigError: not a JSON schema, references, unmappable (naming the JSON pointer), or a
            struct not read from JSON here.
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    if col.spark_schema is not None:
        return ReaderSchema(
            col.column, col.spark_schema, None, json.loads(col.spark_schema), JSON_FORMAT
        )
    assert options.registry is not None  # parse_payload_options saw to it (reads)
    client = registry_client(options.registry)
    if col.schema_id is not None:
        found = client.schema_by_id(col.schema_id)
        what = f"schema id {col.schema_id}"
        schema_id = col.schema_id
    else:
        subject = subject_name(col.strategy, topic, is_key=col.is_key, record=None)
        registered = (
            client.version(subject, col.schema_version)
            if col.schema_version is not None
            else client.latest(subject)
        )
        found = registered.schema
        what = f"subject {subject!r} version {registered.version}"
        schema_id = registered.schema_id
    check_registry_schema(found.schema_type, what, found.references, expected=JSON_SCHEMA)
    try:
        mapped = json_to_spark(found.schema_str)
    except JsonSchemaError as exc:
        raise ConfigError(
            f"the registry's {what} (the {col.column}'s JSON Schema) has no Spark type: {exc}"
        ) from None
    if not isinstance(mapped.spark_json, dict) or mapped.spark_json.get("type") != "struct":
        raise ConfigError(
            f"the registry's {what} (the {col.column}'s JSON Schema) is not an object with "
            f"properties: it maps to {mapped.ddl}, and a {col.column} column of JSON is a struct"
        )
    spark_json = json.dumps(mapped.spark_json, separators=(",", ":"))
    try:
        JsonDecoder(mapped.spark_json)
    except JsonSchemaError as exc:
        raise ConfigError(f"the registry's {what} maps to a type not read here: {exc}") from None
    return ReaderSchema(col.column, spark_json, schema_id, mapped.spark_json, JSON_FORMAT)


def registry_protobuf_schema(found: RegistrySchema, what: str) -> ProtobufSchema:
    """A registry's Protobuf schema parsed: a base64 ``FileDescriptorProto`` (what
    confluent-kafka's Python ``ProtobufSerializer`` registers, served back so by Apicurio) or
    ``.proto`` text (what Java clients register; compiled by protoc).

    Raises:
        ConfigError: not Protobuf, with references, or not parseable (naming ``what``).
    """
    check_registry_schema(found.schema_type, what, found.references, expected=PROTOBUF_SCHEMA)
    text = found.schema_str
    try:
        try:
            base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            return parse_proto(text)
        return parse_base64_file_descriptor("".join(text.split()))
    except ProtobufSchemaError as exc:
        raise ConfigError(f"the registry's {what} is not a usable Protobuf schema: {exc}") from None


def _protobuf_reader_json(schema: ProtobufSchema, message: str) -> str:
    """The reader schema of a protobuf column as carried through Spark (field metadata) to the
    executors: the descriptor set (base64), its main file and the message's full name."""
    fds = descriptor_pb2.FileDescriptorSet()
    fds.file.extend(schema.files)
    return json.dumps(
        {
            "messageName": message,
            "main": schema.main,
            "descriptorSet": base64.b64encode(fds.SerializeToString()).decode("ascii"),
        },
        separators=(",", ":"),
    )


def protobuf_reader(
    col: ColumnFormat, options: PayloadOptions, topic: str | None, *, subject: str | None = None
) -> ReaderSchema:
    """``protobuf``: the message of ``descFilePath`` / ``descriptorSet``, else of the registry's
    schema (``value.schema.id``, ``value.schema.version`` or the subject's latest), picked by
    ``messageName`` (default: the schema's first message); its Spark type as spark-protobuf's
    ``SchemaConverters.toSqlType`` with the column's options.

    Args:
        col: the protobuf column.
        options: the read's payload options (its registry).
        topic: the one topic read, for the subject name strategies (None: several).
        subject: the registry subject to read the latest schema of, instead of the one the
            column's strategy names (``from_protobuf``'s ``schema.registry.subject``).

    Raises:
        ConfigError: no such message, a registry schema that is not Protobuf, has references
            or does not parse; a message Spark cannot represent (naming the column).
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    schema_id: int | None = None
    if col.descriptor_set is not None:
        schema = parse_descriptor_set(col.descriptor_set)
        what = f"'{col.schema_option}' descriptor set"
    else:
        assert options.registry is not None  # parse_payload_options saw to it
        client = registry_client(options.registry)
        if col.schema_id is not None:
            found = client.schema_by_id(col.schema_id)
            what = f"schema id {col.schema_id}"
            schema_id = col.schema_id
        else:
            if subject is None:
                subject = subject_name(
                    col.strategy, topic, is_key=col.is_key, record=col.message_name
                )
            registered = (
                client.version(subject, col.schema_version)
                if col.schema_version is not None
                else client.latest(subject)
            )
            found = registered.schema
            what = f"subject {subject!r} version {registered.version}"
            schema_id = registered.schema_id
        schema = registry_protobuf_schema(found, what)
    name_opt = _names(col.column)[0]
    try:
        descriptor = schema.message(col.message_name)
    except ProtobufSchemaError as exc:
        raise ConfigError(
            f"Option '{name_opt}': the {col.column}'s schema ({what}) has no message "
            f"{col.message_name!r}: {exc}"
        ) from None
    try:
        spark_type = protobuf_to_spark(descriptor, col.protobuf)
    except ProtobufSchemaError as exc:
        raise ConfigError(
            f"the {col.column}'s Protobuf message {descriptor.full_name} ({what}) has no Spark "
            f"type: {exc}"
        ) from None
    return ReaderSchema(
        col.column,
        _protobuf_reader_json(schema, descriptor.full_name),
        schema_id,
        spark_type,
        PROTOBUF_FORMAT,
    )


def check_registry_schema(
    schema_type: str, what: str, references: Sequence[object], *, expected: str = AVRO
) -> None:
    """Refuse a registry schema we cannot read: not of the ``expected`` type (``AVRO``,
    ``JSON`` or ``PROTOBUF``), or with references.

    Raises:
        ConfigError: naming ``what`` (the id, or the subject and version).
    """
    if schema_type != expected:
        name = {AVRO: "Avro", JSON_SCHEMA: "a JSON Schema", PROTOBUF_SCHEMA: "Protobuf"}.get(
            expected, expected
        )
        raise ConfigError(f"the registry's {what} is a {schema_type} schema, not {name}")
    if references:
        raise ConfigError(
            f"the registry's {what} refers to other subjects' schemas (references), which "
            "are not supported yet"
        )


def resolve_read(options: PayloadOptions, topics: Sequence[str] | None) -> ReadPayload:
    """Driver side: the reader schema of each formatted column.

    Args:
        options: the read's payload options.
        topics: the topics read when known before planning (``subscribe``, ``assign``),
            None for ``subscribePattern``; the subject of ``TopicNameStrategy`` needs
            exactly one.

    Raises:
        ConfigError: no way to name the subject; a registry schema that is not Avro or has
            references; a schema Spark cannot represent (a recursive record).
        SchemaRegistryError: the registry failed or has no such subject, version or id.
    """
    topic = topics[0] if topics is not None and len(set(topics)) == 1 else None
    readers = []
    for col in options.columns:
        if col.format == JSON_FORMAT:
            readers.append(_json_reader(col, options, topic))
            continue
        if col.format == PROTOBUF_FORMAT:
            readers.append(protobuf_reader(col, options, topic))
            continue
        schema_json, schema_id = _reader_schema(col, options, topic)
        try:
            mapped = to_spark(parse_schema(schema_json))
        except FormatError as exc:
            raise ConfigError(f"the {col.column}'s Avro schema cannot be read: {exc}") from None
        readers.append(ReaderSchema(col.column, schema_json, schema_id, mapped.spark_json))
    return ReadPayload(options, tuple(readers))


def read_payload_from_schema(options: PayloadOptions, fields: Sequence[StructField]) -> ReadPayload:
    """The reader schemas a DataFrame's schema carries (:meth:`ReaderSchema.field`): what
    ``reader(schema)`` is given is what ``schema()`` resolved, so a query keeps its schema.

    Raises:
        ConfigError: a formatted column without the schema in its metadata (a schema the user
            gave with ``.schema(...)``).
    """
    by_name = {f.name: f for f in fields}
    readers = []
    for col in options.columns:
        f = by_name.get(col.column)
        metadata = f.metadata if f is not None else {}
        schema_json = metadata.get(READER_SCHEMA_METADATA)
        if f is None or not isinstance(schema_json, str):
            raise ConfigError(
                f"the {col.column} column's schema does not come from this source: with "
                f"'{col.column}Format'='{col.format}' the schema is the "
                f"{'Avro schema' if col.format == AVRO_FORMAT else col.schema_option}'s; "
                "remove .schema(...)"
            )
        readers.append(
            ReaderSchema(
                col.column,
                schema_json,
                metadata.get(READER_SCHEMA_ID_METADATA),
                json.loads(f.dataType.json()),
                col.format,
            )
        )
    return ReadPayload(options, tuple(readers))


# -- the executors: decoding ------------------------------------------------------------------

#: Decoders per (reader schema, writer schema key) in this process; a decoder holds its plan
#: (closures per field), so a few hundred are plenty.
_DECODERS: LruCache[AvroDecoder] = LruCache(max_entries=256, max_bytes=64 * 1024 * 1024)
#: Parsed reader and writer schemas of this process, by JSON.
_SCHEMAS: LruCache[Schema] = LruCache(max_entries=64, max_bytes=16 * 1024 * 1024)


def parsed_schema(schema_json: str) -> Schema:
    """``parse_schema(schema_json)``, parsed once per process (a bounded cache shared by the
    read and write sides)."""
    schema = _SCHEMAS.get(schema_json)
    if schema is None:
        schema = parse_schema(schema_json)
        _SCHEMAS.put(schema_json, schema, len(schema_json))
    return schema


class _Decoders:
    """The decoders of one column's reader schema in this process: writer schema key ->
    decoder, or None (the key's records are bad records) when the registry has no schema of
    that key, it is not Avro, or it does not resolve to the reader schema."""

    def __init__(self, reader: ReaderSchema, registry: RegistrySettings | None) -> None:
        self.reader = reader
        self.reader_schema = parsed_schema(reader.schema_json)
        self.arrow = to_spark(self.reader_schema).arrow
        self.registry = registry
        #: keys the registry answered 404 for, with why (kept: a registry never reuses an id)
        self.failures: dict[SchemaKey, str] = {}
        self.plain = AvroDecoder(self.reader_schema) if registry is None else None

    def __call__(self, key: SchemaKey) -> AvroDecoder | None:
        if self.plain is not None:  # plain Avro: every value is of the reader schema
            return self.plain
        cache_key = (self.reader.schema_json, key)
        decoder = _DECODERS.get(cache_key)
        if decoder is not None:
            return decoder
        if key in self.failures:
            return None
        assert self.registry is not None
        client = registry_client(self.registry)
        try:
            found = (
                client.schema_by_guid(str(key))
                if isinstance(key, uuid.UUID)
                else client.schema_by_id(key)
            )
        except SchemaRegistryError as exc:
            if exc.status != 404:
                raise  # the registry failed: the task fails (retried by Spark), never null
            self.failures[key] = "is not in the registry"
            return None
        if found.schema_type != AVRO:
            self.failures[key] = f"a {found.schema_type} schema, not Avro"
            return None
        try:
            writer = parse_schema(found.schema_str)
            decoder = AvroDecoder(writer, self.reader_schema)
        except FormatError as exc:
            self.failures[key] = (
                f"does not resolve to the reader schema{_id_text(self.reader.schema_id)}: {exc}"
            )
            return None
        _DECODERS.put(cache_key, decoder, len(found.schema_str) * 8)
        return decoder


_COLUMN_DECODERS: dict[tuple[str, str, RegistrySettings | None], _Decoders] = {}


def _column_decoders(reader: ReaderSchema, registry: RegistrySettings | None) -> _Decoders:
    key = (reader.column, reader.schema_json, registry)
    with _LOCK:
        found = _COLUMN_DECODERS.get(key)
        if found is None:
            if len(_COLUMN_DECODERS) >= 64:  # a long-lived executor seeing many queries
                _COLUMN_DECODERS.clear()
            found = _COLUMN_DECODERS[key] = _Decoders(reader, registry)
        return found


def _id_text(schema_id: int | None) -> str:
    return f" (id {schema_id})" if schema_id is not None else ""


def _header_keys(headers: pa.Array | None, is_key: bool) -> list[SchemaKey | FramingError | None]:
    """Per row, the schema key a ``__value_schema_id`` / ``__key_schema_id`` header gives,
    None when the record has no such header, or the header's :class:`FramingError`."""
    if headers is None:
        return []
    name = framing.KEY_SCHEMA_ID_HEADER if is_key else framing.VALUE_SCHEMA_ID_HEADER
    if headers.null_count == len(headers):
        return []
    flat = headers.flatten()
    names = flat.field(0).to_pylist()
    if name not in names:
        return []
    values = flat.field(1)
    offsets = headers.offsets.to_pylist()
    out: list[SchemaKey | FramingError | None] = []
    for row in range(len(headers)):
        found: SchemaKey | FramingError | None = None
        for i in range(offsets[row], offsets[row + 1]):
            if names[i] == name:  # the last one wins (Headers.lastHeader)
                try:
                    found = framing.parse_header_id(values[i].as_py())
                except FramingError as exc:
                    found = FramingError(f"header {name}: {exc.reason}", row)
        out.append(found)
    return out


def _keyed_rows(
    values: pa.Array, header_keys: list[SchemaKey | FramingError | None], framed: bool
) -> list[Keyed]:
    """Per row: (writer schema key, Avro payload), None for a null, or the row's
    :class:`FramingError`: plain Avro rows all have key 0; framed rows are split
    (:func:`split_framed`), and a schema id header overrides the framing (the payload is
    then the whole value)."""
    pylist = values.to_pylist()
    if not framed:
        return [None if v is None else (0, v) for v in pylist]
    rows = split_framed(pylist)
    for row, header in enumerate(header_keys):
        if header is not None and pylist[row] is not None:
            rows[row] = header if isinstance(header, FramingError) else (header, pylist[row])
    return rows


def decode_column(
    values: pa.Array,
    reader: ReaderSchema,
    options: PayloadOptions,
    *,
    headers: pa.Array | None = None,
    where: Callable[[int], str] = lambda index: f" of row {index}",
) -> pa.Array:
    """Decode one column of Avro values (binary) into the reader schema's Arrow type.

    Args:
        values: the column's values (binary; null rows stay null).
        reader: the column's reader schema.
        options: the payload options (registry: framed values; mode).
        headers: the records' headers (``array<struct<key,value>>``) for header schema ids.
        where: the text naming a row in messages (`` of t-0 at offset 7``).

    Returns:
        The decoded array, one row per value.

    Raises:
        RecordFormatError: ``FAILFAST`` and a value that does not decode.
        SchemaRegistryError: the registry failed (after its retries).
    """
    if reader.format == JSON_FORMAT:
        return _decode_json_column(values, reader, options, where)
    if reader.format == PROTOBUF_FORMAT:
        return _decode_protobuf_column(values, reader, options, where)
    decoders = _column_decoders(reader, options.registry)
    framed = options.registry is not None
    keys = _header_keys(headers, reader.column == "key") if framed else []
    bad: list[FormatError] = []
    on_error = bad.append if options.permissive_for(AVRO_FORMAT) else None
    try:
        decoded = None
        if framed and not keys:  # the common case: in place, when one id frames every value
            decoded = decode_framed_column(values, decoders.arrow, decoders, on_error=on_error)
        if decoded is None:
            rows = _keyed_rows(values, keys, framed)
            decoded = decode_keyed(rows, decoders.arrow, decoders, on_error=on_error)
    except FormatError as exc:
        raise _record_error(exc, reader, where, decoders) from None
    if bad:
        log.warning(
            "mode=PERMISSIVE: %d record(s) of this batch have a null %s; the first: %s",
            len(bad),
            reader.column,
            _record_error(bad[0], reader, where, decoders),
        )
    return decoded


#: JSON decoders per (struct JSON, mode, corrupt-record column, options) in this process.
_JSON_DECODERS: LruCache[JsonDecoder] = LruCache(max_entries=64, max_bytes=16 * 1024 * 1024)


def _json_decoder(
    reader: ReaderSchema, mode: Mode, corrupt_column: str, options: JsonOptions
) -> JsonDecoder:
    key = (reader.schema_json, mode, corrupt_column, options)
    decoder = _JSON_DECODERS.get(key)
    if decoder is None:
        decoder = JsonDecoder(
            reader.spark_type, mode=mode, corrupt_column=corrupt_column, options=options
        )
        _JSON_DECODERS.put(key, decoder, len(reader.schema_json) * 8)
    return decoder


def _decode_json_column(
    values: pa.Array,
    reader: ReaderSchema,
    options: PayloadOptions,
    where: Callable[[int], str],
) -> pa.Array:
    """One column of JSON documents -> the reader struct, as ``from_json`` with ``mode`` and
    ``columnNameOfCorruptRecord`` (:mod:`spark_kafka_py.formats.json.decode`).

    Raises:
        RecordFormatError: ``FAILFAST`` and a document that does not parse or fit.
    """
    permissive = options.permissive_for(JSON_FORMAT)
    mode: Mode = "PERMISSIVE" if permissive else "FAILFAST"
    decoder = _json_decoder(reader, mode, options.corrupt_column, options.json)
    skip = 0
    if options.registry is not None:
        values, skip = _unframe(values, reader, permissive, where)
    bad: list[JsonDecodeError] = []
    try:
        decoded = decoder.decode(values, on_error=bad.append, skip=skip)
    except JsonDecodeError as exc:
        raise _json_record_error(exc, reader, where) from None
    if bad:
        log.warning(
            "mode=PERMISSIVE: %d %s document(s) of this batch did not parse or fit; the first: %s",
            len(bad),
            reader.column,
            _json_record_error(bad[0], reader, where),
        )
    return decoded


def _starts_with_magic(values: pa.Array) -> bool:
    """Whether every non-null value of a ``binary`` array is at least a framing's
    :data:`~spark_kafka_py.formats.framing.HEADER_SIZE` bytes and starts with the magic byte,
    checked with Arrow kernels over the column's buffers (no copy of the values)."""
    present = values.drop_null() if values.null_count else values
    if len(present) == 0:
        return True
    if pc.min(pc.binary_length(present)).as_py() < framing.HEADER_SIZE:
        return False
    buffers = present.buffers()
    starts = pa.Array.from_buffers(
        pa.int32(), len(present), [None, buffers[1]], offset=present.offset
    )
    data = pa.Array.from_buffers(pa.uint8(), buffers[2].size, [None, buffers[2]])
    first = pc.take(data, starts)
    return bool(pc.all(pc.equal(first, framing.MAGIC_BYTE)).as_py())


def _unframe(
    values: pa.Array, reader: ReaderSchema, permissive: bool, where: Callable[[int], str]
) -> tuple[pa.Array, int]:
    """Registry-framed JSON (Confluent's ``JsonSchemaSerializer``: magic byte 0, the 4-byte
    schema id, the document): the values and the bytes before each document, the framing
    checked. The common batch, every value framed, is returned as it is with
    :data:`~spark_kafka_py.formats.framing.HEADER_SIZE` (the decoder reads past it in place);
    otherwise the documents cut out, the bad rows null, and 0. The id is not looked up: a
    JSON document needs no writer schema to be read with the reader's struct.

    Raises:
        RecordFormatError: ``FAILFAST`` and a value that is not framed (naming the row);
            ``PERMISSIVE`` makes such rows null (one warning per batch).
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not pa.types.is_binary(values.type):
        values = values.cast(pa.binary())
    if _starts_with_magic(values):
        return values, framing.HEADER_SIZE
    lengths = pc.binary_length(values)
    magic = pc.binary_slice(values, 0, 1)
    framed = pc.and_(
        pc.greater_equal(lengths, framing.HEADER_SIZE),
        pc.equal(magic, pa.scalar(bytes([framing.MAGIC_BYTE]), pa.binary())),
    )
    bad = pc.fill_null(pc.invert(framed), False)  # nulls stay null, not bad
    # an explicit stop: pyarrow 26's binary_slice without one fails ("Negative buffer
    # resize") on most arrays
    documents = pc.binary_slice(values, framing.HEADER_SIZE, 2**31 - 1)
    rows = pc.indices_nonzero(bad).to_pylist()
    first = rows[0]
    try:
        framing.parse(values[first].as_py())
        reason = "not framed"  # pragma: no cover - the checks above agree with parse
    except FramingError as exc:
        reason = exc.reason
    error = RecordFormatError(
        f"cannot decode the {reader.column}{where(first)} as JSON: not Confluent-framed: "
        f"{reason}; with mode=PERMISSIVE such records get a null {reader.column}",
        column=reader.column,
    )
    if not permissive:
        raise error
    log.warning(
        "mode=PERMISSIVE: %d record(s) of this batch have a null %s; the first: %s",
        len(rows),
        reader.column,
        error,
    )
    return pc.if_else(bad, pa.scalar(None, pa.binary()), documents), 0


def _json_record_error(
    exc: JsonDecodeError, reader: ReaderSchema, where_of: Callable[[int], str]
) -> RecordFormatError:
    return RecordFormatError(
        f"cannot decode the {reader.column}{where_of(exc.index)} as JSON: {exc.reason}; with "
        f"mode=PERMISSIVE such records get the fields that parsed, and the document in the "
        f"corrupt-record field when the schema has one (as from_json)",
        column=reader.column,
    )


# -- protobuf columns ------------------------------------------------------------------------


@dataclass
class _ProtobufReader:
    """One protobuf column's reader in this process: the reader message and its decoders
    (FAILFAST and PERMISSIVE, both ``ProtobufDecoder``)."""

    message: str
    failfast: ProtobufDecoder
    permissive: ProtobufDecoder


@dataclass
class _ProtobufWriter:
    """A writer schema of framed Protobuf records: parsed, or why not (``failure``)."""

    schema: ProtobufSchema | None
    failure: str | None
    names: dict[tuple[int, ...], str | None]

    def message(self, indexes: tuple[int, ...]) -> str | None:
        """The full name the indexes name in the writer schema, None when they name none."""
        if indexes not in self.names:
            assert self.schema is not None
            try:
                self.names[indexes] = self.schema.message_by_indexes(indexes).full_name
            except ProtobufSchemaError:
                self.names[indexes] = None
            if len(self.names) > 1024:  # hostile indexes: keep the map bounded
                self.names.pop(next(iter(self.names)))
        return self.names[indexes]


#: Protobuf readers per (reader schema JSON, options) in this process.
_PROTOBUF_READERS: LruCache[_ProtobufReader] = LruCache(max_entries=64, max_bytes=64 * 1024 * 1024)
#: Writer schemas of framed Protobuf records per (registry, schema id): the message full name
#: each message-index path names, or why the id cannot be used. Bounded; a registry never
#: reuses an id.
_PROTOBUF_WRITERS: LruCache[_ProtobufWriter] = LruCache(max_entries=256, max_bytes=64 * 1024 * 1024)


def _protobuf_reader_of(reader: ReaderSchema, options: ProtobufOptions) -> _ProtobufReader:
    key = (reader.schema_json, options)
    found = _PROTOBUF_READERS.get(key)
    if found is None:
        carried = json.loads(reader.schema_json)
        schema = parse_descriptor_set(
            base64.b64decode(carried["descriptorSet"]), main=carried["main"]
        )
        descriptor = schema.message(carried["messageName"])
        found = _ProtobufReader(
            descriptor.full_name,
            ProtobufDecoder(schema, descriptor, dataclasses.replace(options, mode="FAILFAST")),
            ProtobufDecoder(schema, descriptor, dataclasses.replace(options, mode="PERMISSIVE")),
        )
        _PROTOBUF_READERS.put(key, found, len(reader.schema_json) * 8)
    return found


def _protobuf_writer(registry: RegistrySettings, schema_id: int) -> _ProtobufWriter:
    """The writer schema of ``schema_id``, fetched (the registry client's cache) and parsed
    once per process.

    Raises:
        SchemaRegistryError: the registry failed (not a 404: that makes the records bad).
    """
    key = (registry, schema_id)
    found = _PROTOBUF_WRITERS.get(key)
    if found is not None:
        return found
    size = 64
    try:
        registered = registry_client(registry).schema_by_id(schema_id)
    except SchemaRegistryError as exc:
        if exc.status != 404:
            raise  # the registry failed: the task fails (retried by Spark), never null
        found = _ProtobufWriter(None, "is not in the registry", {})
    else:
        size += len(registered.schema_str) * 8
        try:
            found = _ProtobufWriter(
                registry_protobuf_schema(registered, f"schema id {schema_id}"), None, {}
            )
        except ConfigError as exc:
            found = _ProtobufWriter(None, str(exc), {})
    _PROTOBUF_WRITERS.put(key, found, size)
    return found


@dataclass
class _BadRow:
    index: int
    reason: str
    schema_id: int | None


def _protobuf_payloads(
    pylist: list[bytes | None], reader: _ProtobufReader, registry: RegistrySettings | None
) -> tuple[list[bytes | memoryview | None], list[_BadRow], list[int | None]]:
    """Per row: the message bytes to decode (None: null, or a bad row), the bad rows (not
    framed, a writer schema id not usable, message indexes naming another message than the
    reader's) in row order, and each row's writer schema id (framed values)."""
    if registry is None:
        return list(pylist), [], []
    payloads: list[bytes | memoryview | None] = []
    bad: list[_BadRow] = []
    ids: list[int | None] = []
    writers: dict[int, _ProtobufWriter] = {}  # this batch's, by id (no settings hash per row)
    for i, value in enumerate(pylist):
        if value is None:
            payloads.append(None)
            ids.append(None)
            continue
        try:
            framed = pb_framing.parse(value)
        except FramingError as exc:
            bad.append(_BadRow(i, f"not Confluent-framed: {exc.reason}", None))
            payloads.append(None)
            ids.append(None)
            continue
        ids.append(framed.schema_id)
        writer = writers.get(framed.schema_id)
        if writer is None:
            writer = writers[framed.schema_id] = _protobuf_writer(registry, framed.schema_id)
        if writer.failure is not None:
            bad.append(
                _BadRow(i, f"writer schema {framed.schema_id} {writer.failure}", framed.schema_id)
            )
            payloads.append(None)
            continue
        named = writer.message(framed.indexes)
        if named != reader.message:
            got = f"message {named}" if named is not None else "no message of the writer schema"
            bad.append(
                _BadRow(
                    i,
                    f"message indexes {list(framed.indexes)} name {got} in writer schema "
                    f"{framed.schema_id}, not the reader's {reader.message}",
                    framed.schema_id,
                )
            )
            payloads.append(None)
            continue
        payloads.append(framed.payload)
    return payloads, bad, ids


#: The framing of the common record: magic byte, 4-byte id, message indexes ``[0]`` (one 0).
_PB_SIMPLE_HEADER = framing.HEADER_SIZE + 1


def _binary_column(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``values`` as one ``binary`` array (chunks combined, other kinds cast)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not pa.types.is_binary(values.type):
        values = values.cast(pa.binary())
    return values


def _single_writer(
    values: pa.Array, reader: _ProtobufReader, registry: RegistrySettings
) -> int | None:
    """The schema id of the common batch: every non-null value framed by that one schema id
    with message indexes ``[0]`` (the byte 0) that names the reader's message, checked in one
    pass over the column's buffers
    (:func:`~spark_kafka_py.formats.protobuf.framing.common_head`); the messages are then each value
    past its first :data:`_PB_SIMPLE_HEADER` bytes. None when the batch is anything else (then
    the per-row path decides, and names each bad row)."""
    head = pb_framing.common_head(values, _PB_SIMPLE_HEADER)
    if head is None:
        return None
    if head[0] != framing.MAGIC_BYTE or head[-1] != 0:
        return None
    schema_id = int.from_bytes(head[1 : framing.HEADER_SIZE], "big", signed=True)
    writer = _protobuf_writer(registry, schema_id)
    if writer.failure is not None or writer.message((0,)) != reader.message:
        return None
    return schema_id


def _decode_protobuf_column(
    values: pa.Array,
    reader: ReaderSchema,
    options: PayloadOptions,
    where: Callable[[int], str],
) -> pa.Array:
    """One column of Protobuf values -> the reader message's struct (``from_protobuf``):
    plain messages without a registry; with one, Confluent-framed values whose message
    indexes, resolved against the record's writer schema (fetched by id once per process),
    must name the reader's message; the bytes are decoded with the reader's descriptor.

    Plain messages, and framed ones when one schema id and message indexes ``[0]`` frame the
    whole batch (:func:`_single_writer`), are decoded in place from the column's buffers
    (:meth:`ProtobufDecoder.decode_column`); other batches row by row
    (:func:`_protobuf_payloads`).

    Raises:
        RecordFormatError: ``FAILFAST`` and a value that is not framed, names an unusable
            schema id or another message, or does not parse (naming the column,
            topic-partition, offset and the writer schema id); ``PERMISSIVE`` makes such rows
            null (one warning per batch).
        SchemaRegistryError: the registry failed (after its retries).
    """
    col = options.key if reader.column == "key" else options.value
    pb_options = col.protobuf if col is not None and col.protobuf is not None else ProtobufOptions()
    decoders = _protobuf_reader_of(reader, pb_options)
    permissive = options.permissive_for(PROTOBUF_FORMAT)
    column = _binary_column(values)
    # in place: the column and its framing's bytes (skip); else per row: the payloads
    skip = 0
    schema_id: int | None = None
    payloads: list[bytes | memoryview | None] | None = None
    bad: list[_BadRow] = []
    ids: list[int | None] = []
    if options.registry is not None:
        schema_id = _single_writer(column, decoders, options.registry)
        if schema_id is not None:
            skip = _PB_SIMPLE_HEADER
        else:
            payloads, bad, ids = _protobuf_payloads(column.to_pylist(), decoders, options.registry)

    def id_of(index: int) -> int | None:
        return ids[index] if payloads is not None and ids else schema_id

    def payload_at(index: int) -> bytes | memoryview | None:
        if payloads is not None:
            return payloads[index]
        value: bytes | None = column[index].as_py()
        return None if value is None else value[skip:]

    def error(row: _BadRow) -> RecordFormatError:
        sid = f" (writer schema id {row.schema_id})" if row.schema_id is not None else ""
        return RecordFormatError(
            f"cannot decode the {reader.column}{where(row.index)} as Protobuf "
            f"{decoders.message}: {row.reason}{sid}; with mode=PERMISSIVE such records get a "
            f"null {reader.column}",
            column=reader.column,
            schema_id=row.schema_id,
        )

    def decode_error(exc: ProtobufDecodeError) -> _BadRow:
        return _BadRow(exc.index, exc.reason, id_of(exc.index))

    def decode(decoder: ProtobufDecoder, rows: int | None = None) -> pa.Array:
        if payloads is None:
            return decoder.decode_column(column, skip)
        return decoder.decode(payloads if rows is None else payloads[:rows])

    if not permissive:
        try:
            decoded = decode(decoders.failfast, bad[0].index if bad else None)
        except ProtobufDecodeError as exc:
            raise error(decode_error(exc)) from None
        if bad:  # the rows before the first bad one decode: that one is the first error
            raise error(bad[0])
        return decoded
    decoded = decode(decoders.permissive)
    # a null row is a null value, a bad row, or a value that did not decode (failed)
    nulls = column.null_count if payloads is None else sum(p is None for p in payloads)
    failed: list[int] = []
    if decoded.null_count > nulls:  # bad rows are null payloads
        given = (
            column.is_valid().to_pylist() if payloads is None else [p is not None for p in payloads]
        )
        ok = decoded.is_valid().to_pylist()
        failed = [i for i, (p, o) in enumerate(zip(given, ok, strict=True)) if p and not o]
    if failed:
        first_payload = payload_at(failed[0])
        assert first_payload is not None
        try:
            decoders.failfast.decode([first_payload])
            first = _BadRow(failed[0], "does not decode", id_of(failed[0]))
        except ProtobufDecodeError as exc:
            first = _BadRow(failed[0], exc.reason, id_of(failed[0]))
        bad = sorted([*bad, first], key=lambda b: b.index)
    if bad:
        log.warning(
            "mode=PERMISSIVE: %d record(s) of this batch have a null %s; the first: %s",
            len(bad) + max(0, len(failed) - 1),
            reader.column,
            error(bad[0]),
        )
    return decoded


def decode_batch(
    batch: pa.RecordBatch, payload: ReadPayload, *, keep_headers: bool
) -> pa.RecordBatch:
    """Executor side: ``batch`` (Spark's Kafka schema, with ``headers``) with each formatted
    column decoded (:func:`decode_column`), ``key_raw`` / ``value_raw`` added with
    ``includeRawBytes``, and the ``headers`` column dropped unless ``keep_headers``.

    Raises:
        RecordFormatError: ``FAILFAST`` and a record that does not decode (naming the column,
            topic-partition, offset and schema id).
        SchemaRegistryError: the registry failed (after its retries).
    """
    opts = payload.options
    names = batch.schema.names
    columns = dict(zip(names, batch.columns, strict=True))
    raw: dict[str, pa.Array] = {}

    def where(index: int) -> str:
        topic = batch.column("topic")[index].as_py()
        partition = batch.column("partition")[index].as_py()
        offset = batch.column("offset")[index].as_py()
        return f" of {topic}-{partition} at offset {offset}"

    for reader in payload.readers:
        values = columns[reader.column]
        if opts.include_raw:
            raw[f"{reader.column}_raw"] = values
        columns[reader.column] = decode_column(
            values, reader, opts, headers=columns.get("headers"), where=where
        )
    if not keep_headers:
        columns.pop("headers", None)
    columns.update(raw)
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def _record_error(
    exc: FormatError,
    reader: ReaderSchema,
    where_of: Callable[[int], str],
    decoders: _Decoders,
) -> RecordFormatError:
    index = getattr(exc, "index", None)
    where = where_of(index) if isinstance(index, int) else ""
    sid = getattr(exc, "schema_id", None)
    if isinstance(exc, UnknownSchemaError) and exc.schema_id in decoders.failures:
        detail = f"writer schema {exc.schema_id} {decoders.failures[exc.schema_id]}"
    elif isinstance(exc, AvroDecodeError):
        detail = f"{exc.reason} (byte {exc.position} of the payload" + (
            f", writer schema id {sid})" if sid is not None else ")"
        )
    elif isinstance(exc, FramingError):
        detail = f"not Confluent-framed: {exc.reason}"
    else:
        detail = str(exc)
    return RecordFormatError(
        f"cannot decode the {reader.column}{where} as Avro: {detail}; with mode=PERMISSIVE "
        f"such records get a null {reader.column}",
        column=reader.column,
        schema_id=sid if isinstance(sid, int) else None,
    )
