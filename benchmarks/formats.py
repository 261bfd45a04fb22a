"""JSON and Protobuf values read as typed columns: ours against the JVM and Python routes.

``spark-kafka-py bench formats`` (also ``python3 -m benchmarks.formats``). For each format
(``--format json|protobuf|both``), one topic of ``--records`` values (default 5,000,000; a
pool of 10,000 distinct payloads cycled) of the same 10-field shape as the Avro benchmark
(:data:`benchmarks.avro.SCHEMA`, values from :func:`benchmarks.avro.sample_records`) is written
by Kafka's Java producer to 2 partitions of one broker (``--bootstrap-servers``, else a local
one), in the schema registry's framing: each format's schema is registered under
``<topic>-value`` in one registry (``--schema-registry-url``, else a local Apicurio) and every
value carries its id (Confluent's wire format: magic byte ``0``, the 4-byte id, for Protobuf the
message indexes, here the single byte ``0``, then the payload). Then local[2] reads each route
into the ``noop`` sink, each route in a Spark session and JVM of its own
(:func:`benchmarks.harness.spark_in_own_jvm`: one route's JIT-compiled code, heap and Python
workers never serve another's, as each would be a job of its own; in one shared session the
routes timed after others ran up to 2x slower): ``--warmup`` untimed reads (default 1) and
a count (checked), then ``--repeat`` timed reads; records/s of the medians and the ratio
ours / route (> 1: ours faster). Before timing, every route that runs is collected on the
first 500 records of each partition and compared row for row with ours.

JSON (:data:`JSON_SCHEMA`, a JSON Schema; read as :data:`JSON_DDL`): ``id``, ``seq``
(``integer``: ``BIGINT``), ``score`` (``number``: ``DOUBLE``), ``name`` (``string``),
``origin`` (an object of ``zone``, ``host``), ``tags`` (an array of integers), ``note``
(``["string", "null"]``, every third null), ``at`` (``format: date-time``: ``TIMESTAMP``; ISO
8601 text with milliseconds and ``Z``), ``amount`` (the Avro decimal(10, 2) as a JSON number:
``DOUBLE``), ``ok`` (``boolean``); one compact document per value (``json.dumps``), about 200
bytes.

- ours: ``format("pykafka")``, ``valueFormat=json`` and ``schema.registry.url``: the struct
  from the subject's JSON Schema, the framing stripped by the source;
- the JVM route: ``format("kafka")`` + ``from_json(CAST(substring(value, 6) AS STRING),
  JSON_DDL)`` (the framing stripped in SQL, as Spark users do without a registry-aware
  reader);
- the Python route: ``format("kafka")`` + ``mapInArrow`` with confluent-kafka's
  ``JSONDeserializer`` per value (its registry client on the same registry, the schema
  fetched by the id in the framing), ``at`` by ``datetime.fromisoformat``, then ``pa.array``
  of the struct. The deserializer runs with ``validate=False``: its default validates every
  document against the JSON Schema with ``jsonschema``, about 8x slower per document (the
  decode-alone table has both), which ours does not do either (``from_json`` does not
  validate); the ratio against the route without validation is the harder one.

Protobuf (:data:`PROTO`, message ``bench.Event``, registered as ``.proto`` text; payloads
serialized by the protobuf package, about 75 bytes plus 6 of framing): the same fields,
``note`` a proto3 ``optional string``, ``origin`` a message, ``tags`` ``repeated int32``,
``at`` a ``google.protobuf.Timestamp`` (milliseconds), ``amount`` the decimal's unscaled value
(cents, ``int64``: Protobuf has no decimal).

- ours: ``format("pykafka")``, ``valueFormat=protobuf``, ``schema.registry.url`` and
  ``messageName=bench.Event``: the reader schema from the registry (compiled from its
  ``.proto`` text), the framing and message indexes checked per record; reported as not run,
  with the reason, when this checkout's source has no ``valueFormat=protobuf`` yet;
- the JVM route: ``format("kafka")`` + spark-protobuf's ``from_protobuf(substring(value, 7),
  "bench.Event", binaryDescriptorSet=...)`` (the framing stripped in SQL, the descriptor set
  the one ours compiles), when :func:`~spark_kafka_py.testing.jars.spark_protobuf_jars`
  resolves: from Maven, or the jars ``$SPARK_KAFKA_PY_SPARK_PROTOBUF_JARS`` names (Maven
  Central does not serve spark-protobuf to every machine); else the row says why it did not
  run (no number is made up);
- the Python route: ``format("kafka")`` + ``mapInArrow`` with confluent-kafka's
  ``ProtobufDeserializer`` per value (the framing and message indexes read by it, the message
  parsed by the protobuf package) and the message's fields read into a dict as spark-protobuf
  maps them (a proto3 field without presence at its default value is null; ``Timestamp`` to
  microseconds), then ``pa.array`` of the struct. (This hand-written reading is faster than
  ``MessageToDict``, which writes 64-bit integers and timestamps as strings to be converted
  again; so the ratio against it is the harder one.)

And per format the limit of a Python data source for the format's columns
(:mod:`benchmarks.limit_source` with ``valueFormat``): the decoded struct in pre-built Arrow
batches of the row counts ours yields for the topic, no Kafka, no decoding: what PySpark and
Spark cost to take those columns into the JVM, the most any Python source (ours, or any
``mapInArrow``) can deliver; its row gives ours / limit.

Also, per format, the decoders alone (no Spark, no Kafka) on the same values (at most
200,000): ours (:class:`~spark_kafka_py.formats.json.decode.JsonDecoder` over a ``binary``
Arrow column of the documents; :class:`~spark_kafka_py.formats.protobuf.decoder.ProtobufDecoder`
over the messages) against confluent-kafka's deserializers over the framed values (a
``mock://`` registry client in process, so no network) and the hand-written per-record routes
(Python's ``json.loads``; the protobuf package's ``FromString``), arrays checked equal on the
first 2,000 values first.

Usage::

    python3 -m benchmarks.formats [--format json|protobuf|both] [--records 5000000]
        [--repeat 1] [--bootstrap-servers HOST:PORT] [--schema-registry-url URL] [--json FILE]
    spark-kafka-py bench formats [--format json] [--records 500000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa

from benchmarks.avro import AvroResult as FormatResult
from benchmarks.avro import format_avro_table, sample_records
from benchmarks.harness import RouteBuilder, time_reads_in_own_jvms

__all__ = [
    "JSON_DDL",
    "PROTO",
    "FormatReport",
    "FormatResult",
    "bench_formats",
    "bench_json_decode",
    "bench_protobuf_decode",
    "format_report",
    "json_values",
    "main",
    "protobuf_values",
    "run",
]

#: ``--records`` when not given.
DEFAULT_RECORDS = 5_000_000
#: Values of the decode-alone tables at most.
DECODE_RECORDS = 200_000
#: Distinct payloads, cycled over the topic.
POOL = 10_000
#: Partitions of each topic.
PARTITIONS = 2
#: Records per partition collected from every route and compared before timing.
CHECKED_PER_PARTITION = 500
#: Values decoded and compared before the decode-alone timing.
CHECKED = 2_000
#: Records per producer JVM call.
_PRODUCE_CHUNK = 500_000

#: The JSON documents' Spark schema (``valueSchema`` and ``from_json``'s schema).
JSON_DDL = (
    "id BIGINT, seq BIGINT, score DOUBLE, name STRING, origin STRUCT<zone: BIGINT, host: STRING>, "
    "tags ARRAY<BIGINT>, note STRING, at TIMESTAMP, amount DOUBLE, ok BOOLEAN"
)
#: The JSON documents' JSON Schema (draft-07), registered for the topic; ours reads it as
#: :data:`JSON_DDL` (docs/formats.md, "Types: JSON Schema to Spark").
JSON_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Event",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "seq": {"type": "integer"},
        "score": {"type": "number"},
        "name": {"type": "string"},
        "origin": {
            "type": "object",
            "properties": {"zone": {"type": "integer"}, "host": {"type": "string"}},
        },
        "tags": {"type": "array", "items": {"type": "integer"}},
        "note": {"type": ["string", "null"]},
        "at": {"type": "string", "format": "date-time"},
        "amount": {"type": "number"},
        "ok": {"type": "boolean"},
    },
}
#: :data:`JSON_DDL` as Spark's JSON (``StructType.fromDDL(JSON_DDL).jsonValue()``), for the
#: decoder alone without a Spark session.
JSON_SPARK_TYPE: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "seq", "type": "long", "nullable": True, "metadata": {}},
        {"name": "score", "type": "double", "nullable": True, "metadata": {}},
        {"name": "name", "type": "string", "nullable": True, "metadata": {}},
        {
            "name": "origin",
            "type": {
                "type": "struct",
                "fields": [
                    {"name": "zone", "type": "long", "nullable": True, "metadata": {}},
                    {"name": "host", "type": "string", "nullable": True, "metadata": {}},
                ],
            },
            "nullable": True,
            "metadata": {},
        },
        {
            "name": "tags",
            "type": {"type": "array", "elementType": "long", "containsNull": True},
            "nullable": True,
            "metadata": {},
        },
        {"name": "note", "type": "string", "nullable": True, "metadata": {}},
        {"name": "at", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "amount", "type": "double", "nullable": True, "metadata": {}},
        {"name": "ok", "type": "boolean", "nullable": True, "metadata": {}},
    ],
}

#: The Protobuf schema (the same ten fields). ``Event`` comes first, so its message indexes in
#: the framing are ``[0]``, the single byte ``0`` (Confluent's short form for the first message).
PROTO = """syntax = "proto3";
package bench;

import "google/protobuf/timestamp.proto";

message Event {
  int32 id = 1;
  int64 seq = 2;
  double score = 3;
  string name = 4;
  Origin origin = 5;
  repeated int32 tags = 6;
  optional string note = 7;
  google.protobuf.Timestamp at = 8;
  int64 amount = 9;  // decimal(10, 2) as its unscaled value (cents)
  bool ok = 10;
}

message Origin {
  int32 zone = 1;
  string host = 2;
}
"""
#: The message read.
MESSAGE = "bench.Event"

#: Row names.
JSON_OURS = "pykafka valueFormat=json"
JSON_JVM = "kafka + from_json (JVM)"
JSON_PYTHON = "kafka + mapInArrow(confluent JSONDeserializer)"
PB_OURS = "pykafka valueFormat=protobuf"
PB_JVM = "kafka + from_protobuf (JVM)"
PB_PYTHON = "kafka + mapInArrow(confluent ProtobufDeserializer)"
JSON_LIMIT = "limit: pre-built Arrow batches of the struct (json)"
PB_LIMIT = "limit: pre-built Arrow batches of the struct (protobuf)"
#: Why the JVM Protobuf route is not run.
PB_JVM_NOT_RUN = "not run: spark-protobuf's jar could not be resolved"


# ------------------------------------------------------------------------------------ values


def _iso_millis(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def json_values(records: int, seed: int = 26) -> list[bytes]:
    """``records`` compact JSON documents of :data:`JSON_DDL` (from
    :func:`benchmarks.avro.sample_records`, the same for a seed)."""
    out = []
    for r in sample_records(records, seed):
        doc = {**r, "at": _iso_millis(r["at"]), "amount": float(r["amount"])}
        out.append(json.dumps(doc, separators=(",", ":")).encode())
    return out


def _proto_schema() -> tuple[Any, Any, bytes]:
    """(the parsed schema, the ``bench.Event`` descriptor, the FileDescriptorSet bytes)."""
    from spark_kafka_py.formats.protobuf.descriptors import compile_proto, parse_descriptor_set

    data = compile_proto(PROTO, name="bench.proto")
    schema = parse_descriptor_set(data, main="bench.proto")
    return schema, schema.message(MESSAGE), data


def protobuf_values(records: int, seed: int = 26) -> list[bytes]:
    """``records`` serialized ``bench.Event`` messages (the protobuf package's
    ``SerializeToString``) of the same records as :func:`json_values`."""
    from google.protobuf import message_factory  # type: ignore[import-untyped]

    _, descriptor, _ = _proto_schema()
    cls = message_factory.GetMessageClass(descriptor)
    out = []
    for r in sample_records(records, seed):
        m = cls()
        m.id = r["id"]
        m.seq = r["seq"]
        m.score = r["score"]
        m.name = r["name"]
        m.origin.zone = r["origin"]["zone"]
        m.origin.host = r["origin"]["host"]
        m.tags.extend(r["tags"])
        if r["note"] is not None:
            m.note = r["note"]
        ms = int(r["at"].timestamp() * 1000)
        m.at.seconds, m.at.nanos = divmod(ms, 1000)
        m.at.nanos *= 1_000_000
        m.amount = int(r["amount"].scaleb(2))
        m.ok = r["ok"]
        out.append(m.SerializeToString())
    return out


# ------------------------------------------------------------------------ the Python routes


def frame(schema_id: int, payload: bytes, *, protobuf: bool = False) -> bytes:
    """``payload`` in the registry's framing (Confluent's wire format): magic byte ``0``, the
    4-byte big-endian ``schema_id``, for Protobuf the message indexes of the first message
    (the single byte ``0``), then ``payload``."""
    from spark_kafka_py.formats import framing

    return framing.build(schema_id, b"\x00" + payload if protobuf else payload)


def json_python_route(arrow_type: pa.DataType) -> Callable[[Sequence[bytes | None]], pa.Array]:
    """The hand-written per-record Python route of JSON over plain documents: ``json.loads``
    per value, ``at`` parsed by ``datetime.fromisoformat``, then ``pa.array(rows,
    arrow_type)``."""

    def run(values: Sequence[bytes | None]) -> pa.Array:
        loads = json.loads
        iso = datetime.fromisoformat
        rows: list[Any] = []
        for v in values:
            if v is None:
                rows.append(None)
                continue
            d = loads(v)
            at = d.get("at")
            if at is not None:
                d["at"] = iso(at)
            rows.append(d)
        return pa.array(rows, type=arrow_type)

    return run


def json_confluent_route(
    client: Any, arrow_type: pa.DataType, *, validate: bool = False
) -> Callable[[Sequence[bytes | None]], pa.Array]:
    """The Python route of JSON over framed values: confluent-kafka's ``JSONDeserializer``
    per value (``client``, a confluent-kafka ``SchemaRegistryClient``, gives the schema of the
    framing's id; ``validate``: the deserializer's option of that name, checking each
    document against it), ``at`` parsed by ``datetime.fromisoformat``, then ``pa.array(rows,
    arrow_type)``."""
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserialize = JSONDeserializer(None, schema_registry_client=client, conf={"validate": validate})
    ctx = SerializationContext("bench", MessageField.VALUE)

    def run(values: Sequence[bytes | None]) -> pa.Array:
        iso = datetime.fromisoformat
        rows: list[Any] = []
        for v in values:
            if v is None:
                rows.append(None)
                continue
            d = deserialize(v, ctx)
            at = d.get("at")
            if at is not None:
                d["at"] = iso(at)
            rows.append(d)
        return pa.array(rows, type=arrow_type)

    return run


def _message_class(descriptor_set: bytes) -> Any:
    """The protobuf package's class of ``bench.Event`` from the compiled descriptor set."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    fds = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(MESSAGE))


def _event_row(m: Any) -> dict[str, Any]:
    """A parsed ``bench.Event`` as spark-protobuf maps it: a proto3 field without presence at
    its default value is null, ``note`` by its presence, an empty ``tags`` an empty array,
    ``at`` as microseconds."""
    origin = None
    if m.HasField("origin"):
        o = m.origin
        origin = {"zone": o.zone or None, "host": o.host or None}
    at = None
    if m.HasField("at"):
        at = m.at.seconds * 1_000_000 + m.at.nanos // 1000
    return {
        "id": m.id or None,
        "seq": m.seq or None,
        "score": m.score or None,
        "name": m.name or None,
        "origin": origin,
        "tags": list(m.tags),
        "note": m.note if m.HasField("note") else None,
        "at": at,
        "amount": m.amount or None,
        "ok": m.ok or None,
    }


def protobuf_python_route(
    descriptor_set: bytes, arrow_type: pa.DataType
) -> Callable[[Sequence[bytes | None]], pa.Array]:
    """The hand-written per-record Python route of Protobuf over plain messages: the protobuf
    package's ``FromString`` per value, the fields read as :func:`_event_row`, then
    ``pa.array(rows, arrow_type)``."""
    parse = _message_class(descriptor_set).FromString

    def run(values: Sequence[bytes | None]) -> pa.Array:
        return pa.array(
            [None if v is None else _event_row(parse(v)) for v in values], type=arrow_type
        )

    return run


def protobuf_confluent_route(
    descriptor_set: bytes, arrow_type: pa.DataType
) -> Callable[[Sequence[bytes | None]], pa.Array]:
    """The Python route of Protobuf over framed values: confluent-kafka's
    ``ProtobufDeserializer`` of ``bench.Event`` per value (it reads the framing and the
    message indexes and parses the message; no registry needed), the fields read as
    :func:`_event_row`, then ``pa.array(rows, arrow_type)``."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserialize = ProtobufDeserializer(
        _message_class(descriptor_set), {"use.deprecated.format": False}
    )
    ctx = SerializationContext("bench", MessageField.VALUE)

    def run(values: Sequence[bytes | None]) -> pa.Array:
        return pa.array(
            [None if v is None else _event_row(deserialize(v, ctx)) for v in values],
            type=arrow_type,
        )

    return run


# ---------------------------------------------------------------------- decode alone


def _time(
    systems: list[tuple[str, Callable[[Any], pa.Array]]],
    inputs: dict[str, Any],
    records: int,
    repeat: int,
    log: Callable[[str], None],
) -> list[FormatResult]:
    results = []
    for name, run in systems:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = run(inputs[name])
            times.append(time.perf_counter() - t0)
            if len(out) != records:
                raise SystemExit(f"{name}: {len(out)} rows, expected {records}")
            del out
        result = FormatResult(name, records, statistics.median(times), times)
        log(f"decode {name}: {result.ns_per_record:,.0f} ns/record")
        results.append(result)
    return results


#: Row names of the decode-alone tables.
DECODE_JSON_OURS = "pykafka JsonDecoder (compiled)"
DECODE_JSON_PYARROW = "pykafka JsonDecoder (pyarrow reader)"
DECODE_JSON_CONFLUENT = "confluent JSONDeserializer (validate=False)"
DECODE_JSON_VALIDATE = "confluent JSONDeserializer (validate=True, its default)"
DECODE_JSON_LOADS = "json.loads + pa.array"
DECODE_PB_OURS = "pykafka ProtobufDecoder"
DECODE_PB_CONFLUENT = "confluent ProtobufDeserializer"
DECODE_PB_FROMSTRING = "FromString + pa.array"


def _mock_registry(name: str, schema: str, schema_type: str) -> tuple[Any, int]:
    """confluent-kafka's in-process registry client (``mock://``) holding ``schema`` under
    ``<name>-value``, and the id it gave."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient.new_client({"url": f"mock://{name}"})
    return client, client.register_schema(f"{name}-value", Schema(schema, schema_type))


def _checked(
    name: str,
    systems: list[tuple[str, Callable[[Any], pa.Array]]],
    inputs: dict[str, Any],
) -> None:
    """Every system's array on the first :data:`CHECKED` inputs equals the first system's."""
    first, run = systems[0]
    expected = run(inputs[first][:CHECKED])
    for other, run in systems[1:]:
        if not run(inputs[other][:CHECKED]).equals(expected):
            raise SystemExit(f"{name} decode alone: {other} and {first} differ")


def bench_json_decode(
    records: int, repeat: int = 1, log: Callable[[str], None] = lambda m: None
) -> list[FormatResult]:
    """The JSON decoders alone over the same ``records`` documents: ours
    (``JsonDecoder.decode`` of a ``binary`` Arrow column built before the clock starts: its
    compiled path, ``formats/json/_accel.pyx``, when it is built, and pyarrow's reader,
    ``compiled=False``), confluent-kafka's ``JSONDeserializer`` over the framed documents
    without and with its validation (:func:`json_confluent_route`, an in-process ``mock://``
    registry), and the hand-written route (:func:`json_python_route` over the list of bytes).

    Raises:
        SystemExit: the arrays differ on the first :data:`CHECKED` values, or ours did not
            decode them by the path its row names.
    """
    from spark_kafka_py.formats.json.decode import JsonDecoder

    values = json_values(records)
    decoder = JsonDecoder(JSON_SPARK_TYPE, mode="FAILFAST")
    pyarrow_reader = JsonDecoder(JSON_SPARK_TYPE, mode="FAILFAST", compiled=False)
    client, schema_id = _mock_registry("bench-json", json.dumps(JSON_SCHEMA), "JSON")
    framed = [frame(schema_id, v) for v in values]
    head = pa.array(values[:CHECKED], pa.binary())
    for d in (decoder, pyarrow_reader):
        d.decode(head)
    if decoder.compiled and (decoder.compiled_batches, decoder.declined_rows) != (1, 0):
        raise SystemExit("JSON decode alone: the compiled path did not read the documents")
    if pyarrow_reader.fast_batches != 1:
        raise SystemExit("JSON decode alone: pyarrow's reader did not read the documents")
    ours = DECODE_JSON_OURS if decoder.compiled else DECODE_JSON_PYARROW
    systems: list[tuple[str, Callable[[Any], pa.Array]]] = [
        (ours, decoder.decode),
        (DECODE_JSON_CONFLUENT, json_confluent_route(client, decoder.arrow_type)),
        (DECODE_JSON_VALIDATE, json_confluent_route(client, decoder.arrow_type, validate=True)),
        (DECODE_JSON_LOADS, json_python_route(decoder.arrow_type)),
    ]
    if decoder.compiled:
        systems.insert(1, (DECODE_JSON_PYARROW, pyarrow_reader.decode))
    column = pa.array(values, pa.binary())
    inputs = {
        ours: column,
        DECODE_JSON_PYARROW: column,
        DECODE_JSON_CONFLUENT: framed,
        DECODE_JSON_VALIDATE: framed,
        DECODE_JSON_LOADS: values,
    }
    _checked("JSON", systems, inputs)
    return _time(systems, inputs, records, repeat, log)


def bench_protobuf_decode(
    records: int, repeat: int = 1, log: Callable[[str], None] = lambda m: None
) -> list[FormatResult]:
    """The Protobuf decoders alone over the same ``records`` messages: ours
    (``ProtobufDecoder.decode`` of the messages), confluent-kafka's ``ProtobufDeserializer``
    over the framed messages (:func:`protobuf_confluent_route`) and the hand-written route
    (:func:`protobuf_python_route`).

    Raises:
        SystemExit: the arrays differ on the first :data:`CHECKED` values.
    """
    from spark_kafka_py.formats.protobuf.decoder import ProtobufDecoder

    schema, descriptor, data = _proto_schema()
    values = protobuf_values(records)
    framed = [frame(1, v, protobuf=True) for v in values]
    decoder = ProtobufDecoder(schema, descriptor)
    systems: list[tuple[str, Callable[[Any], pa.Array]]] = [
        (DECODE_PB_OURS, decoder.decode),
        (DECODE_PB_CONFLUENT, protobuf_confluent_route(data, decoder.arrow_type)),
        (DECODE_PB_FROMSTRING, protobuf_python_route(data, decoder.arrow_type)),
    ]
    inputs = {DECODE_PB_OURS: values, DECODE_PB_CONFLUENT: framed, DECODE_PB_FROMSTRING: values}
    _checked("Protobuf", systems, inputs)
    return _time(systems, inputs, records, repeat, log)


# ------------------------------------------------------------------------------- Spark


@dataclass
class FormatReport:
    """What one format measured.

    Attributes:
        format: ``json`` or ``protobuf``.
        records: records in the topic.
        results: the routes read (ours first when it ran): the median read into noop.
        not_run: routes not run, each with the reason (a row of the table, no number).
        decode: the decode-alone results (ours first).
        checked: records compared across the routes before timing.
        produce_s: seconds Kafka's Java producer took to write the topic.
    """

    format: str
    records: int
    results: list[FormatResult]
    not_run: dict[str, str]
    decode: list[FormatResult]
    checked: int = 0
    produce_s: float = 0.0
    routes: list[str] = field(default_factory=list)


def _write_topic(bootstrap: str, topic: str, pool: list[bytes], records: int) -> float:
    """Create ``topic`` (:data:`PARTITIONS` partitions), write ``records`` values of ``pool``
    cycled, round-robin over the partitions, with Kafka's Java producer; its seconds."""
    from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

    create_topic(bootstrap, topic, partitions=PARTITIONS)
    start = time.perf_counter()
    for first in range(0, records, _PRODUCE_CHUNK):
        chunk = (
            ProducedRecord(None, pool[i % len(pool)], partition=i % PARTITIONS)
            for i in range(first, min(records, first + _PRODUCE_CHUNK))
        )
        produce(bootstrap, topic, chunk, linger_ms=20, batch_size=1 << 18, timeout_s=3600)
    return time.perf_counter() - start


def _map_in_arrow(
    make: Callable[[], Callable[[Sequence[bytes | None]], pa.Array]],
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function: the batch's last column (``value``) decoded by ``make()``'s
    function into ``v``, the other columns passed through."""

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        run = make()
        for batch in batches:
            n = batch.num_columns
            arrays = [batch.column(i) for i in range(n - 1)]
            arrays.append(run(batch.column(n - 1).to_pylist()))
            yield pa.RecordBatch.from_arrays(arrays, names=[*batch.schema.names[:-1], "v"])

    return decode


def _load(spark: Any, fmt: str, options: dict[str, str]) -> Any:
    reader = spark.read.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def _json_routes(spark: Any, url: str) -> dict[str, Callable[[dict[str, str]], Any]]:
    from pyspark.sql.functions import col, expr, from_json
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    def ours(options: dict[str, str]) -> Any:
        df = _load(spark, "pykafka", {**options, "valueFormat": "json", "schema.registry.url": url})
        return df.select("partition", "offset", col("value").alias("v"))

    def jvm(options: dict[str, str]) -> Any:
        value = from_json(expr("substring(value, 6)").cast("string"), JSON_DDL).alias("v")
        return _load(spark, "kafka", options).select("partition", "offset", value)

    struct = StructType.fromDDL(JSON_DDL)
    arrow_type = to_arrow_type(struct, timezone="UTC")
    out = StructType(
        [
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("v", struct),
        ]
    )

    def make() -> Callable[[Sequence[bytes | None]], pa.Array]:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        from spark_kafka_py.testing.registry import confluent_conf

        return json_confluent_route(SchemaRegistryClient(confluent_conf(url)), arrow_type)

    decode = _map_in_arrow(make)

    def python(options: dict[str, str]) -> Any:
        df = _load(spark, "kafka", options).select("partition", "offset", "value")
        return df.mapInArrow(decode, out)

    return {JSON_OURS: ours, JSON_JVM: jvm, JSON_PYTHON: python}


def _protobuf_routes(
    spark: Any, url: str, descriptor_set: bytes, ours_runs: bool, jvm_runs: bool
) -> dict[str, Callable[[dict[str, str]], Any]]:
    from pyspark.sql.functions import expr
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    from spark_kafka_py.formats.protobuf.decoder import ProtobufDecoder
    from spark_kafka_py.formats.protobuf.descriptors import parse_descriptor_set

    schema = parse_descriptor_set(descriptor_set, main="bench.proto")
    arrow_type = ProtobufDecoder(schema, schema.message(MESSAGE)).arrow_type
    struct = from_arrow_type(arrow_type)
    routes: dict[str, Callable[[dict[str, str]], Any]] = {}
    if ours_runs:

        def ours(options: dict[str, str]) -> Any:
            df = _load(
                spark,
                "pykafka",
                {
                    **options,
                    "valueFormat": "protobuf",
                    "schema.registry.url": url,
                    "messageName": MESSAGE,
                },
            )
            return df.select("partition", "offset", df["value"].alias("v"))

        routes[PB_OURS] = ours
    if jvm_runs:
        from pyspark.sql.protobuf.functions import from_protobuf

        def jvm(options: dict[str, str]) -> Any:
            # the framing (magic byte, 4-byte id, message index 0) stripped in SQL
            value = from_protobuf(
                expr("substring(value, 7)"), MESSAGE, binaryDescriptorSet=descriptor_set
            ).alias("v")
            return _load(spark, "kafka", options).select("partition", "offset", value)

        routes[PB_JVM] = jvm
    out = StructType(
        [
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("v", struct),
        ]
    )
    decode = _map_in_arrow(lambda: protobuf_confluent_route(descriptor_set, arrow_type))

    def python(options: dict[str, str]) -> Any:
        df = _load(spark, "kafka", options).select("partition", "offset", "value")
        return df.mapInArrow(decode, out)

    routes[PB_PYTHON] = python
    return routes


def _limit_route(value_format: str, ours_options: dict[str, str]) -> RouteBuilder:
    """The limit of a Python data source for this format's columns
    (:mod:`benchmarks.limit_source` with ``valueFormat``): pre-built Arrow batches of the
    decoded struct, in the row counts of the batches ours yields for the topic
    (:func:`benchmarks.limit_source.pykafka_batches` of ``ours_options``, read here once),
    so the same tasks, batches and rows reach Spark without Kafka or decoding."""
    from benchmarks.limit_source import LIMIT_FORMAT, LimitDataSource, pykafka_batches

    batches = json.dumps(pykafka_batches(ours_options))

    def build(spark: Any) -> dict[str, Callable[[dict[str, str]], Any]]:
        spark.dataSource.register(LimitDataSource)

        def limit(options: dict[str, str]) -> Any:
            df = _load(spark, LIMIT_FORMAT, {"batches": batches, "valueFormat": value_format})
            return df.select("partition", "offset", df["value"].alias("v"))

        return {JSON_LIMIT if value_format == "json" else PB_LIMIT: limit}

    return build


def _source_reads_protobuf() -> str | None:
    """None when this checkout's source takes ``valueFormat=protobuf``, else why not."""
    from spark_kafka_py import registry

    for opt in getattr(registry, "OPTIONS", ()):
        if getattr(opt, "name", None) == "valueFormat":
            if "protobuf" in (getattr(opt, "choices", None) or ()):
                return None
            return "not run: this checkout's source has no valueFormat=protobuf yet"
    return "not run: valueFormat not found in spark_kafka_py.registry"


def bench_formats(
    formats: Sequence[str],
    records: int = DEFAULT_RECORDS,
    repeat: int = 1,
    *,
    bootstrap: str | None = None,
    registry_url: str | None = None,
    warmup: int = 1,
    log: Callable[[str], None] = lambda m: None,
) -> list[FormatReport]:
    """Run the benchmark of each of ``formats`` (``json``, ``protobuf``): the decode-alone
    table, then the topic and the Spark reads (see the module docstring). One broker
    (``bootstrap``, else a local one) and one registry (``registry_url``, else a local
    Apicurio) for the run; ``warmup`` untimed reads per route before the timed ones. The JVM
    route of Protobuf runs when :func:`~spark_kafka_py.testing.jars.spark_protobuf_jars`
    resolves (Maven, or ``$SPARK_KAFKA_PY_SPARK_PROTOBUF_JARS``), on the sessions of that
    format only.

    Raises:
        SystemExit: two routes' rows differ, or a read's row count is not ``records``.
    """
    from benchmarks.harness import local_broker, spark_in_own_jvm
    from spark_kafka_py.schema_registry.client import Schema, SchemaRegistryClient
    from spark_kafka_py.testing.jars import JarResolutionError, spark_protobuf_jars
    from spark_kafka_py.testing.registry import ApicurioRegistry

    jars: list[Path] = []

    def session() -> contextlib.AbstractContextManager[Any]:
        return spark_in_own_jvm("spark-kafka-py bench formats", "local[2]", jars)

    reports: list[FormatReport] = []
    decode_n = min(records, DECODE_RECORDS)
    with contextlib.ExitStack() as stack:
        bs = stack.enter_context(local_broker(bootstrap))
        if registry_url is None:
            t0 = time.perf_counter()
            registry_url = stack.enter_context(ApicurioRegistry()).url
            log(f"Apicurio registry at {registry_url} in {time.perf_counter() - t0:.1f} s")
        client = SchemaRegistryClient.from_options({"schema.registry.url": registry_url})
        stack.callback(client.close)
        for fmt in formats:
            run_id = uuid.uuid4().hex[:8]
            topic = f"bench-{fmt}-{run_id}"
            not_run: dict[str, str] = {}
            if fmt == "json":
                decode = bench_json_decode(decode_n, repeat, log)
                schema_id = client.register(
                    f"{topic}-value", Schema(json.dumps(JSON_SCHEMA), "JSON")
                )
                pool = [frame(schema_id, v) for v in json_values(min(records, POOL))]
                build: RouteBuilder = functools.partial(_json_routes, url=registry_url)

            else:
                decode = bench_protobuf_decode(decode_n, repeat, log)
                schema_id = client.register(f"{topic}-value", Schema(PROTO, "PROTOBUF"))
                pool = [
                    frame(schema_id, v, protobuf=True) for v in protobuf_values(min(records, POOL))
                ]
                why = _source_reads_protobuf()
                if why is not None:
                    not_run[PB_OURS] = why
                try:
                    jars[:] = spark_protobuf_jars()
                    log(f"spark-protobuf: {', '.join(str(j) for j in jars)}")
                except JarResolutionError as e:
                    first = next((x for x in str(e).splitlines() if x.strip()), "")
                    not_run[PB_JVM] = f"{PB_JVM_NOT_RUN} ({first[:160]})"
                build = functools.partial(
                    _protobuf_routes,
                    url=registry_url,
                    descriptor_set=_proto_schema()[2],
                    ours_runs=why is None,
                    jvm_runs=PB_JVM not in not_run,
                )

            produce_s = _write_topic(bs, topic, pool, records)
            log(
                f"{records:,} {fmt} records written to {topic} in {produce_s:.1f} s "
                f"(schema id {schema_id})"
            )
            options = {"kafka.bootstrap.servers": bs, "subscribe": topic}
            unchecked: RouteBuilder | None = None
            if fmt == "json" or PB_OURS not in not_run:
                ours_options = {**options, "schema.registry.url": registry_url}
                if fmt == "json":
                    ours_options["valueFormat"] = "json"
                else:
                    ours_options.update(valueFormat="protobuf", messageName=MESSAGE)
                t0 = time.perf_counter()
                unchecked = _limit_route(fmt, ours_options)
                log(f"the limit's batches planned in {time.perf_counter() - t0:.1f} s")
            runs, checked = time_reads_in_own_jvms(
                session,
                options,
                topic,
                records,
                repeat,
                log,
                build,
                unchecked,
                warmup,
                partitions=PARTITIONS,
                checked_per_partition=CHECKED_PER_PARTITION,
            )
            results = [
                FormatResult(name, records, statistics.median(r), r) for name, r in runs.items()
            ]
            jars.clear()
            reports.append(
                FormatReport(
                    fmt,
                    records,
                    results,
                    not_run,
                    decode,
                    checked,
                    produce_s,
                    [r.system for r in results],
                )
            )
    return reports


# ------------------------------------------------------------------------------- output


def format_report(report: FormatReport) -> str:
    """A Markdown table of one format: records/s, ours / route and the runs per route (the
    routes not run with their reason), then the decode-alone table."""
    lines = ["| route | records/s | ours / route | runs, s |", "|---|---:|---:|---|"]
    ours = next((r for r in report.results if r.system in (JSON_OURS, PB_OURS)), None)
    for r in report.results:
        ratio = f"{ours.records_per_s / r.records_per_s:.2f}" if ours else "-"
        runs = ", ".join(f"{s:.2f}" for s in r.runs)
        lines.append(f"| {r.system} | {r.records_per_s:,.0f} | {ratio} | {runs} |")
    for name, why in report.not_run.items():
        lines.append(f"| {name} | - | - | {why} |")
    lines += ["", f"Decode alone ({report.format}; no Spark, no Kafka), same values:", ""]
    lines.append(format_avro_table(report.decode))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run on ``args`` (``format``, ``records``, ``repeat``, ``bootstrap_servers``, ``json``),
    print the tables; return 0."""
    from benchmarks.harness import environment

    which = getattr(args, "format", None) or "both"
    formats = ["json", "protobuf"] if which == "both" else [which]
    records = getattr(args, "records", None) or DEFAULT_RECORDS
    repeat = getattr(args, "repeat", None) or 1
    warmup = getattr(args, "warmup", None) or 1
    reports = bench_formats(
        formats,
        records,
        repeat,
        bootstrap=getattr(args, "bootstrap_servers", None),
        registry_url=getattr(args, "schema_registry_url", None),
        warmup=warmup,
        log=lambda m: print(m, flush=True),
    )
    env = environment()
    for report in reports:
        print()
        print(f"### {report.format} read in Spark, {env['date']}")
        print()
        print(
            f"{records:,} {report.format} values of a 10-field record ({POOL:,} distinct "
            f"payloads cycled), {PARTITIONS} partitions, one local broker, local[2], noop sink, "
            f"each route in a JVM of its own, median of {repeat} run(s) after {warmup} "
            f"warm-up read(s); "
            f"the routes returned the same "
            f"rows on the first {report.checked:,} records. ours / route > 1: ours faster."
        )
        print()
        print(format_report(report))
    print()
    for k, v in env.items():
        print(f"- {k}: {v}")
    json_path = getattr(args, "json", None)
    if json_path:

        def rows(results: list[FormatResult]) -> list[dict[str, Any]]:
            return [{**asdict(r), "records_per_s": r.records_per_s} for r in results]

        Path(json_path).write_text(
            json.dumps(
                {
                    "env": env,
                    "formats": [
                        {
                            "format": r.format,
                            "records": r.records,
                            "spark": rows(r.results),
                            "not_run": r.not_run,
                            "decode": rows(r.decode),
                            "checked": r.checked,
                            "produce_s": r.produce_s,
                        }
                        for r in reports
                    ],
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


def add_arguments(parser: argparse.ArgumentParser | Any) -> None:
    """The options only this benchmark has (``--format``, ``--warmup``)."""
    parser.add_argument(
        "--format",
        choices=("json", "protobuf", "both"),
        default="both",
        help="formats: the payload formats to read (default both)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="formats: untimed reads per route before the timed ones (default 1); the JVM "
        "keeps compiling the short routes over the first reads",
    )


def main(argv: list[str] | None = None) -> int:
    """``python3 -m benchmarks.formats [--format json|protobuf|both] [--records N]
    [--repeat N] [--warmup N] [--bootstrap-servers HOST:PORT] [--json FILE]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_arguments(parser)
    parser.add_argument(
        "--records", type=int, default=None, help=f"records per topic (default {DEFAULT_RECORDS:,})"
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--bootstrap-servers", help="this cluster, not a local broker")
    parser.add_argument("--schema-registry-url", help="this registry, not a local Apicurio")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
