"""spark-kafka-py broker start|stop|status: a local Kafka cluster that outlives the command.

start launches a local Kafka cluster (KRaft, from Apache Kafka's Maven jars) detached from the
command, writes its state (pids, ports, bootstrap servers, data directory) to
<cache>/broker/state.json (<cache> is $SPARK_KAFKA_PY_CACHE or ~/.cache/spark-kafka-py) and
prints the bootstrap servers alone on stdout, so that

    export KAFKA_BOOTSTRAP_SERVERS=$(spark-kafka-py broker start)

works. stop terminates those processes (SIGTERM, SIGKILL after a timeout) and removes the state
and data; status prints whether it is up (exit code 0 up, 1 not). The broker does not create
topics on first use: create them with spark-kafka-py topics create NAME --partitions N.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any

from spark_kafka_py.testing import detached
from spark_kafka_py.testing.broker import LocalKafkaCluster
from spark_kafka_py.testing.jars import cache_dir

__all__ = ["add_parser", "read_state", "state_path"]

_KIND = "broker"
#: How long ``stop`` waits after SIGTERM before SIGKILL, seconds.
STOP_TIMEOUT_S = 30.0


def state_path() -> Path:
    """``<cache>/broker/state.json``: the running detached cluster, if any."""
    return detached.state_path(_KIND)


def read_state() -> dict[str, Any] | None:
    """The saved state (``bootstrap``, ``nodes`` with ``pid``/ports, ``base_dir``) or ``None``."""
    return detached.read_state(_KIND)


def _is_our_node(pid: int, config_path: str) -> bool:
    """Whether ``pid`` is alive and still the Kafka JVM we started (not a reused pid)."""
    return detached.is_our_process(pid, b"kafka.Kafka", config_path)


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _live_nodes(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in state["nodes"] if _is_our_node(n["pid"], n["config"])]


def _start(args: argparse.Namespace) -> int:
    state = read_state()
    if state is not None and _live_nodes(state):
        print(f"broker already running (state {state_path()})", file=sys.stderr)
        print(state["bootstrap"])
        return 0
    base = Path(args.dir) if args.dir else cache_dir() / "broker" / "cluster"
    if base.exists():
        shutil.rmtree(base)
    cluster = LocalKafkaCluster(
        args.brokers, base_dir=base, heap=args.heap, start_timeout_s=args.timeout
    )
    started = time.monotonic()
    cluster.start()
    cluster.detach()
    state = {
        "bootstrap": cluster.bootstrap_servers,
        "kafka_version": cluster.kafka_version,
        "cluster_id": cluster.cluster_id,
        "base_dir": str(base),
        "started_at": time.time(),
        "nodes": [
            {
                "node_id": n.node_id,
                "pid": n.pid,
                "broker_port": n.broker_port,
                "controller_port": n.controller_port,
                "config": str(n.config_path),
                "server_log": str(n.server_log),
            }
            for n in cluster.nodes
        ],
    }
    detached.write_state(_KIND, state)
    print(
        f"started {args.brokers} Kafka node(s) in {time.monotonic() - started:.1f} s; "
        f"logs in {base}; stop with: spark-kafka-py broker stop",
        file=sys.stderr,
    )
    print(cluster.bootstrap_servers)
    return 0


def _stop(args: argparse.Namespace) -> int:
    state = read_state()
    if state is None:
        print("no broker running (no state file)", file=sys.stderr)
        return 0
    live = _live_nodes(state)
    detached.terminate(
        [n["pid"] for n in live], b"kafka.Kafka", [n["config"] for n in live], args.timeout
    )
    state_path().unlink(missing_ok=True)
    if not args.keep_data:
        shutil.rmtree(state["base_dir"], ignore_errors=True)
    print(f"stopped {len(live)} Kafka node(s)", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    state = read_state()
    if state is None:
        print("not running")
        return 1
    live = _live_nodes(state)
    serving = [n for n in live if _port_open(n["broker_port"])]
    total = len(state["nodes"])
    if not live:
        print(f"not running (stale state {state_path()}; `broker stop` clears it)")
        return 1
    print(f"running: {state['bootstrap']} ({len(serving)}/{total} nodes serving)")
    if args.verbose:
        for n in state["nodes"]:
            up = "up" if n in live else "down"
            print(f"  node {n['node_id']} pid {n['pid']} {up} log {n['server_log']}")
    return 0 if len(serving) == total else 1


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``broker start|stop|status`` on the CLI's subparsers; the module docstring,
    plain text without markup, is its ``--help`` description."""
    broker = subparsers.add_parser(
        "broker",
        help="run a local Apache Kafka cluster (KRaft, from Maven jars) in the background",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = broker.add_subparsers(dest="broker_action", required=True)

    start = actions.add_parser("start", help="start a detached cluster, print bootstrap servers")
    start.add_argument("--brokers", type=int, default=1, help="number of nodes (default 1)")
    start.add_argument("--heap", default="512m", help="JVM -Xmx per node (default 512m)")
    start.add_argument("--dir", help="data/log directory (default <cache>/broker/cluster)")
    start.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the nodes (120)"
    )
    start.set_defaults(func=_start)

    stop = actions.add_parser("stop", help="stop the cluster and remove its data")
    stop.add_argument("--keep-data", action="store_true", help="keep the data directory")
    stop.add_argument(
        "--timeout", type=float, default=STOP_TIMEOUT_S, help="seconds before SIGKILL (30)"
    )
    stop.set_defaults(func=_stop)

    status = actions.add_parser("status", help="is it running? (exit 0 yes, 1 no)")
    status.add_argument("-v", "--verbose", action="store_true", help="list nodes and logs")
    status.set_defaults(func=_status)
