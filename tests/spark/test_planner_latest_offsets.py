"""The stream reader's per-batch latest offsets (``Planner.latest_offsets``) against scripted
loopback brokers: Metadata reused within ``kafka.metadata.max.age.ms``, asked again after it
(a new partition enters) and at once after a failed ListOffsets (a moved leader), and the
ListOffsets requests to different brokers in flight together."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.protocol.error_codes import NOT_LEADER_OR_FOLLOWER
from spark_kafka_py.protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.planner import Planner
from spark_kafka_py.spark.source import KafkaStreamReader
from tests.client.fake_broker import FakeBroker, api_versions_for


class Cluster:
    """Two scripted brokers (node ids 1 and 2) sharing one view of topic ``t``: partition
    ``p``'s leader is ``leaders[p]``; each answers ListOffsets with ``100 * node + p`` for the
    partitions it leads and NOT_LEADER_OR_FOLLOWER for the others, after ``delay_s``."""

    def __init__(self) -> None:
        self.leaders = {0: 1, 1: 2}
        self.delay_s = 0.0
        self.brokers: dict[int, FakeBroker] = {}
        self.in_flight = 0
        # Metadata answers wait for this (set: at once).
        self.metadata_gate = threading.Event()
        self.metadata_gate.set()
        self.most_in_flight = 0
        self._lock = threading.Lock()

    def metadata(self, request: Any, version: int) -> MetadataResponse:
        assert self.metadata_gate.wait(30)
        return MetadataResponse(
            brokers=tuple(
                MetadataResponseBroker(node_id=n, host=b.host, port=b.port)
                for n, b in self.brokers.items()
            ),
            cluster_id="cid",
            controller_id=1,
            topics=(
                MetadataResponseTopic(
                    name="t",
                    topic_id=uuid.UUID(int=7),
                    partitions=tuple(
                        MetadataResponsePartition(
                            partition_index=p, leader_id=n, replica_nodes=(n,), isr_nodes=(n,)
                        )
                        for p, n in sorted(self.leaders.items())
                    ),
                ),
            ),
        )

    def offsets(self, node: int) -> Any:
        def handler(request: ListOffsetsRequest, version: int) -> ListOffsetsResponse:
            with self._lock:
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
            time.sleep(self.delay_s)
            with self._lock:
                self.in_flight -= 1
            return ListOffsetsResponse(
                topics=tuple(
                    ListOffsetsTopicResponse(
                        name=t.name,
                        partitions=tuple(
                            ListOffsetsPartitionResponse(
                                partition_index=p.partition_index,
                                offset=100 * node + p.partition_index,
                            )
                            if self.leaders.get(p.partition_index) == node
                            else ListOffsetsPartitionResponse(
                                partition_index=p.partition_index,
                                error_code=NOT_LEADER_OR_FOLLOWER.code,
                            )
                            for p in t.partitions
                        ),
                    )
                    for t in request.topics
                )
            )

        return handler

    def requests(self, api_key: int) -> int:
        return sum([k for k, _, _ in b.requests].count(api_key) for b in self.brokers.values())


@contextmanager
def scripted_cluster() -> Iterator[Cluster]:
    cluster = Cluster()
    with ExitStack() as stack:
        for node in (1, 2):
            handlers = {
                18: lambda r, v: api_versions_for(MetadataRequest, ListOffsetsRequest),
                3: cluster.metadata,
                2: cluster.offsets(node),
            }
            cluster.brokers[node] = stack.enter_context(FakeBroker(handlers))
        yield cluster


def _planner(cluster: Cluster, max_age_ms: int) -> Planner:
    first = cluster.brokers[1]
    options = parse_options(
        {
            "kafka.bootstrap.servers": f"{first.host}:{first.port}",
            "subscribe": "t",
            "kafka.metadata.max.age.ms": str(max_age_ms),
            "fetchOffset.retryIntervalMs": "10",
        },
        streaming=True,
    )
    return Planner(options)


def tps(*partitions: int) -> list[TopicPartition]:
    return [TopicPartition("t", p) for p in partitions]


def _refreshed(planner: Planner) -> None:
    """Wait for the Metadata request running between micro-batches, if any, to end."""
    assert planner.metadata.wait(30)


def test_metadata_is_asked_between_batches_and_a_new_partition_enters_the_batch_after_next() -> (
    None
):
    with scripted_cluster() as cluster:
        planner = _planner(cluster, max_age_ms=600_000)
        try:
            assert planner.latest_offsets() == dict(zip(tps(0, 1), (100, 201), strict=True))
            planner.refresh_metadata()
            _refreshed(planner)
            # Metadata does not answer: micro-batches go on from the cached topic-partitions
            cluster.metadata_gate.clear()
            for _ in range(3):
                assert planner.latest_offsets() == dict(zip(tps(0, 1), (100, 201), strict=True))
                planner.refresh_metadata()  # the first waits for the gate; then one is under way
            assert cluster.requests(2) == 2 * 4  # one ListOffsets per broker and batch
            cluster.leaders[2] = 1  # the topic grows while the background Metadata waits
            cluster.metadata_gate.set()
            _refreshed(planner)
            latest = planner.latest_offsets()
            assert latest == dict(zip(tps(0, 1, 2), (100, 201, 102), strict=True))
        finally:
            cluster.metadata_gate.set()
            planner.close()


def test_metadata_older_than_max_age_is_asked_on_the_critical_path() -> None:
    with scripted_cluster() as cluster:
        planner = _planner(cluster, max_age_ms=1500)
        try:
            planner.latest_offsets()
            planner.refresh_metadata()
            _refreshed(planner)
            asked = cluster.requests(3)
            cluster.metadata_gate.clear()
            planner.latest_offsets()
            planner.refresh_metadata()  # a background request that waits for the gate
            time.sleep(1.6)  # the cached answer is now older than metadata.max.age.ms
            cluster.leaders[2] = 1
            threading.Timer(0.5, cluster.metadata_gate.set).start()
            latest = planner.latest_offsets()  # asks Metadata itself, waiting for the answer
            assert latest[TopicPartition("t", 2)] == 102
            assert cluster.requests(3) >= asked + 2
        finally:
            cluster.metadata_gate.set()
            planner.close()


def test_the_stream_reader_asks_metadata_when_a_batch_is_planned_or_none_is() -> None:
    """``latestOffset`` with nothing new (no micro-batch; ``partitions`` is not called) and
    ``partitions`` start the background Metadata request; a partition added to the topic
    enters the ``latestOffset`` after the one that started the request that saw it."""
    with scripted_cluster() as cluster:
        reader = KafkaStreamReader(_planner(cluster, max_age_ms=600_000).options)
        try:
            start = reader.initialOffset()
            assert start == {"t": {"0": 100, "1": 201}}
            asked = cluster.requests(3)
            assert reader.latestOffset(start, None) == start  # nothing new: no batch
            _refreshed(reader._planner)
            assert cluster.requests(3) == asked + 1
            cluster.leaders[2] = 1  # the topic grows
            assert reader.latestOffset(start, None) == start  # the answer from before it grew
            _refreshed(reader._planner)
            end = reader.latestOffset(start, None)
            assert end == {"t": {"0": 100, "1": 201, "2": 102}}
            refreshes: list[int] = []
            reader._planner.refresh_metadata = lambda: refreshes.append(1)  # type: ignore[method-assign]
            assert reader.partitions(start, start) == []  # an empty batch, planned
            assert refreshes == [1]
        finally:
            reader.stop()


def test_a_moved_leader_makes_the_next_batch_ask_metadata_at_once() -> None:
    with scripted_cluster() as cluster:
        planner = _planner(cluster, max_age_ms=600_000)
        try:
            planner.latest_offsets()
            metadata_asked = cluster.requests(3)
            cluster.leaders[0] = 2  # leadership moves; the cached leader answers NOT_LEADER
            assert planner.latest_offsets() == dict(zip(tps(0, 1), (200, 201), strict=True))
            assert cluster.requests(3) > metadata_asked
            again = cluster.requests(3)
            assert planner.latest_offsets() == dict(zip(tps(0, 1), (200, 201), strict=True))
            assert cluster.requests(3) == again  # the refreshed metadata is cached again
        finally:
            planner.close()


def test_list_offsets_to_different_brokers_are_in_flight_together() -> None:
    with scripted_cluster() as cluster:
        planner = _planner(cluster, max_age_ms=600_000)
        try:
            planner.latest_offsets()
            cluster.delay_s = 0.5
            start = time.monotonic()
            planner.latest_offsets()
            took = time.monotonic() - start
        finally:
            planner.close()
    assert cluster.most_in_flight == 2
    assert took < 0.9, f"{took:.2f} s: the brokers were asked one after the other"


def test_pickled_planner_carries_no_cached_metadata() -> None:
    import pickle

    with scripted_cluster() as cluster:
        planner = _planner(cluster, max_age_ms=600_000)
        try:
            planner.latest_offsets()
            copy = pickle.loads(pickle.dumps(planner))
            assert copy._client is None and copy._metadata is None
            assert copy._latest_requests is None
            assert copy.metadata.fresh() is None
        finally:
            planner.close()
