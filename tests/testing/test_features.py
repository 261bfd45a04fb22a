"""Feature levels at format time (KIP-1022's ``kafka-storage format --feature``), read back with
Kafka's own ``kafka-features.sh describe`` (FeatureCommand) as the oracle, and
``$SPARK_KAFKA_PY_KAFKA_FEATURES``, which formats every cluster of a test run's release.

Observed on Kafka 4.3.0 (2026-11, :data:`~spark_kafka_py.testing.jars.KAFKA_VERSION`): a fresh
cluster finalizes transaction.version 2 by itself (as 4.0.2 and 4.4.0 do, and as
``kafka-features.sh version-mapping`` maps 4.0 and later); ``--feature transaction.version=1``
gives 1, so the option is honoured, not ignored.
"""

from __future__ import annotations

import pytest

from spark_kafka_py.testing.broker import LocalKafkaCluster, _feature_args
from spark_kafka_py.testing.jars import (
    KAFKA_FEATURES_ENV,
    KAFKA_VERSION,
    KAFKA_VERSION_ENV,
    parse_features,
    selected_kafka_features,
)
from spark_kafka_py.testing.tools import describe_features, finalized_feature_level

TV = "transaction.version"


@pytest.mark.integration
@pytest.mark.parametrize(
    ("features", "level"),
    [
        # 4.x releases default to transaction.version 2 (observed on 4.0.2, 4.3.0, 4.4.0), so
        # level 1 is what proves --feature is applied; one broker start only, for CI's time
        # (the matrix's transactions-v2 runs check level 2 on their session broker)
        ({TV: 1}, 1),
    ],
    ids=["tv1"],
)
def test_kafka_features_describe_shows_the_formatted_transaction_version(
    features: dict[str, int] | None, level: int
) -> None:
    # kafka_version named: $SPARK_KAFKA_PY_KAFKA_FEATURES of a matrix run does not apply.
    with LocalKafkaCluster(1, kafka_version=KAFKA_VERSION, features=features) as cluster:
        assert cluster.features == (features or {})
        described = describe_features(cluster.bootstrap_servers)
        assert described[TV].finalized == str(level), described[TV]
        assert described[TV].supported_max == "2"  # 4.3.0 knows levels 0-2
        assert described["metadata.version"].finalized == "4.3-IV0"
        if features:  # the helper of the matrix's check (one more JVM: not for every case)
            assert finalized_feature_level(cluster.bootstrap_servers, TV) == level


@pytest.mark.integration
def test_session_broker_has_the_selected_feature_levels(kafka_bootstrap: str) -> None:
    """In a run with ``$SPARK_KAFKA_PY_KAFKA_FEATURES`` (the matrix's transactions-v2 runs), the
    session's broker finalized every level asked; with none, nothing to check."""
    selected = selected_kafka_features()
    if selected:
        got = {name: finalized_feature_level(kafka_bootstrap, name) for name in selected}
        assert got == selected


def test_a_release_before_kip_1022_refuses_feature_levels() -> None:
    with pytest.raises(ValueError) as caught:
        LocalKafkaCluster(1, kafka_version="3.6.2", features={TV: 2})
    text = str(caught.value)
    assert "Kafka 3.6.2" in text and "transaction.version=2" in text, text
    assert "--feature" in text and "3.9.0" in text and "KIP-1022" in text, text
    with pytest.raises(ValueError, match="integer >= 0"):
        LocalKafkaCluster(1, kafka_version="4.0.2", features={TV: -1})
    assert LocalKafkaCluster(1, kafka_version="3.6.2").features == {}


def test_storage_tool_arguments() -> None:
    assert _feature_args({TV: 2, "group.version": 1}) == [
        "--feature",
        "transaction.version=2",
        "--feature",
        "group.version=1",
    ]
    assert _feature_args({}) == []


def test_features_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KAFKA_VERSION_ENV, raising=False)
    monkeypatch.setenv(KAFKA_FEATURES_ENV, " transaction.version=2, group.version = 1 ")
    assert selected_kafka_features() == {TV: 2, "group.version": 1}
    # a cluster of the selected release takes them; one of a named release its defaults
    assert LocalKafkaCluster(1).features == {TV: 2, "group.version": 1}
    assert LocalKafkaCluster(1, kafka_version="4.0.2").features == {}
    assert LocalKafkaCluster(1, features={}).features == {}
    # the selected release too old for them: refused at construction
    monkeypatch.setenv(KAFKA_VERSION_ENV, "3.6.2")
    with pytest.raises(ValueError, match=r"Kafka 3\.6\.2 cannot format storage"):
        LocalKafkaCluster(1)
    monkeypatch.setenv(KAFKA_FEATURES_ENV, "transaction.version")
    with pytest.raises(ValueError, match=KAFKA_FEATURES_ENV):
        selected_kafka_features()
    monkeypatch.setenv(KAFKA_FEATURES_ENV, "")
    assert selected_kafka_features() == {}


@pytest.mark.parametrize("bad", ["tv", "transaction.version=two", "a=1,a=2", "=1", "x=-1"])
def test_parse_features_refuses_malformed_items(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_features(bad)
