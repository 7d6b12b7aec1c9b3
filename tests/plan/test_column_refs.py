"""ksqlDB's ColumnReferenceValidator: the first unknown column, clause by clause."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError, UnknownColumnError
from qtt.plan.analysis.analyzer import Scope, ScopeColumn
from qtt.plan.analysis.column_refs import reject_unknown_columns
from qtt.sql import ast
from qtt.sql.parser import parse_statements

SCOPE = Scope([ScopeColumn(name, t.INTEGER, frozenset({"P"})) for name in ("ID", "QTY")], frozenset({"P"}))


def _query(select: str) -> ast.Query:
    (statement,) = parse_statements(f"CREATE TABLE out AS {select};")
    assert isinstance(statement, ast.CreateAsSelect)
    return statement.query


def _never(clause: str, ref: ast.ColumnRef) -> bool:
    return False


@pytest.mark.parametrize(
    ("select", "message"),
    [
        ("SELECT id, nope FROM p WHERE qty", "SELECT column 'NOPE' cannot be resolved."),
        ("SELECT id, COUNT(a) FROM p GROUP BY id HAVING MAX(b) > 1", "HAVING column 'B' cannot be resolved."),
        ("SELECT id, COUNT(*) FROM p WHERE c GROUP BY d", "WHERE column 'C' cannot be resolved."),
        ("SELECT p.e FROM p", "SELECT column 'P.E' cannot be resolved."),
    ],
)
def test_the_first_unknown_column_in_ksqldb_order(select: str, message: str) -> None:
    with pytest.raises(UnknownColumnError) as raised:
        reject_unknown_columns(_query(select), SCOPE, skip=_never)
    assert raised.value.message == message


def test_partition_by_says_its_columns_come_from_the_input() -> None:
    with pytest.raises(StatementError, match="must be a column in the source schema"):
        reject_unknown_columns(_query("SELECT id FROM p PARTITION BY f"), SCOPE, skip=_never)


def test_lambda_parameters_and_skipped_names_are_no_columns() -> None:
    query = _query("SELECT id, TRANSFORM(ARRAY[qty], x => x + 1) AS y, WINDOWSTART AS w FROM p")
    reject_unknown_columns(query, SCOPE, skip=lambda clause, ref: ref.name == "WINDOWSTART")
