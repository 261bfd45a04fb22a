"""Settings of one classic group member: :class:`GroupConfig` (times in ms)."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafka_py.consumer.group.assignors import ASSIGNORS
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.registry import default

__all__ = ["GroupConfig"]


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
        retry_backoff_ms: pause between retries of retriable errors.
        default_api_timeout_ms: bound on retrying one commit/fetch/coordinator lookup
            (``default.api.timeout.ms``, default 60,000).
        client_rack: sent as ``rack_id`` in the subscription (v3), or ``None``.
    """

    group_id: str
    group_instance_id: str | None = None
    assignors: tuple[str, ...] = ("range",)
    session_timeout_ms: int = default("kafka.session.timeout.ms")
    heartbeat_interval_ms: int = default("kafka.heartbeat.interval.ms")
    max_poll_interval_ms: int = default("kafka.max.poll.interval.ms")
    request_timeout_ms: int = default("kafka.request.timeout.ms")
    retry_backoff_ms: int = default("kafka.retry.backoff.ms")
    default_api_timeout_ms: int = default("kafka.default.api.timeout.ms")
    client_rack: str | None = None

    def __post_init__(self) -> None:
        if not self.group_id:
            raise ConfigError("Option 'kafka.group.id' must not be empty")
        if self.group_instance_id is not None and not self.group_instance_id:
            raise ConfigError("Option 'kafka.group.instance.id' must not be empty")
        if not self.assignors:
            raise ConfigError("Option 'kafka.partition.assignment.strategy' is empty")
        for name in self.assignors:
            if name not in ASSIGNORS:
                raise ConfigError(
                    f"Option 'kafka.partition.assignment.strategy': {name!r} is not one of "
                    f"{sorted(ASSIGNORS)}"
                )
