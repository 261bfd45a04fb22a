"""An API the broker lacks fails before anything is sent, naming the feature, the release it
needs and what the broker's ApiVersions answer says of its own release (KIP-584)."""

from __future__ import annotations

import pytest

from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.errors import LocalProtocolError, UnsupportedByBrokerError
from spark_kafka_py.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsResponse,
    FinalizedFeatureKey,
)
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
)
from spark_kafka_py.protocol.messages.describe_transactions import DescribeTransactionsRequest

from .fake_broker import FakeBroker


def _broker_3_6() -> ApiVersionsResponse:
    """A Kafka 3.6-like answer, in short: no ConsumerGroupHeartbeat (68), DescribeTransactions
    (65) only in versions we do not speak, metadata.version 3.6-IV2 (level 14)."""
    return ApiVersionsResponse(
        api_keys=(
            ApiVersion(api_key=18, min_version=0, max_version=3),
            ApiVersion(api_key=65, min_version=5, max_version=7),  # no version we speak
        ),
        finalized_features=(
            FinalizedFeatureKey(
                name="metadata.version", max_version_level=14, min_version_level=14
            ),
        ),
    )


def test_missing_api_names_the_feature_the_release_and_the_brokers_line() -> None:
    with (
        FakeBroker({18: lambda r, v: _broker_3_6()}) as broker,
        BrokerConnection(broker.host, broker.port) as conn,
    ):
        conn.connect()
        assert conn.broker_release == "3.6"
        with pytest.raises(UnsupportedByBrokerError) as info:
            conn.pick_version(ConsumerGroupHeartbeatRequest)
    err = info.value
    assert isinstance(err, LocalProtocolError)  # callers catching the old type still do
    assert (err.api_name, err.api_key, err.broker_versions) == (
        "ConsumerGroupHeartbeatRequest",
        68,
        None,
    )
    assert err.broker_release == "3.6"
    message = str(err)
    assert "does not support ConsumerGroupHeartbeatRequest (API key 68" in message
    assert "Kafka 3.6 or later, from its metadata.version" in message
    assert "group.protocol=consumer" in message and "Kafka 4.0+ broker (KIP-848)" in message


def test_no_common_version_names_what_the_broker_offers() -> None:
    with (
        FakeBroker({18: lambda r, v: _broker_3_6()}) as broker,
        BrokerConnection(broker.host, broker.port) as conn,
    ):
        conn.connect()
        with pytest.raises(UnsupportedByBrokerError, match="supports 5-7") as info:
            conn.pick_version(DescribeTransactionsRequest)
    assert info.value.broker_versions == (5, 7)
    assert "no common version of DescribeTransactionsRequest (API key 65)" in str(info.value)
    assert "KIP-664" in str(info.value)


def test_without_finalized_features_the_release_is_not_claimed() -> None:
    api = ApiVersionsResponse(api_keys=(ApiVersion(api_key=18, min_version=0, max_version=4),))
    with (
        FakeBroker({18: lambda r, v: api}) as broker,
        BrokerConnection(broker.host, broker.port) as conn,
    ):
        conn.connect()
        assert conn.broker_release is None
        with pytest.raises(UnsupportedByBrokerError) as info:
            conn.pick_version(ConsumerGroupHeartbeatRequest)
    assert info.value.broker_release is None
    assert "metadata.version" not in str(info.value)
