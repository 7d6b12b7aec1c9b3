"""Compile plan expressions into Spark Columns: one method per expression node.

Where Spark's semantics differ from ksqlDB's (integer division, LIKE escapes, double
division by zero, 1-based array indexes ...), the method says so and compensates.
"""

from __future__ import annotations

import base64
import decimal
import re
from functools import singledispatchmethod

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan import expressions as e
from qtt.runtime import functions
from qtt.runtime.names import col
from qtt.runtime.types import to_spark


def literal(value: object, type_: t.SqlType) -> Column:
    """A typed literal column from a plan literal's JSON value."""
    spark_type = to_spark(type_)
    if value is None:
        return F.lit(None).cast(spark_type)
    if isinstance(type_, t.Decimal):
        return F.lit(decimal.Decimal(str(value))).cast(spark_type)
    if type_.base == "BYTES":
        return F.lit(base64.b64decode(str(value))).cast(spark_type)
    return F.lit(value).cast(spark_type)


def like_regex(pattern: str, escape: str | None) -> str:
    """A Java regex equivalent to a SQL LIKE pattern (``%``, ``_`` and an optional escape)."""
    out = ["(?s)^"]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    out.append("$")
    return "".join(out)


class Compiler:
    """Turns one plan expression tree into a Spark Column."""

    def __init__(self, lambda_columns: dict[str, Column] | None = None) -> None:
        self.lambda_columns = lambda_columns or {}

    def __call__(self, expr: e.Expression) -> Column:
        return self.visit(expr)

    @singledispatchmethod
    def visit(self, expr: e.Expression) -> Column:
        msg = f"no Spark translation for expression {type(expr).type_tag!r}"
        raise RuntimeBuildError(msg)

    @visit.register
    def _(self, expr: e.ColumnRef) -> Column:
        return col(expr.name)

    @visit.register
    def _(self, expr: e.Literal) -> Column:
        return literal(expr.value, expr.sql_type)

    @visit.register
    def _(self, expr: e.LambdaVariable) -> Column:
        return self.lambda_columns[expr.name]

    @visit.register
    def _(self, expr: e.Arithmetic) -> Column:
        left, right = self(expr.left), self(expr.right)
        target = to_spark(expr.sql_type)
        base = expr.sql_type.base
        if base in ("INTEGER", "BIGINT"):
            left, right = left.cast(target), right.cast(target)
            if expr.op == "/":
                # Java integer division truncates toward zero. (left - left % right) is an exact
                # multiple of right, so the decimal quotient is exact before the cast.
                exact = (left - left % right).cast("decimal(38,0)") / right.cast("decimal(38,0)")
                return F.when(right == 0, F.lit(None)).otherwise(exact).cast(target)
            if expr.op == "%":
                return F.when(right == 0, F.lit(None)).otherwise(left % right).cast(target)
        if base == "DOUBLE":
            left, right = left.cast(target), right.cast(target)
            if expr.op == "/":
                # Java doubles divide by zero into +/-Infinity or NaN; Spark returns null.
                inf = F.lit(float("inf"))
                return F.when(
                    right == 0,
                    F.when(left > 0, inf).when(left < 0, -inf).when(left.isNotNull(), F.lit(float("nan"))),
                ).otherwise(left / right)
            if expr.op == "%":
                return F.when(right == 0, F.lit(float("nan"))).otherwise(left % right)
        ops = {"+": Column.__add__, "-": Column.__sub__, "*": Column.__mul__, "/": Column.__truediv__,
               "%": Column.__mod__}
        return ops[expr.op](left, right).cast(target)

    @visit.register
    def _(self, expr: e.Negate) -> Column:
        return (-self(expr.operand)).cast(to_spark(expr.sql_type))

    @visit.register
    def _(self, expr: e.Comparison) -> Column:
        left, right = self(expr.left), self(expr.right)
        ops = {"=": Column.__eq__, "<>": Column.__ne__, "<": Column.__lt__, "<=": Column.__le__,
               ">": Column.__gt__, ">=": Column.__ge__}
        return ops[expr.op](left, right)  # type: ignore[operator,no-any-return]

    @visit.register
    def _(self, expr: e.DistinctFrom) -> Column:
        same = self(expr.left).eqNullSafe(self(expr.right))
        return same if expr.negated else ~same

    @visit.register
    def _(self, expr: e.And) -> Column:
        return self(expr.left) & self(expr.right)

    @visit.register
    def _(self, expr: e.Or) -> Column:
        return self(expr.left) | self(expr.right)

    @visit.register
    def _(self, expr: e.Not) -> Column:
        return ~self(expr.operand)

    @visit.register
    def _(self, expr: e.IsNull) -> Column:
        operand = self(expr.operand)
        return operand.isNotNull() if expr.negated else operand.isNull()

    @visit.register
    def _(self, expr: e.Like) -> Column:
        value = self(expr.value)
        if isinstance(expr.pattern, e.Literal) and expr.pattern.value is not None:
            matched = value.rlike(like_regex(str(expr.pattern.value), expr.escape))
        else:
            # Spark's LIKE escapes with a backslash by default; ksqlDB has no default escape,
            # so a control character that cannot appear in a pattern stands in for "none".
            matched = F.like(value, self(expr.pattern), F.lit(expr.escape or "\u0001"))
        return ~matched if expr.negated else matched

    @visit.register
    def _(self, expr: e.Between) -> Column:
        value = self(expr.value)
        result = (value >= self(expr.low)) & (value <= self(expr.high))
        return ~result if expr.negated else result

    @visit.register
    def _(self, expr: e.InList) -> Column:
        value = self(expr.value)
        result = value.isin([self(i) for i in expr.items])
        return ~result if expr.negated else result

    @visit.register
    def _(self, expr: e.Case) -> Column:
        result: Column | None = None
        for when in expr.whens:
            condition = self(when.condition)
            value = self(when.result).cast(to_spark(expr.sql_type))
            result = F.when(condition, value) if result is None else result.when(condition, value)
        assert result is not None
        default = self(expr.default).cast(to_spark(expr.sql_type)) if expr.default is not None else None
        return result.otherwise(default) if default is not None else result

    @visit.register
    def _(self, expr: e.Cast) -> Column:
        return functions.cast(self(expr.operand), expr.operand.result_type, expr.sql_type)

    @visit.register
    def _(self, expr: e.Call) -> Column:
        return functions.call(expr, [self(a) for a in expr.args], self)

    @visit.register
    def _(self, expr: e.Subscript) -> Column:
        base, index = self(expr.base), self(expr.index)
        if isinstance(expr.base.result_type, t.Array):
            # ksqlDB: 1-based, negative from the end, out of range (and 0) is null.
            safe = F.when(index == 0, F.lit(None)).otherwise(index).cast("int")
            return F.try_element_at(base, safe)
        return F.try_element_at(base, index)

    @visit.register
    def _(self, expr: e.FieldRef) -> Column:
        return self(expr.base).getField(expr.name)

    @visit.register
    def _(self, expr: e.CreateArray) -> Column:
        element = to_spark(expr.sql_type.element)  # type: ignore[attr-defined]
        return F.array(*[self(i).cast(element) for i in expr.items])

    @visit.register
    def _(self, expr: e.CreateMap) -> Column:
        map_type = expr.sql_type
        assert isinstance(map_type, t.Map)
        parts: list[Column] = []
        for entry in expr.entries:
            parts += [self(entry.key).cast(to_spark(map_type.key)), self(entry.value).cast(to_spark(map_type.value))]
        return F.create_map(*parts) if parts else F.create_map().cast(to_spark(map_type))

    @visit.register
    def _(self, expr: e.CreateStruct) -> Column:
        if not expr.fields:
            return F.struct().cast(to_spark(expr.sql_type))
        return F.struct(*[self(f.value).alias(f.name) for f in expr.fields])
