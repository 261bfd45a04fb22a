"""Error table and raise_for_error."""

from __future__ import annotations

import pytest

from spark_kafka_py.errors import KafkaApiError
from spark_kafka_py.protocol.error_codes import (
    ERRORS,
    ERRORS_BY_NAME,
    NOT_LEADER_OR_FOLLOWER,
    error_for,
    error_for_code,
    raise_for_error,
)


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
