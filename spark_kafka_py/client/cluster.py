"""Cluster view: client configuration, Metadata, and a pool of broker connections.

:class:`ClientConfig` is a small frozen (picklable) dataclass; :class:`KafkaClient` opens no
socket and starts no thread in its constructor: connections open lazily on first use, one per
broker node id, and bootstrap servers are only used to find the cluster's brokers.

Metadata comes from the Metadata API (API key 3, ``MetadataRequest.json``/
``MetadataResponse.json``), see :mod:`spark_kafka_py.protocol.messages.metadata`.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, TypeVar

from spark_kafka_py.client.connection import Authenticator, BrokerConnection, SocketFactory
from spark_kafka_py.client.retry import Backoff, retriable
from spark_kafka_py.client.security import PLAINTEXT, SecurityConfig, ssl_socket_factory
from spark_kafka_py.client_defaults import (
    CLIENT_ID,
    METADATA_MAX_AGE_MS,
    RECONNECT_BACKOFF_MS,
    REQUEST_TIMEOUT_MS,
    RETRY_BACKOFF_MAX_MS,
    RETRY_BACKOFF_MS,
    SOCKET_CONNECTION_SETUP_TIMEOUT_MS,
)
from spark_kafka_py.errors import (
    ConfigError,
    KafkaApiError,
    KafkaConnectionError,
    KafkaProtocolError,
    KafkaTimeoutError,
)
from spark_kafka_py.protocol.error_codes import raise_for_error
from spark_kafka_py.protocol.framing import DEFAULT_MAX_FRAME_BYTES
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import Request, Response

__all__ = [
    # ``retry.backoff.max.ms`` (client_defaults), importable from here as before
    "RETRY_BACKOFF_MAX_MS",
    "BrokerInfo",
    "ClientConfig",
    "ClusterMetadata",
    "KafkaClient",
    "PartitionInfo",
    "TopicInfo",
    "parse_bootstrap_servers",
]

_BOOTSTRAP_OPTION = "kafka.bootstrap.servers"

log = logging.getLogger(__name__)

#: the response class of a request (``Request[R]`` -> ``R``, see :meth:`KafkaClient.send`)
R = TypeVar("R", bound=Response)


def parse_bootstrap_servers(servers: str) -> tuple[tuple[str, int], ...]:
    """Parse ``"host:port,host2:port2"`` (IPv6 as ``[::1]:9092``) into ``((host, port), ...)``.

    Raises:
        ConfigError: empty list, a missing or invalid port.
    """
    out: list[tuple[str, int]] = []
    for raw in servers.split(","):
        item = raw.strip()
        if not item:
            continue
        if item.startswith("["):
            host, sep, rest = item[1:].partition("]")
            if not sep or not rest.startswith(":"):
                raise ConfigError(f"{_BOOTSTRAP_OPTION}: {item!r} is not [ipv6]:port")
            port_text = rest[1:]
        else:
            host, sep, port_text = item.rpartition(":")
            if not sep or not host:
                raise ConfigError(f"{_BOOTSTRAP_OPTION}: {item!r} is not host:port")
        try:
            port = int(port_text)
        except ValueError:
            port = -1
        if not 0 < port < 65536:
            raise ConfigError(f"{_BOOTSTRAP_OPTION}: {item!r} has no valid port (1-65535)")
        out.append((host, port))
    if not out:
        raise ConfigError(f"{_BOOTSTRAP_OPTION} is empty; expected host:port[,host:port...]")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Settings of a :class:`KafkaClient` (all times in ms, sizes in bytes).

    Defaults are the Java client's (:mod:`spark_kafka_py.client_defaults`), which the
    ``kafka.*`` options of :mod:`spark_kafka_py.registry` document.

    Attributes:
        bootstrap_servers: ``((host, port), ...)``; a list is accepted and stored as a tuple.
        client_id: Kafka ``client.id`` sent in every request header.
        request_timeout_ms: bound on one request's round trip.
        connect_timeout_ms: bound on opening one TCP connection.
        retry_backoff_ms: pause before retrying a failed request (used by callers).
        reconnect_backoff_ms: pause before reconnecting to a broker that just failed.
        metadata_max_age_ms: cached metadata older than this is refreshed.
        max_frame_bytes: largest response frame accepted (default 100 MiB).
        security: ``security.protocol`` with its TLS/SASL settings
            (:class:`~spark_kafka_py.client.security.SecurityConfig`; secrets hidden in repr).
    """

    bootstrap_servers: tuple[tuple[str, int], ...]
    client_id: str = CLIENT_ID
    request_timeout_ms: int = REQUEST_TIMEOUT_MS
    connect_timeout_ms: int = SOCKET_CONNECTION_SETUP_TIMEOUT_MS
    retry_backoff_ms: int = RETRY_BACKOFF_MS
    reconnect_backoff_ms: int = RECONNECT_BACKOFF_MS
    metadata_max_age_ms: int = METADATA_MAX_AGE_MS
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    security: SecurityConfig = PLAINTEXT

    def __post_init__(self) -> None:
        servers = tuple((str(h), int(p)) for h, p in self.bootstrap_servers)
        if not servers:
            raise ConfigError(f"{_BOOTSTRAP_OPTION} is empty")
        object.__setattr__(self, "bootstrap_servers", servers)
        for name in (
            "request_timeout_ms",
            "connect_timeout_ms",
            "retry_backoff_ms",
            "reconnect_backoff_ms",
            "metadata_max_age_ms",
            "max_frame_bytes",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}")
        if self.max_frame_bytes < 4:
            raise ConfigError(f"max_frame_bytes must be >= 4, got {self.max_frame_bytes}")

    @classmethod
    def from_bootstrap(cls, servers: str, **kwargs: Any) -> ClientConfig:
        """Build from a ``"host:port,host2:port2"`` string plus keyword settings."""
        return cls(bootstrap_servers=parse_bootstrap_servers(servers), **kwargs)


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A broker of the cluster (Metadata ``MetadataResponseBroker``)."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """A partition's leadership (Metadata ``MetadataResponsePartition``).

    ``leader_id`` is -1 when there is no leader; ``leader_epoch`` is -1 when unknown.
    """

    partition: int
    leader_id: int
    leader_epoch: int
    replica_nodes: tuple[int, ...]
    isr_nodes: tuple[int, ...]
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A topic (Metadata ``MetadataResponseTopic``); ``topic_id`` is ``None`` before v10."""

    name: str
    topic_id: uuid.UUID | None
    error_code: int
    is_internal: bool
    partitions: dict[int, PartitionInfo] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """One Metadata answer: brokers by node id, topics by name, cluster and controller ids."""

    brokers: dict[int, BrokerInfo]
    topics: dict[str, TopicInfo]
    cluster_id: str | None
    controller_id: int

    def leader(self, topic: str, partition: int) -> int | None:
        """Node id of the partition's leader, or ``None`` if unknown/leaderless."""
        info = self.topics.get(topic)
        part = info.partitions.get(partition) if info is not None else None
        if part is None or part.leader_id < 0:
            return None
        return part.leader_id

    @classmethod
    def from_response(cls, response: MetadataResponse) -> ClusterMetadata:
        """Convert a :class:`MetadataResponse` (topics with a null name are skipped)."""
        brokers = {
            b.node_id: BrokerInfo(b.node_id, b.host, b.port, b.rack) for b in response.brokers
        }
        topics: dict[str, TopicInfo] = {}
        for t in response.topics:
            if t.name is None:
                continue
            partitions = {
                p.partition_index: PartitionInfo(
                    partition=p.partition_index,
                    leader_id=p.leader_id,
                    leader_epoch=p.leader_epoch,
                    replica_nodes=tuple(p.replica_nodes),
                    isr_nodes=tuple(p.isr_nodes),
                    error_code=p.error_code,
                )
                for p in t.partitions
            }
            topics[t.name] = TopicInfo(
                name=t.name,
                topic_id=None if t.topic_id == ZERO_UUID else t.topic_id,
                error_code=t.error_code,
                is_internal=t.is_internal,
                partitions=partitions,
            )
        return cls(brokers, topics, response.cluster_id, response.controller_id)


class KafkaClient:
    """Connections to a Kafka cluster, keyed by broker node id.

    Args:
        config: a :class:`ClientConfig`.
        socket_factory: passed to every :class:`BrokerConnection`; default: plain TCP, or
            TLS when ``config.security`` says SSL/SASL_SSL.

    Opens nothing until used. Thread-safe: a lock guards the pool; each connection has its
    own lock, so requests to different brokers run concurrently. Usable as a context
    manager (closes every connection). Pickles as its config only.
    """

    def __init__(self, config: ClientConfig, *, socket_factory: SocketFactory | None = None):
        self.config = config
        self._socket_factory = socket_factory
        security = config.security
        if socket_factory is None and security.ssl is not None:
            self._socket_factory = ssl_socket_factory(security.ssl)
        self._sasl = security.sasl
        self._lock = threading.Lock()
        self._connections: dict[int, BrokerConnection] = {}
        self._bootstrap: dict[tuple[str, int], BrokerConnection] = {}
        self._brokers: dict[int, BrokerInfo] = {}
        self._metadata: ClusterMetadata | None = None
        self._metadata_time = 0.0
        self._warned_unreachable = False

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.config,))

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        servers = ",".join(f"{h}:{p}" for h, p in self.config.bootstrap_servers)
        return f"KafkaClient({servers}, {len(self._connections)} connections)"

    # -- connections ----------------------------------------------------------------------
    def report_unreachable(self, exc: BaseException, *, keeps_trying_ms: int, bound: str) -> None:
        """Log a failed attempt to reach the cluster before a caller retries it: the first one
        of this client at WARN at once (the address and cause, how long the caller keeps trying
        and which option bounds that), later ones at INFO.

        Nothing listening at ``kafka.bootstrap.servers`` otherwise shows nothing until the
        caller's timeout ends (``default.api.timeout.ms``, 60 s by default), as the Java
        clients' one WARN line per refused connection ("Connection to node -1 could not be
        established") tells the user at once.

        Args:
            exc: the connection or timeout error of the attempt (its message names the broker).
            keeps_trying_ms: how long the caller goes on retrying (ms).
            bound: the option that bounds it, e.g. ``kafka.max.block.ms``.
        """
        with self._lock:
            first = not self._warned_unreachable
            self._warned_unreachable = True
        servers = ",".join(f"{h}:{p}" for h, p in self.config.bootstrap_servers)
        log.log(
            logging.WARNING if first else logging.INFO,
            "cannot reach the Kafka cluster at %s: %s; retrying for up to %d ms (%s)",
            servers,
            exc,
            keeps_trying_ms,
            bound,
        )

    def _new_connection(self, host: str, port: int, node_id: int | None) -> BrokerConnection:
        c = self.config
        return BrokerConnection(
            host,
            port,
            client_id=c.client_id,
            request_timeout_ms=c.request_timeout_ms,
            connect_timeout_ms=c.connect_timeout_ms,
            max_frame_bytes=c.max_frame_bytes,
            node_id=node_id,
            socket_factory=self._socket_factory,
            reconnect_backoff_ms=c.reconnect_backoff_ms,
            authenticator=self._authenticator_for(host),
        )

    def _authenticator_for(self, host: str) -> Authenticator | None:
        """SASL for a connection to ``host`` (GSSAPI names the broker's service by host)."""
        sasl = self._sasl
        if sasl is None:
            return None
        from spark_kafka_py.client.sasl import authenticate  # loaded only for SASL clients

        timeout_ms = self.config.connect_timeout_ms  # bounds the wait for a KDC too
        return lambda exchange, broker: authenticate(
            exchange, sasl, broker, host=host, timeout_ms=timeout_ms
        )

    def connection(self, node_id: int) -> BrokerConnection:
        """The (lazily opened) connection to broker ``node_id``.

        Raises:
            KafkaConnectionError: the node id is not in the cluster metadata (after a refresh).
        """
        with self._lock:
            conn = self._connections.get(node_id)
            if conn is not None:
                return conn
            broker = self._brokers.get(node_id)
        if broker is None:
            self.metadata([])  # brokers only
            broker = self._brokers.get(node_id)
            if broker is None:
                raise KafkaConnectionError(
                    f"broker {node_id} is not in the cluster metadata "
                    f"(known: {sorted(self._brokers)})"
                )
        with self._lock:
            conn = self._connections.get(node_id)
            if conn is None or (conn.host, conn.port) != (broker.host, broker.port):
                if conn is not None:
                    conn.close()
                conn = self._new_connection(broker.host, broker.port, node_id)
                self._connections[node_id] = conn
            return conn

    def send(
        self,
        node_id: int,
        request: Request[R],
        *,
        timeout_ms: int | None = None,
        max_version: int | None = None,
    ) -> R:
        """Send ``request`` to broker ``node_id`` and return its response (an ``R`` for a
        ``Request[R]``: a ``MetadataRequest`` gets a ``MetadataResponse``).

        ``timeout_ms`` and ``max_version`` as in :meth:`BrokerConnection.send`.

        Raises: as :meth:`BrokerConnection.send`, plus :class:`KafkaConnectionError` for an
        unknown node id.
        """
        return self.connection(node_id).send(
            request, timeout_ms=timeout_ms, max_version=max_version
        )

    def least_loaded_node(self) -> int:
        """A broker to send a cluster-wide request to, as Java's ``NetworkClient.
        leastLoadedNode``: the connected broker with the fewest requests in flight (ties broken
        at random, as Java starts its scan at a random node), else a random known broker
        (fetching metadata from the bootstrap servers if none is known).

        Raises:
            KafkaConnectionError: no broker reachable.
        """
        if not self._brokers:
            self.metadata([])
        with self._lock:
            connected = [(n, c) for n, c in self._connections.items() if c.connected]
            if connected:
                random.shuffle(connected)
                return min(connected, key=lambda nc: nc[1].in_flight_requests)[0]
            if self._brokers:
                return random.choice(list(self._brokers))
        raise KafkaConnectionError("the cluster metadata lists no brokers")

    def close(self) -> None:
        """Close every connection. The client stays usable (connections reopen lazily)."""
        with self._lock:
            conns = list(self._connections.values()) + list(self._bootstrap.values())
            self._connections.clear()
            self._bootstrap.clear()
        for conn in conns:
            conn.close()

    # -- metadata -------------------------------------------------------------------------
    @property
    def cached_metadata(self) -> ClusterMetadata | None:
        """The last :meth:`metadata` answer, if any."""
        return self._metadata

    def metadata_is_stale(self) -> bool:
        """True when no metadata is cached or it is older than ``metadata_max_age_ms``."""
        if self._metadata is None:
            return True
        age_ms = (time.monotonic() - self._metadata_time) * 1000
        return age_ms > self.config.metadata_max_age_ms

    def metadata(
        self, topics: list[str] | None = None, *, allow_auto_topic_creation: bool = False
    ) -> ClusterMetadata:
        """Ask the cluster for metadata of ``topics`` (``None``: all topics; ``[]``: brokers only).

        Tries connected brokers, then the other known brokers, then the bootstrap servers,
        until one answers. Topic-level errors (e.g. UNKNOWN_TOPIC_OR_PARTITION) are left in
        :attr:`TopicInfo.error_code` for the caller.

        Raises:
            KafkaConnectionError: no broker answered; the message names every broker tried
                and its error. ``retriable`` is False when every broker failed in a way
                waiting cannot mend (TLS handshake, SASL authentication, not Kafka).
            KafkaApiError: the broker returned a top-level error (v13+).
        """
        request = MetadataRequest(
            topics=None if topics is None else tuple(MetadataRequestTopic(name=t) for t in topics),
            allow_auto_topic_creation=allow_auto_topic_creation,
        )
        errors: list[str] = []
        any_retriable = False  # some broker may answer later (refused, reset, timed out)
        for conn in self._metadata_candidates():
            try:
                response = conn.send(request)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                errors.append(f"{conn.address}: {exc}")
                any_retriable = any_retriable or retriable(exc)
                continue
            except (KafkaProtocolError, KafkaApiError) as exc:  # not Kafka; SASL/ApiVersions
                errors.append(f"{conn.address}: {exc}")
                continue
            if conn.node_id is None:  # a bootstrap server: the cluster's brokers replace it
                conn.close()
            raise_for_error(response.error_code, f"in Metadata from {conn.address}")
            result = ClusterMetadata.from_response(response)
            with self._lock:
                self._brokers = dict(result.brokers)
                if topics is None:
                    self._metadata = result
                elif self._metadata is None:
                    self._metadata = replace(result, topics=dict(result.topics))
                else:
                    merged = dict(self._metadata.topics)
                    merged.update(result.topics)
                    self._metadata = replace(result, topics=merged)
                self._metadata_time = time.monotonic()
            return result
        raise KafkaConnectionError(
            "no broker answered Metadata; tried " + "; ".join(errors)
            if errors
            else "no broker to ask for Metadata",
            retriable=any_retriable,
        )

    def metadata_retrying(
        self,
        topics: list[str] | None = None,
        *,
        timeout_ms: int,
        bound: str = "default.api.timeout.ms",
    ) -> ClusterMetadata:
        """:meth:`metadata`, asked again while no broker answers, for up to ``timeout_ms``.

        The driver's way through a broker restart: the pauses are the clients' exponential
        backoff (:class:`~spark_kafka_py.client.retry.Backoff`, KIP-580): from
        ``retry_backoff_ms`` (at least 1 ms), doubling up to :data:`RETRY_BACKOFF_MAX_MS`
        (``retry.backoff.max.ms``), each scaled by a random factor in ``[0.8, 1.2)``. Only
        :func:`~spark_kafka_py.client.retry.retriable` failures are retried. The first failure
        is logged at WARN at once (:meth:`report_unreachable`).

        Args:
            topics: as :meth:`metadata`.
            timeout_ms: how long to keep asking (ms).
            bound: the option ``timeout_ms`` comes from, named in the log line and the error.

        Raises:
            KafkaTimeoutError: no broker answered for ``timeout_ms`` (``default.api.timeout.ms``
                to callers); the message holds the last :class:`KafkaConnectionError`.
            KafkaConnectionError: not retriable (see :meth:`metadata`), raised at once.
            KafkaApiError: as :meth:`metadata` (not retried).
        """
        deadline = time.monotonic() + timeout_ms / 1000
        backoff = Backoff(max(1, self.config.retry_backoff_ms), RETRY_BACKOFF_MAX_MS)
        attempts = 0
        while True:
            try:
                return self.metadata(topics)
            except KafkaConnectionError as exc:
                left = deadline - time.monotonic()
                if not retriable(exc):
                    raise
                if left <= 0:
                    raise KafkaTimeoutError(
                        f"Metadata: no broker answered within {bound}={timeout_ms} ms; "
                        f"last error: {exc}"
                    ) from exc
                pause_ms = backoff.pause_ms(attempts)
                if attempts == 0:
                    self.report_unreachable(exc, keeps_trying_ms=timeout_ms, bound=bound)
                else:
                    log.info("Metadata: %s; retrying in %d ms", exc, pause_ms)
                attempts += 1
                time.sleep(min(pause_ms / 1000, left))

    def _metadata_candidates(self) -> list[BrokerConnection]:
        with self._lock:
            connected = [c for c in self._connections.values() if c.connected]
            known = [b for n, b in self._brokers.items() if n not in self._connections]
            idle = [c for c in self._connections.values() if not c.connected]
        out = connected[:]
        random.shuffle(known)
        for broker in known:
            with self._lock:
                conn = self._connections.setdefault(
                    broker.node_id, self._new_connection(broker.host, broker.port, broker.node_id)
                )
            out.append(conn)
        out.extend(idle)
        servers = list(self.config.bootstrap_servers)
        random.shuffle(servers)
        for host, port in servers:
            with self._lock:
                boot = self._bootstrap.get((host, port))
                if boot is None:
                    boot = self._new_connection(host, port, None)
                    self._bootstrap[(host, port)] = boot
            out.append(boot)
        return out
