"""Settings of one group member, classic or KIP-848: :class:`GroupConfig` (times in ms)."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py.client_defaults import RETRY_BACKOFF_MAX_MS
from spark_kafka_py.consumer.group.assignors import ASSIGNORS
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.registry import default

__all__ = [
    "CLASSIC_PROTOCOL",
    "CONSUMER_PROTOCOL",
    "GROUP_PROTOCOLS",
    "SERVER_ASSIGNORS",
    "GroupConfig",
]

#: ``group.protocol`` values, as the Java consumer names them (KIP-848): the classic protocol
#: (JoinGroup/SyncGroup, client-side assignors) and the consumer group protocol
#: (ConsumerGroupHeartbeat, server-side assignors; Kafka 4.0+ brokers).
CLASSIC_PROTOCOL = "classic"
CONSUMER_PROTOCOL = "consumer"
GROUP_PROTOCOLS = (CLASSIC_PROTOCOL, CONSUMER_PROTOCOL)
#: Server-side assignors of Kafka 4.x (broker setting ``group.consumer.assignors``), as the Java
#: consumer's ``group.remote.assignor`` names them.
SERVER_ASSIGNORS = frozenset({"uniform", "range"})


@dataclass(frozen=True)
class GroupConfig:
    """Settings of one group member (times in ms).

    Built by :func:`spark_kafka_py.spark.options.parse_options`; the defaults are those of the
    ``kafka.*`` options in :mod:`spark_kafka_py.registry`.

    Attributes:
        group_id: ``group.id``.
        group_instance_id: ``group.instance.id`` (static membership, KIP-345) or ``None``.
        assignors: ``partition.assignment.strategy`` protocol names, preferred first.
        session_timeout_ms / heartbeat_interval_ms / max_poll_interval_ms: as the Java
            consumer (defaults 45,000 / 3,000 / 300,000); ``max_poll_interval_ms`` is also the
            JoinGroup rebalance timeout.
        request_timeout_ms: bound on one request (JoinGroup gets the rebalance timeout + 5 s
            more, as Java's consumer).
        retry_backoff_ms: the first pause before retrying a retriable error
            (``retry.backoff.ms``); it doubles per failed attempt (KIP-580, with jitter) up
            to ``retry_backoff_max_ms``, see :class:`~spark_kafka_py.client.retry.Backoff`.
        retry_backoff_max_ms: the cap of that pause (``retry.backoff.max.ms``, default
            1,000).
        default_api_timeout_ms: bound on retrying one commit/fetch/coordinator lookup
            (``default.api.timeout.ms``, default 60,000).
        client_rack: sent as ``rack_id`` in the subscription (v3), or ``None``.
        protocol: ``group.protocol``: :data:`CLASSIC_PROTOCOL` (default) or
            :data:`CONSUMER_PROTOCOL` (KIP-848; ``session_timeout_ms``, ``assignors`` and
            ``heartbeat_interval_ms`` are then not used: the coordinator decides, and
            ``max_poll_interval_ms`` is the rebalance timeout sent in the heartbeat).
        remote_assignor: ``group.remote.assignor`` (``uniform``, ``range``) with the consumer
            protocol, or ``None`` for the broker's default.
    """

    group_id: str
    group_instance_id: str | None = None
    assignors: tuple[str, ...] = ("range",)
    session_timeout_ms: int = default("kafka.session.timeout.ms")
    heartbeat_interval_ms: int = default("kafka.heartbeat.interval.ms")
    max_poll_interval_ms: int = default("kafka.max.poll.interval.ms")
    request_timeout_ms: int = default("kafka.request.timeout.ms")
    retry_backoff_ms: int = default("kafka.retry.backoff.ms")
    retry_backoff_max_ms: int = RETRY_BACKOFF_MAX_MS
    default_api_timeout_ms: int = default("kafka.default.api.timeout.ms")
    client_rack: str | None = None
    protocol: str = CLASSIC_PROTOCOL
    remote_assignor: str | None = None

    def __post_init__(self) -> None:
        if not self.group_id:
            raise ConfigError("Option 'kafka.group.id' must not be empty")
        if self.group_instance_id is not None and not self.group_instance_id:
            raise ConfigError("Option 'kafka.group.instance.id' must not be empty")
        if not self.assignors:
            raise ConfigError("Option 'kafka.partition.assignment.strategy' is empty")
        if self.protocol not in GROUP_PROTOCOLS:
            raise ConfigError(
                f"Option 'kafka.group.protocol' must be one of {list(GROUP_PROTOCOLS)}, "
                f"got {self.protocol!r}"
            )
        if self.remote_assignor is not None:
            if self.protocol != CONSUMER_PROTOCOL:
                raise ConfigError(
                    "Option 'kafka.group.remote.assignor' cannot be set when "
                    f"kafka.group.protocol={self.protocol} (it names a server-side assignor of "
                    "the consumer group protocol, KIP-848)"
                )
            if self.remote_assignor not in SERVER_ASSIGNORS:
                raise ConfigError(
                    "Option 'kafka.group.remote.assignor' must be one of "
                    f"{sorted(SERVER_ASSIGNORS)}, got {self.remote_assignor!r}"
                )
        for name in self.assignors:
            if name not in ASSIGNORS:
                raise ConfigError(
                    f"Option 'kafka.partition.assignment.strategy': {name!r} is not one of "
                    f"{sorted(ASSIGNORS)}"
                )
