"""Configurations with DescribeConfigs: the configuration of topics and of brokers.

Source: Kafka's ``DescribeConfigsRequest``/``DescribeConfigsResponse`` specs, versions 1-4
(KIP-133; resource type 2 is a topic, ``ConfigResource.Type.TOPIC``, 4 a broker). Topic
resources may be described by any broker: as Kafka's admin client, one request goes to the least
loaded node. A broker resource goes to that broker itself, as Kafka's admin client sends it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.retry import Backoff, Retries
from spark_kafka_py.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError
from spark_kafka_py.protocol.error_codes import raise_for_error
from spark_kafka_py.protocol.messages.describe_configs import (
    CONFIG_SOURCE_DEFAULT_CONFIG,
    RESOURCE_TYPE_BROKER,
    RESOURCE_TYPE_TOPIC,
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResponse,
)

__all__ = [
    "broker_creates_topics",
    "describe_broker_configs",
    "describe_topic_configs",
    "non_default_topic_configs",
]

log = logging.getLogger(__name__)


def describe_topic_configs(
    client: KafkaClient,
    topics: Sequence[str],
    names: Sequence[str] | None = None,
    *,
    timeout_ms: int,
) -> dict[str, dict[str, str | None]]:
    """The configuration of ``topics``: one DescribeConfigs request (v1-v4, resource type 2,
    without synonyms or documentation) to the least loaded broker.

    Args:
        client: a connected (or connectable) client.
        topics: topic names (duplicates are asked once); empty: no request, ``{}``.
        names: the configuration names wanted; ``None`` for all of them. A name the broker does
            not know is left out of the answer (the broker's rule), not an error.
        timeout_ms: bound on the whole call, retries included (ms). Unreachable brokers and
            request timeouts are retried until then, after a backoff from ``retry.backoff.ms``
            growing to ``retry.backoff.max.ms`` (KIP-580).

    Returns:
        ``{topic: {config name: value}}`` for every topic asked; a value is ``None`` when the
        broker hides it (sensitive) or it is unset.

    Raises:
        KafkaApiError: a topic's error in the response (UNKNOWN_TOPIC_OR_PARTITION,
            TOPIC_AUTHORIZATION_FAILED, INVALID_TOPIC_EXCEPTION, ...), raised at once as Kafka's
            admin client does, its message ``... for topic 'x' (DescribeConfigs)`` with the
            broker's message when it sent one.
        KafkaTimeoutError: no broker answered within ``timeout_ms``; names the topics and the
            last error.
        KafkaConnectionError: a failure waiting cannot mend (TLS handshake, a non-Kafka peer).
        KafkaError: the broker answered no result for a topic asked.
        LocalProtocolError: the broker does not speak DescribeConfigs v1+ (Kafka before 1.1).
    """
    asked = tuple(dict.fromkeys(topics))
    if not asked:
        return {}
    keys = None if names is None else tuple(names)
    request = DescribeConfigsRequest(
        resources=tuple(
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPE_TOPIC, resource_name=topic, configuration_keys=keys
            )
            for topic in asked
        ),
    )
    response = _send(client, request, asked, timeout_ms)
    results = {r.resource_name: r for r in response.results}
    out: dict[str, dict[str, str | None]] = {}
    for topic in asked:
        result = results.get(topic)
        if result is None:
            raise KafkaError(
                f"DescribeConfigs: the broker answered no result for topic '{topic}' "
                f"(answered: {sorted(results)})"
            )
        context = f"for topic '{topic}' (DescribeConfigs)"
        if result.error_message:
            context += f" (broker: {result.error_message})"
        raise_for_error(result.error_code, context)
        out[topic] = {c.name: c.value for c in result.configs}
    return out


def non_default_topic_configs(
    client: KafkaClient, topics: Sequence[str], *, timeout_ms: int
) -> dict[str, dict[str, str | None]]:
    """The settings of each of ``topics`` that are not Kafka's defaults: set on the topic,
    or by the brokers' configuration (every config source but ``DEFAULT_CONFIG``, as
    ``kafka-topics.sh --describe`` prints them in ``Configs:``), by name.

    One DescribeConfigs request as :func:`describe_topic_configs`, which see for the errors.
    """
    asked = tuple(dict.fromkeys(topics))
    if not asked:
        return {}
    request = DescribeConfigsRequest(
        resources=tuple(
            DescribeConfigsResource(resource_type=RESOURCE_TYPE_TOPIC, resource_name=topic)
            for topic in asked
        ),
    )
    response = _send(client, request, asked, timeout_ms)
    results = {r.resource_name: r for r in response.results}
    out: dict[str, dict[str, str | None]] = {}
    for topic in asked:
        result = results.get(topic)
        if result is None:
            raise KafkaError(f"DescribeConfigs: the broker answered no result for topic '{topic}'")
        context = f"for topic '{topic}' (DescribeConfigs)"
        if result.error_message:
            context += f" (broker: {result.error_message})"
        raise_for_error(result.error_code, context)
        out[topic] = {
            c.name: c.value
            for c in sorted(result.configs, key=lambda c: c.name)
            if c.config_source != CONFIG_SOURCE_DEFAULT_CONFIG
        }
    return out


def describe_broker_configs(
    client: KafkaClient, node_id: int, names: Sequence[str] | None = None, *, timeout_ms: int
) -> dict[str, str | None]:
    """The configuration of broker ``node_id`` (DescribeConfigs v1-v4, resource type 4, named by
    the node id, sent to that broker), e.g. ``transaction.max.timeout.ms``.

    Args:
        names: the configuration names wanted; ``None`` for all.
        timeout_ms: bound on one round trip (ms).

    Returns:
        ``{config name: value}``; a value is ``None`` when the broker hides it (sensitive).

    Raises:
        KafkaApiError: the broker's error (CLUSTER_AUTHORIZATION_FAILED, ...).
        KafkaConnectionError / KafkaTimeoutError: the broker did not answer.
        KafkaError: the broker answered no result for itself.
    """
    keys = None if names is None else tuple(names)
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPE_BROKER,
                resource_name=str(node_id),
                configuration_keys=keys,
            ),
        ),
    )
    response: DescribeConfigsResponse = client.send(node_id, request, timeout_ms=timeout_ms)
    result = next((r for r in response.results if r.resource_name == str(node_id)), None)
    if result is None:
        raise KafkaError(f"DescribeConfigs: broker {node_id} answered no result for itself")
    context = f"for broker {node_id} (DescribeConfigs)"
    if result.error_message:
        context += f" (broker: {result.error_message})"
    raise_for_error(result.error_code, context)
    return {c.name: c.value for c in result.configs}


#: The broker setting that makes a Metadata request (``allow_auto_topic_creation``) or a
#: produce to a missing topic create it (Kafka's ``auto.create.topics.enable``).
AUTO_CREATE_TOPICS = "auto.create.topics.enable"


def broker_creates_topics(client: KafkaClient, *, timeout_ms: int) -> tuple[bool, int] | None:
    """Whether the cluster creates a topic a producer asks Metadata for: a broker's
    ``auto.create.topics.enable`` (DescribeConfigs v1-v4 of a broker resource, sent to a broker
    from the client's cached metadata, or the least loaded one).

    Args:
        client: a client that has asked Metadata at least once (its brokers are known).
        timeout_ms: bound on the round trip (ms).

    Returns:
        ``(creates, node_id)``: the setting and the broker that answered; ``None`` when no
        broker told (no DESCRIBE_CONFIGS permission on the cluster, no answer, no value), which
        callers treat as "may create", Kafka's default.
    """
    try:
        node = client.least_loaded_node()
        configs = describe_broker_configs(client, node, [AUTO_CREATE_TOPICS], timeout_ms=timeout_ms)
    except KafkaError as exc:
        log.info("DescribeConfigs: cannot read %s: %s", AUTO_CREATE_TOPICS, exc)
        return None
    value = configs.get(AUTO_CREATE_TOPICS)
    if value is None:
        return None
    return value.strip().lower() == "true", node


def _send(
    client: KafkaClient, request: DescribeConfigsRequest, topics: tuple[str, ...], timeout_ms: int
) -> DescribeConfigsResponse:
    """``request`` to the least loaded broker, retried on unreachable brokers and timeouts
    until ``timeout_ms`` (ms) has passed, with the one retry policy's backoff
    (:mod:`spark_kafka_py.client.retry`: ``retry.backoff.ms`` doubling up to
    ``retry.backoff.max.ms`` with jitter, KIP-580).

    Raises:
        KafkaConnectionError: a broker that waiting cannot mend (not ``retriable``), at once.
        KafkaTimeoutError: no broker answered within ``timeout_ms``; the message names the
            topics and the last error.
    """

    def unanswered(last: BaseException) -> KafkaTimeoutError:
        return KafkaTimeoutError(
            f"DescribeConfigs for topic(s) {', '.join(repr(t) for t in topics)}: no "
            f"broker answered within {timeout_ms} ms; last error: {last}"
        )

    retries = Retries(
        "DescribeConfigs",
        timeout_ms,
        backoff=Backoff(client.config.retry_backoff_ms),
        timeout_error=unanswered,
    )
    while True:
        left_ms = int(retries.remaining_ms())
        try:
            response: DescribeConfigsResponse = client.send(
                client.least_loaded_node(),
                request,
                timeout_ms=max(1, min(client.config.request_timeout_ms, left_ms)),
            )
            return response
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            log.info("DescribeConfigs: %s; retrying", exc)
            retries.after(exc)
