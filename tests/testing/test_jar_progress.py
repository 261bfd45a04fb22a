"""Progress on stderr while Maven fetches an artifact set (issue 24: the demo's first run was
silent for 1-2 minutes while Maven downloaded 56 MB).

One real fetch with the real ``mvn`` (a 4 kB artifact from Maven Central into an empty cache
directory; the plugin and, after the first run, the artifact come from the user's Maven
repository, so it takes a few seconds), and Maven's own ``Downloaded from`` lines replayed by
a stand-in ``mvn`` for the periodic lines: what was downloaded, how big, not one line per file.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from spark_kafka_py.testing import jars

#: A tiny artifact without dependencies (about 4 kB).
TINY = "org.jspecify:jspecify:1.0.0"


@pytest.fixture()
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(cache))
    return cache


@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven (mvn) on PATH")
def test_first_fetch_says_what_and_how_big_once(
    empty_cache: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    got = jars.resolve_artifacts("tiny", [TINY])
    assert [(a.group_id, a.artifact_id, a.version) for a in got] == [
        ("org.jspecify", "jspecify", "1.0.0")
    ]
    out, err = capfd.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"fetching the tiny jars ({TINY} and their dependencies) with Maven")
    assert str(empty_cache / "jars") in lines[0]
    size_mb = got[0].path.stat().st_size / 1_000_000
    assert lines[-1].startswith(f"fetched the tiny jars: 1 jar, {size_mb:.1f} MB, in ")
    # Maven's own output stays out of the terminal
    assert not [line for line in lines if "[INFO]" in line or "BUILD" in line]

    # Once: a cached set is silent.
    assert jars.resolve_artifacts("tiny", [TINY]) == got
    assert capfd.readouterr() == ("", "")


#: Lines of Maven 3.8.7 (batch mode) fetching into an empty local repository, as it prints them.
MAVEN_LINES = [
    "[INFO] Scanning for projects...",
    "[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/apache/kafka/"
    "kafka-clients/4.3.0/kafka-clients-4.3.0.pom",
    "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/apache/kafka/"
    "kafka-clients/4.3.0/kafka-clients-4.3.0.pom (1.9 kB at 21 kB/s)",
    "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/apache/kafka/"
    "kafka-clients/4.3.0/kafka-clients-4.3.0.jar (12 MB at 3.1 MB/s)",
    "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/com/github/luben/"
    "zstd-jni/1.5.6-10/zstd-jni-1.5.6-10.jar (7.0 MB at 2.2 MB/s)",
    "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/slf4j/"
    "slf4j-api/1.7.36/slf4j-api-1.7.36.jar (41 kB at 380 kB/s)",
    "[INFO] BUILD SUCCESS",
]


def _fake_maven(tmp_path: Path, pause_s: float) -> Path:
    """An ``mvn`` that prints :data:`MAVEN_LINES` ``pause_s`` apart and copies one jar into
    ``-DoutputDirectory`` in Maven's repository layout, as copy-dependencies does."""
    script = tmp_path / "mvn"
    script.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            f"""
            import pathlib, sys, time
            out = next(a for a in sys.argv if a.startswith("-DoutputDirectory="))
            jar = pathlib.Path(out.split("=", 1)[1], "org/example/thing/1.0/thing-1.0.jar")
            for line in {MAVEN_LINES!r}:
                print(line, flush=True)
                time.sleep({pause_s})
            jar.parent.mkdir(parents=True)
            jar.write_bytes(b"x" * 2_500_000)
            """
        )
    )
    script.chmod(0o755)
    return script


def test_periodic_lines_count_the_downloaded_jars(
    empty_cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(jars, "PROGRESS_INTERVAL_S", 0.25)
    mvn = _fake_maven(tmp_path, pause_s=0.4)
    got = jars.resolve_artifacts("thing", ["org.example:thing:1.0"], mvn=str(mvn))
    assert [a.artifact_id for a in got] == ["thing"]
    lines = capfd.readouterr().err.splitlines()
    assert lines[0].startswith("fetching the thing jars (org.example:thing:1.0 and their")
    periodic = lines[1:-1]
    # one line per interval, not one per file (7 lines of Maven over ~2.8 s, 0.25 s apart)
    assert 3 <= len(periodic) <= 14, lines
    assert all(line.startswith("  thing: ") for line in periodic), lines
    assert "0 jars (0.0 MB) downloaded so far" in periodic[0]
    assert periodic[-1].startswith("  thing: 3 jars (19.0 MB) downloaded so far, ")
    assert periodic[-1].endswith("; latest slf4j-api-1.7.36.jar (41 kB)")
    assert any("latest kafka-clients-4.3.0.jar (12 MB)" in line for line in periodic)
    assert lines[-1].startswith("fetched the thing jars: 1 jar, 2.5 MB, in ")
    assert lines[-1].endswith(" s (4 files, 19.0 MB downloaded)")


def test_maven_failure_quotes_its_output(
    empty_cache: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    mvn = tmp_path / "mvn"
    mvn.write_text(
        f"#!{sys.executable}\nimport sys\nprint('[ERROR] Could not resolve org.example:gone:1.0')"
        "\nsys.exit(1)\n"
    )
    mvn.chmod(0o755)
    with pytest.raises(jars.JarResolutionError, match=r"(?s)exit 1.*Could not resolve"):
        jars.resolve_artifacts("gone", ["org.example:gone:1.0"], mvn=str(mvn))
    err = capfd.readouterr().err
    assert err.startswith("fetching the gone jars")
    assert "fetched" not in err
