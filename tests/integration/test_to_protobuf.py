"""``to_protobuf`` (spark-protobuf's signature) in a real Spark session: its output parses with
the protobuf package's own message class into the DataFrame's values."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import message_factory
from pyspark.sql import SparkSession

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.formats.protobuf import compile_proto, parse_descriptor_set
from spark_kafka_py.spark.functions import to_protobuf

pytestmark = pytest.mark.integration

PROTO = """
syntax = "proto3";
package fn;
message Point { enum Kind { A = 0; B = 1; } int32 x = 1; repeated string tags = 2; Kind kind = 3;
  map<string, double> weights = 4; }
"""


def test_to_protobuf_output_parses_with_protobuf(spark: SparkSession, tmp_path: Path) -> None:
    fds = compile_proto(PROTO, name="fn/point.proto")
    path = tmp_path / "point.desc"
    path.write_bytes(fds)
    Point = message_factory.GetMessageClass(
        parse_descriptor_set(fds).pool.FindMessageTypeByName("fn.Point")
    )
    df = spark.sql(
        "SELECT * FROM VALUES (1, named_struct('x', -3, 'tags', array('a', 'b'), 'kind', 'B', "
        "'weights', map('w', 0.5D))), (2, cast(null as struct<x:int,tags:array<string>,"
        "kind:string,weights:map<string,double>>)) AS t(k, p)"
    ).orderBy("k")
    by_path = df.select(to_protobuf("p", "fn.Point", str(path)).alias("b")).collect()
    inline = df.select(
        to_protobuf(df.p, "Point", binaryDescriptorSet=fds, options={"mode": "FAILFAST"}).alias("b")
    ).collect()
    assert [r.b for r in by_path] == [r.b for r in inline]
    assert by_path[1].b is None
    got = Point.FromString(bytes(by_path[0].b))
    assert got == Point(x=-3, tags=["a", "b"], kind=1, weights={"w": 0.5})
    with pytest.raises(ConfigError, match="no message 'Nope'"):
        to_protobuf("p", "Nope", binaryDescriptorSet=fds)
    with pytest.raises(ConfigError, match="one of descFilePath and binaryDescriptorSet"):
        to_protobuf("p", "Point")
