"""Option validation, as Spark's Kafka source validates (no broker needed)."""

from __future__ import annotations

import pytest

from spark_kafka_py.consumer.types import READ_COMMITTED, TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.offsets import from_offset_dict, to_offset_dict
from spark_kafka_py.spark.options import Assign, Subscribe, SubscribePattern, parse_options
from spark_kafka_py.spark.source import rate_limit

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def opts(**kw: str) -> dict[str, str]:
    # PySpark lower-cases option keys before the source sees them.
    return {k.lower(): v for k, v in {**BASE, **kw}.items()}


def test_subscribe_list_is_split_and_trimmed() -> None:
    o = parse_options(opts(subscribe=" a, b ,c"), streaming=True)
    assert o.subscription == Subscribe(("a", "b", "c"))
    assert o.starting_offsets == "latest"  # streaming default, as Spark
    assert o.ending_offsets is None
    assert o.fail_on_data_loss is True
    assert o.include_headers is False


def test_batch_defaults_are_earliest_to_latest() -> None:
    o = parse_options(opts(subscribe="t"), streaming=False)
    assert (o.starting_offsets, o.ending_offsets) == ("earliest", "latest")


def test_subscribe_pattern_is_a_full_match() -> None:
    o = parse_options(opts(subscribePattern="topic-.*"), streaming=True)
    assert isinstance(o.subscription, SubscribePattern)
    assert o.subscription.matches("topic-1")
    assert not o.subscription.matches("xtopic-1")


def test_assign_json() -> None:
    o = parse_options(opts(assign='{"b":[1,0],"a":[2]}'), streaming=False)
    assert o.subscription == Assign(
        (TopicPartition("a", 2), TopicPartition("b", 0), TopicPartition("b", 1))
    )


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({}, "One of the following options must be specified"),
        ({"subscribe": "a", "assign": '{"a":[0]}'}, "Only one of the following options"),
        ({"subscribe": " , "}, "No topics to subscribe"),
        ({"subscribePattern": "("}, "subscribePattern"),
        ({"assign": "[1]"}, "Option 'assign'"),
        ({"assign": "{}"}, "No topicpartitions to assign"),
        ({"subscribe": "a", "startingOffsets": "first"}, "startingOffsets"),
        ({"subscribe": "a", "startingOffsets": '{"a":{"x":1}}'}, "startingOffsets"),
        ({"subscribe": "a", "includeHeaders": "yes"}, "includeHeaders"),
        ({"subscribe": "a", "kafka.auto.offset.reset": "earliest"}, "auto.offset.reset"),
        ({"subscribe": "a", "kafka.enable.auto.commit": "true"}, "enable.auto.commit"),
        ({"subscribe": "a", "kafka.key.deserializer": "x"}, "key.deserializer"),
        ({"subscribe": "a", "kafka.value.deserializer": "x"}, "value.deserializer"),
        ({"subscribe": "a", "kafka.interceptor.classes": "x"}, "interceptor.classes"),
        ({"subscribe": "a", "kafka.isolation.level": "dirty"}, "kafka.isolation.level"),
        ({"subscribe": "a", "kafka.fetch.max.bytes": "-5"}, "kafka.fetch.max.bytes"),
        ({"subscribe": "a", "maxOffsetsPerTrigger": "0"}, "maxOffsetsPerTrigger"),
        ({"subscribe": "a", "endingOffsets": "latest"}, "endingOffsets"),
    ],
)
def test_bad_streaming_options_name_the_option(kw: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_options(opts(**kw), streaming=True)


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"startingOffsets": "latest"}, "can't be 'latest' for batch"),
        ({"endingOffsets": "earliest"}, "can't be 'earliest' for batch"),
        ({"startingOffsets": '{"t":{"0":-1}}'}, "t-0 can't be latest"),
        ({"endingOffsets": '{"t":{"0":-2}}'}, "t-0 can't be earliest"),
    ],
)
def test_batch_only_rules(kw: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_options(opts(subscribe="t", **kw), streaming=False)


def test_missing_bootstrap_servers() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.bootstrap\.servers"):
        parse_options({"subscribe": "t"}, streaming=False)


def test_kafka_settings_are_honoured() -> None:
    o = parse_options(
        opts(
            subscribe="t",
            **{
                "kafka.isolation.level": "read_committed",
                "kafka.client.id": "me",
                "kafka.max.partition.fetch.bytes": "4096",
                "kafka.request.timeout.ms": "1234",
            },
        ),
        streaming=False,
    )
    assert o.consumer.isolation_level == READ_COMMITTED
    assert o.consumer.client.client_id == "me"
    assert o.consumer.max_partition_fetch_bytes == 4096
    assert o.consumer.client.request_timeout_ms == 1234


def test_offset_dict_is_canonical_and_round_trips() -> None:
    offsets = {TopicPartition("b", 10): 5, TopicPartition("b", 2): 7, TopicPartition("a", 0): 1}
    d = to_offset_dict(offsets)
    assert list(d) == ["a", "b"]
    assert list(d["b"]) == ["2", "10"]  # numeric order, as Spark's JsonUtils
    assert from_offset_dict(d) == offsets


def test_bad_checkpoint_offsets() -> None:
    with pytest.raises(ConfigError):
        from_offset_dict({"t": {"zero": 1}})


def test_rate_limit_prorates_by_backlog_and_never_starves() -> None:
    a, b, c = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
    start = {a: 0, b: 0, c: 5}
    latest = {a: 900, b: 3, c: 5}
    # backlog 900 and 3, total 903, limit 100: a gets floor(99.67)=99, b gets ceil(0.33)=1
    assert rate_limit(100, start, latest) == {a: 99, b: 1, c: 5}
    # no backlog: latest as is
    assert rate_limit(10, latest, latest) == latest


# -- parity options (issue 4) ----------------------------------------------------------------

PARITY_BASE = {"kafka.bootstrap.servers": "localhost:9092", "subscribe": "t"}


def test_timestamp_options_take_precedence_as_in_spark() -> None:
    from spark_kafka_py.spark.options import ByTimestamp

    opts = parse_options(
        {
            **PARITY_BASE,
            "startingoffsets": "earliest",
            "startingoffsetsbytimestamp": '{"t":{"0":1000}}',
            "startingtimestamp": "2000",
            "endingoffsetsbytimestamp": '{"t":{"0":3000}}',
        },
        streaming=False,
    )
    assert opts.starting_offsets == ByTimestamp(everywhere=2000, strategy="error")
    assert opts.ending_offsets == ByTimestamp(per_partition={TopicPartition("t", 0): 3000})


def test_starting_offsets_by_timestamp_strategy() -> None:
    opts = parse_options(
        {**PARITY_BASE, "startingtimestamp": "5", "startingoffsetsbytimestampstrategy": "LATEST"},
        streaming=True,
    )
    assert opts.starting_offsets.strategy == "latest"
    with pytest.raises(ConfigError, match="startingOffsetsByTimestampStrategy"):
        parse_options(
            {**PARITY_BASE, "startingoffsetsbytimestampstrategy": "earliest"}, streaming=True
        )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("startingtimestamp", "yesterday"),
        ("startingoffsetsbytimestamp", '{"t":{"0":"1000"}}'),
        ("endingoffsetsbytimestamp", "[1,2]"),
    ],
)
def test_malformed_timestamps_name_the_option(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=r"(?i)" + key[:8]):
        parse_options({**PARITY_BASE, key: value}, streaming=False)


@pytest.mark.parametrize("key", ["endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp"])
def test_ending_options_rejected_in_streaming(key: str) -> None:
    with pytest.raises(ConfigError, match="not valid in streaming"):
        parse_options({**PARITY_BASE, key: "1"}, streaming=True)


def test_split_and_trigger_options() -> None:
    opts = parse_options(
        {
            **PARITY_BASE,
            "minpartitions": "8",
            "maxrecordsperpartition": "1000",
            "minoffsetspertrigger": "50",
            "maxtriggerdelay": "2m",
        },
        streaming=True,
    )
    assert (opts.min_partitions, opts.max_records_per_partition) == (8, 1000)
    assert (opts.min_offsets_per_trigger, opts.max_trigger_delay_ms) == (50, 120_000)
    assert parse_options(PARITY_BASE, streaming=True).max_trigger_delay_ms == 900_000
    for key, value in [
        ("minpartitions", "0"),
        ("maxrecordsperpartition", "-1"),
        ("maxtriggerdelay", "soon"),
        ("minoffsetspertrigger", "x"),
    ]:
        with pytest.raises(ConfigError):
            parse_options({**PARITY_BASE, key: value}, streaming=True)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("15m", 900_000),
        ("30s", 30_000),
        ("250", 250),
        ("1h", 3_600_000),
        ("500ms", 500),
        ("2d", 172_800_000),
    ],
)
def test_parse_time_ms(text: str, ms: int) -> None:
    from spark_kafka_py.spark.options import parse_time_ms

    assert parse_time_ms(text, "maxTriggerDelay") == ms


def test_group_id_prefix_is_not_silently_ignored(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="spark_kafka_py.spark.options"):
        parse_options(opts(subscribe="t", groupIdPrefix="etl"), streaming=True)
    assert "Option 'groupIdPrefix' has no effect" in caplog.text
    assert "kafka.group.id" in caplog.text


@pytest.mark.parametrize("streaming", [False, True])
def test_check_crcs_is_honoured_without_the_ignoring_warning(
    caplog: pytest.LogCaptureFixture, streaming: bool
) -> None:
    assert parse_options(opts(subscribe="t"), streaming=streaming).consumer.check_crcs is True
    with caplog.at_level("WARNING", logger="spark_kafka_py.spark.options"):
        o = parse_options(opts(subscribe="t", **{"kafka.check.crcs": "false"}), streaming=streaming)
        also = parse_options(
            opts(subscribe="t", **{"kafka.check.crcs": "TRUE"}), streaming=streaming
        )
    assert o.consumer.check_crcs is False
    assert also.consumer.check_crcs is True
    assert "kafka.check.crcs" not in caplog.text
    assert "ignoring it" not in caplog.text
    with pytest.raises(ConfigError, match=r"kafka\.check\.crcs"):
        parse_options(opts(subscribe="t", **{"kafka.check.crcs": "maybe"}), streaming=streaming)


# -- issue 24: a misspelled option gets a warning naming the closest known one ---------------


@pytest.mark.parametrize("streaming", [False, True])
def test_misspelled_options_are_warned_about_with_the_closest_name(
    caplog: pytest.LogCaptureFixture, streaming: bool
) -> None:
    given = {
        "startingOffset": "earliest",  # startingOffsets
        "failOnDataLos": "false",  # failOnDataLoss
        "kafka.fetch.max.byte": "1",  # kafka.fetch.max.bytes
        "noSuchThing": "1",  # nothing close
    }
    with caplog.at_level("WARNING", logger="spark_kafka_py.spark.options"):
        parsed = parse_options(opts(subscribe="t", **given), streaming=streaming)
    text = caplog.text
    assert "Option 'startingoffset' is not an option of format('pykafka')" in text
    assert "did you mean 'startingOffsets'?" in text
    assert "did you mean 'failOnDataLoss'?" in text
    assert "Kafka option 'kafka.fetch.max.byte' is not used" in text
    assert "did you mean 'kafka.fetch.max.bytes'?" in text
    assert "Option 'nosuchthing' is not an option" in text
    assert len(caplog.records) == 4
    assert parsed.fail_on_data_loss is True  # ignored, as Spark ignores it


def test_options_spark_passes_and_sink_options_on_a_read_are_not_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("WARNING", logger="spark_kafka_py.spark.options"):
        parse_options(opts(subscribe="t", path="/x", checkpointLocation="/cp"), streaming=True)
        parse_options(opts(subscribe="t", topic="out"), streaming=False)
    assert caplog.records == []


def test_misspelled_bootstrap_servers_is_named_in_the_error() -> None:
    with pytest.raises(
        ConfigError,
        match=r"must be specified for configuring Kafka consumer; option "
        r"'kafka\.bootstrap\.server' is given; did you mean 'kafka\.bootstrap\.servers'\?",
    ):
        parse_options({"kafka.bootstrap.server": "h:1", "subscribe": "t"}, streaming=False)
