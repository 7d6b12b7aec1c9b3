"""ksqlDB's check of a query's source qualifiers, made as it builds the parsed statement.

A qualified column (``x.col``) or a qualified star (``x.*``) must name a source of the statement's
``FROM`` or ``JOIN``, by its name or its alias (``AstBuilder.throwOnUnknownNameOrAlias``): any
other qualifier fails the statement before its sources are looked up, with ``Failed to prepare
statement: 'X' is not a valid stream/table name or alias.`` (a struct's field is read with
``->``, never with ``.``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from qtt.sql import ast
from qtt.sql.type_rules import PREPARE_PREFIX, PrepareError


def check_qualifiers(query: ast.Query, walk: Callable[[object], Iterator[ast.Node]]) -> None:
    """Refuse the first qualifier of a persistent query that names none of its sources.

    ``walk`` yields the nodes below a node (``qtt.sql.parser.iter_nodes``). ksqlDB visits the
    ``FROM`` clause (and the joins' ``ON``) first, then the select items and the other clauses.
    """
    names = _source_names(query.from_)
    parts = (query.from_, query.select, query.where, query.group_by, query.partition_by, query.having)
    for node in walk(parts):
        source = node.source if isinstance(node, ast.ColumnRef | ast.AllColumns) else None
        if source is not None and source not in names:
            problem = f"'{source}' is not a valid stream/table name or alias."
            pos = node.pos
            line, column = (pos.line, pos.column) if pos is not None else (None, None)
            raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)


def tables(relation: ast.Relation) -> Iterator[ast.Table]:
    """The sources of a FROM clause, in the order written (a join's right side is one source)."""
    if isinstance(relation, ast.Join):
        yield from tables(relation.left)
        yield relation.right
    elif isinstance(relation, ast.Table):
        yield relation


def _source_names(relation: ast.Relation) -> set[str]:
    """Every source's name and alias (ksqlDB's parser collects both)."""
    return {name for table in tables(relation) for name in (table.name, table.alias) if name}
