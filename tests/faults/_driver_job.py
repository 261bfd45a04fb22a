"""A streaming query run as its own driver process (for the driver-kill test; not a test).

Usage: python -m tests.faults._driver_job BOOTSTRAP TOPIC OUT CHECKPOINT
Runs ``readStream.format("pykafka")`` -> Parquet file sink with a checkpoint, 1 record per
offset, ``maxOffsetsPerTrigger=50``, until killed.
"""

from __future__ import annotations

import sys
import time

from spark_kafka_py.testing.spark import local_spark_session


def main() -> None:
    bootstrap, topic, out, checkpoint = sys.argv[1:5]
    spark = local_spark_session("driver-kill", with_kafka_connector=False)
    (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "50")
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    while True:  # until SIGKILL
        time.sleep(1)


if __name__ == "__main__":
    main()
