"""spark_kafka_py.testing.detached: the saved state and the stop of the servers the ``broker``
and ``registry`` commands leave running."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_kafka_py.testing import detached


def test_state_round_trips_under_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(tmp_path))
    assert detached.read_state("registry") is None
    path = detached.write_state("registry", {"url": "http://127.0.0.1:1", "pid": 7})
    assert path == tmp_path / "registry" / "state.json"
    assert detached.read_state("registry") == {"url": "http://127.0.0.1:1", "pid": 7}
    assert detached.read_state("broker") is None


def test_a_process_is_ours_only_with_its_main_and_marker() -> None:
    proc = subprocess.Popen(["sleep", "61.5"])
    try:
        # Popen returns once exec has begun, and the kernel sets the new program's argument
        # pages a moment later: an empty /proc/<pid>/cmdline before that (seen under load in
        # the fresh-clone run of 2026-11-27). The harness only asks about processes that
        # started long before.
        deadline = time.monotonic() + 10
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        while cmdline.parent.is_dir() and not cmdline.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert detached.is_our_process(proc.pid, b"sleep", "61.5")
        assert not detached.is_our_process(proc.pid, b"kafka.Kafka", "61.5")
        assert not detached.is_our_process(proc.pid, b"sleep", "/other/config")
    finally:
        proc.kill()
        proc.wait()
    assert not detached.is_our_process(proc.pid, b"sleep", "61.5")


def test_terminate_kills_what_ignores_sigterm_after_the_timeout() -> None:
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(60)",
            "stubborn-marker",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    polite = subprocess.Popen(["sleep", "62.5"])
    assert stubborn.stdout is not None and stubborn.stdout.readline() == "ready\n"
    t0 = time.monotonic()
    detached.terminate(
        [polite.pid], b"sleep", ["62.5"], timeout_s=30
    )  # SIGTERM suffices: no wait for the timeout
    assert polite.wait(timeout=10) == -15
    assert time.monotonic() - t0 < 25
    detached.terminate([stubborn.pid], sys.executable.encode(), ["stubborn-marker"], timeout_s=0.5)
    assert stubborn.wait(timeout=10) == -9
