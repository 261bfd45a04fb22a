"""Debug timings of the stream reader, for ``spark-kafka-py bench stream``: where a
micro-batch's driver time goes and how long the executors fetch and decode.

Off unless the environment variable :data:`STREAM_TIMINGS_ENV` names a file (documented in
docs/performance.md, "Where a micro-batch's time goes"); the reader's methods are wrapped by
:func:`timed`, its ``read`` by :func:`timed_read`. Nothing else in the library uses this.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pyarrow as pa

__all__ = ["STREAM_TIMINGS_ENV", "timed", "timed_read"]

log = logging.getLogger(__name__)

#: Debug switch of the stream reader: a file path. When it is set in the environment of the
#: driver-side Python process that holds a ``format("pykafka")`` stream reader, each call of
#: ``initialOffset``, ``latestOffset``, ``partitions``, ``commit``, ``reportLatestOffset`` and
#: ``prepareForTriggerAvailableNow`` appends one JSON line ``{"call": name, "ms": duration,
#: "at": epoch seconds}`` to it (``spark-kafka-py bench stream`` sets it to find where a
#: micro-batch's driver time goes). The executors' copies of the reader (local mode: the same
#: file system) add one ``read`` line per task: the ms spent fetching and decoding its range.
#: Unset: nothing is timed.
STREAM_TIMINGS_ENV = "SPARK_KAFKA_PY_STREAM_TIMINGS"

_Method = TypeVar("_Method", bound=Callable[..., Any])


def timed(method: _Method) -> _Method:
    """Time ``method`` of a stream reader (an object with a ``_timings_path``: the file of
    :data:`STREAM_TIMINGS_ENV`, or ``None``) into that file: one JSON line per call."""
    name = method.__name__

    @functools.wraps(method)
    def timed_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        path = self._timings_path
        if path is None:
            return method(self, *args, **kwargs)
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            ms = (time.perf_counter() - start) * 1000
            line = json.dumps({"call": name, "ms": round(ms, 3), "at": round(time.time(), 3)})
            with open(path, "a", encoding="utf-8") as out:
                out.write(line + "\n")

    return timed_method  # type: ignore[return-value]  # same signature as method


def timed_read(path: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``batches``, and one timing line ``{"call": "read", "ms": ..., "batches": n, "rows": n}``
    in ``path`` when they end: the time spent producing them (fetching and decoding, on the
    executor), not the time Spark held each batch between them."""
    own = 0.0
    count = rows = 0
    start = time.perf_counter()
    try:
        for batch in batches:
            own += time.perf_counter() - start
            count += 1
            rows += batch.num_rows
            yield batch
            start = time.perf_counter()
        own += time.perf_counter() - start
    finally:
        line = {"call": "read", "ms": round(own * 1000, 3), "batches": count, "rows": rows}
        try:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
        except OSError as exc:  # e.g. an executor on another machine: timings are a debug aid
            log.warning("%s: cannot write read timings to %s: %s", STREAM_TIMINGS_ENV, path, exc)
