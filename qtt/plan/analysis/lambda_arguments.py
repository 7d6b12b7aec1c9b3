"""ksqlDB's checks of lambda parameters (its ``AstSanitizer``), made before a query is analysed.

A parameter may not be named like a column of any source the query reads (``Lambda function
argument can't be a column name: X``), and a lambda inside another may not take a name the
outer one took (``Reusing lambda arguments in nested lambda is not allowed``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

from qtt.errors import StatementError
from qtt.sql import ast, iter_nodes
from qtt.sql.source_refs import tables

#: ksqlDB's engine runs the AstSanitizer as it prepares a statement, and prefixes its errors so
_PREPARING = "Exception while preparing statement: "


def check_lambda_arguments(query: ast.Query, source_columns: Mapping[str, Collection[str]]) -> None:
    """Raise ksqlDB's error for the first lambda parameter it refuses, if any.

    ``source_columns`` maps each source's name to its column names.
    """
    columns = {name for table in tables(query.from_) for name in source_columns.get(table.name, ())}
    for outermost in _nested(query):
        _check(outermost, columns, frozenset())


def _check(node: ast.Lambda, columns: set[str], outer: frozenset[str]) -> None:
    for param in node.params:
        if param in columns:
            raise StatementError(f"{_PREPARING}Lambda function argument can't be a column name: {param}")
    if len(outer | set(node.params)) < len(outer) + len(node.params):
        raise StatementError(f"{_PREPARING}Reusing lambda arguments in nested lambda is not allowed")
    inner = outer | frozenset(node.params)
    for child in _nested(node.body):
        _check(child, columns, inner)


def _nested(body: object) -> Iterator[ast.Lambda]:
    """The lambdas in ``body`` that no other lambda in it holds, in the order they are written."""
    held: set[int] = set()
    for node in iter_nodes(body):
        if isinstance(node, ast.Lambda) and id(node) not in held:
            held |= {id(n) for n in iter_nodes(node.body)}
            yield node
