"""The option registry: every option a user passes to ``format("pykafka")``, in one table.

Each :class:`Option` has the name users write (Spark's source options in Spark's spelling, Kafka
client settings with the ``kafka.`` prefix and the Java client's name), its type, default, unit,
where it applies (:data:`BATCH`, :data:`STREAM`, :data:`GROUP`, :data:`SECURITY`), how it
relates to Spark's built-in ``format("kafka")``, and the validator that turns the text Spark
hands over into a value. Names, meanings and defaults follow Spark's Structured Streaming + Kafka
Integration Guide (``KafkaSourceProvider``) and the Java clients' ``ConsumerConfig`` /
``CommonClientConfigs``.

This module sits below the consumer, producer and Spark layers: the consumer, producer and
group configurations take their defaults from it (:func:`default`); the client layer's defaults
are defined in :mod:`spark_kafka_py.client_defaults` and read from there, the Spark layer parses a
read's options through it once (:mod:`spark_kafka_py.spark.options`), and the README's option
table is generated from it (:func:`markdown_table`; ``python -m spark_kafka_py.registry
README.md`` rewrites it, and a test fails when it drifts).

Options whose value is a structure (``assign``, JSON offsets, ...) are registered here with the
kind of text they take; their structure is parsed where its types live
(:mod:`spark_kafka_py.spark.options`).
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_kafka_py import client_defaults as _client
from spark_kafka_py.errors import ConfigError

__all__ = [
    "BATCH",
    "GROUP",
    "OPTIONS",
    "REJECTED",
    "SECURITY",
    "SINK",
    "SINK_REJECTED",
    "STREAM",
    "Option",
    "default",
    "kafka_settings",
    "markdown_table",
    "option",
    "parse_time_ms",
]

#: Where an option applies: batch reads (``spark.read``), streaming reads (``readStream``),
#: consumer-group membership and commits (with ``kafka.group.id``), TLS/SASL connections,
#: writes (``df.write`` and ``writeStream``: the sink and its producer).
BATCH = "batch"
STREAM = "stream"
GROUP = "group"
SECURITY = "security"
SINK = "sink"
READ = frozenset({BATCH, STREAM})
#: Client settings shared by reads and writes.
CLIENT = frozenset({BATCH, STREAM, SINK})
#: Payload format and schema registry options: reads and writes.
FORMATS = CLIENT

#: Prefix of the Kafka client settings among the options (Spark's ``kafka.`` convention).
KAFKA_PREFIX = "kafka."

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
    ``"1h"``, ``"2d"``, ``"100us"``; a bare number is milliseconds. Returns ms.

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


@dataclass(frozen=True)
class Option:
    """One option of ``format("pykafka")``.

    Attributes:
        name: as users write it (``startingOffsets``, ``kafka.fetch.max.bytes``); looked up
            case-insensitively, as PySpark lower-cases option keys.
        kind: the text it takes: ``string``, ``boolean``, ``int`` (with ``minimum``),
            ``timestamp`` (ms since the epoch), ``duration`` (Spark time string, parsed to ms),
            ``enum`` (one of ``choices``, case-insensitive, parsed to lower case), ``list``
            (comma-separated), ``regex``, ``json``, ``offsets`` (``earliest``/``latest``/JSON)
            or ``password`` (a secret: hidden in plans and logs).
        default: the parsed default, or ``None`` when unset by default.
        doc: one line for the README table.
        scopes: where it applies (:data:`BATCH`, :data:`STREAM`, :data:`GROUP`,
            :data:`SECURITY`).
        unit: ``ms``, ``bytes``, ``records``, ``tasks`` or ``""``.
        minimum: the smallest accepted ``int``.
        choices: the accepted ``enum`` values (lower case).
        required: the read fails without it.
        default_text: how the README shows the default when it is not just ``default``.
        spark: how it relates to Spark's ``format("kafka")``: ``same`` (same meaning, compared
            by the conformance suite where docs/parity.md says so), ``ours only`` (Spark's
            source has no such option), or ``no effect``.
        secret: its value is secret (hidden by :func:`spark_kafka_py.client.security.
            redact_options`).
    """

    name: str
    kind: str
    default: Any
    doc: str
    scopes: frozenset[str]
    unit: str = ""
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    default_text: str | None = None
    spark: str = "same"
    secret: bool = False
    _parse: Callable[[str], Any] | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        """The lower-case key PySpark hands the option under."""
        return self.name.lower()

    @property
    def kafka_name(self) -> str:
        """The Java client's setting name (``fetch.max.bytes``); ``""`` for source options."""
        return self.name[len(KAFKA_PREFIX) :] if self.name.startswith(KAFKA_PREFIX) else ""

    def parse(self, raw: object) -> Any:
        """Validate one value given as text.

        Raises:
            ConfigError: naming the option, for a value of the wrong kind or out of range.
        """
        text = str(raw)
        kind = self.kind
        if kind == "boolean":
            low = text.strip().lower()
            if low in ("true", "false"):
                return low == "true"
            raise ConfigError(f"Option '{self.name}' must be 'true' or 'false', got {raw!r}")
        if kind == "int":
            try:
                value = int(text.strip())
            except ValueError:
                raise ConfigError(f"Option '{self.name}' must be an integer, got {raw!r}") from None
            if self.minimum is not None and value < self.minimum:
                bound = {0: "non-negative", 1: "positive"}.get(self.minimum)
                raise ConfigError(
                    f"Option '{self.name}' must be {bound}, got {value}"
                    if bound
                    else f"Option '{self.name}' must be at least {self.minimum}, got {value}"
                )
            return value
        if kind == "timestamp":
            try:
                return int(text.strip())
            except ValueError:
                raise ConfigError(
                    f"Option '{self.name}' must be a timestamp in ms since the epoch, got {raw!r}"
                ) from None
        if kind == "duration":
            return parse_time_ms(text, self.name)
        if kind == "enum":
            low = text.strip().lower()
            if low in self.choices:
                return low
            quoted = [f"'{c}'" for c in self.choices]
            allowed = " or ".join(quoted) if len(quoted) == 2 else "one of " + ", ".join(quoted)
            raise ConfigError(f"Option '{self.name}' must be {allowed}, got {raw!r}")
        return text  # string, list, regex, json, offsets, password: parsed by their user

    def read(self, options: Mapping[str, str]) -> Any:
        """The parsed value in ``options`` (keys lower-cased), or :attr:`default`."""
        raw = options.get(self.key)
        return self.default if raw is None else self.parse(raw)


def _opt(name: str, kind: str, default: Any, doc: str, scopes: Iterable[str], **kw: Any) -> Option:
    return Option(name, kind, default, doc, frozenset(scopes), **kw)


_STORE_TYPE_DEFAULT = "from the file name (`.pem`, `.p12`), else `JKS`"

#: Every option, in the order of the README table.
# fmt: off
OPTIONS: tuple[Option, ...] = (
    # -- where to read ---------------------------------------------------------------------
    _opt("kafka.bootstrap.servers", "list", None, "`host:port,...` of the brokers to start from",
         CLIENT, required=True, default_text="required"),
    _opt("subscribe", "list", None, "comma-separated topics; an unknown topic fails naming it",
         READ, default_text="one of the three"),
    _opt("subscribePattern", "regex", None,
         "topics whose whole name matches (like Java's `matches()`); internal topics never match",
         READ, default_text="one of the three"),
    _opt("assign", "json", None, 'topic-partitions, JSON `{"topicA":[0,1]}`', READ,
         default_text="one of the three"),
    # -- where to start and end ------------------------------------------------------------
    _opt("startingOffsets", "offsets", None,
         '`earliest`, `latest`, JSON `{"t":{"0":23,"1":-2}}` (-2 earliest, -1 latest; every '
         "partition named), or `group` (the group's committed offsets); batch rejects `latest`",
         READ, default_text="streaming `latest`, batch `earliest`"),
    _opt("endingOffsets", "offsets", "latest", "`latest` or JSON (-1 latest); `earliest` rejected",
         {BATCH}),
    _opt("startingOffsetsByTimestamp", "json", None,
         'JSON `{"t":{"0":1700000000000}}` naming every partition; wins over `startingOffsets`',
         READ, unit="ms"),
    _opt("startingTimestamp", "timestamp", None,
         "one timestamp for every partition; wins over the two above", READ, unit="ms"),
    _opt("startingOffsetsByTimestampStrategy", "enum", "error",
         "a partition with no record at or after its start timestamp fails (`error`) or starts "
         "at the latest offset (`latest`)", READ, choices=("error", "latest")),
    _opt("endingOffsetsByTimestamp", "json", None,
         "JSON as above; a timestamp past the last record ends at the latest offset", {BATCH},
         unit="ms"),
    _opt("endingTimestamp", "timestamp", None,
         "one timestamp for every partition; wins over the two above", {BATCH}, unit="ms"),
    # -- what to return and how to react -----------------------------------------------------
    _opt("includeHeaders", "boolean", False, "add the `headers` column", READ),
    _opt("failOnDataLoss", "boolean", True,
         "fail naming the topic-partition and the missing offsets (`true`) or warn and skip to "
         "what is still there (`false`)", READ),
    # -- how much per micro-batch and per task --------------------------------------------------
    _opt("maxOffsetsPerTrigger", "int", None,
         "records per micro-batch, split across partitions by backlog (also with AvailableNow)",
         {STREAM}, unit="records", minimum=1),
    _opt("minOffsetsPerTrigger", "int", None,
         "a micro-batch waits for this many new records or `maxTriggerDelay`; at most "
         "`maxOffsetsPerTrigger`; AvailableNow ignores it", {STREAM}, unit="records", minimum=1),
    _opt("maxTriggerDelay", "duration", 15 * 60 * 1000,
         "Spark time string (`15m`, `30s`, `500ms`): the longest wait for `minOffsetsPerTrigger`",
         {STREAM}, unit="ms", default_text="`15m`"),
    _opt("minPartitions", "int", None,
         "split offset ranges into at least about this many Spark tasks", READ, unit="tasks",
         minimum=1),
    _opt("maxRecordsPerPartition", "int", None,
         "split every range above this many records (Spark 4.1's rule)", READ, unit="records",
         minimum=1),
    _opt("kafkaConsumer.pollTimeoutMs", "int", _client.POLL_TIMEOUT_MS,
         "how long an executor retries a range without progress", READ, unit="ms", minimum=1),
    _opt("maxDecompressionRatio", "int", _client.MAX_DECOMPRESSION_RATIO,
         "a partition's Fetch response may decompress to this many times the bytes it could "
         "carry (`kafka.max.partition.fetch.bytes`, or what came if more); past that the read "
         "fails naming the topic-partition and offset",
         READ, minimum=1, spark="ours only"),
    _opt("fetchOffset.numRetries", "int", 3,
         "driver retries of ListOffsets errors the broker marks retriable", READ, minimum=1),
    _opt("fetchOffset.retryIntervalMs", "int", 1000, "pause between those retries", READ,
         unit="ms", minimum=0),
    _opt("groupIdPrefix", "string", None,
         "no effect (a warning says so): without `kafka.group.id` no group is used", READ,
         spark="no effect"),
    # -- consumer groups ----------------------------------------------------------------------
    _opt("kafka.group.id", "string", None,
         "join this consumer group (streaming) and commit processed offsets to it",
         {BATCH, STREAM, GROUP}, spark="ours only"),
    _opt("groupOffsetsFallback", "enum", "earliest",
         "where partitions without a committed offset start", {GROUP},
         choices=("earliest", "latest"), spark="ours only"),
    _opt("commitGroupOffsets", "boolean", False,
         "batch reads: commit the end offsets read to the group", {GROUP, BATCH},
         spark="ours only"),
    _opt("kafka.group.instance.id", "string", None, "static membership (KIP-345)", {GROUP},
         spark="ours only"),
    _opt("kafka.group.protocol", "enum", "classic",
         "streaming: `classic` (JoinGroup/SyncGroup) or `consumer` (KIP-848, Kafka 4.0+ brokers; "
         "the coordinator assigns, heartbeat and session timeout come from the broker)", {GROUP},
         choices=("classic", "consumer"), spark="ours only"),
    _opt("kafka.group.remote.assignor", "enum", None,
         "with `kafka.group.protocol=consumer`: the coordinator's assignor (`uniform`, `range`)",
         {GROUP}, choices=("uniform", "range"), default_text="the broker's", spark="ours only"),
    _opt("kafka.session.timeout.ms", "int", 45_000,
         "a member without heartbeats this long is removed", {GROUP}, unit="ms", minimum=1,
         spark="ours only"),
    _opt("kafka.heartbeat.interval.ms", "int", 3_000,
         "heartbeat interval; must be below `kafka.session.timeout.ms`", {GROUP}, unit="ms",
         minimum=1, spark="ours only"),
    _opt("kafka.max.poll.interval.ms", "int", 300_000,
         "the JoinGroup rebalance timeout", {GROUP}, unit="ms", minimum=1, spark="ours only"),
    _opt("kafka.partition.assignment.strategy", "list", "range",
         "assignors, preferred first: `range`, `roundrobin`, `cooperative-sticky` (or their Java "
         "class names)", {GROUP}, spark="ours only"),
    # -- Kafka client settings ------------------------------------------------------------------
    _opt("kafka.client.id", "string", _client.CLIENT_ID, "sent in every request header", CLIENT),
    _opt("kafka.client.rack", "string", _client.CLIENT_RACK,
         "sent with every Fetch: read from the preferred replica the leader names (KIP-392)",
         READ, default_text="none"),
    _opt("kafka.request.timeout.ms", "int", _client.REQUEST_TIMEOUT_MS,
         "bound on one request's round trip", CLIENT, unit="ms", minimum=1),
    _opt("kafka.socket.connection.setup.timeout.ms", "int",
         _client.SOCKET_CONNECTION_SETUP_TIMEOUT_MS, "bound on opening one connection", CLIENT,
         unit="ms", minimum=1),
    _opt("kafka.default.api.timeout.ms", "int", _client.DEFAULT_API_TIMEOUT_MS,
         "how long the driver retries while brokers are unreachable (Metadata, ListOffsets, "
         "group requests)", READ, unit="ms", minimum=1),
    _opt("kafka.retry.backoff.ms", "int", _client.RETRY_BACKOFF_MS,
         "pause before retrying a failed request; the driver's retries double it up to 1 s",
         CLIENT, unit="ms", minimum=0),
    _opt("kafka.reconnect.backoff.ms", "int", _client.RECONNECT_BACKOFF_MS,
         "pause before reconnecting to a broker that just failed", CLIENT, unit="ms", minimum=0),
    _opt("kafka.metadata.max.age.ms", "int", _client.METADATA_MAX_AGE_MS,
         "cached cluster metadata older than this is refreshed", CLIENT, unit="ms", minimum=1),
    _opt("kafka.fetch.max.bytes", "int", _client.FETCH_MAX_BYTES, "Fetch response bound", READ,
         unit="bytes", minimum=1),
    _opt("kafka.max.partition.fetch.bytes", "int", _client.MAX_PARTITION_FETCH_BYTES,
         "Fetch bound per partition", READ, unit="bytes", minimum=1),
    _opt("kafka.fetch.min.bytes", "int", _client.FETCH_MIN_BYTES,
         "Fetch waits for this much data", READ, unit="bytes", minimum=0),
    _opt("kafka.fetch.max.wait.ms", "int", _client.FETCH_MAX_WAIT_MS, "or this long", READ,
         unit="ms", minimum=0),
    _opt("kafka.isolation.level", "enum", "read_uncommitted",
         "`read_committed` reads up to the last stable offset and drops aborted transactions",
         READ, choices=("read_uncommitted", "read_committed")),
    _opt("kafka.check.crcs", "boolean", _client.CHECK_CRCS,
         "compare each fetched batch's CRC with its bytes (Java `check.crcs`); `false` saves "
         "that time but gives up detecting on-the-wire or on-disk corruption (bounds and "
         "layout checks stay)", READ),
    # -- writing (df.write / writeStream; see docs/sink.md) -----------------------------------
    _opt("topic", "string", None,
         "write every row to this topic; overrides the `topic` column (required without one)",
         {SINK}),
    _opt("deliveryGuarantee", "enum", "at-least-once",
         "`at-least-once` (as Spark's sink) or `exactly-once`: each micro-batch's rows become "
         "visible to `read_committed` readers once, at Spark's commit (streaming writes)",
         {SINK}, choices=("at-least-once", "exactly-once"), spark="ours only"),
    _opt("transactionalIdPrefix", "string", None,
         "required for `exactly-once`: tasks write in transactions `<prefix>-<task partition>`; "
         "stable across restarts of a query, never shared by two queries", {SINK},
         spark="ours only"),
    _opt("commitLogTopic", "string", "spark-kafka-py-commits",
         "`exactly-once`: compacted topic where the driver records the micro-batch it commits "
         "(created if missing, replicated `min(3, brokers)`; a topic not `compact` is refused)",
         {SINK}, spark="ours only"),
    _opt("recoverPartialBatch", "int", None,
         "`exactly-once`: the micro-batch a restart reports as part visible (the driver died "
         "mid-commit and stayed down past the transaction timeout): its replay commits only the "
         "tasks whose transactions were lost", {SINK}, minimum=0, spark="ours only"),
    _opt("kafka.acks", "enum", "all",
         "`all` (`-1`): the leader waits for the in-sync replicas; `1`: the leader only; `0`: "
         "no response", {SINK}, choices=("all", "-1", "0", "1")),
    _opt("kafka.enable.idempotence", "boolean", _client.ENABLE_IDEMPOTENCE,
         "producer id and sequence numbers (KIP-98): a retried Produce never duplicates or "
         "reorders; needs `acks=all`", {SINK}),
    _opt("kafka.compression.type", "enum", "none", "`none`, `gzip`, `snappy`, `lz4` or `zstd`",
         {SINK}, choices=("none", "gzip", "snappy", "lz4", "zstd")),
    _opt("kafka.compression.gzip.level", "int", -1, "1..9, -1 for zlib's default (KIP-390)",
         {SINK}, minimum=-1),
    _opt("kafka.compression.lz4.level", "int", 9, "1..17 (KIP-390)", {SINK}, minimum=1),
    _opt("kafka.compression.zstd.level", "int", 3, "-131072..22 (KIP-390)", {SINK},
         minimum=-131072),
    _opt("kafka.batch.size", "int", _client.BATCH_SIZE,
         "a partition's records are sent in batches of up to this many bytes", {SINK},
         unit="bytes", minimum=0),
    _opt("kafka.linger.ms", "int", _client.LINGER_MS,
         "a batch not full waits this long for more records", {SINK}, unit="ms", minimum=0),
    _opt("kafka.buffer.memory", "int", _client.BUFFER_MEMORY,
         "bytes of batches an executor's producer holds before writing blocks", {SINK},
         unit="bytes", minimum=0),
    _opt("kafka.max.block.ms", "int", _client.MAX_BLOCK_MS,
         "how long writing blocks on a full buffer or missing metadata before it fails",
         {SINK}, unit="ms", minimum=0),
    _opt("kafka.max.request.size", "int", _client.MAX_REQUEST_SIZE,
         "largest Produce request; a larger record fails with RECORD_TOO_LARGE", {SINK},
         unit="bytes", minimum=1),
    _opt("kafka.max.in.flight.requests.per.connection", "int",
         _client.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
         "Produce requests sent before the first is answered (at most 5 with idempotence)",
         {SINK}, minimum=1),
    _opt("kafka.delivery.timeout.ms", "int", _client.DELIVERY_TIMEOUT_MS,
         "a record not acknowledged this long after it was written fails the task", {SINK},
         unit="ms", minimum=0),
    _opt("kafka.retries", "int", _client.RETRIES,
         "retries of a failed Produce, within `kafka.delivery.timeout.ms`", {SINK}, minimum=0),
    _opt("kafka.transaction.timeout.ms", "int", _client.TRANSACTION_TIMEOUT_MS,
         "`exactly-once`: a micro-batch's transactions are aborted by the broker if not "
         "committed within this long of their first write; more than the broker's "
         "`transaction.max.timeout.ms` fails at query start", {SINK}, unit="ms", minimum=1,
         default_text="the broker's `transaction.max.timeout.ms` (15 min by default)"),
    _opt("kafka.partitioner.ignore.keys", "boolean", False,
         "spread keyed records as unkeyed ones instead of by `murmur2(key)` (KIP-794)", {SINK}),
    # -- payload formats: Avro, a schema registry (spark_kafka_py.spark.payload; docs/formats.md)
    _opt("valueFormat", "enum", "binary",
         "`binary` (Spark's schema), `avro`: the `value` column is the Avro schema's struct "
         "(read: decoded on the executors; write: encoded, registry-framed), `json`: the "
         "`valueSchema` struct (or the registry's JSON Schema), as `from_json` (read), "
         "`to_json`'s text (write; registry-framed with `schema.registry.url`), or `protobuf`: "
         "the message's struct as spark-protobuf's `from_protobuf` maps it", FORMATS,
         choices=("binary", "avro", "json", "protobuf"), spark="ours only"),
    _opt("keyFormat", "enum", "binary", "the same for the `key` column", FORMATS,
         choices=("binary", "avro", "json", "protobuf"), spark="ours only"),
    _opt("mode", "enum", None,
         "a record that does not decode: `FAILFAST` fails the task naming topic, partition, "
         "offset and schema id; `PERMISSIVE` gives a null column (spark-avro's `mode`; for "
         "`json`, `from_json`'s: the fields that did not parse are null and "
         "`columnNameOfCorruptRecord` holds the document)", READ,
         choices=("failfast", "permissive"),
         default_text="`FAILFAST` for `avro` and `protobuf`, `PERMISSIVE` for `json` (as "
                      "`from_json`)",
         spark="ours only"),
    _opt("valueSchema", "string", None,
         "`valueFormat=json`: the value's struct as Spark DDL (`a INT, b STRUCT<c: STRING>`) or "
         "as `StructType.json()` prints it, the schema `from_json` would be given", READ,
         spark="ours only"),
    _opt("keySchema", "string", None, "the same for the key (`keyFormat=json`)", READ,
         spark="ours only"),
    _opt("columnNameOfCorruptRecord", "string", "_corrupt_record",
         "`json`, `PERMISSIVE`: the string field of the schema that holds a malformed "
         "document's text (`from_json`'s option)", READ, spark="ours only"),
    # -- from_json's options (valueFormat/keyFormat json; both columns, reads) -------------------
    _opt("timestampFormat", "string", None,
         "`json`: a Spark datetime pattern for timestamp strings (`yyyy-MM-dd HH:mm:ss.SSS`, "
         "`dd/MM/yyyy`, `'T'`, `[.SSS]`, `XXX`, `VV`; docs/formats.md lists the letters read, "
         "others are refused naming the letter); unset: Spark's ISO 8601 forms "
         "(`stringToTimestamp`) (`from_json`'s option)", READ,
         default_text="none (ISO 8601 forms)", spark="ours only"),
    _opt("dateFormat", "string", None,
         "`json`: the same for date strings; unset: `stringToDate`'s forms (`from_json`'s "
         "option)", READ, default_text="none (`yyyy-[m]m-[d]d` forms)", spark="ours only"),
    _opt("timeZone", "string", "UTC",
         "`json`: the zone of timestamp strings without one: a region (`Europe/Paris`), "
         "`+hh:mm`, `UTC`/`GMT`, Java's short ids (`PST`); Spark's default, the session zone, "
         "is not known to the executors here: set it to match (`from_json`'s option)", READ,
         spark="ours only"),
    _opt("enableDateTimeParsingFallback", "boolean", None,
         "`json`: a timestamp or date string the format does not match is tried with Spark's "
         "ISO 8601 forms (and a date as an integer of days) (`from_json`'s option)", READ,
         default_text="`true` for a type without a format", spark="ours only"),
    _opt("allowComments", "boolean", False,
         "`json`: `/* */` and `//` comments in documents (Jackson's feature, `from_json`'s "
         "option)", READ, spark="ours only"),
    _opt("allowUnquotedFieldNames", "boolean", False,
         "`json`: names without quotes (Java identifier characters) (`from_json`'s option)",
         READ, spark="ours only"),
    _opt("allowSingleQuotes", "boolean", True,
         "`json`: names and strings in single quotes (`from_json`'s option)", READ,
         spark="ours only"),
    _opt("allowNumericLeadingZeros", "boolean", False,
         "`json`: numbers with leading zeros (`007`) (`from_json`'s option)", READ,
         spark="ours only"),
    _opt("allowNonNumericNumbers", "boolean", True,
         "`json`: the tokens `NaN`, `Infinity`, `+Infinity`, `-Infinity`, `+INF`, `-INF`, and "
         "those strings in double fields (`from_json`'s option)", READ, spark="ours only"),
    _opt("allowBackslashEscapingAnyCharacter", "boolean", False,
         "`json`: `\\x` is `x` for any character (`from_json`'s option)", READ,
         spark="ours only"),
    _opt("allowUnquotedControlChars", "boolean", False,
         "`json`: characters below U+0020 unescaped inside strings (`from_json`'s option)",
         READ, spark="ours only"),
    _opt("locale", "string", "en-US",
         "`json`: the locale of month names in `timestampFormat`/`dateFormat`; only `en-US` "
         "is read here (`from_json`'s option)", READ, spark="ours only"),
    _opt("timestampNTZFormat", "string", None,
         "`json`: a Spark datetime pattern for `TIMESTAMP_NTZ` strings (a pattern that "
         "parses a zone is refused per value); unset: Spark's ISO 8601 local forms "
         "(`stringToTimestampWithoutTimeZone`); no fallback, as Spark "
         "(`from_json`'s option)", READ, spark="ours only"),
    *(
        _opt(name, "string", None,
             f"`json`: accepted, not used: {why} (`from_json`'s option)", READ,
             spark="no effect", default_text=default)
        for name, why, default in (
            ("primitivesAsString", "schema inference only; the schema is given", "`false`"),
            ("prefersDecimal", "schema inference only; the schema is given", "`false`"),
            ("samplingRatio", "schema inference only; the schema is given", "`1.0`"),
            ("dropFieldIfAllNull", "schema inference only; the schema is given", "`false`"),
            ("multiLine", "for files; a record's value is one document", "`false`"),
            ("lineSep", "for files; a record's value is one document", "none"),
            ("encoding", "for files; values are read as UTF-8", "none"),
        )
    ),
    _opt("includeRawBytes", "boolean", False,
         "add `value_raw` (and `key_raw`) binary columns holding each formatted column's bytes "
         "as read (what `PERMISSIVE` left null stays there)", READ, spark="ours only"),
    _opt("avroSchema", "json", None,
         "the value's Avro schema as JSON: the reader schema (read), the writer schema (write); "
         "without `schema.registry.url` values are plain Avro, as spark-avro's (a write "
         "without it derives the schema from the column's type)", FORMATS,
         spark="ours only"),
    _opt("key.avroSchema", "json", None, "the same for the key", FORMATS, spark="ours only"),
    _opt("messageName", "string", None,
         "`valueFormat=protobuf`: the message (full name `pkg.Msg`, or without the package), "
         "spark-protobuf's `messageName`; needed without `schema.registry.url`, else it picks "
         "the message of the subject's schema (default: its first)", FORMATS,
         spark="ours only"),
    _opt("key.messageName", "string", None, "the same for the key", FORMATS,
         spark="ours only"),
    _opt("descFilePath", "string", None,
         "`valueFormat=protobuf`: path of a binary `FileDescriptorSet` (`protoc "
         "--include_imports --descriptor_set_out`), spark-protobuf's `descFilePath`; read on "
         "the driver", FORMATS, spark="ours only"),
    _opt("key.descFilePath", "string", None, "the same for the key", FORMATS,
         spark="ours only"),
    _opt("descriptorSet", "string", None,
         "`valueFormat=protobuf`: the same `FileDescriptorSet`, base64 (spark-protobuf's "
         "`binaryDescriptorSet`)", FORMATS, spark="ours only"),
    _opt("key.descriptorSet", "string", None, "the same for the key", FORMATS,
         spark="ours only"),
    _opt("emit.default.values", "boolean", False,
         "`protobuf`: a proto3 field absent from the payload reads as its type's zero, not null "
         "(spark-protobuf's option)", READ, spark="ours only"),
    _opt("enums.as.ints", "boolean", False,
         "`protobuf`: enums as their numbers (integer), not names (spark-protobuf's option)",
         READ, spark="ours only"),
    _opt("upcast.unsigned.ints", "boolean", False,
         "`protobuf`: `uint32` as long, `uint64` as decimal(20,0) (spark-protobuf's option)",
         READ, spark="ours only"),
    _opt("unwrap.primitive.wrapper.types", "boolean", False,
         "`protobuf`: `google.protobuf.*Value` wrappers as their value, not a struct "
         "(spark-protobuf's option)", READ, spark="ours only"),
    _opt("retain.empty.message.types", "boolean", False,
         "`protobuf`: a message with no field is kept as a struct with one dummy string field "
         "(spark-protobuf's option)", READ, spark="ours only"),
    _opt("recursive.fields.max.depth", "int", -1,
         "`protobuf`: a recursive field is refused (-1, 0) or kept this many levels (1..10) "
         "(spark-protobuf's option)", READ, minimum=-1, spark="ours only"),
    _opt("convert.any.fields.to.json", "boolean", False,
         "`protobuf`: a `google.protobuf.Any` reads as the JSON text protobuf-java's printer "
         "gives it (a type not in the descriptor set: a bad record); `false` reads it as a "
         "struct of `type_url`, `value` (spark-protobuf's option)", READ, spark="ours only"),
    _opt("value.schema.id", "int", None,
         "the value's schema by registry id (reader schema on read, writer schema on write)",
         FORMATS, minimum=0, spark="ours only"),
    _opt("key.schema.id", "int", None, "the same for the key", FORMATS, minimum=0,
         spark="ours only"),
    _opt("value.schema.version", "int", None,
         "the value's schema by version of its subject (read: else the latest; write: "
         "encode with it)", FORMATS, minimum=1,
         spark="ours only"),
    _opt("key.schema.version", "int", None, "the same for the key", FORMATS, minimum=1,
         spark="ours only"),
    _opt("value.subject.name.strategy", "string", "TopicNameStrategy",
         "the value's subject: `TopicNameStrategy` (`<topic>-value`), `RecordNameStrategy` "
         "(the record's full name) or `TopicRecordNameStrategy` (`<topic>-<record name>`); "
         "Confluent's class names are accepted too", FORMATS,
         spark="ours only"),
    _opt("key.subject.name.strategy", "string", "TopicNameStrategy",
         "the same for the key (`<topic>-key`)", FORMATS,
         spark="ours only"),
    _opt("auto.register.schemas", "boolean", True,
         "write: register the column's schema (`avroSchema`, else derived from the column's "
         "type as spark-avro's `to_avro`; for `json` the JSON Schema derived from the type) "
         "under the subject, as Confluent's serializer; "
         "`false`: it must be registered already", {SINK},
         spark="ours only"),
    _opt("use.latest.version", "boolean", False,
         "write: encode with the subject's latest schema (or `value.schema.version`); "
         "turns `auto.register.schemas` off unless it is set (then it must be `false`)",
         {SINK}, spark="ours only"),
    _opt("schema.registry.url", "list", None,
         "registry base URLs, comma-separated (Confluent-compatible API); credentials in a URL "
         "are hidden", FORMATS, spark="ours only"),
    _opt("schema.registry.basic.auth.credentials.source", "enum", "USER_INFO",
         "`USER_INFO` (the next option) or `URL` (`user:password@` in the URL)", FORMATS,
         choices=("user_info", "url"), default_text="`USER_INFO`", spark="ours only"),
    _opt("schema.registry.basic.auth.user.info", "password", None,
         "`user:password` for HTTP basic authentication (also read as "
         "`basic.auth.user.info`)", FORMATS, secret=True, spark="ours only"),
    _opt("basic.auth.user.info", "password", None, "the same, Confluent's short name",
         FORMATS, secret=True, spark="ours only"),
    _opt("schema.registry.ssl.truststore.location", "string", None,
         "PEM file of the CAs the registry's certificate is checked against", FORMATS,
         spark="ours only"),
    _opt("schema.registry.ssl.truststore.type", "enum", "PEM", "only `PEM`", FORMATS,
         choices=("pem",), default_text="`PEM`", spark="ours only"),
    _opt("schema.registry.ssl.keystore.location", "string", None,
         "PEM file with the client's certificate chain and key (mutual TLS)", FORMATS,
         spark="ours only"),
    _opt("schema.registry.ssl.keystore.type", "enum", "PEM", "only `PEM`", FORMATS,
         choices=("pem",), default_text="`PEM`", spark="ours only"),
    _opt("schema.registry.ssl.key.password", "password", None, "the private key's password",
         FORMATS, secret=True, spark="ours only"),
    _opt("schema.registry.ssl.endpoint.identification.algorithm", "string", "https",
         "`https` checks the registry's host name; empty turns that off", FORMATS,
         spark="ours only"),
    _opt("schema.registry.request.timeout.ms", "int", _client.REQUEST_TIMEOUT_MS,
         "the longest one HTTP exchange with the registry may take", FORMATS, unit="ms",
         minimum=1, spark="ours only"),
    _opt("schema.registry.connect.timeout.ms", "int",
         _client.SOCKET_CONNECTION_SETUP_TIMEOUT_MS,
         "the longest a connection (and TLS) set-up to the registry may take", FORMATS,
         unit="ms", minimum=1, spark="ours only"),
    _opt("schema.registry.max.response.bytes", "int", 8 * 1024 * 1024,
         "the largest registry answer read; a larger one fails", FORMATS, unit="bytes",
         minimum=1024, spark="ours only"),
    _opt("schema.registry.retry.backoff.ms", "int", _client.RETRY_BACKOFF_MS,
         "first pause before retrying a failed registry request (doubling, KIP-580 style)",
         FORMATS, unit="ms", minimum=0, spark="ours only"),
    _opt("schema.registry.retry.backoff.max.ms", "int", _client.RETRY_BACKOFF_MAX_MS,
         "the longest pause between registry retries", FORMATS, unit="ms", minimum=0,
         spark="ours only"),
    _opt("schema.registry.retry.timeout.ms", "int", _client.DEFAULT_API_TIMEOUT_MS,
         "how long one registry look-up may keep retrying", FORMATS, unit="ms", minimum=0,
         spark="ours only"),
    # -- security (parsed by spark_kafka_py.client.security; see docs/security.md) ---------------
    _opt("kafka.security.protocol", "enum", "PLAINTEXT",
         "`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL`", {SECURITY},
         choices=("plaintext", "ssl", "sasl_plaintext", "sasl_ssl"), default_text="`PLAINTEXT`"),
    _opt("kafka.sasl.mechanism", "enum", "GSSAPI",
         "`GSSAPI` (Kerberos), `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` or `OAUTHBEARER`",
         {SECURITY},
         choices=("gssapi", "plain", "scram-sha-256", "scram-sha-512", "oauthbearer"),
         default_text="`GSSAPI`"),
    _opt("kafka.sasl.jaas.config", "password", None,
         "the login module and its options (user and password, OAuth client, Kerberos "
         "`Krb5LoginModule` with `useKeyTab`/`keyTab`/`principal` or `useTicketCache`)",
         {SECURITY}, secret=True),
    _opt("kafka.sasl.kerberos.service.name", "string", "kafka",
         "GSSAPI: the brokers' Kerberos service name (their principal is "
         "`<name>/<host>@REALM`); the Java client has no default", {SECURITY},
         default_text="`kafka`"),
    _opt("kafka.sasl.kerberos.krb5.conf", "string", None,
         "GSSAPI: the Kerberos configuration file for every process of the query (the "
         "JVM's `-Djava.security.krb5.conf`); default: `KRB5_CONFIG` of the process, else "
         "the driver's, else `/etc/krb5.conf`", {SECURITY}, spark="ours only"),
    _opt("delegationToken", "boolean", False,
         "the driver obtains a Kafka delegation token with its own login (e.g. Kerberos) and "
         "the executors authenticate with it (SCRAM, `tokenauth=true`): no keytab on them; "
         "renewed and replaced by the driver (docs/security.md). Spark: "
         "`spark.security.credentials.kafka.enabled` with `spark.kafka.clusters.<id>.*`",
         CLIENT, spark="ours only"),
    _opt("delegationToken.mechanism", "enum", "scram-sha-512",
         "the executors' SCRAM mechanism with the token (Spark: "
         "`spark.kafka.clusters.<id>.sasl.token.mechanism`)", CLIENT,
         choices=("scram-sha-256", "scram-sha-512"), default_text="`SCRAM-SHA-512`",
         spark="ours only"),
    _opt("kafka.sasl.oauthbearer.token", "password", None, "a static OAuth bearer token",
         {SECURITY}, secret=True, spark="ours only"),
    _opt("kafka.sasl.oauthbearer.token.provider", "string", None,
         "`module:function` returning a token string (called at every authentication) or a "
         "`(token, expiry_ms)` tuple, expiry in epoch ms, as AWS MSK IAM's "
         "`generate_auth_token` returns (the token is then reused until 80-85% of its "
         "lifetime, at most until 5 min before expiry, and never sent expired); importable "
         "on the executors too", {SECURITY}, spark="ours only"),
    _opt("kafka.sasl.oauthbearer.config", "password", None,
         "the token provider's only argument, e.g. the AWS region for MSK IAM (librdkafka's "
         "name: confluent-kafka passes it to `oauth_cb`); without it the provider is called "
         "with no argument", {SECURITY}, secret=True, spark="ours only"),
    _opt("kafka.sasl.oauthbearer.token.endpoint.url", "string", None,
         "OAuth token endpoint for the client-credentials grant (KIP-768): `https://` (or "
         "listed in the next option), or `file:`; redirects are refused", {SECURITY}),
    _opt("kafka.sasl.oauthbearer.allowed.urls", "list", None,
         "token endpoint URLs allowed, comma-separated (Kafka's JVM system property "
         "`org.apache.kafka.sasl.oauthbearer.allowed.urls` as an option); needed for an "
         "`http://` endpoint", {SECURITY}, spark="ours only"),
    _opt("kafka.sasl.oauthbearer.scope.claim.name", "string", None,
         "accepted for Java configurations, not used", {SECURITY}, spark="no effect"),
    _opt("kafka.sasl.login.callback.handler.class", "string", None,
         "accepted for Java configurations, not used (the token source is chosen by the "
         "options above)", {SECURITY}, spark="no effect"),
    _opt("kafka.ssl.truststore.location", "string", None, "trust store file (PKCS12, JKS, PEM)",
         {SECURITY}),
    _opt("kafka.ssl.truststore.password", "password", None, "its password", {SECURITY},
         secret=True),
    _opt("kafka.ssl.truststore.type", "enum", "JKS", "`JKS`, `PKCS12` or `PEM`", {SECURITY},
         choices=("jks", "pkcs12", "pem"), default_text=_STORE_TYPE_DEFAULT),
    _opt("kafka.ssl.truststore.certificates", "string", None, "trusted PEM certificates, inline",
         {SECURITY}),
    _opt("kafka.ssl.keystore.location", "string", None, "key store file (mutual TLS)",
         {SECURITY}),
    _opt("kafka.ssl.keystore.password", "password", None, "its password", {SECURITY},
         secret=True),
    _opt("kafka.ssl.keystore.type", "enum", "JKS", "`JKS`, `PKCS12` or `PEM`", {SECURITY},
         choices=("jks", "pkcs12", "pem"), default_text=_STORE_TYPE_DEFAULT),
    _opt("kafka.ssl.keystore.certificate.chain", "string", None,
         "client certificate chain, PEM inline", {SECURITY}),
    _opt("kafka.ssl.keystore.key", "password", None, "client private key, PEM inline",
         {SECURITY}, secret=True),
    _opt("kafka.ssl.key.password", "password", None, "password of the private key", {SECURITY},
         secret=True),
    _opt("kafka.ssl.endpoint.identification.algorithm", "string", "https",
         "`https` checks the broker's host name; empty turns that off", {SECURITY}),
)
# fmt: on

#: Kafka consumer settings Spark's source rejects, with Spark's reasons
#: (``KafkaSourceProvider.validateGeneralOptions``).
REJECTED: Mapping[str, str] = {
    "kafka.auto.offset.reset": (
        "Kafka option 'auto.offset.reset' is not supported. Instead set the source option "
        "'startingOffsets' to 'earliest' or 'latest' to specify where to start. The source "
        "manages which offsets are consumed, and a query resumed from its checkpoint always "
        "picks up where it left off."
    ),
    "kafka.key.deserializer": (
        "Kafka option 'key.deserializer' is not supported as keys are returned as binary. "
        "Use DataFrame operations (e.g. CAST(key AS STRING)) to deserialize the keys."
    ),
    "kafka.value.deserializer": (
        "Kafka option 'value.deserializer' is not supported as values are returned as binary. "
        "Use DataFrame operations (e.g. CAST(value AS STRING), from_json) to deserialize values."
    ),
    "kafka.enable.auto.commit": (
        "Kafka option 'enable.auto.commit' is not supported. The source tracks offsets in "
        "Spark's checkpoint; with 'kafka.group.id' set it commits them to the group itself "
        "after each micro-batch."
    ),
    "kafka.interceptor.classes": (
        "Kafka option 'interceptor.classes' is not supported: there are no Java consumer "
        "interceptors in a Python client."
    ),
}

#: Kafka producer settings Spark's sink rejects, with Spark's reasons
#: (``KafkaSourceProvider.kafkaParamsForProducer``).
SINK_REJECTED: Mapping[str, str] = {
    "kafka.key.serializer": (
        "Kafka option 'key.serializer' is not supported as keys are serialized with "
        "ByteArraySerializer."
    ),
    "kafka.value.serializer": (
        "Kafka option 'value.serializer' is not supported as value are serialized with "
        "ByteArraySerializer."
    ),
}

_BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}
if len(_BY_KEY) != len(OPTIONS):  # pragma: no cover - a registry typo
    raise RuntimeError("option registry: two options share a name")


def option(name: str) -> Option:
    """The registered option called ``name`` (any case).

    Raises:
        KeyError: no such option (a programming error, not a user's).
    """
    return _BY_KEY[name.lower()]


def default(name: str) -> Any:
    """The default of the option called ``name``: what the consumer, producer and group
    settings use when built without options."""
    return _BY_KEY[name.lower()].default


#: Options Spark itself passes to a data source with the user's: never warned about.
SPARK_PASSED = frozenset({"path", "paths", "checkpointlocation"})


def is_registered(key: str) -> bool:
    """Whether ``key`` (lower-cased, as PySpark passes option keys) is a registered option."""
    return key in _BY_KEY


def did_you_mean(key: str) -> str:
    """The registered option closest to ``key`` as a hint for a message
    (``"; did you mean 'startingOffsets'?"``), or ``""`` when none is close: the nearest
    name by :func:`difflib.get_close_matches` (ratio >= 0.8) among the options of the same kind
    (``kafka.*`` settings for a ``kafka.*`` key, the others otherwise).

    Args:
        key: an option key, any case.
    """
    low = key.lower()
    kafka = low.startswith("kafka.")
    names = {o.key: o.name for o in OPTIONS if o.key.startswith("kafka.") == kafka}
    found = difflib.get_close_matches(low, list(names), n=1, cutoff=0.8)
    return f"; did you mean '{names[found[0]]}'?" if found else ""


def kafka_settings(scope: str | None = None) -> frozenset[str]:
    """Java names (without ``kafka.``) of the registered Kafka client settings, optionally only
    those that apply in ``scope``."""
    return frozenset(
        o.kafka_name for o in OPTIONS if o.kafka_name and (scope is None or scope in o.scopes)
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _default_cell(o: Option) -> str:
    if o.default_text is not None:
        return o.default_text
    if o.default is None:
        return "none"
    if isinstance(o.default, bool):
        return f"`{str(o.default).lower()}`"
    if o.kind == "int":
        return str(o.default)
    return f"`{o.default}`"


def markdown_table() -> str:
    """The README's option table (Markdown), one row per option, from :data:`OPTIONS`."""
    rows = [
        "| option | type | default | unit | applies to | notes |",
        "|---|---|---|---|---|---|",
    ]
    order = (BATCH, STREAM, SINK, GROUP, SECURITY)
    for o in OPTIONS:
        kind = o.kind if not o.choices else "enum"
        scopes = ", ".join(s for s in order if s in o.scopes)
        note = o.doc if o.spark == "same" else f"{o.doc} ({o.spark})"
        rows.append(
            f"| `{o.name}` | {kind} | {_default_cell(o)} | {o.unit} | {scopes} | {_cell(note)} |"
        )
    return "\n".join(rows) + "\n"


#: Markers around the generated table in the README.
TABLE_BEGIN = "<!-- options table: generated from spark_kafka_py/registry.py -->"
TABLE_END = "<!-- end of options table -->"


def render_readme(text: str) -> str:
    """``text`` (a README) with the generated table between :data:`TABLE_BEGIN` and
    :data:`TABLE_END`.

    Raises:
        ValueError: the markers are missing.
    """
    begin = text.find(TABLE_BEGIN)
    end = text.find(TABLE_END)
    if begin < 0 or end < begin:
        raise ValueError(f"README has no {TABLE_BEGIN!r} ... {TABLE_END!r} markers")
    head = text[: begin + len(TABLE_BEGIN)]
    return f"{head}\n{markdown_table()}{text[end:]}"


def main(argv: list[str] | None = None) -> int:
    """``python -m spark_kafka_py.registry [README.md]``: print the table, or rewrite it in
    the given README."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stdout.write(markdown_table())
        return 0
    path = Path(args[0])
    path.write_text(render_readme(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
