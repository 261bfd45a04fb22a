"""A column of registry-framed Avro values -> one Arrow array, writer schemas mixed.

A topic's values carry their writer schema's id in Confluent's framing
(:mod:`spark_kafka_py.formats.framing`); after a schema change one fetched batch holds values
of several writer schemas, all to be read as one reader schema. :func:`decode_framed` groups
the rows by schema id, decodes each group with the caller's :class:`.decoder.AvroDecoder` for
that id (writer -> the common reader schema, built once per id by the caller and cached), and
puts the rows back in their order. No I/O: the caller finds the schemas (the registry client)
and maps row indexes to topic, partition and offset.

Modes, as spark-avro's ``mode`` option: without ``on_error`` (``FAILFAST``) a bad row raises
(framing errors first, then by schema id); with it (``PERMISSIVE``) each bad row is reported
and becomes null. Bad rows: a value without the magic byte or shorter than the 5-byte header
(:class:`FramingError`), an id the caller has no schema for (:class:`UnknownSchemaError`), a
payload that does not decode with its writer schema (:class:`AvroDecodeError`, with
``schema_id`` set). Every error's ``index`` is the row's index in ``values``.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.encoder import write_long
from spark_kafka_py.formats.avro.schema import Primitive, Schema
from spark_kafka_py.formats.errors import (
    AvroDecodeError,
    FormatError,
    FramingError,
    UnknownSchemaError,
)

#: The caller's schema lookup: the decoder for a writer schema id, or None when unknown.
DecoderFor = Callable[[int], AvroDecoder | None]
#: PERMISSIVE's report of a bad row (its error carries the row's index).
OnError = Callable[[FormatError], None]


def decode_framed(
    values: Sequence[bytes | bytearray | memoryview | None],
    arrow_type: pa.DataType,
    decoder_for: DecoderFor,
    *,
    on_error: OnError | None = None,
) -> pa.Array:
    """Decode Confluent-framed Avro values of mixed writer schemas into one array.

    Args:
        values: the framed values in row order; None (a tombstone) gives a null row.
        arrow_type: the reader schema's mapped type (every decoder's ``arrow_type``).
        decoder_for: the decoder for a writer schema id (called once per distinct id per
            call), or None for an id without schema.
        on_error: None to raise at a bad row (``FAILFAST``); otherwise called with
            each bad row's error, the row becoming null (``PERMISSIVE``).

    Returns:
        An array of ``arrow_type`` with one row per value.

    Raises:
        FramingError, UnknownSchemaError, AvroDecodeError: a bad row, without ``on_error``.
        ValueError: a decoder whose ``arrow_type`` is not ``arrow_type``.
    """

    def by_key(key: SchemaKey) -> AvroDecoder | None:
        assert isinstance(key, int)  # the framing holds ids only
        return decoder_for(key)

    return decode_keyed(split_framed(values), arrow_type, by_key, on_error=on_error)


def decode_framed_column(
    values: pa.Array,
    arrow_type: pa.DataType,
    decoder_for: DecoderFor,
    *,
    on_error: OnError | None = None,
) -> pa.Array | None:
    """:func:`decode_framed` of a binary Arrow column, in place, when every non-null value is
    framed with one writer schema id; None otherwise (the caller then takes
    :func:`decode_framed`, which reports each bad row).

    The framing is checked and the ids read with numpy over the column's buffers, and the
    payloads are decoded from the data buffer at each value's offset + 5
    (:meth:`.decoder.AvroDecoder.decode_slices`): no Python object per row.

    Args:
        values: a ``binary`` or ``large_binary`` array (a chunked one is combined).
        arrow_type, decoder_for, on_error: as :func:`decode_framed`.

    Returns:
        The decoded array (one row per value, nulls null), or None: not binary, no non-null
        value, a value without the framing, several ids, an id without a decoder, a decoder
        of another type, or Confluent's raw top-level bytes.

    Raises:
        AvroDecodeError: a payload that does not decode (``index`` its row, ``schema_id``
            set), without ``on_error``.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type == pa.binary():
        offset_type: type[np.signedinteger] = np.int32
    elif values.type == pa.large_binary():
        offset_type = np.int64
    else:
        return None
    rows = len(values)
    if rows == 0 or values.null_count == rows:
        return None
    _, offsets_buffer, data = values.buffers()
    assert offsets_buffer is not None
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[
        values.offset : values.offset + rows + 1
    ].astype(np.int64)
    data = data if data is not None else pa.py_buffer(b"")
    raw = np.frombuffer(data, dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    valid = None
    present, sizes = starts, ends - starts
    if values.null_count:
        mask = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        valid = mask.astype(np.uint8)
        present, sizes = present[mask], sizes[mask]
    if not bool(np.all(sizes >= framing.HEADER_SIZE)):
        return None
    if not bool(np.all(raw[present] == framing.MAGIC_BYTE)):
        return None
    ids = (
        raw[present + 1].astype(np.int64) << 24
        | raw[present + 2].astype(np.int64) << 16
        | raw[present + 3].astype(np.int64) << 8
        | raw[present + 4].astype(np.int64)
    )
    first = int(ids[0])
    if not bool(np.all(ids == first)):
        return None
    schema_id = first - (1 << 32) if first >= 1 << 31 else first  # ">i", as split_framed
    decoder = decoder_for(schema_id)
    if decoder is None or decoder.arrow_type != arrow_type or raw_in_framing(decoder.writer):
        return None

    def report(error: AvroDecodeError) -> None:
        assert on_error is not None
        on_error(AvroDecodeError(error.index, error.reason, error.position, schema_id))

    try:
        return decoder.decode_slices(
            data,
            starts + framing.HEADER_SIZE,
            ends,
            valid,
            on_error=None if on_error is None else report,
        )
    except AvroDecodeError as exc:
        raise AvroDecodeError(exc.index, exc.reason, exc.position, schema_id) from None


def raw_in_framing(writer: Schema) -> bool:
    """Whether Confluent's framing carries this writer schema's values raw: a top-level
    ``"bytes"`` (no logical type) value follows the 5-byte header without Avro's length
    prefix, as Confluent's serializers write it and its deserializers read it; every other
    schema's value is an Avro datum."""
    root = writer.root
    return isinstance(root, Primitive) and root.type == "bytes" and root.logical_type is None


def _with_length(payload: bytes | bytearray | memoryview) -> bytes:
    """A raw value as Avro ``bytes``: its length (a zig-zag varint) first."""
    out = bytearray()
    write_long(out, len(payload))
    out += payload
    return bytes(out)


#: What names a writer schema: a registry id, or a GUID (a header id, Confluent 8).
SchemaKey = int | uuid.UUID
#: One row to decode: (its writer schema's key, its unframed payload), None for a null row,
#: or the :class:`FramingError` that makes it a bad row.
Keyed = tuple[SchemaKey, bytes | bytearray | memoryview] | FramingError | None


_FRAMED_ID = struct.Struct(">i").unpack_from


def split_framed(values: Sequence[bytes | bytearray | memoryview | None]) -> list[Keyed]:
    """Each framed value as (schema id, payload); None stays None; a value without the
    framing becomes its :class:`FramingError` (``index`` set to the row). One pass, no
    function call per well-framed row (this runs for every record of a formatted column)."""
    rows: list[Keyed] = []
    append = rows.append
    for row, value in enumerate(values):
        if value is None:
            append(None)
        elif len(value) >= framing.HEADER_SIZE and value[0] == framing.MAGIC_BYTE:
            append((_FRAMED_ID(value, 1)[0], value[framing.HEADER_SIZE :]))
        else:
            try:
                framing.parse(value)  # raises, saying why
            except FramingError as exc:
                append(FramingError(exc.reason, row))
    return rows


def decode_keyed(
    rows: Sequence[Keyed],
    arrow_type: pa.DataType,
    decoder_for: Callable[[SchemaKey], AvroDecoder | None],
    *,
    on_error: OnError | None = None,
) -> pa.Array:
    """Decode rows whose writer schemas are named by any key (a registry id in the framing
    or in a header, a GUID) into one array, in row order.

    Args:
        rows: per row, (writer schema key, payload), None (a null row), or the
            :class:`FramingError` that makes it bad.
        arrow_type, on_error: as :func:`decode_framed`.
        decoder_for: the decoder for a key (called once per distinct key), or None when the
            key names no schema (the rows fail with :class:`UnknownSchemaError`).

    Returns:
        An array of ``arrow_type`` with one row per row.

    Raises:
        FramingError, UnknownSchemaError, AvroDecodeError: a bad row, without ``on_error``
            (framing errors first, then by key in order of first appearance).
        ValueError: a decoder whose ``arrow_type`` is not ``arrow_type``.
    """
    keyed = [item for item in rows if item.__class__ is tuple]
    if keyed and len(keyed) + rows.count(None) == len(rows):
        keys = {item[0] for item in keyed}
        if len(keys) == 1:
            # the common case: one writer schema, no bad framing: decoded in place
            array = _decode_group(
                keys.pop(),
                [None if item is None else item[1] for item in rows],  # type: ignore[index]  # no FramingError: checked above
                None,
                arrow_type,
                decoder_for,
                on_error,
            )
            if array is not None:
                return array

    groups: dict[SchemaKey, tuple[list[int], list[bytes | bytearray | memoryview | None]]] = {}
    null_rows: list[int] = []

    def bad(row: int, error: FormatError) -> None:
        if on_error is None:
            raise error
        on_error(error)
        null_rows.append(row)

    for row, item in enumerate(rows):
        if item is None:
            null_rows.append(row)
        elif isinstance(item, FramingError):
            bad(row, item)
        else:
            key, payload = item
            members, payloads = groups.setdefault(key, ([], []))
            members.append(row)
            payloads.append(payload)

    pieces: list[pa.Array] = []
    order: list[int] = []  # the rows in the order of the pieces
    for key, (members, payloads) in groups.items():
        array = _decode_group(key, payloads, members, arrow_type, decoder_for, on_error)
        if array is None:
            for row in members:
                bad(row, UnknownSchemaError(key, row))
            continue
        pieces.append(array)
        order.extend(members)
    # null rows (tombstones, bad rows) last
    pieces.append(pa.nulls(len(null_rows), type=arrow_type))
    order.extend(null_rows)
    combined = pa.concat_arrays(pieces)
    # row r is at position p where order[p] == r: the inverse permutation of order
    return combined.take(pc.sort_indices(pa.array(order, type=pa.int64())))


def _decode_group(
    key: SchemaKey,
    payloads: list[bytes | bytearray | memoryview | None],
    members: list[int] | None,
    arrow_type: pa.DataType,
    decoder_for: Callable[[SchemaKey], AvroDecoder | None],
    on_error: OnError | None,
) -> pa.Array | None:
    """Decode the payloads of one writer schema; None when ``key`` names no schema.

    ``members`` are the payloads' rows (errors are reported with them), None when the
    payloads are the rows themselves.
    """
    decoder = decoder_for(key)
    if decoder is None:
        return None
    if decoder.arrow_type != arrow_type:
        raise ValueError(
            f"the decoder for schema {key} gives {decoder.arrow_type}, not {arrow_type}"
        )
    sid = key if isinstance(key, int) else None
    if raw_in_framing(decoder.writer):  # Confluent's raw bytes: given Avro's length prefix
        payloads = [None if p is None else _with_length(p) for p in payloads]

    def row_of(index: int) -> int:
        return index if members is None else members[index]

    def report(error: AvroDecodeError) -> None:
        assert on_error is not None
        on_error(AvroDecodeError(row_of(error.index), error.reason, error.position, sid))

    try:
        return decoder.decode(payloads, on_error=None if on_error is None else report)
    except AvroDecodeError as exc:
        raise AvroDecodeError(row_of(exc.index), exc.reason, exc.position, sid) from None
