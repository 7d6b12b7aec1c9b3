"""Scalar functions and CAST in Spark, with ksqlDB's semantics: the dispatch.

``RENAMES`` maps a ksqlDB function to the Spark function that behaves identically. Every
other function has its own implementation in the module of its section (comparisons, null
handling, strings, numbers, collections, dates, test functions, CAST). Together they must
cover ``qtt.plan.functions.scalar_signatures.FUNCTIONS`` exactly; a test checks it.

The planner has already converted every argument to its parameter's type (an implicit CAST
where ksqlDB widens), so an implementation may rely on ``expr.args[i].result_type``.
ksqlDB's UDFs are Java: where Spark returns null for what Java computes (``LN(0)`` is
-Infinity), or fails where ksqlDB logs an error and emits null, the implementation says so.
A lambda argument arrives compiled, as the Python function of Columns that Spark's
higher-order functions (``F.transform``, ``F.filter``, ``F.aggregate``) take.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column

from qtt.errors import RuntimeBuildError
from qtt.plan.ir import expressions as e

# The section modules register their implementations when imported.
from qtt.runtime.build.builtins import (  # noqa: F401
    collection_functions,
    dates,
    invocation_functions,
    json_functions,
    lazy_checks,
    null_handling,
    numeric,
    strings,
    text_functions,
    time_functions,
    url_functions,
)
from qtt.runtime.build.builtins.registry import IMPLEMENTATIONS, RENAMES
from qtt.runtime.spark.spark_types import to_spark

__all__ = ["IMPLEMENTATIONS", "RENAMES", "call", "implemented"]


def call(expr: e.Call, args: Sequence[Column]) -> Column:
    """The Spark column for a resolved call, given its compiled arguments."""
    result: Column
    if expr.name in RENAMES:
        result = RENAMES[expr.name](*args)
    elif expr.name in IMPLEMENTATIONS:
        result = IMPLEMENTATIONS[expr.name](expr, args)
    else:
        msg = (
            f"function {expr.name} has no Spark implementation; "
            "add one to qtt.runtime.build.builtins (RENAMES or an @implements function)"
        )
        raise RuntimeBuildError(msg)
    return result.cast(to_spark(expr.sql_type))


def implemented() -> frozenset[str]:
    """Every function name with a Spark implementation."""
    return frozenset(RENAMES) | frozenset(IMPLEMENTATIONS)
