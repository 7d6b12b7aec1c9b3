"""Planning a query that reads a join: the join (:mod:`qtt.plan.planner.join_planner`), WHERE, and the
projection over the joined rows.

ksqlDB's rules for the projection of a join: a column selected as ``T.ID`` is named ``T_ID``
when another source has a column ``ID`` (pseudo columns included), else ``ID``; ``*`` lists
the key, then each side's key and value columns (``T.*`` one side's); and the projection
must hold the join's key, as the key column itself or as any join expression equal to it
(``T.ID`` or ``TT.ID`` of ``ON T.ID = TT.ID``), which then names the result's key column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from qtt import sqltypes as t
from qtt.errors import StatementError, UnknownColumnError, UnsupportedFeatureError
from qtt.plan.analysis import messages
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.analysis.coercion import reject_untyped_null
from qtt.plan.analysis.column_refs import clause_exprs, reject_unknown_columns, resolve_in_clause
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, PSEUDO_COLUMNS, VALUE, WINDOW_BOUNDS, Column, LogicalSchema
from qtt.plan.planner.aggregate_planner import (
    AggregationContext,
    AggregationPlanner,
    reject_aggregates_without_group_by,
)
from qtt.plan.planner.aliases import ColumnAliasGenerator
from qtt.plan.planner.join_planner import Joined, JoinPlanner, or_join
from qtt.plan.planner.planned import PlannedQuery, SelectItem, check_no_map_keys, check_reserved_aliases
from qtt.plan.planner.struct_star import expanded_struct
from qtt.plan.planner.table_functions import (
    check_no_table_function,
    check_table_functions_allowed,
    contains_table_function,
    plan_flat_map,
)
from qtt.plan.settings import pseudo_columns
from qtt.sql import ast
from qtt.sql.parser import iter_nodes
from qtt.sql.references import column_refs
from qtt.sql.source_refs import tables


def plan_join_query(
    query: ast.Query,
    sources: Mapping[str, DataSource],
    config: Mapping[str, object],
    *,
    sink_name: str,
    sink_kind: str,
) -> PlannedQuery:
    """Plan a C*AS or INSERT INTO query whose FROM clause is a join (without PARTITION BY,
    which :mod:`qtt.plan.planner.query_planner` plans over :func:`plan_joined_rows`).

    Raises:
        SqlError: the query is invalid (subclasses name the reason).
        UnsupportedFeatureError: the query needs a feature qtt does not support yet.
    """
    joined, step = plan_joined_rows(query, sources, sink_kind, config)
    if query.group_by is not None:
        return _aggregated(query, joined, step, config, sink_name)
    items = aliased(query.select, joined)
    scope = joined.scope()
    flat_map = plan_flat_map(step, items, scope)  # ksqlDB's FlatMapNode, over the joined rows
    if flat_map is not None:
        step, items, scope = flat_map.step, flat_map.items, flat_map.scope
    select = _resolve(items, joined, scope)
    key_items = _key_items(select, joined, sink_name)
    planned = _project(step, joined, select, key_items)
    if query.emit == "FINAL":  # ksqlDB's LogicalPlanner, once the join is planned
        raise StatementError("EMIT FINAL is only supported for windowed aggregations.")
    return planned


def plan_joined_rows(
    query: ast.Query, sources: Mapping[str, DataSource], sink_kind: str, config: Mapping[str, object]
) -> tuple[Joined, s.ExecutionStep]:
    """The join of the FROM clause and the WHERE over its rows: the joined input and its last step."""
    _reject_ambiguous_names(query, sources)
    if any(contains_table_function(item) for item in query.select):
        # ksqlDB asks of the FROM clause's first source, before it looks at the join
        leftmost = _leftmost(query.from_)
        source = sources.get(leftmost.name)
        columns = {name: [c.name for c in found.schema.columns] for name, found in sources.items()}
        check_table_functions_allowed(query, source is not None and source.kind == TABLE, columns)
    if query.group_by is None:
        reject_aggregates_without_group_by(query, sink_kind)
        if query.window is not None:
            raise StatementError("WINDOW clause requires a GROUP BY clause.")
    joined = JoinPlanner(sources).plan(query.from_)
    if hidden := PSEUDO_COLUMNS.keys() - pseudo_columns(config).keys():  # switched off for the analyzer
        joined = replace(joined, columns=tuple(c for c in joined.columns if c.name not in hidden))
    assert joined.key is not None
    _reject_synthetic_key_refs(query, joined)
    check_reserved_aliases(aliased(query.select, joined))  # ksqlDB's reserved aliases, then its unknown columns (but a
    # window bound, and in the projection of a join without GROUP BY any ROWKEY..., come later)
    synthetic = query.group_by is None
    reject_unknown_columns(
        query,
        joined.scope(),
        skip=lambda clause, ref: (
            ref.name in WINDOW_BOUNDS
            or (synthetic and clause == "SELECT" and ref.source is None and ref.name.startswith("ROWKEY"))
        ),
    )
    step = joined.step
    if query.where is not None:
        check_no_table_function(query.where, "WHERE")
        predicate = Analyzer(joined.scope(), "WHERE").boolean(query.where)
        # a table join's filter deletes only rows that passed before (Kafka Streams' table
        # filter with old values): a primary-key join sends each key's previous row along, as
        # ksqlDB's HAVING reads it; a foreign-key join's result is materialized for the filter
        # (Kafka Streams), so the filter keeps each key's previous row itself
        filter_step: type[s.TableFilterV2 | s.TableFilterV3 | s.StreamFilterV1] = s.StreamFilterV1
        if joined.kind == TABLE:
            filter_step = s.TableFilterV3 if joined.foreign_key else s.TableFilterV2
        step = filter_step(context="WhereFilter", source=step, filter_expression=predicate)
    return joined, step


def _reject_synthetic_key_refs(query: ast.Query, joined: Joined) -> None:
    """ksqlDB's analyzer lets only the projection of a join without GROUP BY name its synthetic
    key (``ColumnReferenceValidator``): in WHERE, GROUP BY, PARTITION BY, HAVING, or the
    projection of an aggregation, ``ROWKEY`` is an unknown column."""
    if not joined.synthetic_key or joined.key is None:
        return
    scope = Scope([c for c in joined.scope().columns if c.qualifiers], joined.qualifiers)
    for clause, exprs in clause_exprs(query):
        if clause == "SELECT" and query.group_by is None:
            continue
        refs = [x for expr in exprs if expr is not None for x in iter_nodes(expr) if isinstance(x, ast.ColumnRef)]
        for ref in refs:
            if ref.source is None and ref.name == joined.key[0]:
                resolve_in_clause(scope, ref, clause)


def _leftmost(relation: ast.Relation) -> ast.Table:
    while isinstance(relation, ast.Join):
        relation = relation.left
    assert isinstance(relation, ast.Table)
    return relation


def joined_rows(joined: Joined) -> DataSource:
    """The join's rows as a source: its key, then each side's columns as ``<alias>_<column>``
    (ksqlDB's join schema), which an aggregation or a PARTITION BY reads as any source's."""
    assert joined.key is not None
    leftmost = joined.sources[0][1]
    key_name, key_type = joined.key
    columns = [Column(key_name, key_type, KEY)]
    columns += [Column(c.prefixed, c.type, VALUE) for c in joined.columns if c.prefixed != key_name]
    return DataSource(
        name=leftmost.name,
        kind=joined.kind,
        schema=LogicalSchema(tuple(columns)),
        topic=leftmost.topic,
        formats=replace(leftmost.formats, window=None),
    )


def _aggregated(
    query: ast.Query, joined: Joined, step: s.ExecutionStep, config: Mapping[str, object], sink_name: str
) -> PlannedQuery:
    """GROUP BY over the joined rows, as over a source whose columns are the join's: ksqlDB
    aggregates the join's output."""
    leftmost = joined.sources[0][1]
    if leftmost.formats.window is not None:
        raise UnsupportedFeatureError("aggregating a join of windowed sources")
    if query.emit == "FINAL" and query.window is None:
        raise StatementError("EMIT FINAL is only supported for windowed aggregations.")
    context = AggregationContext(
        source=joined_rows(joined),
        sink_name=sink_name,
        qualifier=joined.shown,
        config=dict(config),
        scope=joined.scope(),
        window_bounds=False,
    )
    aggregation = AggregationPlanner(context)
    step, schema = aggregation.plan(query, step, aliased(query.select, joined))
    if aggregation.table_refusal is not None:
        raise aggregation.table_refusal
    return PlannedQuery(
        step=step,
        schema=schema,
        source=leftmost,
        is_table=True,
        window=aggregation.window_info,
        source_names=tuple(source.name for _, source in joined.sources),
        ksql_aggregate=aggregation.ksql_aggregate,
    )


def aliased(items: Sequence[ast.SelectItem], joined: Joined) -> list[ast.SelectItem]:
    """Every single-column item with its alias: ``T_ID`` for ``T.ID`` when another source has an
    ``ID`` too, else ``ID``. A generated name avoids the sources' own column names, as ksqlDB's
    AstSanitizer's does (``ColumnNames.columnAliasGenerator`` over the sources' schemas)."""
    generator = ColumnAliasGenerator([source.schema.names() for _, source in joined.sources])
    owners: dict[str, set[str]] = {}
    for column in joined.columns:
        owners.setdefault(column.name, set()).add(column.qualifier)
    out: list[ast.SelectItem] = []
    for item in items:
        if isinstance(item, ast.SingleColumn) and item.alias is None:
            node = item.expr
            if isinstance(node, ast.ColumnRef):
                # ksqlDB's AstSanitizer: only a name that several sources have gets its source's prefix
                common = len(owners.get(node.name, ())) > 1
                alias = f"{node.source}_{node.name}" if node.source and common else node.name
            else:
                alias = generator.unique_alias_for(node)
            item = replace(item, alias=alias)
        out.append(item)
    return out


def _resolve(items: Sequence[ast.SelectItem], joined: Joined, scope: Scope) -> list[SelectItem]:
    analyzer = Analyzer(scope, "SELECT")
    owner = {c.prefixed: c.qualifier for c in joined.columns}
    out: list[SelectItem] = []
    for item in items:
        if isinstance(item, ast.AllColumns):
            if item.source is not None and item.source not in joined.qualifiers:
                raise StatementError(f"Invalid table reference: {item.source}")
            for name, type_ in joined.star:
                if item.source is None or owner.get(name) == item.source:
                    out.append(SelectItem(name, e.ColumnRef(name=name, sql_type=type_)))
        elif isinstance(item, ast.StructAll):
            base, struct = expanded_struct(item.base, analyzer.typed)
            for f in struct.fields:
                out.append(SelectItem(f.name, e.FieldRef(base=base, name=f.name, sql_type=f.type)))
        else:
            assert isinstance(item, ast.SingleColumn) and item.alias is not None
            try:
                expr = analyzer(item.expr)
            except StatementError as error:
                raise _rowkey_unknown(error) or error from None
            out.append(SelectItem(item.alias, reject_untyped_null(expr)))
    seen: set[str] = set()
    for selected in out:
        if selected.alias in seen:
            msg = f"Duplicate value columns found in schema: `{selected.alias}` {selected.expression.result_type}"
            raise StatementError(msg)
        seen.add(selected.alias)
    return out


def _key_items(select: list[SelectItem], joined: Joined, sink_name: str) -> list[SelectItem]:
    """The items that become the key columns, in projection order: the first that selects the
    key, else the first that selects a join expression equal to it (rewritten to read the key;
    beside the key itself such an expression is a value column, as in ksqlDB); for a
    foreign-key join, the first that selects each of the left table's key columns."""
    assert joined.key is not None
    if joined.foreign_key:
        return _foreign_key_items(select, joined)
    key_name, key_type = joined.key
    for stands_for_key in ({key_name}, {c.prefixed for c in joined.equivalents}):
        for index, item in enumerate(select):
            if isinstance(item.expression, e.ColumnRef) and item.expression.name in stands_for_key:
                select[index] = SelectItem(item.alias, e.ColumnRef(name=key_name, sql_type=key_type))
                return [select[index]]
    shown = [c.shown for c in joined.equivalents] or [key_name]
    noun = "join expressions" if len(shown) > 1 else "join expression"
    synthetic = not joined.equivalents
    # ksqlDB's PlanNode.throwKeysNotIncludedError, trailing spaces included
    msg = (
        "Key missing from projection (ie, SELECT). "
        + ("See https://cnfl.io/2LV7ouS." if synthetic else "")
        + f"\nThe query used to build {t.quote(sink_name)} must include the {noun} {or_join(shown)} "
        f"in its projection (eg, SELECT {shown[0]}...)."
    )
    if synthetic:
        msg += (
            f"\n{key_name} was added as a synthetic key column because the join criteria did not match any "
            "source column. This expression must be included in the projection and may be aliased. "
        )
    raise StatementError(msg)


def _foreign_key_items(select: list[SelectItem], joined: Joined) -> list[SelectItem]:
    found: dict[str, SelectItem] = {}
    names = {name for name, _ in joined.keys}
    for item in select:
        if isinstance(item.expression, e.ColumnRef) and item.expression.name in names:
            found.setdefault(item.expression.name, item)
    missing = [name for name, _ in joined.keys if name not in found]
    if missing:
        raise StatementError(_foreign_key_missing(joined, missing))
    chosen = {id(item) for item in found.values()}
    return [item for item in select if id(item) in chosen]


def _foreign_key_missing(joined: Joined, prefixed: Sequence[str]) -> str:
    """ksqlDB's message for a foreign-key join whose projection lacks left key columns."""
    qualifier, _ = joined.sources[0]
    missing = [name.removeprefix(f"{qualifier}_") for name in prefixed]
    noun = "column" if len(missing) == 1 else "columns"
    return (
        f"Primary key {noun} missing in projection. For foreign-key table-table joins, the projection must "
        f"include all primary key columns from the left input table ({t.quote(qualifier)}). "
        f"Missing {noun}: {', '.join(t.quote(name) for name in missing)}."
    )


def _project(
    step: s.ExecutionStep, joined: Joined, select: list[SelectItem], key_items: list[SelectItem]
) -> PlannedQuery:
    by_key = {item.expression.name: item for item in key_items if isinstance(item.expression, e.ColumnRef)}
    values = [item for item in select if all(item is not key for key in key_items)]
    if not values:
        raise StatementError("The projection contains no value columns.")
    for item in values:
        if isinstance(item.expression, e.ColumnRef) and item.expression.name in by_key:
            key_name = item.expression.name
            raise StatementError(messages.key_selected_twice(key_name, [by_key[key_name].alias, item.alias]))
        if item.alias in PSEUDO_COLUMNS:
            raise UnsupportedFeatureError(f"output columns named like pseudo columns ({item.alias})")
    key_columns = [Column(item.alias, item.expression.result_type, KEY) for item in key_items]
    check_no_map_keys(key_columns)
    value_columns = [Column(v.alias, v.expression.result_type, VALUE) for v in values]
    table = joined.kind == TABLE
    project = (s.TableSelectV1 if table else s.StreamSelectV1)(
        context="Project",
        source=step,
        key_column_names=tuple(item.alias for item in key_items),
        select_expressions=tuple(
            s.SelectExpression(alias=item.alias, expression=item.expression) for item in (*key_items, *values)
        ),
    )
    leftmost = joined.sources[0][1]
    return PlannedQuery(
        step=project,
        schema=LogicalSchema(tuple(key_columns + value_columns)),
        source=leftmost,
        is_table=table,
        source_names=tuple(source.name for _, source in joined.sources),
        window=leftmost.formats.window,  # a join of windowed sources keeps the left's windows
    )


def _rowkey_unknown(error: StatementError) -> StatementError | None:
    """ksqlDB's analyzer lets a join's projection name ``ROWKEY...`` unqualified, as it could be
    the synthetic key; one that is not fails later, as an unknown column."""
    if isinstance(error, UnknownColumnError) and error.shown.startswith("ROWKEY"):
        return StatementError(f"Unknown column {error.shown}.")
    return None


def _reject_ambiguous_names(query: ast.Query, sources: Mapping[str, DataSource]) -> None:
    """Refuse the first unqualified column a join's query names that several sources have, as
    ksqlDB's AstSanitizer does while preparing the statement: in the order its StatementRewriter
    visits the query (the select items, ``ON``, ``WHERE``, ``GROUP BY``, ``PARTITION BY``,
    ``HAVING``), before any clause is typed or checked; a name no source has is left for later.

    Raises:
        StatementError: ksqlDB's ``Column 'X' is ambiguous. Could be A.X or B.X.``, where it stands.
    """
    scope = _sources_scope(query.from_, sources)
    if scope is None:
        return  # an unknown source: the join's planner says so
    clauses = (query.select, query.from_, query.where, query.group_by, query.partition_by, query.having)
    for ref in column_refs(clauses):
        if ref.source is None and len(scope.matches(ref)) > 1:
            scope.resolve(ref, "SELECT")


def _sources_scope(relation: ast.Relation, sources: Mapping[str, DataSource]) -> Scope | None:
    """Each source's columns as ksqlDB's ``DataSourceExtractor.getSourcesFor`` finds them: its
    schema's, the pseudo columns, and a windowed source's window bounds."""
    columns: list[ScopeColumn] = []
    for table in tables(relation):
        source = sources.get(table.name)
        if source is None:
            return None
        qualifier = frozenset([table.alias or table.name])
        names = {c.name: c.type for c in source.schema.columns} | PSEUDO_COLUMNS
        if source.formats.window is not None:
            names |= WINDOW_BOUNDS
        columns.extend(ScopeColumn(name, type_, qualifier) for name, type_ in names.items())
    return Scope(columns, frozenset().union(*(c.qualifiers for c in columns)))
