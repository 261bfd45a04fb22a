"""``benchmarks/read_cpu.py``: CPU per record of decode alone and of fetch + decode, on a real
broker at a tiny scale (the figures themselves are not asserted: they are measurements)."""

from __future__ import annotations

import uuid

import pytest

from benchmarks.harness import produce_bench_data
from benchmarks.read_cpu import measure


@pytest.mark.integration
def test_both_modes_read_every_record_of_the_topic(kafka_bootstrap):
    topic = f"read-cpu-{uuid.uuid4().hex[:8]}"
    produce_bench_data(kafka_bootstrap, topic, 600, partitions=2)
    for mode in ("decode", "fetch"):
        passes = measure(kafka_bootstrap, topic, mode, 2)
        assert [rows for _, _, rows in passes] == [600, 600], mode
        assert all(ns > 0 for ns, _, _ in passes)
    with pytest.raises(ValueError, match="unknown mode"):
        measure(kafka_bootstrap, topic, "both", 1)
