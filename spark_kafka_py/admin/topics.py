"""Topics: creating one with CreateTopics (issue 13).

Facts from Kafka's ``CreateTopicsRequest``/``CreateTopicsResponse`` specs; no code taken. Any
broker takes the request (KRaft forwards it to the controller); lost connections and retriable
errors are asked again after ``retry.backoff.ms`` within the caller's timeout
(:func:`spark_kafka_py.client.coordinator.backoff`).
"""

from __future__ import annotations

from collections.abc import Mapping

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.coordinator import NETWORK_ERRORS, backoff, deadline_after
from spark_kafka_py.errors import KafkaApiError, KafkaConnectionError, KafkaError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)

__all__ = ["create_topic"]


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
    deadline = deadline_after(timeout_ms)
    what = f"CreateTopics for topic {name!r}"
    while True:
        try:
            response: CreateTopicsResponse = client.send(client.least_loaded_node(), request)
        except NETWORK_ERRORS as exc:
            if isinstance(exc, KafkaConnectionError) and not exc.retriable:
                raise
            last: object = exc
        else:
            result = next((t for t in response.topics if t.name == name), None)
            if result is None:
                raise KafkaError(f"{what}: the broker answered no result for the topic")
            code = ec.error_for(result.error_code)
            if code == ec.NONE:
                return True
            if code == ec.TOPIC_ALREADY_EXISTS:
                return False
            if not code.retriable:
                detail = code.description
                if result.error_message:
                    detail += f" Broker: {result.error_message}"
                raise KafkaApiError(code, f"creating topic {name!r}", detail)
            last = code.name
        backoff(client, deadline, what, last, timeout_ms)
