"""Decode a fetched partition's record bytes into one Arrow RecordBatch (executor hot path).

The implementation is chosen at import time, as aiokafka does: the accelerated Cython kernel
:func:`spark_kafka_py.records._accel.decode_records_accel` when its extension was built and
imports (``setup.py`` builds it when Cython and a C compiler are there), else the pure-Python
reference :func:`spark_kafka_py.records._pure.decode_records_pure`. Setting the environment
variable ``SPARK_KAFKA_PY_PURE=1`` forces the pure path; :data:`IMPLEMENTATION` says which
one runs (``"accel"`` or ``"pure"``). Both implement
:class:`~spark_kafka_py.records._protocols.RecordsDecoder` and return equal results, or raise
the same error with the same message, topic, partition and offset, for the same input
(``tests/records/test_accel.py``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from spark_kafka_py.records._protocols import (
    DEFAULT_MAX_BATCH_BYTES,
    DecodedRecords,
    RecordsDecoder,
)
from spark_kafka_py.records._pure import decode_records_pure

__all__ = ["DEFAULT_MAX_BATCH_BYTES", "IMPLEMENTATION", "DecodedRecords", "decode_records"]


def _choose() -> tuple[RecordsDecoder, str]:
    if os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"):
        return decode_records_pure, "pure"
    try:
        from spark_kafka_py.records._accel import decode_records_accel
    except ImportError:
        return decode_records_pure, "pure"
    return decode_records_accel, "accel"


_impl, IMPLEMENTATION = _choose()


def decode_records(
    records: bytes | memoryview,
    *,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int,
    include_headers: bool = False,
    read_committed: bool = False,
    aborted_transactions: Sequence[tuple[int, int]] = (),
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
) -> DecodedRecords:
    """Decode the ``records`` field of one partition of a Fetch response into Arrow.

    Handles record batches v2 (KIP-98, with KIP-82 headers) and legacy message sets v0/v1;
    layouts in :mod:`spark_kafka_py.records.format`. Each batch's CRC is verified (CRC-32C
    for v2, CRC-32 for v0/v1) and compressed batches (gzip, snappy raw or xerial-framed,
    lz4 frame, zstd) are decompressed with the output bounded by ``max_batch_bytes``.

    Rows: every non-control record with ``start_offset <= offset < end_offset``, in log
    order. Offsets may have gaps (compacted topics, aborted transactions, control markers).
    Timestamps are ``baseTimestamp + timestampDelta`` (CreateTime) or the batch's
    ``maxTimestamp`` for every record (LogAppendTime); -1 ms with ``timestampType`` -1 for
    magic 0.

    Args:
        records: the Fetch response's records bytes for one partition (possibly ending
            inside a batch); a memoryview is read without copying.
        topic: topic name, written to the ``topic`` column and named in errors.
        partition: partition id, written to the ``partition`` column.
        start_offset: first offset wanted (a batch may start before it).
        end_offset: offset past the last one wanted (exclusive).
        include_headers: add the ``headers`` column (Spark option ``includeHeaders``).
        read_committed: drop the records of aborted transactions (``isolation.level=
            read_committed``) as the Java consumer does, see
            :mod:`spark_kafka_py.records.transactions`.
        aborted_transactions: the Fetch response's ``AbortedTransactions`` for this
            partition, ``(producer_id, first_offset)`` pairs; used with read_committed.
        max_batch_bytes: bound, in bytes, on a batch's stated length and on its
            decompressed records (default 64 MiB).

    Returns:
        :class:`DecodedRecords` (``batch`` of schema ``spark_kafka_schema(include_headers)``,
        ``next_offset``, ``incomplete_tail``).

    Raises:
        CorruptRecordError: CRC mismatch or a malformed batch/record (names topic,
            partition and the batch's base offset).
        KafkaProtocolError: a batch length above ``max_batch_bytes`` or below the header
            size, an unknown magic or codec, decompressed data above the bound, a timestamp
            outside Spark's range.
    """
    return _impl(
        records,
        topic=topic,
        partition=partition,
        start_offset=start_offset,
        end_offset=end_offset,
        include_headers=include_headers,
        read_committed=read_committed,
        aborted_transactions=aborted_transactions,
        max_batch_bytes=max_batch_bytes,
    )
