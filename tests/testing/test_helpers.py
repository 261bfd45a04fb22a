"""Pure helpers of spark_kafka_py.testing (no broker), and Maven failure reporting."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from spark_kafka_py.testing import jars
from spark_kafka_py.testing.broker import _broker_ids, min_heap, random_cluster_id
from spark_kafka_py.testing.jars import JarResolutionError, _pick_version, resolve_artifacts
from spark_kafka_py.testing.tools import ProducedRecord, _encode_line


def test_encode_line_fields() -> None:
    line = _encode_line(
        ProducedRecord("k\t1", None, [("h", "v\n"), ("n", None)], partition=2, timestamp_ms=5)
    )
    fields = line.split("\t")
    assert fields[:2] == ["=2", "=5"]
    assert base64.b64decode(fields[2][1:]) == b"k\t1"
    assert fields[3] == "-"
    assert base64.b64decode(fields[5][1:]) == b"v\n"
    assert fields[6:] == ["=" + base64.b64encode(b"n").decode(), "-"]
    assert "\n" not in line
    assert _encode_line(ProducedRecord(None, b"")) == "-\t-\t-\t="


def test_broker_ids_from_api_versions_output() -> None:
    out = "127.0.0.1:1 (id: 1 rack: null isFenced: false) -> (\n\tProduce(0): 3 to 12\n)\n"
    out += "127.0.0.1:2 (id: 3 rack: null isFenced: false) -> (\n"
    assert _broker_ids(out) == {1, 3}


def test_min_heap_and_cluster_id() -> None:
    assert min_heap("512m") == "128m"
    assert min_heap("2g") == "512m"
    assert min_heap("100m") == "64m"
    cid = random_cluster_id()
    assert len(cid) == 22
    assert len(base64.urlsafe_b64decode(cid + "==")) == 16


def test_pick_connector_version() -> None:
    available = ["3.5.1", "4.0.0", "4.1.0-preview1", "4.2.0", "5.0.0"]
    assert _pick_version("4.2.0", available) == "4.2.0"
    assert _pick_version("4.3.0", available) == "4.2.0"
    assert _pick_version("4.1.1", available) == "4.0.0"
    with pytest.raises(JarResolutionError):
        _pick_version("6.0.0", available)


def test_connector_fallback_is_asked_again_after_a_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(tmp_path))
    monkeypatch.delenv("SPARK_KAFKA_PY_CONNECTOR_VERSION", raising=False)
    central = {"versions": ["4.0.0"], "calls": 0, "down": False}

    def versions(group: str, artifact: str) -> list[str]:
        central["calls"] += 1
        if central["down"]:
            raise JarResolutionError("cannot read maven-metadata.xml")
        return list(central["versions"])

    monkeypatch.setattr(jars, "_central_versions", versions)
    with pytest.warns(UserWarning, match="using 4.0.0"):
        assert jars._connector_version("4.3.0") == "4.0.0"
    calls = central["calls"]
    central["versions"] = ["4.0.0", "4.2.0"]
    assert jars._connector_version("4.3.0") == "4.0.0"  # remembered for a day
    assert central["calls"] == calls
    memo = tmp_path / "jars" / "spark-connector-version-4.3.0.txt"
    day_old = memo.stat().st_mtime - 25 * 3600
    os.utime(memo, (day_old, day_old))
    central["down"] = True
    assert jars._connector_version("4.3.0") == "4.0.0"  # no network: the remembered one
    # A failed refresh backs off (tests/testing/test_jars.py): let the back-off pass.
    monkeypatch.setattr(jars, "_clock", lambda: time.time() + jars.REFRESH_BACKOFF_S)
    central["down"] = False
    with pytest.warns(UserWarning, match="using 4.2.0"):
        assert jars._connector_version("4.3.0") == "4.2.0"  # a newer fallback was published
    central["versions"] = ["4.2.0", "4.3.0"]
    os.utime(memo, (day_old, day_old))
    assert jars._connector_version("4.3.0") == "4.3.0"
    central["down"] = True
    os.utime(memo, (day_old, day_old))
    assert jars._connector_version("4.3.0") == "4.3.0"  # the installed version, for good
    assert memo.read_text() == "4.3.0"


def test_missing_maven_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(tmp_path))
    with pytest.raises(JarResolutionError, match="not found on PATH"):
        resolve_artifacts("x", ["org.apache.kafka:kafka-clients:4.3.0"], mvn="no-such-mvn")


@pytest.mark.integration
def test_failing_maven_raises_with_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(tmp_path))
    with pytest.raises(JarResolutionError, match=r"Maven failed \(exit 1\)[\s\S]*0\.0\.0-nope"):
        resolve_artifacts("bogus", ["org.apache.kafka:kafka-clients:0.0.0-nope"])
    leftovers = list((tmp_path / "jars").iterdir())
    assert leftovers == []  # no half-finished set that could pass for a complete one
