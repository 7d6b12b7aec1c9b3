"""Where a lambda body fails as ksqlDB's generated Java code fails.

ksqlDB compiles a lambda body to Java over boxed values. Arithmetic, negation and the
operands of NOT, AND and OR unbox their operands, so a null operand throws; the exception
leaves the lambda function (TRANSFORM, FILTER, REDUCE), and ksqlDB logs it and makes the
whole call null (``TRANSFORM(ARRAY[1, NULL], x => x + 1)`` is null, not ``[2, null]``).
Outside a lambda, qtt already makes such a failed expression null where it happens.

:func:`failure` gives, for a body compiled with the lambda's variables bound, a BOOLEAN
column that is true where evaluating the body throws, or None where it never can. It follows
Java's evaluation order: AND and OR stop at the operand that decides them, CASE evaluates
only the branch it takes, every other expression evaluates all its operands.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins import invocation_functions

Compile = Callable[[e.Expression], Column]


def any_of(*conditions: Column | None) -> Column | None:
    """True where any condition is; None if there is none."""
    present = [c for c in conditions if c is not None]
    if not present:
        return None
    return reduce(lambda a, b: a | b, present)


def failure(expr: e.Expression, compile_: Compile) -> Column | None:
    """True where evaluating ``expr`` (inside a lambda) throws; None if it never can."""
    if isinstance(expr, e.Arithmetic):
        return any_of(
            failure(expr.left, compile_),
            failure(expr.right, compile_),
            compile_(expr.left).isNull(),
            compile_(expr.right).isNull(),
        )
    if isinstance(expr, (e.Negate, e.Not)):
        return any_of(failure(expr.operand, compile_), compile_(expr.operand).isNull())
    if isinstance(expr, (e.And, e.Or)):
        return _logic(expr, compile_)
    if isinstance(expr, e.Case):
        return _case(expr, compile_)
    if isinstance(expr, (e.Comparison, e.DistinctFrom, e.Between)):
        # null only where Java throws (a NaN or infinite DOUBLE against a DECIMAL)
        inner = [failure(child, compile_) for child in expr.children()]
        return any_of(*inner, compile_(expr).isNull())
    if isinstance(expr, e.Call) and invocation_functions.is_lambda_call(expr):
        args = [compile_(a) for a in expr.args]
        inner = [failure(a, compile_) for a in expr.args if not isinstance(a, e.Lambda)]
        return any_of(*inner, invocation_functions.call_failure(expr, args))
    return any_of(*(failure(child, compile_) for child in expr.children()))


def _logic(expr: e.And | e.Or, compile_: Compile) -> Column | None:
    # Java's && / ||: the left operand is unboxed first; the right only when it has to be.
    left, right = compile_(expr.left), compile_(expr.right)
    left_fails = any_of(failure(expr.left, compile_), left.isNull())
    right_fails = any_of(failure(expr.right, compile_), right.isNull())
    decided = ~left if isinstance(expr, e.And) else left
    assert left_fails is not None and right_fails is not None
    return F.when(left_fails, F.lit(True)).when(decided, F.lit(False)).otherwise(right_fails)


def _case(expr: e.Case, compile_: Compile) -> Column | None:
    # SearchedCaseFunction unboxes each condition it reaches: a null one throws.
    parts = [
        (
            any_of(failure(w.condition, compile_), compile_(w.condition).isNull()),
            compile_(w.condition),
            failure(w.result, compile_),
        )
        for w in expr.whens
    ]
    default = failure(expr.default, compile_) if expr.default is not None else None
    if all(c is None and r is None for c, _, r in parts) and default is None:
        return None
    result: Column | None = None
    for condition_fails, condition, result_fails in parts:
        for test, value in (
            (condition_fails, F.lit(True)),
            (condition, F.lit(False) if result_fails is None else result_fails),
        ):
            if test is None:
                continue
            test = F.coalesce(test, F.lit(False))
            result = F.when(test, value) if result is None else result.when(test, value)
    assert result is not None
    return result.otherwise(default if default is not None else F.lit(False))
