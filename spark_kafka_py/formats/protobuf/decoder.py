"""Protobuf payloads -> one Arrow array, with spark-protobuf's ``from_protobuf`` semantics.

Each payload is parsed by the protobuf package's message class for the descriptor (upb, C),
with map fields read as repeated entries (wire order, duplicate keys kept, as protobuf-java's
``DynamicMessage`` gives them to spark-protobuf's ``ProtobufDeserializer``), then converted by a
plan built once from :func:`~spark_kafka_py.formats.protobuf.types.map_message`:

- a field with presence (proto2 optional, proto3 ``optional``, oneof members, messages) absent
  from the payload is null; a field without presence (proto3 implicit) holding its zero is null
  too (it is not on the wire), unless ``emit.default.values`` (then its zero); a proto2 field
  with a declared default reads as that default when absent;
- repeated fields and maps are never null: absent, they are empty;
- enums: the value's name (an unknown number of an open enum:
  ``UNKNOWN_ENUM_VALUE_<Enum>_<n>``, protobuf-java's name for it), or the number with
  ``enums.as.ints``;
- uint32/fixed32 and uint64/fixed64 read as the signed 32/64-bit value of the same bits
  (Java's int/long), unless upcast;
- ``Timestamp`` and ``Duration``: ``seconds * 1,000,000 + nanos / 1000`` microseconds (the
  division truncating, as spark-protobuf's ``TimeUnit.NANOSECONDS.toMicros``: a Duration of
  -1 s and -500 ns is -1,000,000 microseconds);
- a map entry's missing key or value reads as its zero (a message value: an empty message);
- with ``convert.any.fields.to.json``, a ``google.protobuf.Any`` reads as the JSON text
  protobuf-java's ``JsonFormat`` prints for it
  (:class:`~spark_kafka_py.formats.protobuf.any_json.AnyJsonPrinter`, the registry every message
  of the schema); one it refuses (a type URL not in the schema, a value that does not parse as
  its type, ...) makes the record a bad record, as spark-protobuf does.

A payload that does not parse: ``FAILFAST`` raises
:class:`~spark_kafka_py.formats.errors.ProtobufDecodeError` naming its index; ``PERMISSIVE``
gives a null row. A null payload gives a null row.

Acceleration: when the optional Cython extension :mod:`spark_kafka_py.formats.protobuf._accel`
was built (``setup.py``) and reads the message (its module docstring lists what it does not),
:meth:`ProtobufDecoder.decode` runs it instead: it reads the wire format straight into Arrow
buffers, with the same results (``tests/formats/protobuf/test_accel.py`` compares both). A
payload it refuses (malformed, a Timestamp past 64 bits, ...) is a null row in ``PERMISSIVE``
when the upb route alone gives it one; otherwise (``FAILFAST``, or a row only the compiled
reader refuses) the whole batch is decoded by the upb route, whose results and errors are
therefore the ones given. ``SPARK_KAFKA_PY_PURE=1``
or ``ProtobufDecoder(..., accelerate=False)`` keeps the upb route; ``implementation`` says which
(``"accel"`` or ``"upb"``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
from google.protobuf.descriptor import Descriptor  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError, Message  # type: ignore[import-untyped]

from spark_kafka_py.formats import framing
from spark_kafka_py.formats._extension import load_extension
from spark_kafka_py.formats.errors import ProtobufDecodeError
from spark_kafka_py.formats.protobuf.any_json import AnyJsonError, AnyJsonPrinter, all_messages
from spark_kafka_py.formats.protobuf.descriptors import ProtobufSchema
from spark_kafka_py.formats.protobuf.types import (
    PERMISSIVE,
    FieldPlan,
    Node,
    ProtobufOptions,
    map_message,
)

if TYPE_CHECKING:
    from spark_kafka_py.formats.protobuf._accel import AccelPlan

Convert = Callable[[Any], Any]


_ACCEL: Final = load_extension("spark_kafka_py.formats.protobuf._accel")


def _signed32(v: int) -> int:
    return v - 0x1_0000_0000 if v >= 0x8000_0000 else v


def _signed64(v: int) -> int:
    return v - 0x1_0000_0000_0000_0000 if v >= 0x8000_0000_0000_0000 else v


#: Spark's timestamp and day-time interval are 64-bit microseconds.
_MIN_MICROS = -(2**63)
_MAX_MICROS = 2**63 - 1


class _OutOfRange(ValueError):
    """A Timestamp or Duration past Spark's 64-bit microseconds (spark-protobuf fails there
    too: ``Math.multiplyExact`` / ``addExact`` raise ``ArithmeticException``)."""


def _micros(value: int, what: str) -> int:
    if not _MIN_MICROS <= value <= _MAX_MICROS:
        raise _OutOfRange(f"a {what} of {value} microseconds, past 64 bits")
    return value


def _truncating_micros(nanos: int) -> int:
    return nanos // 1000 if nanos >= 0 else -((-nanos) // 1000)


def _text(value: str | bytes) -> str:
    """A ``string`` field's value: upb gives a proto2 string that is not UTF-8 (which proto2
    does not check) as bytes; protobuf-java, under spark-protobuf, decodes it with U+FFFD
    for each malformed sequence (``new String(bytes, UTF_8)``), as Python's ``replace``."""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


#: What makes a value a bad record once parsed (a null row in ``PERMISSIVE``).
_BAD_VALUE: Final = (_OutOfRange, AnyJsonError)


def _converter(node: Node, emit: bool, anyj: Convert | None = None) -> Convert | None:
    """A function from the parsed Python value to the Arrow-ready value (None: identity);
    ``anyj`` prints an ``Any`` as JSON (``any_json`` nodes)."""
    kind = node.kind
    if kind == "any_json":
        assert anyj is not None
        return anyj
    if kind == "string":
        return _text
    if kind == "uint32":
        return _signed32
    if kind == "uint64":
        return _signed64
    if kind == "uint64_decimal":
        return Decimal
    if kind == "enum":
        enum = node.enum
        assert enum is not None
        names = {v.number: v.name for v in enum.values}
        prefix = f"UNKNOWN_ENUM_VALUE_{enum.name}_"
        return lambda n: names.get(n) or f"{prefix}{n}"
    if kind in ("timestamp", "duration"):
        return lambda m: _micros(m.seconds * 1_000_000 + _truncating_micros(m.nanos), kind)
    if kind == "wrapper":
        # the value has no presence: its zero reads as null unless emit.default.values, as
        # spark-protobuf's getFieldValue gives it
        return _field_reader(node.fields[0], emit, anyj)
    if kind == "map":
        key = _converter(node.fields[0].node, emit, anyj)
        value = _converter(node.fields[1].node, emit, anyj)
        if key is None and value is None:
            return lambda entries: [(e.key, e.value) for e in entries[:]]
        k: Convert = key or (lambda x: x)
        v: Convert = value or (lambda x: x)
        return lambda entries: [(k(e.key), v(e.value)) for e in entries[:]]
    if kind == "message":
        return _message_converter(node.fields, emit, anyj)
    return None


def _message_converter(
    fields: Sequence[FieldPlan], emit: bool, anyj: Convert | None = None
) -> Convert:
    steps = [_field_reader(f, emit, anyj) for f in fields]
    names = [f.name for f in fields]

    def convert(m: Message) -> dict[str, Any]:
        return {name: step(m) for name, step in zip(names, steps, strict=True)}

    return convert


def _field_reader(
    f: FieldPlan, emit: bool, anyj: Convert | None = None
) -> Callable[[Message], Any]:
    name = f.name
    if f.dummy:  # not a field of the message: spark-protobuf leaves it null
        return lambda m: None
    conv = _converter(f.node, emit, anyj)
    if f.repeated:  # maps too: the map converter takes the entries
        if f.is_map:
            assert conv is not None
            return lambda m: conv(getattr(m, name))
        # a slice copies a upb repeated container to a list ~3x faster than list() does
        if conv is None:
            return lambda m: getattr(m, name)[:]
        return lambda m: [conv(x) for x in getattr(m, name)[:]]
    c: Convert = conv or (lambda x: x)
    if f.presence:
        default = f.default
        if default is not None:
            return lambda m: c(getattr(m, name))  # absent: the declared default
        return lambda m: c(getattr(m, name)) if m.HasField(name) else None
    # no presence (proto3 implicit): the zero is "not on the wire"
    kind = f.node.kind
    if emit:
        return lambda m: c(getattr(m, name))
    if kind in ("float", "double"):
        return lambda m: c(v) if (v := getattr(m, name)) != 0.0 or _negative_zero(v) else None
    return lambda m: c(v) if (v := getattr(m, name)) else None


def _negative_zero(v: float) -> bool:
    return struct.pack(">d", v)[0] == 0x80


def _has_required(d: Descriptor, seen: set[str] | None = None) -> bool:
    """Whether a message (or one it contains) declares a proto2 ``required`` field."""
    seen = set() if seen is None else seen
    if d.full_name in seen:
        return False
    seen.add(d.full_name)
    for f in d.fields:
        if f.is_required:
            return True
        if f.message_type is not None and _has_required(f.message_type, seen):
            return True
    return False


def _has_any_json(node: Node) -> bool:
    return node.kind == "any_json" or any(_has_any_json(f.node) for f in node.fields)


def _any_printer(schema: ProtobufSchema, cls: type[Message], options: ProtobufOptions) -> Convert:
    """``Any`` messages (of ``cls``'s pool, map fields as entries) to their JSON text; the
    registry is every message of the schema's files, as spark-protobuf's ``buildTypeRegistry``
    of the descriptor set; map entries are known by their option in the schema's own pool."""
    map_entries = {
        d.full_name
        for f in schema.files
        for d in all_messages(schema.pool.FindFileByName(f.name))
        if d.GetOptions().map_entry
    }
    pool = cls.DESCRIPTOR.file.pool
    files = [pool.FindFileByName(f.name) for f in schema.files]
    return AnyJsonPrinter(files, map_entries, options.enums_as_ints).print_any


class ProtobufDecoder:
    """Decode payloads of one message type into an Arrow struct array.

    Args:
        schema: the parsed schema (:mod:`~spark_kafka_py.formats.protobuf.descriptors`).
        message: the message's descriptor (``schema.message(name)``).
        options: spark-protobuf's options.
        accelerate: use the compiled reader when it is built and reads the message (False:
            always the upb route).

    Attributes:
        arrow_type: the result's Arrow struct type.
        spark_type: the Spark ``StructType`` JSON (``from_protobuf``'s).
        implementation: ``"accel"`` (the compiled reader, the upb route for batches it
            refuses) or ``"upb"``.

    Raises:
        ProtobufSchemaError: the message cannot be mapped (see
            :func:`~spark_kafka_py.formats.protobuf.types.map_message`).
    """

    def __init__(
        self,
        schema: ProtobufSchema,
        message: Descriptor,
        options: ProtobufOptions | None = None,
        *,
        accelerate: bool = True,
    ) -> None:
        self.options = options or ProtobufOptions()
        node = map_message(message, self.options)
        self.arrow_type: pa.DataType = node.arrow
        self.spark_type: Any = node.spark
        self._cls = schema.decode_class(message)
        # protobuf-java's parseFrom refuses a message missing a required field; upb does not
        self._check_required = _has_required(message)
        emit = self.options.emit_default_values
        anyj = _any_printer(schema, self._cls, self.options) if _has_any_json(node) else None
        self._convert = _message_converter(node.fields, emit, anyj)
        self._columns = [
            (_field_reader(f, emit, anyj), self.arrow_type.field(i).type)
            for i, f in enumerate(node.fields)
        ]
        self._accel: AccelPlan | None = None
        # an Any as JSON is printed by the upb route only
        if accelerate and _ACCEL is not None and not self._check_required and anyj is None:
            self._accel = _ACCEL.plan(message, node, self.options)
        self.implementation = "upb" if self._accel is None else "accel"

    def _parse(self, payload: bytes | bytearray | memoryview, index: int) -> Message:
        try:
            parsed = self._cls.FromString(payload if isinstance(payload, bytes) else bytes(payload))
        except DecodeError as e:
            raise ProtobufDecodeError(index, f"malformed Protobuf message: {e}") from e
        if self._check_required and not parsed.IsInitialized():
            missing = ", ".join(parsed.FindInitializationErrors())
            raise ProtobufDecodeError(index, f"malformed Protobuf message: missing {missing}")
        return parsed

    def _columns_of(self, parsed: list[Message | None]) -> tuple[list[pa.Array], bool]:
        """One Arrow array per top-level field (no row dicts), and whether any row is null."""
        present = [m for m in parsed if m is not None]
        nulls = len(present) != len(parsed)
        children = []
        for read, arrow in self._columns:
            values = [read(m) for m in present]
            if nulls:
                it = iter(values)
                values = [None if m is None else next(it) for m in parsed]
            children.append(pa.array(values, type=arrow))
        return children, nulls

    def decode_one(self, payload: bytes | bytearray | memoryview, index: int = 0) -> Any:
        """One payload as the Python value Arrow takes for :attr:`arrow_type` (a dict).

        Raises:
            ProtobufDecodeError: the bytes do not parse as the message.
        """
        parsed = self._parse(payload, index)
        try:
            return self._convert(parsed)
        except _BAD_VALUE as e:
            raise ProtobufDecodeError(index, str(e)) from e

    def decode(self, payloads: Sequence[bytes | bytearray | memoryview | None]) -> pa.Array:
        """Decode a column of payloads (unframed message bytes; None: a null row).

        Returns:
            A ``pa.StructArray`` of :attr:`arrow_type`, one row per payload.

        Raises:
            ProtobufDecodeError: ``FAILFAST`` and a payload that does not parse, or holds a
                Timestamp or Duration past Spark's 64-bit microseconds, or an ``Any``
                protobuf-java's JSON printer refuses (``convert.any.fields.to.json``) (its
                index; in ``PERMISSIVE`` such rows are null).
        """
        if self._accel is not None:
            rows = payloads if isinstance(payloads, list) else list(payloads)
            accel = self._accel
            out = self._decode_accel(
                lambda start: accel.append(rows, start), rows.__getitem__, accel
            )
            if out is not None:
                return out
            payloads = rows
        return self._decode_upb(payloads)

    def decode_column(self, values: pa.Array | pa.ChunkedArray, skip: int = 0) -> pa.Array:
        """:meth:`decode` of an Arrow column of payloads (``binary`` or ``large_binary``; a
        null: a null row), each value past its first ``skip`` bytes (a framing the caller
        has checked, e.g. Confluent's 6 bytes of magic byte, schema id and message indexes
        ``[0]``). The compiled reader reads the column's buffers in place, without a Python
        object per value; the upb route takes the payloads as ``bytes``.

        Returns:
            A ``pa.StructArray`` of :attr:`arrow_type`, one row per value.

        Raises:
            ProtobufDecodeError: as :meth:`decode`.
            ValueError: the column is not binary, or a non-null value is shorter than
                ``skip`` bytes.
        """
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if not (pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
            raise ValueError(f"a binary column of payloads was expected, not {values.type}")
        if self._accel is not None:
            accel = self._accel

            def payload_at(i: int) -> bytes:
                value: bytes = values[i].as_py()
                return value[skip:]

            out = self._decode_accel(
                lambda start: accel.append_arrow(values, start, skip), payload_at, accel
            )
            if out is not None:
                return out
        if skip:
            values = framing.payloads_past(values, skip)
        return self._decode_upb(values.to_pylist())

    def _decode_accel(
        self,
        append: Callable[[int], int],
        payload_at: Callable[[int], bytes | bytearray | memoryview | None],
        accel: AccelPlan,
    ) -> pa.Array | None:
        """The compiled reader's array of the rows ``append(start)`` appends (it returns the
        index of the first payload the reader refuses, or -1; ``payload_at(i)`` is that
        payload); a payload it refuses is one upb does not parse (a null row in
        ``PERMISSIVE``), or one the upb route alone gives a null row (a Timestamp out of
        range). None otherwise (``FAILFAST``, or a row upb reads that it refuses): the whole
        batch is then the upb route's, whose error is the one raised (the first payload that
        does not parse, before any Timestamp out of range)."""
        permissive = self.options.mode == PERMISSIVE
        accel.reset()
        start = 0
        while (refused := append(start)) >= 0:
            if not permissive:
                accel.reset()
                return None
            payload = payload_at(refused)
            assert payload is not None
            try:
                self._parse(payload, refused)
            except ProtobufDecodeError:
                accel.append_null()
                start = refused + 1
                continue
            try:
                alone = self._decode_upb([payload])
            except Exception:
                alone = None
            if alone is None or alone.null_count != 1:
                accel.reset()
                return None
            accel.append_null()
            start = refused + 1
        return accel.finish()

    def _decode_upb(self, payloads: Sequence[bytes | bytearray | memoryview | None]) -> pa.Array:
        """:meth:`decode` by the upb route."""
        permissive = self.options.mode == PERMISSIVE
        parse = self._parse
        parsed: list[Message | None] = []
        append = parsed.append
        for i, p in enumerate(payloads):
            if p is None:
                append(None)
                continue
            try:
                append(parse(p, i))
            except ProtobufDecodeError:
                if not permissive:
                    raise
                append(None)
        try:
            children, nulls = self._columns_of(parsed)
        except _BAD_VALUE:
            # find the rows, one by one: FAILFAST names the first, PERMISSIVE nulls them
            for i, m in enumerate(parsed):
                if m is None:
                    continue
                try:
                    self._convert(m)
                except _BAD_VALUE as e:
                    if not permissive:
                        raise ProtobufDecodeError(i, str(e)) from e
                    parsed[i] = None
            children, nulls = self._columns_of(parsed)
        mask = pa.array([m is None for m in parsed], type=pa.bool_()) if nulls else None
        if not children:
            return pa.array([None if m is None else {} for m in parsed], type=self.arrow_type)
        return pa.StructArray.from_arrays(children, fields=list(self.arrow_type), mask=mask)


def decode_protobuf(
    payloads: Sequence[bytes | bytearray | memoryview | None],
    schema: ProtobufSchema,
    message_name: str | None = None,
    options: ProtobufOptions | None = None,
) -> pa.Array:
    """``from_protobuf(col, messageName, ...)`` over a column of payloads, as one Arrow array
    (see :class:`ProtobufDecoder`)."""
    return ProtobufDecoder(schema, schema.message(message_name), options).decode(payloads)
