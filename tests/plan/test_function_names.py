"""Function names in errors: the declared name where ksqlDB's source gives one, else as written."""

from __future__ import annotations

import pytest

from qtt.errors import StatementError
from qtt.plan.functions.names import shown_name
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements
from tests.plan.test_analyzer import analyze

SOURCE = (
    "CREATE STREAM S1 (K STRING KEY, D DATE, V INT, A ARRAY<INT>, M MAP<STRING, INT>) "
    "WITH (kafka_topic='s1', value_format='JSON');"
)


def message(expression: str) -> str:
    with pytest.raises(StatementError) as raised:
        analyze(expression)
    return raised.value.message


def planning_message(select: str, group_by: str = "") -> str:
    query = f"CREATE {'TABLE' if group_by else 'STREAM'} OUT AS SELECT {select} FROM S1 {group_by};"
    with pytest.raises(StatementError) as raised:
        plan_statements(parse_statements(f"{SOURCE}\n{query}"), {})
    return raised.value.message


@pytest.mark.parametrize(
    ("expression", "name"),
    [
        ("datesub(DT, 5, DT)", "datesub"),
        ("DateSub(DT, 5, DT)", "DateSub"),
        ("ABS(S)", "ABS"),
        ("abs(S)", "abs"),
        ("transform(I, x => x)", "transform"),
        ("Filter(A)", "Filter"),
        ("abs(x => x)", "abs"),
        # ksqlDB's COALESCE, IFNULL and NULLIF declare upper-case names, EXPLODE a lower-case one.
        ("coalesce()", "COALESCE"),
        ("ifnull(I)", "IFNULL"),
    ],
)
def test_does_not_accept_names_the_function_as_ksqldb_does(expression: str, name: str) -> None:
    text = message(expression)
    assert text.startswith(f"Function '{name}' does not accept parameters (")


def test_the_alternatives_use_the_same_name() -> None:
    assert "\n  geo_distance(DOUBLE, DOUBLE, DOUBLE, DOUBLE" in message("geo_distance(S, D, D, D)")


@pytest.mark.parametrize(
    ("select", "name"),
    [
        ("K, sum(D)", "sum"),
        ("K, Max(M)", "Max"),
        ("EXPLODE(M)", "explode"),
        ("explode(V)", "explode"),
    ],
)
def test_aggregates_and_table_functions_too(select: str, name: str) -> None:
    group_by = "GROUP BY K" if select.startswith("K,") else ""
    assert planning_message(select, group_by).startswith(f"Function '{name}' does not accept parameters (")


@pytest.mark.parametrize(
    ("expression", "name"),
    # ksqlDB's parser upper-cases an unquoted function name before the registry sees it.
    [("nope(I)", "NOPE"), ("Nope(I)", "NOPE"), ("`nope`(I)", "nope")],
)
def test_an_unknown_function_is_named_as_parsed(expression: str, name: str) -> None:
    assert message(expression).startswith(f"Can't find any functions with the name '{name}'.")


def test_the_plan_keeps_the_canonical_name() -> None:
    call = analyze("abs(I)")
    assert call.name == "ABS"  # type: ignore[attr-defined]


def test_a_call_qtt_makes_up_shows_its_canonical_name() -> None:
    assert shown_name("ABS") == "ABS"
    assert shown_name("EXPLODE", "EXPLODE") == "explode"
