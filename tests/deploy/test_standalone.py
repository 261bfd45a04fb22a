"""``format("pykafka")`` on a standalone Spark cluster: a master and two 1-core workers started
from PySpark's own ``spark-class`` (fixture ``spark_cluster``), executors in JVMs of their own.

The pytest process holds the ``local[2]`` session, so each scenario runs a driver process of
its own (``tests/deploy/_cluster_job.py``, results in a JSON file); the output is checked here
with Kafka's Java tools and the ``local[2]`` session. Two drivers in all (a driver and its
executors take 20-30 s to start on the 2-core machine; issue 25 / suite time):

- the packed environment (the module's shared run): the executors' Python does not have
  spark-kafka-py (a wrapper runs this interpreter with ``-S`` and ``PYTHONPATH`` = the venv's
  site-packages: no ``.pth`` file, so no editable install), the package arrives as
  ``spark.archives`` (a ``tar.gz`` of the package directories, the compiled decoder included)
  put on the workers' ``PYTHONPATH`` by ``spark.executorEnv.PYTHONPATH``; the driver's own
  Python has it installed. In that run: a batch read returns every record; an AvailableNow
  streaming query with a checkpoint and ``kafka.group.id`` into a file sink writes every
  record once and the group's lag is 0 in ``kafka-consumer-groups.sh``; a Kafka -> Kafka
  query (``format("pykafka")`` in and out, exactly-once) writes every record's output once;
  the executors used the accelerated decoder, imported from the archive;
- in the same driver, on the session's Kerberized cluster: the executors' ``KRB5_CONFIG``
  names no file, so they cannot do Kerberos; with ``delegationToken=true`` a Kafka -> Kafka
  query (exactly-once) still reads and writes every record (the driver logs in with app's
  keytab and hands them tokens), read back by Kafka's Java consumer with alice's keytab; the
  same read without tokens fails on the executors with a KerberosError (the control);
- in the same driver, last: an executor JVM SIGKILLed mid-stream (processing-time trigger,
  file sink, a group of its own over the same topic): Spark reschedules
  its tasks, the standalone master starts a new executor, the query goes on, the sink holds
  every record exactly once and the group's lag reaches 0;
- ``spark-submit --py-files <zip>`` where neither the driver's nor the executors' Python has
  the package: ``format("pykafka")`` does not resolve by itself (PySpark's look-up of
  ``pyspark_*`` modules runs in a Python worker that does not see ``--py-files``),
  ``spark_kafka_py.register(spark)`` makes it resolve, and the executors import the package
  from the zip with the pure decoder (a compiled extension does not load from a zip).

And the harness itself: a daemon that exits during the start fails it with its log quoted,
and nothing started is left running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import tarfile
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_kafka_py.testing.kerberos import KerberizedKafka
from spark_kafka_py.testing.spark_cluster import SparkClusterError, StandaloneCluster, spark_home
from spark_kafka_py.testing.tools import (
    ProducedRecord,
    consumer_groups_describe,
    create_topic,
    produce,
    read_all,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
JOB = Path(__file__).with_name("_cluster_job.py")
#: The package directories shipped with a job (the distribution's top-level modules).
PACKAGES = ("spark_kafka_py", "pyspark_pykafka")
PARTITIONS = 4
RECORDS = 20_000
#: Records per micro-batch of the killed query (``maxOffsetsPerTrigger``): 8 batches.
MAX_OFFSETS = RECORDS // 8
#: Records of the delegation-token query (Kerberized cluster).
TOKEN_RECORDS = 200
#: Seconds a driver may take on this loaded 2-core machine (JVM start, executors, the job).
DRIVER_TIMEOUT_S = 300


# ---- helpers --------------------------------------------------------------------------------


def _produce_topic(bootstrap: str, count: int = RECORDS) -> str:
    topic = f"deploy-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS, 1)
    produce(
        bootstrap,
        topic,
        [ProducedRecord(f"k{i}", str(i), partition=i % PARTITIONS) for i in range(count)],
        batch_size=65536,
        linger_ms=5,
    )
    return topic


def _nosite_python(directory: Path) -> Path:
    """A Python for the executors without spark-kafka-py: this interpreter with ``-S`` (no
    ``site``, so no ``.pth`` file: no editable install), and on ``PYTHONPATH``, after what Spark
    puts there, a copy of the venv's site-packages made of links to all its entries but the
    distribution's own (a regular install is left out too); pyspark, pyarrow, pandas import.
    Checked: the package does not import with it. Returns the wrapper script's path."""
    site = Path(sysconfig.get_paths()["purelib"])
    shadow = directory / "site-packages"
    shadow.mkdir()
    ours = (*PACKAGES, "spark_kafka_py-", "__editable__")
    for entry in site.iterdir():
        if not entry.name.startswith(ours) and entry.suffix != ".pth":
            (shadow / entry.name).symlink_to(entry)
    wrapper = directory / "nosite-python"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{shadow}" exec "{sys.executable}" -S "$@"\n',
        "utf-8",
    )
    wrapper.chmod(0o755)
    probe = subprocess.run(
        [str(wrapper), "-c", "import pyarrow, pandas, pyspark\nimport spark_kafka_py"],
        cwd=directory,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "No module named 'spark_kafka_py'" in probe.stderr, probe.stderr[-2000:]
    return wrapper


def _package_files() -> Iterator[tuple[Path, str]]:
    """(file, name in the archive) of the shipped packages, the compiled extension included."""
    for package in PACKAGES:
        for f in sorted((ROOT / package).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".c", ".pyc"):
                yield f, str(f.relative_to(ROOT))


def _spawn_driver(
    tmp: Path, name: str, spec: dict[str, Any], *, submit: bool = False, **env: str
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """Start a driver on ``spec`` (``python _cluster_job.py``, or ``spark-submit`` when
    ``submit``); returns the process (a session of its own), its log and its result file."""
    spec_file, log, result = tmp / f"{name}.json", tmp / f"{name}.log", tmp / f"{name}-result.json"
    spec_file.write_text(json.dumps({**spec, "result": str(result)}), "utf-8")
    if submit:
        conf = spec.get("conf", {})
        command = [str(spark_home() / "bin" / "spark-submit"), "--master", spec["master"]]
        if "spark.submit.pyFiles" in conf:
            command += ["--py-files", conf["spark.submit.pyFiles"]]
        command += [str(JOB), str(spec_file)]
    else:
        command = [sys.executable, str(JOB), str(spec_file)]
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full_env.update({"SPARK_LOCAL_IP": "127.0.0.1", **env})
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=tmp,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return process, log, result


def _finish(
    process: subprocess.Popen[bytes], log: Path, result: Path, cluster: StandaloneCluster
) -> dict[str, Any]:
    """Wait for a driver; its results, or a failure quoting its log and the cluster's."""
    try:
        code = process.wait(DRIVER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
        pytest.fail(f"the driver ran over {DRIVER_TIMEOUT_S} s:\n{_tail(log)}")
    assert code == 0, f"the driver exited {code}:\n{_tail(log)}\n{cluster.logs(1500)}"
    return dict(json.loads(result.read_text("utf-8")))


def _tail(path: Path, chars: int = 6000) -> str:
    return path.read_text("utf-8", errors="replace")[-chars:] if path.exists() else ""


def _lags(bootstrap: str, group: str, topic: str) -> dict[int, tuple[int, int]]:
    """``kafka-consumer-groups.sh --describe``: partition -> (committed offset, lag)."""
    rows = {}
    for line in consumer_groups_describe(bootstrap, group).splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0] == group and fields[1] == topic:
            current, lag = fields[3], fields[5]
            rows[int(fields[2])] = (
                int(current) if current != "-" else -1,
                int(lag) if lag != "-" else -1,
            )
    return rows


def _assert_lag_zero(bootstrap: str, group: str, topic: str, timeout_s: float = 60) -> None:
    """The group's committed offsets reach the end of each partition (lag 0), by Kafka's tool
    (commits follow Spark's batch commit: waited for)."""
    want = {p: (RECORDS // PARTITIONS, 0) for p in range(PARTITIONS)}
    deadline = time.monotonic() + timeout_s
    while (lags := _lags(bootstrap, group, topic)) != want:
        assert time.monotonic() < deadline, f"group {group}: {lags}, want {want}"
        time.sleep(0.5)  # a served tool call: 0.1-0.5 s


def _assert_sink_exactly_once(spark: SparkSession, out: Path) -> None:
    """The file sink (read through its ``_spark_metadata`` log) holds each record once."""
    rows = spark.read.schema("partition INT, offset LONG, value STRING").parquet(str(out)).collect()
    positions = Counter((r.partition, r.offset) for r in rows)
    twice = [p for p, n in positions.items() if n > 1]
    assert not twice, f"{len(twice)} records written twice, e.g. {twice[:5]}"
    assert sorted(int(r.value) for r in rows) == list(range(RECORDS))
    assert all(int(r.value) % PARTITIONS == r.partition for r in rows)


# ---- the module's shared run: the package shipped as a packed environment ------------------


@pytest.fixture(scope="module")
def nosite_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's :func:`_nosite_python` wrapper, made and checked once for both drivers
    (the check imports pyarrow, pandas and pyspark: 4 s on the loaded machine; suite time)."""
    return _nosite_python(tmp_path_factory.mktemp("nosite"))


@pytest.fixture(scope="module")
def packed_run(
    spark_cluster: StandaloneCluster,
    kafka_bootstrap: str,
    kerberized_kafka: KerberizedKafka,
    nosite_python: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    """One driver on the cluster, executors without the installed package, the package in
    ``spark.archives``; batch, AvailableNow stream and Kafka -> Kafka tasks (see the module
    docstring). Returns the tasks' inputs and results."""
    tmp = tmp_path_factory.mktemp("packed")
    archive = tmp / "spark-kafka-py-env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for f, name in _package_files():
            tar.add(f, arcname=name)
    topic = _produce_topic(kafka_bootstrap)
    out_topic = f"deploy-out-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, out_topic, PARTITIONS, 1)
    group = f"deploy-g-{uuid.uuid4().hex[:8]}"
    kill_group = f"deploy-kill-{uuid.uuid4().hex[:8]}"
    prefix = f"deploy-tx-{uuid.uuid4().hex[:8]}"
    progress, stop = tmp / "kill-progress.json", tmp / "kill-stop"
    # delegation tokens: the Kerberized cluster's topics; the login is the driver's only
    krb = kerberized_kafka
    token_topic = f"deploy-krb-{uuid.uuid4().hex[:8]}"
    token_out = f"deploy-krb-out-{uuid.uuid4().hex[:8]}"
    create_topic(krb.plaintext_bootstrap, token_topic, 2, 1)
    create_topic(krb.plaintext_bootstrap, token_out, 2, 1)
    produce(
        krb.plaintext_bootstrap,
        token_topic,
        [ProducedRecord(key=f"k{i}", value=str(i), partition=i % 2) for i in range(TOKEN_RECORDS)],
    )
    kerberos = {**krb.client_options("app"), "kafka.bootstrap.servers": krb.bootstrap}
    spec = {
        "master": spark_cluster.master_url,
        "bootstrap": kafka_bootstrap,
        "conf": {
            "spark.archives": f"{archive}#pkgenv",
            "spark.executorEnv.PYTHONPATH": "./pkgenv",
            # the executors have no Kerberos configuration: MIT's library finds no realm
            # there, so only a delegation token can authenticate them (the driver's own
            # processes get the realm's KRB5_CONFIG from its environment, below)
            "spark.executorEnv.KRB5_CONFIG": str(tmp / "no-such-krb5.conf"),
        },
        "tasks": [
            {"kind": "implementations", "name": "implementations"},
            {"kind": "batch", "name": "batch", "topic": topic},
            {
                "kind": "kafka_to_kafka",
                "name": "token_k2k",
                "topic": token_topic,
                "out_topic": token_out,
                "checkpoint": str(tmp / "token-cp"),
                "prefix": f"deploy-tok-{uuid.uuid4().hex[:8]}",
                "max_offsets": TOKEN_RECORDS // 2,
                "options": {**kerberos, "delegationToken": "true"},
            },
            {
                "kind": "batch",
                "name": "keytab_on_executors",
                "topic": token_topic,
                "options": kerberos,
                "expect_error": True,
            },
            {
                "kind": "stream",
                "name": "stream",
                "topic": topic,
                "group": group,
                "checkpoint": str(tmp / "stream-cp"),
                "out": str(tmp / "stream-out"),
                "max_offsets": RECORDS // 2,
                "available_now": True,
            },
            {
                "kind": "kafka_to_kafka",
                "name": "kafka_to_kafka",
                "topic": topic,
                "out_topic": out_topic,
                "checkpoint": str(tmp / "k2k-cp"),
                "prefix": prefix,
                "max_offsets": RECORDS // 2,
            },
            # last: the query whose executor is killed (a driver of its own cost 20-30 s more)
            {
                "kind": "stream",
                "name": "killed",
                "topic": topic,
                "group": kill_group,
                "checkpoint": str(tmp / "kill-cp"),
                "out": str(tmp / "kill-out"),
                "max_offsets": MAX_OFFSETS,
                "available_now": False,
                "progress": str(progress),
                "stop": str(stop),
            },
        ],
    }
    # the driver's Python has the package (PYSPARK_DRIVER_PYTHON: also its Python workers,
    # where PySpark looks data sources up and plans them); the executors' Python has not
    process, log, result = _spawn_driver(
        tmp,
        "packed",
        spec,
        PYSPARK_PYTHON=str(nosite_python),
        PYSPARK_DRIVER_PYTHON=sys.executable,
        KRB5_CONFIG=str(krb.krb5_conf),
    )
    try:
        kill = _kill_an_executor_mid_stream(spark_cluster, process, log, progress)
    finally:
        stop.touch()
    results = _finish(process, log, result, spark_cluster)
    return {
        "results": results,
        "topic": topic,
        "out_topic": out_topic,
        "group": group,
        "out": tmp / "stream-out",
        "kill": kill,
        "kill_group": kill_group,
        "kill_out": tmp / "kill-out",
        "token_out": token_out,
    }


def _kill_an_executor_mid_stream(
    cluster: StandaloneCluster, process: subprocess.Popen[bytes], log: Path, progress: Path
) -> dict[str, Any]:
    """Once the running query (the driver's last task) processed a micro-batch and both
    executors run, SIGKILL one executor JVM; wait until the query processed every record.
    Returns what :func:`test_executor_killed_mid_stream_every_record_once_and_lag_zero` checks
    (``error``: the step that failed, else ``None``)."""
    app = ""

    def rows_done() -> int:
        nonlocal app
        assert process.poll() is None, f"the driver exited {process.returncode}:\n{_tail(log)}"
        try:
            state = json.loads(progress.read_text("utf-8"))
        except (FileNotFoundError, ValueError):  # not written yet, or being written
            return 0
        app = state["app"]
        return int(state["rows"])

    kill: dict[str, Any] = {"error": None, "victim": None, "done_at_kill": None, "executors": []}
    try:
        deadline = time.monotonic() + 2 * DRIVER_TIMEOUT_S  # the driver's other tasks first
        while rows_done() < MAX_OFFSETS or len(cluster.executor_pids(app)) < 2:
            assert time.monotonic() < deadline, f"no progress:\n{_tail(log)}"
            time.sleep(0.2)
        victim = cluster.executor_pids(app)[0]
        os.kill(victim, signal.SIGKILL)
        kill.update(victim=victim, done_at_kill=rows_done())
        # the master starts a new executor; the query goes on to the end
        while rows_done() < RECORDS:
            assert time.monotonic() < deadline, f"stuck at {rows_done()} rows:\n{_tail(log)}"
            time.sleep(0.5)
        kill["executors"] = cluster.executor_pids(app)
    except AssertionError as exc:  # reported by the test, the other tasks' results stand
        kill["error"] = str(exc)
    return kill


def test_batch_read_returns_every_record(packed_run: dict[str, Any]) -> None:
    values = packed_run["results"]["batch"]
    assert Counter(values) == Counter(str(i) for i in range(RECORDS))


def test_stream_with_group_writes_every_record_once_and_lag_is_zero(
    packed_run: dict[str, Any], spark: SparkSession, kafka_bootstrap: str
) -> None:
    assert packed_run["results"]["stream"]["batches"] >= 2  # maxOffsetsPerTrigger took effect
    _assert_sink_exactly_once(spark, packed_run["out"])
    _assert_lag_zero(kafka_bootstrap, packed_run["group"], packed_run["topic"])


def test_kafka_to_kafka_on_the_cluster_exactly_once(
    packed_run: dict[str, Any], kafka_bootstrap: str
) -> None:
    records = read_all(kafka_bootstrap, packed_run["out_topic"], isolation_level="read_committed")
    values = Counter(r.value.decode() for r in records if r.value is not None)
    assert values == Counter(f"out-{i}" for i in range(RECORDS))
    assert all(
        r.key is not None and r.value is not None and r.key.decode() == f"k{r.value[4:].decode()}"
        for r in records
    )


def test_executors_without_kerberos_read_and_write_with_delegation_tokens(
    packed_run: dict[str, Any], kerberized_kafka: KerberizedKafka
) -> None:
    """``delegationToken=true`` (issue 28): the driver logs in with app's keytab, the executors,
    whose KRB5_CONFIG names no file, authenticate with its delegation tokens. The Kafka ->
    Kafka query (exactly-once, two micro-batches) wrote every record once: Kafka's Java
    consumer, logging in with alice's keytab, reads them (read_committed)."""
    assert packed_run["results"]["token_k2k"]["batches"] >= 2
    krb = kerberized_kafka
    records = read_all(
        krb.bootstrap,
        packed_run["token_out"],
        isolation_level="read_committed",
        extra_props=krb.java_client_properties("alice"),
        jvm_options=krb.jvm_options(),
    )
    assert Counter((r.key, r.value) for r in records) == Counter(
        (f"k{i}".encode(), f"out-{i}".encode()) for i in range(TOKEN_RECORDS)
    )


def test_without_tokens_the_executors_cannot_log_in(packed_run: dict[str, Any]) -> None:
    """The control: the same cluster's read without ``delegationToken`` fails on the
    executors, which have no Kerberos configuration (so the query above did not use one)."""
    error = packed_run["results"]["keytab_on_executors"]
    assert isinstance(error, str) and "KerberosError" in error, error
    assert "app@" in error, error  # names the principal


def test_packed_environment_executors_use_the_accelerated_decoder(
    packed_run: dict[str, Any], spark_cluster: StandaloneCluster
) -> None:
    rows = packed_run["results"]["implementations"]
    assert len({r["executor_pid"] for r in rows}) == 2, rows  # both executors answered
    for row in rows:
        assert row["no_site"] == 1, row  # the Python without the installed package
        assert Path(row["package"]).parts[-3:] == ("pkgenv", "spark_kafka_py", "__init__.py")
        assert str(spark_cluster.root) in row["package"], row  # unpacked in a work directory
        assert (row["decoder"], row["encoder"]) == ("accel", "accel"), row


# ---- an executor killed mid-stream ----------------------------------------------------------


def test_executor_killed_mid_stream_every_record_once_and_lag_zero(
    packed_run: dict[str, Any], spark: SparkSession, kafka_bootstrap: str
) -> None:
    """The packed run's last query (processing-time trigger, file sink) has an executor JVM
    SIGKILLed mid-stream: Spark reschedules its tasks, the master starts a new executor, the
    query goes on, the sink holds every record exactly once and the group's lag reaches 0."""
    kill = packed_run["kill"]
    assert kill["error"] is None, kill["error"]
    assert kill["done_at_kill"] < RECORDS, "the query ended before the executor was killed"
    executors = kill["executors"]
    assert kill["victim"] not in executors and len(executors) == 2, kill
    assert packed_run["results"]["killed"]["batches"] >= 2
    _assert_sink_exactly_once(spark, packed_run["kill_out"])
    _assert_lag_zero(kafka_bootstrap, packed_run["kill_group"], packed_run["topic"])


# ---- the package shipped with --py-files ------------------------------------------------------


def test_py_files_zip_needs_register_and_uses_the_pure_decoder(
    spark_cluster: StandaloneCluster, kafka_bootstrap: str, nosite_python: Path, tmp_path: Path
) -> None:
    topic = _produce_topic(kafka_bootstrap, count=1000)
    package = tmp_path / "spark_kafka_py.zip"
    with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as zf:
        for f, name in _package_files():
            zf.write(f, name)
    assert any(n.endswith(".so") for n in zipfile.ZipFile(package).namelist())  # shipped too
    spec = {
        "master": spark_cluster.master_url,
        "bootstrap": kafka_bootstrap,
        "conf": {"spark.submit.pyFiles": str(package)},
        "tasks": [
            {"kind": "probe_format", "name": "before", "topic": topic},
            {"kind": "register", "name": "register"},
            {"kind": "implementations", "name": "implementations"},
            {"kind": "batch", "name": "batch", "topic": topic},
        ],
    }
    nosite = str(nosite_python)
    process, log, result = _spawn_driver(
        tmp_path, "py-files", spec, submit=True, PYSPARK_PYTHON=nosite, PYSPARK_DRIVER_PYTHON=nosite
    )
    results = _finish(process, log, result, spark_cluster)
    assert "DATA_SOURCE_NOT_FOUND" in results["before"], results["before"]
    rows = results["implementations"]
    assert rows, "no executor answered"
    for row in rows:
        assert row["no_site"] == 1, row
        assert Path(row["package"]).parts[-3:] == (
            "spark_kafka_py.zip",
            "spark_kafka_py",
            "__init__.py",
        ), row
        assert (row["decoder"], row["encoder"]) == ("pure", "pure"), row
    assert Counter(results["batch"]) == Counter(str(i) for i in range(1000))


def test_cluster_fixture_is_two_workers(spark_cluster: StandaloneCluster) -> None:
    workers = spark_cluster.status()["workers"]
    assert sorted((w["state"], w["cores"]) for w in workers) == [("ALIVE", 1), ("ALIVE", 1)]
    assert all(Path(spark_cluster.worker_dir(i)).is_dir() for i in range(2))


def test_a_daemon_that_fails_stops_the_start_with_its_log(tmp_path: Path) -> None:
    import psutil

    cluster = StandaloneCluster(workers=1, memory_per_worker="lots", root=tmp_path)
    with pytest.raises(SparkClusterError, match="worker-0 exited with") as failure:
        cluster.start()
    assert "Usage: Worker" in str(failure.value)  # the worker's own log, quoted
    port = str(cluster.master_port)
    left = []
    for p in psutil.process_iter(["cmdline"]):
        command = p.info["cmdline"] or []
        if "org.apache.spark.deploy.master.Master" in command and port in command:
            left.append(p.pid)
    assert not left, f"the master outlived the failed start: {left}"
