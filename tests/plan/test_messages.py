"""ksqlDB's message texts: lists, names and plural forms."""

from __future__ import annotations

from qtt.plan.analysis import messages
from qtt.sql import parse_expression


def test_and_join_follows_ksqldb_s_grammatical_joiner() -> None:
    assert [messages.and_join(x) for x in ([], ["A"], ["A", "B"], ["A", "B", "C"])] == [
        "",
        "A",
        "A and B",
        "A, B and C",
    ]


def test_column_names_are_quoted_only_when_needed() -> None:
    assert messages.column_name_sql("ID") == "ID"
    assert messages.column_name_sql("id") == "`id`"


def test_bare_columns_are_qualified_in_messages() -> None:
    assert messages.qualified_sql(parse_expression("A + S.B"), "S") == "(S.A + S.B)"


def test_lambda_parameters_are_not_qualified_in_messages() -> None:
    # a lambda parameter is ksqlDB's LambdaVariable, not a column: it stays bare
    text = messages.qualified_sql(parse_expression("TRANSFORM(XS, x => x + B + TRANSFORM(YS, y => x + y)[1])"), "S")
    assert text == "TRANSFORM(S.XS, (X) => ((X + S.B) + TRANSFORM(S.YS, (Y) => (X + Y))[1]))"


def test_missing_keys_are_plural_for_a_query_but_not_for_an_aggregation() -> None:
    query = messages.key_missing_from_projection("OUT", "key column", ["A", "B"])
    aggregation = messages.key_missing_from_projection("OUT", "grouping expression", ["A", "B"], plural_key=False)
    assert query.startswith("Keys missing from projection") and "the key columns A and B in" in query
    assert aggregation.startswith("Key missing from projection") and "the grouping expressions A and B" in aggregation
    assert "(eg, SELECT A, B...)" in aggregation
