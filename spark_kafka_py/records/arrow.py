"""Spark's Kafka-source schema in Arrow form, and the column builder decoders fill.

The schema is Spark's ``KafkaRecordToRowConverter.kafkaSchema(includeHeaders)``
(``connector/kafka-0-10-sql/.../KafkaRecordToRowConverter.scala``) converted as Spark's
``ArrowUtils.toArrowSchema`` does: ``TimestampType`` -> ``timestamp[us, tz]``, ``ArrayType``
-> ``list`` whose child field is named ``element``; every field nullable, as the Scala
``StructField`` defaults are.

======================  ==========================================  ========================
column                  Arrow type                                  content
======================  ==========================================  ========================
key                     binary                                      null for a null key
value                   binary                                      null for a null value
topic                   string                                      the fetched topic
partition               int32                                       the fetched partition
offset                  int64                                       the record's offset
timestamp               timestamp[us, tz=UTC]                       ms timestamp x 1000
timestampType           int32                                       Kafka ``TimestampType.id``:
                                                                    -1 none (magic 0),
                                                                    0 CreateTime,
                                                                    1 LogAppendTime
headers (optional)      list<element: struct<key: string,           null when the record has
                        value: binary>>                             no header (as Spark)
======================  ==========================================  ========================
"""

from __future__ import annotations

from array import array
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from spark_kafka_py.errors import KafkaProtocolError

__all__ = [
    "FIXED_ROW_BYTES",
    "HEADERS_TYPE",
    "HEADER_TYPE",
    "ColumnBuilder",
    "fixed_row_bytes",
    "spark_kafka_schema",
]

#: ``struct<key: string, value: binary>``, one Kafka header (both children nullable).
HEADER_TYPE: Final = pa.struct(
    [pa.field("key", pa.string(), nullable=True), pa.field("value", pa.binary(), nullable=True)]
)
#: Spark's ``headersType`` (``ArrayType(..., containsNull = true)``) in Arrow form.
HEADERS_TYPE: Final = pa.list_(pa.field("element", HEADER_TYPE, nullable=True))

_TIMESTAMP_TYPE: Final = pa.timestamp("us", tz="UTC")

_BASE_FIELDS: Final = (
    pa.field("key", pa.binary(), nullable=True),
    pa.field("value", pa.binary(), nullable=True),
    pa.field("topic", pa.string(), nullable=True),
    pa.field("partition", pa.int32(), nullable=True),
    pa.field("offset", pa.int64(), nullable=True),
    pa.field("timestamp", _TIMESTAMP_TYPE, nullable=True),
    pa.field("timestampType", pa.int32(), nullable=True),
)
_SCHEMA_WITHOUT_HEADERS: Final = pa.schema(list(_BASE_FIELDS))
_SCHEMA_WITH_HEADERS: Final = pa.schema(
    [*_BASE_FIELDS, pa.field("headers", HEADERS_TYPE, nullable=True)]
)


#: Arrow bytes of every row besides its key, value and header bytes: the int32 offsets of
#: ``key``, ``value`` and ``topic`` (4 each), ``partition`` int32 (4), ``offset`` int64 (8),
#: ``timestamp`` int64 (8), ``timestampType`` int32 (4). Validity bitmaps are left out.
FIXED_ROW_BYTES: Final = 36
#: The ``headers`` column's int32 list offset per row.
HEADERS_ROW_BYTES: Final = 4


def fixed_row_bytes(topic: str, include_headers: bool) -> int:
    """Arrow bytes of one row of ``topic`` besides its key, value and header bytes: the
    fixed-width columns (:data:`FIXED_ROW_BYTES`), the topic name repeated in the ``topic``
    column, and the ``headers`` list offset. Used to size Arrow batches
    (:mod:`spark_kafka_py.records.bounds`)."""
    size = FIXED_ROW_BYTES + len(topic.encode("utf-8"))
    return size + HEADERS_ROW_BYTES if include_headers else size


def spark_kafka_schema(include_headers: bool) -> pa.Schema:
    """Spark's Kafka source schema as an Arrow schema.

    Args:
        include_headers: add the ``headers`` column (Spark option ``includeHeaders``).

    Returns:
        ``key binary, value binary, topic string, partition int32, offset int64,
        timestamp timestamp[us, tz=UTC], timestampType int32`` and, with headers,
        ``headers list<element: struct<key string, value binary>>``; all nullable.
    """
    return _SCHEMA_WITH_HEADERS if include_headers else _SCHEMA_WITHOUT_HEADERS


class ColumnBuilder:
    """Column accumulators for decoded records; :meth:`finish` makes one RecordBatch.

    Decoders append to the public lists directly (a method call per record costs more
    than the append itself):

    * ``keys``, ``values``: ``bytes`` or ``None`` per row;
    * ``offsets``: ``int`` per row; ``timestamps``: epoch milliseconds per row;
    * ``timestamp_type_runs``: ``(row_count, timestamp_type_id)`` per appended run (one per
      batch), so the constant-per-batch column costs nothing per row;
    * with headers: ``header_offsets`` (row ``i`` owns ``header_keys[header_offsets[i]:
      header_offsets[i+1]]``; starts as ``[0]``), ``header_keys`` (``str``),
      ``header_values`` (``bytes`` or ``None``) and ``header_nulls`` (row indices whose
      headers column is null: records without headers, as Spark).
    """

    __slots__ = (
        "header_keys",
        "header_nulls",
        "header_offsets",
        "header_values",
        "include_headers",
        "keys",
        "offsets",
        "timestamp_type_runs",
        "timestamps",
        "values",
    )

    def __init__(self, include_headers: bool) -> None:
        self.include_headers = include_headers
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.offsets: list[int] = []
        self.timestamps: list[int] = []
        self.timestamp_type_runs: list[tuple[int, int]] = []
        self.header_offsets: list[int] = [0]
        self.header_keys: list[str] = []
        self.header_values: list[bytes | None] = []
        self.header_nulls: list[int] = []

    def __len__(self) -> int:
        return len(self.offsets)

    def finish(self, topic: str, partition: int) -> pa.RecordBatch:
        """Build the RecordBatch (schema :func:`spark_kafka_schema`).

        Raises:
            KafkaProtocolError: a timestamp does not fit Spark's microsecond int64 range
                (Spark itself fails on such a record).
        """
        n = len(self.offsets)
        ts_types = array("i")
        for count, type_id in self.timestamp_type_runs:
            ts_types.extend(array("i", [type_id]) * count)
        try:
            ts_ms = pa.array(self.timestamps, pa.int64())
            ts_us = pc.multiply_checked(ts_ms, 1000).cast(_TIMESTAMP_TYPE)
        except (OverflowError, pa.ArrowInvalid) as exc:
            raise KafkaProtocolError(
                "record timestamp out of range for Spark's microsecond timestamps"
            ) from exc
        columns = [
            pa.array(self.keys, pa.binary()),
            pa.array(self.values, pa.binary()),
            pa.repeat(pa.scalar(topic, pa.string()), n),
            pa.repeat(pa.scalar(partition, pa.int32()), n),
            pa.array(self.offsets, pa.int64()),
            ts_us,
            pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(ts_types)]),
        ]
        if self.include_headers:
            columns.append(self._headers_array(n))
        return pa.RecordBatch.from_arrays(columns, schema=spark_kafka_schema(self.include_headers))

    def _headers_array(self, n: int) -> pa.Array:
        items = pa.StructArray.from_arrays(
            [pa.array(self.header_keys, pa.string()), pa.array(self.header_values, pa.binary())],
            fields=list(HEADER_TYPE),
        )
        offsets = pa.array(self.header_offsets, pa.int32())
        mask = None
        if self.header_nulls:
            null_rows = bytearray(n)
            for i in self.header_nulls:
                null_rows[i] = 1
            mask = pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(null_rows)]).cast(
                pa.bool_()
            )
        return pa.ListArray.from_arrays(offsets, items, type=HEADERS_TYPE, mask=mask)
