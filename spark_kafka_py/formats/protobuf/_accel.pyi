"""Type stub of the Cython extension built from ``_accel.pyx`` (optional, see ``setup.py``).

:func:`plan` returns the compiled reader of a message, or None when the message needs what it
does not read; :meth:`AccelPlan.decode` has the contract of
:meth:`spark_kafka_py.formats.protobuf.decoder.ProtobufDecoder.decode`, except that a batch it
refuses raises :class:`Fallback` (the caller then decodes it with the upb route);
:meth:`AccelPlan.append` stops at a refused payload, the rows before it kept;
:meth:`AccelPlan.append_arrow` does the same over a binary Arrow column's buffers.
:func:`common_head` is the framing every value of a binary Arrow column shares, or None.
"""

from collections.abc import Sequence

import pyarrow as pa
from google.protobuf.descriptor import Descriptor  # type: ignore[import-untyped]

from spark_kafka_py.formats.protobuf.types import Node, ProtobufOptions

__all__ = ["MAX_DEPTH", "AccelPlan", "Fallback", "common_head", "plan"]

MAX_DEPTH: int

class Fallback(Exception): ...

class AccelPlan:
    @property
    def arrow_type(self) -> pa.DataType: ...
    def decode(self, payloads: Sequence[bytes | bytearray | memoryview | None]) -> pa.Array: ...
    def reset(self) -> None: ...
    def append(
        self, payloads: Sequence[bytes | bytearray | memoryview | None], start: int
    ) -> int: ...
    def append_arrow(self, values: pa.Array, start: int, skip: int) -> int: ...
    def append_null(self) -> None: ...
    def finish(self) -> pa.Array: ...

def common_head(values: pa.Array, size: int) -> bytes | None: ...
def plan(descriptor: Descriptor, node: Node, options: ProtobufOptions) -> AccelPlan | None: ...
