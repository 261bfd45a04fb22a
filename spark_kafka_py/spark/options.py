"""Options of ``format("pykafka")``, validated once into a frozen :class:`SourceOptions`.

Option names and meanings follow Spark's built-in Kafka source (Structured Streaming + Kafka
Integration Guide, ``KafkaSourceProvider``): source options such as ``subscribe`` and
``startingOffsets`` are case-insensitive; ``kafka.``-prefixed options are Kafka consumer
settings. PySpark hands options to the data source with lower-cased keys
(``pyspark.sql.datasource.CaseInsensitiveDict``), so lookups here use lower case.

Everything a user can get wrong fails here, at ``load()`` or query start, with a
:class:`~spark_kafka_py.errors.ConfigError` naming the option.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from spark_kafka_py.client.security import (
    SECURITY_OPTIONS,
    parse_security_options,
    redact_options,
)
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.consumer.types import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    TopicPartition,
)
from spark_kafka_py.errors import ConfigError

log = logging.getLogger(__name__)

#: Offsets in ``startingOffsets``/``endingOffsets`` JSON meaning "earliest" and "latest",
#: as in Spark's Kafka source (``KafkaOffsetRangeLimit``).
EARLIEST = EARLIEST_TIMESTAMP
LATEST = LATEST_TIMESTAMP

_OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
_ASSIGN_EXAMPLE = '{"topicA":[0,1],"topicB":[2,4]}'

# Kafka consumer settings Spark's source rejects, with Spark's reasons
# (KafkaSourceProvider.validateGeneralOptions).
_REJECTED_KAFKA_PARAMS: dict[str, str] = {
    "auto.offset.reset": (
        "Kafka option 'auto.offset.reset' is not supported. Instead set the source option "
        "'startingOffsets' to 'earliest' or 'latest' to specify where to start. The source "
        "manages which offsets are consumed, and a query resumed from its checkpoint always "
        "picks up where it left off."
    ),
    "key.deserializer": (
        "Kafka option 'key.deserializer' is not supported as keys are returned as binary. "
        "Use DataFrame operations (e.g. CAST(key AS STRING)) to deserialize the keys."
    ),
    "value.deserializer": (
        "Kafka option 'value.deserializer' is not supported as values are returned as binary. "
        "Use DataFrame operations (e.g. CAST(value AS STRING), from_json) to deserialize values."
    ),
    "enable.auto.commit": (
        "Kafka option 'enable.auto.commit' is not supported. The source tracks offsets in "
        "Spark's checkpoint; with 'kafka.group.id' set it commits them to the group itself "
        "after each micro-batch."
    ),
    "interceptor.classes": (
        "Kafka option 'interceptor.classes' is not supported: there are no Java consumer "
        "interceptors in a Python client."
    ),
}

# Kafka consumer settings this source honours (see README, "Options").
_HONOURED_KAFKA_PARAMS = (
    frozenset(
        {
            "bootstrap.servers",
            "client.id",
            "request.timeout.ms",
            "socket.connection.setup.timeout.ms",
            "retry.backoff.ms",
            "reconnect.backoff.ms",
            "metadata.max.age.ms",
            "default.api.timeout.ms",
            "fetch.max.bytes",
            "max.partition.fetch.bytes",
            "fetch.min.bytes",
            "fetch.max.wait.ms",
            "isolation.level",
            "client.rack",
            "group.id",
            "security.protocol",
        }
    )
    | SECURITY_OPTIONS
)  # TLS and SASL: spark_kafka_py.client.security


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
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000


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
    poll_timeout_ms: int = 120_000
    fetch_offset_num_retries: int = 3
    fetch_offset_retry_interval_ms: int = 1000
    kafka_params: Mapping[str, str] = field(default_factory=dict)


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"Option '{name}' must be 'true' or 'false', got {raw!r}")


def _positive_int(
    raw: str | None, name: str, default: int | None, *, allow_zero: bool = False
) -> int | None:
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"Option '{name}' must be an integer, got {raw!r}") from None
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ConfigError(f"Option '{name}' must be {bound}, got {value}")
    return value


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
    if text.lower() in ("earliest", "latest"):
        return text.lower()  # type: ignore[return-value]
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
_TIME_UNITS_MS = {
    "us": 0.001,
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}


def parse_time_ms(raw: str, name: str) -> int:
    """A duration as Spark's ``Utils.timeStringAsMs``: ``"15m"``, ``"30s"``, ``"500ms"``,
    ``"1h"``, ``"2d"``, ``"100us"``; a bare number is milliseconds.

    Raises:
        ConfigError: naming ``name`` for anything else, or a negative duration.
    """
    match = re.fullmatch(r"\s*(-?\d+)\s*([a-z]*)\s*", str(raw).lower())
    if match is None or match.group(2) not in ("", *_TIME_UNITS_MS):
        raise ConfigError(
            f"Option '{name}' must be a duration like '15m', '30s' or '500ms', got {raw!r}"
        )
    value = int(match.group(1))
    if value < 0:
        raise ConfigError(f"Option '{name}' must not be negative, got {raw!r}")
    return int(value * _TIME_UNITS_MS.get(match.group(2) or "ms", 1))


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
        raw = opts[global_key.lower()].strip()
        try:
            ts = int(raw)
        except ValueError:
            raise ConfigError(
                f"Option '{global_key}' must be a timestamp in ms since the epoch, got {raw!r}"
            ) from None
        return ByTimestamp(everywhere=ts, strategy=strategy)
    if by_ts_key.lower() in opts:
        return ByTimestamp(
            per_partition=parse_timestamp_json(opts[by_ts_key.lower()], by_ts_key),
            strategy=strategy,
        )
    return parse_offset_spec(opts.get(offsets_key.lower(), default), offsets_key)


def _consumer_settings(kafka: Mapping[str, str]) -> ConsumerSettings:
    def num(key: str, default: int, *, allow_zero: bool = False) -> int:
        value = _positive_int(kafka.get(key), f"kafka.{key}", default, allow_zero=allow_zero)
        assert value is not None
        return value

    isolation = kafka.get("isolation.level", "read_uncommitted").strip().lower()
    if isolation not in ("read_uncommitted", "read_committed"):
        raise ConfigError(
            "Option 'kafka.isolation.level' must be 'read_uncommitted' or 'read_committed', "
            f"got {kafka['isolation.level']!r}"
        )
    return ConsumerSettings(
        bootstrap_servers=kafka["bootstrap.servers"],
        client_id=kafka.get("client.id", "spark-kafka-py"),
        request_timeout_ms=num("request.timeout.ms", 30_000),
        connect_timeout_ms=num("socket.connection.setup.timeout.ms", 10_000),
        retry_backoff_ms=num("retry.backoff.ms", 100, allow_zero=True),
        reconnect_backoff_ms=num("reconnect.backoff.ms", 50, allow_zero=True),
        metadata_max_age_ms=num("metadata.max.age.ms", 300_000),
        default_api_timeout_ms=num("default.api.timeout.ms", 60_000),
        fetch_max_bytes=num("fetch.max.bytes", 52_428_800),
        max_partition_fetch_bytes=num("max.partition.fetch.bytes", 1_048_576),
        fetch_min_bytes=num("fetch.min.bytes", 1, allow_zero=True),
        fetch_max_wait_ms=num("fetch.max.wait.ms", 500, allow_zero=True),
        isolation_level=READ_COMMITTED if isolation == "read_committed" else READ_UNCOMMITTED,
        client_rack=kafka.get("client.rack", ""),
        group_id=kafka.get("group.id"),
        security=parse_security_options(kafka),
    )


def parse_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Validate the options of one read, as Spark's ``KafkaSourceProvider`` does.

    Args:
        options: the options PySpark passed (keys lower-cased).
        streaming: ``True`` for ``readStream``, ``False`` for ``read``.

    Raises:
        ConfigError: naming the option that is missing, malformed, or not allowed.
    """
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    kafka = {k[len("kafka.") :]: v for k, v in opts.items() if k.startswith("kafka.")}
    if not kafka.get("bootstrap.servers", "").strip():
        raise ConfigError(
            "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"
        )
    for key, reason in _REJECTED_KAFKA_PARAMS.items():
        if key in kafka:
            raise ConfigError(reason)
    if "groupidprefix" in opts:
        log.warning(
            "Option 'groupIdPrefix' has no effect in format('pykafka'): Spark uses it to name "
            "the consumer group of its internal consumers; this source joins no group unless "
            "'kafka.group.id' is set"
        )
    for key in sorted(set(kafka) - _HONOURED_KAFKA_PARAMS):
        log.warning("Kafka option 'kafka.%s' is not used by format('pykafka'); ignoring it", key)

    subscription = parse_subscription(opts)
    raw_strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if raw_strategy not in ("error", "latest"):
        raise ConfigError(
            "Option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', got "
            f"{opts['startingoffsetsbytimestampstrategy']!r}"
        )
    strategy: Literal["error", "latest"] = "latest" if raw_strategy == "latest" else "error"
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
        for key in ("endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp"):
            if key.lower() in opts:
                raise ConfigError(f"Option '{key}' is not valid in streaming queries")
    else:
        ending = _offset_range_limit(
            opts,
            global_key="endingTimestamp",
            by_ts_key="endingOffsetsByTimestamp",
            offsets_key="endingOffsets",
            default="latest",
            strategy=strategy,
        )
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
    for name in ("startingoffsets", "endingoffsets"):
        spec = starting if name == "startingoffsets" else ending
        if isinstance(spec, Mapping) and isinstance(subscription, Assign):
            extra = set(spec) - set(subscription.partitions)
            if extra:
                label = "startingOffsets" if name == "startingoffsets" else "endingOffsets"
                raise ConfigError(
                    f"Option '{label}' names partitions not in 'assign': {sorted(map(str, extra))}"
                )

    return SourceOptions(
        subscription=subscription,
        starting_offsets=starting,
        ending_offsets=ending,
        include_headers=_bool(opts, "includeHeaders", False),
        fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
        consumer=_consumer_settings(kafka),
        max_offsets_per_trigger=_positive_int(
            opts.get("maxoffsetspertrigger"), "maxOffsetsPerTrigger", None
        ),
        min_offsets_per_trigger=_positive_int(
            opts.get("minoffsetspertrigger"), "minOffsetsPerTrigger", None
        ),
        max_trigger_delay_ms=parse_time_ms(opts["maxtriggerdelay"], "maxTriggerDelay")
        if "maxtriggerdelay" in opts
        else DEFAULT_MAX_TRIGGER_DELAY_MS,
        min_partitions=_positive_int(opts.get("minpartitions"), "minPartitions", None),
        max_records_per_partition=_positive_int(
            opts.get("maxrecordsperpartition"), "maxRecordsPerPartition", None
        ),
        poll_timeout_ms=_positive_int(
            opts.get("kafkaconsumer.polltimeoutms"), "kafkaConsumer.pollTimeoutMs", 120_000
        )
        or 120_000,
        fetch_offset_num_retries=_positive_int(
            opts.get("fetchoffset.numretries"), "fetchOffset.numRetries", 3
        )
        or 3,
        fetch_offset_retry_interval_ms=_positive_int(
            opts.get("fetchoffset.retryintervalms"),
            "fetchOffset.retryIntervalMs",
            1000,
            allow_zero=True,
        )
        or 0,
        kafka_params=redact_options(kafka),  # secrets (jaas config, passwords) hidden
    )
