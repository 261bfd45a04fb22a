"""Type stub of the Cython extension built from ``_encode_accel.pyx`` (optional, see ``setup.py``).

:func:`plan` returns the accelerated plan of a (writer schema, Arrow type) pair, or None when
the pair is not supported; :meth:`EncodePlan.encode_column` has the contract of
:meth:`spark_kafka_py.formats.avro.encoder.AvroEncoder.encode_column`.
"""

import pyarrow as pa

from spark_kafka_py.formats.avro.schema import Schema

__all__ = ["EncodePlan", "plan"]

class EncodePlan:
    @property
    def arrow_type(self) -> pa.DataType: ...
    def encode_column(
        self, array: pa.Array, prefix: bytes = b"", schema_id: int | None = None
    ) -> pa.Array: ...

def plan(schema: Schema, arrow_type: pa.DataType) -> EncodePlan | None: ...
