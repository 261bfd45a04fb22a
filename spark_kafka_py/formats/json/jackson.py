"""One JSON document parsed as Jackson's ``ReaderBasedJsonParser`` reads it with Spark's
``JSONOptions`` read features (``JsonReadFeature``), for ``from_json`` semantics.

The values come out as :mod:`json` gives them to the decoder (:class:`Int`, :class:`Float`,
:class:`Const` for numbers kept as text, ``str``, ``bool``, ``None``, ``list``, ``dict`` or
:class:`Pairs` for an object with a key given twice), so the decoder converts both alike.
:func:`parse_document` is the decoder's second try: Python's :mod:`json` (strict JSON plus
``NaN``, ``Infinity``, ``-Infinity``) reads what it can first, and anything it refuses is read
here, where each feature Spark turns on is honoured as Jackson 2.15+ implements it:

- ``allowComments`` (``ALLOW_JAVA_COMMENTS``): ``/* ... */`` and ``// ...`` (to the end of the
  line) wherever whitespace may stand; an unterminated comment is malformed.
- ``allowUnquotedFieldNames`` (``ALLOW_UNQUOTED_FIELD_NAMES``): a name of Java identifier
  characters (``Character.isJavaIdentifierPart``: letters, digits, ``_``, ``$``, currency
  signs, marks, format characters) and ``@ # * - +``, ending at the first other character;
  digits may start it.
- ``allowSingleQuotes`` (``ALLOW_SINGLE_QUOTES``): names and strings in ``'...'`` (where
  ``"`` is an ordinary character); ``\\'`` is an escape in any string.
- ``allowNumericLeadingZeros`` (``ALLOW_LEADING_ZEROS_FOR_NUMBERS``): ``007`` is 7, ``00.5``
  is 0.5.
- ``allowNonNumericNumbers`` (``ALLOW_NON_NUMERIC_NUMBERS``): the tokens ``NaN``,
  ``Infinity``, ``+Infinity``, ``-Infinity``, ``+INF``, ``-INF`` (nothing else: ``INF``,
  ``Inf`` and ``-NaN`` are malformed); off, all six are malformed.
- ``allowBackslashEscapingAnyCharacter`` (``ALLOW_BACKSLASH_ESCAPING_ANY_CHARACTER``): ``\\x``
  is ``x`` for any character.
- ``allowUnquotedControlChars`` (``ALLOW_UNESCAPED_CONTROL_CHARS``): characters below U+0020
  inside strings and names.

Whatever the features: whitespace is space, tab, CR, LF; no trailing commas, no missing values,
no leading ``+`` or ``.`` on numbers, ``\\u`` takes four hex digits (a pair of escaped
surrogates is one character); nesting deeper than :data:`MAX_NESTING` is malformed, and so is
a number token of more than :data:`MAX_NUMBER_LENGTH` digits as Jackson counts them
(:func:`number_length_ok`), wherever it stands (a field not in the schema too); the document
ends with its first value (what follows is not read).
"""

from __future__ import annotations

import bisect
import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from typing import Final

#: Jackson's ``StreamReadConstraints`` default maximum nesting (2.15+): deeper is malformed.
MAX_NESTING: Final = 1000
#: Jackson's ``StreamReadConstraints`` default maximum number length (2.15+, digits): a number
#: token counted longer is malformed (see :func:`number_length_ok`).
MAX_NUMBER_LENGTH: Final = 1000
#: The size of ``ReaderBasedJsonParser``'s input buffer (UTF-16 units; ``BufferRecycler``'s
#: token buffer), which decides how a long number's digits are counted.
READ_BUFFER: Final = 4000


class Int(str):
    """An integer token's text (kept as text: its range is checked per target type)."""


class Float(str):
    """A fractional or exponent number token's text."""


class Const(str):
    """``NaN``, ``Infinity`` or ``-Infinity``: a non-numeric number token, by its value."""


class RawControls(str):
    """A double-quoted string value with raw control characters (below U+0020) while
    ``allowUnquotedControlChars`` is off, read only when :func:`parse_document` is given a
    list for them: Jackson reads a string lazily, and only its base64 decoder (a ``binary``
    field) reads past such characters (skipped before a quad); any other reading of it makes
    the document malformed, which the caller decides (``consumed`` set by the base64 reading).

    Attributes:
        controls: the indices of the raw control characters in the string's text.
        consumed: whether the base64 decoder read it.
    """

    controls: tuple[int, ...]
    consumed: bool


class Quoted(str):
    """A single-quoted string value's text (``allowSingleQuotes``): Jackson reads such a
    string whole when it meets it (``_handleOddValue``), so a conversion of it works on its
    text (base64: ``Base64Variant.decode(String)``), never on the document's stream."""


class Pairs(dict):  # type: ignore[type-arg]  # JSON objects' values are anything
    """An object with a key given more than once: the dict (the last value of each key) and
    every (key, value) in document order, as Jackson streams them."""

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def make_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A parsed object: a ``dict``, or :class:`Pairs` when a key repeats."""
    obj = dict(pairs)
    return obj if len(obj) == len(pairs) else Pairs(pairs)


@dataclass(frozen=True)
class Features:
    """Spark's ``JSONOptions`` read features, with Spark's defaults."""

    allow_comments: bool = False
    allow_unquoted_field_names: bool = False
    allow_single_quotes: bool = True
    allow_numeric_leading_zeros: bool = False
    allow_non_numeric_numbers: bool = True
    allow_backslash_escaping_any_character: bool = False
    allow_unquoted_control_chars: bool = False


#: :func:`parse_document`'s answer for a text of whitespace and comments only (Jackson's first
#: token is then none: ``from_json`` gives a null row).
NO_VALUE: Final = object()


class Malformed(ValueError):
    """The document is not JSON under the features (``reason`` says where)."""


_NON_NUMERIC: Final = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "+Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "+INF": "Infinity",
    "-INF": "-Infinity",
}


#: Why :func:`python_decoder` refuses a number token (:func:`parse_document` then decides).
_LONG_NUMBER: Final = (
    f"a number token longer than {MAX_NUMBER_LENGTH} characters "
    f"(Jackson's StreamReadConstraints.maxNumberLength is {MAX_NUMBER_LENGTH} digits)"
)


def python_decoder(features: Features) -> json.JSONDecoder:
    """Python's :mod:`json` decoder giving this module's values: control characters in
    strings as ``allowUnquotedControlChars`` says, the three non-numeric tokens it knows
    refused when ``allowNonNumericNumbers`` is off, a number token of more than
    :data:`MAX_NUMBER_LENGTH` characters refused (:func:`parse_document` counts its digits)."""

    def constant(token: str) -> Const:
        if not features.allow_non_numeric_numbers:
            raise ValueError(f"non-numeric number {token} (allowNonNumericNumbers is false)")
        return Const(token)

    def integer(token: str) -> Int:
        if len(token) > MAX_NUMBER_LENGTH:
            raise ValueError(_LONG_NUMBER)
        return Int(token)

    def fractional(token: str) -> Float:
        if len(token) > MAX_NUMBER_LENGTH:
            raise ValueError(_LONG_NUMBER)
        return Float(token)

    return json.JSONDecoder(
        parse_int=integer,
        parse_float=fractional,
        parse_constant=constant,
        object_pairs_hook=make_object,
        strict=not features.allow_unquoted_control_chars,
    )


_LINE_END: Final = re.compile(r"[\n\r]")
_SURROGATE_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_NUMBER: Final = re.compile(r"-?([0-9]+)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_ESCAPES: Final = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "/": "/",
                   "\\": "\\"}  # fmt: skip
_NAME_EXTRA: Final = frozenset("@#*-+")
_IDENTIFIER_CATEGORIES: Final = frozenset(
    {"Lu", "Ll", "Lt", "Lm", "Lo", "Sc", "Pc", "Nd", "Nl", "Mc", "Mn", "Cf"}
)


def _java_identifier_part(c: str) -> bool:
    """Java's ``Character.isJavaIdentifierPart`` (by Python's Unicode tables)."""
    o = ord(c)
    if o <= 8 or 0x0E <= o <= 0x1B or 0x7F <= o <= 0x9F:
        return True  # identifier-ignorable controls
    return unicodedata.category(c) in _IDENTIFIER_CATEGORIES


def _name_char(c: str) -> bool:
    """A character of an unquoted name (Jackson's ``CharTypes.getInputCodeLatin1JsNames``
    below U+0100, ``isJavaIdentifierPart`` above)."""
    if ord(c) < 256:
        return c in _NAME_EXTRA or (ord(c) >= 33 and _java_identifier_part(c))
    return _java_identifier_part(c)


def read_buffer_starts(text: str) -> list[int]:
    """The index in ``text`` where each of ``ReaderBasedJsonParser``'s reads of it starts, as
    Spark hands it a document (an ``InputStreamReader`` over its UTF-8 bytes): a read fills
    :data:`READ_BUFFER` UTF-16 units, one less when a character outside the BMP (a surrogate
    pair, never split) would straddle the end. Linear in the text."""
    if len(text) <= READ_BUFFER // 2:
        return [0]
    if text.isascii() or max(text) <= "\uffff":
        return list(range(0, len(text), READ_BUFFER))
    starts = [0]
    units = 0
    for i, c in enumerate(text):
        width = 2 if c > "\uffff" else 1
        if units + width > READ_BUFFER:
            starts.append(i)
            units = 0
        units += width
    return starts


def number_length_ok(
    text: str,
    start: int,
    end: int,
    whole: str,
    fraction: str | None,
    exponent: str | None,
    buffer_starts: list[int],
) -> bool:
    """Whether Jackson 2.15+ (``StreamReadConstraints``, default ``maxNumberLength`` 1000)
    takes the number token ``text[start:end]`` (``whole``: its integer digits; ``fraction``:
    ``.`` and digits or None; ``exponent``: ``e``, sign and digits or None), as measured with
    Spark 4.3 (Jackson 2.21) ``from_json``:

    - an integer: refused when its integer part, past leading zeros (``allowNumericLeadingZeros``;
      ``0`` for zeros only), has more than 1000 digits (``validateIntegerLength``);
    - else the integer, fraction and exponent digits are added (``validateFPLength``), the
      sign and the ``.``/``e`` not counted, and refused past 1000. ``ReaderBasedJsonParser``
      counts an absent fraction or exponent as 0 on its fast path (a number not starting with
      ``0`` that ends, with the character after it, in the input buffer where it starts) and
      as -1 otherwise (``_parseNumber2``): ``1.`` and 1000 zeros is refused, ``0.`` and 1000
      zeros is taken; ``buffer_starts`` is :func:`read_buffer_starts` of ``text``.
    """
    int_len = len(whole.lstrip("0")) or 1
    if fraction is None and exponent is None:
        return int_len <= MAX_NUMBER_LENGTH
    fraction_len = -1 if fraction is None else len(fraction) - 1
    exponent_len = -1 if exponent is None else len(exponent.lstrip("eE+-"))
    fast = whole[0] != "0" and end < len(text)
    if fast:
        buffer = bisect.bisect_right(buffer_starts, start)
        fast = buffer >= len(buffer_starts) or end < buffer_starts[buffer]
    if fast:
        fraction_len = max(fraction_len, 0)
        exponent_len = max(exponent_len, 0)
    return int_len + fraction_len + exponent_len <= MAX_NUMBER_LENGTH


class _Parser:
    __slots__ = ("f", "n", "pos", "raw", "starts", "text")

    def __init__(
        self, text: str, pos: int, features: Features, raw: list[RawControls] | None = None
    ) -> None:
        self.text = text
        self.pos = pos
        self.n = len(text)
        self.f = features
        self.starts: list[int] | None = None
        self.raw = raw

    def fail(self, what: str) -> Malformed:
        return Malformed(f"{what} at char {self.pos}")

    def skip_ws(self) -> None:
        text, n = self.text, self.n
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\n\r":
                self.pos += 1
            elif c == "/" and self.f.allow_comments:
                nxt = text[self.pos + 1 : self.pos + 2]
                if nxt == "*":
                    end = text.find("*/", self.pos + 2)
                    if end < 0:
                        raise self.fail("unterminated comment")
                    self.pos = end + 2
                elif nxt == "/":
                    m = _LINE_END.search(text, self.pos + 2)
                    self.pos = n if m is None else m.end()
                else:
                    raise self.fail("'/' not starting a comment")
            else:
                return

    def value(self, depth: int) -> object:
        self.skip_ws()
        if self.pos >= self.n:
            raise self.fail("unexpected end")
        c = self.text[self.pos]
        if c == "{":
            return self.obj(depth + 1)
        if c == "[":
            return self.array(depth + 1)
        if c == '"':
            self.pos += 1
            return self.string(c, self.raw)
        if c == "'" and self.f.allow_single_quotes:
            self.pos += 1
            return Quoted(self.string(c))
        if c == "-" or "0" <= c <= "9":
            return self.number()
        for token, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(token, self.pos):
                self.pos += len(token)
                return value
        for token, canonical in _NON_NUMERIC.items():
            if self.text.startswith(token, self.pos):
                if not self.f.allow_non_numeric_numbers:
                    raise self.fail(f"non-numeric number {token} (allowNonNumericNumbers off)")
                self.pos += len(token)
                return Const(canonical)
        raise self.fail(f"unexpected character {c!r}")

    def number(self) -> object:
        text = self.text
        if text.startswith(("-INF", "-Infinity"), self.pos):
            token = "-INF" if text.startswith("-INF", self.pos) else "-Infinity"
            if not self.f.allow_non_numeric_numbers:
                raise self.fail(f"non-numeric number {token} (allowNonNumericNumbers off)")
            self.pos += len(token)
            return Const("-Infinity")
        m = _NUMBER.match(text, self.pos)
        if m is None:
            raise self.fail("a number expected")
        whole = m[1]
        if len(whole) > 1 and whole[0] == "0" and not self.f.allow_numeric_leading_zeros:
            raise self.fail("leading zeros (allowNumericLeadingZeros off)")
        end = m.end()
        # a '.' or an exponent letter not completing the number (1., 1e) is malformed
        if end < self.n and text[end] in ".eE":
            raise self.fail("a digit expected")
        if end - m.start() > MAX_NUMBER_LENGTH and not number_length_ok(
            text, m.start(), end, whole, m[2], m[3], self.buffer_starts()
        ):
            raise self.fail(f"a number of more than {MAX_NUMBER_LENGTH} digits")
        self.pos = end
        token = m[0]
        if len(whole) > 1 and whole[0] == "0":
            # leading zeros (allowNumericLeadingZeros) are skipped, as Jackson skips them:
            # ``007`` is ``7``, ``00.5`` is ``0.5`` (an integer's text stays short)
            sign = "-" if token[0] == "-" else ""
            token = sign + (whole.lstrip("0") or "0") + (m[2] or "") + (m[3] or "")
        return Float(token) if m[2] or m[3] else Int(token)

    def buffer_starts(self) -> list[int]:
        """The text's index where each of Jackson's input buffers starts (computed once)."""
        if self.starts is None:
            self.starts = read_buffer_starts(self.text)
        return self.starts

    def string(self, quote: str, raw: list[RawControls] | None = None) -> str:
        """The string whose opening ``quote`` was read; with ``raw``, raw control characters
        are read too (a :class:`RawControls`, appended to ``raw``)."""
        text, n, f = self.text, self.n, self.f
        out: list[str] = []
        start = self.pos
        i = start
        surrogates = False
        done = 0  # the length of the text in ``out``
        controls: list[int] = []
        while True:
            if i >= n:
                self.pos = i
                raise self.fail("unterminated string")
            c = text[i]
            if c == quote:
                out.append(text[start:i])
                self.pos = i + 1
                break
            if c == "\\":
                out.append(text[start:i])
                done += i - start
                if i + 1 >= n:
                    self.pos = i
                    raise self.fail("unterminated escape")
                e = text[i + 1]
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                    done += 1
                    i += 2
                elif e == "u":
                    digits = text[i + 2 : i + 6]
                    if len(digits) < 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                        self.pos = i
                        raise self.fail("bad \\u escape")
                    code = int(digits, 16)
                    surrogates = surrogates or 0xD800 <= code <= 0xDFFF
                    out.append(chr(code))
                    done += 1
                    i += 6
                elif f.allow_backslash_escaping_any_character or (
                    e == "'" and f.allow_single_quotes
                ):
                    out.append(e)
                    done += 1
                    i += 2
                else:
                    self.pos = i
                    raise self.fail(f"unrecognized escape \\{e}")
                start = i
                continue
            if c < " " and not f.allow_unquoted_control_chars:
                if raw is None:
                    self.pos = i
                    raise self.fail(f"control character {c!r} in a string")
                controls.append(done + i - start)
            i += 1
        value = "".join(out)
        if surrogates:  # an escaped pair is one character, as in UTF-16
            if controls:  # each pair joined before a control character moves it back by one
                pairs = [m.start() for m in _SURROGATE_PAIR.finditer(value)]
                controls = [k - bisect.bisect_left(pairs, k) for k in controls]
            value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        if controls:
            assert raw is not None
            marked = RawControls(value)
            marked.controls = tuple(controls)
            marked.consumed = False
            raw.append(marked)
            return marked
        return value

    def name(self) -> str:
        c = self.text[self.pos] if self.pos < self.n else ""
        if c == '"' or (c == "'" and self.f.allow_single_quotes):
            self.pos += 1
            return self.string(c)
        if c and self.f.allow_unquoted_field_names and _name_char(c):
            start = self.pos
            while self.pos < self.n and _name_char(self.text[self.pos]):
                self.pos += 1
            return self.text[start : self.pos]
        raise self.fail("a field name expected")

    def obj(self, depth: int) -> object:
        if depth > MAX_NESTING:
            raise self.fail(f"nested deeper than {MAX_NESTING}")
        self.pos += 1
        pairs: list[tuple[str, object]] = []
        self.skip_ws()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return make_object(pairs)
        while True:
            self.skip_ws()
            key = self.name()
            self.skip_ws()
            if not self.text.startswith(":", self.pos):
                raise self.fail("':' expected")
            self.pos += 1
            pairs.append((key, self.value(depth)))
            self.skip_ws()
            c = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if c == "}":
                return make_object(pairs)
            if c != ",":
                self.pos -= 1
                raise self.fail("',' or '}' expected")

    def array(self, depth: int) -> list[object]:
        if depth > MAX_NESTING:
            raise self.fail(f"nested deeper than {MAX_NESTING}")
        self.pos += 1
        items: list[object] = []
        self.skip_ws()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return items
        while True:
            items.append(self.value(depth))
            self.skip_ws()
            c = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if c == "]":
                return items
            if c != ",":
                self.pos -= 1
                raise self.fail("',' or ']' expected")


def parse_document(
    text: str, start: int, features: Features, raw: list[RawControls] | None = None
) -> object:
    """The first JSON value of ``text`` from ``start`` (whitespace and, with
    ``allowComments``, comments skipped first), read with ``features``; :data:`NO_VALUE` when
    nothing but whitespace and comments is there. With ``raw``, a double-quoted string value
    with raw control characters is a :class:`RawControls`, appended to ``raw`` (the caller
    decides whether the document is malformed).

    Raises:
        Malformed: the value is not JSON under the features, or nested too deeply.
    """
    # one frame per nesting level: the recursion limit is raised by that much meanwhile
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + MAX_NESTING + 64)
    try:
        parser = _Parser(text, start, features, raw)
        parser.skip_ws()
        if parser.pos >= parser.n:
            return NO_VALUE
        return parser.value(0)
    finally:
        sys.setrecursionlimit(limit)
