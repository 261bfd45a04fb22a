"""Error table and raise_for_error; the table checked against Kafka's ``Errors`` in the
kafka-clients jar (a small Java program prints it)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from spark_kafka_py.errors import KafkaApiError
from spark_kafka_py.protocol import error_codes
from spark_kafka_py.protocol.error_codes import (
    ERRORS,
    ERRORS_BY_NAME,
    NOT_COORDINATOR,
    NOT_LEADER_OR_FOLLOWER,
    SASL_AUTHENTICATION_FAILED,
    ErrorCode,
    error_for,
    error_for_code,
    raise_for_error,
)
from spark_kafka_py.testing.jvm import compile_java, run_java

JAVA_DIR = Path(__file__).parent / "java"


def test_known_codes() -> None:
    assert NOT_LEADER_OR_FOLLOWER == 6
    assert ERRORS[3].name == "UNKNOWN_TOPIC_OR_PARTITION" and ERRORS[3].retriable
    assert ERRORS[1].name == "OFFSET_OUT_OF_RANGE" and not ERRORS[1].retriable
    assert ERRORS[35].name == "UNSUPPORTED_VERSION"
    assert ERRORS_BY_NAME["UNKNOWN_TOPIC_ID"].code == 100
    assert ERRORS_BY_NAME["FENCED_LEADER_EPOCH"].retriable
    assert ERRORS[-1].name == "UNKNOWN_SERVER_ERROR"
    assert all(e.code == code for code, e in ERRORS.items())


def test_raise_for_error() -> None:
    raise_for_error(0, "nothing")
    with pytest.raises(KafkaApiError) as info:
        raise_for_error(6, "in Fetch of t-0 from broker 1")
    err = info.value
    assert (err.code, err.name, err.retriable) == (6, "NOT_LEADER_OR_FOLLOWER", True)
    assert "in Fetch of t-0 from broker 1" in str(err)
    assert "not the current leader" in str(err)


def test_unknown_code() -> None:
    assert error_for(30000).name == "UNKNOWN_ERROR_CODE_30000"
    err = error_for_code(30000, "ctx")
    assert isinstance(err, KafkaApiError) and not err.retriable


def test_every_code_is_a_named_constant() -> None:
    for code, error in ERRORS.items():
        assert isinstance(error, ErrorCode) and error.code == code == error
        assert getattr(error_codes, error.name) is error
        assert error.name in error_codes.__all__
        assert error_for(code) is error


def test_error_code_is_the_wire_int() -> None:
    assert NOT_COORDINATOR == 16 and 16 in {NOT_COORDINATOR} and {16: "x"}[NOT_COORDINATOR] == "x"
    assert (str(NOT_COORDINATOR), f"{NOT_COORDINATOR}") == ("16", "16")
    assert repr(NOT_COORDINATOR) == "ErrorCode(16, 'NOT_COORDINATOR', retriable=True)"
    assert pickle.loads(pickle.dumps(NOT_COORDINATOR)) == NOT_COORDINATOR
    assert pickle.loads(pickle.dumps(NOT_COORDINATOR)).name == "NOT_COORDINATOR"
    with pytest.raises(AttributeError):
        NOT_COORDINATOR.retriable = False  # type: ignore[misc]  # frozen: under test


def test_api_error_carries_its_error_code() -> None:
    with pytest.raises(KafkaApiError) as info:
        raise_for_error(16, "in OffsetCommit of group g")
    assert info.value.error is NOT_COORDINATOR
    assert type(info.value.code) is int
    custom = KafkaApiError(SASL_AUTHENTICATION_FAILED, "with SASL mechanism PLAIN", "bad password")
    assert str(custom) == (
        "SASL_AUTHENTICATION_FAILED (error code 58) with SASL mechanism PLAIN: bad password"
    )
    assert not custom.retriable


def test_table_matches_kafka_errors(kafka_jar_paths: list[Path]) -> None:
    # Kafka's Errors enum, from the kafka-clients jar of the release under test.
    classpath = os.pathsep.join(str(p) for p in kafka_jar_paths)
    classes = compile_java([JAVA_DIR / "PrintErrors.java"], classpath)
    printed = run_java("PrintErrors", [], classpath=os.pathsep.join([classpath, str(classes)]))
    theirs = {}
    for line in printed.stdout.splitlines():
        code, name, retriable, description = line.split("\t", 3)
        theirs[int(code)] = (name, retriable == "true", description)
    ours = {code: (e.name, e.retriable, e.description) for code, e in ERRORS.items()}
    assert ours == theirs
