"""DeleteTopics (API key 20): delete topics by name (or, v6+, by topic id).

Source: Kafka message specs ``DeleteTopicsRequest.json`` / ``DeleteTopicsResponse.json``
(valid versions 1-6, flexible 4+; v0 was removed by KIP-896). Version notes from the spec:
up to v5 the request names topics in ``topic_names``; v6 replaces it with ``topics``, each a
name or a topic id (KIP-516); v5 adds each result's ``error_message``; v6 each result's
``topic_id`` and a nullable name. Any broker takes the request (KRaft forwards it to the
controller). As the spec's ignorable ``topic_names`` allows, a caller fills both forms and the
version negotiated picks one (the same choice as in
:mod:`~spark_kafka_py.protocol.messages.offset_fetch`). We support versions 1-6.
"""

from __future__ import annotations

import uuid

from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "DELETE_TOPICS_KEY",
    "DeletableTopicResult",
    "DeleteTopicState",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
]

DELETE_TOPICS_KEY = 20


@kafka_struct
class DeleteTopicState:
    """One topic to delete (v6+): its name, or null and its topic id."""

    name: str | None = kfield(STRING, "6+", nullable_versions="6+", default=None)
    topic_id: uuid.UUID = kfield(UUID, "6+", default=ZERO_UUID)


@kafka_message(api_key=DELETE_TOPICS_KEY, valid="1-6", flexible="4+", supported=(1, 6))
class DeleteTopicsRequest(Request["DeleteTopicsResponse"]):
    """DeleteTopics request, versions 1-6: fill ``topics`` (v6+) and ``topic_names`` (v1-5)
    alike; ``timeout_ms`` is how long the broker waits for the deletions (ms)."""

    topics: tuple[DeleteTopicState, ...] = kfield(Array(DeleteTopicState), "6+")
    topic_names: tuple[str, ...] = kfield(Array(STRING), "0-5", ignorable=True)
    timeout_ms: int = kfield(INT32, "0+")


@kafka_struct
class DeletableTopicResult:
    """One topic's result: name (null for a v6 request by id), id (v6+), error and message."""

    name: str | None = kfield(STRING, "0+", nullable_versions="6+")
    topic_id: uuid.UUID = kfield(UUID, "6+", default=ZERO_UUID, ignorable=True)
    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(
        STRING, "5+", nullable_versions="5+", default=None, ignorable=True
    )


@kafka_message(api_key=DELETE_TOPICS_KEY, valid="1-6", flexible="4+", supported=(1, 6))
class DeleteTopicsResponse(Response):
    """DeleteTopics response, versions 1-6."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    responses: tuple[DeletableTopicResult, ...] = kfield(Array(DeletableTopicResult), "0+")


DeleteTopicsRequest.response_type = DeleteTopicsResponse
