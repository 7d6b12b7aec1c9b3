"""Column references told apart from lambda variables, in one walk that every check shares."""

from __future__ import annotations

from dataclasses import replace

from qtt.sql import ast
from qtt.sql.formatter import format_expr
from qtt.sql.parser import parse_expression
from qtt.sql.references import column_refs, rewrite_column_refs


def _names(text: str) -> list[str]:
    return [f"{ref.source}.{ref.name}" if ref.source else ref.name for ref in column_refs(parse_expression(text))]


def test_references_come_in_the_order_they_are_written() -> None:
    assert _names("A + B * s.C") == ["A", "B", "S.C"]


def test_a_lambda_parameter_is_no_column_inside_its_lambda_only() -> None:
    assert _names("TRANSFORM(XS, x => x + Y) + X") == ["XS", "Y", "X"]


def test_enclosing_lambdas_bind_their_parameters_too() -> None:
    text = "TRANSFORM(XS, x => TRANSFORM(YS, y => x + y + Z))"
    assert _names(text) == ["XS", "YS", "Z"]


def test_a_qualified_name_is_always_a_column() -> None:
    assert _names("TRANSFORM(XS, x => s.X)") == ["XS", "S.X"]


def test_a_rewrite_leaves_lambda_variables_alone() -> None:
    expr = parse_expression("TRANSFORM(XS, x => x + Y)")

    def qualified(ref: ast.ColumnRef) -> ast.Expr:
        return replace(ref, source="T")

    assert format_expr(rewrite_column_refs(expr, qualified)) == "TRANSFORM(T.XS, (X) => (X + T.Y))"
