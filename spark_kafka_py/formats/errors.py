"""The typed errors of the payload formats (``formats/``).

Every one derives from :class:`spark_kafka_py.errors.KafkaError` (so a user catching the
package's base class catches these too) and from :class:`ValueError` (they are all about bad
input: a schema, a payload, a framing). None is retriable: the same bytes fail the same way.

Hierarchy::

    FormatError
      FramingError            a registry wire framing is wrong (no magic byte, too short,
                              a header schema id of the wrong size or kind)
      UnknownSchemaError      a framing names a schema id the caller has no schema for
      AvroError
        SchemaError           an Avro schema (JSON) is malformed, too large, too deep, or
                              names a type that is not defined
          IncompatibleSchemaError
                              a well-formed schema that cannot be mapped to Spark types
                              (a recursive record, a decimal wider than 38 digits) or a
                              writer schema that cannot be resolved to a reader schema
        AvroDecodeError       a payload does not decode with its writer schema (truncated,
                              trailing bytes, a length past the end, an out-of-range index)
        AvroEncodeError       a value does not fit the schema it is written with (a null
                              into a non-null field, an enum symbol not declared, a fixed of
                              another size, a decimal beyond its precision, an int out of
                              range)
      JsonError
        JsonSchemaError       a JSON Schema is malformed, too large, too deep, has a
                              recursive or external ``$ref``, or cannot be mapped to a
                              Spark type (names the JSON pointer)
        JsonDecodeError       a JSON document does not parse, or a value does not fit the
                              Spark type read with (``FAILFAST``; names the row)
      ProtobufError
        ProtobufSchemaError   a descriptor or message cannot be used, or a column type does
                              not fit the message written (names the field path)
        ProtobufDecodeError   a payload does not parse as the message (names the row)
        ProtobufEncodeError   a value does not fit the message written (names the row and
                              the field path)

The caller (the Spark layer) adds what only it knows: topic, partition, offset, schema id.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.errors import KafkaError


class FormatError(KafkaError, ValueError):
    """Base class of the payload-format errors: bad input, never retriable."""


class FramingError(FormatError):
    """A registry wire framing is wrong: no magic byte, or fewer bytes than its header.

    Attributes:
        reason: what is wrong, e.g. ``magic byte 0x7b, expected 0x00``.
        index: the value's position in the column being decoded, when known.
    """

    def __init__(self, reason: str, index: int | None = None) -> None:
        super().__init__(reason if index is None else f"record {index}: {reason}")
        self.reason = reason
        self.index = index


class UnknownSchemaError(FormatError):
    """A framed value names a schema id the caller has no schema for.

    Attributes:
        schema_id: the id in the framing or a header (an ``int``), or the GUID in a header.
        index: the value's position in the column being decoded.
    """

    def __init__(self, schema_id: int | uuid.UUID, index: int) -> None:
        super().__init__(f"record {index}: no schema for id {schema_id}")
        self.schema_id = schema_id
        self.index = index


class AvroError(FormatError):
    """Base class of the Avro errors (schema and payload)."""


class SchemaError(AvroError):
    """An Avro schema is malformed, too large, too deeply nested, or names an undefined type.

    Attributes:
        reason: what is wrong.
        path: where in the schema, as a JSON-pointer-like path (``/fields/2/type``); empty for
            the whole schema.
    """

    def __init__(self, reason: str, path: str = "") -> None:
        super().__init__(f"{reason} (at {path or '/'})")
        self.reason = reason
        self.path = path


class IncompatibleSchemaError(SchemaError):
    """A well-formed schema that cannot be used as asked.

    Raised when mapping to Spark types (a recursive record, as spark-avro's
    ``SchemaConverters.toSqlType`` refuses it; a decimal precision above Spark's 38) and when a
    writer schema cannot be resolved to a reader schema (the Avro specification's "Schema
    Resolution").
    """


class AvroDecodeError(AvroError):
    """A payload does not decode with its writer schema.

    Attributes:
        index: the payload's position in the column being decoded (0-based); the caller maps
            it to topic, partition and offset.
        reason: what is wrong (truncated, trailing bytes, a length past the end, ...).
        position: the byte offset within the payload where decoding stopped.
        schema_id: the writer schema's registry id, when the payload was framed with one.
    """

    def __init__(
        self, index: int, reason: str, position: int, schema_id: int | None = None
    ) -> None:
        writer = "" if schema_id is None else f" (writer schema id {schema_id})"
        super().__init__(f"record {index}{writer}: {reason} (at byte {position})")
        self.index = index
        self.reason = reason
        self.position = position
        self.schema_id = schema_id


class AvroEncodeError(AvroError):
    """A value does not fit the Avro schema it is written with (the sink's encoder).

    Attributes:
        index: the row's position in the column being encoded (0-based).
        path: the field's path in the schema (``/order/amount``; ``/`` for the root).
        reason: what does not fit (a null where the schema has no null, an enum symbol the
            enum lacks, a fixed of another size, a decimal beyond its precision, an integer
            out of range).
        schema_id: the schema's registry id, when the encoder was given one.
    """

    def __init__(self, index: int, path: str, reason: str, schema_id: int | None = None) -> None:
        schema = "" if schema_id is None else f" (schema id {schema_id})"
        super().__init__(f"row {index}{schema}: {reason} (at {path or '/'})")
        self.index = index
        self.path = path
        self.reason = reason
        self.schema_id = schema_id


class JsonError(FormatError):
    """Base class of the JSON errors (schema and payload)."""


class JsonSchemaError(JsonError):
    """A JSON Schema is malformed, too large or deep, or cannot be mapped to a Spark type.

    Attributes:
        reason: what is wrong.
        pointer: where in the schema document, as a JSON pointer (RFC 6901:
            ``/properties/a/items``); empty for the whole document.
    """

    def __init__(self, reason: str, pointer: str = "") -> None:
        super().__init__(f"{reason} (at {pointer or '/'})")
        self.reason = reason
        self.pointer = pointer


class JsonDecodeError(JsonError):
    """A JSON document does not parse, or a value in it does not fit the Spark type.

    Raised in ``FAILFAST`` mode (Spark's ``from_json`` raises
    ``MALFORMED_RECORD_IN_PARSING`` for the same documents); in ``PERMISSIVE`` mode it is
    what the caller's ``on_error`` is given.

    Attributes:
        index: the document's position in the column being decoded (0-based).
        reason: what is wrong (``malformed JSON: ...``, ``expected long at /a, got string``).
    """

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"record {index}: {reason}")
        self.index = index
        self.reason = reason


class ProtobufError(FormatError):
    """Base class of the Protobuf errors (descriptors, schema mapping, payloads)."""


class ProtobufSchemaError(ProtobufError):
    """A Protobuf schema cannot be used: ``.proto`` text protoc refuses, a descriptor set that
    does not parse or lacks a dependency, a message name not in it, or a message that cannot
    be mapped to Spark types (a recursive field without ``recursive.fields.max.depth``, as
    spark-protobuf's ``SchemaConverters`` refuses it; an option value out of range).

    Attributes:
        reason: what is wrong.
        where: the message or field concerned (its full name), or the option; may be empty.
    """

    def __init__(self, reason: str, where: str = "") -> None:
        super().__init__(f"{reason} (at {where})" if where else reason)
        self.reason = reason
        self.where = where


class ProtobufDecodeError(ProtobufError):
    """A payload does not parse as the message (``FAILFAST``; spark-protobuf raises
    ``MALFORMED_PROTOBUF_MESSAGE`` for the same bytes), or its message indexes do not name a
    message of the schema.

    Attributes:
        index: the payload's position in the column being decoded (0-based).
        reason: what is wrong.
    """

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"record {index}: {reason}")
        self.index = index
        self.reason = reason


class ProtobufEncodeError(ProtobufError):
    """A value does not fit the Protobuf message it is written as (``to_protobuf`` and the
    sink's encoder): an enum name or number the enum does not declare, a null element in a
    list (a repeated field holds no null), an unsigned value out of range.

    Attributes:
        index: the row's position in the column being encoded (0-based).
        path: the field's path in the message (``pkg.Msg.field.sub``).
        reason: what does not fit.
    """

    def __init__(self, index: int, path: str, reason: str) -> None:
        super().__init__(f"row {index}: {reason} (at {path or '/'})")
        self.index = index
        self.path = path
        self.reason = reason
