"""Coordinator look-ups and requests (spark_kafka_py.client.coordinator) follow the one retry
policy: retriable errors are asked again after a backoff that doubles (KIP-580, with jitter)
until the timeout; errors that are not retriable end the retries at once."""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from spark_kafka_py.client.cluster import KafkaClient
from spark_kafka_py.client.coordinator import (
    KEY_TYPE_TRANSACTION,
    call_coordinator,
    deadline_after,
    find_coordinator,
)
from spark_kafka_py.client.retry import JITTER
from spark_kafka_py.errors import KafkaApiError, KafkaConnectionError, KafkaTimeoutError
from spark_kafka_py.protocol import error_codes as ec
from spark_kafka_py.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse

BACKOFF_MS = 20


class _Coordinators:
    """A client whose FindCoordinator answers come from ``answers`` (an error code, or an
    exception to raise), repeating the last one; ``times`` holds when each was asked."""

    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.times: list[float] = []
        self.config = SimpleNamespace(retry_backoff_ms=BACKOFF_MS)

    def least_loaded_node(self) -> int:
        return 1

    def send(self, node: int, request: Any, max_version: int | None = None) -> Any:
        self.times.append(time.monotonic())
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return FindCoordinatorResponse(
            coordinators=(Coordinator(key="tid", node_id=7, host="h", port=1, error_code=answer),)
        )


def _find(client: _Coordinators, timeout_ms: int) -> int:
    return find_coordinator(
        cast(KafkaClient, client),
        "tid",
        KEY_TYPE_TRANSACTION,
        deadline_after(timeout_ms),
        timeout_ms,
    )


def test_retriable_answers_are_asked_again_after_a_growing_backoff() -> None:
    busy = ec.COORDINATOR_NOT_AVAILABLE.code
    client = _Coordinators(busy, busy, busy, busy, ec.NONE.code)
    assert _find(client, 10_000) == 7
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(client.times)]
    assert len(gaps) == 4
    # 20, 40, 80, 160 ms, -20 % at most (a loaded machine may sleep longer, never shorter)
    for n, gap in enumerate(gaps):
        assert gap >= BACKOFF_MS * 2**n * (1 - JITTER), (n, gaps)


def test_the_timeout_names_the_request_and_the_last_error() -> None:
    client = _Coordinators(ec.COORDINATOR_LOAD_IN_PROGRESS.code)
    with pytest.raises(KafkaTimeoutError) as info:
        _find(client, 300)
    assert str(info.value) == (
        "FindCoordinator for transactional id 'tid': not done within 300 ms "
        "(last: COORDINATOR_LOAD_IN_PROGRESS)"
    )
    # 16 + 32 + 64 + 128 ms (the shortest jitter) < 300 ms: a last try after the pause cut at
    # the deadline makes at most 6
    assert 2 <= len(client.times) <= 6, client.times


@pytest.mark.parametrize(
    "answer",
    [
        ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code,
        KafkaConnectionError("TLS handshake with 127.0.0.1:9 failed", retriable=False),
    ],
)
def test_errors_that_are_not_retriable_are_raised_at_once(answer: int | Exception) -> None:
    client = _Coordinators(answer)
    with pytest.raises((KafkaApiError, KafkaConnectionError)) as info:
        _find(client, 10_000)
    assert len(client.times) == 1
    if isinstance(answer, int):
        assert isinstance(info.value, KafkaApiError)
        assert info.value.error == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert "in FindCoordinator for transactional id 'tid'" in str(info.value)


def test_call_coordinator_looks_the_coordinator_up_again_after_a_lost_connection() -> None:
    client = _Coordinators(ec.NONE.code)
    answers: list[Exception | int] = [KafkaConnectionError("reset"), ec.NONE.code]
    sent: list[int] = []

    def send(node: int, request: Any, max_version: int | None = None) -> Any:
        if isinstance(request, str):  # the request to the coordinator
            sent.append(node)
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return SimpleNamespace(error_code=answer)
        return _Coordinators.send(client, node, request, max_version)

    client.send = send  # type: ignore[method-assign]
    _response, code = call_coordinator(
        cast(KafkaClient, client),
        "tid",
        "EndTxn",
        lambda r: r.error_code,
        what="EndTxn for 'tid'",
        timeout_ms=10_000,
    )
    assert code == ec.NONE and sent == [7, 7]
    assert len(client.times) == 2  # a FindCoordinator before each try
