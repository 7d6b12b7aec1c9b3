"""Table functions (EXPLODE, CUBE_EXPLODE): their signatures, and planning them out of a SELECT.

ksqlDB plans a query with table functions as a flat-map step before the projection
(``StreamFlatMap``): each table function call becomes a synthetic column ``KSQL_SYNTH_n`` of
the flat map, and the projection reads that column where the call was. The rules and
messages are ksqlDB's (``QueryAnalyzer``'s ``TableFunctionVisitor``, the UDTFs in
``io.confluent.ksql.function.udtf``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.analysis.coercion import is_null_literal
from qtt.plan.functions.names import shown_name
from qtt.plan.functions.signature_matching import NULL_TYPE_MESSAGE
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.sql import ast
from qtt.sql.formatter import format_expr

SYNTH_PREFIX = "KSQL_SYNTH_"


@dataclass(frozen=True)
class TableFunction:
    """One table function: the type of each row it returns, and its overloads as ksqlDB lists them."""

    name: str
    row_type: Callable[[t.Array], t.SqlType]
    alternatives: tuple[str, ...]


#: name -> table function; both take one ARRAY.
TABLE_FUNCTIONS: dict[str, TableFunction] = {
    "EXPLODE": TableFunction(
        "EXPLODE", lambda array: array.element, ("explode(ARRAY<DECIMAL> input)", "explode(ARRAY<T> list)")
    ),
    "CUBE_EXPLODE": TableFunction("CUBE_EXPLODE", lambda array: array, ("cube_explode(ARRAY<T> columns)",)),
}


def is_table_function(node: ast.Expr) -> bool:
    return isinstance(node, ast.FunctionCall) and node.name in TABLE_FUNCTIONS


def _children(node: Any) -> list[ast.Node]:
    out: list[ast.Node] = []
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if isinstance(v, tuple):
                out.extend(x for x in v if isinstance(x, ast.Node))
            elif isinstance(v, ast.Node):
                out.append(v)
    return out


def contains_table_function(node: ast.Node) -> bool:
    """Whether a table function is called anywhere in ``node``."""
    if isinstance(node, ast.Expr) and is_table_function(node):
        return True
    return any(contains_table_function(child) for child in _children(node))


def table_function_calls(
    node: ast.Node, within: str | None = None, case: ast.Expr | None = None
) -> list[ast.FunctionCall]:
    """The table function calls in ``node``, outermost first, with ksqlDB's checks.

    Raises:
        StatementError: a table function nested in another, or inside a CASE.
    """
    found: list[ast.FunctionCall] = []
    if isinstance(node, ast.FunctionCall) and node.name in TABLE_FUNCTIONS:
        if within is not None:
            # ksqlDB prints the FunctionName objects, which quote themselves
            msg = f"Table functions cannot be nested: {t.quote(within)}({t.quote(node.name)}())"
            raise StatementError(msg, line=_line(node), column=_col(node))
        if case is not None:
            msg = f"Table functions cannot be used in CASE: {format_expr(case)}"
            raise StatementError(msg, line=_line(node), column=_col(node))
        found.append(node)
        within = node.name
    if isinstance(node, (ast.SearchedCase, ast.SimpleCase)):
        case = node
    for child in _children(node):
        found.extend(table_function_calls(child, within, case))
    return found


def _line(node: ast.Node) -> int | None:
    return node.pos.line if node.pos else None


def _col(node: ast.Node) -> int | None:
    return node.pos.column if node.pos else None


def replace_nodes(node: Any, replacements: dict[int, ast.Expr]) -> Any:
    """``node`` with each sub-node whose ``id`` is in ``replacements`` replaced."""
    if isinstance(node, ast.Node) and id(node) in replacements:
        return replacements[id(node)]
    if isinstance(node, tuple):
        return tuple(replace_nodes(v, replacements) for v in node)
    if isinstance(node, ast.Node):
        changes = {}
        for f in dataclasses.fields(node):
            old = getattr(node, f.name)
            new = replace_nodes(old, replacements)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node
    return node


def resolve_call(node: ast.FunctionCall, analyzer: Analyzer) -> e.Call:
    """The typed call of a table function.

    Raises:
        StatementError: arguments that fit no overload, in ksqlDB's words.
    """
    function = TABLE_FUNCTIONS[node.name]
    args = [analyzer(a) for a in node.args]
    if len(args) == 1 and is_null_literal(args[0]):
        raise StatementError(NULL_TYPE_MESSAGE, line=_line(node), column=_col(node))
    if len(args) != 1 or not isinstance(args[0].result_type, t.Array):
        shown = ", ".join(str(a.result_type) for a in args)
        options = "\n".join(function.alternatives)
        label = shown_name(node.name)
        msg = f"Function '{label}' does not accept parameters ({shown}).\nValid alternatives are:\n{options}"
        raise StatementError(msg, line=_line(node), column=_col(node))
    array = args[0].result_type
    assert isinstance(array, t.Array)
    return e.Call(name=node.name, args=tuple(args), sql_type=function.row_type(array))


@dataclass(frozen=True)
class FlatMap:
    """A query's table functions planned: the flat-map step and the SELECT that reads it."""

    step: s.StreamFlatMapV1
    items: list[ast.SelectItem]
    scope: Scope


def plan_flat_map(step: s.ExecutionStep, items: Sequence[ast.SelectItem], scope: Scope) -> FlatMap | None:
    """The flat-map step for the table functions in ``items``; None when there are none.

    ``items`` (already aliased) come back with each call replaced by a reference to its
    synthetic column, and ``scope`` grown by those columns.
    """
    analyzer = Analyzer(scope, "SELECT")
    calls: list[s.SelectExpression] = []
    rewritten: list[ast.SelectItem] = []
    columns = list(scope.columns)
    for item in items:
        if not isinstance(item, ast.SingleColumn):
            rewritten.append(item)
            continue
        replacements: dict[int, ast.Expr] = {}
        for call in table_function_calls(item.expr):
            name = f"{SYNTH_PREFIX}{len(calls)}"
            try:
                typed = resolve_call(call, analyzer)
            except SqlError as error:
                raise error.at(line=_line(call), column=_col(call)) from None
            calls.append(s.SelectExpression(alias=name, expression=typed))
            columns.append(ScopeColumn(name, typed.sql_type))
            replacements[id(call)] = ast.ColumnRef(name=name, pos=call.pos)
        rewritten.append(dataclasses.replace(item, expr=replace_nodes(item.expr, replacements)))
    if not calls:
        return None
    flat_map = s.StreamFlatMapV1(context="FlatMap", source=step, table_functions=tuple(calls))
    return FlatMap(step=flat_map, items=rewritten, scope=Scope(columns, scope.sources))


def check_table_functions_allowed(query: ast.Query, table: bool) -> None:
    """ksqlDB's rules for a query whose SELECT calls a table function.

    Raises:
        SqlError: over a table, or with GROUP BY, in ksqlDB's words.
    """
    if query.group_by is not None:
        msg = "Table functions cannot be used with aggregations."
        raise StatementError(msg)
    if table:
        msg = "Table source is not supported with table functions"
        raise StatementError(msg)  # QueryAnalyzer's, which the engine reports as the statement's
