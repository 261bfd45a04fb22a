"""DescribeConfigs (API key 32, KIP-133): the configuration of topics, brokers and other
resources.

Source: Kafka message specs ``DescribeConfigsRequest.json`` / ``DescribeConfigsResponse.json``
(valid versions 1-4, flexible 4+; Kafka 4 removed v0, KIP-896). Version notes from the spec:
v1 adds ``include_synonyms`` and, in the response, ``config_source`` and ``synonyms`` (KIP-226,
the synonyms of KIP-133's config sources); v2 is v1 (the broker answers before throttling on a
quota violation); v3 adds ``include_documentation`` and the response's ``config_type`` and
``documentation`` (KIP-569); v4 is flexible. Each resource is a type (:data:`RESOURCE_TYPE_TOPIC`,
...; Kafka's ``ConfigResource.Type``) and a name; ``configuration_keys`` ``None`` asks for every
configuration. Topic resources may go to any broker (Kafka's admin client sends them to the
least loaded node); broker resources to that broker. We support versions 1-4.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "CONFIG_SOURCE_DEFAULT_CONFIG",
    "CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG",
    "CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG",
    "CONFIG_SOURCE_STATIC_BROKER_CONFIG",
    "CONFIG_SOURCE_TOPIC_CONFIG",
    "CONFIG_SOURCE_UNKNOWN",
    "DESCRIBE_CONFIGS_KEY",
    "RESOURCE_TYPE_BROKER",
    "RESOURCE_TYPE_TOPIC",
    "DescribeConfigsRequest",
    "DescribeConfigsResource",
    "DescribeConfigsResourceResult",
    "DescribeConfigsResponse",
    "DescribeConfigsResult",
    "DescribeConfigsSynonym",
]

DESCRIBE_CONFIGS_KEY = 32

#: ``ResourceType`` of a topic (Kafka's ``ConfigResource.Type.TOPIC``); the name is the topic.
RESOURCE_TYPE_TOPIC = 2
#: ``ResourceType`` of a broker (``ConfigResource.Type.BROKER``); the name is its node id, or
#: ``""`` for the cluster-wide dynamic defaults.
RESOURCE_TYPE_BROKER = 4

# ``ConfigSource`` of a configuration or synonym (Kafka's ``DescribeConfigsResponse.ConfigSource``,
# KIP-226): where the value in force comes from.
#: Not known (what the field decodes to in a version that lacks it is -1, not this).
CONFIG_SOURCE_UNKNOWN = 0
#: Set on the topic (``kafka-configs --entity-type topics``, CreateTopics' configs).
CONFIG_SOURCE_TOPIC_CONFIG = 1
#: Set dynamically on this broker.
CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG = 2
#: Set dynamically as the cluster-wide default for brokers.
CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = 3
#: The broker's ``server.properties``.
CONFIG_SOURCE_STATIC_BROKER_CONFIG = 4
#: Kafka's built-in default.
CONFIG_SOURCE_DEFAULT_CONFIG = 5


@kafka_struct
class DescribeConfigsResource:
    """One resource to describe: its type (:data:`RESOURCE_TYPE_TOPIC`, ...), its name, and
    the configuration names wanted (``None``: all of them)."""

    resource_type: int = kfield(INT8, "0+")
    resource_name: str = kfield(STRING, "0+")
    configuration_keys: tuple[str, ...] | None = kfield(Array(STRING), "0+", nullable_versions="0+")


@kafka_message(api_key=DESCRIBE_CONFIGS_KEY, valid="1-4", flexible="4+", supported=(1, 4))
class DescribeConfigsRequest(Request["DescribeConfigsResponse"]):
    """DescribeConfigs request, versions 1-4: the resources to describe; whether to list each
    configuration's synonyms (v1+, KIP-226) and its documentation (v3+, KIP-569)."""

    resources: tuple[DescribeConfigsResource, ...] = kfield(Array(DescribeConfigsResource), "0+")
    include_synonyms: bool = kfield(BOOL, "1+", default=False)
    include_documentation: bool = kfield(BOOL, "3+", default=False)


@kafka_struct
class DescribeConfigsSynonym:
    """A synonym of a configuration (v1+): a name and value that would apply, from the given
    source (``CONFIG_SOURCE_*``), most specific first."""

    name: str = kfield(STRING, "1+")
    value: str | None = kfield(STRING, "1+", nullable_versions="0+")
    source: int = kfield(INT8, "1+")


@kafka_struct
class DescribeConfigsResourceResult:
    """One configuration of a resource: name, value (``None`` when unset or sensitive),
    read-only flag, source (``CONFIG_SOURCE_*``; -1 when not sent), sensitivity, synonyms
    (v1+, when asked), type (v3+, Kafka's ``ConfigType``: 1 BOOLEAN .. 9 PASSWORD, 0 unknown)
    and documentation (v3+, when asked)."""

    name: str = kfield(STRING, "0+")
    value: str | None = kfield(STRING, "0+", nullable_versions="0+")
    read_only: bool = kfield(BOOL, "0+")
    config_source: int = kfield(INT8, "1+", default=-1, ignorable=True)
    is_sensitive: bool = kfield(BOOL, "0+")
    synonyms: tuple[DescribeConfigsSynonym, ...] = kfield(
        Array(DescribeConfigsSynonym), "1+", ignorable=True
    )
    config_type: int = kfield(INT8, "3+", default=0, ignorable=True)
    documentation: str | None = kfield(STRING, "3+", nullable_versions="0+", ignorable=True)


@kafka_struct
class DescribeConfigsResult:
    """The answer for one resource: error (e.g. UNKNOWN_TOPIC_OR_PARTITION,
    TOPIC_AUTHORIZATION_FAILED) and the broker's message, the resource, its configurations."""

    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(STRING, "0+", nullable_versions="0+")
    resource_type: int = kfield(INT8, "0+")
    resource_name: str = kfield(STRING, "0+")
    configs: tuple[DescribeConfigsResourceResult, ...] = kfield(
        Array(DescribeConfigsResourceResult), "0+"
    )


@kafka_message(api_key=DESCRIBE_CONFIGS_KEY, valid="1-4", flexible="4+", supported=(1, 4))
class DescribeConfigsResponse(Response):
    """DescribeConfigs response, versions 1-4: throttle time (ms) and one result per resource
    asked."""

    throttle_time_ms: int = kfield(INT32, "0+")
    results: tuple[DescribeConfigsResult, ...] = kfield(Array(DescribeConfigsResult), "0+")


DescribeConfigsRequest.response_type = DescribeConfigsResponse
