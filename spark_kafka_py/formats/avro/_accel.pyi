"""Type stub of the Cython extension built from ``_accel.pyx`` (optional, see ``setup.py``).

:func:`plan` returns the accelerated plan of a writer -> reader pair, or None when the pair is
not supported; :meth:`AccelPlan.decode` has the contract of
:meth:`spark_kafka_py.formats.avro.decoder.AvroDecoder.decode`.
"""

from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from spark_kafka_py.formats.avro.schema import Schema
from spark_kafka_py.formats.errors import AvroDecodeError

__all__ = ["AccelPlan", "plan"]

class AccelPlan:
    @property
    def arrow_type(self) -> pa.DataType: ...
    def decode(
        self,
        payloads: Iterable[bytes | bytearray | memoryview | None],
        on_error: Callable[[AvroDecodeError], None] | None = None,
    ) -> pa.Array: ...
    def decode_slices(
        self,
        data: object,
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        valid: npt.NDArray[np.uint8] | None = None,
        on_error: Callable[[AvroDecodeError], None] | None = None,
    ) -> pa.Array: ...

def plan(writer: Schema, reader: Schema, arrow_type: pa.DataType) -> AccelPlan | None: ...
