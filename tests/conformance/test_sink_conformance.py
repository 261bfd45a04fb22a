"""Batch writes: ``df.write.format("pykafka")`` vs Spark's built-in ``df.write.format("kafka")``.

The same DataFrame is written once through each sink into twin topics (same partition counts,
fresh per scenario) and read back with Kafka's own Java KafkaConsumer (:func:`read_all`), never
with our reader. Compared:

- the same records (key, value, headers) in the same topic-partitions (Spark's sink puts a
  keyed record where Kafka's Java partitioner does, an explicit ``partition`` where it says);
- per topic-partition and key, the same order (the rows of one key come from one Spark task:
  the DataFrame is two slices with disjoint keys, so the order is the task's row order);
- both against the rows given, so two equally wrong sinks cannot pass.

Records with neither key nor ``partition`` go where the sticky partitioner puts them, which is
not deterministic (Java's uniform sticky partitioner switches partitions by batch fill and
broker load); for those only the topic's contents are compared.

The DataFrame carries keys, null keys, unicode, empty, null and 1 MB (1,000,000-byte) values,
headers (none, empty, repeated keys, null values, non-ASCII keys), explicit partitions, a
``topic`` column naming two topics, and a run where the ``topic`` option overrides the column.
1,000,000 bytes plus the record overhead stay under Java's ``max.request.size`` default
(1,048,576) and the broker's ``message.max.bytes`` default (1,048,588), so neither sink needs a
setting changed for them.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_kafka_py.testing.tools import (
    ConsumedRecord,
    create_topic,
    get_offsets,
    list_topics,
    read_all,
)

from .harness import OURS, THEIRS, assert_both_writes_fail, save

pytestmark = pytest.mark.integration

PARTITIONS = 3
#: One value of this many bytes (1 MB).
BIG = 1_000_000
#: Spark tasks (DataFrame slices) writing; the keys of one slice are not in the other.
SLICES = 2

HEADERS = "array<struct<key:string,value:binary>>"
#: ``(role, key, value, headers)``; role names the topic among the scenario's topics.
Content = tuple[str, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


def _headers(i: int) -> list[tuple[str, bytes | None]] | None:
    kind = i % 4
    if kind == 0:
        return None
    if kind == 1:
        return []
    if kind == 2:
        return [("h", str(i).encode()), ("h", None)]
    return [("é-ü", b"\x00\xff"), ("x", b"")]


def _value(i: int) -> str | None:
    if i == 7:
        return "x" * BIG
    if i % 13 == 5:
        return ""
    if i % 17 == 9:
        return None
    return f"v{i}-é-日本-{i}"


def mixed_rows(count: int) -> list[tuple[Any, ...]]:
    """``(key, value, headers, partition)`` rows; the first half's keys start with ``a``, the
    second half's with ``b`` (one slice each). Every 10th row has no key and an explicit
    partition, except every 40th, which has neither (left to the sticky partitioner)."""
    rows = []
    for i in range(count):
        half = "a" if i < count // SLICES else "b"
        if i % 10 == 3:
            key = None
            partition = None if i % 40 == 3 else i % PARTITIONS
        else:
            key = f"{half}-k{i % 7}" if i % 2 else f"{half}-ключ-{i % 3}-🙂"
            partition = i % PARTITIONS if i % 5 == 0 else None
        rows.append((key, _value(i), _headers(i), partition))
    return rows


def frame(spark: SparkSession, rows: Sequence[tuple[Any, ...]], schema: str) -> DataFrame:
    """``rows`` as a DataFrame of :data:`SLICES` contiguous slices (one Spark task each)."""
    return spark.createDataFrame(spark.sparkContext.parallelize(rows, SLICES), schema)


def _encode(data: str | bytes | None) -> bytes | None:
    return data.encode("utf-8") if isinstance(data, str) else data


def expected(rows: Sequence[tuple[Any, ...]], role: Callable[[int], str]) -> Counter[Content]:
    """What the rows ``(key, value, headers, ...)`` should become, ``role(i)`` naming row i's
    topic: null and empty headers are both no headers."""
    return Counter(
        (role(i), _encode(r[0]), _encode(r[1]), tuple((k, v) for k, v in (r[2] or ())))
        for i, r in enumerate(rows)
    )


def twin_topics(bootstrap: str, roles: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per sink, fresh topics of :data:`PARTITIONS` partitions by role."""
    run = uuid.uuid4().hex[:8]
    topics = {
        fmt: {role: f"sink-conf-{run}-{fmt}-{role}" for role in roles} for fmt in (OURS, THEIRS)
    }
    for by_role in topics.values():
        for topic in by_role.values():
            create_topic(bootstrap, topic, PARTITIONS)
    return topics


def read_back(
    bootstrap: str, topics: dict[str, dict[str, str]]
) -> dict[str, list[tuple[str, ConsumedRecord]]]:
    """Per sink, ``(role, record)`` of every record of its topics, by Kafka's Java consumer
    (one run over all the topics)."""
    owner = {topic: (fmt, role) for fmt, roles in topics.items() for role, topic in roles.items()}
    out: dict[str, list[tuple[str, ConsumedRecord]]] = {fmt: [] for fmt in topics}
    for r in read_all(bootstrap, list(owner)):
        fmt, role = owner[r.topic]
        out[fmt].append((role, r))
    return out


def content(role: str, r: ConsumedRecord) -> Content:
    return (role, r.key, r.value, r.headers)


def placed(records: list[tuple[str, ConsumedRecord]]) -> Counter[tuple[int, Content]]:
    """``(partition, content)`` of the records whose partition is determined: all but those
    written with neither key nor partition (:func:`_sticky`)."""
    return Counter((r.partition, content(role, r)) for role, r in records if not _sticky(r))


def _sticky(r: ConsumedRecord) -> bool:
    """A record written with neither key nor partition (its value starts with ``sticky``)."""
    return r.key is None and r.value is not None and r.value.startswith(b"sticky")


def key_orders(
    records: list[tuple[str, ConsumedRecord]],
) -> dict[tuple[str, int, bytes], list[Content]]:
    """Per ``(role, partition, key)``, the records in offset order."""
    out: dict[tuple[str, int, bytes], list[Content]] = defaultdict(list)
    for role, r in records:  # read_all sorts by topic, partition, offset
        if r.key is not None:
            out[(role, r.partition, r.key)].append(content(role, r))
    return dict(out)


def assert_same_writes(
    bootstrap: str,
    topics: dict[str, dict[str, str]],
    want: Counter[Content],
) -> None:
    """Both sinks wrote ``want`` (contents), in the same partitions, same order per key."""
    got = read_back(bootstrap, topics)
    for fmt in (THEIRS, OURS):
        assert Counter(content(role, r) for role, r in got[fmt]) == want, fmt
    assert placed(got[OURS]) == placed(got[THEIRS])
    assert key_orders(got[OURS]) == key_orders(got[THEIRS])


def test_mixed_rows_land_alike(spark: SparkSession, kafka_bootstrap: str) -> None:
    rows = mixed_rows(1200)
    # the rows left to the sticky partitioner are told apart by their values
    rows = [
        (k, f"sticky-{i}" if k is None and p is None else v, h, p)
        for i, (k, v, h, p) in enumerate(rows)
    ]
    assert sum(1 for k, _, _, p in rows if k is None and p is None) >= 10
    assert any(v is not None and len(v) == BIG for _, v, _, _ in rows)
    schema = f"key string, value string, headers {HEADERS}, partition int"
    topics = twin_topics(kafka_bootstrap, ["t"])
    for fmt in (THEIRS, OURS):
        save(frame(spark, rows, schema), fmt, kafka_bootstrap, {"topic": topics[fmt]["t"]})
    assert_same_writes(kafka_bootstrap, topics, expected(rows, lambda i: "t"))


def test_topic_column_naming_two_topics(spark: SparkSession, kafka_bootstrap: str) -> None:
    base = [
        (
            None if k is None else k.encode(),
            None if v is None else (v.encode() if i != 7 else b"\x00" * 10),
            h,
            p,
        )
        for i, (k, v, h, p) in enumerate(mixed_rows(400))
        if not (k is None and p is None)
    ]
    schema = f"key binary, value binary, headers {HEADERS}, partition int, topic string"
    topics = twin_topics(kafka_bootstrap, ["a", "b"])
    roles = ("a", "b")
    for fmt in (THEIRS, OURS):
        rows = [(*r, topics[fmt][roles[i % 2]]) for i, r in enumerate(base)]
        save(frame(spark, rows, schema), fmt, kafka_bootstrap, {})
    assert_same_writes(kafka_bootstrap, topics, expected(base, lambda i: roles[i % 2]))


def test_topic_option_overrides_the_column(spark: SparkSession, kafka_bootstrap: str) -> None:
    elsewhere = f"sink-conf-not-created-{uuid.uuid4().hex[:8]}"  # auto-creation is off
    base = [r for r in mixed_rows(300) if not (r[0] is None and r[3] is None)]
    rows = [(*r, elsewhere) for r in base]
    schema = f"key string, value string, headers {HEADERS}, partition int, topic string"
    topics = twin_topics(kafka_bootstrap, ["t"])
    for fmt in (THEIRS, OURS):
        save(frame(spark, rows, schema), fmt, kafka_bootstrap, {"topic": topics[fmt]["t"]})
    assert_same_writes(kafka_bootstrap, topics, expected(base, lambda i: "t"))
    assert elsewhere not in list_topics(kafka_bootstrap)


def test_int_value_fails_before_writing(spark: SparkSession, kafka_bootstrap: str) -> None:
    topics = twin_topics(kafka_bootstrap, ["t"])
    errors = assert_both_writes_fail(
        lambda fmt: spark.createDataFrame([("k", 1)], "key string, value int").withColumn(
            "topic", F.lit(topics[fmt]["t"])
        ),
        kafka_bootstrap,
        r"value attribute unsupported type int\b.*string or binary",
        {},
    )
    assert "value" in errors[THEIRS], errors[THEIRS][:2000]
    for fmt in (OURS, THEIRS):
        assert sum(get_offsets(kafka_bootstrap, topics[fmt]["t"]).values()) == 0, fmt
