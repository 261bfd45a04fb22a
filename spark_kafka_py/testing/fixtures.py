"""pytest plugin: a real Kafka broker, topics and a real SparkSession for integration tests.

Load it from ``conftest.py`` with ``pytest_plugins = ["spark_kafka_py.testing.fixtures"]``.

Fixtures:

- ``kafka_bootstrap`` (session) -> ``str``: ``$KAFKA_BOOTSTRAP_SERVERS`` if set; else a Kafka
  container when a Docker engine answers and ``testcontainers`` imports; else the
  ``kafka_cluster`` below. A broker that cannot start is an ERROR of the tests, never a skip.
- ``kafka_cluster`` (session) -> :class:`LocalKafkaCluster`: a single-node local cluster
  (shared; tests that kill or restart nodes should use ``kafka_cluster_factory`` instead),
  checking for timed-out transactions every second (:data:`SESSION_BROKER_PROPS`).
- ``secure_kafka`` (session) -> :class:`~spark_kafka_py.testing.secure.SecureKafka`: one
  node with TLS, mutual-TLS and SASL listeners besides PLAINTEXT, its throw-away PKI and the
  SCRAM users, shared by every test that needs a secured broker (its start costs a broker and
  six Kafka tool JVMs); started at first use, stopped at the end of the session.
- ``kafka_cluster_factory`` (function) -> ``(num_brokers=1, **kwargs) -> LocalKafkaCluster``:
  started clusters of their own, stopped at the end of the test.
- ``new_topic`` (function) -> ``(partitions=1, configs=None, replication_factor=1,
  bootstrap=None) -> str``: creates a uniquely named topic (on ``kafka_bootstrap`` unless
  ``bootstrap`` is given) and returns its name.
- ``spark`` (session) -> ``SparkSession``: ``local[2]`` with Spark's Kafka connector on
  ``spark.jars`` (see :func:`spark_kafka_py.testing.spark.local_spark_session`).
- ``connect_server`` (session) -> :class:`~spark_kafka_py.testing.spark_connect.ConnectServer`:
  a Spark Connect server (``local[2]``) started by PySpark's ``start-connect-server.sh``.
- ``spark_connect`` (function) -> a Spark Connect client session of ``connect_server`` (one
  shared by the test session), with the process in Connect mode for the test only
  (:func:`~spark_kafka_py.testing.spark_connect.connect_mode`).
- ``spark_cluster`` (session) -> :class:`~spark_kafka_py.testing.spark_cluster.StandaloneCluster`:
  a standalone Spark master and two 1-core workers on loopback (drive it from a driver
  process of its own: this process holds the ``local[2]`` session). One that cannot start is
  an ERROR of the tests, never a skip.
- ``schema_registry`` (session) -> ``str``: the Confluent-compatible base URL of a schema
  registry: ``$SCHEMA_REGISTRY_URL`` if set; else an Apicurio Registry started for the session
  (:class:`~spark_kafka_py.testing.registry.ApicurioRegistry`, one per test run, stopped at the
  end). One that fails to start is an ERROR; one that cannot even be tried (no Java 21+, the
  download failed) is a skip, except with ``CI=true``, where it is an ERROR too.

SIGTERM ends a run as Ctrl-C does (``KeyboardInterrupt``): the session's fixtures stop their
brokers, registries and Spark processes instead of leaving them running.

Environment: ``KAFKA_BOOTSTRAP_SERVERS`` (use that broker), ``SPARK_KAFKA_PY_BROKER`` =
``auto`` (default), ``local`` (never Docker) or ``docker`` (Docker or fail);
``SPARK_KAFKA_PY_KAFKA_VERSION`` = the Kafka release of every local cluster,
``SPARK_KAFKA_PY_KAFKA_FEATURES`` = the feature levels every local cluster of that release is
formatted with, e.g. ``transaction.version=2`` (with either, ``auto`` means ``local``: the
Docker image is of one release, formatted its own way).
"""

from __future__ import annotations

import os
import re
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.jars import KAFKA_FEATURES_ENV, KAFKA_VERSION_ENV
from spark_kafka_py.testing.tools import create_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    from spark_kafka_py.testing.kerberos import KerberizedKafka
    from spark_kafka_py.testing.secure import SecureKafka
    from spark_kafka_py.testing.spark_cluster import StandaloneCluster
    from spark_kafka_py.testing.spark_connect import ConnectServer

#: Image of the Docker path. testcontainers-python's KafkaContainer is written for Confluent's
#: image (KRaft from 7.4 on); Confluent Platform 7.9 carries Apache Kafka 3.9.
KAFKA_IMAGE = "confluentinc/cp-kafka:7.9.0"


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: pytest then tears the session down (brokers, registries, Spark
    stopped by their fixtures) instead of dying with their JVMs left running."""
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")


def pytest_configure(config: pytest.Config) -> None:
    """Make SIGTERM stop the run like Ctrl-C (session fixtures' teardown runs), unless
    something else already handles it."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    ):
        signal.signal(signal.SIGTERM, _interrupt_on_sigterm)


def _docker_kafka() -> Any | None:
    """A started testcontainers Kafka container, or ``None`` when Docker/testcontainers is
    unavailable. (Not exercised on machines without a Docker engine.)"""
    try:
        import docker
        from testcontainers.kafka import KafkaContainer
    except ImportError:
        return None
    try:
        docker.from_env().ping()
    except docker.errors.DockerException:
        return None
    container = (
        KafkaContainer(KAFKA_IMAGE)
        .with_kraft()
        .with_env("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "false")
    )
    container.start()
    return container


#: ``server.properties`` of the session's broker (:func:`kafka_cluster`). The coordinator looks
#: for transactions past their ``transaction.timeout.ms`` every second instead of every 10 s, so
#: tests with a short ``kafka.transaction.timeout.ms`` see them aborted soon after it.
SESSION_BROKER_PROPS = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"}


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[LocalKafkaCluster]:
    """A started single-node local KRaft cluster (:data:`SESSION_BROKER_PROPS`), shared by the
    session; stopped at the end.

    Raises (as a test ERROR): BrokerStartError / JarResolutionError.
    """
    with LocalKafkaCluster(1, server_props=SESSION_BROKER_PROPS) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def secure_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    """A started :class:`~spark_kafka_py.testing.secure.SecureKafka` (listeners PLAINTEXT,
    SSL, MTLS, EXPIRED, SASL_PLAINTEXT, SASL_SSL, REAUTH; SCRAM users of
    :data:`~spark_kafka_py.testing.secure.USERS`) with a PKI made for the session, shared by
    the session; stopped at the end. Tests name their own topics, groups and ACLs.

    Raises (as a test ERROR): BrokerStartError / JarResolutionError / KafkaToolError.
    """
    from spark_kafka_py.testing.secure import SecureKafka, make_pki

    with SecureKafka(make_pki(tmp_path_factory.mktemp("secure-pki"))) as kafka:
        yield kafka


@pytest.fixture(scope="session")
def kerberized_kafka() -> Iterator[KerberizedKafka]:
    """A started :class:`~spark_kafka_py.testing.kerberos.KerberizedKafka` (a real MIT KDC and
    a broker with a GSSAPI listener, SCRAM and delegation tokens, Kafka's default token
    expiry and max lifetime), shared by the session's Kerberos modules; ``KRB5_CONFIG`` names
    its realm's configuration while it runs (Spark's Python workers need the
    ``kafka.sasl.kerberos.krb5.conf`` option instead: they were started before).

    Raises (as a test ERROR): KdcError / BrokerStartError.
    """
    from spark_kafka_py.testing.kerberos import KerberizedKafka, krb5_config

    with KerberizedKafka() as kafka, krb5_config(kafka.krb5_conf):
        yield kafka


@pytest.fixture()
def kafka_cluster_factory() -> Iterator[Callable[..., LocalKafkaCluster]]:
    """Factory of private local clusters (for kill/restart tests); all stopped after the test.

    Call as ``kafka_cluster_factory(3)`` or with :class:`LocalKafkaCluster` keyword arguments.
    """
    started: list[LocalKafkaCluster] = []

    def make(num_brokers: int = 1, **kwargs: Any) -> LocalKafkaCluster:
        cluster = LocalKafkaCluster(num_brokers, **kwargs)
        started.append(cluster)
        return cluster.start()

    yield make
    for cluster in started:
        cluster.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(request: pytest.FixtureRequest) -> Iterator[str]:
    """``host:port,...`` of the session's Kafka broker (see the module docstring for which)."""
    env = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if env:
        yield env
        return
    mode = os.environ.get("SPARK_KAFKA_PY_BROKER", "auto")
    if mode not in ("auto", "local", "docker"):
        raise ValueError(f"SPARK_KAFKA_PY_BROKER must be auto, local or docker, got {mode!r}")
    if mode == "auto" and any(
        os.environ.get(name, "").strip() for name in (KAFKA_VERSION_ENV, KAFKA_FEATURES_ENV)
    ):
        mode = "local"  # a chosen release or feature levels: the Docker image has its own
    if mode != "local":
        container = _docker_kafka()
        if container is not None:
            try:
                yield container.get_bootstrap_server()
            finally:
                container.stop()
            return
        if mode == "docker":
            raise RuntimeError("SPARK_KAFKA_PY_BROKER=docker but no Docker engine/testcontainers")
    cluster: LocalKafkaCluster = request.getfixturevalue("kafka_cluster")
    yield cluster.bootstrap_servers


def _topic_base(name: str) -> str:
    """A legal Kafka topic name fragment from a test name ([a-zA-Z0-9._-], <= 100 chars)."""
    return re.sub(r"[^a-zA-Z0-9._-]+", "-", name).strip("-.")[:100] or "topic"


@pytest.fixture()
def new_topic(request: pytest.FixtureRequest) -> Callable[..., str]:
    """Factory creating uniquely named topics: ``new_topic(partitions=3, configs={...})``.

    Names are ``<test name>-<8 hex digits>``. Topics are not deleted (the broker is per
    session). Raises KafkaToolError when creation fails.
    """
    base = _topic_base(request.node.name)

    def make(
        partitions: int = 1,
        configs: Mapping[str, str] | None = None,
        replication_factor: int = 1,
        bootstrap: str | None = None,
    ) -> str:
        name = f"{base}-{uuid.uuid4().hex[:8]}"
        servers = bootstrap or request.getfixturevalue("kafka_bootstrap")
        create_topic(servers, name, partitions, replication_factor, configs)
        return name

    return make


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A real local SparkSession (``local[2]``) with Spark's Kafka connector; stopped at end."""
    from spark_kafka_py.testing.spark import local_spark_session

    session = local_spark_session("spark-kafka-py-tests")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A started 2-worker standalone Spark cluster, shared by the session; stopped at the end.

    Raises (as a test ERROR): SparkClusterError (a daemon exited, or the workers did not
    register; the message has the daemons' logs), JavaError (no Java).
    """
    from spark_kafka_py.testing.spark_cluster import StandaloneCluster

    cluster = StandaloneCluster(root=tmp_path_factory.mktemp("spark-standalone"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """A started Spark Connect server (``local[2]``), shared by the session; stopped at the end.

    Raises (as a test ERROR): ConnectServerError (the message has the server's log tail).
    """
    from spark_kafka_py.testing.spark_connect import ConnectServer

    with ConnectServer(work_dir=tmp_path_factory.mktemp("spark-connect")) as server:
        yield server


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def schema_registry() -> Iterator[str]:
    """The base URL of the Confluent-compatible API of the session's schema registry (see the
    module docstring), e.g. ``http://127.0.0.1:PORT/apis/ccompat/v7``.

    Raises (as a test ERROR): RegistryStartError (the message names the log file);
    NoSuitableJavaError / ArtifactDownloadError with ``CI=true`` (a skip otherwise).
    """
    env = os.environ.get("SCHEMA_REGISTRY_URL", "").strip()
    if env:
        yield env
        return
    from spark_kafka_py.testing.registry import (
        ApicurioRegistry,
        ArtifactDownloadError,
        NoSuitableJavaError,
    )

    registry = ApicurioRegistry()
    try:
        registry.start()
    except (NoSuitableJavaError, ArtifactDownloadError) as exc:
        if _ci():
            raise
        pytest.skip(f"no schema registry (set SCHEMA_REGISTRY_URL, or CI=true to fail): {exc}")
    try:
        yield registry.url
    finally:
        registry.stop()


@pytest.fixture()
def spark_connect(connect_server: ConnectServer) -> Iterator[RemoteSparkSession]:
    """The Connect client session of ``connect_server``; the process is a Connect client
    (``SPARK_CONNECT_MODE_ENABLED``) during the test and classic again after it."""
    from spark_kafka_py.testing.spark_connect import connect_mode

    assert connect_server.client is not None, "connect_server is started"
    with connect_mode():
        yield connect_server.client
