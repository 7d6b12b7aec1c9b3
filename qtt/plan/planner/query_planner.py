"""Plan one persistent query: source, WHERE, PARTITION BY or GROUP BY, and the projection.

The rules are ksqlDB's (LogicalPlanner, PartitionByParamsFactory, FinalProjectNode); an
aggregating query hands its GROUP BY part to :mod:`qtt.plan.planner.aggregate_planner`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

from qtt.errors import SqlError, StatementError, UnknownColumnError, UnsupportedFeatureError
from qtt.plan.analysis import messages
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.analysis.coercion import is_null_literal, reject_untyped_null
from qtt.plan.analysis.column_refs import reject_unknown_columns
from qtt.plan.analysis.lambda_arguments import check_lambda_arguments
from qtt.plan.ddl.metastore import STREAM, TABLE, DataSource, unknown_source_hint
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, PSEUDO_COLUMNS, VALUE, WINDOW_BOUNDS, Column, LogicalSchema
from qtt.plan.planner.aggregate_planner import (
    AggregationContext,
    AggregationPlanner,
    reject_aggregates_without_group_by,
)
from qtt.plan.planner.aliases import ColumnAliasGenerator
from qtt.plan.planner.join_query import aliased, joined_rows, plan_join_query, plan_joined_rows
from qtt.plan.planner.new_planner import CONFIG_NEW_QUERY_PLANNER, plan_projection, reject_unsupported_clauses
from qtt.plan.planner.planned import (
    PlannedQuery,
    SelectItem,
    check_no_map_keys,
    check_reserved_aliases,
    reject_windowed_tables,
)
from qtt.plan.planner.struct_star import expanded_struct
from qtt.plan.planner.table_functions import (
    check_no_table_function,
    check_select_table_functions,
    check_table_functions_allowed,
    contains_table_function,
    plan_flat_map,
)
from qtt.plan.settings import SUPPRESS_ENABLED, enabled, pseudo_columns
from qtt.sql import ast
from qtt.sql.references import rewrite_column_refs


def plan_query(
    query: ast.Query,
    sources: Mapping[str, DataSource],
    config: Mapping[str, object],
    *,
    sink_name: str,
    sink_kind: str = STREAM,
) -> PlannedQuery:
    """Plan the query of a C*AS or INSERT INTO statement that writes ``sink_name``.

    Raises:
        SqlError: the query is invalid (subclasses name the reason).
        UnsupportedFeatureError: the query needs a feature qtt does not support yet.
    """
    # ksqlDB's sanitizer, before the query is analysed
    check_lambda_arguments(query, {name: [c.name for c in s.schema.columns] for name, s in sources.items()})
    new_planner = enabled(config, CONFIG_NEW_QUERY_PLANNER, False)
    if new_planner:
        reject_unsupported_clauses(query)
    if query.having is not None and query.group_by is None:
        msg = "HAVING requires GROUP BY."
        raise StatementError(msg)
    if query.emit == "FINAL" and not enabled(config, SUPPRESS_ENABLED, True):
        msg = "Suppression is currently disabled. You can enable it by setting ksql.suppress.enabled to true"
        raise StatementError(msg)
    if isinstance(query.from_, ast.Join):
        if query.partition_by is not None:
            return _plan_partitioned_join(query, sources, config, sink_name, sink_kind)
        return plan_join_query(query, sources, config, sink_name=sink_name, sink_kind=sink_kind)
    relation = query.from_
    assert isinstance(relation, ast.Table)
    source = sources.get(relation.name)
    if source is None:
        msg = messages.unknown_source(relation.name)
        raise SqlError(msg, hint=unknown_source_hint(relation.name, sources))
    for column in source.schema.columns:
        if column.name in PSEUDO_COLUMNS:  # a sink of PARTITION BY ROWTIME, say
            raise UnsupportedFeatureError(f"reading a source with a column named like a pseudo column ({column.name})")
    source_columns = {source.name: [c.name for c in source.schema.columns]}
    if any(contains_table_function(item) for item in query.select):
        # ksqlDB's Analyzer, then its push-query validator, then QueryAnalyzer's table source
        # rule: all before its planner asks for a GROUP BY
        check_select_table_functions(query, source_columns)
    planner = QueryPlanner(config, source, relation.alias, sink_name, new_planner=new_planner)
    # then the Analyzer's reserved aliases and unknown columns (a windowed aggregation's bounds are columns there)
    check_reserved_aliases(planner.aliased_items(query.select))
    windowed = query.window is not None
    reject_unknown_columns(query, planner.context.scope, skip=lambda _, ref: windowed and ref.name in WINDOW_BOUNDS)
    if source.kind == TABLE and any(contains_table_function(item) for item in query.select):
        reject_windowed_tables([source])
        check_table_functions_allowed(query, True, source_columns)
    if query.group_by is None:
        reject_aggregates_without_group_by(query, sink_kind)
    reject_windowed_tables([source])
    if query.group_by is None and query.window is not None:
        at = query.window.pos  # ksqlDB's LogicalPlanner locates it at the window expression
        msg = "WINDOW clause requires a GROUP BY clause."
        raise StatementError(msg, line=at.line if at else None, column=at.column if at else None)
    if query.emit == "FINAL" and query.window is None:  # ksqlDB's LogicalPlanner, after the above
        msg = "EMIT FINAL is only supported for windowed aggregations."
        raise StatementError(msg)
    return planner.plan(query)


def _plan_partitioned_join(
    query: ast.Query, sources: Mapping[str, DataSource], config: Mapping[str, object], sink_name: str, sink_kind: str
) -> PlannedQuery:
    """PARTITION BY over a join's rows: re-keyed as a stream's (``streamSelectKeyV1``), then
    projected, where ``*`` lists every column of the joined rows but the new key (each side's
    pseudo columns and key copy included, as ksqlDB's join schema holds them)."""
    joined, step = plan_joined_rows(query, sources, sink_kind, config)
    assert joined.key is not None
    leftmost = joined.sources[0][1]
    planner = QueryPlanner(config, joined_rows(joined), joined.shown, sink_name, scope=joined.scope())
    key = Column(joined.key[0], joined.key[1], KEY)
    if joined.kind == TABLE:  # a table is keyed for good: by its key nothing is re-keyed
        assert query.partition_by is not None
        partition, by_null = planner._partition_columns(query.partition_by, planner.context.scope)
        if _by_key(partition, by_null, _Parent(key=(key,), value=())):
            unpartitioned = replace(query, partition_by=None)
            return plan_join_query(unpartitioned, sources, config, sink_name=sink_name, sink_kind=sink_kind)
        scope = planner.context.scope

        def prefixed(ref: ast.ColumnRef) -> ast.Expr:  # ksqlDB's join rewrite: T.COL reads T_COL
            found = scope.matches(ref)
            return replace(ref, name=found[0].input_name or ref.name, source=None) if len(found) == 1 else ref

        shown = [messages.unqualified_sql(rewrite_column_refs(node, prefixed)) for node in query.partition_by]
        raise StatementError(messages.table_repartition([key.name], shown))
    if leftmost.formats.window is not None:
        raise StatementError(_WINDOWED_REPARTITION)
    if any(isinstance(item, ast.AllColumns) and item.source is not None for item in query.select):
        raise UnsupportedFeatureError("a qualified * with PARTITION BY over a join")
    values = [Column(c.prefixed, c.type, VALUE) for c in joined.columns]
    planned = planner.plan_partitioned_rows(query, step, ([key], values), aliased(query.select, joined))
    if query.emit == "FINAL" and (query.group_by is None or query.window is None):
        raise StatementError("EMIT FINAL is only supported for windowed aggregations.")
    return replace(planned, source=leftmost, source_names=tuple(source.name for _, source in joined.sources))


def _by_key(partition: Sequence[_PartitionColumn], by_null: bool, parent: _Parent) -> bool:
    """Whether PARTITION BY names the key columns of the rows below it, in order: then ksqlDB
    re-keys nothing (its ``Repartitioning.repartitionNeeded``), a table and a windowed stream
    included."""
    named = [c.expression.name if isinstance(c.expression, e.ColumnRef) else None for c in partition]
    return not by_null and bool(parent.key) and named == [column.name for column in parent.key]


_WINDOWED_REPARTITION = "Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385."


@dataclass(frozen=True)
class _Parent:
    """What the projection reads: ksqlDB's processing schema of the node below it.

    ``value`` lists the processing value columns in order: the value columns, the header
    columns, the pseudo columns, then copies of the key columns (and, after PARTITION BY, the new key columns
    computed from expressions). ``select *`` expands over it the way ksqlDB does.
    """

    key: tuple[Column, ...]
    value: tuple[Column, ...]

    def star(self) -> list[Column]:
        """ksqlDB's ``orderColumns``: key columns first, then values without pseudo columns."""
        by_name = {c.name: c for c in self.value}
        key_names = {c.name for c in self.key}
        keys = [by_name[k.name] for k in self.key if k.name in by_name]
        values, seen = [], set()
        for column in self.value:
            if column.name in PSEUDO_COLUMNS or column.name in key_names or column.name in seen:
                continue
            seen.add(column.name)
            values.append(column)
        return [Column(c.name, c.type, KEY if c.name in key_names else VALUE) for c in keys + values]


@dataclass(frozen=True)
class _PartitionColumn:
    node: ast.Expr
    expression: e.Expression
    name: str


class QueryPlanner:
    """Plans one stateless stream query: source, filter, PARTITION BY, projection.

    The rules are ksqlDB's (LogicalPlanner, PartitionByParamsFactory, FinalProjectNode):
    PARTITION BY names its key columns after the column it reads, a struct field, or a
    generated ``KSQL_COL_n``; the projection keeps the key columns in the order of the node
    below it and must select every one of them.
    """

    def __init__(
        self,
        config: Mapping[str, object],
        source: DataSource,
        alias: str | None,
        sink_name: str,
        *,
        new_planner: bool = False,
        scope: Scope | None = None,
    ) -> None:
        """``scope``: what the query's expressions read, when not the source's own columns (a
        join's rows are read through the join's scope)."""
        self.source = source
        self.alias = alias
        self.sink_name = sink_name
        self.new_planner = new_planner
        self.qualifiers = frozenset([alias or source.name])  # an aliased source is known by its alias only
        self.star_qualifiers = self.qualifiers | {source.name}  # x.* takes the source's name as well
        self.context = AggregationContext(
            source=source,
            sink_name=sink_name,
            qualifier=alias or source.name,
            config=dict(config),
            scope=scope or self._source_scope(config),
        )

    def _source_scope(self, config: Mapping[str, object]) -> Scope:
        columns = [ScopeColumn(c.name, c.type, self.qualifiers) for c in self.source.schema.columns]
        visible = pseudo_columns(config)
        columns += [ScopeColumn(name, type_, self.qualifiers) for name, type_ in visible.items()]
        if self.source.formats.window is not None:  # a windowed source's keys bring their window
            columns += [ScopeColumn(name, type_, self.qualifiers) for name, type_ in WINDOW_BOUNDS.items()]
        # ksqlDB's sanitizer (the engine's own settings) still qualifies a switched-off pseudo column
        qualified = {name: self.alias or self.source.name for name in PSEUDO_COLUMNS if name not in visible}
        return Scope(columns, self.qualifiers, qualified_unknown=qualified)

    def _source_parent(self) -> _Parent:
        schema = self.source.schema
        pseudo = [Column(name, type_, VALUE) for name, type_ in PSEUDO_COLUMNS.items()]
        # LogicalSchema.withPseudoAndKeyColsInValue: values, header columns, pseudo columns, keys.
        headers = [Column(c.name, c.type, VALUE) for c in schema.headers]
        value = list(schema.value) + headers + pseudo + [Column(c.name, c.type, VALUE) for c in schema.key]
        return _Parent(key=schema.key, value=tuple(value))

    def plan(self, query: ast.Query) -> PlannedQuery:
        """The query's steps up to (not including) its sink."""
        source = self.source
        table = source.kind == TABLE
        step: s.ExecutionStep = (s.TableSourceV1 if table else s.StreamSourceV1)(
            context="KsqlTopic/Source",
            topic=source.topic,
            source_name=source.name,
            source_schema=source.schema,
            formats=source.formats,
            timestamp_column=source.timestamp_column,
        )
        if self.new_planner:
            step, schema = plan_projection(step, source, self.qualifiers, self.aliased_items(query.select))
            return PlannedQuery(step=step, schema=schema, source=source)
        scope = self.context.scope
        with_table_functions = any(contains_table_function(item) for item in query.select)
        if with_table_functions:
            check_table_functions_allowed(query, table, {source.name: [c.name for c in source.schema.columns]})
        if query.where is not None:
            check_no_table_function(query.where, "WHERE")
            predicate = Analyzer(scope, "WHERE", windows_later=query.window is not None).boolean(query.where)
            filter_step: type[s.StreamFilterV1 | s.TableFilterV1 | s.TableFilterV3] = s.StreamFilterV1
            if table:  # under a GROUP BY, a delete of a row that never passed retracts nothing anyway
                filter_step = s.TableFilterV1 if query.group_by is not None else s.TableFilterV3
            step = filter_step(context="WhereFilter", source=step, filter_expression=predicate)

        named = self.aliased_items(query.select)
        if query.group_by is not None:
            refused = None
            if query.partition_by is not None:
                # ksqlDB re-keys the rows before it groups them: in one partition that changes
                # nothing the aggregation writes, so no step is planned, but the expressions
                # must resolve, and a re-key that ksqlDB refuses is refused after the
                # aggregation's own checks
                rekey, rekey_by_null = self._partition_columns(query.partition_by, scope)
                refused = self._refused_repartition(query.partition_by, rekey, rekey_by_null, self._source_parent())
            named = self._star_expanded(named)
            aggregation = AggregationPlanner(self.context)
            step, schema = aggregation.plan(query, step, named)
            if refused is not None:
                raise StatementError(refused)
            if aggregation.table_refusal is not None:
                raise aggregation.table_refusal
            return PlannedQuery(
                step=step,
                schema=schema,
                source=source,
                is_table=True,
                window=aggregation.window_info,
                ksql_aggregate=aggregation.ksql_aggregate,
            )
        parent = self._source_parent()
        partition: list[_PartitionColumn] | None = None
        by_null = False
        refused = None
        if query.partition_by is not None:
            partition, by_null = self._partition_columns(query.partition_by, scope, query.select)
            # ksqlDB re-keys neither a table nor a windowed stream by its own key, and refuses
            # any other key for them when it builds the query, after the projection's checks
            refused = self._refused_repartition(query.partition_by, partition, by_null, parent)
            keyed_for_good = table or source.formats.window is not None
            if not keyed_for_good or refused is not None:
                step, parent = self._repartition(step, parent, partition)

        flat_map = plan_flat_map(step, named, scope) if with_table_functions else None
        if flat_map is not None:
            step, named, scope = flat_map.step, flat_map.items, flat_map.scope
        select = self._resolve_select(named, scope, parent, partition or [])
        planned = self._project(step, parent, select, named, partition, by_null, scope)
        if refused is not None:
            raise StatementError(refused)
        if table:
            select_step = planned.step
            assert isinstance(select_step, s.SelectStep)
            planned.step = s.TableSelectV1(**{f.name: getattr(select_step, f.name) for f in fields(select_step)})
            planned.is_table = True
        planned.window = source.formats.window
        return planned

    def _refused_repartition(
        self, exprs: Sequence[ast.Expr], partition: Sequence[_PartitionColumn], by_null: bool, parent: _Parent
    ) -> str | None:
        """ksqlDB's refusal of a re-key of the source's rows, or None: a table or a windowed
        stream is keyed for good, so only its own key columns, in order, are accepted."""
        # Repartitioning.repartitionNeeded re-keys by any key of several columns: a windowed
        # stream keyed so is refused even by its own key (a table so keyed is kept as qtt's cases
        # record it; see docs/reference/keys.md)
        several = len(parent.key) > 1 and self.source.kind != TABLE
        if _by_key(partition, by_null, parent) and not several:
            return None
        if self.source.kind == TABLE:
            key = [column.name for column in parent.key]
            return messages.table_repartition(key, [messages.unqualified_sql(node) for node in exprs])
        return _WINDOWED_REPARTITION if self.source.formats.window is not None else None

    def plan_partitioned_rows(
        self,
        query: ast.Query,
        step: s.ExecutionStep,
        rows: tuple[Sequence[Column], Sequence[Column]],
        named: Sequence[ast.SelectItem],
    ) -> PlannedQuery:
        """PARTITION BY over rows that ``step`` computes, ``rows`` their key and value columns
        (a join's: its key, then each side's columns, key copies and pseudo columns included),
        the items already aliased; the planner's scope is the one those rows are read in."""
        assert query.partition_by is not None
        scope = self.context.scope
        parent = _Parent(key=tuple(rows[0]), value=tuple(rows[1]))
        partition, by_null = self._partition_columns(query.partition_by, scope, query.select)
        step, parent = self._repartition(step, parent, partition)
        flat_map = plan_flat_map(step, named, scope)  # ksqlDB flat-maps after the re-key, as for one source
        if flat_map is not None:
            step, named, scope = flat_map.step, flat_map.items, flat_map.scope
        select = self._resolve_select(named, scope, parent, partition)
        return self._project(step, parent, select, named, partition, by_null, scope)

    # ------------------------------------------------------------------ select items

    def aliased_items(self, items: Sequence[ast.SelectItem]) -> list[ast.SelectItem]:
        """Give every single-column item an alias, as ksqlDB's AstSanitizer does."""
        generator = ColumnAliasGenerator([self.source.schema.names()])
        out: list[ast.SelectItem] = []
        for item in items:
            if isinstance(item, ast.SingleColumn) and item.alias is None:
                node = item.expr
                alias = node.name if isinstance(node, ast.ColumnRef) else generator.unique_alias_for(node)
                item = replace(item, alias=alias)
            out.append(item)
        return out

    def _star_expanded(self, items: Sequence[ast.SelectItem]) -> list[ast.SelectItem]:
        """``*`` as the source's columns, each selected by name, as an aggregation reads it
        (ksqlDB's AstSanitizer expands it before the GROUP BY check)."""
        out: list[ast.SelectItem] = []
        for item in items:
            if not isinstance(item, ast.AllColumns):
                out.append(item)
                continue
            if item.source is not None and item.source not in self.star_qualifiers:
                raise StatementError(f"Invalid table reference: {item.source}")
            out += [
                ast.SingleColumn(expr=ast.ColumnRef(name=c.name, pos=item.pos), alias=c.name, pos=item.pos)
                for c in self._source_parent().star()
            ]
        return out

    def _resolve_select(
        self,
        items: Sequence[ast.SelectItem],
        scope: Scope,
        parent: _Parent,
        partition: Sequence[_PartitionColumn],
    ) -> list[SelectItem]:
        analyzer = Analyzer(scope, "SELECT")
        keys = {c.name: c for c in parent.key}

        def resolve(expr: e.Expression) -> e.Expression:
            # UserRepartitionNode.resolveSelect: a select of a PARTITION BY expression reads the
            # new key column instead.
            for column in partition:
                if column.expression == expr:
                    return e.ColumnRef(name=column.name, sql_type=keys[column.name].type)
            return expr

        out: list[SelectItem] = []
        for item in items:
            if isinstance(item, ast.AllColumns):
                if item.source is not None and item.source not in self.star_qualifiers:
                    msg = f"Invalid table reference: {item.source}"
                    raise StatementError(msg)
                for column in parent.star():
                    out.append(SelectItem(column.name, e.ColumnRef(name=column.name, sql_type=column.type)))
            elif isinstance(item, ast.StructAll):
                typed, struct = expanded_struct(item.base, analyzer.typed)
                base = resolve(typed)
                for f in struct.fields:
                    out.append(SelectItem(f.name, e.FieldRef(base=base, name=f.name, sql_type=f.type)))
            else:
                assert isinstance(item, ast.SingleColumn) and item.alias is not None
                expr = reject_untyped_null(analyzer(item.expr))
                out.append(SelectItem(item.alias, resolve(expr)))
        # SelectionUtil.buildProjectionSchema: a select of a key column is a key column, the
        # others value columns; LogicalSchema.Builder refuses a name twice in one namespace and
        # prints the column (a key and a value of one name are two namespaces: see _project)
        seen: dict[bool, set[str]] = {True: set(), False: set()}
        for selected in out:
            expr = selected.expression
            is_key = isinstance(expr, e.ColumnRef) and expr.name in keys
            if selected.alias in seen[is_key]:
                kind, suffix = ("key", " KEY") if is_key else ("value", "")
                msg = f"Duplicate {kind} columns found in schema: `{selected.alias}` {expr.result_type}{suffix}"
                raise StatementError(msg)
            seen[is_key].add(selected.alias)
        return out

    # ------------------------------------------------------------------ projection

    def _project(
        self,
        step: s.ExecutionStep,
        parent: _Parent,
        select: Sequence[SelectItem],
        items: Sequence[ast.SelectItem],
        partition: Sequence[_PartitionColumn] | None,
        by_null: bool,
        scope: Scope,
    ) -> PlannedQuery:
        key_names = [c.name for c in parent.key]
        aliases: dict[str, list[str]] = {}
        values: list[SelectItem] = []
        for item in select:
            expr = item.expression
            if isinstance(expr, e.ColumnRef) and expr.name in key_names:
                aliases.setdefault(expr.name, []).append(item.alias)
            else:
                values.append(item)
        for key, names in aliases.items():
            if len(names) > 1:
                raise StatementError(messages.key_selected_twice(key, names))
        # FinalProjectNode: the sink's schema leaves out a value column named like a selected key
        # column (LogicalSchema.withoutPseudoAndKeyColsInValue), the query's select step keeps it
        key_aliases = {names[0] for names in aliases.values()}
        shadowed = [v for v in values if v.alias in key_aliases]
        if len(shadowed) == len(values):
            msg = "The projection contains no value columns."
            raise StatementError(msg)
        self._validate_key_present(parent, items, select, partition, by_null, scope)

        key_columns = [Column(aliases[k.name][0], k.type, KEY) for k in parent.key if k.name in aliases]
        value_columns = [Column(v.alias, v.expression.result_type, VALUE) for v in values]
        # a key column named ROWTIME ... comes from PARTITION BY ROWTIME (PartitionByParamsFactory
        # names the key after the column it reads, pseudo columns included)
        for column in value_columns:
            if column.name in PSEUDO_COLUMNS:
                raise UnsupportedFeatureError(f"output columns named like pseudo columns ({column.name})")
        out_schema = LogicalSchema(tuple(key_columns + value_columns))
        check_no_map_keys(out_schema.key)
        if shadowed:
            raise StatementError(messages.schemas_do_not_match(out_schema, key_aliases))
        expressions = [
            s.SelectExpression(alias=aliases[k.name][0], expression=e.ColumnRef(name=k.name, sql_type=k.type))
            for k in parent.key
            if k.name in aliases
        ]
        expressions += [s.SelectExpression(alias=v.alias, expression=v.expression) for v in values]
        step = s.StreamSelectV1(
            context="Project",
            source=step,
            key_column_names=tuple(c.name for c in key_columns),
            select_expressions=tuple(expressions),
        )
        return PlannedQuery(step=step, schema=out_schema, source=self.source, partitioned_by_null=by_null)

    def _validate_key_present(
        self,
        parent: _Parent,
        items: Sequence[ast.SelectItem],
        select: Sequence[SelectItem],
        partition: Sequence[_PartitionColumn] | None,
        by_null: bool,
        scope: Scope,
    ) -> None:
        # ksqlDB's Projection.containsExpression: an unqualified * contains everything, a
        # qualified * every column reference, otherwise an item must match exactly.
        all_columns = any(isinstance(i, ast.AllColumns) and i.source is None for i in items)
        qualified_all = any(isinstance(i, ast.AllColumns) and i.source is not None for i in items)
        singles = [Analyzer(scope, "SELECT")(i.expr) for i in items if isinstance(i, ast.SingleColumn)]

        def contains(expr: e.Expression) -> bool:
            if all_columns or (qualified_all and isinstance(expr, e.ColumnRef)):
                return True
            return expr in singles

        if partition is not None:
            if by_null or all(contains(c.expression) for c in partition):
                return
            shown = [messages.qualified_sql(c.node, self.context.qualifier) for c in partition]
            noun = "partitioning expression"
        else:
            if not parent.key or all(contains(e.ColumnRef(name=k.name, sql_type=k.type)) for k in parent.key):
                return
            shown = [messages.column_name_sql(k.name) for k in parent.key]
            noun = "key column"
        raise StatementError(messages.key_missing_from_projection(self.sink_name, noun, shown))

    # ------------------------------------------------------------------ PARTITION BY

    def _partition_columns(
        self, exprs: Sequence[ast.Expr], scope: Scope, items: Sequence[ast.SelectItem] = ()
    ) -> tuple[list[_PartitionColumn], bool]:
        if items and any(contains_table_function(node) for node in exprs):
            self._table_function_partition(exprs, items)
        analyzer = Analyzer(scope, "PARTITION BY")
        typed: list[tuple[ast.Expr, e.Expression]] = []
        for node in exprs:
            try:
                expr = analyzer(node)
            except UnknownColumnError as error:
                msg = messages.partition_by_unresolved(error.shown)
                raise StatementError(msg, line=error.line, column=error.column, hint=error.hint) from None
            if any(expr == other for _, other in typed):  # ksqlDB's PartitionBy, as GroupBy
                msg = f"Duplicate PARTITION BY expression: {messages.qualified_sql(node, self.context.qualifier)}"
                raise StatementError(msg)
            typed.append((node, expr))
        nulls = [x for _, x in typed if is_null_literal(x)]
        if nulls:
            if len(typed) > 1:
                msg = "Cannot PARTITION BY multiple columns including NULL"
                raise StatementError(msg)
            return [], True
        # PartitionByParamsFactory names generated keys against the processing schema.
        generator = ColumnAliasGenerator([self.context.processing_names])
        columns = []
        for node, expr in typed:
            name = expr.name if isinstance(expr, e.ColumnRef) else generator.unique_alias_for(node)
            columns.append(_PartitionColumn(node=node, expression=expr, name=name))
        return columns, False

    def _table_function_partition(self, exprs: Sequence[ast.Expr], items: Sequence[ast.SelectItem]) -> None:
        """ksqlDB types a table function in PARTITION BY as it types any call, and finds first
        that the projection lacks it (qtt plans no re-key by one)."""
        selected = [i.expr for i in items if isinstance(i, ast.SingleColumn)]
        if not all(node in selected for node in exprs):
            shown = [messages.qualified_sql(node, self.context.qualifier) for node in exprs]
            raise StatementError(messages.key_missing_from_projection(self.sink_name, "partitioning expression", shown))
        raise UnsupportedFeatureError("PARTITION BY a table function")

    def _repartition(
        self, step: s.ExecutionStep, parent: _Parent, partition: Sequence[_PartitionColumn]
    ) -> tuple[s.ExecutionStep, _Parent]:
        keys = [Column(c.name, c.expression.result_type, KEY) for c in partition]
        appended = [
            Column(c.name, c.expression.result_type, VALUE)
            for c in partition
            if not isinstance(c.expression, e.ColumnRef)
        ]
        new_parent = _Parent(key=tuple(keys), value=parent.value + tuple(appended))
        check_no_map_keys(keys)
        step = s.StreamSelectKeyV1(
            context="PartitionBy",
            source=step,
            key_expressions=tuple(s.SelectExpression(alias=c.name, expression=c.expression) for c in partition),
        )
        return step, new_parent
