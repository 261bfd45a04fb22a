"""Sans-I/O Kafka wire protocol: primitives, message schemas, error codes, framing.

Never imports ``socket`` or ``pyspark``. Main entry points:

* :mod:`.primitives` — :class:`Reader` / :class:`Writer`;
* :mod:`.schema` — the declarative schema machinery (:func:`encode`, :func:`decode`);
* :mod:`.messages` — one module per API (``messages.fetch``, ``messages.metadata``...);
* :mod:`.error_codes` — :func:`raise_for_error`, the error table;
* :mod:`.framing` — :class:`KafkaProtocol` (requests to bytes, bytes to responses).
"""

from __future__ import annotations

from spark_kafka_py.protocol.error_codes import ERRORS, ErrorCode, error_for, raise_for_error
from spark_kafka_py.protocol.framing import DEFAULT_MAX_FRAME_BYTES, KafkaProtocol
from spark_kafka_py.protocol.primitives import ZERO_UUID, Reader, Writer
from spark_kafka_py.protocol.schema import Request, Response, decode, encode

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "ERRORS",
    "ZERO_UUID",
    "ErrorCode",
    "KafkaProtocol",
    "Reader",
    "Request",
    "Response",
    "Writer",
    "decode",
    "encode",
    "error_for",
    "raise_for_error",
]
