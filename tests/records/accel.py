"""The accelerated decoder and encoder for the differential tests: required in CI (which builds
them, so a missing one is a failure there, never a skip), skipped elsewhere when not built."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI", "").lower() == "true":
    import spark_kafka_py.records._accel as accel
else:
    accel = pytest.importorskip(
        "spark_kafka_py.records._accel",
        reason="the Cython extension is not built (no compiler?): pure path only",
    )

decode_records_accel = accel.decode_records_accel
encode_records_section_accel = accel.encode_records_section_accel

__all__ = ["accel", "decode_records_accel", "encode_records_section_accel"]
