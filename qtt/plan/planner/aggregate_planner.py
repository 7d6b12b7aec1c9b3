"""Planning GROUP BY queries: grouping, aggregate calls, HAVING and the final projection.

The rules are ksqlDB's (AggregateAnalyzer, AggregateNode): every aggregate call becomes a
column ``KSQL_AGG_VARIABLE_n`` of the aggregate step; a SELECT or HAVING expression that
equals a GROUP BY expression reads the group's key column instead; anything else it reads
must be an aggregate, or the query is rejected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, cast

from qtt import sqltypes as t
from qtt.errors import StatementError, UnknownColumnError, UnsupportedFeatureError
from qtt.plan.analysis import messages
from qtt.plan.analysis.aggregate_rules import check_aggregate_rules, check_projection_as_written, key_selected_twice
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.analysis.coercion import implicit_cast, reject_untyped_null
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.ddl.upgrades import KsqlAggregate
from qtt.plan.functions.aggregate_signatures import (
    NOT_LITERAL,
    TABLE_AGGREGATES,
    is_aggregate,
    resolve_aggregate,
    takes_no_arguments,
)
from qtt.plan.functions.ksql_test_functions import KSQL_TEST_FUNCTIONS
from qtt.plan.functions.scalar_signatures import FUNCTIONS
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, PSEUDO_COLUMNS, ROWTIME, VALUE, WINDOW_BOUNDS, Column, LogicalSchema
from qtt.plan.planner.aliases import ColumnAliasGenerator
from qtt.plan.planner.planned import check_no_map_keys
from qtt.plan.planner.table_functions import TABLE_FUNCTIONS, typed_outside_select
from qtt.plan.planner.window_planner import (
    aggregate_formats,
    reject_window_bounds_outside_select,
    window_expression,
    window_info,
)
from qtt.serde.formats import unsupported_base
from qtt.sql import ast
from qtt.sql.formatter import format_expr, format_identifier
from qtt.sql.parser import iter_nodes
from qtt.sql.references import rewrite_column_refs


@dataclass(frozen=True)
class AggregationContext:
    """What planning an aggregation needs to know about its query.

    Attributes:
        source: the stream or table the query reads.
        sink_name: the stream or table the query writes, for messages.
        qualifier: the name that qualifies bare columns in messages (the source's alias or name).
        config: the statement's properties as given (some aggregates read their limits there, a
            number as a number and a text as Java's ``parseInt``).
        scope: the columns the query's expressions may reference.
    """

    source: DataSource
    sink_name: str
    qualifier: str
    config: Mapping[str, object]
    scope: Scope
    #: whether SELECT may read a windowed aggregation's WINDOWSTART and WINDOWEND (not over a
    #: join: ksqlDB cannot resolve them there)
    window_bounds: bool = True

    @property
    def processing_names(self) -> list[str]:
        """The names of the columns the query reads, which generated names must not reuse."""
        return [c.name for c in self.source.schema.columns] + list(PSEUDO_COLUMNS)


def ksql_aggregate(
    query: ast.Query, items: Sequence[ast.SelectItem], column_arguments: Mapping[ast.FunctionCall, int]
) -> KsqlAggregate:
    """The aggregation as ksqlDB's StreamAggregate records it: :func:`required_columns`, and each
    aggregate call of the SELECT items and HAVING, in order, repeats included, as ksqlDB prints
    it: no argument reads ROWTIME; a column argument (``column_arguments``: how many a call
    takes) that is not a column is the pre-aggregate projection's ``KSQL_INTERNAL_COL_n``,
    numbered after the required columns; the other arguments are literals."""
    columns = required_columns(query, items)
    internal: dict[ast.Expr, str] = {}

    def argument(arg: ast.Expr) -> str:
        if isinstance(arg, ast.ColumnRef):
            return format_identifier(arg.name)
        return internal.setdefault(arg, f"KSQL_INTERNAL_COL_{len(columns) + len(internal)}")

    functions = []
    for node in iter_nodes([*_selected(items), *_having(query)]):
        if isinstance(node, ast.FunctionCall) and is_aggregate(node.name):
            given = column_arguments.get(node, len(node.args))
            shown = [argument(a) for a in node.args[:given]] + [format_expr(a) for a in node.args[given:]]
            functions.append(f"{node.name}({', '.join(shown or [ROWTIME])})")
    return KsqlAggregate(columns, tuple(functions))


def required_columns(query: ast.Query, items: Sequence[ast.SelectItem]) -> tuple[str, ...]:
    """The columns an aggregation reads, as ksqlDB's AggregateAnalyzer lists them (a
    StreamAggregate's ``nonAggregateColumns``): those of the SELECT items, then WHERE, GROUP BY
    and HAVING, each at its first reference; an aggregate call without arguments reads ROWTIME,
    and the window bounds are not read from the source."""
    where = [query.where] if query.where is not None else []
    clauses = [*_selected(items), *where, *(query.group_by or ()), *_having(query)]
    names: dict[str, None] = {}
    for clause in clauses:
        lambda_params = {p.upper() for n in iter_nodes(clause) if isinstance(n, ast.Lambda) for p in n.params}
        for node in iter_nodes(clause):
            if isinstance(node, ast.FunctionCall) and not node.args and is_aggregate(node.name):
                names.setdefault(ROWTIME)
            elif isinstance(node, ast.ColumnRef) and node.name not in WINDOW_BOUNDS:
                if node.source is None and node.name.upper() in lambda_params:
                    continue  # a lambda's parameter, not a column
                names.setdefault(node.name)
    return tuple(names)


def _selected(items: Sequence[ast.SelectItem]) -> list[ast.Expr]:
    return [item.expr for item in items if isinstance(item, ast.SingleColumn)]


def _having(query: ast.Query) -> list[ast.Expr]:
    return [query.having] if query.having is not None else []


class AggregationPlanner:
    """Plans the aggregation part of one query, after its source and WHERE steps."""

    def __init__(self, context: AggregationContext) -> None:
        self.context = context
        self.scope = context.scope
        self.table = context.source.kind == TABLE
        self.calls: list[s.AggregateCall] = []
        #: set by :meth:`plan` for a windowed aggregation: what its keys' windows are
        self.window_info: s.WindowInfo | None = None
        #: set by :meth:`plan`: the aggregation as ksqlDB records it (:func:`ksql_aggregate`)
        self.ksql_aggregate = KsqlAggregate()
        #: each aggregate call's number of column arguments (the others are literal parameters)
        self._column_arguments: dict[ast.FunctionCall, int] = {}
        #: a HAVING that is not a condition, raised once the projection is checked
        self._having_error: StatementError | None = None
        #: set by :meth:`plan`: why ksqlDB cannot aggregate this table (SchemaKGroupedTable), which
        #: it finds when it builds the query, after every check of the plan: the caller raises it
        self.table_refusal: StatementError | None = None

    # ------------------------------------------------------------------ aggregate calls

    def _aggregate(self, node: ast.FunctionCall) -> e.Expression:
        if any(_aggregate_calls(arg) for arg in node.args):
            nested = next(call for arg in node.args for call in _aggregate_calls(arg))
            # ksqlDB names the two functions only: SUM(COUNT())
            raise StatementError(f"Aggregate functions can not be nested: {node.name}({nested.name}())")
        inner = Analyzer(self.scope, "SELECT")  # no hook: a nested aggregate is an error
        call = aggregate_call(node, inner, f"KSQL_AGG_VARIABLE_{len(self.calls)}", self.context.config)
        self._column_arguments[node] = len(call.args)
        for existing in self.calls:
            if dataclasses.replace(existing, alias=call.alias) == call:
                return e.ColumnRef(name=existing.alias, sql_type=existing.return_type)
        self.calls.append(call)
        return e.ColumnRef(name=call.alias, sql_type=call.return_type)

    def _having(
        self, query: ast.Query, items: Sequence[ast.SelectItem], select_scope: Scope
    ) -> tuple[e.Expression | None, StatementError | None]:
        """HAVING typed (None if it does not type), and the error of a HAVING that does not type
        or is not a condition: ksqlDB's FilterTypeValidator finds it after the AggregateAnalyzer
        has checked the query and its planner has built the projection."""
        assert query.having is not None
        try:
            return Analyzer(self.scope, "HAVING", aggregates=self._aggregate).boolean(query.having), None
        except StatementError as error:
            self._rules_first(error, query, items, select_scope)
            if not error.message.startswith(("Type error in HAVING expression", "Error in HAVING expression")):
                raise
            try:
                return Analyzer(self.scope, "HAVING", aggregates=self._aggregate)(query.having), error
            except StatementError:
                return None, error

    def _select_errors_first(self, query: ast.Query, items: Sequence[ast.SelectItem], select_scope: Scope) -> None:
        """For a GROUP BY expression that does not type, raise what ksqlDB finds before it: the
        first SELECT item that does not type (unless its error is its code generator's, ``Invalid
        Select: ...``, which ksqlDB meets only after the grouping's), then the projection's own
        problems."""
        analyzer = Analyzer(select_scope, "SELECT", aggregates=self._aggregate)
        singles = [cast(ast.SingleColumn, item) for item in items]
        types: list[t.SqlType | None] = []
        for item in singles:
            try:
                types.append(reject_untyped_null(analyzer(item.expr)).result_type)
            except StatementError as error:
                if not error.message.startswith(_CODEGEN):
                    raise
                types.append(None)
        check_projection_as_written(query, singles, types, select_scope)

    def _rules_first(
        self, error: StatementError, query: ast.Query, items: Sequence[ast.SelectItem], select_scope: Scope
    ) -> None:
        """Before ``error``, an expression of the query that does not type: the error of an
        aggregation rule the query breaks, which ksqlDB's AggregateAnalyzer finds before the
        expressions are typed. ``error`` itself if it is the error of an earlier stage."""
        if isinstance(error, UnknownColumnError | UnsupportedFeatureError) or error.message.startswith(_EARLIER):
            raise error
        try:
            self._check_rules(query, items, select_scope)
        except StatementError as rule:
            if not error.message.endswith(rule.message):
                raise
            error.message = rule.message  # the same error, without a clause's prefix
            raise error from None

    def _check_rules(self, query: ast.Query, items: Sequence[ast.SelectItem], select_scope: Scope) -> None:
        check_aggregate_rules(
            query,
            [cast(ast.SingleColumn, item) for item in items],
            select_scope,
            windowed=query.window is not None,
            known=_known_function,
            shown=lambda node: self._shown(node, select_scope),
        )

    def _shown(self, node: ast.Expr, scope: Scope) -> str:
        """``node`` as ksqlDB prints it once its planner has rewritten the column references:
        bare over one source, a join's ``T_A`` over a join."""

        def rewritten(ref: ast.ColumnRef) -> ast.Expr:
            matches = scope.matches(ref)
            if len(matches) != 1:  # a lambda's variable
                return ref
            return ast.ColumnRef(name=matches[0].input_name or matches[0].name, source=None)

        return format_expr(rewrite_column_refs(node, rewritten))

    # ------------------------------------------------------------------ the query

    def plan(
        self, query: ast.Query, step: s.ExecutionStep, items: Sequence[ast.SelectItem]
    ) -> tuple[s.ExecutionStep, LogicalSchema]:
        """The aggregation's steps on top of ``step``, and the schema of the table it produces."""
        if not query.group_by:
            raise UnsupportedFeatureError("aggregations without GROUP BY")
        value_format = self.context.source.formats.value_format.format
        if value_format == "KAFKA":
            # the group-by repartition and the aggregate's state use the source's value format
            raise StatementError(messages.kafka_value_format([self.context.source.name], "GROUP BY"))
        if any(isinstance(i, ast.StructAll) for i in items):
            raise UnsupportedFeatureError("SELECT struct->* in an aggregating query")
        final = query.emit == "FINAL"
        window = window_expression(query.window, emit_final=final) if query.window is not None else None
        select_scope = self.scope
        if window is not None and self.context.window_bounds:
            reject_window_bounds_outside_select(query)
            # a windowed source's bounds are in its scope already: one column, as in ksqlDB's schema
            known = {c.name for c in self.scope.columns}
            bounds = [ScopeColumn(n, type_, self.scope.sources) for n, type_ in WINDOW_BOUNDS.items() if n not in known]
            select_scope = Scope(self.scope.columns + bounds, self.scope.sources)
        groups: list[e.Expression] = []
        for node in query.group_by:
            nested = _aggregate_calls(node)
            try:
                if nested:
                    msg = f"GROUP BY does not support aggregate functions: {nested[0].name} is an aggregate function."
                    raise StatementError(msg)
                expr = typed_outside_select(node, self.scope, "GROUP BY")
            except StatementError as error:
                self._rules_first(error, query, items, select_scope)
                if not nested:  # ksqlDB types the SELECT items before the GROUP BY expressions
                    self._select_errors_first(query, items, select_scope)
                raise
            if expr in groups:
                msg = f"Duplicate GROUP BY expression: {messages.qualified_sql(node, self.context.qualifier)}"
                raise StatementError(msg)
            groups.append(expr)
        generator = ColumnAliasGenerator([self.context.processing_names])
        key_names = []
        for node, expr in zip(query.group_by, groups, strict=True):
            key_names.append(expr.name if isinstance(expr, e.ColumnRef) else generator.unique_alias_for(node))
        key_refs = {g: e.ColumnRef(name=n, sql_type=g.result_type) for g, n in zip(groups, key_names, strict=True)}

        select_analyzer = Analyzer(select_scope, "SELECT", aggregates=self._aggregate)
        selected: list[tuple[str, e.Expression, ast.Expr]] = []
        for item in items:
            assert isinstance(item, ast.SingleColumn) and item.alias is not None
            try:
                expr = reject_untyped_null(select_analyzer(item.expr))
            except StatementError as error:
                self._rules_first(error, query, items, select_scope)
                raise
            selected.append((item.alias, e.substitute(expr, key_refs), item.expr))
        having = None
        having_error: StatementError | None = None
        if query.having is not None:
            typed_having, having_error = self._having(query, items, select_scope)
            having = e.substitute(typed_having, key_refs) if typed_having is not None else None
        self.ksql_aggregate = ksql_aggregate(query, items, self._column_arguments)
        if any(unsupported_base(c.state_type, value_format) for c in self.calls):
            msg = (
                "One of the functions used in the statement has an intermediate type that the value format "
                "can not handle. Please remove the function or change the format."
            )
            raise StatementError(msg)
        # every expression typed: ksqlDB's AggregateAnalyzer rules, over the query as written
        # (with no aggregate call, no function above could refuse its intermediate type first)
        self._check_rules(query, items, select_scope)
        self._having_error = having_error  # raised by _project, in ksqlDB's order
        if self.table:
            refused = [c.function for c in self.calls if c.function not in TABLE_AGGREGATES]
            if query.window is not None:
                self.table_refusal = StatementError("Windowing not supported for table aggregations.")
            elif refused:
                names = list(dict.fromkeys(refused))
                msg = (
                    f"The aggregation function{'s' if len(names) > 1 else ''} {messages.and_join(names)} "
                    "cannot be applied to a table source, only to a stream source."
                )
                self.table_refusal = StatementError(msg)

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
            if window is not None:
                step = s.StreamWindowedAggregateV1(
                    context="Aggregate/Aggregate",
                    source=step,
                    aggregations=tuple(self.calls),
                    window=window,
                    internal_formats=aggregate_formats(
                        self.context.source.formats, [g.result_type for g in groups], self.context.config
                    ),
                )
                self.window_info = window_info(window)
            else:
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
    ) -> tuple[s.ExecutionStep, LogicalSchema]:
        aliases: dict[str, list[str]] = {}
        values: list[tuple[str, e.Expression]] = []
        for alias, expr, _ in selected:
            if isinstance(expr, e.ColumnRef) and expr.name in key_names:
                aliases.setdefault(expr.name, []).append(alias)
            else:
                values.append((alias, expr))
        # LogicalPlanner.buildAggregateSchema's order: the projection's own duplicates, a key
        # selected twice, no value left, two keys of one name (a grouping expression it does not
        # select is named as a column, or else KSQL_COL_n afresh each time); then HAVING's type,
        # then AggregateNode's check that every key is selected
        seen: set[str] = set()
        for alias, expr, _ in selected:
            if alias in seen:
                msg = f"Duplicate value columns found in schema: `{alias}` {expr.result_type}"
                raise StatementError(msg)
            seen.add(alias)
        for names in aliases.values():
            if len(names) > 1:
                raise StatementError(key_selected_twice(names))
        if not values:
            msg = "The projection contains no value columns."
            raise StatementError(msg)
        fresh = ColumnAliasGenerator([self.context.processing_names]).next_ksql_col()
        named: set[str] = set()
        for name, group in zip(key_names, groups, strict=True):
            shown_name = (
                aliases[name][0] if name in aliases else group.name if isinstance(group, e.ColumnRef) else fresh
            )
            if shown_name in named:
                msg = f"Duplicate key columns found in schema: `{shown_name}` {group.result_type} KEY"
                raise StatementError(msg)
            named.add(shown_name)
        if self._having_error is not None:
            raise self._having_error
        missing = [n for n in key_names if n not in aliases]
        if missing:
            shown_nodes = [
                self._shown(node, self.scope)
                for node, name in zip(query.group_by or (), key_names, strict=True)
                if name in missing
            ]
            msg = messages.key_missing_from_projection(
                self.context.sink_name, "grouping expression", shown_nodes, plural_key=False
            )
            raise StatementError(msg)
        key_columns = [Column(aliases[n][0], g.result_type, KEY) for n, g in zip(key_names, groups, strict=True)]
        check_no_map_keys(key_columns)
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
        return step, schema


_LITERAL_NODES = (
    ast.NullLiteral,
    ast.BooleanLiteral,
    ast.IntegerLiteral,
    ast.DecimalLiteral,
    ast.DoubleLiteral,
    ast.StringLiteral,
)


def aggregate_call(
    node: ast.FunctionCall, analyzer: Analyzer, alias: str, config: Mapping[str, Any] | None
) -> s.AggregateCall:
    """The aggregate ``node`` resolved over the arguments ``analyzer`` types, as the call ``alias``.

    Raises:
        StatementError: arguments no overload takes, with ksqlDB's messages.
        UnsupportedFeatureError: an aggregate or overload qtt does not run.
    """
    arg_nodes = [a for a in node.args if not isinstance(a, ast.AllColumns)]
    if not arg_nodes and not takes_no_arguments(node.name):
        # ksqlDB's AggregateAnalyzer: a call without arguments (AVG(*), MAX()) reads the FROM
        # source's ROWTIME, the first of a join's columns that bear the name
        rowtimes = analyzer.scope.matches(ast.ColumnRef(name=ROWTIME))
        source = min(rowtimes[0].qualifiers) if len(rowtimes) > 1 and rowtimes[0].qualifiers else None
        arg_nodes = [ast.ColumnRef(name=ROWTIME, source=source)]
    args = [analyzer(a) for a in arg_nodes]
    # ksqlDB's UdafUtil takes what its parser made a Literal: a cast that changes nothing is none
    literals = [
        a.value if isinstance(a, e.Literal) and isinstance(n, _LITERAL_NODES) else NOT_LITERAL
        for a, n in zip(args, arg_nodes, strict=True)
    ]
    resolved = resolve_aggregate(
        node.name,
        [a.result_type for a in args],
        literals,
        config=config,
        arg_sql=[format_expr(a) for a in arg_nodes],
        written=node.written,
    )
    n = len(resolved.arg_types)
    return s.AggregateCall(
        alias=alias,
        function=resolved.name,
        args=tuple(implicit_cast(a, type_) for a, type_ in zip(args[:n], resolved.arg_types, strict=True)),
        params=tuple(resolved.params),
        return_type=resolved.return_type,
        state_type=resolved.state_type,
    )


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


#: the errors of stages before ksqlDB's planner (its parser, its statement sanitizer)
_EARLIER = ("Exception while preparing statement", "Failed to prepare statement")
#: the errors of ksqlDB's code generator on a SELECT item: it compiles it after the grouping
_CODEGEN = "Invalid Select: "


def _known_function(name: str) -> bool:
    """Whether ksqlDB registers a function of that name (its ``FunctionRegistry.isPresent``)."""
    return name in FUNCTIONS or is_aggregate(name) or name in TABLE_FUNCTIONS or name in KSQL_TEST_FUNCTIONS


def _aggregate_calls(node: object) -> list[ast.FunctionCall]:
    """The aggregate calls in ``node`` and below it."""
    return [x for x in iter_nodes(node) if isinstance(x, ast.FunctionCall) and is_aggregate(x.name)]


def reject_aggregates_without_group_by(query: ast.Query, sink_kind: str) -> None:
    """An aggregate function without GROUP BY: ksqlDB's message depends on the statement."""
    calls = _aggregate_calls(query.select)
    if not calls:
        return
    if sink_kind != TABLE:
        msg = f"Use of aggregate function {calls[0].name} requires a GROUP BY clause."
        raise StatementError(msg)
    # ksqlDB names expressions as its planner has rewritten them: columns without their source
    outside = [
        messages.unqualified_sql(item.expr)
        for item in query.select
        if isinstance(item, ast.SingleColumn) and _has_column_outside_aggregates(item.expr)
    ]
    if outside:
        raise StatementError(messages.non_aggregate_select(outside))
    # ksqlDB's AggregateAnalyzer gives a call without arguments ROWTIME (COUNT(*) is COUNT(ROWTIME)),
    # and this message names the calls so
    shown = [f"{c.name}({ROWTIME})" if not c.args else messages.unqualified_sql(c) for c in calls]
    raise StatementError(messages.table_aggregates_without_group_by(shown))


def _has_column_outside_aggregates(node: object) -> bool:
    if isinstance(node, ast.FunctionCall) and is_aggregate(node.name):
        return False
    if isinstance(node, ast.ColumnRef):
        return True
    if is_dataclass(node) and not isinstance(node, type):
        return any(_has_column_outside_aggregates(getattr(node, f.name)) for f in fields(node) if f.name != "pos")
    if isinstance(node, tuple | list):
        return any(_has_column_outside_aggregates(item) for item in node)
    return False
