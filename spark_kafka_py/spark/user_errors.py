"""Our errors as PySpark shows them: the cause first, none of our frames.

PySpark wraps an exception raised by a Python data source's driver-side method in
``[PYTHON_DATA_SOURCE_ERROR] Failed to ... : Traceback (most recent call last):`` followed by
the formatted traceback (PySpark's own frames removed, ``spark.sql.execution.pyspark.udf.
simplifiedTraceback.enabled``), and Spark prints it again in its ERROR log. A
:class:`~spark_kafka_py.errors.KafkaError` raised ten frames deep in option parsing or planning
would show those ten frames, and the exceptions chained to it with theirs, before the one line
that says what is wrong. :func:`user_facing` raises our errors again at the data source's
boundary without that traceback or chain: what PySpark prints is then one frame and the
message, whose first line names the cause, the option and what to change.

Errors that are not ours (a bug, an interrupted worker) keep their whole traceback: that is
what a bug report needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from spark_kafka_py.errors import KafkaError

__all__ = ["user_facing"]

_Method = TypeVar("_Method", bound=Callable[..., Any])


def user_facing(method: _Method) -> _Method:
    """Wrap a driver-side data source method (``reader``, ``writer``, ``partitions``,
    ``latestOffset``, ``commit``, ...; not a generator) so that a
    :class:`~spark_kafka_py.errors.KafkaError` leaves it with its own message and type but no
    traceback below this boundary and no chained exception (``raise ... from None``).

    The message must say everything (as ours do: the option, topic-partition, offsets, the
    broker's answer, the last connection error); the type stays for ``except`` clauses.
    """

    @functools.wraps(method)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except KafkaError as exc:
            raise exc.with_traceback(None) from None

    return cast(_Method, boundary)  # functools.wraps keeps the signature mypy cannot see
