"""Lambda calls: TRANSFORM, FILTER and REDUCE typed as ksqlDB types them, and their errors."""

from __future__ import annotations

import pytest

from qtt.errors import StatementError
from qtt.plan.ir import expressions as e
from tests.plan.test_analyzer import analyze, type_of


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TRANSFORM(A, x => x + 1)", "ARRAY<INTEGER>"),
        ("TRANSFORM(A, x => CAST(x AS STRING))", "ARRAY<STRING>"),
        ("TRANSFORM(A, x => x * 1.5)", "ARRAY<DECIMAL(13, 1)>"),
        ("TRANSFORM(M, (k, v) => v, (k, v) => k)", "MAP<INTEGER, STRING>"),
        ("FILTER(A, x => x > 1)", "ARRAY<INTEGER>"),
        ("FILTER(M, (k, v) => v > 1)", "MAP<STRING, INTEGER>"),
        ("REDUCE(A, L, (s, x) => s + x)", "BIGINT"),
        ("REDUCE(A, 0, (s, x) => s + x)", "INTEGER"),
        ("REDUCE(M, '', (s, k, v) => s + k)", "STRING"),
        ("TRANSFORM(TRANSFORM(A, x => ARRAY[x]), y => REDUCE(y, 0, (s, z) => s + z))", "ARRAY<INTEGER>"),
    ],
)
def test_the_lambda_result_decides_the_type(text: str, expected: str) -> None:
    assert str(type_of(text)) == expected


def test_a_lambda_variable_shadows_a_column_and_sees_enclosing_ones() -> None:
    call = analyze("TRANSFORM(A, I => TRANSFORM(A, y => I + y + L))")
    assert isinstance(call, e.Call)
    outer = call.args[1]
    assert isinstance(outer, e.Lambda) and outer.params == ("I",)
    refs = [x for x in e.walk(outer.body) if isinstance(x, (e.LambdaVariable, e.ColumnRef))]
    kinds = {(type(x).__name__, getattr(x, "name", None)) for x in refs}
    assert ("LambdaVariable", "I") in kinds and ("ColumnRef", "L") in kinds and ("ColumnRef", "A") in kinds
    assert ("ColumnRef", "I") not in kinds


def test_reduce_does_not_widen_the_lambda_result_to_the_state_type() -> None:
    # ksqlDB's GenericsUtil binds S to the initial state's type exactly.
    with pytest.raises(StatementError, match=r"Cannot map S to both BIGINT and INTEGER"):
        analyze("REDUCE(A, L, (s, x) => x)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("TRANSFORM(I, x => x)", r"Function 'transform' does not accept parameters \(INTEGER, LAMBDA\)"),
        ("TRANSFORM(A, (x, y) => x)", r"does not accept parameters \(ARRAY<INTEGER>, LAMBDA\)"),
        ("TRANSFORM(M, (k, v) => v)", r"does not accept parameters \(MAP<STRING, INTEGER>, LAMBDA\)"),
        (
            "FILTER(A, x => x + 1)",
            r"Cannot infer generics for LAMBDA \(T\) => BOOLEAN from LAMBDA \(INTEGER\) => INTEGER because",
        ),
        (
            "REDUCE(A, 0, (s, x) => CAST(x AS STRING))",
            r"mapping LAMBDA \(S, T\) => S to LAMBDA \(INTEGER, INTEGER\) => STRING\. "
            r"Cannot map S to both INTEGER and STRING",
        ),
        ("REDUCE(A, NULL, (s, x) => s)", r"Can't infer a type of null"),
        # a bare NULL body has no type, even where the lambda's result type is known
        # (ksqlDB's SqlLambdaResolved needs one)
        ("FILTER(A, x => NULL)", r"Can't infer a type of null"),
        ("REDUCE(A, 0, (s, x) => NULL)", r"Can't infer a type of null"),
        ("TRANSFORM(A)", r"Function 'transform' does not accept parameters \(ARRAY<INTEGER>\)"),
        ("ABS(I, x => x)", r"Function 'Abs' does not accept parameters \(INTEGER, LAMBDA\)"),
        ("TRANSFORM(A, x => nope)", r"column 'NOPE' cannot be resolved"),
        ("TRANSFORM(A, x => SUM(x))", r"Aggregate functions are not allowed"),
    ],
)
def test_lambda_errors(text: str, message: str) -> None:
    with pytest.raises(StatementError, match=message):
        analyze(text)


def test_lambda_errors_carry_the_call_position() -> None:
    with pytest.raises(StatementError) as info:
        analyze("1 + TRANSFORM(I, x => x)")
    assert (info.value.line, info.value.column) == (1, 5)
