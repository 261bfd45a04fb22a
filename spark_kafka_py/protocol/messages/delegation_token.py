"""CreateDelegationToken (API key 38) and RenewDelegationToken (API key 39): Kafka's delegation
tokens (KIP-48), what Spark's connector has the driver obtain with its Kerberos login so that
executors authenticate with SCRAM and the token instead of a keytab.

Source: Kafka message specs ``CreateDelegationTokenRequest.json`` /
``CreateDelegationTokenResponse.json`` (valid versions 1-3 since Kafka 4.0, which
removed version 0; flexible 2+; version 3 adds the owner and the requester, KIP-373) and
``RenewDelegationTokenRequest.json`` / ``RenewDelegationTokenResponse.json`` (valid 1-2,
flexible 2+); we support all of them. A token is created and renewed over a connection
authenticated by anything but a delegation token (Kafka refuses tokens requested with a token).
Times are ms since the epoch; ``hmac`` is the token's password (secret).
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BYTES,
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
    "CREATE_DELEGATION_TOKEN_KEY",
    "RENEW_DELEGATION_TOKEN_KEY",
    "CreatableRenewer",
    "CreateDelegationTokenRequest",
    "CreateDelegationTokenResponse",
    "RenewDelegationTokenRequest",
    "RenewDelegationTokenResponse",
]

CREATE_DELEGATION_TOKEN_KEY = 38
RENEW_DELEGATION_TOKEN_KEY = 39


@kafka_struct
class CreatableRenewer:
    """A principal allowed to renew the token (``User``, ``alice``)."""

    principal_type: str = kfield(STRING, "0+")
    principal_name: str = kfield(STRING, "0+")


@kafka_message(api_key=CREATE_DELEGATION_TOKEN_KEY, valid="1-3", flexible="2+", supported=(1, 3))
class CreateDelegationTokenRequest(Request["CreateDelegationTokenResponse"]):
    """CreateDelegationToken request: the owner (v3+, None: the requester), the renewers
    (none: only the owner), the maximum lifetime in ms (-1: the broker's
    ``delegation.token.max.lifetime.ms``)."""

    owner_principal_type: str | None = kfield(STRING, "3+", nullable_versions="3+", default="")
    owner_principal_name: str | None = kfield(STRING, "3+", nullable_versions="3+", default="")
    renewers: tuple[CreatableRenewer, ...] = kfield(Array(CreatableRenewer), "0+", default=())
    max_lifetime_ms: int = kfield(INT64, "0+", default=0)


@kafka_message(api_key=CREATE_DELEGATION_TOKEN_KEY, valid="1-3", flexible="2+", supported=(1, 3))
class CreateDelegationTokenResponse(Response):
    """CreateDelegationToken response: the owner, the times (ms since the epoch), the token id
    and its HMAC (the SCRAM password, base64-encoded, of a client authenticating with it)."""

    error_code: int = kfield(INT16, "0+")
    principal_type: str = kfield(STRING, "0+")
    principal_name: str = kfield(STRING, "0+")
    token_requester_principal_type: str = kfield(STRING, "3+", default="")
    token_requester_principal_name: str = kfield(STRING, "3+", default="")
    issue_timestamp_ms: int = kfield(INT64, "0+")
    expiry_timestamp_ms: int = kfield(INT64, "0+")
    max_timestamp_ms: int = kfield(INT64, "0+")
    token_id: str = kfield(STRING, "0+")
    hmac: bytes = kfield(BYTES, "0+")
    throttle_time_ms: int = kfield(INT32, "0+")

    def __repr__(self) -> str:  # the HMAC is the token's password
        return (
            f"CreateDelegationTokenResponse(error_code={self.error_code}, "
            f"token_id={self.token_id!r}, owner={self.principal_type}:{self.principal_name}, "
            f"expiry_timestamp_ms={self.expiry_timestamp_ms}, "
            f"max_timestamp_ms={self.max_timestamp_ms}, hmac=***)"
        )


@kafka_message(api_key=RENEW_DELEGATION_TOKEN_KEY, valid="1-2", flexible="2+", supported=(1, 2))
class RenewDelegationTokenRequest(Request["RenewDelegationTokenResponse"]):
    """RenewDelegationToken request: the token's HMAC and the renewal period in ms (-1: the
    broker's ``delegation.token.expiry.time.ms``)."""

    hmac: bytes = kfield(BYTES, "0+")
    renew_period_ms: int = kfield(INT64, "0+", default=0)

    def __repr__(self) -> str:
        return f"RenewDelegationTokenRequest(renew_period_ms={self.renew_period_ms}, hmac=***)"


@kafka_message(api_key=RENEW_DELEGATION_TOKEN_KEY, valid="1-2", flexible="2+", supported=(1, 2))
class RenewDelegationTokenResponse(Response):
    """RenewDelegationToken response: the token's new expiry time (ms since the epoch)."""

    error_code: int = kfield(INT16, "0+")
    expiry_timestamp_ms: int = kfield(INT64, "0+")
    throttle_time_ms: int = kfield(INT32, "0+")


CreateDelegationTokenRequest.response_type = CreateDelegationTokenResponse
RenewDelegationTokenRequest.response_type = RenewDelegationTokenResponse
