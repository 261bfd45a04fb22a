"""describe_topic_configs and timestamp_types against a scripted broker: the request sent, the
answer read, per-topic errors, missing or odd answers, retries of a lost connection and the
overall timeout. (The real broker's answers: ``test_topic_configs.py``.)"""

from __future__ import annotations

import time
from typing import Any

import pytest

from spark_kafka_py.admin.configs import describe_topic_configs
from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.consumer.topic_configs import (
    LOG_APPEND_TIME,
    MESSAGE_TIMESTAMP_TYPE,
    timestamp_types,
)
from spark_kafka_py.errors import KafkaApiError, KafkaError, KafkaProtocolError, KafkaTimeoutError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.describe_configs import (
    RESOURCE_TYPE_TOPIC,
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
)
from spark_kafka_py.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
)
from tests.client.fake_broker import CLOSE, FakeBroker, api_versions_for

T = 10_000  # ms


def _result(topic: str, configs: dict[str, str | None]) -> DescribeConfigsResult:
    return DescribeConfigsResult(
        error_message=None,
        resource_type=RESOURCE_TYPE_TOPIC,
        resource_name=topic,
        configs=tuple(
            DescribeConfigsResourceResult(name=k, value=v, documentation=None)
            for k, v in configs.items()
        ),
    )


def _run(answer: Any, call: Any, *, versions: type = DescribeConfigsRequest) -> Any:
    """``call(client)`` against a broker answering DescribeConfigs with ``answer(request,
    version)``; returns ``(call's result or the exception, the broker)``."""
    handlers: dict[int, Any] = {
        18: lambda r, v: api_versions_for(MetadataRequest, versions),
        32: answer,
    }
    with FakeBroker(handlers) as broker:
        handlers[3] = lambda r, v: MetadataResponse(
            brokers=(MetadataResponseBroker(node_id=1, host=broker.host, port=broker.port),)
        )
        config = ClientConfig(bootstrap_servers=((broker.host, broker.port),), retry_backoff_ms=10)
        with KafkaClient(config) as client:
            try:
                return call(client), broker
            except KafkaError as exc:
                return exc, broker


def _described(broker: FakeBroker) -> list[tuple[int, DescribeConfigsRequest]]:
    return [(v, r) for key, v, r in broker.requests if key == 32]


def test_one_request_for_all_topics_and_the_configs_read_back() -> None:
    def answer(request: DescribeConfigsRequest, version: int) -> DescribeConfigsResponse:
        return DescribeConfigsResponse(
            results=(
                _result("b", {"retention.ms": "1000", "sasl.jaas.config": None}),
                _result("a", {"retention.ms": "-1"}),
            )
        )

    got, broker = _run(
        answer, lambda c: describe_topic_configs(c, ["a", "b", "a"], ["retention.ms"], timeout_ms=T)
    )
    assert got == {
        "a": {"retention.ms": "-1"},
        "b": {"retention.ms": "1000", "sasl.jaas.config": None},
    }
    [(version, request)] = _described(broker)
    assert version == 4
    assert [(r.resource_type, r.resource_name) for r in request.resources] == [
        (RESOURCE_TYPE_TOPIC, "a"),
        (RESOURCE_TYPE_TOPIC, "b"),
    ]
    assert all(r.configuration_keys == ("retention.ms",) for r in request.resources)
    assert not request.include_synonyms and not request.include_documentation


def test_all_configs_are_asked_with_null_keys_and_older_versions_work() -> None:
    def answer(request: DescribeConfigsRequest, version: int) -> DescribeConfigsResponse:
        return DescribeConfigsResponse(results=(_result("a", {"x": "y"}),))

    class UpToV2(DescribeConfigsRequest):
        MAX_VERSION = 2

    got, broker = _run(answer, lambda c: describe_topic_configs(c, ["a"], timeout_ms=T))
    assert got == {"a": {"x": "y"}}
    [(_, request)] = _described(broker)
    assert request.resources[0].configuration_keys is None
    got, broker = _run(
        answer, lambda c: describe_topic_configs(c, ["a"], timeout_ms=T), versions=UpToV2
    )
    assert got == {"a": {"x": "y"}}
    assert [v for v, _ in _described(broker)] == [2]


def test_no_topics_no_request() -> None:
    got, broker = _run(
        lambda r, v: pytest.fail("asked"), lambda c: describe_topic_configs(c, [], timeout_ms=T)
    )
    assert got == {}
    assert _described(broker) == []


def test_a_topic_error_raises_the_typed_error_naming_the_topic() -> None:
    def answer(request: DescribeConfigsRequest, version: int) -> DescribeConfigsResponse:
        return DescribeConfigsResponse(
            results=(
                _result("a", {MESSAGE_TIMESTAMP_TYPE: "CreateTime"}),
                DescribeConfigsResult(
                    error_code=ec.TOPIC_AUTHORIZATION_FAILED.code,
                    error_message="Not authorized",
                    resource_type=RESOURCE_TYPE_TOPIC,
                    resource_name="secret",
                ),
            )
        )

    got, broker = _run(answer, lambda c: timestamp_types(c, ["a", "secret"], timeout_ms=T))
    assert isinstance(got, KafkaApiError)
    assert got.error is ec.TOPIC_AUTHORIZATION_FAILED
    assert "for topic 'secret' (DescribeConfigs)" in str(got)
    assert "Not authorized" in str(got)
    assert len(_described(broker)) == 1  # not retried, as Kafka's admin client


def test_a_missing_result_is_an_error() -> None:
    def answer(request: DescribeConfigsRequest, version: int) -> DescribeConfigsResponse:
        return DescribeConfigsResponse(results=(_result("a", {}),))

    got, _ = _run(answer, lambda c: describe_topic_configs(c, ["a", "b"], timeout_ms=T))
    assert type(got) is KafkaError
    assert "no result for topic 'b'" in str(got)


@pytest.mark.parametrize(("value", "shown"), [(None, "no value"), ("Other", "'Other'")])
def test_timestamp_types_refuse_an_unknown_or_absent_value(value: str | None, shown: str) -> None:
    configs = {} if value is None else {MESSAGE_TIMESTAMP_TYPE: value}

    def answer(request: DescribeConfigsRequest, version: int) -> DescribeConfigsResponse:
        return DescribeConfigsResponse(results=(_result("a", configs),))

    got, _ = _run(answer, lambda c: timestamp_types(c, ["a"], timeout_ms=T))
    assert isinstance(got, KafkaProtocolError)
    assert f"topic 'a' answered {shown} for message.timestamp.type" in str(got)


def test_a_lost_connection_is_retried() -> None:
    calls = []

    def answer(request: DescribeConfigsRequest, version: int) -> Any:
        calls.append(version)
        if len(calls) == 1:
            return CLOSE
        return DescribeConfigsResponse(
            results=(_result("a", {MESSAGE_TIMESTAMP_TYPE: "LogAppendTime"}),)
        )

    got, _ = _run(answer, lambda c: timestamp_types(c, ["a"], timeout_ms=T))
    assert got == {"a": LOG_APPEND_TIME}
    assert len(calls) == 2


def test_unreachable_for_timeout_ms_raises_a_timeout_naming_the_topics() -> None:
    start = time.monotonic()
    got, _ = _run(lambda r, v: CLOSE, lambda c: timestamp_types(c, ["a", "b"], timeout_ms=500))
    assert isinstance(got, KafkaTimeoutError)
    assert "DescribeConfigs for topic(s) 'a', 'b'" in str(got)
    assert "within 500 ms" in str(got)
    assert time.monotonic() - start < 5
