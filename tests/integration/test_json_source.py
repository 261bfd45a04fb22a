"""``valueFormat=json`` / ``keyFormat=json`` on reads: a real broker, real Spark.

Documents (good, partial, malformed, empty, tombstones) are written by Kafka's Java producer
(``testing.tools.produce``); the same topic is read by Spark's own ``format("kafka")`` with
``from_json(CAST(value AS STRING), schema, options)``, the oracle, and by ``format("pykafka")``
with ``valueFormat=json``: the rows must be equal, row for row, in ``PERMISSIVE`` (the
default, as ``from_json``'s) with and without a corrupt-record column; ``FAILFAST`` fails
naming the topic-partition and offset of the first bad document.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_kafka_py.testing.tools import ProducedRecord, produce

pytestmark = pytest.mark.integration

SCHEMA = (
    "id BIGINT, name STRING, score DOUBLE, ok BOOLEAN, day DATE, at TIMESTAMP, "
    "tags ARRAY<STRING>, inner STRUCT<x: INT, ys: ARRAY<BIGINT>>, attrs MAP<STRING, INT>"
)
SCHEMA_CORRUPT = SCHEMA + ", _corrupt_record STRING"

DOCS: list[bytes | None] = [
    b'{"id": 1, "name": "ann", "score": 1.5, "ok": true, "day": "2026-11-27", '
    b'"at": "2026-11-27T12:00:00Z", "tags": ["a", "b"], "inner": {"x": 3, "ys": [1, 2]}, '
    b'"attrs": {"k": 1}}',
    b'{"id": 2, "name": null, "extra": [1, {"z": 2}]}',
    b'{"id": 3, "score": 7, "at": "2026-11-27 12:00:01.123456+01:00", "day": "2026-1-2"}',
    b'{"id": "4", "name": "wrong id type"}',  # a bad value: partial row
    b'{"id": 5, "inner": {"x": "nope", "ys": [1]}}',  # a bad nested value
    b'{"id": 6, "name": "trailing"} garbage',  # trailing text ignored
    b'{"id": 7, "name": ',  # truncated: malformed
    b"[1, 2, 3]",  # not an object
    b"",  # empty: a null row
    b"   ",
    None,  # a tombstone
    b'{"name": "\\u00e9t\\u00e9 \\ud83d\\ude00", "tags": []}',
    b'{"id": 9223372036854775807, "score": -1e308, "ok": false, "attrs": {}}',
    b'{"id": 10, "at": 1700000000, "tags": [null, "x"]}',
    b'{"id": 11, "day": "2024-02-30"}',  # impossible date: a bad value
    b"not json at all",
]


def _produce(bootstrap: str, topic: str) -> None:
    produce(bootstrap, topic, [ProducedRecord(f"k{i}".encode(), d) for i, d in enumerate(DOCS)])


def _ours(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    reader = spark.read.format("pykafka").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic).option("valueFormat", "json")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _oracle(
    spark: SparkSession, bootstrap: str, topic: str, schema: str, **options: str
) -> DataFrame:
    df = (
        spark.read.format("kafka")  # Spark's own connector
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
    )
    return df.select(
        "offset", F.from_json(F.col("value").cast("string"), schema, options).alias("value")
    )


def _rows(df: DataFrame) -> list[tuple[int, object]]:
    return [(r.offset, r.value) for r in df.select("offset", "value").orderBy("offset").collect()]


@pytest.mark.parametrize("schema", [SCHEMA, SCHEMA_CORRUPT], ids=["plain", "corrupt_column"])
def test_permissive_rows_equal_from_json(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str], schema: str
) -> None:
    topic = new_topic()
    _produce(kafka_bootstrap, topic)
    ours = _ours(spark, kafka_bootstrap, topic, valueSchema=schema)
    oracle = _oracle(spark, kafka_bootstrap, topic, schema)
    assert ours.schema["value"].dataType == oracle.schema["value"].dataType
    got, want = _rows(ours), _rows(oracle)
    assert len(got) == len(DOCS)
    assert got == want
    # the corrupt-record column really holds the malformed documents
    if schema == SCHEMA_CORRUPT:
        corrupt = {o: v["_corrupt_record"] for o, v in got if v is not None}
        assert corrupt[6] == '{"id": 7, "name": '
        assert corrupt[3] == '{"id": "4", "name": "wrong id type"}'
        assert corrupt[0] is None


def test_structtype_json_and_explicit_mode_and_renamed_corrupt_column(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    from pyspark.sql.types import StructType

    topic = new_topic()
    _produce(kafka_bootstrap, topic)
    ddl = SCHEMA + ", bad STRING"
    as_json = StructType.fromDDL(ddl).json()
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "bad"}
    ours = _ours(spark, kafka_bootstrap, topic, valueSchema=as_json, **options)
    oracle = _oracle(spark, kafka_bootstrap, topic, ddl, **options)
    assert _rows(ours) == _rows(oracle)


def test_failfast_names_the_first_bad_record(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    _produce(kafka_bootstrap, topic)
    oracle = _oracle(spark, kafka_bootstrap, topic, SCHEMA, mode="FAILFAST")
    with pytest.raises(Exception, match="MALFORMED_RECORD_IN_PARSING"):
        oracle.collect()
    ours = _ours(spark, kafka_bootstrap, topic, valueSchema=SCHEMA, mode="FAILFAST")
    with pytest.raises(Exception, match=rf"the value of {topic}-0 at offset 3 as JSON"):
        ours.collect()
    # the good records before it read in FAILFAST
    good = _ours(
        spark,
        kafka_bootstrap,
        topic,
        valueSchema=SCHEMA,
        mode="FAILFAST",
        endingOffsets=f'{{"{topic}": {{"0": 3}}}}',
    )
    assert [r.value.id for r in good.orderBy("offset").collect()] == [1, 2, 3]


def test_json_key_and_raw_bytes(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    produce(
        kafka_bootstrap,
        topic,
        [
            ProducedRecord(b'{"k": 1}', b'{"v": "a"}'),
            ProducedRecord(b'{"k": "x"}', b"{bad"),
        ],
    )
    df = _ours(
        spark,
        kafka_bootstrap,
        topic,
        keyFormat="json",
        keySchema="k INT",
        valueSchema="v STRING",
        includeRawBytes="true",
    )
    rows = [
        (r.key, r.value, r.key_raw, r.value_raw)
        for r in df.select("key", "value", "key_raw", "value_raw").orderBy("offset").collect()
    ]
    assert [(k.k, v.v, bytes(kr), bytes(vr)) for k, v, kr, vr in rows] == [
        (1, "a", b'{"k": 1}', b'{"v": "a"}'),
        (None, None, b'{"k": "x"}', b"{bad"),
    ]


def test_planning_refusals(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    with pytest.raises(Exception, match="'valueFormat'='json' needs 'valueSchema'"):
        _ours(spark, kafka_bootstrap, topic).schema  # noqa: B018 - planning is the check
    with pytest.raises(Exception, match=r"Option 'valueSchema' is not a Spark schema.*NOPE"):
        _ours(spark, kafka_bootstrap, topic, valueSchema="a NOPE").schema  # noqa: B018
    with pytest.raises(Exception, match="not read from JSON here"):
        _ours(spark, kafka_bootstrap, topic, valueSchema="a MAP<INT, INT>").schema  # noqa: B018


OPTION_DOCS: list[bytes | None] = [
    b"{'id': 1, 'name': 'single', 'at': '27/11/2026 12:00:00.5', 'day': '27.11.2026'}",
    b'{"id": 2, /* a comment */ "at": "01/07/2026 08:30:00"}',
    b"{id: 3, name: 'unquoted'}",
    b'{"id": 007, "score": -INF}',
    b'{"id": 5, "at": "2026-11-27T12:00:00Z", "day": "2026-11-27"}',  # ISO: not the formats
    b'{"id": 6, "name": "a\\qb"}',
    b'{"id": 7, "at": "31/02/2026 00:00:00"}',  # impossible date: a bad value
]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {
            "timestampFormat": "dd/MM/yyyy HH:mm:ss[.SSS]",
            "dateFormat": "dd.MM.yyyy",
            "timeZone": "America/New_York",
            "allowComments": "true",
            "allowUnquotedFieldNames": "true",
            "allowNumericLeadingZeros": "true",
            "allowBackslashEscapingAnyCharacter": "true",
        },
        {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false", "timeZone": "+05:30"},
    ],
    ids=["defaults", "lenient_and_formats", "strict"],
)
def test_from_json_options_rows_equal(
    spark: SparkSession,
    kafka_bootstrap: str,
    new_topic: Callable[..., str],
    options: dict[str, str],
) -> None:
    topic = new_topic()
    produce(
        kafka_bootstrap,
        topic,
        [ProducedRecord(f"k{i}".encode(), d) for i, d in enumerate(OPTION_DOCS)],
    )
    ours = _ours(spark, kafka_bootstrap, topic, valueSchema=SCHEMA_CORRUPT, **options)
    oracle = _oracle(spark, kafka_bootstrap, topic, SCHEMA_CORRUPT, **options)
    got, want = _rows(ours), _rows(oracle)
    assert len(got) == len(OPTION_DOCS)
    assert got == want
    # the options changed what was read: documents 0-3 are good only with them
    corrupt = [o for o, v in got if v is not None and v["_corrupt_record"] is not None]
    if options.get("allowComments"):
        assert corrupt == [4, 6]
    else:
        assert 2 in corrupt


def test_from_json_option_refusals(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    with pytest.raises(Exception, match=r"Option 'timestampFormat'.*'Y'"):
        df = _ours(spark, kafka_bootstrap, topic, valueSchema=SCHEMA, timestampFormat="YYYY")
        df.schema  # noqa: B018 - planning is the check
