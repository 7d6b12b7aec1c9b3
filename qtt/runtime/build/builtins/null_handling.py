"""Null handling: COALESCE, IFNULL, NULLIF, AS_VALUE."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.comparisons import comparable, compare, double_equality_key
from qtt.runtime.build.builtins.registry import implements, null_of


@implements("COALESCE", "IFNULL")
def _coalesce(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.coalesce(*args)


@implements("NULLIF")
def _nullif(expr: e.Call, args: Sequence[Column]) -> Column:
    first, second = expr.args
    if first.result_type == t.DOUBLE and second.result_type == t.DOUBLE:
        same = double_equality_key(args[0]) == double_equality_key(args[1])  # NullIf: Double.equals
    elif first.result_type == second.result_type and t.DOUBLE in t.walk(first.result_type):
        # NullIf's expr1.equals(expr2): a List, Map or Struct compares its DOUBLEs with
        # Double.equals too, where Spark's = takes -0.0 for 0.0.
        type_ = first.result_type
        same = comparable(args[0], type_, java_doubles=True) == comparable(args[1], type_, java_doubles=True)
    else:
        same = compare("=", args[0], args[1], first.result_type, second.result_type)
    return F.when(same, null_of(expr.sql_type)).otherwise(args[0])


@implements("AS_VALUE")
def _as_value(expr: e.Call, args: Sequence[Column]) -> Column:
    return args[0]
