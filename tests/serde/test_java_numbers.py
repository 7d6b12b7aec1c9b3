"""Java's number parsing and printing: ``Double.toString``, ``Double.parseDouble``, ``Long.parseLong``."""

from __future__ import annotations

import decimal
import json
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtt.serde import java_numbers

DATA = Path(__file__).parent / "data"


def _double(value: Any) -> float:
    return float(value.replace("Infinity", "inf")) if isinstance(value, str) else float(value)


@pytest.mark.parametrize(("value", "text"), json.loads((DATA / "java_doubles.json").read_text())["cases"])
def test_java_double(value: Any, text: str) -> None:
    assert java_numbers.java_double(_double(value)) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1.0),
        (" 1.5 ", 1.5),
        ("1e3", 1000.0),
        ("2d", 2.0),
        ("-.5f", -0.5),
        ("+7", 7.0),
        ("0x1p3", 8.0),
        ("-0X.8P1d", -1.0),
        ("0x1p-1075", 0.0),
        ("0x1p1024", float("inf")),
        ("-0x1p99999999999", float("-inf")),
    ],
)
def test_java_parse_double(text: str, expected: float) -> None:
    assert java_numbers.java_parse_double(text) == expected


@pytest.mark.parametrize("text", ["", "1,5", "0x", "inf", "nan", "1_000", "e5", "0x10", "0xp1", "0x1p", "0x1.8e1"])
def test_java_parse_double_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        java_numbers.java_parse_double(text)


def test_java_parse_double_special_values() -> None:
    assert java_numbers.java_parse_double("-Infinity") == float("-inf")
    assert java_numbers.java_parse_double("NaN") != java_numbers.java_parse_double("NaN")


@pytest.mark.parametrize("text", [" 1", "1.0", "1_0", "", "9223372036854775808"])
def test_java_parse_long_is_strict(text: str) -> None:
    with pytest.raises(ValueError):
        java_numbers.java_parse_long(text)


@pytest.mark.parametrize(("text", "expected"), [("2147483647", 2**31 - 1), ("-2147483648", -(2**31)), ("+0", 0)])
def test_java_parse_int(text: str, expected: int) -> None:
    assert java_numbers.java_parse_int(text) == expected


@pytest.mark.parametrize("text", ["2147483648", "-2147483649", "1.0", ""])
def test_java_parse_int_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="For input string"):
        java_numbers.java_parse_int(text)


@pytest.mark.parametrize(
    ("value", "bits", "expected"), [(2**31, 32, -(2**31)), (2**32 + 5, 32, 5), (-1, 64, -1), (2**63, 64, -(2**63))]
)
def test_java_narrow_keeps_the_low_bits(value: int, bits: int, expected: int) -> None:
    assert java_numbers.java_narrow(value, bits) == expected


@given(
    digits=st.integers(min_value=0, max_value=10**60),
    exponent=st.integers(min_value=-80, max_value=80),
    negative=st.booleans(),
)
def test_java_long_value_is_the_narrowed_integer_part(digits: int, exponent: int, negative: bool) -> None:
    value = decimal.Decimal((int(negative), tuple(map(int, str(digits))), exponent))
    assert java_numbers.java_long_value(value) == java_numbers.java_narrow(int(value), 64)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1E+64", 0), ("1E+999999999", 0), ("-1E-999999999", 0), ("1E+63", -(2**63)), ("9.99E+2", 999)],
)
def test_java_long_value_is_bounded_in_time(text: str, expected: int) -> None:
    assert java_numbers.java_long_value(decimal.Decimal(text)) == expected


def test_java_long_value_of_a_million_digits_never_converts_the_whole_number() -> None:
    # Linear in the digits: it reduces chunk by chunk. Python refuses to convert a longer text
    # than int_max_str_digits, so a conversion of the whole number (quadratic) would raise.
    digits = "12345678" * 125_000
    kept = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)  # the chunk size
    try:
        value = java_numbers.java_long_value(decimal.Decimal(digits))
    finally:
        sys.set_int_max_str_digits(kept)
    assert value == java_numbers.java_narrow(int(digits[-64:]), 64)  # 10^64 is a multiple of 2^64


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("1.50", "1.50"),
        ("-1E+3", "-1000"),
        ("1E-3", "0.001"),
        ("0E+3", "0"),
        ("-0E-2", "0.00"),
        ("12.345E+1", "123.45"),
    ],
)
def test_java_decimal_excerpt_is_to_plain_string_when_short(text: str, plain: str) -> None:
    assert java_numbers.java_decimal_excerpt(decimal.Decimal(text)) == plain


def test_java_decimal_excerpt_never_writes_the_number_out() -> None:
    text = java_numbers.java_decimal_excerpt(decimal.Decimal("-1E-999999999"))
    assert text.startswith("-0.000") and text.endswith("0001") and "[999999902 characters left out]" in text


@pytest.mark.parametrize("text", ["1" * 5000, "0" * 10_000 + "1" * 20, "-" + "9" * 100_000])
def test_java_parse_long_rejects_long_texts_with_javas_message(text: str) -> None:
    with pytest.raises(ValueError, match='For input string: "') as raised:
        java_numbers.java_parse_long(text)
    assert len(str(raised.value)) < 200


def test_java_parse_long_allows_leading_zeros() -> None:
    assert java_numbers.java_parse_long("0" * 10_000 + "42") == 42


@pytest.mark.parametrize("text", ["1E+2147483649", "1E-2147483648", "1E+" + "9" * 5000])
def test_java_big_decimal_rejects_scales_past_an_int(text: str) -> None:
    with pytest.raises(ValueError, match="Scale out of range"):
        java_numbers.java_big_decimal(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1e10, "1.0E10"),
        (1e-45, "1.4E-45"),
        (3.4028235e38, "3.4028235E38"),
        (-2.5, "-2.5"),
        (123456.7, "123456.7"),
        (9.999e-4, "9.999E-4"),
        (float("nan"), "NaN"),
        (-0.0, "-0.0"),
    ],
)
def test_java_float_prints_the_shortest_digits_of_the_32_bit_value(value: float, text: str) -> None:
    as_float = struct.unpack("<f", struct.pack("<f", value))[0]
    assert java_numbers.java_float(as_float) == text


ARABIC_INDIC_34 = "\u0663\u0664"
FULLWIDTH_7 = "\uff17"
MATHEMATICAL_BOLD_9 = "\U0001d7d7"


def test_java_parsers_read_every_decimal_digit_of_one_utf16_unit() -> None:
    # Character.digit(c, 10), which Integer.parseInt and new BigDecimal(String) call per char
    assert java_numbers.java_parse_int(ARABIC_INDIC_34) == 34
    assert java_numbers.java_parse_long("-" + FULLWIDTH_7) == -7
    assert java_numbers.java_big_decimal(f"{FULLWIDTH_7}.{ARABIC_INDIC_34}e{FULLWIDTH_7}") == decimal.Decimal("7.34e7")
    matching, replacement = java_numbers.java_decimal_digits()
    assert len(matching) == len(replacement)
    assert all(0x80 <= ord(c) < 0x10000 for c in matching)


def test_a_digit_past_the_bmp_is_no_digit_to_java() -> None:
    # two surrogate chars, neither of which Character.digit reads; the message quotes the text
    with pytest.raises(ValueError, match="For input string"):
        java_numbers.java_parse_int(MATHEMATICAL_BOLD_9)
    with pytest.raises(ValueError, match=f'number: "{MATHEMATICAL_BOLD_9}"'):
        java_numbers.java_big_decimal(MATHEMATICAL_BOLD_9)
    with pytest.raises(ValueError):
        java_numbers.java_parse_double(ARABIC_INDIC_34)
