"""The one retry policy: what is retriable, and how long to wait before the next try.

What: :func:`retriable` reads :attr:`spark_kafka_py.errors.KafkaError.retriable` (Kafka's
error code table for broker errors, ``RetriableException`` in ``Errors.java``); anything that is
not a :class:`~spark_kafka_py.errors.KafkaError` (a bug, ``KeyboardInterrupt``) is not retried.

How long: :class:`Backoff` is Kafka's ``ExponentialBackoff`` as KIP-580 made it the clients'
policy: ``retry.backoff.ms * 2**attempts``, capped at ``retry.backoff.max.ms``, times a random
factor in ``[0.8, 1.2)`` so that many clients do not retry in step.

:class:`Retries` is one operation's retries under a deadline (``default.api.timeout.ms``,
``max.block.ms``, ...): call :meth:`Retries.after` with each failure; it raises when the failure
is not retriable or the deadline has passed, and otherwise sleeps the backoff. Sans-I/O code
(the KIP-848 membership) uses :meth:`Backoff.pause_ms` alone. No network I/O here; the clock and
sleep are injectable.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from spark_kafka_py.client_defaults import RETRY_BACKOFF_MAX_MS, RETRY_BACKOFF_MS
from spark_kafka_py.errors import KafkaError, KafkaTimeoutError

__all__ = ["JITTER", "MULTIPLIER", "Backoff", "Retries", "retriable"]

#: ``CommonClientConfigs.RETRY_BACKOFF_EXP_BASE``: the backoff doubles per failed attempt.
MULTIPLIER = 2
#: ``CommonClientConfigs.RETRY_BACKOFF_JITTER``: each pause is scaled by a random factor in
#: ``[1 - JITTER, 1 + JITTER)``.
JITTER = 0.2


def retriable(exc: BaseException) -> bool:
    """Whether ``exc`` may succeed when asked again: a :class:`KafkaError` whose
    ``retriable`` is true. Everything else (bugs, interrupts) is not."""
    return isinstance(exc, KafkaError) and exc.retriable


class Backoff:
    """Kafka's exponential backoff with jitter (KIP-580; ``ExponentialBackoff.java``).

    Args:
        initial_ms: the first pause, ``retry.backoff.ms`` (ms; 0 means no pause).
        max_ms: the cap, ``retry.backoff.max.ms`` (ms); at least ``initial_ms`` is used.
        jitter: the random factor's half-width (``0`` for a deterministic backoff).
        rng: returns a float in ``[0, 1)`` (``random.random``; injectable for tests).

    Raises:
        ValueError: a negative bound or jitter outside ``[0, 1)``.
    """

    __slots__ = ("_exp_max", "_rng", "initial_ms", "jitter", "max_ms")

    def __init__(
        self,
        initial_ms: float = RETRY_BACKOFF_MS,
        max_ms: float = RETRY_BACKOFF_MAX_MS,
        *,
        jitter: float = JITTER,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if initial_ms < 0 or max_ms < 0:
            raise ValueError(f"backoff bounds must be >= 0 ms, got {initial_ms} and {max_ms}")
        if not 0 <= jitter < 1:
            raise ValueError(f"jitter must be in [0, 1), got {jitter}")
        self.initial_ms = initial_ms
        self.max_ms = max(max_ms, initial_ms)
        self.jitter = jitter
        self._rng = rng
        # as Java: the exponent stops growing once the cap is reached (no overflow)
        ratio = self.max_ms / initial_ms if initial_ms > 0 else 1.0
        self._exp_max = math.log(ratio, MULTIPLIER) if ratio > 1 else 0.0

    def pause_ms(self, attempts: int) -> float:
        """The pause (ms) after ``attempts`` failed tries before this one (0 for the first
        retry): ``min(initial * 2**attempts * factor, max)``."""
        term = self.initial_ms * math.pow(MULTIPLIER, min(max(attempts, 0), self._exp_max))
        if self.jitter:
            term *= 1 - self.jitter + 2 * self.jitter * self._rng()
        return min(term, self.max_ms)


class Retries:
    """The retries of one operation, bounded by a deadline.

    Args:
        what: the operation, for messages (e.g. ``"ListOffsets for t-0"``).
        timeout_ms: how long the operation may keep retrying (ms), e.g.
            ``default.api.timeout.ms``; the deadline starts now.
        timeout_option: the option that sets ``timeout_ms``, named in the timeout error.
        backoff: the pauses (:class:`Backoff`).
        deadline: a ``clock()`` time (s) to end at instead of ``timeout_ms`` from now: one
            deadline shared by nested retries (a coordinator lookup inside a request's retries).
        timeout_error: builds the error raised at the deadline from the last failure, for
            callers whose timeout message is their own; by default the message below.
        clock, sleep: ``time.monotonic`` and ``time.sleep`` (seconds), injectable for tests.

    Attributes:
        attempts: failed tries so far.
        last: the last failure passed to :meth:`after`.
    """

    def __init__(
        self,
        what: str,
        timeout_ms: float,
        *,
        timeout_option: str = "default.api.timeout.ms",
        backoff: Backoff | None = None,
        deadline: float | None = None,
        timeout_error: Callable[[BaseException], KafkaTimeoutError] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.what = what
        self.timeout_ms = timeout_ms
        self.timeout_option = timeout_option
        self.backoff = backoff if backoff is not None else Backoff()
        self._clock = clock
        self._sleep = sleep
        self._timeout_error = timeout_error
        self.deadline = clock() + timeout_ms / 1000 if deadline is None else deadline
        self.attempts = 0
        self.last: BaseException | None = None

    def remaining_ms(self) -> float:
        """Time left before the deadline (ms, >= 0)."""
        return max(0.0, (self.deadline - self._clock()) * 1000)

    def after(self, exc: BaseException) -> None:
        """Account a failed try; return after the backoff when another try may follow.

        Raises:
            BaseException: ``exc`` itself when it is not :func:`retriable`.
            KafkaTimeoutError: the deadline has passed; the message names the operation, the
                timeout, its option and the last failure, which is also the ``__cause__``
                (``timeout_error``'s error instead, when given).
        """
        self.last = exc
        if not retriable(exc):
            raise exc
        pause_ms = self.backoff.pause_ms(self.attempts)
        self.attempts += 1
        left_ms = self.remaining_ms()
        if left_ms <= 0:
            if self._timeout_error is not None:
                raise self._timeout_error(exc) from exc
            raise KafkaTimeoutError(
                f"{self.what}: still failing after {self.timeout_ms:g} ms "
                f"({self.timeout_option}), {self.attempts} attempt(s); last error: {exc}"
            ) from exc
        self._sleep(min(pause_ms, left_ms) / 1000)
