"""Topics: creating one with CreateTopics, deleting them with DeleteTopics, listing
and describing them with Metadata and DescribeConfigs (the settings that are not Kafka's
defaults), as ``kafka-topics.sh --create|--delete|--list|--describe`` do.

Facts from Kafka's ``CreateTopicsRequest``/``CreateTopicsResponse`` specs; no code taken. Any
broker takes the request (KRaft forwards it to the controller); lost connections and retriable
errors are asked again after a backoff within the caller's timeout (the one retry policy,
:func:`spark_kafka_py.client.coordinator.retries_until`: ``retry.backoff.ms`` doubling up to
``retry.backoff.max.ms`` with jitter, KIP-580).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spark_kafka_py.admin.configs import non_default_topic_configs
from spark_kafka_py.client.cluster import KafkaClient, PartitionInfo
from spark_kafka_py.client.coordinator import NETWORK_ERRORS, retries_until
from spark_kafka_py.errors import KafkaApiError, KafkaError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from spark_kafka_py.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
)

__all__ = ["TopicDescription", "create_topic", "delete_topics", "describe_topics", "list_topics"]


def create_topic(
    client: KafkaClient,
    name: str,
    *,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str],
    timeout_ms: int,
) -> bool:
    """Create topic ``name`` (CreateTopics v2-7 to any broker; KRaft forwards it to the
    controller).

    Args:
        partitions: partition count; -1 for the broker's ``num.partitions``.
        replication_factor: -1 for the broker's ``default.replication.factor``.
        configs: topic configuration (e.g. ``{"cleanup.policy": "compact"}``).
        timeout_ms: how long the broker and this call wait (ms).

    Returns:
        True if created, False if it existed (TOPIC_ALREADY_EXISTS).

    Raises:
        KafkaApiError: another error (INVALID_REPLICATION_FACTOR, POLICY_VIOLATION,
            TOPIC_AUTHORIZATION_FAILED, ...) naming the topic and the broker's message.
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    request = CreateTopicsRequest(
        topics=(
            CreatableTopic(
                name=name,
                num_partitions=partitions,
                replication_factor=replication_factor,
                configs=tuple(CreatableTopicConfig(name=k, value=v) for k, v in configs.items()),
            ),
        ),
        timeout_ms=timeout_ms,
    )
    what = f"CreateTopics for topic {name!r}"
    retries = retries_until(client, what, timeout_ms)
    while True:
        try:
            response: CreateTopicsResponse = client.send(client.least_loaded_node(), request)
        except NETWORK_ERRORS as exc:
            retries.after(exc)  # raised at once when not retriable
            continue
        result = next((t for t in response.topics if t.name == name), None)
        if result is None:
            raise KafkaError(f"{what}: the broker answered no result for the topic")
        code = ec.error_for(result.error_code)
        if code == ec.NONE:
            return True
        if code == ec.TOPIC_ALREADY_EXISTS:
            return False
        detail = code.description
        if result.error_message:
            detail += f" Broker: {result.error_message}"
        retries.after(KafkaApiError(code, f"creating topic {name!r}", detail))


def delete_topics(client: KafkaClient, names: Sequence[str], *, timeout_ms: int) -> None:
    """Delete topics ``names`` (one DeleteTopics v1-6 request to any broker; KRaft forwards
    it to the controller), retried on lost connections and retriable errors within
    ``timeout_ms``.

    Raises:
        KafkaApiError: a topic's error (UNKNOWN_TOPIC_OR_PARTITION for a topic the cluster
            does not have, TOPIC_AUTHORIZATION_FAILED, ...) naming the topic; the other topics
            of the request are deleted all the same (the broker's rule).
        KafkaTimeoutError: not done within ``timeout_ms``.
    """
    left = list(dict.fromkeys(names))
    what = f"DeleteTopics for {', '.join(repr(n) for n in left)}"
    retries = retries_until(client, what, timeout_ms)
    while left:
        request = DeleteTopicsRequest(
            topics=tuple(DeleteTopicState(name=n) for n in left),
            topic_names=tuple(left),
            timeout_ms=timeout_ms,
        )
        try:
            response: DeleteTopicsResponse = client.send(client.least_loaded_node(), request)
        except NETWORK_ERRORS as exc:
            retries.after(exc)  # raised at once when not retriable
            continue
        results = {r.name: r for r in response.responses}
        retry: list[tuple[str, KafkaApiError]] = []
        for name in left:
            result = results.get(name)
            if result is None:
                raise KafkaError(f"{what}: the broker answered no result for {name!r}")
            code = ec.error_for(result.error_code)
            if code == ec.NONE:
                continue
            detail = code.description
            if result.error_message:
                detail += f" Broker: {result.error_message}"
            error = KafkaApiError(code, f"deleting topic {name!r}", detail)
            # UNKNOWN_TOPIC_OR_PARTITION is retriable in Kafka's table; to DeleteTopics it
            # means the topic is not there, which asking again does not change
            if not error.retriable or code == ec.UNKNOWN_TOPIC_OR_PARTITION:
                raise error
            retry.append((name, error))
        if not retry:
            return
        left = [name for name, _ in retry]
        retries.after(retry[0][1])


def list_topics(
    client: KafkaClient, *, include_internal: bool = False, timeout_ms: int
) -> list[str]:
    """The names of the cluster's topics (Metadata for all topics), sorted; internal topics
    (``__consumer_offsets``, ``__transaction_state``) only with ``include_internal``, as
    ``kafka-topics.sh --list`` without ``--exclude-internal`` shows them.

    Raises:
        KafkaTimeoutError: no broker answered within ``timeout_ms``.
    """
    metadata = client.metadata_retrying(None, timeout_ms=timeout_ms)
    return sorted(
        name for name, t in metadata.topics.items() if include_internal or not t.is_internal
    )


@dataclass(frozen=True)
class TopicDescription:
    """A topic as ``kafka-topics.sh --describe`` shows it.

    Attributes:
        name, topic_id: the topic's name and id (``None`` when the broker does not say).
        is_internal: a topic of Kafka itself.
        partitions: by partition number: leader, replicas, in-sync replicas.
        configs: the settings that are not Kafka's defaults (set on the topic or by the
            brokers' configuration), as ``kafka-topics.sh --describe`` shows them.
    """

    name: str
    topic_id: str | None
    is_internal: bool
    partitions: tuple[PartitionInfo, ...]
    configs: Mapping[str, str | None]


def describe_topics(
    client: KafkaClient, names: Sequence[str] | None = None, *, timeout_ms: int
) -> list[TopicDescription]:
    """Describe ``names`` (``None``: every topic but the internal ones): Metadata for the
    partitions, DescribeConfigs for each topic's settings that are not Kafka's defaults.

    Raises:
        KafkaApiError: UNKNOWN_TOPIC_OR_PARTITION (a topic the cluster does not have),
            TOPIC_AUTHORIZATION_FAILED, ... naming the topic.
        KafkaTimeoutError: no broker answered within ``timeout_ms``.
    """
    asked = None if names is None else list(dict.fromkeys(names))
    metadata = client.metadata_retrying(asked, timeout_ms=timeout_ms)
    if asked is None:
        asked = sorted(n for n, t in metadata.topics.items() if not t.is_internal)
    topics = []
    for name in asked:
        info = metadata.topics.get(name)
        if info is None:
            raise KafkaApiError(ec.UNKNOWN_TOPIC_OR_PARTITION, f"describing topic {name!r}")
        ec.raise_for_error(info.error_code, f"describing topic {name!r}")
        topics.append(info)
    configs = non_default_topic_configs(client, [t.name for t in topics], timeout_ms=timeout_ms)
    return [
        TopicDescription(
            name=t.name,
            topic_id=None if t.topic_id is None else _base64_id(t.topic_id.bytes),
            is_internal=t.is_internal,
            partitions=tuple(t.partitions[p] for p in sorted(t.partitions)),
            configs=configs.get(t.name, {}),
        )
        for t in topics
    ]


def _base64_id(raw: bytes) -> str:
    """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64 without padding)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
