"""formats/json/decode.py without Spark: both paths, the modes, the helpers (Java's double
text, the date and timestamp parsers), bounds and argument checks. Expected values are
written out (the behaviours themselves were measured on Spark 4.3: test_from_json_oracle.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonDecodeError, JsonSchemaError
from spark_kafka_py.formats.java_numbers import java_double
from spark_kafka_py.formats.json.decode import (
    JsonDecoder,
    _parse_date,
    _parse_timestamp,
    arrow_type_of,
    decode_json,
)
from spark_kafka_py.formats.json.options import json_options

UTC = dt.timezone.utc


def _f(name: str, spark: object) -> dict[str, object]:
    return {"name": name, "type": spark, "nullable": True, "metadata": {}}


def _struct(*fields: dict[str, object]) -> dict[str, object]:
    return {"type": "struct", "fields": list(fields)}


NESTED = _struct(
    _f("id", "long"),
    _f(
        "events",
        {
            "type": "array",
            "elementType": _struct(_f("at", "timestamp"), _f("on", "date")),
            "containsNull": True,
        },
    ),
    _f(
        "meta",
        _struct(
            _f("seen", "timestamp"),
            _f("tags", {"type": "array", "elementType": "string", "containsNull": True}),
        ),
    ),
)


def test_arrow_type_of() -> None:
    assert arrow_type_of(NESTED) == pa.struct(
        [
            pa.field("id", pa.int64()),
            pa.field(
                "events",
                pa.list_(
                    pa.field(
                        "element",
                        pa.struct(
                            [
                                pa.field("at", pa.timestamp("us", tz="UTC")),
                                pa.field("on", pa.date32()),
                            ]
                        ),
                    )
                ),
            ),
            pa.field(
                "meta",
                pa.struct(
                    [
                        pa.field("seen", pa.timestamp("us", tz="UTC")),
                        pa.field("tags", pa.list_(pa.field("element", pa.string()))),
                    ]
                ),
            ),
        ]
    )
    assert arrow_type_of("integer") == pa.int32()
    assert arrow_type_of(
        {"type": "map", "keyType": "string", "valueType": "float", "valueContainsNull": True}
    ) == pa.map_(pa.string(), pa.float32())


def test_fast_path_nested_temporal_with_nulls_in_place() -> None:
    docs = [
        '{"id": 1, "events": [{"at": "2024-01-02T03:04:05Z", "on": "2024-01-02"}, null,'
        ' {"at": null, "on": "2024-1-3"}], "meta": {"seen": "2024-01-02 03:04:05.5",'
        ' "tags": ["x", null]}}',
        None,
        "   ",
        '{"id": 2, "events": null, "meta": null}',
        '  {"id": 3, "meta": {"seen": null}, "events": []}  ',
        "",
    ]
    decoder = JsonDecoder(NESTED)
    out = decoder.decode(pa.array(docs))
    assert (decoder.fast_batches, decoder.slow_batches) == (1, 0)
    assert out.type == arrow_type_of(NESTED)
    assert out.to_pylist() == [
        {
            "id": 1,
            "events": [
                {"at": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "on": dt.date(2024, 1, 2)},
                None,
                {"at": None, "on": dt.date(2024, 1, 3)},
            ],
            "meta": {
                "seen": dt.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC),
                "tags": ["x", None],
            },
        },
        None,
        None,
        {"id": 2, "events": None, "meta": None},
        {"id": 3, "events": [], "meta": {"seen": None, "tags": None}},
        None,
    ]
    # the per-row path gives the same
    slow = JsonDecoder(NESTED)
    slow._fast_ok = False
    assert slow.decode(pa.array(docs)).equals(out)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pyarrow"])
def test_fast_path_all_blank_and_chunked(compiled: bool) -> None:
    decoder = JsonDecoder(_struct(_f("a", "long")), compiled=compiled)
    assert decoder.decode(pa.array([None, ""], pa.string())).to_pylist() == [None, None]
    chunked = pa.chunked_array([pa.array(['{"a": 1}']), pa.array(['{"a": 2}', None])])
    assert decoder.decode(chunked).to_pylist() == [{"a": 1}, {"a": 2}, None]
    large = pa.array(['{"a": 5}'], pa.large_string())
    assert decoder.decode(large).to_pylist() == [{"a": 5}]
    assert decoder.fast_batches == 3


def test_bad_temporal_string_sends_the_batch_per_row() -> None:
    schema = _struct(_f("t", "timestamp"), _f("n", "long"), _f("_corrupt_record", "string"))
    decoder = JsonDecoder(schema, mode="PERMISSIVE")
    out = decoder.decode(pa.array(['{"t": "2024-01-02", "n": 1}', '{"t": "nope", "n": 2}']))
    assert (decoder.fast_batches, decoder.slow_batches) == (0, 1)
    assert out.to_pylist() == [
        {"t": dt.datetime(2024, 1, 2, tzinfo=UTC), "n": 1, "_corrupt_record": None},
        {"t": None, "n": 2, "_corrupt_record": '{"t": "nope", "n": 2}'},
    ]


def test_invalid_utf8_binary_read_with_replacement() -> None:
    schema = _struct(_f("s", "string"))
    decoder = JsonDecoder(schema)
    out = decoder.decode(pa.array([b'{"s": "a\xffb"}', b'{"s": "ok"}'], pa.binary()))
    assert out.to_pylist() == [{"s": "a\ufffdb"}, {"s": "ok"}]
    assert decoder.slow_batches == 1


def test_integer_ranges_and_float32() -> None:
    schema = _struct(
        _f("i", "integer"),
        _f("h", "short"),
        _f("b", "byte"),
        _f("f", "float"),
        _f("_corrupt_record", "string"),
    )
    docs = [
        '{"i": 2147483647, "h": -32768, "b": 127, "f": 1.5}',
        '{"i": 2147483648}',
        '{"h": 32768}',
        '{"b": -129}',
        '{"f": 1e40}',
        '{"f": -1e40}',
    ]
    out = decode_json(pa.array(docs), schema, mode="PERMISSIVE").to_pylist()
    assert out == [
        {"i": 2147483647, "h": -32768, "b": 127, "f": 1.5, "_corrupt_record": None},
        {"i": None, "h": None, "b": None, "f": None, "_corrupt_record": '{"i": 2147483648}'},
        {"i": None, "h": None, "b": None, "f": None, "_corrupt_record": '{"h": 32768}'},
        {"i": None, "h": None, "b": None, "f": None, "_corrupt_record": '{"b": -129}'},
        {"i": None, "h": None, "b": None, "f": float("inf"), "_corrupt_record": None},
        {"i": None, "h": None, "b": None, "f": float("-inf"), "_corrupt_record": None},
    ]


def test_permissive_without_corrupt_column_and_on_error() -> None:
    schema = _struct(_f("a", "long"), _f("b", "string"))
    errors: list[JsonDecodeError] = []
    out = decode_json(
        pa.array(['{"a": "x", "b": "y"}', "{", '{"a": 1}']),
        schema,
        mode="PERMISSIVE",
        on_error=errors.append,
    )
    assert out.to_pylist() == [{"a": None, "b": "y"}, {"a": None, "b": None}, {"a": 1, "b": None}]
    assert [(e.index, e.reason) for e in errors] == [
        (0, "expected long at /a, got string 'x'"),
        (
            1,
            "malformed JSON: Expecting property name enclosed in double quotes:"
            " line 1 column 2 (char 1)",
        ),
    ]


def test_custom_corrupt_column_and_non_string_one_ignored() -> None:
    schema = _struct(_f("a", "long"), _f("bad", "string"))
    out = decode_json(pa.array(["[1]"]), schema, mode="PERMISSIVE", corrupt_column="bad")
    assert out.to_pylist() == [{"a": None, "bad": "[1]"}]
    schema = _struct(_f("a", "long"), _f("_corrupt_record", "long"))
    out = decode_json(pa.array(["[1]", '{"_corrupt_record": 5}']), schema, mode="PERMISSIVE")
    assert out.to_pylist() == [
        {"a": None, "_corrupt_record": None},
        {"a": None, "_corrupt_record": 5},
    ]


def test_nested_partial_paths_in_reason() -> None:
    with pytest.raises(JsonDecodeError) as info:
        decode_json(pa.array(['{"id": 1, "events": [{"on": 5}]}']), NESTED)
    assert info.value.reason == "expected date at /events/0/on, got number '5'"
    assert str(info.value) == "record 0: expected date at /events/0/on, got number '5'"


def test_deep_nesting_is_malformed_not_a_crash() -> None:
    schema = _struct(_f("a", "long"))
    deep = '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(JsonDecodeError, match="malformed JSON: nested too deeply"):
        decode_json(pa.array([deep]), schema)


def test_argument_checks() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        JsonDecoder(_struct(_f("a", "long")), mode="DROPMALFORMED")  # type: ignore[arg-type]
    with pytest.raises(JsonSchemaError, match="must be a struct"):
        JsonDecoder({"type": "array", "elementType": "long", "containsNull": True})
    with pytest.raises(JsonSchemaError, match="'variant' is not read") as info:
        JsonDecoder(_struct(_f("a", "long"), _f("b", "variant")))
    assert info.value.pointer == "/fields/1/type"
    with pytest.raises(JsonSchemaError, match="keys must be strings"):
        arrow_type_of({"type": "map", "keyType": "long", "valueType": "long"})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1000.0, "1000.0"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (123456789012345678.5, "1.2345678901234568E17"),
        (1.5e-7, "1.5E-7"),
        (-2.5e300, "-2.5E300"),
        (12.25, "12.25"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (float("nan"), "NaN"),
    ],
)
def test_java_double_str(value: float, text: str) -> None:
    assert java_double(value) == text


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("2024-01-02T03:04:05Z", 1704164645000000),
        ("2024-01-02T03:04:05.123456+02:00", 1704157445123456),
        ("2024-01-02T03:04:05+0200", 1704157445000000),
        ("2024-01-02T03:04:05+02", 1704157445000000),
        ("2024-01-02T03:04:05-08:00", 1704193445000000),
        ("2024-01-02 03:04:05", 1704164645000000),
        ("2024-01-02T03:04:05 UTC", 1704164645000000),
        ("2024-01-02T03:04:05GMT+01:00", 1704161045000000),
        ("2024-07-02T03:04:05 Europe/Paris", 1719882245000000),
        ("2024-01-02T3:4:5Z", 1704164645000000),
        ("2024-01-02T03:04", 1704164640000000),
        (" 2024-01-02T03:04:05.Z ", 1704164645000000),
        ("2024-01-02T03:04:05.1234567Z", 1704164645123456),
        ("2024", 1704067200000000),
        ("2024-01", 1704067200000000),
        ("2024-01-02", 1704153600000000),
        ("1969-12-31T23:59:59Z", -1000000),
    ],
)
def test_parse_timestamp(text: str, micros: int) -> None:
    assert _parse_timestamp(text) == micros


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x",
        "2024-02-30T00:00:00Z",
        "2024-01-02T24:00:00",
        "2024/01/02",
        "2024-01-02T03:04:05 Nowhere/City",
    ],
)
def test_parse_timestamp_refuses(text: str) -> None:
    assert _parse_timestamp(text) is None


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("1970-01-01", 0),
        ("2024-01-02", 19724),
        ("2024-1-2", 19724),
        ("2024", 19723),
        ("2024-01", 19723),
        (" 2024-01-02 ", 19724),
        ("2024-01-02 xx", 19724),
        ("2024-01-02T03:04:05Z", 19724),
        ("1969-12-31", -1),
    ],
)
def test_parse_date(text: str, days: int) -> None:
    assert _parse_date(text) == days


@pytest.mark.parametrize("text", ["", "2024-02-30", "2024-01-02x", "2024/01/02", "x", "2024-13-01"])
def test_parse_date_refuses(text: str) -> None:
    assert _parse_date(text) is None


@pytest.mark.parametrize("doc", ['{"d": Inf}', '{"d": -Inf}', '{"d": -NaN}', '{"zz": Inf}'])
def test_tokens_pyarrow_reads_and_jackson_does_not_are_malformed(doc: str) -> None:
    decoder = JsonDecoder(_struct(_f("d", "double")))
    with pytest.raises(JsonDecodeError, match="record 1: malformed JSON"):
        decoder.decode(pa.array(['{"d": 1}', doc]))
    assert (decoder.fast_batches, decoder.slow_batches) == (0, 1)


def test_nan_and_infinity_tokens_read_per_row() -> None:
    decoder = JsonDecoder(_struct(_f("d", "double")))
    out = decoder.decode(pa.array(['{"d": NaN}', '{"d": -Infinity}', '{"d": "+INF"}']))
    assert str(out.to_pylist()) == "[{'d': nan}, {'d': -inf}, {'d': inf}]"
    assert (decoder.fast_batches, decoder.slow_batches) == (0, 1)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pyarrow"])
def test_fast_path_document_longer_than_a_block(compiled: bool) -> None:
    decoder = JsonDecoder(_struct(_f("s", "string"), _f("n", "long")), compiled=compiled)
    long_text = "x" * (3 << 20)
    out = decoder.decode(pa.array(['{"n": 1}', '{"s": "' + long_text + '", "n": 2}']))
    assert (decoder.fast_batches, decoder.slow_batches) == (1, 0)
    assert out.to_pylist() == [{"s": None, "n": 1}, {"s": long_text, "n": 2}]


# Numbers around Jackson's maxNumberLength (1000 digits), with the outcome Spark 4.3's
# from_json gives (measured: test_from_json_types_oracle.test_long_numbers): "bad" is a
# malformed document (all-null row, the corrupt record), else the double read.
_Z = "0" * 1000
LONG_NUMBERS = [
    ("1" + _Z, "bad"),  # 1001 integer digits
    ("1" + _Z[1:], math.inf),  # 1000
    ("-1" + _Z, "bad"),
    ("1." + _Z, "bad"),  # 1 + 1000 digits
    ("1." + _Z[1:], 1.0),  # 1 + 999
    ("0." + _Z, 0.0),  # an absent exponent counts -1 when the number starts with 0
    ("0." + _Z + "0", "bad"),
    ("1e" + _Z[2:] + "1", 10.0),  # 1 + 999
    ("1e" + _Z[1:] + "1", "bad"),  # 1 + 1000
    ("0e" + _Z[1:] + "1", 0.0),
    ("0.5" + _Z, "bad"),
]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "other-paths"])
@pytest.mark.parametrize(("token", "outcome"), LONG_NUMBERS, ids=lambda t: str(t)[:8])
def test_numbers_longer_than_jackson_takes_make_the_document_malformed(
    compiled: bool, token: str, outcome: object
) -> None:
    schema = _struct(_f("i", "integer"), _f("x", "double"), _f("_corrupt_record", "string"))
    decoder = JsonDecoder(schema, mode="PERMISSIVE", compiled=compiled)
    for doc in (f'{{"i": 7, "x": {token}}}', f'{{"i": 7, "zz": [{token}], "x": 1.0}}'):
        (row,) = decoder.decode(pa.array([doc, '{"i": 1}'])).to_pylist()[:1]
        if outcome == "bad":
            assert row == {"i": None, "x": None, "_corrupt_record": doc}
        else:
            x = outcome if doc.startswith('{"i": 7, "x"') else 1.0
            assert row == {"i": 7, "x": x, "_corrupt_record": None}
    raises = pytest.raises(JsonDecodeError, match=r"record 0: malformed JSON.*1000 digits")
    with raises if outcome == "bad" else contextlib.nullcontext():
        decode_json(pa.array([f'{{"i": 7, "x": {token}}}']), schema, mode="FAILFAST")


@pytest.mark.parametrize(
    ("at", "pad", "outcome"),
    [(2997, "a", "bad"), (2998, "a", 1.0), (2998, "\U0001f600", 1.0), (6997, "\U0001f600", 1.0),
     (6997, "\u00e9", "bad"), (7999, "a", 1.0), (8000, "a", "bad")],
)  # fmt: skip
def test_how_a_long_number_is_counted_depends_on_jacksons_input_buffer(
    at: int, pad: str, outcome: object
) -> None:
    """``1.`` and 1000 zeros starting at UTF-16 unit ``at``: refused when it ends (with the
    character after it) in the 4000-unit buffer where it starts (Spark's outcomes)."""
    head, middle = '{"p": "', '", "i": 7, "x": '
    units = at - len(head) - len(middle)
    width = len(pad.encode("utf-16-le")) // 2
    doc = head + "a" * (units % width) + pad * (units // width) + middle + "1." + _Z + "}"
    schema = _struct(_f("i", "integer"), _f("x", "double"))
    (row,) = decode_json(pa.array([doc]), schema, mode="PERMISSIVE").to_pylist()
    assert row == ({"i": None, "x": None} if outcome == "bad" else {"i": 7, "x": outcome})


def test_leading_zeros_do_not_count_and_are_dropped() -> None:
    schema = _struct(_f("l", "long"), _f("b", "string"), _f("x", "double"))
    options = json_options({"allowNumericLeadingZeros": "true"})
    docs = ['{"l": ' + "0" * 5000 + "1}", '{"b": 0012, "x": -00.5}', '{"x": 00.' + _Z + "}"]
    out = decode_json(pa.array(docs), schema, mode="PERMISSIVE", options=options).to_pylist()
    assert out == [
        {"l": 1, "b": None, "x": None},
        {"l": None, "b": "12", "x": -0.5},
        {"l": None, "b": None, "x": 0.0},
    ]
