"""Decompression bombs for the Fetch path, and a scripted leader serving them (tests only).

:func:`bomb` builds a partition's records as a hostile (or badly broken) broker could send them:
many tiny record batches, each one record whose value is 1 MiB of zeros, compressed with one
codec (zstd, gzip and lz4 shrink 1 MiB of zeros 250x to over 10,000x; snappy about 21x).
:func:`serve` runs :class:`~spark_kafka_py.consumer.fetcher.PartitionFetcher` against a
:class:`~tests.client.fake_broker.FakeBroker` leader answering every Fetch at offset ``p`` with
the batches from ``p`` on.

Run as a program (``python -m tests.consumer.decompression_bomb CODEC BATCHES RATIO``, from the
repository root, ``SPARK_KAFKA_PY_PURE=1`` for the pure decoder), it reads such a partition in a
fresh process and prints one JSON line: the rows read, the error raised (if any), the largest
Arrow batch, and the growth of peak RSS and of ``pyarrow.total_allocated_bytes()`` while reading
(C allocations of the accelerated decoder and of the codecs are invisible to ``tracemalloc``,
and to Arrow's pool; peak RSS of a fresh process sees them all).
"""

from __future__ import annotations

import dataclasses
import json
import resource
import struct
import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.fetcher import PartitionFetcher
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaProtocolError
from spark_kafka_py.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from tests.client.fake_broker import FakeBroker, api_versions_for
from tests.records.encoder import GZIP, LZ4, SNAPPY, ZSTD, Rec, batch_v2, encode_record

TP = TopicPartition("t", 0)
#: Bytes of zeros in each batch's one record value.
ZEROS = 1 << 20
#: Decompressed size of each batch's records section (the one record, framing included).
BATCH_DECODED = len(encode_record(Rec(None, bytes(ZEROS), 0)))
CODECS = {"gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}


def bomb_batches(codec: int, count: int) -> list[bytes]:
    """``count`` batches at offsets 0..count-1, each one record of :data:`ZEROS` zeros.

    One batch is compressed once and copied with its base offset rewritten (the base offset
    is not covered by the CRC-32C, which starts at the attributes).
    """
    one = batch_v2([Rec(None, bytes(ZEROS), 0)], codec=codec)
    return [struct.pack(">q", i) + one[8:] for i in range(count)]


def serve(
    batches: list[bytes], settings: ConsumerSettings, end: int | None = None
) -> Iterator[pa.RecordBatch]:
    """Read ``[0, end)`` (default: every batch) through a fetcher against a scripted leader."""
    end = len(batches) if end is None else end

    def fetch(request: Any, version: int) -> FetchResponse:
        offset = request.topics[0].partitions[0].fetch_offset
        data = PartitionData(
            partition_index=0,
            high_watermark=len(batches),
            last_stable_offset=len(batches),
            records=b"".join(batches[offset:]),
        )
        return FetchResponse(responses=(FetchableTopicResponse(topic="t", partitions=(data,)),))

    handlers: dict[int, Any] = {
        18: lambda r, v: api_versions_for(MetadataRequest, FetchRequest),
        1: fetch,
    }
    with FakeBroker(handlers) as broker:
        handlers[3] = lambda r, v: MetadataResponse(
            brokers=(MetadataResponseBroker(node_id=1, host=broker.host, port=broker.port),),
            topics=(
                MetadataResponseTopic(
                    name="t",
                    partitions=(MetadataResponsePartition(partition_index=0, leader_id=1),),
                ),
            ),
        )
        bootstrap = f"{broker.host}:{broker.port}"
        settings = dataclasses.replace(settings, client=ClientConfig.from_bootstrap(bootstrap))
        with KafkaClient(settings.client) as client:
            fetcher = PartitionFetcher(client, TP, settings, poll_timeout_ms=10_000)
            yield from fetcher.read(0, end)


def settings_for(max_partition_fetch_bytes: int, ratio: int | None) -> ConsumerSettings:
    """Consumer settings with these fetch bytes and, unless ``None``, this
    ``maxDecompressionRatio``."""
    extra = {} if ratio is None else {"max_decompression_ratio": ratio}
    return ConsumerSettings(
        ClientConfig.from_bootstrap("127.0.0.1:1"),
        max_partition_fetch_bytes=max_partition_fetch_bytes,
        **extra,
    )


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def main(argv: list[str]) -> None:
    codec, count, fetch_bytes = CODECS[argv[0]], int(argv[1]), int(argv[2])
    ratio = None if argv[3] == "default" else int(argv[3])
    batches = bomb_batches(codec, count)
    settings = settings_for(fetch_bytes, ratio)
    # warm up (imports, connection code paths, Arrow type singletons): not per-read memory
    for _ in serve(bomb_batches(codec, 1), settings):
        pass
    rss0, arrow0 = _peak_rss(), pa.total_allocated_bytes()
    rows = largest = arrow_peak = 0
    error = None
    try:
        for batch in serve(batches, settings):
            rows += batch.num_rows
            largest = max(largest, batch.get_total_buffer_size())
            arrow_peak = max(arrow_peak, pa.total_allocated_bytes() - arrow0)
            del batch
    except KafkaProtocolError as exc:
        error = f"{type(exc).__name__}: {exc}"
    report = {
        "rows": rows,
        "error": error,
        "largest_batch": largest,
        "rss_growth": _peak_rss() - rss0,
        "arrow_peak": arrow_peak,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
