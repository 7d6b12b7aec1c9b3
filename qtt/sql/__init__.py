"""The dialect's parser: SQL text to :mod:`qtt.sql.ast`. No Spark, no plans."""

from __future__ import annotations

from qtt.sql.parser import iter_nodes, parse_expression, parse_schema, parse_statements, parse_type, parse_window

__all__ = ["iter_nodes", "parse_expression", "parse_schema", "parse_statements", "parse_type", "parse_window"]
