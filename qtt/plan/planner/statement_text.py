"""A query statement as ksqlDB prints it after sanitizing it: ``Statement: ...`` in its messages.

ksqlDB's AstSanitizer qualifies every column with its source's alias and gives every select
item an alias; its SqlFormatter then prints the statement one clause a line::

    CREATE TABLE OUTPUT AS SELECT
      TEST.F2 F2,
      COUNT(*) KSQL_COL_0
    FROM TEST TEST
    GROUP BY TEST.F2
    EMIT CHANGES

A ``KsqlStatementException`` raised while planning a persistent query ends with that text, so
an expected message may quote it (:attr:`qtt.errors.SqlError.ksql_statement`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from qtt.plan.ddl.metastore import DataSource
from qtt.plan.ir.schema import PSEUDO_COLUMNS, WINDOW_BOUNDS
from qtt.plan.planner.aliases import ColumnAliasGenerator
from qtt.sql import ast
from qtt.sql.ast_parts import window_text, within_text
from qtt.sql.formatter import format_expr, format_identifier
from qtt.sql.references import rewrite_column_refs

_JOINS = {"INNER": "INNER JOIN", "LEFT": "LEFT OUTER JOIN", "RIGHT": "RIGHT OUTER JOIN", "FULL": "FULL OUTER JOIN"}


def statement_text_shown(
    statement: ast.CreateAsSelect | ast.InsertInto, sources: Mapping[str, DataSource]
) -> str | None:
    """The statement as ksqlDB's messages end with it, or None where qtt cannot print it (a
    source it names does not exist)."""
    try:
        return ksql_statement_text(statement, sources)
    except KeyError:
        return None


def ksql_statement_text(statement: ast.CreateAsSelect | ast.InsertInto, sources: Mapping[str, DataSource]) -> str:
    """``statement`` sanitized and formatted as ksqlDB prints it.

    Raises:
        KeyError: the query reads a source that is not in ``sources``.
    """
    if isinstance(statement, ast.InsertInto):  # ksqlDB keeps an INSERT's text as it was written
        return statement.text if statement.text.endswith(";") else statement.text + ";"
    query = statement.query
    tables = list(_tables(query.from_, sources))
    items = ",\n  ".join(_items(query.select, tables))
    select = f"SELECT\n  {items}" if len(query.select) > 1 else f"SELECT {items}"
    lines = [f"{_head(statement)} {select}", f"FROM {_relation(query.from_, tables)}"]
    if query.window is not None:
        lines.append(f"WINDOW {window_text(query.window)}")
    if query.where is not None:
        lines.append(f"WHERE {_formatted(query.where, tables)}")
    if query.group_by:
        lines.append("GROUP BY " + ", ".join(_formatted(e, tables) for e in query.group_by))
    if query.partition_by:
        lines.append("PARTITION BY " + ", ".join(_formatted(e, tables) for e in query.partition_by))
    if query.having is not None:
        lines.append(f"HAVING {_formatted(query.having, tables)}")
    lines.append(f"EMIT {query.emit or 'CHANGES'}")
    if query.limit is not None:
        lines.append(f"LIMIT {query.limit}")
    return "\n".join(lines)


def _head(statement: ast.CreateAsSelect | ast.InsertInto) -> str:
    properties = _properties(statement.properties)
    if isinstance(statement, ast.InsertInto):
        return f"INSERT INTO {format_identifier(statement.target)}{properties}"
    replace = "OR REPLACE " if statement.or_replace else ""
    exists = "IF NOT EXISTS " if statement.if_not_exists else ""
    return f"CREATE {replace}{statement.kind} {exists}{format_identifier(statement.name)}{properties} AS"


def _properties(properties: Mapping[str, object]) -> str:
    if not properties:
        return ""
    shown = ", ".join(f"{name.upper()}={_property_value(properties[name])}" for name in sorted(properties))
    return f" WITH ({shown})"


def _property_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


# ---------------------------------------------------------------------------- sources


@dataclasses.dataclass(frozen=True)
class _Aliased:
    """A source of the query under its alias, and the columns it offers."""

    alias: str
    source: DataSource

    def has(self, column: str) -> bool:
        if column in PSEUDO_COLUMNS:
            return True
        if column in WINDOW_BOUNDS:
            return self.source.formats.window is not None
        return column in self.source.schema.names()


def _tables(relation: ast.Relation, sources: Mapping[str, DataSource]) -> Iterator[_Aliased]:
    if isinstance(relation, ast.Join):
        yield from _tables(relation.left, sources)
        yield from _tables(relation.right, sources)
    elif isinstance(relation, ast.Table):
        yield _Aliased(relation.alias or relation.name, sources[relation.name])


def _relation(relation: ast.Relation, tables: list[_Aliased]) -> str:
    if isinstance(relation, ast.Join):
        within = f" {within_text(relation.within)}" if relation.within is not None else ""
        right = _relation(relation.right, tables)
        on = _formatted(relation.on, tables)
        return f"{_relation(relation.left, tables)}\n{_JOINS[relation.kind]} {right}{within} ON ({on})"
    assert isinstance(relation, ast.Table)
    return f"{format_identifier(relation.name)} {format_identifier(relation.alias or relation.name)}"


# ---------------------------------------------------------------------------- select items


def _items(items: tuple[ast.SelectItem, ...], tables: list[_Aliased]) -> Iterator[str]:
    """Each select item qualified and aliased, as ksqlDB's AstSanitizer leaves it."""
    joined = len(tables) > 1
    owners = {
        node.expr.name: sum(1 for table in tables if table.has(node.expr.name))
        for node in items
        if isinstance(node, ast.SingleColumn) and isinstance(node.expr, ast.ColumnRef)
    }
    existing = [[f"{t.alias}_{n}" for n in t.source.schema.names()] for t in tables] if joined else []
    generator = ColumnAliasGenerator(existing or [tables[0].source.schema.names()])
    for item in items:
        if isinstance(item, ast.AllColumns):
            yield "*" if item.source is None else f"{format_identifier(item.source)}.*"
        elif isinstance(item, ast.StructAll):
            yield f"{_formatted(item.base, tables)}->*"
        elif isinstance(item, ast.SingleColumn):
            yield f"{_formatted(item.expr, tables)} {format_identifier(_alias(item, tables, owners, generator))}"


def _alias(
    item: ast.SingleColumn, tables: list[_Aliased], owners: Mapping[str, int], generator: ColumnAliasGenerator
) -> str:
    if item.alias is not None:
        return item.alias
    node = item.expr
    if not isinstance(node, ast.ColumnRef):
        return generator.unique_alias_for(node)
    if len(tables) > 1 and owners.get(node.name, 0) > 1:  # a name several sources have: prefixed
        qualifier = node.source or _owner(node.name, tables)
        return f"{qualifier}_{node.name}" if qualifier else node.name
    return node.name


# ---------------------------------------------------------------------------- expressions


def _formatted(expr: ast.Expr, tables: list[_Aliased]) -> str:
    def qualified(ref: ast.ColumnRef) -> ast.Expr:
        owner = None if ref.source is not None else _owner(ref.name, tables)
        return ref if owner is None else dataclasses.replace(ref, source=owner)

    # every column qualified by its source's alias (names no single source has are left alone)
    return format_expr(_sanitized(rewrite_column_refs(expr, qualified)))


def _owner(column: str, tables: list[_Aliased]) -> str | None:
    found = [table.alias for table in tables if table.has(column)]
    return found[0] if len(found) == 1 or (found and len(tables) == 1) else None


def _sanitized(node: Any) -> Any:
    """``node`` as ksqlDB's sanitizer leaves it for the statement text: ``||`` as a call of
    ``concat``, ``COUNT()`` as ``COUNT(*)``."""
    if isinstance(node, ast.Concat):  # ksqlDB's call of ``concat``, its lower-case name quoted in a statement
        args = (_sanitized(node.left), _sanitized(node.right))
        return ast.FunctionCall(name="CONCAT", args=args, spelling="`concat`", pos=node.pos)
    if isinstance(node, ast.FunctionCall) and node.name == "COUNT" and not node.args:
        return dataclasses.replace(node, star=True)
    if isinstance(node, tuple):
        return tuple(_sanitized(part) for part in node)
    if isinstance(node, ast.Node):
        changes = {
            f.name: _sanitized(getattr(node, f.name))
            for f in dataclasses.fields(node)
            if f.name != "pos" and isinstance(getattr(node, f.name), ast.Node | tuple)
        }
        return dataclasses.replace(node, **changes)
    return node
