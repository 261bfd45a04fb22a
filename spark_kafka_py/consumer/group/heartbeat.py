"""The heartbeat timer of a classic group member, as a pure object (times passed in, in ms).

Like Java's ``org.apache.kafka.clients.consumer.internals.Heartbeat`` (and kafka-python's
``coordinator/heartbeat.py``): a heartbeat is due ``heartbeat.interval.ms`` after the last one
was sent (or, after a failed one, the backoff: ``retry.backoff.ms`` doubling per failure in a
row up to ``retry.backoff.max.ms``, with jitter, as Java's ``Heartbeat`` since KIP-580); the
session has expired when no heartbeat succeeded within ``session.timeout.ms``; the member must
leave when the application did not "poll" (for us: did not reach a micro-batch boundary) within
``max.poll.interval.ms``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from spark_kafka_py.client.retry import Backoff
from spark_kafka_py.errors import ConfigError

__all__ = ["HeartbeatThread", "HeartbeatTimer"]

log = logging.getLogger(__name__)


@dataclass
class HeartbeatTimer:
    """Heartbeat bookkeeping; every method takes ``now_ms`` (a monotonic clock, in ms).

    Args:
        session_timeout_ms: ``session.timeout.ms`` (Java default 45,000).
        heartbeat_interval_ms: ``heartbeat.interval.ms`` (default 3,000); must be below
            ``session_timeout_ms``.
        max_poll_interval_ms: ``max.poll.interval.ms`` (default 300,000).
        retry_backoff_ms: pause after a failed heartbeat (``retry.backoff.ms``) when no
            ``backoff`` is given.
        backoff: the pauses after failed heartbeats in a row (KIP-580's exponential backoff,
            :class:`~spark_kafka_py.client.retry.Backoff`); an answered heartbeat resets it.

    Raises:
        ConfigError: ``heartbeat.interval.ms`` >= ``session.timeout.ms`` (Java's rule), naming
            both options.
    """

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 3_000
    max_poll_interval_ms: int = 300_000
    retry_backoff_ms: int = 100
    backoff: Backoff | None = None
    _failures: int = field(default=0, init=False)
    _last_send: float = field(default=float("-inf"), init=False)
    _last_receive: float = field(default=0.0, init=False)
    _last_poll: float = field(default=0.0, init=False)
    _next_due: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(
                f"Option 'kafka.heartbeat.interval.ms' ({self.heartbeat_interval_ms}) must be "
                f"lower than 'kafka.session.timeout.ms' ({self.session_timeout_ms})"
            )

    def reset(self, now_ms: float) -> None:
        """A (re)joined member: the session and poll timers start now, next beat in one
        interval."""
        self._last_receive = now_ms
        self._last_poll = now_ms
        self._next_due = now_ms + self.heartbeat_interval_ms

    def poll(self, now_ms: float) -> None:
        """The application made progress (a micro-batch boundary)."""
        self._last_poll = now_ms

    def sent(self, now_ms: float) -> None:
        """A heartbeat was sent; the next is due one interval later."""
        self._last_send = now_ms
        self._next_due = now_ms + self.heartbeat_interval_ms

    def received(self, now_ms: float) -> None:
        """A heartbeat was answered (with any error the coordinator understood)."""
        self._last_receive = now_ms
        self._failures = 0

    def failed(self, now_ms: float) -> None:
        """A heartbeat got no answer (or a coordinator error); retry after the backoff
        (``retry_backoff_ms`` without one)."""
        pause: float = self.retry_backoff_ms
        if self.backoff is not None:
            pause = self.backoff.pause_ms(self._failures)
        self._failures += 1
        self._next_due = now_ms + pause

    def time_to_next_ms(self, now_ms: float) -> float:
        """Milliseconds until the next heartbeat is due (0 if due now)."""
        return max(0.0, self._next_due - now_ms)

    def due(self, now_ms: float) -> bool:
        """Whether a heartbeat should be sent now."""
        return now_ms >= self._next_due

    def session_expired(self, now_ms: float) -> bool:
        """No heartbeat answered within ``session_timeout_ms``."""
        return now_ms - self._last_receive > self.session_timeout_ms

    def poll_expired(self, now_ms: float) -> bool:
        """No :meth:`poll` within ``max_poll_interval_ms``."""
        return now_ms - self._last_poll > self.max_poll_interval_ms


class HeartbeatThread:
    """The daemon thread of a group member (classic or KIP-848) that calls ``beat`` and then
    waits ``wait_ms()`` ms (kept within 10 ms and 1 s, so a stop or a changed schedule is seen
    soon), until :meth:`stop`.

    ``beat`` decides itself whether a heartbeat is due. An exception from it is logged with its
    traceback (``where()`` names the group) and the thread goes on: what a failed heartbeat
    means is the member's state machine's to decide, and a dead thread would fence the member
    without a word.

    Args:
        name: the thread's name.
        beat: sends a heartbeat when one is due (what it returns is not used).
        wait_ms: how long until the next one may be due (ms).
        where: the member's description for log lines.
    """

    def __init__(
        self,
        name: str,
        beat: Callable[[], object],
        wait_ms: Callable[[], float],
        where: Callable[[], str],
    ) -> None:
        self.name = name
        self._beat = beat
        self._wait_ms = wait_ms
        self._where = where
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """End the current wait now (a heartbeat may have become due)."""
        self._wake.set()

    def stop(self, timeout_s: float) -> None:
        """Stop the thread and wait up to ``timeout_s`` s for it to end."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=timeout_s)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._beat()
            except Exception:  # keep beating; logged with its traceback
                log.exception("%s: heartbeat thread error", self._where())
            if self._stop.is_set():
                return
            self._wake.wait(min(max(self._wait_ms(), 10.0), 1_000.0) / 1000)
            self._wake.clear()
