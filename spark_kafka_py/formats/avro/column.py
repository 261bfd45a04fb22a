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

from collections.abc import Callable, Sequence

import pyarrow as pa

from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro.decoder import AvroDecoder
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
    groups: dict[int, tuple[list[int], list[memoryview]]] = {}
    null_rows: list[int] = []

    def bad(row: int, error: FormatError) -> None:
        if on_error is None:
            raise error
        on_error(error)
        null_rows.append(row)

    for row, value in enumerate(values):
        if value is None:
            null_rows.append(row)
            continue
        try:
            framed = framing.parse(value)
        except FramingError as exc:
            bad(row, FramingError(exc.reason, row))
            continue
        rows, payloads = groups.setdefault(framed.schema_id, ([], []))
        rows.append(row)
        payloads.append(framed.payload)

    pieces: list[pa.Array] = []
    positions = [0] * len(values)
    size = 0
    for schema_id, (rows, payloads) in groups.items():
        decoder = decoder_for(schema_id)
        if decoder is None:
            for row in rows:
                bad(row, UnknownSchemaError(schema_id, row))
            continue
        if decoder.arrow_type != arrow_type:
            raise ValueError(
                f"the decoder for schema id {schema_id} gives {decoder.arrow_type}, "
                f"not {arrow_type}"
            )

        def report(error: AvroDecodeError, rows: list[int] = rows, sid: int = schema_id) -> None:
            assert on_error is not None
            on_error(AvroDecodeError(rows[error.index], error.reason, error.position, sid))

        try:
            array = decoder.decode(payloads, on_error=None if on_error is None else report)
        except AvroDecodeError as exc:
            raise AvroDecodeError(rows[exc.index], exc.reason, exc.position, schema_id) from None
        for n, row in enumerate(rows):
            positions[row] = size + n
        pieces.append(array)
        size += len(array)
    # null rows (tombstones, bad rows) all point at one null at the end
    for row in null_rows:
        positions[row] = size
    pieces.append(pa.nulls(1, type=arrow_type))
    combined = pa.concat_arrays(pieces)
    return combined.take(pa.array(positions, type=pa.int64()))
