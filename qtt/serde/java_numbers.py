"""Java's number parsing and printing, as ksqlDB's serializers use them.

Parsers (``Long.parseLong``, ``Double.parseDouble``, ``new BigDecimal``) raise ValueError
with Java's message; printers give ``Double.toString`` and ``BigDecimal.toPlainString``.
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import math
import re
import struct
import unicodedata

from qtt.serde.excerpt import excerpt, excerpt_runs
from qtt.sqltypes import BIGINT_MAX, BIGINT_MIN, INT_MAX, INT_MIN


def java_narrow(value: int, bits: int) -> int:
    """Java's narrowing of an integer to ``bits`` bits (two's complement)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


_JAVA_LONG = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
# Java's HexFloatingPointLiteral: hex digits, an optional point, a binary exponent that is required
_JAVA_HEX_DOUBLE = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")
_JAVA_BIG_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))


@functools.cache
def java_decimal_digits() -> tuple[str, str]:
    """The non-ASCII digits ``Character.digit(c, 10)`` reads, and the ASCII digit of each at the
    same position (the two arguments of a character translation).

    ``Integer.parseInt``, ``Long.parseLong`` and ``new BigDecimal(String)`` read any Unicode
    decimal digit that is one UTF-16 unit (``"٣٤"`` is 34), as they read ``char`` by ``char``: a
    digit past U+FFFF is two surrogates, neither a digit. ``Double.parseDouble`` reads ASCII
    only. Python's Unicode tables stand in for the JVM's, which may lag behind for new digits.
    """
    digits = [chr(c) for c in range(0x80, 0x10000) if unicodedata.category(chr(c)) == "Nd"]
    return "".join(digits), "".join(str(unicodedata.decimal(d)) for d in digits)


@functools.cache
def _digit_table() -> dict[int, int]:
    return str.maketrans(*java_decimal_digits())


def _ascii_digits(text: str) -> str:
    return text if text.isascii() else text.translate(_digit_table())


def java_parse_long(text: str) -> int:
    """``Long.parseLong``: an optional sign and digits, nothing else.

    Raises:
        ValueError: for anything else, or a value outside BIGINT.
    """
    return _parse_whole(text, BIGINT_MIN, BIGINT_MAX)


def java_parse_int(text: str) -> int:
    """``Integer.parseInt``: as :func:`java_parse_long`, within INTEGER.

    Raises:
        ValueError: for anything else, or a value outside INTEGER.
    """
    return _parse_whole(text, INT_MIN, INT_MAX)


def _parse_whole(text: str, lo: int, hi: int) -> int:
    # Leading zeros are allowed ("007"); past 19 significant digits no long fits, and
    # int() would refuse a text over Python's 4,300-digit conversion limit anyway.
    ascii_text = _ascii_digits(text)
    if _JAVA_LONG.fullmatch(ascii_text):
        digits = ascii_text.lstrip("+-").lstrip("0")
        value = int(digits or "0") * (-1 if ascii_text.startswith("-") else 1) if len(digits) <= 19 else None
        if value is not None and lo <= value <= hi:
            return value
    msg = f'For input string: "{excerpt(text)}"'
    raise ValueError(msg)


def java_parse_double(text: str) -> float:
    """``Double.parseDouble``: surrounding whitespace, ``NaN``, ``Infinity``, a d/f suffix, and
    hexadecimal with a binary exponent (``0x1.8p1`` is 3.0)."""
    core = text.strip(_JAVA_WHITESPACE)
    hexadecimal = _JAVA_HEX_DOUBLE.fullmatch(core)
    if hexadecimal:
        sign, body = hexadecimal.groups()
        try:
            return float.fromhex(f"{sign}0x{body}")
        except OverflowError:  # Java gives infinity of the sign past the double range
            return -math.inf if sign == "-" else math.inf
    if not _JAVA_DOUBLE.fullmatch(core):
        msg = f'For input string: "{excerpt(text)}"'
        raise ValueError(msg)
    core = core.rstrip("fFdD")
    return float(core.replace("Infinity", "inf"))


def java_big_decimal(text: str) -> decimal.Decimal:
    """``new BigDecimal(String)``: no whitespace, an optional exponent, a scale that fits an int.

    Raises:
        ValueError: with Java's reason, quoting an excerpt of ``text``.
    """
    shown, text = text, _ascii_digits(text)
    if not _JAVA_BIG_DECIMAL.fullmatch(text):
        msg = f'Character array is not a valid decimal number: "{excerpt(shown)}"'
        raise ValueError(msg)
    mantissa, _, exponent = text.lower().partition("e")
    fraction_digits = len(mantissa.partition(".")[2])
    # BigDecimal's scale is an int: fraction digits minus the exponent must fit in 32 bits.
    # Checking the exponent's length first keeps int() within Python's conversion limit.
    exponent_digits = exponent.lstrip("+-").lstrip("0")
    if len(exponent_digits) > 10 or not INT_MIN <= fraction_digits - int(exponent or "0") <= INT_MAX:
        msg = f'Scale out of range: "{excerpt(shown)}"'
        raise ValueError(msg)
    return decimal.Decimal(text)


_LONG_BITS = 64
_LONG_MODULUS = 1 << _LONG_BITS
# digits per int() call: well below Python's int/str conversion limit, and linear overall
_CHUNK_DIGITS = 1000


def java_long_value(value: decimal.Decimal) -> int:
    """``BigDecimal.longValue()``: the integer part (fraction truncated), narrowed to a long.

    That is the low 64 bits of ``unscaled * 10^-scale``. Any multiple of ``10^64`` is a
    multiple of ``2^64``, so an exponent of 64 or more gives 0 (Java takes the same shortcut);
    below that, the digits are reduced modulo ``2^64`` in chunks, so the time is linear in the
    digits written, whatever the exponent says (``int(Decimal("1E+999999999"))`` never ends).

    Raises:
        ValueError: for NaN or an infinity, which no BigDecimal holds.
    """
    sign, digit_tuple, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        msg = f"{value} has no integer value"
        raise ValueError(msg)
    if exponent >= _LONG_BITS:
        return 0
    digits = "".join(map(str, digit_tuple))
    if exponent < 0:
        digits, exponent = digits[:exponent], 0
    magnitude = 0
    for start in range(0, len(digits), _CHUNK_DIGITS):
        chunk = digits[start : start + _CHUNK_DIGITS]
        magnitude = (magnitude * pow(10, len(chunk), _LONG_MODULUS) + int(chunk)) % _LONG_MODULUS
    magnitude = magnitude * pow(10, exponent, _LONG_MODULUS) % _LONG_MODULUS
    return java_narrow(-magnitude if sign else magnitude, _LONG_BITS)


def java_double(value: float) -> str:
    """``Double.toString`` as Java prints it: ``1.0``, ``1.0E10``, ``1.0E-5``, ``4.9E-324``.

    Java prints the shortest digits that identify the double, but never fewer than two
    significant digits (``d.d``), rounding the exact binary value to two when one would do.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    sign, digit_tuple, exp = decimal.Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    exp10 = int(exp) + len(digits) - 1  # the power of ten of the first digit
    if value.is_integer() and 2**53 <= abs(value) < 2**63:
        digits, exp10 = _java_long_digits(int(abs(value)))
    elif len(digits) == 1:
        exact = abs(decimal.Decimal(value))
        two = exact.quantize(decimal.Decimal(1).scaleb(exp10 - 1), rounding=decimal.ROUND_HALF_EVEN)
        _, two_tuple, two_exp = two.normalize().as_tuple()
        digits = "".join(map(str, two_tuple))
        exp10 = int(two_exp) + len(digits) - 1
    return _java_layout("-" if sign else "", digits, exp10, plain=1e-3 <= abs(value) < 1e7)


def _java_layout(sign: str, digits: str, exp10: int, *, plain: bool) -> str:
    """Significant ``digits`` whose first is at the power of ten ``exp10``, as Java's
    ``Double.toString`` and ``Float.toString`` lay them out: plain, or computerized
    scientific notation."""
    if not plain:
        return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp10}"
    if exp10 >= 0:
        whole, fraction = digits[: exp10 + 1].ljust(exp10 + 1, "0"), digits[exp10 + 1 :]
    else:
        whole, fraction = "0", "0" * (-exp10 - 1) + digits
    return f"{sign}{whole}.{fraction or '0'}"


def java_float(value: float) -> str:
    """``Float.toString`` of a float (a 32-bit value held in a Python float): the shortest
    digits that identify it among floats, laid out as :func:`java_double` lays them out."""
    if not math.isfinite(value) or value == 0:
        return java_double(value)
    # never fewer than two significant digits, rounded from the exact value (1.4E-45, not 1.0E-45)
    for digits in range(2, 10):
        text = f"{value:.{digits - 1}e}"
        with contextlib.suppress(OverflowError):  # rounded past the largest float
            if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
                break
    mantissa, _, exponent = text.partition("e")
    shown = mantissa.replace(".", "").lstrip("-").rstrip("0") or "0"
    exp10 = int(exponent)
    return _java_layout("-" if value < 0 else "", shown, exp10, plain=1e-3 <= abs(value) < 1e7)


# FloatingDecimal's digits to drop for 2^p2 (JDK 8-18), indexed by p2.
_INSIGNIFICANT_DIGITS = (0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6)


def _java_long_digits(number: int) -> tuple[str, int]:
    """Digits of a large integral double as JDK 8-18 print it (they print more than needed).

    Java's FloatingDecimal prints such a double from its exact integer value, dropping only
    the few low digits the binary exponent makes insignificant (rounding half up).
    """
    bin_exp = number.bit_length() - 1
    p2 = bin_exp - 53 - 1
    insignificant = _INSIGNIFICANT_DIGITS[p2] if 1 < p2 < len(_INSIGNIFICANT_DIGITS) else 0
    exp10 = len(str(number)) - 1
    if insignificant:
        pow10 = 10**insignificant
        number, residue = divmod(number, pow10)
        if residue >= pow10 // 2:
            number += 1
        exp10 = len(str(number)) - 1 + insignificant
    digits = str(number).rstrip("0") or "0"
    return digits, exp10


def java_decimal(value: decimal.Decimal) -> str:
    """``BigDecimal.toPlainString``."""
    return format(value, "f")


def java_decimal_excerpt(value: decimal.Decimal) -> str:
    """``BigDecimal.toPlainString`` for a message: an :func:`excerpt` of it, never built whole.

    ``-1E-999999999`` written out is a billion characters; its excerpt costs a few.
    """
    sign, digit_tuple, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        return str(value)
    digits = "".join(map(str, digit_tuple))
    runs: list[tuple[str, int]] = [("-", 1)] if sign and any(digit_tuple) else []
    if exponent >= 0:
        runs += [(digits, 1), ("0", exponent if any(digit_tuple) else 0)]
    elif len(digits) > -exponent:
        runs += [(digits[:exponent], 1), (".", 1), (digits[exponent:], 1)]
    else:
        runs += [("0.", 1), ("0", -exponent - len(digits)), (digits, 1)]
    return excerpt_runs(runs)
