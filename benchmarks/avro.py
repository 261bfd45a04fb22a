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

With the accelerated extension built, one more row: ``pykafka accel, decode only``, the
accelerated ``AvroDecoder.decode`` over the payloads split from their framing before the clock
starts (the rest of the first row's time is ``decode_framed``'s per-row framing and grouping).

Each system runs ``--repeat`` times (default 1: the defaults stay under a minute); the
median is reported as records/s and ns/record, with the ratio ours / peer throughput (> 1:
ours faster). Before timing, the decoders' arrays are checked equal to the fastavro route's
on the first 2,000 values.

Usage::

    python3 -m benchmarks.avro [--records 200000] [--repeat 1] [--json FILE]
    spark-kafka-py bench avro [--records 200000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:  # run as a file: the checkout's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa

from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro.column import decode_framed
from spark_kafka_py.formats.avro.decoder import AvroDecoder
from spark_kafka_py.formats.avro.schema import Schema, parse_schema

__all__ = ["SCHEMA", "AvroResult", "bench_avro", "format_avro_table", "main", "sample_values"]

#: ``--records`` when not given.
DEFAULT_RECORDS = 200_000
#: The schema id the values are framed with.
SCHEMA_ID = 1
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
        systems.append(("pykafka accel", _ours(decoder)))
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


def _is_accelerated(decoder: AvroDecoder) -> bool:
    return decoder.implementation == "accel"


def _pure_decoder(schema: Schema) -> AvroDecoder:
    """A decoder that runs the pure-Python plan."""
    return AvroDecoder(schema, accelerate=False)


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

    records = getattr(args, "records", None) or DEFAULT_RECORDS
    repeat = getattr(args, "repeat", None) or 1
    results, skipped = bench_avro(records, repeat, log=lambda m: print(m, flush=True))
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
                    "skipped": skipped,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python3 -m benchmarks.avro [--records N] [--repeat N] [--json FILE]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=DEFAULT_RECORDS)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", help="also write the results to this JSON file")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
