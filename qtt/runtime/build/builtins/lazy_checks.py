"""ksqlDB's test functions that qtt runs: they test engine semantics, not a function.

WHENCONDITION and WHENRESULT fail a query that evaluates a CASE branch eagerly. BAD_UDF throws;
ksqlDB logs the error and the expression is null, so a PARTITION BY key part is null and a GROUP
BY drops the row.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.registry import implements


def _lazy_check(value: Column, evaluated: Column, what: str) -> Column:
    # Fails the query when evaluated with `false`, so a replay proves CASE is lazy.
    return F.when(evaluated, value).otherwise(F.raise_error(F.lit(f"{what} in case is not running lazily!")))


@implements("WHENCONDITION")
def _when_condition(expr: e.Call, args: Sequence[Column]) -> Column:
    return _lazy_check(args[0], args[1], "When condition")


@implements("WHENRESULT")
def _when_result(expr: e.Call, args: Sequence[Column]) -> Column:
    return _lazy_check(args[0], args[1], "When result")


@implements("BAD_UDF")
def _bad_udf(expr: e.Call, args: Sequence[Column]) -> Column:
    if expr.args[0].result_type == t.BOOLEAN:
        # throws when true, and when null (Java unboxes the argument): both are null
        return F.when(args[0] == F.lit(False), F.lit(0))
    return F.lit(None).cast("string")  # always throws
