"""``format("pykafka")`` in a Spark Declarative Pipeline run by PySpark's ``bin/spark-pipelines``.

The pipeline project is written into a temporary directory: a spec ``spark-pipeline.yml``
(name, ``storage`` root for the flows' checkpoints, a ``database`` of its own, ``configuration``
carrying the broker, topic and group to the definitions) and ``transformations/kafka.py`` with a
streaming table over ``spark.readStream.format("pykafka")`` (with ``kafka.group.id``) and a
materialized view over it (records per partition). Two back ends, the same pipeline:

- ``server`` (the default run): ``spark-pipelines --remote sc://...`` runs on the session's
  Spark Connect server (fixture ``connect_server``, also the server of ``test_connect.py``):
  the CLI is a Connect client, the flows run on the server, whose Python workers are this
  interpreter, where ``pyspark_pykafka`` registers ``pykafka``; the tables go to a database of
  the test's own. No Spark JVM is started for the runs.
- ``local`` (marked ``long``: two more Spark JVMs, 20-40 s each on the shared 2-core machine;
  the ``server`` case covers the same flows, offsets and group commits): ``--remote local[2]``,
  where each run starts a Connect backend of its own (this interpreter as its Python workers).

What a second run needs: the tables must still be in the catalog. The server outlives the
runs, so its catalog keeps them. A ``local[2]`` backend forgets an in-memory catalog when the
run exits, and the next run then refuses to create a managed table over the existing directory
(LOCATION_ALREADY_EXISTS); so its runs use ``spark.sql.catalogImplementation=hive`` (PySpark
ships Hive's metastore with an embedded Derby database, created in the working directory) and
``spark.sql.warehouse.dir`` in the project (docs/deploy.md's recipe).

Checks: after each run the streaming table's parquet files (read with pyarrow, not Spark) hold
every record produced so far exactly once and the view's counts match; after the second, Kafka's
``kafka-consumer-groups`` tool shows the group committed to the end of every partition.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from spark_kafka_py.testing.spark_connect import ConnectServer, connect_mode, spark_home
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    consumer_groups_describe,
    create_topic,
    produce,
)

pytestmark = pytest.mark.integration

PARTITIONS = 3
FIRST = 240
MORE = 60
RUN_TIMEOUT_S = 300

SPEC = """\
name: kafka_pipeline
storage: {storage}
{database}configuration:
  pipeline.kafka.bootstrap: "{bootstrap}"
  pipeline.kafka.topic: "{topic}"
  pipeline.kafka.group: "{group}"
libraries:
  - glob:
      include: transformations/**
"""

# `spark` is the pipeline's session, put into the module by spark-pipelines.
TRANSFORMATIONS = """\
from pyspark import pipelines as dp
from pyspark.sql import DataFrame


@dp.table(name="kafka_records")
def kafka_records() -> DataFrame:
    return (
        spark.readStream.format("pykafka")
        .option("kafka.bootstrap.servers", spark.conf.get("pipeline.kafka.bootstrap"))
        .option("subscribe", spark.conf.get("pipeline.kafka.topic"))
        .option("kafka.group.id", spark.conf.get("pipeline.kafka.group"))
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
    )


@dp.materialized_view(name="records_per_partition")
def records_per_partition() -> DataFrame:
    return spark.read.table("kafka_records").groupBy("partition").count()
"""


def records(start: int, count: int) -> list[ProducedRecord]:
    return [
        ProducedRecord(key=f"k{i}", value=f"v{i}", partition=i % PARTITIONS)
        for i in range(start, start + count)
    ]


def expected(count: int) -> list[tuple[int, int, str]]:
    return sorted((i % PARTITIONS, i // PARTITIONS, f"v{i}") for i in range(count))


def write_project(root: Path, bootstrap: str, topic: str, group: str, database: str | None) -> Path:
    """The pipeline project under ``root`` (tables in ``database``, else the default one);
    returns the spec's path."""
    (root / "transformations").mkdir(parents=True)
    (root / "transformations" / "kafka.py").write_text(TRANSFORMATIONS)
    spec = root / "spark-pipeline.yml"
    storage = (root / "pipeline-storage").as_uri()
    spec.write_text(
        SPEC.format(
            storage=storage,
            database=f"database: {database}\n" if database else "",
            bootstrap=bootstrap,
            topic=topic,
            group=group,
        )
    )
    return spec


def run_pipeline(root: Path, spec: Path, remote: str) -> None:
    """``bin/spark-pipelines --remote <remote> <options> run --spec <spec>`` in ``root``: a
    Spark Connect URL, or ``local[2]`` (a backend of its own, with the Hive catalog and the
    warehouse in ``root``); a non-zero exit fails the test with the end of its output."""
    # This process may be a Connect client (tests/deploy/test_connect); the CLI is a new one.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
    }
    env.update(
        SPARK_HOME=str(spark_home()),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOCAL_IP="127.0.0.1",
    )
    command = [
        str(spark_home() / "bin" / "spark-pipelines"),
        "--remote",
        remote,
    ]
    if not remote.startswith("sc://"):
        command += [
            "--conf",
            "spark.sql.catalogImplementation=hive",
            "--conf",
            f"spark.sql.warehouse.dir={root / 'warehouse'}",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
        ]
    command += [
        "run",
        "--spec",
        str(spec),
    ]
    done = subprocess.run(
        command,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    with (root / "runs.log").open("a") as log:  # kept with tmp_path for a failed run
        log.write(output)
    if done.returncode != 0 or "Run is COMPLETED" not in output:
        pytest.fail(f"spark-pipelines run exited {done.returncode}:\n{output[-6000:]}")


def table_rows(location: Path, table: str) -> list[dict]:
    """Rows of a table's parquet files under the database directory ``location``
    (``_spark_metadata`` and ``.crc`` files are skipped)."""
    return ds.dataset(location / table, format="parquet").to_table().to_pylist()


def committed(bootstrap: str, group: str, topic: str) -> dict[int, tuple[int, int]]:
    """partition -> (committed offset, lag) from Kafka's ``kafka-consumer-groups --describe``."""
    out: dict[int, tuple[int, int]] = {}
    for line in consumer_groups_describe(bootstrap, group).splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0] == group and fields[1] == topic:
            out[int(fields[2])] = (int(fields[3]), int(fields[5]))
    return out


def check_tables(location: Path, count: int) -> None:
    """The streaming table holds the first ``count`` records once each; the view counts them."""
    rows = table_rows(location, "kafka_records")
    assert sorted((r["partition"], r["offset"], r["value"]) for r in rows) == expected(count)
    view = {r["partition"]: r["count"] for r in table_rows(location, "records_per_partition")}
    assert view == dict(Counter(p for p, _, _ in expected(count)))


@pytest.mark.parametrize("backend", ["server", pytest.param("local", marks=pytest.mark.long)])
def test_streaming_table_and_view_over_pykafka_across_two_runs(
    backend: str, kafka_bootstrap: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    topic = f"pipeline-{uuid.uuid4().hex[:8]}"
    group = f"pipeline-group-{uuid.uuid4().hex[:8]}"
    if backend == "server":
        server: ConnectServer = request.getfixturevalue("connect_server")
        database: str | None = f"pipeline_{uuid.uuid4().hex[:8]}"  # apart on the server
        assert server.client is not None
        with connect_mode():
            server.client.sql(f"CREATE DATABASE {database}").collect()
        remote, location = server.url, server.warehouse_dir / f"{database}.db"
    else:
        database, remote, location = None, "local[2]", tmp_path / "warehouse"
    create_topic(kafka_bootstrap, topic, PARTITIONS)
    produce(kafka_bootstrap, topic, records(0, FIRST))
    spec = write_project(tmp_path, kafka_bootstrap, topic, group, database)

    run_pipeline(tmp_path, spec, remote)
    check_tables(location, FIRST)

    produce(kafka_bootstrap, topic, records(FIRST, MORE))
    run_pipeline(tmp_path, spec, remote)
    check_tables(location, FIRST + MORE)
    per_partition = Counter(p for p, _, _ in expected(FIRST + MORE))
    assert committed(kafka_bootstrap, group, topic) == {p: (n, 0) for p, n in per_partition.items()}
