"""The analyzer: ksqlDB's typing rules, NULL inference, implicit casts and error messages."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.functions.aggregate_signatures import AGGREGATE_NAMES
from qtt.plan.ir import expressions as e
from qtt.sql import parse_expression, parse_type

COLUMNS = {
    "I": "INT",
    "L": "BIGINT",
    "D": "DOUBLE",
    "S": "STRING",
    "B": "BOOLEAN",
    "X": "DECIMAL(4, 2)",
    "A": "ARRAY<INT>",
    "M": "MAP<STRING, INT>",
    "ST": "STRUCT<F0 INT, `f1` STRING>",
    "BY": "BYTES",
    "TS": "TIMESTAMP",
    "DT": "DATE",
    "TM": "TIME",
}


def analyze(text: str, clause: str = "SELECT") -> e.Expression:
    scope = Scope(
        [ScopeColumn(name, parse_type(type_), frozenset(["T"])) for name, type_ in COLUMNS.items()],
        frozenset(["T"]),
    )
    return Analyzer(scope, clause)(parse_expression(text))


def type_of(text: str) -> t.SqlType:
    return analyze(text).result_type


# ---------------------------------------------------------------------------- literals and columns


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("1", t.INTEGER),
        ("2147483648", t.BIGINT),
        ("1.50", t.Decimal(3, 2)),
        ("0.05", t.Decimal(3, 2)),  # ksqlDB DecimalUtil.fromValue: scale + 1 below one
        ("1.5E2", t.DOUBLE),
        ("'x'", t.STRING),
        ("true", t.BOOLEAN),
        ("T.I", t.INTEGER),
        ("ST->F0", t.INTEGER),
        ("ST->`f1`", t.STRING),
        ("A[1]", t.INTEGER),
        ("M['k']", t.INTEGER),
    ],
)
def test_literal_and_reference_types(text: str, type_: t.SqlType) -> None:
    assert type_of(text) == type_


def test_unknown_column_names_the_clause() -> None:
    with pytest.raises(StatementError, match="WHERE column 'NOPE' cannot be resolved"):
        analyze("nope", "WHERE")


def test_unknown_column_suggests_a_close_name() -> None:
    with pytest.raises(StatementError) as raised:
        analyze("NAEM + 1 > 0 AND SS = 'x'", "WHERE")
    assert raised.value.hint is None  # NAEM is like no column
    with pytest.raises(StatementError) as raised:
        analyze("SS = 'x'", "WHERE")
    assert raised.value.hint == "Did you mean 'S'?"
    assert "cannot be resolved" in raised.value.message and "Did you mean" not in raised.value.message


def test_unknown_struct_field() -> None:
    with pytest.raises(StatementError, match="Could not find field 'F1' in 'ST'"):
        analyze("ST->F1")


# ---------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("I + I", t.INTEGER),
        ("I + L", t.BIGINT),
        ("I * D", t.DOUBLE),
        ("X + X", t.Decimal(5, 2)),
        ("X * X", t.Decimal(9, 4)),
        ("X / X", t.Decimal(11, 7)),
        ("X % X", t.Decimal(4, 2)),
        ("X + I", t.Decimal(13, 2)),
        ("X + D", t.DOUBLE),
        ("-X", t.Decimal(4, 2)),
        ("S + S", t.STRING),
    ],
)
def test_arithmetic_types(text: str, type_: t.SqlType) -> None:
    assert type_of(text) == type_


def test_string_plus_is_java_string_concatenation() -> None:
    # ksqlDB compiles it to Java's a + b (a null is "null"), not to CONCAT (which skips it)
    expr = analyze("S + 'x'")
    assert isinstance(expr, e.Arithmetic) and expr.op == "+" and expr.sql_type == t.STRING
    bars = analyze("S || 'x'")
    assert isinstance(bars, e.Call) and bars.name == "CONCAT"


def test_a_unit_keyword_is_listed_as_null_when_no_overload_fits() -> None:
    # ExpressionTypeManager.visitIntervalUnit gives the keyword no type
    with pytest.raises(StatementError, match=r"does not accept parameters \(null, STRING, INTEGER\)"):
        analyze("TIMESTAMPADD(HOURS, S, I)")


def test_bad_arithmetic() -> None:
    with pytest.raises(StatementError, match=r"Unsupported arithmetic types\. STRING INTEGER"):
        analyze("S + I")
    # ksqlDB's Operator refuses a bare NULL operand, which it prints as Java's null
    with pytest.raises(StatementError, match=r"\(null \+ null\)\. Arithmetic on types null and null are not"):
        analyze("NULL + NULL")
    with pytest.raises(StatementError, match=r"\(I \+ null\)\. Arithmetic on types INTEGER and null are not"):
        analyze("I + NULL")


# ---------------------------------------------------------------------------- comparisons


@pytest.mark.parametrize(
    "text",
    [
        "I = L",
        "I < D",
        "X >= I",
        "S < 'b'",
        "B = true",
        "A = ARRAY[1]",
        "M = MAP('a' := 1)",
        "ST = ST",
        "M IS DISTINCT FROM M",
        "TS < '2020-01-01'",
        "I BETWEEN 1 AND 2.5",
        "I IN (1, 2, NULL)",
    ],
)
def test_comparable(text: str) -> None:
    assert type_of(text) == t.BOOLEAN


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("S = I", "Cannot compare S (STRING) to I (INTEGER) with EQUAL."),
        ("B < true", "Cannot compare B (BOOLEAN) to true (BOOLEAN) with LESS_THAN."),
        (
            "M < M",
            "Cannot compare M (MAP<STRING, INTEGER>) to M (MAP<STRING, INTEGER>) with LESS_THAN.",
        ),
        ("I = NULL", "Comparison with NULL not supported: INTEGER = NULL\nUse 'IS NULL' or 'IS NOT NULL' instead."),
        ("NULL IS DISTINCT FROM S", "Comparison with NULL not supported: NULL IS DISTINCT FROM STRING"),
        ("I IS DISTINCT FROM S", "Cannot compare I (INTEGER) to S (STRING) with IS_DISTINCT_FROM."),
    ],
)
def test_not_comparable(text: str, message: str) -> None:
    with pytest.raises(StatementError) as info:
        analyze(text)
    assert message in info.value.message


def test_null_in_between_takes_the_value_type() -> None:
    expr = analyze("I BETWEEN NULL AND 3")
    assert isinstance(expr, e.Between)
    assert expr.low == e.Literal(value=None, sql_type=t.INTEGER)


def test_conditions_must_be_boolean() -> None:
    scope = Scope([ScopeColumn("I", t.INTEGER), ScopeColumn("S", t.STRING)])
    with pytest.raises(StatementError) as info:
        Analyzer(scope, "WHERE").boolean(parse_expression("I > 0 AND I"))
    # ksqlDB types `a AND b` as `b`, so the last operand's type names the whole condition
    not_boolean = "Type error in WHERE expression: Should evaluate to boolean but is ((I > 0) AND I) (INTEGER) instead."
    assert info.value.message == not_boolean
    # the whole condition is typed before its operands are checked: a later error comes first
    with pytest.raises(StatementError) as info:
        Analyzer(scope, "WHERE").boolean(parse_expression("I AND (I > 0 OR I = S)"))
    assert info.value.message == "Error in WHERE expression: Cannot compare I (INTEGER) to S (STRING) with EQUAL."
    with pytest.raises(StatementError) as info:
        Analyzer(scope, "HAVING").boolean(parse_expression("I = S OR I > 0"))
    assert info.value.message == "Error in HAVING expression: Cannot compare I (INTEGER) to S (STRING) with EQUAL."


@pytest.mark.parametrize(("clause", "text"), [("WHERE", "NULL"), ("WHERE", "I > 0 AND NULL"), ("SELECT", "NOT NULL")])
def test_a_bare_null_is_no_condition(clause: str, text: str) -> None:
    scope = Scope([ScopeColumn("I", t.INTEGER)])
    with pytest.raises(StatementError, match="Can't infer a type of null"):
        Analyzer(scope, clause).boolean(parse_expression(text))


def test_unary_plus_is_the_identity_on_numbers_only() -> None:
    scope = Scope([ScopeColumn("I", t.INTEGER), ScopeColumn("S", t.STRING)])
    expr = Analyzer(scope, "SELECT")(parse_expression("+I"))
    assert expr == e.Cast(operand=e.ColumnRef(name="I", sql_type=t.INTEGER), sql_type=t.INTEGER)
    with pytest.raises(StatementError, match=r"Invalid Select: unary plus of S of type STRING\.$"):
        Analyzer(scope, "SELECT")(parse_expression("+S"))


# ---------------------------------------------------------------------------- CASE and constructors


def test_case_types_null_branches_by_the_others() -> None:
    expr = analyze("CASE WHEN B THEN L WHEN false THEN NULL ELSE L END")
    assert isinstance(expr, e.Case)
    assert expr.sql_type == t.BIGINT
    assert expr.whens[1].result == e.Literal(value=None, sql_type=t.BIGINT)


def test_case_errors() -> None:
    with pytest.raises(StatementError, match="All case branches have NULL type"):
        analyze("CASE WHEN B THEN NULL ELSE NULL END")
    with pytest.raises(StatementError) as raised:
        analyze("CASE WHEN B THEN 'x' ELSE 1 END")
    assert raised.value.message.endswith("\nTHEN type: STRING.\nDEFAULT type: INTEGER.")
    # ksqlDB does not widen THEN types: INTEGER and BIGINT differ
    with pytest.raises(StatementError) as raised:
        analyze("CASE WHEN B THEN I WHEN false THEN L END")
    assert raised.value.message == (
        "Invalid Case expression. Type for all 'THEN' clauses should be the same.\n"
        "THEN expression 'WHEN false THEN L' has type: BIGINT.\nPrevious THEN expression(s) type: INTEGER."
    )
    with pytest.raises(StatementError) as raised:
        analyze("CASE WHEN I THEN 1 END")
    assert raised.value.message == "WHEN operand type should be boolean.\nType for 'I' is INTEGER"


def test_a_simple_case_is_ksqldb_s_unsupported_operation() -> None:
    with pytest.raises(StatementError) as raised:
        analyze("CASE I WHEN 1 THEN 'one' END")
    assert raised.value.message.startswith("not yet implemented: ")
    assert raised.value.message.endswith("ExpressionTypeManager$Visitor.visitSimpleCaseExpression")


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("ARRAY[1, 2.5, NULL]", t.Array(t.Decimal(11, 1))),
        ("ARRAY[I, L]", t.Array(t.BIGINT)),
        ("MAP('a' := 1, 'b' := NULL)", t.Map(t.STRING, t.INTEGER)),
        ("STRUCT(A := 1, `b` := 'x')", t.Struct((t.Field("A", t.INTEGER), t.Field("b", t.STRING)))),
    ],
)
def test_constructor_types(text: str, type_: t.SqlType) -> None:
    assert type_of(text) == type_


def test_constructors_need_a_type() -> None:
    with pytest.raises(StatementError, match="Cannot construct an array with all NULL elements"):
        analyze("ARRAY[NULL]")
    with pytest.raises(StatementError, match="Cannot construct a map with all NULL keys"):
        analyze("MAP(NULL := 1)")
    with pytest.raises(StatementError, match="Array constructor cannot be empty"):
        analyze("ARRAY[]")


# ---------------------------------------------------------------------------- CAST


def test_unsupported_cast_names_the_clause_as_ksqldbs_code_generator_does() -> None:
    with pytest.raises(StatementError) as info:
        analyze("CAST(S AS ARRAY<INT>)")
    assert info.value.message == "Invalid Select: Cast of STRING to ARRAY<INTEGER> is not supported."
    with pytest.raises(StatementError) as info:
        analyze("CAST(B AS INT) = 1", "WHERE")
    assert info.value.message == "Invalid Predicate: Cast of BOOLEAN to INTEGER is not supported."
    with pytest.raises(StatementError) as info:
        analyze("CAST(B AS INT)", "JOIN ON")
    assert info.value.message == "Cast of BOOLEAN to INTEGER is not supported"


def test_cast_to_the_same_type_disappears() -> None:
    assert analyze("CAST(I AS INTEGER)") == e.ColumnRef(name="I", sql_type=t.INTEGER)


def test_cast_of_null_is_a_typed_null() -> None:
    assert analyze("CAST(NULL AS MAP<STRING, INT>)") == e.Literal(value=None, sql_type=t.Map(t.STRING, t.INTEGER))


@pytest.mark.parametrize(
    ("text", "feature"),
    [
        ("CAST(ARRAY[TM] AS STRING)", "nested TIME values"),
        ("CAST(ARRAY[TS] AS STRING)", "nested TIMESTAMP values"),
        ("CAST(MAP('a' := BY) AS STRING)", "nested BYTES values"),
    ],
)
def test_casts_qtt_cannot_run_yet_are_unsupported(text: str, feature: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match=feature):
        analyze(text)


# ---------------------------------------------------------------------------- functions


def test_widened_arguments_get_explicit_casts() -> None:
    expr = analyze("GEO_DISTANCE(I, L, 1.5, 2.5)")
    assert isinstance(expr, e.Call)
    assert expr.args[0] == e.Cast(operand=e.ColumnRef(name="I", sql_type=t.INTEGER), sql_type=t.DOUBLE)
    assert expr.args[1] == e.Cast(operand=e.ColumnRef(name="L", sql_type=t.BIGINT), sql_type=t.DOUBLE)


def test_null_arguments_take_the_parameter_type() -> None:
    expr = analyze("IFNULL(NULL, S)")
    assert isinstance(expr, e.Call)
    assert expr.args[0] == e.Literal(value=None, sql_type=t.STRING)


def test_constant_arguments() -> None:
    assert type_of("ROUND(D, 2)") == t.DOUBLE
    with pytest.raises(UnsupportedFeatureError, match="ROUND with a non-constant argument 2"):
        analyze("ROUND(D, I)")


def test_datetime_patterns_are_checked_when_planning() -> None:
    assert type_of("PARSE_DATE(S, 'yyyy-MM-dd')") == t.DATE
    with pytest.raises(UnsupportedFeatureError, match="datetime pattern letter 'u' in STRINGTODATE"):
        analyze("STRINGTODATE(S, 'uuuu-MM-dd')")
    with pytest.raises(UnsupportedFeatureError, match="PARSE_DATE pattern 'dd MMM yyyy'"):
        analyze("PARSE_DATE(S, 'dd MMM yyyy')")


def test_function_errors_carry_the_call_position() -> None:
    with pytest.raises(StatementError) as info:
        analyze("1 + nope(1)")
    assert (info.value.line, info.value.column) == (1, 5)


def test_aggregates_need_an_aggregating_clause() -> None:
    # Lambdas used to be rejected here too: tests/plan/test_lambda_calls.py types them now.
    with pytest.raises(StatementError, match=r"Aggregate functions are not allowed in .*: SUM"):
        analyze("SUM(I)")


@pytest.mark.parametrize("name", sorted(AGGREGATE_NAMES))
def test_every_aggregate_in_the_table_is_an_aggregate_to_the_analyzer(name: str) -> None:
    # in WHERE, ksqlDB's code generator finds no scalar function of the name
    with pytest.raises(StatementError, match=f"Invalid Predicate: Can't find any functions with the name '{name}'"):
        analyze(f"{name}(I) > 0", "WHERE")


# ---------------------------------------------------------------------------- decimal arithmetic


def test_a_decimal_result_wider_than_spark_is_a_skip_not_a_narrower_type() -> None:
    assert type_of("X * X") == t.Decimal(9, 4)
    with pytest.raises(UnsupportedFeatureError, match=r"DECIMAL\(41, 20\): Spark's decimals hold at most 38"):
        analyze("CAST(X AS DECIMAL(20, 10)) * CAST(X AS DECIMAL(20, 10))")


@pytest.mark.parametrize("op", ["/", "%"])
def test_decimal_division_inside_a_lambda_is_a_skip(op: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match=f"DECIMAL {op} inside a lambda"):
        analyze(f"TRANSFORM(ARRAY[X], v => v {op} 2)")
    assert type_of("TRANSFORM(ARRAY[X], v => v * 2)") == t.Array(t.Decimal(15, 2))
