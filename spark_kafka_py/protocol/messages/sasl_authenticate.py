"""SaslAuthenticate (API key 36): one SASL token exchange, after SaslHandshake v1.

Source: Kafka message specs ``SaslAuthenticateRequest.json`` / ``SaslAuthenticateResponse.json``
(valid versions 0-2, flexible 2+); KIP-152 introduced the message (so that an authentication
failure comes back as an error code, SASL_AUTHENTICATION_FAILED (58), with a message, instead of
a closed connection); KIP-368 added ``session_lifetime_ms`` (v1+): the broker closes the
connection after that many milliseconds unless the client re-authenticates (0: no limit).
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    BYTES,
    INT16,
    INT64,
    STRING,
    Request,
    Response,
    kafka_message,
    kfield,
)

__all__ = ["SASL_AUTHENTICATE_KEY", "SaslAuthenticateRequest", "SaslAuthenticateResponse"]

SASL_AUTHENTICATE_KEY = 36


@kafka_message(api_key=SASL_AUTHENTICATE_KEY, valid="0-2", flexible="2+", supported=(0, 2))
class SaslAuthenticateResponse(Response):
    """SaslAuthenticate response, versions 0-2.

    ``session_lifetime_ms``: ms until the broker expires the session (v1+, 0 = none).
    """

    error_code: int = kfield(INT16, "0+")
    error_message: str | None = kfield(STRING, "0+", nullable_versions="0+")
    auth_bytes: bytes = kfield(BYTES, "0+")
    session_lifetime_ms: int = kfield(INT64, "1+", ignorable=True)


@kafka_message(api_key=SASL_AUTHENTICATE_KEY, valid="0-2", flexible="2+", supported=(0, 2))
class SaslAuthenticateRequest(Request["SaslAuthenticateResponse"]):
    """SaslAuthenticate request, versions 0-2: one client SASL token (``auth_bytes``)."""

    auth_bytes: bytes = kfield(BYTES, "0+")


SaslAuthenticateRequest.response_type = SaslAuthenticateResponse
