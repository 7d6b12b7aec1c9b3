"""ksqlDB's test functions, which fail a query that evaluates a CASE branch eagerly."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt.plan import expressions as e
from qtt.runtime.builtins.registry import implements


def _lazy_check(value: Column, evaluated: Column, what: str) -> Column:
    # Fails the query when evaluated with `false`, so a replay proves CASE is lazy.
    return F.when(evaluated, value).otherwise(F.raise_error(F.lit(f"{what} in case is not running lazily!")))


@implements("WHENCONDITION")
def _when_condition(expr: e.Call, args: Sequence[Column]) -> Column:
    return _lazy_check(args[0], args[1], "When condition")


@implements("WHENRESULT")
def _when_result(expr: e.Call, args: Sequence[Column]) -> Column:
    return _lazy_check(args[0], args[1], "When result")
