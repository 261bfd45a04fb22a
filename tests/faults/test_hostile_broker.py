"""A hostile broker: the fault proxy rewrites the real broker's responses, and every read fails
with a typed error naming the broker, within ``kafka.request.timeout.ms``, with no memory growth.

Rewrites (:mod:`spark_kafka_py.testing.faultproxy`), each of a real response of the broker:
length fields inflated (the frame size, a records length, an array count off by one), arrays
claiming ``2**31 - 1`` elements, frames truncated with a matching size, a correlation id the
client never sent, and a Fetch response for a partition (or topic) the client did not ask for.

A hostile answer is not a reason to retry: the fetcher retries connection failures and timeouts
until ``kafkaConsumer.pollTimeoutMs`` (a broker restarting), so a test here sets that far above
``kafka.request.timeout.ms``, and a read that fails only after it fails the test. The one
exception is a frame size inflated within the frame limit: the bytes it claims could still
come, so it is a timeout, retried like any other (see its test).

Memory: every case is repeated :data:`ATTEMPTS` times after a warm-up; neither pyarrow's
allocations nor the process's resident set may grow by more than a small bound.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import KafkaError, KafkaProtocolError, KafkaTimeoutError
from spark_kafka_py.testing.faultproxy import (
    FETCH_KEY,
    METADATA_KEY,
    Fault,
    FaultProxy,
    Rewrite,
    edit_response,
    inflate_frame_size,
    replace_correlation_id,
    set_length,
    truncate_body,
)

from .helpers import expected_values, fetcher_via, produce_values, rows, settings_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

COUNT = 200
#: kafka.request.timeout.ms of every read here.
REQUEST_TIMEOUT_MS = 3000
#: kafkaConsumer.pollTimeoutMs: far above the request timeout, so that retrying a hostile
#: answer until it runs out shows as a failure of the time bound.
POLL_TIMEOUT_MS = 40_000
#: kafkaConsumer.pollTimeoutMs of the Spark reads (Spark's default), above their margin.
SPARK_POLL_TIMEOUT_MS = 120_000
#: Slack on the time bound (s): a loaded 2-core CI machine, Python start-up of Spark workers.
MARGIN_S = 10.0
SPARK_MARGIN_S = 40.0
#: Repetitions of each case for the memory check, after WARMUP unmeasured ones.
ATTEMPTS = 20
WARMUP = 3
#: Growth allowed across ATTEMPTS (bytes): pyarrow's pool, and the resident set.
MAX_ARROW_GROWTH = 1 << 20
MAX_RSS_GROWTH = 4 << 20
INT32_MAX = 2**31 - 1


def _rss() -> int:
    """The resident set size of this process now (bytes; Linux ``/proc``), or the peak."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _other_partition(response: Any) -> Any:
    """The Fetch response with every partition renumbered 7 (the topic has one: 0)."""
    topics = tuple(
        dataclasses.replace(
            t, partitions=tuple(dataclasses.replace(p, partition_index=7) for p in t.partitions)
        )
        for t in response.responses
    )
    return dataclasses.replace(response, responses=topics)


def _other_topic(response: Any) -> Any:
    """The Fetch response for a topic that was not asked for (another name and id)."""
    topics = tuple(
        dataclasses.replace(t, topic=f"{t.topic}-other" if t.topic else "", topic_id=uuid.uuid4())
        for t in response.responses
    )
    return dataclasses.replace(response, responses=topics)


def _extra_partition(response: Any) -> Any:
    """The Fetch response with the partition asked for and, after it, one not asked for."""
    topics = tuple(
        dataclasses.replace(
            t,
            partitions=(
                *t.partitions,
                *(dataclasses.replace(p, partition_index=3) for p in t.partitions),
            ),
        )
        for t in response.responses
    )
    return dataclasses.replace(response, responses=topics)


@dataclasses.dataclass(frozen=True)
class Case:
    """One rewrite, what it applies to, and the error it must end in."""

    rewrite: Rewrite
    error: type[KafkaError]
    says: str  # a piece of the error message (what was wrong)
    api_key: int | None = FETCH_KEY


CASES: dict[str, Case] = {
    "frame-size-past-the-frame-limit": Case(
        inflate_frame_size(INT32_MAX), KafkaProtocolError, "exceeds max_frame_bytes"
    ),
    "records-length-inflated": Case(
        set_length("PartitionData.records", INT32_MAX - 1), KafkaProtocolError, "records"
    ),
    "partitions-count-one-too-many": Case(
        set_length("FetchableTopicResponse.partitions", 2), KafkaProtocolError, "PartitionData"
    ),
    "topics-array-claims-2^31": Case(
        set_length("FetchResponse.responses", INT32_MAX),
        KafkaProtocolError,
        "FetchResponse.responses",
    ),
    "partitions-array-claims-2^31": Case(
        set_length("FetchableTopicResponse.partitions", INT32_MAX),
        KafkaProtocolError,
        "FetchableTopicResponse.partitions",
    ),
    "aborted-transactions-array-claims-2^31": Case(
        set_length("PartitionData.aborted_transactions", INT32_MAX),
        KafkaProtocolError,
        "PartitionData.aborted_transactions",
    ),
    "metadata-brokers-array-claims-2^31": Case(
        set_length("MetadataResponse.brokers", INT32_MAX),
        KafkaError,
        "MetadataResponse.brokers",
        api_key=METADATA_KEY,
    ),
    "truncated-frame": Case(truncate_body(-7), KafkaProtocolError, "PartitionData.records"),
    "truncated-inside-the-header": Case(truncate_body(2), KafkaProtocolError, "frame size 2"),
    "correlation-id-never-sent": Case(
        replace_correlation_id(), KafkaProtocolError, "correlation id mismatch"
    ),
    "correlation-id-never-sent-on-every-response": Case(
        replace_correlation_id(), KafkaError, "correlation id mismatch", api_key=None
    ),
    "fetch-response-for-a-partition-not-asked-for": Case(
        edit_response(_other_partition), KafkaProtocolError, "not asked for"
    ),
    "fetch-response-with-an-extra-partition": Case(
        edit_response(_extra_partition), KafkaProtocolError, "not asked for"
    ),
    "fetch-response-for-a-topic-not-asked-for": Case(
        edit_response(_other_topic), KafkaProtocolError, "not asked for"
    ),
}


@pytest.fixture(scope="module")
def topic(kafka_bootstrap: str) -> str:
    from spark_kafka_py.testing.tools import create_topic

    name = f"hostile-broker-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, name, partitions=1)
    produce_values(kafka_bootstrap, name, COUNT)
    return name


def _proxy(bootstrap: str, advertise: bool) -> Iterator[FaultProxy]:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with FaultProxy(host, int(port), advertise=advertise) as p:
        yield p
    assert p.errors == []  # every rewrite fitted the response it was given


@pytest.fixture()
def proxy(kafka_bootstrap: str) -> Iterator[FaultProxy]:
    """For a client with the proxy's socket factory: brokers keep their real addresses."""
    yield from _proxy(kafka_bootstrap, advertise=False)


@pytest.fixture()
def advertising_proxy(kafka_bootstrap: str) -> Iterator[FaultProxy]:
    """For clients given only the proxy's address (Spark): Metadata names the proxy."""
    yield from _proxy(kafka_bootstrap, advertise=True)


def _failed_read(
    proxy: FaultProxy,
    bootstrap: str,
    topic: str,
    *,
    poll_timeout_ms: int = POLL_TIMEOUT_MS,
    request_timeout_ms: int = REQUEST_TIMEOUT_MS,
) -> tuple[BaseException, float]:
    """Read the whole topic through the proxy; return the error and the seconds it took."""
    client, fetcher = fetcher_via(
        proxy,
        settings_for(bootstrap, request_timeout_ms=request_timeout_ms),
        TopicPartition(topic, 0),
        poll_timeout_ms=poll_timeout_ms,
    )
    started = time.monotonic()
    try:
        got = rows(fetcher.read(0, COUNT))
    except Exception as exc:  # checked by the caller: type, message, time
        return exc, time.monotonic() - started
    finally:
        client.close()
    raise AssertionError(f"the read succeeded through a hostile broker: {len(got)} rows")


def _assert_no_growth(attempt: Callable[[], object]) -> None:
    """``attempt`` repeated: pyarrow's allocations and the RSS stay within their bounds."""
    for _ in range(WARMUP):
        attempt()
    arrow, rss = pa.total_allocated_bytes(), _rss()
    for _ in range(ATTEMPTS):
        attempt()
    arrow_growth = pa.total_allocated_bytes() - arrow
    rss_growth = _rss() - rss
    assert arrow_growth <= MAX_ARROW_GROWTH, f"pyarrow grew {arrow_growth} bytes"
    assert rss_growth <= MAX_RSS_GROWTH, f"RSS grew {rss_growth} bytes in {ATTEMPTS} attempts"


def test_advertising_proxy_carries_every_connection_and_every_row(
    advertising_proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    # The Metadata rewrite the Spark test relies on: a client given only the proxy's address
    # reaches the broker through it alone, and reads every row.
    proxy = advertising_proxy
    client, fetcher = fetcher_via(
        None, settings_for(proxy.address), TopicPartition(topic, 0), poll_timeout_ms=30_000
    )
    try:
        assert rows(fetcher.read(0, COUNT)) == expected_values(COUNT, 1, 0)
        assert client.cached_metadata is not None
        brokers = client.cached_metadata.brokers.values()
        assert {(b.host, b.port) for b in brokers} == {("127.0.0.1", proxy.port)}
    finally:
        client.close()
    assert proxy.connections >= 2  # the bootstrap connection, then the broker's


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_response_fails_fast_naming_the_broker_without_memory_growth(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str, name: str
) -> None:
    case = CASES[name]
    fault = proxy.add(Fault("rewrite", api_key=case.api_key, rewrite=case.rewrite, times=-1))
    error, elapsed = _failed_read(proxy, kafka_bootstrap, topic)
    assert fault.fired >= 1
    assert isinstance(error, case.error), repr(error)
    text = str(error)
    assert case.says in text
    assert kafka_bootstrap in text  # the broker, as the client knows it (host:port)
    assert elapsed < REQUEST_TIMEOUT_MS / 1000 + MARGIN_S, f"failed after {elapsed:.1f} s"

    def attempt() -> None:
        error, _ = _failed_read(proxy, kafka_bootstrap, topic)
        assert isinstance(error, case.error), repr(error)

    _assert_no_growth(attempt)


def test_frame_size_inflated_within_the_limit_is_a_timeout_naming_the_broker(
    proxy: FaultProxy, kafka_bootstrap: str, topic: str
) -> None:
    # The size prefix claims 1000 bytes more than the broker sent: they could still be on
    # their way, so each request ends at kafka.request.timeout.ms and the read, which retries
    # timeouts like a restarting broker's, at kafkaConsumer.pollTimeoutMs.
    fault = proxy.add(
        Fault("rewrite", api_key=FETCH_KEY, rewrite=inflate_frame_size(1000), times=-1)
    )
    error, elapsed = _failed_read(proxy, kafka_bootstrap, topic, poll_timeout_ms=REQUEST_TIMEOUT_MS)
    assert fault.fired >= 1
    assert isinstance(error, KafkaTimeoutError), repr(error)
    text = str(error)
    assert f"got no response within {REQUEST_TIMEOUT_MS} ms" in text and kafka_bootstrap in text
    assert elapsed < 2 * REQUEST_TIMEOUT_MS / 1000 + MARGIN_S, f"failed after {elapsed:.1f} s"

    def attempt() -> None:
        error, _ = _failed_read(
            proxy, kafka_bootstrap, topic, poll_timeout_ms=1, request_timeout_ms=300
        )
        assert isinstance(error, KafkaTimeoutError), repr(error)

    _assert_no_growth(attempt)


@pytest.mark.parametrize(
    "name", ["fetch-response-for-a-partition-not-asked-for", "partitions-array-claims-2^31"]
)
def test_spark_batch_read_fails_fast_naming_the_broker(
    spark: Any, advertising_proxy: FaultProxy, topic: str, name: str
) -> None:
    proxy = advertising_proxy
    # Driver and executors reach the broker only through the proxy (advertise=True); the
    # driver's Metadata and ListOffsets pass, every Fetch answer is rewritten.
    case = CASES[name]
    reader = (
        spark.read.format("pykafka")
        .option("kafka.bootstrap.servers", proxy.address)
        .option("subscribe", topic)
        .option("kafka.request.timeout.ms", str(REQUEST_TIMEOUT_MS))
        .option("kafkaConsumer.pollTimeoutMs", str(SPARK_POLL_TIMEOUT_MS))
    )
    # Unharmed first (Python workers started, outside the timed part): every row.
    assert len(reader.load().select("offset").collect()) == COUNT
    fault = proxy.add(Fault("rewrite", api_key=FETCH_KEY, rewrite=case.rewrite, times=-1))
    started = time.monotonic()
    with pytest.raises(Exception) as info:  # PySpark wraps the executor's Python error
        reader.load().collect()
    elapsed = time.monotonic() - started
    text = str(info.value)
    assert fault.fired >= 1
    assert case.error.__name__ in text and case.says in text
    assert proxy.address in text  # the broker, as the executor knows it (advertised)
    assert elapsed < REQUEST_TIMEOUT_MS / 1000 + SPARK_MARGIN_S, f"failed after {elapsed:.1f} s"
