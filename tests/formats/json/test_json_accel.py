"""The compiled JSON reader (``formats/json/_accel.pyx``) against the per-row path (which the
from_json oracle checks): every document decodes to the same row, error and corrupt record
whichever path reads it, in both modes, with Spark's default options and with each option
set; the documents the compiled reader must decline are declined (and then read by the
per-row path), the rest are read by it (``compiled_rows``); number, date and timestamp edge
cases against values written out by hand; hostile input neither crashes nor reads out of
bounds."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from typing import Any, Final

import pyarrow as pa
import pytest

from spark_kafka_py.formats.errors import JsonDecodeError
from spark_kafka_py.formats.json import decode as decode_module
from spark_kafka_py.formats.json.decode import JsonDecoder
from spark_kafka_py.formats.json.options import JsonOptions, json_options

accel = pytest.importorskip("spark_kafka_py.formats.json._accel")


def _f(name: str, spark: object) -> dict[str, object]:
    return {"name": name, "type": spark, "nullable": True, "metadata": {}}


def _struct(*fields: dict[str, object]) -> dict[str, object]:
    return {"type": "struct", "fields": list(fields)}


def _array(element: object) -> dict[str, object]:
    return {"type": "array", "elementType": element, "containsNull": True}


def _map(value: object) -> dict[str, object]:
    return {"type": "map", "keyType": "string", "valueType": value, "valueContainsNull": True}


#: Every leaf type, nested structs, arrays of leaves, of structs and of arrays, the corrupt
#: record field.
SCHEMA = _struct(
    _f("l", "long"),
    _f("i", "integer"),
    _f("sh", "short"),
    _f("by", "byte"),
    _f("d", "double"),
    _f("f", "float"),
    _f("bo", "boolean"),
    _f("s", "string"),
    _f("t", "timestamp"),
    _f("dt", "date"),
    _f("arr", _array("long")),
    _f("st", _struct(_f("x", "long"), _f("t", "timestamp"), _f("in", _struct(_f("y", "double"))))),
    _f("sa", _array(_struct(_f("x", "long"), _f("s", "string")))),
    _f("aa", _array(_array("string"))),
    _f("m", _map("long")),
    _f("ms", _map(_struct(_f("x", "long"), _f("s", "string")))),
    _f("am", _array(_map("double"))),
    _f("_corrupt_record", "string"),
)
#: Without the corrupt-record field.
PLAIN = _struct(*[f for f in SCHEMA["fields"] if f["name"] != "_corrupt_record"])  # type: ignore[attr-defined]

INT_RANGES = {"l": 63, "i": 31, "sh": 15, "by": 7}


class Raw(str):
    """Text put into a document as it is (a number token)."""


def _emit(value: object, rng: random.Random) -> str:
    """A value as JSON text, random whitespace around tokens, strings randomly escaped."""
    ws = rng.choice(["", "", " ", "\n", " \t\r\n"])
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        return text.replace("/", "\\/") if rng.random() < 0.2 else text
    if isinstance(value, list):
        return "[" + ws + ("," + ws).join(_emit(v, rng) for v in value) + ws + "]"
    assert isinstance(value, dict)
    items = [
        f"{json.dumps(k, ensure_ascii=rng.random() < 0.5)}{ws}:{ws}{_emit(v, rng)}"
        for k, v in value.items()
    ]
    return "{" + ws + ("," + ws).join(items) + ws + "}"


def _text(rng: random.Random) -> str:
    alphabet = 'ab\u00e9\u4e2d\U0001f600"\\/\b\f\n\r\t\x00\x1f \u2028'
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))


def _double(rng: random.Random) -> object:
    pick = rng.random()
    if pick < 0.3:
        return rng.uniform(-1e6, 1e6)
    if pick < 0.5:
        return rng.choice([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308])
    if pick < 0.6:
        return rng.randint(-(2**70), 2**70)
    if pick < 0.8:
        mantissa = rng.randint(0, 10 ** rng.randint(1, 20))
        sign = rng.choice(["", "-"])
        exp = rng.choice(["", f"e{rng.randint(-30, 30)}", f"E+{rng.randint(0, 300)}"])
        frac = rng.choice(["", f".{rng.randint(0, 999999)}"])
        return Raw(f"{sign}{mantissa}{frac}{exp}")
    return struct_float(rng)


def struct_float(rng: random.Random) -> float:
    return rng.choice([3.4028234663852886e38, 3.4028235e38, 16777217.0, 1e-46, 1.4e-45, 0.1])


def _timestamp(rng: random.Random) -> object:
    """Mostly a strict ``...Z`` timestamp; sometimes another form, an impossible one, or
    seconds since the epoch (some past 64-bit microseconds)."""
    year = rng.choice([1, 1582, 1969, 1970, 2024, 9999])
    month = rng.randint(1, 12)
    if rng.random() < 0.97:
        day, hour, minute, second = rng.randint(1, 28), rng.randint(0, 23), 59, rng.randint(0, 59)
        frac = rng.choice(["", ".5", ".123456", ".000001", ".12"])
        zone, sep = "Z", rng.choice("T ")
    else:
        day, hour, minute, second = rng.randint(1, 31), rng.randint(0, 24), 0, rng.randint(0, 60)
        frac = rng.choice(["", ".1234567", "."])
        zone, sep = rng.choice(["Z", "", "+02:00"]), rng.choice("Tt ")
    text = f"{year:04d}-{month:02d}-{day:02d}{sep}{hour:02d}:{minute:02d}:{second:02d}{frac}{zone}"
    if rng.random() < 0.1:
        return rng.choice([rng.randint(-(2**43), 2**43), rng.randint(-(10**13), 10**13)])
    return text


def _date(rng: random.Random) -> object:
    """Mostly a strict date; sometimes an impossible day or another form."""
    year = rng.choice([1, 1582, 1900, 1970, 2000, 2023, 2024, 9999])
    if rng.random() < 0.97:
        return f"{year:04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return rng.choice(
        [f"{year:04d}-02-{rng.randint(28, 31):02d}", f"{year}-1-2", "2024-01-02T00:00"]
    )


def _unknown(rng: random.Random, depth: int = 0) -> object:
    pick = rng.random()
    if depth < 3 and pick < 0.2:
        return [_unknown(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 3 and pick < 0.4:
        return {_text(rng): _unknown(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice([None, True, False, 1, -2.5e-3, _text(rng), Raw("0"), Raw("-0.0E+1")])


def good_document(rng: random.Random, temporal: bool = True) -> str:
    """A document the compiled reader reads (values of the schema's types; a number or a
    date or timestamp string may still be out of range: those are declined)."""
    doc: dict[str, object] = {}

    def maybe(name: str, make: Callable[[], object]) -> None:
        r = rng.random()
        if r < 0.75:
            doc[name] = make()
        elif r < 0.85:
            doc[name] = None

    for name, bits in INT_RANGES.items():
        maybe(
            name, lambda b=bits: rng.choice([rng.randint(-(2**b), 2**b - 1), -(2**b), 2**b - 1, 0])
        )
    maybe("d", lambda: _double(rng))
    maybe("f", lambda: _double(rng))
    maybe("bo", lambda: rng.random() < 0.5)
    maybe("s", lambda: _text(rng))
    if temporal:
        maybe("t", lambda: _timestamp(rng))
        maybe("dt", lambda: _date(rng))
    maybe(
        "arr",
        lambda: [
            rng.choice([None, rng.randint(-(2**63), 2**63 - 1)]) for _ in range(rng.randint(0, 4))
        ],
    )
    maybe(
        "st",
        lambda: {
            k: v
            for k, v in {
                "x": rng.randint(-5, 5),
                "t": _timestamp(rng),
                "in": {"y": _double(rng)},
                "q": _unknown(rng),
            }.items()
            if rng.random() < 0.7 and (temporal or k != "t")
        },
    )
    maybe(
        "sa",
        lambda: [
            rng.choice([None, {"x": rng.randint(0, 9)}, {"s": _text(rng), "x": None}, {}])
            for _ in range(rng.randint(0, 3))
        ],
    )
    maybe(
        "aa", lambda: [rng.choice([None, [], [_text(rng), None]]) for _ in range(rng.randint(0, 3))]
    )
    maybe("m", lambda: {_text(rng): rng.choice([None, rng.randint(-9, 9)]) for _ in range(3)})
    maybe(
        "ms",
        lambda: {
            _text(rng): rng.choice([None, {}, {"x": 1, "s": _text(rng)}])
            for _ in range(rng.randint(0, 3))
        },
    )
    maybe("am", lambda: [rng.choice([None, {}, {"k": _double(rng)}]) for _ in range(2)])
    if rng.random() < 0.3:
        doc["zz"] = _unknown(rng)
    if rng.random() < 0.1:
        doc["_corrupt_record"] = "x"  # never read from the document
    if rng.random() < 0.05:
        doc["L"] = 1  # case-sensitive names: not "l"
    keys = list(doc)
    rng.shuffle(keys)
    text = _emit({k: doc[k] for k in keys}, rng)
    return rng.choice(["", " ", "\n\t"]) + text + rng.choice(["", " ", "\r\n"])


#: Documents the compiled reader must decline, each for one reason (the per-row path then
#: reads them: some are good rows for it, most are errors).
DECLINED = [
    '{"d": 1' + "0" * 1000 + "}",  # perhaps more digits than Jackson takes (malformed)
    '{"zz": 1.' + "0" * 999 + "}",  # 1000 digits: taken
    '{"zz": [0.' + "0" * 1000 + "]}",
    "{'l': 1}",  # single quotes
    "{\"s\": 'x'}",
    '{"l": 1 /* c */}',  # comments
    '{"l": 1} // c',
    '{"d": NaN}',  # non-numeric tokens
    '{"d": Infinity}',
    '{"d": -Infinity}',
    '{"f": +INF}',
    '{"zz": NaN}',
    '{"l": 01}',  # leading zeros
    '{"d": 00.5}',
    '{"d": -01}',
    '{"l": 1,}',  # trailing commas
    '{"arr": [1,]}',
    '{"s": "a\tb"}',  # a raw control character in a string
    '{"zz": "a\x01b"}',
    '{"s\n": 1}',
    "[1]",  # not an object
    "null",
    "5",
    '"x"',
    "true",
    '{"l": 1} x',  # something after the object
    '{"l": 1}{}',
    '{"l": 1} ]',
    '{"\\u006c": 5}',  # a name with an escape
    '{"z\\"z": 5}',
    '{"l": 1, "l": 2}',  # a key given twice
    '{"l": 1, "l": "x"}',
    '{"st": {"x": 1, "x": 2}}',
    '{"l": "1"}',  # type mismatches
    '{"l": 1.5}',
    '{"l": 1e3}',
    '{"l": 1.0}',
    '{"l": 9223372036854775808}',
    '{"l": -9223372036854775809}',
    '{"i": 2147483648}',
    '{"i": -2147483649}',
    '{"sh": 32768}',
    '{"sh": -32769}',
    '{"by": 128}',
    '{"by": -129}',
    '{"l": 100000000000000000000}',
    '{"s": 5}',
    '{"s": true}',
    '{"s": 1.5e17}',
    '{"s": {"a": 1}}',
    '{"s": [1]}',
    '{"st": 5}',
    '{"st": []}',
    '{"st": "x"}',
    '{"arr": {}}',
    '{"arr": 5}',
    '{"arr": ["1"]}',
    '{"arr": [1.5]}',
    '{"sa": [1]}',
    '{"aa": [[1]]}',
    '{"bo": "true"}',
    '{"bo": 1}',
    '{"d": "1.5"}',
    '{"d": true}',
    '{"d": "NaN"}',  # strings for float fields
    '{"f": "Infinity"}',
    '{"d": "-INF"}',
    '{"s": "\\ud800"}',  # lone surrogates
    '{"s": "\\udc00x"}',
    '{"s": "\\ud800\\u0041"}',
    '{"s": "\\ud800\\n"}',
    '{"s": "\\x41"}',  # escapes RFC 8259 does not list
    '{"s": "\\\'"}',
    '{"s": "\\u12"}',
    '{"d": 1e400}',  # beyond a double
    '{"d": -1e400}',
    '{"f": 1e400}',
    '{"d": ' + "1" * 400 + "}",
    '{"l": ' + "9" * 400 + "}",
    '{"d": 0.' + "0" * 70 + "1}",
    '{"l": 1',  # truncated
    '{"s": "abc',
    '{"arr": [1, 2',
    '{"st": {"x": 1}',
    '{"l": -}',
    '{"d": 1.}',
    '{"d": .5}',
    '{"d": 1e}',
    '{"d": 1e+}',
    '{"d": +1}',
    '{"l"}',
    '{"l": }',
    '{"l" 1}',
    '{"l": 1 "i": 2}',
    '{,"l": 1}',
    "{",
    "\ufeff{}",  # a byte-order mark
    '{"l": tru}',
    '{"bo": True}',
    '{"bo": nul}',
    '{"zz": [1, NaN]}',  # bad JSON in a field not in the schema
    '{"zz": {"a" 1}}',
    '{"zz": {"a": 1,}}',
    '{"zz": [01]}',
    '{"zz": "\\q"}',
    '{"zz": ' + "[" * 300 + "]" * 300 + "}",  # deeper than MAX_DEPTH (fine for Jackson)
    '{"zz": ' + "[" * 1100 + "]" * 1100 + "}",  # deeper than MAX_NESTING
    '{"zz": ' + '{"a":' * 1100 + "1" + "}" * 1100 + "}",
    '{"t": "2024-01-02T03:04:05+02:00"}',  # other timestamp forms
    '{"t": "2024-01-02"}',
    '{"t": "2024-01-02T03:04:05"}',
    '{"t": "2024-01-02T03:04Z"}',
    '{"t": "2024-1-02T03:04:05Z"}',
    '{"t": "2024-02-30T00:00:00Z"}',
    '{"t": "2023-02-29T00:00:00Z"}',
    '{"t": "0000-01-01T00:00:00Z"}',
    '{"t": "2024-01-02T24:00:00Z"}',
    '{"t": "2024-01-02T03:60:00Z"}',
    '{"t": "2024-01-02T03:04:60Z"}',
    '{"t": "2024-01-02T03:04:05.1234567Z"}',
    '{"t": "2024-01-02T03:04:05.Z"}',
    '{"t": " 2024-01-02T03:04:05Z"}',
    '{"t": "2024-01-02T03:04:05Z "}',
    '{"t": "2024-01-02t03:04:05Z"}',
    '{"t": "+2024-01-02T03:04:05Z"}',
    '{"t": "2024-01-02T03:04:05\\u005a"}',
    '{"t": "2024-01-02T03:04:05 UTC"}',
    '{"t": 1e3}',
    '{"t": 1.5}',
    '{"t": 9223372036855}',
    '{"t": -9223372036855}',
    '{"t": true}',
    '{"dt": "2024-1-2"}',  # other date forms
    '{"dt": "2024-01-02T00:00"}',
    '{"dt": "2024"}',
    '{"dt": "2024-02-30"}',
    '{"dt": "2024-13-01"}',
    '{"dt": "0000-01-01"}',
    '{"dt": 19000}',
    '{"dt": "19000"}',
    '{"dt": "2024-01-02GMT"}',
    '{"m": {"a": 1, "a": 2}}',  # maps: a name given twice
    '{"m": {"a": 1, "b": 2, "\\u0061": 3}}',
    '{"ms": {"a": {}, "a": null}}',
    '{"m": {"a": "x"}}',  # a value of another type
    '{"m": {"a": 1.5}}',
    '{"m": []}',
    '{"m": 5}',
    '{"m": "{}"}',
    '{"am": [{"a": "1"}]}',
    '{"ms": {"a": 5}}',
    '{"m": {"\\ud800": 1}}',  # a lone surrogate in a name
    '{"m": {"a": 1,}}',
    '{"m": {"a" 1}}',
    '{"m": {' + ", ".join(f'"k{i}": {i}' for i in range(65)) + "}}",  # past MAX_MAP_ENTRIES
]
#: Valid JSON whose bytes are not UTF-8 (binary input: the per-row path reads it with U+FFFD).
INVALID_UTF8 = [
    b'{"s": "\xff"}',
    b'{"s": "\xed\xa0\x80"}',
    b'{"zz": "\xc0\xaf"}',
    b'{"s": "a\xe2\x82"}',
]


def _canonical(value: object) -> object:
    """A row with floats as their repr (``-0.0`` and ``0.0`` differ; NaN equals NaN)."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_canonical(v) for v in value)
    return value


def _integers(t: pa.DataType) -> pa.DataType:
    """``t`` with timestamps as int64 and dates as int32 (rows compared as numbers: years
    past 9999 have no ``datetime``)."""
    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _integers(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field("element", _integers(t.value_type)))
    return t


def _rows(array: pa.Array) -> list[object]:
    return [_canonical(r) for r in array.cast(_integers(array.type)).to_pylist()]


def _outcome(decoder: JsonDecoder, values: pa.Array, reference: bool) -> object:
    """The rows (canonical) and the errors reported, or FAILFAST's error."""
    errors: list[tuple[int, str]] = []

    def on_error(error: JsonDecodeError) -> None:
        errors.append((error.index, error.reason))

    try:
        if reference:
            out = decoder._slow(values, on_error)
        else:
            out = decoder.decode(values, on_error=on_error)
    except JsonDecodeError as error:
        return ("raised", error.index, error.reason)
    assert out.type == decoder.arrow_type
    out.validate(full=True)
    return _rows(out), errors


BINARY: Final = pa.binary()


def _agree(
    docs: list[str | bytes | None],
    *,
    schema: object = SCHEMA,
    mode: str = "PERMISSIVE",
    options: JsonOptions | None = None,
    arrow_type: pa.DataType = BINARY,
) -> JsonDecoder:
    """Decode ``docs`` by the compiled path and by the per-row path; assert the same rows
    and errors. Returns the compiled decoder (its counters)."""
    values = pa.array([d.encode() if isinstance(d, str) else d for d in docs], arrow_type)
    compiled = JsonDecoder(schema, mode=mode, options=options)  # type: ignore[arg-type]
    assert compiled.compiled
    reference = JsonDecoder(schema, mode=mode, options=options, compiled=False)  # type: ignore[arg-type]
    assert not reference.compiled
    got = _outcome(compiled, values, reference=False)
    want = _outcome(reference, values, reference=True)
    assert got == want
    return compiled


def _good_batch(seed: int, n: int, temporal: bool = True) -> list[str]:
    rng = random.Random(seed)
    return [good_document(rng, temporal) for _ in range(n)]


def _accepted(seed: int, n: int) -> list[str]:
    """``n`` generated documents the compiled path reads (each alone)."""
    docs = []
    for doc in _good_batch(seed, 2 * n):
        decoder = JsonDecoder(SCHEMA, mode="PERMISSIVE")
        decoder.decode(pa.array([doc.encode()]))
        if decoder.compiled_rows == 1:
            docs.append(doc)
    assert len(docs) >= n
    return docs[:n]


# -- differential ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
@pytest.mark.parametrize("schema", [SCHEMA, PLAIN], ids=["corrupt", "plain"])
def test_generated_documents_agree_and_go_through_the_compiled_path(
    mode: str, schema: object
) -> None:
    docs: list[str | None] = _good_batch(7, 3000)
    if mode == "FAILFAST":
        # without the documents the per-row path calls bad (the first would raise)
        reference = JsonDecoder(schema, mode="PERMISSIVE", compiled=False)
        bad: list[int] = []
        reference._slow(pa.array(docs), lambda e: bad.append(e.index))
        assert 0 < len(bad) < 0.1 * len(docs)
        docs = [d for i, d in enumerate(docs) if i not in set(bad)]
    compiled = _agree(docs, schema=schema, mode=mode)  # type: ignore[arg-type]
    assert compiled.compiled_batches == 1
    # a few are declined (a timestamp string with an offset, an impossible date, ...); most
    # are read by the compiled path
    assert compiled.compiled_rows > 0.9 * len(docs)
    assert compiled.compiled_rows + compiled.declined_rows == len(docs)


@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
def test_each_declined_document_is_declined_and_read_by_the_per_row_path(mode: str) -> None:
    good = _accepted(11, 30)
    for bad in DECLINED:
        # one bad document among good ones (FAILFAST: the first bad row raises, by index)
        docs: list[str | None] = [*good[:10], bad, *good[10:], None, "", " \t\r\n"]
        compiled = _agree(docs, mode=mode)
        if mode == "PERMISSIVE":
            assert compiled.compiled_batches == 1, bad
            assert compiled.declined_rows == 1, bad
            assert compiled.compiled_rows == len(docs) - 1, bad
    for raw in INVALID_UTF8:
        compiled = _agree([*good[:10], raw, *good[10:]], mode=mode)
        if mode == "PERMISSIVE":
            assert compiled.declined_rows == 1, raw


@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
def test_mixed_batches_agree(mode: str) -> None:
    rng = random.Random(5)
    for seed in range(30):
        docs: list[str | bytes | None] = list(_good_batch(100 + seed, 60))
        for _ in range(rng.randint(0, 7)):
            docs.insert(rng.randint(0, len(docs)), rng.choice(DECLINED + INVALID_UTF8))  # type: ignore[operator]
        for _ in range(rng.randint(0, 3)):
            docs.insert(rng.randint(0, len(docs)), rng.choice([None, "", "  "]))
        _agree(docs, mode=mode)


def test_many_declined_documents_send_the_batch_to_the_other_paths() -> None:
    docs: list[str | None] = [*_good_batch(3, 20), *DECLINED[:10]]
    compiled = _agree(docs)
    assert compiled.compiled_batches == 0
    assert compiled.compiled_rows == 0
    assert compiled.fast_batches + compiled.slow_batches == 1


def test_mutated_documents_agree() -> None:
    """Random byte edits of good documents (truncation, insertion, deletion): whatever the
    compiled path accepts, it reads as the per-row path does."""
    rng = random.Random(9)
    accepted = 0
    for seed in range(40):
        docs = _good_batch(500 + seed, 10)
        mutated: list[str | None] = []
        for d in docs:
            k = rng.randrange(len(d) + 1)
            edit = rng.choice(["cut", "insert", "delete", "replace"])
            c = rng.choice(' {}[]":,0-.e1\\ntu"\'')
            if edit == "cut":
                d = d[:k]
            elif edit == "insert":
                d = d[:k] + c + d[k:]
            elif edit == "delete":
                d = d[:k] + d[k + 1 :]
            else:
                d = d[:k] + c + d[k + 1 :]
            mutated.append(d)
        for d in mutated:  # one by one: a batch of declined rows goes elsewhere whole
            compiled = _agree([d])
            accepted += compiled.compiled_rows
    assert accepted > 50  # some edits keep the document valid (in a string, whitespace)


def test_every_prefix_of_a_document_agrees() -> None:
    doc = (
        '{"l": -12, "d": 1.5e-3, "s": "a\\u00e9\\ud83d\\ude00\\n", "arr": [1, null, 3],'
        ' "st": {"x": 1, "in": {"y": 2}}, "sa": [{"x": 1}], "aa": [["x"], []],'
        ' "t": "2024-01-02T03:04:05.5Z", "dt": "2024-02-29", "bo": true, "zz": [{"q": null}]}'
    )
    assert _agree([doc]).compiled_rows == 1
    for k in range(len(doc)):
        compiled = _agree([doc[:k]])
        assert compiled.compiled_rows == (1 if doc[:k].strip() == "" else 0)


@pytest.mark.parametrize(
    "arrow_type", [pa.binary(), pa.large_binary(), pa.string(), pa.large_string()]
)
def test_input_types_slices_and_chunks(arrow_type: pa.DataType) -> None:
    docs: list[str | None] = [*_accepted(21, 50), None, "", DECLINED[0]]
    values = pa.array(docs, arrow_type)
    reference = JsonDecoder(SCHEMA, mode="PERMISSIVE", compiled=False)
    compiled = JsonDecoder(SCHEMA, mode="PERMISSIVE")
    for part in (values, values.slice(3, 40), values.slice(45)):
        assert _rows(compiled.decode(part)) == _rows(reference._slow(part, None))
    chunked = pa.chunked_array([values.slice(0, 20), values.slice(20)])
    assert _rows(compiled.decode(chunked)) == _rows(reference._slow(values, None))
    assert compiled.compiled_batches == 4


#: Each option Spark reads, set away from its default (and the formats): the compiled path
#: stays on; the documents it reads give what the per-row path gives under the option.
OPTION_SETS = [
    {},
    {"allowComments": "true"},
    {"allowUnquotedFieldNames": "true"},
    {"allowSingleQuotes": "false"},
    {"allowNumericLeadingZeros": "true"},
    {"allowNonNumericNumbers": "false"},
    {"allowBackslashEscapingAnyCharacter": "true"},
    {"allowUnquotedControlChars": "true"},
    {"timeZone": "Europe/Paris"},
    {"timeZone": "+05:30"},
    {"enableDateTimeParsingFallback": "false"},
    {"enableDateTimeParsingFallback": "true"},
    {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]X"},
    {"timestampFormat": "dd/MM/yyyy HH:mm", "enableDateTimeParsingFallback": "true"},
    {"dateFormat": "yyyy-MM-dd"},
    {"dateFormat": "dd.MM.yyyy", "enableDateTimeParsingFallback": "false"},
]


@pytest.mark.parametrize(
    "raw", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
def test_options_agree(raw: dict[str, str], mode: str) -> None:
    options = json_options(raw)
    formats = "timestampFormat" in raw or "dateFormat" in raw
    # with a format every non-null date or timestamp is declined: few of them, then
    docs: list[str | None] = _good_batch(31, 400, temporal=not formats)
    if formats:
        docs[::20] = ['{"t": "2024-01-02T03:04:05Z", "dt": "2024-01-02"}'] * len(docs[::20])
    if mode == "FAILFAST":
        reference = JsonDecoder(SCHEMA, mode="PERMISSIVE", options=options, compiled=False)
        bad: list[int] = []
        reference._slow(pa.array(docs), lambda e: bad.append(e.index))
        docs = [d for i, d in enumerate(docs) if i not in set(bad)]
    compiled = _agree(docs, mode=mode, options=options)
    assert compiled.compiled_batches == 1
    assert compiled.compiled_rows > 0.8 * len(docs)
    if formats and mode == "PERMISSIVE":
        assert compiled.declined_rows >= 20
    if mode == "PERMISSIVE":
        # 10 bad documents among 200 good ones at a time (with a format's 10 more, fewer
        # than 1/8 declined: the compiled path reads the batch)
        for k in range(0, len(DECLINED), 10):
            mixed: list[str | None] = list(docs[:200])
            for j, bad in enumerate(DECLINED[k : k + 10]):
                mixed.insert(20 * j + 5, bad)
            assert _agree(mixed, mode=mode, options=options).compiled_batches == 1
    else:
        for bad in DECLINED:  # FAILFAST raises for the first bad one: one at a time
            _agree([*docs[:4], bad, *docs[4:7]], mode=mode, options=options)


def test_without_the_extension_or_with_compiled_false() -> None:
    assert not JsonDecoder(SCHEMA, compiled=False).compiled
    decoder = JsonDecoder(_struct(_f("m", _map("long"))))
    assert decoder.compiled  # maps too
    assert decoder.decode(pa.array([b'{"m": {"a": 1}}'])).to_pylist() == [{"m": [("a", 1)]}]
    assert decoder.compiled_rows == 1


def test_the_extension_missing_leaves_the_other_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode_module, "_ACCEL", None)
    decoder = JsonDecoder(SCHEMA)
    assert not decoder.compiled
    assert decoder.decode(pa.array([b'{"l": 1}'])).to_pylist()[0]["l"] == 1


# -- hand-written expected values --------------------------------------------------------------

#: (token, the double): Python float literals written out (correctly rounded by Python's own
#: reader, not by the code under test).
DOUBLES = [
    ("0.1", 0.1),
    ("-0.0", -0.0),
    ("-0", -0.0),
    ("0", 0.0),
    ("5e-324", 5e-324),
    ("2.4703282292062328e-324", 5e-324),  # just above half the least denormal
    ("2.4703282292062327e-324", 0.0),  # just below: rounds to zero
    ("1e-400", 0.0),
    ("2.2250738585072011e-308", 2.225073858507201e-308),
    ("2.2250738585072012e-308", 2.2250738585072014e-308),
    ("1.7976931348623157e308", 1.7976931348623157e308),
    ("1.7976931348623158e308", 1.7976931348623157e308),
    ("9007199254740993", 9007199254740992.0),  # 2**53 + 1: ties to even
    ("9007199254740995", 9007199254740996.0),
    ("1e22", 1e22),
    ("1e23", 1e23),  # past the exact powers of ten
    ("123456789012345678901234567890", 1.2345678901234568e29),
    ("776.3286005792797", 776.3286005792797),
    ("0.30000000000000004", 0.30000000000000004),
    ("1E+2", 100.0),
    ("12.5e-1", 1.25),
    ("-1.5E-3", -0.0015),
    ("8.98846567431158e307", 8.98846567431158e307),
    ("3.0e-5", 3e-05),
    ("0.000000000000000000000000000001", 1e-30),
    # 17 to 19 digits (past 2**53): the exact 128-bit division
    ("0.12345678901234567", 0.12345678901234566),
    ("1234567890123456789", 1.2345678901234568e18),
    ("9999999999999999999", 1e19),
    ("0.9999999999999999999", 1.0),
    ("4503599627370496.5", 4503599627370496.0),  # halfway: ties to even (down)
    ("4503599627370497.5", 4503599627370498.0),  # halfway: ties to even (up)
    ("-4503599627370497.5", -4503599627370498.0),
    ("9007199254740993.0", 9007199254740992.0),
    ("9007199254740993.00001", 9007199254740994.0),  # just past halfway: up
    ("18014398509481985", 18014398509481984.0),  # 2**54 + 1: ties to even (down)
    ("18014398509481987", 18014398509481988.0),
    ("0.0000000000000000001", 1e-19),
]

#: (token, the float32 value as a double): the double, then ±inf past FLT_MAX, else rounded
#: to float32 to nearest (written out: float32's values near the boundaries).
#: Spark's values (Java's ``Float.parseFloat`` of the text, one rounding; checked against
#: Spark 4.3's ``from_json`` by test_from_json_oracle.py's float test).
FLOATS = [
    ("0.1", 0.10000000149011612),
    ("3.4028234663852886e38", 3.4028234663852886e38),  # FLT_MAX
    ("3.4028235e38", 3.4028234663852886e38),  # past FLT_MAX as a double, rounds to it
    ("-3.4028235e38", -3.4028234663852886e38),
    ("3.40282356e38", 3.4028234663852886e38),  # below the overflow threshold
    ("3.4028236e38", math.inf),  # past it
    ("1.4e-45", 1.401298464324817e-45),  # the least denormal
    ("1e-46", 0.0),
    ("-1e-46", -0.0),
    ("1.1754943508222875e-38", 1.1754943508222875e-38),
]
#: Tokens whose double lies exactly half-way between two floats: declined by the compiled
#: path, decided by the per-row path from the text.
FLOAT_MIDPOINTS = [
    ("16777217", 16777216.0),  # a true tie: to even
    ("16777219", 16777220.0),
    # the double is 16777217.0, half-way; the text is above it: 16777218
    ("16777217.000000001", 16777218.0),
    ("-16777217.000000001", -16777218.0),
    ("16777216.999999999", 16777216.0),
]


def _one(field: str, token: str, *, reference: bool = False) -> tuple[Any, JsonDecoder]:
    """The field's value in ``{field: token}`` by the compiled path (or the per-row path)."""
    decoder = JsonDecoder(SCHEMA, mode="PERMISSIVE", compiled=not reference)
    values = pa.array([f'{{"{field}": {token}}}'.encode()])
    out = decoder._slow(values, None) if reference else decoder.decode(values)
    return out.to_pylist()[0][field], decoder


@pytest.mark.parametrize(("token", "value"), DOUBLES)
def test_doubles(token: str, value: float) -> None:
    got, decoder = _one("d", token)
    assert decoder.compiled_rows == 1
    assert isinstance(got, float) and got == value
    assert math.copysign(1.0, got) == math.copysign(1.0, value)


def test_random_number_tokens_round_as_python() -> None:
    """Tokens of 1 to 19 digits, some exactly halfway between two doubles (odd multiples of
    2**-k written in decimal), against Python's ``float()``."""
    rng = random.Random(13)
    tokens = []
    for _ in range(20_000):
        if rng.random() < 0.3:
            k = rng.randint(1, 5)
            digits = str((rng.randint(2**52, 2**56) | 1) * 5**k)[:19]
        else:
            n = rng.randint(1, 19)
            digits = str(rng.randint(10 ** (n - 1) if n > 1 else 0, 10**n - 1))
        k = rng.randint(0, len(digits))
        whole = digits[: len(digits) - k].lstrip("0") or "0"
        token = whole + ("." + digits[len(digits) - k :] if k else "")
        tokens.append(rng.choice(["", "-"]) + token)
    decoder = JsonDecoder(PLAIN)
    values = pa.array([f'{{"d": {t}}}'.encode() for t in tokens])
    got = decoder.decode(values).field("d").to_pylist()
    assert decoder.compiled_rows == len(tokens)
    assert [repr(x) for x in got] == [repr(float(t)) for t in tokens]


@pytest.mark.parametrize(("token", "value"), FLOATS)
def test_floats(token: str, value: float) -> None:
    got, decoder = _one("f", token)
    assert decoder.compiled_rows == 1
    assert isinstance(got, float) and got == value
    assert math.copysign(1.0, got) == math.copysign(1.0, value)
    reference, _ = _one("f", token, reference=True)
    assert repr(reference) == repr(got)


@pytest.mark.parametrize(("token", "value"), FLOAT_MIDPOINTS)
def test_float_midpoints_are_declined(token: str, value: float) -> None:
    got, decoder = _one("f", token)
    assert decoder.compiled_rows == 0
    assert got == value
    reference, _ = _one("f", token, reference=True)
    assert reference == value


@pytest.mark.parametrize(
    ("field", "token", "value"),
    [
        ("l", "9223372036854775807", 9223372036854775807),
        ("l", "-9223372036854775808", -9223372036854775808),
        ("l", "-0", 0),
        ("i", "2147483647", 2147483647),
        ("i", "-2147483648", -2147483648),
        ("sh", "-32768", -32768),
        ("sh", "32767", 32767),
        ("by", "-128", -128),
        ("by", "127", 127),
        ("t", "0", 0),
        ("t", "1700000000", 1_700_000_000_000_000),
        ("t", "-1", -1_000_000),
        ("t", "9223372036854", 9_223_372_036_854_000_000),
        ("t", "-9223372036854", -9_223_372_036_854_000_000),
    ],
)
def test_integers(field: str, token: str, value: int) -> None:
    decoder = JsonDecoder(PLAIN)
    column = decoder.decode(pa.array([f'{{"{field}": {token}}}'.encode()])).field(field)
    assert decoder.compiled_rows == 1
    if field == "t":
        column = column.cast(pa.int64())
    assert column.to_pylist() == [value]


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01 00:00:00Z", 0),
        ("1969-12-31T23:59:59.5Z", -500_000),
        ("1970-01-01T00:00:00.000001Z", 1),
        ("1970-01-01T00:00:00.12Z", 120_000),
        ("2024-02-29T12:00:00.1Z", 1_709_208_000_100_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000_000),
        ("9999-12-31 23:59:59.999999Z", 253_402_300_799_999_999),
        ("2000-03-01T00:00:00Z", 951_868_800_000_000),
        ("1900-03-01T00:00:00Z", -2_203_891_200_000_000),
    ],
)
def test_timestamps(text: str, micros: int) -> None:
    decoder = JsonDecoder(PLAIN)
    out = decoder.decode(pa.array([json.dumps({"t": text}).encode()]))
    assert decoder.compiled_rows == 1
    assert out.field("t").cast(pa.int64()).to_pylist() == [micros]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("1970-01-01", 0),
        ("1969-12-31", -1),
        ("2000-03-01", 11_017),
        ("2024-02-29", 19_782),
        ("1582-10-15", -141_427),
        ("0001-01-01", -719_162),
        ("9999-12-31", 2_932_896),
        ("1900-02-28", -25_509),
    ],
)
def test_dates(text: str, days: int) -> None:
    decoder = JsonDecoder(PLAIN)
    out = decoder.decode(pa.array([json.dumps({"dt": text}).encode()]))
    assert decoder.compiled_rows == 1
    assert out.field("dt").cast(pa.int32()).to_pylist() == [days]


def test_strings_and_nesting_written_out() -> None:
    doc = (
        '{"s": "a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0000\\u00e9\\ud83d\\ude00\u4e2d",'
        ' "sa": [null, {"x": 1, "s": "y"}, {}], "aa": [[], null, ["p", null]],'
        ' "st": {"in": {}}, "zz": {"l": "ignored"}, "L": 2}'
    )
    decoder = JsonDecoder(SCHEMA)
    row = decoder.decode(pa.array([doc.encode()])).to_pylist()[0]
    assert decoder.compiled_rows == 1
    assert row["s"] == 'a"b\\c/d\b\f\n\r\t\x00\u00e9\U0001f600\u4e2d'
    assert row["sa"] == [None, {"x": 1, "s": "y"}, {"x": None, "s": None}]
    assert row["aa"] == [[], None, ["p", None]]
    assert row["st"] == {"x": None, "t": None, "in": {"y": None}}
    assert row["l"] is None and row["_corrupt_record"] is None


def test_maps_written_out() -> None:
    doc = (
        '{"m": {"b": 2, "a\\n\\u00e9": null, "": 0}, "ms": {"k": {"s": "v"}, "n": null},'
        ' "am": [{}, null, {"x": 1e2}]}'
    )
    decoder = JsonDecoder(SCHEMA)
    row = decoder.decode(pa.array([doc.encode()])).to_pylist()[0]
    assert decoder.compiled_rows == 1
    assert row["m"] == [("b", 2), ("a\n\u00e9", None), ("", 0)]
    assert row["ms"] == [("k", {"x": None, "s": "v"}), ("n", None)]
    assert row["am"] == [[], None, [("x", 100.0)]]


def test_null_empty_and_blank_values_are_null_rows() -> None:
    decoder = JsonDecoder(SCHEMA)
    out = decoder.decode(pa.array([None, b"", b" \t\r\n", b"{}"]))
    assert out.to_pylist()[:3] == [None, None, None]
    assert out.to_pylist()[3] == {f["name"]: None for f in SCHEMA["fields"]}  # type: ignore[index]
    assert decoder.compiled_rows == 4


# -- hostile input --------------------------------------------------------------------------------


def test_the_reader_takes_binary_and_string_arrays_only() -> None:
    plan = JsonDecoder(PLAIN)._plan
    assert plan is not None
    assert plan.decode(pa.array([1, 2]), 0) is None
    result = plan.decode(pa.array([b'{"l": 1}', b"[]"]), 1)
    assert result is not None
    array, declined, order = result
    assert array.to_pylist() == [{**dict.fromkeys(array.type.names), "l": 1}, None]
    assert declined == [1]
    assert order is not None and order.to_pylist() == [0, 2]
    result = plan.decode(pa.array([b'{"l": 2}']), 0)
    assert result is not None and result[1:] == ([], None)
    assert plan.decode(pa.array([b"[]", b"[]"]), 1) is None  # more declined than allowed


@pytest.mark.parametrize(
    "doc",
    [
        "[" * 200_000,
        "{" * 200_000,
        '{"zz":' * 100_000,
        '{"d": ' + "1" * 1_000_000 + "}",
        '{"zz": ' + "1" * 1_000_000 + "}",
        '{"zz": 1' + "e" * 10 + "}",
        '{"d": 1e' + "9" * 100_000 + "}",
        '{"s": "' + "x" * 2_000_000,
        '{"s": "' + "\\" * 1_000_001 + '"}',
        '{"arr": [' + "1," * 500_000 + "1]}",
        '{"zz": "\\u',
        '{"s": "\\ud800\\u',
        "{" + '"a": 1, ' * 100_000 + '"l": 1}',
    ],
    ids=lambda d: d[:12],
)
def test_hostile_documents_are_declined_or_read_alike(doc: str) -> None:
    docs: list[str | None] = [doc]
    _agree(docs)


def test_a_large_batch_with_large_values() -> None:
    big = "x" * 100_000
    docs: list[str | None] = [json.dumps({"s": big, "aa": [[big]] * 3, "l": i}) for i in range(50)]
    compiled = _agree(docs)
    assert compiled.compiled_rows == 50


def test_results_stay_intact_when_the_decoder_reads_again() -> None:
    """The arrays of a batch own their memory: the next batches (small, then past the room
    a batch reserves from the last one, then small again) do not change them."""
    decoder = JsonDecoder(SCHEMA, mode="PERMISSIVE")
    reference = JsonDecoder(SCHEMA, mode="PERMISSIVE", compiled=False)
    first_docs = _accepted(41, 40)
    first = decoder.decode(pa.array([d.encode() for d in first_docs]))
    want = _rows(reference._slow(pa.array(first_docs), None))
    big = "y" * 1_000_000
    for docs in (
        _accepted(42, 40),
        [json.dumps({"s": big, "arr": list(range(1000)), "aa": [[big]]})] * 20,
        _accepted(43, 40),
    ):
        out = decoder.decode(pa.array([d.encode() for d in docs]))
        assert _rows(out) == _rows(reference._slow(pa.array(docs), None))
        assert _rows(first) == want
    assert decoder.compiled_batches == 4 and decoder.declined_rows == 0


def test_empty_and_all_null_batches() -> None:
    decoder = JsonDecoder(PLAIN)
    for values, rows in (
        (pa.array([], pa.binary()), []),
        (pa.chunked_array([], pa.binary()), []),
        (pa.array([None, None], pa.binary()), [None, None]),
        (pa.nulls(3, pa.string()), [None, None, None]),
        (pa.array([""], pa.large_string()), [None]),
    ):
        out = decoder.decode(values)
        out.validate(full=True)
        assert out.type == decoder.arrow_type
        assert out.to_pylist() == rows
    assert decoder.compiled_batches == 5


def test_failfast_raises_for_the_first_bad_row_among_declined_ones() -> None:
    good = _accepted(51, 40)
    docs = [*good[:20], '{"l": 1} x', *good[20:22], '{"l": "y"}', good[22], '{"l": 1.5}']
    decoder = JsonDecoder(SCHEMA, mode="FAILFAST")
    with pytest.raises(JsonDecodeError) as raised:
        decoder.decode(pa.array([d.encode() for d in docs]))
    assert raised.value.index == 23  # '{"l": 1} x' (row 20) is declined but good
    assert "expected long at /l" in raised.value.reason
    assert (decoder.compiled_rows, decoder.declined_rows) == (len(docs) - 3, 3)
    errors: list[int] = []
    permissive = JsonDecoder(SCHEMA, mode="PERMISSIVE")
    out = permissive.decode(pa.array(docs), on_error=lambda e: errors.append(e.index))
    assert errors == [23, 25]
    rows = out.cast(_integers(out.type)).to_pylist()
    assert rows[20]["l"] == 1 and rows[20]["_corrupt_record"] is None
    assert rows[23]["l"] is None and rows[23]["_corrupt_record"] == '{"l": "y"}'
    assert rows[25]["_corrupt_record"] == '{"l": 1.5}'


def test_odd_field_names_and_an_empty_struct() -> None:
    """Names with a quote, a backslash, a control character, non-ASCII, empty, a prefix of
    another; a struct without fields: read as the per-row path reads them."""
    schema = _struct(
        _f('a"b', "long"),
        _f("a\\b", "long"),
        _f("a\tb", "long"),
        _f("\u00e9", "long"),
        _f("", "long"),
        _f("a", "long"),
        _f("ab", "long"),
        _f("e", _struct()),
    )
    docs: list[str | None] = [
        '{"a": 1, "ab": 2, "": 3, "\u00e9": 4, "e": {}}',
        '{"ab": 2, "a": 1, "e": {"x": 1}}',
        '{"a\\"b": 5}',
        '{"a\\\\b": 6}',
        '{"a\\tb": 7}',
        '{"a"b": 8}',
        '{"\\u00e9": 9}',
        '{"e": 1}',
        '{"e": null, "a": null}',
    ]
    for doc in docs:
        _agree([doc], schema=schema)
        _agree([doc], schema=schema, mode="FAILFAST")
    compiled = _agree([docs[0]] * 8 + [docs[1]], schema=schema)
    assert compiled.compiled_rows == 9


def test_one_decoder_from_several_threads() -> None:
    """A plan reads one batch at a time: a batch arriving meanwhile takes the other paths;
    every thread gets the right rows."""
    import threading

    docs = _accepted(61, 100) * 10
    values = pa.array([d.encode() for d in docs])
    want = _rows(JsonDecoder(SCHEMA, mode="PERMISSIVE", compiled=False)._slow(values, None))
    decoder = JsonDecoder(SCHEMA, mode="PERMISSIVE")
    results: list[list[object]] = []

    def run() -> None:
        for _ in range(3):
            results.append(_rows(decoder.decode(values)))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 12 and all(r == want for r in results)
    assert decoder.compiled_batches >= 1


def _any_value(rng: random.Random, depth: int = 0) -> object:
    """Any JSON value, names from the schema's among others (so types clash everywhere)."""
    keys = ["l", "i", "d", "f", "bo", "s", "t", "dt", "arr", "st", "sa", "aa", "m", "ms", "x"]
    r = rng.random()
    if depth < 3 and r < 0.15:
        return [_any_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 3 and r < 0.3:
        return {rng.choice(keys): _any_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return rng.choice(
        [
            None,
            True,
            rng.randint(-(2**64), 2**64),
            rng.randint(-200, 200),
            _double(rng),
            _text(rng),
            _timestamp(rng),
            _date(rng),
            Raw("1e5"),
            Raw("-0"),
            Raw("1.0"),
        ]
    )


@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
def test_values_of_any_type_in_any_field_agree(mode: str) -> None:
    rng = random.Random(17)
    keys = [f["name"] for f in SCHEMA["fields"]] + ["x", "zz"]  # type: ignore[index]
    accepted = 0
    for _ in range(20):
        docs: list[str | None] = [
            _emit({k: _any_value(rng) for k in rng.sample(keys, rng.randint(0, 5))}, rng)
            for _ in range(60)
        ]
        for doc in docs[:10]:
            # alone: the compiled path or, declined, the others
            accepted += _agree([doc], mode=mode).compiled_rows
        _agree(docs, mode=mode)
    assert accepted > 20


# -- documents behind a framing (skip) ---------------------------------------------------------


def _collect(errors: list[tuple[int, str]]) -> Callable[[JsonDecodeError], None]:
    return lambda e: errors.append((e.index, e.reason))


def _framed(docs: list[str | bytes | None], rng: random.Random) -> pa.Array:
    """``docs`` behind Confluent's 5 bytes (magic byte 0, a 4-byte schema id), in a sliced
    array (offset 1)."""
    out: list[bytes | None] = [b"\0\0\0\0\1{}"]
    for d in docs:
        raw = d.encode() if isinstance(d, str) else d
        out.append(None if raw is None else b"\0" + rng.randbytes(4) + raw)
    return pa.array(out, BINARY).slice(1)


@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "other-paths"])
def test_framed_documents_read_in_place_as_the_documents_alone(mode: str, compiled: bool) -> None:
    """``decode(values, skip=5)`` gives the rows and errors of the documents cut out of the
    values, by every path: the compiled reader in place (its declined rows cut out for the
    per-row path), pyarrow's reader and the per-row path."""
    rng = random.Random(21)
    in_place = 0
    for seed in range(12):
        docs: list[str | bytes | None] = list(_good_batch(900 + seed, 40))
        for _ in range(rng.randint(0, 4)):
            docs.insert(rng.randint(0, len(docs)), rng.choice(DECLINED + INVALID_UTF8))  # type: ignore[operator]
        docs.insert(rng.randint(0, len(docs)), rng.choice([None, "", "  "]))
        if mode == "FAILFAST":
            docs = docs[:5]  # a few: the first bad one raises
        values = _framed(docs, rng)
        plain = pa.array([d.encode() if isinstance(d, str) else d for d in docs], BINARY)
        reference = JsonDecoder(SCHEMA, mode=mode, compiled=False)
        want = _outcome(reference, plain, reference=True)
        decoder = JsonDecoder(SCHEMA, mode=mode, compiled=compiled)
        errors: list[tuple[int, str]] = []
        try:
            out = decoder.decode(values, on_error=_collect(errors), skip=5)
            out.validate(full=True)
            got: object = (_rows(out), errors)
        except JsonDecodeError as error:
            got = ("raised", error.index, error.reason)
        assert got == want
        in_place += decoder.compiled_batches
    # (a batch with more than 1/8 of its rows declined goes to the other paths)
    assert (in_place > 0) == compiled


def test_a_framing_longer_than_a_value_is_refused() -> None:
    for compiled in (True, False):
        decoder = JsonDecoder(SCHEMA, compiled=compiled)
        with pytest.raises(ValueError, match="shorter than the 5 bytes"):
            decoder.decode(pa.array([b"\0\0\0\0\1{}", b"\0\0"]), skip=5)
        with pytest.raises(ValueError, match="skip needs binary values"):
            decoder.decode(pa.array(["{}"]), skip=1)
