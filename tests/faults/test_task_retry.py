"""A Spark task killed mid-read and retried yields exactly the same rows.

An executor task is ``read_partition(options, KafkaInputPartition)``: stateless, with a client
of its own. Killing it (the generator abandoned after its first Arrow batch, as when Spark
kills the Python worker) and running it again must give the same rows in the same order,
byte for byte (timestamps included).
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from spark_kafka_py.spark.options import parse_options
from spark_kafka_py.spark.planner import KafkaInputPartition
from spark_kafka_py.spark.source import KafkaBatchReader, read_partition

from .helpers import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_retried_task_yields_exactly_the_same_rows(
    kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    produce_values(kafka_bootstrap, topic, 1000, partitions=2)
    options = parse_options(
        {
            "kafka.bootstrap.servers": kafka_bootstrap,
            "subscribe": topic,
            "kafka.max.partition.fetch.bytes": "4096",  # many Fetches per task
        },
        streaming=False,
    )
    plan = KafkaBatchReader(options).partitions()
    assert sorted((p.partition, p.from_offset, p.until_offset) for p in plan) == [
        (0, 0, 500),
        (1, 0, 500),
    ]
    for part in plan:
        assert isinstance(part, KafkaInputPartition)
        killed = read_partition(options, part)
        first = next(killed)
        killed.close()  # the task dies after handing one batch to Spark
        full = pa.Table.from_batches(list(read_partition(options, part)))
        again = pa.Table.from_batches(list(read_partition(options, part)))
        assert full.num_rows == 500
        assert full.equals(again)
        assert full.slice(0, first.num_rows).equals(pa.Table.from_batches([first]))
        assert full.column("offset").to_pylist() == list(range(500))
