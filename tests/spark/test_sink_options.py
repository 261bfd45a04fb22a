"""Write options and input columns, checked as Spark's Kafka sink checks them (no broker)."""

from __future__ import annotations

import logging

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.records.compression import CODEC_GZIP, CODEC_LZ4, CODEC_NONE, CODEC_ZSTD
from spark_kafka_py.spark.sink import HEADERS_TYPE, check_sink_schema, save_mode_error
from spark_kafka_py.spark.sink_options import parse_sink_options

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "topic": "out"}


def opts(**kw: str) -> dict[str, str]:
    return {k.lower(): v for k, v in {**BASE, **kw}.items()}


def test_defaults_are_the_java_producers() -> None:
    o = parse_sink_options(opts())
    p = o.producer
    assert o.topic == "out" and o.partitioner_ignore_keys is False
    assert (p.acks, p.enable_idempotence) == (-1, True)
    assert (p.compression_type, p.compression_level) == (CODEC_NONE, None)
    assert (p.batch_size, p.linger_ms, p.buffer_memory) == (16_384, 5, 33_554_432)
    assert (p.max_request_size, p.max_in_flight_requests_per_connection) == (1_048_576, 5)
    assert (p.delivery_timeout_ms, p.retries, p.max_block_ms) == (120_000, 2_147_483_647, 60_000)
    assert p.client.bootstrap_servers == (("127.0.0.1", 9092),)


def test_bootstrap_servers_are_required() -> None:
    with pytest.raises(ConfigError, match=r"'kafka.bootstrap.servers' must be specified"):
        parse_sink_options({"topic": "t"})


@pytest.mark.parametrize("name", ["kafka.key.serializer", "kafka.value.serializer"])
def test_serializers_are_rejected_with_sparks_reason(name: str) -> None:
    with pytest.raises(ConfigError, match=r"is not supported as .* serialized with ByteArray"):
        parse_sink_options(opts(**{name: "org.apache.kafka.common.serialization.StringSerializer"}))


@pytest.mark.parametrize(("given", "acks"), [("all", -1), ("-1", -1), ("1", 1), ("0", 0)])
def test_acks(given: str, acks: int) -> None:
    extra = {} if acks == -1 else {"kafka.enable.idempotence": "false"}
    assert parse_sink_options(opts(**{"kafka.acks": given}, **extra)).producer.acks == acks


def test_idempotence_needs_acks_all() -> None:
    with pytest.raises(ConfigError, match="acks"):
        parse_sink_options(opts(**{"kafka.acks": "1"}))


@pytest.mark.parametrize(
    ("codec", "level_option", "level", "codec_id"),
    [
        ("gzip", "kafka.compression.gzip.level", "9", CODEC_GZIP),
        ("lz4", "kafka.compression.lz4.level", "12", CODEC_LZ4),
        ("zstd", "kafka.compression.zstd.level", "-5", CODEC_ZSTD),
    ],
)
def test_compression_and_its_level(
    codec: str, level_option: str, level: str, codec_id: int
) -> None:
    p = parse_sink_options(opts(**{"kafka.compression.type": codec, level_option: level})).producer
    assert (p.compression_type, p.compression_level) == (codec_id, int(level))
    # a level of another codec is checked but not used
    p = parse_sink_options(opts(**{"kafka.compression.type": "none", level_option: level})).producer
    assert (p.compression_type, p.compression_level) == (CODEC_NONE, None)


@pytest.mark.parametrize(
    ("level_option", "bad"),
    [
        ("kafka.compression.gzip.level", "0"),
        ("kafka.compression.gzip.level", "10"),
        ("kafka.compression.lz4.level", "18"),
        ("kafka.compression.zstd.level", "23"),
    ],
)
def test_compression_levels_out_of_range_name_the_option(level_option: str, bad: str) -> None:
    with pytest.raises(ConfigError, match=f"'{level_option}'.*KIP-390"):
        parse_sink_options(opts(**{level_option: bad}))


def test_bad_values_name_the_option() -> None:
    with pytest.raises(ConfigError, match=r"'kafka.compression.type'"):
        parse_sink_options(opts(**{"kafka.compression.type": "brotli"}))
    with pytest.raises(ConfigError, match=r"'kafka.batch.size'"):
        parse_sink_options(opts(**{"kafka.batch.size": "-1"}))
    with pytest.raises(ConfigError, match="'topic' must not be empty"):
        parse_sink_options(opts(topic=" "))


def test_read_only_settings_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        parse_sink_options(opts(**{"kafka.fetch.max.bytes": "1"}))
    assert "'kafka.fetch.max.bytes' is not used by the pykafka sink" in caplog.text


def test_overwrite_is_refused_as_spark_refuses_it() -> None:
    save_mode_error(False)
    with pytest.raises(ConfigError, match="Save mode Overwrite not allowed for Kafka"):
        save_mode_error(True)


def schema(*fields: tuple[str, object]) -> StructType:
    return StructType([StructField(name, t) for name, t in fields])  # type: ignore[arg-type]


def test_schema_accepts_sparks_columns_and_ignores_others() -> None:
    check_sink_schema(
        schema(
            ("topic", StringType()),
            ("key", BinaryType()),
            ("value", StringType()),
            ("headers", HEADERS_TYPE),
            ("partition", IntegerType()),
            ("other", LongType()),
        ),
        None,
    )
    check_sink_schema(schema(("value", BinaryType())), "t")
    # a topic column of any type is not looked at when the option is set (Spark: the option wins)
    check_sink_schema(schema(("value", BinaryType()), ("topic", LongType())), "t")


@pytest.mark.parametrize(
    ("fields", "topic", "message"),
    [
        ((("value", BinaryType()),), None, "topic option required when no 'topic' attribute"),
        ((("key", BinaryType()),), "t", "Required attribute 'value' not found"),
        ((("value", IntegerType()),), "t", "value attribute unsupported type int. value must be"),
        ((("value", BinaryType()), ("key", LongType())), "t", "key attribute unsupported type"),
        (
            (("value", BinaryType()), ("topic", BinaryType())),
            None,
            "topic attribute unsupported type binary. topic must be a\\(n\\) string",
        ),
        (
            (("value", BinaryType()), ("partition", LongType())),
            "t",
            "partition attribute unsupported type bigint. partition must be a\\(n\\) int",
        ),
        (
            (("value", BinaryType()), ("headers", ArrayType(StringType()))),
            "t",
            "headers attribute unsupported type array<string>",
        ),
        # Spark finds columns by exact name: "Value" is not "value"
        ((("Value", BinaryType()),), "t", "Required attribute 'value' not found"),
    ],
)
def test_schema_errors_are_sparks(fields: tuple, topic: str | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_sink_schema(schema(*fields), topic)


def test_exactly_once_needs_a_prefix_acks_all_idempotence_and_a_stream() -> None:
    eo = {"deliveryGuarantee": "exactly-once"}
    o = parse_sink_options(opts(**eo, transactionalIdPrefix=" orders-upper "))
    assert (o.exactly_once, o.transactional_id_prefix) == (True, "orders-upper")
    assert o.commit_log_topic == "spark-kafka-py-commits"
    assert parse_sink_options(opts()).exactly_once is False
    with pytest.raises(ConfigError, match="needs 'transactionalIdPrefix'"):
        parse_sink_options(opts(**eo))
    with pytest.raises(ConfigError, match=r"needs 'kafka.acks'='all'"):
        parse_sink_options(opts(**eo, transactionalIdPrefix="p", **{"kafka.acks": "1"}))
    with pytest.raises(ConfigError, match=r"needs 'kafka.enable.idempotence'='true'"):
        parse_sink_options(
            opts(**eo, transactionalIdPrefix="p", **{"kafka.enable.idempotence": "false"})
        )
    with pytest.raises(ConfigError, match="applies to writeStream"):
        parse_sink_options(opts(**eo, transactionalIdPrefix="p"), streaming=False)
    with pytest.raises(ConfigError, match="'deliveryGuarantee'"):
        parse_sink_options(opts(deliveryGuarantee="at-most-once"))
