"""ksqlDB's typing rules as pure functions of types: arithmetic, common types, CAST."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.plan.analysis.coercion import arithmetic_type, between_problem, can_cast, common_type, unsupported_cast
from qtt.plan.functions.signature_matching import NULL
from qtt.sql import parse_type


def test_arithmetic_rules_directly() -> None:
    assert arithmetic_type("+", t.STRING, t.INTEGER) is None
    assert arithmetic_type("-", t.Decimal(38, 10), t.Decimal(38, 10)) == t.Decimal(39, 10)  # ksqlDB's, wider than Spark


def test_between_problems_follow_the_code_generator() -> None:
    ints = t.Array(t.INTEGER)
    # the value's own base type picks the Java comparison, whatever its bounds are
    assert between_problem(ints, ints, ints) == "Unexpected array comparison: >="
    assert between_problem(t.Map(t.STRING, t.INTEGER), t.INTEGER, t.INTEGER) == "Unexpected map comparison: >="
    assert between_problem(parse_type("STRUCT<A INT>"), NULL, NULL) == "Unexpected struct comparison: >="
    # a temporal operand or a DECIMAL is looked at first
    assert between_problem(ints, t.DATE, t.DATE) == "Unexpected comparison to DATE: ARRAY"
    assert between_problem(ints, t.Decimal(4, 2), t.Decimal(4, 2)) is None
    assert between_problem(t.INTEGER, ints, ints) is None  # left to qtt's own comparison check


def test_common_type() -> None:
    assert common_type([NULL, t.INTEGER, t.BIGINT]) == t.BIGINT
    assert common_type([t.INTEGER, t.Decimal(5, 2)]) == t.Decimal(12, 2)
    assert common_type([t.STRING, t.INTEGER]) is None
    assert common_type([NULL]) == NULL


@pytest.mark.parametrize(
    ("source", "target", "ok"),
    [
        ("STRING", "INT", True),
        ("STRING", "BOOLEAN", True),
        ("STRING", "DECIMAL(4, 2)", True),
        ("STRING", "BYTES", True),
        ("INT", "BOOLEAN", False),
        ("BOOLEAN", "INT", False),
        ("DOUBLE", "DECIMAL(4, 2)", True),
        ("BYTES", "STRING", False),
        ("STRING", "ARRAY<INT>", False),
        ("ARRAY<BIGINT>", "ARRAY<STRING>", True),
        ("ARRAY<BOOLEAN>", "ARRAY<INT>", False),
        ("MAP<STRING, STRING>", "MAP<STRING, INT>", True),
        ("MAP<STRING, INT>", "STRING", True),
        ("STRUCT<A INT, B BOOLEAN>", "STRUCT<A STRING, C INT>", True),
        ("STRUCT<A BOOLEAN>", "STRUCT<A INT>", False),
        ("TIMESTAMP", "DATE", True),
        ("DATE", "TIME", False),
    ],
)
def test_cast_table(source: str, target: str, ok: bool) -> None:
    assert can_cast(parse_type(source), parse_type(target)) is ok


@pytest.mark.parametrize(
    ("source", "target", "feature"),
    [
        ("ARRAY<TIME>", "STRING", "nested TIME values"),
        ("STRUCT<A DATE>", "STRING", "nested DATE values"),
        ("MAP<STRING, ARRAY<TIME>>", "STRING", "nested TIME values"),
    ],
)
def test_unsupported_casts_look_inside_collections(source: str, target: str, feature: str) -> None:
    problem = unsupported_cast(parse_type(source), parse_type(target))
    assert problem is not None and feature in problem


def test_casts_qtt_runs_have_no_problem() -> None:
    assert unsupported_cast(parse_type("ARRAY<INT>"), parse_type("ARRAY<STRING>")) is None
    assert unsupported_cast(parse_type("STRUCT<A INT, B TIME>"), parse_type("STRUCT<A STRING>")) is None
    # element by element, each TIME is cast as at the top level
    assert unsupported_cast(parse_type("ARRAY<TIME>"), parse_type("ARRAY<STRING>")) is None
    assert unsupported_cast(parse_type("MAP<STRING, STRING>"), parse_type("MAP<STRING, TIME>")) is None
    assert unsupported_cast(parse_type("TIMESTAMP"), parse_type("TIME")) is None
