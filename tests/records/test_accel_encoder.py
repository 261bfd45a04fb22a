"""The accelerated records-section encoder (``records._accel``, Cython) against the pure one.

:func:`~spark_kafka_py.records.encoder.encode_records_section` is the producer's hot path.
Its pure reference (``_encode_records_section_pure``) and the accelerated twin
(``encode_records_section_accel``) get the same inputs: hypothesis-generated key/value columns
of every accepted type (binary, large_binary, string, large_string, null type, ``None``), with
nulls and empty values, sliced, chunked, with and without headers; random starts, budgets,
offset deltas and timestamp deltas (negative too). They must return the same bytes and the
same row count, or raise the same error (class, message, ``column``).

The pure function is anchored too: its bytes are :func:`encode_record`'s, row after row, and
its budget rule is the documented one. One vector goes through Kafka's own Java code
(``MemoryRecordsBuilder`` via ``java/RecordBatchTool.java``): a batch built around
accelerated sections equals Java's bytes.
"""

from __future__ import annotations

import base64
import itertools
import os
import struct
import subprocess
import sys

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.errors import InvalidRecordError
from spark_kafka_py.records import encoder
from spark_kafka_py.records.encoder import (
    Rows,
    _encode_records_section_pure,
    build_batch,
    encode_record,
    record_size,
)

from .accel import accel, encode_records_section_accel
from .test_encoder import java_build_commands, java_tool

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
BINARY_TYPES = [pa.binary(), pa.large_binary()]
STRING_TYPES = [pa.string(), pa.large_string()]
HEADER_STRUCT = pa.struct([("key", pa.string()), ("value", pa.binary())])
INT64 = (-(2**63), 2**63 - 1)


def outcome(fn, *args, **kwargs) -> tuple:
    """``("ok", result)`` or ``("error", class, message, column)``."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # compared, never swallowed: the two outcomes must be equal
        return ("error", type(exc), str(exc), getattr(exc, "column", None))


def both(*args, **kwargs) -> tuple:
    """The outcome of both implementations, asserted equal."""
    pure = outcome(_encode_records_section_pure, *args, **kwargs)
    accel = outcome(encode_records_section_accel, *args, **kwargs)
    assert accel == pure
    return pure


# ---- strategies ---------------------------------------------------------------------------


@st.composite
def binary_columns(draw, n: int) -> pa.Array | None:
    """A key or value column of ``n`` rows: any accepted type, nulls, sliced or not."""
    kind = draw(st.sampled_from(["none", "null", "binary", "string"]))
    if kind == "none":
        return None
    if kind == "null":
        return pa.nulls(n)
    typ = draw(st.sampled_from(BINARY_TYPES if kind == "binary" else STRING_TYPES))
    item = st.binary(max_size=40) if kind == "binary" else st.text(max_size=20)
    if draw(st.booleans()):
        item = st.none() | item
    if draw(st.integers(0, 9)) == 0:  # lengths with two- and three-byte varints
        item = item | (
            st.integers(60, 9000).map(lambda m: b"v" * m if kind == "binary" else "ü" * m)
        )
    before = draw(st.integers(0, 3))
    after = draw(st.integers(0, 3))
    items = draw(st.lists(item, min_size=n + before + after, max_size=n + before + after))
    return pa.array(items, typ).slice(before, n)


@st.composite
def header_columns(draw, n: int) -> pa.Array | None:
    """``None``, or a list<struct<key, value>> column of ``n`` rows: every accepted key and
    value type, either field order, list and large_list, sliced lists over a struct child with
    its own offset; rows null, empty or with headers (null values; null keys and null headers
    in the "bad" kind)."""
    kind = draw(st.sampled_from(["none", "empty", "some", "bad"]))
    if kind == "none":
        return None
    key_type = draw(st.sampled_from(STRING_TYPES))
    value_type = draw(st.sampled_from([*BINARY_TYPES, *STRING_TYPES, pa.null()]))
    if pa.types.is_null(value_type):
        value = st.none()
    elif value_type in STRING_TYPES:
        value = st.none() | st.text(max_size=8)
    else:
        value = st.none() | st.binary(max_size=8)
    header = st.fixed_dictionaries({"key": st.text(max_size=8), "value": value})
    if kind == "bad":
        header = header | st.none() | st.fixed_dictionaries({"key": st.none(), "value": value})
    row = st.none() | st.just([])
    if kind != "empty":
        row = row | st.lists(header, min_size=1, max_size=3)
    before = draw(st.integers(0, 2))
    rows = draw(st.lists(row, min_size=n + before, max_size=n + before))
    fields = [("key", key_type), ("value", value_type)]
    struct_type = pa.struct(fields if draw(st.booleans()) else fields[::-1])
    pad = draw(st.integers(0, 2))
    flat = [{"key": "pad", "value": None}] * pad + [h for r in rows if r for h in r]
    items = pa.array(flat, struct_type).slice(pad)
    offsets = [0]
    for r in rows:
        offsets.append(offsets[-1] + len(r or []))
    large = draw(st.booleans())
    cls = pa.LargeListArray if large else pa.ListArray
    lists = cls.from_arrays(
        pa.array(offsets, pa.int64() if large else pa.int32()),
        items,
        mask=pa.array([r is None for r in rows], pa.bool_()),
    )
    return lists.slice(before, n)


@st.composite
def section_args(draw) -> tuple[tuple, dict]:
    n = draw(st.integers(0, 40))
    keys = draw(binary_columns(n))
    values = draw(binary_columns(n))
    headers = draw(header_columns(n))
    start = draw(st.integers(0, n + 2))
    kwargs = {
        "first_offset_delta": draw(st.integers(0, 3) | st.integers(0, 2**31 - 1)),
        "timestamp_delta": draw(st.integers(-1000, 1000) | st.integers(*INT64)),
        "budget": draw(st.integers(-5, 400) | st.integers(0, 1 << 20)),
    }
    return (keys, values, headers, start), kwargs


# ---- differential -------------------------------------------------------------------------


@SETTINGS
@given(section_args())
def test_accel_equals_pure(case) -> None:
    args, kwargs = case
    both(*args, **kwargs)


@SETTINGS
@given(section_args())
def test_pure_section_is_encode_record_row_after_row(case) -> None:
    (keys, values, headers, start), kwargs = case
    if keys is None and values is None:
        return
    result = outcome(_encode_records_section_pure, keys, values, headers, start, **kwargs)
    if result[0] == "error":  # a header with a null key, in a row the pure function reads
        assert result[1] is InvalidRecordError and result[3] == "headers"
        return
    data, taken = result[1]
    n = len(values if values is not None else keys)
    rows = range(start, start + taken)

    def py(col, i):
        if col is None or pa.types.is_null(col.type):
            return None
        v = col[i].as_py()
        return v.encode() if isinstance(v, str) else v

    def hs(i):
        row = None if headers is None else headers[i].as_py()
        return [
            (h["key"], h["value"].encode() if isinstance(h["value"], str) else h["value"])
            for h in row or []
        ]

    fod, ts, budget = kwargs["first_offset_delta"], kwargs["timestamp_delta"], kwargs["budget"]
    recs = [
        encode_record(fod + j, ts, py(keys, i), py(values, i), hs(i)) for j, i in enumerate(rows)
    ]
    assert data == b"".join(recs)
    assert start + taken <= max(n, start)
    if taken > 1 or (taken == 1 and fod > 0):  # within the budget, except a lone first record
        assert len(data) <= budget
    if start + taken < n:  # stopped by the budget: the next record does not fit
        nxt = start + taken
        size = record_size(fod + taken, ts, py(keys, nxt), py(values, nxt), hs(nxt))
        assert len(data) + size > budget and fod + taken > 0


@SETTINGS
@given(section_args(), st.integers(1, 4))
def test_chunked_columns(case, pieces: int) -> None:
    (keys, values, headers, start), kwargs = case

    def chunked(col):
        if col is None or len(col) == 0:
            return col
        cuts = sorted({0, len(col), *(len(col) * i // pieces for i in range(pieces))})
        return pa.chunked_array(
            [col.slice(a, b - a) for a, b in itertools.pairwise(cuts)], col.type
        )

    both(chunked(keys), chunked(values), headers, start, **kwargs)


@pytest.mark.parametrize("length", [0, 1, 63, 64, 127, 128, 8191, 8192, 1 << 20])
@pytest.mark.parametrize("typ", [pa.binary(), pa.large_binary(), pa.string(), pa.large_string()])
def test_varint_boundaries_and_exact_budgets(length: int, typ: pa.DataType) -> None:
    text = pa.types.is_string(typ) or pa.types.is_large_string(typ)
    values = pa.array([("x" if text else b"x") * (length + i) for i in range(4)] + [None], typ)
    keys = pa.array([b"k" * i for i in range(5)])
    sizes = [
        record_size(i, -3, b"k" * i, None if i == 4 else b"x" * (length + i)) for i in range(5)
    ]
    kw = {"timestamp_delta": -3}
    for m in range(6):
        for budget in (sum(sizes[:m]), sum(sizes[:m]) - 1):
            data, taken = both(keys, values, None, 0, first_offset_delta=0, budget=budget, **kw)[1]
            assert taken == max(1, m if budget == sum(sizes[:m]) else m - 1)
            assert len(data) == sum(sizes[:taken])
    # a batch that already has records takes nothing that does not fit
    assert both(keys, values, None, 0, first_offset_delta=1, budget=0, **kw)[1] == (b"", 0)


def test_a_large_section_of_sliced_columns() -> None:
    n = 100_000
    values = pa.array([bytes([i % 256]) * 100 for i in range(n + 5)]).slice(5)
    keys = pa.array([struct.pack(">q", i) for i in range(n)], pa.large_binary())
    kwargs = {"first_offset_delta": 0, "timestamp_delta": 7, "budget": 1 << 30}
    data, taken = both(keys, values, None, 0, **kwargs)[1]
    assert taken == n
    sizes = (record_size(i, 7, b"k" * 8, b"v" * 100) for i in range(n))
    assert len(data) == sum(sizes)


# ---- errors -------------------------------------------------------------------------------


def test_same_chunk_as_the_pure_function() -> None:
    assert accel._SECTION_CHUNK == encoder._SECTION_CHUNK


@pytest.mark.parametrize("bad", [None, 0, 300, 511, 512, 700, 1100])
@pytest.mark.parametrize("start", [0, 1, 200])
@pytest.mark.parametrize("budget", [0, 5_000, 40_000, 80_000, 1 << 20])
@pytest.mark.parametrize("first_offset_delta", [0, 3])
def test_null_header_keys_across_chunks(
    bad: int | None, start: int, budget: int, first_offset_delta: int
) -> None:
    """A header with a null key is refused when the pure function reads its row: rows are
    read 512 at a time from ``start``, up to the chunk holding the first row that does not
    fit; the error names the row within its chunk."""
    n = 1300
    rows = [[{"key": "h", "value": b"v" * (i % 7)}] if i % 3 else None for i in range(n)]
    if bad is not None:
        rows[bad] = [{"key": "h", "value": None}, {"key": None, "value": b"x"}]
    headers = pa.array(rows, pa.list_(HEADER_STRUCT))
    values = pa.array([b"x" * 50] * n)
    kwargs = {"first_offset_delta": first_offset_delta, "timestamp_delta": 1, "budget": budget}
    result = both(None, values, headers, start, **kwargs)
    if bad is not None and budget == 1 << 20 and bad >= start:
        assert result[0] == "error" and f"row {(bad - start) % 512}:" in result[2]


GOOD = pa.array([b"a", b"b"])
HEADERS_OK = pa.array([[{"key": "h", "value": b"v"}], []], pa.list_(HEADER_STRUCT))


@pytest.mark.parametrize(
    ("keys", "values", "headers", "column"),
    [
        (pa.array([1, 2]), GOOD, None, "key"),
        (GOOD, pa.array([1.5, 2.5]), None, "value"),
        (pa.array([b"ab", b"cd"], pa.binary(2)), GOOD, None, "key"),
        (GOOD, pa.array(["a", "b"]).dictionary_encode(), None, "value"),
        (GOOD, pa.array(["a", "b"], pa.string_view()), None, "value"),
        (pa.array([1, 2]), pa.array([1, 2]), None, "key"),
        (GOOD, GOOD, pa.array([1, 2]), "headers"),
        (GOOD, GOOD, pa.nulls(2), "headers"),
        (GOOD, GOOD, pa.array([[1], [2]]), "headers"),
        (GOOD, GOOD, pa.array([[], []], pa.list_(pa.struct([("key", pa.string())]))), "headers"),
        (GOOD, GOOD, pa.array([[None], []], pa.list_(HEADER_STRUCT)), "headers"),
        (
            GOOD,
            GOOD,
            pa.array([[], [{"key": None, "value": b"v"}]], pa.list_(HEADER_STRUCT)),
            "headers",
        ),
    ],
)
def test_same_errors(keys, values, headers, column: str) -> None:
    result = both(keys, values, headers, 0, first_offset_delta=0, timestamp_delta=0, budget=100)
    assert result[0] == "error" and result[1] is InvalidRecordError and result[3] == column


@pytest.mark.parametrize(
    ("keys", "values", "headers", "start"),
    [
        (None, None, None, 0),  # no column at all
        (pa.array([b"a"]), GOOD, None, 0),  # columns of different lengths
        (GOOD, GOOD, HEADERS_OK.slice(0, 1), 0),
        (GOOD, GOOD, None, -1),
        (GOOD, GOOD, pa.array([1, 2]), 2),  # nothing to encode: the header column is not read
    ],
)
def test_contract_violations_behave_as_pure(keys, values, headers, start: int) -> None:
    both(keys, values, headers, start, first_offset_delta=0, timestamp_delta=0, budget=100)


def test_null_header_lists_over_headers_and_offset_children() -> None:
    """A null list slot whose offsets still span headers (Arrow allows it) has no headers,
    even a bad one (the pure function reads it as null); struct children with offsets of their
    own are read at the right rows."""
    hkeys = pa.array(["skip", "a", None, "b", "c"], pa.large_string()).slice(1)
    hvalues = pa.array([b"skip", b"skip", b"1", b"2", None, b"3"]).slice(2)
    items = pa.StructArray.from_arrays([hkeys, hvalues], names=["key", "value"])
    offsets = pa.py_buffer(struct.pack("<4i", 0, 1, 3, 4))
    validity = pa.py_buffer(bytes([0b101]))  # row 1 (headers 1..2, one with a null key) null
    headers = pa.Array.from_buffers(
        pa.list_(items.type), 3, [validity, offsets], null_count=1, children=[items]
    )
    values = pa.array([b"x", b"y", b"z"])
    for start in range(3):
        result = both(
            None, values, headers, start, first_offset_delta=0, timestamp_delta=0, budget=99
        )
        assert result[0] == "ok" and result[1][1] == 3 - start
    data = result[1][0]
    assert data == encode_record(0, 0, None, b"z", [("c", b"3")])


@pytest.mark.parametrize("arg", ["first_offset_delta", "timestamp_delta", "budget"])
def test_arguments_beyond_int64_behave_as_pure(arg: str) -> None:
    kwargs = {"first_offset_delta": 1, "timestamp_delta": 0, "budget": 100, arg: 2**70}
    both(GOOD, GOOD, None, 0, **kwargs)


def test_malformed_offsets_are_refused_with_the_column() -> None:
    offsets = pa.py_buffer(struct.pack("<3i", 0, 3, 1))  # not monotonic (pyarrow checks the ends)
    bad = pa.Array.from_buffers(pa.binary(), 2, [None, offsets, pa.py_buffer(b"abcd")])
    with pytest.raises(InvalidRecordError, match=r"column 'value', row 1") as info:
        encode_records_section_accel(
            GOOD, bad, None, 0, first_offset_delta=0, timestamp_delta=0, budget=100
        )
    assert info.value.column == "value"


def test_encoder_module_picks_accel_unless_forced_pure() -> None:
    code = "from spark_kafka_py.records import encoder; print(encoder.SECTION_IMPLEMENTATION)"
    env = {k: v for k, v in os.environ.items() if k != "SPARK_KAFKA_PY_PURE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "accel", out.stderr
    env["SPARK_KAFKA_PY_PURE"] = "1"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "pure", out.stderr


# ---- Kafka's Java code --------------------------------------------------------------------

T0 = 1_700_000_000_123


def test_batch_around_accel_sections_equals_java_memory_records_builder() -> None:
    """Three calls (one timestamp each, the second one earlier than the base) fill one batch;
    the batch built around their sections equals ``MemoryRecordsBuilder``'s bytes for the same
    records, idempotent and transactional producers included."""
    groups = [
        (pa.array([b"k0", None, b""]), pa.array(["v0", "", None], pa.large_string()), 0),
        (None, pa.array([b"x" * 200, b"y" * 70_000]).slice(0, 2), -7),
        (pa.array(["ключ", "ü"]), pa.array([b"", b"z" * 128], pa.large_binary()), 5),
    ]
    keys: list = []
    values: list = []
    timestamps: list[int] = []
    parts: list[bytes] = []
    for k, v, delta in groups:
        data, taken = encode_records_section_accel(
            k, v, None, 0, first_offset_delta=len(keys), timestamp_delta=delta, budget=1 << 20
        )
        assert taken == len(v)
        parts.append(data)
        for i in range(taken):
            kv = None if k is None else k[i].as_py()
            vv = v[i].as_py()
            keys.append(kv.encode() if isinstance(kv, str) else kv)
            values.append(vv.encode() if isinstance(vv, str) else vv)
            timestamps.append(T0 + delta)
    rows = Rows(keys, values, [[] for _ in keys], timestamps)
    producers = [(-1, -1, -1, False), (4242, 3, 17, False), (9_000_000_001, 0, 2**31 - 3, True)]
    commands, ours = [], []
    for pid, epoch, seq, txn in producers:
        commands += java_build_commands(rows, 0, None, pid, epoch, seq, txn)
        ours.append(
            build_batch(
                b"".join(parts),
                count=len(keys),
                last_offset_delta=len(keys) - 1,
                base_timestamp=T0,
                max_timestamp=max(timestamps),
                producer_id=pid,
                producer_epoch=epoch,
                base_sequence=seq,
                transactional=txn,
            )
        )
    theirs = [base64.b64decode(x) for x in java_tool(commands)]
    assert ours == theirs
