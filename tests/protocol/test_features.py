"""metadata.version levels -> Kafka release lines, and the releases our newer APIs need."""

from __future__ import annotations

import pytest

from spark_kafka_py.protocol.features import api_requirement, release_of_metadata_level


@pytest.mark.parametrize(
    ("level", "release"),
    [
        (0, None),
        (1, "3.0"),
        (7, "3.3"),
        (14, "3.6"),  # 3.6-IV2: what a fresh 3.6.2 cluster finalizes
        (21, "3.9"),
        (25, "4.0"),
        (30, "4.3"),
        (33, "4.4"),
        (34, "after 4.4"),
    ],
)
def test_release_of_metadata_level(level: int, release: str | None) -> None:
    assert release_of_metadata_level(level) == release


def test_api_requirement() -> None:
    assert "KIP-848" in api_requirement(68) and "4.0" in api_requirement(68)
    assert "KIP-664" in api_requirement(65)
    assert api_requirement(1) == ""  # Fetch: every broker serves it
