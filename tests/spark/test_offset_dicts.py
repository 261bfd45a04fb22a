"""The checkpoint offset dicts at the stream reader's per-micro-batch scale: canonical order
whatever the input order, the reused ``TopicPartition`` keys, the cache bound, bad shapes."""

from __future__ import annotations

import random

import pytest

from spark_kafka_py.consumer.types import TopicPartition
from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark import offsets
from spark_kafka_py.spark.offsets import from_offset_dict, to_offset_dict


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


def test_keys_are_topic_partitions_reused_across_calls() -> None:
    first = from_offset_dict({"reuse": {"0": 5, "1": 6}})
    second = from_offset_dict({"reuse": {"1": 7, "0": 8}})
    assert all(type(tp) is TopicPartition for tp in first)
    a, b = sorted(first), sorted(second)
    assert a == [TopicPartition("reuse", 0), TopicPartition("reuse", 1)]
    assert a[0] is b[0] and a[1] is b[1]
    assert second == {TopicPartition("reuse", 0): 8, TopicPartition("reuse", 1): 7}


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offsets, "TOPIC_PARTITION_CACHE_MAX", 10)
    for i in range(10):
        from_offset_dict({f"bound-{i}": {str(p): p for p in range(5)}})
        assert offsets._tp_cache_size <= 10 + 5
    assert len(offsets._tp_cache) <= 3


def test_the_cache_is_bounded_for_one_topic_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offsets, "TOPIC_PARTITION_CACHE_MAX", 10)
    for i in range(10):  # one topic, new partitions each call
        from_offset_dict({"grows": {str(p): p for p in range(5 * i, 5 * i + 5)}})
        assert offsets._tp_cache_size <= 10 + 5


@pytest.mark.parametrize(
    "bad",
    [{"t": {"zero": 1}}, {"t": {"0": "x"}}, {"t": [1, 2]}, {"t": {"0": None}}],
    ids=["partition", "offset", "list", "none"],
)
def test_bad_shapes_raise_config_error(bad: dict) -> None:
    with pytest.raises(ConfigError, match="Checkpointed offsets are not of the form"):
        from_offset_dict(bad)
