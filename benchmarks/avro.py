"""The Avro decoder alone: registry-framed values -> one Arrow array, ours against the Python route.

What the source does for a column of Avro values (``from_avro``-like reads): parse each
value's Confluent framing (:mod:`spark_kafka_py.formats.framing`: magic byte, 4-byte schema
id, payload) and decode the payloads of one writer schema into one Arrow array of the reader's
mapped type (:func:`spark_kafka_py.formats.avro.column.decode_framed` over an
:class:`~spark_kafka_py.formats.avro.decoder.AvroDecoder`, accelerated when its extension is
built, else pure; the pure one is timed too).

Data: ``--records`` records (default 200,000) of a 10-field record, :data:`SCHEMA`: ``int``,
``long``, ``double``, ``string`` (8-24 ASCII characters), a nested record (``int``,
``string``), ``array<int>`` (0-4 items), ``["null", "string"]`` (every third null),
``timestamp-millis``, ``decimal(10, 2)`` on ``bytes`` and ``boolean``; written by fastavro's
``schemaless_writer`` (Avro specification 1.12, "Binary Encoding"), framed with
:func:`spark_kafka_py.formats.framing.build` (about 75 bytes a value).

Peers, in the same run on the same values (the "Python route": Python objects per record,
then ``pa.array`` of the mapped type, as a UDF over ``fastavro`` would do):

- ``fastavro``: ``schemaless_reader`` per payload (after the 5-byte header) to a dict.
- ``confluent-kafka``: its ``AvroDeserializer`` per framed value to a dict (an in-process
  ``mock://`` schema registry client holds the schema, so there is no network), when
  ``confluent_kafka.schema_registry.avro`` imports; otherwise reported and skipped.

With the accelerated extension built, three rows: ``pykafka accel, Arrow column``, what the
source runs on a fetched batch (:func:`~spark_kafka_py.formats.avro.column.decode_framed_column`
over a ``binary`` Arrow column built before the clock starts: framing checked with numpy,
payloads decoded in place); ``pykafka accel, list of values``, ``decode_framed`` over the
Python list (the per-row framing split and grouping); ``pykafka accel, decode only``, the
accelerated ``AvroDecoder.decode`` over the payloads split from their framing before the clock
starts.

Then the encoder alone (:func:`bench_avro_encode`): ``--records`` rows of the same records as
one Arrow column of the decoder's mapped type (built before the clock starts), each encoded
into one framed ``binary`` array, what the sink runs per batch:
``AvroEncoder.encode_column(column, framing prefix)`` accelerated (when built) and pure,
against ``fastavro``'s ``schemaless_writer`` per record from the same records as Python dicts
(built before the clock starts), the prefix added and ``pa.array`` of ``binary`` built. The
arrays are checked equal byte for byte on the first 2,000 rows before timing.

Each system runs ``--repeat`` times (default 1: the defaults stay under a minute); the
median is reported as records/s and ns/record, with the ratio ours / peer throughput (> 1:
ours faster). Before timing, the decoders' arrays are checked equal to the fastavro route's
on the first 2,000 values.

``--spark`` (:func:`bench_avro_spark`) times the same schema through Spark instead, in one
run on one broker (``--bootstrap-servers``, else a local one) and one registry
(``--schema-registry-url``, else a local Apicurio): ``--records`` values (default 5,000,000;
a pool of 10,000 fastavro payloads cycled), framed with the id the registry gave the schema
under ``<topic>-value``, written by Kafka's Java producer to a topic of 2 partitions; then
local[2] reads into the noop sink of

- ours: ``format("pykafka")`` with ``valueFormat=avro`` and ``schema.registry.url``
  (``select("value")``);
- the JVM route: ``format("kafka")`` and spark-avro's ``from_avro(substring(value, 6), schema)``;
- the Python route: ``format("kafka")`` and ``mapInArrow`` calling confluent-kafka's
  ``AvroDeserializer`` (on the same registry) per value, then ``pa.array`` of the struct.

Before timing, every route is collected on the first 500 records of each partition and
compared with ours. Then each route runs in a Spark session and JVM of its own
(:func:`benchmarks.harness.time_reads_in_own_jvms`, as ``bench formats`` does: one route's
JIT-compiled code, heap and Python workers never serve another's): ``--warmup`` untimed reads
(default 1) and a count, then ``--repeat`` timed reads; records/s of the medians, ours /
route, and the decode-alone table above (at most 200,000 values).

Then the sink's encode, ``--records`` rows of the same schema built by ``spark.range`` (2
partitions, :data:`SPARK_WRITE_ROW`) and written to Kafka: ours (``valueFormat=avro``, the
registry's id pinned with ``value.schema.id``) against the JVM route (spark-avro's ``to_avro``
with the 5 framing bytes prepended, ``format("kafka")``). Both first write 2,000 rows, read
back by Kafka's Java consumer and compared byte for byte; then one warm-up and ``--repeat``
alternating writes each, both routes in one more session.

Usage::

    python3 -m benchmarks.avro [--records 200000] [--repeat 1] [--json FILE]
    python3 -m benchmarks.avro --spark [--records 5000000] [--repeat 1] [--warmup 1]
        [--bootstrap-servers HOST:PORT] [--schema-registry-url URL] [--json FILE]
    spark-kafka-py bench avro [--records 200000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa

from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro.column import decode_framed, decode_framed_column
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.encoder import AvroEncoder
from spark_kafka_py.formats.avro.schema import Schema, parse_schema

__all__ = [
    "SCHEMA",
    "AvroResult",
    "AvroSparkReport",
    "bench_avro",
    "bench_avro_encode",
    "bench_avro_spark",
    "format_avro_spark_table",
    "format_avro_table",
    "main",
    "sample_values",
]

#: ``--records`` when not given.
DEFAULT_RECORDS = 200_000
#: The schema id the values are framed with.
SCHEMA_ID = 1
#: The row of what the source runs: ``decode_framed_column`` over an Arrow column.
COLUMN = "pykafka accel, Arrow column"
#: The row of ``AvroDecoder.decode`` alone (accelerated), payloads split beforehand.
DECODE_ONLY = "pykafka accel, decode only"
#: Values decoded before timing and compared with the fastavro route's array.
CHECKED = 2_000

#: The benchmark's writer (and reader) schema: ten fields of the common kinds.
SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Event",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "seq", "type": "long"},
        {"name": "score", "type": "double"},
        {"name": "name", "type": "string"},
        {
            "name": "origin",
            "type": {
                "type": "record",
                "name": "Origin",
                "fields": [
                    {"name": "zone", "type": "int"},
                    {"name": "host", "type": "string"},
                ],
            },
        },
        {"name": "tags", "type": {"type": "array", "items": "int"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "ok", "type": "boolean"},
    ],
}

_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def sample_records(records: int, seed: int = 26) -> list[dict[str, Any]]:
    """``records`` values of :data:`SCHEMA` (pseudo-random, the same for a seed)."""
    rng = random.Random(seed)
    out = []
    for i in range(records):
        out.append(
            {
                "id": rng.randrange(-(2**31), 2**31),
                "seq": i * 7919 + rng.randrange(1 << 40),
                "score": rng.random() * 1000.0,
                "name": "".join(rng.choices(_LETTERS, k=rng.randrange(8, 25))),
                "origin": {"zone": rng.randrange(64), "host": f"host-{rng.randrange(1000)}"},
                "tags": [rng.randrange(-1000, 1000) for _ in range(rng.randrange(5))],
                "note": None if i % 3 == 0 else f"note {rng.randrange(10**6)}",
                "at": _EPOCH + timedelta(milliseconds=rng.randrange(10**10)),
                "amount": Decimal(rng.randrange(-(10**10) + 1, 10**10)).scaleb(-2),
                "ok": rng.random() < 0.5,
            }
        )
    return out


def sample_values(records: int, schema_id: int = SCHEMA_ID) -> list[bytes]:
    """``records`` framed values: fastavro's ``schemaless_writer``, then ``framing.build``."""
    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    values = []
    for record in sample_records(records):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        values.append(framing.build(schema_id, buf.getvalue()))
    return values


@dataclass
class AvroResult:
    """One system's timing over the benchmark's values.

    Attributes:
        system: which decoder (``pykafka accel``, ``pykafka pure``, ``fastavro``, ...).
        records: values decoded per run.
        seconds: the median run's seconds.
        runs: every run's seconds.
    """

    system: str
    records: int
    seconds: float
    runs: list[float]

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds

    @property
    def ns_per_record(self) -> float:
        return self.seconds / self.records * 1e9


def _ours(decoder: AvroDecoder) -> Callable[[Sequence[bytes]], pa.Array]:
    arrow_type = decoder.arrow_type
    return lambda values: decode_framed(values, arrow_type, lambda _sid: decoder)


def _column(decoder: AvroDecoder, values: Sequence[bytes]) -> Callable[[Sequence[bytes]], pa.Array]:
    """What the source runs on a fetched batch: ``decode_framed_column`` over a ``binary``
    Arrow column of ``values`` (built before the clock starts, as the fetch builds it)."""
    arrow_type = decoder.arrow_type
    columns = {id(values): pa.array(values, type=pa.binary())}

    def run(column: Sequence[bytes]) -> pa.Array:
        array = columns.get(id(column))
        if array is None:
            array = pa.array(column, type=pa.binary())
        out = decode_framed_column(array, arrow_type, lambda _sid: decoder)
        assert out is not None  # one schema id, every value framed
        return out

    return run


def _decode_only(
    decoder: AvroDecoder, values: Sequence[bytes]
) -> Callable[[Sequence[bytes]], pa.Array]:
    """``decoder.decode`` alone over the payloads of ``values``, split from their framing
    before the clock starts (where ``decode_framed``'s own per-row work goes)."""
    payloads = {id(values): [framing.parse(v).payload for v in values]}

    def run(column: Sequence[bytes]) -> pa.Array:
        split = payloads.get(id(column))
        if split is None:
            split = [framing.parse(v).payload for v in column]
        return decoder.decode(split)

    return run


def _fastavro(arrow_type: pa.DataType) -> Callable[[Sequence[bytes]], pa.Array]:
    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    reader = fastavro.schemaless_reader
    header = framing.HEADER_SIZE

    def run(values: Sequence[bytes]) -> pa.Array:
        rows = [reader(io.BytesIO(v[header:]), parsed, None) for v in values]
        return pa.array(rows, type=arrow_type)

    return run


def _confluent(arrow_type: pa.DataType) -> Callable[[Sequence[bytes]], pa.Array] | str:
    """The confluent-kafka route, or why it is skipped."""
    try:
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext
    except ImportError as exc:
        return f"confluent-kafka's Avro deserializer does not import ({exc})"
    client = SchemaRegistryClient.new_client({"url": "mock://bench-avro"})
    schema_id = client.register_schema("bench-avro-value", Schema(json.dumps(SCHEMA), "AVRO"))
    if schema_id != SCHEMA_ID:
        return f"the mock registry gave schema id {schema_id}, not {SCHEMA_ID}"
    deserialize = AvroDeserializer(client)
    ctx = SerializationContext("bench-avro", MessageField.VALUE)

    def run(values: Sequence[bytes]) -> pa.Array:
        return pa.array([deserialize(v, ctx) for v in values], type=arrow_type)

    return run


def bench_avro(
    records: int = DEFAULT_RECORDS,
    repeat: int = 1,
    log: Callable[[str], None] = lambda m: None,
) -> tuple[list[AvroResult], list[str]]:
    """Time every system over the same ``records`` framed values.

    Returns:
        The results (ours first) and the peers skipped, each with the reason.

    Raises:
        SystemExit: a system's array differs from the fastavro route's on the checked values.
    """
    schema = parse_schema(json.dumps(SCHEMA))
    t0 = time.perf_counter()
    values = sample_values(records)
    size = sum(map(len, values))
    log(
        f"{records:,} framed values, {size / 1e6:.1f} MB ({size / max(records, 1):.0f} B each), "
        f"written by fastavro in {time.perf_counter() - t0:.1f} s"
    )
    decoder = AvroDecoder(schema)
    pure = _pure_decoder(schema)
    arrow_type = decoder.arrow_type
    systems: list[tuple[str, Callable[[Sequence[bytes]], pa.Array]]] = []
    if _is_accelerated(decoder):
        systems.append((COLUMN, _column(decoder, values)))
        systems.append(("pykafka accel, list of values", _ours(decoder)))
        systems.append((DECODE_ONLY, _decode_only(decoder, values)))
    systems.append(("pykafka pure", _ours(pure)))
    systems.append(("fastavro", _fastavro(arrow_type)))
    skipped = []
    confluent = _confluent(arrow_type)
    if isinstance(confluent, str):
        skipped.append(f"confluent-kafka: {confluent}")
    else:
        systems.append(("confluent-kafka", confluent))
    head = values[:CHECKED]
    expected = _fastavro(arrow_type)(head)
    for name, run in systems:
        got = run(head)
        if not got.equals(expected):
            raise SystemExit(f"{name}: the array differs from the fastavro route's")
    results = []
    for name, run in systems:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = run(values)
            times.append(time.perf_counter() - t0)
            if len(out) != records:
                raise SystemExit(f"{name}: {len(out)} rows, expected {records}")
            del out
        result = AvroResult(name, records, statistics.median(times), times)
        log(f"{name}: {result.ns_per_record:,.0f} ns/record")
        results.append(result)
    return results, skipped


#: The encode-alone row of what the sink runs: ``encode_column`` on the accelerated plan.
ENCODE_COLUMN = "pykafka accel, encode_column"


def bench_avro_encode(
    records: int = DEFAULT_RECORDS,
    repeat: int = 1,
    log: Callable[[str], None] = lambda m: None,
) -> list[AvroResult]:
    """Time the encoders over the same ``records`` rows of :data:`SCHEMA` (one Arrow column,
    framed with :data:`SCHEMA_ID`): ours accelerated (when built), ours pure, fastavro.

    Returns:
        The results, ours first.

    Raises:
        SystemExit: a system's payloads differ from fastavro's on the checked rows.
    """
    import fastavro

    schema = parse_schema(json.dumps(SCHEMA))
    rows = sample_records(records)
    arrow_type = AvroDecoder(schema).arrow_type
    column = pa.array(rows, type=arrow_type)
    prefix = framing.build(SCHEMA_ID, b"")
    parsed = fastavro.parse_schema(SCHEMA)

    def python_route(part: pa.Array) -> pa.Array:
        out = []
        buf = io.BytesIO()
        for record in rows[part.offset : part.offset + len(part)]:
            buf.seek(0)
            buf.truncate()
            fastavro.schemaless_writer(buf, parsed, record)
            out.append(prefix + buf.getvalue())
        return pa.array(out, type=pa.binary())

    systems: list[tuple[str, Callable[[pa.Array], pa.Array]]] = []
    accel = AvroEncoder(schema, arrow_type, schema_id=SCHEMA_ID)
    if accel.implementation == "accel":
        systems.append((ENCODE_COLUMN, lambda a: accel.encode_column(a, prefix)))
    pure = AvroEncoder(schema, arrow_type, schema_id=SCHEMA_ID, accelerate=False)
    systems.append(("pykafka pure, encode_column", lambda a: pure.encode_column(a, prefix)))
    systems.append(("fastavro schemaless_writer", python_route))
    head = column.slice(0, CHECKED)
    expected = python_route(head)
    for name, run in systems:
        if not run(head).equals(expected):
            raise SystemExit(f"{name}: the payloads differ from fastavro's")
    results = []
    for name, run in systems:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = run(column)
            times.append(time.perf_counter() - t0)
            if len(out) != records:
                raise SystemExit(f"{name}: {len(out)} rows, expected {records}")
            del out
        result = AvroResult(name, records, statistics.median(times), times)
        log(f"encode {name}: {result.ns_per_record:,.0f} ns/record")
        results.append(result)
    return results


def _is_accelerated(decoder: AvroDecoder) -> bool:
    return decoder.implementation == "accel"


def _pure_decoder(schema: Schema) -> AvroDecoder:
    """A decoder that runs the pure-Python plan."""
    return AvroDecoder(schema, accelerate=False)


# ------------------------------------------------------------------------------- --spark

#: ``--records`` of ``--spark`` when not given.
DEFAULT_SPARK_RECORDS = 5_000_000
#: Distinct payloads of ``--spark`` (encoded once by fastavro, then cycled over the topic).
SPARK_POOL = 10_000
#: Partitions of the ``--spark`` topic.
SPARK_PARTITIONS = 2
#: Records per partition compared between ours and ``from_avro`` before timing.
SPARK_CHECKED_PER_PARTITION = 500
#: Records per producer JVM call while writing the ``--spark`` topic.
_PRODUCE_CHUNK = 500_000
#: Row names of ``--spark``.
SPARK_OURS = "pykafka valueFormat=avro"
SPARK_JVM = "kafka + from_avro (JVM)"
SPARK_PYTHON = "kafka + mapInArrow(confluent AvroDeserializer)"
SPARK_WRITE_OURS = "pykafka valueFormat=avro (write)"
SPARK_WRITE_JVM = "to_avro (JVM) + kafka (write)"
#: Rows written by both sinks before timing and compared byte for byte.
SPARK_WRITE_CHECKED = 2_000

#: The ``--spark`` write routes' rows: :data:`SCHEMA`'s ten fields from ``spark.range``'s id,
#: every field not null but ``note`` (spark-avro refuses a nullable column for a non-null
#: field), strings of 8-24 characters, arrays of 0-4 items, every third ``note`` null.
SPARK_WRITE_ROW = """named_struct(
  'id', cast(id % 1000000 AS int),
  'seq', id * 7919,
  'score', id * 0.25d,
  'name', substr(concat('name-', sha1(cast(id AS string))), 1, cast(8 + id % 17 AS int)),
  'origin', named_struct('zone', cast(id % 16 AS int), 'host', concat('host-', id % 97)),
  'tags', slice(array(1, 2, 3, cast(id % 1000 AS int)), 1, cast(id % 5 AS int)),
  'note', if(id % 3 = 0, null, concat('note-', id % 1000)),
  'at', timestamp_millis(1704067200000 + id * 1000),
  'amount', cast(id % 100000000 / 100 AS decimal(10, 2)),
  'ok', id % 2 = 0)"""


@dataclass
class AvroSparkReport:
    """What ``--spark`` measured.

    Attributes:
        records: records in the topic (each read reads them all).
        results: one per route, ours first (``seconds``: the median read into the noop sink).
        decode: the decode-alone micro-benchmark's results (:func:`bench_avro`).
        skipped: routes or peers not measured, each with the reason.
        checked: records compared between ours and ``from_avro`` before timing.
        produce_s: seconds the Java producer took to write the topic.
        schema_id: the id the registry gave the schema.
        writes: the write routes (ours first): ``records`` rows written by each sink.
        encode: the encode-alone micro-benchmark's results (:func:`bench_avro_encode`).
    """

    records: int
    results: list[AvroResult]
    decode: list[AvroResult]
    skipped: list[str]
    checked: int
    produce_s: float
    schema_id: int
    writes: list[AvroResult]
    encode: list[AvroResult] = field(default_factory=list)


def _write_topic(bootstrap: str, topic: str, records: int, schema_id: int) -> float:
    """Create ``topic`` (:data:`SPARK_PARTITIONS` partitions) and write ``records`` framed
    values, a pool of :data:`SPARK_POOL` fastavro payloads cycled, round-robin over the
    partitions, with Kafka's Java producer; return the producer's seconds."""
    from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

    create_topic(bootstrap, topic, partitions=SPARK_PARTITIONS)
    pool = sample_values(min(records, SPARK_POOL), schema_id)
    start = time.perf_counter()
    for first in range(0, records, _PRODUCE_CHUNK):
        chunk = (
            ProducedRecord(None, pool[i % len(pool)], partition=i % SPARK_PARTITIONS)
            for i in range(first, min(records, first + _PRODUCE_CHUNK))
        )
        produce(
            bootstrap,
            topic,
            chunk,
            linger_ms=20,
            batch_size=1 << 18,
            timeout_s=3600,
        )
    return time.perf_counter() - start


def _python_route(url: str, topic: str, arrow_type: pa.DataType) -> Callable[[Any], Any]:
    """The ``mapInArrow`` function of the Python route over ``partition, offset, value``
    batches: confluent-kafka's ``AvroDeserializer`` per value (the schema from the registry at
    ``url``), then ``pa.array`` of the struct as ``v`` beside ``partition, offset``."""

    def decode(batches: Any) -> Any:
        from confluent_kafka.schema_registry import SchemaRegistryClient as Client
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        deserialize = AvroDeserializer(Client({"url": url}))
        ctx = SerializationContext(topic, MessageField.VALUE)
        for batch in batches:
            rows = [deserialize(v, ctx) for v in batch.column(2).to_pylist()]
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), batch.column(1), pa.array(rows, type=arrow_type)],
                names=["partition", "offset", "v"],
            )

    return decode


def bench_avro_spark(
    records: int = DEFAULT_SPARK_RECORDS,
    repeat: int = 1,
    *,
    bootstrap: str | None = None,
    registry_url: str | None = None,
    python_route: bool = True,
    reads: bool = True,
    warmup: int = 1,
    log: Callable[[str], None] = lambda m: None,
) -> AvroSparkReport:
    """Time Spark reads of one Avro topic into the noop sink, local[2]: ours
    (``format("pykafka")``, ``valueFormat=avro``), the JVM route (``format("kafka")`` +
    spark-avro's ``from_avro`` on ``substring(value, 6)``) and the Python route
    (``format("kafka")`` + ``mapInArrow`` over confluent-kafka's ``AvroDeserializer``).

    One broker (``bootstrap``, else a local one) and one registry (``registry_url``, else a
    local Apicurio) for the run; the schema is registered under ``<topic>-value``. The routes
    are compared on the first records, then each is timed in a Spark session and JVM of its
    own (:func:`benchmarks.harness.time_reads_in_own_jvms`: ``warmup`` untimed reads, then
    ``repeat`` timed ones); the two write routes then share one more session, alternating.
    Also runs the decode-alone micro-benchmark (:func:`bench_avro`, at most
    :data:`DEFAULT_RECORDS` values).

    Raises:
        SystemExit: a route's rows differ from ours on the first records, or a read's row
            count is not ``records``.
    """
    import contextlib
    import uuid

    from benchmarks.harness import local_broker, spark_in_own_jvm, time_reads_in_own_jvms
    from spark_kafka_py.schema_registry.client import SchemaRegistryClient
    from spark_kafka_py.testing.registry import ApicurioRegistry

    def session() -> contextlib.AbstractContextManager[Any]:
        return spark_in_own_jvm("spark-kafka-py bench avro", "local[2]")

    decode, skipped = bench_avro(min(records, DEFAULT_RECORDS), repeat, log=log)
    encode = bench_avro_encode(min(records, DEFAULT_RECORDS), repeat, log=log)
    with contextlib.ExitStack() as stack:
        bs = stack.enter_context(local_broker(bootstrap))
        if registry_url is None:
            t0 = time.perf_counter()
            registry_url = stack.enter_context(ApicurioRegistry()).url
            log(f"Apicurio registry at {registry_url} in {time.perf_counter() - t0:.1f} s")
        topic = f"bench-avro-{uuid.uuid4().hex[:8]}"
        client = SchemaRegistryClient.from_options({"schema.registry.url": registry_url})
        stack.callback(client.close)
        schema_id = client.register(f"{topic}-value", json.dumps(SCHEMA))
        produce_s = 0.0
        if reads:
            produce_s = _write_topic(bs, topic, records, schema_id)
            log(f"{records:,} records written to {topic} in {produce_s:.1f} s (id {schema_id})")
        results: list[AvroResult] = []
        more = _python_route_skipped(python_route)
        if reads:
            runs, _ = time_reads_in_own_jvms(
                session,
                {"kafka.bootstrap.servers": bs, "subscribe": topic},
                topic,
                records,
                repeat,
                log,
                functools.partial(
                    _spark_routes,
                    bootstrap=bs,
                    url=registry_url,
                    topic=topic,
                    python_route=not more,
                ),
                warmup=warmup,
                partitions=SPARK_PARTITIONS,
                checked_per_partition=SPARK_CHECKED_PER_PARTITION,
            )
            results = [AvroResult(n, records, statistics.median(r), r) for n, r in runs.items()]
        with session() as spark:
            writes = _spark_write_routes(spark, bs, registry_url, schema_id, records, repeat, log)
    return AvroSparkReport(
        records,
        results,
        decode,
        skipped + more,
        SPARK_CHECKED_PER_PARTITION * SPARK_PARTITIONS,
        produce_s,
        schema_id,
        writes,
        encode,
    )


def _python_route_skipped(python_route: bool) -> list[str]:
    """Why the Python route does not run (none: it runs)."""
    try:
        import confluent_kafka.schema_registry.avro  # noqa: F401
    except ImportError as exc:
        return [f"{SPARK_PYTHON}: confluent-kafka's Avro deserializer does not import ({exc})"]
    return [] if python_route else [f"{SPARK_PYTHON}: --no-python-route"]


def _spark_routes(
    spark: Any, *, bootstrap: str, url: str, topic: str, python_route: bool
) -> dict[str, Callable[[dict[str, str]], Any]]:
    """The read routes on ``spark``, ours first, each mapping the topic's options to
    ``partition, offset, v``: ours (``valueFormat=avro``), ``from_avro`` on
    ``substring(value, 6)`` and, when ``python_route``, confluent-kafka in ``mapInArrow``."""
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.functions import expr
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    schema_json = json.dumps(SCHEMA)

    def load(fmt: str, options: dict[str, str]) -> Any:
        reader = spark.read.format(fmt)
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load()

    def ours(options: dict[str, str]) -> Any:
        df = load("pykafka", {**options, "valueFormat": "avro", "schema.registry.url": url})
        return df.select("partition", "offset", df["value"].alias("v"))

    def jvm(options: dict[str, str]) -> Any:
        value = from_avro(expr("substring(value, 6)"), schema_json).alias("v")
        return load("kafka", options).select("partition", "offset", value)

    routes: dict[str, Callable[[dict[str, str]], Any]] = {SPARK_OURS: ours, SPARK_JVM: jvm}
    if python_route:
        struct = ours({"kafka.bootstrap.servers": bootstrap, "subscribe": topic}).schema["v"]
        struct = struct.dataType
        decode = _python_route(url, topic, to_arrow_type(struct, timezone="UTC"))
        out = StructType(
            [
                StructField("partition", IntegerType()),
                StructField("offset", LongType()),
                StructField("v", struct),
            ]
        )

        def python(options: dict[str, str]) -> Any:
            df = load("kafka", options).select("partition", "offset", "value")
            return df.mapInArrow(decode, out)

        routes[SPARK_PYTHON] = python
    return routes


def _alternating_runs(
    routes: list[str],
    timed: Callable[[str], float],
    records: int,
    repeat: int,
    log: Callable[[str], None],
) -> list[AvroResult]:
    """``repeat`` rounds of ``timed(route)`` for each route in turn (seconds each); the
    medians as results, in ``routes`` order."""
    runs: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(repeat):
        for name in routes:
            runs[name].append(timed(name))
    results = [AvroResult(n, records, statistics.median(t), t) for n, t in runs.items()]
    for r in results:
        log(f"{r.system}: {r.records_per_s:,.0f} records/s")
    return results


def _spark_write_routes(
    spark: Any,
    bootstrap: str,
    url: str,
    schema_id: int,
    records: int,
    repeat: int,
    log: Callable[[str], None],
) -> list[AvroResult]:
    """The sink's encode: ``records`` rows of :data:`SPARK_WRITE_ROW` (``spark.range``, 2
    partitions) written to Kafka by ours (``valueFormat=avro``, ``value.schema.id`` pinned) and
    by the JVM route (spark-avro's ``to_avro`` with the 5 framing bytes prepended, then
    ``format("kafka")``), each to its own topic of :data:`SPARK_PARTITIONS` partitions. First
    both write :data:`SPARK_WRITE_CHECKED` rows, read back by Kafka's Java consumer and compared
    byte for byte; then one warm-up and ``repeat`` alternating timed writes each.

    Raises:
        SystemExit: the two sinks wrote different bytes.
    """
    import uuid

    from pyspark.sql.avro.functions import to_avro
    from pyspark.sql.functions import concat, expr, lit

    from spark_kafka_py.testing.tools import create_topic, read_all

    schema_json = json.dumps(SCHEMA)
    prefix = framing.build(schema_id, b"")

    def rows(n: int) -> Any:
        return spark.range(0, n, 1, SPARK_PARTITIONS).select(expr(SPARK_WRITE_ROW).alias("v"))

    def ours(n: int, topic: str) -> Any:
        return (
            rows(n).select(expr("v").alias("value")).write.format("pykafka")
            .option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
            .option("valueFormat", "avro").option("schema.registry.url", url)
            .option("value.schema.id", str(schema_id)).mode("append")
        )  # fmt: skip

    def jvm(n: int, topic: str) -> Any:
        return (
            rows(n).select(concat(lit(prefix), to_avro("v", schema_json)).alias("value"))
            .write.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic).mode("append")
        )  # fmt: skip

    def new_topic(name: str) -> str:
        topic = f"bench-avro-{name}-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, partitions=SPARK_PARTITIONS)
        return topic

    check = {name: new_topic(f"check-{name}") for name in ("ours", "jvm")}
    ours(SPARK_WRITE_CHECKED, check["ours"]).save()
    jvm(SPARK_WRITE_CHECKED, check["jvm"]).save()
    written = {
        name: sorted(r.value or b"" for r in read_all(bootstrap, topic))
        for name, topic in check.items()
    }
    if written["ours"] != written["jvm"] or len(written["ours"]) != SPARK_WRITE_CHECKED:
        pairs = zip(written["ours"], written["jvm"], strict=False)
        raise SystemExit(
            f"the sinks wrote different values ({len(written['ours'])} and "
            f"{len(written['jvm'])} records; {sum(a != b for a, b in pairs)} differ)"
        )
    log(f"ours and to_avro + kafka wrote the same {SPARK_WRITE_CHECKED:,} values")

    routes = {SPARK_WRITE_OURS: ours, SPARK_WRITE_JVM: jvm}
    topics = {name: new_topic(f"write-{i}") for i, name in enumerate(routes)}

    def timed(name: str) -> float:
        start = time.perf_counter()
        routes[name](records, topics[name]).save()
        return time.perf_counter() - start

    for name in routes:
        log(f"{name}: warm-up {timed(name):.1f} s")
    return _alternating_runs(list(routes), timed, records, repeat, log)


def format_avro_spark_table(report: AvroSparkReport) -> str:
    """A Markdown table of ``--spark``: records/s and every run per route, ours / route, then
    the decode-alone ns/record."""
    header = [
        "| route | records/s | ours / route | runs, s |",
        "|---|---:|---:|---|",
    ]
    lines = list(header) if report.results else ["(no read routes: --no-reads)"]
    for r in report.results:
        ours = report.results[0]
        runs = ", ".join(f"{s:.2f}" for s in r.runs)
        lines.append(
            f"| {r.system} | {r.records_per_s:,.0f} | "
            f"{ours.records_per_s / r.records_per_s:.2f} | {runs} |"
        )
    if report.writes:
        mine = report.writes[0]
        lines += ["", "Writes (the sink's encode):", "", *header]
        for r in report.writes:
            runs = ", ".join(f"{s:.2f}" for s in r.runs)
            lines.append(
                f"| {r.system} | {r.records_per_s:,.0f} | "
                f"{mine.records_per_s / r.records_per_s:.2f} | {runs} |"
            )
    lines += [
        "",
        "Decode alone (no Spark, no Kafka), same schema:",
        "",
        format_avro_table(report.decode),
    ]
    if report.encode:
        lines += ["", "Encode alone (no Spark, no Kafka), same schema:", ""]
        lines.append(format_avro_table(report.encode))
    return "\n".join(lines)


def format_avro_table(results: list[AvroResult]) -> str:
    """A Markdown table: records/s, ns/record, and each row's ratio to the peers."""
    ours = results[0]
    lines = [
        f"| system | records/s | ns/record | {ours.system} / system |",
        "|---|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.system} | {r.records_per_s:,.0f} | {r.ns_per_record:,.0f} | "
            f"{ours.records_per_s / r.records_per_s:.2f} |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run on ``args`` (``records``, ``repeat``, ``json``), print the table; return 0."""
    from benchmarks.harness import environment

    if getattr(args, "spark", False):
        return run_spark(args)
    records = getattr(args, "records", None) or DEFAULT_RECORDS
    repeat = getattr(args, "repeat", None) or 1
    results, skipped = bench_avro(records, repeat, log=lambda m: print(m, flush=True))
    encode = bench_avro_encode(records, repeat, log=lambda m: print(m, flush=True))
    env = environment()
    print()
    print(f"### Avro decode, {env['date']}")
    print()
    print(
        f"{records:,} framed values of a 10-field record, medians of {repeat} runs; the last "
        f"column is the first row's throughput over each row's (> 1: {results[0].system} "
        "faster)."
    )
    print()
    print(format_avro_table(results))
    print()
    print(
        f"Encode alone: {records:,} rows of the same schema as one Arrow column -> one framed "
        f"binary array, medians of {repeat} runs."
    )
    print()
    print(format_avro_table(encode))
    print()
    for line in skipped:
        print(f"- skipped {line}")
    for k, v in env.items():
        print(f"- {k}: {v}")
    json_path = getattr(args, "json", None)
    if json_path:
        Path(json_path).write_text(
            json.dumps(
                {
                    "env": env,
                    "results": [
                        {**asdict(r), "records_per_s": r.records_per_s, "ns": r.ns_per_record}
                        for r in results
                    ],
                    "encode": [
                        {**asdict(r), "records_per_s": r.records_per_s, "ns": r.ns_per_record}
                        for r in encode
                    ],
                    "skipped": skipped,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


def run_spark(args: argparse.Namespace) -> int:
    """``--spark``: run :func:`bench_avro_spark` on ``args`` (``records``, ``repeat``,
    ``bootstrap_servers``, ``schema_registry_url``, ``json``), print the table; return 0."""
    from benchmarks.harness import environment

    records = getattr(args, "records", None) or DEFAULT_SPARK_RECORDS
    repeat = getattr(args, "repeat", None) or 1
    warmup = getattr(args, "warmup", None) or 1
    report = bench_avro_spark(
        records,
        repeat,
        bootstrap=getattr(args, "bootstrap_servers", None),
        registry_url=getattr(args, "schema_registry_url", None),
        python_route=not getattr(args, "no_python_route", False),
        reads=not getattr(args, "no_reads", False),
        warmup=warmup,
        log=lambda m: print(m, flush=True),
    )
    env = environment()
    print()
    print(f"### Avro read in Spark, {env['date']}")
    print()
    if report.results:
        print(
            f"{records:,} Confluent-framed Avro values of a 10-field record "
            f"({SPARK_POOL:,} distinct payloads cycled), {SPARK_PARTITIONS} partitions, one "
            f"local broker and registry, local[2], noop sink, each route in a JVM of its own, "
            f"median of {repeat} run(s) after {warmup} warm-up read(s); the routes returned the "
            f"same rows as ours on the first {report.checked:,} records. ours / route > 1: ours "
            "faster."
        )
    else:
        print(
            f"{records:,} rows of a 10-field record written by each sink, local[2], one local "
            f"broker and registry, median of {repeat} run(s) after one warm-up each; both "
            "sinks' first 2,000 rows read back equal byte for byte. ours / route > 1: ours "
            "faster."
        )
    print()
    print(format_avro_spark_table(report))
    print()
    for line in report.skipped:
        print(f"- skipped {line}")
    for k, v in env.items():
        print(f"- {k}: {v}")
    json_path = getattr(args, "json", None)
    if json_path:

        def rows(results: list[AvroResult]) -> list[dict[str, Any]]:
            return [{**asdict(r), "records_per_s": r.records_per_s} for r in results]

        Path(json_path).write_text(
            json.dumps(
                {
                    "env": env,
                    "spark": rows(report.results),
                    "writes": rows(report.writes),
                    "decode": rows(report.decode),
                    "encode": rows(report.encode),
                    "skipped": report.skipped,
                    "produce_s": report.produce_s,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python3 -m benchmarks.avro [--records N] [--repeat N] [--json FILE]
    [--spark [--bootstrap-servers HOST:PORT] [--schema-registry-url URL] [--warmup N]]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--records",
        type=int,
        default=None,
        help=f"values (default {DEFAULT_RECORDS:,}; with --spark {DEFAULT_SPARK_RECORDS:,})",
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument(
        "--spark",
        action="store_true",
        help="time Spark reads of an Avro topic: ours, kafka + from_avro, kafka + mapInArrow",
    )
    parser.add_argument("--bootstrap-servers", help="with --spark: this cluster, not a local one")
    parser.add_argument(
        "--schema-registry-url", help="with --spark: this registry, not a local Apicurio"
    )
    parser.add_argument(
        "--no-python-route",
        action="store_true",
        help="with --spark: skip the Python route (about 3 minutes a read at 5M records)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="with --spark: untimed reads per route before the timed ones (default 1)",
    )
    parser.add_argument(
        "--no-reads",
        action="store_true",
        help="with --spark: no read routes (no topic written): the write routes only",
    )
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
