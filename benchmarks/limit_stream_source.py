"""The streaming limit: a Python stream reader that does what ``format("pykafka")`` does,
minus Kafka.

``spark.readStream.format("pykafka_stream_limit")`` (:class:`LimitStreamSource`) has the
``pykafka`` schema and plans like the ``pykafka`` stream reader: the same topic-partitions, the
same end offsets (given as an option, read once from Kafka by the benchmark before the query),
``maxOffsetsPerTrigger`` split by backlog with
:func:`spark_kafka_py.spark.source.rate_limit` (Spark's ``KafkaMicroBatchStream.rateLimit``),
``Trigger.AvailableNow`` (its target fixed in ``prepareForTriggerAvailableNow``), one input
partition per topic-partition range. Its partitions yield one pre-built ``pyarrow.RecordBatch``
of ``batchRows`` rows over and over (the last one sliced), the size pykafka's executors yield,
built once per Python worker: no network, no decoding. Whatever PySpark and Spark spend on a
micro-batch of a Python stream source (driver-side Python calls, JSON offsets, task launch,
Arrow to rows, the sink) is spent here too, so its records/s is the most any Python stream
reader can deliver with the same trigger and sink (``spark-kafka-py bench stream``).

Options (all strings):

``topic``
    the topic name written into the rows and offsets.
``endOffsets``
    JSON ``{"<partition>": <end offset>}``; every partition starts at offset 0.
``maxOffsetsPerTrigger``
    records per micro-batch (absent: everything in one).
``batchRows``
    rows per Arrow batch (default 8,192).
``keySize``, ``valueSize``
    bytes of each key and value (default 16 and 100).

Usage: ``register(spark)``, then ``spark.readStream.format(LIMIT_FORMAT).option(...)``.
Running this file only prints this text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.records.arrow import spark_kafka_schema
from spark_kafka_py.spark.offsets import from_offset_dict, to_offset_dict
from spark_kafka_py.spark.source import kafka_schema, rate_limit

__all__ = ["LIMIT_FORMAT", "LimitStreamSource", "register"]

#: ``format()`` name of :class:`LimitStreamSource`.
LIMIT_FORMAT = "pykafka_stream_limit"
#: ``batchRows`` when not given.
DEFAULT_BATCH_ROWS = 8192
#: The ``timestamp`` of every row, microseconds since the epoch (2026-11-24 00:00 UTC).
_TIMESTAMP_US = 1_795_478_400_000_000

#: Pre-built batches of this Python worker, by (topic, partition, rows, key size, value size).
_BATCHES: dict[tuple[str, int, int, int, int], pa.RecordBatch] = {}


def prebuilt_batch(
    topic: str, partition: int, rows: int, key_size: int, value_size: int
) -> pa.RecordBatch:
    """One Arrow batch in ``format("pykafka")``'s Arrow schema without headers
    (:func:`spark_kafka_py.records.arrow.spark_kafka_schema`): ``rows`` records of
    ``key_size`` + ``value_size`` bytes, offsets ``0..rows-1``, one CreateTime timestamp.

    Built from whole buffers (no Python object per row) once per Python worker and cached,
    so the limit pays nothing per micro-batch for it.
    """
    shape = (topic, partition, rows, key_size, value_size)
    batch = _BATCHES.get(shape)
    if batch is None:

        def fixed_width(width: int, fill: int) -> pa.Array:
            offsets = np.arange(0, (rows + 1) * width, width, dtype=np.int32)
            data = np.full(rows * width, fill, dtype=np.uint8)
            return pa.Array.from_buffers(
                pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            )

        name = topic.encode()
        topics = pa.Array.from_buffers(
            pa.string(),
            rows,
            [
                None,
                pa.py_buffer(np.arange(0, (rows + 1) * len(name), len(name) or 1, dtype=np.int32)),
                pa.py_buffer(name * rows),
            ],
        )
        batch = pa.RecordBatch.from_arrays(
            [
                fixed_width(key_size, ord("k")),
                fixed_width(value_size, ord("v")),
                topics,
                pa.array(np.full(rows, partition, np.int32)),
                pa.array(np.arange(rows, dtype=np.int64)),
                pa.array(np.full(rows, _TIMESTAMP_US, np.int64)).cast(pa.timestamp("us", tz="UTC")),
                pa.array(np.zeros(rows, np.int32)),  # CreateTime
            ],
            schema=spark_kafka_schema(False),
        )
        _BATCHES[shape] = batch
    return batch


@dataclass(frozen=True)
class LimitPartition(InputPartition):
    """One topic-partition's range ``[start, end)`` of a micro-batch (picklable)."""

    topic: str
    partition: int
    start: int
    end: int
    batch_rows: int
    key_size: int
    value_size: int


class LimitStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets as the ``pykafka`` stream reader's; rows from :func:`prebuilt_batch`."""

    def __init__(self, options: Mapping[str, str]) -> None:
        try:
            self.topic = options["topic"]
            ends = json.loads(options["endOffsets"])
            self.ends = {TopicPartition(self.topic, int(p)): int(e) for p, e in ends.items()}
            max_offsets = options.get("maxOffsetsPerTrigger")
            self.max_offsets = int(max_offsets) if max_offsets is not None else None
            self.batch_rows = int(options.get("batchRows", DEFAULT_BATCH_ROWS))
            self.key_size = int(options.get("keySize", 16))
            self.value_size = int(options.get("valueSize", 100))
        except (KeyError, ValueError, AttributeError) as exc:
            raise ConfigError(f"format('{LIMIT_FORMAT}'): bad options {options!r}: {exc}") from exc
        self._available_now: dict[TopicPartition, int] | None = None

    def initialOffset(self) -> dict:
        return to_offset_dict(dict.fromkeys(self.ends, 0))

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.max_offsets is not None:
            return ReadMaxRows(self.max_offsets)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = dict(self.ends)

    def latestOffset(self, start: dict | None = None, limit: ReadLimit | None = None) -> dict:
        latest = dict(self._available_now if self._available_now is not None else self.ends)
        if start is None or limit is None or isinstance(limit, ReadAllAvailable):
            return to_offset_dict(latest)
        if not isinstance(limit, ReadMaxRows):
            raise ConfigError(f"Read limit {limit!r} is not supported by {LIMIT_FORMAT}")
        return to_offset_dict(rate_limit(limit.max_rows, from_offset_dict(start), latest))

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin = from_offset_dict(start)
        return [
            LimitPartition(
                tp.topic,
                tp.partition,
                begin.get(tp, 0),
                hi,
                self.batch_rows,
                self.key_size,
                self.value_size,
            )
            for tp, hi in sorted(from_offset_dict(end).items())
            if hi > begin.get(tp, 0)
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, LimitPartition):
            return  # PySpark's placeholder of an empty plan
        batch = prebuilt_batch(
            partition.topic,
            partition.partition,
            partition.batch_rows,
            partition.key_size,
            partition.value_size,
        )
        left = partition.end - partition.start
        while left > 0:
            yield batch if left >= batch.num_rows else batch.slice(0, left)
            left -= batch.num_rows

    def commit(self, end: dict) -> None:
        """Nothing to commit (the ``pykafka`` reader without a group does nothing either)."""


class LimitStreamSource(DataSource):
    """``format("pykafka_stream_limit")``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return LIMIT_FORMAT

    def schema(self) -> StructType:
        return kafka_schema(include_headers=False)

    def streamReader(self, schema: StructType) -> LimitStreamReader:
        return LimitStreamReader(self.options)  # case-insensitive keys


def register(spark: Any) -> None:
    """Register :class:`LimitStreamSource` with ``spark``; the class travels to the Python
    workers by value (``benchmarks`` is not installed where they run)."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark.dataSource.register(LimitStreamSource)


if __name__ == "__main__":
    print(__doc__)
