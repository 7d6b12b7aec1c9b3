"""Java's number parsing and printing: ``Double.toString``, ``Double.parseDouble``, ``Long.parseLong``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qtt.serde import java_numbers

DATA = Path(__file__).parent / "data"


def _double(value: Any) -> float:
    return float(value.replace("Infinity", "inf")) if isinstance(value, str) else float(value)


@pytest.mark.parametrize(("value", "text"), json.loads((DATA / "java_doubles.json").read_text())["cases"])
def test_java_double(value: Any, text: str) -> None:
    assert java_numbers.java_double(_double(value)) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", 1.0), (" 1.5 ", 1.5), ("1e3", 1000.0), ("2d", 2.0), ("-.5f", -0.5), ("+7", 7.0)],
)
def test_java_parse_double(text: str, expected: float) -> None:
    assert java_numbers.java_parse_double(text) == expected


@pytest.mark.parametrize("text", ["", "1,5", "0x", "inf", "nan", "1_000", "e5"])
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
