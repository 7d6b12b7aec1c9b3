"""Building AST nodes from lark's tree: every statement keeps its text and position."""

from __future__ import annotations

import pytest

from qtt.sql import ast, parse_statements, type_rules

STATEMENTS = [
    "CREATE STREAM S (K INT KEY, V STRING) WITH (kafka_topic='s', value_format='JSON');",
    "CREATE STREAM T AS SELECT * FROM S;",
    "INSERT INTO T SELECT * FROM S;",
    "INSERT INTO S (K, V) VALUES (1, 'a');",
    "ALTER STREAM S ADD COLUMN W INT;",
    "SET 'auto.offset.reset'='earliest';",
    "UNSET 'auto.offset.reset';",
    "DROP STREAM T;",
]


@pytest.mark.parametrize("text", STATEMENTS)
def test_every_statement_carries_its_text_and_position(text: str) -> None:
    (statement,) = parse_statements("\n" + text)
    assert isinstance(statement, ast.Statement)
    assert statement.text == text.removesuffix(";")
    assert statement.pos == ast.Pos(2, 1)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("INSERT INTO S (K, V) VALUES (1);", "Expected number columns and values to match: 2, 1"),
        ("INSERT INTO S (V) VALUES ('a', 2);", "Expected number columns and values to match: 1, 2"),
        ("INSERT INTO S (K) VALUES ();", "Expected some values for INSERT INTO statement."),
        ("INSERT INTO S VALUES ();", "Expected some values for INSERT INTO statement."),
    ],
)
def test_insert_values_are_counted_as_ksqldb_prepares_the_statement(text: str, problem: str) -> None:
    with pytest.raises(type_rules.PrepareError) as raised:
        parse_statements(text)
    assert raised.value.message == type_rules.PREPARE_PREFIX + problem


def test_insert_values_without_a_column_list_are_not_counted_by_the_parser() -> None:
    (statement,) = parse_statements("INSERT INTO S VALUES (1);")
    assert isinstance(statement, ast.InsertValues)
    assert statement.columns == ()


@pytest.mark.parametrize(
    ("lambda_", "problem"),
    [
        ("(a, a) => a", "Lambda arguments have duplicates: [A, A]"),
        ("(a, b, A) => a", "Lambda arguments have duplicates: [A, B, A]"),
        ("(a, `A`) => a", "Lambda arguments have duplicates: [A, A]"),
        ("x => REDUCE(x, 0, (b, b) => b)", "Lambda arguments have duplicates: [B, B]"),
    ],
)
def test_a_lambda_naming_a_parameter_twice_is_refused_as_ksqldb_builds_it(lambda_: str, problem: str) -> None:
    with pytest.raises(type_rules.PrepareError) as raised:
        parse_statements(f"CREATE STREAM T AS SELECT TRANSFORM(XS, {lambda_}) FROM S;")
    assert raised.value.message == type_rules.PREPARE_PREFIX + problem


def test_a_quoted_lambda_parameter_in_another_case_is_another_name() -> None:
    (statement,) = parse_statements("CREATE STREAM T AS SELECT TRANSFORM(XS, (a, `a`) => a) FROM S;")
    assert isinstance(statement, ast.CreateAsSelect)
