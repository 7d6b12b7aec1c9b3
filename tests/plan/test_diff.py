"""Plan diffs name the step that changed."""

from __future__ import annotations

from qtt.plan.ir.diff import diff_lines
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

DDL = "CREATE STREAM S (K STRING KEY, A INT, B INT) WITH (kafka_topic='s', value_format='JSON');\n"


def _plan(query: str):  # type: ignore[no-untyped-def]
    return plan_statements(parse_statements(DDL + query)).plan


def test_identical_plans_have_no_diff() -> None:
    same = "CREATE STREAM O AS SELECT K, A FROM S;"
    assert diff_lines(_plan(same), _plan(same)) == []


def test_a_changed_filter_names_query_and_step() -> None:
    old = _plan("CREATE STREAM O AS SELECT K, A FROM S WHERE A > 1;")
    new = _plan("CREATE STREAM O AS SELECT K, A FROM S WHERE A > 2;")
    lines = diff_lines(old, new)
    assert any("CSAS_O_0 WhereFilter" in line for line in lines)
    assert any("1 -> 2" in line for line in lines)


def test_an_added_step_is_listed() -> None:
    lines = diff_lines(
        _plan("CREATE STREAM O AS SELECT K, A FROM S;"), _plan("CREATE STREAM O AS SELECT K, A FROM S WHERE B = 1;")
    )
    assert "+ step CSAS_O_0 WhereFilter (streamFilterV1)" in lines


def test_no_old_plan() -> None:
    assert diff_lines(None, _plan("CREATE STREAM O AS SELECT K, A FROM S;"))[0] == "no plan was persisted before"
