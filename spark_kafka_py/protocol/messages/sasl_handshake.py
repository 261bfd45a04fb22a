"""SaslHandshake (API key 17): choose the SASL mechanism of a connection.

Source: Kafka message specs ``SaslHandshakeRequest.json`` / ``SaslHandshakeResponse.json``
(valid versions 0-1, never flexible). v1 (KIP-152) means the SASL tokens that follow are
wrapped in SaslAuthenticate requests instead of being sent as raw length-prefixed frames;
v0's raw framing is not supported here. On UNSUPPORTED_SASL_MECHANISM (33) ``mechanisms``
lists the mechanisms the broker enabled on this listener.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    INT16,
    STRING,
    Array,
    Request,
    Response,
    kafka_message,
    kfield,
)

__all__ = ["SASL_HANDSHAKE_KEY", "SaslHandshakeRequest", "SaslHandshakeResponse"]

SASL_HANDSHAKE_KEY = 17


@kafka_message(api_key=SASL_HANDSHAKE_KEY, valid="0-1", flexible="none", supported=(1, 1))
class SaslHandshakeResponse(Response):
    """SaslHandshake response, version 1: error code and the broker's enabled mechanisms."""

    error_code: int = kfield(INT16, "0+")
    mechanisms: tuple[str, ...] = kfield(Array(STRING), "0+")


@kafka_message(api_key=SASL_HANDSHAKE_KEY, valid="0-1", flexible="none", supported=(1, 1))
class SaslHandshakeRequest(Request["SaslHandshakeResponse"]):
    """SaslHandshake request, version 1: the mechanism name, e.g. ``SCRAM-SHA-512``."""

    mechanism: str = kfield(STRING, "0+")


SaslHandshakeRequest.response_type = SaslHandshakeResponse
