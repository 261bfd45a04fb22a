"""The producer layer of the sink (issue 12): partitioning, batching and, later, Produce.

It may import ``client/``, ``protocol/`` and ``records/``, never ``spark/`` or ``testing/``
(``tests/test_layers.py``). Public API: :func:`murmur2`, :func:`to_positive`,
:func:`partition_for_key`.
"""

from spark_kafka_py.producer.partitioner import murmur2, partition_for_key, to_positive

__all__ = ["murmur2", "partition_for_key", "to_positive"]
