"""Spark's DDL for types (``"a INT, b STRUCT<c: STRING>"``) -> Spark's JSON form of the type.

A read's planning runs in a Python worker without a SparkSession, so ``valueSchema`` /
``keySchema`` (the schema ``from_json`` would be given) cannot go through Spark's parser; this
module parses the part of Spark SQL's grammar that names types (``SqlBaseParser.g4``:
``colTypeList``, ``dataType``, ``complexColTypeList``), sans-I/O.

Accepted (keywords case-insensitive; results in ``DataType.jsonValue()``'s form):

=================================================  =============================
DDL                                                Spark JSON
=================================================  =============================
``STRING``                                         ``"string"``
``INT``, ``INTEGER``                               ``"integer"``
``BIGINT``, ``LONG``                               ``"long"``
``SMALLINT``, ``SHORT``                            ``"short"``
``TINYINT``, ``BYTE``                              ``"byte"``
``DOUBLE``                                         ``"double"``
``FLOAT``, ``REAL``                                ``"float"``
``BOOLEAN``                                        ``"boolean"``
``BINARY``                                         ``"binary"``
``DATE``                                           ``"date"``
``TIMESTAMP``, ``TIMESTAMP_LTZ``                   ``"timestamp"``
``TIMESTAMP_NTZ``                                  ``"timestamp_ntz"``
``DECIMAL``/``DEC``/``NUMERIC`` ``[(p[, s])]``     ``"decimal(p,s)"`` (default 10, 0)
``ARRAY<T>``                                       ``{"type": "array", ...}``
``MAP<K, V>``                                      ``{"type": "map", ...}``
``STRUCT<name[:] T [NOT NULL] [COMMENT 's'], ...>``  ``{"type": "struct", ...}``
=================================================  =============================

A field list at the top level (``name T [NOT NULL] [COMMENT 's'], ...``, what
``StructType.fromDDL`` takes) or a single ``STRUCT<...>`` is a struct. Names are Spark's
identifiers (letters, digits, ``_``) or backquoted (a doubled backquote for one). ``NOT NULL``
makes the field not nullable; ``COMMENT`` puts ``{"comment": ...}`` in its metadata (string
literals in single or double quotes with Spark's backslash escapes). Arrays' elements and
maps' values are nullable (``containsNull``/``valueContainsNull`` true), as Spark's parser
makes them.

Anything else (other types, ``CHAR``/``VARCHAR``, intervals, a trailing token) raises
:class:`DdlError` naming the position. Input is bounded: :data:`MAX_DDL_CHARS` characters
and :data:`MAX_DEPTH` levels of nesting.

Source: Spark 4's ``SqlBaseParser.g4`` and ``SqlBaseLexer.g4`` (``dataType``,
``primitiveType``, ``colType``, ``complexColType``, ``IDENTIFIER``, ``BACKQUOTED_IDENTIFIER``,
``STRING_LITERAL``), ``DataTypeAstBuilder``; checked against ``StructType.fromDDL`` in
``tests/formats/test_ddl.py``.
"""

from __future__ import annotations

import re
from typing import Final

from spark_kafka_py.formats.errors import FormatError

__all__ = ["MAX_DDL_CHARS", "MAX_DEPTH", "DdlError", "parse_ddl", "parse_schema_text"]

#: The longest DDL text accepted (characters).
MAX_DDL_CHARS: Final = 1 << 20
#: The deepest nesting of ``ARRAY``/``MAP``/``STRUCT`` accepted.
MAX_DEPTH: Final = 100

_PRIMITIVES: Final = {
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "bigint": "long",
    "long": "long",
    "smallint": "short",
    "short": "short",
    "tinyint": "byte",
    "byte": "byte",
    "double": "double",
    "float": "float",
    "real": "float",
    "boolean": "boolean",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}
_DECIMALS: Final = ("decimal", "dec", "numeric")

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<ident>[A-Za-z0-9_]+)
      | (?P<backquoted>`(?:[^`]|``)*`)
      | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<punct>[<>(),:])
    )""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPES: Final = {
    "0": "\0",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "%": "\\%",
    "_": "\\_",
}


class DdlError(FormatError):
    """A DDL text that is not a type Spark's parser reads here.

    Attributes:
        reason: what is wrong.
        position: the character offset in the text where it was found.
    """

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"{reason} (at character {position})")
        self.reason = reason
        self.position = position


class _Parser:
    def __init__(self, text: str) -> None:
        if len(text) > MAX_DDL_CHARS:
            raise DdlError(f"DDL of {len(text)} characters, more than {MAX_DDL_CHARS}", 0)
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
        pos = 0
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise DdlError(f"unexpected character {text[pos]!r}", pos)
            kind = m.lastgroup
            assert kind is not None
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0
        self.end = len(text)

    # -- tokens --

    def peek(self, offset: int = 0) -> tuple[str, str, int] | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def position(self) -> int:
        tok = self.peek()
        return tok[2] if tok is not None else self.end

    def next(self, what: str) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise DdlError(f"the text ends where {what} was expected", self.end)
        self.i += 1
        return tok

    def is_word(self, word: str, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok is not None and tok[0] == "ident" and tok[1].lower() == word

    def is_punct(self, char: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] == "punct" and tok[1] == char

    def expect(self, char: str) -> None:
        kind, text, pos = self.next(f"'{char}'")
        if kind != "punct" or text != char:
            raise DdlError(f"expected '{char}', found {text!r}", pos)

    # -- grammar --

    def top(self) -> dict[str, object]:
        """A ``STRUCT<...>`` alone, else a field list."""
        after = self.peek(1)
        if self.is_word("struct") and after is not None and after[1] == "<":
            start = self.i
            result = self.data_type(0)
            if self.peek() is None:
                assert isinstance(result, dict)
                return result
            self.i = start  # `struct` was a field's name after all? Spark: a name then a type
        fields = self.fields(0, colon=False, closing=None)
        if self.peek() is not None:
            _kind, text, pos = self.tokens[self.i]
            raise DdlError(f"unexpected {text!r} after the schema", pos)
        return {"type": "struct", "fields": fields}

    def fields(self, depth: int, *, colon: bool, closing: str | None) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        if closing is not None and self.is_punct(closing):
            return out
        while True:
            name = self.identifier()
            if colon and self.is_punct(":"):
                self.i += 1
            ftype = self.data_type(depth)
            nullable = True
            metadata: dict[str, object] = {}
            if self.is_word("not") and self.is_word("null", 1):
                self.i += 2
                nullable = False
            if self.is_word("comment"):
                self.i += 1
                kind, text, pos = self.next("a string literal")
                if kind != "string":
                    raise DdlError(f"COMMENT needs a string literal, found {text!r}", pos)
                metadata["comment"] = _unescape(text[1:-1])
            out.append({"name": name, "type": ftype, "nullable": nullable, "metadata": metadata})
            if not self.is_punct(","):
                return out
            self.i += 1

    def identifier(self) -> str:
        kind, text, pos = self.next("a field name")
        if kind == "ident" and not text.isdigit():  # digits alone are Spark's INTEGER_VALUE
            return text
        if kind == "backquoted":
            return text[1:-1].replace("``", "`")
        raise DdlError(f"expected a field name, found {text!r}", pos)

    def data_type(self, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise DdlError(f"types nested deeper than {MAX_DEPTH}", self.position())
        kind, text, pos = self.next("a type")
        if kind != "ident":
            raise DdlError(f"expected a type, found {text!r}", pos)
        word = text.lower()
        if word in ("array", "map", "struct") and self.is_punct("<"):
            self.i += 1
            result: object
            if word == "array":
                element = self.data_type(depth + 1)
                result = {"type": "array", "elementType": element, "containsNull": True}
            elif word == "map":
                key = self.data_type(depth + 1)
                self.expect(",")
                value = self.data_type(depth + 1)
                result = {
                    "type": "map",
                    "keyType": key,
                    "valueType": value,
                    "valueContainsNull": True,
                }
            else:
                result = {
                    "type": "struct",
                    "fields": self.fields(depth + 1, colon=True, closing=">"),
                }
            self.expect(">")
            return result
        if word in _DECIMALS:
            precision, scale = 10, 0
            if self.is_punct("("):
                self.i += 1
                precision = self.integer()
                if self.is_punct(","):
                    self.i += 1
                    scale = self.integer()
                self.expect(")")
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise DdlError(
                    f"DECIMAL({precision}, {scale}): the precision must be 1..38 and the scale "
                    "0..precision",
                    pos,
                )
            return f"decimal({precision},{scale})"
        primitive = _PRIMITIVES.get(word)
        if primitive is None:
            raise DdlError(f"type {text!r} is not supported here", pos)
        return primitive

    def integer(self) -> int:
        kind, text, pos = self.next("an integer")
        if kind != "ident" or not text.isdigit() or len(text) > 3:
            raise DdlError(f"expected a small integer, found {text!r}", pos)
        return int(text)


def _unescape(body: str) -> str:
    """Spark's ``unescapeSQLString`` for the escapes a comment may hold."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            out.append(_ESCAPES.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_ddl(text: str) -> dict[str, object]:
    """A struct type given as Spark DDL, in Spark's JSON form (``StructType.jsonValue()``).

    Args:
        text: ``"a INT, b STRUCT<c: STRING> NOT NULL COMMENT 'x'"`` or ``"STRUCT<a: INT>"``.

    Returns:
        ``{"type": "struct", "fields": [{"name", "type", "nullable", "metadata"}, ...]}``.

    Raises:
        DdlError: not a type of the accepted grammar (naming the character position).
    """
    parser = _Parser(text)
    if not parser.tokens:
        raise DdlError("the schema is empty", 0)
    return parser.top()


def parse_schema_text(text: str) -> dict[str, object]:
    """A struct schema as ``from_json`` takes it: DDL (:func:`parse_ddl`), or the JSON form
    of a ``StructType`` (what ``StructType.json()`` prints) when the text starts with ``{``.

    Raises:
        DdlError: bad DDL, bad JSON, or JSON that is not a struct type (position 0).
    """
    stripped = text.strip()
    if not stripped.startswith("{"):
        return parse_ddl(text)
    import json

    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError) as exc:
        raise DdlError(f"the schema is not valid JSON: {exc}", 0) from None
    if not isinstance(value, dict) or value.get("type") != "struct":
        raise DdlError('the schema\'s JSON is not a struct type ({"type": "struct", ...})', 0)
    _check_json_type(value, 0)
    return value


def _check_json_type(value: object, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise DdlError(f"types nested deeper than {MAX_DEPTH}", 0)
    if isinstance(value, str):
        if value in _PRIMITIVES.values() or re.fullmatch(r"decimal\(\d+,\d+\)", value):
            return
        raise DdlError(f"type {value!r} is not supported here", 0)
    if not isinstance(value, dict):
        raise DdlError(f"not a Spark type: {value!r}", 0)
    kind = value.get("type")
    if kind == "struct":
        fields = value.get("fields")
        if not isinstance(fields, list):
            raise DdlError("a struct type without a 'fields' list", 0)
        for f in fields:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                raise DdlError(f"a struct field without a name: {f!r}", 0)
            _check_json_type(f.get("type"), depth + 1)
    elif kind == "array":
        _check_json_type(value.get("elementType"), depth + 1)
    elif kind == "map":
        _check_json_type(value.get("keyType"), depth + 1)
        _check_json_type(value.get("valueType"), depth + 1)
    else:
        raise DdlError(f"type {kind!r} is not supported here", 0)
