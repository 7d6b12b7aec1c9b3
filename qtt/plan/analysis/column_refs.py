"""ksqlDB's ``ColumnReferenceValidator``: a query's unknown columns, before any clause is typed.

ksqlDB's Analyzer looks up every column a query names, clause by clause (``WHERE``, ``GROUP BY``,
``PARTITION BY``, ``HAVING``, then the ``SELECT`` items), before its planner types a clause or
checks an aggregation: so the first unknown column, in that order, is the error of a query
with several faults, even where an earlier clause does not type check or an aggregate call in
``HAVING`` is also in the projection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from qtt.errors import StatementError, UnknownColumnError
from qtt.plan.analysis import messages
from qtt.plan.analysis.analyzer import Scope
from qtt.sql import ast
from qtt.sql.references import column_refs


def clause_exprs(query: ast.Query) -> list[tuple[str, Iterable[ast.Expr | None]]]:
    """The expressions of each clause, in the order ksqlDB's Analyzer checks their columns."""
    return [
        ("WHERE", [query.where]),
        ("GROUP BY", query.group_by or ()),
        ("PARTITION BY", query.partition_by or ()),
        ("HAVING", [query.having]),
        ("SELECT", [item.expr for item in query.select if isinstance(item, ast.SingleColumn)]),
    ]


def reject_unknown_columns(query: ast.Query, scope: Scope, *, skip: Callable[[str, ast.ColumnRef], bool]) -> None:
    """Raise ksqlDB's error for the first column of ``query`` that ``scope`` does not have;
    ``skip(clause, ref)`` leaves a reference to the checks that come later.

    Raises:
        UnknownColumnError: ``<CLAUSE> column 'X' cannot be resolved.``
        StatementError: PARTITION BY's message, which says where its columns must come from.
    """
    for clause, exprs in clause_exprs(query):
        for expr in exprs:
            for ref in column_refs(expr):
                if scope.matches(ref) or skip(clause, ref):
                    continue
                resolve_in_clause(scope, ref, clause)


def resolve_in_clause(scope: Scope, ref: ast.ColumnRef, clause: str) -> None:
    """Look ``ref`` up in ``scope``, with PARTITION BY's own message when it is not there.

    Raises:
        UnknownColumnError: ``<CLAUSE> column 'X' cannot be resolved.``
        StatementError: PARTITION BY's message, which says where its columns must come from.
    """
    try:
        scope.resolve(ref, clause)
    except UnknownColumnError as error:
        if clause != "PARTITION BY":
            raise
        msg = messages.partition_by_unresolved(error.shown)
        raise StatementError(msg, line=error.line, column=error.column, hint=error.hint) from None
