"""Numeric functions with Java's arithmetic: rounding, logarithms, GREATEST/LEAST ...

ksqlDB rounds with ``Math.round`` and ``BigDecimal``; Spark's ``round`` rounds half away from
zero and returns null where Java returns NaN or an infinity, so most functions say how they
compensate.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.comparisons import keyed
from qtt.runtime.build.builtins.java import big_decimal
from qtt.runtime.build.builtins.registry import constant, implements, null_of
from qtt.runtime.build.builtins.strings import java_trim
from qtt.runtime.spark.spark_types import to_spark


def decimal_quotient(op: str, left: Column, right: Column, result: t.Decimal) -> Column:
    """DECIMAL ``/`` or ``%`` as ksqlDB's generated code computes it (BigDecimal with a
    MathContext of the result's precision and RoundingMode.UNNECESSARY): null where Java
    throws, as for ``1.00 / 3`` (:mod:`~qtt.runtime.build.builtins.java.big_decimal`). Spark's
    own division rounds, so a Python UDF runs these two operators."""
    exact = big_decimal.divide if op == "/" else big_decimal.remainder
    java = functools.partial(exact, precision=result.precision, scale=result.scale)
    return F.udf(java, to_spark(result), useArrow=True)(left, right)


@implements("SIGN")
def _sign(expr: e.Call, args: Sequence[Column]) -> Column:
    # Java's Math.signum(NaN) is NaN, and (int) NaN is 0.
    return F.when(F.isnan(args[0].cast("double")), F.lit(0)).otherwise(F.signum(args[0]))


def _java_round_half_up(value: Column) -> Column:
    """Java's ``Math.round(double)``: ties toward +infinity, NaN is 0, saturates at the longs."""
    floor = F.floor(value)
    # value - floor is exact for doubles, unlike value + 0.5 (0.49999999999999994 rounds to 0).
    rounded = F.when((value - floor) >= 0.5, floor + 1).otherwise(floor)
    return (
        F.when(F.isnan(value), F.lit(0))
        .when(value >= float(2**63), F.lit(t.BIGINT_MAX))
        .when(value <= float(-(2**63)), F.lit(t.BIGINT_MIN))
        .otherwise(rounded)
    )


def _half_unit(places: int) -> Column:
    """Half a unit in the last place kept: 0.005 for two places, 5 for -1, as a small DECIMAL."""
    half = decimal.Decimal(5).scaleb(-(places + 1)) if places >= 0 else decimal.Decimal(5 * 10 ** (-places - 1))
    return F.lit(half)


def _decimal_round(value: Column, places: int) -> Column:
    # ksqlDB rounds HALF_UP above zero and HALF_DOWN below it: ties go toward +infinity,
    # which is floor(value + half a unit), exact in decimal arithmetic.
    return F.floor(value + _half_unit(places), places)


def _decimal_trunc(value: Column, places: int) -> Column:
    return F.when(value < 0, F.ceil(value, places)).otherwise(F.floor(value, places))


def _double_via_decimal(value: Column, places: int, op: Callable[[Column, int], Column], huge: Column) -> Column:
    """A decimal rounding of a double, as ksqlDB does it on ``BigDecimal.valueOf(value)``.

    Spark's double -> decimal cast reads the same shortest decimal text. 20 places hold every
    double of at least 1e-3 exactly; doubles beyond 1e18 overflow the decimal, but are whole
    numbers already, so ``huge`` handles them. NaN and infinities make BigDecimal fail: null.
    """
    exact = value.cast("decimal(38,20)")
    return (
        F.when(F.isnan(value) | (F.abs(value) == float("inf")), F.lit(None))
        .when(exact.isNull(), huge)
        .otherwise(op(exact, places).cast("double"))
    )


def _places(expr: e.Call) -> int | None:
    places = constant(expr.args[1])
    assert places is None or isinstance(places, int)
    return places


@dataclass(frozen=True)
class _Rounding:
    """How ROUND or TRUNC treats each argument type."""

    #: one argument, a DOUBLE: the Java expression ksqlDB runs
    whole_double: Callable[[Column], Column]
    #: a DECIMAL (or a double read as one) to a number of places
    decimal: Callable[[Column, int], Column]
    #: a double too large for a DECIMAL(38, 0) (1e38 and more), to a negative number of places
    huge_double: Callable[[Column, int], Column]


_ROUNDINGS = {
    "ROUND": _Rounding(_java_round_half_up, _decimal_round, F.round),
    "TRUNC": _Rounding(
        lambda value: value.cast("bigint"),  # Java's (long) narrowing: toward zero, saturating
        _decimal_trunc,
        lambda value, places: _decimal_trunc(value, places).cast("double"),
    ),
}


@implements(*_ROUNDINGS)
def _round_or_trunc(expr: e.Call, args: Sequence[Column]) -> Column:
    rounding = _ROUNDINGS[expr.name]
    arg_type = expr.args[0].result_type
    value = args[0]
    if len(args) == 1:
        if arg_type == t.DOUBLE:
            return rounding.whole_double(value)
        if isinstance(arg_type, t.Decimal):
            return rounding.decimal(value, 0)
        return value
    places = _places(expr)
    if places is None:
        return null_of(expr.sql_type)
    # BigDecimal.setScale takes any number of places, Spark's decimals at most 38: places
    # beyond a value's digits keep it, places above its leading digit make it 0.
    if isinstance(arg_type, t.Decimal):
        if places >= arg_type.scale:
            return value
        if places < arg_type.scale - arg_type.precision:
            return F.when(value.isNotNull(), F.lit(0))
        return rounding.decimal(value, places)
    finite = ~(F.isnan(value) | (F.abs(value) == float("inf")))
    if places >= _DOUBLE_PLACES:
        return F.when(finite, value)
    if places <= -_DOUBLE_DIGITS:
        return F.when(finite, F.lit(0.0))
    huge = value if places >= 0 else _huge_double(rounding, value, places)
    return _double_via_decimal(value, max(places, -_DECIMAL_DIGITS), rounding.decimal, huge)


def _huge_double(rounding: _Rounding, value: Column, places: int) -> Column:
    """A double of 1e18 and more (a whole number) to a negative number of places: exact as a
    DECIMAL(38, 0) below 1e38 (all 0 above 38 places), else Spark's rounding of the double."""
    whole = value.cast("decimal(38,0)")
    cut = F.lit(0.0) if places < -_WHOLE_DIGITS else rounding.decimal(whole, places).cast("double")
    return F.when(whole.isNotNull(), cut).otherwise(rounding.huge_double(value, places))


#: places that keep every double of at least 1e-3 as it is (_double_via_decimal's scale)
_DOUBLE_PLACES = 20
#: digits left of the point in the largest double (1.8e308)
_DOUBLE_DIGITS = 309
#: digits left of the point in the doubles _double_via_decimal reads as a DECIMAL (below 1e18)
_DECIMAL_DIGITS = 19
#: digits of the whole doubles _huge_double reads as a DECIMAL(38, 0)
_WHOLE_DIGITS = 38


_TO_WHOLE = {"FLOOR": F.floor, "CEIL": F.ceil}


@implements(*_TO_WHOLE)
def _floor_or_ceil(expr: e.Call, args: Sequence[Column]) -> Column:
    to_whole = _TO_WHOLE[expr.name]
    arg_type = expr.args[0].result_type
    if arg_type.base in ("INTEGER", "BIGINT"):
        return args[0]
    if arg_type == t.DOUBLE:
        # Spark's FLOOR/CEIL of a double is a BIGINT; Java's Math.floor/ceil keep NaN,
        # infinities and -0.0, and doubles from 2^52 up are whole already.
        return F.when(F.isnan(args[0]) | (F.abs(args[0]) >= 2.0**52), args[0]).otherwise(to_whole(args[0]))
    return to_whole(args[0], 0)


def java_ln(value: Column) -> Column:
    """Java's ``Math.log``: -Infinity at 0 and NaN below it, where Spark returns null."""
    return (
        F.when(value > 0, F.ln(value))
        .when(value == 0, F.lit(float("-inf")))
        .when(value < 0, F.lit(float("nan")))
        .otherwise(value)  # null and NaN stay as they are
    )


@implements("LN")
def _ln(expr: e.Call, args: Sequence[Column]) -> Column:
    return java_ln(args[0])


@implements("LOG")
def _log(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB's LOG(x) is the natural logarithm; LOG(base, x) is null when either is null, else
    # NaN for a base <= 0 or 1.
    if len(args) == 1:
        return java_ln(args[0])
    base, value = args
    bad_base = (base <= 0) | (base == 1)
    return (
        F.when(base.isNull() | value.isNull(), F.lit(None))
        .when(bad_base, F.lit(float("nan")))
        .otherwise(java_ln(value) / java_ln(base))
    )


@implements("PI")
def _pi(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.lit(math.pi)


@implements("RANDOM")
def _random(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.rand(seed=0)


@implements("GREATEST")
def _greatest(expr: e.Call, args: Sequence[Column]) -> Column:
    # Nulls are skipped; only all-null arguments give null, as in ksqlDB.
    if len(args) == 1:
        return args[0]
    return _keyed_strings(F.array_max, args) if expr.sql_type.base == "STRING" else F.greatest(*args)


@implements("LEAST")
def _least(expr: e.Call, args: Sequence[Column]) -> Column:
    if len(args) == 1:
        return args[0]
    return _keyed_strings(F.array_min, args) if expr.sql_type.base == "STRING" else F.least(*args)


def _keyed_strings(pick: Callable[[Column], Column], args: Sequence[Column]) -> Column:
    # String.compareTo's order (comparisons.java_order); the array binds each argument once.
    return pick(F.transform(F.array(*args), lambda x: keyed(x, t.STRING)))["v"]


_EARTH_RADIUS = {"KM": 6371.0, "MILES": 3959.0}
_MILES = ("mi", "mile", "miles")
_KILOMETRES = ("km", "kilometer", "kilometers", "kilometre", "kilometres")


def _outside(value: Column, bound: int) -> Column:
    # Java's comparisons are false for NaN (which then computes NaN); Spark's NaN is largest.
    return (value < -bound) | ((value > bound) & ~F.isnan(value))


@implements("GEO_DISTANCE")
def _geo_distance(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB's GeoDistance: the haversine formula; a latitude outside [-90, 90], a
    # longitude outside [-180, 180], a null coordinate or an unknown unit fail the value (null).
    lat1, lon1, lat2, lon2 = args[:4]
    if len(args) > 4:
        unit = F.lower(java_trim(args[4]))
        radius = (
            F.when(args[4].isNull() | (unit == ""), F.lit(_EARTH_RADIUS["KM"]))
            .when(unit.isin(*_MILES), F.lit(_EARTH_RADIUS["MILES"]))
            .when(unit.isin(*_KILOMETRES), F.lit(_EARTH_RADIUS["KM"]))
        )
    else:
        radius = F.lit(_EARTH_RADIUS["KM"])
    valid = ~(_outside(lat1, 90) | _outside(lat2, 90) | _outside(lon1, 180) | _outside(lon2, 180))

    def haversin(value: Column) -> Column:
        return F.pow(F.sin(value / 2), 2)

    a = haversin(F.radians(lat2 - lat1)) + haversin(F.radians(lon2 - lon1)) * F.cos(F.radians(lat1)) * F.cos(
        F.radians(lat2)
    )
    return F.when(valid, F.lit(2) * F.asin(F.sqrt(a)) * radius)
