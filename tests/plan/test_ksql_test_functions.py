"""ksqlDB's test-only functions are skips that say so, not unknown functions."""

from __future__ import annotations

import pytest

from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.functions.ksql_test_functions import KSQL_TEST_FUNCTIONS
from qtt.plan.functions.scalar_signatures import FUNCTIONS
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

INPUT = "CREATE STREAM INPUT (ID INT KEY, NAME STRING) WITH (kafka_topic='input', format='JSON');"


def plan(sql: str) -> None:
    plan_statements(parse_statements(f"{INPUT}\n{sql}"), {})


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE STREAM OUTPUT AS SELECT ID, BAD_TEST_UDF(ID) AS X FROM INPUT;",
        "CREATE TABLE OUTPUT AS SELECT ID, MULTI_ARG(ID, NAME, 1) FROM INPUT GROUP BY ID;",
        "CREATE STREAM OUTPUT AS SELECT ID, TEST_UDTF(NAME) AS X FROM INPUT;",
    ],
)
def test_a_call_to_a_test_function_is_a_skip_naming_it(sql: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match="ksqlDB's test-only"):
        plan(sql)


def test_an_unknown_function_is_still_an_error() -> None:
    with pytest.raises(StatementError, match="Can't find any functions with the name 'NOPE_UDF'"):
        plan("CREATE STREAM OUTPUT AS SELECT ID, NOPE_UDF(ID) AS X FROM INPUT;")


def test_the_test_functions_qtt_runs_are_not_skipped() -> None:
    assert {"WHENCONDITION", "WHENRESULT", "BAD_UDF"} <= set(FUNCTIONS)
    assert not set(KSQL_TEST_FUNCTIONS) & set(FUNCTIONS)


def test_bad_udf_over_a_string_counts_its_calls_and_is_a_skip() -> None:
    with pytest.raises(UnsupportedFeatureError, match="every other call"):
        plan("CREATE STREAM OUTPUT AS SELECT ID, BAD_UDF(NAME) AS X FROM INPUT;")


def test_bad_udf_over_an_int_and_a_boolean_is_planned() -> None:
    plan("CREATE TABLE OUTPUT AS SELECT BAD_UDF(ID), COUNT() FROM INPUT GROUP BY BAD_UDF(ID);")
    plan("CREATE STREAM OUTPUT AS SELECT BAD_UDF(ID > 1), NAME FROM INPUT PARTITION BY BAD_UDF(ID > 1);")
