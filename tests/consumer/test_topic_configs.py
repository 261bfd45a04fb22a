"""DescribeConfigs against the real broker: the timestamp type of topics created with
``message.timestamp.type=LogAppendTime`` and with the default, the configurations asked (or
all of them), and the typed error naming a topic that does not exist."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from spark_kafka_py.admin.configs import describe_topic_configs
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.topic_configs import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    MESSAGE_TIMESTAMP_TYPE,
    timestamp_types,
)
from spark_kafka_py.errors import KafkaApiError
from spark_kafka_py.protocol import error_codes as ec

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

T = 20_000  # ms


def _client(bootstrap: str) -> KafkaClient:
    return KafkaClient(ClientConfig.from_bootstrap(bootstrap, retry_backoff_ms=50))


def test_log_append_time_and_default_topics(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    appended = new_topic(partitions=2, configs={MESSAGE_TIMESTAMP_TYPE: LOG_APPEND_TIME})
    default = new_topic()
    with _client(kafka_bootstrap) as client:
        assert timestamp_types(client, [appended, default], timeout_ms=T) == {
            appended: LOG_APPEND_TIME,
            default: CREATE_TIME,
        }


def test_configs_asked_or_all(kafka_bootstrap: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(configs={"retention.ms": "123456"})
    with _client(kafka_bootstrap) as client:
        asked = describe_topic_configs(
            client, [topic], ["retention.ms", "cleanup.policy", "no.such.config"], timeout_ms=T
        )
        # a name the broker does not know is left out, not an error
        assert asked == {topic: {"retention.ms": "123456", "cleanup.policy": "delete"}}
        every = describe_topic_configs(client, [topic], timeout_ms=T)[topic]
        assert every["retention.ms"] == "123456"
        assert every[MESSAGE_TIMESTAMP_TYPE] == CREATE_TIME
        assert len(every) > 20  # the broker lists every topic configuration


def test_unknown_topic_raises_the_typed_error_naming_it(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    known = new_topic()
    missing = f"no-such-topic-{uuid.uuid4().hex[:8]}"
    with _client(kafka_bootstrap) as client, pytest.raises(KafkaApiError) as raised:
        timestamp_types(client, [known, missing], timeout_ms=T)
    assert raised.value.error is ec.UNKNOWN_TOPIC_OR_PARTITION
    assert f"for topic '{missing}' (DescribeConfigs)" in str(raised.value)
