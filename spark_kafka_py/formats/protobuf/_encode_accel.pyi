"""Type stub of the Cython extension built from ``_encode_accel.pyx`` (optional, see ``setup.py``).

:func:`plan` returns the compiled plan of a (message, Arrow struct type) pair, or None when the
pair is not supported; :meth:`EncodePlan.encode` has the contract of
:meth:`spark_kafka_py.formats.protobuf.encoder.ProtobufEncoder.encode`, except that a batch it
refuses raises :class:`Fallback` (the caller then encodes it with the pure-Python plan).
"""

import pyarrow as pa
from google.protobuf.descriptor import Descriptor  # type: ignore[import-untyped]

__all__ = ["EncodePlan", "Fallback", "plan"]

class Fallback(Exception):
    index: int
    reason: str
    def __init__(self, index: int, reason: str) -> None: ...

class EncodePlan:
    @property
    def arrow_type(self) -> pa.DataType: ...
    def encode(self, array: pa.Array, prefix: bytes = b"") -> pa.Array: ...

def plan(descriptor: Descriptor, arrow_type: pa.DataType) -> EncodePlan | None: ...
