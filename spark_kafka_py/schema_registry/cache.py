"""A bounded, thread-safe cache of schemas, one per process.

A schema registry never changes what an id (or a GUID) names, so a schema fetched once may be
kept for the life of the process: an executor decoding records of a few writer schemas asks
the registry once per schema, not once per record or per task. The cache is bounded by the
number of schemas and by their total size, and forgets the least recently used first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["MAX_CACHED_BYTES", "MAX_CACHED_SCHEMAS", "LruCache"]

#: Schemas kept per process at most (Confluent's clients keep 1,000 per cache as well).
MAX_CACHED_SCHEMAS = 1_000

#: Total size of the cached schemas' text at most, characters (about bytes): 64 Mi.
MAX_CACHED_BYTES = 64 * 1024 * 1024

V = TypeVar("V")


class LruCache(Generic[V]):
    """Least-recently-used cache bounded by entries and by total size.

    Args:
        max_entries: entries kept at most (>= 1).
        max_bytes: sum of the entries' sizes kept at most (the ``size`` given to
            :meth:`put`, bytes); an entry larger than this is not kept.

    Raises:
        ValueError: a bound below 1.
    """

    def __init__(
        self, max_entries: int = MAX_CACHED_SCHEMAS, max_bytes: int = MAX_CACHED_BYTES
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"cache bounds must be >= 1, got {max_entries} and {max_bytes}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value of ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Keep ``value`` under ``key`` (``size`` in bytes), evicting the least recently used
        entries beyond the bounds."""
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    @property
    def size_bytes(self) -> int:
        """The sum of the kept entries' sizes (bytes)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)
