"""Null handling: COALESCE, IFNULL, NULLIF, AS_VALUE."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.comparisons import compare
from qtt.runtime.build.builtins.registry import implements, null_of


@implements("COALESCE", "IFNULL")
def _coalesce(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.coalesce(*args)


@implements("NULLIF")
def _nullif(expr: e.Call, args: Sequence[Column]) -> Column:
    first, second = expr.args
    if first.result_type == t.DOUBLE and second.result_type == t.DOUBLE:
        # ksqlDB's NullIf calls Double.equals: NaN equals NaN, -0.0 does not equal 0.0. Spark's
        # text of a double tells exactly these apart.
        same = args[0].cast("string") == args[1].cast("string")
    else:
        same = compare("=", args[0], args[1], first.result_type, second.result_type)
    return F.when(same, null_of(expr.sql_type)).otherwise(args[0])


@implements("AS_VALUE")
def _as_value(expr: e.Call, args: Sequence[Column]) -> Column:
    return args[0]
