"""``from_json``'s options on the decoder and through ``spark/payload.py``, without Spark.

Expected rows are written by hand from Jackson's documented read features
(``JsonReadFeature``) and Spark's ``JSONOptions``/``JacksonParser`` rules; Spark's own
``from_json`` compares on the same kinds of documents in
``test_from_json_options_oracle.py``.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from typing import Any

import pyarrow as pa
import pytest

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.formats.json.decode import JsonDecoder, decode_json
from spark_kafka_py.formats.json.jackson import MAX_NESTING, Features, Malformed, parse_document
from spark_kafka_py.formats.json.options import JsonOptionError, JsonOptions, json_options
from spark_kafka_py.spark.payload import parse_payload_options
from tests.formats.json._helpers import field

SCHEMA: dict[str, object] = {
    "type": "struct",
    "fields": [
        field("a", "long"),
        field("b", "string"),
        field("d", "double"),
        field("t", "timestamp"),
        field("dt", "date"),
        field("_corrupt_record", "string"),
    ],
}
UTC = dt.timezone.utc


def rows(docs: list[str | None], **opts: str) -> list[dict[str, Any] | None]:
    """PERMISSIVE rows without their null fields."""
    out = decode_json(
        pa.array(docs, pa.string()), SCHEMA, mode="PERMISSIVE", options=json_options(opts)
    )
    return [
        None if r is None else {k: v for k, v in r.items() if v is not None}
        for r in out.to_pylist()
    ]


def bad(doc: str) -> dict[str, Any]:
    return {"_corrupt_record": doc}


# -- Jackson's read features ------------------------------------------------------------------


def test_single_quotes_on_by_default() -> None:
    doc = "{'a': 1, 'b': 'x\"y\\'z'}"
    assert rows([doc]) == [{"a": 1, "b": "x\"y'z"}]
    assert rows([doc], allowSingleQuotes="false") == [bad(doc)]
    # \' is an escape in double-quoted strings too, with the feature on
    assert rows(['{"b": "it\\\'s"}']) == [{"b": "it's"}]
    assert rows(['{"b": "it\\\'s"}'], allowSingleQuotes="false") == [bad('{"b": "it\\\'s"}')]


def test_comments() -> None:
    docs = [
        '{"a": 1, /* two\n lines */ "b": "x"}',
        '// first\n{"a": 1 // after\n}',
        '{"a" /**/ : /**/ 2}',
        '{"a": 1 /* unterminated }',
        '{"a": 1, / "b": 2}',
        '{"a": 1, # "b": 2}',  # YAML comments are another feature, off
    ]
    assert rows(docs) == [bad(d) for d in docs]
    assert rows(docs, allowComments="true") == [
        {"a": 1, "b": "x"},
        {"a": 1},
        {"a": 2},
        bad(docs[3]),
        bad(docs[4]),
        bad(docs[5]),
    ]
    # comments only: no token, a null row as for blank text
    assert rows(["/* c */ ", "// c"], allowComments="true") == [None, None]
    assert rows(["/* c */ "]) == [bad("/* c */ ")]


def test_unquoted_field_names() -> None:
    docs = [
        "{a: 1, $b: 2}",
        "{b: 'q', a: 3}",
        "{_x1: 1, a-b: 2, a: 4}",
        "{1a: 1, a: 5}",
        "{a b: 1}",
    ]
    assert rows(docs) == [bad(d) for d in docs]
    assert rows(docs, allowUnquotedFieldNames="true") == [
        {"a": 1},
        {"a": 3, "b": "q"},
        {"a": 4},
        {"a": 5},  # a digit may start a name
        bad(docs[4]),
    ]


def test_numeric_leading_zeros() -> None:
    docs = ['{"a": 007}', '{"a": -00}', '{"d": 00.5}', '{"b": 0012}', '{"a": 0}']
    assert rows(docs) == [bad(docs[0]), bad(docs[1]), bad(docs[2]), bad(docs[3]), {"a": 0}]
    assert rows(docs, allowNumericLeadingZeros="true") == [
        {"a": 7},
        {"a": 0},
        {"d": 0.5},
        {"b": "12"},  # a number into a string field: Jackson writes its value
        {"a": 0},
    ]


def test_non_numeric_numbers() -> None:
    docs = [
        '{"d": NaN}',
        '{"d": Infinity}',
        '{"d": +Infinity}',
        '{"d": -Infinity}',
        '{"d": +INF}',
        '{"d": -INF}',
        '{"d": "+INF"}',
        '{"d": "-Infinity"}',
    ]
    on = rows(docs)
    assert math.isnan(on[0]["d"])  # type: ignore[index]
    assert [r["d"] for r in on[1:]] == [  # type: ignore[index]
        math.inf,
        math.inf,
        -math.inf,
        math.inf,
        -math.inf,
        math.inf,
        -math.inf,
    ]
    assert rows(docs, allowNonNumericNumbers="false") == [bad(d) for d in docs]
    # never: INF, Inf, -NaN
    others = ['{"d": INF}', '{"d": Inf}', '{"d": -NaN}', '{"d": +NaN}']
    assert rows(others) == [bad(d) for d in others]
    # a non-numeric number into a string field: quoted, as Jackson writes it
    assert rows(['{"b": +INF}', '{"b": -INF}']) == [{"b": '"Infinity"'}, {"b": '"-Infinity"'}]


def test_backslash_escaping_any_character() -> None:
    docs = ['{"b": "a\\qb\\%"}', "{'b': '\\x'}"]
    assert rows(docs) == [bad(d) for d in docs]
    assert rows(docs, allowBackslashEscapingAnyCharacter="true") == [{"b": "aqb%"}, {"b": "x"}]


def test_unquoted_control_chars() -> None:
    docs = ['{"b": "a\tb\x01"}', "{'b': 'c\nd'}", '{"a\tb": 1, "a": 2}']
    assert rows(docs) == [bad(d) for d in docs]
    assert rows(docs, allowUnquotedControlChars="true") == [
        {"b": "a\tb\x01"},
        {"b": "c\nd"},
        {"a": 2},
    ]


def test_strict_json_whatever_the_features() -> None:
    everything = {
        "allowComments": "true",
        "allowUnquotedFieldNames": "true",
        "allowNumericLeadingZeros": "true",
        "allowBackslashEscapingAnyCharacter": "true",
        "allowUnquotedControlChars": "true",
    }
    docs = [
        '{"a": 1,}',
        "[1, 2",
        '{"a": +1}',
        '{"a": .5}',
        '{"a": 1.}',
        "{,}",
        '{"a" 1}',
        "{'a: 1}",
    ]
    assert rows(docs, **everything) == [bad(d) for d in docs]


def test_lenient_parser_bounds() -> None:
    features = Features(allow_comments=True)
    deep = "/**/" + "[" * MAX_NESTING + "]" * MAX_NESTING
    assert isinstance(parse_document(deep, 0, features), list)
    with pytest.raises(Malformed, match="nested deeper"):
        parse_document("/**/" + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), 0, features)
    # an escaped surrogate pair is one character, a lone one stays (the decoder writes '?')
    assert parse_document("{'s': '\\ud83d\\ude00'}", 0, Features()) == {"s": "\U0001f600"}
    assert rows(["{'b': '\\ud800', 'a': 1}"]) == [{"a": 1, "b": "?"}]


def test_duplicate_keys_through_the_lenient_parser() -> None:
    assert rows(["{'a': 1, 'a': 'x'}"]) == [{"a": 1, "_corrupt_record": "{'a': 1, 'a': 'x'}"}]
    assert rows(["{'b': {'k': 1, 'k': 2}}"]) == [{"b": '{"k":1,"k":2}'}]


# -- dates and timestamps -----------------------------------------------------------------------


def test_timestamp_format_without_fallback() -> None:
    docs = ['{"t": "02/01/2024 10:00"}', '{"t": "2024-01-02T10:00:00Z"}', '{"t": 1700000000}']
    got = rows(docs, timestampFormat="dd/MM/yyyy HH:mm")
    assert got == [
        {"t": dt.datetime(2024, 1, 2, 10, tzinfo=UTC)},
        bad(docs[1]),  # a format given: no fallback to the ISO forms
        {"t": dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)},  # numbers: seconds
    ]
    with_fallback = rows(
        docs, timestampFormat="dd/MM/yyyy HH:mm", enableDateTimeParsingFallback="true"
    )
    assert with_fallback[1] == {"t": dt.datetime(2024, 1, 2, 10, tzinfo=UTC)}


def test_date_format_and_fallbacks() -> None:
    docs = ['{"dt": "02/01/2024"}', '{"dt": "2024-01-02"}', '{"dt": "123"}']
    assert rows(docs, dateFormat="dd/MM/yyyy") == [
        {"dt": dt.date(2024, 1, 2)},
        bad(docs[1]),
        bad(docs[2]),
    ]
    # without a format: stringToDate, then an integer of days since the epoch
    assert rows(docs) == [bad(docs[0]), {"dt": dt.date(2024, 1, 2)}, {"dt": dt.date(1970, 5, 4)}]
    assert rows(docs, enableDateTimeParsingFallback="false")[2] == bad(docs[2])


def test_time_zone_option() -> None:
    docs = ['{"t": "2024-07-01 12:00:00"}', '{"t": "2024-07-01T12:00:00Z"}']
    assert rows(docs, timeZone="America/New_York") == [
        {"t": dt.datetime(2024, 7, 1, 16, tzinfo=UTC)},
        {"t": dt.datetime(2024, 7, 1, 12, tzinfo=UTC)},
    ]
    assert rows(docs[:1], timeZone="+05:30", timestampFormat="yyyy-MM-dd HH:mm:ss") == [
        {"t": dt.datetime(2024, 7, 1, 6, 30, tzinfo=UTC)}
    ]


def test_fast_path_agrees_with_the_rows_under_options() -> None:
    options = json_options({"timestampFormat": "dd/MM/yyyy HH:mm", "timeZone": "Europe/Paris"})
    no_corrupt = {"type": "struct", "fields": SCHEMA["fields"][:-1]}  # type: ignore[index]
    docs = ['{"a": 1, "t": "02/01/2024 10:00"}', '{"t": "03/07/2024 10:00", "b": "x"}', None]
    fast = JsonDecoder(no_corrupt, options=options)
    got = fast.decode(pa.array(docs))
    assert (fast.fast_batches, fast.slow_batches) == (1, 0)
    assert got.to_pylist()[0]["t"] == dt.datetime(2024, 1, 2, 9, tzinfo=UTC)
    assert got.to_pylist()[1]["t"] == dt.datetime(2024, 7, 3, 8, tzinfo=UTC)
    # the ISO cast is not used with a format: an ISO string is bad, in both paths
    for values in (
        ['{"t": "2024-01-02T10:00:00Z"}'],
        ['{"t": "2024-01-02T10:00:00Z"}', "{'a': 1}"],
    ):
        with pytest.raises(Exception, match="expected timestamp"):
            JsonDecoder(no_corrupt, options=options).decode(pa.array(values))
    # a feature-only document (single quotes) takes the per-row path and reads there
    mixed = JsonDecoder(no_corrupt, options=options)
    out = mixed.decode(pa.array(['{"a": 1}', "{'a': 2}"]))
    assert [r["a"] for r in out.to_pylist()] == [1, 2]
    assert (mixed.fast_batches, mixed.slow_batches) == (0, 1)


# -- the options, checked -----------------------------------------------------------------------


def test_json_options_checked() -> None:
    assert json_options({}) == JsonOptions()
    assert json_options({"allowcomments": "TRUE"}).features.allow_comments
    with pytest.raises(JsonOptionError, match="'allowComments'"):
        json_options({"allowComments": "yes"})
    with pytest.raises(JsonOptionError, match=r"'timestampFormat'.*'Y'"):
        json_options({"timestampFormat": "YYYY-MM-dd"})
    with pytest.raises(JsonOptionError, match=r"'dateFormat'.*'E'"):
        json_options({"dateFormat": "E, dd MMM yyyy"})
    with pytest.raises(JsonOptionError, match="'timeZone'"):
        json_options({"timeZone": "Mars/Olympus"})
    with pytest.raises(JsonOptionError, match="'timeZone'"):
        json_options({"timeZone": ""})


BASE = {"valueformat": "json", "valueschema": "a INT, t TIMESTAMP"}


def test_payload_reads_them_for_json_columns() -> None:
    options = parse_payload_options(
        {**BASE, "timestampformat": "dd/MM/yyyy", "allowsinglequotes": "false", "timezone": "PST"}
    )
    assert options.json.timestamp_format == "dd/MM/yyyy"
    assert not options.json.features.allow_single_quotes
    assert options.json.time_zone == "PST"
    # the key's JSON takes them too (shared, as mode)
    key = parse_payload_options(
        {"keyformat": "json", "keyschema": "k STRING", "allowcomments": "true"}
    )
    assert key.json.features.allow_comments


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"timestampformat": "yyyy-ww"}, "Option 'timestampFormat'.*'w'"),
        ({"dateformat": "G yyyy"}, "Option 'dateFormat'.*'G'"),
        ({"timezone": "nowhere"}, "Option 'timeZone'"),
        ({"allownonnumericnumbers": "maybe"}, "Option 'allowNonNumericNumbers'"),
        ({"locale": "fr-FR"}, "Option 'locale'"),
    ],
)
def test_payload_refuses_naming_the_option(opts: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_payload_options({**BASE, **opts})


def test_payload_needs_a_json_column() -> None:
    with pytest.raises(ConfigError, match="'timestampFormat' is from_json's"):
        parse_payload_options({"timestampformat": "yyyy"})
    # a write ignores them (the sink writes to_json's default formats)
    assert parse_payload_options({"valueformat": "json", "dateformat": "G"}, writing=True)


def test_no_effect_options_warn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="spark_kafka_py.spark.payload"):
        options = parse_payload_options({**BASE, "multiline": "true", "primitivesasstring": "x"})
    assert options.json == JsonOptions()
    text = caplog.text
    assert "Option 'multiLine' has no effect here" in text
    assert "Option 'primitivesAsString' has no effect here" in text
