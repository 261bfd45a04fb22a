"""The sink's Avro encoding without Spark, a broker or a registry: plain Avro writer schemas
(``avroSchema``, no ``schema.registry.url``), and framed ones built by hand. Payloads are read
back by fastavro; framed bytes are written out literally."""

from __future__ import annotations

import io
import json

import fastavro
import pyarrow as pa
import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from spark_kafka_py.errors import ConfigError, RecordFormatError
from spark_kafka_py.spark.payload_write import WritePayload, WriterSchema, encode_batch
from spark_kafka_py.spark.sink import options_for_write

RECORD = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "a", "type": "int"}, {"name": "s", "type": ["null", "string"]}],
}
VALUE = StructType(
    [
        StructField(
            "value", StructType([StructField("a", IntegerType()), StructField("s", StringType())])
        )
    ]
)
ARROW = pa.struct([("a", pa.int32()), ("s", pa.string())])


def _options(**extra: str) -> dict[str, str]:
    return {"kafka.bootstrap.servers": "localhost:9092", "topic": "t", **extra}


def test_plain_avro_nulls_stay_null_and_a_misfit_names_the_row() -> None:
    parsed = options_for_write(
        _options(valueFormat="avro", avroSchema=json.dumps(RECORD)), VALUE, streaming=False
    )
    assert parsed.write_payload is not None
    rows = pa.array([{"a": 1, "s": "x"}, None, {"a": -3, "s": None}], type=ARROW)
    out = encode_batch(pa.RecordBatch.from_arrays([rows], names=["value"]), parsed.write_payload)
    values = out.column(0).to_pylist()
    assert values[1] is None  # a null row is a null value (a tombstone)
    schema = fastavro.parse_schema(RECORD)
    assert [fastavro.schemaless_reader(io.BytesIO(v), schema) for v in (values[0], values[2])] == [
        {"a": 1, "s": "x"},
        {"a": -3, "s": None},
    ]
    bad = pa.array([None, {"a": 1, "s": None}, {"a": None, "s": "y"}], type=ARROW)
    with pytest.raises(RecordFormatError, match=r"value of row 2 of batch 0 .* at /a") as err:
        encode_batch(pa.RecordBatch.from_arrays([bad], names=["value"]), parsed.write_payload)
    assert err.value.column == "value"


def test_a_column_the_schema_cannot_take_is_refused_on_the_driver() -> None:
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]}
    with pytest.raises(ConfigError, match=r"the value column \(struct<a: int32"):
        options_for_write(
            _options(valueFormat="avro", avroSchema=json.dumps(schema)), VALUE, streaming=False
        )


def test_framed_values_and_raw_top_level_bytes() -> None:
    framed = WritePayload((WriterSchema("value", json.dumps(RECORD), 7, "test"),))
    rows = pa.array([{"a": 1, "s": None}], type=ARROW)
    out = encode_batch(pa.RecordBatch.from_arrays([rows], names=["value"]), framed)
    assert out.column(0).to_pylist() == [b"\x00\x00\x00\x00\x07" + b"\x02\x00"]
    raw = WritePayload((WriterSchema("value", '"bytes"', 258, "test"),))
    out = encode_batch(
        pa.RecordBatch.from_arrays([pa.array([b"hi", None, b""])], names=["value"]), raw
    )
    # Confluent's serializers: a top-level "bytes" value raw after the framing, no length
    assert out.column(0).to_pylist() == [b"\x00\x00\x00\x01\x02hi", None, b"\x00\x00\x00\x01\x02"]
    plain = WritePayload((WriterSchema("value", '"bytes"', None, "test"),))
    out = encode_batch(pa.RecordBatch.from_arrays([pa.array([b"hi"])], names=["value"]), plain)
    assert out.column(0).to_pylist() == [b"\x04hi"]  # plain Avro: bytes with their length


def test_formatted_columns_take_any_type_and_binary_ones_do_not() -> None:
    with pytest.raises(ConfigError, match="value attribute unsupported type"):
        options_for_write(_options(), VALUE, streaming=False)


def test_key_format_without_a_key_column_is_refused() -> None:
    options = _options(
        keyFormat="avro",
        valueFormat="avro",
        avroSchema=json.dumps(RECORD),
        **{"key.avroSchema": '"string"'},
    )
    with pytest.raises(ConfigError, match="'keyFormat'='avro' but the DataFrame has no 'key'"):
        options_for_write(options, VALUE, streaming=False)


def test_plain_avro_without_avro_schema_writes_with_the_derived_schema() -> None:
    parsed = options_for_write(_options(valueFormat="avro"), VALUE, streaming=False)
    assert parsed.write_payload is not None
    (writer,) = parsed.write_payload.writers
    assert writer.schema_id is None  # plain Avro: unframed
    # spark-avro's toAvroType of struct<a: int, s: string> (both nullable), not nullable on top
    assert json.loads(writer.schema_json) == {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [
            {"name": "a", "type": ["int", "null"]},
            {"name": "s", "type": ["string", "null"]},
        ],
    }
    rows = pa.array([{"a": 1, "s": "x"}, {"a": None, "s": None}], type=ARROW)
    out = encode_batch(pa.RecordBatch.from_arrays([rows], names=["value"]), parsed.write_payload)
    # union branch 0 then zigzag 1, branch 0 then length 1 "x"; then both branch 1 (null)
    assert out.column(0).to_pylist() == [b"\x00\x02\x00\x02x", b"\x02\x02"]
    with pytest.raises(ConfigError, match=r"needs 'schema\.registry\.url'"):
        from spark_kafka_py.spark.payload import parse_payload_options

        parse_payload_options({"valueformat": "avro"})  # a read has no type to derive from
