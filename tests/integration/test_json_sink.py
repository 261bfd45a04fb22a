"""``valueFormat=json`` / ``keyFormat=json`` on writes: a real broker, real Spark.

A DataFrame of struct / map / array columns is written by ``format("pykafka")`` with
``valueFormat=json``; the records are read back by Kafka's Java consumer
(``testing.tools.read_all``) and their bytes compared with what Spark's own ``to_json`` gives
for the same rows (the session's zone is UTC, as ``testing/spark`` sets it), and with what
Spark's ``format("kafka")`` writes for ``to_json(value)`` on another topic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from spark_kafka_py.testing.tools import read_all

pytestmark = pytest.mark.integration

ROWS_SQL = """
SELECT * FROM VALUES
  (1, named_struct('id', 1L, 'name', 'ann', 'score', 1.5D, 'at', timestamp'2026-11-27 12:00:00.123',
      'day', date'2026-11-27', 'tags', array('a', 'b'), 'attrs', map('k', 1),
      'amount', cast(12.50 as decimal(10,2)), 'raw', X'00FF')),
  (2, named_struct('id', 2L, 'name', cast(null as string), 'score', double('NaN'),
      'at', cast(null as timestamp), 'day', date'0001-01-01', 'tags', array(cast(null as string)),
      'attrs', map('x', cast(null as int)), 'amount', cast(0.01 as decimal(10,2)),
      'raw', cast(null as binary))),
  (3, cast(null as struct<id:bigint,name:string,score:double,at:timestamp,day:date,
      tags:array<string>,attrs:map<string,int>,amount:decimal(10,2),raw:binary>)),
  (4, named_struct('id', -9223372036854775808L, 'name', 'quote " slash \\\\ tab \t é 😀',
      'score', 1e-7D, 'at', timestamp'1969-12-31 23:59:59.999999', 'day', date'9999-12-31',
      'tags', cast(array() as array<string>), 'attrs', cast(map() as map<string,int>),
      'amount', cast(-99999999.99 as decimal(10,2)), 'raw', X''))
AS t(k, value)
"""


def _rows(spark: SparkSession) -> DataFrame:
    return spark.sql(ROWS_SQL)


def _write(df: DataFrame, fmt: str, bootstrap: str, topic: str, **options: str) -> None:
    w = df.write.format(fmt).mode("append").option("kafka.bootstrap.servers", bootstrap)
    w = w.option("topic", topic)
    for k, v in options.items():
        w = w.option(k, v)
    w.save()


def _values(bootstrap: str, topic: str) -> list[tuple[Any, Any]]:
    records = sorted(read_all(bootstrap, topic), key=lambda r: (r.partition, r.offset))
    return [(r.key, r.value) for r in records]


def test_values_are_to_json_bytes(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    ours, theirs = new_topic(), new_topic()
    df = _rows(spark).orderBy("k").coalesce(1)  # one task: records in k order
    _write(df.select("value"), "pykafka", kafka_bootstrap, ours, valueFormat="json")
    _write(
        df.selectExpr("to_json(value) AS value"), "kafka", kafka_bootstrap, theirs
    )  # Spark's own sink
    expected = [
        None if r.j is None else r.j.encode()
        for r in df.selectExpr("to_json(value) AS j").collect()
    ]
    got = [v for _, v in _values(kafka_bootstrap, ours)]
    assert got == expected
    assert got == [v for _, v in _values(kafka_bootstrap, theirs)]
    assert got[2] is None  # a null struct is a tombstone, as to_json(null) is null
    assert got[0] == (
        b'{"id":1,"name":"ann","score":1.5,"at":"2026-11-27T12:00:00.123Z","day":"2026-11-27",'
        b'"tags":["a","b"],"attrs":{"k":1},"amount":12.50,"raw":"AP8="}'
    )


def test_json_key_map_and_array_values(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    df = spark.sql(
        "SELECT named_struct('k', k) AS key, map('n', k, 'twice', k * 2) AS value "
        "FROM VALUES (1), (2) AS t(k)"
    ).coalesce(1)
    _write(df, "pykafka", kafka_bootstrap, topic, keyFormat="json", valueFormat="json")
    assert _values(kafka_bootstrap, topic) == [
        (b'{"k":1}', b'{"n":1,"twice":2}'),
        (b'{"k":2}', b'{"n":2,"twice":4}'),
    ]
    arrays = new_topic()
    _write(
        spark.sql("SELECT array(1, null, 3) AS value"),
        "pykafka",
        kafka_bootstrap,
        arrays,
        valueFormat="json",
    )
    assert _values(kafka_bootstrap, arrays) == [(None, b"[1,null,3]")]


def test_refused_at_planning(
    spark: SparkSession, kafka_bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    with pytest.raises(Exception, match=r"cannot be written as JSON.*'valueFormat'='binary'"):
        _write(
            spark.sql("SELECT 'x' AS value"), "pykafka", kafka_bootstrap, topic, valueFormat="json"
        )
    with pytest.raises(Exception, match="internal form"):
        _write(
            spark.sql("SELECT map(date'2020-01-01', 1) AS value"),
            "pykafka",
            kafka_bootstrap,
            topic,
            valueFormat="json",
        )
    assert read_all(kafka_bootstrap, topic) == []
