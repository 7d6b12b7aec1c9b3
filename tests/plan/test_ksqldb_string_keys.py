"""Several grouping expressions in one STRING key (ksqlDB's group-by before 0.15), translated
without Spark: on our own plan in ksqlDB's format (tests/fixtures/ksqldb_plans)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ksqldb.context import Untranslatable
from qtt.plan.ksqldb.plans import translate_plan
from qtt.plan.ksqldb.string_keys import hidden_groups, joined_key

FOLDER = Path(__file__).parent.parent / "fixtures" / "ksqldb_plans" / "parcels_-_load_per_depot_and_bay"
DEPOT = e.ColumnRef(name="DEPOT", sql_type=t.STRING)
BAY = e.ColumnRef(name="BAY", sql_type=t.INTEGER)
EMPTY = e.Literal(value="", sql_type=t.STRING)
SEPARATOR = e.Literal(value="|+|", sql_type=t.STRING)


def _read() -> tuple[dict[str, Any], dict[str, Any]]:
    (version,) = sorted(FOLDER.iterdir())
    return json.loads((version / "plan.json").read_text()), json.loads((version / "spec.json").read_text())


def _steps(plan: dict[str, Any], spec: dict[str, Any]) -> list[s.ExecutionStep]:
    recorded = {name: entry["schema"] for name, entry in spec["schemas"].items()}
    planned = translate_plan(plan, release=spec["version"], recorded=recorded, partitions={}, properties={})
    (query,) = planned.plan.queries()
    return s.walk_steps(query.physical_plan)


def _null_if_any_null(*values: e.Expression, joined: e.Expression) -> e.Expression:
    nulls = [e.IsNull(operand=v, negated=False) for v in values]
    condition = nulls[0]
    for other in nulls[1:]:
        condition = e.Or(left=condition, right=other)
    null = e.Literal(value=None, sql_type=t.STRING)
    return e.Case(whens=(e.When(condition=condition, result=null),), default=joined, sql_type=t.STRING)


def test_the_values_are_joined_with_a_separator_only_after_a_non_empty_text() -> None:
    # GroupByParamsV1Factory: StringBuilder.append of each value, "|+|" first when the key so far is not empty
    bay = e.Cast(operand=BAY, sql_type=t.STRING)
    depot_first = e.Case(
        whens=(e.When(condition=e.Comparison(op="<>", left=DEPOT, right=EMPTY), result=SEPARATOR),),
        default=EMPTY,
        sql_type=t.STRING,
    )
    assert joined_key("streamGroupByV1", [DEPOT, BAY]) == _null_if_any_null(
        DEPOT, BAY, joined=e.Call(name="CONCAT", args=(DEPOT, depot_first, bay), sql_type=t.STRING)
    )
    # a number's text is never empty: every separator after it is written
    assert joined_key("streamGroupByV1", [BAY, DEPOT]) == _null_if_any_null(
        BAY, DEPOT, joined=e.Call(name="CONCAT", args=(bay, SEPARATOR, DEPOT), sql_type=t.STRING)
    )


@pytest.mark.parametrize("type_", [t.Decimal(4, 2), t.TIMESTAMP, t.Array(t.INTEGER), t.BYTES])
def test_a_value_whose_java_text_qtt_cannot_print_does_not_translate_and_names_its_type(type_: t.SqlType) -> None:
    value = e.ColumnRef(name="V", sql_type=type_)
    with pytest.raises(Untranslatable, match=re.escape(f"tableGroupByV1: a {type_} grouping value in one STRING key")):
        joined_key("tableGroupByV1", [BAY, value])


def test_the_grouping_values_become_hidden_keys_a_literal_groups_nothing() -> None:
    sum_ = e.Arithmetic(op="+", left=BAY, right=BAY, sql_type=t.INTEGER)
    one = e.Literal(value=1, sql_type=t.INTEGER)
    groups = hidden_groups("streamGroupByV1", [DEPOT, one, sum_, DEPOT], "KSQL_COL_0", ["KSQL_GROUPING_1"])
    assert [(g.alias, g.expression) for g in groups] == [("DEPOT", DEPOT), ("KSQL_GROUPING_2", sum_)]
    with pytest.raises(Untranslatable, match="a grouping column DEPOT named like the STRING key"):
        hidden_groups("streamGroupByV1", [BAY, DEPOT], "DEPOT", [])


def test_the_aggregate_is_grouped_by_the_string_key_and_its_projection_drops_the_hidden_keys() -> None:
    steps = _steps(*_read())
    group_by = next(x for x in steps if isinstance(x, s.StreamGroupByV1))
    assert [g.alias for g in group_by.group_by_expressions] == ["KSQL_COL_0", "DEPOT", "BAY"]
    assert group_by.group_by_expressions[0].expression == joined_key("streamGroupByV1", [DEPOT, BAY])
    project = next(x for x in steps if isinstance(x, s.TableSelectV1))
    assert project.key_column_names == ("KSQL_COL_0",)
    assert [(x.alias, x.expression) for x in project.select_expressions] == [
        ("KSQL_COL_0", e.ColumnRef(name="KSQL_COL_0", sql_type=t.STRING)),
        ("SLOT", e.Arithmetic(op="*", left=BAY, right=e.Literal(value=10, sql_type=t.INTEGER), sql_type=t.INTEGER)),
        ("TOTAL", e.ColumnRef(name="KSQL_AGG_VARIABLE_0", sql_type=t.INTEGER)),
    ]


def test_a_sink_reached_by_the_hidden_keys_does_not_translate() -> None:
    plan, spec = _read()
    old = copy.deepcopy(plan)
    sink = old["plan"][1]["queryPlan"]["physicalPlan"]
    sink["source"] = sink["source"]["source"]  # the aggregate, without its projection
    with pytest.raises(Untranslatable, match="tableSinkV1: an aggregate's hidden grouping keys reach the sink"):
        _steps(old, spec)


def test_a_value_that_may_differ_on_each_evaluation_does_not_translate() -> None:
    random = e.Call(name="RANDOM", args=(), sql_type=t.DOUBLE)
    with pytest.raises(Untranslatable, match=re.escape("a grouping value of RANDOM() in one STRING key")):
        joined_key("streamGroupByV1", [BAY, e.Arithmetic(op="*", left=random, right=random, sql_type=t.DOUBLE)])
