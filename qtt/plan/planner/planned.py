"""What planning a query produces, and the checks every kind of query shares."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.analysis import messages
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.ddl.upgrades import KsqlAggregate
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import RESERVED_NAMES, Column, LogicalSchema
from qtt.sql import ast


@dataclass
class PlannedQuery:
    """A planned query: its last step, the schema it produces and the source it reads."""

    step: s.ExecutionStep
    schema: LogicalSchema
    source: DataSource
    partitioned_by_null: bool = False
    is_table: bool = False
    #: the windows of a windowed aggregation's keys
    window: s.WindowInfo | None = None
    #: every source the query reads, when it reads more than ``source`` (a join)
    source_names: tuple[str, ...] = ()
    #: an aggregation as ksqlDB records it, which an in-place upgrade may not change
    ksql_aggregate: KsqlAggregate = field(default_factory=KsqlAggregate)

    @property
    def sources(self) -> tuple[str, ...]:
        return self.source_names or (self.source.name,)


@dataclass(frozen=True)
class SelectItem:
    """One output column of a projection: its alias and its typed expression."""

    alias: str
    expression: e.Expression


def check_reserved_aliases(items: Sequence[ast.SelectItem]) -> None:
    """ksqlDB's Analyzer.checkForReservedToken, for persistent queries: every single-column item,
    aliased as ksqlDB's AstSanitizer aliases it (it runs before the unknown-column checks)."""
    for item in items:
        if isinstance(item, ast.SingleColumn):
            _check_reserved_alias(item)


def _check_reserved_alias(item: ast.SingleColumn) -> None:
    assert item.alias is not None
    reserved = next((name for name in RESERVED_NAMES if name == item.alias.upper()), None)
    if reserved is None:
        return
    if isinstance(item.expr, ast.ColumnRef) and item.expr.name.upper() == reserved:
        msg = f"Reserved column name in select: `{reserved}`. Please remove or alias the column."
    else:
        msg = f"`{reserved}` is a reserved column name. You cannot use it as an alias for a column."
    raise StatementError(msg)


def check_no_map_keys(columns: Iterable[Column]) -> None:
    """Reject key columns whose type is or contains a MAP, as ksqlDB does."""
    for column in columns:
        if t.contains_map(column.type):
            raise StatementError(messages.map_in_key(column))


def reject_windowed_tables(sources: Iterable[DataSource]) -> None:
    """ksqlDB's PushQueryValidator: no persistent query reads a windowed table."""
    if any(source.kind == TABLE and source.formats.window is not None for source in sources):
        raise StatementError("KSQL does not support persistent queries on windowed tables.")
