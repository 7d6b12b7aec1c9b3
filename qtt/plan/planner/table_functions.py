"""Table functions (EXPLODE, CUBE_EXPLODE): their signatures, and planning them out of a SELECT.

ksqlDB plans a query with table functions as a flat-map step before the projection
(``StreamFlatMap``): each table function call becomes a synthetic column ``KSQL_SYNTH_n`` of
the flat map, and the projection reads that column where the call was. The rules and
messages are ksqlDB's (``Analyzer``'s ``TableFunctionVisitor``, ``QueryAnalyzer``, the UDTFs in
``io.confluent.ksql.function.udtf``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.analysis.coercion import is_null_literal
from qtt.plan.analysis.messages import codegen_error
from qtt.plan.functions.aggregate_signatures import is_aggregate
from qtt.plan.functions.names import shown_name
from qtt.plan.functions.signature_matching import NULL_TYPE_MESSAGE, shown_arguments
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.sql import ast, iter_nodes
from qtt.sql.formatter import format_expr
from qtt.sql.source_refs import tables

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


def table_function_calls(node: ast.Node) -> list[ast.FunctionCall]:
    """The table function calls in ``node``, in the order written; none is nested in another
    (:func:`check_select_table_functions` has refused that)."""
    return [n for n in iter_nodes(node) if isinstance(n, ast.FunctionCall) and n.name in TABLE_FUNCTIONS]


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
        # ExpressionTypeManager gives a call without arguments DEFAULT_FUNCTION_ARG_SCHEMA
        shown = shown_arguments([a.result_type for a in args]) if args else str(t.BIGINT)
        options = "\n".join(function.alternatives)
        label = shown_name(node.name)
        msg = f"Function '{label}' does not accept parameters ({shown}).\nValid alternatives are:\n{options}"
        raise StatementError(msg, line=_line(node), column=_col(node))
    array = args[0].result_type
    assert isinstance(array, t.Array)
    return e.Call(name=node.name, args=tuple(args), sql_type=function.row_type(array))


def typed_outside_select(node: ast.Expr, scope: Scope, clause: str) -> e.Expression:
    """``node`` typed in ``clause`` with each table function call in it typed as ksqlDB's
    ``ExpressionTypeManager`` types one (its row type), as a column of its own.

    ksqlDB types a grouping expression that calls a table function, and refuses the query only
    later: no SELECT can select it (a table function there is an aggregation's), so it is the
    key missing from the projection.
    """
    analyzer = Analyzer(scope, clause)
    calls = table_function_calls(node)
    if not calls:
        return analyzer.typed(node)
    columns = list(scope.columns)
    replacements: dict[int, ast.Expr] = {}
    for call in calls:
        typed = resolve_call(call, analyzer)
        name = f"{SYNTH_PREFIX}{clause.replace(' ', '_')}_{len(replacements)}"
        columns.append(ScopeColumn(name, typed.sql_type))
        replacements[id(call)] = ast.ColumnRef(name=name, pos=call.pos)
    return Analyzer(Scope(columns, scope.sources), clause).typed(replace_nodes(node, replacements))


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


def check_table_functions_allowed(query: ast.Query, table: bool, source_columns: Mapping[str, Collection[str]]) -> None:
    """ksqlDB's rules for a query whose SELECT calls a table function: its analyzer's
    (:func:`check_select_table_functions`), then its ``QueryAnalyzer``'s table source rule.

    Raises:
        SqlError: over a table, with aggregations, nested or in a CASE, in ksqlDB's words.
    """
    check_select_table_functions(query, source_columns)
    if table:
        msg = "Table source is not supported with table functions"
        raise StatementError(msg)  # QueryAnalyzer's, which the engine reports as the statement's


def check_no_table_function(expr: ast.Expr, clause: str) -> None:
    """ksqlDB types a table function outside the SELECT as any call (``ExpressionTypeManager``),
    but only a flat map runs one: the clause's code generator (``CodeGenRunner``; for WHERE,
    ``SqlPredicate``'s) looks its name up among the scalar functions, and fails.

    Raises:
        StatementError: ``Invalid Predicate: Can't find any functions with the name 'EXPLODE'.``
    """
    for node in iter_nodes(expr):
        if isinstance(node, ast.FunctionCall) and node.name in TABLE_FUNCTIONS:
            reason = f"Can't find any functions with the name '{node.identifier}'"
            raise StatementError(codegen_error(clause, reason), line=_line(node), column=_col(node))


def check_select_table_functions(query: ast.Query, source_columns: Mapping[str, Collection[str]]) -> None:
    """ksqlDB's ``Analyzer`` (its ``TableFunctionVisitor``), which visits the SELECT items in
    order before anything else reads them: before the table source rule, the WHERE clause and
    unknown columns. ``source_columns`` maps each source's name to its column names.

    An aggregate without GROUP BY gives the query a dummy grouping as the analyzer meets it
    (``addDummyGroupbyForUdafs``, before the item's table functions), so a table function in
    that item or a later one is an aggregation's; a CASE met in an item stays in force for the
    rest of that item, so ``CASE ... END + EXPLODE(a)`` is refused and ``EXPLODE(a) + CASE ...
    END`` is not.

    Raises:
        StatementError: a table function nested in another, with aggregations or in a CASE.
    """
    grouped = query.group_by is not None
    qualify = _qualifier(query.from_, source_columns)
    for item in query.select:
        if not isinstance(item, ast.SingleColumn):
            continue
        grouped = grouped or any(
            isinstance(node, ast.FunctionCall) and is_aggregate(node.name) for node in iter_nodes(item.expr)
        )
        _TableFunctionVisitor(grouped, qualify).visit(item.expr)


class _TableFunctionVisitor:
    """One SELECT item's walk, children in ksqlDB's traversal order (as written)."""

    def __init__(self, grouped: bool, qualify: Callable[[ast.ColumnRef], ast.Expr]) -> None:
        self.grouped = grouped
        self.qualify = qualify
        self.within: str | None = None
        #: the last CASE met in the item; ksqlDB's visitor never clears it
        self.case: ast.Expr | None = None

    def visit(self, node: ast.Node) -> None:
        if isinstance(node, (ast.SearchedCase, ast.SimpleCase)):
            self.case = node
        called = isinstance(node, ast.Expr) and is_table_function(node)
        if called:
            assert isinstance(node, ast.FunctionCall)
            if self.within is not None:
                # ksqlDB prints the FunctionName objects, which quote themselves
                msg = f"Table functions cannot be nested: {t.quote(self.within)}({t.quote(node.name)}())"
                raise StatementError(msg, line=_line(node), column=_col(node))
            self.within = node.name
            if self.grouped:
                msg = "Table functions cannot be used with aggregations."
                raise StatementError(msg, line=_line(node), column=_col(node))
            if self.case is not None:
                # the analyzer reads the sanitized query, whose columns name their source
                refs = [ref for ref in iter_nodes(self.case) if isinstance(ref, ast.ColumnRef)]
                shown = format_expr(replace_nodes(self.case, {id(ref): self.qualify(ref) for ref in refs}))
                msg = f"Table functions cannot be used in CASE: {shown}"
                raise StatementError(msg, line=_line(node), column=_col(node))
        for child in _children(node):
            self.visit(child)
        if called:
            self.within = None


def _qualifier(
    relation: ast.Relation, source_columns: Mapping[str, Collection[str]]
) -> Callable[[ast.ColumnRef], ast.Expr]:
    """A column reference as ksqlDB's ``AstSanitizer`` leaves it: qualified by the alias of the
    one source that has the column (a lambda's parameter, which no source has, stays bare)."""
    holders: dict[str, list[str]] = {}
    for table in tables(relation):
        for name in source_columns.get(table.name, ()):
            holders.setdefault(name, []).append(table.alias or table.name)

    def qualify(ref: ast.ColumnRef) -> ast.Expr:
        found = holders.get(ref.name, [])
        if ref.source is not None or len(found) != 1:
            return ref
        return dataclasses.replace(ref, source=found[0])

    return qualify
