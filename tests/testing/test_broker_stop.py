"""When :class:`LocalKafkaCluster` stops its nodes gracefully (SIGTERM) and when at once (SIGKILL).

The nodes here are stand-in processes that ignore SIGTERM, as a Kafka node does while its
controlled shutdown waits for a controller: a graceful stop then lasts ``timeout_s`` until the
SIGKILL, a non-graceful one returns at once. No broker is started.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_kafka_py.testing.broker import KafkaNode, LocalKafkaCluster

#: A process that ignores SIGTERM and says so on stdout once the handler is set.
IGNORES_SIGTERM = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)


def _stand_in() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", IGNORES_SIGTERM], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


@pytest.fixture()
def make_cluster(tmp_path: Path) -> Iterator:
    """``make_cluster(n, keep_data)``: a cluster object whose ``n`` nodes are stand-ins."""
    made: list[LocalKafkaCluster] = []

    def make(num: int, keep_data: bool) -> LocalKafkaCluster:
        cluster = LocalKafkaCluster(num, base_dir=tmp_path / "kept" if keep_data else None)
        cluster.base_dir = tmp_path / "kept" if keep_data else tmp_path / f"temp-{len(made)}"
        cluster.base_dir.mkdir()
        cluster.nodes = [
            KafkaNode(i + 1, 0, 0, cluster.base_dir / f"node-{i + 1}", _stand_in())
            for i in range(num)
        ]
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        for n in cluster.nodes:
            if n.process is not None:
                n.process.kill()
                n.process.wait()


def _timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    action()
    return time.monotonic() - start


def test_temporary_cluster_with_a_killed_node_stops_at_once(make_cluster) -> None:
    cluster = make_cluster(3, keep_data=False)
    procs = [n.process for n in cluster.nodes]
    cluster.kill(2)
    assert not cluster.quorum_complete()
    assert _timed(lambda: cluster.stop(timeout_s=30)) < 5
    assert all(p.poll() is not None for p in procs)
    assert all(n.process is None for n in cluster.nodes)
    assert cluster.base_dir is not None and not cluster.base_dir.exists()


def test_temporary_cluster_is_not_stopped_gracefully(make_cluster) -> None:
    cluster = make_cluster(1, keep_data=False)
    assert cluster.quorum_complete()
    assert _timed(lambda: cluster.stop(timeout_s=30)) < 5


def test_kept_data_and_full_quorum_stop_gracefully_then_kill_after_the_timeout(
    make_cluster,
) -> None:
    cluster = make_cluster(3, keep_data=True)
    procs = [n.process for n in cluster.nodes]
    took = _timed(lambda: cluster.stop(timeout_s=1.0))
    assert 1.0 <= took < 10  # SIGTERM was sent first, SIGKILL only after the timeout
    assert all(p.poll() is not None for p in procs)
    assert cluster.base_dir is not None and cluster.base_dir.exists()  # kept


def test_kept_data_with_a_dead_voter_stops_at_once(make_cluster) -> None:
    cluster = make_cluster(3, keep_data=True)
    cluster.kill(1)
    assert _timed(lambda: cluster.stop(timeout_s=30)) < 5


def test_explicit_graceful_overrides_the_default(make_cluster) -> None:
    cluster = make_cluster(1, keep_data=False)
    assert _timed(lambda: cluster.stop(timeout_s=1.0, graceful=True)) >= 1.0


def test_stop_node_kills_at_once_a_node_left_without_a_quorum(make_cluster) -> None:
    cluster = make_cluster(3, keep_data=False)
    cluster.kill(1)
    # Nodes 2 and 3 make a majority: node 2's controlled shutdown could finish: graceful.
    assert _timed(lambda: cluster.stop_node(2, timeout_s=1.0)) >= 1.0
    # Node 3 alone is 1 voter of 3: no controller can be elected; killed at once.
    assert _timed(lambda: cluster.stop_node(3, timeout_s=30)) < 5
    assert not any(n.is_running() for n in cluster.nodes)
