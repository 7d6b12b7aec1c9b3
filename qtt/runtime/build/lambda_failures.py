"""Where a lambda body fails as ksqlDB's generated Java code fails.

ksqlDB compiles a lambda body to Java over boxed values. Arithmetic, negation and the
operands of NOT, AND and OR unbox their operands, so a null operand throws; the exception
leaves the lambda function (TRANSFORM, FILTER, REDUCE), and ksqlDB logs it and makes the
whole call null (``TRANSFORM(ARRAY[1, NULL], x => x + 1)`` is null, not ``[2, null]``), as
does an int or long division or remainder by zero, or a function that throws on its input
(``PARSE_DATE`` of text it cannot read, in plans that record that rule). Where ksqlDB catches
the exception itself (``ksql.nested.error.set.null``: a CAST, an array item, a map key or
value, a struct field, a function argument that is a call or a field access), only that part
is null.
Outside a lambda, the same exception leaves the whole top-level expression (a SELECT column, a
predicate, a key, an aggregate argument): :class:`~qtt.runtime.build.compiler.Compiler` nulls
it where :func:`failure` holds, in a query whose plan records that rule
(:mod:`qtt.plan.analysis.expression_errors`).

:func:`failure` gives, for a body compiled with the lambda's variables bound, a BOOLEAN
column that is true where evaluating the body throws, or None where it never can. It follows
Java's evaluation order: AND and OR stop at the operand that decides them, CASE evaluates
only the branch it takes, every other expression evaluates all its operands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.analysis.expression_errors import CAUGHT_NODES, THROWING_FUNCTIONS, failing_arguments
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins import invocation_functions

Compile = Callable[[e.Expression], Column]

#: while a query is built whose failures null whole expressions: whether ksqlDB catches a
#: failing CAST, array item, map entry, struct field or call argument itself
#: (``ksql.nested.error.set.null``); None: only the failing part is null
_WHOLE_EXPRESSION_ERRORS: ContextVar[bool | None] = ContextVar("qtt_whole_expression_errors", default=None)
#: while such a query is built: whether a function that throws on its input counts as failing
_FUNCTION_ERRORS: ContextVar[bool] = ContextVar("qtt_function_errors", default=False)


@contextmanager
def whole_expression_errors(enabled: bool, *, caught: bool = True, functions: bool = False) -> Iterator[None]:
    """Build a query's expressions so that a failing part nulls the whole expression (each
    SELECT column, predicate, key or aggregate argument), as ksqlDB's generated code does;
    ``functions``: a function that throws on its input in ksqlDB fails it too."""
    token = _WHOLE_EXPRESSION_ERRORS.set(caught if enabled else None)
    functions_token = _FUNCTION_ERRORS.set(enabled and functions)
    try:
        yield
    finally:
        _FUNCTION_ERRORS.reset(functions_token)
        _WHOLE_EXPRESSION_ERRORS.reset(token)


def whole_expression_rule() -> bool | None:
    """While a query is built under :func:`whole_expression_errors`: whether caught parts are
    caught (``ksql.nested.error.set.null``); None while only failing parts are null."""
    return _WHOLE_EXPRESSION_ERRORS.get()


def any_of(*conditions: Column | None) -> Column | None:
    """True where any condition is; None if there is none."""
    present = [c for c in conditions if c is not None]
    if not present:
        return None
    return reduce(lambda a, b: a | b, present)


def failure(expr: e.Expression, compile_: Compile, caught: bool = True) -> Column | None:
    """True where evaluating ``expr`` throws; None if it never can. Without ``caught``, a part
    ksqlDB catches counts too (``ksql.nested.error.set.null`` off, or an INSERT value, whose
    logger throws)."""

    def fails(part: e.Expression) -> Column | None:
        return failure(part, compile_, caught)

    if isinstance(expr, e.Arithmetic) and expr.sql_type != t.STRING:  # String + takes a null
        # Java's int and long / and % by zero throw ArithmeticException
        by_zero = expr.op in ("/", "%") and expr.sql_type.base in ("INTEGER", "BIGINT")
        left, right = compile_(expr.left), compile_(expr.right)
        return any_of(
            fails(expr.left),
            fails(expr.right),
            left.isNull(),
            right.isNull(),
            F.coalesce(right == 0, F.lit(False)) if by_zero else None,
            _decimal_thrown(expr, left, right, compile_),
        )
    if isinstance(expr, (e.Negate, e.Not)):
        return any_of(fails(expr.operand), compile_(expr.operand).isNull())
    if isinstance(expr, e.Like):
        # LikeEvaluator compiles the pattern and matches the value: a null one throws
        parts = (expr.value, expr.pattern)
        return any_of(*(fails(p) for p in parts), *(compile_(p).isNull() for p in parts))
    if isinstance(expr, (e.And, e.Or)):
        return _logic(expr, compile_, caught)
    if isinstance(expr, e.Case):
        return _case(expr, compile_, caught)
    if isinstance(expr, (e.Comparison, e.DistinctFrom, e.Between)):
        # null only where Java throws (a NaN or infinite DOUBLE against a DECIMAL)
        inner = [fails(child) for child in expr.children()]
        return any_of(*inner, compile_(expr).isNull())
    if caught and isinstance(expr, CAUGHT_NODES):
        # ksql.nested.error.set.null: ksqlDB catches a CAST (with its operand), an array
        # item, a map key or value and a struct field itself, so only that part is null
        return None
    if isinstance(expr, e.Cast):
        # a conversion that fails is null here (casts.py), where Java threw and logged it
        converted = compile_(expr.operand).isNotNull() & compile_(expr).isNull()
        return any_of(fails(expr.operand), converted)
    if isinstance(expr, e.Subscript) and isinstance(expr.base.result_type, t.Array):
        # ArrayAccess unboxes the index of an array that is not null
        index_null = compile_(expr.base).isNotNull() & compile_(expr.index).isNull()
        return any_of(fails(expr.base), fails(expr.index), index_null)
    if isinstance(expr, e.Call):
        # an argument that is itself a call or a field access is caught as a CAST is
        inner = [fails(a) for a in failing_arguments(expr, caught)]
        if not invocation_functions.is_lambda_call(expr):
            return any_of(*inner, _function_thrown(expr, compile_))
        args = [compile_(a) for a in expr.args]
        return any_of(*inner, invocation_functions.call_failure(expr, args))
    return any_of(*(fails(child) for child in expr.children()))


def _decimal_thrown(expr: e.Arithmetic, left: Column, right: Column, compile_: Compile) -> Column | None:
    # BigDecimal arithmetic with RoundingMode.UNNECESSARY throws where qtt's result is null of
    # operands that are not (a division by zero, a quotient that must round). Counted only
    # under the whole-expression rule: lambda bodies persisted before it null the element.
    if not isinstance(expr.sql_type, t.Decimal) or whole_expression_rule() is None:
        return None
    return left.isNotNull() & right.isNotNull() & compile_(expr).isNull()


def _function_thrown(expr: e.Call, compile_: Compile) -> Column | None:
    # A function of THROWING_FUNCTIONS is null of arguments that are not null only where
    # ksqlDB's threw. Counted only in plans that record it: those persisted before null the call.
    if expr.name not in THROWING_FUNCTIONS or not _FUNCTION_ERRORS.get():
        return None
    present = [compile_(a).isNotNull() for a in expr.args]
    return reduce(lambda a, b: a & b, present, compile_(expr).isNull())


def _logic(expr: e.And | e.Or, compile_: Compile, caught: bool) -> Column | None:
    # Java's && / ||: the left operand is unboxed first; the right only when it has to be.
    left, right = compile_(expr.left), compile_(expr.right)
    left_fails = any_of(failure(expr.left, compile_, caught), left.isNull())
    right_fails = any_of(failure(expr.right, compile_, caught), right.isNull())
    decided = ~left if isinstance(expr, e.And) else left
    assert left_fails is not None and right_fails is not None
    return F.when(left_fails, F.lit(True)).when(decided, F.lit(False)).otherwise(right_fails)


def _case(expr: e.Case, compile_: Compile, caught: bool) -> Column | None:
    # SearchedCaseFunction unboxes each condition it reaches: a null one throws.
    parts = [
        (
            any_of(failure(w.condition, compile_, caught), compile_(w.condition).isNull()),
            compile_(w.condition),
            failure(w.result, compile_, caught),
        )
        for w in expr.whens
    ]
    default = failure(expr.default, compile_, caught) if expr.default is not None else None
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
