"""Kafka delegation tokens (KIP-48): create one over a connection authenticated with Kerberos
(or SCRAM, or TLS), renew it before it expires, and use it: SCRAM with the token id as user
name, the token's HMAC (base64) as password and the ``tokenauth=true`` extension.

This is what Spark's Kafka connector does so that executors need no keytab: the driver logs
in with Kerberos and obtains a token; the executors authenticate with the token. A token
expires at ``expiry_timestamp_ms`` unless renewed (each renewal extends it by the broker's
``delegation.token.expiry.time.ms``, or the period asked), and cannot live past
``max_timestamp_ms`` (``delegation.token.max.lifetime.ms``): then a new one is needed.

Facts from Kafka's message specs (CreateDelegationToken, RenewDelegationToken), KIP-48 and
Kafka's documentation "Authentication using Delegation Tokens"; no code taken.
"""

from __future__ import annotations

import base64
import dataclasses
import time
from dataclasses import dataclass, field

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.security import SaslConfig, Secret
from spark_kafka_py.errors import KafkaApiError, KafkaConnectionError, KafkaError
from spark_kafka_py.protocol.error_codes import SASL_AUTHENTICATION_FAILED, error_for
from spark_kafka_py.protocol.messages.delegation_token import (
    CreateDelegationTokenRequest,
    RenewDelegationTokenRequest,
)

__all__ = [
    "DelegationToken",
    "create_delegation_token",
    "renew_delegation_token",
    "token_sasl_config",
    "wait_until_usable",
]


@dataclass(frozen=True)
class DelegationToken:
    """A delegation token as CreateDelegationToken returned it.

    Attributes:
        token_id: the token's id (the SCRAM user name of a client using it).
        hmac: the token's HMAC (its password; secret: shown as ``Secret(***)``).
        owner: ``<principal type>:<name>`` of the owner.
        issue_timestamp_ms, expiry_timestamp_ms, max_timestamp_ms: ms since the epoch.
    """

    token_id: str
    hmac: Secret = field(repr=False)
    owner: str
    issue_timestamp_ms: int
    expiry_timestamp_ms: int
    max_timestamp_ms: int

    @property
    def password(self) -> Secret:
        """The SCRAM password of a client authenticating with the token: the HMAC, base64."""
        return Secret(base64.b64encode(self.hmac_bytes()).decode("ascii"))

    def hmac_bytes(self) -> bytes:
        """The HMAC's bytes (secret)."""
        raw = self.hmac.reveal()
        return raw if isinstance(raw, bytes) else raw.encode("utf-8")


def create_delegation_token(
    client: KafkaClient, *, max_lifetime_ms: int = -1, timeout_ms: int | None = None
) -> DelegationToken:
    """CreateDelegationToken on any broker; the owner is the connection's principal.

    Args:
        client: a client authenticated by anything but a delegation token (Kerberos here).
        max_lifetime_ms: the token's longest life in ms; -1: the broker's
            ``delegation.token.max.lifetime.ms``.
        timeout_ms: the request's timeout (default: the client's).

    Raises:
        KafkaApiError: DELEGATION_TOKEN_AUTH_DISABLED (the brokers have no
            ``delegation.token.secret.key``), DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (the
            connection is authenticated by a token, or not authenticated),
            DELEGATION_TOKEN_OWNER_MISMATCH, ...; the message never holds the HMAC.
    """
    request = CreateDelegationTokenRequest(
        owner_principal_type=None,
        owner_principal_name=None,
        renewers=(),
        max_lifetime_ms=max_lifetime_ms,
    )
    response = client.send(client.least_loaded_node(), request, timeout_ms=timeout_ms)
    if response.error_code:
        raise KafkaApiError(error_for(response.error_code), "in CreateDelegationToken")
    return DelegationToken(
        token_id=response.token_id,
        hmac=Secret(bytes(response.hmac)),
        owner=f"{response.principal_type}:{response.principal_name}",
        issue_timestamp_ms=response.issue_timestamp_ms,
        expiry_timestamp_ms=response.expiry_timestamp_ms,
        max_timestamp_ms=response.max_timestamp_ms,
    )


def renew_delegation_token(
    client: KafkaClient,
    token: DelegationToken,
    *,
    renew_period_ms: int = -1,
    timeout_ms: int | None = None,
) -> int:
    """RenewDelegationToken: extend ``token``'s expiry.

    Args:
        client: a client authenticated as the token's owner or a renewer (not by a token).
        token: the token.
        renew_period_ms: how far from now, ms; -1: the broker's
            ``delegation.token.expiry.time.ms``. Never past the token's max lifetime.

    Returns:
        the new expiry time, ms since the epoch.

    Raises:
        KafkaApiError: DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_NOT_FOUND,
            DELEGATION_TOKEN_OWNER_MISMATCH, ...
    """
    request = RenewDelegationTokenRequest(hmac=token.hmac_bytes(), renew_period_ms=renew_period_ms)
    response = client.send(client.least_loaded_node(), request, timeout_ms=timeout_ms)
    if response.error_code:
        raise KafkaApiError(
            error_for(response.error_code), f"in RenewDelegationToken of token {token.token_id}"
        )
    return int(response.expiry_timestamp_ms)


def token_sasl_config(token: DelegationToken, mechanism: str = "SCRAM-SHA-512") -> SaslConfig:
    """The SASL settings of a client authenticating with ``token`` (SCRAM, ``tokenauth``)."""
    return SaslConfig(
        mechanism,
        username=token.token_id,
        password=token.password,
        extensions=(("tokenauth", "true"),),
    )


def wait_until_usable(
    config: ClientConfig, token: DelegationToken, *, timeout_ms: int = 30_000
) -> None:
    """Return once a broker accepts ``token`` (SCRAM with ``tokenauth``), retrying
    SASL_AUTHENTICATION_FAILED until ``timeout_ms``.

    Under KRaft the controller records a new token and each broker learns it (and its SCRAM
    credentials) when it applies that record: for a moment a client using the token is
    refused as if its password were wrong. The driver waits here before handing a new token
    to executors, so no task fails on it.

    Args:
        config: the cluster's client settings (its security is replaced by the token's).
        token: the token.
        timeout_ms: how long to keep trying, ms.

    Raises:
        KafkaApiError: SASL_AUTHENTICATION_FAILED still after ``timeout_ms`` (naming the
            token id, never its HMAC), or another error at once.
    """
    sasl = token_sasl_config(token)
    security = dataclasses.replace(config.security, sasl=sasl)
    probe = dataclasses.replace(config, security=security)
    deadline = time.monotonic() + timeout_ms / 1000
    pause = 0.05
    while True:
        try:
            with KafkaClient(probe) as client:
                client.metadata([])
            return
        except KafkaError as exc:
            refused = (
                isinstance(exc, KafkaApiError) and exc.code == SASL_AUTHENTICATION_FAILED.code
            ) or (
                isinstance(exc, KafkaConnectionError) and "SASL_AUTHENTICATION_FAILED" in str(exc)
            )
            if not refused or time.monotonic() + pause > deadline:
                if refused:
                    raise KafkaApiError(
                        SASL_AUTHENTICATION_FAILED,
                        f"with delegation token {token.token_id}",
                        f"brokers still refuse it {timeout_ms} ms after it was created",
                    ) from None
                raise
        time.sleep(pause)
        pause = min(pause * 2, 1.0)
