"""spark-kafka-py registry start|stop|status: a local schema registry that outlives the command.

start launches Apicurio Registry (from Maven Central; needs Java 21+, see
SPARK_KAFKA_PY_REGISTRY_JAVA_HOME) detached from the command, in memory, on 127.0.0.1, writes
its state (pid, ports, URL, log file) to <cache>/registry/state.json (<cache> is
$SPARK_KAFKA_PY_CACHE or ~/.cache/spark-kafka-py) and prints the Confluent-compatible URL alone
on stdout, so that

    export SCHEMA_REGISTRY_URL=$(spark-kafka-py registry start)

works (the tests then use that registry instead of starting one). stop terminates it (SIGTERM,
SIGKILL after a timeout) and removes its state and logs; status prints whether it answers
(exit code 0 yes, 1 no). Its schemas live in memory only: stop forgets them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from spark_kafka_py.testing import detached
from spark_kafka_py.testing.jars import cache_dir
from spark_kafka_py.testing.registry import (
    APICURIO_VERSION,
    DEFAULT_STOP_TIMEOUT_S,
    ApicurioRegistry,
    registry_answers,
)

__all__ = ["add_parser", "read_state", "state_path"]

_KIND = "registry"


def state_path() -> Path:
    """``<cache>/registry/state.json``: the running detached registry, if any."""
    return detached.state_path(_KIND)


def read_state() -> dict[str, Any] | None:
    """The saved state (``url``, ``pid``, ``port``, ``log``, ``work_dir``...) or ``None``."""
    return detached.read_state(_KIND)


def _is_ours(pid: int, work_dir: str) -> bool:
    """Whether ``pid`` is alive and still the registry JVM we started (not a reused pid)."""
    return detached.is_our_process(pid, b"quarkus-run.jar", work_dir)


def _start(args: argparse.Namespace) -> int:
    state = read_state()
    if state is not None and _is_ours(state["pid"], state["work_dir"]):
        print(f"registry already running (state {state_path()})", file=sys.stderr)
        print(state["url"])
        return 0
    work = Path(args.dir) if args.dir else cache_dir() / "registry" / "run"
    if work.exists():
        shutil.rmtree(work)
    registry = ApicurioRegistry(
        args.version, work_dir=work, heap=args.heap, start_timeout_s=args.timeout
    )
    registry.start()
    registry.detach()
    state = {
        "url": registry.url,
        "version": registry.version,
        "pid": registry.pid,
        "port": registry.port,
        "management_port": registry.management_port,
        "log": str(registry.log_path),
        "work_dir": str(work),
        "started_at": time.time(),
    }
    detached.write_state(_KIND, state)
    print(
        f"started Apicurio Registry {registry.version} in {registry.started_in_s or 0:.1f} s; "
        f"log {registry.log_path}; stop with: spark-kafka-py registry stop",
        file=sys.stderr,
    )
    print(registry.url)
    return 0


def _stop(args: argparse.Namespace) -> int:
    state = read_state()
    if state is None:
        print("no registry running (no state file)", file=sys.stderr)
        return 0
    pid, work_dir = state["pid"], state["work_dir"]
    live = _is_ours(pid, work_dir)
    if live:
        detached.terminate([pid], b"quarkus-run.jar", [work_dir], args.timeout)
    state_path().unlink(missing_ok=True)
    if not args.keep_logs:
        shutil.rmtree(work_dir, ignore_errors=True)
    print(
        f"stopped the registry (pid {pid})" if live else "registry was not running", file=sys.stderr
    )
    return 0


def _status(args: argparse.Namespace) -> int:
    state = read_state()
    if state is None:
        print("not running")
        return 1
    if not _is_ours(state["pid"], state["work_dir"]):
        print(f"not running (stale state {state_path()}; `registry stop` clears it)")
        return 1
    if not registry_answers(state["url"]):
        print(f"running but not answering: {state['url']} (pid {state['pid']}, log {state['log']})")
        return 1
    print(f"running: {state['url']}")
    if args.verbose:
        print(f"  Apicurio Registry {state['version']} pid {state['pid']} log {state['log']}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``registry start|stop|status`` on the CLI's subparsers; the module docstring,
    plain text without markup, is its ``--help`` description."""
    registry = subparsers.add_parser(
        "registry",
        help="run a local schema registry (Apicurio, Confluent-compatible API) in the background",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = registry.add_subparsers(dest="registry_action", required=True)

    start = actions.add_parser("start", help="start a detached registry, print its URL")
    start.add_argument(
        "--version", default=APICURIO_VERSION, help=f"Apicurio release ({APICURIO_VERSION})"
    )
    start.add_argument("--heap", default="384m", help="JVM -Xmx (default 384m)")
    start.add_argument("--dir", help="log/work directory (default <cache>/registry/run)")
    start.add_argument(
        "--timeout", type=float, default=180.0, help="seconds to wait for it to answer (180)"
    )
    start.set_defaults(func=_start)

    stop = actions.add_parser("stop", help="stop the registry (its schemas are forgotten)")
    stop.add_argument("--keep-logs", action="store_true", help="keep the log directory")
    stop.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_STOP_TIMEOUT_S,
        help=f"seconds before SIGKILL ({DEFAULT_STOP_TIMEOUT_S:g})",
    )
    stop.set_defaults(func=_stop)

    status = actions.add_parser("status", help="is it answering? (exit 0 yes, 1 no)")
    status.add_argument("-v", "--verbose", action="store_true", help="pid and log file")
    status.set_defaults(func=_status)
