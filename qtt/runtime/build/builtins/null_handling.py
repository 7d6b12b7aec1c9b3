"""Null handling: COALESCE, IFNULL, NULLIF, AS_VALUE."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.comparisons import compare, double_equality_key
from qtt.runtime.build.builtins.registry import implements, null_of


@implements("COALESCE", "IFNULL")
def _coalesce(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.coalesce(*args)


@implements("NULLIF")
def _nullif(expr: e.Call, args: Sequence[Column]) -> Column:
    first, second = expr.args
    if first.result_type == t.DOUBLE and second.result_type == t.DOUBLE:
        same = double_equality_key(args[0]) == double_equality_key(args[1])  # NullIf: Double.equals
    else:
        same = compare("=", args[0], args[1], first.result_type, second.result_type)
    return F.when(same, null_of(expr.sql_type)).otherwise(args[0])


@implements("AS_VALUE")
def _as_value(expr: e.Call, args: Sequence[Column]) -> Column:
    return args[0]
