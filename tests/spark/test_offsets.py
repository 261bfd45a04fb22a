"""The checkpoint offset dicts at the stream reader's per-micro-batch scale: canonical order
whatever the input order, ``TopicPartition`` keys, each offset set converted once per reader
(``SparkOffsets``), bad shapes."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.offsets import SparkOffsets, from_offset_dict, to_offset_dict


def reference_to_offset_dict(data: dict[TopicPartition, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(data):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(data[tp])
    return out


def test_canonical_order_for_any_input_order() -> None:
    rng = random.Random(7)
    items = [
        (TopicPartition(f"t{t}", p), rng.randrange(10**12))
        for t in (3, 1, 10, 2)
        for p in range(120)
    ]
    rng.shuffle(items)
    data = dict(items)
    got = to_offset_dict(data)
    want = reference_to_offset_dict(data)
    assert got == want
    assert list(got) == ["t1", "t10", "t2", "t3"]  # topics sorted as strings
    assert all(list(got[t]) == [str(p) for p in range(120)] for t in got)  # partitions as ints
    assert from_offset_dict(got) == data


def test_keys_are_topic_partitions() -> None:
    got = from_offset_dict({"t": {"1": 7, "0": 8}})
    assert got == {TopicPartition("t", 0): 8, TopicPartition("t", 1): 7}
    assert all(type(tp) is TopicPartition for tp in got)
    assert from_offset_dict({}) == {} and from_offset_dict(None) == {}


def test_spark_offsets_convert_each_offset_set_once() -> None:
    memo = SparkOffsets()
    end = {TopicPartition("t", 1): 7, TopicPartition("t", 0): 5}
    handed = memo.dump(end)
    assert handed == {"t": {"0": 5, "1": 7}}
    # PySpark hands it back parsed from JSON: equal, not the same object
    again = json.loads(json.dumps(handed))
    assert memo.parse(again) is end
    start = {"t": {"0": 1, "1": 2}}
    parsed = memo.parse(start)
    assert parsed == {TopicPartition("t", 0): 1, TopicPartition("t", 1): 2}
    assert memo.parse(json.loads(json.dumps(start))) is parsed


def test_spark_offsets_see_changed_dicts() -> None:
    memo = SparkOffsets()
    handed = memo.dump({TopicPartition("t", 0): 5})
    handed["t"]["0"] = 6  # theirs to change: the memo kept a copy
    assert memo.parse(handed) == {TopicPartition("t", 0): 6}
    given = {"t": {"0": 1}}
    assert memo.parse(given) == {TopicPartition("t", 0): 1}
    given["t"]["0"] = 2
    assert memo.parse(given) == {TopicPartition("t", 0): 2}


def test_spark_offsets_keep_the_last_few_and_pickle_empty() -> None:
    memo = SparkOffsets()
    first = memo.parse({"t": {"0": 0}})
    for n in range(1, SparkOffsets.KEEP + 1):
        memo.parse({"t": {"0": n}})
    assert memo.parse({"t": {"0": 0}}) is not first  # forgotten: parsed again, equal
    assert memo.parse({"t": {"0": 0}}) == first
    assert pickle.loads(pickle.dumps(memo))._known == []


@pytest.mark.parametrize(
    "bad",
    [{"t": {"zero": 1}}, {"t": {"0": "x"}}, {"t": [1, 2]}, {"t": {"0": None}}],
    ids=["partition", "offset", "list", "none"],
)
def test_bad_shapes_raise_config_error(bad: dict) -> None:
    with pytest.raises(ConfigError, match="Checkpointed offsets are not of the form"):
        from_offset_dict(bad)
