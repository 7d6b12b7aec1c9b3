"""ksqlDB's experimental query planner (``ksql.new.query.planner.enabled=true``).

ksqlDB plans a persistent query with it only when the query is a projection of column
references over one stream (EngineExecutor.throwIfUnsupported, logicalplanner.SelectNode);
anything else is a statement error that tells the user to switch the planner off. Unlike
the default planner, it keeps the projection's order of the key columns and lets key columns
go: a projection without any key column writes records with a null key.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, VALUE, Column, LogicalSchema
from qtt.sql import ast

CONFIG_NEW_QUERY_PLANNER = "ksql.new.query.planner.enabled"


def reject_unsupported_clauses(query: ast.Query) -> None:
    """EngineExecutor.throwIfUnsupported: the clauses the new planner does not plan.

    Raises:
        StatementError: with ksqlDB's message, naming the clause.
    """
    clauses = [
        ("WHERE", query.where is not None),
        ("GROUP BY", query.group_by is not None),
        ("HAVING", query.having is not None),
        ("WINDOWS", query.window is not None),
        ("PARTITION BY", query.partition_by is not None),
        ("LIMIT", query.limit is not None),
        ("joins", isinstance(query.from_, ast.Join)),
    ]
    for clause, present in clauses:
        if present:
            msg = f"New query planner does not support {clause}. Set {CONFIG_NEW_QUERY_PLANNER}=false."
            raise StatementError(msg)


def plan_projection(
    source_step: s.ExecutionStep, source: DataSource, qualifiers: frozenset[str], items: Sequence[ast.SelectItem]
) -> tuple[s.ExecutionStep, LogicalSchema]:
    """The new planner's projection: the selected columns, keys first, each in SELECT order.

    Raises:
        StatementError: an expression that is not a column reference, or an unknown column.
        UnsupportedFeatureError: what qtt does not plan with this planner.
    """
    if source.kind == TABLE:
        msg = "Input TABLES are not supported by the new planner"
        raise StatementError(msg)
    # logicalplanner.StreamSourceNode: the source's own columns, without pseudo columns
    columns = source.schema.columns
    scope = Scope([ScopeColumn(c.name, c.type, qualifiers) for c in columns], qualifiers)
    selected: list[Column] = []
    for item in items:
        if isinstance(item, ast.AllColumns):
            if item.source is not None and item.source not in qualifiers:
                msg = f"Invalid table reference: {item.source}"
                raise StatementError(msg)
            selected += columns
            continue
        if not isinstance(item, ast.SingleColumn) or not isinstance(item.expr, ast.ColumnRef):
            msg = "New query planner only support column references, no expressions or aliases."
            raise StatementError(msg)
        ref = Analyzer(scope, "SELECT")(item.expr)
        assert isinstance(ref, e.ColumnRef)
        if item.alias is not None and item.alias != ref.name:
            # ksqlDB's new planner ignores the alias and names the column after its input
            raise UnsupportedFeatureError(f"column aliases with {CONFIG_NEW_QUERY_PLANNER}=true")
        column = next(c for c in columns if c.name == ref.name)
        selected.append(Column(column.name, column.type, KEY if column.is_key else VALUE))
    names = [c.name for c in selected]
    duplicate = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if duplicate is not None:
        raise UnsupportedFeatureError(f"a column selected twice with {CONFIG_NEW_QUERY_PLANNER}=true ({duplicate})")
    keys = [c for c in selected if c.namespace == KEY]
    values = [Column(c.name, c.type, VALUE) for c in selected if c.namespace != KEY]
    if not values:
        raise UnsupportedFeatureError(f"a projection without value columns with {CONFIG_NEW_QUERY_PLANNER}=true")
    step = s.StreamSelectV1(
        context="Project",
        source=source_step,
        key_column_names=tuple(c.name for c in keys),
        select_expressions=tuple(
            s.SelectExpression(alias=c.name, expression=e.ColumnRef(name=c.name, sql_type=c.type))
            for c in keys + values
        ),
    )
    return step, LogicalSchema(tuple(keys + values))
