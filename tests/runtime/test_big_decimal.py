"""BigDecimal arithmetic with a MathContext of RoundingMode.UNNECESSARY, as ksqlDB runs DECIMAL / and %."""

from __future__ import annotations

from decimal import Decimal

import pytest

from qtt.runtime.build.builtins.java.big_decimal import divide, remainder


@pytest.mark.parametrize(
    ("left", "right", "precision", "scale", "expected"),
    [
        ("1.00", "4.000", 13, 8, "0.25000000"),  # exact: padded to the result's scale
        ("-12.34", "0.125", 13, 8, "-98.72000000"),
        ("3.000", "1.000", 13, 2, "3.00"),  # zero digits beyond the scale may go
        ("0", "1.00", 18, 6, "0.000000"),
        ("1.00", "3.000", 13, 8, None),  # never ends
        ("1", "1024", 13, 8, None),  # ends, but after the result's scale
        ("1", "0", 18, 6, None),  # Java's ArithmeticException
        (None, "2", 18, 6, None),
    ],
)
def test_divide(left: str | None, right: str, precision: int, scale: int, expected: str | None) -> None:
    result = divide(Decimal(left) if left is not None else None, Decimal(right), precision, scale)
    assert (str(result) if result is not None else None) == expected


@pytest.mark.parametrize(
    ("left", "right", "precision", "scale", "expected"),
    [
        ("-12.34", "5", 4, 2, "-2.34"),  # the sign of the dividend
        ("7", "2.5", 4, 1, "2.0"),
        ("99999999.99", "0.01", 3, 2, None),  # the integral quotient needs 10 digits, not 3
        ("1.00", "0", 4, 2, None),
    ],
)
def test_remainder(left: str, right: str, precision: int, scale: int, expected: str | None) -> None:
    result = remainder(Decimal(left), Decimal(right), precision, scale)
    assert (str(result) if result is not None else None) == expected


def test_whole_number_operands_read_as_decimals() -> None:
    assert divide(3, Decimal("1.00"), 18, 6) == Decimal("3.000000")
