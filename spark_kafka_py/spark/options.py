"""Options of ``format("pykafka")`` reads, parsed once into a frozen :class:`SourceOptions`.

Every option is declared in :mod:`spark_kafka_py.registry` (name, type, default, unit, where it
applies); this module turns the options of one read into :class:`SourceOptions`, from which
the client (:class:`~spark_kafka_py.client.cluster.ClientConfig`), consumer
(:class:`~spark_kafka_py.consumer.settings.ConsumerSettings`) and group
(:class:`~spark_kafka_py.consumer.group.config.GroupConfig`) settings are derived, and
holds the structured values (subscriptions, JSON offsets) and Spark's cross-option rules.

Option names and meanings follow Spark's built-in Kafka source (Structured Streaming + Kafka
Integration Guide, ``KafkaSourceProvider``). PySpark hands options to the data source with
lower-cased keys (``pyspark.sql.datasource.CaseInsensitiveDict``), so lookups use lower case.

Everything a user can get wrong fails here, at ``load()`` or query start, with a
:class:`~spark_kafka_py.errors.ConfigError` naming the option.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.security import parse_security_options, redact_options
from spark_kafka_py.consumer.group.assignors import get_assignor
from spark_kafka_py.consumer.group.config import CONSUMER_PROTOCOL, GroupConfig
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    TopicPartition,
)
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.registry import (
    BATCH,
    KAFKA_PREFIX,
    OPTIONS,
    REJECTED,
    SINK,
    SPARK_PASSED,
    STREAM,
    did_you_mean,
    is_registered,
    option,
    parse_time_ms,
)
from spark_kafka_py.spark.payload import PayloadOptions, ReadPayload, parse_payload_options
from spark_kafka_py.spark.tokens import TokenOptions, parse_token_options

__all__ = [
    "Assign",
    "ByTimestamp",
    "GroupOptions",
    "OffsetSpec",
    "SourceOptions",
    "Subscribe",
    "SubscribePattern",
    "Subscription",
    "check_kafka_options",
    "include_headers",
    "parse_client_config",
    "parse_offset_spec",
    "parse_options",
    "parse_subscription",
    "parse_time_ms",
    "parse_timestamp_json",
]

log = logging.getLogger(__name__)

#: Offsets in ``startingOffsets``/``endingOffsets`` JSON meaning "earliest" and "latest",
#: as in Spark's Kafka source (``KafkaOffsetRangeLimit``).
EARLIEST = EARLIEST_TIMESTAMP
LATEST = LATEST_TIMESTAMP

_OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
_ASSIGN_EXAMPLE = '{"topicA":[0,1],"topicB":[2,4]}'

#: Every option key (lower case) a read honours; a ``kafka.*`` setting of the sink only (such as
#: ``kafka.acks``) on a read is warned about as unused.
_KNOWN = frozenset(o.key for o in OPTIONS if o.scopes - {SINK})
#: ``startingOffsets`` value that starts from the group's committed offsets (ours only).
GROUP_STARTING_OFFSETS = "group"


@dataclass(frozen=True)
class Subscribe:
    """``subscribe``: a fixed list of topics."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    """``subscribePattern``: every topic whose whole name matches the regex."""

    pattern: str

    def matches(self, topic: str) -> bool:
        """Whether ``topic`` matches (a full match, as Java's ``Pattern.matcher().matches()``)."""
        return re.fullmatch(self.pattern, topic) is not None


@dataclass(frozen=True)
class Assign:
    """``assign``: a fixed set of topic-partitions."""

    partitions: tuple[TopicPartition, ...]


Subscription = Subscribe | SubscribePattern | Assign


@dataclass(frozen=True)
class ByTimestamp:
    """Offsets found by record timestamp with ListOffsets (Kafka's ``offsetsForTimes``).

    From ``startingTimestamp``/``endingTimestamp`` (``everywhere``: one timestamp in ms for every
    partition) or ``startingOffsetsByTimestamp``/``endingOffsetsByTimestamp`` (``per_partition``:
    JSON ``{"topic": {"0": ms}}`` naming every partition), as Spark's
    ``GlobalTimestampRangeLimit``/``SpecificTimestampRangeLimit``.

    Attributes:
        per_partition: ``{TopicPartition: timestamp ms}`` or ``None``.
        everywhere: one timestamp in ms for all partitions, or ``None``.
        strategy: ``startingOffsetsByTimestampStrategy``: ``"error"`` (a start partition with no
            record at or after its timestamp fails the query) or ``"latest"`` (it starts at the
            latest offset). Ends with no such record always end at the latest offset.
    """

    per_partition: Mapping[TopicPartition, int] | None = None
    everywhere: int | None = None
    strategy: Literal["error", "latest"] = "error"


#: ``earliest``, ``latest``, specific offsets per topic-partition (-2 earliest, -1 latest), or
#: offsets by timestamp.
OffsetSpec = Literal["earliest", "latest"] | Mapping[TopicPartition, int] | ByTimestamp

#: Spark's default ``maxTriggerDelay`` (``KafkaSourceProvider.DEFAULT_MAX_TRIGGER_DELAY``).
DEFAULT_MAX_TRIGGER_DELAY_MS: int = option("maxTriggerDelay").default


@dataclass(frozen=True)
class GroupOptions:
    """The consumer-group part of a read's options.

    Attributes:
        config: the member's settings, or ``None`` without ``kafka.group.id``.
        start_from_group: ``startingOffsets=group``: start from the group's committed offsets.
        fallback: where partitions without a committed offset start (``groupOffsetsFallback``,
            ``earliest`` or ``latest``; default ``earliest``); also used for partitions a
            rebalance assigns mid-stream.
        join: whether to join as a member (``subscribe``/``subscribePattern``) or only commit
            (``assign``).
        commit_batch_reads: ``commitGroupOffsets=true`` (batch reads only): the group moves
            to the end of each topic-partition's read once every range of it was read
            (:func:`spark_kafka_py.spark.group.commit_after_read`).
    """

    config: GroupConfig | None = None
    start_from_group: bool = False
    fallback: Literal["earliest", "latest"] = option("groupOffsetsFallback").default
    join: bool = True
    commit_batch_reads: bool = option("commitGroupOffsets").default


@dataclass(frozen=True)
class SourceOptions:
    """Validated options of one ``format("pykafka")`` read.

    Attributes:
        subscription: which topics/partitions to read.
        starting_offsets: where a new query (or a batch read) starts.
        ending_offsets: where a batch read ends (``None`` for streaming).
        include_headers: add the ``headers`` column.
        fail_on_data_loss: fail (``True``) or warn and skip (``False``) when data is gone.
        max_offsets_per_trigger: streaming rate limit in records per micro-batch, or ``None``.
        min_offsets_per_trigger: ``minOffsetsPerTrigger``: a micro-batch waits until this many
            records are available, or ``None``.
        max_trigger_delay_ms: ``maxTriggerDelay`` in ms: the longest wait for
            ``minOffsetsPerTrigger`` (default 15 minutes).
        min_partitions: ``minPartitions``: split offset ranges into at least about this many
            Spark tasks, or ``None``.
        max_records_per_partition: ``maxRecordsPerPartition``: split offset ranges so that no
            Spark task reads more than this many offsets, or ``None``.
        poll_timeout_ms: ``kafkaConsumer.pollTimeoutMs``, how long an executor waits for a
            fetch to make progress before failing (Spark's default: ``spark.network.timeout``,
            120 s).
        fetch_offset_num_retries / fetch_offset_retry_interval_ms: driver-side retries of
            offset look-ups (``fetchOffset.numRetries``, ``fetchOffset.retryIntervalMs``).
        consumer: the honoured ``kafka.*`` settings.
        group: the consumer-group settings (:class:`GroupOptions`).
        kafka_params: the ``kafka.*`` options as given (without the prefix), secrets redacted.
        payload: ``valueFormat`` / ``keyFormat`` and the schema registry
            (:class:`~spark_kafka_py.spark.payload.PayloadOptions`).
        read_payload: the reader schemas of the formatted columns, set once the DataFrame's
            schema is known (:func:`~spark_kafka_py.spark.payload.read_payload_from_schema`).
        delegation_token: ``delegationToken=true``: the executors authenticate with a token
            the driver obtains (:mod:`spark_kafka_py.spark.tokens`); ``None`` otherwise.
    """

    subscription: Subscription
    starting_offsets: OffsetSpec
    ending_offsets: OffsetSpec | None
    include_headers: bool
    fail_on_data_loss: bool
    consumer: ConsumerSettings
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    poll_timeout_ms: int = option("kafkaConsumer.pollTimeoutMs").default
    fetch_offset_num_retries: int = option("fetchOffset.numRetries").default
    fetch_offset_retry_interval_ms: int = option("fetchOffset.retryIntervalMs").default
    kafka_params: Mapping[str, str] = field(default_factory=dict)
    group: GroupOptions = field(default_factory=GroupOptions)
    payload: PayloadOptions = field(default_factory=PayloadOptions)
    read_payload: ReadPayload | None = None
    delegation_token: TokenOptions | None = None


def parse_subscription(options: Mapping[str, str]) -> Subscription:
    """Read exactly one of ``subscribe``, ``subscribePattern``, ``assign``.

    Raises:
        ConfigError: none or several of them given, or a malformed value.
    """
    names = ("subscribe", "subscribePattern", "assign")
    given = [name for name in names if name.lower() in options]
    if not given:
        raise ConfigError(
            "One of the following options must be specified for Kafka source: subscribe, "
            "subscribePattern, assign. See the docs for more details."
        )
    if len(given) > 1:
        raise ConfigError(
            "Only one of the following options can be specified for Kafka source: subscribe, "
            f"subscribePattern, assign; got {', '.join(given)}."
        )
    name = given[0]
    raw = str(options[name.lower()])
    if name == "subscribe":
        topics = tuple(t.strip() for t in raw.split(",") if t.strip())
        if not topics:
            raise ConfigError(
                f"No topics to subscribe to as specified value for option 'subscribe' is {raw!r}"
            )
        return Subscribe(topics)
    if name == "subscribePattern":
        if not raw.strip():
            raise ConfigError(
                "Pattern to subscribe is empty as specified value for option "
                f"'subscribePattern' is {raw!r}"
            )
        try:
            re.compile(raw)
        except re.error as exc:
            raise ConfigError(
                f"Option 'subscribePattern' is not a valid regex {raw!r}: {exc}"
            ) from None
        return SubscribePattern(raw.strip())
    return Assign(_parse_assign(raw))


def _parse_assign(raw: str) -> tuple[TopicPartition, ...]:
    bad = ConfigError(f"Option 'assign': expected e.g. {_ASSIGN_EXAMPLE}, got {raw!r}")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        raise bad from None
    if not isinstance(data, dict):
        raise bad
    partitions: list[TopicPartition] = []
    for topic, parts in data.items():
        if not isinstance(parts, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in parts
        ):
            raise bad
        partitions.extend(TopicPartition(topic, p) for p in parts)
    if not partitions:
        raise ConfigError(
            f"No topicpartitions to assign as specified value for option 'assign' is {raw!r}"
        )
    return tuple(sorted(set(partitions)))


def parse_offset_spec(raw: str, name: str) -> OffsetSpec:
    """Parse ``earliest``, ``latest`` or per-partition JSON offsets (Spark's format).

    Returns ``"earliest"``, ``"latest"`` or a dict ``TopicPartition -> offset`` where -2 means
    earliest and -1 latest.

    Raises:
        ConfigError: naming ``name`` when the value is neither.
    """
    text = raw.strip()
    lowered = text.lower()
    if lowered == "earliest":
        return "earliest"
    if lowered == "latest":
        return "latest"
    bad = ConfigError(
        f"Option '{name}' must be 'earliest', 'latest' or JSON like {_OFFSETS_EXAMPLE}, got {raw!r}"
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise bad from None
    if not isinstance(data, dict) or not data:
        raise bad
    offsets: dict[TopicPartition, int] = {}
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            raise bad
        for part, offset in parts.items():
            try:
                partition = int(part)
            except ValueError:
                raise bad from None
            if (
                not isinstance(offset, int)
                or isinstance(offset, bool)
                or offset < LATEST_TIMESTAMP - 1
            ):
                raise bad
            offsets[TopicPartition(topic, partition)] = offset
    return offsets


_TS_EXAMPLE = '{"topicA":{"0":1700000000000,"1":1700000000000}}'


def parse_timestamp_json(raw: str, name: str) -> dict[TopicPartition, int]:
    """``{"topic": {"partition": timestamp ms}}`` (Spark's ``JsonUtils.partitionTimestamps``).

    Raises:
        ConfigError: naming ``name`` when the JSON is malformed or a timestamp is not an integer.
    """
    bad = ConfigError(f"Option '{name}' must be JSON like {_TS_EXAMPLE}, got {raw!r}")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        raise bad from None
    if not isinstance(data, dict) or not data:
        raise bad
    out: dict[TopicPartition, int] = {}
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            raise bad
        for part, ts in parts.items():
            try:
                partition = int(part)
            except ValueError:
                raise bad from None
            if not isinstance(ts, int) or isinstance(ts, bool):
                raise bad
            out[TopicPartition(topic, partition)] = ts
    return out


def _offset_range_limit(
    opts: Mapping[str, str],
    *,
    global_key: str,
    by_ts_key: str,
    offsets_key: str,
    default: str,
    strategy: Literal["error", "latest"],
) -> OffsetSpec:
    """Spark's precedence (``KafkaSourceProvider.getKafkaOffsetRangeLimit``): the global
    timestamp option wins over the per-partition timestamps, which win over the offsets."""
    if global_key.lower() in opts:
        return ByTimestamp(everywhere=option(global_key).read(opts), strategy=strategy)
    if by_ts_key.lower() in opts:
        return ByTimestamp(
            per_partition=parse_timestamp_json(opts[by_ts_key.lower()], by_ts_key),
            strategy=strategy,
        )
    return parse_offset_spec(opts.get(offsets_key.lower(), default), offsets_key)


def _value(opts: Mapping[str, str], name: str) -> Any:
    return option(name).read(opts)


def parse_client_config(opts: Mapping[str, str], kafka: Mapping[str, str]) -> ClientConfig:
    """The connection settings shared by reads and writes (bootstrap servers, ``client.id``,
    timeouts, backoffs, ``metadata.max.age.ms``, TLS/SASL).

    Args:
        opts: the options, keys lower-cased, ``kafka.bootstrap.servers`` present.
        kafka: the ``kafka.*`` options without the prefix (the security settings).

    Raises:
        ConfigError: naming the malformed option.
    """
    return ClientConfig.from_bootstrap(
        opts["kafka.bootstrap.servers"],
        client_id=_value(opts, "kafka.client.id"),
        request_timeout_ms=_value(opts, "kafka.request.timeout.ms"),
        connect_timeout_ms=_value(opts, "kafka.socket.connection.setup.timeout.ms"),
        retry_backoff_ms=_value(opts, "kafka.retry.backoff.ms"),
        reconnect_backoff_ms=_value(opts, "kafka.reconnect.backoff.ms"),
        metadata_max_age_ms=_value(opts, "kafka.metadata.max.age.ms"),
        security=parse_security_options(kafka),
    )


def _consumer_settings(opts: Mapping[str, str], kafka: Mapping[str, str]) -> ConsumerSettings:
    """The honoured ``kafka.*`` settings of ``opts`` (keys lower-cased, prefix kept);
    ``kafka``: the same settings without the prefix, for the security options."""
    isolation = _value(opts, "kafka.isolation.level")
    return ConsumerSettings(
        client=parse_client_config(opts, kafka),
        default_api_timeout_ms=_value(opts, "kafka.default.api.timeout.ms"),
        fetch_max_bytes=_value(opts, "kafka.fetch.max.bytes"),
        max_partition_fetch_bytes=_value(opts, "kafka.max.partition.fetch.bytes"),
        fetch_min_bytes=_value(opts, "kafka.fetch.min.bytes"),
        fetch_max_wait_ms=_value(opts, "kafka.fetch.max.wait.ms"),
        max_decompression_ratio=_value(opts, "maxDecompressionRatio"),
        isolation_level=READ_COMMITTED if isolation == "read_committed" else READ_UNCOMMITTED,
        check_crcs=_value(opts, "kafka.check.crcs"),
        client_rack=_value(opts, "kafka.client.rack"),
        group_id=_value(opts, "kafka.group.id"),
    )


#: Options that only mean something with ``kafka.group.id``.
_GROUP_ONLY = (
    "groupOffsetsFallback",
    "commitGroupOffsets",
    "kafka.group.instance.id",
    "kafka.session.timeout.ms",
    "kafka.heartbeat.interval.ms",
    "kafka.max.poll.interval.ms",
    "kafka.partition.assignment.strategy",
    "kafka.group.protocol",
    "kafka.group.remote.assignor",
)

#: Options the Java consumer rejects with ``group.protocol=consumer`` (its
#: ``ConsumerConfig``: "... cannot be set when group.protocol=CONSUMER"): the coordinator
#: assigns partitions and sets the session timeout and heartbeat interval (broker settings
#: ``group.consumer.session.timeout.ms``, ``group.consumer.heartbeat.interval.ms``; KIP-848).
_CLASSIC_ONLY = (
    "kafka.partition.assignment.strategy",
    "kafka.heartbeat.interval.ms",
    "kafka.session.timeout.ms",
)


def _group_options(
    opts: Mapping[str, str],
    consumer: ConsumerSettings,
    subscription: Subscription,
    *,
    streaming: bool,
    start_from_group: bool,
) -> GroupOptions:
    """The consumer-group part of a read (see ``docs/consumer-groups.md``).

    Raises:
        ConfigError: naming the option: an empty ``kafka.group.id``, a non-positive timeout,
            ``heartbeat.interval.ms >= session.timeout.ms``, an unknown or unsupported
            assignor, a fallback other than ``earliest``/``latest``, group-only options
            without ``kafka.group.id``, ``commitGroupOffsets`` in a streaming query (which
            always commits) or not ``true``/``false``.
    """
    group_id = consumer.group_id
    if group_id is None:
        given = sorted(name.lower() for name in _GROUP_ONLY if name.lower() in opts)
        if given:
            raise ConfigError(
                f"Option(s) {', '.join(repr(g) for g in given)} need 'kafka.group.id'"
            )
        return GroupOptions()
    if not group_id.strip():
        raise ConfigError("Option 'kafka.group.id' must not be empty")
    commit = _value(opts, "commitGroupOffsets")
    if streaming and "commitgroupoffsets" in opts:
        raise ConfigError(
            "Option 'commitGroupOffsets' is for batch reads; a streaming query with "
            "'kafka.group.id' always commits the offsets it has processed"
        )
    fallback = _value(opts, "groupOffsetsFallback")
    protocol = _value(opts, "kafka.group.protocol")
    if protocol == CONSUMER_PROTOCOL:
        given = [name for name in _CLASSIC_ONLY if name.lower() in opts]
        if given:
            raise ConfigError(
                f"Option(s) {', '.join(repr(g) for g in given)} cannot be set when "
                "'kafka.group.protocol'='consumer' (as in Kafka's Java consumer): the group "
                "coordinator assigns the partitions and sets the session timeout and heartbeat "
                "interval (broker settings group.consumer.assignors, "
                "group.consumer.session.timeout.ms, group.consumer.heartbeat.interval.ms); "
                "use 'kafka.group.remote.assignor' to pick a server-side assignor"
            )
    strategies = _value(opts, "kafka.partition.assignment.strategy")
    assignors = tuple(dict.fromkeys(get_assignor(s) for s in strategies.split(",") if s.strip()))
    session = _value(opts, "kafka.session.timeout.ms")
    heartbeat = _value(opts, "kafka.heartbeat.interval.ms")
    if heartbeat >= session:
        raise ConfigError(
            f"Option 'kafka.heartbeat.interval.ms' ({heartbeat}) must be lower than "
            f"'kafka.session.timeout.ms' ({session})"
        )
    instance = _value(opts, "kafka.group.instance.id")
    config = GroupConfig(
        group_id=group_id,
        group_instance_id=instance.strip() if instance is not None else None,
        assignors=assignors,
        session_timeout_ms=session,
        heartbeat_interval_ms=heartbeat,
        max_poll_interval_ms=_value(opts, "kafka.max.poll.interval.ms"),
        request_timeout_ms=consumer.client.request_timeout_ms,
        retry_backoff_ms=max(1, consumer.client.retry_backoff_ms),
        default_api_timeout_ms=consumer.default_api_timeout_ms,
        client_rack=consumer.client_rack or None,
        protocol=protocol,
        remote_assignor=_value(opts, "kafka.group.remote.assignor"),
    )
    return GroupOptions(
        config=config,
        start_from_group=start_from_group,
        fallback=fallback,
        join=not isinstance(subscription, Assign),
        commit_batch_reads=commit,
    )


def check_kafka_options(
    opts: Mapping[str, str],
    rejected: Mapping[str, str],
    known: frozenset[str],
    *,
    client: str,
    user: str,
) -> None:
    """Checks shared by reads and writes (``KafkaSourceProvider``): bootstrap servers given,
    Spark's rejected settings refused with Spark's reasons, a warning for every ``kafka.*``
    setting not in ``known`` (as the Java clients warn about unused settings), and one for
    every other option that is not registered at all (Spark ignores it silently), each with
    the closest registered name when one is close (:func:`~spark_kafka_py.registry.did_you_mean`:
    ``startingOffset`` -> ``startingOffsets``). Never a failure: we accept what Spark accepts.

    Args:
        opts: the options, keys lower-cased.
        rejected: ``{key: Spark's reason}``.
        known: the option keys honoured.
        client: ``"consumer"`` or ``"producer"`` (for Spark's message).
        user: who ignores unknown settings, for the warning.

    Raises:
        ConfigError: no bootstrap servers (naming a near miss such as
            ``kafka.bootstrap.server`` when one is given), or a rejected setting.
    """
    if not opts.get("kafka.bootstrap.servers", "").strip():
        hint = did_you_mean("kafka.bootstrap.servers")  # what a misspelling of it is told
        near = [
            k for k in sorted(opts) if k != "kafka.bootstrap.servers" and did_you_mean(k) == hint
        ]
        raise ConfigError(
            f"Option 'kafka.bootstrap.servers' must be specified for configuring Kafka {client}"
            + (f"; option '{near[0]}' is given{hint}" if near else "")
        )
    for key, reason in rejected.items():
        if key in opts:
            raise ConfigError(reason)
    for key in sorted(k for k in opts if k.startswith(KAFKA_PREFIX) and k not in known):
        log.warning(
            "Kafka option '%s' is not used by %s; ignoring it%s", key, user, did_you_mean(key)
        )
    for key in sorted(
        k
        for k in opts
        if not k.startswith(KAFKA_PREFIX) and not is_registered(k) and k not in SPARK_PASSED
    ):
        log.warning(
            "Option '%s' is not an option of format('pykafka'); ignoring it, as Spark does%s",
            key,
            did_you_mean(key),
        )


def _check_general(opts: Mapping[str, str]) -> None:
    """Spark's ``validateGeneralOptions``: bootstrap servers given, rejected Kafka settings,
    and a warning for every option this source does not use."""
    check_kafka_options(opts, REJECTED, _KNOWN, client="consumer", user="format('pykafka')")
    if "groupidprefix" in opts:
        log.warning(
            "Option 'groupIdPrefix' has no effect in format('pykafka'): Spark uses it to name "
            "the consumer group of its internal consumers; this source joins no group unless "
            "'kafka.group.id' is set"
        )


def _check_offsets(
    starting: OffsetSpec, ending: OffsetSpec | None, subscription: Subscription, *, batch: bool
) -> None:
    """Spark's rules on start and end offsets (``validateBatchOptions``), and JSON offsets
    naming only assigned partitions."""
    if batch:
        if starting == "latest":
            raise ConfigError(
                "Option 'startingOffsets' can't be 'latest' for batch queries on Kafka"
            )
        if ending == "earliest":
            raise ConfigError(
                "Option 'endingOffsets' can't be 'earliest' for batch queries on Kafka"
            )
        if isinstance(starting, Mapping):
            for tp, off in starting.items():
                if off == LATEST:
                    raise ConfigError(
                        f"Option 'startingOffsets' for {tp} can't be latest (-1) for batch "
                        "queries on Kafka"
                    )
        if isinstance(ending, Mapping):
            for tp, off in ending.items():
                if off == EARLIEST:
                    raise ConfigError(
                        f"Option 'endingOffsets' for {tp} can't be earliest (-2) for batch "
                        "queries on Kafka"
                    )
    for label, spec in (("startingOffsets", starting), ("endingOffsets", ending)):
        if isinstance(spec, Mapping) and isinstance(subscription, Assign):
            extra = set(spec) - set(subscription.partitions)
            if extra:
                raise ConfigError(
                    f"Option '{label}' names partitions not in 'assign': {sorted(map(str, extra))}"
                )


def _check_trigger(options: SourceOptions) -> None:
    """Spark's ``validateStreamOptions``: ``minOffsetsPerTrigger`` at most
    ``maxOffsetsPerTrigger``."""
    low, high = options.min_offsets_per_trigger, options.max_offsets_per_trigger
    if low is not None and high is not None and low > high:
        raise ConfigError(
            f"The value of minOffsetsPerTrigger ({low}) is higher than the maxOffsetsPerTrigger "
            f"({high}): option 'minOffsetsPerTrigger' must not exceed 'maxOffsetsPerTrigger'"
        )


def parse_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Validate the options of one read, as Spark's ``KafkaSourceProvider`` does, once.

    Args:
        options: the options PySpark passed (any case; looked up lower-cased).
        streaming: ``True`` for ``readStream``, ``False`` for ``read``.

    Returns:
        The frozen :class:`SourceOptions`, consumer and group settings included.

    Raises:
        ConfigError: naming the option that is missing, malformed, not allowed, or in
            conflict with another.
    """
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    _check_general(opts)
    subscription = parse_subscription(opts)
    start_from_group = opts.get("startingoffsets", "").strip().lower() == GROUP_STARTING_OFFSETS
    if start_from_group:
        if not opts.get("kafka.group.id", "").strip():
            raise ConfigError(
                "Option 'startingOffsets'='group' needs 'kafka.group.id': it starts from the "
                "offsets that group committed"
            )
        opts["startingoffsets"] = "earliest"  # never used: the group's offsets decide
    strategy: Literal["error", "latest"] = _value(opts, "startingOffsetsByTimestampStrategy")
    starting = _offset_range_limit(
        opts,
        global_key="startingTimestamp",
        by_ts_key="startingOffsetsByTimestamp",
        offsets_key="startingOffsets",
        default="latest" if streaming else "earliest",
        strategy=strategy,
    )
    ending: OffsetSpec | None = None
    if streaming:
        for o in OPTIONS:
            if (
                o.key in opts
                and BATCH in o.scopes
                and STREAM not in o.scopes
                and o.key
                != (
                    "commitgroupoffsets"  # a group option: its own message below
                )
            ):
                raise ConfigError(f"Option '{o.name}' is not valid in streaming queries")
    else:
        ending = _offset_range_limit(
            opts,
            global_key="endingTimestamp",
            by_ts_key="endingOffsetsByTimestamp",
            offsets_key="endingOffsets",
            default="latest",
            strategy=strategy,
        )
    _check_offsets(starting, ending, subscription, batch=not streaming)
    kafka = {k[len(KAFKA_PREFIX) :]: v for k, v in opts.items() if k.startswith(KAFKA_PREFIX)}
    consumer = _consumer_settings(opts, kafka)
    parsed = SourceOptions(
        subscription=subscription,
        starting_offsets=starting,
        ending_offsets=ending,
        include_headers=_value(opts, "includeHeaders"),
        fail_on_data_loss=_value(opts, "failOnDataLoss"),
        consumer=consumer,
        max_offsets_per_trigger=_value(opts, "maxOffsetsPerTrigger"),
        min_offsets_per_trigger=_value(opts, "minOffsetsPerTrigger"),
        max_trigger_delay_ms=_value(opts, "maxTriggerDelay"),
        min_partitions=_value(opts, "minPartitions"),
        max_records_per_partition=_value(opts, "maxRecordsPerPartition"),
        poll_timeout_ms=_value(opts, "kafkaConsumer.pollTimeoutMs"),
        fetch_offset_num_retries=_value(opts, "fetchOffset.numRetries"),
        fetch_offset_retry_interval_ms=_value(opts, "fetchOffset.retryIntervalMs"),
        kafka_params=redact_options(kafka),  # secrets (jaas config, passwords) hidden
        group=_group_options(
            opts, consumer, subscription, streaming=streaming, start_from_group=start_from_group
        ),
        payload=parse_payload_options(opts),
        delegation_token=parse_token_options(opts, consumer.client),
    )
    if streaming:
        _check_trigger(parsed)
    return parsed


def include_headers(options: Mapping[str, str]) -> bool:
    """``includeHeaders`` of a read's options (for the schema, before the options are parsed).

    Raises:
        ConfigError: a value other than ``true``/``false``.
    """
    return bool(_value({str(k).lower(): str(v) for k, v in options.items()}, "includeHeaders"))
