"""Type stub of the Cython extension built from ``_accel.pyx`` (optional, see ``setup.py``).

:func:`plan` returns the compiled reader of a struct type (None: a type it does not read);
:meth:`Plan.decode` reads a batch of JSON documents into the struct's Arrow array, the rows it
declines left null and listed (the caller decodes them with the per-row path), or returns None
when it refuses the batch.
"""

import pyarrow as pa

__all__ = ["MAX_DEPTH", "MAX_MAP_ENTRIES", "MAX_NUMBER", "Plan", "plan"]

MAX_DEPTH: int
MAX_MAP_ENTRIES: int
MAX_NUMBER: int

class Plan:
    def decode(
        self, values: pa.Array, max_declined: int, skip: int = 0
    ) -> tuple[pa.Array, list[int], pa.Array | None] | None: ...

def plan(t: object, corrupt: str | None, timestamps: bool, dates: bool) -> Plan | None: ...
