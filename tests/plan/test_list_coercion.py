"""ksqlDB's coercion of IN lists (CoercionUtil.coerceUserList) and collection comparisons."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.analysis.list_coercion import can_coerce
from qtt.plan.analysis.text_literals import reads_as
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

INPUT = (
    "CREATE STREAM INPUT (ID INT KEY, I INT, B BIGINT, D DOUBLE, X DECIMAL(4, 2), S STRING, F BOOLEAN, "
    "A ARRAY<INT>, AB ARRAY<BIGINT>, AS_ ARRAY<STRING>) WITH (kafka_topic='i', format='JSON');"
)


def predicate(where: str) -> e.Expression:
    planned = plan_statements(parse_statements(f"{INPUT}\nCREATE STREAM O AS SELECT * FROM INPUT WHERE {where};"), {})
    (step,) = [x for x in s.walk_steps(planned.plan.queries()[-1].physical_plan) if isinstance(x, s.StreamFilterV1)]
    return step.filter_expression


def error(where: str) -> str:
    with pytest.raises(StatementError) as info:
        predicate(where)
    return info.value.message


@pytest.mark.parametrize(
    ("where", "common"),
    [
        ("I IN (1, 2)", t.INTEGER),
        ("I IN (1, '3000000000')", t.BIGINT),
        ("I IN ('2147483647')", t.BIGINT),  # ksqlDB's bounds are exclusive
        ("I IN (1, 2.5)", t.Decimal(11, 1)),
        ("I IN (1, '4.000')", t.Decimal(13, 3)),
        ("X IN (1, '2.5')", t.Decimal(12, 2)),
        ("I IN (1, D)", t.DOUBLE),
        ("D IN ('7')", t.DOUBLE),
        ("S IN ('a', 1, true)", t.STRING),
        ("F IN ('y', 'FAL')", t.BOOLEAN),
        ("A IN (ARRAY[1], ARRAY['2'])", t.Array(t.INTEGER)),
        ("A IN (AB)", t.Array(t.BIGINT)),
        ("AB IN (ARRAY['3', NULL])", t.Array(t.BIGINT)),
        ("A IN (ARRAY['5', 6])", t.Array(t.INTEGER)),  # the nested 6 as written, not as text
        ("A IN (ARRAY['5', 6.5])", t.Array(t.Decimal(11, 1))),
    ],
)
def test_the_list_coerces_to_ksqldbs_common_type(where: str, common: t.SqlType) -> None:
    expr = predicate(where)
    # an ARRAY, MAP or STRUCT value is matched as ksqlDB does, two nulls in one place matching
    assert isinstance(expr, e.StructuredInList if isinstance(common, t.Array) else e.InList)
    assert {x.result_type for x in (expr.value, *expr.items)} == {common}


def test_string_literals_become_literals_of_the_common_type() -> None:
    expr = predicate("F IN ('Yes', 'n')")
    assert isinstance(expr, e.InList)
    assert expr.items == (e.Literal(value=True, sql_type=t.BOOLEAN), e.Literal(value=False, sql_type=t.BOOLEAN))
    expr = predicate("X IN ('2.5')")
    assert isinstance(expr, e.InList)
    assert expr.items == (e.Literal(value="2.50", sql_type=t.Decimal(4, 2)),)


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("I IN (1, 'one')", 'Invalid Predicate: invalid input syntax for type INTEGER: "one".'),
        ("D IN (1.0, 'x1')", 'Invalid Predicate: invalid input syntax for type DOUBLE: "x1".'),
        ("F IN ('maybe')", 'Invalid Predicate: invalid input syntax for type BOOLEAN: "maybe".'),
        (
            "B IN (1, true)",
            "Invalid Predicate: operator does not exist: BIGINT = BOOLEAN (true)\n"
            "Hint: You might need to add explicit type casts.",
        ),
        ("I IN (S)", "Invalid Predicate: operator does not exist: INTEGER = STRING (S)"),
        ("F IN (1)", "Invalid Predicate: operator does not exist: BOOLEAN = INTEGER (1)"),
        ("A IN (ARRAY[true])", "Invalid Predicate: operator does not exist: ARRAY<INTEGER> = ARRAY<BOOLEAN>"),
        ("A IN (AS_)", "Invalid Predicate: operator does not exist: ARRAY<INTEGER> = ARRAY<STRING> (AS_)"),
        ("A IN (ARRAY['5', true])", "Invalid Predicate: operator does not exist: ARRAY<INTEGER> = ARRAY<STRING>"),
        ("S IN (CAST(S AS TIME), 'noon')", 'invalid input syntax for type TIME: "noon".'),
    ],
)
def test_what_does_not_coerce_is_ksqldbs_error(where: str, message: str) -> None:
    assert message in error(where)


def test_collections_of_widening_element_types_compare() -> None:
    sql = f"{INPUT}\nCREATE STREAM O AS SELECT ID, A = AB AS R FROM INPUT;"
    planned = plan_statements(parse_statements(sql), {})
    assert str(planned.sources["O"].schema) == "`ID` INTEGER KEY, `R` BOOLEAN"


@pytest.mark.parametrize("other", ["AB", "AS_"])
def test_collections_of_other_element_types_compare_uncast(other: str) -> None:
    # ksqlDB calls List.equals on the values as they are (SqlToJavaVisitor): no widening cast.
    compared = predicate(f"A <> {other}")
    assert isinstance(compared, e.MixedEquality)
    assert compared.op == "<>"
    assert isinstance(compared.left, e.ColumnRef) and isinstance(compared.right, e.ColumnRef)


def test_collections_of_one_type_stay_a_comparison() -> None:
    assert isinstance(predicate("A = ARRAY[1, 2]"), e.Comparison)


@pytest.mark.parametrize("other", ["AB", "AS_"])
def test_distinct_from_of_other_element_types_stays_uncast(other: str) -> None:
    # ksqlDB generates !left.equals(right) for IS DISTINCT FROM too (SqlToJavaVisitor).
    compared = predicate(f"A IS DISTINCT FROM {other}")
    assert isinstance(compared, e.DistinctFrom)
    assert isinstance(compared.left, e.ColumnRef) and isinstance(compared.right, e.ColumnRef)


def test_can_coerce_widens_numbers_and_collections_only() -> None:
    assert can_coerce(t.INTEGER, t.Decimal(4, 2)) == t.Decimal(12, 2)
    assert can_coerce(t.DOUBLE, t.INTEGER) is None
    assert can_coerce(t.INTEGER, t.STRING) is None
    assert can_coerce(t.INTEGER, t.STRING, literal=True) == t.STRING
    assert can_coerce(t.Map(t.STRING, t.INTEGER), t.Map(t.STRING, t.DOUBLE)) == t.Map(t.STRING, t.DOUBLE)


@pytest.mark.parametrize(
    ("text", "base", "reads"),
    [
        ("2024-05-01T08:00:00", "TIMESTAMP", True),
        (" 2024-05 ", "TIMESTAMP", True),  # trimmed, partial
        ("2024-05-01T08:00+0200", "TIMESTAMP", True),
        ("after lunch", "TIMESTAMP", False),
        ("2024-05", "DATE", True),
        ("2024-05-01T08:00", "DATE", False),
        ("2025-14-40", "DATE", False),
        ("06:30", "TIME", True),
        ("06:30:15.250", "TIME", True),
        ("25:00", "TIME", False),
        ("AQID", "BYTES", True),
        ("AQI", "BYTES", True),  # the padding may be left out
        ("not base64!", "BYTES", False),
    ],
)
def test_a_literal_reads_as_ksqldbs_coercer_reads_it(text: str, base: str, reads: bool) -> None:
    assert reads_as(text, base) is reads
