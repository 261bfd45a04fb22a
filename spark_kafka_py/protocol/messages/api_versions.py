"""ApiVersions (API key 18): which API versions a broker supports.

Source: Kafka message specs ``ApiVersionsRequest.json`` / ``ApiVersionsResponse.json``
(valid versions 0-4, flexible 3+); KIP-511 adds ``ClientSoftwareName``/``ClientSoftwareVersion``
(v3+); KIP-584 adds the feature tagged fields. The response *header* is always v0, even in
flexible versions, so that a client can read it whatever version it sent (KIP-511).

When a broker does not support the request version it answers with a v0 body carrying error
``UNSUPPORTED_VERSION`` (35) and its own ApiVersions range.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = [
    "API_VERSIONS_KEY",
    "ApiVersion",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "FinalizedFeatureKey",
    "SupportedFeatureKey",
]

API_VERSIONS_KEY = 18


@kafka_struct
class ApiVersion:
    """One API the broker supports: ``api_key`` and its inclusive version range."""

    api_key: int = kfield(INT16, "0+")
    min_version: int = kfield(INT16, "0+")
    max_version: int = kfield(INT16, "0+")


@kafka_struct
class SupportedFeatureKey:
    """A feature the broker supports (KIP-584), v3+ tagged field."""

    name: str = kfield(STRING, "3+")
    min_version: int = kfield(INT16, "3+")
    max_version: int = kfield(INT16, "3+")


@kafka_struct
class FinalizedFeatureKey:
    """A cluster-wide finalized feature level (KIP-584), v3+ tagged field."""

    name: str = kfield(STRING, "3+")
    max_version_level: int = kfield(INT16, "3+")
    min_version_level: int = kfield(INT16, "3+")


@kafka_message(api_key=API_VERSIONS_KEY, valid="0-4", flexible="3+", supported=(0, 4))
class ApiVersionsResponse(Response):
    """ApiVersions response, versions 0-4.

    ``api_keys`` lists every API the broker serves; ``error_code`` 35 (UNSUPPORTED_VERSION)
    means the request version was too new and the body is v0.
    """

    error_code: int = kfield(INT16, "0+")
    api_keys: tuple[ApiVersion, ...] = kfield(Array(ApiVersion), "0+")
    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    supported_features: tuple[SupportedFeatureKey, ...] = kfield(
        Array(SupportedFeatureKey), "3+", tag=0, ignorable=True
    )
    finalized_features_epoch: int = kfield(INT64, "3+", tag=1, default=-1, ignorable=True)
    finalized_features: tuple[FinalizedFeatureKey, ...] = kfield(
        Array(FinalizedFeatureKey), "3+", tag=2, ignorable=True
    )
    zk_migration_ready: bool = kfield(BOOL, "3+", tag=3, ignorable=True)


@kafka_message(api_key=API_VERSIONS_KEY, valid="0-4", flexible="3+", supported=(0, 4))
class ApiVersionsRequest(Request["ApiVersionsResponse"]):
    """ApiVersions request, versions 0-4.

    Fields (v3+, KIP-511): ``client_software_name`` and ``client_software_version`` must
    match ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?`` or the broker answers
    INVALID_REQUEST.
    """

    client_software_name: str = kfield(STRING, "3+", ignorable=True)
    client_software_version: str = kfield(STRING, "3+", ignorable=True)


ApiVersionsRequest.response_type = ApiVersionsResponse
