"""The statistical aggregates: STDDEV_SAMP, STDDEV_SAMPLE and CORRELATION.

Their states are STRUCTs of running sums (see ``qtt.plan.functions.aggregate_signatures``) and their
arithmetic is Java's ``double``/``long`` arithmetic, as in ksqlDB's UDAFs.
"""

from __future__ import annotations

import math
from typing import Any

from qtt.plan.functions.aggregate_signatures import Aggregate
from qtt.runtime.aggregates.java_semantics import coercer, wrap64, wrapper
from qtt.runtime.aggregates.udaf import Udaf


class StdDev(Udaf):
    """ksqlDB's Youngs-Cramer STRUCT<SUM, COUNT, M2>.

    STDDEV_SAMP returns M2 / (n - 1), the sample *variance*: a ksqlDB bug its tests pin down.
    STDDEV_SAMPLE returns the square root. Both return 0.0 for fewer than two values.
    """

    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.type = aggregate.arg_types[0]
        self.coerce = coercer(self.type)
        self.wrap = wrapper(self.type)
        self.root = aggregate.name == "STDDEV_SAMPLE"

    def initial(self) -> Any:
        return (0.0 if self.type.base == "DOUBLE" else 0, 0, 0.0)

    def _delta(self, acc: Any, value: Any) -> float:
        # newValue * (count + 1) - (sum + newValue), in the column type's Java arithmetic.
        if self.type.base == "DOUBLE":
            return float(value * (acc[1] + 1) - (acc[0] + value))
        return float(wrap64(wrap64(value * (acc[1] + 1)) - self.wrap(acc[0] + value)))

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        if value is None:
            return tuple(acc)
        count = acc[1] + 1
        m2 = 0.0
        if count - 1 > 0:
            delta = self._delta(acc, value)
            m2 = delta * delta / float(count * (count - 1))
        return (self.wrap(acc[0] + value), count, m2 + acc[2])

    def undo(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        if value is None:
            return tuple(acc)
        count = acc[1] - 1
        m2 = 0.0
        if count > 0:
            delta = self._delta(acc, value)
            m2 = delta * delta / float(count * (count + 1))
        return (self.wrap(acc[0] - value), count, acc[2] - m2)

    def merge(self, first: Any, second: Any) -> Any:
        count = first[1] + second[1]
        if first[1] == 0 or second[1] == 0:
            m2 = first[2] + second[2]
        else:
            inner = self._mean_difference(first, second)
            m2 = first[2] + second[2] + first[1] * second[1] * inner * inner / count
        return (self.wrap(first[0] + second[0]), count, m2)

    def _mean_difference(self, first: Any, second: Any) -> float:
        if self.root or self.type.base == "DOUBLE":
            return float(first[0]) / first[1] - float(second[0]) / second[1]
        # STDDEV_SAMP's INTEGER and BIGINT mergers divide each sum by its count as Java longs
        # (truncating) and subtract them; STDDEV_SAMPLE's divide as doubles.
        return float(wrap64(_long_divide(first[0], first[1]) - _long_divide(second[0], second[1])))

    def result(self, acc: Any) -> Any:
        if acc[1] < 2:
            return 0.0
        variance = acc[2] / (acc[1] - 1)
        return math.sqrt(variance) if self.root else variance


def _long_divide(numerator: int, denominator: int) -> int:
    """Java's ``long`` division: the quotient truncated toward zero."""
    quotient = abs(int(numerator)) // abs(int(denominator))
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def _java_divide(numerator: float, denominator: float) -> float:
    """Java's ``double`` division: no exception for a zero denominator."""
    if denominator == 0.0 or math.isnan(denominator):
        if numerator == 0.0 or math.isnan(numerator) or math.isnan(denominator):
            return math.nan
        negative = (numerator < 0) != (math.copysign(1.0, denominator) < 0)
        return -math.inf if negative else math.inf
    return numerator / denominator


def _java_sqrt(value: float) -> float:
    """``Math.sqrt``: NaN for a negative value (rounding can make a variance term negative)."""
    return math.nan if value < 0 else math.sqrt(value)


class Correlation(Udaf):
    """ksqlDB's CorrelationUdaf: Pearson's coefficient from running sums.

    The state is STRUCT<X_SUM, Y_SUM, X_SQUARED_SUM, Y_SQUARED_SUM, XY_SUM, COUNT>; a pair with a
    null on either side is skipped. Fewer than two pairs, or a constant column, give NaN
    (0.0 / 0.0), as ksqlDB's single-pass formula does.
    """

    def initial(self) -> Any:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0)

    def _step(self, acc: Any, values: tuple[Any, ...], sign: int) -> Any:
        x, y = values[0], values[1]
        if x is None or y is None:
            return tuple(acc)
        x, y = float(x), float(y)
        if sign > 0:
            return (acc[0] + x, acc[1] + y, acc[2] + x * x, acc[3] + y * y, acc[4] + x * y, acc[5] + 1)
        return (acc[0] - x, acc[1] - y, acc[2] - x * x, acc[3] - y * y, acc[4] - x * y, acc[5] - 1)

    def aggregate(self, acc: Any, *values: Any) -> Any:
        return self._step(acc, values, 1)

    def undo(self, acc: Any, *values: Any) -> Any:
        return self._step(acc, values, -1)

    def merge(self, first: Any, second: Any) -> Any:
        return tuple(a + b for a, b in zip(first, second, strict=True))

    def result(self, acc: Any) -> Any:
        sum_x, sum_y, squares_x, squares_y, sum_xy, count = acc
        numerator = count * sum_xy - sum_x * sum_y
        spread_x = count * squares_x - sum_x * sum_x
        spread_y = count * squares_y - sum_y * sum_y
        return _java_divide(numerator, _java_sqrt(spread_x * spread_y))
