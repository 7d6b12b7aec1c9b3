"""ksqlDB's AggregateAnalyzer over a query as written: its rules come before any type error."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.analysis.aggregate_rules import check_aggregate_rules
from qtt.plan.analysis.scope import Scope, ScopeColumn
from qtt.plan.statements import plan_statements
from qtt.sql import ast, parse_statements
from qtt.sql.formatter import format_expr

PICKS = (
    "CREATE STREAM PICKS (ROW_ID STRING KEY, TREE INT, VARIETY STRING, CRATES INT) "
    "WITH (kafka_topic='picks', value_format='JSON');"
)


def fails(statement: str) -> str:
    with pytest.raises(StatementError) as raised:
        plan_statements(parse_statements(PICKS + "\n" + statement), {})
    return raised.value.message


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param(
            "SELECT TREE, VARIETY, SUM(VARIETY) AS S FROM PICKS GROUP BY TREE",
            "Non-aggregate SELECT expression(s) not part of GROUP BY: VARIETY",
            id="ungrouped-item-before-an-aggregate-s-type",
        ),
        pytest.param(
            "SELECT TREE, SUM(COUNT(CRATES)) AS S FROM PICKS GROUP BY TREE, MAX(CRATES)",
            "Aggregate functions can not be nested: SUM(COUNT())",
            id="nested-in-select-before-aggregate-in-group-by",
        ),
        pytest.param(
            "SELECT TREE, COUNT(*) AS N FROM PICKS GROUP BY TREE HAVING MIN(MAX(CRATES)) > 1",
            "Aggregate functions can not be nested: MIN(MAX())",
            id="nested-in-having-without-a-clause-prefix",
        ),
        pytest.param(
            "SELECT TREE, COUNT(*) AS N FROM PICKS GROUP BY TREE HAVING SUM(CRATES) AND CRATES > 1",
            "Non-aggregate HAVING expression not part of GROUP BY: CRATES",
            id="ungrouped-having-column-before-having-s-type",
        ),
        pytest.param(
            "SELECT TREE FROM PICKS GROUP BY TREE, CRATES + 'x'",
            "GROUP BY requires aggregate functions in either the SELECT or HAVING clause.",
            id="no-aggregate-before-a-grouping-type-error",
        ),
        pytest.param(
            "SELECT TREE AS T1, TREE AS T2, COUNT(*) AS N FROM PICKS GROUP BY TREE, CRATES + 'x'",
            "The projection contains a key column more than once: `T1` and `T2`.",
            id="key-selected-twice-before-a-grouping-type-error",
        ),
        pytest.param(
            "SELECT TREE, VARIETY FROM PICKS GROUP BY TREE, VARIETY HAVING COUNT(*) > 'many'",
            "The projection contains no value columns.",
            id="having-s-type-after-the-projection",
        ),
    ],
)
def test_the_first_error_is_ksqldb_s(query: str, message: str) -> None:
    assert fails(f"CREATE TABLE OUT AS {query};").startswith(message)


def test_a_query_that_keeps_the_rules_passes() -> None:
    (statement,) = parse_statements(
        "CREATE TABLE OUT AS SELECT TREE + 1 AS T1, COUNT(*) AS N FROM PICKS GROUP BY TREE + 1 HAVING MAX(CRATES) > 1;"
    )
    assert isinstance(statement, ast.CreateAsSelect)
    query = statement.query
    items = [i for i in query.select if isinstance(i, ast.SingleColumn)]
    scope = Scope([ScopeColumn(n, t.INTEGER, frozenset({"PICKS"})) for n in ("TREE", "CRATES")], frozenset({"PICKS"}))
    check_aggregate_rules(query, items, scope, windowed=False, known=lambda name: True, shown=format_expr)
