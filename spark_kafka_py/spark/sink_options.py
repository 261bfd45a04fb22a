"""The options of a write (``df.write`` / ``writeStream.format("pykafka")``), parsed once.

Names, defaults and checks follow Spark's Kafka sink (``KafkaSourceProvider.
kafkaParamsForProducer``, Spark's Structured Streaming + Kafka Integration Guide, "Writing Data
to Kafka") and Kafka's Java producer (``ProducerConfig``): every option is registered in
:mod:`spark_kafka_py.registry` with scope ``sink``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_kafka_py.client.security import redact_options
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.producer.settings import ProducerSettings, parse_acks
from spark_kafka_py.protocol.messages.produce import ACKS_ALL
from spark_kafka_py.records.compression import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
)
from spark_kafka_py.records.encoder import LEVEL_RANGES
from spark_kafka_py.registry import KAFKA_PREFIX, OPTIONS, SECURITY, SINK, SINK_REJECTED, option
from spark_kafka_py.spark.options import check_kafka_options, parse_client_config
from spark_kafka_py.spark.payload import PayloadOptions, parse_payload_options
from spark_kafka_py.spark.payload_write import WritePayload
from spark_kafka_py.spark.tokens import TokenOptions, parse_token_options

__all__ = ["SinkOptions", "parse_sink_options"]

log = logging.getLogger(__name__)

#: ``kafka.compression.type`` -> codec id (record batch attributes bits 0-2).
CODECS = {
    "none": CODEC_NONE,
    "gzip": CODEC_GZIP,
    "snappy": CODEC_SNAPPY,
    "lz4": CODEC_LZ4,
    "zstd": CODEC_ZSTD,
}
#: The KIP-390 level option of each codec.
_LEVEL_OPTION = {
    CODEC_GZIP: "kafka.compression.gzip.level",
    CODEC_LZ4: "kafka.compression.lz4.level",
    CODEC_ZSTD: "kafka.compression.zstd.level",
}
#: Option keys (lower case) a write honours.
_KNOWN = frozenset(o.key for o in OPTIONS if SINK in o.scopes or SECURITY in o.scopes)


@dataclass(frozen=True)
class SinkOptions:
    """One write's options, validated.

    Attributes:
        producer: the producer's settings (connection, acks, idempotence, compression,
            batching, memory and time bounds).
        topic: the ``topic`` option (every row goes there, whatever the ``topic`` column
            says), or ``None`` (the ``topic`` column decides).
        partitioner_ignore_keys: ``kafka.partitioner.ignore.keys``: keyed rows without a
            ``partition`` are spread as unkeyed ones (KIP-794).
        exactly_once: ``deliveryGuarantee=exactly-once`` (see docs/sink.md).
        transactional_id_prefix: ``transactionalIdPrefix``; set when ``exactly_once``.
        commit_log_topic: ``commitLogTopic``, the driver's commit record (``exactly_once``).
        transaction_timeout_set: ``kafka.transaction.timeout.ms`` was given; unset, exactly-once
            takes the broker's ``transaction.max.timeout.ms`` when the query starts.
        transaction_max_timeout_ms: the broker's ``transaction.max.timeout.ms`` (ms), once the
            driver read it (exactly-once), else ``None``.
        checkpoint_location: the ``checkpointLocation`` option (Spark's, seen by the sink),
            whose ``metadata`` names the query (exactly-once: a prefix is one query's).
        recover_partial_batch: ``recoverPartialBatch``: the part-visible micro-batch whose
            replay completes it (exactly-once), or ``None``.
        kafka_params: the ``kafka.*`` options as given, secrets hidden (for messages).
        payload: ``valueFormat`` / ``keyFormat`` and the schema registry (encoding rows).
        write_payload: the writer schema of each formatted column, resolved on the driver by
            :func:`~spark_kafka_py.spark.payload_write.resolve_write` (``options_for_write``);
            None when no column is formatted, or on a writer PySpark creates only to commit.
        delegation_token: ``delegationToken=true``: the executors write with a token the
            driver obtains (:mod:`spark_kafka_py.spark.tokens`); ``None`` otherwise.
    """

    producer: ProducerSettings
    topic: str | None = None
    partitioner_ignore_keys: bool = option("kafka.partitioner.ignore.keys").default
    exactly_once: bool = False
    transactional_id_prefix: str | None = None
    commit_log_topic: str = option("commitLogTopic").default
    transaction_timeout_set: bool = False
    transaction_max_timeout_ms: int | None = None
    checkpoint_location: str | None = None
    recover_partial_batch: int | None = None
    kafka_params: Mapping[str, str] = field(default_factory=dict)
    payload: PayloadOptions = field(default_factory=PayloadOptions)
    write_payload: WritePayload | None = None
    delegation_token: TokenOptions | None = None


def _value(opts: Mapping[str, str], name: str) -> Any:
    return option(name).read(opts)


def parse_sink_options(options: Mapping[str, str], *, streaming: bool = True) -> SinkOptions:
    """Validate the options of one write, once, on the driver.

    Args:
        options: the options PySpark passed (any case; looked up lower-cased).
        streaming: ``writeStream`` (``True``) or ``df.write`` (``False``).

    Returns:
        The frozen :class:`SinkOptions`.

    Raises:
        ConfigError: naming the option that is missing (``kafka.bootstrap.servers``),
            rejected by Spark's sink (``kafka.key.serializer``, ``kafka.value.serializer``),
            malformed, out of range, or in conflict with another (idempotence with
            ``acks`` other than ``all``; ``exactly-once`` without ``transactionalIdPrefix``,
            with ``acks`` other than ``all``, with idempotence off, or on a batch write).
    """
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    check_kafka_options(opts, SINK_REJECTED, _KNOWN, client="producer", user="the pykafka sink")
    kafka = {k[len(KAFKA_PREFIX) :]: v for k, v in opts.items() if k.startswith(KAFKA_PREFIX)}
    codec = CODECS[str(_value(opts, "kafka.compression.type"))]
    levels: dict[int, int] = {}
    for level_codec, name in _LEVEL_OPTION.items():
        if name.lower() in opts:
            value = int(_value(opts, name))
            low, high = LEVEL_RANGES[level_codec]
            if not low <= value <= high or (level_codec == CODEC_GZIP and value == 0):
                accepted = "1..9 or -1 (default)" if level_codec == CODEC_GZIP else f"{low}..{high}"
                raise ConfigError(f"Option '{name}' must be {accepted} (KIP-390), got {value}")
            levels[level_codec] = value
    level = levels.get(codec)
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise ConfigError("Option 'topic' must not be empty")
    exactly_once = _value(opts, "deliveryGuarantee") == "exactly-once"
    prefix = _value(opts, "transactionalIdPrefix")
    if exactly_once:
        _check_exactly_once(opts, prefix, streaming=streaming)
    producer = ProducerSettings(
        client=parse_client_config(opts, kafka),
        acks=parse_acks(_value(opts, "kafka.acks")),
        enable_idempotence=bool(_value(opts, "kafka.enable.idempotence")),
        compression_type=codec,
        compression_level=level,
        batch_size=int(_value(opts, "kafka.batch.size")),
        linger_ms=int(_value(opts, "kafka.linger.ms")),
        buffer_memory=int(_value(opts, "kafka.buffer.memory")),
        max_block_ms=int(_value(opts, "kafka.max.block.ms")),
        max_request_size=int(_value(opts, "kafka.max.request.size")),
        max_in_flight_requests_per_connection=int(
            _value(opts, "kafka.max.in.flight.requests.per.connection")
        ),
        delivery_timeout_ms=int(_value(opts, "kafka.delivery.timeout.ms")),
        retries=int(_value(opts, "kafka.retries")),
        transaction_timeout_ms=int(_value(opts, "kafka.transaction.timeout.ms")),
    )
    return SinkOptions(
        producer=producer,
        topic=topic,
        exactly_once=exactly_once,
        transactional_id_prefix=prefix.strip() if exactly_once else None,
        commit_log_topic=_value(opts, "commitLogTopic"),
        transaction_timeout_set="kafka.transaction.timeout.ms" in opts,
        checkpoint_location=opts.get("checkpointlocation"),
        recover_partial_batch=_value(opts, "recoverPartialBatch"),
        partitioner_ignore_keys=_value(opts, "kafka.partitioner.ignore.keys"),
        kafka_params=redact_options(kafka),
        payload=parse_payload_options(opts, writing=True),
        delegation_token=parse_token_options(opts, producer.client),
    )


def _check_exactly_once(opts: Mapping[str, str], prefix: str | None, *, streaming: bool) -> None:
    """The combinations ``deliveryGuarantee=exactly-once`` needs.

    Raises:
        ConfigError: naming the option in conflict.
    """
    if not streaming:
        raise ConfigError(
            "Option 'deliveryGuarantee'='exactly-once' applies to writeStream: a batch write "
            "has no micro-batch commit to make its rows visible at; use at-least-once"
        )
    if prefix is None or not prefix.strip():
        raise ConfigError(
            "Option 'deliveryGuarantee'='exactly-once' needs 'transactionalIdPrefix': a name "
            "stable across restarts of this query and used by no other query"
        )
    if parse_acks(_value(opts, "kafka.acks")) != ACKS_ALL:
        raise ConfigError(
            "Option 'deliveryGuarantee'='exactly-once' needs 'kafka.acks'='all' (transactions "
            f"are idempotent), got {opts.get('kafka.acks')!r}"
        )
    if not _value(opts, "kafka.enable.idempotence"):
        raise ConfigError(
            "Option 'deliveryGuarantee'='exactly-once' needs 'kafka.enable.idempotence'='true' "
            "(Kafka transactions are idempotent)"
        )
    if not _value(opts, "commitLogTopic").strip():
        raise ConfigError("Option 'commitLogTopic' must not be empty")
