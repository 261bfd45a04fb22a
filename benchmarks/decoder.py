"""The executor's decoder alone (Fetch responses in memory to ``pyarrow.RecordBatch``) against
confluent-kafka and kafka-python consuming the same topic, with Kafka's Java
``ConsumerPerformance`` as the machine's ceiling. Same as ``spark-kafka-py bench decoder``.

Usage::

    python benchmarks/decoder.py [--records 5000000] [--codecs none,lz4,zstd] [--repeat 2]
"""

from __future__ import annotations

import sys

from spark_kafka_py.bench import main

if __name__ == "__main__":
    raise SystemExit(main(["decoder", *sys.argv[1:]]))
