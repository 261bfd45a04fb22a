"""Our Avro layer against a client no one here wrote: confluent-kafka's ``AvroSerializer`` and
``AvroDeserializer`` (PyPI ``confluent-kafka[avro,schemaregistry]``; its Avro is fastavro's),
both talking to a real registry (the ``schema_registry`` fixture: Apicurio's
Confluent-compatible API). No mocks: every schema id comes from the registry, every writer
schema our side reads is the text the registry hands back for that id.

What is compared, and why:

1. Confluent writes, we read. Records serialized by ``AvroSerializer`` (auto-registered under
   ``<topic>-value``, the id in the payload's 5-byte framing) are decoded by ours: the id from
   :func:`framing.parse` (inside :func:`decode_framed`), the writer schema from our
   ``SchemaRegistryClient.schema_by_id``, the values by :class:`AvroDecoder`. Row by row, the
   result equals what confluent's ``AvroDeserializer`` returns for the same bytes. Schema
   evolution too: rows written with v1 and v2 of a subject (a field added with a default, one
   removed, int -> long and float -> double) read with v2 as the reader schema, against
   confluent's deserializer given v2 as its reader schema and, separately, with
   ``use.latest.version`` (both resolve with fastavro's ``schemaless_reader(writer, reader)``).
2. We write, confluent reads. Rows encoded by our :class:`AvroEncoder` with the schema our
   client registered, framed by :func:`framing.build` with the id the registry gave, are read
   back by ``AvroDeserializer`` unchanged: equal to the source rows.
3. Header schema ids. confluent-kafka 2.16's Python client has ``schema.id.serializer`` and
   ``header_schema_id_serializer``, but that one writes only a GUID (``0x01`` + 16 bytes,
   ``SchemaId.guid_to_bytes``) in ``__value_schema_id``, and Apicurio 3.3 issues no GUIDs
   (its registrations answer none: the serializer fails with "Schema GUID is not set"). So:
   the registry id goes into the header with confluent's own id encoding
   (``SchemaId.id_to_bytes``, ``0x00`` + 4 bytes) by a two-line ``schema.id.serializer``,
   confluent's deserializer reads it back from the header (its default
   ``dual_schema_id_deserializer``), and ours finds it with :func:`framing.header_id`; the GUID
   form is checked without a registry: what ``header_schema_id_serializer`` writes parses to
   the same GUID with ours, and what ours builds parses with confluent's ``SchemaId``.
   (confluent's Python deserializer takes the *first* ``__value_schema_id`` header of a
   record, ours the last, as the Java deserializers' ``Headers.lastHeader``; records carry one.)

The two sides do not give the same Python objects: ours is Spark's view, Arrow's
``to_pylist()`` of the mapped type (:mod:`spark_kafka_py.formats.avro.types`), confluent's is
fastavro's. :func:`_spark_view` maps fastavro's objects to Spark's view by spark-avro's
rules, written here from those rules (never with our decoder or encoder):

- ``uuid`` strings: fastavro gives :class:`uuid.UUID`, Spark a string (``str(uuid)``);
- ``time-millis`` / ``time-micros``: fastavro gives :class:`datetime.time`, Spark an int
  (milliseconds) / a long (microseconds) since midnight, spark-avro having no time type;
- maps: fastavro gives a dict, Arrow a list of ``(key, value)`` pairs in the payload's order;
- unions of several non-null branches: fastavro gives the branch's value, Spark a struct
  ``member0, member1, ...`` with the written branch set and the others null (the branch told
  from the value's Python type); ``[int, long]`` and ``[float, double]`` are one widened
  number, ``[null, X]`` is X or None;
- enums (the symbol), fixed and bytes (``bytes``), dates (:class:`datetime.date`),
  decimals (:class:`~decimal.Decimal` of the schema's scale), ``timestamp-*`` (aware
  datetimes, UTC) and ``local-timestamp-*`` (naive datetimes) are the same objects.

Both sides then go through :func:`_canon`, which tags every leaf with its kind so that
``True``, ``1`` and ``1.0`` differ, compares floats by their bits (NaN equals NaN, -0.0 does
not equal 0.0), decimals by their digits and exponent, and aware datetimes as UTC instants.

Found here: Confluent's serializers write a top-level ``"bytes"`` schema's value raw after
the framing (no Avro length prefix; the Python client's ``is_bytes`` branch, and its
deserializer reads it back raw). :func:`decode_framed` reads it so
(``formats.avro.column.raw_in_framing``); the sink writes it so
(``spark/payload_write.py``, checked byte for byte in tests/integration/test_avro_sink.py).
"""

from __future__ import annotations

import datetime
import io
import json
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentRegistry
from confluent_kafka.schema_registry import header_schema_id_serializer
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.serde import SchemaId
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.formats import framing
from spark_kafka_py.formats.avro import AvroDecoder, AvroEncoder, decode_framed, parse_schema
from spark_kafka_py.formats.avro.types import to_spark
from spark_kafka_py.schema_registry import LruCache, SchemaRegistryClient, parse_settings
from spark_kafka_py.testing.registry import confluent_conf

UTC = datetime.timezone.utc

#: The subject of a topic's values (confluent's TopicNameStrategy), stated, not left to the
#: client's default strategy (2.16's default asks the registry for associations first).
TOPIC_STRATEGY = {"subject.name.strategy.type": "TOPIC"}

# -- schemas ------------------------------------------------------------------------------------

INNER: dict[str, Any] = {
    "type": "record",
    "name": "Inner",
    "fields": [
        {"name": "n", "type": "int"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
COLOR: dict[str, Any] = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}
MD5: dict[str, Any] = {"type": "fixed", "name": "Md5", "size": 16}

#: Every type the issue lists, once or more, nested where it matters.
EVERY: dict[str, Any] = {
    "type": "record",
    "name": "Every",
    "namespace": "oracle",
    "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "i32", "type": "int"},
        {"name": "i64", "type": "long"},
        {"name": "f32", "type": "float"},
        {"name": "f64", "type": "double"},
        {"name": "text", "type": "string"},
        {"name": "blob", "type": "bytes"},
        {"name": "color", "type": COLOR},
        {"name": "md5", "type": MD5},
        {"name": "inner", "type": INNER},
        {"name": "inners", "type": {"type": "array", "items": "Inner"}},
        {"name": "longs", "type": {"type": "array", "items": ["null", "long"]}},
        {"name": "colors", "type": {"type": "array", "items": "Color"}},
        {"name": "scores", "type": {"type": "map", "values": "double"}},
        {"name": "by_name", "type": {"type": "map", "values": "Inner"}},
        {"name": "maybe_text", "type": ["null", "string"], "default": None},
        {"name": "maybe_long", "type": ["long", "null"]},
        {"name": "maybe_inner", "type": ["null", "Inner"]},
        {"name": "maybe_md5", "type": ["null", "Md5"]},
        {"name": "text_or_long", "type": ["null", "string", "long"]},
        {"name": "int_or_long", "type": ["int", "long"]},
        {"name": "float_or_double", "type": ["float", "double"]},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 4},
        },
        {
            "name": "wide",
            "type": {
                "type": "fixed",
                "name": "Wide",
                "size": 16,
                "logicalType": "decimal",
                "precision": 38,
                "scale": 10,
            },
        },
        {
            "name": "maybe_price",
            "type": [
                "null",
                {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            ],
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "local_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    ],
}

#: v1 of an evolving subject.
ORDER_V1: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "name", "type": "string"},
        {"name": "legacy", "type": "string"},
        {"name": "qty", "type": "float"},
    ],
}
#: v2: ``legacy`` removed; ``id`` int -> long, ``qty`` float -> double; fields added with
#: defaults (a string, a nullable string, an array, an enum).
ORDER_V2: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "qty", "type": "double"},
        {"name": "currency", "type": "string", "default": "EUR"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "DONE"]},
            "default": "NEW",
        },
    ],
}

# -- fastavro's objects -> Spark's view (the normalisation the module docstring describes) -----

_KINDS_OF: dict[type, tuple[str, ...]] = {
    bool: ("boolean",),
    int: ("int", "long"),
    float: ("float", "double"),
    str: ("string", "enum"),
    bytes: ("bytes", "fixed"),
    Decimal: ("bytes", "fixed"),
    uuid.UUID: ("string",),
    dict: ("record", "map"),
    list: ("array",),
}


def _named(schema: object, out: dict[str, Any]) -> dict[str, Any]:
    """The named types of ``schema`` by short name (the schemas here repeat no short name)."""
    if isinstance(schema, list):
        for branch in schema:
            _named(branch, out)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed"):
            out[schema["name"]] = schema
        for key in ("items", "values"):
            if key in schema:
                _named(schema[key], out)
        for field in schema.get("fields", []):
            _named(field["type"], out)
    return out


def _resolve(schema: object, names: dict[str, Any]) -> Any:
    if isinstance(schema, str) and schema.rpartition(".")[2] in names:
        return names[schema.rpartition(".")[2]]
    return schema


def _kind(schema: object) -> str:
    return schema["type"] if isinstance(schema, dict) else str(schema)


def _spark_view(schema: object, value: Any, names: dict[str, Any]) -> Any:
    """fastavro's Python object ``value`` of ``schema`` as Spark sees it (Arrow's
    ``to_pylist`` form), by spark-avro's type mapping."""
    schema = _resolve(schema, names)
    if isinstance(schema, list):
        if value is None:
            return None
        branches = [_resolve(b, names) for b in schema if b != "null"]
        if len(branches) == 1:
            return _spark_view(branches[0], value, names)
        if sorted(_kind(b) for b in branches) in (["int", "long"], ["double", "float"]):
            return value  # one widened number
        kinds = _KINDS_OF[type(value)]
        chosen = next(n for n, b in enumerate(branches) if _kind(b) in kinds)
        return {
            f"member{n}": _spark_view(b, value, names) if n == chosen else None
            for n, b in enumerate(branches)
        }
    kind = _kind(schema)
    logical = schema.get("logicalType") if isinstance(schema, dict) else None
    if kind == "record":
        return {
            f["name"]: _spark_view(f["type"], value[f["name"]], names) for f in schema["fields"]
        }
    if kind == "array":
        return [_spark_view(schema["items"], v, names) for v in value]
    if kind == "map":
        return [(k, _spark_view(schema["values"], v, names)) for k, v in value.items()]
    if logical == "uuid":
        return str(value)
    if logical in ("time-millis", "time-micros"):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond
        return micros // 1000 if logical == "time-millis" else micros
    return value


def _canon(value: Any) -> Any:
    """Both sides' plain values, each leaf tagged with its kind (see the module docstring)."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int):
        return ("integer", value)
    if isinstance(value, float):
        return ("floating", value.hex())  # 'nan' for every NaN; -0.0 apart from 0.0
    if isinstance(value, Decimal):
        return ("decimal", value.as_tuple())
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            return ("timestamp_ntz", value.isoformat())
        return ("timestamp", value.astimezone(UTC).isoformat())
    if isinstance(value, datetime.date):
        return ("date", value.isoformat())
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canon(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_canon(v) for v in value)
    assert value is None or isinstance(value, (str, bytes)), type(value)
    return value


# -- generated values (as fastavro takes them) --------------------------------------------------

_I32 = st.integers(-(2**31), 2**31 - 1)
_I64 = st.integers(-(2**63), 2**63 - 1)
_SHORT_TEXT = st.text(max_size=8)
_ZONES = st.sampled_from(
    [UTC, datetime.timezone(datetime.timedelta(hours=5, minutes=30)), datetime.timezone.min]
)
# one day inside datetime's range both ends, so that any offset stays within it
_LOW, _HIGH = datetime.datetime(1, 1, 3), datetime.datetime(9999, 12, 29)


def _decimals(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    """Decimals of exactly ``scale`` places within ``precision`` digits (built from the unscaled
    integer's text: exact at any width, as fastavro writes them)."""
    bound = 10**precision - 1
    return st.integers(-bound, bound).map(lambda u: Decimal(f"{u}E-{scale}"))


def _whole_millis(moment: datetime.datetime) -> datetime.datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _aware(millis: bool) -> st.SearchStrategy[datetime.datetime]:
    moments = st.datetimes(_LOW, _HIGH, timezones=_ZONES)
    return moments.map(_whole_millis) if millis else moments


def _naive(millis: bool) -> st.SearchStrategy[datetime.datetime]:
    moments = st.datetimes(_LOW, _HIGH)
    return moments.map(_whole_millis) if millis else moments


_INNER = st.fixed_dictionaries({"n": _I32, "tags": st.lists(_SHORT_TEXT, max_size=3)})
_COLOR = st.sampled_from(COLOR["symbols"])
_MD5 = st.binary(min_size=16, max_size=16)

#: One EVERY record, as fastavro (confluent's serializer) takes it. Timestamps of the
#: ``-millis`` types are whole milliseconds, so that they survive a round trip unchanged.
EVERY_VALUES = st.fixed_dictionaries(
    {
        "flag": st.booleans(),
        "i32": _I32,
        "i64": _I64,
        "f32": st.floats(width=32),
        "f64": st.floats(),
        "text": st.text(max_size=20),
        "blob": st.binary(max_size=20),
        "color": _COLOR,
        "md5": _MD5,
        "inner": _INNER,
        "inners": st.lists(_INNER, max_size=3),
        "longs": st.lists(st.none() | _I64, max_size=4),
        "colors": st.lists(_COLOR, max_size=4),
        "scores": st.dictionaries(_SHORT_TEXT, st.floats(), max_size=3),
        "by_name": st.dictionaries(_SHORT_TEXT, _INNER, max_size=2),
        "maybe_text": st.none() | st.text(max_size=8),
        "maybe_long": st.none() | _I64,
        "maybe_inner": st.none() | _INNER,
        "maybe_md5": st.none() | _MD5,
        "text_or_long": st.none() | _SHORT_TEXT | _I64,
        "int_or_long": _I64,
        "float_or_double": st.floats(),
        "price": _decimals(12, 4),
        "wide": _decimals(38, 10),
        "maybe_price": st.none() | _decimals(9, 2),
        "day": st.dates(),
        "ts_ms": _aware(millis=True),
        "ts_us": _aware(millis=False),
        "local_ms": _naive(millis=True),
        "local_us": _naive(millis=False),
        "t_ms": st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
        "t_us": st.times(),
        "id": st.uuids(),
    }
)


def _every_edge() -> dict[str, Any]:
    """One hand-written EVERY record at the edges (extremes, empties, nulls, NaN, -0.0)."""
    return {
        "flag": False,
        "i32": -(2**31),
        "i64": 2**63 - 1,
        "f32": float("nan"),
        "f64": -0.0,
        "text": "",
        "blob": b"",
        "color": "BLUE",
        "md5": bytes(range(16)),
        "inner": {"n": 2**31 - 1, "tags": []},
        "inners": [],
        "longs": [None, -(2**63), None],
        "colors": [],
        "scores": {},
        "by_name": {"": {"n": 0, "tags": ["ü", "日本"]}},
        "maybe_text": None,
        "maybe_long": None,
        "maybe_inner": None,
        "maybe_md5": None,
        "text_or_long": 2**40,
        "int_or_long": 7,
        "float_or_double": float("inf"),
        "price": Decimal("-99999999.9999"),
        "wide": Decimal("-9999999999999999999999999999.9999999999"),
        "maybe_price": Decimal("0.01"),
        "day": datetime.date(1, 1, 1),
        "ts_ms": datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        "ts_us": datetime.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
        "local_ms": datetime.datetime(9999, 12, 31, 23, 59, 59, 999000),
        "local_us": datetime.datetime(1, 1, 1),
        "t_ms": datetime.time(23, 59, 59, 999000),
        "t_us": datetime.time(0, 0, 0, 1),
        "id": uuid.UUID(int=0),
    }


# -- the two sides ------------------------------------------------------------------------------


def _topic() -> str:
    return f"oracle-{uuid.uuid4().hex[:10]}"


def _context(topic: str, headers: list[tuple[str, bytes]] | None = None) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE, headers)


@pytest.fixture()
def confluent(schema_registry: str) -> ConfluentRegistry:
    """confluent-kafka's registry client (its own cache, per test)."""
    return ConfluentRegistry(confluent_conf(schema_registry))


@pytest.fixture()
def ours(schema_registry: str) -> Iterator[SchemaRegistryClient]:
    """Our registry client, with a cache of its own (so every id is asked of the registry)."""
    client = SchemaRegistryClient(
        parse_settings({"schema.registry.url": schema_registry}), cache=LruCache()
    )
    yield client
    client.close()


def _decoder_for(
    ours: SchemaRegistryClient, reader_text: str | None
) -> Callable[[int], AvroDecoder | None]:
    """decode_framed's lookup: the writer schema of an id from the registry, read as
    ``reader_text`` (None: as the writer)."""
    reader = parse_schema(reader_text) if reader_text is not None else None
    decoders: dict[int, AvroDecoder] = {}

    def decoder_for(schema_id: int) -> AvroDecoder:
        if schema_id not in decoders:
            writer = parse_schema(ours.schema_by_id(schema_id).schema_str)
            decoders[schema_id] = AvroDecoder(writer, reader)
        return decoders[schema_id]

    return decoder_for


def _ours_decode(
    ours: SchemaRegistryClient, values: list[bytes], reader_text: str | None = None
) -> list[Any]:
    """Our reading of framed values: decode_framed over the registry's writer schemas."""
    decoder_for = _decoder_for(ours, reader_text)
    first = decoder_for(framing.schema_id(values[0]))
    return list(decode_framed(values, first.arrow_type, decoder_for).to_pylist())


def _serializer(confluent: ConfluentRegistry, schema: object, **conf: Any) -> AvroSerializer:
    return AvroSerializer(confluent, json.dumps(schema), conf={**TOPIC_STRATEGY, **conf})


def _deserializer(
    confluent: ConfluentRegistry, reader: object = None, **conf: Any
) -> AvroDeserializer:
    text = None if reader is None else json.dumps(reader)
    return AvroDeserializer(confluent, text, conf={**TOPIC_STRATEGY, **conf})


def _settings(examples: int) -> Callable[[Any], Any]:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# -- 1. confluent writes, we read ---------------------------------------------------------------


@pytest.mark.integration
def test_confluent_serialized_records_decode_with_ours_as_confluent_deserializes_them(
    confluent: ConfluentRegistry, ours: SchemaRegistryClient
) -> None:
    topic = _topic()
    serialize = _serializer(confluent, EVERY)
    deserialize = _deserializer(confluent)
    names = _named(EVERY, {})

    def check(records: list[dict[str, Any]]) -> None:
        values = [serialize(r, _context(topic)) for r in records]
        theirs = [_spark_view(EVERY, deserialize(v, _context(topic)), names) for v in values]
        assert _canon(_ours_decode(ours, values)) == _canon(theirs)

    check([_every_edge()])
    # the id is the one the registry gave confluent's serializer for <topic>-value
    registered = ours.latest(f"{topic}-value")
    assert framing.schema_id(serialize(_every_edge(), _context(topic))) == registered.schema_id

    @_settings(40)
    @given(st.lists(EVERY_VALUES, min_size=1, max_size=4))
    def generated(records: list[dict[str, Any]]) -> None:
        check(records)

    generated()


def _order_v1(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "legacy": row["name"] * 2, "qty": row["qty"]}


_ORDER_ROWS = st.fixed_dictionaries(
    {"id": _I32, "name": st.text(max_size=10), "qty": st.floats(width=32)}
)
_ORDER_V2_ROWS = st.fixed_dictionaries(
    {
        "id": _I64,
        "name": st.text(max_size=10),
        "qty": st.floats(),
        "currency": st.sampled_from(["EUR", "USD", ""]),
        "note": st.none() | st.text(max_size=5),
        "tags": st.lists(_SHORT_TEXT, max_size=3),
        "status": st.sampled_from(["NEW", "DONE"]),
    }
)


@pytest.mark.integration
def test_evolved_subject_read_with_the_latest_schema_as_confluent_resolves_it(
    confluent: ConfluentRegistry, ours: SchemaRegistryClient
) -> None:
    topic = _topic()
    subject = f"{topic}-value"
    write_v1 = _serializer(confluent, ORDER_V1)
    write_v2 = _serializer(confluent, ORDER_V2)
    # register v1 then v2 (Apicurio's default compatibility, NONE, takes both)
    write_v1(_order_v1({"id": 0, "name": "", "qty": 0.0}), _context(topic))
    write_v2({"id": 0, "name": "", "qty": 0.0}, _context(topic))
    latest = ours.latest(subject)
    assert latest.version == 2
    assert json.loads(latest.schema.schema_str)["fields"][0]["type"] == "long"
    with_reader = _deserializer(confluent, ORDER_V2)
    with_latest = _deserializer(confluent, **{"use.latest.version": True})
    names = _named(ORDER_V2, {})

    def check(rows: list[tuple[AvroSerializer, dict[str, Any]]]) -> list[bytes]:
        values = [write(row, _context(topic)) for write, row in rows]
        by_reader = [with_reader(v, _context(topic)) for v in values]
        by_latest = [with_latest(v, _context(topic)) for v in values]
        assert _canon(by_latest) == _canon(by_reader)
        theirs = [_spark_view(ORDER_V2, r, names) for r in by_reader]
        assert _canon(_ours_decode(ours, values, latest.schema.schema_str)) == _canon(theirs)
        return values

    # both versions in one column (one decode_framed call, two writer schemas)
    v1_row = _order_v1({"id": -(2**31), "name": "old", "qty": 0.1})
    v2_row = {"id": 2**40, "name": "new", "qty": 0.1, "note": "n", "tags": ["t"]}
    mixed = check([(write_v1, v1_row), (write_v2, v2_row), (write_v1, v1_row)])
    assert framing.schema_id(mixed[0]) != framing.schema_id(mixed[1]) == latest.schema_id

    @_settings(40)
    @given(
        st.lists(
            st.one_of(
                _ORDER_ROWS.map(lambda r: (write_v1, _order_v1(r))),
                _ORDER_V2_ROWS.map(lambda r: (write_v2, r)),
            ),
            min_size=1,
            max_size=8,
        )
    )
    def generated(rows: list[tuple[AvroSerializer, dict[str, Any]]]) -> None:
        check(rows)

    generated()


#: Top-level types other than records, each with values (as fastavro takes them).
TOP_LEVEL: list[tuple[object, list[Any]]] = [
    ("string", ["", "top", "日本"]),
    ("long", [0, -(2**63), 2**63 - 1]),
    ("int", [-1, 2**31 - 1]),
    ("double", [1.5, float("-inf")]),
    ("float", [0.25, -0.0]),
    ("boolean", [True, False]),
    ({"type": "array", "items": "long"}, [[], [1, 2]]),
    ({"type": "map", "values": "string"}, [{}, {"a": "b"}]),
    (COLOR, ["RED", "GREEN"]),
    (["null", "string", "long"], ["s", 5]),
    (
        {"type": "long", "logicalType": "timestamp-micros"},
        [datetime.datetime(2020, 2, 29, tzinfo=UTC)],
    ),
]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("schema", "records"), TOP_LEVEL, ids=[json.dumps(schema) for schema, _ in TOP_LEVEL]
)
def test_top_level_types_both_ways(
    confluent: ConfluentRegistry, ours: SchemaRegistryClient, schema: object, records: list[Any]
) -> None:
    topic = _topic()
    names = _named(schema, {})
    values = [_serializer(confluent, schema)(r, _context(topic)) for r in records]
    deserialize = _deserializer(confluent)
    theirs = [_spark_view(schema, deserialize(v, _context(topic)), names) for v in values]
    assert _canon(_ours_decode(ours, values)) == _canon(theirs)
    # and back: our encoding of Spark's view, framed with the same id, reads as the source
    schema_id = framing.schema_id(values[0])
    source = [_spark_view(schema, r, names) for r in records]
    array = pa.array(source, type=to_spark(parse_schema(json.dumps(schema))).arrow)
    encoder = AvroEncoder(parse_schema(ours.schema_by_id(schema_id).schema_str), array.type)
    framed = [framing.build(schema_id, p) for p in encoder.encode(array)]
    back = [_spark_view(schema, deserialize(v, _context(topic)), names) for v in framed]
    assert _canon(back) == _canon(source)


@pytest.mark.integration
def test_top_level_bytes_written_by_confluent_decode_raw(
    confluent: ConfluentRegistry, ours: SchemaRegistryClient
) -> None:
    topic = _topic()
    # not b"": confluent's deserializer refuses a value of the 5-byte framing alone
    records = [b"hello", b"\x02a", b"\x00\x01"]
    values = [_serializer(confluent, "bytes")(r, _context(topic)) for r in records]
    assert [_deserializer(confluent)(v, _context(topic)) for v in values] == records
    assert values[0][framing.HEADER_SIZE :] == b"hello"  # raw: no length prefix
    assert _ours_decode(ours, values) == records


# -- 2. we write, confluent reads ---------------------------------------------------------------


@pytest.mark.integration
def test_our_encoded_records_read_back_by_confluent_unchanged(
    confluent: ConfluentRegistry, ours: SchemaRegistryClient
) -> None:
    topic = _topic()
    text = json.dumps(EVERY)
    schema_id = ours.register(f"{topic}-value", text)
    # the schema the registry holds for the id, as a consumer would fetch it
    schema = parse_schema(ours.schema_by_id(schema_id).schema_str)
    arrow_type = to_spark(schema).arrow
    encoder = AvroEncoder(schema, arrow_type, schema_id=schema_id)
    deserialize = _deserializer(confluent)
    names = _named(EVERY, {})

    def check(records: list[dict[str, Any]]) -> None:
        # the source rows: Spark's view of the records, as an Arrow array
        source = [_spark_view(EVERY, r, names) for r in records]
        array = pa.array(source, type=arrow_type)
        framed = [framing.build(schema_id, p) for p in encoder.encode(array)]
        assert all(framing.schema_id(v) == schema_id for v in framed)
        back = [_spark_view(EVERY, deserialize(v, _context(topic)), names) for v in framed]
        assert _canon(back) == _canon(source)

    check([_every_edge()])

    @_settings(40)
    @given(st.lists(EVERY_VALUES, min_size=1, max_size=4))
    def generated(records: list[dict[str, Any]]) -> None:
        check(records)

    generated()


# -- 3. header schema ids -----------------------------------------------------------------------


def _id_in_header(payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> bytes:
    """A ``schema.id.serializer``: the registry id in confluent's own encoding
    (``SchemaId.id_to_bytes``: 0x00 and 4 bytes) in the value's schema id header, the value
    left bare (as ``header_schema_id_serializer`` does with a GUID)."""
    assert ctx is not None and isinstance(ctx.headers, list)
    ctx.headers.append((framing.VALUE_SCHEMA_ID_HEADER, schema_id.id_to_bytes()))
    return payload


@pytest.mark.integration
def test_schema_id_in_a_header_decodes_with_ours(
    confluent: ConfluentRegistry, ours: SchemaRegistryClient
) -> None:
    topic = _topic()
    serialize = _serializer(confluent, EVERY, **{"schema.id.serializer": _id_in_header})
    deserialize = _deserializer(confluent)  # its default reads a header id first
    names = _named(EVERY, {})
    registered: list[int] = []

    @_settings(15)
    @given(EVERY_VALUES)
    def generated(record: dict[str, Any]) -> None:
        headers: list[tuple[str, bytes]] = []
        value = serialize(record, _context(topic, headers))
        schema_id = framing.header_id(headers)
        assert isinstance(schema_id, int)
        registered.append(schema_id)
        # bare: confluent's deserializer reads the value whole, finding the id in the header
        theirs = _spark_view(EVERY, deserialize(value, _context(topic, headers)), names)
        writer = parse_schema(ours.schema_by_id(schema_id).schema_str)
        (mine,) = AvroDecoder(writer).decode([value]).to_pylist()
        assert _canon(mine) == _canon(theirs)

    generated()
    assert set(registered) == {ours.latest(f"{topic}-value").schema_id}


def test_header_guids_and_ids_agree_with_confluents_schema_id() -> None:
    guid = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
    headers: list[tuple[str, bytes]] = [("other", b"x")]
    bare = header_schema_id_serializer(
        b"payload", _context("t", headers), SchemaId("AVRO", 12, str(guid))
    )
    assert bare == b"payload"
    assert framing.header_id(headers) == guid
    assert framing.header_id(headers, key=True) is None
    # ours built, confluent's parsed
    for ours_id in (guid, 0, 7, 2**31 - 1):
        parsed = SchemaId("AVRO")
        rest = parsed.from_bytes(io.BytesIO(framing.build_header_id(ours_id)))
        assert rest.read() == b""
        assert (parsed.guid if isinstance(ours_id, uuid.UUID) else parsed.id) == ours_id
        # and the prefix form: confluent's id bytes are ours
        if not isinstance(ours_id, uuid.UUID):
            assert SchemaId("AVRO", ours_id).id_to_bytes() == framing.build(ours_id, b"")


def test_fastavro_agrees_with_the_normalisation_on_the_edge_record() -> None:
    """The oracle's own round trip keeps the hand-written edge record (so a comparison failing
    above is about our side or the normalisation, not fastavro losing the record)."""
    parsed = fastavro.parse_schema(EVERY)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, _every_edge())
    back = fastavro.schemaless_reader(io.BytesIO(buf.getvalue()), parsed, parsed)
    names = _named(EVERY, {})
    assert _canon(_spark_view(EVERY, back, names)) == _canon(
        _spark_view(EVERY, _every_edge(), names)
    )
