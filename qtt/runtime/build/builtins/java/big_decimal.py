"""``java.math.BigDecimal`` arithmetic as ksqlDB's generated code runs it on DECIMAL operands.

ksqlDB computes ``left.op(right, new MathContext(precision, RoundingMode.UNNECESSARY))
.setScale(scale)`` with the precision and scale of the result type: a result that needs
rounding to fit throws, and ksqlDB's expression evaluation turns the failure into null. For a
sum, a difference or a product the result type always holds the exact value; a quotient that
does not end within the result's digits (``1.00 / 3``) and a remainder whose integral quotient
has more digits than the precision fail. Python's ``decimal`` follows the same General Decimal
Arithmetic specification, so its traps give the same verdicts.
"""

from __future__ import annotations

import decimal
import functools
import math

Number = decimal.Decimal | int | None

#: enough digits to hold any quotient of two 38-digit decimals that ends at all
_EXACT = decimal.Context(prec=200, traps=[decimal.Inexact, decimal.DivisionByZero, decimal.InvalidOperation])


@functools.cache  # one per result type, not one per row
def _context(precision: int) -> decimal.Context:
    # Rounded alone is no failure: setScale(UNNECESSARY) may drop zero digits
    return decimal.Context(prec=precision, traps=[decimal.Inexact, decimal.DivisionByZero, decimal.InvalidOperation])


def divide(
    left: decimal.Decimal | None, right: decimal.Decimal | None, precision: int, scale: int
) -> decimal.Decimal | None:
    """``left.divide(right, new MathContext(precision, UNNECESSARY)).setScale(scale)``, or None
    where Java throws (an inexact quotient, a division by zero)."""
    if left is None or right is None:
        return None
    try:
        quotient = _EXACT.divide(left, right)
        if len(quotient.normalize(_EXACT).as_tuple().digits) > precision:
            return None
        return quotient.quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)
    except decimal.DecimalException:
        return None


def remainder(
    left: decimal.Decimal | None, right: decimal.Decimal | None, precision: int, scale: int
) -> decimal.Decimal | None:
    """``left.remainder(right, new MathContext(precision, UNNECESSARY)).setScale(scale)``: the
    sign of the dividend, and None where the integral quotient needs more than ``precision``
    digits or ``right`` is zero."""
    if left is None or right is None:
        return None
    try:
        result = _context(precision).remainder(left, right)
        return result.quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)
    except decimal.DecimalException:
        return None


@functools.cache  # one per result type, not one per row
def _rounding(precision: int) -> decimal.Context:
    # new MathContext(precision): HALF_UP; the exponent range holds any double's exact value
    return decimal.Context(prec=precision, rounding=decimal.ROUND_HALF_UP, Emin=-2000, Emax=2000)


def from_double(value: float | None, precision: int, scale: int) -> decimal.Decimal | None:
    """``DecimalUtil.cast(double, precision, scale)``: ``new BigDecimal(value, new
    MathContext(precision))`` (the double's exact binary value rounded half up to ``precision``
    digits), then ``setScale(scale, HALF_UP)``; None where Java throws (NaN, an infinity, or a
    rounded value of at least ``10^(precision - scale)``)."""
    if value is None or not math.isfinite(value):
        return None
    rounded = _rounding(precision).plus(decimal.Decimal(value))  # Decimal(float) is exact
    if abs(rounded) >= decimal.Decimal(10) ** (precision - scale):
        return None
    return rounded.quantize(decimal.Decimal(1).scaleb(-scale), context=_rounding(200))
