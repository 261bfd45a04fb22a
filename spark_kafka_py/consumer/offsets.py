"""Offset look-ups with ListOffsets: earliest, latest, by timestamp; one request per broker.

Source: Kafka's ``ListOffsetsRequest``/``ListOffsetsResponse`` specs (timestamps -2 earliest,
-1 latest: the high watermark, or the last stable offset under ``read_committed``, KIP-98).
Partitions are grouped by their leader so a look-up over 1,000 partitions on 3 brokers is 3
requests, not 1,000 (what Spark's ``KafkaOffsetReaderAdmin`` gets from the admin client), and
the requests to different brokers are all written before any answer is read, so the brokers
work on them at the same time (:func:`list_offsets_once`).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping

from spark_kafka_py.client.cluster import ClusterMetadata, KafkaClient
from spark_kafka_py.client.retry import Backoff, Retries, retriable
from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaApiError, KafkaConnectionError, KafkaError, KafkaTimeoutError
from spark_kafka_py.protocol.error_codes import (
    LEADER_NOT_AVAILABLE,
    NONE,
    ErrorCode,
    error_for_code,
)
from spark_kafka_py.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)

log = logging.getLogger(__name__)

#: ``ReplicaId`` a consumer sends in ListOffsets and Fetch (it is not a follower broker).
CONSUMER_REPLICA_ID = -1
#: Not a Kafka error code: the broker left out of its ListOffsets answer a partition we asked
#: for. Retried like Kafka's retriable errors.
_MISSING_PARTITION = ErrorCode(-1, "MISSING_PARTITION", True, "")
#: Errors meaning "no broker answered": retried until ``default.api.timeout.ms``.
_UNREACHABLE = (KafkaConnectionError, KafkaTimeoutError)


def list_offsets(
    client: KafkaClient,
    timestamps: Mapping[TopicPartition, int],
    *,
    isolation_level: int = 0,
    retries: int = 3,
    retry_interval_ms: int = 1000,
    api_timeout_ms: int = 60_000,
    retry_backoff_ms: int = 100,
) -> dict[TopicPartition, int]:
    """Look up one offset per partition.

    The first attempt finds the leaders in the client's cached metadata when it is younger
    than ``metadata.max.age.ms`` and holds every topic without error (the planner has just
    asked for it); if anything then fails, Metadata is asked again and the attempt repeated
    at once, not counted against ``retries``.

    Args:
        client: a connected (or connectable) client.
        timestamps: ``{TopicPartition: timestamp}``; -2 earliest (log start offset), -1 latest
            (high watermark / last stable offset), or a timestamp in ms since the epoch (the
            earliest offset whose timestamp is >= it; -1 when there is none).
        isolation_level: 0 read_uncommitted, 1 read_committed.
        retries: attempts after the first for partitions that failed with a retriable
            error (Spark's ``fetchOffset.numRetries``).
        retry_interval_ms: pause between attempts (``fetchOffset.retryIntervalMs``; a fixed
            interval, as Spark's ``KafkaOffsetReader``).
        api_timeout_ms: how long brokers may stay unreachable (connection refused or reset,
            request timeouts, Metadata unanswered) before the look-up fails
            (``default.api.timeout.ms``, as the Java admin client Spark uses waits). Such
            attempts do not count against ``retries``; the metadata is asked again before
            each one, so a moved leader is found.
        retry_backoff_ms: first pause after an unreachable broker (``retry.backoff.ms``),
            then the one retry policy's (:mod:`spark_kafka_py.client.retry`): doubled per
            attempt up to ``retry.backoff.max.ms`` (1,000 ms), with KIP-580's jitter.

    Returns:
        ``{TopicPartition: offset}`` for every partition asked.

    Raises:
        KafkaApiError: a non-retriable error, or a retriable one that outlived the retries;
            the message names the topic-partition.
        KafkaConnectionError: a broker that waiting cannot mend (not ``retriable``: a failed
            TLS handshake, a peer that is not Kafka), at once.
        KafkaTimeoutError: brokers stayed unreachable for ``api_timeout_ms``; the message
            names a topic-partition and the last connection error.
    """
    remaining = dict(timestamps)
    result: dict[TopicPartition, int] = {}
    attempt = 0

    def unreachable_for(last: BaseException) -> KafkaTimeoutError:
        tp = min(remaining)
        return KafkaTimeoutError(
            f"ListOffsets for {len(remaining)} partition(s), e.g. {tp}: brokers "
            f"unreachable for default.api.timeout.ms={api_timeout_ms} ms; last error: {last}"
        )

    unreachable = Retries(
        "ListOffsets",
        api_timeout_ms,
        backoff=Backoff(retry_backoff_ms),
        timeout_error=unreachable_for,
    )
    # The leaders the client knows already (e.g. from the Metadata the planner just asked),
    # as the Java client does; any failure then asks Metadata again before a retry.
    cached = client.cached_metadata
    use_cache = (
        cached is not None
        and not client.metadata_is_stale()
        and all(
            tp.topic in cached.topics and not cached.topics[tp.topic].error_code for tp in remaining
        )
    )
    while True:
        failures: dict[TopicPartition, KafkaError] = {}
        metadata: ClusterMetadata | None = cached if use_cache else None
        try:
            if metadata is None:
                metadata = client.metadata(sorted({tp.topic for tp in remaining}))
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            failures = dict.fromkeys(remaining, exc)
        by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
        topics = metadata.topics if metadata is not None else {}
        for tp in remaining if metadata is not None else ():  # none failed on no metadata
            topic = topics.get(tp.topic)
            part = topic.partitions.get(tp.partition) if topic is not None else None
            if (
                topic is not None
                and topic.error_code
                and not error_for_code(topic.error_code, "").retriable
            ):
                raise error_for_code(topic.error_code, f"for topic '{tp.topic}' (Metadata)")
            if part is None or part.leader_id < 0:
                failures[tp] = error_for_code(
                    LEADER_NOT_AVAILABLE, f"for {tp} (no leader in metadata)"
                )
                continue
            by_leader[part.leader_id].append(tp)
        found, failed = list_offsets_once(
            client,
            {leader: {tp: remaining[tp] for tp in tps} for leader, tps in by_leader.items()},
            isolation_level=isolation_level,
        )
        result.update(found)
        failures.update(failed)
        for _, err in sorted(failed.items()):
            if isinstance(err, KafkaApiError) and not err.retriable:
                raise err
        remaining = {tp: ts for tp, ts in remaining.items() if tp not in result}
        if not remaining:
            return result
        if use_cache:  # perhaps only stale leaders: ask Metadata, at once and uncounted
            use_cache = False
            continue
        for err in failures.values():  # a TLS handshake or non-Kafka peer: waiting cannot help
            if not retriable(err):
                raise err
        if all(isinstance(e, _UNREACHABLE) for e in failures.values()):
            _, err = min(failures.items())
            log.info("ListOffsets: %s; retrying (attempt %d)", err, unreachable.attempts + 1)
            unreachable.after(err)  # the backoff, or the timeout past default.api.timeout.ms
            continue
        attempt += 1
        if attempt > retries:
            _, err = min(failures.items())
            raise err
        log.info(
            "ListOffsets attempt %d failed for %d partition(s) (e.g. %s); retrying in %d ms",
            attempt,
            len(failures),
            next(iter(failures.values()), None),
            retry_interval_ms,
        )
        time.sleep(retry_interval_ms / 1000)


def list_offsets_once(
    client: KafkaClient,
    by_leader: Mapping[int, Mapping[TopicPartition, int]],
    *,
    isolation_level: int = 0,
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, KafkaError]]:
    """One ListOffsets attempt: one request per leader, all written before any is read.

    No Metadata and no retries: the caller knows the leaders (cached metadata) and decides
    what to do with the failures. The requests to the brokers are in flight together
    (:meth:`~spark_kafka_py.client.connection.BrokerConnection.send_pipelined`), so the
    round trip of the look-up is that of the slowest broker, not the sum over brokers.
    :class:`PreparedListOffsets` does the same with requests built once.

    Args:
        client: a connected (or connectable) client.
        by_leader: ``{leader node id: {TopicPartition: timestamp}}`` (timestamps as in
            :func:`list_offsets`).
        isolation_level: 0 read_uncommitted, 1 read_committed (ListOffsets v2+, KIP-98).

    Returns:
        ``(offsets, failures)``: ``{TopicPartition: offset}`` for the partitions answered
        without error, and ``{TopicPartition: error}`` for the others:
        :class:`KafkaApiError` for a partition error code of the response (retriable or not,
        e.g. NOT_LEADER_OR_FOLLOWER after a leader moved, UNKNOWN_TOPIC_OR_PARTITION) or a
        partition the answer left out, :class:`KafkaConnectionError` /
        :class:`KafkaTimeoutError` for every partition of a broker that did not answer.
    """
    return PreparedListOffsets(by_leader, isolation_level=isolation_level).send(client)


class PreparedListOffsets:
    """The ListOffsets requests of a fixed set of partitions and timestamps, built once and
    sent as often as needed (a stream reader's latest offsets, every micro-batch, while the
    leaders stay where the cached metadata says).

    Args:
        by_leader: ``{leader node id: {TopicPartition: timestamp}}``.
        isolation_level: 0 read_uncommitted, 1 read_committed.
    """

    def __init__(
        self, by_leader: Mapping[int, Mapping[TopicPartition, int]], *, isolation_level: int = 0
    ) -> None:
        # (leader, request, {TopicPartition: timestamp}, {topic: {partition: TopicPartition}})
        self._requests: list[
            tuple[
                int,
                ListOffsetsRequest,
                dict[TopicPartition, int],
                dict[str, dict[int, TopicPartition]],
            ]
        ] = []
        for leader, asked in sorted(by_leader.items()):
            if not asked:
                continue
            topics: dict[str, list[ListOffsetsPartition]] = defaultdict(list)
            index: dict[str, dict[int, TopicPartition]] = defaultdict(dict)
            for tp, timestamp in asked.items():
                topics[tp.topic].append(
                    ListOffsetsPartition(partition_index=tp.partition, timestamp=timestamp)
                )
                index[tp.topic][tp.partition] = tp
            request = ListOffsetsRequest(
                replica_id=CONSUMER_REPLICA_ID,
                isolation_level=isolation_level,
                topics=tuple(
                    ListOffsetsTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()
                ),
            )
            self._requests.append((leader, request, dict(asked), dict(index)))

    def send(
        self, client: KafkaClient
    ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, KafkaError]]:
        """Send every request, then read every answer: see :func:`list_offsets_once`."""
        result: dict[TopicPartition, int] = {}
        failures: dict[TopicPartition, KafkaError] = {}
        pending = []
        for leader, request, asked, index in self._requests:
            try:
                conn = client.connection(leader)
                handle = conn.send_pipelined(request)
            except _UNREACHABLE as exc:
                failures.update(dict.fromkeys(asked, exc))
                continue
            assert handle is not None  # ListOffsets is always answered
            pending.append((conn, handle, asked, index))
        for conn, handle, asked, index in pending:
            try:
                response = conn.receive(handle)
            except _UNREACHABLE as exc:
                failures.update(dict.fromkeys(asked, exc))
                continue
            for topic_resp in response.topics:
                keys = index.get(topic_resp.name)
                if keys is None:
                    continue
                for p in topic_resp.partitions:
                    tp = keys.get(p.partition_index)
                    if tp is None:
                        continue
                    if p.error_code == NONE:
                        result[tp] = p.offset
                    else:
                        failures[tp] = error_for_code(
                            p.error_code, f"for {tp} (ListOffsets, timestamp {asked[tp]})"
                        )
            for tp in asked:
                if tp not in result and tp not in failures:
                    failures[tp] = KafkaApiError(
                        _MISSING_PARTITION, f"for {tp}: not in the ListOffsets response"
                    )
        return result, failures
