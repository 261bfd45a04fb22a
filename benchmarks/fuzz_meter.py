"""Peak memory of one call, as the kernel and Arrow see it (the fuzzing limits per input).

``tracemalloc`` sees only what Python's allocator hands out: not ``malloc`` in the
accelerated records decoder (``_accel.pyx``), not pyarrow's memory pool, not the codecs'
buffers. :class:`PeakMeter` measures around one call:

- ``rss_bytes``: the peak resident set size during the call minus the resident size before
  it. Before the call, ``/proc/self/clear_refs`` (value 5, Linux >= 4.0) resets the kernel's
  high-water mark ``VmHWM`` to the current ``VmRSS``; after it, ``VmHWM`` is read.
- ``arrow_bytes``: the peak bytes allocated from pyarrow's memory pool during the call: a
  fresh ``pyarrow.proxy_memory_pool`` is the default pool for the call, and its
  ``max_memory()`` is read.

- ``arrow_retained_bytes``: ``pyarrow.total_allocated_bytes()`` after the call minus before
  it (what the call left allocated).

For the resident size to see every large allocation, rather than pages an earlier call left
in an allocator's cache, freed memory must go back to the kernel at once: :class:`PeakMeter`
sets glibc's ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` to 128 KiB (``mallopt``; fixed
values also turn off glibc's dynamic threshold) and measures Arrow on its system pool (over
``malloc``) instead of jemalloc/mimalloc, whose caches keep freed pages. A process started
with :data:`MEASURED_ENV` has the same settings from its start.

Linux only (``/proc``).
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = ["MEASURED_ENV", "Peak", "PeakMeter"]

#: Environment of a process whose calls are measured (set before it starts).
MEASURED_ENV = {
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "MALLOC_MMAP_THRESHOLD_": "131072",
    "MALLOC_TRIM_THRESHOLD_": "131072",
}
_KB = 1024  # /proc/self/status sizes are in kB
#: glibc ``mallopt`` parameters (malloc.h) and the value used for both (bytes).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_THRESHOLD = 128 * 1024


def _return_freed_memory_at_once() -> None:
    """glibc: every allocation above 128 KiB is its own mapping, and heap tops above 128 KiB
    are trimmed on free (no-op on another C library)."""
    libc = ctypes.CDLL(None)
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, _THRESHOLD)
        mallopt(_M_TRIM_THRESHOLD, _THRESHOLD)


@dataclass(frozen=True, slots=True)
class Peak:
    """What one call used.

    Attributes:
        seconds: wall time.
        cpu_seconds: CPU time of the calling thread (what the call computed, whatever else
            the machine was doing).
        rss_bytes: peak resident size during the call minus the resident size before it.
        arrow_bytes: peak bytes of pyarrow's memory pool during the call.
        arrow_retained_bytes: ``pyarrow.total_allocated_bytes()`` after minus before.
        error: the exception the call raised, or ``None``.
    """

    seconds: float
    cpu_seconds: float
    rss_bytes: int
    arrow_bytes: int
    arrow_retained_bytes: int
    error: BaseException | None

    @property
    def bytes(self) -> int:
        """The largest of the three memory figures (bytes)."""
        return max(self.rss_bytes, self.arrow_bytes, self.arrow_retained_bytes)


class PeakMeter:
    """Measures calls of this process (see the module docstring). Not thread-safe."""

    def __init__(self) -> None:
        _return_freed_memory_at_once()
        self._status = os.open("/proc/self/status", os.O_RDONLY)
        self._clear = os.open("/proc/self/clear_refs", os.O_WRONLY)
        self._base_pool = pa.system_memory_pool()
        self._previous_pool = pa.default_memory_pool()
        #: proxy pools with allocations still alive: a buffer keeps only a plain pointer to its
        #: pool, so a pool is freed once nothing it allocated is alive
        self._live_pools: list[Any] = []
        self.max_live_pools = 0

    def _sizes(self) -> tuple[int, int]:
        """``(VmRSS, VmHWM)`` in bytes."""
        text = os.pread(self._status, 8192, 0)
        rss = text.index(b"VmRSS:")
        hwm = text.index(b"VmHWM:")
        return (
            int(text[rss + 6 : text.index(b"kB", rss)]) * _KB,
            int(text[hwm + 6 : text.index(b"kB", hwm)]) * _KB,
        )

    def measure(self, fn: Callable[[], Any], catch: type[BaseException] = Exception) -> Peak:
        """Call ``fn()``; an exception of type ``catch`` is returned in :attr:`Peak.error`,
        others propagate."""
        os.write(self._clear, b"5")  # VmHWM := VmRSS
        rss_before, _ = self._sizes()
        pool = pa.proxy_memory_pool(self._base_pool)
        arrow_before = pa.total_allocated_bytes()
        pa.set_memory_pool(pool)
        error: BaseException | None = None
        t0 = time.perf_counter()
        cpu0 = time.thread_time()
        try:
            fn()
        except catch as exc:
            error = exc
        except BaseException:
            self._live_pools.append(pool)
            raise
        finally:
            seconds = time.perf_counter() - t0
            cpu_seconds = time.thread_time() - cpu0
            _, hwm = self._sizes()
            pa.set_memory_pool(self._previous_pool)
        arrow = pool.max_memory() or 0
        retained = pa.total_allocated_bytes() - arrow_before
        if pool.bytes_allocated():
            self._live_pools.append(pool)
        del pool
        if len(self._live_pools) > 100:
            self._live_pools = [p for p in self._live_pools if p.bytes_allocated()]
            self.max_live_pools = max(self.max_live_pools, len(self._live_pools))
        return Peak(seconds, cpu_seconds, max(0, hwm - rss_before), arrow, max(0, retained), error)

    def close(self) -> None:
        """Close the ``/proc`` files (pools with live allocations stay referenced)."""
        os.close(self._status)
        os.close(self._clear)
