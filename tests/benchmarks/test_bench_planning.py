"""``spark-kafka-py bench planning`` at a tiny scale: the table, the topics of a case, and the
stream reader measure against the session broker (the Spark queries of both sources run in
``bench all``, tests/benchmarks/test_bench_smoke.py). Timings are never asserted."""

from __future__ import annotations

import pytest

from benchmarks.planning import (
    PARTITIONS_PER_TOPIC,
    PlanningResult,
    as_bench_results,
    bench_planning,
    format_planning_table,
    planning_topics,
)
from spark_kafka_py.cli import build_parser


def test_cli_registers_planning() -> None:
    args = build_parser().parse_args(["bench", "planning", "--planning-partitions", "1,3"])
    assert args.which == ["planning"] and args.planning_partitions == "1,3"
    default = build_parser().parse_args(["bench", "planning"])
    assert default.planning_partitions == "1,100,1000,10000"


def test_table_and_rows() -> None:
    r = PlanningResult(10_000, 10, 40.0, 120.0, 30.0, {"pykafka": [40.0], "kafka": [120.0]})
    assert r.ratio == 3.0
    table = format_planning_table([r])
    assert "| 10,000 (10) | 40.0 | 120.0 | 3.00 | 30.0 |" in table
    missing = PlanningResult(1, 1, 2.0, None, 1.0, {"reader": [1.0]}, note="absent")
    assert "| 1 (1) | 2.0 | - | - | 1.0 |" in format_planning_table([missing])
    assert "absent" in format_planning_table([missing])
    (row,) = as_bench_results([r])
    assert (row.bench, row.case, row.ours_s, row.peer_s) == (
        "planning",
        "10000 partitions",
        0.04,
        0.12,
    )


def test_topics_of_a_case_hold_at_most_1000_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    created: dict[str, int] = {}
    monkeypatch.setattr(
        "spark_kafka_py.testing.tools.create_topic",
        lambda bootstrap, name, partitions: created.__setitem__(name, partitions),
    )
    names = planning_topics("b:1", 10 * PARTITIONS_PER_TOPIC, "r")
    assert [created[n] for n in names] == [PARTITIONS_PER_TOPIC] * 10
    created.clear()
    assert [created[n] for n in planning_topics("b:1", PARTITIONS_PER_TOPIC + 3, "s")] == [
        501,
        502,
    ]
    created.clear()
    assert list(created.values()) == [] and len(planning_topics("b:1", 1, "u")) == 1


@pytest.mark.integration
def test_reader_measure(kafka_bootstrap: str) -> None:
    (result,) = bench_planning(None, kafka_bootstrap, [3], repeat=2)
    assert result.partitions == 3 and result.topics == 1 and result.kafka_ms is None
    assert len(result.samples["reader"]) == 2 and result.pykafka_ms == result.reader_ms
