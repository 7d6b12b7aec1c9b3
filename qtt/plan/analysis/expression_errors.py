"""Which expressions a failure inside would null as a whole in ksqlDB but not in qtt's older runtime.

ksqlDB compiles each expression of a query (a SELECT column, a predicate, a GROUP BY or
PARTITION BY expression, an aggregate's argument) into one Java method. Where that code
throws (arithmetic, negation or ``NOT`` unboxing a null operand, an int division by zero, a
null ``LIKE`` operand, a null array index, a null ``CASE`` condition ...), the exception leaves
the whole method, which ksqlDB logs and makes null, unless the part that threw is one ksqlDB
catches itself (``ksql.nested.error.set.null``: a ``CAST``, an array item, a map key or value,
a struct field, a function argument that is a call or a field access).

qtt's runtime nulls the failing part where it fails. That is the same value as ksqlDB's
wherever every node between the failure and the top passes a null on (``a + 1`` of a null
``a`` is null either way); it differs only under a node that turns a null operand into a
value: a comparison (false), ``IS NULL``, ``IN``, ``COALESCE`` or any other call, a string
``+``. Plans persisted before qtt followed ksqlDB here keep the part-only rule, so the planner
records :data:`~qtt.plan.settings.EXPRESSION_ERROR_SCOPE` in the config of a plan only when
one of its expressions :func:`absorbs_errors`; the runtime then nulls each whole expression
that fails (``qtt.runtime.build.lambda_failures.failure`` says where Java throws).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from types import MappingProxyType

from qtt import sqltypes as t
from qtt.plan.functions.invocation_signatures import LAMBDA_SIGNATURES
from qtt.plan.functions.scalar_signatures import FUNCTIONS
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.depth import deep_call
from qtt.plan.ir.steps import walk_steps
from qtt.plan.ir.tagged import children_of
from qtt.plan.settings import (
    EXPRESSION_ERROR_SCOPE,
    NESTED_ERROR_SET_NULL,
    WHOLE_EXPRESSION,
    WHOLE_EXPRESSION_FUNCTIONS,
    enabled,
)

#: the nodes whose parts ksqlDB evaluates in a try of their own while the setting is on
CAUGHT_NODES = (e.Cast, e.CreateArray, e.CreateMap, e.CreateStruct)
#: the arguments of a call that ksqlDB evaluates in a try of their own while the setting is on
CAUGHT_ARGUMENTS = (e.Call, e.FieldRef)
#: the functions the signature tables mark ``throws_on_input``: where qtt's call is null of
#: arguments that are not, ksqlDB's threw
THROWING_FUNCTIONS = frozenset(name for name, function in FUNCTIONS.items() if function.throws_on_input)
#: nodes whose value is null wherever the Java code of one of their operands throws
_PASSING = (e.Negate, e.Not, e.Like, e.Subscript, e.FieldRef, e.And, e.Or, e.Case)
_COMPARING = (e.Comparison, e.DistinctFrom, e.Between)


def with_error_scope(plan: s.Plan) -> s.Plan:
    """``plan``, recording :data:`~qtt.plan.settings.EXPRESSION_ERROR_SCOPE` in its config where
    one of its expressions :func:`absorbs_errors` (under the plan's ``ksql.nested.error.set.null``)."""
    caught = enabled(plan.config, NESTED_ERROR_SET_NULL, True)
    # the walk recurses over expressions: deep ones (generated SQL) need a large stack
    scope = deep_call(_error_scope, plan.queries(), caught=caught)
    if scope is None:
        return plan
    config = dict(sorted({**plan.config, EXPRESSION_ERROR_SCOPE: scope}.items()))
    return replace(plan, config=MappingProxyType(config))


def _error_scope(queries: Iterable[s.QueryPlan], *, caught: bool) -> str | None:
    """The scope ``queries`` need, or None where no expression :func:`absorbs_errors`; plans that
    call no throwing function keep the value they were persisted with."""
    expressions = [
        x for query in queries for step in walk_steps(query.physical_plan) for x in children_of(step, e.Expression)
    ]
    if not any(absorbs_errors(x, caught=caught) for x in expressions):
        return None
    calls = (p for x in expressions for p in e.walk(x) if isinstance(p, e.Call))
    return WHOLE_EXPRESSION_FUNCTIONS if any(c.name in THROWING_FUNCTIONS for c in calls) else WHOLE_EXPRESSION


def absorbs_errors(expr: e.Expression, *, caught: bool = True) -> bool:
    """Whether a part of ``expr`` can throw in ksqlDB's Java where qtt's part-null value of the
    expression ksqlDB nulls for it (``expr``, or the caught part around it) is not null.
    ``caught``: ``ksql.nested.error.set.null`` is on."""
    if not caught and any(isinstance(part, e.Lambda) for part in e.walk(expr)):
        return True  # a lambda body's CAST or constructor item fails the whole lambda call
    return any(_can_throw(unit, caught) and not _passes_null(unit, caught) for unit in _units(expr, caught))


def _units(expr: e.Expression, caught: bool) -> list[e.Expression]:
    """``expr`` and, while ``caught``, each part ksqlDB evaluates in a try of its own: a CAST's
    operand, a constructor's item, key, value or field, a call or field access passed to a call."""
    units = [expr]
    if caught:
        for part in e.walk(expr):
            if isinstance(part, CAUGHT_NODES):
                units += part.children()
            elif isinstance(part, e.Call):
                units += [a for a in part.args if isinstance(a, CAUGHT_ARGUMENTS)]
    return units


def _can_throw(expr: e.Expression, caught: bool) -> bool:
    if isinstance(expr, e.Arithmetic) and expr.sql_type != t.STRING:
        return True
    if isinstance(expr, (e.Negate, e.Not, e.Like)):
        return True
    if isinstance(expr, (e.And, e.Or)):
        return any(_can_throw(c, caught) or _may_be_null(c) for c in expr.children())
    if isinstance(expr, e.Case):
        conditions = any(_can_throw(w.condition, caught) or _may_be_null(w.condition) for w in expr.whens)
        return conditions or any(_can_throw(c, caught) for c in expr.children())
    if isinstance(expr, _COMPARING):
        return _double_against_decimal(expr) or any(_can_throw(c, caught) for c in expr.children())
    if isinstance(expr, CAUGHT_NODES):
        return not caught and (isinstance(expr, e.Cast) or any(_can_throw(c, caught) for c in expr.children()))
    if isinstance(expr, e.Subscript) and isinstance(expr.base.result_type, t.Array):
        return True
    if isinstance(expr, e.Call):
        own = expr.name in LAMBDA_SIGNATURES or expr.name in THROWING_FUNCTIONS
        return own or any(_can_throw(a, caught) for a in failing_arguments(expr, caught))
    return any(_can_throw(c, caught) for c in expr.children())


def _passes_null(expr: e.Expression, caught: bool) -> bool:
    """Whether qtt's value of ``expr`` is null wherever its Java code throws."""
    if not _can_throw(expr, caught):
        return True
    if (isinstance(expr, e.Arithmetic) and expr.sql_type != t.STRING) or isinstance(expr, _PASSING):
        return all(_passes_null(c, caught) for c in expr.children())
    if isinstance(expr, e.Cast):
        return _passes_null(expr.operand, caught)
    if isinstance(expr, _COMPARING):
        # a comparison is null itself only where Java throws; a null operand makes it false
        return not any(_can_throw(c, caught) for c in expr.children())
    if isinstance(expr, e.Call):
        # a lambda function's own failure nulls the call, but for DECIMAL arithmetic and a
        # throwing function in its body only under this rule; an argument's failure may not
        # null the call
        if any(_fails_only_under_the_rule(a.body, caught) for a in expr.args if isinstance(a, e.Lambda)):
            return False
        return not any(_can_throw(a, caught) for a in failing_arguments(expr, caught))
    return False


def _fails_only_under_the_rule(body: e.Expression, caught: bool) -> bool:
    """Whether a lambda body holds a failure that plans persisted before this rule null as an
    element, not as the lambda call: DECIMAL arithmetic anywhere, a call of a throwing function
    outside the parts ksqlDB catches itself."""
    decimal = any(isinstance(p, e.Arithmetic) and isinstance(p.sql_type, t.Decimal) for p in e.walk(body))
    return decimal or any(isinstance(p, e.Call) and p.name in THROWING_FUNCTIONS for p in _uncaught(body, caught))


def _uncaught(expr: e.Expression, caught: bool) -> list[e.Expression]:
    """``expr`` and its parts outside those ksqlDB evaluates in a try of their own."""
    parts, todo = [], [expr]
    while todo:
        part = todo.pop()
        parts.append(part)
        if caught and isinstance(part, CAUGHT_NODES):
            continue
        if isinstance(part, e.Call):
            todo += failing_arguments(part, caught)
        else:
            todo += part.children()
    return parts


def failing_arguments(call: e.Call, caught: bool) -> list[e.Expression]:
    """The arguments whose failure leaves the call: not a lambda, nor, while ``caught``, a call
    or a field access, which ksqlDB evaluates in a try of its own."""
    skipped = (e.Lambda, *CAUGHT_ARGUMENTS) if caught else (e.Lambda,)
    return [a for a in call.args if not isinstance(a, skipped)]


def _may_be_null(expr: e.Expression) -> bool:
    """Whether a BOOLEAN operand of AND, OR or a CASE condition can be null (Java unboxes it)."""
    if isinstance(expr, _COMPARING):
        return _double_against_decimal(expr)
    if isinstance(expr, e.IsNull):
        return False
    if isinstance(expr, e.Literal):
        return expr.value is None
    if isinstance(expr, (e.And, e.Or, e.Not)):
        return any(_may_be_null(c) for c in expr.children())
    return True


def _double_against_decimal(expr: e.Expression) -> bool:
    # BigDecimal.valueOf throws on a NaN or infinite DOUBLE: the comparison itself is null
    bases = {c.result_type.base for c in expr.children()}
    return "DOUBLE" in bases and "DECIMAL" in bases
