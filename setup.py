"""Build glue for the optional accelerated record decoder (``spark_kafka_py.records._accel``),
Avro decoder (``spark_kafka_py.formats.avro._accel``), Avro encoder
(``spark_kafka_py.formats.avro._encode_accel``), Protobuf decoder
(``spark_kafka_py.formats.protobuf._accel``), Protobuf encoder
(``spark_kafka_py.formats.protobuf._encode_accel``) and JSON decoder
(``spark_kafka_py.formats.json._accel``).

Everything else is in ``pyproject.toml``. The extension is optional: when Cython is missing,
or compiling fails (no C compiler), the build goes on without it and the package runs on the
pure-Python decoder (``spark_kafka_py.records._pure``), with a warning in the build log.
``SPARK_KAFKA_PY_NO_EXT=1`` skips the extension on purpose; ``SPARK_KAFKA_PY_REQUIRE_EXT=1``
makes a missing Cython or a failed compile an error instead (``tools/build_wheel.py`` sets it: a
published wheel must carry the extension).

Editable installs (``pip install -e . --config-settings editable_mode=compat``) build the
extension in place, next to ``_accel.pyx``.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_PYX = "spark_kafka_py/records/_accel.pyx"
#: The accelerated Avro decoder (``spark_kafka_py.formats.avro._accel``), optional the same way:
#: without it ``AvroDecoder`` runs its pure-Python plan.
_AVRO_PYX = "spark_kafka_py/formats/avro/_accel.pyx"
#: The accelerated Avro encoder (``spark_kafka_py.formats.avro._encode_accel``), optional the
#: same way: without it ``AvroEncoder`` runs its pure-Python plan.
_AVRO_ENCODE_PYX = "spark_kafka_py/formats/avro/_encode_accel.pyx"
#: The accelerated Protobuf decoder (``spark_kafka_py.formats.protobuf._accel``), optional the
#: same way: without it ``ProtobufDecoder`` parses with upb and converts in Python.
_PROTOBUF_PYX = "spark_kafka_py/formats/protobuf/_accel.pyx"
#: The accelerated Protobuf encoder (``spark_kafka_py.formats.protobuf._encode_accel``),
#: optional the same way: without it ``ProtobufEncoder`` runs its pure-Python plan.
_PROTOBUF_ENCODE_PYX = "spark_kafka_py/formats/protobuf/_encode_accel.pyx"
#: The compiled JSON decoder (``spark_kafka_py.formats.json._accel``), optional the same way:
#: without it ``JsonDecoder`` runs pyarrow's reader and its per-row path.
_JSON_PYX = "spark_kafka_py/formats/json/_accel.pyx"
# The formats' extensions cimport the inline helpers of ``spark_kafka_py/_cutil.pxd`` (found
# from the checkout's root, where this runs; compiled into each of them, not a module itself);
# the readers include ``spark_kafka_py/_growbuf.pxi`` (their output buffer) the same way.


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


#: ``SPARK_KAFKA_PY_REQUIRE_EXT=1``: the build fails instead of warning and going on without it.
REQUIRE_EXT = _flag("SPARK_KAFKA_PY_REQUIRE_EXT")


class ExtensionRequiredError(RuntimeError):
    """The extension was not built and ``SPARK_KAFKA_PY_REQUIRE_EXT`` is set."""


class OptionalBuildExt(build_ext):
    """``build_ext`` that warns instead of failing: the extension is an accelerator only."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            self._skip(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._skip(exc)

    @staticmethod
    def _skip(exc: Exception) -> None:
        if isinstance(exc, ExtensionRequiredError):
            raise exc
        if REQUIRE_EXT:
            raise ExtensionRequiredError(
                f"spark-kafka-py: the accelerated record decoder was not built ({exc}) and "
                "SPARK_KAFKA_PY_REQUIRE_EXT is set"
            ) from exc
        print(
            f"WARNING: spark-kafka-py: the accelerated record decoder was not built ({exc}); "
            "the pure-Python decoder will be used",
            file=sys.stderr,
        )


def _extensions() -> list[Extension]:
    if _flag("SPARK_KAFKA_PY_NO_EXT"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError as exc:
        if REQUIRE_EXT:
            raise ExtensionRequiredError(
                "spark-kafka-py: Cython not found and SPARK_KAFKA_PY_REQUIRE_EXT is set"
            ) from exc
        print(
            "WARNING: spark-kafka-py: Cython not found, building without the "
            "accelerated record decoder",
            file=sys.stderr,
        )
        return []
    ext = Extension(
        "spark_kafka_py.records._accel",
        [_PYX],
        extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    )
    avro_ext = Extension(
        "spark_kafka_py.formats.avro._accel",
        [_AVRO_PYX],
        extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    )
    avro_encode_ext = Extension(
        "spark_kafka_py.formats.avro._encode_accel",
        [_AVRO_ENCODE_PYX],
        extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    )
    protobuf_ext = Extension(
        "spark_kafka_py.formats.protobuf._accel",
        [_PROTOBUF_PYX],
        extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    )
    protobuf_encode_ext = Extension(
        "spark_kafka_py.formats.protobuf._encode_accel",
        [_PROTOBUF_ENCODE_PYX],
        extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    )
    json_ext = Extension(
        "spark_kafka_py.formats.json._accel",
        [_JSON_PYX],
        extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    )
    try:
        return cythonize(
            [ext, avro_ext, avro_encode_ext, protobuf_ext, protobuf_encode_ext, json_ext],
            language_level=3,
            quiet=True,
        )
    except Exception as exc:
        OptionalBuildExt._skip(exc)
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
