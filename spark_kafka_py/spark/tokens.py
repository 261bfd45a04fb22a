"""Delegation tokens for the executors (``delegationToken=true``): only the driver logs in.

Spark's Kafka connector keeps keytabs off the executors this way: the driver, logged in with
Kerberos, obtains a Kafka delegation token (KIP-48) and the executors authenticate with SCRAM,
the token id as user name, its HMAC as password and the ``tokenauth=true`` extension. Spark
obtains the token when the application starts (``spark.kafka.clusters.<id>.*``,
``spark.security.credentials.kafka.enabled``) and sends it to the executors through its
credential updates. A Python data source has no such channel, so here the token travels with
the work: the driver's planning (``partitions()``, run once per batch read and once per
micro-batch of a streaming read) attaches the current token's SCRAM settings to every input
partition (:class:`Authenticated`); a write's executors get them in the writer.

On the driver, one token per cluster and login is held per process (:func:`executor_credentials`):

- it is created on first use (CreateDelegationToken over the query's own authenticated
  connection, then :func:`~spark_kafka_py.admin.delegation_tokens.wait_until_usable`: under
  KRaft a broker refuses a new token until it has applied the controller's record);
- it is renewed (RenewDelegationToken) once :data:`RENEWAL_RATIO` of the time from its last
  renewal (or creation) to its expiry has passed, as Spark schedules its own token renewals
  (``spark.security.credentials.renewalRatio``, default 0.75), or when less than
  :data:`MIN_REMAINING_MS` of it remains;
- it is replaced by a new token once :data:`RENEWAL_RATIO` of its whole life (issue to
  ``max_timestamp_ms``, the broker's ``delegation.token.max.lifetime.ms``) has passed, when
  less than :data:`MIN_REMAINING_MS` of that remains, or when it expired or renewing finds it
  gone.

Renewals and replacements happen when the driver plans (there is no timer): a streaming read
idle for longer than the token's expiry gets a new token at its next micro-batch.

So a streaming read outlives any token: each micro-batch's tasks carry the token current when
it was planned. A streaming write cannot: PySpark pickles its writer once, at the query's
start, so its tasks get a token of their own renewed at once to its max lifetime
(:func:`lasting_credentials`), which bounds the query.

The HMAC is a secret: it is held in a :class:`~spark_kafka_py.client.security.Secret`
(``***`` in every ``repr``), never logged, never in an error; input partitions and writers
are pickled to the executors as bytes that Spark does not display.

Sources: KIP-48; Kafka's documentation "Authentication using Delegation Tokens"; Spark's
``KafkaDelegationTokenProvider``, ``KafkaTokenUtil`` and "Security" section of the Structured
Streaming + Kafka Integration Guide.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import InputPartition

from spark_kafka_py.admin.delegation_tokens import (
    DelegationToken,
    create_delegation_token,
    renew_delegation_token,
    token_sasl_config,
    wait_until_usable,
)
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.client.security import SaslConfig
from spark_kafka_py.errors import ConfigError, KafkaApiError
from spark_kafka_py.protocol.error_codes import (
    DELEGATION_TOKEN_EXPIRED,
    DELEGATION_TOKEN_NOT_FOUND,
)
from spark_kafka_py.registry import option

__all__ = [
    "MIN_REMAINING_MS",
    "RENEWAL_RATIO",
    "Authenticated",
    "Credentials",
    "TokenOptions",
    "authenticate_plan",
    "executor_credentials",
    "lasting_credentials",
    "parse_token_options",
]

_log = logging.getLogger(__name__)

#: Fraction of a period after which the token is renewed or replaced (Spark's
#: ``spark.security.credentials.renewalRatio`` default).
RENEWAL_RATIO = 0.75

#: The least lifetime a token handed to tasks keeps, ms: tasks start some time after the
#: planning that gave them the token (seconds on a loaded cluster), and every connection they
#: open authenticates with it. A broker whose ``delegation.token.expiry.time.ms`` is shorter
#: gets a renewal at every planning.
MIN_REMAINING_MS = 60_000


@dataclass(frozen=True)
class TokenOptions:
    """``delegationToken`` and ``delegationToken.mechanism`` of a query.

    Attributes:
        mechanism: the executors' SCRAM mechanism, ``SCRAM-SHA-512`` or ``SCRAM-SHA-256``
            (Spark's ``spark.kafka.clusters.<id>.sasl.token.mechanism``).
    """

    mechanism: str = "SCRAM-SHA-512"


def parse_token_options(opts: Mapping[str, str], client: ClientConfig) -> TokenOptions | None:
    """The query's delegation-token settings, or ``None`` when ``delegationToken`` is off.

    Args:
        opts: the options, keys lower-cased.
        client: the query's connection settings (the driver's login).

    Raises:
        ConfigError: naming the option: ``delegationToken`` without a login a broker accepts
            for CreateDelegationToken (SASL with GSSAPI, SCRAM, PLAIN or OAUTHBEARER, or
            mutual TLS; never a token itself), or ``delegationToken.mechanism`` without it.
    """
    enabled = option("delegationToken").read(opts)
    mechanism = str(option("delegationToken.mechanism").read(opts)).upper()
    if not enabled:
        if "delegationtoken.mechanism" in opts:
            raise ConfigError("Option 'delegationToken.mechanism' needs 'delegationToken'='true'")
        return None
    security = client.security
    sasl = security.sasl
    if sasl is not None and ("tokenauth", "true") in tuple(sasl.extensions or ()):
        raise ConfigError(
            "Option 'delegationToken'='true': 'kafka.sasl.jaas.config' already authenticates "
            "with a delegation token (tokenauth=true); brokers do not create tokens for a "
            "token's connection. Log the driver in with Kerberos (GSSAPI) or another mechanism"
        )
    if not (security.uses_sasl or security.uses_tls):
        raise ConfigError(
            "Option 'delegationToken'='true' needs an authenticated connection to create the "
            "token ('kafka.security.protocol' SASL_PLAINTEXT or SASL_SSL, e.g. with "
            "'kafka.sasl.mechanism'='GSSAPI'); brokers refuse CreateDelegationToken from "
            f"an unauthenticated client (got {security.protocol})"
        )
    return TokenOptions(mechanism=mechanism)


@dataclass(frozen=True)
class Credentials:
    """What the executors authenticate with: a token's SCRAM settings (picklable).

    Attributes:
        token_id: the token's id (not secret).
        sasl: SCRAM with the token id as user name, the HMAC (base64, a
            :class:`~spark_kafka_py.client.security.Secret`) as password and
            ``tokenauth=true``.
        expiry_timestamp_ms: the token's expiry when it was handed out, ms since the epoch.
        token: the token (its HMAC is a Secret).
    """

    token_id: str
    sasl: SaslConfig
    expiry_timestamp_ms: int
    token: DelegationToken = dataclasses.field(repr=False)

    def apply(self, config: ClientConfig, *, now_ms: int | None = None) -> ClientConfig:
        """``config`` with its SASL login replaced by the token's (TLS settings kept).

        Raises:
            KafkaApiError: DELEGATION_TOKEN_EXPIRED: the token's expiry as handed out has
                passed (a task started or retried long after its planning; a streaming write
                past its token's max lifetime), naming the token id and what to do, rather
                than the brokers' bare SASL failure.
        """
        now = _now_ms() if now_ms is None else now_ms
        if now >= self.expiry_timestamp_ms:
            raise KafkaApiError(
                DELEGATION_TOKEN_EXPIRED,
                f"for the tasks of a query with 'delegationToken'='true': token "
                f"{self.token_id} expired at {self.expiry_timestamp_ms} ms since the epoch "
                f"(now {now}); a read gets a new token at its next planning (retry the batch "
                "read, or let the streaming query restart), a streaming write keeps the token "
                "of its start up to its max lifetime: restart the query",
                "",
            )
        security = dataclasses.replace(config.security, sasl=self.sasl)
        if security.protocol.upper() not in ("SASL_PLAINTEXT", "SASL_SSL"):
            # a mutual-TLS driver login: the token needs SASL over the same TLS
            security = dataclasses.replace(security, protocol="SASL_SSL")
        return dataclasses.replace(config, security=security)


@dataclass(frozen=True)
class Authenticated(InputPartition):
    """An input partition with the credentials its task authenticates with.

    Attributes:
        partition: the planned work (a range, or a group of ranges).
        credentials: the token's SCRAM settings.
    """

    partition: InputPartition
    credentials: Credentials


def authenticate_plan(
    plan: Sequence[InputPartition], client: ClientConfig, tokens: TokenOptions | None
) -> Sequence[InputPartition]:
    """``plan`` as is without tokens; else each partition wrapped in :class:`Authenticated`
    with the current token (:func:`executor_credentials`).

    Raises:
        KafkaError: the token could not be created or renewed (see
            :func:`executor_credentials`).
    """
    if tokens is None:
        return plan
    credentials = executor_credentials(client, tokens)
    return [Authenticated(p, credentials) for p in plan]


@dataclass
class _Held:
    token: DelegationToken
    expiry_ms: int
    renewed_at_ms: int


_held: dict[tuple[Any, ...], _Held] = {}
_lock = threading.Lock()


def _key(client: ClientConfig) -> tuple[Any, ...]:
    return (tuple(client.bootstrap_servers), client.security)


def _servers(client: ClientConfig) -> str:
    return ",".join(f"{host}:{port}" for host, port in client.bootstrap_servers)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _due_for_replacement(held: _Held, now_ms: int) -> bool:
    token = held.token
    life = token.max_timestamp_ms - token.issue_timestamp_ms
    return (
        now_ms >= held.expiry_ms
        or now_ms >= token.issue_timestamp_ms + RENEWAL_RATIO * life
        or token.max_timestamp_ms - now_ms < MIN_REMAINING_MS
    )


def _due_for_renewal(held: _Held, now_ms: int) -> bool:
    period = held.expiry_ms - held.renewed_at_ms
    return (
        now_ms >= held.renewed_at_ms + RENEWAL_RATIO * period
        or held.expiry_ms - now_ms < MIN_REMAINING_MS
    )


def _create(client: ClientConfig) -> _Held:
    try:
        with KafkaClient(client) as kafka:
            token = create_delegation_token(kafka)
    except KafkaApiError as exc:
        raise KafkaApiError(
            exc.error,
            f"in CreateDelegationToken ('delegationToken'='true': the driver obtains a token "
            f"for the executors) on {_servers(client)}",
        ) from exc
    wait_until_usable(client, token)
    _log.info(
        "delegation token %s created (owner %s, expires %d, max lifetime %d)",
        token.token_id,
        token.owner,
        token.expiry_timestamp_ms,
        token.max_timestamp_ms,
    )
    return _Held(token, token.expiry_timestamp_ms, token.issue_timestamp_ms)


def executor_credentials(
    client: ClientConfig, tokens: TokenOptions, *, now_ms: int | None = None
) -> Credentials:
    """The credentials to hand the executors now, for the cluster and login of ``client``:
    the held token, renewed or replaced when due (module docstring).

    Args:
        client: the driver's connection settings (its own login: Kerberos, ...).
        tokens: the query's token settings.
        now_ms: the current time, ms since the epoch (default: the clock).

    Raises:
        KafkaApiError: CreateDelegationToken or RenewDelegationToken failed (e.g.
            DELEGATION_TOKEN_AUTH_DISABLED: the brokers have no
            ``delegation.token.secret.key``), naming the option, the token id if any, never
            its HMAC.
        KafkaError: the brokers could not be reached, or refused the login.
    """
    key = _key(client)
    with _lock:
        now = _now_ms() if now_ms is None else now_ms
        held = _held.get(key)
        if held is None or _due_for_replacement(held, now):
            held = _create(client)
        elif _due_for_renewal(held, now):
            held = _renew(client, held, now)
        _held[key] = held
        return Credentials(
            held.token.token_id,
            token_sasl_config(held.token, tokens.mechanism),
            held.expiry_ms,
            held.token,
        )


def _renew(client: ClientConfig, held: _Held, now_ms: int) -> _Held:
    try:
        with KafkaClient(client) as kafka:
            expiry = renew_delegation_token(kafka, held.token)
    except KafkaApiError as exc:
        if exc.code in (DELEGATION_TOKEN_EXPIRED.code, DELEGATION_TOKEN_NOT_FOUND.code):
            _log.info("delegation token %s is gone (%s): replacing it", held.token.token_id, exc)
            return _create(client)
        raise
    _log.info("delegation token %s renewed: expires %d", held.token.token_id, expiry)
    return _Held(held.token, expiry, now_ms)


def lasting_credentials(client: ClientConfig, tokens: TokenOptions) -> Credentials:
    """Credentials for a streaming write's tasks: a token of their own, renewed at once up to
    its max lifetime (RenewDelegationToken's ``renew_period_ms`` may be as long as that).

    PySpark pickles a streaming write's writer once, at the query's start, and every
    micro-batch's tasks use it: unlike reads, they cannot move to a newer token, and a
    micro-batch may come after any idle time, so nothing could renew in time. The token
    therefore lives until ``max_timestamp_ms`` (``delegation.token.max.lifetime.ms``, 7 days
    by default), which bounds such a query: restart it before then. It is not shared with
    other queries, whose renewals (with the broker's default period) would shorten it.

    Raises:
        KafkaApiError: CreateDelegationToken or RenewDelegationToken failed, naming the
            option and the token id, never its HMAC.
    """
    held = _create(client)
    token = held.token
    period = max(0, token.max_timestamp_ms - _now_ms())
    try:
        with KafkaClient(client) as kafka:
            expiry = renew_delegation_token(kafka, token, renew_period_ms=period)
    except KafkaApiError as exc:
        raise KafkaApiError(
            exc.error,
            f"in RenewDelegationToken of token {token.token_id} ('delegationToken'='true': "
            "a streaming write's token lives until its max lifetime)",
        ) from exc
    _log.info(
        "delegation token %s of a streaming write: valid until %d ms since the epoch (its max "
        "lifetime); the query must restart before then",
        token.token_id,
        expiry,
    )
    return Credentials(token.token_id, token_sasl_config(token, tokens.mechanism), expiry, token)


def forget_tokens() -> None:
    """Drop the tokens held by this process (tests; a new query then creates its own)."""
    with _lock:
        _held.clear()
