"""formats/json/decode.py without Spark: ``decimal(p,s)``, ``binary`` and ``timestamp_ntz``
fields and the ``timestampNTZFormat`` option. Expected values are written out by hand (the
behaviours were measured on Spark 4.3's ``from_json``: test_from_json_types_oracle.py).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonDecodeError, JsonSchemaError
from spark_kafka_py.formats.json.decode import JsonDecoder, arrow_type_of, decode_json
from spark_kafka_py.formats.json.options import JsonOptionError, JsonOptions, json_options


def _f(name: str, spark: object) -> dict[str, object]:
    return {"name": name, "type": spark, "nullable": True, "metadata": {}}


def _struct(*fields: dict[str, object]) -> dict[str, object]:
    return {"type": "struct", "fields": list(fields)}


def _one(spark: object, doc: str, options: JsonOptions | None = None) -> object:
    """The field ``v`` of ``doc`` read as ``spark`` in PERMISSIVE; ``"BAD"`` for a bad row
    whose other field ``i`` survived, ``"MALFORMED"`` when ``i`` was lost too."""
    schema = _struct(_f("v", spark), _f("i", "integer"), _f("_corrupt_record", "string"))
    (row,) = decode_json(pa.array([doc]), schema, mode="PERMISSIVE", options=options).to_pylist()
    if row["_corrupt_record"] is None:
        return row["v"]
    assert row["v"] is None
    return "BAD" if row["i"] == 7 else "MALFORMED"


# -- decimal ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", Decimal("1.00")),
        ("1.005", Decimal("1.01")),  # HALF_UP, on the exact text (not a double's 1.00499...)
        ("1.004", Decimal("1.00")),
        ("-1.005", Decimal("-1.01")),  # half away from zero
        ("0.005", Decimal("0.01")),
        ("-0.005", Decimal("-0.01")),
        ("0.001", Decimal("0.00")),
        ("-0.001", Decimal("0.00")),
        ("-0.0", Decimal("0.00")),
        ("999.994", Decimal("999.99")),
        ("999.995", "BAD"),  # rounds to 1000.00: six digits
        ("1000", "BAD"),
        ("1e2", Decimal("100.00")),
        ("1E-3", Decimal("0.00")),
        ("5e-3", Decimal("0.01")),
        ("1e-1000", Decimal("0.00")),
        ("1e-10000000", Decimal("0.00")),
        ("1e-700000000", "BAD"),  # BigDecimal.setScale would divide by 10**700000002
        ("1e2147483648", "BAD"),  # the scale is not an int
        ("1e1000", "BAD"),
        ("NaN", "BAD"),
        ("Infinity", "BAD"),
        ("-Infinity", "BAD"),
        # strings: commas dropped, then BigDecimal's grammar (no spaces, no NaN)
        ('"1.5"', Decimal("1.50")),
        ('"+1.5"', Decimal("1.50")),
        ('".5"', Decimal("0.50")),
        ('"5."', Decimal("5.00")),
        ('"1e+2"', Decimal("100.00")),
        ('"1,0.5"', Decimal("10.50")),
        ('"1,,2"', Decimal("12.00")),
        ('"-,1"', Decimal("-1.00")),
        ('"1,000.5"', "BAD"),  # 1000.50: six digits
        ('"\\u0661\\u0662"', Decimal("12.00")),  # Arabic-Indic digits: Character.isDigit
        ('"\\uff11"', Decimal("1.00")),  # a fullwidth 1
        ('"0e-700000000"', Decimal("0.00")),
        ('","', "BAD"),
        ('""', "BAD"),
        ('" 1.5 "', "BAD"),
        ('"1.5\\n"', "BAD"),
        ('"1_000"', "BAD"),
        ('"0x10"', "BAD"),
        ('"NaN"', "BAD"),
        ('"Infinity"', "BAD"),
        ('"."', "BAD"),
        ('"-"', "BAD"),
        ('"e5"', "BAD"),
        ('"1.5d"', "BAD"),
        ('"1e12345678901"', "BAD"),  # eleven exponent digits
        ('"1e00000000000000000002"', Decimal("100.00")),  # leading zeros do not count
        ("true", "BAD"),
        ("[1]", "BAD"),
        ("{}", "BAD"),
        ("null", None),
    ],
)
def test_decimal_5_2(value: str, expected: object) -> None:
    assert _one("decimal(5,2)", f'{{"v": {value}, "i": 7}}') == expected


@pytest.mark.parametrize(
    ("spark", "value", "expected"),
    [
        ("decimal(38,0)", "9" * 38, Decimal("9" * 38)),
        ("decimal(38,0)", "1" + "0" * 38, "BAD"),
        ("decimal(38,0)", "0.5", Decimal("1")),
        ("decimal(38,0)", "2.5", Decimal("3")),
        ("decimal(38,0)", "-2.5", Decimal("-3")),
        ("decimal(38,0)", "9.9e37", Decimal("99" + "0" * 36)),
        ("decimal(38,0)", "1e38", "BAD"),
        ("decimal(10,10)", "0.12345678905", Decimal("0.1234567891")),
        ("decimal(10,10)", "0.99999999999", "BAD"),  # rounds to 1.0000000000
        ("decimal(10,10)", "1", "BAD"),
        ("decimal(38,38)", "0.1", Decimal("0.1")),
        ("decimal(38,38)", "1e-39", Decimal(0)),
        ("decimal", "12345.6", Decimal("12346")),  # decimal(10,0)
        ("decimal", "12345678901", "BAD"),
    ],
)
def test_decimal_precisions(spark: str, value: str, expected: object) -> None:
    got = _one(spark, f'{{"v": {value}, "i": 7}}')
    assert got == expected
    if isinstance(got, Decimal):
        assert got.as_tuple().exponent == arrow_type_of(spark).scale * -1 or got == 0


def test_decimal_bounds_hold_for_huge_exponents() -> None:
    # no 10**n is ever built: these answer at once (a wrong path would not return)
    for text in ("1e-2147483647", "9e2147483647", "1e-646456990", "-1e646456990"):
        assert _one("decimal(38,10)", f'{{"v": {text}, "i": 7}}') in ("BAD", Decimal(0))
    # as a string (BigDecimal's grammar, no length limit: Spark gives 0.00); as a number token,
    # more digits than Jackson takes (maxNumberLength 1000): the document is malformed
    assert _one("decimal(5,2)", '{"v": "0.' + "0" * 5000 + '1", "i": 7}') == Decimal("0.00")
    assert _one("decimal(5,2)", '{"v": 0.' + "0" * 5000 + '1, "i": 7}') == "MALFORMED"


# -- binary -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("QUJD", b"ABC"),
        ("QUI=", b"AB"),
        ("QQ==", b"A"),
        ("", b""),
        ("//8=", b"\xff\xff"),
        ("+/+/", b"\xfb\xff\xbf"),
        ("QQ==QUJD", b"AABC"),  # more quads after a padded one
        ("QUI=QUJD", b"ABABC"),
        (" QUJD", b"ABC"),  # whitespace before a quad and at the end
        ("QUJD ", b"ABC"),
        ("QUJD  QUJD", b"ABCABC"),
        ("\\nQUJD\\r\\n", b"ABC"),
        ("\\tQUJD", b"ABC"),
        ("QUJ\\u0044", b"ABC"),  # escapes are characters like the others
        ("QQ\\u003d\\u003d", b"A"),
        ("QR==", b"A"),  # the unused bits are ignored
        ("QUF=", b"AA"),
        ("QUI", "BAD"),  # padding is required
        ("QQ", "BAD"),
        ("QU JD", "BAD"),  # no whitespace inside a quad
        ("QU\\tJD", "BAD"),
        ("-_-_", "BAD"),  # not the URL alphabet
        ("QUJD=", "BAD"),
        ("====", "BAD"),
        ("Q===", "BAD"),
        ("QQ=A", "BAD"),
        ("Q=", "BAD"),
        ("Q!JD", "BAD"),
        ("Q\\u00e9\\u00e9=", "BAD"),
        ("\\u003dQUJD", "BAD"),
        ('Q\\"', "BAD"),  # an escaped quote is a bad character, not the end
        ("QUJDQU", "BAD"),
        ("QUJDQUI", "BAD"),
        # the string ends one character into a quad, or right after one '=': Jackson reads
        # on past the closing quote and the document is malformed (i lost too)
        ("Q", "MALFORMED"),
        ("QQ=", "MALFORMED"),
        ("QQ\\u003d", "MALFORMED"),
        ("QUJDQ", "MALFORMED"),
    ],
)
def test_binary_base64(text: str, expected: object) -> None:
    assert _one("binary", f'{{"v": "{text}", "i": 7}}') == expected
    assert _one("binary", f'{{"i": 7, "v": "{text}"}}') == expected


@pytest.mark.parametrize("value", ["123", "true", '["QQ=="]', "{}", "1.5"])
def test_binary_from_other_json_types_is_bad(value: str) -> None:
    assert _one("binary", f'{{"v": {value}, "i": 7}}') == "BAD"


def test_binary_single_quotes() -> None:
    assert _one("binary", "{'v': 'QQ==', 'i': 7}") == b"A"


# A single-quoted string is decoded from its whole text (Base64Variant.decode(String)): the
# strings a double-quoted one makes malformed are bad values (Spark 4.3's from_json: v null,
# i 7, the corrupt record).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Q", "BAD"),
        ("QQ=", "BAD"),
        ("QQ\\u003d", "BAD"),
        ("QUJDQ", "BAD"),
        ("QUJ", "BAD"),
        ("QUJD", b"ABC"),
        (" QUI= ", b"AB"),
    ],
)
def test_binary_single_quoted_base64(text: str, expected: object) -> None:
    assert _one("binary", f"{{'v': '{text}', 'i': 7}}") == expected
    assert _one("binary", f'{{"i": 7, "v": \'{text}\'}}') == expected


# Raw control characters (Spark 4.3's from_json): Jackson's base64 decoder reads a binary
# field's string as it goes, skipping them before a quad and at the end; inside a quad they
# are a bad value, after a bad character (the rest of the string skipped) or in any other
# string the document is malformed.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\tQUJD\t", b"ABC"),
        ("QUJD\x01", b"ABC"),
        ("QU\tJD", "BAD"),
        ("QUJD\tQ!JD", "BAD"),
        ("Q!J\tD", "MALFORMED"),
    ],
)
def test_binary_raw_control_characters(text: str, expected: object) -> None:
    assert _one("binary", f'{{"v": "{text}", "i": 7}}') == expected


def test_raw_control_characters_elsewhere_are_malformed() -> None:
    assert _one("string", '{"v": "a\tb", "i": 7}') == "MALFORMED"
    assert _one("binary", '{"zz": "a\tb", "v": "QQ==", "i": 7}') == "MALFORMED"


def test_binary_single_quoted_in_an_array_is_bad() -> None:
    assert _one({"type": "array", "elementType": "binary", "containsNull": True},
                "{'v': [ 'Q' ], 'i': 7}") == "BAD"  # fmt: skip


# -- timestamp_ntz ----------------------------------------------------------------------------


def _ntz(*parts: int) -> dt.datetime:
    return dt.datetime(*parts)  # timestamp_ntz: naive on purpose


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-01-02T03:04:05", _ntz(2020, 1, 2, 3, 4, 5)),
        ("2020-01-02 03:04:05.123456789", _ntz(2020, 1, 2, 3, 4, 5, 123456)),
        ("2020-01-02T03:04:05.1", _ntz(2020, 1, 2, 3, 4, 5, 100000)),
        ("2020-01-02T03:04:05.", _ntz(2020, 1, 2, 3, 4, 5)),
        ("2020-01-02T03:04", _ntz(2020, 1, 2, 3, 4)),
        ("2020-01-02T03", _ntz(2020, 1, 2, 3)),
        ("2020-01-02T3:4", _ntz(2020, 1, 2, 3, 4)),
        ("2020-1-2 3:4:5", _ntz(2020, 1, 2, 3, 4, 5)),
        ("2020-01-02", _ntz(2020, 1, 2)),
        ("2020-01", _ntz(2020, 1, 1)),
        ("2020", _ntz(2020, 1, 1)),
        ("+2020-01-02", _ntz(2020, 1, 2)),
        (" 2020-01-02T03:04:05 ", _ntz(2020, 1, 2, 3, 4, 5)),
        ("2020-01-02 ", _ntz(2020, 1, 2)),
        ("0001-01-01T00:00:00", _ntz(1, 1, 1)),
        ("9999-12-31T23:59:59.999999", _ntz(9999, 12, 31, 23, 59, 59, 999999)),
        ("1582-10-10T00:00:00", _ntz(1582, 10, 10)),  # proleptic Gregorian, no rebase
        # a zone or offset: refused (allowTimeZone = false)
        ("2020-01-02T03:04:05Z", "BAD"),
        ("2020-01-02T03:04:05 Z", "BAD"),
        ("2020-01-02T03:04:05+01:00", "BAD"),
        ("2020-01-02T03:04:05 +01:00", "BAD"),
        ("2020-01-02T03:04:05-0800", "BAD"),
        ("2020-01-02T03:04:05+1", "BAD"),
        ("2020-01-02T03:04:05 UTC", "BAD"),
        ("2020-01-02T03:04:05GMT", "BAD"),
        ("2020-01-02 03:04:05GMT+01:00", "BAD"),
        ("2020-01-02T03:04:05 Europe/Paris", "BAD"),
        # not a date-time
        ("T03:04:05", "BAD"),
        ("03:04:05", "BAD"),
        ("2020-01-02T", "BAD"),
        ("2020-01-02X03:04:05", "BAD"),
        ("2020-01-02\\t03:04:05", "BAD"),
        ("2020-02-30T00:00:00", "BAD"),
        ("2020-01-02T24:00:00", "BAD"),
        ("2020-01-02T03:04:60", "BAD"),
        ("\\u00a02020-01-02", "BAD"),  # not Java whitespace
        ("\\u0662020-01-02", "BAD"),  # ASCII digits only
        ("", "BAD"),
    ],
)
def test_timestamp_ntz_strings(text: str, expected: object) -> None:
    assert _one("timestamp_ntz", f'{{"v": "{text}", "i": 7}}') == expected


@pytest.mark.parametrize("value", ["1577934245", "-1", "1.5", "true", '["2020-01-02"]', "{}"])
def test_timestamp_ntz_from_other_json_types_is_bad(value: str) -> None:
    # unlike timestamp, an integer is not seconds since the epoch
    assert _one("timestamp_ntz", f'{{"v": {value}, "i": 7}}') == "BAD"


def test_timestamp_ntz_ignores_the_time_zone() -> None:
    options = json_options({"timeZone": "America/New_York"})
    doc = '{"v": "2020-01-02T03:04:05", "i": 7}'
    assert _one("timestamp_ntz", doc, options) == _ntz(2020, 1, 2, 3, 4, 5)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyy/MM/dd HH:mm", "2020/01/02 03:04", _ntz(2020, 1, 2, 3, 4)),
        ("yyyy/MM/dd HH:mm", "2020-01-02T03:04:05", "BAD"),  # no fallback
        ("yyyy/MM/dd HH:mm", "2020/01/02 03:04 ", "BAD"),
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "2020-01-02T03:04:05+01:00", "BAD"),  # a zone
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "2020-01-02T03:04:05Z", "BAD"),
        ("yyyy-MM-dd HH:mm:ss[XXX]", "2020-01-02 03:04:05", _ntz(2020, 1, 2, 3, 4, 5)),
        ("yyyy-MM-dd HH:mm:ss[XXX]", "2020-01-02 03:04:05+01:00", "BAD"),
        ("yyyy-MM-dd HH:mm:ss VV", "2020-01-02 03:04:05 UTC", "BAD"),
        ("dd.MM.yyyy", "02.01.2020", _ntz(2020, 1, 2)),
        ("HH:mm", "03:04", _ntz(1970, 1, 1, 3, 4)),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2020-01-02 03:04:05.1", _ntz(2020, 1, 2, 3, 4, 5, 100000)),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2020-01-02 03:04:05.1234", "BAD"),
        ("yyyy-MM-dd hh:mm a", "2020-01-02 03:04 pm", _ntz(2020, 1, 2, 15, 4)),
        ("yyyyMMddHHmmss", "20200102030405", _ntz(2020, 1, 2, 3, 4, 5)),
    ],
)
def test_timestamp_ntz_format(pattern: str, text: str, expected: object) -> None:
    for fallback in ({}, {"enableDateTimeParsingFallback": "true"}):
        options = json_options({"timestampNTZFormat": pattern, **fallback})
        assert _one("timestamp_ntz", f'{{"v": "{text}", "i": 7}}', options) == expected


def test_timestamp_format_and_ntz_format_are_apart() -> None:
    schema = _struct(_f("t", "timestamp_ntz"), _f("ts", "timestamp"))
    doc = '{"t": "2020-01-02T03:04:05", "ts": "2020/01/02"}'
    only_ts = json_options({"timestampFormat": "yyyy/MM/dd"})
    (row,) = decode_json(pa.array([doc]), schema, options=only_ts).to_pylist()
    assert row == {
        "t": _ntz(2020, 1, 2, 3, 4, 5),
        "ts": dt.datetime(2020, 1, 2, tzinfo=dt.timezone.utc),
    }
    only_ntz = json_options({"timestampNTZFormat": "yyyy/MM/dd"})
    with pytest.raises(JsonDecodeError):
        decode_json(pa.array([doc]), schema, options=only_ntz)
    doc2 = '{"t": "2020/01/02", "ts": "2020-01-02T03:04:05Z"}'
    (row,) = decode_json(pa.array([doc2]), schema, options=only_ntz).to_pylist()
    assert row == {
        "t": _ntz(2020, 1, 2),
        "ts": dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
    }


def test_timestamp_ntz_format_option() -> None:
    assert json_options({"timestampntzformat": "yyyy"}).timestamp_ntz_format == "yyyy"
    assert json_options({}).timestamp_ntz_format is None
    with pytest.raises(JsonOptionError, match=r"Option 'timestampNTZFormat'.*'w'"):
        json_options({"timestampNTZFormat": "yyyy-ww"})


# -- containers, modes, types, paths ----------------------------------------------------------

CONTAINERS = _struct(
    _f("a", {"type": "array", "elementType": "decimal(3,1)", "containsNull": True}),
    _f("m", {"type": "map", "keyType": "string", "valueType": "binary", "valueContainsNull": True}),
    _f("s", _struct(_f("t", "timestamp_ntz"), _f("i", "integer"))),
    _f("_corrupt_record", "string"),
)


def test_containers() -> None:
    docs = [
        '{"a": [1.25, 2, null], "m": {"k": "QQ==", "e": ""}, "s": {"t": "2020-01-02", "i": 1}}',
        # a bad element: the array or map is null; a struct keeps its other fields
        '{"a": [1000, 2], "m": {"k": "!", "j": "QQ=="}, "s": {"t": "2020-01-02Z", "i": 1}}',
        # a malformed base64 inside a map: the whole row
        '{"s": {"i": 1}, "m": {"k": "Q"}}',
    ]
    rows = decode_json(pa.array(docs), CONTAINERS, mode="PERMISSIVE").to_pylist()
    assert rows[0] == {
        "a": [Decimal("1.3"), Decimal("2.0"), None],
        "m": [("k", b"A"), ("e", b"")],
        "s": {"t": _ntz(2020, 1, 2), "i": 1},
        "_corrupt_record": None,
    }
    assert rows[1] == {"a": None, "m": None, "s": {"t": None, "i": 1}, "_corrupt_record": docs[1]}
    assert rows[2] == {"a": None, "m": None, "s": None, "_corrupt_record": docs[2]}


@pytest.mark.parametrize(
    "doc",
    [
        '{"a": [1000]}',
        '{"m": {"k": "QUI"}}',
        '{"m": {"k": "Q"}}',
        '{"s": {"t": 5}}',
    ],
)
def test_failfast(doc: str) -> None:
    with pytest.raises(JsonDecodeError) as info:
        decode_json(pa.array(['{"a": [1]}', doc]), CONTAINERS)
    assert info.value.index == 1


def test_arrow_types() -> None:
    schema = _struct(_f("d", "decimal(7, 3)"), _f("b", "binary"), _f("t", "timestamp_ntz"))
    assert arrow_type_of(schema) == pa.struct(
        [
            pa.field("d", pa.decimal128(7, 3)),
            pa.field("b", pa.binary()),
            pa.field("t", pa.timestamp("us")),
        ]
    )
    assert arrow_type_of("decimal") == pa.decimal128(10, 0)


@pytest.mark.parametrize(
    "spark", ["decimal(39,0)", "decimal(0,0)", "decimal(3,5)", "decimal(5,-2)", "decimal(5)"]
)
def test_decimal_types_refused(spark: str) -> None:
    with pytest.raises(JsonSchemaError) as info:
        JsonDecoder(_struct(_f("a", "long"), _f("d", spark)))
    assert info.value.pointer == "/fields/1/type"


@pytest.mark.parametrize(
    "spark",
    [
        "decimal(5,2)",
        "binary",
        "timestamp_ntz",
        {"type": "array", "elementType": "binary", "containsNull": True},
        _struct(_f("x", "decimal(5,2)")),
    ],
)
def test_these_types_take_the_per_row_path(spark: object) -> None:
    schema = _struct(_f("a", "long"), _f("v", spark))
    decoder = JsonDecoder(schema)
    assert not decoder.compiled
    decoder.decode(pa.array(['{"a": 1}', '{"a": 2, "v": null}'] * 50))
    assert (decoder.fast_batches, decoder.slow_batches) == (0, 1)
    # the same schema without the field is read by a fast path
    plain = JsonDecoder(_struct(_f("a", "long")))
    plain.decode(pa.array(['{"a": 1}'] * 100))
    assert plain.fast_batches == 1


def test_what_the_sink_writes_reads_back() -> None:
    """encode.py's to_json text of these types (checked against Spark's to_json by
    test_to_json_oracle.py) is read back to the same values (timestamp_ntz is written to the
    millisecond)."""
    from spark_kafka_py.formats.json.encode import encode_json

    schema = _struct(_f("d", "decimal(5,2)"), _f("z", "decimal(20,10)"), _f("b", "binary"))
    schema["fields"].append(_f("t", "timestamp_ntz"))  # type: ignore[attr-defined]
    rows = [
        {"d": Decimal("1.50"), "z": Decimal("0E-10"), "b": b"\x00\xffA", "t": _ntz(2020, 1, 2)},
        {"d": Decimal("-999.99"), "z": Decimal("1E-7"), "b": b"", "t": _ntz(1000, 1, 1, 0, 0, 1)},
        {"d": Decimal("0.01"), "z": Decimal("1234567890.5"), "b": b"AB", "t": None},
        {
            "d": None,
            "z": Decimal("-0.0000000001"),
            "b": bytes(range(256)),
            "t": _ntz(9999, 12, 31, 23, 59, 59, 999000),
        },
    ]
    column = pa.array(rows, arrow_type_of(schema))
    docs = encode_json(column)
    assert docs[1] == b'{"d":-999.99,"z":1.000E-7,"b":"","t":"1000-01-01T00:00:01.000"}'
    read = decode_json(pa.array(docs, pa.binary()), schema)
    assert read.to_pylist() == rows


def test_early_timestamp_ntz_written_then_read() -> None:
    """Years before 1000 are written with four digits, as Spark 4.3's ``to_json`` writes them
    (measured: ``0001-01-01T00:00:01.000``), and read back (failed before the fix: ``1-01-01``)."""
    from spark_kafka_py.formats.json.encode import encode_json

    schema = _struct(_f("t", "timestamp_ntz"))
    rows = [{"t": _ntz(1, 1, 1, 0, 0, 1)}, {"t": _ntz(999, 5, 6, 7, 8, 9, 123000)}]
    docs = encode_json(pa.array(rows, arrow_type_of(schema)))
    assert docs[0] == b'{"t":"0001-01-01T00:00:01.000"}'
    assert decode_json(pa.array(docs, pa.binary()), schema).to_pylist() == rows
