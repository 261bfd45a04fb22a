"""The result type and the interface every records decoder implements.

As aiokafka does (``aiokafka/record/_protocols.py``), the pure-Python decoder in
:mod:`spark_kafka_py.records._pure` is the reference, and the accelerated Cython one in
``spark_kafka_py.records._accel`` (optional build) implements the same
:class:`RecordsDecoder`. For every input both return equal :class:`DecodedRecords` or raise
the same error type with the same message and ``topic``/``partition``/``offset``
(``tests/records/test_accel.py`` compares them, fuzzed inputs included). Only running out
of memory differs: the accelerated decoder raises ``MemoryError`` or, for a column above
Arrow's 2 GiB, :class:`~spark_kafka_py.errors.KafkaProtocolError` where it happens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa

from spark_kafka_py.records.bounds import DecodeBudget
from spark_kafka_py.records.transactions import AbortedTransactions

__all__ = ["DEFAULT_MAX_BATCH_BYTES", "DecodedRecords", "RecordsDecoder"]

#: Default bound, in bytes, on one batch's stated size and on its decompressed records.
#: Kafka's default ``message.max.bytes`` is ~1 MiB (compressed); 64 MiB leaves room for
#: brokers configured larger and for compression ratios of 50x and more. A constant of its
#: own, not derived from the fetch sizes: Kafka returns a first batch larger than
#: ``max.partition.fetch.bytes`` whole (KIP-74).
DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class DecodedRecords:
    """Records decoded from one fetched partition's ``records`` bytes.

    Attributes:
        batch: rows whose offset is in ``[start_offset, end_offset)``, schema
            :func:`spark_kafka_py.records.arrow.spark_kafka_schema`; may have 0 rows.
        next_offset: the offset to fetch next: ``lastOffset + 1`` of the last complete
            batch consumed (also when that batch was a control batch, an aborted
            transaction's or wholly filtered), never below ``start_offset`` and never above
            ``end_offset``; ``end_offset`` once a batch reaches it; ``start_offset`` when no
            batch was complete.
        incomplete_tail: the bytes ended inside a batch (the broker cuts the last batch of a
            Fetch response at its size limit; that is not an error).
        resume_at: where decoding stopped because ``batch`` reached ``max_arrow_bytes``: the
            position in ``records`` of the first batch not decoded yet (decode
            ``records[resume_at:]`` next, with the same offsets, budget and transaction
            state); ``None`` when everything decodable was decoded.
    """

    batch: pa.RecordBatch
    next_offset: int
    incomplete_tail: bool
    resume_at: int | None = None


class RecordsDecoder(Protocol):
    """Signature of :func:`spark_kafka_py.records.decoder.decode_records` implementations.

    Beyond ``decode_records``' arguments, :class:`~spark_kafka_py.records.decoder.
    DecodedStream` passes the response's ``budget`` (:class:`~spark_kafka_py.records.bounds.
    DecodeBudget`), ``max_arrow_bytes`` (stop at the first batch boundary at or past this
    many decoded bytes: :attr:`DecodedRecords.resume_at`) and, as ``aborted_transactions``,
    the :class:`~spark_kafka_py.records.transactions.AbortedTransactions` state that carries
    over from one piece of a response to the next. ``check_crcs=False`` skips only the CRC
    comparison of each batch (the Java consumer's ``check.crcs``); every bound and every other
    check stays.

    The implementations are private: ``budget=None`` bounds nothing but ``max_batch_bytes``;
    the public :func:`~spark_kafka_py.records.decoder.decode_records` and ``DecodedStream`` pass
    a budget unless their caller asks for none (``max_decoded_bytes=None``), by default
    :data:`~spark_kafka_py.records.compression.DEFAULT_MAX_DECOMPRESSION_RATIO` x the bytes
    given.
    """

    def __call__(
        self,
        records: bytes | memoryview,
        *,
        topic: str,
        partition: int,
        start_offset: int,
        end_offset: int,
        include_headers: bool = False,
        read_committed: bool = False,
        aborted_transactions: Sequence[tuple[int, int]] | AbortedTransactions = (),
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        budget: DecodeBudget | None = None,
        max_arrow_bytes: int | None = None,
        check_crcs: bool = True,
    ) -> DecodedRecords: ...
