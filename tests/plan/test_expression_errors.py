"""Where the planner records that a failing part nulls its whole expression (ksqlDB's rule).

A plan records ``qtt.expression.error.scope`` only where qtt's older part-only rule gives
another value: plans persisted without it keep that rule, so their goldens hold.
"""

from __future__ import annotations

import pytest

from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.analysis.expression_errors import THROWING_FUNCTIONS, absorbs_errors
from qtt.plan.settings import EXPRESSION_ERROR_SCOPE, WHOLE_EXPRESSION, WHOLE_EXPRESSION_FUNCTIONS
from qtt.plan.statements import plan_statements
from qtt.runtime.jobs import QuerySettings
from qtt.sql import parse_expression, parse_statements, parse_type

COLUMNS = {"A": "INT", "B": "INT", "D": "DOUBLE", "P": "DECIMAL(4, 2)", "S": "STRING", "F": "BOOLEAN"}
COLUMNS |= {"XS": "ARRAY<INT>"}


def absorbs(text: str, *, caught: bool = True) -> bool:
    scope = Scope([ScopeColumn(name, parse_type(type_)) for name, type_ in COLUMNS.items()])
    return absorbs_errors(Analyzer(scope, "SELECT").typed(parse_expression(text)), caught=caught)


@pytest.mark.parametrize(
    "text",
    [
        "COALESCE(A + 1, -1)",  # COALESCE passes over the null of a failed part
        "(A / B) IS NULL",
        "NOT (A + 1 > 5)",
        "A + 1 > 5",  # a comparison with a null operand is false, not null
        "IFNULL(A * 2, 0)",
        "A + 1 IN (2, 3)",
        "CASE WHEN A + 1 > 2 THEN 'big' ELSE 'small' END",
        "F AND A / B > 1",
        "ABS(COALESCE(A + 1, -1))",  # the argument ksqlDB catches is null as a whole
        "CAST(A + 1 > 5 AS STRING)",  # ... and the CAST with its operand
        "ARRAY[COALESCE(A + 1, -1), 6]",
        "(P / P) IS NULL",  # BigDecimal throws on a zero divisor
        "TRANSFORM(ARRAY[P], x => x * P)",  # ... and past its precision, leaving the lambda function
        "(D > P) IS NULL",  # BigDecimal.valueOf throws on a NaN DOUBLE: the comparison is null
    ],
)
def test_a_part_whose_failure_a_node_above_turns_into_a_value_absorbs_it(text: str) -> None:
    assert absorbs(text)


@pytest.mark.parametrize(
    "text",
    [
        "A",
        "A + 1",  # null wherever Java throws, in both rules
        "D > P",
        "-(A * B) / 2",
        "ABS(A)",
        "F AND A > 1",  # a null F makes AND null in qtt as in Java
        "CASE WHEN F THEN A + 1 ELSE 0 END",  # a null condition already nulls the CASE
        "CAST(A / B AS STRING)",  # ksqlDB catches a CAST with its operand
        "ARRAY[A + 1, 6]",  # ... and an array item
        "CONCAT('x', CAST(A / B AS STRING))",
        "XS[A] + 1",
        "TRANSFORM(XS, x => x / B)",  # the lambda function's own failure nulls the call
    ],
)
def test_an_expression_null_wherever_a_part_fails_absorbs_nothing(text: str) -> None:
    assert not absorbs(text)


@pytest.mark.parametrize("text", ["ARRAY[A + 1, 6]", "CONCAT('x', CAST(A / B AS STRING))", "STRUCT(N := A / B)"])
def test_with_nested_errors_not_caught_constructors_and_casts_absorb(text: str) -> None:
    assert absorbs(text, caught=False)
    assert not absorbs(text)


def test_with_nested_errors_not_caught_a_lambda_body_s_casts_fail_the_whole_call() -> None:
    assert absorbs("TRANSFORM(XS, x => CAST(x AS STRING))", caught=False)
    assert not absorbs("TRANSFORM(XS, x => CAST(x AS STRING))")


@pytest.mark.parametrize(
    "text",
    [
        "PARSE_DATE(S, 'yyyy') IS NULL",  # PARSE_DATE throws on text it cannot read
        "NOT (PARSE_TIMESTAMP(S, 'yyyy') > PARSE_TIMESTAMP('2024', 'yyyy'))",
        "'at ' + FORMAT_TIMESTAMP(FROM_UNIXTIME(0), 'HH', S)",  # an unknown zone; string + takes the null
        "TO_BYTES(S, 'hex') IS NULL",
        "ARRAY_LENGTH(TRANSFORM(ARRAY[S], x => PARSE_DATE(x, 'yyyy')))",  # the lambda call throws
    ],
)
def test_a_function_that_throws_on_its_input_absorbs_like_arithmetic(text: str) -> None:
    assert absorbs(text)


@pytest.mark.parametrize(
    "text",
    [
        "PARSE_DATE(S, 'yyyy')",  # null either way
        "COALESCE(PARSE_DATE(S, 'yyyy'), PARSE_DATE('2024', 'yyyy'))",  # ksqlDB catches a call argument
        "EXTRACTJSONFIELD(S, '$.a') IS NULL",  # null for a missing field too: not counted
        "TRANSFORM(ARRAY[S], x => CONCAT('d', FORMAT_DATE(PARSE_DATE(x, 'yyyy'), 'yyyy')))",  # caught in the body
    ],
)
def test_a_throwing_function_that_ksqldb_catches_or_whose_null_reaches_the_top_absorbs_nothing(text: str) -> None:
    assert not absorbs(text)


#: the functions whose ksqlDB UDF sources were read for the rule: each throws on some input that
#: is not null and returns null only for null arguments (a change here needs that reading again)
AUDITED_THROWING_FUNCTIONS = {
    *("PARSE_DATE", "PARSE_TIME", "PARSE_TIMESTAMP", "STRINGTODATE", "STRINGTOTIMESTAMP", "CONVERT_TZ"),
    *("FORMAT_DATE", "FORMAT_TIME", "FORMAT_TIMESTAMP", "DATETOSTRING", "TIMESTAMPTOSTRING"),
    *("TO_BYTES", "FROM_BYTES", "ENCODE", "INT_FROM_BYTES", "BIGINT_FROM_BYTES", "DOUBLE_FROM_BYTES"),
    *("MASK", "MASK_KEEP_LEFT", "MASK_KEEP_RIGHT", "MASK_LEFT", "MASK_RIGHT", "GEO_DISTANCE"),
    *("REGEXP_REPLACE", "REGEXP_SPLIT_TO_ARRAY", "URL_DECODE_PARAM", "JSON_ITEMS"),
}


def test_the_signature_tables_mark_exactly_the_functions_that_throw_on_their_input() -> None:
    assert THROWING_FUNCTIONS == AUDITED_THROWING_FUNCTIONS


def planned_config(select: str, properties: dict[str, object] | None = None) -> dict[str, object]:
    statements = parse_statements(
        "CREATE STREAM s (id VARCHAR KEY, a INT, b INT) WITH (kafka_topic='s', value_format='JSON');"
        f"CREATE STREAM o AS {select};"
    )
    return dict(plan_statements(statements, properties).plan.config)


def test_the_plan_records_the_scope_only_where_the_rules_differ() -> None:
    whole = {EXPRESSION_ERROR_SCOPE: WHOLE_EXPRESSION}
    assert planned_config("SELECT id, COALESCE(a + 1, -1) AS c FROM s") == whole
    assert planned_config("SELECT id, a + 1 AS c FROM s WHERE a > 0") == {}
    # a predicate is a whole expression too: NOT turns the failed comparison into true
    assert planned_config("SELECT id, a FROM s WHERE NOT (a * 2 > 100)") == whole
    off = {"ksql.nested.error.set.null": False}
    assert planned_config("SELECT id, ARRAY[a / b, 0] AS c FROM s", off) == {**off, **whole}
    assert planned_config("SELECT id, ARRAY[a / b, 0] AS c FROM s") == {}


def test_a_plan_that_calls_a_throwing_function_records_the_scope_that_counts_it() -> None:
    functions = {EXPRESSION_ERROR_SCOPE: WHOLE_EXPRESSION_FUNCTIONS}
    assert planned_config("SELECT id, PARSE_DATE(CAST(a AS STRING), 'yyyy') IS NULL AS c FROM s") == functions
    # a plan whose rules differ elsewhere records it too, as its functions may throw inside
    assert planned_config("SELECT id, COALESCE(a + 1, -1) AS c, PARSE_DATE('2024', 'yyyy') AS d FROM s") == functions
    assert planned_config("SELECT id, PARSE_DATE(CAST(a AS STRING), 'yyyy') AS d FROM s") == {}
    assert QuerySettings.of(functions).function_errors and QuerySettings.of(functions).whole_expression_errors
    assert not QuerySettings.of({EXPRESSION_ERROR_SCOPE: WHOLE_EXPRESSION}).function_errors


def test_the_runtime_reads_the_scope_from_the_plan_and_plans_without_it_keep_the_part_rule() -> None:
    assert not QuerySettings.of({}).whole_expression_errors
    whole = QuerySettings.of({EXPRESSION_ERROR_SCOPE: WHOLE_EXPRESSION, "ksql.nested.error.set.null": "false"})
    assert whole.whole_expression_errors and not whole.nested_errors_caught
    assert QuerySettings.of({EXPRESSION_ERROR_SCOPE: WHOLE_EXPRESSION}).nested_errors_caught
