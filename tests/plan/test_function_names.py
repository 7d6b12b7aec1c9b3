"""Function names in errors: the name ksqlDB's source declares, whatever the statement wrote."""

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
        ("DateSub(DT, 5, DT)", "datesub"),
        # ksqlDB's Abs, LPad and Round declare mixed-case names, COALESCE and IFNULL upper case.
        ("ABS(S)", "Abs"),
        ("abs(S)", "Abs"),
        ("LPAD(I)", "LPad"),
        ("transform(I, x => x)", "transform"),
        ("Filter(A)", "filter"),
        ("abs(I, x => x)", "Abs"),
        ("coalesce()", "COALESCE"),
        ("ifnull(I)", "IFNULL"),
    ],
)
def test_does_not_accept_names_the_function_as_ksqldb_does(expression: str, name: str) -> None:
    text = message(expression)
    assert text.startswith(f"Function '{name}' does not accept parameters (")


def test_the_alternatives_use_the_upper_case_name() -> None:
    # ksqlDB registers a scalar function's overloads under its name in upper case.
    text = message("geo_distance(S, D, D, D)")
    assert text.startswith("Function 'geo_distance' does not accept parameters (STRING, DOUBLE, DOUBLE, DOUBLE).")
    assert "\n  GEO_DISTANCE(DOUBLE, DOUBLE, DOUBLE, DOUBLE" in text


@pytest.mark.parametrize(
    ("select", "name"),
    [
        ("K, sum(D)", "SUM"),
        ("K, Max(M)", "MAX"),
        ("K, Avg(M)", "avg"),
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


def test_a_function_whose_declared_name_is_unknown_shows_the_name_as_written() -> None:
    assert shown_name("ABS") == "Abs"
    assert shown_name("EXPLODE", "EXPLODE") == "explode"
    assert shown_name("LTRIM", "ltrim") == "ltrim"
    assert shown_name("LTRIM") == "LTRIM"
