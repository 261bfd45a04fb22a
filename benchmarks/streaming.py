"""Streaming: sustained records/s with ``maxOffsetsPerTrigger`` (Trigger.AvailableNow into the
``noop`` sink), both sources, and the pykafka driver's planning time per micro-batch
(``latestOffset`` + ``partitions``) for 1, 100 and 1,000 partitions. Same as
``spark-kafka-py bench stream``.

Usage::

    python benchmarks/streaming.py [--records 5000000] [--codecs none]
        [--max-offsets-per-trigger 500000] [--planning-partitions 1,100,1000]
"""

from __future__ import annotations

import sys

from spark_kafka_py.bench import main

if __name__ == "__main__":
    raise SystemExit(main(["stream", *sys.argv[1:]]))
