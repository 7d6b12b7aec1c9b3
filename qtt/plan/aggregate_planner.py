"""Planning GROUP BY queries: grouping, aggregate calls, HAVING and the final projection.

The rules are ksqlDB's (AggregateAnalyzer, AggregateNode): every aggregate call becomes a
column ``KSQL_AGG_VARIABLE_n`` of the aggregate step; a SELECT or HAVING expression that
equals a GROUP BY expression reads the group's key column instead; anything else it reads
must be an aggregate, or the query is rejected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan import expressions as e
from qtt.plan import steps as s
from qtt.plan.aggregate_signatures import NOT_LITERAL, TABLE_AGGREGATES, resolve_aggregate
from qtt.plan.analyzer import AGGREGATE_FUNCTIONS, Analyzer, Scope, implicit_cast, reject_untyped_null
from qtt.plan.schema import KEY, VALUE, Column, LogicalSchema
from qtt.serde.formats import unsupported_base
from qtt.sql import ast
from qtt.sql.formatter import format_expr

if TYPE_CHECKING:
    from qtt.plan.planner import PlannedQuery, QueryPlanner


def column_refs(expr: e.Expression) -> list[e.ColumnRef]:
    return [x for x in e.walk(expr) if isinstance(x, e.ColumnRef)]


class AggregationPlanner:
    """Plans the aggregation part of one query, after its source and WHERE steps."""

    def __init__(self, query_planner: QueryPlanner, scope: Scope) -> None:
        self.qp = query_planner
        self.scope = scope
        self.table = query_planner.source.kind == "TABLE"
        self.calls: list[s.AggregateCall] = []

    # ------------------------------------------------------------------ aggregate calls

    def _aggregate(self, node: ast.FunctionCall) -> e.Expression:
        if any(
            isinstance(x, ast.FunctionCall) and x.name in AGGREGATE_FUNCTIONS for arg in node.args for x in _nodes(arg)
        ):
            msg = f"Aggregate functions can not be nested: {format_expr(node)}"
            raise StatementError(msg)
        inner = Analyzer(self.scope, "SELECT")  # no hook: a nested aggregate is an error
        args = [inner(a) for a in node.args if not isinstance(a, ast.AllColumns)]
        literals = [a.value if isinstance(a, e.Literal) else NOT_LITERAL for a in args]
        resolved = resolve_aggregate(
            node.name,
            [a.result_type for a in args],
            literals,
            config={k: str(v) for k, v in self.qp.planner.config.items()},
        )
        n = len(resolved.arg_types)
        call = s.AggregateCall(
            alias=f"KSQL_AGG_VARIABLE_{len(self.calls)}",
            function=resolved.name,
            args=tuple(implicit_cast(a, type_) for a, type_ in zip(args[:n], resolved.arg_types, strict=True)),
            params=tuple(resolved.params),
            return_type=resolved.return_type,
            state_type=resolved.state_type,
        )
        for existing in self.calls:
            if dataclasses.replace(existing, alias=call.alias) == call:
                return e.ColumnRef(name=existing.alias, sql_type=existing.return_type)
        self.calls.append(call)
        return e.ColumnRef(name=call.alias, sql_type=call.return_type)

    # ------------------------------------------------------------------ the query

    def plan(self, query: ast.Query, step: s.ExecutionStep, items: Sequence[ast.SelectItem]) -> PlannedQuery:
        from qtt.plan.planner import ColumnAliasGenerator

        if not query.group_by:
            raise UnsupportedFeatureError("aggregations without GROUP BY")
        value_format = self.qp.source.formats.value_format.format
        if value_format == "KAFKA":
            # the group-by repartition and the aggregate's state use the source's value format
            msg = (
                f"Source(s) {self.qp.source.name} are using the 'KAFKA' value format. "
                "This format does not yet support GROUP BY."
            )
            raise StatementError(msg)
        if any(isinstance(i, (ast.AllColumns, ast.StructAll)) for i in items):
            raise UnsupportedFeatureError("SELECT * in an aggregating query")
        group_analyzer = Analyzer(self.scope, "GROUP BY")
        groups: list[e.Expression] = []
        for node in query.group_by:
            if any(isinstance(x, ast.FunctionCall) and x.name in AGGREGATE_FUNCTIONS for x in _nodes(node)):
                name = next(
                    x.name for x in _nodes(node) if isinstance(x, ast.FunctionCall) and x.name in AGGREGATE_FUNCTIONS
                )
                msg = f"GROUP BY does not support aggregate functions: {name} is an aggregate function."
                raise StatementError(msg)
            expr = group_analyzer.typed(node)
            if expr in groups:
                msg = f"Duplicate GROUP BY expression: {self.qp._qualified(node)}"
                raise StatementError(msg)
            groups.append(expr)
        generator = ColumnAliasGenerator([self.qp._source_parent_names()])
        key_names = []
        for node, expr in zip(query.group_by, groups, strict=True):
            key_names.append(expr.name if isinstance(expr, e.ColumnRef) else generator.unique_alias_for(node))
        key_refs = {g: e.ColumnRef(name=n, sql_type=g.result_type) for g, n in zip(groups, key_names, strict=True)}

        select_analyzer = Analyzer(self.scope, "SELECT", aggregates=self._aggregate)
        selected: list[tuple[str, e.Expression, ast.Expr]] = []
        for item in items:
            assert isinstance(item, ast.SingleColumn) and item.alias is not None
            expr = reject_untyped_null(select_analyzer(item.expr))
            selected.append((item.alias, e.substitute(expr, key_refs), item.expr))
        having = None
        if query.having is not None:
            having = e.substitute(
                Analyzer(self.scope, "HAVING", aggregates=self._aggregate).boolean(query.having), key_refs
            )
        if not self.calls:
            msg = "GROUP BY requires aggregate functions in either the SELECT or HAVING clause."
            raise StatementError(msg)
        if any(unsupported_base(c.state_type, value_format) for c in self.calls):
            msg = (
                "One of the functions used in the statement has an intermediate type that the value format "
                "can not handle. Please remove the function or change the format."
            )
            raise StatementError(msg)
        allowed = set(key_names) | {c.alias for c in self.calls}
        strays = [node for alias, expr, node in selected if any(ref.name not in allowed for ref in column_refs(expr))]
        if strays:
            shown = ", ".join(format_expr(n) for n in strays)
            msg = (
                f"Non-aggregate SELECT expression(s) not part of GROUP BY: {shown}\n"
                "Either add the column(s) to the GROUP BY or remove them from the SELECT."
            )
            raise StatementError(msg)
        if having is not None and any(ref.name not in allowed for ref in column_refs(having)):
            stray = next(ref.name for ref in column_refs(having) if ref.name not in allowed)
            msg = f"Non-aggregate HAVING expression not part of GROUP BY: {stray}"
            raise StatementError(msg)
        if self.table:
            refused = [c.function for c in self.calls if c.function not in TABLE_AGGREGATES]
            if refused:
                names = list(dict.fromkeys(refused))
                joined = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
                msg = (
                    f"The aggregation functions {joined} cannot be applied to a table source, only to a stream source."
                )
                raise StatementError(msg)

        group_selects = tuple(s.SelectExpression(alias=n, expression=g) for n, g in zip(key_names, groups, strict=True))
        if self.table:
            arguments = _argument_columns(self.calls)
            step = s.TableGroupByV1(
                context="Aggregate/GroupBy",
                source=step,
                group_by_expressions=group_selects,
                argument_expressions=tuple(arguments.values()),
            )
            calls = tuple(
                dataclasses.replace(c, args=tuple(arguments_ref(arguments, a) for a in c.args)) for c in self.calls
            )
            step = s.TableAggregateV2(context="Aggregate/Aggregate", source=step, aggregations=calls)
        else:
            step = s.StreamGroupByV1(context="Aggregate/GroupBy", source=step, group_by_expressions=group_selects)
            step = s.StreamAggregateV1(context="Aggregate/Aggregate", source=step, aggregations=tuple(self.calls))
        if having is not None:
            step = s.TableFilterV2(context="Aggregate/HavingFilter", source=step, filter_expression=having)
        return self._project(step, key_names, groups, selected, query)

    def _project(
        self,
        step: s.ExecutionStep,
        key_names: list[str],
        groups: list[e.Expression],
        selected: list[tuple[str, e.Expression, ast.Expr]],
        query: ast.Query,
    ) -> PlannedQuery:
        from qtt.plan.planner import PlannedQuery

        aliases: dict[str, list[str]] = {}
        values: list[tuple[str, e.Expression]] = []
        for alias, expr, _ in selected:
            if isinstance(expr, e.ColumnRef) and expr.name in key_names:
                aliases.setdefault(expr.name, []).append(alias)
            else:
                values.append((alias, expr))
        for names in aliases.values():
            if len(names) > 1:
                shown = " and ".join(t.quote(n) for n in names)
                msg = f"The projection contains a key column more than once: {shown}."
                raise StatementError(msg)
        missing = [n for n in key_names if n not in aliases]
        if missing:
            shown_nodes = [
                format_expr(node) for node, name in zip(query.group_by or (), key_names, strict=True) if name in missing
            ]
            noun = "grouping expression" if len(shown_nodes) == 1 else "grouping expressions"
            joined = (
                (", ".join(shown_nodes[:-1]) + " and " + shown_nodes[-1]) if len(shown_nodes) > 1 else shown_nodes[0]
            )
            msg = (
                f"Key missing from projection (ie, SELECT). \nThe query used to build "
                f"{t.quote(self.qp.sink_name)} must include the {noun} {joined} in its projection "
                f"(eg, SELECT {', '.join(shown_nodes)}...)."
            )
            raise StatementError(msg)
        if not values:
            msg = "The projection contains no value columns."
            raise StatementError(msg)
        seen: set[str] = set()
        for alias, expr, _ in selected:
            if alias in seen:
                msg = f"Duplicate value columns found in schema: `{alias}` {expr.result_type}"
                raise StatementError(msg)
            seen.add(alias)
        key_columns = [Column(aliases[n][0], g.result_type, KEY) for n, g in zip(key_names, groups, strict=True)]
        value_columns = [Column(alias, expr.result_type, VALUE) for alias, expr in values]
        schema = LogicalSchema(tuple(key_columns + value_columns))
        expressions = [
            s.SelectExpression(alias=aliases[n][0], expression=e.ColumnRef(name=n, sql_type=g.result_type))
            for n, g in zip(key_names, groups, strict=True)
        ]
        expressions += [s.SelectExpression(alias=alias, expression=expr) for alias, expr in values]
        step = s.TableSelectV1(
            context="Aggregate/Project",
            source=step,
            key_column_names=tuple(c.name for c in key_columns),
            select_expressions=tuple(expressions),
        )
        return PlannedQuery(step=step, schema=schema, source=self.qp.source, is_table=True)


def _argument_columns(calls: Sequence[s.AggregateCall]) -> dict[e.Expression, s.SelectExpression]:
    """Each distinct aggregate argument of a table aggregation, as a column of the group-by step."""
    out: dict[e.Expression, s.SelectExpression] = {}
    for call in calls:
        for arg in call.args:
            if arg not in out:
                out[arg] = s.SelectExpression(alias=f"KSQL_INTERNAL_COL_{len(out)}", expression=arg)
    return out


def arguments_ref(arguments: dict[e.Expression, s.SelectExpression], arg: e.Expression) -> e.Expression:
    column = arguments[arg]
    return e.ColumnRef(name=column.alias, sql_type=arg.result_type)


def _nodes(node: ast.Expr) -> list[ast.Node]:
    from qtt.sql.parser import iter_nodes

    return list(iter_nodes(node))
