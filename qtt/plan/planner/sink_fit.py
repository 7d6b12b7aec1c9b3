"""Fit a query's result to the sink it writes into, as ksqlDB does for an existing sink.

When a query writes into a stream that already exists (``INSERT INTO ... SELECT``; not
``CREATE OR REPLACE``, whose result must match exactly), ksqlDB widens DECIMAL results to the
sink's columns: a numeric literal becomes a DECIMAL literal of the sink column's type (its
``ImplicitlyCastResolver``), and a DECIMAL column fits a DECIMAL sink column that holds as
many integer digits and as large a scale (``Column.canImplicitlyCast``). Anything else must
match exactly, and is left for the caller's schema check to refuse.

ksqlDB's ``SelectionUtil`` pairs an INTEGER, BIGINT or DOUBLE literal with the sink column at
the position of its select item (keys first, ``*`` counting as one item), not with the
column of its name: the literal widens only when that column is a DECIMAL it fits.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import replace

from qtt import sqltypes as t
from qtt.plan.analysis.coercion import decimal_literal_type
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.planner.planned import PlannedQuery
from qtt.sql import ast

_NUMBER_LITERALS = ("INTEGER", "BIGINT", "DOUBLE", "DECIMAL")


def fit_to_sink(planned: PlannedQuery, sink: LogicalSchema, items: Sequence[ast.SelectItem]) -> PlannedQuery:
    """``planned`` with its projection widened to ``sink``'s DECIMAL columns where ksqlDB widens;
    ``items`` are the query's select items."""
    step = planned.step
    if planned.schema == sink or not isinstance(step, s.SelectStep):
        return planned
    wanted = {column.name: column.type for column in sink.columns}
    by_position = _positional_targets(sink, items)
    fitted: dict[str, t.SqlType] = {}
    expressions = []
    for select in step.select_expressions:
        target = wanted.get(select.alias)
        widened = None
        if isinstance(target, t.Decimal):
            widened = _widened(select.expression, target, by_position.get(select.alias))
        if widened is not None and target is not None:
            fitted[select.alias] = target
            select = replace(select, expression=widened)
        expressions.append(select)
    if not fitted:
        return planned
    columns = tuple(replace(c, type=fitted.get(c.name, c.type)) for c in planned.schema.columns)
    widened_step = replace(step, select_expressions=tuple(expressions))  # type: ignore[call-arg]
    return replace(planned, step=widened_step, schema=LogicalSchema(columns))


def can_implicitly_cast(source: t.Decimal, target: t.Decimal) -> bool:
    """Whether every value of ``source`` fits ``target`` unchanged (ksqlDB's DecimalUtil rule)."""
    return source.scale <= target.scale and source.precision - source.scale <= target.precision - target.scale


def _positional_targets(sink: LogicalSchema, items: Sequence[ast.SelectItem]) -> dict[str, t.SqlType]:
    """The sink column type each aliased select item lines up with by position."""
    columns = sink.columns
    return {
        item.alias: columns[index].type
        for index, item in enumerate(items)
        if isinstance(item, ast.SingleColumn) and item.alias is not None and index < len(columns)
    }


def _widened(expression: e.Expression, target: t.Decimal, positional: t.SqlType | None) -> e.Expression | None:
    type_ = expression.result_type
    if type_ == target:
        return None
    if isinstance(expression, e.Literal) and type_.base in _NUMBER_LITERALS and expression.value is not None:
        value = decimal.Decimal(str(expression.value))
        if not value.is_finite() or not can_implicitly_cast(_type_of(value), target):
            return None
        if type_.base != "DECIMAL" and not (
            isinstance(positional, t.Decimal)
            and can_implicitly_cast(_type_of(value), positional)
            and can_implicitly_cast(positional, target)
        ):
            return None
        exact = value.quantize(decimal.Decimal(1).scaleb(-target.scale))
        return e.Literal(value=str(exact), sql_type=target)
    if isinstance(type_, t.Decimal) and can_implicitly_cast(type_, target):
        return e.Cast(operand=expression, sql_type=target)
    return None


def _type_of(value: decimal.Decimal) -> t.Decimal:
    """The DECIMAL type of a literal's value, as ksqlDB's ``DecimalUtil.fromValue`` gives it."""
    return decimal_literal_type(str(value))
