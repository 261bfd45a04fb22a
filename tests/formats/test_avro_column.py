"""Framed columns of mixed writer schemas (:func:`decode_framed`): rows grouped by schema id,
decoded by each id's decoder into the reader's type, put back in order; bad rows raise
(FAILFAST) or become null and are reported with their row index (PERMISSIVE).

Payloads are written by fastavro (the oracle); expected rows are written out by hand.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from spark_kafka_py.formats.avro import AvroDecoder, decode_framed, parse_schema
from spark_kafka_py.formats.errors import (
    AvroDecodeError,
    FormatError,
    FramingError,
    UnknownSchemaError,
)

V1 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "int"}]}
V2 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def _framed(schema_id: int, schema: Any, value: Any) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), value)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


READER = parse_schema(json.dumps(V2))
DECODERS = {
    1: AvroDecoder(parse_schema(json.dumps(V1)), READER),
    2: AvroDecoder(READER),
}
TYPE = DECODERS[2].arrow_type


def _lookup(calls: list[int]) -> Any:
    def decoder_for(schema_id: int) -> AvroDecoder | None:
        calls.append(schema_id)
        return DECODERS.get(schema_id)

    return decoder_for


def test_mixed_writer_schemas_come_back_in_row_order() -> None:
    values = [
        _framed(2, V2, {"id": 10, "note": "new"}),
        _framed(1, V1, {"id": 1}),
        None,
        _framed(2, V2, {"id": 2**40, "note": None}),
        _framed(1, V1, {"id": 2}),
    ]
    calls: list[int] = []
    array = decode_framed(values, TYPE, _lookup(calls))
    assert array.type == TYPE
    assert array.to_pylist() == [
        {"id": 10, "note": "new"},
        {"id": 1, "note": None},
        None,
        {"id": 2**40, "note": None},
        {"id": 2, "note": None},
    ]
    assert sorted(calls) == [1, 2]  # once per id


def test_an_empty_column_and_a_column_of_tombstones() -> None:
    assert decode_framed([], TYPE, _lookup([])).to_pylist() == []
    assert decode_framed([None, None], TYPE, _lookup([])).to_pylist() == [None, None]


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (b'{"id": 1}', FramingError, "record 1: magic byte 0x7b"),
        (b"\x00\x00\x01", FramingError, "record 1: 3 bytes"),
        (b"\x00\x00\x00\x00\x07\x02", UnknownSchemaError, "record 1: no schema for id 7"),
        (b"\x00\x00\x00\x00\x01", AvroDecodeError, r"record 1 \(writer schema id 1\): trunc"),
        (b"\x00\x00\x00\x00\x01\x02\x02", AvroDecodeError, "record 1 .*trailing"),
    ],
)
def test_failfast(value: bytes, error: type[FormatError], match: str) -> None:
    values = [_framed(1, V1, {"id": 5}), value, _framed(1, V1, {"id": 6})]
    with pytest.raises(error, match=match) as info:
        decode_framed(values, TYPE, _lookup([]))
    assert info.value.index == 1  # type: ignore[attr-defined]


def test_permissive_nulls_bad_rows_and_reports_each() -> None:
    values = [
        _framed(1, V1, {"id": 5}),
        b"\x01junk",
        _framed(2, V2, {"id": 6, "note": "x"}),
        b"\x00\x00\x00\x00\x09\x00",
        b"\x00\x00\x00\x00\x02\x02\x04",  # id 1, then union index 2 of ["null", "string"]
        _framed(1, V1, {"id": 7}),
    ]
    errors: list[FormatError] = []
    array = decode_framed(values, TYPE, _lookup([]), on_error=errors.append)
    assert array.to_pylist() == [
        {"id": 5, "note": None},
        None,
        {"id": 6, "note": "x"},
        None,
        None,
        {"id": 7, "note": None},
    ]
    found = sorted((e.index, type(e).__name__) for e in errors)  # type: ignore[attr-defined]
    assert found == [(1, "FramingError"), (3, "UnknownSchemaError"), (4, "AvroDecodeError")]
    decode_error = next(e for e in errors if isinstance(e, AvroDecodeError))
    assert decode_error.schema_id == 2
    assert "union index 2" in decode_error.reason


def test_a_decoder_of_another_type_is_refused() -> None:
    other = AvroDecoder(parse_schema('"string"'))
    with pytest.raises(ValueError, match="gives string"):
        decode_framed([b"\x00\x00\x00\x00\x01\x02a"], TYPE, lambda _id: other)


def test_the_result_is_a_plain_array() -> None:
    array = decode_framed([_framed(1, V1, {"id": 5})], TYPE, _lookup([]))
    assert isinstance(array, pa.StructArray)
    array.validate(full=True)


def test_a_binary_column_of_one_id_decodes_in_place() -> None:
    from spark_kafka_py.formats.avro.column import decode_framed_column

    values = [
        b"",  # sliced off below: the column starts at an offset
        _framed(1, V1, {"id": 7}),
        None,
        _framed(1, V1, {"id": -3}),
    ]
    for arrow in (pa.binary(), pa.large_binary()):
        column = pa.array(values, type=arrow).slice(1)
        calls: list[int] = []
        array = decode_framed_column(column, TYPE, _lookup(calls))
        assert array is not None and array.type == TYPE
        assert array.to_pylist() == [{"id": 7, "note": None}, None, {"id": -3, "note": None}]
        assert calls == [1]
    # not the fast path: the caller takes decode_framed, which reports each bad row
    for other in (
        [_framed(1, V1, {"id": 1}), _framed(2, V2, {"id": 2, "note": None})],  # two ids
        [_framed(1, V1, {"id": 1}), b"\x01\x00\x00\x00\x01\x02"],  # no magic byte
        [_framed(1, V1, {"id": 1}), b"\x00\x00\x00"],  # shorter than the framing
        [_framed(9, V1, {"id": 1})],  # an id without a decoder
        [None, None],  # nothing to decode
    ):
        assert decode_framed_column(pa.array(other, type=pa.binary()), TYPE, _lookup([])) is None
    assert decode_framed_column(pa.array(["x"]), TYPE, _lookup([])) is None  # not binary


def test_a_binary_column_s_bad_payload_in_both_modes() -> None:
    from spark_kafka_py.formats.avro.column import decode_framed_column

    column = pa.array(
        [_framed(1, V1, {"id": 1}), b"\x00\x00\x00\x00\x01", None, _framed(1, V1, {"id": 2})],
        type=pa.binary(),
    )
    with pytest.raises(AvroDecodeError) as failed:
        decode_framed_column(column, TYPE, _lookup([]))
    assert (failed.value.index, failed.value.schema_id) == (1, 1)
    reported: list[FormatError] = []
    array = decode_framed_column(column, TYPE, _lookup([]), on_error=reported.append)
    assert array is not None
    assert array.to_pylist() == [{"id": 1, "note": None}, None, None, {"id": 2, "note": None}]
    assert [(e.index, e.schema_id) for e in reported] == [(1, 1)]  # type: ignore[attr-defined]
