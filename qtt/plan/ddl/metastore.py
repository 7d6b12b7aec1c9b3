"""The metastore: the streams and tables that a case's statements have created so far."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from qtt.errors import UnsupportedFeatureError, did_you_mean
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import LogicalSchema
from qtt.sql import ast

STREAM, TABLE = "STREAM", "TABLE"


@dataclass(frozen=True)
class DataSource:
    """A stream or table in the metastore."""

    name: str
    kind: str
    schema: LogicalSchema
    topic: str
    formats: s.Formats
    timestamp_column: s.TimestampColumn | None = None
    is_source: bool = False
    partitions: int | None = None
    sql: str = ""
    #: declared by a C*AS (ksqlDB's ``isCasTarget``); a plain CREATE OR REPLACE of it clears it
    cas_target: bool = False


def unknown_source_hint(name: str, known: Iterable[str]) -> str | None:
    """``Did you mean 'X'?`` for a source name that is not in the metastore, if one is close."""
    return did_you_mean(name, known).strip() or None


def check_no_shadowed_columns(relation: ast.Relation, sources: Mapping[str, DataSource]) -> None:
    """Refuse, as a feature qtt lacks, a query over a source that ``ALTER ... ADD COLUMN`` gave a
    value column named as one of its header columns: ksqlDB accepts the ALTER (not one naming a
    key column), and its queries see the header column under that name, not the value column."""
    while isinstance(relation, ast.Join):
        check_no_shadowed_columns(relation.right, sources)
        relation = relation.left
    source = sources.get(relation.name) if isinstance(relation, ast.Table) else None
    if source is None:
        return
    names = [c.name for c in source.schema.columns]
    shadowed = sorted({name for name in names if names.count(name) > 1})
    if shadowed:
        shown = ", ".join(f"`{name}`" for name in shadowed)
        raise UnsupportedFeatureError(
            f"a query over {source.name}, whose value column shadows a column of its key or headers: {shown}"
        )
