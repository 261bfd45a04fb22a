"""A cached Metadata answer with its age, and its refresh on a thread of its own.

A stream reader asks for the latest offsets of its topic-partitions every micro-batch. Their
leaders come from a Metadata request (API key 3), which at 10,000 partitions costs about
130 ms of CPU to decode. :class:`MetadataCache` keeps the last answer (topic-partition ->
leader node id) and reports it while it is younger than ``metadata.max.age.ms``, as Kafka's
Java client does with its ``Metadata`` (``org.apache.kafka.clients.Metadata``); and it asks
again between micro-batches, on a daemon thread with a :class:`KafkaClient` of its own (a
client is used by one thread at a time), so that the answer is waiting when the next
micro-batch needs it.

What is asked is the caller's: a ``lookup`` function that, given a client, asks Metadata and
returns ``{TopicPartition: leader node id}`` (-1: no leader), raising what the look-up
raises. The cache knows no subscription and no Spark option.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from spark_kafka_py.client.cluster import ClientConfig, KafkaClient
from spark_kafka_py.protocol.topic_partition import TopicPartition

__all__ = ["Leaders", "LeadersLookup", "MetadataCache"]

log = logging.getLogger(__name__)

#: ``{TopicPartition: leader node id}``; -1 for a partition without a leader.
Leaders = Mapping[TopicPartition, int]
#: Asks Metadata with the client it is given; returns the leaders, or raises.
LeadersLookup = Callable[[KafkaClient], Leaders]

#: How long :meth:`MetadataCache.close` waits for a refresh under way, in seconds. A healthy
#: cluster answers in milliseconds; a refresh still retrying through a broker outage is cut
#: off by its closed connections, and its daemon thread never holds up a stop for longer.
CLOSE_WAIT_S = 2.0


class _Refresh:
    """One ``lookup`` on a daemon thread: its answer in ``leaders`` and ``asked``
    (``time.monotonic()`` when the request started, in s), or its exception in ``error``,
    once ``thread`` ended."""

    def __init__(self, lookup: LeadersLookup, client: KafkaClient, clock: Callable[[], float]):
        self.leaders: dict[TopicPartition, int] | None = None
        self.asked = 0.0
        self.error: BaseException | None = None
        self._lookup = lookup
        self._client = client
        self._clock = clock
        self.thread = threading.Thread(
            target=self._run, name="spark-kafka-py-metadata", daemon=True
        )
        self.thread.start()

    def _run(self) -> None:
        try:
            asked = self._clock()
            self.leaders = dict(self._lookup(self._client))
            self.asked = asked
        except BaseException as exc:  # handed to the next MetadataCache.fresh()
            self.error = exc


class MetadataCache:
    """The leaders of the last Metadata look-up, reported while younger than
    ``config.metadata_max_age_ms``, and refreshed in the background on request.

    Not thread-safe: one thread calls its methods (the driver's planning thread); only the
    refresh it starts runs on another, and its answer is taken by that thread in
    :meth:`fresh`.

    Args:
        config: the client settings; the refresh's own client is built from them on its first
            use, and ``metadata_max_age_ms`` (ms) bounds the age of what :meth:`fresh`
            reports.
        lookup: asks Metadata with the client it is given and returns
            ``{TopicPartition: leader node id}``; what it raises, a refresh keeps for
            :meth:`fresh` (which then drops the cache).
        clock: seconds, monotonic (``time.monotonic``; a test's clock otherwise).

    Picklable: a copy carries the settings and ``lookup`` (which must be picklable), never a
    cached answer, a client or a thread.
    """

    def __init__(
        self,
        config: ClientConfig,
        lookup: LeadersLookup,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._lookup = lookup
        self._clock = clock
        self._leaders: dict[TopicPartition, int] | None = None
        self._asked = 0.0
        self._version = 0
        self._refresh: _Refresh | None = None
        self._client: KafkaClient | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_leaders=None, _asked=0.0, _refresh=None, _client=None)
        return state

    @property
    def version(self) -> int:
        """Changes whenever the cached leaders do (stored, replaced by a refresh that found
        other leaders, or forgotten): what a caller keys on to rebuild what it derived from
        them (e.g. its ListOffsets requests)."""
        return self._version

    def store(self, leaders: Leaders, asked: float) -> None:
        """Cache the answer of a look-up the caller made itself.

        Args:
            leaders: ``{TopicPartition: leader node id}`` (copied).
            asked: the clock's time (s) when that Metadata request started: the answer's age
                counts from then.
        """
        self._leaders = dict(leaders)
        self._asked = asked
        self._version += 1

    def forget(self) -> None:
        """Drop the cached leaders: :meth:`fresh` reports none until the next :meth:`store`
        or finished refresh."""
        if self._leaders is not None:
            self._leaders = None
            self._version += 1

    def fresh(self) -> Leaders | None:
        """The cached leaders if younger than ``metadata.max.age.ms``, else ``None``.

        First takes a finished refresh: leaders other than the cached ones replace them;
        the same ones are as young as it. A failed refresh drops the cache (and is logged), so
        that the caller asks Metadata itself and raises what that raises. The answer must not
        be modified.
        """
        self._adopt_refresh()
        if self._leaders is None:
            return None
        if (self._clock() - self._asked) * 1000 >= self.config.metadata_max_age_ms:
            return None
        return self._leaders

    def refresh(self) -> None:
        """Start the look-up on a daemon thread with the cache's own client, unless one is
        under way (or finished and not taken yet by :meth:`fresh`). Call it when the thread
        that uses the cache is idle for a while: the answer's decoding then delays nothing."""
        if self._refresh is not None:
            return
        if self._client is None:
            self._client = KafkaClient(self.config)
        self._refresh = _Refresh(self._lookup, self._client, self._clock)

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for a refresh under way to end.

        Returns:
            True when no refresh is running any more (none was, or it ended).
        """
        refresh = self._refresh
        if refresh is None:
            return True
        refresh.thread.join(timeout_s)
        return not refresh.thread.is_alive()

    def close(self) -> None:
        """Wait up to :data:`CLOSE_WAIT_S` for a refresh under way, then close the refresh's
        client (which cuts off one that is still retrying). The cache stays usable: a later
        :meth:`refresh` opens a new client."""
        refresh, self._refresh = self._refresh, None
        client, self._client = self._client, None
        try:
            if refresh is not None:
                refresh.thread.join(CLOSE_WAIT_S)
        finally:
            if client is not None:
                client.close()

    def _adopt_refresh(self) -> None:
        refresh = self._refresh
        if refresh is None or refresh.thread.is_alive():
            return
        self._refresh = None
        if refresh.error is not None:
            log.info(
                "Metadata asked between micro-batches failed (%s); asking again", refresh.error
            )
            self.forget()
            return
        assert refresh.leaders is not None
        if refresh.leaders != self._leaders:
            self._leaders = refresh.leaders
            self._version += 1
        self._asked = refresh.asked
