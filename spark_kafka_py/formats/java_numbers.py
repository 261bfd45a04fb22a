"""Floating-point numbers as Java's ``Double.toString`` and ``Float.toString`` write them
(sans-I/O): the text of a double or float that Spark and its libraries print on the JVM
(Jackson re-serializing a number, protobuf-java's JSON printer).

The specification followed is Java 19's and later's (JDK-4511638): of the decimals that
round to the value, the shortest; if that has one digit, the two-digit ones instead; of
those the closest to the value (ties: the even last digit); laid out plain from 10**-3 to
below 10**7 with at least one digit on each side of the point (``123.0``, ``0.001``), else in
computerized scientific notation (``1.0E10``, ``1.0E-4``); ``NaN``, ``Infinity``,
``-Infinity``; ``0.0`` and ``-0.0``. Java 17's ``FloatingDecimal`` writes another decimal of
the same value for rare values (1e23 as ``9.999999999999999E22``, the float 2**30 as
``1.07374182E9``); a Python process cannot know which Java a Spark cluster runs.

The shortest decimals are Python's ``repr`` (doubles) and numpy's unique formatting of a
``float32`` (floats): both give the shortest decimal, then the closest.
"""

from __future__ import annotations

import decimal
import math

import numpy as np

__all__ = ["java_double", "java_float"]


def _digits_of(d: decimal.Decimal) -> tuple[str, int]:
    """A positive decimal as (digits without trailing zeros, ``exp``): ``0.<digits> * 10**exp``."""
    _, coefficient, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    return "".join(map(str, coefficient)).rstrip("0"), len(coefficient) + exponent


def _decimal_digits(value: float, float32: bool) -> tuple[str, int]:
    """The digits and exponent (value ``0.<digits> * 10**exp``) chosen for a finite positive
    ``value`` (see the module docstring)."""
    text = (
        np.format_float_scientific(np.float32(value), unique=True, trim="-")
        if float32
        else repr(value)
    )
    digits, exp10 = _digits_of(decimal.Decimal(text))
    if len(digits) == 1:  # the closest two-digit decimal (it rounds to the value too)
        quantum = decimal.Decimal(1).scaleb(exp10 - 2)
        two = decimal.Decimal(value).quantize(quantum, rounding=decimal.ROUND_HALF_EVEN)
        digits, exp10 = _digits_of(two)
    return digits, exp10


def _layout(digits: str, exp10: int) -> str:
    """Java's layout of ``0.<digits> * 10**exp10`` (``digits`` without leading or trailing
    zeros)."""
    if -3 < exp10 < 8:
        if exp10 <= 0:
            return "0." + "0" * -exp10 + digits
        whole = digits[:exp10].ljust(exp10, "0")
        return whole + "." + (digits[exp10:] or "0")
    return digits[0] + "." + (digits[1:] or "0") + "E" + str(exp10 - 1)


def _format(value: float, float32: bool) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    body = _layout(*_decimal_digits(abs(value), float32))
    return "-" + body if value < 0 else body


def java_double(value: float) -> str:
    """``Double.toString(value)`` (Java 19+): ``1.0E23``, ``0.001``, ``1.0E-4``,
    ``4.9E-324``, ``NaN``, ``-Infinity``."""
    return _format(value, float32=False)


def java_float(value: float) -> str:
    """``Float.toString`` (Java 19+) of the float nearest ``value`` (a Python float holding a
    float32's exact value): ``0.1`` for the float nearest 0.1, ``1.4E-45``, ``3.4028235E38``."""
    return _format(value, float32=True)
