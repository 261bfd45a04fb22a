"""notebooks/batch_read.ipynb runs end to end against a real broker (nbclient, a real kernel).

The notebook writes its sample events with Kafka's console producer and reads them with
``format("pykafka")``; its printed summary is checked against Kafka's own offset tool
(GetOffsetShell), not against our code. Its Avro section writes the events through a real
registry (Apicurio); the registered schema is checked by asking the registry, and the records
by fastavro over the framed values Kafka's Java consumer reads.
"""

from __future__ import annotations

import io
import json
import struct
import uuid
from collections import Counter
from pathlib import Path

import fastavro
import nbformat
import pytest
from nbclient import NotebookClient

from spark_kafka_py.schema_registry.client import SchemaRegistryClient
from spark_kafka_py.schema_registry.settings import parse_settings
from spark_kafka_py.testing.tools import get_offsets, read_all

pytestmark = pytest.mark.integration

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "batch_read.ipynb"


def test_batch_read_notebook_runs_end_to_end(
    kafka_bootstrap: str, schema_registry: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    topic = f"notebook-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", kafka_bootstrap)
    monkeypatch.setenv("SCHEMA_REGISTRY_URL", schema_registry)
    monkeypatch.setenv("NOTEBOOK_TOPIC", topic)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    outputs = [
        out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    ]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "wrote 600 events" in text
    summary = json.loads(text.split("SUMMARY ", 1)[1].splitlines()[0])

    latest = get_offsets(kafka_bootstrap, topic, "latest")
    assert summary["records"] == 600 == sum(latest.values())
    assert summary["partitions"] == {str(p): [0, end] for p, end in latest.items() if end}
    assert summary["records_in_plot"] == 600
    assert 30 <= summary["minutes"] <= 32  # 600 events, at most 30 s apart, span 30 minutes
    # the plots were drawn
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2

    # filter pushdown: the scan fetched exactly the matching records, except for the filter
    # Spark cannot push (a cast), which fetched the whole topic
    pushdown = json.loads(text.split("PUSHDOWN ", 1)[1].splitlines()[0])
    assert pushdown["topic_records"] == 600
    queries = pushdown["queries"]
    last_10 = queries["last 10 minutes"]  # the quiet last 10 minutes: one event every 30 s
    assert 1 <= last_10["matching"] == last_10["fetched"] <= 20
    assert queries["partition 1"] == {"matching": latest[1], "fetched": latest[1]}
    window = min(50, max(0, latest[0] - 10))
    assert queries["partition 0, offsets 10-59"] == {"matching": window, "fetched": window}
    not_pushed = queries["user-7 (not pushed)"]
    assert 0 < not_pushed["matching"] < 600 == not_pushed["fetched"]

    # Avro through the registry: 600 records, framed with the id the registry holds under the
    # subject for the derived schema of struct<user, action, amount>
    avro = json.loads(text.split("AVRO ", 1)[1].splitlines()[0])
    assert avro["topic"] == f"{topic}-avro" and avro["records"] == 600 and avro["same_as_json"]
    registry = SchemaRegistryClient(parse_settings({"schema.registry.url": schema_registry}))
    latest = registry.latest(f"{topic}-avro-value")
    assert latest.schema_id == avro["schema_id"]
    assert json.loads(latest.schema.schema_str) == {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [
            {"name": "user", "type": ["string", "null"]},
            {"name": "action", "type": ["string", "null"]},
            {"name": "amount", "type": ["double", "null"]},
        ],
    }
    values = [r.value for r in read_all(kafka_bootstrap, avro["topic"])]  # Java's consumer
    assert len(values) == 600
    assert {v[:5] for v in values} == {b"\x00" + struct.pack(">I", avro["schema_id"])}
    parsed = fastavro.parse_schema(json.loads(latest.schema.schema_str))
    actions = Counter(
        fastavro.schemaless_reader(io.BytesIO(v[5:]), parsed)["action"] for v in values
    )
    assert sum(actions.values()) == 600 and set(actions) == {"view", "click", "buy"}
