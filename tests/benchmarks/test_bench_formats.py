"""``spark-kafka-py bench formats`` end to end at a tiny scale (2,000 records per format).

A smoke test against the shared real broker, registry and Spark: both formats run, every
route that can run reports a time, the routes (ours through the registry, the JVM's
``from_json`` over the stripped framing, confluent-kafka's deserializers) returned the same rows
on the checked records (the benchmark exits otherwise), and the JVM Protobuf route is reported
as not run with its reason.
Timings are never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import formats

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_documents_are_the_avro_benchmarks_records() -> None:
    # the JSON documents and Protobuf messages carry the same records, read back by peers
    from google.protobuf import message_factory

    doc = json.loads(formats.json_values(1)[0])
    _, descriptor, _ = formats._proto_schema()
    msg = message_factory.GetMessageClass(descriptor).FromString(formats.protobuf_values(1)[0])
    assert doc["id"] == msg.id and doc["name"] == msg.name and doc["seq"] == msg.seq
    assert doc["origin"] == {"zone": msg.origin.zone, "host": msg.origin.host}
    assert round(doc["amount"] * 100) == msg.amount
    assert set(doc) == {f.name for f in descriptor.fields}
    # the JSON Schema registered for the topic names the same fields
    assert list(formats.JSON_SCHEMA["properties"]) == list(doc)


def test_framing_is_confluents() -> None:
    # magic byte 0, the id big-endian, and for Protobuf the message indexes [0] (bench.Event
    # is the file's first message) as the single byte 0
    assert formats.frame(258, b"{}") == b"\x00\x00\x00\x01\x02{}"
    assert formats.frame(7, b"\x08\x01", protobuf=True) == b"\x00\x00\x00\x00\x07\x00\x08\x01"
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet.FromString(formats._proto_schema()[2]).file
    bench = next(f for f in files if f.name == "bench.proto")
    assert [m.name for m in bench.message_type] == ["Event", "Origin"]


@pytest.mark.long  # the long-run command (README), not CI's: see pyproject's marker
def test_bench_formats_tiny(kafka_bootstrap: str, schema_registry: str, tmp_path: Path) -> None:
    report = tmp_path / "formats.json"
    cmd = [
        sys.executable, "-m", "spark_kafka_py.cli", "bench", "formats",
        "--records", "2000", "--repeat", "1", "--format", "both",
        "--bootstrap-servers", kafka_bootstrap, "--schema-registry-url", schema_registry,
        "--json", str(report),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-5000:]
    data = json.loads(report.read_text())
    by_format = {f["format"]: f for f in data["formats"]}
    assert set(by_format) == {"json", "protobuf"}
    js = by_format["json"]
    assert [r["system"] for r in js["spark"]] == [
        formats.JSON_OURS,
        formats.JSON_JVM,
        formats.JSON_PYTHON,
        formats.JSON_LIMIT,
    ]
    assert js["checked"] == 2 * formats.CHECKED_PER_PARTITION
    pb = by_format["protobuf"]
    assert formats.PB_PYTHON in [r["system"] for r in pb["spark"]]
    assert pb["not_run"][formats.PB_JVM] == formats.PB_JVM_NOT_RUN
    # ours (valueFormat=protobuf) ran, and returned the Python route's rows
    assert formats.PB_OURS not in pb["not_run"]
    assert [r["system"] for r in pb["spark"]] == [
        formats.PB_OURS,
        formats.PB_PYTHON,
        formats.PB_LIMIT,
    ]
    assert pb["checked"] == 2 * formats.CHECKED_PER_PARTITION
    for f in (js, pb):
        assert all(r["records"] == 2000 and r["seconds"] > 0 for r in f["spark"])
        assert all(r["seconds"] > 0 for r in f["decode"])
    assert [r["system"] for r in js["decode"]] == [
        formats.DECODE_JSON_OURS,  # the compiled path: CI builds the extensions
        formats.DECODE_JSON_PYARROW,
        formats.DECODE_JSON_CONFLUENT,
        formats.DECODE_JSON_VALIDATE,
        formats.DECODE_JSON_LOADS,
    ]
    assert [r["system"] for r in pb["decode"]] == [
        formats.DECODE_PB_OURS,
        formats.DECODE_PB_CONFLUENT,
        formats.DECODE_PB_FROMSTRING,
    ]
    assert "| kafka + from_protobuf (JVM) | - | - | not run:" in out.stdout
