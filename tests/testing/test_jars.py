"""The jar cache without network: a failed refresh of the remembered connector version backs
off, and cached look-ups never run Maven or ask Maven Central.

Everything here runs on a fake clock (``jars._clock``) with ``urlopen`` and ``subprocess.run``
/ ``Popen`` replaced, so no test depends on the network or on how long anything takes.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_kafka_py.testing import jars
from spark_kafka_py.testing.jars import MARKER, REFRESH_BACKOFF_S, JarResolutionError

T0 = 2_000_000_000.0  # the fake clock's start, seconds since the epoch
DAY = 24 * 3600


def _metadata(*versions: str) -> bytes:
    listed = "".join(f"<version>{v}</version>" for v in versions)
    return f"<metadata><versioning><versions>{listed}</versions></versioning></metadata>".encode()


class FakeCentral:
    """Stands in for ``urllib.request.urlopen``: counts requests, answers or fails."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.down = False
        self.versions: tuple[str, ...] = ("4.0.0",)

    def __call__(self, url: str, timeout: float | None = None) -> io.BytesIO:
        self.urls.append(url)
        if self.down:
            raise OSError("Network is unreachable")
        return io.BytesIO(_metadata(*self.versions))


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [T0]
    monkeypatch.setattr(jars, "_clock", lambda: now[0])
    return now


@pytest.fixture()
def central(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCentral]:
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(tmp_path))
    monkeypatch.delenv("SPARK_KAFKA_PY_CONNECTOR_VERSION", raising=False)
    fake = FakeCentral()
    monkeypatch.setattr(jars.urllib.request, "urlopen", fake)
    yield fake


def _remember(version: str, written_at: float) -> Path:
    memo = jars._memo_path("4.3.0")
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(version, encoding="utf-8")
    os.utime(memo, (written_at, written_at))
    return memo


def test_failed_refresh_is_remembered_and_not_retried_within_the_backoff(
    central: FakeCentral, clock: list[float]
) -> None:
    _remember("4.0.0", T0 - 2 * DAY)  # a fallback older than a day: due for a refresh
    central.down = True
    assert jars._connector_version("4.3.0") == "4.0.0"
    assert len(central.urls) == 1  # the refresh was tried once, and failed
    # Within the back-off, lookups use the remembered fallback without asking Central, even
    # once it answers again.
    central.down = False
    for step in (0, 1, 60, REFRESH_BACKOFF_S - 1):
        clock[0] = T0 + step
        assert jars._connector_version("4.3.0") == "4.0.0"
    assert len(central.urls) == 1
    marker = jars._backoff_path("4.3.0")
    recorded = json.loads(marker.read_text(encoding="utf-8"))
    assert recorded["failed_at"] == T0 and "Network is unreachable" in recorded["error"]
    # After it, Central is asked again; a success replaces the memo and ends the back-off.
    clock[0] = T0 + REFRESH_BACKOFF_S
    central.versions = ("4.0.0", "4.2.0")
    with pytest.warns(UserWarning, match="using 4.2.0"):
        assert jars._connector_version("4.3.0") == "4.2.0"
    assert len(central.urls) == 3  # both artifacts' metadata
    assert not marker.exists()
    assert jars._memo_path("4.3.0").read_text(encoding="utf-8") == "4.2.0"


def test_refresh_failing_again_after_the_backoff_backs_off_again(
    central: FakeCentral, clock: list[float]
) -> None:
    _remember("4.0.0", T0 - 2 * DAY)
    central.down = True
    assert jars._connector_version("4.3.0") == "4.0.0"
    clock[0] = T0 + REFRESH_BACKOFF_S + 5
    assert jars._connector_version("4.3.0") == "4.0.0"
    assert len(central.urls) == 2
    marker = json.loads(jars._backoff_path("4.3.0").read_text(encoding="utf-8"))
    assert marker["failed_at"] == T0 + REFRESH_BACKOFF_S + 5
    clock[0] += REFRESH_BACKOFF_S - 1
    assert jars._connector_version("4.3.0") == "4.0.0"
    assert len(central.urls) == 2


def test_fresh_or_installed_memo_never_asks_central(
    central: FakeCentral, clock: list[float]
) -> None:
    central.down = True
    _remember("4.0.0", T0 - DAY + 60)  # a fallback younger than a day
    assert jars._connector_version("4.3.0") == "4.0.0"
    _remember("4.3.0", T0 - 365 * DAY)  # the installed version: for good
    assert jars._connector_version("4.3.0") == "4.3.0"
    assert central.urls == []
    assert not jars._backoff_path("4.3.0").exists()


def test_nothing_remembered_and_central_down_is_an_error_every_time(
    central: FakeCentral, clock: list[float]
) -> None:
    # No version to fall back on: the failure is reported, and the next lookup tries again
    # (the network may be back; there is nothing to use meanwhile).
    central.down = True
    for _ in range(2):
        with pytest.raises(JarResolutionError, match=r"maven-metadata\.xml"):
            jars._connector_version("4.3.0")
    assert len(central.urls) == 2
    assert not jars._backoff_path("4.3.0").exists()


@pytest.mark.parametrize("content", ["", "{", '{"failed_at": "soon"}', "[]", '{"error": "x"}'])
def test_unreadable_backoff_marker_counts_as_none(
    central: FakeCentral, clock: list[float], content: str
) -> None:
    _remember("4.0.0", T0 - 2 * DAY)
    marker = jars._backoff_path("4.3.0")
    marker.write_text(content, encoding="utf-8")
    central.down = True
    assert jars._connector_version("4.3.0") == "4.0.0"
    assert len(central.urls) == 1  # asked again, failed, marker rewritten
    assert json.loads(marker.read_text(encoding="utf-8"))["failed_at"] == T0


def test_backoff_marker_from_the_future_does_not_block_forever(
    central: FakeCentral, clock: list[float]
) -> None:
    # A clock set back (or a marker copied from another machine) must not stop refreshes.
    _remember("4.0.0", T0 - 2 * DAY)
    jars._backoff_path("4.3.0").write_text(json.dumps({"failed_at": T0 + DAY}), encoding="utf-8")
    with pytest.warns(UserWarning, match="using 4.0.0"):
        assert jars._connector_version("4.3.0") == "4.0.0"
    assert len(central.urls) == 2


def test_cached_artifact_set_runs_no_maven_and_no_network(
    central: FakeCentral, monkeypatch: pytest.MonkeyPatch
) -> None:
    coords = ["org.example:thing:1.0"]
    first = jars.cache_dir() / "jars"
    # A complete cache entry, as _run_maven leaves it.
    key = jars.hashlib.sha256("\n".join(sorted(coords)).encode()).hexdigest()[:12]
    target = first / f"thing-{key}"
    jar = target / "repo" / "org" / "example" / "thing" / "1.0" / "thing-1.0.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"PK")
    listing = {
        "coordinates": coords,
        "artifacts": [
            {
                "group_id": "org.example",
                "artifact_id": "thing",
                "version": "1.0",
                "path": "repo/org/example/thing/1.0/thing-1.0.jar",
            }
        ],
    }
    (target / MARKER).write_text(json.dumps(listing), encoding="utf-8")

    def no_maven(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"Maven was run for a cached artifact set: {args}")

    monkeypatch.setattr(jars.subprocess, "run", no_maven)
    monkeypatch.setattr(jars.subprocess, "Popen", no_maven)
    got = jars.resolve_artifacts("thing", coords)
    assert [(a.artifact_id, a.version, a.path) for a in got] == [("thing", "1.0", jar)]
    assert central.urls == []


def test_selected_kafka_version_defaults_and_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(jars.KAFKA_VERSION_ENV, raising=False)
    assert jars.selected_kafka_version() == jars.KAFKA_VERSION
    monkeypatch.setenv(jars.KAFKA_VERSION_ENV, " ")
    assert jars.selected_kafka_version() == jars.KAFKA_VERSION
    monkeypatch.setenv(jars.KAFKA_VERSION_ENV, "3.9.1")
    assert jars.selected_kafka_version() == "3.9.1"


@pytest.mark.parametrize("bad", ["4.0", "latest", "3.9.1-rc0", "2.8.2", "3.2.3"])
def test_selected_kafka_version_rejects_what_the_harness_cannot_start(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv(jars.KAFKA_VERSION_ENV, bad)
    with pytest.raises(ValueError, match=jars.KAFKA_VERSION_ENV):
        jars.selected_kafka_version()


def test_logging_backend_of_the_broker_by_release() -> None:
    assert jars.log4j1_broker("3.6.2") and jars.log4j1_broker("3.9.1")
    assert not jars.log4j1_broker("4.0.0") and not jars.log4j1_broker("4.4.0")


def test_spark_protobuf_jars_from_the_environment_skip_maven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "spark-protobuf-local.jar", tmp_path / "protobuf-java.jar"
    a.write_bytes(b"PK")
    b.write_bytes(b"PK")

    def no_maven(*args: object, **kwargs: object) -> None:
        raise AssertionError("Maven must not run when the jars are given")

    monkeypatch.setattr(jars.subprocess, "run", no_maven)
    monkeypatch.setattr(jars.subprocess, "Popen", no_maven)
    monkeypatch.setenv(jars.SPARK_PROTOBUF_JARS_ENV, f" {a} , {b},")
    assert jars.spark_protobuf_jars() == [a.resolve(), b.resolve()]

    monkeypatch.setenv(jars.SPARK_PROTOBUF_JARS_ENV, f"{a},{tmp_path / 'gone.jar'}")
    with pytest.raises(JarResolutionError, match=r"SPARK_KAFKA_PY_SPARK_PROTOBUF_JARS.*gone\.jar"):
        jars.spark_protobuf_jars()
