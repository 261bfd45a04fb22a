"""The client against a real Kafka broker (``kafka_bootstrap`` fixture): ApiVersions
negotiation, Metadata, ListOffsets earliest/latest, Fetch returning record batches, and every
version of each API we support that the broker also supports."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Iterator

import pytest

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from spark_kafka_py.protocol.messages.list_offsets import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from spark_kafka_py.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from spark_kafka_py.testing.tools import ProducedRecord, produce

pytestmark = pytest.mark.integration

N_RECORDS = 25


@pytest.fixture(scope="module")
def loaded_topic(kafka_bootstrap: str, new_topic: Callable[..., str]) -> str:
    topic = new_topic(partitions=3)
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(key=f"k{i}", value=f"v{i}", partition=0) for i in range(N_RECORDS)],
    )
    return topic


@pytest.fixture(scope="module")
def new_topic(request: pytest.FixtureRequest) -> Callable[..., str]:
    """Module-scoped wrapper: topics created once for all tests of this module."""
    from spark_kafka_py.testing.tools import create_topic

    def make(partitions: int = 1) -> str:
        name = f"client-it-{uuid.uuid4().hex[:8]}"
        create_topic(request.getfixturevalue("kafka_bootstrap"), name, partitions)
        return name

    return make


@pytest.fixture()
def client(kafka_bootstrap: str) -> Iterator[KafkaClient]:
    with KafkaClient(ClientConfig.from_bootstrap(kafka_bootstrap)) as c:
        yield c


def _list_offsets(topic: str, timestamp: int) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        topics=(
            ListOffsetsTopic(
                name=topic,
                partitions=(ListOffsetsPartition(partition_index=0, timestamp=timestamp),),
            ),
        )
    )


def _fetch(topic: str, topic_id: uuid.UUID, offset: int = 0) -> FetchRequest:
    return FetchRequest(
        max_wait_ms=100,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=(
            FetchTopic(
                topic=topic,
                topic_id=topic_id,
                partitions=(
                    FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20),
                ),
            ),
        ),
    )


def test_api_versions_negotiation(client: KafkaClient, loaded_topic: str) -> None:
    node = client.least_loaded_node()
    conn = client.connection(node)
    conn.connect()
    versions = conn.api_versions
    for key in (1, 2, 3, 18):
        assert key in versions
    assert conn.pick_version(FetchRequest) >= 12
    assert conn.pick_version(MetadataRequest) >= 10


def test_metadata_of_created_topic(client: KafkaClient, loaded_topic: str) -> None:
    md = client.metadata([loaded_topic])
    topic = md.topics[loaded_topic]
    assert topic.error_code == 0
    assert topic.topic_id is not None
    assert sorted(topic.partitions) == [0, 1, 2]
    for p in topic.partitions.values():
        assert p.leader_id in md.brokers
        assert p.leader_epoch >= 0
        assert p.leader_id in p.isr_nodes
    assert md.cluster_id
    everything = client.metadata(None)
    assert loaded_topic in everything.topics
    missing = client.metadata(["no-such-topic-for-client-it"])
    assert missing.topics["no-such-topic-for-client-it"].error_code == 3  # not auto-created


def test_list_offsets_earliest_latest(client: KafkaClient, loaded_topic: str) -> None:
    leader = client.metadata([loaded_topic]).leader(loaded_topic, 0)
    assert leader is not None
    earliest = client.send(leader, _list_offsets(loaded_topic, EARLIEST_TIMESTAMP))
    latest = client.send(leader, _list_offsets(loaded_topic, LATEST_TIMESTAMP))
    e = earliest.topics[0].partitions[0]
    lt = latest.topics[0].partitions[0]
    assert (e.error_code, e.offset) == (0, 0)
    assert (lt.error_code, lt.offset) == (0, N_RECORDS)


def _check_fetch(response: FetchResponse) -> None:
    part = response.responses[0].partitions[0]
    assert part.error_code == 0
    assert part.high_watermark == N_RECORDS
    assert part.records is not None and len(part.records) > 61
    base_offset, batch_length = struct.unpack_from(">qi", part.records, 0)
    assert base_offset == 0 and batch_length > 0
    assert part.records[16] == 2  # record batch magic v2


def test_fetch_by_name_and_by_topic_id(client: KafkaClient, loaded_topic: str) -> None:
    md = client.metadata([loaded_topic])
    leader = md.leader(loaded_topic, 0)
    assert leader is not None
    topic_id = md.topics[loaded_topic].topic_id
    by_id = client.send(leader, _fetch(loaded_topic, topic_id))
    assert client.connection(leader).pick_version(FetchRequest) >= 13
    assert by_id.responses[0].topic_id == topic_id
    _check_fetch(by_id)
    by_name = client.send(leader, _fetch(loaded_topic, topic_id), max_version=12)
    assert by_name.responses[0].topic == loaded_topic
    _check_fetch(by_name)


def test_every_common_version(client: KafkaClient, loaded_topic: str) -> None:
    md = client.metadata([loaded_topic])
    leader = md.leader(loaded_topic, 0)
    assert leader is not None
    topic_id = md.topics[loaded_topic].topic_id
    conn = client.connection(leader)
    conn.connect()
    requests = {
        MetadataRequest: MetadataRequest(
            topics=(MetadataRequestTopic(name=loaded_topic),), allow_auto_topic_creation=True
        ),
        ListOffsetsRequest: _list_offsets(loaded_topic, LATEST_TIMESTAMP),
        FetchRequest: _fetch(loaded_topic, topic_id),
    }
    tried = []
    for request_type, request in requests.items():
        low, high = conn.api_versions[request_type.API_KEY]
        for version in range(max(low, request_type.MIN_VERSION), request_type.MAX_VERSION + 1):
            if version > high:
                break
            assert conn.pick_version(request_type, version) == version
            response = client.send(leader, request, max_version=version)
            tried.append((request_type.__name__, version))
            if request_type is MetadataRequest:
                assert response.topics[0].name == loaded_topic
                assert len(response.topics[0].partitions) == 3
            elif request_type is ListOffsetsRequest:
                assert response.topics[0].partitions[0].offset == N_RECORDS
            else:
                _check_fetch(response)
    assert len(tried) >= 20
