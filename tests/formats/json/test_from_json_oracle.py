"""Spark's ``from_json`` as the oracle of ``formats/json/decode.py`` (issue 27).

The documents of :data:`DOCS` (written out: good ones, nested, arrays, maps, nulls, missing
and extra fields, case, duplicate keys, trailing text, coercions, wrong types, malformed
text, empty and blank values, non-object top levels, multi-line documents) go through
``from_json(v, SCHEMA, {"mode": "PERMISSIVE"})`` in a ``local[1]`` session
(``spark.sql.session.timeZone`` UTC) and through our :func:`decode_json`: the rows must be
equal, the corrupt-record field included. Ours decodes them three ways: all in one batch (the
per-row path, as malformed documents are in it), each alone (the pyarrow fast path wherever
it takes the document: not for :data:`SCHEMA`, which has a map; its map-less part in
:func:`test_good_documents_take_the_fast_path`), and from ``binary`` values.

``FAILFAST``: ours raises :class:`JsonDecodeError` for exactly the documents whose
``PERMISSIVE`` row has a corrupt record; that this is Spark's ``FAILFAST`` rule too is checked
on one document of each kind (:data:`FAILFAST_SAMPLE`, one Spark job each).

Differences kept: none with the default options (the
single-quoted documents and the bare ``-INF``, ``+INF``, ``+Infinity`` tokens of Jackson's
default features, once differences, are in :data:`DOCS`; ``Inf``, ``-Inf``, ``-NaN``,
``INF`` are malformed for both, and pyarrow, which would read the first three, never sees
them). The other options: ``test_from_json_options_oracle.py``.

A time without a date (``"T03:04:05"``, which Spark reads as today at that time) and years
outside 1..9999 (beyond Python's ``datetime``, which ``collect()`` gives): compared as
integers in ``test_from_json_datetime_oracle.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonDecodeError
from spark_kafka_py.formats.json.decode import JsonDecoder, decode_json
from tests.formats.json._helpers import field, norm, spark_from_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.integration


#: The struct read (Spark JSON, as ``DataType.jsonValue()``).
SCHEMA: dict[str, object] = {
    "type": "struct",
    "fields": [
        field("a", "long"),
        field("b", "string"),
        field("d", "double"),
        field("bo", "boolean"),
        field("t", "timestamp"),
        field("dt", "date"),
        field("arr", {"type": "array", "elementType": "long", "containsNull": True}),
        field("s", {"type": "struct", "fields": [field("x", "long"), field("y", "string")]}),
        field(
            "sa",
            {
                "type": "array",
                "elementType": {"type": "struct", "fields": [field("x", "long")]},
                "containsNull": True,
            },
        ),
        field(
            "m",
            {"type": "map", "keyType": "string", "valueType": "long", "valueContainsNull": True},
        ),
        field("_corrupt_record", "string"),
    ],
}

DOCS: list[str | None] = [
    # good
    '{"a": 1, "b": "x", "d": 1.5, "bo": true}',
    '{"a": -9223372036854775808, "b": "\u00e9\\u00e9\\n\\"", "d": -0.0, "bo": false}',
    '{"t": "2024-01-02T03:04:05Z", "dt": "2024-01-02"}',
    '{"t": "2024-01-02T03:04:05.123456+02:00"}',
    '{"t": "2024-01-02 03:04:05"}',
    '{"t": "2024-01-02"}',
    '{"t": 1700000000}',
    '{"t": -1}',
    '{"t": "2024-01-02T03:04:05.1234567Z"}',
    '{"t": "2024-01-02T03:04:05+0200"}',
    '{"t": "2024-01-02T03:04:05+02"}',
    '{"t": "2024-01-02T03:04:05 UTC"}',
    '{"t": "2024-01-02T03:04:05GMT+01:00"}',
    '{"t": "2024-07-02T03:04:05 Europe/Paris"}',
    '{"t": "2024-01-02T3:4:5Z"}',
    '{"t": "2024-01-02T03:04"}',
    '{"t": " 2024-01-02T03:04:05.Z "}',
    '{"t": "2024"}',
    '{"t": "2024-01-02T03:04:05.123+05:30"}',
    '{"t": "2024-01-02T03:04:05-08:00"}',
    '{"t": "2024-01-02T03:04:05 +02:00"}',
    '{"t": "2024-01-02T03:04:05+14:00"}',
    '{"t": "2024-01-02T03:04:05.000000001Z"}',
    '{"dt": "02024-01-02"}',
    '{"dt": "2024-01-02 "}',
    '{"t": "2024-01"}',
    '{"dt": "2024-1-2"}',
    '{"dt": "2024-01-02T03:04:05Z"}',
    '{"dt": "2024-01-02 xx"}',
    '{"dt": "2024"}',
    '{"arr": [1, null, 2], "s": {"x": 1, "y": "q", "extra": [1]},'
    ' "sa": [{"x": 1}, null, {"x": 2}], "m": {"k": 1, "l": null}}',
    '{"arr": [], "m": {}, "sa": []}',
    # nulls, missing and extra fields, case, duplicates, trailing text
    '{"a": null, "s": null, "arr": null, "t": null}',
    "{}",
    '{"b": "only"}',
    '{"a": 1, "zz": {"deep": [1, 2, {"x": null}]}}',
    '{"A": 1, "B": "x"}',
    '{"a": 1, "a": 2}',
    '{"s": {"x": 1, "x": 2}}',
    '{"a": 1} xx',
    '{"a": 1} {"a": 2}',
    '{"a": 1}\n{"a": 2}',
    '{"a": 1,\n "b": "pretty"}\n',
    '\t{"a": 1}\t',
    '{"a": 1}\x00',
    '{"a": 1, "a": "x"}',
    '{"a": "x", "a": 1}',
    '{"b": {"k": 1, "k": 2}}',
    '{"_corrupt_record": "x", "a": 1}',
    '{"_corrupt_record": "x", "a": "bad"}',
    '{"b": "\u2028 \\u2028"}',
    '{"b": "\\ud800", "a": 1}',
    '{"b": "\\ud83d\\ude00"}',
    # coercions that are not errors
    '{"d": 1}',
    '{"d": "Infinity"}',
    '{"d": "-INF"}',
    '{"d": "+Infinity"}',
    '{"d": -Infinity}',
    '{"d": 1e400}',
    '{"d": 1.7976931348623157e309}',
    '{"d": -1e400}',
    '{"d": 1e-400}',
    '{"b": -Infinity}',
    '{"b": {"k": -Infinity}}',
    '{"a": 1, "b": 2, "b": 3}',
    '{"m": {"k": 1, "k": 2}}',
    '{"zz": NaN, "a": 1}',
    '{"b": 2}',
    '{"b": -0}',
    '{"b": 1.50}',
    '{"b": 1e3}',
    '{"b": 0.0001}',
    '{"b": 0.001}',
    '{"b": 1e7}',
    '{"b": 9999999.0}',
    '{"b": 1E400}',
    '{"b": -1e400}',
    '{"b": 123456789012345678.5}',
    '{"b": 12345678901234567890123}',
    '{"b": true}',
    '{"b": NaN}',
    '{"b": {"z": [1, 2.0, null, "q\\t\u00e9"], "w": {}}}',
    '{"b": [1, 2]}',
    # wrong types: PERMISSIVE keeps the rest (partial results)
    '{"a": "1", "b": "kept"}',
    '{"a": 1.5, "b": "kept"}',
    '{"a": 1e3}',
    '{"a": 1.0}',
    '{"a": 99999999999999999999}',
    '{"a": true}',
    '{"a": NaN}',
    '{"bo": "true"}',
    '{"bo": 1}',
    '{"d": "1.5"}',
    '{"d": "INF"}',
    '{"d": "nan"}',
    '{"d": true}',
    '{"arr": [1, "x"], "b": "kept"}',
    '{"arr": 1}',
    '{"arr": {"x": 1}}',
    '{"s": 5}',
    '{"s": []}',
    '{"s": {"x": "q", "y": "kept"}}',
    '{"sa": [{"x": 1}, {"x": "q"}], "a": 7}',
    '{"m": {"k": "x"}, "a": 7}',
    '{"m": []}',
    '{"t": "x"}',
    '{"t": ""}',
    '{"t": "2024-02-30T00:00:00Z"}',
    '{"t": "2024-01-02T24:00:00"}',
    '{"t": "2024-01-02T03:04:05z"}',
    '{"t": "2024-01-02T03:04:05 utc"}',
    '{"t": "2024-01-02T03:04:05+19:00"}',
    '{"a": -0.0}',
    '{"t": 1.5}',
    '{"dt": 19000}',
    '{"dt": "2024-02-30"}',
    '{"dt": "2024/01/02"}',
    '{"dt": "2024-01-02x"}',
    # malformed
    '{"a": 1',
    '{"a": 1,}',
    "{a: 1}",
    '{"a": 01}',
    '{"a": 1, /*c*/ "b": "x"}',
    '{"b": "a\tb"}',
    '\ufeff{"a": 1}',
    "not json",
    '{"a": 1 "b": 2}',
    '{"d": Inf}',
    '{"d": -Inf}',
    '{"d": -NaN}',
    '{"zz": Inf}',
    '{"d": INF}',
    '{"a": -}',
    '{"a": +1}',
    '{"a": 1.}',
    '{"a": .5}',
    '{"d": .5}',
    # Jackson's default features: single quotes, the signed non-numeric tokens
    "{'a': 1}",
    "{'b': 'x\"y', 'a': 2}",
    '{"d": -INF}',
    '{"d": +INF}',
    '{"d": +Infinity}',
    '{"b": +INF}',
    # nested deeper than Jackson's 1000 (in a field the schema does not have, and in s)
    '{"zz": ' + "[" * 1001 + "]" * 1001 + "}",
    '{"s": ' * 1001 + "1" + "}" * 1001,
    '{"zz": ' + "[" * 990 + "]" * 990 + ', "a": 1}',
    # empty and blank
    "",
    "   ",
    "\t",
    " \n\r\t ",
    None,
    # not an object
    '[{"a": 1}]',
    "[]",
    "1",
    '"s"',
    "null",
    "true",
]

#: One document of each kind, run through Spark's FAILFAST (one job each).
FAILFAST_SAMPLE: list[str | None] = [
    '{"a": 1, "b": 2}',
    '{"a": "1"}',
    '{"s": {"x": "q"}}',
    '{"a": 1',
    "",
    "null",
    "[]",
]

STRUCT_TYPE = JsonDecoder(SCHEMA).arrow_type
#: SCHEMA without its map (pyarrow's reader has no maps: the fast path needs a map-less type).
NO_MAP: dict[str, object] = {
    "type": "struct",
    "fields": [f for f in SCHEMA["fields"] if f["name"] != "m"],  # type: ignore[attr-defined]
}


def _without_m(row: Any) -> Any:
    """A row of SCHEMA as a row of NO_MAP.

    from_json's partial results and corrupt record do not depend on m here except for the
    documents whose only bad value is in m, which the caller leaves out."""
    return None if row is None else {k: v for k, v in row.items() if k != "m"}


def _theirs(spark: SparkSession, docs: list[str | None], mode: str) -> list[Any]:
    return spark_from_json(spark, SCHEMA, docs, {"mode": mode})


def _ours(array: pa.Array) -> list[Any]:
    out = []
    for row in array.to_pylist():
        if row is not None and row.get("m") is not None:
            row["m"] = dict(row["m"])
        out.append(norm(row))
    return out


@pytest.fixture(scope="module")
def theirs(utc_spark: SparkSession) -> list[Any]:
    return _theirs(utc_spark, DOCS, "PERMISSIVE")


def test_permissive_one_batch(theirs: list[Any]) -> None:
    errors: list[JsonDecodeError] = []
    ours = _ours(decode_json(pa.array(DOCS), SCHEMA, mode="PERMISSIVE", on_error=errors.append))
    diffs = [
        (i, DOCS[i], t, o) for i, (t, o) in enumerate(zip(theirs, ours, strict=True)) if t != o
    ]
    assert diffs == []
    assert len(ours) == len(DOCS)
    corrupt = [i for i, row in enumerate(theirs) if row and row["_corrupt_record"] is not None]
    assert [e.index for e in errors] == corrupt


def test_permissive_each_alone_and_as_binary(theirs: list[Any]) -> None:
    decoder = JsonDecoder(SCHEMA, mode="PERMISSIVE")
    no_map = JsonDecoder(NO_MAP, mode="PERMISSIVE")
    diffs = []
    for i, doc in enumerate(DOCS):
        for values in (pa.array([doc], pa.string()), pa.array([doc], pa.binary())):
            (ours,) = _ours(decoder.decode(values))
            if ours != theirs[i]:
                diffs.append((i, doc, values.type, theirs[i], ours))
            if doc is not None and '"m"' in doc:
                continue  # bad values in m would make from_json's NO_MAP row differ
            (ours,) = _ours(no_map.decode(values))
            if ours != _without_m(theirs[i]):
                diffs.append((i, doc, values.type, "NO_MAP", _without_m(theirs[i]), ours))
    assert diffs == []
    # SCHEMA has a map: pyarrow's reader never reads it; the compiled path may
    assert decoder.fast_batches == decoder.compiled_batches
    assert no_map.fast_batches > 30  # the fast path decided these
    assert no_map.slow_batches > 30


def test_good_documents_take_the_fast_path(theirs: list[Any]) -> None:
    good = [
        i
        for i, row in enumerate(theirs)
        if DOCS[i] is not None
        and (row is None or row["_corrupt_record"] is None)
        and "\n" not in DOCS[i]  # type: ignore[operator]
    ]
    decoder = JsonDecoder(SCHEMA, mode="FAILFAST")
    batch = [DOCS[i] for i in good]
    ours = _ours(decoder.decode(pa.array(batch)))
    assert ours == [theirs[i] for i in good]
    # b's non-strings, duplicate keys, trailing text, ... made pyarrow refuse the batch once
    assert decoder.slow_batches == 1
    simple = [
        '{"a": 1, "b": "x", "d": 1.5, "bo": true}',
        '{"t": "2024-01-02T03:04:05Z", "dt": "2024-01-02"}',
        '{"arr": [1, null, 2], "s": {"x": 1, "y": "q", "extra": [1]},'
        ' "sa": [{"x": 1}, null, {"x": 2}], "m": {"k": 1, "l": null}}',
        None,
        "   ",
        '{"A": 1, "B": "x"}',
        '{"a": null, "s": null, "arr": null, "t": null}',
    ]
    fast = JsonDecoder(NO_MAP)
    expected = [_without_m(theirs[DOCS.index(d)]) for d in simple]
    assert _ours(fast.decode(pa.array(simple))) == expected
    assert (fast.fast_batches, fast.slow_batches) == (1, 0)
    # and a batch of them as binary (UTF-8 validated by a cast)
    assert _ours(fast.decode(pa.array(simple, pa.binary()))) == expected
    assert (fast.fast_batches, fast.slow_batches) == (2, 0)


def test_failfast_raises_exactly_where_permissive_has_a_corrupt_record(
    theirs: list[Any],
) -> None:
    for i, doc in enumerate(DOCS):
        expected = theirs[i] is not None and theirs[i]["_corrupt_record"] is not None
        try:
            decode_json(pa.array([None, doc]), SCHEMA)
        except JsonDecodeError as exc:
            assert expected, (i, doc, exc)
            assert exc.index == 1
        else:
            assert not expected, (i, doc)


def test_failfast_first_bad_row_named() -> None:
    with pytest.raises(JsonDecodeError) as info:
        decode_json(pa.array(['{"a": 1}', '{"a": "1"}', "{"]), SCHEMA)
    assert info.value.index == 1
    assert info.value.reason == "expected long at /a, got string '1'"
    with pytest.raises(JsonDecodeError, match="record 0: malformed JSON"):
        decode_json(pa.array(["{"]), SCHEMA)
    with pytest.raises(JsonDecodeError, match="record 0: the top level is not an object but null"):
        decode_json(pa.array(["null"]), SCHEMA)


@pytest.mark.parametrize("doc", FAILFAST_SAMPLE)
def test_spark_failfast_matches_permissive_corrupt_record(
    utc_spark: SparkSession, theirs: list[Any], doc: str | None
) -> None:
    permissive = _theirs(utc_spark, [doc], "PERMISSIVE")[0]
    corrupt = permissive is not None and permissive["_corrupt_record"] is not None
    try:
        _theirs(utc_spark, [doc], "FAILFAST")
    except Exception as exc:  # Py4JJavaError / SparkRuntimeException
        assert corrupt, exc
        with pytest.raises(JsonDecodeError):
            decode_json(pa.array([doc]), SCHEMA)
    else:
        assert not corrupt
        decode_json(pa.array([doc]), SCHEMA)


def test_struct_type() -> None:
    assert STRUCT_TYPE.field("t").type == pa.timestamp("us", tz="UTC")
    assert STRUCT_TYPE.field("m").type == pa.map_(pa.string(), pa.int64())


#: Number tokens into a ``float`` field where rounding the text to a double and then to a
#: float differs from rounding it once (Java's ``Float.parseFloat``, what Spark's parser
#: gives): a double exactly half-way between two floats, the overflow threshold, and plain
#: values around them.
FLOAT_EDGES = [
    "3.4028235e38",  # above FLT_MAX as a double, rounds down to FLT_MAX
    "3.4028236e38",
    "-3.4028235e38",
    "3.40282356779733661637539395458142568447e38",  # just below the overflow threshold
    "3.40282356779733661637539395458142568448e38",  # on it: infinity (ties to even)
    "16777217",  # half-way between two floats exactly: ties to even, 16777216
    "16777217.000000001",  # just above half-way: 16777218 (the double is half-way)
    "-16777217.000000001",
    "16777216.999999999",
    "1.00000005960464477539062500001",
    "1.000000059604644775390625",
    "7.006492321624085e-46",  # half the smallest subnormal
    "7.0064923216240862e-46",
    "1e-46",
    "0.1",
]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "per-row"])
def test_float_fields_round_the_text_once_as_spark(utc_spark: SparkSession, compiled: bool) -> None:
    docs = [f'{{"f": {t}}}' for t in FLOAT_EDGES]
    frame = utc_spark.createDataFrame([(d,) for d in docs], "d STRING")
    theirs = [r[0] for r in frame.selectExpr("CAST(from_json(d, 'f FLOAT').f AS DOUBLE)").collect()]
    t = {"type": "struct", "fields": [field("f", "float")]}
    decoder = JsonDecoder(t, compiled=compiled)
    if not compiled:
        decoder._fast_ok = False  # the per-row path (pyarrow's reader rounds once already)
    ours = [row["f"] for row in decoder.decode(pa.array(docs)).to_pylist()]
    assert ours == theirs
    if compiled:
        # each alone: the compiled path reads those not exactly half-way as doubles
        alone = [decoder.decode(pa.array([d])).to_pylist()[0]["f"] for d in docs]
        assert alone == theirs
        assert decoder.compiled_rows >= 6
    # the values, written out: FLT_MAX, infinity, 2**24 and 2**24 + 2
    assert theirs[:3] == [3.4028234663852886e38, float("inf"), -3.4028234663852886e38]
    assert theirs[5:7] == [16777216.0, 16777218.0]
