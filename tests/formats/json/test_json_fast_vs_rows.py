"""The fast path (pyarrow's reader) against the per-row path (which the from_json oracle
checks): generated documents decode to the same rows either way, whichever path the batch
takes, PERMISSIVE's corrupt records included; with the default options and with formats, a
zone and Jackson's features (:data:`OPTIONS`)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.formats.json.decode import JsonDecoder
from spark_kafka_py.formats.json.options import json_options


def _f(name: str, spark: object) -> dict[str, object]:
    return {"name": name, "type": spark, "nullable": True, "metadata": {}}


SCHEMA = {
    "type": "struct",
    "fields": [
        _f("a", "long"),
        _f("b", "string"),
        _f("d", "double"),
        _f("bo", "boolean"),
        _f("t", "timestamp"),
        _f("dt", "date"),
        _f("arr", {"type": "array", "elementType": "long", "containsNull": True}),
        _f("s", {"type": "struct", "fields": [_f("x", "long"), _f("t", "timestamp")]}),
        _f(
            "sa",
            {
                "type": "array",
                "elementType": {"type": "struct", "fields": [_f("x", "long")]},
                "containsNull": True,
            },
        ),
        _f("_corrupt_record", "string"),
    ],
}

KEYS = st.sampled_from(["a", "b", "d", "bo", "t", "dt", "arr", "s", "sa", "x", "A", "zz"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(
        ["2024-01-02T03:04:05Z", "2024-01-02", "2024-1-2 03:04", "2024-02-30", "x", "", "NaN"]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
LONGS = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TIMESTAMPS = st.sampled_from(
    ["2024-01-02T03:04:05Z", "2024-01-02 03:04:05.123+02:00", "2024", "1969-12-31T23:59:59.5Z"]
)
#: Documents of SCHEMA's types (mostly): the fast path's batches.
TYPED = st.fixed_dictionaries(
    {},
    optional={
        "a": st.none() | LONGS,
        "b": st.none() | st.text(max_size=8),
        "d": st.none() | st.floats(allow_nan=False, allow_infinity=False) | LONGS,
        "bo": st.none() | st.booleans(),
        "t": st.none() | TIMESTAMPS,
        "dt": st.none() | st.sampled_from(["2024-01-02", "2024-1-2", "1900-03-01 x"]),
        "arr": st.none() | st.lists(st.none() | LONGS, max_size=3),
        "s": st.none()
        | st.fixed_dictionaries({}, optional={"x": st.none() | LONGS, "t": TIMESTAMPS}),
        "sa": st.none()
        | st.lists(st.none() | st.fixed_dictionaries({}, optional={"x": LONGS}), max_size=3),
        "zz": VALUES,
    },
)
DOCS = st.one_of(
    TYPED.map(json.dumps),
    TYPED.map(lambda d: " " + json.dumps(d, separators=(",", ":")) + "\t"),
    st.dictionaries(KEYS, VALUES, max_size=6).map(json.dumps),
    st.dictionaries(KEYS, VALUES, max_size=6).map(lambda d: json.dumps(d, indent=1)),
    st.sampled_from(["", "  ", "null", "[]", "{", '{"a": 1} x', '{"a": 1, "a": "y"}']),
    st.none(),
)


def _rows(array: pa.Array) -> list[Any]:
    return [None if r is None else json.dumps(r, default=str) for r in array.to_pylist()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(DOCS, min_size=1, max_size=6))
def test_fast_and_per_row_paths_agree(docs: list[str | None]) -> None:
    # pyarrow's reader against the per-row path (the compiled path off in both: its own
    # differential test is test_json_accel.py)
    fast = JsonDecoder(SCHEMA, mode="PERMISSIVE", compiled=False)
    rows = JsonDecoder(SCHEMA, mode="PERMISSIVE", compiled=False)
    rows._fast_ok = False
    assert _rows(fast.decode(pa.array(docs))) == _rows(rows.decode(pa.array(docs)))
    # each alone: the fast path takes every document it can
    for doc in docs:
        assert _rows(fast.decode(pa.array([doc]))) == _rows(rows.decode(pa.array([doc])))


#: Strings for SCHEMA's timestamps and dates under :data:`OPTIONS`' formats (good, bad, in a
#: daylight-saving gap and overlap of Europe/Paris, after 2037).
FORMATTED = st.sampled_from(
    [
        "02/01/2024 03:04",
        "31/03/2024 02:30",
        "27/10/2024 02:30:15",
        "01/07/2040 12:00",
        "2/1/2024 3:04",
        "30/02/2024 00:00",
        "2024-01-02T03:04:05Z",
        "02.01.2024",
        "x",
    ]
)
FORMATTED_DOCS = st.fixed_dictionaries(
    {},
    optional={
        "a": st.none() | LONGS,
        "t": st.none() | FORMATTED,
        "dt": st.none() | FORMATTED,
        "s": st.none() | st.fixed_dictionaries({}, optional={"t": FORMATTED}),
        "zz": VALUES,
    },
).map(json.dumps)
OPTIONS = json_options(
    {
        "timestampFormat": "dd/MM/yyyy HH:mm[:ss]",
        "dateFormat": "dd.MM.yyyy",
        "timeZone": "Europe/Paris",
        "allowComments": "true",
        "allowUnquotedFieldNames": "true",
        "allowNumericLeadingZeros": "true",
    }
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        FORMATTED_DOCS | FORMATTED_DOCS.map(lambda d: d.replace('"', "'")) | DOCS,
        min_size=1,
        max_size=6,
    )
)
def test_fast_and_per_row_paths_agree_with_options(docs: list[str | None]) -> None:
    fast = JsonDecoder(SCHEMA, mode="PERMISSIVE", options=OPTIONS, compiled=False)
    rows = JsonDecoder(SCHEMA, mode="PERMISSIVE", options=OPTIONS, compiled=False)
    rows._fast_ok = False
    assert _rows(fast.decode(pa.array(docs))) == _rows(rows.decode(pa.array(docs)))
    for doc in docs:
        assert _rows(fast.decode(pa.array([doc]))) == _rows(rows.decode(pa.array([doc])))
