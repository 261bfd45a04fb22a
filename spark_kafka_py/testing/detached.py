"""What the ``broker`` and ``registry`` commands share: a server that outlives the command.

``start`` saves the server's state (pids, ports, address, directories) to
``<cache>/<kind>/state.json``; ``status`` and ``stop`` read it back, check that each pid is
still the JVM that was started (a pid may have been reused since) and stop it: SIGTERM, then
SIGKILL after a timeout, as the fixtures stop their servers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spark_kafka_py.testing.jars import cache_dir

__all__ = ["is_our_process", "read_state", "state_path", "terminate", "write_state"]


def state_path(kind: str) -> Path:
    """``<cache>/<kind>/state.json`` (``kind``: ``broker``, ``registry``)."""
    return cache_dir() / kind / "state.json"


def read_state(kind: str) -> dict[str, Any] | None:
    """The state ``start`` saved for ``kind``, or ``None`` when nothing was started."""
    path = state_path(kind)
    if not path.is_file():
        return None
    state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return state


def write_state(kind: str, state: dict[str, Any]) -> Path:
    """Save ``state`` for ``kind`` (JSON); return the file's path."""
    path = state_path(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=1), encoding="utf-8")
    return path


def is_our_process(pid: int, main: bytes, marker: str) -> bool:
    """Whether ``pid`` is alive and still the JVM we started: its command line names ``main``
    (an argument, e.g. ``kafka.Kafka``, ``quarkus-run.jar``) and an argument contains
    ``marker`` (its config file or work directory). Without ``/proc`` (macOS) a live pid is
    trusted."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    return main in cmdline and any(marker.encode() in arg for arg in cmdline)


def terminate(pids: Sequence[int], main: bytes, markers: Sequence[str], timeout_s: float) -> None:
    """Stop the processes ``pids`` (with their ``markers``, as :func:`is_our_process`):
    SIGTERM to each, then SIGKILL to those still alive after ``timeout_s`` seconds."""
    ours = list(zip(pids, markers, strict=True))
    for pid, _ in ours:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(is_our_process(p, main, m) for p, m in ours):
        time.sleep(0.2)
    for pid, marker in ours:
        if is_our_process(pid, main, marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
