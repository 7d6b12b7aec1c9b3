"""Columns written as SQL (``K INT KEY, V STRING``) as a :class:`LogicalSchema`.

Case files state expected schemas in the dialect's own syntax (a ``post`` source's
``schema``), with aliases such as ``INT`` and optional quoting. That text goes through the SQL
grammar; a persisted plan's schemas never do (:mod:`qtt.plan.ir.type_text` reads those).
"""

from __future__ import annotations

from qtt.plan.ir.schema import HEADER, HEADERS, KEY, VALUE, Column, LogicalSchema
from qtt.sql.parser import parse_schema

_NAMESPACES = {"KEY": KEY, "PRIMARY KEY": KEY, "HEADERS": HEADERS, "HEADER": HEADER}


def namespace_of(constraint: str | None) -> str:
    """Where a column declared with ``constraint`` (``KEY``, ``PRIMARY KEY``, ...) lives."""
    return _NAMESPACES.get(constraint or "", VALUE)


def schema_from_sql(text: str) -> LogicalSchema:
    """The schema that a column list in the dialect's syntax declares.

    Raises:
        SqlSyntaxError: ``text`` is not a column list.
    """
    return LogicalSchema(
        tuple(Column(e.name, e.type, namespace_of(e.constraint), e.header_key) for e in parse_schema(text))
    )
