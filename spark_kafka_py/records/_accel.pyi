"""Type stub of the Cython extension built from ``_accel.pyx`` (optional, see ``setup.py``).

:func:`decode_records_accel` implements
:class:`~spark_kafka_py.records._protocols.RecordsDecoder`; the contract is documented on
:func:`spark_kafka_py.records.decoder.decode_records`.
"""

from collections.abc import Sequence

from spark_kafka_py.records._protocols import DecodedRecords
from spark_kafka_py.records.bounds import DecodeBudget
from spark_kafka_py.records.transactions import AbortedTransactions

__all__ = ["decode_records_accel"]

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
) -> DecodedRecords:
    """Decode one fetched partition's ``records`` bytes into Arrow, as the pure reference.

    Raises:
        CorruptRecordError: CRC mismatch or a malformed batch/record (names topic,
            partition and the batch's base offset), as the reference does.
        DecompressionBoundError: decompressed data above ``max_batch_bytes`` or above what
            is left of ``budget``, as the reference.
        KafkaProtocolError: a batch length above ``max_batch_bytes``, an unknown magic or
            codec, a timestamp outside Spark's range, or a column above Arrow's 2 GiB.
        MemoryError: the column buffers could not be allocated.
    """
