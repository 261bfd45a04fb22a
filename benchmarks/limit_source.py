"""The limit of a Python data source: pre-built Arrow batches, no Kafka, no decoding.

``spark.read.format("pykafka_limit")`` has ``format("pykafka")``'s schema (Spark's Kafka
source schema, :func:`spark_kafka_py.spark.source.kafka_schema`, without headers, in the same
Arrow types: :func:`spark_kafka_py.records.arrow.spark_kafka_schema`) and plans one Spark task
per entry of its ``batches`` option. Each task yields ``pyarrow.RecordBatch`` es of exactly the
row counts listed for it, with ``keySize``-byte keys and ``valueSize``-byte values. One batch
of the largest row count asked so far is built per Python worker (cached at module level by
key size, value size and topic), and every batch handed out is a zero-copy slice of its first
rows (the Arrow IPC writer sends only the sliced part), so a timed read costs what PySpark and
Spark themselves cost to take Arrow batches from a Python data source into the JVM and to
rows: the most any Python source can deliver on the machine (issue 17, "The limit").
Compressed topics give batches of many different row counts, so a cache of whole batches by
row count would build most of them inside the timed reads.

The batch benchmark (:mod:`benchmarks.batch_read`) fills ``batches`` with the row counts of
the Arrow batches that ``format("pykafka")`` yields for the same topic (:func:`pykafka_batches`,
run on the driver before the timed reads), so both sources hand Spark the same number of
tasks, batches and rows of the same sizes.

Options (all strings, as Spark passes them):

``batches``
    JSON list, one entry per Spark task: the list of row counts of its batches, in order.
``topic``
    the ``topic`` column's value (default ``limit``).
``keySize``, ``valueSize``
    bytes per key and per value (default 16 and 100, the benchmark data's).
``valueFormat``
    ``json`` or ``protobuf``: the ``value`` column is instead the struct that
    ``format("pykafka")`` gives for :mod:`benchmarks.formats`' topics of that format (the
    benchmark's records decoded by our decoder once per worker, the pool cycled as in the
    topic), so a timed read costs what PySpark and Spark cost to take that struct into the
    JVM: the most any Python source can deliver for the format's columns
    (:mod:`benchmarks.formats`' limit row). Unset: binary values, as above.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from spark_kafka_py.records.arrow import spark_kafka_schema
from spark_kafka_py.spark.source import kafka_schema

__all__ = ["LimitDataSource", "LimitPartition", "build_batch", "pykafka_batches"]

#: ``format(...)`` name of :class:`LimitDataSource`.
LIMIT_FORMAT = "pykafka_limit"
#: ``timestamp`` column of every row, microseconds since the epoch (2026-11-24 00:00 UTC).
_TIMESTAMP_US = 1_795_478_400_000_000
#: ``timestampType`` column: Kafka's ``TimestampType.CREATE_TIME`` id.
_CREATE_TIME = 0

_cache: dict[tuple[int, int, str, str], pa.RecordBatch] = {}
_cache_lock = threading.Lock()


def _binary(rows: int, width: int, seed: int, arrow_type: pa.DataType) -> pa.Array:
    """``rows`` values of ``width`` bytes each, in one data buffer (no Python object per row)."""
    offsets = np.arange(0, (rows + 1) * width, width, dtype=np.int32)
    data = np.random.default_rng(seed).integers(65, 81, rows * width, dtype=np.uint8)  # A-P
    return pa.Array.from_buffers(
        arrow_type, rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def build_batch(
    rows: int, key_size: int, value_size: int, topic: str, value_format: str = ""
) -> pa.RecordBatch:
    """``rows`` rows in ``format("pykafka")``'s Arrow schema (no headers): a slice of the
    first rows of one batch cached per process, key size, value size, topic and value format
    (built again, larger, when more rows are asked for than it has).

    Keys and values are ``key_size`` / ``value_size`` bytes over a 16-letter alphabet (with
    ``value_format`` ``json`` or ``protobuf``, the values are :func:`format_values`' struct
    instead), the topic name repeated per row (as our decoder writes it), partition 0,
    offsets ``0 .. rows - 1``, one CreateTime timestamp.
    """
    shape = (key_size, value_size, topic, value_format)
    with _cache_lock:
        found = _cache.get(shape)
    if found is None or found.num_rows < rows:
        found = _build(rows, key_size, value_size, topic, value_format)
        with _cache_lock:
            if shape not in _cache or _cache[shape].num_rows < rows:
                _cache[shape] = found
    return found.slice(0, rows)


def format_values(value_format: str, rows: int) -> pa.Array:
    """``rows`` values of :mod:`benchmarks.formats`' topic of ``value_format`` (``json`` or
    ``protobuf``: its pool of distinct payloads cycled) decoded into the struct
    ``format("pykafka")`` reads them as (our ``JsonDecoder`` with the topic's struct; our
    ``ProtobufDecoder`` of ``bench.Event``).

    Raises:
        ValueError: another ``value_format``.
    """
    from benchmarks import formats

    pool_size = min(rows, formats.POOL)
    if value_format == "json":
        from spark_kafka_py.formats.json.decode import JsonDecoder

        pool = JsonDecoder(formats.JSON_SPARK_TYPE).decode(
            pa.array(formats.json_values(pool_size), pa.binary())
        )
    elif value_format == "protobuf":
        from spark_kafka_py.formats.protobuf.decoder import ProtobufDecoder

        schema, descriptor, _ = formats._proto_schema()
        pool = ProtobufDecoder(schema, descriptor).decode(formats.protobuf_values(pool_size))
    else:
        raise ValueError(f"valueFormat must be json or protobuf, not {value_format!r}")
    return pool.take(pa.array(np.arange(rows) % pool_size))


def value_type(value_format: str) -> pa.DataType:
    """The Arrow type of :func:`format_values` (``""``: binary)."""
    return format_values(value_format, 1).type if value_format else pa.binary()


def _build(
    rows: int, key_size: int, value_size: int, topic: str, value_format: str = ""
) -> pa.RecordBatch:
    name = topic.encode()
    values = (
        format_values(value_format, rows)
        if value_format
        else _binary(rows, value_size, 2, pa.binary())
    )
    columns = [
        _binary(rows, key_size, 1, pa.binary()),
        values,
        pa.Array.from_buffers(
            pa.string(),
            rows,
            [
                None,
                pa.py_buffer(np.arange(0, (rows + 1) * len(name), len(name) or 1, dtype=np.int32)),
                pa.py_buffer(name * rows),
            ],
        ),
        pa.array(np.zeros(rows, np.int32)),
        pa.array(np.arange(rows, dtype=np.int64)),
        pa.array(np.full(rows, _TIMESTAMP_US, np.int64)).cast(pa.timestamp("us", tz="UTC")),
        pa.array(np.full(rows, _CREATE_TIME, np.int32)),
    ]
    schema = spark_kafka_schema(False)
    if value_format:
        schema = schema.set(1, pa.field("value", values.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


@dataclass(frozen=True)
class LimitPartition(InputPartition):
    """One Spark task of the limit source: the row counts of the batches it yields."""

    index: int
    rows: tuple[int, ...]


class LimitReader(DataSourceReader):
    """Yields the pre-built batches; see the module docstring."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.batches: list[list[int]] = json.loads(options.get("batches", "[]"))
        self.topic = options.get("topic", "limit")
        self.key_size = int(options.get("keySize", "16"))
        self.value_size = int(options.get("valueSize", "100"))
        self.value_format = options.get("valueFormat", "")

    def partitions(self) -> Sequence[InputPartition]:
        return [LimitPartition(i, tuple(rows)) for i, rows in enumerate(self.batches)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, LimitPartition)
        for rows in partition.rows:
            yield build_batch(rows, self.key_size, self.value_size, self.topic, self.value_format)


class LimitDataSource(DataSource):
    """``format("pykafka_limit")``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return LIMIT_FORMAT

    def schema(self) -> StructType:
        value_format = self.options.get("valueFormat", "")
        if not value_format:
            return kafka_schema(False)
        from pyspark.sql.pandas.types import from_arrow_type
        from pyspark.sql.types import StructField

        fields = list(kafka_schema(False).fields)
        fields[1] = StructField("value", from_arrow_type(value_type(value_format)))
        return StructType(fields)

    def reader(self, schema: StructType) -> LimitReader:
        return LimitReader(self.options)


def pykafka_batches(options: Mapping[str, str]) -> list[list[int]]:
    """The row counts of the Arrow batches ``format("pykafka")`` yields with ``options``,
    per planned Spark task, in plan order: the same planner and executor read path
    (:func:`spark_kafka_py.spark.source.read_partition`), run here in this process.

    Raises: as a batch read of ``format("pykafka")``.
    """
    from spark_kafka_py.spark.source import PyKafkaDataSource, read_partition

    source = PyKafkaDataSource(dict(options))
    reader = source.reader(source.schema())
    plan: list[Any] = list(reader.partitions())
    return [[b.num_rows for b in read_partition(reader.options, p)] for p in plan]
