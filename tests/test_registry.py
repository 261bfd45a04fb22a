"""The option registry: one table, wired into the parser, the lower layers' defaults and the
README (no broker needed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from spark_kafka_py import registry
from spark_kafka_py.client.cluster import ClientConfig
from spark_kafka_py.client.security import SECURITY_OPTIONS
from spark_kafka_py.consumer.group.config import GroupConfig
from spark_kafka_py.consumer.settings import ConsumerSettings
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.producer.settings import ProducerSettings
from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.sink_options import parse_sink_options

README = Path(__file__).resolve().parents[1] / "README.md"
BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}

# Each lower-layer field and the registered option whose default it equals: the client's
# defaults are defined in spark_kafka_py.client_defaults (the registry reads them there), the
# consumer, group and producer settings take theirs from the registry.
CLIENT_FIELDS = {
    "client_id": "kafka.client.id",
    "request_timeout_ms": "kafka.request.timeout.ms",
    "connect_timeout_ms": "kafka.socket.connection.setup.timeout.ms",
    "retry_backoff_ms": "kafka.retry.backoff.ms",
    "reconnect_backoff_ms": "kafka.reconnect.backoff.ms",
    "metadata_max_age_ms": "kafka.metadata.max.age.ms",
}
CONSUMER_FIELDS = {
    "default_api_timeout_ms": "kafka.default.api.timeout.ms",
    "fetch_max_bytes": "kafka.fetch.max.bytes",
    "max_partition_fetch_bytes": "kafka.max.partition.fetch.bytes",
    "fetch_min_bytes": "kafka.fetch.min.bytes",
    "fetch_max_wait_ms": "kafka.fetch.max.wait.ms",
    "max_decompression_ratio": "maxDecompressionRatio",
    "client_rack": "kafka.client.rack",
    "check_crcs": "kafka.check.crcs",
    "poll_timeout_ms": "kafkaConsumer.pollTimeoutMs",
}
PRODUCER_FIELDS = {
    "enable_idempotence": "kafka.enable.idempotence",
    "batch_size": "kafka.batch.size",
    "linger_ms": "kafka.linger.ms",
    "buffer_memory": "kafka.buffer.memory",
    "max_block_ms": "kafka.max.block.ms",
    "max_request_size": "kafka.max.request.size",
    "max_in_flight_requests_per_connection": "kafka.max.in.flight.requests.per.connection",
    "delivery_timeout_ms": "kafka.delivery.timeout.ms",
    "retries": "kafka.retries",
    "transaction_timeout_ms": "kafka.transaction.timeout.ms",
}
GROUP_FIELDS = {
    "session_timeout_ms": "kafka.session.timeout.ms",
    "heartbeat_interval_ms": "kafka.heartbeat.interval.ms",
    "max_poll_interval_ms": "kafka.max.poll.interval.ms",
    "request_timeout_ms": "kafka.request.timeout.ms",
    "retry_backoff_ms": "kafka.retry.backoff.ms",
    "default_api_timeout_ms": "kafka.default.api.timeout.ms",
}


def test_readme_option_table_is_generated_from_the_registry() -> None:
    text = README.read_text(encoding="utf-8")
    assert text == registry.render_readme(text), (
        "README's option table differs from the registry: run "
        "`python -m spark_kafka_py.registry README.md`"
    )
    for o in registry.OPTIONS:
        assert f"| `{o.name}` |" in text


@pytest.mark.parametrize(
    ("cls", "fields"),
    [
        (ClientConfig, CLIENT_FIELDS),
        (ConsumerSettings, CONSUMER_FIELDS),
        (GroupConfig, GROUP_FIELDS),
        (ProducerSettings, PRODUCER_FIELDS),
    ],
)
def test_lower_layer_defaults_come_from_the_registry(cls: type, fields: dict[str, str]) -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    for field_name, option_name in fields.items():
        assert defaults[field_name] == registry.default(option_name), field_name
    # and the Java clients' documented values (ConsumerConfig / CommonClientConfigs)
    java = {
        "kafka.request.timeout.ms": 30_000,
        "kafka.socket.connection.setup.timeout.ms": 10_000,
        "kafka.retry.backoff.ms": 100,
        "kafka.reconnect.backoff.ms": 50,
        "kafka.metadata.max.age.ms": 300_000,
        "kafka.default.api.timeout.ms": 60_000,
        "kafka.fetch.max.bytes": 52_428_800,
        "kafka.max.partition.fetch.bytes": 1_048_576,
        "kafka.fetch.min.bytes": 1,
        "kafka.fetch.max.wait.ms": 500,
        "kafka.session.timeout.ms": 45_000,
        "kafka.heartbeat.interval.ms": 3_000,
        "kafka.max.poll.interval.ms": 300_000,
        # ProducerConfig (Kafka 4.x: linger.ms 5 since KIP-1030)
        "kafka.acks": "all",
        "kafka.enable.idempotence": True,
        "kafka.compression.type": "none",
        "kafka.batch.size": 16_384,
        "kafka.linger.ms": 5,
        "kafka.buffer.memory": 33_554_432,
        "kafka.max.block.ms": 60_000,
        "kafka.max.request.size": 1_048_576,
        "kafka.max.in.flight.requests.per.connection": 5,
        "kafka.delivery.timeout.ms": 120_000,
        "kafka.retries": 2_147_483_647,
        "kafka.partitioner.ignore.keys": False,
        "kafka.compression.gzip.level": -1,
        "kafka.compression.lz4.level": 9,
        "kafka.compression.zstd.level": 3,
    }
    for option_name, value in java.items():
        assert registry.default(option_name) == value, option_name


def test_parsed_defaults_are_the_registry_defaults() -> None:
    o = parse_options(BASE, streaming=True)
    for field_name, option_name in CONSUMER_FIELDS.items():
        assert getattr(o.consumer, field_name) == registry.default(option_name), field_name
    for field_name, option_name in CLIENT_FIELDS.items():
        assert getattr(o.consumer.client, field_name) == registry.default(option_name), field_name
    assert o.max_trigger_delay_ms == 15 * 60 * 1000
    assert (o.poll_timeout_ms, o.fetch_offset_num_retries) == (120_000, 3)
    assert o.fetch_offset_retry_interval_ms == 1000
    assert (o.include_headers, o.fail_on_data_loss) == (False, True)


SINK_BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "topic": "t"}


def _valid_context(o: registry.Option) -> tuple[dict[str, str], bool]:
    """Options and mode in which ``o`` is read by the parser."""
    extra = {"kafka.group.id": "g"} if registry.GROUP in o.scopes else {}
    if o.scopes == registry.FORMATS or o.key in ("mode", "includerawbytes"):
        # payload options are read with a formatted column and a registry
        extra = {"valueformat": "avro", "keyformat": "avro", "schema.registry.url": "http://r:1"}
    return {**BASE, **extra}, registry.STREAM in o.scopes


def _parse(o: registry.Option, value: str) -> None:
    """Parse a read, or a write for options of the sink only, with ``o`` set to ``value``."""
    if o.scopes == {registry.SINK}:
        formats = {"valueformat": "avro", "schema.registry.url": "http://r:1"}
        parse_sink_options({**SINK_BASE, **formats, o.key: value})
        return
    base, streaming = _valid_context(o)
    parse_options({**base, o.key: value}, streaming=streaming)


TYPED = [
    o
    for o in registry.OPTIONS
    if o.kind in ("int", "boolean", "enum", "duration", "timestamp")
    and registry.SECURITY not in o.scopes
]


@pytest.mark.parametrize("o", TYPED, ids=lambda o: o.name)
def test_every_typed_option_is_validated_by_the_parser(o: registry.Option) -> None:
    """A bad value of any typed option fails the read, naming the option: the parser reads
    every registered option through its validator."""
    with pytest.raises(ConfigError, match=f"'{o.name}'"):
        _parse(o, "not-a-value")


@pytest.mark.parametrize("o", [o for o in TYPED if o.minimum is not None], ids=lambda o: o.name)
def test_every_integer_option_checks_its_minimum(o: registry.Option) -> None:
    assert o.minimum is not None
    with pytest.raises(ConfigError, match=f"'{o.name}'"):
        _parse(o, str(o.minimum - 1))


def test_security_options_are_the_registered_ones() -> None:
    registered = {o.kafka_name for o in registry.OPTIONS if registry.SECURITY in o.scopes}
    assert registered == set(SECURITY_OPTIONS)


def test_unregistered_kafka_settings_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    parse_options({**BASE, "kafka.linger.ms": "5", "kafka.fetch.min.bytes": "1"}, streaming=True)
    warned = [r.getMessage() for r in caplog.records]
    assert any("kafka.linger.ms" in m for m in warned)
    assert not any("fetch.min.bytes" in m for m in warned)


@pytest.mark.parametrize("name", sorted(registry.SINK_REJECTED))
def test_rejected_producer_settings(name: str) -> None:
    with pytest.raises(ConfigError, match=name.removeprefix("kafka.")):
        parse_sink_options({**SINK_BASE, name: "x"})


def test_sink_options_apply_to_writes_only(caplog: pytest.LogCaptureFixture) -> None:
    """A producer setting on a read is warned about as unused, and a consumer setting on a
    write too; client settings (timeouts, client.id) apply to both."""
    parse_options({**BASE, "kafka.acks": "1", "kafka.client.id": "c"}, streaming=False)
    parse_sink_options({**SINK_BASE, "kafka.isolation.level": "read_committed"})
    warned = [r.getMessage() for r in caplog.records]
    assert any("'kafka.acks' is not used" in m for m in warned), warned
    assert any("'kafka.isolation.level' is not used" in m for m in warned), warned
    assert not any("client.id" in m for m in warned)


@pytest.mark.parametrize("name", sorted(registry.REJECTED))
def test_rejected_kafka_settings(name: str) -> None:
    with pytest.raises(ConfigError, match=name.removeprefix("kafka.")):
        parse_options({**BASE, name: "x"}, streaming=True)


def test_min_offsets_above_max_offsets_is_rejected_as_spark_does() -> None:
    with pytest.raises(ConfigError, match=r"minOffsetsPerTrigger \(20\) is higher"):
        parse_options(
            {**BASE, "minOffsetsPerTrigger": "20", "maxOffsetsPerTrigger": "15"}, streaming=True
        )
    o = parse_options(
        {**BASE, "minOffsetsPerTrigger": "15", "maxOffsetsPerTrigger": "15"}, streaming=True
    )
    assert (o.min_offsets_per_trigger, o.max_offsets_per_trigger) == (15, 15)


def test_option_lookup_is_case_insensitive_and_names_are_unique() -> None:
    assert registry.option("STARTINGOFFSETS").name == "startingOffsets"
    assert len({o.key for o in registry.OPTIONS}) == len(registry.OPTIONS)
    with pytest.raises(KeyError):
        registry.option("no.such.option")
