"""Fixtures of the fault tests: one 3-broker KRaft cluster shared by the failover tests.

Starting a 3-node cluster costs 15-60 s on a loaded 2-core machine; the failover tests
(``test_sink_failover`` and the leader kill of ``test_exactly_once``; ``test_failover`` keeps a
cluster of its own, see there) each kill
a broker and otherwise only create topics of their own, so they share one cluster:

- ``three_broker_cluster`` (package): ``LocalKafkaCluster(3, heap="320m")``, started on first
  use and stopped when the package's last test ends;
- ``three_brokers`` (function): that cluster for one test; afterwards every node the test
  killed or stopped is restarted (same ports and data) and the test waits until all three
  brokers are registered again, so the next test starts on a full cluster whatever happened
  (not after the last of them: the cluster is stopped next).

The tests that use it run last in this package (:func:`pytest_collection_modifyitems`), so the
cluster is stopped right after them instead of idling through the other fault tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_kafka_py.testing.broker import LocalKafkaCluster

#: The fixture whose tests share the cluster.
SHARED_FIXTURE = "three_brokers"
_HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="package")
def three_broker_cluster() -> Iterator[LocalKafkaCluster]:
    """The package's started 3-broker cluster (replication 3, ``min.insync.replicas`` 2 for
    internal topics). Raises (as a test ERROR): BrokerStartError / JarResolutionError."""
    with LocalKafkaCluster(3, heap="320m") as cluster:
        yield cluster


#: Node id of the last collected test of :data:`SHARED_FIXTURE` (its nodes need no restart:
#: the package's teardown stops the cluster right after it).
_last_shared: list[str] = []


@pytest.fixture()
def three_brokers(
    three_broker_cluster: LocalKafkaCluster, request: pytest.FixtureRequest
) -> Iterator[LocalKafkaCluster]:
    """The shared cluster for one test, with every node running again after it.

    Raises (in teardown, as a test ERROR): BrokerStartError when a node does not come back.
    """
    yield three_broker_cluster
    if _last_shared and request.node.nodeid == _last_shared[-1]:
        return
    dead = [n.node_id for n in three_broker_cluster.nodes if not n.is_running()]
    for node_id in dead:
        three_broker_cluster.restart(node_id, wait=False)
    if dead:
        three_broker_cluster.wait_serving()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of :data:`SHARED_FIXTURE` after the package's other tests (keeping
    their order), so the package fixture's teardown stops the cluster right after them."""
    shared = [
        i
        for i in items
        if _HERE in i.path.parents and SHARED_FIXTURE in getattr(i, "fixturenames", ())
    ]
    if not shared:
        return
    _last_shared[:] = [shared[-1].nodeid]
    ids = {id(i) for i in shared}
    rest = [i for i in items if id(i) not in ids]
    last = max((k for k, i in enumerate(rest) if _HERE in i.path.parents), default=len(rest) - 1)
    items[:] = rest[: last + 1] + shared + rest[last + 1 :]
