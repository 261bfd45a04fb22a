"""Bounds on what fetched record bytes may decode to: per record batch and per Fetch response.

Three bounds keep the work and the memory of decoding proportional to the bytes received,
whatever a broken or hostile broker sends (many tiny batches of zstd-compressed zeros expand
by more than 10,000x):

* per record batch: ``max_batch_bytes`` (default
  :data:`~spark_kafka_py.records._protocols.DEFAULT_MAX_BATCH_BYTES`, 64 MiB) on its stated
  length and on its decompressed records;
* per Fetch response (one partition's ``records``): a :class:`DecodeBudget` shared by every
  batch of the response; each batch whose records are materialised (data batches in the offset
  range, control batches read for their type, legacy wrappers) is charged its decompressed
  records size (an uncompressed batch its records section), and decompression is asked for no
  more than what is left, so a batch past the bound stops decompressing there;
* per Arrow batch: the decoders close a batch at the first record-batch boundary at or past
  ``max_arrow_bytes`` of decoded data (decompressed records plus
  :func:`~spark_kafka_py.records.arrow.fixed_row_bytes` per record), and the caller decodes on
  from there (:class:`~spark_kafka_py.records.decoder.DecodedStream`).

Either of the first two raises :class:`~spark_kafka_py.errors.DecompressionBoundError` naming
the topic-partition, the batch's base offset and the bound.

The Fetch loop sizes the per-response bound as ``maxDecompressionRatio`` x the bytes the
response could carry. The public decoding functions called without a bound (their default,
``"ratio"``) get a :class:`DecodeBudget` of
:data:`~spark_kafka_py.records.compression.DEFAULT_MAX_DECOMPRESSION_RATIO` (that option's
default, 100) x the bytes they are given (:meth:`DecodeBudget.of`).
"""

from __future__ import annotations

from spark_kafka_py.errors import (
    CorruptRecordError,
    DecompressionBoundError,
    KafkaProtocolError,
)
from spark_kafka_py.records.compression import (
    DEFAULT_MAX_DECOMPRESSION_RATIO,
    RatioBound,
    check_ratio_bound,
    decompress,
    ratio_bound,
)

__all__ = ["DecodeBudget", "decompress_batch"]


class DecodeBudget:
    """The bytes one Fetch response's records may still decode to (mutable, shared by every
    decoder call over that response).

    Args:
        limit: the bound, in bytes, on the decompressed records of the whole response.
        hint: where the bound comes from and how to raise it, for the error message (the
            fetcher says ``maxDecompressionRatio=100 x 1048576 bytes fetched; ...``).
        scope: what the bound applies to, for the error message.

    Attributes:
        used: bytes charged so far.
    """

    __slots__ = ("hint", "limit", "scope", "used")

    def __init__(
        self, limit: int, hint: str = "", scope: str = "one Fetch response's decoded records"
    ) -> None:
        self.limit = limit
        self.hint = hint
        self.scope = scope
        self.used = 0

    @classmethod
    def of(
        cls, bound: int | RatioBound, records: bytes | memoryview, param: str, hint: str = ""
    ) -> DecodeBudget:
        """The budget of a public decoding function's bound: ``bound`` bytes, or for
        ``"ratio"`` (their default) :data:`~spark_kafka_py.records.compression.
        DEFAULT_MAX_DECOMPRESSION_RATIO` x the size of ``records``.

        Args:
            bound: the caller's bound in bytes, or ``"ratio"``.
            records: the compressed bytes given to the function.
            param: the function's parameter that sets the bound, named in the error message
                of the default bound.
            hint: the error message's hint for a bound in bytes (as :class:`DecodeBudget`'s).
        """
        if not isinstance(bound, str):
            return cls(bound, hint)
        check_ratio_bound(bound)
        size = memoryview(records).nbytes
        ratio = DEFAULT_MAX_DECOMPRESSION_RATIO
        return cls(
            ratio_bound(size),
            f"the default {param}: {ratio} x the {size} bytes given, {ratio} being "
            f"maxDecompressionRatio's default; pass a larger {param} if the producer really "
            "wrote data that compresses this well",
            "the decoded records of the bytes given",
        )

    @property
    def remaining(self) -> int:
        """Bytes still allowed (never negative)."""
        return max(self.limit - self.used, 0)

    def charge(self, size: int, topic: str, partition: int, offset: int) -> None:
        """Count ``size`` decoded bytes of the batch at ``offset``.

        Raises:
            DecompressionBoundError: ``size`` is more than :attr:`remaining`.
        """
        if size > self.limit - self.used:
            raise self.exceeded(topic, partition, offset)
        self.used += size

    def exceeded(self, topic: str, partition: int, offset: int) -> DecompressionBoundError:
        """The error for the batch at ``offset`` of ``topic``-``partition`` going past the
        bound (the same message from both decoders: it depends on the bytes only)."""
        return DecompressionBoundError(
            f"record batch decodes past what is left ({self.remaining} of {self.limit} bytes) "
            f"of the bound on {self.scope} ({self.hint or 'max_decoded_bytes'})",
            bound=self.limit,
            topic=topic,
            partition=partition,
            offset=offset,
        )


def decompress_batch(
    codec: int,
    data: bytes | memoryview,
    *,
    max_batch_bytes: int,
    budget: DecodeBudget | None,
    topic: str,
    partition: int,
    offset: int,
    legacy_lz4: bool = False,
) -> bytes:
    """Decompress one batch's records (codec 1..4), bounded by ``max_batch_bytes`` and by what
    is left of ``budget``, and charge the result to ``budget``.

    Args:
        codec: compression id (attributes bits 0-2), see
            :mod:`spark_kafka_py.records.compression`.
        data: the compressed records section (or a legacy wrapper's value).
        max_batch_bytes: bound on this batch's decompressed size, bytes.
        budget: the response's budget, or ``None`` for no bound beyond ``max_batch_bytes``.
        topic, partition, offset: where the batch is (its base offset), for errors.
        legacy_lz4: a magic-0 wrapper's LZ4 frame (KAFKA-3160 header checksum).

    Returns:
        The decompressed bytes.

    Raises:
        DecompressionBoundError: past ``max_batch_bytes`` or past the budget (the message says
            which, with the bound and how to raise it).
        CorruptRecordError: malformed compressed data or an unknown codec.
    """
    limit = max_batch_bytes
    if budget is not None and budget.remaining < limit:
        limit = budget.remaining
    try:
        out = decompress(codec, data, limit, legacy_lz4=legacy_lz4)
    except DecompressionBoundError as exc:
        if budget is not None and limit < max_batch_bytes:
            raise budget.exceeded(topic, partition, offset) from exc
        raise DecompressionBoundError(
            str(exc), bound=max_batch_bytes, topic=topic, partition=partition, offset=offset
        ) from exc
    except KafkaProtocolError as exc:
        raise CorruptRecordError(str(exc), topic=topic, partition=partition, offset=offset) from exc
    if budget is not None:
        budget.used += len(out)  # len(out) <= limit <= what was left
    return out
