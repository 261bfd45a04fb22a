"""Decode a fetched partition's record bytes into Arrow RecordBatches (executor hot path).

:func:`decode_records` decodes one partition's ``records`` into one RecordBatch;
:class:`DecodedStream` yields them as several RecordBatches of bounded size, within a bound on
what the whole response may decode to (:mod:`spark_kafka_py.records.bounds`): what the Fetch
loop uses.

The implementation is chosen at import time, as aiokafka does: the accelerated Cython kernel
:func:`spark_kafka_py.records._accel.decode_records_accel` when its extension was built and
imports (``setup.py`` builds it when Cython and a C compiler are there), else the pure-Python
reference :func:`spark_kafka_py.records._pure.decode_records_pure`. Setting the environment
variable ``SPARK_KAFKA_PY_PURE=1`` forces the pure path; :data:`IMPLEMENTATION` says which
one runs (``"accel"`` or ``"pure"``). Both implement
:class:`~spark_kafka_py.records._protocols.RecordsDecoder` and return equal results, or raise
the same error with the same message, topic, partition and offset, for the same input
(``tests/records/test_accel.py``).

Both public entry points bound what the whole of ``records`` may decompress to by default:
``max_decoded_bytes="ratio"`` is :data:`DEFAULT_MAX_DECOMPRESSION_RATIO` (100, the default of
``maxDecompressionRatio``, which bounds the Fetch path) x ``len(records)`` bytes; past it they
raise :class:`~spark_kafka_py.errors.DecompressionBoundError`
(``tests/records/test_public_decode_bounds.py``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence

import pyarrow as pa

from spark_kafka_py.records._protocols import (
    DEFAULT_MAX_BATCH_BYTES,
    DecodedRecords,
    RecordsDecoder,
)
from spark_kafka_py.records._pure import decode_records_pure
from spark_kafka_py.records.bounds import DecodeBudget
from spark_kafka_py.records.compression import (
    DEFAULT_MAX_DECOMPRESSION_RATIO,
    RATIO_BOUND,
    RatioBound,
)
from spark_kafka_py.records.transactions import AbortedTransactions

__all__ = [
    "DEFAULT_MAX_BATCH_BYTES",
    "DEFAULT_MAX_DECOMPRESSION_RATIO",
    "IMPLEMENTATION",
    "DecodedRecords",
    "DecodedStream",
    "decode_records",
]

log = logging.getLogger(__name__)


def _choose() -> tuple[RecordsDecoder, str]:
    """The decoder to use and its name; logs the choice (INFO) and, for pure, why."""
    if os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"):
        log.info("record decoder: pure (SPARK_KAFKA_PY_PURE is set)")
        return decode_records_pure, "pure"
    try:
        from spark_kafka_py.records._accel import decode_records_accel
    except ImportError as exc:
        log.info("record decoder: pure (the accelerated extension does not import: %s)", exc)
        return decode_records_pure, "pure"
    log.info("record decoder: accel (spark_kafka_py.records._accel)")
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
    max_decoded_bytes: int | RatioBound | None = RATIO_BOUND,
    check_crcs: bool = True,
) -> DecodedRecords:
    """Decode the ``records`` field of one partition of a Fetch response into one Arrow batch.

    Handles record batches v2 (KIP-98, with KIP-82 headers) and legacy message sets v0/v1;
    layouts in :mod:`spark_kafka_py.records.format`. Each batch's CRC is verified (CRC-32C
    for v2, CRC-32 for v0/v1) unless ``check_crcs`` is false, and compressed batches (gzip,
    snappy raw or xerial-framed, lz4 frame, zstd) are decompressed with the output bounded by
    ``max_batch_bytes``.

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
        max_decoded_bytes: bound, in bytes, on the decompressed records of all of
            ``records`` (see :mod:`spark_kafka_py.records.bounds`). Default ``"ratio"``:
            :data:`DEFAULT_MAX_DECOMPRESSION_RATIO` (100, ``maxDecompressionRatio``'s default,
            as the Fetch path) x ``len(records)`` bytes. Pass a larger number of bytes for data
            that compresses better, or ``None`` (explicitly) for no bound beyond
            ``max_batch_bytes`` per batch (trusted input only).
        check_crcs: compare each batch's stored CRC with the one computed over its bytes
            (``True``, the default); ``False`` skips that comparison only, as the Java
            consumer's ``check.crcs=false`` (``CompletedFetch.maybeEnsureValid``): on-the-wire
            or on-disk corruption that keeps the layout well-formed is then decoded as it
            stands, while every length, bound and field check still raises as below.

    Returns:
        :class:`DecodedRecords` (``batch`` of schema ``spark_kafka_schema(include_headers)``,
        ``next_offset``, ``incomplete_tail``; ``resume_at`` is ``None``).

    Raises:
        CorruptRecordError: CRC mismatch (with ``check_crcs``) or a malformed batch/record
            (names topic, partition and the batch's base offset).
        DecompressionBoundError: a batch decompresses past ``max_batch_bytes`` or past what
            is left of ``max_decoded_bytes``, by default 100 x ``len(records)`` (names topic,
            partition, the batch's base offset and the bound; ``bound`` is in bytes).
        KafkaProtocolError: a batch length above ``max_batch_bytes`` or below the header
            size, an unknown magic or codec, a timestamp outside Spark's range.
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
        budget=(
            None
            if max_decoded_bytes is None
            else DecodeBudget.of(max_decoded_bytes, records, "max_decoded_bytes")
        ),
        check_crcs=check_crcs,
    )


class DecodedStream:
    """One partition's ``records`` of a Fetch response as Arrow batches of bounded size,
    decoded one after the other as they are taken (the Fetch loop's way).

    Arguments as :func:`decode_records`, plus the bounds of
    :mod:`spark_kafka_py.records.bounds`: the decompressed records of the whole of
    ``records`` stay within ``max_decoded_bytes``, and each batch is closed at the first
    record-batch boundary at or past ``max_arrow_bytes`` of decoded data, so an Arrow batch
    holds at most ``max_arrow_bytes`` plus one record batch's records, however far the
    response expands. Iterating yields the batches with rows (schema
    ``spark_kafka_schema(include_headers)``); afterwards :attr:`next_offset` and
    :attr:`incomplete_tail` are as :class:`DecodedRecords`' for the whole of ``records``.

    Args:
        max_decoded_bytes: bound on the decompressed records of all of ``records``, bytes.
            Default ``"ratio"``: :data:`DEFAULT_MAX_DECOMPRESSION_RATIO` (100,
            ``maxDecompressionRatio``'s default) x ``len(records)`` bytes, as
            :func:`decode_records`; the Fetch loop passes ``maxDecompressionRatio`` x the bytes
            the response could carry.
        max_arrow_bytes: decoded bytes after which an Arrow batch is closed (>= 1).
        bound_hint: where ``max_decoded_bytes`` comes from and how to raise it, for the
            error message (with a bound in bytes).
        decoder: the implementation (default: the one chosen at import, see
            :data:`IMPLEMENTATION`).
        check_crcs: as :func:`decode_records`' (``kafka.check.crcs``).

    Raises (while iterating): as :func:`decode_records` (past ``max_decoded_bytes``:
    :class:`~spark_kafka_py.errors.DecompressionBoundError`), the batches before the error
    having been yielded.
    """

    def __init__(
        self,
        records: bytes | memoryview,
        *,
        topic: str,
        partition: int,
        start_offset: int,
        end_offset: int,
        max_arrow_bytes: int,
        max_decoded_bytes: int | RatioBound = RATIO_BOUND,
        include_headers: bool = False,
        read_committed: bool = False,
        aborted_transactions: Sequence[tuple[int, int]] = (),
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        bound_hint: str = "",
        decoder: RecordsDecoder | None = None,
        check_crcs: bool = True,
    ) -> None:
        self._records = records
        self._topic = topic
        self._partition = partition
        self._start = start_offset
        self._end = end_offset
        self._include_headers = include_headers
        self._read_committed = read_committed
        self._aborted = aborted_transactions
        self._max_batch_bytes = max_batch_bytes
        self._max_arrow_bytes = max(max_arrow_bytes, 1)
        self._check_crcs = check_crcs
        self._decoder = decoder or _impl
        #: The budget of this response (``used``: decompressed bytes so far).
        self.budget = DecodeBudget.of(max_decoded_bytes, records, "max_decoded_bytes", bound_hint)
        #: As :attr:`DecodedRecords.next_offset`, for what has been decoded so far.
        self.next_offset = start_offset
        #: As :attr:`DecodedRecords.incomplete_tail` (set at the end).
        self.incomplete_tail = False

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        view = memoryview(self._records)
        if view.ndim != 1 or view.itemsize != 1:
            view = view.cast("B")
        txns: Sequence[tuple[int, int]] | AbortedTransactions = (
            AbortedTransactions.of(self._aborted) if self._read_committed else ()
        )
        pos = 0
        while True:
            decoded = self._decoder(
                view[pos:],
                topic=self._topic,
                partition=self._partition,
                start_offset=self._start,
                end_offset=self._end,
                include_headers=self._include_headers,
                read_committed=self._read_committed,
                aborted_transactions=txns,
                max_batch_bytes=self._max_batch_bytes,
                budget=self.budget,
                max_arrow_bytes=self._max_arrow_bytes,
                check_crcs=self._check_crcs,
            )
            # A piece with no complete batch reports start_offset: keep the furthest.
            self.next_offset = max(self.next_offset, decoded.next_offset)
            if decoded.batch.num_rows:
                yield decoded.batch
            if decoded.resume_at is None:
                self.incomplete_tail = decoded.incomplete_tail
                return
            pos += decoded.resume_at
