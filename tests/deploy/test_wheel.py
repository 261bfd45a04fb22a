"""The published artefacts: ``tools/build_wheel.py`` builds the sdist and a manylinux wheel.

One test, the documented command end to end: the script builds the sdist from the checkout and
the wheel from the sdist (Zig's C compiler against glibc 2.17), ``auditwheel show`` names a
manylinux tag no newer than ``manylinux_2_28`` (the oldest glibc of the distributions Spark
clusters run: RHEL/Alma/Rocky 8, Amazon Linux 2 is 2.26, Ubuntu 20.04 2.31), and ``twine
check`` passes on both. The wheel then goes into a fresh virtual environment by that
environment's Python with nothing but the environment's ``bin`` on ``PATH`` (no ``cc``, no
``gcc``: nothing could compile), and a subprocess started outside the checkout finds
``spark_kafka_py`` and its compiled ``records._accel`` in that environment, decodes a record
batch, and reports ``records.decoder.IMPLEMENTATION == "accel"``.

The new environment has no pip and no dependencies of its own: the test's pip installs the
wheel into it (``pip --python``, run by the new environment's interpreter), ``--no-deps``, and a
``.pth`` file placed after the install appends this interpreter's site-packages (pyarrow,
crc32c, ...), which come after the wheel's own files on ``sys.path``. Installing PySpark and
pyarrow anew would take minutes; ``venv --system-site-packages`` would see the base
interpreter's packages, not those of a virtual environment running the tests.

The build tools are cached like the test jars (``$SPARK_KAFKA_PY_CACHE/wheel-tools``, with Zig's
cache): the first run downloads them (about 90 MB) and builds Zig's glibc 2.17 stubs (about a
minute). Without them (no network) the test skips, and fails with ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

import spark_kafka_py

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "build_wheel.py"
IN_CI = os.environ.get("CI", "").lower() == "true"
#: The newest manylinux policy accepted: glibc 2.28 (RHEL 8 and its rebuilds).
NEWEST_GLIBC = (2, 28)

#: Run by the new environment's Python, outside the checkout: where the package comes from,
#: which decoder runs, and a record batch through it.
CHECK = """
import importlib.metadata, importlib.util, json
import spark_kafka_py
from spark_kafka_py.records import decode_records, decoder
from spark_kafka_py.records import _accel
from spark_kafka_py.records.encoder import Rows, encode_batch

batch = encode_batch(Rows(keys=[b"k"], values=[b"v"], headers=[[]], timestamps=[1700000000000]))
rows = decode_records(batch, topic="t", partition=0, start_offset=0, end_offset=1).batch
print(json.dumps({
    "package": spark_kafka_py.__file__,
    "accel": _accel.__file__,
    "pyspark_pykafka": importlib.util.find_spec("pyspark_pykafka").origin,
    "implementation": decoder.IMPLEMENTATION,
    "version": spark_kafka_py.__version__,
    "distribution_version": importlib.metadata.version("spark-kafka-py"),
    "values": [v.decode() for v in rows.column("value").to_pylist()],
}))
"""


def _build_wheel_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _skip_or_fail(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: not skipped)", pytrace=False)
    pytest.skip(reason)


#: glibc of the legacy manylinux tags (PEP 513, 571, 599), which auditwheel adds as aliases.
LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _manylinux_glibc(tag: str) -> tuple[int, int]:
    """The glibc version a manylinux platform tag requires (``manylinux_2_17_x86_64``: 2.17)."""
    if match := re.match(r"manylinux_(\d+)_(\d+)_", tag):
        return int(match[1]), int(match[2])
    legacy = tag.split("_", 1)[0]
    assert legacy in LEGACY, f"not a manylinux tag: {tag}"
    return LEGACY[legacy]


def test_manylinux_wheel_installs_without_a_compiler_and_uses_the_accelerated_decoder(
    tmp_path: Path,
) -> None:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"):
        _skip_or_fail(
            f"manylinux wheels are built on Linux x86_64/aarch64, not {platform.machine()}"
        )
    build_wheel = _build_wheel_module()
    try:
        tools = build_wheel.tools_python(sys.executable)
    except (build_wheel.BuildError, OSError) as exc:
        _skip_or_fail(f"the build tools could not be installed (network?): {exc}")

    # the documented command
    dist = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--outdir", str(dist)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, (
        f"build_wheel exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    )
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    sdist = Path(summary["sdist"])
    (built,) = summary["wheels"]
    wheel = Path(built["path"])
    assert sdist.name == f"spark_kafka_py-{spark_kafka_py.__version__}.tar.gz"
    assert wheel.parent == dist and sdist.parent == dist

    # auditwheel's verdict, asked again here, and the tags in the file name
    shown = subprocess.run(
        [str(tools), "-m", "auditwheel", "show", "--json", str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    tag = json.loads(shown.stdout)["overall_tag"]
    assert tag == built["auditwheel_tag"]
    assert tag.startswith("manylinux_") and _manylinux_glibc(tag) <= NEWEST_GLIBC, tag
    platform_tags = wheel.name.removesuffix(".whl").split("-")[-1].split(".")
    assert all(t.startswith("manylinux") for t in platform_tags), wheel.name
    assert all(_manylinux_glibc(t) <= NEWEST_GLIBC for t in platform_tags), wheel.name
    assert f"-cp{sys.version_info[0]}{sys.version_info[1]}-" in wheel.name
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert any(re.fullmatch(r"spark_kafka_py/records/_accel\..*\.so", n) for n in names), names
    assert "spark_kafka_py/records/_accel.pyx" not in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names

    # a fresh environment, nothing on PATH but its own bin: no C compiler
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bin_dir = venv / "bin"
    for compiler in ("cc", "gcc", "clang", "zig"):
        assert shutil.which(compiler, path=str(bin_dir)) is None
    env = {"PATH": str(bin_dir), "HOME": os.environ.get("HOME", str(tmp_path))}
    python = bin_dir / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    install = subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--only-binary", ":all:", str(wheel)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "zz_test_dependencies.pth").write_text("".join(f"{p}\n" for p in parents))

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    check = subprocess.run(
        [str(python), "-c", CHECK],
        env=env,
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    found = json.loads(check.stdout.strip().splitlines()[-1])
    for key in ("package", "accel", "pyspark_pykafka"):
        assert Path(found[key]).is_relative_to(purelib), (key, found[key], purelib)
    assert found["implementation"] == "accel", found
    assert found["values"] == ["v"], found
    # one version, in the package and in the distribution's metadata
    assert found["version"] == found["distribution_version"] == spark_kafka_py.__version__
