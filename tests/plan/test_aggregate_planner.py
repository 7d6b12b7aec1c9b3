"""Planning GROUP BY queries: the steps, and ksqlDB's messages for what it refuses (no Spark)."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.ir import steps as s
from qtt.plan.statements import PlannedCase, plan_statements
from qtt.sql import parse_statements

READINGS = (
    "CREATE STREAM READINGS (SENSOR STRING KEY, SITE STRING, CELSIUS INT, TAGS ARRAY<STRING>) "
    "WITH (kafka_topic='readings', value_format='JSON');"
)
PANELS = (
    "CREATE TABLE PANELS (PANEL STRING PRIMARY KEY, SITE STRING, WATTS BIGINT) "
    "WITH (kafka_topic='panels', value_format='JSON');"
)


def plan(*statements: str) -> PlannedCase:
    return plan_statements(parse_statements("\n".join(statements)), {})


def fails(*statements: str) -> str:
    with pytest.raises(StatementError) as raised:
        plan(*statements)
    return str(raised.value)


def step_tags(planned: PlannedCase) -> list[str]:
    plan_ = planned.plan.statements[-1]
    assert isinstance(plan_, s.KsqlPlanV1) and plan_.query_plan is not None
    tags, step = [], plan_.query_plan.physical_plan
    while step is not None:
        tags.append(type(step).__name__)
        step = getattr(step, "source", None)
    return tags[::-1]


def test_a_stream_aggregation_groups_aggregates_then_projects() -> None:
    planned = plan(
        READINGS,
        "CREATE TABLE HOT AS SELECT SITE, MAX(CELSIUS) AS TOP FROM READINGS GROUP BY SITE HAVING COUNT(*) > 1;",
    )
    assert step_tags(planned) == [
        "StreamSourceV1",
        "StreamGroupByV1",
        "StreamAggregateV1",
        "TableFilterV2",
        "TableSelectV1",
        "TableSinkV1",
    ]


def test_a_table_aggregation_keeps_each_row_s_arguments_for_undo() -> None:
    planned = plan(PANELS, "CREATE TABLE POWER AS SELECT SITE, SUM(WATTS) AS TOTAL FROM PANELS GROUP BY SITE;")
    assert step_tags(planned) == ["TableSourceV1", "TableGroupByV1", "TableAggregateV2", "TableSelectV1", "TableSinkV1"]


@pytest.mark.parametrize(
    ("statements", "message"),
    [
        pytest.param(
            (
                PANELS,
                "CREATE TABLE T AS SELECT SITE, LATEST_BY_OFFSET(WATTS), MAX(WATTS), MIN(WATTS), "
                "MAX(WATTS + 1) FROM PANELS GROUP BY SITE;",
            ),
            "The aggregation functions LATEST_BY_OFFSET, MAX and MIN cannot be applied to a table source",
            id="table-only-functions-in-order-of-use",
        ),
        pytest.param(
            (READINGS, "CREATE TABLE T AS SELECT COUNT(*) FROM READINGS GROUP BY LCASE(SITE) + SUM(CELSIUS);"),
            "GROUP BY does not support aggregate functions: SUM is an aggregate function.",
            id="aggregate-inside-a-group-by-expression-names-the-aggregate",
        ),
        pytest.param(
            (READINGS, "CREATE TABLE T AS SELECT SITE, MAX(COUNT(*)) FROM READINGS GROUP BY SITE;"),
            "Aggregate functions can not be nested: MAX(COUNT())",
            id="nested-aggregates",
        ),
        pytest.param(
            (READINGS, "CREATE TABLE T AS SELECT COUNT(*), SUM(CELSIUS) FROM READINGS;"),
            "CREATE TABLE AS SELECT statement does not support aggregate function [COUNT(ROWTIME), SUM(CELSIUS)] "
            "without a GROUP BY clause.",
            id="table-aggregate-without-group-by",
        ),
        pytest.param(
            (READINGS, "CREATE TABLE T AS SELECT SITE, COUNT(*) FROM READINGS;"),
            "Non-aggregate SELECT expression(s) not part of GROUP BY: SITE",
            id="table-aggregate-without-group-by-with-a-plain-column",
        ),
        pytest.param(
            (READINGS, "CREATE STREAM T AS SELECT COUNT(*) FROM READINGS;"),
            "Use of aggregate function COUNT requires a GROUP BY clause.",
            id="stream-aggregate-without-group-by",
        ),
        pytest.param(
            (READINGS, "CREATE TABLE T AS SELECT SITE AS N, COUNT(*) AS N FROM READINGS GROUP BY SITE;"),
            "Duplicate value columns found in schema: `N` BIGINT",
            id="duplicate-alias-names-the-later-column-s-type",
        ),
        pytest.param(
            (
                "CREATE STREAM RAW (K STRING KEY, V STRING) WITH (kafka_topic='raw', value_format='KAFKA');",
                "CREATE TABLE T WITH (value_format='JSON') AS SELECT V, COUNT(*) FROM RAW GROUP BY V;",
            ),
            "Source(s) RAW are using the 'KAFKA' value format. This format does not yet support GROUP BY.",
            id="kafka-value-format",
        ),
        pytest.param(
            (
                "CREATE STREAM RAW (K STRING KEY, V INT) WITH (kafka_topic='raw', value_format='DELIMITED');",
                "CREATE TABLE T WITH (value_format='JSON') AS SELECT K, AVG(V) FROM RAW GROUP BY K;",
            ),
            "One of the functions used in the statement has an intermediate type that the value format can not handle.",
            id="delimited-cannot-hold-avg-s-struct-state",
        ),
    ],
)
def test_aggregation_errors(statements: tuple[str, ...], message: str) -> None:
    assert message in fails(*statements)


def aggregate_step(planned: PlannedCase) -> s.StreamAggregateV1:
    plan_ = planned.plan.statements[-1]
    assert isinstance(plan_, s.KsqlPlanV1) and plan_.query_plan is not None
    found = [x for x in s.walk_steps(plan_.query_plan.physical_plan) if isinstance(x, s.StreamAggregateV1)]
    assert len(found) == 1
    return found[0]


def test_delimited_holds_primitive_intermediate_state() -> None:
    raw = "CREATE STREAM RAW (K STRING KEY, V INT) WITH (kafka_topic='raw', value_format='DELIMITED');"
    planned = plan(raw, "CREATE TABLE T AS SELECT K, SUM(V) AS S, COUNT(*) AS C FROM RAW GROUP BY K;")
    states = [(c.function, c.state_type) for c in aggregate_step(planned).aggregations]
    assert states == [("SUM", t.INTEGER), ("COUNT", t.BIGINT)]
    assert planned.sources["T"].formats.value_format.format == "DELIMITED"


def test_a_non_literal_init_parameter_is_named_in_the_message() -> None:
    message = fails(READINGS, "CREATE TABLE T AS SELECT SITE, TOPK(CELSIUS, CELSIUS) FROM READINGS GROUP BY SITE;")
    assert "Parameter 2 passed to function TOPK must be a literal constant, but was expression: 'CELSIUS'" in message


def test_a_cast_is_no_literal_init_parameter() -> None:
    message = fails(
        READINGS, "CREATE TABLE T AS SELECT SITE, TOPK(CELSIUS, CAST(2 AS INT)) FROM READINGS GROUP BY SITE;"
    )
    assert "must be a literal constant, but was expression: 'CAST(2 AS INTEGER)'" in message


def test_an_aggregate_without_arguments_reads_rowtime() -> None:
    query = "CREATE TABLE T AS SELECT SITE, AVG(*) AS A, MAX() AS M, COUNT(*) AS N FROM READINGS GROUP BY SITE;"
    planned = plan(READINGS, query)
    calls = aggregate_step(planned).aggregations
    assert [(c.function, [str(a.result_type) for a in c.args]) for c in calls] == [
        ("AVG", ["BIGINT"]),
        ("MAX", ["BIGINT"]),
        ("COUNT", []),
    ]
    assert [a.functions for a in planned.ksql_aggregates.values()] == [
        ("AVG(ROWTIME)", "MAX(ROWTIME)", "COUNT(ROWTIME)")
    ]
    message = fails(READINGS, "CREATE TABLE T AS SELECT SITE, TOPK(*) AS K FROM READINGS GROUP BY SITE;")
    assert "Function 'TOPK' does not accept parameters (BIGINT)." in message
    message = fails(READINGS, "CREATE TABLE T AS SELECT AVG() AS A, COUNT(*) AS N FROM READINGS;")
    assert "aggregate function [AVG(ROWTIME), COUNT(ROWTIME)] without a GROUP BY clause" in message


def test_collect_map_is_not_a_ksqldb_function() -> None:
    maps = "CREATE STREAM M (K STRING KEY, V MAP<STRING, INT>) WITH (kafka_topic='m', value_format='JSON');"
    message = fails(maps, "CREATE TABLE T AS SELECT K, COLLECT_MAP(V) AS C FROM M GROUP BY K;")
    assert "Can't find any functions with the name 'COLLECT_MAP'" in message


def test_topk_with_additional_columns_returns_structs_named_as_ksqldb_names_them() -> None:
    query = "CREATE TABLE T AS SELECT SITE, TOPK(CELSIUS, SITE, CELSIUS * 2, 2) AS TOP FROM READINGS GROUP BY SITE;"
    (call,) = aggregate_step(plan(READINGS, query)).aggregations
    assert str(call.return_type) == str(call.state_type)
    assert [f.name for f in call.return_type.element.fields] == ["sort_col", "col0", "col1"]  # type: ignore[attr-defined]
    assert call.params == (2,) and len(call.args) == 3


def test_sum_list_is_planned() -> None:
    lists = "CREATE STREAM L (K STRING KEY, V ARRAY<INT>) WITH (kafka_topic='l', value_format='JSON');"
    planned = plan(lists, "CREATE TABLE T AS SELECT K, SUM_LIST(V) AS S FROM L GROUP BY K;")
    assert [c.function for c in aggregate_step(planned).aggregations] == ["SUM_LIST"]


@pytest.mark.parametrize(
    ("query", "columns"),
    [
        # SELECT first (COUNT(*) reads ROWTIME), then WHERE, GROUP BY and HAVING, first reference first
        ("SELECT SITE, COUNT(*) AS N FROM READINGS WHERE CELSIUS > 0 GROUP BY SITE", ("SITE", "ROWTIME", "CELSIUS")),
        ("SELECT SITE, MAX(CELSIUS) AS TOP FROM READINGS GROUP BY SITE", ("SITE", "CELSIUS")),
        (
            "SELECT SITE, COUNT(*) AS N FROM READINGS GROUP BY SITE HAVING SUM(CELSIUS) > 3",
            ("SITE", "ROWTIME", "CELSIUS"),
        ),
        ("SELECT R.SITE, COUNT(R.SENSOR) AS N FROM READINGS R GROUP BY R.SITE", ("SITE", "SENSOR")),
        # a lambda's parameter is no column; window bounds are not read from the source
        (
            "SELECT SITE, WINDOWSTART AS WS, COUNT(*) AS N FROM READINGS WINDOW TUMBLING (SIZE 1 MINUTE) "
            "WHERE ARRAY_LENGTH(FILTER(TAGS, T => T = 'hot')) > 0 GROUP BY SITE",
            ("SITE", "ROWTIME", "TAGS"),
        ),
    ],
)
def test_an_aggregation_knows_the_columns_it_reads_as_ksqldb_lists_them(query: str, columns: tuple[str, ...]) -> None:
    planned = plan(READINGS, f"CREATE TABLE OUT AS {query};")
    assert [aggregate.columns for aggregate in planned.ksql_aggregates.values()] == [columns]


@pytest.mark.parametrize(
    ("select", "having", "functions"),
    [
        ("SITE, COUNT(*) AS N, SUM(CELSIUS) AS S", "", ("COUNT(ROWTIME)", "SUM(CELSIUS)")),
        # an argument that is not a column is the pre-aggregate projection's, numbered after the
        # columns read (SITE, CELSIUS), each distinct argument once
        (
            "SITE, MAX(CELSIUS + 1) AS M, MIN(CELSIUS + 1) AS L, COUNT(1) AS C",
            "",
            ("MAX(KSQL_INTERNAL_COL_2)", "MIN(KSQL_INTERNAL_COL_2)", "COUNT(KSQL_INTERNAL_COL_3)"),
        ),
        # a literal parameter stays as written; HAVING's calls follow, repeats included
        ("SITE, TOPK(CELSIUS, 2) AS HOTTEST", " HAVING COUNT(*) > 1", ("TOPK(CELSIUS, 2)", "COUNT(ROWTIME)")),
        ("SITE, SUM(CELSIUS) AS S", " HAVING SUM(CELSIUS) > 3", ("SUM(CELSIUS)", "SUM(CELSIUS)")),
    ],
)
def test_an_aggregation_prints_its_calls_as_ksqldb_records_them(
    select: str, having: str, functions: tuple[str, ...]
) -> None:
    planned = plan(READINGS, f"CREATE TABLE OUT AS SELECT {select} FROM READINGS GROUP BY SITE{having};")
    assert [aggregate.functions for aggregate in planned.ksql_aggregates.values()] == [functions]
