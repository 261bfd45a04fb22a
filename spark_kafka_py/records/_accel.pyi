"""Type stub of the Cython extension built from ``_accel.pyx`` (optional, see ``setup.py``).

:func:`decode_records_accel` implements
:class:`~spark_kafka_py.records._protocols.RecordsDecoder`; the contract is documented on
:func:`spark_kafka_py.records.decoder.decode_records`. :func:`encode_records_section_accel`
implements :class:`~spark_kafka_py.records.encoder.RecordsSectionEncoder`; the contract is
documented on :func:`spark_kafka_py.records.encoder.encode_records_section`.
"""

from collections.abc import Sequence

import pyarrow as pa

from spark_kafka_py.records._protocols import DecodedRecords
from spark_kafka_py.records.bounds import DecodeBudget
from spark_kafka_py.records.transactions import AbortedTransactions

__all__ = ["decode_records_accel", "encode_records_section_accel"]

def decode_records_accel(
    records: bytes | bytearray | memoryview,
    *,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int,
    include_headers: bool = False,
    read_committed: bool = False,
    aborted_transactions: Sequence[tuple[int, int]] | AbortedTransactions = (),
    max_batch_bytes: int = ...,
    budget: DecodeBudget | None = None,
    max_arrow_bytes: int | None = None,
    check_crcs: bool = True,
) -> DecodedRecords:
    """Decode one fetched partition's ``records`` bytes into Arrow, as the pure reference.

    Raises:
        CorruptRecordError: CRC mismatch (with ``check_crcs``) or a malformed batch/record
            (names topic, partition and the batch's base offset), as the reference does.
        DecompressionBoundError: decompressed data above ``max_batch_bytes`` or above what
            is left of ``budget``, as the reference.
        KafkaProtocolError: a batch length above ``max_batch_bytes``, an unknown magic or
            codec, a timestamp outside Spark's range, or a column above Arrow's 2 GiB.
        MemoryError: the column buffers could not be allocated.
    """

def encode_records_section_accel(
    keys: pa.Array | None,
    values: pa.Array | None,
    headers: pa.Array | None,
    start: int,
    *,
    first_offset_delta: int,
    timestamp_delta: int,
    budget: int,
) -> tuple[bytes, int]:
    """Rows ``start ..`` as consecutive records within ``budget`` bytes, as the pure reference:
    ``(records_section_bytes, rows_taken)``, the same bytes and rows.

    Raises:
        InvalidRecordError: a column of a wrong type or a header with a null key (as the
            reference, same message and column), or an array whose offsets point outside its
            data buffer (a malformed array; names the column and the row).
    """
