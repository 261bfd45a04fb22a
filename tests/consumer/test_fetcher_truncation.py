"""Log truncation detection (KIP-320) in the executor's Fetch loop.

Every Fetch (v12+) carries ``last_fetched_epoch``, the partition leader epoch of the last
record batch read; a leader whose log for that epoch ends below the fetch offset answers with
``diverging_epoch``. A real broker answers so only after an unclean leader election, which a
test cluster cannot bring about on demand, so a scripted broker plays that leader here (the
normal path, ``last_fetched_epoch`` sent to real brokers, runs in every integration test).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.fetcher import PartitionFetcher
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import DataLossError
from spark_kafka_py.protocol.messages.fetch import (
    EpochEndOffset,
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
from tests.records.encoder import Rec, batch_v2

TP = TopicPartition("t", 0)


def _recs(first: int, n: int) -> list[Rec]:
    return [Rec(None, f"v{first + i}".encode(), i) for i in range(n)]


#: Offsets 0-4 written at leader epoch 3, then 5-9 at leader epoch 4 (a later leader).
BATCH_A = batch_v2(_recs(0, 5), base_offset=0, leader_epoch=3)
BATCH_B = batch_v2(_recs(5, 5), base_offset=5, leader_epoch=4)


class _TruncatingLeader:
    """A scripted leader: offsets 0-4 at epoch 3, then (when asked with last_fetched_epoch 3)
    a log that diverges at offset 2, then offsets 5-9 at epoch 4."""

    def __init__(self) -> None:
        self.fetches: list[tuple[int, int]] = []  # (fetch_offset, last_fetched_epoch)

    def fetch(self, request: Any, version: int) -> FetchResponse:
        p = request.topics[0].partitions[0]
        self.fetches.append((p.fetch_offset, p.last_fetched_epoch))
        data: dict[str, Any] = {"partition_index": 0, "high_watermark": 10}
        if p.fetch_offset == 0:
            data["records"] = BATCH_A
        elif p.last_fetched_epoch == 3:
            data["diverging_epoch"] = EpochEndOffset(epoch=3, end_offset=2)
            data["records"] = b""
        else:
            data["records"] = BATCH_B
        return FetchResponse(
            responses=(FetchableTopicResponse(topic="t", partitions=(PartitionData(**data),)),)
        )


def _read(fail_on_data_loss: bool) -> tuple[list[str], _TruncatingLeader]:
    leader = _TruncatingLeader()
    handlers: dict[int, Any] = {
        18: lambda r, v: api_versions_for(MetadataRequest, FetchRequest),
        1: leader.fetch,
    }
    with FakeBroker(handlers) as broker:
        handlers[3] = lambda r, v: MetadataResponse(
            brokers=(MetadataResponseBroker(node_id=1, host=broker.host, port=broker.port),),
            topics=(
                MetadataResponseTopic(
                    name="t",
                    partitions=(
                        MetadataResponsePartition(partition_index=0, leader_id=1, leader_epoch=4),
                    ),
                ),
            ),
        )
        settings = ConsumerSettings(ClientConfig.from_bootstrap(f"{broker.host}:{broker.port}"))
        cfg = ClientConfig(bootstrap_servers=((broker.host, broker.port),))
        with KafkaClient(cfg) as client:
            fetcher = PartitionFetcher(
                client, TP, settings, fail_on_data_loss=fail_on_data_loss, poll_timeout_ms=10_000
            )
            values: list[str] = []
            try:
                for batch in fetcher.read(0, 10):
                    values += [v.decode() for v in batch.column("value").to_pylist()]
            except DataLossError as exc:
                values.append(f"error: {exc}")
    return values, leader


def test_truncation_is_data_loss_naming_the_partition_and_range() -> None:
    values, leader = _read(fail_on_data_loss=True)
    assert values[:5] == [f"v{i}" for i in range(5)]
    assert len(values) == 6 and values[5].startswith("error: Log truncation detected for t-0")
    assert "offsets [2, 5) were read at leader epoch 3" in values[5]
    assert "epoch 3 ends at offset 2" in values[5]
    # The second Fetch told the leader which epoch the records read so far came from.
    assert leader.fetches == [(0, -1), (5, 3)]


def test_truncation_with_fail_on_data_loss_false_warns_and_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="spark_kafka_py.consumer.fetcher"):
        values, leader = _read(fail_on_data_loss=False)
    assert values == [f"v{i}" for i in range(10)]
    assert "Log truncation detected for t-0" in caplog.text
    assert leader.fetches == [(0, -1), (5, 3), (5, -1)]
