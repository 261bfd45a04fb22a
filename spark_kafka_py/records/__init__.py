"""Kafka record batches (v2) and legacy message sets (v0/v1) into Arrow: pure functions.

Public API: :func:`decode_records`, :class:`DecodedRecords`, :class:`DecodedStream`,
:func:`spark_kafka_schema`. The decoders bound what they decompress by default, to
:data:`DEFAULT_MAX_DECOMPRESSION_RATIO` (100) x the bytes given (``max_decoded_bytes``).
"""

from spark_kafka_py.records.arrow import spark_kafka_schema
from spark_kafka_py.records.decoder import (
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_MAX_DECOMPRESSION_RATIO,
    DecodedRecords,
    DecodedStream,
    decode_records,
)

__all__ = [
    "DEFAULT_MAX_BATCH_BYTES",
    "DEFAULT_MAX_DECOMPRESSION_RATIO",
    "DecodedRecords",
    "DecodedStream",
    "decode_records",
    "spark_kafka_schema",
]
